//! Merging states grown on separate shards of a stream: the operation behind distributed
//! training (each worker learns its shard, the small states are merged, the merged state goes
//! back out — `sketchlearn.dask` in the Python package).
//!
//! # Two kinds of merge
//!
//! * **Summaries** ([`Merge`]): the sketches. Frequent Directions is a *mergeable summary*
//!   (Agarwal et al., "Mergeable Summaries", PODS 2012, §5; Liberty, "Simple and Deterministic
//!   Matrix Sketching", KDD 2013, §3; Ghashami, Liberty, Phillips & Woodruff, "Frequent
//!   Directions: Simple and Deterministic Matrix Sketching", SICOMP 2016, §3.1): stacking two
//!   sketches and shrinking gives a sketch of the concatenated stream whose error is at most the
//!   sum of the shrinkages, so FD's bound `‖AᵀA − BᵀB‖₂ ≤ ‖A − A_k‖²_F/(m − k)` holds for the
//!   union (`tests/suite/merge_properties.rs`).
//! * **Learners** ([`MergeShare`], and [`Merge`] for the counted wrappers
//!   [`LinearModel`](crate::linear::LinearModel) and [`OneVsAll`](crate::linear::OneVsAll)):
//!   *iterative parameter mixing* (McDonald, Hall & Mann, "Distributed Training Strategies for
//!   the Structured Perceptron", NAACL 2010, §3, Alg. 3): the weights of the shards are averaged,
//!   weighted by the examples each shard learned (McDonald et al.'s `μ_i = |T_i|/|T|`), and
//!   every worker starts its next round from the average. McDonald et al. (Theorem 3) bound the
//!   number of mistakes of the mixed perceptron on separable data as that of one perceptron on
//!   the whole data; for the second-order learners here the average is the same convex
//!   combination, with no theorem of that strength — what the merge preserves exactly is every
//!   *additive* statistic (squared-gradient sums, example counts, label moments, mixture losses),
//!   which come out as on a single stream, and the curvature sketch, which keeps FD's bound.
//!
//! # Rounds: a common base
//!
//! In round `r` every worker starts from the same global state `G`. Adding the workers' states
//! would count `G`'s statistics once per worker, so [`Merge::merge`] takes the `base` both
//! states grew from: an additive statistic becomes `s_a + s_b − s_G` (exactly the single-stream
//! value), a sketch is merged as `B_aᵀB_a + B_bᵀB_b − B_GᵀB_G` (see [`crate::sketch`]'s
//! `fd_rebase`), and the weights are averaged by the examples each side learned *since* `G`.
//! `base = None` means both grew from the empty state. Merging with a state that learned
//! nothing since the base is the identity; merging states of different configurations is a
//! [`MergeError::Incompatible`]; states that cannot honestly be merged (Oja's sketch, random
//! projections drawn from the same seed, dense or sparse-time) give
//! [`MergeError::Unsupported`] with the reason. The sparse-time FD/RFD learners, whose state
//! lives in lazily rebased bases, are merged through their materialised weights and sketch
//! rows on the touched columns (`linear/sparse/merge.rs`); over a base that was itself made by
//! a merge, only the columns learned on in the round are computed, the others being one lazy
//! rebase of the base's store (`linear/sparse/merge_lazy.rs`, the same result to rounding).
//!
//! ```
//! use sketchlearn::linear::{LearnerConfig, LinearModel, OnlineLearner};
//! use sketchlearn::merge::Merge;
//! use sketchlearn::Row;
//! let config = LearnerConfig::default();
//! let mut a = LinearModel::new(config.clone(), config.build(2).unwrap());
//! let mut b = a.clone();
//! a.learner.learn(Row::Dense(&[1.0, 0.0]), 1.0, 1.0).unwrap();
//! a.examples_seen += 1;
//! b.learner.learn(Row::Dense(&[0.0, 1.0]), -1.0, 1.0).unwrap();
//! b.examples_seen += 1;
//! a.merge(&b, None).unwrap();
//! assert_eq!(a.examples_seen, 2);
//! assert!(a.learner.predict(Row::Dense(&[1.0, -1.0])) > 0.0);
//! ```

