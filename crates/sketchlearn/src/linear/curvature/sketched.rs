//! Sketched curvatures `A = αI + SᵀS` (SON paper §3; RFD paper Alg. 5/6):
//!
//! * [`FdCurvature`]: `S = B` of an FD sketch with a fixed `α` (FD-SON, SON Alg. 2), or of an RFD
//!   sketch with `α` taken from the sketch, `α = α₀ + Σδ/2` (RFD-SON, RFD Alg. 5/6; DESIGN.md §4
//!   item 4). Per-row or doubling buffers.
//! * [`RpCurvature`]: Gaussian random projection with its incremental `H` (SON Alg. 6).
//! * [`OjaCurvature`]: Oja's sketch, `SSᵀ = diag(tλ)` so `H` is diagonal (SON Alg. 3).
//!
//! `A⁻¹x = (x − Sᵀ(αI + SSᵀ)⁻¹Sx)/α` and `xᵀA⁻¹x = (‖x‖² − (Sx)ᵀ(αI + SSᵀ)⁻¹(Sx))/α`: per call
//! `O(ℓ·nnz(x) + ℓ²)` for the quadratic form and `O(ℓ·d)` for the solve, ℓ ≤ 2m rows.

use super::Curvature;
use crate::linalg::{
    add_rows_transposed, cholesky_solve_by_rows, dot, gram_rows, rows_times_vector,
    shifted_gram_append_row, shifted_gram_factor,
};
use crate::sketch::{
    fd_products, FdVariant, FrequentDirections, OjaSketch, RandomProjection, Sketch, SketchError,
};
use crate::Row;
use serde::{Deserialize, Serialize};

