//! Global row-scale normalisation for a Newton learner: the wrapped learner sees `x / r_t`, with
//! `r_t² = (1/t) Σ_{s≤t} ‖x_s‖²` the running mean squared row norm (the current row included;
//! the label is not used, so progressive validation stays honest).
//!
//! Why (SON, Luo et al. 2016, Alg. 1 and §5): the curvature is `A_t = αI + Σ_s c·g_s g_sᵀ` with
//! `g_s = ℓ'·x_s`, so `α` is measured in the units of `‖x‖²`. A sketch of size `m ≪ d` raises
//! `A` only in `m` directions; in the other `d − m` the step stays `A⁻¹g = g/α`, which changes
//! the margin of the current row by `ℓ'·‖x_⊥‖²/α`. With `α = 1` and dense rows of `‖x‖² ≈ 1500`
//! (d = 1000) every step overshoots a thousand-fold and FD-SON / Oja-SON diverge (progressive
//! error 0.62 / 0.66 on the d = 1000, κ = 100 stream, `scripts/bench_single_learners.py`) while
//! the same learners with `α ≈ ‖x‖²/5` reach 0.105 / 0.093. Dividing rows by `r_t` is the same
//! as measuring `α` relative to the mean squared row norm: for a fixed `r`, SON on `x/r` with
//! `α` takes, on the original weights, the steps of SON on `x` with `α·r²`
//! (`w' = r·w`, `g' = g/r`, `A' = (αr²I + cΣggᵀ)/r²`, so `w'`-step `A'⁻¹g' = r·(αr²I + cΣggᵀ)⁻¹g`).
//! Hence the learner is invariant to multiplying every feature by one constant (`r` scales
//! with it), and the default `α = 1` means "one mean row's worth of curvature".
//!
//! `r_t` changes with `t`; the weights are not corrected when it does (as in
//! [`FeatureScaling`](super::FeatureScaling)): on a stationary stream `r_t` settles after a few
//! rows. The intercept is added inside (its constant stays 1).

use super::rescaling::{rescaling_learner, with_values};
use super::{check_example, LearnError, OnlineLearner};
use crate::merge::{MergeResult, MergeShare};
use crate::Row;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// Wraps a learner so that it sees rows divided by their running RMS norm (see the module
/// documentation).
///
/// ```
/// use sketchlearn::linear::{Intercept, Newton, NewtonParams, OnlineLearner, RowScaling};
/// use sketchlearn::linear::curvature::IdentityCurvature;
/// use sketchlearn::Row;
/// let run = |c: f64| {
///     let son = Newton::new(IdentityCurvature::new(3, 1.0).unwrap(), NewtonParams::default());
///     let mut l = RowScaling::new(Intercept::new(son.unwrap()));
///     let mut out = 0.0;
///     for t in 0..50 {
///         let x = [c * (t % 5) as f64 - 2.0 * c, c * (t % 3) as f64 - c];
///         out = l.learn(Row::Dense(&x), if x[0] > x[1] { 1.0 } else { -1.0 }, 1.0).unwrap();
///     }
///     out
/// };
/// assert!((run(1.0) - run(1e4)).abs() < 1e-9);
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RowScaling<L> {
    inner: L,
    /// `r_t` (serialised as its two sums, the bytes of the format before it was a type).
    scale: RowScale,
    #[serde(skip)]
    scaled: Vec<f64>,
}

/// The running mean squared row norm `r_t² = (1/t) Σ_{s≤t} ‖x_s‖²` (module documentation) that
/// a row-scaled learner divides its rows by: [`RowScaling`] for a binary learner,
/// [`RowScaled`](crate::linear::multiclass::RowScaled) for the softmax learner.
///
/// ```
/// use sketchlearn::linear::RowScale;
/// use sketchlearn::Row;
/// let mut r = RowScale::default();
/// assert_eq!(r.inverse_scale(), 1.0);
/// r.observe(Row::Dense(&[3.0, 4.0])); // ‖x‖² = 25
/// r.observe(Row::Dense(&[0.0, 0.0]));
/// assert_eq!(r.inverse_scale(), (2.0_f64 / 25.0).sqrt());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RowScale {
    /// `Σ ‖x_s‖²` over the rows seen.
    sum_sq: f64,
    /// How many rows were seen.
    rows: f64,
}