use crate::sketch::SketchError;
use std::fmt::Debug;

/// Why two states could not be merged.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum MergeError {
    /// The states were built with different configurations (dimension, sketch size, loss, …).
    #[error("cannot merge: {0}")]
    Incompatible(String),
    /// This kind of state has no sound merge (the message says why and what to use instead).
    #[error("merge not supported: {0}")]
    Unsupported(String),
    /// The sketch's merge failed (e.g. a decomposition of the stacked rows).
    #[error(transparent)]
    Sketch(#[from] SketchError),
}

/// What a merge returns.
pub type MergeResult = Result<(), MergeError>;

/// A summary or counted model that merges with another grown on a disjoint part of the stream.
///
/// **All or nothing.** Every rule that can refuse a merge (a different configuration, kind,
/// dimension or shape, a base of another kind, a state with no sound merge) lives in
/// [`check_merge`](Merge::check_merge), which changes nothing; [`merge`](Merge::merge) calls it
/// before it changes `self`, so a refused merge leaves `self` as it was, byte for byte — also
/// when the refusal comes from a part whose turn comes after others' (a mixture's later
/// member, a later class). The one error `check_merge` cannot foresee is a numerical failure of a
/// decomposition during the merge itself ([`MergeError::Sketch`], from non-finite states);
/// after it the state may be part-merged.
pub trait Merge {
    /// `Ok` when [`merge`](Merge::merge) with these arguments refuses nothing, else the error
    /// it would return; nothing is changed.
    fn check_merge(&self, other: &Self, base: Option<&Self>) -> MergeResult;

    /// Merges `other` into `self`. Both grew from `base` (the state of the last broadcast) or,
    /// with `None`, from the empty state; `base` is not changed. On a refusal
    /// ([`check_merge`](Merge::check_merge)'s error) `self` is unchanged.
    fn merge(&mut self, other: &Self, base: Option<&Self>) -> Result<(), MergeError>;
}

/// A learner state merged by iterative parameter mixing: the parameters are averaged with
/// `share` the fraction of the round's examples that `self` learned (`1 − share` for
/// `other`); additive statistics and sketches are combined as in [`Merge`] (module docs).
/// All or nothing, as [`Merge`]: the rules live in [`check_merge`](MergeShare::check_merge),
/// which [`merge_share`](MergeShare::merge_share) calls before it changes anything.
pub trait MergeShare {
    /// `Ok` when [`merge_share`](MergeShare::merge_share) with these states refuses nothing,
    /// else the error it would return; nothing is changed.
    fn check_merge(&self, other: &Self, base: Option<&Self>) -> MergeResult;

    /// Merges `other` into `self` (both grown from `base`, `None` = empty) with `self`'s
    /// share of the round's examples `share ∈ [0, 1]`. On a refusal
    /// ([`check_merge`](MergeShare::check_merge)'s error) `self` is unchanged.
    fn merge_share(&mut self, other: &Self, base: Option<&Self>, share: f64) -> MergeResult;
}

/// `check(a, b)` and, with a base, `check(a, base)`: a rule on the configuration the three
/// states of a merge must share.
pub(crate) fn with_base<T>(
    a: &T,
    b: &T,
    base: Option<&T>,
    check: impl Fn(&T, &T) -> MergeResult,
) -> MergeResult {
    check(a, b)?;
    base.map_or(Ok(()), |g| check(a, g))
}

/// `self`'s share of the examples learned since the base: `(n_a − n_G)/((n_a − n_G) + (n_b −
/// n_G))`, 1 when neither learned anything (the merge is then the identity).
pub fn share_of(self_seen: u64, other_seen: u64, base_seen: u64) -> f64 {
    let a = self_seen.saturating_sub(base_seen) as f64;
    let b = other_seen.saturating_sub(base_seen) as f64;
    if a + b == 0.0 {
        1.0
    } else {
        a / (a + b)
    }
}

/// `a ← share·a + (1 − share)·b`, coordinate-wise (the parameter average).
pub(crate) fn mix(a: &mut [f64], b: &[f64], share: f64) {
    if share == 1.0 {
        return;
    }
    for (x, y) in a.iter_mut().zip(b) {
        *x = mix_one(*x, *y, share);
    }
}

