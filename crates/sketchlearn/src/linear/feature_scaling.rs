//! Per-feature scale normalisation: the wrapped learner sees `x_i / s_i`, with `s_i` the running
//! root mean square of feature `i`'s non-zero values, `s_i² = Σ_{s≤t, x_{s,i}≠0} x_{s,i}² / n_i`
//! (`n_i` the number of examples where feature `i` was non-zero so far, the current one included:
//! the label is not used, so progressive validation stays honest, and the first value of every
//! feature is mapped to ±1 rather than to a value of `10⁸` that would wreck the first step).
//!
//! This is Vowpal Wabbit's `--normalized` idea (Ross, Mineiro & Langford, *Normalized Online
//! Learning*, UAI 2013: features rescaled by a running per-feature scale so that the learner is
//! invariant to `x_i ↦ c_i x_i`), with the root mean square instead of NAG's running maximum
//! (one outlier does not shrink a feature for ever) and without NAG's weight correction when
//! `s_i` changes (the wrapped learner is any learner, sketches included; on a stationary stream
//! `s_i` settles after a few examples). A feature multiplied by `c > 0` has `s_i` multiplied by
//! `c`, so the wrapped learner sees the same stream exactly, up to rounding: the predictions are
//! invariant to per-feature rescaling. Only the touched coordinates are read and written
//! (`O(nnz)` per example), so sparse inputs stay sparse; features are not centred (that would
//! make every row dense) — the intercept and the curvature of the Newton members take care of
//! offsets.

use super::rescaling::{per_feature_weights, rescaling_learner, with_values};
use super::{check_example, LearnError, OnlineLearner};
use crate::merge::{MergeResult, MergeShare};
use crate::Row;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// Wraps a learner so that it sees features divided by their running RMS (see the module
/// documentation).
///
/// ```
/// use sketchlearn::linear::{FeatureScaling, Intercept, AdaGrad, OnlineLearner};
/// use sketchlearn::loss::Loss;
/// use sketchlearn::Row;
/// let scaled = |c: f64| {
///     let mut m = FeatureScaling::new(Intercept::new(AdaGrad::new(3, Loss::Squared, 0.5).unwrap()));
///     let mut out = 0.0;
///     for t in 0..50 {
///         let x = [c * (t % 5) as f64, (t % 3) as f64];
///         out = m.learn(Row::Dense(&x), x[1] - x[0] / c, 1.0).unwrap();
///     }
///     out
/// };
/// assert!((scaled(1.0) - scaled(1e6)).abs() < 1e-9);
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FeatureScaling<L> {
    inner: L,
    /// `Σ x_i²` over the non-zero values seen.
    #[serde(with = "crate::model::sparse_vec")]
    sum_sq: Vec<f64>,
    /// `n_i`: how many non-zero values of feature `i` were seen.
    #[serde(with = "crate::model::sparse_vec")]
    count: Vec<f64>,
    #[serde(skip)]
    scaled: Vec<f64>,
}

impl<L: OnlineLearner> FeatureScaling<L> {
    /// Wraps `inner` (same dimension).
    pub fn new(inner: L) -> Self {
        let d = inner.dim();
        FeatureScaling {
            inner,
            sum_sq: vec![0.0; d],
            count: vec![0.0; d],
            scaled: Vec::new(),
        }
    }

    /// The wrapped learner (which sees scaled features).
    pub fn inner(&self) -> &L {
        &self.inner
    }

    /// `1/s_i` (1 for a feature never seen non-zero).
    pub fn inverse_scale(&self, i: usize) -> f64 {
        match (self.sum_sq.get(i), self.count.get(i)) {
            (Some(&s), Some(&n)) if s > 0.0 && s.is_finite() => (n / s).sqrt(),
            _ => 1.0,
        }
    }

    fn scaled_values(&self, x: Row<'_>, out: &mut Vec<f64>) {
        out.clear();
        match x {
            Row::Dense(v) => out.extend(
                v.iter()
                    .enumerate()
                    .map(|(i, xi)| xi * self.inverse_scale(i)),
            ),
            Row::Sparse { indices, values } => out.extend(
                indices
                    .iter()
                    .zip(values)
                    .map(|(&i, xi)| xi * self.inverse_scale(i as usize)),
            ),
        }
    }

    fn observe(&mut self, x: Row<'_>) {
        x.for_each_entry(|i, xi| {
            if xi != 0.0 && xi.is_finite() && i < self.sum_sq.len() {
                let next = self.sum_sq[i] + xi * xi;
                if next.is_finite() {
                    self.sum_sq[i] = next;
                    self.count[i] += 1.0;
                }
            }
        });
    }

    /// The weights on the original features: the wrapped learner's divided by `s_i`.
    fn original_weights(&self, inner: &[f64]) -> Vec<f64> {
        per_feature_weights(inner, |i| self.inverse_scale(i))
    }
}

rescaling_learner!(FeatureScaling);

/// The wrapped learners merged; the per-feature sums of squares and counts added.
impl<L: MergeShare> MergeShare for FeatureScaling<L> {
    fn merge_share(&mut self, other: &Self, base: Option<&Self>, share: f64) -> MergeResult {
        crate::merge::same("dimension", self.count.len(), other.count.len())?;
        self.inner
            .merge_share(&other.inner, base.map(|b| &b.inner), share)?;
        crate::merge::add_since(&mut self.sum_sq, &other.sum_sq, base.map(|b| &b.sum_sq[..]));
        crate::merge::add_since(&mut self.count, &other.count, base.map(|b| &b.count[..]));
        Ok(())
    }
}
