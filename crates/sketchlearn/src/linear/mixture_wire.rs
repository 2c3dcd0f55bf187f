//! How a [`Mixture`] is saved: the field layout of model format version 5, with each member's
//! [`Calibration`] (used by [`MixRule::AdaHedgeCalibrated`] only) appended to the cumulative
//! losses' sequence — `[L_1 … L_K, s_1, H_1, …, s_K, H_K]` — when, and only when, the rule is
//! `AdaHedgeCalibrated`. The rule is a variant that no earlier file holds, so the length of the
//! sequence is never ambiguous, every earlier file loads unchanged, and a mixture saved under
//! another rule is byte for byte what version 5 wrote.
//!
//! The retirement of negligible members (`mixture_retirement.rs`) appends `[ε, r_1 … r_K]` (the
//! threshold and each member's retirement point, 0 while active) after those values when `ε > 0`
//! or a member has retired: `K + 1` more, so the sequence holds `K` or `2K + 1` values (`3K` or
//! `4K + 1` under `AdaHedgeCalibrated`), lengths that never coincide. A file without them (every
//! file written before the rule, and any mixture with `ε = 0`) loads with `ε = 0`: it continues
//! (`-i`) exactly as it did. (A binary from before the rule refuses a file with them, with the
//! counts in its message.) While the stream has shown fewer than `c·d` feature views (the
//! retirement's coverage condition), one more value follows, the views `V_t`: `2K + 2` (`4K + 2`)
//! values — with `ε = 0` too (`[0, 0 … 0, V_t]`), so that a model saved with retirement off
//! before the coverage and resumed with it on (`-i … --retire ε`) waits for the coverage as one
//! run would. A file past the coverage — or written before the condition — has the `2K + 1`
//! layout (`K` values with `ε = 0` and none retired) and loads as covered, so such files are byte for byte what
//! the earlier binary wrote, and a file of the earlier binary continues with `ε` alone, as it
//! did. (A binary from before the rule refuses a file saved with `ε = 0` below the coverage,
//! with the counts in its message.)
//!
//! From format version 10 ([`CALIBRATED_OUTPUT_SINCE`]) an `AdaHedgeCalibrated` mixture saves
//! one more value right after the calibration pairs, its calibrated-output flag (0 or 1,
//! [`Mixture::set_calibrated_output`]): `[L…, s_1, H_1, …, s_K, H_K, o]`, then the retirement's
//! values as above — `3K + 1`, `4K + 2` or `4K + 3` values. Which layout a file has is told by
//! its version, not by the length (`4K + 2` is also a version-9 length), and a file of
//! version 9 or older loads with the flag off: it predicts with the raw probabilities it was
//! written with. (A version-9 build refuses a version-10 file at the header.)

use super::calibration::Calibration;
use super::mixture_retirement::Retirement;
use super::shared_scaling::{link, ScaledRows};
use super::{MixRule, Mixture, OnlineLearner};
use crate::loss::Loss;
use serde::{Deserialize, Serialize, Serializer};

/// The first format version whose `AdaHedgeCalibrated` mixtures save the calibrated-output flag
/// ([`Mixture::set_calibrated_output`]); earlier files load with it off, so they predict as
/// they did.
pub(crate) const CALIBRATED_OUTPUT_SINCE: u32 = 10;

/// The saved fields, in format version 5's order: owned (`Members = Vec<L>`, `Weights =
/// Vec<f64>`) when loading, borrowed (`&[L]`, `&[f64]`) when saving.
#[derive(Serialize, Deserialize)]
pub(super) struct Wire<Members, Weights> {
    members: Members,
    log_weight: Weights,
    cum_loss: Vec<f64>,
    seen: f64,
    loss: Loss,
    eta: f64,
    rule: MixRule,
    refused: u64,
    gap: f64,
}

/// What a mixture file holds.
pub(super) type MixtureWire<L> = Wire<Vec<L>, Vec<f64>>;

