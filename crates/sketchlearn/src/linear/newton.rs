//! The Sketched Online Newton learner (SON paper, Luo et al. 2016, Algorithm 1), generic over the
//! curvature model: identity (OGD with step `1/α`), full (FULL-ON), FD, RFD (RFD-SON, RFD paper
//! Alg. 5/6), RP and Oja.
//!
//! Per round `t` (DESIGN.md §4 items 5 and 7):
//! 1. **Project** the kept vector `u_t` onto `K_t = {w : |wᵀx_t| ≤ C}` in the `A_{t−1}`-norm
//!    (SON Lemma 1): `w_t = u_t − γ A⁻¹x_t`, `γ = τ_C(u_tᵀx_t)/(x_tᵀA⁻¹x_t)`,
//!    `τ_C(y) = sgn(y)·max(|y| − C, 0)`. `C = ∞` disables it. When the denominator has cancelled
//!    to (numerically) zero the projection is skipped.
//! 2. **Predict** `p_t = w_tᵀx_t` (= `clip(u_tᵀx_t, −C, C)` after the projection).
//! 3. Gradient `g_t = ℓ'(p_t)·x_t` (times the importance weight).
//! 4. Update the curvature with the to-sketch vector `ĝ = √c·g_t`, `c = σ + η` (default 1).
//! 5. **Step** `u_{t+1} = w_t − A_t⁻¹g_t` with the updated curvature.
//!
//! A step that would make a weight non-finite (or larger than [`super::MAX_WEIGHT`]) is refused: the weights stay as they were and
//! [`LearnError::Diverged`] is returned.
//!
//! **A refused row changes nothing**: not the weights, the curvature nor the count, so the next
//! predictions are those of a learner that never saw it. The curvature's bound on the row is
//! asked before any change; the weights' guard, which needs the updated curvature, is met by
//! learning a row that could reach it from an undo copy (`learn`'s docs give the test, which
//! an ordinary row passes for one pass over its values). Pinned by
//! `tests/suite/sparse_equivalence.rs`
//! (`a_refused_row_leaves_the_state_and_the_next_predictions_unchanged`).

use super::curvature::Curvature;
use super::{check_example, weight_ok, LearnError, OnlineLearner, MAX_WEIGHT};
use crate::loss::Loss;
use crate::merge::{MergeResult, MergeShare};
use crate::Row;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// SON hyper-parameters shared by every curvature.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct NewtonParams {
    /// The loss.
    pub loss: Loss,
    /// `c = σ + η`: the to-sketch vector is `√c·g` (SON Alg. 1 line 7).
    pub c: f64,
    /// Projection bound `C` (∞ = no projection).
    pub clip: f64,
}

impl Default for NewtonParams {
    fn default() -> Self {
        NewtonParams {
            loss: Loss::Logistic,
            c: 1.0,
            clip: f64::INFINITY,
        }
    }
}

/// Sketched Online Newton over a curvature model `C`.
///
/// ```
/// use sketchlearn::linear::{Newton, NewtonParams, OnlineLearner};
/// use sketchlearn::linear::curvature::FdCurvature;
/// use sketchlearn::sketch::FdVariant;
/// use sketchlearn::Row;
/// let curvature = FdCurvature::rfd(2, 2, FdVariant::Doubling, 1.0).unwrap();
/// let mut son = Newton::new(curvature, NewtonParams::default()).unwrap();
/// for _ in 0..20 {
///     son.learn(Row::Dense(&[1.0, 0.5]), 1.0, 1.0).unwrap();
///     son.learn(Row::Dense(&[-1.0, 0.2]), -1.0, 1.0).unwrap();
/// }
/// assert!(son.predict(Row::Dense(&[1.0, 0.5])) > 0.0);
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Newton<C> {
    w: Vec<f64>,
    curvature: C,
    params: NewtonParams,
    t: u64,
    #[serde(skip)]
    delta: Vec<f64>,
    /// A bound on `max_i |w_i|`: each learned row adds its steps' bound (see
    /// [`OnlineLearner::learn`]); recomputed (one pass over `w`) when too loose to tell whether a
    /// row needs the refusal's undo copy, and when unknown (`∞`: after a load, a merge or a row
    /// learned from the copy).
    #[serde(skip, default = "unknown_max")]
    wmax: f64,
}

/// [`Newton::wmax`] when it is not known.
fn unknown_max() -> f64 {
    f64::INFINITY
}

/// The factor on a step's exact bound `|coef|·‖x‖/α` in the test for an undo copy (see
/// [`OnlineLearner::learn`]): room for the rounding of the computed `A⁻¹x`.
const STEP_MARGIN: f64 = 1e10;