/// One coordinate of [`mix`] (`share < 1`): `share·a + (1 − share)·b`.
#[inline]
pub(crate) fn mix_one(a: f64, b: f64, share: f64) -> f64 {
    share * a + (1.0 - share) * b
}

/// One coordinate of [`add_since`].
#[inline]
pub(crate) fn add_since_one(a: f64, b: f64, base: Option<f64>) -> f64 {
    match base {
        Some(z) => (a + b - z).max(0.0),
        None => a + b,
    }
}

/// `a ← a + b − base` coordinate-wise (an additive statistic), clamped at 0 (these are sums of
/// non-negative terms, the subtraction may round below 0).
pub(crate) fn add_since(a: &mut [f64], b: &[f64], base: Option<&[f64]>) {
    match base {
        Some(g) => a
            .iter_mut()
            .zip(b)
            .zip(g)
            .for_each(|((x, y), z)| *x = add_since_one(*x, *y, Some(*z))),
        None => a
            .iter_mut()
            .zip(b)
            .for_each(|(x, y)| *x = add_since_one(*x, *y, None)),
    }
}

/// `a + b − base` for one additive scalar.
pub(crate) fn add_scalar(a: f64, b: f64, base: Option<f64>) -> f64 {
    a + b - base.unwrap_or(0.0)
}

/// `a + b − base` for a count.
pub(crate) fn add_count(a: u64, b: u64, base: Option<u64>) -> u64 {
    (a + b).saturating_sub(base.unwrap_or(0))
}

/// An error unless `a == b` (the part of the configuration named `what`).
pub(crate) fn same<T: PartialEq + Debug>(what: &str, a: T, b: T) -> Result<(), MergeError> {
    if a == b {
        Ok(())
    } else {
        Err(MergeError::Incompatible(format!(
            "{what} differs ({a:?} vs {b:?})"
        )))
    }
}

/// The weighted label moments `(W, μ, M₂)` of a running mean/variance, merged through their
/// additive form `(W, Wμ, M₂ + Wμ²)` (Chan, Golub & LeVeque 1979's pairwise update, written
/// with a common base subtracted).
pub(crate) fn merge_moments(
    a: (f64, f64, f64),
    b: (f64, f64, f64),
    base: Option<(f64, f64, f64)>,
) -> (f64, f64, f64) {
    let raw = |(w, mu, m2): (f64, f64, f64)| (w, w * mu, m2 + w * mu * mu);
    let (wa, sa, qa) = raw(a);
    let (wb, sb, qb) = raw(b);
    let (wg, sg, qg) = base.map_or((0.0, 0.0, 0.0), raw);
    let w = wa + wb - wg;
    if w <= 0.0 {
        return (0.0, 0.0, 0.0);
    }
    let mu = (sa + sb - sg) / w;
    let m2 = (qa + qb - qg - w * mu * mu).max(0.0);
    (w, mu, m2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moments_merge_like_one_stream() {
        // Labels 1, 2 (weight 1 each) and 4 on a base of label 0.
        let stats = |ys: &[f64]| {
            let w = ys.len() as f64;
            let mu = ys.iter().sum::<f64>() / w;
            (w, mu, ys.iter().map(|y| (y - mu) * (y - mu)).sum::<f64>())
        };
        let (w, mu, m2) = merge_moments(
            stats(&[0.0, 1.0, 2.0]),
            stats(&[0.0, 4.0]),
            Some(stats(&[0.0])),
        );
        let want = stats(&[0.0, 1.0, 2.0, 4.0]);
        assert_eq!(w, want.0);
        assert!((mu - want.1).abs() < 1e-12 && (m2 - want.2).abs() < 1e-12);
    }

    #[test]
    fn share_counts_examples_since_the_base() {
        assert_eq!(share_of(13, 11, 10), 0.75);
        assert_eq!(share_of(10, 10, 10), 1.0);
        assert_eq!(share_of(0, 4, 0), 0.0);
    }
}
