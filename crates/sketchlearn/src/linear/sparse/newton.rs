//! The one driver of the sparse-time SON learners: [`SparseNewton`], SON Algorithm 1 in the
//! representation `w = w̄ + Zᵀb` of SON §4 (Appendices G and H), generic over the curvature
//! model ([`SparseCurvature`]: RP, Oja, FD/RFD).
//!
//! Per example `t` (DESIGN.md §4, items 5 and 7), with `z = Zx` gathered from the example's
//! columns (which brings them up to date, see `columns.rs`):
//! 1. **prediction** `p = w̄ᵀx + bᵀz` (FD: `+ cᵀGx`, its raw rows' part);
//! 2. **projection** onto `{|wᵀx| ≤ C}` (SON Lemma 1) when `|p| > C`: with
//!    `xᵀA⁻¹x = (‖x‖² − (Sx)ᵀH(Sx))/α` ([`SparseCurvature::quad`]), `w ← w − γA⁻¹x`,
//!    `γ = τ_C(p)/xᵀA⁻¹x`, and `p ← p − τ_C(p)` (the same test as the dense learner guards a
//!    denominator that cancels to ~0);
//! 3. **gradient** `g = ℓ'(p)·x` (times the importance weight);
//! 4. **sketch update** with `ĝ = √c·g` ([`SparseCurvature::prepare_update`]): everything but the
//!    example's columns, which change by `w̄ −= (δᵀb)ĝ`, `Z += δĝᵀ` (RP, Oja: this keeps `w`);
//! 5. **Newton step** `u = w − A⁻¹g` with the updated sketch: `A⁻¹x = (x − Zᵀv)/α`, i.e.
//!    `w̄ += (−ℓ'/α)x` on the example's coordinates and `b −= (−ℓ'/α)v`
//!    ([`SparseCurvature::step_direction`], [`SparseCurvature::apply_step`]).
//!
//! **One column pass.** Steps 4 and 5 change the same columns: when nothing in between needs
//! them (no projection step came first, the model has no change of basis due,
//! [`SparseCurvature::fusable`]) and the step's guard is provable from the gather's maxima
//! (`fused_step_ok`), they are written in one visit per column
//! (`fused_write`): `w̄_j += (−ℓ'/α − (δᵀb)s)·x_j`, `Z[:, j] += δ·s·x_j`.
//! Otherwise the update, the model's follow-up ([`SparseCurvature::after_update`]) and the
//! guarded step run one after the other, as in the paper.
//!
//! **Guards.** As the dense learner, a step that would make a touched `w̄_j` or `b` (FD: `c`)
//! non-finite or larger than [`MAX_WEIGHT`](crate::linear::MAX_WEIGHT) is refused
//! ([`LearnError::Diverged`]), and so is a sketch update that cannot stay finite. A refused row
//! changes nothing (`learn_inner` and `learn` say how: a plan before any change, and an undo
//! copy for a row large enough to reach the weights' guard after the update).
//!
//! **Cancellation.** When `w̄ᵀx` and the rest of `p` cancel by more than a factor 1000 (large
//! steps on unnormalised data), `Zᵀb` is transferred into `w̄` lazily and `b ← 0`
//! ([`SparseCurvature::transfer`]; Oja and FD change the basis at the same time).

use super::columns::{LazyColumns, W};
use super::gather::{gather, peek, Gathered};
use super::{for_each_nz, fused_write};
use crate::linalg::dot;
use crate::linear::{check_example, weight_ok, LearnError, NewtonParams, OnlineLearner};
use crate::Row;
use std::borrow::Cow;

/// The weights `w = w̄ + Zᵀb` of a sparse learner: the lazily stored columns `(w̄_j, Z[:, j])`
/// (`columns.rs`) and `b ∈ ℝ^m` (with `K` heads: the `K` vectors `b_h` one after the other).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct SparseWeights {
    pub(crate) cols: LazyColumns,
    pub(crate) b: Vec<f64>,
}

