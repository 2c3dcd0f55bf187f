//! `K` weight vectors ("heads") over one sparse-time curvature: what the sparse-time softmax
//! learner ([`SparseSoftmax`](super::SparseSoftmax)) needs of the RP, Oja and FD/RFD models
//! beyond the binary driver's [`SparseCurvature`].
//!
//! Every head is kept as the binary learner's one weight vector, `w_h = w̄_h + Zᵀb_h` (FD:
//! `+ Gᵀc_h`), over the shared `Z` of the column store (`columns.rs`, "heads"). A step
//! `w_h += f_h·α·A⁻¹x` is then, with `A⁻¹x = (x − Zᵀv − Gᵀh_G)/α` ([`HeadsCurvature::solve`]),
//!
//! ```text
//! w̄_h += f_h·x   (the example's columns),   b_h −= f_h·v,   c_h −= f_h·h_G ,
//! ```
//!
//! and a sketch update `Z ← Z + δĝᵀ` (RP, Oja: [`SparseCurvature::prepare_update`] returns
//! `Some`) changes every `Zᵀb_h` by `ĝ(δᵀb_h)`, so `w̄_h −= (δᵀb_h)ĝ` keeps every head
//! ([`SparseWeights::write_update`]) — the binary correction applied to each head, since it is
//! linear in `b_h`. Changes of basis and transfers (`LazyColumns::rebase`) already act on all
//! heads. Cost `O((m + K)·nnz)` per column pass.

use super::columns::{head, Z};
use super::newton::{SparseCurvature, SparseWeights};
use super::{for_each_nz, fused_write};
use crate::linalg::dot;
use crate::Row;

/// A [`SparseCurvature`] that serves `K` heads (see the [module](self) docs). The model's "own"
/// coefficients are FD's `c` (`K` per raw row, `c[q·K + h]`); RP and Oja have none, which the
/// default methods say.
pub trait HeadsCurvature: SparseCurvature {
    /// Computes `v` (and FD's `h_G`) with `A⁻¹x = (x − Zᵀv − Gᵀh_G)/α` for the gathered
    /// `z = Zx` (after [`SparseCurvature::begin`] on the same example).
    fn solve(&mut self, z: &[f64], m: usize);

    /// `v` of the last [`solve`](Self::solve) (`m` numbers).
    fn solved(&self) -> &[f64];

    /// The part `Σ_q c[q·K + h]·(Gx)_q` of head `h`'s score of the current example (after
    /// [`SparseCurvature::begin`]); 0 without own coefficients.
    #[inline]
    fn own_score(&self, _h: usize, _heads: usize) -> f64 {
        0.0
    }

    /// The same for any row, without changing anything (`K` numbers added to `out`).
    #[inline]
    fn add_own_scores(&self, _x: Row<'_>, _out: &mut [f64]) {}

    /// Whether every own coefficient stays acceptable after the step `c_h −= f_h·h_G`.
    #[inline]
    fn own_step_ok(&self, _f: &[f64]) -> bool {
        true
    }

    /// `c_h −= f_h·h_G` with the `h_G` of the last [`solve`](Self::solve).
    #[inline]
    fn own_step(&mut self, _f: &[f64]) {}

    /// Adds the own part `Gᵀc_h` to the dense row-major `K × d` weights `w`.
    #[inline]
    fn add_head_weights(&self, _w: &mut [f64], _heads: usize) {}

    /// Checks a loaded state over the weights `w` with `heads` heads (sizes, finiteness),
    /// naming what is wrong (`validate.rs`).
    fn check_heads(&self, w: &SparseWeights, heads: usize) -> Result<(), String>;
}

impl SparseWeights {
    /// The columns' part of the sketch update `Z ← Z + δĝᵀ`, `ĝ = s·x`: `Z[:, j] += δ·s·x_j` and,
    /// for every head, `w̄_hj −= (δᵀb_h)·s·x_j`, which keeps each `w_h` (see the module docs).
    /// One head is the binary learners' column pass (`fused_write`, the same bits); the
    /// columns must be current.
    pub(crate) fn write_update(&mut self, x: Row<'_>, delta: &[f64], s: f64) {
        let m = delta.len();
        if self.cols.heads() == 1 || m == 0 {
            let db = dot(delta, &self.b);
            fused_write(&mut self.cols, x, -db * s, Some((delta, s)));
            return;
        }
        let shift: Vec<f64> = self.b.chunks_exact(m).map(|b| -dot(delta, b) * s).collect();
        let cols = &mut self.cols;
        for_each_nz(x, |j, v| {
            let slot = cols.slot(j);
            for (h, a) in shift.iter().enumerate() {
                slot[head(m, h)] += a * v;
            }
            super::axpy::axpy(&mut slot[Z..Z + m], delta, s * v);
        });
    }

    /// Whether `(δᵀb_h)·g` is finite for every head (a sketch update's check before it changes
    /// anything; one head: `δᵀb·g`).
    pub(crate) fn shifts_finite(&self, delta: &[f64], g: f64) -> bool {
        let m = delta.len().max(1);
        self.b
            .chunks(m)
            .all(|b| dot(delta, b).is_finite() && (dot(delta, b) * g).is_finite())
    }
}