thread_local! {
    /// Scratch for densifying a sparse row (see `FdCurvature::project`).
    static DENSE_SCRATCH: std::cell::RefCell<Vec<f64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The largest squared norm `‖scale·x‖²` of a row FD and RP take; a larger (or non-finite) one
/// is refused by [`check_row_norm`] before anything changes, so the learner refuses that step
/// and its state stays finite (a row of `±1e300` values used to leave `±∞` in the Gram matrix
/// and NaN in its Cholesky factor, which then made every later step NaN and the saved model
/// unloadable). Oja's step is quartic in the row and has its own, tighter bound,
/// [`MAX_OJA_ROW_SQUARED_NORM`].
///
/// Why `10²⁰⁰` keeps every number finite: FD never adds mass, `‖B‖_F² ≤ ‖A‖_F² = Σ_t ‖a_t‖²`
/// (Liberty 2013, Ghashami et al. 2016, Lemma 1 — each shrink subtracts `δ ≥ 0` from every
/// squared singular value), so after `t` accepted rows every Gram entry is at most
/// `|⟨b_i, b_j⟩| ≤ ‖B‖_F² ≤ t·10²⁰⁰`, RFD's `α = α₀ + Σδ/2 ≤ α₀ + t·10²⁰⁰`, and the Cholesky
/// factor of `αI + BBᵀ` has entries at most `√(α + ‖B‖_F²)` with sums of `ℓ ≤ 4m` products
/// of them: all below `10³⁰⁰` for `t < 10⁹⁰` rows. The sparse-time FD-SON learner
/// (`linear/sparse/fd.rs`) applies the same check before its buffer changes, and so do Ada-FD
/// and Sketchy, whose sketch is an FD sketch too (`linear/fd_adagrad.rs`). The bound is far
/// above any gradient of data a step can learn from (weights are bounded by
/// [`crate::linear::MAX_WEIGHT`] = 10¹⁰⁰).
pub const MAX_ROW_SQUARED_NORM: f64 = 1e200;

/// The largest squared norm `‖ĝ‖² = ‖scale·x‖²` of a row Oja's sketch takes (dense
/// [`OjaCurvature`] and the sparse-time `SparseOja`), through the same [`check_row_norm`].
///
/// **Derivation** (Oja's step, SON paper, Luo et al. 2016, §3 Eq. (4) and Algorithm 3):
/// `t ← t + 1`, `γ = min(c/t, 1) ≤ 1`, `p = Vĝ`, `λ ← (1 − γ)λ + γp²`, `V ← orth(V + γpĝᵀ)`.
/// `V` has orthonormal rows, so `|p_i| ≤ ‖p‖ ≤ ‖ĝ‖`, and
/// * `λ_i` stays below `max(λ_i, ‖ĝ‖²)`: quadratic in the row (like FD's Gram matrix);
/// * the rows of `V + γpĝᵀ` have the Gram matrix `I + βppᵀ`, `β = 2γ + γ²‖ĝ‖²`, whose
///   condition number `σ = 1 + β‖p‖² ≤ (1 + γ‖ĝ‖²)²` is **quartic** in the row. Both
///   orthonormalisations form it: the closed form (`sketch::oja_rank_one`) sums `σ_k` and
///   `x_k² = βp_k²` and takes `1/σ_k`; the explicit Gram–Schmidt squares the entries
///   `v_ij + γp_iĝ_j` of rows of norm² `1 + βp_i² ≤ σ` (and the dense path takes the explicit
///   one whenever `σ > 10⁴`, so for every huge row).
///
/// When `γ²‖ĝ‖⁴` overflows (with `γ` near 1: `‖ĝ‖² ≳ 10¹⁵⁴`), every row norm is `∞`, Gram–Schmidt
/// takes each row as dependent and zeroes it, and a zero row of `V` stays zero (`p_i = 0` from
/// then on): the state is finite, `λ` huge, but the sketch has lost every direction for good and
/// Oja-SON has become OGD with step `1/α` (measured: one row of `1e80`–`1e95` values after
/// 3–12 ordinary ones left all three directions of `m = 3` zero; FD's `10²⁰⁰` let it through). With
/// `‖ĝ‖² ≤ 10¹⁵⁰` for any `γ ≤ 1`: `σ ≤ (1 + 10¹⁵⁰)² ≈ 10³⁰⁰`, so every norm, `σ_k` and `x_k²`
/// is finite and `1/σ_k ≥ 10⁻³⁰⁰` stays a normal number (no underflow to 0 in the factor's
/// `x_k/σ_k` and `D_k^{−½}`); `tλ ≤ t·10¹⁵⁰` and `H = 1/(α + tλ)` stay finite for `t < 10¹⁵⁰`.
///
/// What the bound does not refuse: a row that dominates the sketch (`γ|p_i|‖ĝ‖ ≳ 10¹⁰`, at any
/// scale) rotates every direction to within `10⁻¹⁰` of `ĝ`, and Gram–Schmidt keeps `ĝ`'s
/// direction and drops the others as dependent (its relative threshold `1e-10`): that is Oja's
/// step itself, whose size `γpĝᵀ` is not scale-free, not an overflow.
pub const MAX_OJA_ROW_SQUARED_NORM: f64 = 1e150;

/// Refuses a curvature row whose squared norm `row_norm2 = scale²‖x‖²` is NaN or above `max`
/// ([`MAX_ROW_SQUARED_NORM`] for FD and RP, [`MAX_OJA_ROW_SQUARED_NORM`] for Oja): the one rule
/// of every sketched curvature ([`FdCurvature`], [`RpCurvature`], [`OjaCurvature`] and the
/// sparse-time learners), checked before the sketch changes. (RP's `S` and Oja's eigenvalues
/// used to take such a row and fail after, leaving `±∞`/NaN in the state: a mixture with
/// `--curvature rp` on rows of `±1e300` saved a model that did not load.)
pub(crate) fn check_row_norm(row_norm2: f64, max: f64) -> Result<(), SketchError> {
    if row_norm2.is_nan() || row_norm2 > max {
        return Err(SketchError::NonFinite(format!(
            "a feature value is too large for the sketch: the example's sketch row (its \
             gradient, a multiple of the features) has squared norm {row_norm2:.3e}, NaN or above \
             {max:e}, where the sketch's update would overflow; divide the large feature \
             columns by a constant (e.g. scale each to unit range) and train again"
        )));
    }
    Ok(())
}

/// [`check_row_norm`] of `scale·x` for RP, Oja and the sketched AdaGrads (Ada-FD, Sketchy:
/// `linear/fd_adagrad.rs`), which need no `‖x‖²` of their own: the sum
/// of squares is [`dot4`](crate::data::dot4::dot4)'s four-accumulator pass rather than
/// `Row::squared_norm`'s one-accumulator loop, whose latency-bound chain cost dense Oja-SON
/// about 3 % of its time (d = 1000, m = 10, from the cache; stop 50's review). Only the order of
/// the additions differs, which can move the refusal only for a row within rounding of the bound.
pub(crate) fn check_scaled_row(x: Row<'_>, scale: f64, max: f64) -> Result<(), SketchError> {
    let values = match x {
        Row::Dense(v) => v,
        Row::Sparse { values, .. } => values,
    };
    check_row_norm(scale * scale * crate::data::dot4::dot4(values, values), max)
}

/// Calls `f` with `scale·g` (same sparsity pattern).
fn with_scaled<R>(g: Row<'_>, scale: f64, f: impl FnOnce(Row<'_>) -> R) -> R {
    match g {
        Row::Dense(v) => {
            let scaled: Vec<f64> = v.iter().map(|x| x * scale).collect();
            f(Row::Dense(&scaled))
        }
        Row::Sparse { indices, values } => {
            let scaled: Vec<f64> = values.iter().map(|x| x * scale).collect();
            f(Row::Sparse {
                indices,
                values: &scaled,
            })
        }
    }
}

