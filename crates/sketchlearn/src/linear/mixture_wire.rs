//! How a [`Mixture`] is saved: the field layout of model format version 5, with each member's
//! [`Calibration`] (used by [`MixRule::AdaHedgeCalibrated`] only) appended to the cumulative
//! losses' sequence — `[L_1 … L_K, s_1, H_1, …, s_K, H_K]` — when, and only when, the rule is
//! `AdaHedgeCalibrated`. The rule is a variant that no earlier file holds, so the length of the
//! sequence is never ambiguous, every earlier file loads unchanged, and a mixture saved under
//! another rule is byte for byte what version 5 wrote.

use super::calibration::Calibration;
use super::{MixRule, Mixture};
use crate::loss::Loss;
use serde::{Deserialize, Serialize, Serializer};

/// The saved fields, in format version 5's order.
#[derive(Serialize, Deserialize)]
pub(super) struct MixtureWire<L> {
    members: Vec<L>,
    log_weight: Vec<f64>,
    cum_loss: Vec<f64>,
    seen: f64,
    loss: Loss,
    eta: f64,
    rule: MixRule,
    refused: u64,
    gap: f64,
}

/// The same fields borrowed, for saving without copying the members.
#[derive(Serialize)]
struct MixtureWireRef<'a, L> {
    members: &'a [L],
    log_weight: &'a [f64],
    cum_loss: Vec<f64>,
    seen: f64,
    loss: Loss,
    eta: f64,
    rule: MixRule,
    refused: u64,
    gap: f64,
}

impl<L: Serialize> Serialize for Mixture<L> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut cum_loss = self.cum_loss.clone();
        if self.rule == MixRule::AdaHedgeCalibrated {
            cum_loss.extend(self.calibration.iter().flat_map(|c| c.to_pair()));
        }
        MixtureWireRef {
            members: &self.members,
            log_weight: &self.log_weight,
            cum_loss,
            seen: self.seen,
            loss: self.loss,
            eta: self.eta,
            rule: self.rule,
            refused: self.refused,
            gap: self.gap,
        }
        .serialize(serializer)
    }
}

impl<L> TryFrom<MixtureWire<L>> for Mixture<L> {
    type Error = String;

    fn try_from(w: MixtureWire<L>) -> Result<Self, String> {
        let k = w.members.len();
        let mut cum_loss = w.cum_loss;
        let calibration = if w.rule == MixRule::AdaHedgeCalibrated {
            if cum_loss.len() != 3 * k {
                return Err(format!(
                    "mixture of {k} members: {} saved loss and calibration values, expected {}",
                    cum_loss.len(),
                    3 * k
                ));
            }
            let pairs = cum_loss.split_off(k);
            pairs
                .chunks_exact(2)
                .map(|p| Calibration::from_pair(p[0], p[1]))
                .collect::<Option<Vec<_>>>()
                .ok_or("mixture: a saved member calibration is not finite and positive")?
        } else {
            vec![Calibration::default(); k]
        };
        if cum_loss.len() != k || w.log_weight.len() != k {
            return Err(format!(
                "mixture of {k} members: {} saved losses and {} weights",
                cum_loss.len(),
                w.log_weight.len()
            ));
        }
        Ok(Mixture {
            members: w.members,
            log_weight: w.log_weight,
            cum_loss,
            seen: w.seen,
            loss: w.loss,
            eta: w.eta,
            rule: w.rule,
            refused: w.refused,
            gap: w.gap,
            calibration,
            scratch: Vec::new(),
            losses: Vec::new(),
            pi: Vec::new(),
        })
    }
}
