//! Frequent Directions (FD) and Robust/Regularized Frequent Directions (RFD).
//!
//! * FD, per-row: RFD paper (Luo et al., "Robust Frequent Directions with Application in Online
//!   Learning") Algorithm 1; doubling ("fast") FD: Algorithm 2.
//! * RFD, per-row: Algorithm 3; doubling: Algorithm 4. RFD is FD plus one scalar: at each shrink
//!   by `δ = σ_m²`, `α ← α + δ/2`, and the estimate of `α₀I + AᵀA` is `BᵀB + αI`.
//!
//! Guarantees (tested by property tests in `tests/suite/sketch_properties.rs`): for every `k < m`,
//! `AᵀA − BᵀB ⪰ 0` and `‖AᵀA − BᵀB‖₂ ≤ Σ_t δ_t ≤ ‖A − A_k‖²_F/(m−k)` (RFD eq. 3–4), and for RFD
//! `‖AᵀA + α₀I − (BᵀB + αI)‖₂ ≤ Σ_t δ_t / 2` (Theorem 3).
//!
//! Implementation (DESIGN.md §4 items 1–3): the shrink step is computed from the Gram matrix
//! `BBᵀ` of the buffer (`ℓ × ℓ`), its symmetric eigendecomposition `U Λ Uᵀ` and the
//! rotation `UᵀB`: the new rows are `√(1 − δ/λ_i) · (UᵀB)_i`, which equals
//! `√(λ_i − δ) v_iᵀ` of the SVD `B = U Σ Vᵀ` with `λ_i = σ_i²`. Directions with `λ_i ≤ δ` become
//! exactly zero rows and the free rows are tracked by count. The cost is `O(ℓ²d + ℓ³)`.
//! The eigendecomposition is `small_sym_eigen::FdEigen`'s, the sparse-time shrink's solver
//! (EISPACK `tred2`/`tql2`) up to `ℓ = 64` and faer's beyond: at the default `ℓ = 2m = 20`
//! faer's set-up dominated (on a9a its `self_adjoint_evd` was 41 % of the default's CPU); the
//! sparse-time learner and this one now share the solver (`sparse_equivalence`). The two
//! products are plain loops (`sketch::fd_products`), not faer's GEMM. FD-SON's curvature
//! keeps `BBᵀ` for its solves anyway, so its shrink reads that matrix
//! (`FrequentDirections::insert_scaled_with_gram`) and forms only `UᵀB` (on a9a the Gram
//! product had been 15 % of the default's CPU, branch a9a10).
//!
//! * Per-row: an `m`-row buffer; a row goes into the first free row and the buffer is shrunk
//!   when it is full, leaving at most `m − 1` non-zero rows. This gives the same `BᵀB` as
//!   Algorithm 1 (which SVDs after every insert; while a row is free its shrink is by `σ_m = 0`).
//! * Doubling: a `2m`-row buffer shrunk by the `m`-th of its `2m` eigenvalues when full, keeping at
//!   most `m − 1` rows: amortised `O(md)` per row.
//! * Buffered ([`FdVariant::Buffer`]`(ℓ)`, `ℓ ≥ 2m`): the same with an `ℓ`-row buffer, shrunk
//!   by the `m`-th of its `ℓ` eigenvalues when full — every `ℓ − m + 1` appends at the least.
//!
//! **The bound does not depend on the buffer length.** (Ghashami, Liberty, Phillips, Woodruff,
//! "Frequent Directions: Simple and Deterministic Matrix Sketching", SIAM J. Comput. 2016,
//! §3, Theorem 3.1 and its proof, there for `ℓ = 2m`.) Let a shrink see the buffer `C`
//! (eigenvalues `λ_1 ≥ … ≥ λ_ℓ`, any `ℓ ≥ m`) and leave `B' = √(Λ − δ)₊Vᵀ` with `δ = λ_m`.
//! Then (i) `0 ⪯ CᵀC − B'ᵀB' ⪯ δI` (each eigenvalue drops by `min(λ_i, δ)`), and (ii)
//! `‖C‖²_F − ‖B'‖²_F = Σ_i min(λ_i, δ) ≥ mδ` (the first `m` drop by exactly `δ`). Appends
//! change neither side (`CᵀC = BᵀB + aᵀa`). Summing (i) over the shrinks gives
//! `0 ⪯ AᵀA − BᵀB ⪯ Δ·I` with `Δ = Σ_t δ_t`, and (ii) gives `mΔ ≤ ‖A‖²_F − ‖B‖²_F`. For the
//! top-`k` right singular vectors `x_1..x_k` of `A` (`k < m`):
//! `‖B‖²_F ≥ Σ_{i≤k}‖Bx_i‖² ≥ Σ_{i≤k}(‖Ax_i‖² − Δ) = ‖A_k‖²_F − kΔ`, so
//! `mΔ ≤ ‖A − A_k‖²_F + kΔ`, i.e. **`‖AᵀA − BᵀB‖₂ ≤ Δ ≤ ‖A − A_k‖²_F/(m − k)`** for every
//! `k < m`, whatever `ℓ ≥ m` is; RFD's `Δ/2` bound (Luo et al. Theorem 3) follows the same way.
//! `tests/suite/sketch_properties.rs` checks both for `ℓ ∈ {m, 2m, 2m + 1, 5m}`. The buffer only
//! trades how often the `O(ℓ²d)` shrink runs against its size (and memory `ℓd`).