impl RowScale {
    /// `1/r_t`: finite and `> 0`; 1 before any non-zero row (and for sums no training makes,
    /// so that a crafted model file cannot turn the rows into NaN).
    pub fn inverse_scale(&self) -> f64 {
        let s = (self.rows / self.sum_sq).sqrt();
        if self.sum_sq > 0.0 && self.rows > 0.0 && s.is_finite() && s > 0.0 {
            s
        } else {
            1.0
        }
    }

    /// The row joins the mean (a row whose squared norm would overflow the sum is skipped).
    pub fn observe(&mut self, x: Row<'_>) {
        let next = self.sum_sq + x.squared_norm();
        if next.is_finite() {
            self.sum_sq = next;
            self.rows += 1.0;
        }
    }

    /// The stored values of `x` divided by `r_t`, written to `out` (same order as the row's).
    pub fn scaled_values(&self, x: Row<'_>, out: &mut Vec<f64>) {
        let s = self.inverse_scale();
        out.clear();
        match x {
            Row::Dense(v) => out.extend(v.iter().map(|xi| xi * s)),
            Row::Sparse { values, .. } => out.extend(values.iter().map(|xi| xi * s)),
        }
    }

    /// Whether the sums are ones training makes: finite and `≥ 0`.
    pub(crate) fn is_valid(&self) -> bool {
        [self.sum_sq, self.rows]
            .iter()
            .all(|v| v.is_finite() && *v >= 0.0)
    }

    /// Adds `other`'s sums since `base` (all of them without a base).
    pub(crate) fn add_since(&mut self, other: &Self, base: Option<&Self>) {
        let mut sums = [self.sum_sq, self.rows];
        let base_sums = base.map(|b| [b.sum_sq, b.rows]);
        crate::merge::add_since(
            &mut sums,
            &[other.sum_sq, other.rows],
            base_sums.as_ref().map(|b| &b[..]),
        );
        [self.sum_sq, self.rows] = sums;
    }
}

impl<L: OnlineLearner> RowScaling<L> {
    /// Wraps `inner` (same dimension).
    pub fn new(inner: L) -> Self {
        RowScaling {
            inner,
            scale: RowScale::default(),
            scaled: Vec::new(),
        }
    }

    /// The wrapped learner (which sees scaled rows).
    pub fn inner(&self) -> &L {
        &self.inner
    }

    /// The wrapped learner, to change (a mixture's retirement threshold: `any.rs`).
    pub(super) fn inner_mut(&mut self) -> &mut L {
        &mut self.inner
    }

    /// `1/r_t` (1 before any non-zero row).
    pub fn inverse_scale(&self) -> f64 {
        self.scale.inverse_scale()
    }

    fn scaled_values(&self, x: Row<'_>, out: &mut Vec<f64>) {
        self.scale.scaled_values(x, out);
    }

    fn observe(&mut self, x: Row<'_>) {
        self.scale.observe(x);
    }

    /// The weights on the original features: the wrapped learner's divided by `r_t` (the
    /// intercept, added inside, is the wrapped learner's last weight and is not divided).
    fn original_weights(&self, inner: &[f64]) -> Vec<f64> {
        let s = self.inverse_scale();
        let d = self.dim();
        inner
            .iter()
            .enumerate()
            .map(|(i, w)| if i < d { w * s } else { *w })
            .collect()
    }
}

rescaling_learner!(RowScaling);

/// The wrapped learners merged; the sums of squared norms and the row counts added.
impl<L: MergeShare> MergeShare for RowScaling<L> {
    fn check_merge(&self, other: &Self, base: Option<&Self>) -> MergeResult {
        self.inner.check_merge(&other.inner, base.map(|b| &b.inner))
    }

    fn merge_share(&mut self, other: &Self, base: Option<&Self>, share: f64) -> MergeResult {
        self.check_merge(other, base)?;
        self.inner
            .merge_share(&other.inner, base.map(|b| &b.inner), share)?;
        self.scale.add_since(&other.scale, base.map(|b| &b.scale));
        Ok(())
    }
}
