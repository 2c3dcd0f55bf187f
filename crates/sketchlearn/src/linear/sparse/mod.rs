//! Sparse-time Sketched Online Newton (SON paper §4, Appendices G and H): the same learners as
//! [`Newton`](super::Newton) over the RP, Oja and FD/RFD curvatures, with a per-example cost of
//! `O(m² + m·nnz)` instead of `O(md)`, and no `O(d)` work at start-up.
//!
//! Mathematically each learner here equals its dense counterpart prediction by prediction
//! (tested to 1e-10 (RP), 1e-11 (Oja), 1e-9 (FD/RFD) relative in `tests/suite/sparse_equivalence.rs`):
//!
//! | sparse                | dense reference                                            |
//! |-----------------------|------------------------------------------------------------|
//! | [`SparseRp`]          | `Newton<RpCurvature>` (same seed ⇒ same Gaussian draws)    |
//! | [`SparseOja`]         | `Newton<OjaCurvature>` started from [`initial_directions`] |
//! | [`SparseFd`]          | `Newton<FdCurvature>`, doubling FD or RFD (`fd-fast`, `rfd-fast`) |
//!
//! # Representation
//!
//! The weights are kept as `w = w̄ + Zᵀb` (SON §4): `w̄ ∈ ℝ^d` changes only on the coordinates of
//! the current example, `b ∈ ℝ^m` is small, and `Z ∈ ℝ^{m×d}` is the sparsely updated part of
//! the sketch:
//! * RP (Alg. 7): `Z = S` itself; `S ← S + rĝᵀ` touches the example's columns only.
//! * Oja (Alg. 4, 5): `V = F·Z` with a lower-triangular `m × m` `F`; `V + γpĝᵀ = F(Z + δĝᵀ)` with
//!   `Fδ = γp` — as `p = Vĝ = F·Zĝ`, simply `δ = γZĝ` — so `Z` changes by a sparse rank-one
//!   matrix. The orthonormalisation of the rows is done on `F` alone: the Gram matrix of the new
//!   rows is `I + βppᵀ` (`β = 2γ + γ²‖ĝ‖²`), whose Cholesky factor `L` is semiseparable, so
//!   `F ← L⁻¹F` costs `O(m²)` ([`oja`] documents the formulas) — cheaper than the paper's `O(m³)`
//!   Gram–Schmidt in the metric of `ZZᵀ` (Alg. 13) per example, and more accurate.
//! * FD (Alg. 8–12): the doubling ("epoch") FD buffer `[diag(σ)·F·Z; G]` with the raw recent
//!   rows `G` stored sparsely; at the end of an epoch the eigen-system is computed through
//!   Algorithm 12/13 from small matrices, `F ← N₁`, `Z ← Z + N₁⁻¹N₂G` ([`fd`]).
//!
//! Whenever the sketch changes, `w̄` is corrected on the touched coordinates so that `w` itself
//! is unchanged; the Newton and projection steps then change `w̄` on the example's coordinates
//! and `b`.
//!
//! # One driver
//!
//! The three are one learner, [`SparseNewton`] (SON Alg. 1 in this representation: projection,
//! prediction, gradient, sketch update, Newton step, guards, the fused column pass, the transfer
//! of `Zᵀb` into `w̄`; see [`newton`]), generic over the curvature model
//! ([`SparseCurvature`]: [`SparseRpCurvature`], [`SparseOjaCurvature`], [`SparseFdCurvature`]),
//! which keeps its small matrices and says how `z = Zx` enters `xᵀA⁻¹x` and `A⁻¹x`, how it is
//! updated with `ĝ`, and how it changes basis. [`SparseRp`], [`SparseOja`] and [`SparseFd`] are
//! its three instances.
//!
//! # Lazy initialisation and change of basis
//!
//! See `columns.rs`: every feature's `(w̄_j, Z[:, j])` lives in one zero-initialised slot; the
//! initial orthonormal `Z₀` of Oja and FD is generated on demand from a formula (disjoint
//! supports `j ≡ i (mod m)`, hashed signs, exactly orthonormal so `K₀ = I`), and the occasional
//! change of basis `Z ← MZ` that keeps `F` well conditioned (Oja's `Z` grows like `t^{cλ}`, which
//! is how VW's OjaNewton overflows to NaN on unnormalised ill-conditioned data) is applied lazily
//! to a column when it is next touched.
//!
//! # Guards
//!
//! As the dense learners, a step that would make `w̄` or `b` non-finite or larger than
//! [`MAX_WEIGHT`](super::MAX_WEIGHT) is refused ([`LearnError::Diverged`]); the dense learner
//! checks every coordinate of `w`, the sparse one the touched coordinates of `w̄` and `b` (so
//! `w = w̄ + Zᵀb` stays finite).