use super::error::{check_nonneg, check_size};
use super::fd_products;
use super::{Sketch, SketchError, SketchMatrix};
use crate::small_sym_eigen::FdEigen;
use crate::Row;
use std::borrow::Cow;

/// Which buffer strategy an FD/RFD sketch uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum FdVariant {
    /// `m`-row buffer, shrink at every insert once full (Alg. 1 / Alg. 3): `O(m²d)` per row.
    PerRow,
    /// `2m`-row buffer, shrink when full (Alg. 2 / Alg. 4): amortised `O(md)` per row.
    Doubling,
    /// `ℓ`-row buffer (`ℓ ≥ 2m`), shrunk by the `m`-th of its `ℓ` eigenvalues when full to at
    /// most `m − 1` rows, i.e. every `ℓ − m + 1` appends at the least. `Buffer(2m)` is
    /// [`Doubling`](Self::Doubling); a longer buffer shrinks (and, in the sparse-time learner,
    /// changes basis) less often, at `O(ℓ²)` per example for the small solves. The FD bound
    /// holds unchanged (see the [module](self) docs).
    Buffer(usize),
}

impl FdVariant {
    /// Rows of the buffer for sketch size `m`: `m` (per-row), `2m` (doubling) or `ℓ`.
    pub fn buffer_rows(self, m: usize) -> usize {
        match self {
            FdVariant::PerRow => m,
            FdVariant::Doubling => 2 * m,
            FdVariant::Buffer(l) => l,
        }
    }

    /// Checks a [`Buffer`](Self::Buffer) length against the sketch size: `ℓ ≥ 2m`.
    pub fn check(self, m: usize) -> Result<(), SketchError> {
        match self {
            FdVariant::Buffer(l) if l < 2 * m => Err(SketchError::InvalidParameter(format!(
                "an FD buffer of {l} rows is shorter than 2m = {}",
                2 * m
            ))),
            _ => Ok(()),
        }
    }
}

/// Frequent Directions sketch (optionally regularized: RFD).
///
/// ```
/// use sketchlearn::sketch::{FdVariant, FrequentDirections, Sketch};
/// use sketchlearn::Row;
/// // RFD with doubling space, sketch size 2, α₀ = 0.
/// let mut rfd = FrequentDirections::rfd(3, 2, FdVariant::Doubling, 0.0).unwrap();
/// for row in [[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 3.0], [1.0, 1.0, 1.0]] {
///     rfd.insert(Row::Dense(&row)).unwrap();
/// }
/// // The buffer (4 rows) filled once and was shrunk: α = Σδ/2 > 0.
/// assert!(rfd.alpha() > 0.0);
/// assert_eq!(rfd.alpha(), rfd.total_shrinkage() / 2.0);
/// ```
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct FrequentDirections {
    m: usize,
    dim: usize,
    variant: FdVariant,
    regularized: bool,
    alpha0: f64,
    /// Row-major buffer of `capacity × dim`; rows `filled..` are zero.
    buf: Vec<f64>,
    filled: usize,
    shrink_total: f64,
    shrinks: u64,
    rows_seen: u64,
    // Workspaces, overwritten before they are read: not part of the state.
    #[serde(skip)]
    gram: Vec<f64>,
    #[serde(skip)]
    rotated: Vec<f64>,
    #[serde(skip)]
    eig: Option<FdEigen>,
}

