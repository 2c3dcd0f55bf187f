//! Label standardisation inside the learner: the wrapped learner learns the standardised target
//! `z_t = (y_t − μ_{t−1})/σ_{t−1}` and its prediction is mapped back, `ŷ = μ + σ·ẑ`, with `μ, σ`
//! the running (importance-weighted) mean and standard deviation of the labels seen *before*
//! round `t` (Welford's update, weighted as in West, CACM 1979) — so progressive validation
//! stays honest.
//!
//! Why: every learner here starts at `w = 0` with steps sized for targets of scale 1 (`1/α`,
//! AdaGrad's `η`). On targets of scale `10⁵` (cadata) it would need thousands of examples just
//! to reach the offset, and its gradients — and with them the sketch and AdaGrad's accumulators —
//! are `10⁵` times too large. Standardised, the squared loss of the wrapped learner is the
//! original one divided by `σ²`: the same minimiser, on the scale the defaults were chosen for.
//! (The same idea as scikit-learn's `TransformedTargetRegressor(StandardScaler)` and, online,
//! the target normalisation of van Hasselt et al., *Learning values across many orders of
//! magnitude*, NeurIPS 2016, without their rescaling of the last layer: `μ, σ` settle within a
//! few dozen examples on a stationary stream.)
//!
//! The first example only initialises `μ` (the wrapped learner is not asked to fit a target it
//! has no scale for); until two distinct labels are seen `σ` is `|μ|` (or 1 when `μ = 0`).

use super::{check_example, LearnError, OnlineLearner};
use crate::merge::{MergeResult, MergeShare};
use crate::Row;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// Wraps a learner so that it learns standardised labels (see the module documentation).
///
/// ```
/// use sketchlearn::linear::{AdaGrad, Intercept, OnlineLearner, TargetStandardization};
/// use sketchlearn::loss::Loss;
/// use sketchlearn::Row;
/// let inner = Intercept::new(AdaGrad::new(2, Loss::Squared, 0.5).unwrap());
/// let mut model = TargetStandardization::new(inner);
/// for t in 0..200 {
///     let x = (t % 7) as f64;
///     model.learn(Row::Dense(&[x]), 1e5 + 3e4 * x, 1.0).unwrap();
/// }
/// let p = model.predict(Row::Dense(&[3.0]));
/// assert!((p - 1.9e5).abs() < 1e4, "{p}");
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TargetStandardization<L> {
    inner: L,
    /// `W`: the importance weights of the labels seen.
    total_weight: f64,
    /// `μ`.
    mean: f64,
    /// `Σ w_s (y_s − μ_s)(y_s − μ_{s−1})` (Welford's `M₂`; `σ² = M₂/W`).
    m2: f64,
}

impl<L: OnlineLearner> TargetStandardization<L> {
    /// Wraps `inner` (which should have an intercept: the standardised targets have mean ≈ 0,
    /// but not exactly, and not early on).
    pub fn new(inner: L) -> Self {
        TargetStandardization {
            inner,
            total_weight: 0.0,
            mean: 0.0,
            m2: 0.0,
        }
    }

    /// The wrapped learner (which sees standardised labels).
    pub fn inner(&self) -> &L {
        &self.inner
    }

    /// The wrapped learner, to change (a mixture's retirement threshold: `any.rs`).
    pub(super) fn inner_mut(&mut self) -> &mut L {
        &mut self.inner
    }

    /// `(μ, σ)` used for the next prediction.
    pub fn location_scale(&self) -> (f64, f64) {
        let var = if self.total_weight > 0.0 {
            self.m2 / self.total_weight
        } else {
            0.0
        };
        let sd = var.sqrt();
        let scale = if sd > 0.0 && sd.is_finite() {
            sd
        } else if self.mean != 0.0 {
            self.mean.abs()
        } else {
            1.0
        };
        (self.mean, scale)
    }

    fn observe(&mut self, y: f64, weight: f64) {
        if weight > 0.0 {
            self.total_weight += weight;
            let before = self.mean;
            self.mean += weight / self.total_weight * (y - before);
            self.m2 += weight * (y - self.mean) * (y - before);
        }
    }
}

impl<L: OnlineLearner> OnlineLearner for TargetStandardization<L> {
    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn predict(&self, x: Row<'_>) -> f64 {
        let (mu, sigma) = self.location_scale();
        if self.total_weight == 0.0 {
            return mu;
        }
        mu + sigma * self.inner.predict(x)
    }

    fn learn(&mut self, x: Row<'_>, y: f64, weight: f64) -> Result<f64, LearnError> {
        check_example(&x, y, weight, self.dim())?;
        let (mu, sigma) = self.location_scale();
        let p = if self.total_weight == 0.0 {
            mu
        } else {
            mu + sigma * self.inner.learn(x, (y - mu) / sigma, weight)?
        };
        self.observe(y, weight);
        Ok(p)
    }

    #[inline]
    fn prefetch(&self, x: Row<'_>) {
        self.inner.prefetch(x);
    }

    /// The weights in label units: the wrapped learner's times `σ` (the offset `μ` is not a
    /// weight of `x`).
    fn weights(&self) -> Cow<'_, [f64]> {
        let (_, sigma) = self.location_scale();
        Cow::Owned(self.inner.weights().iter().map(|w| w * sigma).collect())
    }
}

/// The wrapped learners merged; the label moments merged as one stream's
/// ([`crate::merge`]'s `merge_moments`).
impl<L: MergeShare> MergeShare for TargetStandardization<L> {
    fn check_merge(&self, other: &Self, base: Option<&Self>) -> MergeResult {
        self.inner.check_merge(&other.inner, base.map(|b| &b.inner))
    }

    fn merge_share(&mut self, other: &Self, base: Option<&Self>, share: f64) -> MergeResult {
        self.check_merge(other, base)?;
        self.inner
            .merge_share(&other.inner, base.map(|b| &b.inner), share)?;
        let m = |s: &Self| (s.total_weight, s.mean, s.m2);
        (self.total_weight, self.mean, self.m2) =
            crate::merge::merge_moments(m(self), m(other), base.map(m));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linear::RunningMean;

    /// `μ, σ` are the running mean and (population) standard deviation of the labels before
    /// the round, by hand: labels 2, 4, 9 → after two, μ = 3, σ = 1; after three, μ = 5,
    /// σ² = ((2−5)² + (4−5)² + (9−5)²)/3 = 26/3.
    #[test]
    fn location_and_scale_by_hand() {
        let mut m = TargetStandardization::new(RunningMean::new(1));
        let x = Row::Dense(&[0.0]);
        assert_eq!(m.location_scale(), (0.0, 1.0));
        m.learn(x, 2.0, 1.0).unwrap();
        assert_eq!(m.location_scale(), (2.0, 2.0)); // one label: σ falls back on |μ|
        m.learn(x, 4.0, 1.0).unwrap();
        assert_eq!(m.location_scale(), (3.0, 1.0));
        m.learn(x, 9.0, 1.0).unwrap();
        let (mu, sigma) = m.location_scale();
        assert!((mu - 5.0).abs() < 1e-12 && (sigma * sigma - 26.0 / 3.0).abs() < 1e-12);
    }
}