fn check_alpha(name: &str, a: f64) -> Result<(), SketchError> {
    if !(a.is_finite() && a > 0.0) {
        return Err(SketchError::InvalidParameter(format!(
            "{name} must be finite and > 0, got {a}"
        )));
    }
    Ok(())
}

/// FD-SON / RFD-SON curvature: an FD or RFD sketch plus the Cholesky factor of the small
/// `ℓ × ℓ` matrix `αI + BBᵀ`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FdCurvature {
    sketch: FrequentDirections,
    /// α of FD-SON (unused for RFD, whose α comes from the sketch).
    alpha: f64,
    /// `BBᵀ` of the filled rows, stride `capacity`.
    gram: Vec<f64>,
    /// Cholesky factor of `αI + BBᵀ`, stride `capacity`; or, when `explicit` is set, the
    /// explicit inverse `(αI + BBᵀ)⁻¹` computed from a clamped eigendecomposition (the fallback
    /// when rounding has made the Cholesky factorisation fail on badly scaled data).
    chol: Vec<f64>,
    explicit: bool,
    #[serde(skip)]
    z: Vec<f64>,
}

impl FdCurvature {
    /// FD-SON: `A = αI + BᵀB` with an FD sketch of size `m ≥ 1` and `α > 0`.
    pub fn fd(dim: usize, m: usize, variant: FdVariant, alpha: f64) -> Result<Self, SketchError> {
        check_alpha("alpha", alpha)?;
        Ok(Self::wrap(FrequentDirections::fd(dim, m, variant)?, alpha))
    }

    /// RFD-SON: `A = αI + BᵀB` with `α = α₀ + Σδ/2` from an RFD sketch; `α₀ > 0` (A must be
    /// invertible before the first shrink).
    pub fn rfd(dim: usize, m: usize, variant: FdVariant, alpha0: f64) -> Result<Self, SketchError> {
        check_alpha("alpha0 (RFD-SON needs alpha0 > 0)", alpha0)?;
        Ok(Self::wrap(
            FrequentDirections::rfd(dim, m, variant, alpha0)?,
            alpha0,
        ))
    }