mod axpy;
pub(crate) mod columns;
pub(crate) use axpy::has_avx2;
pub mod fd;
mod fd_shrink;
mod gather;
pub(crate) mod gram_schmidt;
pub mod heads;
mod merge;
mod merge_lazy;
pub mod newton;
pub mod oja;
mod row_index;
pub mod rp;
pub mod softmax;
pub(crate) mod validate;

pub use columns::{initial_directions, Init};
pub use fd::{SparseFd, SparseFdCurvature};
pub use heads::HeadsCurvature;
pub use newton::{SparseCurvature, SparseNewton, SparseWeights, ToSketch};
pub use oja::{SparseOja, SparseOjaCurvature};
pub use rp::{SparseRp, SparseRpCurvature};
pub use softmax::{SparseSoftmax, SparseSoftmaxOja, SparseSoftmaxRp};

use super::{LearnError, OnlineLearner};
use crate::dispatch::{enum_dispatch, forward_online_learner};
use crate::Row;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// Calls `f(j, x_j)` for every non-zero entry of `x`.
#[inline]
pub(crate) fn for_each_nz(x: Row<'_>, mut f: impl FnMut(usize, f64)) {
    match x {
        Row::Sparse { indices, values } => {
            for (&j, &v) in indices.iter().zip(values) {
                f(j as usize, v);
            }
        }
        Row::Dense(v) => {
            for (j, &xj) in v.iter().enumerate() {
                if xj != 0.0 {
                    f(j, xj);
                }
            }
        }
    }
}

/// The column pass of the sparse learners' steps: `w̄_j += a·x_j` on the example's columns and,
/// when `delta` is given as `(δ, s)`, `Z[:, j] += δ·(s·x_j)` — a Newton step alone, or (RP, Oja)
/// a sketch update and the step that follows it in one visit per column instead of three
/// (update, guard check, step). The caller has checked the guard (per column, or by
/// [`fused_step_ok`](newton::fused_step_ok)) and, for `delta`, brought the columns up to date (the gather).
#[inline]
pub(crate) fn fused_write(
    cols: &mut columns::LazyColumns,
    x: Row<'_>,
    a: f64,
    delta: Option<(&[f64], f64)>,
) {
    match (delta, x) {
        (Some((delta, s)), Row::Sparse { indices, values }) => {
            let pass = FusedPass {
                indices,
                values,
                a,
                delta,
                s,
            };
            match delta.len() {
                10 => fused_dispatch::<10>(cols, pass),
                5 => fused_dispatch::<5>(cols, pass),
                20 => fused_dispatch::<20>(cols, pass),
                _ => fused_generic(cols, x, a, delta, s),
            }
        }
        (Some((delta, s)), Row::Dense(_)) => fused_generic(cols, x, a, delta, s),
        (None, _) => for_each_nz(x, |j, v| cols.slot(j)[columns::W] += a * v),
    }
}

pub(crate) fn fused_generic(
    cols: &mut columns::LazyColumns,
    x: Row<'_>,
    a: f64,
    delta: &[f64],
    s: f64,
) {
    for_each_nz(x, |j, v| {
        let slot = cols.slot(j);
        slot[columns::W] += a * v;
        axpy::axpy(&mut slot[columns::Z..], delta, s * v);
    })
}

/// The arguments of the size-specialised fused write on a sparse row.
#[derive(Clone, Copy)]
pub(crate) struct FusedPass<'a> {
    pub indices: &'a [u32],
    pub values: &'a [f64],
    pub a: f64,
    pub delta: &'a [f64],
    pub s: f64,
}