/// The squared norm `‖ĝ‖²` of a to-sketch row above which a row is learned from an undo copy
/// whatever the weights: the exact bound of a step does not hold for the computed one when the
/// row dominates the sketch (measured: RP with `α = 0.7` and a row with one `1e80` value, whose
/// Woodbury solve `(x − Sᵀ(αI + SSᵀ)⁻¹Sx)/α` cancels terms of `~10⁸⁰` and leaves weights above
/// [`MAX_WEIGHT`], while `A⁻¹x` is `~10⁻⁸⁰`). The sparse driver's test uses the same `10¹⁰⁰`.
const LARGE_ROW: f64 = 1e100;

impl NewtonParams {
    /// `c > 0` finite and `C > 0` (∞ allowed), for the dense and the sparse-time learners.
    pub(crate) fn check(&self) -> Result<(), LearnError> {
        if !(self.c.is_finite() && self.c > 0.0) {
            return Err(LearnError::InvalidParameter(format!(
                "c (sigma + eta) must be finite and > 0, got {}",
                self.c
            )));
        }
        if self.clip.is_nan() || self.clip <= 0.0 {
            return Err(LearnError::InvalidParameter(format!(
                "projection bound C must be > 0 (inf = none), got {}",
                self.clip
            )));
        }
        Ok(())
    }
}

impl<C: Curvature> Newton<C> {
    /// A learner starting from `w = 0`. `c > 0` finite, `C > 0` (∞ allowed).
    pub fn new(curvature: C, params: NewtonParams) -> Result<Self, LearnError> {
        params.check()?;
        Ok(Newton {
            w: vec![0.0; curvature.dim()],
            curvature,
            params,
            t: 0,
            delta: Vec::new(),
            wmax: 0.0,
        })
    }

    /// The curvature model.
    pub fn curvature(&self) -> &C {
        &self.curvature
    }

    /// The hyper-parameters.
    pub fn params(&self) -> &NewtonParams {
        &self.params
    }

    /// Number of examples learned.
    pub fn examples_seen(&self) -> u64 {
        self.t
    }

    /// `w += coef·A⁻¹x` unless that would make a weight non-finite; with `update_scale`, the
    /// curvature first receives `(update_scale·x)(update_scale·x)ᵀ` (one call, so that the
    /// sketch can reuse `Sx`).
    fn guarded_step(
        &mut self,
        x: Row<'_>,
        coef: f64,
        update_scale: Option<f64>,
        what: &str,
    ) -> Result<(), LearnError> {
        let mut delta = std::mem::take(&mut self.delta);
        delta.clear();
        delta.resize(self.w.len(), 0.0);
        let updated = match update_scale {
            Some(scale) => self.curvature.update_and_solve(x, scale, coef, &mut delta),
            None => {
                self.curvature.add_solve(x, coef, &mut delta);
                Ok(())
            }
        };
        if let Err(e) = updated {
            self.delta = delta;
            return Err(e.into());
        }
        // The stepped weights `w + δ` are formed in `δ`'s buffer and checked in the same pass;
        // a step that keeps every weight in bounds swaps the buffers (the same sums as adding
        // `δ` into `w`, one pass over the weights instead of two; IEEE addition is commutative,
        // and a NaN sum is refused either way).
        let mut ok = true;
        for (d, w) in delta.iter_mut().zip(&self.w) {
            *d += *w;
            ok &= weight_ok(*d);
        }
        if ok {
            std::mem::swap(&mut self.w, &mut delta);
        }
        self.delta = delta;
        if ok {
            Ok(())
        } else {
            Err(LearnError::Diverged(format!(
                "{what} step, example {}",
                self.t + 1
            )))
        }
    }

    /// The projection step (when `projection` holds its coefficient) and the Newton step (when
    /// `dl ≠ 0`), each guarded.
    fn steps(
        &mut self,
        x: Row<'_>,
        projection: Option<f64>,
        dl: f64,
        scale: f64,
    ) -> Result<(), LearnError> {
        if let Some(coef) = projection {
            self.guarded_step(x, coef, None, "projection")?;
        }
        if dl != 0.0 {
            self.guarded_step(x, -dl, Some(scale), "Newton")?;
        }
        Ok(())
    }
}

impl<C: Curvature + Clone> OnlineLearner for Newton<C> {
    fn dim(&self) -> usize {
        self.w.len()
    }

    fn predict(&self, x: Row<'_>) -> f64 {
        let s = x.dot(&self.w);
        crate::linear::clip_score(s, self.params.clip)
    }