impl Clone for FrequentDirections {
    fn clone(&self) -> Self {
        FrequentDirections {
            m: self.m,
            dim: self.dim,
            variant: self.variant,
            regularized: self.regularized,
            alpha0: self.alpha0,
            buf: self.buf.clone(),
            filled: self.filled,
            shrink_total: self.shrink_total,
            shrinks: self.shrinks,
            rows_seen: self.rows_seen,
            gram: Vec::new(),
            rotated: Vec::new(),
            eig: None,
        }
    }
}

impl FrequentDirections {
    /// Plain FD with sketch size `m ≥ 1` over rows of dimension `dim`.
    pub fn fd(dim: usize, m: usize, variant: FdVariant) -> Result<Self, SketchError> {
        Self::build(dim, m, variant, false, 0.0)
    }

    /// RFD with sketch size `m ≥ 1` and initial regularization `α₀ ≥ 0`.
    pub fn rfd(dim: usize, m: usize, variant: FdVariant, alpha0: f64) -> Result<Self, SketchError> {
        check_nonneg("alpha0", alpha0)?;
        Self::build(dim, m, variant, true, alpha0)
    }

    fn build(
        dim: usize,
        m: usize,
        variant: FdVariant,
        regularized: bool,
        alpha0: f64,
    ) -> Result<Self, SketchError> {
        check_size(m)?;
        variant.check(m)?;
        let cap = variant.buffer_rows(m);
        Ok(FrequentDirections {
            m,
            dim,
            variant,
            regularized,
            alpha0,
            buf: vec![0.0; cap * dim],
            filled: 0,
            shrink_total: 0.0,
            shrinks: 0,
            rows_seen: 0,
            gram: Vec::new(),
            rotated: Vec::new(),
            eig: None,
        })
    }

    /// The buffer strategy.
    pub fn variant(&self) -> FdVariant {
        self.variant
    }

    /// True for RFD.
    pub fn is_regularized(&self) -> bool {
        self.regularized
    }

    /// Number of rows of the buffer (`m` per-row, `2m` doubling, `ℓ` buffered).
    pub fn capacity(&self) -> usize {
        self.variant.buffer_rows(self.m)
    }

    /// Number of non-zero rows currently held.
    pub fn filled_rows(&self) -> usize {
        self.filled
    }

    /// Row-major `filled_rows() × dim` matrix `B`.
    pub fn rows(&self) -> &[f64] {
        &self.buf[..self.filled * self.dim]
    }

    /// `Σ_t δ_t`, the total shrinkage so far (the FD error bound: `‖AᵀA − BᵀB‖₂ ≤ Σ δ_t`).
    pub fn total_shrinkage(&self) -> f64 {
        self.shrink_total
    }

    /// Number of shrink steps performed.
    pub fn shrinks(&self) -> u64 {
        self.shrinks
    }

    /// The isotropic part: `α₀ + Σδ/2` for RFD, 0 for FD.
    pub fn alpha(&self) -> f64 {
        if self.regularized {
            self.alpha0 + 0.5 * self.shrink_total
        } else {
            0.0
        }
    }

    /// The initial regularization `α₀` (0 for FD).
    pub fn alpha0(&self) -> f64 {
        self.alpha0
    }

    /// Checks a loaded sketch against the dimension, size and buffer its owner expects: a buffer
    /// of `capacity × dim` finite numbers, fewer than `capacity` rows held (a full buffer is
    /// shrunk at once), `Σδ ≥ 0` and `α₀ ≥ 0` finite. The error says what is inconsistent.
    pub(crate) fn check_state(
        &self,
        dim: usize,
        m: usize,
        variant: FdVariant,
    ) -> Result<(), String> {
        if (self.dim, self.m, self.variant) != (dim, m, variant) {
            return Err(format!(
                "an FD sketch of dimension {}, size {} ({:?}), expected {dim}, {m} ({variant:?})",
                self.dim, self.m, self.variant
            ));
        }
        let cap = self.capacity();
        if Some(self.buf.len()) != cap.checked_mul(dim) {
            return Err(format!(
                "an FD buffer of {} numbers for {cap} rows of dimension {dim}",
                self.buf.len()
            ));
        }
        if self.filled >= cap {
            return Err(format!("{} FD rows held in a buffer of {cap}", self.filled));
        }
        if let Some(x) = self.buf.iter().find(|x| !x.is_finite()) {
            return Err(format!("an FD row holds {x}"));
        }
        for (what, x) in [
            ("total shrinkage", self.shrink_total),
            ("alpha0", self.alpha0),
        ] {
            if !(x.is_finite() && x >= 0.0) {
                return Err(format!("the FD {what} is {x}"));
            }
        }
        Ok(())
    }