/// [`fused_fixed`] compiled for AVX2 when the CPU has it ([`axpy::has_avx2`]).
#[inline(always)]
fn fused_dispatch<const M: usize>(cols: &mut columns::LazyColumns, pass: FusedPass<'_>) {
    #[cfg(target_arch = "x86_64")]
    if axpy::has_avx2() {
        // SAFETY: the CPU supports AVX2 (checked just above).
        return unsafe { fused_avx2::<M>(cols, pass) };
    }
    fused_fixed::<M>(cols, pass)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn fused_avx2<const M: usize>(cols: &mut columns::LazyColumns, pass: FusedPass<'_>) {
    fused_fixed::<M>(cols, pass)
}

/// [`fused_write`] for a sketch size known at compile time: `δ` stays in registers for the
/// whole pass (the same products and sums as [`fused_generic`], so the same bits).
#[inline(always)]
fn fused_fixed<const M: usize>(cols: &mut columns::LazyColumns, pass: FusedPass<'_>) {
    let FusedPass {
        indices,
        values,
        a,
        delta,
        s,
    } = pass;
    let Some(&d) = delta.first_chunk::<M>() else {
        return;
    };
    for (&j, &v) in indices.iter().zip(values) {
        let slot = cols.slot(j as usize);
        slot[columns::W] += a * v;
        let g = s * v;
        if let Some(z) = slot[columns::Z..].first_chunk_mut::<M>() {
            for i in 0..M {
                z[i] += g * d[i];
            }
        }
    }
}

/// `max(a, b)` for values known not to be NaN (checked inputs, guarded weights): one `maxsd`
/// instead of `f64::max`'s NaN handling, in the gather's per-column loop.
#[inline(always)]
pub(crate) fn finite_max(a: f64, b: f64) -> f64 {
    if b > a {
        b
    } else {
        a
    }
}

/// Row-major `y = F x` for a lower-triangular `m × m` `F`. For `m = 10` (the papers' and VW's
/// usual size) the body is compiled with `m` known, which unrolls the triangular loops (the same
/// operations in the same order, so the same bits).
#[inline]
pub(crate) fn lower_mul(f: &[f64], m: usize, x: &[f64], y: &mut [f64]) {
    match m {
        10 => lower_mul_body(f, 10, x, y),
        _ => lower_mul_body(f, m, x, y),
    }
}

#[inline(always)]
fn lower_mul_body(f: &[f64], m: usize, x: &[f64], y: &mut [f64]) {
    if m == 0 {
        return;
    }
    let x = &x[..m];
    for (i, (yi, row)) in y[..m].iter_mut().zip(f.chunks_exact(m)).enumerate() {
        *yi = row[..=i].iter().zip(x).map(|(a, b)| a * b).sum();
    }
}

/// Row-major `y = Fᵀ x` for a lower-triangular `m × m` `F` (`m = 10` compiled apart, as
/// [`lower_mul`]).
#[inline]
pub(crate) fn lower_tmul(f: &[f64], m: usize, x: &[f64], y: &mut [f64]) {
    match m {
        10 => lower_tmul_body(f, 10, x, y),
        _ => lower_tmul_body(f, m, x, y),
    }
}

#[inline(always)]
fn lower_tmul_body(f: &[f64], m: usize, x: &[f64], y: &mut [f64]) {
    if m == 0 {
        return;
    }
    let y = &mut y[..m];
    y.iter_mut().for_each(|v| *v = 0.0);
    for (i, (&xi, row)) in x[..m].iter().zip(f.chunks_exact(m)).enumerate() {
        if xi != 0.0 {
            for (yk, fk) in y[..=i].iter_mut().zip(&row[..=i]) {
                *yk += fk * xi;
            }
        }
    }
}

/// Whether every value is finite, without an early exit (a vectorisable pass: the vectors
/// checked are `O(m²)` long and almost always finite).
#[inline]
pub(crate) fn all_finite(v: &[f64]) -> bool {
    v.iter().fold(true, |ok, x| ok & x.is_finite())
}

/// A sparse-time SON learner chosen at run time (what [`AnyLearner`](super::AnyLearner) holds).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum SparseLearner {
    /// Sparse RP-SON.
    Rp(SparseRp),
    /// Sparse Oja-SON.
    Oja(SparseOja),
    /// Sparse FD-/RFD-SON (doubling).
    Fd(SparseFd),
}

enum_dispatch!($ dispatch, SparseLearner { Rp, Oja, Fd });

impl SparseLearner {
    /// How many lazy rebases (changes of basis / transfers of `Zᵀb` into `w̄`) so far.
    pub fn rebases(&self) -> u64 {
        dispatch!(self, l => l.rebases())
    }
}

forward_online_learner!(SparseLearner, dispatch {});