    /// A refused example changes nothing (not even the count): the curvature's bound on the
    /// row ([`Curvature::check_row`]) is checked before the projection step when one comes first,
    /// and by the update itself otherwise, before it changes anything. A step refused by the
    /// weights' guard comes after the curvature took the row (the step needs the updated `A`):
    /// a row whose steps could reach the guard is learned from an undo copy of the curvature and
    /// the weights, put back on any refusal. Which rows: those with `‖ĝ‖² > 10¹⁰⁰`
    /// ([`LARGE_ROW`]), and those whose steps could reach [`MAX_WEIGHT`] by their exact bound:
    /// `A ⪰ αI` for every curvature (`α` only grows under RFD), so a step `coef·A⁻¹x` moves no
    /// weight by more than `|coef|·‖x‖/α`, and the copy is taken when the largest weight plus
    /// [`STEP_MARGIN`] times that bound (projection and Newton steps) is not below
    /// [`MAX_WEIGHT`]. The largest weight is a running bound, `wmax`, to which every row
    /// learned in place adds its margined bound, and which is recomputed (one pass over `w`) only
    /// when it is too loose to pass the test or unknown. An ordinary row is far from both tests
    /// and costs one pass over its values (`‖x‖²`) and a few operations. Not covered:
    /// a row below both tests whose computed step still overflows (rounding beyond `10¹⁰` times
    /// the exact bound).
    fn learn(&mut self, x: Row<'_>, y: f64, weight: f64) -> Result<f64, LearnError> {
        check_example(&x, y, weight, self.w.len())?;
        let clip = self.params.clip;
        let mut p = x.dot(&self.w);
        let mut projection = None;
        if p.abs() > clip {
            let q = self.curvature.inv_quad(x);
            let tau = p.signum() * (p.abs() - clip);
            // q = xᵀA⁻¹x ≥ ‖x‖²/λ_max(A) > 0 in exact arithmetic; skip when it has cancelled.
            if q.is_finite() && q > 1e-12 * x.squared_norm() / self.curvature.alpha().max(1e-300) {
                projection = Some(-tau / q);
                p -= tau;
            }
        }
        let dl = weight * self.params.loss.derivative(p, y);
        let scale = self.params.c.sqrt() * dl;
        if projection.is_some() && dl != 0.0 {
            self.curvature.check_row(x, scale)?;
        }
        if projection.is_none() && dl == 0.0 {
            self.t += 1;
            return Ok(p);
        }
        let values = match x {
            Row::Dense(v) => v,
            Row::Sparse { values, .. } => values,
        };
        let xx = crate::data::dot4::dot4(values, values);
        let coefs = projection.unwrap_or(0.0).abs() + dl.abs();
        let bound = STEP_MARGIN * coefs * xx.sqrt() / self.curvature.alpha();
        let small = scale * scale * xx <= LARGE_ROW && bound <= MAX_WEIGHT;
        let fits = |wmax: f64| wmax + bound <= MAX_WEIGHT; // false for NaN
        if small && !fits(self.wmax) {
            self.wmax = self.w.iter().fold(0.0, |m, w| m.max(w.abs()));
        }
        let safe = small && fits(self.wmax);
        let undo = (!safe).then(|| (self.curvature.clone(), self.w.clone()));
        let stepped = self.steps(x, projection, dl, scale);
        if stepped.is_err() {
            if let Some((curvature, w)) = undo {
                (self.curvature, self.w) = (curvature, w);
            }
        }
        stepped?;
        // Every weight moved by at most `bound` (in place); after the copy, not known.
        self.wmax = if safe {
            self.wmax + bound
        } else {
            unknown_max()
        };
        self.t += 1;
        Ok(p)
    }

    fn weights(&self) -> Cow<'_, [f64]> {
        Cow::Borrowed(&self.w)
    }
}

/// Iterative parameter mixing ([`crate::merge`]): `w` averaged by the round's examples, the
/// curvature merged (FD/RFD: the sketches merged with FD's bound; identity: nothing to merge).
impl<C: crate::merge::Merge> MergeShare for Newton<C> {
    fn check_merge(&self, other: &Self, base: Option<&Self>) -> MergeResult {
        use crate::merge::same;
        crate::merge::with_base(self, other, base, |a, b| {
            same("dimension", a.w.len(), b.w.len())?;
            same("Newton parameters", a.params, b.params)
        })?;
        self.curvature
            .check_merge(&other.curvature, base.map(|b| &b.curvature))
    }

    fn merge_share(&mut self, other: &Self, base: Option<&Self>, share: f64) -> MergeResult {
        use crate::merge::{add_count, mix};
        self.check_merge(other, base)?;
        self.curvature
            .merge(&other.curvature, base.map(|b| &b.curvature))?;
        mix(&mut self.w, &other.w, share);
        self.t = add_count(self.t, other.t, base.map(|b| b.t));
        self.wmax = unknown_max();
        Ok(())
    }
}
