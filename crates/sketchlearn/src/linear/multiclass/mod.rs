//! Multiclass online learners over `K ≥ 2` classes numbered `0..K` (issue 24, item 2):
//!
//! * [`OneVsAll`]: `K` binary [`OnlineLearner`]s, member `k` learning "class `k`" (`+1`) against
//!   the rest (`−1`); predictions compare the members' margins on the same scale.
//! * [`SoftmaxSon`]: multinomial (softmax) logistic regression with a sketched second-order step
//!   whose curvature is Kronecker-factored — one feature-side sketch shared by all `K` classes
//!   times a small `K × K` class-side factor (the derivation is in its module documentation);
//!   in sparse time over FD/RFD, RP and Oja sketches
//!   ([`SparseSoftmax`](crate::linear::sparse::SparseSoftmax)), with diagonal adaptation as
//!   the wrapper [`DiagonalScaled`].
//!
//! Both implement [`MulticlassLearner`]; [`MulticlassConfig`] validates hyper-parameters and
//! builds an [`AnyMulticlass`] chosen at run time (serde-serializable for model files).
//!
//! Class labels are `usize` ids `0..K`: mapping the user's labels (mnist's 0–9, R8's 1–8,
//! strings) to ids and back is the caller's job.

use super::{check_example, LearnError};
use crate::Row;

mod class_factor;
mod config;
mod diagonal_scaled;
mod from_member;
mod one_vs_all;
mod row_scaled;
mod saved;
mod sketch_choice;
mod softmax_son;

pub use class_factor::ClassFactor;
pub use config::{AnyMulticlass, MulticlassConfig, Reduction};
pub use diagonal_scaled::DiagonalScaled;
pub use from_member::SoftmaxGiven;
pub use one_vs_all::OneVsAll;
pub use row_scaled::RowScaled;
pub use saved::{MulticlassModel, MULTICLASS_MODEL_KIND};
pub use sketch_choice::{softmax_curvature_for, SOFTMAX_DEFAULT_SIZE};
pub(crate) use softmax_son::{
    check_params as check_softmax_params, class_coefficients, clip_coefficients, Extended,
};
pub use softmax_son::{SoftmaxParams, SoftmaxSon};

/// An online learner of `K` classes, one example at a time (River's `learn_one` /
/// `predict_proba_one` contract, with classes as ids `0..K`).
pub trait MulticlassLearner {
    /// The number of classes `K`.
    fn classes(&self) -> usize;

    /// The input dimension `d` (features beyond it are ignored by the predictions).
    fn dim(&self) -> usize;

    /// One raw score per class (higher = more likely); what [`MulticlassLearner::predict_class`]
    /// compares.
    fn scores(&self, x: Row<'_>) -> Vec<f64>;

    /// One probability per class: finite, in `[0, 1]`, summing to 1.
    fn predict_proba(&self, x: Row<'_>) -> Vec<f64>;

    /// The class with the highest score (the lowest id among ties).
    fn predict_class(&self, x: Row<'_>) -> usize {
        argmax(&self.scores(x))
    }

    /// Predicts `x`, then learns that its class is `class` with importance `weight`; returns the
    /// probabilities predicted *before* the update (what progressive validation scores).
    ///
    /// Errors: an invalid example (non-finite value or weight, index beyond `dim()`, class
    /// `≥ K`) is refused before anything changes. [`LearnError::Diverged`] means a step was
    /// refused because it would have made a weight non-finite or larger than
    /// [`MAX_WEIGHT`](super::MAX_WEIGHT): the weights are unchanged (a curvature model may have
    /// taken the example), the refusal is counted in [`MulticlassLearner::refused`], and the
    /// probabilities before the update are still [`MulticlassLearner::predict_proba`]`(x)`.
    fn learn(&mut self, x: Row<'_>, class: usize, weight: f64) -> Result<Vec<f64>, LearnError>;

    /// Number of steps refused so far (divergence guard), over all members.
    fn refused(&self) -> u64;

    /// Number of examples learned.
    fn examples_seen(&self) -> u64;
}

/// Index of the largest value (the first among ties; NaN never wins; 0 for an empty slice).
///
/// ```
/// assert_eq!(sketchlearn::linear::multiclass::argmax(&[0.2, 0.5, 0.5]), 1);
/// ```
pub fn argmax(v: &[f64]) -> usize {
    let mut best = 0;
    for (k, &s) in v.iter().enumerate() {
        if s > v[best] || (v[best].is_nan() && !s.is_nan()) {
            best = k;
        }
    }
    best
}

/// Checks an example of a multiclass learner: the binary learners' checks (finite values and
/// weight, indices inside `dim`) and `class < k`.
pub(crate) fn check_multiclass(
    x: &Row<'_>,
    class: usize,
    weight: f64,
    dim: usize,
    k: usize,
) -> Result<(), LearnError> {
    if class >= k {
        return Err(LearnError::InvalidParameter(format!(
            "class id {class} is outside 0..{k} (the model has {k} classes)"
        )));
    }
    check_example(x, 0.0, weight, dim)
}

/// Probabilities from log-probabilities known up to a constant: `p_k ∝ exp(l_k)`, computed
/// with the maximum subtracted. Classes at `+∞` share the mass; a NaN (or all `−∞`) gives the
/// uniform distribution — the result is always finite, in `[0, 1]` and sums to 1.
pub(crate) fn normalize_log(l: &[f64]) -> Vec<f64> {
    let k = l.len();
    let uniform = || vec![1.0 / k as f64; k];
    if l.iter().any(|v| v.is_nan()) {
        return uniform();
    }
    let max = l.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if max == f64::INFINITY {
        let top = l.iter().filter(|&&v| v == max).count() as f64;
        return l
            .iter()
            .map(|&v| if v == max { 1.0 / top } else { 0.0 })
            .collect();
    }
    if max == f64::NEG_INFINITY {
        return uniform();
    }
    let mut p: Vec<f64> = l.iter().map(|&v| (v - max).exp()).collect();
    // The maximum contributes exp(0) = 1, so the sum is in [1, K].
    let s: f64 = p.iter().sum();
    p.iter_mut().for_each(|v| *v /= s);
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argmax_takes_the_first_of_ties_and_skips_nan() {
        assert_eq!(argmax(&[1.0, 3.0, 3.0]), 1);
        assert_eq!(argmax(&[f64::NAN, -1.0]), 1);
        assert_eq!(argmax(&[]), 0);
    }

    #[test]
    fn normalize_log_is_a_distribution_on_extreme_inputs() {
        for l in [
            vec![0.0, 0.0],
            vec![1e308, -1e308, 0.0],
            vec![f64::INFINITY, f64::INFINITY, 1.0],
            vec![f64::NEG_INFINITY; 3],
            vec![f64::NAN, 1.0],
            vec![-745.0, -746.0],
        ] {
            let p = normalize_log(&l);
            assert!(p.iter().all(|v| v.is_finite() && (0.0..=1.0).contains(v)));
            assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12, "{l:?} → {p:?}");
        }
        let p = normalize_log(&[f64::INFINITY, f64::INFINITY, 1.0]);
        assert_eq!(p, vec![0.5, 0.5, 0.0]);
    }
}