    fn wrap(sketch: FrequentDirections, alpha: f64) -> Self {
        let cap = sketch.capacity();
        FdCurvature {
            sketch,
            alpha,
            gram: vec![0.0; cap * cap],
            chol: vec![0.0; cap * cap],
            explicit: false,
            z: Vec::new(),
        }
    }

    /// The underlying sketch.
    pub fn sketch(&self) -> &FrequentDirections {
        &self.sketch
    }

    fn refactor(&mut self) -> Result<(), SketchError> {
        let (l, cap, a) = (
            self.sketch.filled_rows(),
            self.sketch.capacity(),
            self.alpha(),
        );
        self.explicit = shifted_gram_factor(&self.gram, l, cap, a, &mut self.chol)?;
        Ok(())
    }

    /// `z ← (αI + BBᵀ)⁻¹ z`.
    fn solve_small(&self, z: &mut [f64]) {
        let (l, cap) = (self.sketch.filled_rows(), self.sketch.capacity());
        if self.explicit {
            let y: Vec<f64> = (0..l)
                .map(|i| dot(&self.chol[i * cap..i * cap + l], &z[..l]))
                .collect();
            z[..l].copy_from_slice(&y);
        } else {
            cholesky_solve_by_rows(&self.chol, l, cap, z);
        }
    }

    /// Inserts `scale·x` given `z = Bx` for the rows held before, and leaves in `z` the
    /// projection `B'x` onto the rows held after. The new row's Gram entries are `scale·z_i`
    /// and `scale²‖x‖²` (written before the insert, in row `r` = the rows held): when the row
    /// is simply appended, that is the new Gram matrix and `B'x = [z; scale‖x‖²]` (no pass
    /// over the buffer); when it fills the buffer, the shrink decomposes this Gram matrix
    /// instead of forming `BBᵀ` from the rows again. After a shrink the Gram matrix of the
    /// kept rows and `B'x` are recomputed from the rows (so rounding never accumulates from
    /// one shrink to the next). A zero row leaves entries in row `r` that nothing reads (the
    /// next appended row overwrites them).
    fn insert_with_projection(
        &mut self,
        x: Row<'_>,
        scale: f64,
        z: &mut Vec<f64>,
    ) -> Result<(), SketchError> {
        let xx = x.squared_norm();
        let row_norm2 = scale * scale * xx;
        check_row_norm(row_norm2, MAX_ROW_SQUARED_NORM)?;
        let (shrinks, r) = (self.sketch.shrinks(), self.sketch.filled_rows());
        let cap = self.sketch.capacity();
        for i in 0..r {
            let v = scale * z[i];
            self.gram[i * cap + r] = v;
            self.gram[r * cap + i] = v;
        }
        self.gram[r * cap + r] = row_norm2;
        self.sketch
            .insert_scaled_with_gram(x, scale, Some((&self.gram, cap)))?;
        let (l, d) = (self.sketch.filled_rows(), self.sketch.dim());
        if self.sketch.shrinks() != shrinks {
            fd_products::gram(self.sketch.rows(), l, d, &mut self.gram, cap);
            self.project(x, z);
        } else if l == r + 1 {
            z.push(scale * xx);
            // α changes only at a shrink: the factor gains one bordered row, the same bits
            // as a refactorisation.
            let a = self.alpha();
            if !self.explicit && shifted_gram_append_row(&self.gram, r, cap, a, &mut self.chol) {
                return Ok(());
            }
        } else {
            return Ok(()); // a zero row: nothing changed
        }
        self.refactor()
    }

    /// `target += coef·A⁻¹x` given `z = Bx` (overwritten).
    fn solve_with_projection(&self, x: Row<'_>, z: &mut [f64], coef: f64, target: &mut [f64]) {
        let (l, d) = (self.sketch.filled_rows(), self.sketch.dim());
        self.solve_small(z);
        let f = coef / self.alpha();
        x.axpy_into(f, target);
        fd_products::add_rows_transposed(self.sketch.rows(), l, d, &z[..l], -f, target);
    }