impl SparseWeights {
    /// Zero weights over `cols` (`b = 0 ∈ ℝ^m`).
    pub(crate) fn new(cols: LazyColumns, m: usize) -> Self {
        SparseWeights {
            cols,
            b: vec![0.0; m],
        }
    }

    /// `w̄ ← w̄ + Zᵀb`, `b ← 0`, and (with `mat = M`) the change of basis `Z ← MZ`, all lazily:
    /// `w` is unchanged.
    pub(crate) fn rebase(&mut self, mat: Option<&[f64]>) {
        self.cols.rebase(mat, &self.b);
        self.b.iter_mut().for_each(|x| *x = 0.0);
    }
}

/// The to-sketch vector `ĝ = s·x` of one example (SON Alg. 1: `s = √c·ℓ'(p)`), with
/// `xx = ‖x‖²` and the example's number (for error messages).
#[derive(Clone, Copy, Debug)]
pub struct ToSketch<'a> {
    /// The example.
    pub x: Row<'a>,
    /// The scale `s`.
    pub s: f64,
    /// `‖x‖²`.
    pub xx: f64,
    /// The example's number (1-based).
    pub example: u64,
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::super::rp::SparseRpCurvature {}
    impl Sealed for super::super::oja::SparseOjaCurvature {}
    impl Sealed for super::super::fd::SparseFdCurvature {}
}

/// What a curvature model `A = αI + SᵀS` provides to the sparse-time driver [`SparseNewton`],
/// with `S` kept as `S = F·Z` (or `Z` itself) over the columns of [`SparseWeights`] and the
/// small `m × m` matrices (`H = (αI_m + SSᵀ)⁻¹`, `F`, …) of its own. Implemented by the RP
/// ([`SparseRpCurvature`](super::SparseRpCurvature)), Oja
/// ([`SparseOjaCurvature`](super::SparseOjaCurvature)) and FD/RFD
/// ([`SparseFdCurvature`](super::SparseFdCurvature)) models.
///
/// `z = Zx` is the example's gathered sketch coordinates, `m` the sketch size (passed so that the
/// driver's copy compiled for `m = 10` unrolls the `O(m²)` loops). Every method costs `O(m²)`
/// plus, where it says so, `O(m)` per touched column.
pub trait SparseCurvature: sealed::Sealed {
    /// The sketch size `m` (the length of `b` and `z`).
    fn size(&self) -> usize;

    /// The `α` in use (RFD: `α₀ + Σδ/2`).
    fn alpha(&self) -> f64;

    /// Sizes the per-example scratch vectors (nothing to do after the first example).
    fn scratch(&mut self);