    /// Inserts `scale · row` (used by GFD for `√|s_t| g_t`). A row that is zero after scaling
    /// adds nothing to `AᵀA` and takes no buffer row (FD would insert it and shrink by σ_m = 0).
    pub fn insert_scaled(&mut self, row: Row<'_>, scale: f64) -> Result<(), SketchError> {
        self.insert_scaled_with_gram(row, scale, None)
    }

    /// [`insert_scaled`](Self::insert_scaled) for an owner that keeps the Gram matrix `BBᵀ`
    /// of the buffer itself (FD-SON's curvature, for its solves): when this row fills the
    /// buffer, the shrink reads `BBᵀ` of the full buffer from `gram` (row stride `stride`,
    /// symmetric, the new row's entries included) instead of forming it from the rows — the
    /// `O(ℓ²d)` product that was a third of the shrink (see the [module](self) docs).
    pub(crate) fn insert_scaled_with_gram(
        &mut self,
        row: Row<'_>,
        scale: f64,
        gram: Option<(&[f64], usize)>,
    ) -> Result<(), SketchError> {
        if !scale.is_finite() {
            return Err(SketchError::NonFinite(format!("row scale {scale}")));
        }
        let need = row.max_index_plus_one();
        if need > self.dim {
            return Err(SketchError::DimensionMismatch {
                index: need - 1,
                dim: self.dim,
            });
        }
        let d = self.dim;
        let dst = &mut self.buf[self.filled * d..(self.filled + 1) * d];
        // One pass over the row: scaled copy, finiteness and non-zero checks together.
        let (finite, nonzero) = match row {
            Row::Dense(v) => {
                let (mut finite, mut nonzero) = (true, false);
                for (o, &x) in dst.iter_mut().zip(v) {
                    let y = scale * x;
                    *o = y;
                    finite &= x.is_finite();
                    nonzero |= y != 0.0;
                }
                dst[v.len()..].iter_mut().for_each(|o| *o = 0.0);
                (finite, nonzero)
            }
            Row::Sparse { indices, values } => {
                dst.iter_mut().for_each(|o| *o = 0.0);
                let (mut finite, mut nonzero) = (true, false);
                for (&i, &x) in indices.iter().zip(values) {
                    let y = scale * x;
                    dst[i as usize] = y;
                    finite &= x.is_finite();
                    nonzero |= y != 0.0;
                }
                (finite, nonzero)
            }
        };
        if !finite {
            dst.iter_mut().for_each(|o| *o = 0.0);
            return Err(SketchError::NonFinite(
                "row contains NaN or infinity".into(),
            ));
        }
        if nonzero {
            self.filled += 1;
            if self.filled == self.capacity() {
                if let Err(e) = self.shrink(gram) {
                    // Leave the sketch as it was before this row (the buffer stays usable).
                    self.filled -= 1;
                    let f = self.filled;
                    self.buf[f * d..(f + 1) * d]
                        .iter_mut()
                        .for_each(|o| *o = 0.0);
                    return Err(e);
                }
            }
        }
        self.rows_seen += 1;
        Ok(())
    }