    /// `z = B x` for the `ℓ` filled rows. A row with many non-zeros is first scattered into a
    /// dense buffer so that the ℓ dot products run as contiguous (vectorised) loops instead of
    /// gathers.
    fn project(&self, x: Row<'_>, z: &mut Vec<f64>) {
        let (l, d) = (self.sketch.filled_rows(), self.sketch.dim());
        rows_dot(self.sketch.rows(), l, d, x, z);
    }
}

/// `z = B x` for the first `l` rows of a row-major `B` (`l × d`). A dense row (or a sparse row
/// with many non-zeros, first scattered into a dense buffer) goes through faer's
/// matrix–vector kernel; a short sparse row through `l` gathers.
fn rows_dot(b: &[f64], l: usize, d: usize, x: Row<'_>, z: &mut Vec<f64>) {
    z.clear();
    match x {
        Row::Dense(v) if v.len() == d => {
            z.resize(l, 0.0);
            rows_times_vector(b, l, d, v, z);
        }
        Row::Sparse { values, .. } if l > 1 && values.len() * 4 > d => {
            DENSE_SCRATCH.with(|cell| {
                let mut dense = cell.borrow_mut();
                dense.resize(d, 0.0);
                x.write_dense(&mut dense);
                z.resize(l, 0.0);
                rows_times_vector(b, l, d, &dense, z);
            });
        }
        _ => {
            z.resize(l, 0.0);
            x.dot_rows(b, d, z);
        }
    }
}

impl Curvature for FdCurvature {
    fn dim(&self) -> usize {
        self.sketch.dim()
    }

    /// FD's bound on `scale²‖g‖²`, summed as the insert sums it (`Row::squared_norm`).
    fn check_row(&self, g: Row<'_>, scale: f64) -> Result<(), SketchError> {
        check_row_norm(scale * scale * g.squared_norm(), MAX_ROW_SQUARED_NORM)
    }

    fn update(&mut self, g: Row<'_>, scale: f64) -> Result<(), SketchError> {
        let mut z = std::mem::take(&mut self.z);
        self.project(g, &mut z);
        let r = self.insert_with_projection(g, scale, &mut z);
        self.z = z;
        r
    }

    fn inv_quad(&self, x: Row<'_>) -> f64 {
        let mut z = Vec::with_capacity(self.sketch.filled_rows());
        self.project(x, &mut z);
        let zz = z.clone();
        self.solve_small(&mut z);
        (x.squared_norm() - dot(&zz, &z)) / self.alpha()
    }

    fn add_solve(&mut self, x: Row<'_>, coef: f64, target: &mut [f64]) {
        let mut z = std::mem::take(&mut self.z);
        self.project(x, &mut z);
        self.solve_with_projection(x, &mut z, coef, target);
        self.z = z;
    }

    fn update_and_solve(
        &mut self,
        x: Row<'_>,
        scale: f64,
        coef: f64,
        target: &mut [f64],
    ) -> Result<(), SketchError> {
        let mut z = std::mem::take(&mut self.z);
        self.project(x, &mut z);
        let r = self.insert_with_projection(x, scale, &mut z);
        if r.is_ok() {
            self.solve_with_projection(x, &mut z, coef, target);
        }
        self.z = z;
        r
    }

    fn alpha(&self) -> f64 {
        if self.sketch.is_regularized() {
            self.sketch.alpha()
        } else {
            self.alpha
        }
    }
}

/// RP-SON curvature: `S` and `H = (αI + SSᵀ)⁻¹` from a [`RandomProjection`] sketch.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RpCurvature {
    sketch: RandomProjection,
    #[serde(skip)]
    z: Vec<f64>,
}

impl RpCurvature {
    /// Sketch size `m ≥ 0`, `α > 0`, seed of the Gaussian draws.
    pub fn new(dim: usize, m: usize, alpha: f64, seed: u64) -> Result<Self, SketchError> {
        Ok(RpCurvature {
            sketch: RandomProjection::new(dim, m, alpha, seed)?,
            z: Vec::new(),
        })
    }

