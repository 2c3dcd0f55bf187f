//! Streaming matrix sketches of a covariance `AᵀA` from the rows of `A`.
//!
//! | sketch | paper | approximation |
//! |---|---|---|
//! | [`FrequentDirections`] per-row / doubling | RFD paper Alg. 1 / Alg. 2 | `BᵀB` |
//! | [`FrequentDirections::rfd`] per-row / doubling | RFD paper Alg. 3 / Alg. 4 | `BᵀB + αI` |
//! | [`GeneralizedFrequentDirections`] | SFTRL Alg. 2 / Alg. 3 | `B₊ᵀB₊ − B₋ᵀB₋` of `Σ s_t g_t g_tᵀ` |
//! | [`RandomProjection`] | SON §3, Alg. 6 | `SᵀS` (unbiased) |
//! | [`OjaSketch`] | SON §3, Alg. 3 | `SᵀS`, `S = (tΛ)^½ V` |
//!
//! All of them implement [`Sketch`]; the PSD ones share [`SketchMatrix`] as their output and
//! every approximation is a [`SymOperator`], so [`relative_spectral_error`] measures any of them
//! against the exact matrix (RFD paper §5.1) without forming `d × d`.

mod config;
mod error;
pub(crate) mod fd_products;
mod fd_rebase;
mod frequent_directions;
mod generalized;
mod measure;
mod merge;
mod oja;
mod oja_rank_one;
mod random_projection;
mod spectral_error;

pub use config::{AnySketch, SketchConfig, SketchMethod};
pub use error::SketchError;
pub(crate) use fd_rebase::signed_coefficients;
pub(crate) use frequent_directions::{rows_kept, shrink_rule};
pub use frequent_directions::{FdVariant, FrequentDirections};
pub use generalized::GeneralizedFrequentDirections;
pub use measure::{ExactError, SketchJob, SketchJobError, SketchReport};
pub use oja::OjaSketch;
pub(crate) use oja_rank_one::RankOneCholesky;
pub(crate) use random_projection::symmetric_rank_two;
pub use random_projection::RandomProjection;
pub use spectral_error::{
    extreme_eigenvalue, relative_spectral_error, LanczosOptions, RowMatrix, SymOperator,
};

use crate::Row;
use std::borrow::Cow;

/// A streaming sketch of `AᵀA` built from the rows of `A`, one at a time.
///
/// ```
/// use sketchlearn::sketch::{FrequentDirections, FdVariant, Sketch};
/// use sketchlearn::Row;
/// let mut fd = FrequentDirections::fd(3, 2, FdVariant::PerRow).unwrap();
/// fd.insert(Row::Dense(&[1.0, 0.0, 0.0])).unwrap();
/// fd.insert(Row::Sparse { indices: &[2], values: &[2.0] }).unwrap();
/// assert_eq!(fd.rows_seen(), 2);
/// let b = fd.matrix();
/// assert_eq!(b.dim, 3);
/// ```
pub trait Sketch {
    /// Dimension `d` of the rows.
    fn dim(&self) -> usize;
    /// The sketch size `m` it was built with.
    fn sketch_size(&self) -> usize;
    /// Number of rows inserted so far.
    fn rows_seen(&self) -> u64;
    /// Inserts one row of `A`.
    fn insert(&mut self, row: Row<'_>) -> Result<(), SketchError>;
    /// The current approximation `BᵀB + αI` (borrowed where the sketch stores `B` directly).
    fn matrix(&self) -> SketchMatrix<'_>;
}

/// The output of a PSD sketch: a row-major `rows × dim` matrix `B` and a scalar `α`; the
/// approximation of `AᵀA` is `BᵀB + αI`.
#[derive(Clone, Debug)]
pub struct SketchMatrix<'a> {
    /// Row-major `rows × dim` entries of `B`.
    pub b: Cow<'a, [f64]>,
    /// Number of rows of `B` (rows beyond the filled ones are not included).
    pub rows: usize,
    /// Dimension `d`.
    pub dim: usize,
    /// The isotropic part `α` (0 for FD, RP and Oja; the accumulated α for RFD).
    pub alpha: f64,
}

impl SketchMatrix<'_> {
    /// Row `i` of `B`.
    pub fn row(&self, i: usize) -> &[f64] {
        &self.b[i * self.dim..(i + 1) * self.dim]
    }

    /// The dense `d × d` matrix `BᵀB + αI` (row-major). For tests and small `d` only.
    pub fn to_dense(&self) -> Vec<f64> {
        let d = self.dim;
        let mut out = vec![0.0; d * d];
        for r in 0..self.rows {
            let row = self.row(r);
            for i in 0..d {
                if row[i] != 0.0 {
                    crate::linalg::axpy(row[i], row, &mut out[i * d..(i + 1) * d]);
                }
            }
        }
        for i in 0..d {
            out[i * d + i] += self.alpha;
        }
        out
    }
}

impl SymOperator for SketchMatrix<'_> {
    fn dim(&self) -> usize {
        self.dim
    }

    fn apply(&self, v: &[f64], out: &mut [f64]) {
        for (o, x) in out.iter_mut().zip(v) {
            *o = self.alpha * x;
        }
        for r in 0..self.rows {
            let row = self.row(r);
            let c = crate::linalg::dot(row, v);
            if c != 0.0 {
                crate::linalg::axpy(c, row, out);
            }
        }
    }
}