    /// Shrinks the `filled` rows of the buffer by `δ = λ_m` (the m-th largest eigenvalue of
    /// `BBᵀ`, 0 when fewer than `m` rows are held), keeping at most `m − 1` non-zero rows.
    /// `BBᵀ` is read from `known` (matrix, row stride) when the caller keeps it, else formed.
    fn shrink(&mut self, known: Option<(&[f64], usize)>) -> Result<(), SketchError> {
        let (d, l, m) = (self.dim, self.filled, self.m);
        // Workspaces are allocated on first use (and re-sized for merges).
        let eig = match &mut self.eig {
            Some(e) if e.size() == l => e,
            slot => slot.insert(FdEigen::new(l)),
        };
        if self.gram.len() < l * l {
            self.gram.resize(l * l, 0.0);
        }
        match known {
            Some((g, stride)) => {
                for i in 0..l {
                    self.gram[i * l..(i + 1) * l].copy_from_slice(&g[i * stride..i * stride + l]);
                }
            }
            None => fd_products::gram(&self.buf, l, d, &mut self.gram, l),
        }
        eig.compute(&self.gram[..l * l])?;
        let lambda = eig.values();
        let (delta, keep) = shrink_rule(lambda, m);
        if self.rotated.len() < keep * d {
            self.rotated.resize(keep * d, 0.0);
        }
        fd_products::rotate(eig.vectors(), l, keep, &self.buf, d, &mut self.rotated);
        for i in 0..keep {
            let s = (1.0 - delta / lambda[i]).max(0.0).sqrt();
            let src = &self.rotated[i * d..(i + 1) * d];
            let dst = &mut self.buf[i * d..(i + 1) * d];
            for (o, x) in dst.iter_mut().zip(src) {
                *o = s * x;
            }
        }
        self.buf[keep * d..l * d].iter_mut().for_each(|x| *x = 0.0);
        self.filled = keep;
        self.shrink_total += delta;
        self.shrinks += 1;
        if !self.shrink_total.is_finite() {
            return Err(SketchError::NonFinite("FD shrinkage overflowed".into()));
        }
        Ok(())
    }

    /// Merges `other` into `self` (mergeable-summaries property of FD): the rows of both are
    /// stacked and shrunk back to at most `m − 1` rows; the total shrinkage (and, for RFD, the
    /// α's shrinkage parts) add up, and `α₀` is counted once. The result satisfies the
    /// single-stream FD bound on the concatenated stream.
    ///
    /// ```
    /// use sketchlearn::sketch::{FdVariant, FrequentDirections, Sketch};
    /// use sketchlearn::Row;
    /// let mut a = FrequentDirections::fd(2, 2, FdVariant::PerRow).unwrap();
    /// let mut b = a.clone();
    /// a.insert(Row::Dense(&[1.0, 0.0])).unwrap();
    /// b.insert(Row::Dense(&[0.0, 1.0])).unwrap();
    /// a.merge(&b).unwrap();
    /// assert_eq!(a.rows_seen(), 2);
    /// ```
    pub fn merge(&mut self, other: &FrequentDirections) -> Result<(), SketchError> {
        if other.dim != self.dim {
            return Err(SketchError::Incompatible(format!(
                "dimension {} vs {}",
                self.dim, other.dim
            )));
        }
        if other.regularized != self.regularized {
            return Err(SketchError::Incompatible(
                "cannot merge an FD sketch with an RFD sketch".into(),
            ));
        }
        let d = self.dim;
        let total = self.filled + other.filled;
        let cap = self.capacity();
        if total < cap {
            self.buf[self.filled * d..total * d].copy_from_slice(other.rows());
            self.filled = total;
        } else {
            // Stack into a temporary buffer large enough for both, shrink, then restore size.
            let mut stacked = Vec::with_capacity(total.max(cap) * d);
            stacked.extend_from_slice(self.rows());
            stacked.extend_from_slice(other.rows());
            stacked.resize(total.max(cap) * d, 0.0);
            self.buf = stacked;
            self.filled = total;
            self.shrink(None)?;
            self.buf.truncate(cap * d);
        }
        self.shrink_total += other.shrink_total;
        self.shrinks += other.shrinks;
        self.rows_seen += other.rows_seen;
        Ok(())
    }
}

impl FrequentDirections {
    /// Replaces the state by a merged one ([`super::merge`]): `filled` rows (row-major) within
    /// the buffer's capacity, the total shrinkage, shrink count and rows seen.
    pub(crate) fn set_merged(
        &mut self,
        rows: &[f64],
        filled: usize,
        shrink_total: f64,
        shrinks: u64,
        rows_seen: u64,
    ) {
        let d = self.dim;
        debug_assert!(filled < self.capacity().max(1) || filled == 0);
        self.buf.iter_mut().for_each(|x| *x = 0.0);
        self.buf[..filled * d].copy_from_slice(&rows[..filled * d]);
        self.filled = filled;
        self.shrink_total = shrink_total;
        self.shrinks = shrinks;
        self.rows_seen = rows_seen;
    }
}

impl Sketch for FrequentDirections {
    fn dim(&self) -> usize {
        self.dim
    }

    fn sketch_size(&self) -> usize {
        self.m
    }

    fn rows_seen(&self) -> u64 {
        self.rows_seen
    }

