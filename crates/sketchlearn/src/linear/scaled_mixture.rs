//! The squared-loss mixture: a [`Mixture`] under [`MixRule::AdaHedgeScaled`] together with the
//! running label statistics that normalise its losses, `v_t = Σ_{s≤t} w_s (y_s − ȳ_{s−1})² /
//! Σ_{s≤t} w_s` — the running mean's own progressive mean squared error, the current round
//! included (the derivation is in [`MixRule::AdaHedgeScaled`]'s documentation in
//! [`super::mixture`]). A separate type rather than fields of [`Mixture`], so that model files of
//! the classification mixtures keep their layout.

use super::{LearnError, MixRule, Mixture, OnlineLearner};
use crate::loss::Loss;
use crate::merge::{MergeResult, MergeShare};
use crate::Row;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// The running label statistics of [`ScaledMixture`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LabelScale {
    weight: f64,
    mean: f64,
    /// `Σ w_s (y_s − ȳ_{s−1})²`: the running mean's progressive squared error.
    sq: f64,
}

impl LabelScale {
    /// Adds `y` with importance `weight`; returns `v_t` (1 while it is 0, e.g. before any
    /// non-zero label).
    pub fn observe(&mut self, y: f64, weight: f64) -> f64 {
        if weight > 0.0 {
            let miss = y - self.mean;
            self.weight += weight;
            self.sq += weight * miss * miss;
            self.mean += weight / self.weight * miss;
        }
        let v = if self.weight > 0.0 {
            self.sq / self.weight
        } else {
            0.0
        };
        if v > 0.0 && v.is_finite() {
            v
        } else {
            1.0
        }
    }
}

/// A mixture whose members are weighed by AdaHedge on squared errors divided by the running
/// label variance.
///
/// ```
/// use sketchlearn::linear::{OnlineLearner, RunningMean, ScaledMixture, AnyLearner};
/// use sketchlearn::Row;
/// let members = vec![AnyLearner::RunningMean(RunningMean::new(1)); 2];
/// let mut mix = ScaledMixture::new(members).unwrap();
/// mix.learn(Row::Dense(&[1.0]), 1e5, 1.0).unwrap();
/// assert_eq!(mix.predict(Row::Dense(&[1.0])), 1e5);
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(bound(deserialize = "L: Deserialize<'de> + OnlineLearner"))]
pub struct ScaledMixture<L = super::AnyLearner> {
    mixture: Mixture<L>,
    labels: LabelScale,
}

impl<L: OnlineLearner + Clone> ScaledMixture<L> {
    /// The squared-loss mixture of `members` (at least one, all of the same dimension).
    pub fn new(members: Vec<L>) -> Result<Self, LearnError> {
        Ok(ScaledMixture {
            mixture: Mixture::new(members, Loss::Squared, MixRule::AdaHedgeScaled, 1.0)?,
            labels: LabelScale::default(),
        })
    }

    /// The mixture (members, weights).
    pub fn mixture(&self) -> &Mixture<L> {
        &self.mixture
    }

    /// The mixture, to change its settings (its retirement threshold: `any.rs`).
    pub(super) fn mixture_mut(&mut self) -> &mut Mixture<L> {
        &mut self.mixture
    }
}

impl<L: OnlineLearner + Clone> OnlineLearner for ScaledMixture<L> {
    fn dim(&self) -> usize {
        self.mixture.dim()
    }

    fn predict(&self, x: Row<'_>) -> f64 {
        self.mixture.predict(x)
    }

    fn learn(&mut self, x: Row<'_>, y: f64, weight: f64) -> Result<f64, LearnError> {
        super::check_example(&x, y, weight, self.dim())?;
        let mut labels = self.labels;
        let v = labels.observe(y, weight);
        // A row a member refused is skipped by the mixture (`Mixture::learn_normalized`), and
        // by the label statistics.
        let (p, learned) = self.mixture.learn_or_skip(x, y, weight, v)?;
        if learned {
            self.labels = labels;
        }
        Ok(p)
    }

    #[inline]
    fn prefetch(&self, x: Row<'_>) {
        self.mixture.prefetch(x);
    }

    fn weights(&self) -> Cow<'_, [f64]> {
        self.mixture.weights()
    }
}

/// The mixtures merged; the label statistics as one stream's (the progressive error `sq` added).
impl<L: OnlineLearner + MergeShare> MergeShare for ScaledMixture<L> {
    fn check_merge(&self, other: &Self, base: Option<&Self>) -> MergeResult {
        self.mixture
            .check_merge(&other.mixture, base.map(|b| &b.mixture))
    }

    fn merge_share(&mut self, other: &Self, base: Option<&Self>, share: f64) -> MergeResult {
        self.check_merge(other, base)?;
        self.mixture
            .merge_share(&other.mixture, base.map(|b| &b.mixture), share)?;
        let (a, b, g) = (self.labels, other.labels, base.map(|b| b.labels));
        let m = |s: LabelScale| (s.weight, s.mean, 0.0);
        let (weight, mean, _) = crate::merge::merge_moments(m(a), m(b), g.map(m));
        let sq = crate::merge::add_scalar(a.sq, b.sq, g.map(|g| g.sq)).max(0.0);
        self.labels = LabelScale { weight, mean, sq };
        Ok(())
    }
}
