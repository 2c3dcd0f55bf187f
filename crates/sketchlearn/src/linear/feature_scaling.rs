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

use super::rescaling::{
    largest_inverse_scale, per_feature_weights, rescaling_learner, with_values,
};
use super::{check_example, LearnError, OnlineLearner};
use crate::merge::{MergeResult, MergeShare};
use crate::model::touched::Touched;
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
    /// Per feature: `Σ x_i²` over the non-zero values seen, and `n_i`, how many were seen
    /// (written as two sparse arrays; saved and checked in proportion to the features seen).
    moments: Touched<2>,
    #[serde(skip)]
    scaled: Vec<f64>,
}

impl<L: OnlineLearner> FeatureScaling<L> {
    /// Wraps `inner` (same dimension).
    pub fn new(inner: L) -> Self {
        let d = inner.dim();
        FeatureScaling {
            inner,
            moments: Touched::new(d),
            scaled: Vec::new(),
        }
    }

    /// The wrapped learner (which sees scaled features).
    pub fn inner(&self) -> &L {
        &self.inner
    }

    /// The wrapped learner, to change (a mixture's retirement threshold: `any.rs`).
    pub(super) fn inner_mut(&mut self) -> &mut L {
        &mut self.inner
    }

    /// `1/s_i` (1 for a feature never seen non-zero).
    pub fn inverse_scale(&self, i: usize) -> f64 {
        if i >= self.moments.len() {
            return 1.0;
        }
        match self.moments.at(i) {
            [s, n] if s > 0.0 && s.is_finite() => (n / s).sqrt(),
            _ => 1.0,
        }
    }

    /// The largest `|1/s_i|` over all features (1 for those never seen non-zero), from the
    /// features seen: `O(features seen)`.
    pub(crate) fn largest_inverse_scale(&self) -> f64 {
        let seen = self.moments.features().into_iter();
        largest_inverse_scale(seen.map(|i| self.inverse_scale(i)))
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
            if xi != 0.0 && xi.is_finite() && i < self.moments.len() {
                let [sum_sq, count] = self.moments.at(i);
                let next = sum_sq + xi * xi;
                if next.is_finite() {
                    self.moments.set(i, [next, count + 1.0]);
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
    fn check_merge(&self, other: &Self, base: Option<&Self>) -> MergeResult {
        crate::merge::with_base(self, other, base, |a, b| {
            crate::merge::same("dimension", a.moments.len(), b.moments.len())
        })?;
        self.inner.check_merge(&other.inner, base.map(|b| &b.inner))
    }

    fn merge_share(&mut self, other: &Self, base: Option<&Self>, share: f64) -> MergeResult {
        self.check_merge(other, base)?;
        self.inner
            .merge_share(&other.inner, base.map(|b| &b.inner), share)?;
        self.moments.update_all(|[sum_sq, count]| {
            let (theirs, base) = (&other.moments, base.map(|b| &b.moments));
            crate::merge::add_since(sum_sq, theirs.array(0), base.map(|b| b.array(0)));
            crate::merge::add_since(count, theirs.array(1), base.map(|b| b.array(1)));
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linear::first_order::tests::learn_a_few;
    use crate::linear::AdaGrad;
    use crate::loss::Loss;

    /// Saving and the load check's scale bound read only the features seen (issue 26).
    #[test]
    fn only_the_features_seen_are_read() {
        let mut l = FeatureScaling::new(AdaGrad::new(4096, Loss::Logistic, 0.5).unwrap());
        learn_a_few(&mut l);
        let bytes = postcard::to_allocvec(&l).unwrap();
        let bound = l.largest_inverse_scale();
        assert_eq!(bound, 4.0); // feature 4000, always 0.25
        l.moments.poison_untouched();
        assert_eq!(postcard::to_allocvec(&l).unwrap(), bytes);
        assert_eq!(l.largest_inverse_scale(), bound);
    }
}