impl<L: Serialize> Serialize for Mixture<L> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut cum_loss = self.cum_loss.clone();
        if self.rule == MixRule::AdaHedgeCalibrated {
            cum_loss.extend(self.calibration.iter().flat_map(|c| c.to_pair()));
            cum_loss.push(if self.calibrated_output { 1.0 } else { 0.0 });
        }
        cum_loss.extend(self.retirement.to_saved());
        Wire {
            members: self.members.as_slice(),
            log_weight: self.log_weight.as_slice(),
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

/// A file holds each member's unit scaling (one copy per member, format 8's layout): equal ones
/// are shared again when loaded (`shared_scaling.rs`).
impl<L: OnlineLearner> TryFrom<MixtureWire<L>> for Mixture<L> {
    type Error = String;

    fn try_from(w: MixtureWire<L>) -> Result<Self, String> {
        let k = w.members.len();
        let mut cum_loss = w.cum_loss;
        let calibrated = w.rule == MixRule::AdaHedgeCalibrated;
        // The output flag, in files from format version 10 on.
        let flagged = calibrated && crate::model::decoding_version() >= CALIBRATED_OUTPUT_SINCE;
        let base = if calibrated { 3 * k } else { k } + usize::from(flagged);
        let dim = w.members.first().map_or(0, |m| m.dim());
        let saved = if (base + k + 1..=base + k + 2).contains(&cum_loss.len()) {
            cum_loss.split_off(base)
        } else {
            Vec::new()
        };
        let retirement = Retirement::from_saved(k, &saved, dim)?;
        let calibrated_output = if flagged {
            match cum_loss.pop() {
                Some(0.0) => false,
                Some(1.0) => true,
                other => {
                    return Err(format!(
                        "mixture: the saved calibrated-output flag is {other:?}, expected 0 or 1"
                    ))
                }
            }
        } else {
            false
        };
        let calibration = if calibrated {
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
        check_weights(&w.log_weight, &retirement)?;
        let mut members = w.members;
        link(&mut members);
        Ok(Mixture {
            members,
            log_weight: w.log_weight,
            cum_loss,
            seen: w.seen,
            loss: w.loss,
            eta: w.eta,
            rule: w.rule,
            refused: w.refused,
            gap: w.gap,
            calibration,
            calibrated_output,
            scratch: Vec::new(),
            losses: Vec::new(),
            pi: Vec::new(),
            shared: ScaledRows::default(),
            retirement,
            weigh_on: Default::default(),
        })
    }
}

/// A loaded mixture's weights agree with its retirement: at least one member, every retired
/// member's log weight `−∞` (weight exactly 0), and an active member with a finite one (the
/// leader's is 0) — a file that says otherwise would predict with a retired member's stale
/// weight, or NaN.
fn check_weights(log_weight: &[f64], retirement: &Retirement) -> Result<(), String> {
    if log_weight.is_empty() {
        return Err("a mixture needs at least one member".into());
    }
    let retired_weighs = (0..log_weight.len())
        .any(|k| !retirement.is_active(k) && log_weight[k] != f64::NEG_INFINITY);
    if retired_weighs {
        return Err("mixture: a retired member's saved weight is not 0".into());
    }
    let any_active =
        (0..log_weight.len()).any(|k| retirement.is_active(k) && log_weight[k].is_finite());
    if !any_active {
        return Err("mixture: no active member has a finite saved weight".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linear::{Algorithm, LearnerConfig, OnlineLearner};
    use crate::Row;

    /// `Mixture`'s derived layout before issue 27 (format version 5), written out independently.
    #[derive(Serialize)]
    struct Version5<'a, L> {
        members: &'a Vec<L>,
        log_weight: &'a Vec<f64>,
        cum_loss: &'a Vec<f64>,
        seen: f64,
        loss: Loss,
        eta: f64,
        rule: MixRule,
        refused: u64,
        gap: f64,
    }

    fn trained(rule: MixRule, retirement: f64) -> Mixture {
        let ada = LearnerConfig {
            algorithm: Algorithm::AdaGrad,
            ..LearnerConfig::default()
        };
        let members = vec![ada.build(2).unwrap(), ada.build(2).unwrap()];
        let mut mix = Mixture::new(members, Loss::Logistic, rule, 1.0).unwrap();
        mix.set_retirement(retirement).unwrap();
        for i in 0..40 {
            let y = if i % 3 == 0 { -1.0 } else { 1.0 };
            mix.learn(Row::Dense(&[y, 0.5]), y, 1.0).unwrap();
        }
        mix
    }

    #[test]
    fn other_rules_save_the_version_5_bytes_and_calibration_round_trips() {
        let old = trained(MixRule::AdaHedgeBrier, 0.0);
        let v5 = Version5 {
            members: &old.members,
            log_weight: &old.log_weight,
            cum_loss: &old.cum_loss,
            seen: old.seen,
            loss: old.loss,
            eta: old.eta,
            rule: old.rule,
            refused: old.refused,
            gap: old.gap,
        };
        let bytes = postcard::to_allocvec(&old).unwrap();
        assert_eq!(bytes, postcard::to_allocvec(&v5).unwrap());
        let back: Mixture = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(back.cum_loss, old.cum_loss);

        let new = trained(MixRule::AdaHedgeCalibrated, 0.0);
        assert_ne!(new.calibration[0], Calibration::default());
        let back: Mixture = postcard::from_bytes(&postcard::to_allocvec(&new).unwrap()).unwrap();
        assert_eq!(back.calibration, new.calibration);
        assert_eq!(back.cum_loss, new.cum_loss);
        assert_eq!(back.member_weights(), new.member_weights());
    }

    /// With `ε > 0` the threshold and the retirement points follow the losses (and the
    /// calibration), `K + 1` values, and load back; a count that fits neither layout is refused.
    #[test]
    fn retirement_round_trips_after_the_losses() {
        for rule in [MixRule::AdaHedgeBrier, MixRule::AdaHedgeCalibrated] {
            let mut mix = trained(rule, 1e-9);
            mix.retirement = Retirement::from_saved(2, &[1e-9, 0.0, 1024.0], mix.dim()).unwrap();
            // A retired member that still weighs something is refused (a crafted file).
            let stale = postcard::to_allocvec(&mix).unwrap();
            assert!(postcard::from_bytes::<Mixture>(&stale).is_err());
            mix.log_weight[1] = f64::NEG_INFINITY;
            let bytes = postcard::to_allocvec(&mix).unwrap();
            let off = trained(rule, 0.0);
            let base = postcard::to_allocvec(&off).unwrap().len();
            assert_eq!(bytes.len(), base + 3 * 8);
            let back: Mixture = postcard::from_bytes(&bytes).unwrap();
            assert_eq!(back.retirement, mix.retirement);
            assert_eq!(back.cum_loss, mix.cum_loss);
            assert_eq!(back.calibration, mix.calibration);
        }
        let mut weightless = trained(MixRule::AdaHedgeBrier, 0.0);
        weightless.log_weight = vec![f64::NEG_INFINITY; 2];
        let bytes = postcard::to_allocvec(&weightless).unwrap();
        assert!(postcard::from_bytes::<Mixture>(&bytes).is_err());
        let mut bad = trained(MixRule::AdaHedgeBrier, 0.0);
        bad.cum_loss.push(1.0);
        let bytes = postcard::to_allocvec(&bad).unwrap();
        assert!(postcard::from_bytes::<Mixture>(&bytes).is_err());
    }
}

#[cfg(test)]
mod reachable_states {
    use super::*;
    use crate::linear::{Algorithm, LearnerConfig, OnlineLearner};
    use crate::Row;

    /// Every state learning can reach saves and loads back to the same state: importance
    /// weights near `f64::MAX` take the weight seen (and with it a retirement point) to `∞`.
    #[test]
    fn huge_importance_weights_round_trip() {
        for (rule, epsilon) in [
            (MixRule::AdaHedgeBrier, 0.45),
            (MixRule::AdaHedgeCalibrated, 0.45),
        ] {
            let ada = LearnerConfig {
                algorithm: Algorithm::AdaGrad,
                ..LearnerConfig::default()
            };
            let ogd = LearnerConfig {
                algorithm: Algorithm::Ogd,
                ..LearnerConfig::default()
            };
            let members = vec![ada.build(2).unwrap(), ogd.build(2).unwrap()];
            let mut mix = Mixture::new(members, Loss::Logistic, rule, 1.0).unwrap();
            mix.set_retirement(epsilon).unwrap();
            // An empty row of weight `f64::MAX` (every member predicts 0 there: a tie, the rate
            // stays infinite) is a check point at `W = f64::MAX` retiring nobody; unit examples
            // set the members apart (their losses vanish beside the first one's); a second empty
            // row of weight `f64::MAX` takes `W` to `∞`, where the loser retires. (A row of
            // values with such a weight is refused by the members and, since a refused row
            // changes nothing, would leave `W` where it was.)
            for i in 0..10 {
                let y = if i % 3 == 0 { -1.0 } else { 1.0 };
                let (x, w) = match i {
                    0 | 7 => ([0.0, 0.0], f64::MAX),
                    _ => ([y, 0.5], 1.0),
                };
                let _ = mix.learn(Row::Dense(&x), y, w);
                let bytes = postcard::to_allocvec(&mix).unwrap();
                let back: Mixture = postcard::from_bytes(&bytes)
                    .unwrap_or_else(|e| panic!("{rule:?} ε={epsilon} after {i}: {e}"));
                assert_eq!(postcard::to_allocvec(&back).unwrap(), bytes);
            }
            assert_eq!(mix.seen, f64::INFINITY);
            assert!(mix.retirement.retired_at().contains(&Some(f64::INFINITY)));
        }
    }
}