    /// Called after the gather, before the prediction (FD: the products `Gx` of its raw rows).
    #[inline(always)]
    fn begin(&mut self, _x: Row<'_>) {}

    /// The part of the prediction beyond `w̄ᵀx`: `bᵀz` (FD: `bᵀz + cᵀGx`).
    #[inline(always)]
    fn rest(&self, z: &[f64], b: &[f64]) -> f64 {
        dot(b, z)
    }

    /// `(Sx)ᵀH(Sx) = ‖x‖² − α·xᵀA⁻¹x`, for the projection.
    fn quad(&mut self, z: &[f64], m: usize) -> f64;

    /// Computes `v` with `A⁻¹x = (x − Zᵀv)/α` (FD: and the raw rows' part) for the step
    /// `w += coef·A⁻¹x`, and returns whether `b − (coef/α)·v` stays acceptable.
    fn step_direction(&mut self, coef: f64, z: &[f64], b: &[f64], m: usize) -> bool;

    /// `b −= f·v` with the `v` of the last [`step_direction`](Self::step_direction) (FD: and
    /// `c`); the driver writes `w̄ += f·x` on the example's columns.
    fn apply_step(&mut self, f: f64, b: &mut [f64], m: usize);

    /// Refuses, changing nothing, a to-sketch row `ĝ` above the sketch's bound: the dense
    /// curvature's rule ([`check_row_norm`](crate::linear::curvature) of `s²‖x‖²` with
    /// `MAX_ROW_SQUARED_NORM`, Oja's `MAX_OJA_ROW_SQUARED_NORM`). The driver asks before the
    /// example changes anything; [`prepare_update`](Self::prepare_update) asks again first
    /// (for its other callers).
    fn check_row(&self, g: ToSketch<'_>) -> Result<(), LearnError>;

    /// The sketch update with `ĝ` on everything but the example's columns, `z ← S'x` included.
    /// Returns `Some(δᵀb)` when the columns must still change by `w̄ −= (δᵀb)ĝ`, `Z += δĝᵀ`
    /// (`δ` = [`delta`](Self::delta)), which the driver writes; `None` when they need not. A
    /// model that changes the columns itself (FD's shrink) does so through `w`. A refused update
    /// is [`LearnError::Diverged`] naming the example.
    fn prepare_update(
        &mut self,
        g: ToSketch<'_>,
        z: &mut [f64],
        w: &mut SparseWeights,
        m: usize,
    ) -> Result<Option<f64>, LearnError>;

    /// `δ` of the pending column update (see [`prepare_update`](Self::prepare_update)).
    fn delta(&self) -> &[f64];

    /// Whether the update's and the step's column passes may be one (nothing of the model needs
    /// the columns in between); `pending`: the update left a column change to write.
    fn fusable(&self, pending: bool, b: &[f64]) -> bool;

    /// After the update's column pass when it was not fused (Oja, FD: a change of basis when
    /// `V = FZ` cancels).
    #[inline(always)]
    fn after_update(&mut self, _w: &mut SparseWeights, _z: &mut [f64]) {}

    /// The error of an update that left the model non-finite, checked before the step.
    #[inline(always)]
    fn check(&self, _b: &[f64], _example: u64) -> Result<(), LearnError> {
        Ok(())
    }

    /// `w̄ ← w̄ + Zᵀb`, `b ← 0` (lazily), with the change of basis the model makes at the same
    /// time, when the prediction cancels; updates `z`.
    fn transfer(&mut self, w: &mut SparseWeights, z: &mut [f64]);

    /// The raw score `wᵀx` (FD: with the raw rows' part).
    #[inline]
    fn score(&self, w: &SparseWeights, x: Row<'_>) -> f64 {
        w.cols.score(x, &w.b)
    }

    /// Adds the model's own part of `w` (FD: `Gᵀc`) to the dense `w̄ + Zᵀb`.
    #[inline]
    fn add_weights(&self, _w: &mut [f64]) {}

    /// [`add_weights`](Self::add_weights) on the increasing columns `cols` only (`w[k]` is the
    /// weight of column `cols[k]`); the columns it touches are among
    /// [`own_columns`](Self::own_columns).
    #[inline]
    fn add_weights_at(&self, _cols: &[u32], _w: &mut [f64]) {}

    /// The columns whose weight [`add_weights`](Self::add_weights) changes (FD: the raw rows'
    /// indices), pushed onto `out`.
    #[inline]
    fn own_columns(&self, _out: &mut Vec<u32>) {}
}

/// A sparse-time SON learner over the curvature model `C` (see the [module](self) docs); the
/// public ones are [`SparseRp`](super::SparseRp), [`SparseOja`](super::SparseOja) and
/// [`SparseFd`](super::SparseFd).
#[derive(Clone, Debug)]
pub struct SparseNewton<C> {
    pub(super) params: NewtonParams,
    pub(super) w: SparseWeights,
    pub(super) curv: C,
    pub(super) examples: u64,
    /// Running scale of `|p|` for the cancellation test.
    pub(super) pscale: f64,
    pub(super) z: Vec<f64>,
}

impl<C: SparseCurvature> SparseNewton<C> {
    /// A learner at `w = 0` over the columns `cols` (checked parameters).
    pub(super) fn from_parts(params: NewtonParams, cols: LazyColumns, curv: C) -> Self {
        let m = curv.size();
        SparseNewton {
            params,
            w: SparseWeights::new(cols, m),
            curv,
            examples: 0,
            pscale: 0.0,
            z: Vec::new(),
        }
    }

    /// The hyper-parameters.
    pub fn params(&self) -> &NewtonParams {
        &self.params
    }

    /// Examples learned.
    pub fn examples_seen(&self) -> u64 {
        self.examples
    }

    /// Number of lazy rebases (changes of basis / transfers of `Zᵀb` into `w̄`) so far.
    pub fn rebases(&self) -> u64 {
        self.w.cols.rebases()
    }

    /// The `α` in use (`α₀ + Σδ/2` for RFD).
    pub fn alpha(&self) -> f64 {
        self.curv.alpha()
    }

    /// The curvature model.
    pub fn curvature(&self) -> &C {
        &self.curv
    }

    /// `w += coef·A⁻¹x` unless a touched `w̄_j`, `b` (or the model's own part) would become
    /// non-finite or too large.
    fn step(&mut self, x: Row<'_>, coef: f64, z: &[f64], m: usize) -> bool {
        let f = coef / self.curv.alpha();
        let mut ok = self.curv.step_direction(coef, z, &self.w.b, m);
        if ok {
            let cols = &mut self.w.cols;
            for_each_nz(x, |j, v| ok &= weight_ok(cols.slot(j)[W] + f * v));
        }
        if !ok {
            return false;
        }
        self.curv.apply_step(f, &mut self.w.b, m);
        fused_write(&mut self.w.cols, x, f, None);
        true
    }

    /// Steps 1–3 of a round from the gathered sums, changing nothing that is stored: the
    /// prediction, the projection to make, the gradient's scale, and the curvature's refusal of
    /// a to-sketch row above its bound ([`SparseCurvature::check_row`]). The curvature's scratch
    /// (`Gx`, `Hz`) is written.
    #[inline(always)]
    fn plan(
        &mut self,
        g: Gathered,
        (x, y, weight): (Row<'_>, f64, f64),
        z: &[f64],
        m: usize,
    ) -> Result<Plan, LearnError> {
        self.curv.begin(x);
        let rest = self.curv.rest(z, &self.w.b);
        let mut p = g.wx + rest;
        let mut pscale = self.pscale;
        let flush = cancels(g.wx, rest, &mut pscale);
        let mut step = None;
        if p.abs() > self.params.clip {
            let alpha = self.curv.alpha();
            let q = (g.xx - self.curv.quad(z, m)) / alpha;
            if let Some(tau) = projection(p, self.params.clip, q, g.xx, alpha) {
                step = Some(-tau / q);
                p -= tau;
            }
        }
        let dl = weight * self.params.loss.derivative(p, y);
        let s = self.params.c.sqrt() * dl;
        if dl != 0.0 {
            self.curv.check_row(ToSketch {
                x,
                s,
                xx: g.xx,
                example: self.examples + 1,
            })?;
        }
        Ok(Plan {
            p,
            pscale,
            flush,
            projection: step,
            dl,
            s,
        })
    }

    /// Whether the row could be refused for its size without an extreme loss derivative:
    /// `c·weight²·max(y², 1)·‖x‖² > 10¹⁰⁰`. A row refused by [`plan`](Self::plan) has
    /// `c·weight²·ℓ'²·‖x‖² > 10¹⁵⁰` (the smallest bound, Oja's), and `|ℓ'| ≤ |y|` for the
    /// logistic and (smooth) hinge losses, so every such row passes this test; with the squared
    /// loss, a row it lets through is refused only when `|p − y| > 10²⁵·max(|y|, 1)`. One pass
    /// over the values (no column read).
    #[inline(always)]
    fn suspect(&self, x: Row<'_>, y: f64, weight: f64) -> bool {
        let values = match x {
            Row::Dense(v) => v,
            Row::Sparse { values, .. } => values,
        };
        let xx = crate::data::dot4::dot4(values, values);
        let y2 = (y * y).max(1.0);
        let size = self.params.c * weight * weight * y2 * xx;
        size.is_nan() || size > 1e100
    }

    /// One round of SON Algorithm 1 (see the module docs); returns the prediction.
    ///
    /// **A refused row changes nothing.** A row that may be too large for the sketch
    /// (`suspect`, from [`suspect`](Self::suspect)) is first planned from a gather that updates
    /// no column ([`peek`]), so that the curvature's refusal comes before the gather brings the
    /// example's columns up to date (which keeps `w` but changes the stored columns); every row
    /// is then planned again from the real gather; the projection step and the update come only
    /// after that plan passed, and the running scale `pscale` and the count change only when the
    /// example is learned. (A suspect row that passes the plan is learned from an undo copy,
    /// [`OnlineLearner::learn`], since the weights' guard comes after the update.)
    #[inline(always)]
    fn learn_inner(
        &mut self,
        (x, y, weight): (Row<'_>, f64, f64),
        suspect: bool,
        z: &mut [f64],
        m: usize,
    ) -> Result<f64, LearnError> {
        if suspect {
            let g = peek(&self.w.cols, x, z);
            self.plan(g, (x, y, weight), z, m)?;
        }
        let example = self.examples + 1;
        let g = gather(&mut self.w.cols, x, z);
        let Plan {
            p,
            pscale,
            flush,
            projection,
            dl,
            s,
        } = self.plan(g, (x, y, weight), z, m)?;
        if let Some(coef) = projection {
            if !self.step(x, coef, z, m) {
                return Err(LearnError::Diverged(format!(
                    "projection step, example {example}"
                )));
            }
        }
        if dl != 0.0 {
            let to_sketch = ToSketch {
                x,
                s,
                xx: g.xx,
                example,
            };
            let pending = self.curv.prepare_update(to_sketch, z, &mut self.w, m)?;
            let alpha = self.curv.alpha();
            let (f, a) = (-dl / alpha, -dl / alpha - pending.unwrap_or(0.0) * s);
            // One pass over the columns for the update and the step when nothing in between
            // needs them and the guards provably pass (the gather's w̄ bound is void after a
            // projection step).
            let fused = self.curv.fusable(pending.is_some(), &self.w.b)
                && projection.is_none()
                && fused_step_ok(g.wmax, g.xmax, a)
                && self.curv.step_direction(-dl, z, &self.w.b, m);
            if fused {
                let delta = pending.map(|_| (self.curv.delta(), s));
                fused_write(&mut self.w.cols, x, a, delta);
                self.curv.apply_step(f, &mut self.w.b, m);
            } else {
                if let Some(db) = pending {
                    let delta = Some((self.curv.delta(), s));
                    fused_write(&mut self.w.cols, x, -db * s, delta);
                    self.curv.after_update(&mut self.w, z);
                }
                self.curv.check(&self.w.b, example)?;
                if !self.step(x, -dl, z, m) {
                    return Err(LearnError::Diverged(format!(
                        "Newton step, example {example}"
                    )));
                }
            }
        }
        if flush {
            self.curv.transfer(&mut self.w, z);
        }
        self.pscale = pscale;
        self.examples = example;
        Ok(p)
    }
}

/// What [`SparseNewton::plan`] decided.
struct Plan {
    p: f64,
    pscale: f64,
    flush: bool,
    projection: Option<f64>,
    dl: f64,
    s: f64,
}

impl<C: SparseCurvature + Clone> OnlineLearner for SparseNewton<C> {
    fn dim(&self) -> usize {
        self.w.cols.dim()
    }

    fn predict(&self, x: Row<'_>) -> f64 {
        crate::linear::clip_score(self.curv.score(&self.w, x), self.params.clip)
    }

    /// A refused row changes nothing (see `learn_inner`). The weights' guard refuses a step
    /// after the sketch took the row (the step needs the updated sketch), so a row that could
    /// be that large (`suspect`: `c·weight²·max(y², 1)·‖x‖² > 10¹⁰⁰`) is
    /// learned from an undo copy of the learner, put back on any refusal; the copy costs
    /// `O(stored columns)`, on such rows only. (Not undone: a step refused by the guard on a row
    /// that is not suspect, which takes weights already within a step of
    /// [`MAX_WEIGHT`](crate::linear::MAX_WEIGHT) after a diverging run.)
    fn learn(&mut self, x: Row<'_>, y: f64, weight: f64) -> Result<f64, LearnError> {
        self.w.cols.prefetch(x);
        check_example(&x, y, weight, self.w.cols.dim())?;
        let suspect = self.suspect(x, y, weight);
        let undo = suspect.then(|| self.clone());
        let m = self.curv.size();
        self.z.resize(m, 0.0);
        self.curv.scratch();
        let mut z = std::mem::take(&mut self.z);
        // m = 10 (the papers' and VW's usual size) is compiled apart with `m` known, which
        // unrolls the O(m²) loops; the same operations in the same order (the same bits).
        let r = match m {
            10 => self.learn_inner((x, y, weight), suspect, &mut z, 10),
            m => self.learn_inner((x, y, weight), suspect, &mut z, m),
        };
        self.z = z;
        if let (Err(_), Some(kept)) = (&r, undo) {
            *self = kept;
        }
        r
    }

    #[inline]
    fn prefetch(&self, x: Row<'_>) {
        self.w.cols.prefetch(x);
    }

    fn weights(&self) -> Cow<'_, [f64]> {
        let mut w = self.w.cols.weights(&self.w.b);
        self.curv.add_weights(&mut w);
        Cow::Owned(w)
    }
}

/// Serde for `SparseNewton<$curv>` in the field order of its model files (format version 4,
/// when each learner was its own struct), each field stored from and read back into a place of
/// the learner: `name: Type = place`, the place a path in the learner (`params`, `w.cols`,
/// `w.b`, `examples`, `pscale`, `curv.…`). Reading starts from an empty learner over the
/// curvature `$empty` and fills every listed place; what is not listed (scratch space) stays
/// as `$empty` has it.
macro_rules! stored_layout {
    ($curv:ty, $name:literal, $empty:expr, { $($field:ident: $ty:ty = $($place:ident).+),+ $(,)? }) => {
        #[derive(serde::Serialize, serde::Deserialize)]
        #[serde(rename = $name)]
        struct Stored<'a> {
            $($field: std::borrow::Cow<'a, $ty>,)+
        }

        impl serde::Serialize for $crate::linear::sparse::SparseNewton<$curv> {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let stored = Stored {
                    $($field: std::borrow::Cow::Borrowed(&self.$($place).+),)+
                };
                stored.serialize(serializer)
            }
        }

        impl<'de> serde::Deserialize<'de> for $crate::linear::sparse::SparseNewton<$curv> {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let stored = Stored::deserialize(deserializer)?;
                let mut learner = Self::from_parts(
                    Default::default(),
                    $crate::linear::sparse::columns::LazyColumns::new(
                        0,
                        0,
                        $crate::linear::sparse::columns::Init::Zero,
                    ),
                    $empty,
                );
                $(learner.$($place).+ = stored.$field.into_owned();)+
                Ok(learner)
            }
        }
    };
}
pub(super) use stored_layout;

/// A bound that lets the fused column pass skip the per-column guard: when
/// `max|w̄_j| + |a|·max|x_j|` (over the example's columns, taken during the gather) is within
/// [`MAX_WEIGHT`](crate::linear::MAX_WEIGHT) with room for rounding, no `w̄_j + a·x_j` can leave
/// it. When it is not, the caller takes the guarded path (rare: absurd scales).
#[inline]
pub(crate) fn fused_step_ok(wmax: f64, xmax: f64, a: f64) -> bool {
    let bound = wmax + a.abs() * xmax;
    bound.is_finite() && bound * (1.0 + 1e-9) <= crate::linear::MAX_WEIGHT
}

/// `τ_C(p) = sgn(p)·max(|p| − C, 0)`, and whether the projection applies with `q = xᵀA⁻¹x`
/// (the same test as the dense learner: `q` finite and not cancelled to ~0).
#[inline]
pub(crate) fn projection(p: f64, clip: f64, q: f64, xx: f64, alpha: f64) -> Option<f64> {
    if p.abs() > clip && q.is_finite() && q > 1e-12 * xx / alpha.max(1e-300) {
        Some(p.signum() * (p.abs() - clip))
    } else {
        None
    }
}

/// Cancellation factor of `p = w̄ᵀx + bᵀz` beyond which `Zᵀb` is transferred into `w̄`.
const CANCEL: f64 = 1e3;

/// True when `|w̄ᵀx| + |bᵀz|` exceeds [`CANCEL`] times the scale of the predictions (the larger
/// of `|p|` and a running average of it), i.e. when the representation `w = w̄ + Zᵀb` loses more
/// than three digits; updates the running average.
#[inline]
pub(crate) fn cancels(wx: f64, bz: f64, pscale: &mut f64) -> bool {
    let p = (wx + bz).abs();
    *pscale = 0.99 * *pscale + 0.01 * p;
    wx.abs() + bz.abs() > CANCEL * p.max(*pscale)
}

/// Checks SON's hyper-parameters as [`Newton::new`](crate::linear::Newton::new) does, plus `α`.
pub(crate) fn check_params(params: &NewtonParams, alpha: f64) -> Result<(), LearnError> {
    params.check()?;
    if !(alpha.is_finite() && alpha > 0.0) {
        return Err(LearnError::InvalidParameter(format!(
            "alpha must be finite and > 0, got {alpha}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::fused_step_ok;
    use crate::linear::MAX_WEIGHT;
    use proptest::prelude::*;

    proptest! {
        /// Whenever the bound lets the fused pass skip the per-column guard, every
        /// `w̄_j + a·x_j` with `|w̄_j| ≤ wmax`, `|x_j| ≤ xmax`, computed in floating point, is
        /// within `MAX_WEIGHT` — near the limit too.
        #[test]
        fn fused_guard_bound_is_sound(
            wexp in 0.0f64..100.5,
            xexp in -30.0f64..60.0,
            aexp in -30.0f64..100.5,
            fw in -1.0f64..=1.0,
            fx in -1.0f64..=1.0,
            sa in prop_oneof![Just(1.0), Just(-1.0)],
        ) {
            let (wmax, xmax, a) = (10f64.powf(wexp), 10f64.powf(xexp), sa * 10f64.powf(aexp));
            if fused_step_ok(wmax, xmax, a) {
                let w = fw * wmax;
                let x = fx * xmax;
                prop_assert!((w + a * x).abs() <= MAX_WEIGHT, "{w} + {a}·{x}");
            }
        }
    }

    #[test]
    fn fused_guard_bound_refuses_at_and_beyond_the_limit() {
        assert!(!fused_step_ok(MAX_WEIGHT, 1.0, 1.0));
        assert!(!fused_step_ok(1.0, 1e60, 1e41));
        assert!(!fused_step_ok(1.0, f64::INFINITY, 1.0));
        assert!(!fused_step_ok(1.0, 1.0, f64::NAN));
        assert!(fused_step_ok(1e99, 1.0, 1e98));
    }
}