    /// The underlying sketch.
    pub fn sketch(&self) -> &RandomProjection {
        &self.sketch
    }

    /// Returns `(z, Hz)` with `z = Sx`.
    fn project(&self, x: Row<'_>, z: &mut Vec<f64>) -> Vec<f64> {
        let (m, d) = (self.sketch.sketch_size(), self.sketch.dim());
        let (s, h) = (self.sketch.s(), self.sketch.h());
        rows_dot(s, m, d, x, z);
        (0..m).map(|i| dot(&h[i * m..(i + 1) * m], z)).collect()
    }
}

impl Curvature for RpCurvature {
    fn dim(&self) -> usize {
        self.sketch.dim()
    }

    fn check_row(&self, g: Row<'_>, scale: f64) -> Result<(), SketchError> {
        check_scaled_row(g, scale, MAX_ROW_SQUARED_NORM)
    }

    fn update(&mut self, g: Row<'_>, scale: f64) -> Result<(), SketchError> {
        self.check_row(g, scale)?;
        with_scaled(g, scale, |row| self.sketch.insert(row))
    }

    fn inv_quad(&self, x: Row<'_>) -> f64 {
        let mut z = Vec::new();
        let hz = self.project(x, &mut z);
        (x.squared_norm() - dot(&z, &hz)) / self.sketch.alpha()
    }

    fn add_solve(&mut self, x: Row<'_>, coef: f64, target: &mut [f64]) {
        let mut z = std::mem::take(&mut self.z);
        let hz = self.project(x, &mut z);
        let (m, d) = (self.sketch.sketch_size(), self.sketch.dim());
        let f = coef / self.sketch.alpha();
        x.axpy_into(f, target);
        add_rows_transposed(self.sketch.s(), m, d, &hz, -f, target);
        self.z = z;
    }

    fn alpha(&self) -> f64 {
        self.sketch.alpha()
    }
}

/// Oja-SON curvature: `S = (tΛ)^½V` with orthonormal `V`, so
/// `Sᵀ(αI + SSᵀ)⁻¹S = Σ_i tλ_i/(α + tλ_i) · v_i v_iᵀ`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OjaCurvature {
    sketch: OjaSketch,
    alpha: f64,
}

impl OjaCurvature {
    /// Sketch size `m ≥ 0` (m = 0: projected OGD with step `1/α`), `α > 0`, learning-rate constant
    /// `c` of `γ_t = min(c/t, 1)`, seed of the initial directions.
    pub fn new(dim: usize, m: usize, alpha: f64, c: f64, seed: u64) -> Result<Self, SketchError> {
        Ok(OjaCurvature {
            sketch: OjaSketch::new(dim, m, alpha, c, seed)?,
            alpha,
        })
    }

    /// The underlying sketch.
    pub fn sketch(&self) -> &OjaSketch {
        &self.sketch
    }

    /// Coefficients `c_i = tλ_i/(α + tλ_i) · (v_i·x)`.
    fn coefficients(&self, x: Row<'_>) -> Vec<f64> {
        let (m, d) = (self.sketch.sketch_size(), self.sketch.dim());
        let mut vx = Vec::with_capacity(m);
        rows_dot(self.sketch.eigenvectors(), m, d, x, &mut vx);
        self.scale_coefficients(&mut vx);
        vx
    }

    /// `Vx` (in `c`) to the coefficients `c_i = tλ_i/(α + tλ_i) · (v_i·x)`.
    fn scale_coefficients(&self, c: &mut [f64]) {
        let (lam, t) = (self.sketch.eigenvalues(), self.sketch.t() as f64);
        for (ci, l) in c.iter_mut().zip(lam) {
            let tl = t * l;
            *ci *= tl / (self.alpha + tl);
        }
    }