    fn insert(&mut self, row: Row<'_>) -> Result<(), SketchError> {
        self.insert_scaled(row, 1.0)
    }

    fn matrix(&self) -> SketchMatrix<'_> {
        SketchMatrix {
            b: Cow::Borrowed(self.rows()),
            rows: self.filled,
            dim: self.dim,
            alpha: self.alpha(),
        }
    }
}

/// FD's shrink rule on the eigenvalues `lambda` (descending) of a full buffer's `BBᵀ`:
/// `δ = λ_m` (0 with fewer than `m` eigenvalues) and the number of rows kept, at most `m − 1`,
/// those with `λ_i − δ` above rounding (eigenvalues within rounding of `δ`, or of zero, would give
/// exactly-zero rows). Shared with the factored sketch of SFTRL
/// ([`FactoredFd`](crate::fm::FactoredFd)).
pub(crate) fn shrink_rule(lambda: &[f64], m: usize) -> (f64, usize) {
    let delta = if lambda.len() >= m {
        lambda[m - 1].max(0.0)
    } else {
        0.0
    };
    (delta, rows_kept(lambda, m, delta))
}

/// How many of the leading (at most `m − 1`) values of the descending `lambda` stay above `δ`
/// by more than rounding (`4ε·len·λ₁`): the rows a compression by `δ` keeps. [`shrink_rule`]
/// with `δ = λ_m`; the signed sketch also with `δ = 0` (truncation).
pub(crate) fn rows_kept(lambda: &[f64], m: usize, delta: f64) -> usize {
    let tol =
        lambda.first().map_or(0.0, |x| x.max(0.0)) * (lambda.len() as f64) * 4.0 * f64::EPSILON;
    lambda
        .iter()
        .take(m.saturating_sub(1))
        .take_while(|&&x| x - delta > tol)
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_checked_shrink() {
        // Rows e1·3 and e2·2 in a per-row sketch of size 2: the buffer fills, the eigenvalues of
        // BBᵀ are 9 and 4, δ = 4, and the sketch keeps one row √(9−4)·e1 = √5·e1.
        let mut fd = FrequentDirections::rfd(2, 2, FdVariant::PerRow, 1.0).unwrap();
        fd.insert(Row::Dense(&[3.0, 0.0])).unwrap();
        fd.insert(Row::Dense(&[0.0, 2.0])).unwrap();
        assert_eq!(fd.filled_rows(), 1);
        let r = fd.rows();
        assert!((r[0].abs() - 5f64.sqrt()).abs() < 1e-12 && r[1].abs() < 1e-12);
        assert!((fd.total_shrinkage() - 4.0).abs() < 1e-12);
        assert!((fd.alpha() - 3.0).abs() < 1e-12); // α₀ + δ/2
    }

    #[test]
    fn a_failed_shrink_leaves_a_usable_sketch() {
        // Rows of 1e200 overflow the Gram matrix: the shrink fails, the row is rolled back, and
        // later inserts still work (no out-of-bounds write into a full buffer).
        let mut fd = FrequentDirections::fd(2, 1, FdVariant::PerRow).unwrap();
        assert!(fd.insert(Row::Dense(&[1e200, 1e200])).is_err());
        assert!(fd.insert(Row::Dense(&[1e200, 1e200])).is_err());
        assert_eq!(fd.filled_rows(), 0);
        assert_eq!(fd.rows_seen(), 0);
        fd.insert(Row::Dense(&[1.0, 0.0])).unwrap();
        assert_eq!(fd.rows_seen(), 1);
    }

    #[test]
    fn rejects_bad_input() {
        assert!(FrequentDirections::fd(3, 0, FdVariant::PerRow).is_err());
        assert!(FrequentDirections::rfd(3, 2, FdVariant::PerRow, -1.0).is_err());
        assert!(FrequentDirections::rfd(3, 2, FdVariant::PerRow, f64::NAN).is_err());
        let mut fd = FrequentDirections::fd(3, 2, FdVariant::PerRow).unwrap();
        assert!(matches!(
            fd.insert(Row::Sparse {
                indices: &[3],
                values: &[1.0]
            }),
            Err(SketchError::DimensionMismatch { index: 3, dim: 3 })
        ));
        assert!(fd.insert(Row::Dense(&[f64::INFINITY, 0.0, 0.0])).is_err());
        assert_eq!(fd.rows_seen(), 0);
    }
}