    /// `target += coef·A⁻¹x` with the coefficients `c` of `x`.
    fn solve_with(&self, x: Row<'_>, c: &[f64], coef: f64, target: &mut [f64]) {
        let (d, f) = (self.sketch.dim(), coef / self.alpha);
        x.axpy_into(f, target);
        add_rows_transposed(self.sketch.eigenvectors(), c.len(), d, c, -f, target);
    }
}

impl Curvature for OjaCurvature {
    fn dim(&self) -> usize {
        self.sketch.dim()
    }

    fn check_row(&self, g: Row<'_>, scale: f64) -> Result<(), SketchError> {
        check_scaled_row(g, scale, MAX_OJA_ROW_SQUARED_NORM)
    }

    fn update(&mut self, g: Row<'_>, scale: f64) -> Result<(), SketchError> {
        self.check_row(g, scale)?;
        with_scaled(g, scale, |row| self.sketch.insert(row))
    }

    fn inv_quad(&self, x: Row<'_>) -> f64 {
        let (d, v) = (self.sketch.dim(), self.sketch.eigenvectors());
        let c = self.coefficients(x);
        let proj: f64 = c
            .iter()
            .enumerate()
            .map(|(i, ci)| ci * x.dot(&v[i * d..(i + 1) * d]))
            .sum();
        (x.squared_norm() - proj) / self.alpha
    }

    fn add_solve(&mut self, x: Row<'_>, coef: f64, target: &mut [f64]) {
        let c = self.coefficients(x);
        self.solve_with(x, &c, coef, target);
    }

    /// The sketch update computes `V'x` in its pass over `V` when it can
    /// ([`OjaSketch::insert_projecting`]), saving the solve's own pass.
    fn update_and_solve(
        &mut self,
        x: Row<'_>,
        scale: f64,
        coef: f64,
        target: &mut [f64],
    ) -> Result<(), SketchError> {
        self.check_row(x, scale)?;
        let d = self.sketch.dim();
        let mut c = vec![0.0; self.sketch.sketch_size()];
        let sketch = &mut self.sketch;
        let projected = with_scaled(x, scale, |g| {
            sketch.insert_projecting(g, x.contiguous(d), &mut c)
        })?;
        if projected {
            self.scale_coefficients(&mut c);
        } else {
            c = self.coefficients(x);
        }
        self.solve_with(x, &c, coef, target);
        Ok(())
    }

    fn alpha(&self) -> f64 {
        self.alpha
    }
}

/// The sketches merged ([`crate::merge::Merge`] for [`FrequentDirections`]: FD's bound holds
/// for the union), FD-SON's `α` must agree, and `αI + BBᵀ` is refactored.
impl crate::merge::Merge for FdCurvature {
    fn check_merge(&self, other: &Self, base: Option<&Self>) -> crate::merge::MergeResult {
        crate::merge::with_base(self, other, base, |a, b| {
            crate::merge::same("alpha", a.alpha.to_bits(), b.alpha.to_bits())
        })?;
        let base = base.map(|g| &g.sketch);
        crate::merge::Merge::check_merge(&self.sketch, &other.sketch, base)
    }

    fn merge(&mut self, other: &Self, base: Option<&Self>) -> Result<(), crate::merge::MergeError> {
        crate::merge::Merge::check_merge(self, other, base)?;
        crate::merge::Merge::merge(&mut self.sketch, &other.sketch, base.map(|b| &b.sketch))?;
        let (l, cap, d) = (
            self.sketch.filled_rows(),
            self.sketch.capacity(),
            self.sketch.dim(),
        );
        let mut g = vec![0.0; l * l];
        gram_rows(self.sketch.rows(), l, d, &mut g);
        self.gram.iter_mut().for_each(|x| *x = 0.0);
        for i in 0..l {
            self.gram[i * cap..i * cap + l].copy_from_slice(&g[i * l..(i + 1) * l]);
        }
        Ok(self.refactor()?)
    }
}
