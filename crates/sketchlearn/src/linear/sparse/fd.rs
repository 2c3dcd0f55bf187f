//! Sparse FD-SON and RFD-SON with the doubling ("epoch") buffer (SON paper Appendix G.2,
//! Algorithms 8–12, with the Gram–Schmidt of Algorithm 13).
//!
//! The dense reference is `Newton<FdCurvature>` over a doubling FD/RFD sketch
//! ([`FdVariant::Doubling`](crate::sketch::FdVariant), the CLI's `fd-fast`/`rfd-fast`): a buffer
//! `B` of up to `2m` rows; a non-zero to-sketch row `ĝ` is appended; when the buffer is full it
//! is shrunk by `δ = λ_m` (the `m`-th largest eigenvalue of `BBᵀ`) to the `keep ≤ m − 1` rows
//! `√(λ_i − δ)·v_i` (RFD: `α ← α + δ/2`), and `A = αI + BᵀB`, `H = (αI + BBᵀ)⁻¹` by Cholesky.
//!
//! # Representation
//!
//! * `B = [diag(σ)·V_{:k}; G]`: `V = F·Z` (`m` orthonormal rows, `F ∈ ℝ^{m×m}`, `Z` the lazily
//!   stored `m × d` matrix of [`columns`](super::columns)), of which the first `k` carry the
//!   shrunk rows `σ_i = √(λ_i − δ)` and the others only complete the basis (the paper's `D = 0`
//!   rows); `G` holds the `r` raw rows appended since the last shrink, stored sparsely with
//!   `u_r = Zĝ_r`.
//! * `w = w̄ + Zᵀb + Gᵀc`: a step `w += κA⁻¹x = (κ/α)(x − Bᵀ H Bx)` is `w̄ += (κ/α)x` on the
//!   example's coordinates, `b −= (κ/α)Fᵀ(σ∘h_top)` and `c −= (κ/α)h_G` with `h = H·Bx`: no
//!   coordinate outside the example is touched (the `Gᵀc` part is folded into `w̄` once per
//!   epoch, when `G` is emptied).
//! * `Bx = [σ_i(Fz)_i; Gx]` with `z = Zx` gathered from the example's columns and `Gx` by
//!   sorted merges with the stored rows; the Gram matrix `BBᵀ` gains one row per append
//!   (`[σ∘(F·Zĝ); G ĝ; ‖ĝ‖²]`) and its Cholesky factor one bordered row (`O(m²)`, the same
//!   arithmetic as the dense learner's full refactorisation).
//!
//! # Shrink (Algorithms 11–12, in the `V` basis)
//!
//! With `M = GVᵀ` (`M_r = F·u_r`), `G − MV = LQ̂` by Algorithm 13 on `P = [−M, I_r]` with the Gram
//! matrix of `[V; G]`, `[[I, Mᵀ], [M, GGᵀ]]` (known: no `d`-sized work); `Q̂ = Q₁V + Q₂G` has
//! orthonormal rows orthogonal to `V`. Then `BᵀB` restricted to `span(V, Q̂)` is
//! `C = diag(σ², 0) + [Mᵀ; Lᵀ][M, L]` (size `m + r'`), whose top-`m` eigenvectors `U` give the
//! new directions `V' = (U₁ᵀ + U₂ᵀQ₁)F·Z + U₂ᵀQ₂·G = N₁Z + N₂G` with the same eigenvalues as
//! the dense learner's `BBᵀ` (the kept ones are unique up to sign). Working in the `V` basis
//! instead of the paper's `Z` basis (Gram matrix `ZZᵀ`) avoids the `ε·ρ²` rounding of `ZZᵀ`.
//! * Usually `F ← N₁`, `Z ← Z + AG` with `A = N₁⁻¹N₂` (only `G`'s columns change), and
//!   `w̄ += Gᵀ(c − Aᵀb)` keeps `w`.
//! * When `N₁` is singular or badly conditioned (condition number above 1e6), the new basis is
//!   taken directly: `Z ← N₁Z` lazily (a rebase with transfer `w̄ ← w̄ + Zᵀb`, `b ← 0`), then
//!   `Z += N₂G` and `w̄ += Gᵀc` on `G`'s columns, `F ← I`.
//!
//! **Precision.** The residuals `G − MV` are orthonormalised through a Gram matrix, whose
//! rounding (`ε·S²` on squared norms of size `S²`) costs relative accuracy `ε·(S/L)²` on a
//! residual of norm `L`: exactly dependent rows (repeated examples) are recognised at `L ≤ 1e-6·S`
//! (`gram_schmidt::GRAM_DEPENDENT`), and nearly dependent ones lose digits. With
//! `d ≫ m` and rows in general position the learner agrees with the dense one to 1e-9 (tested);
//! with repeated rows to about 1e-8; when `d < 2m` the buffer's rows are necessarily dependent,
//! the agreement degrades badly, and the constructor refuses (the dense learner is cheap there).
//!
//! **Data touching few columns.** A large `d` does not mean the data span many dimensions: a
//! low-dimensional set hashed into `2^b` weights touches a handful of columns. Then `V` soon
//! nearly spans the data, most raw rows are nearly dependent, the digits lost in their residual
//! directions make `V` drift from orthonormal, and the drift feeds itself (a truly dependent row
//! shows a residual of the size of the drift, which passes as a new direction): magic04 in VW
//! format (10 features and a constant in `2^18` weights) drove the predictions to 1e7 and the
//! progressive error to 0.54 (dense learner: 0.2115). So after a shrink that met a nearly
//! dependent row (residual below 1e-3 of its norm), when at most `64m` columns were ever touched,
//! `K = ZZᵀ` is computed exactly from those columns (the never-touched ones in closed form,
//! [`LazyColumns::exact_gram`](super::columns)), and `V` is re-orthonormalised against it
//! (`F ← L⁻¹F`, `LLᵀ = FKFᵀ`) when `max|VVᵀ − I|` exceeds 1e-7 — below the 1e-6 dependency
//! threshold, so the drift can no longer pass for a residual. With it the sparse learner agrees
//! with the dense one on magic04 to 1e-11 over the whole file, `O(m²)` per touched column in those
//! shrinks only (w8a: about 10 % more time). Data touching more than `64m` columns and yet
//! confined to few dimensions are not covered.
//!
//! **Cost on high-dimensional data.** The fast path needs `N₁` well conditioned, and on text it
//! almost never is: on r8_earn_vs_rest (m = 10) all but one of about 700 shrinks take the direct
//! path, and `N₁`'s singular values are typically six near 1, two or three between 1e-2 and 1e-4
//! and one below 1e-8 — kept directions made of new words lie (nearly) in the span of `G` alone,
//! and no `F'(Z + AG)` with a well-conditioned `F'` can express a direction without a `Z` part.
//! So every shrink changes the basis, and each column touched afterwards pays one `O(m²)`
//! catch-up (two for an epoch of a closed group) instead of `O(m)`: measured 13 µs per example at
//! m = 10, nnz = 50 (`sketchlearn-repro sparse-scaling`), about 10× sparse Oja. The raw rows' products `Gx`
//! go through an inverted index (`row_index::RowIndex`).
//!
//! As for Oja, a rebase `Z ← FZ`, `F ← I`, `w̄ ← w̄ + Zᵀb + Gᵀc` is made when `V = FZ` cancels
//! (`‖F‖²_F·tr(ZZᵀ)/m² > 100`) or `w̄ᵀx` and the rest of `p` cancel by a factor 1000.
//! Cost per example `O(m² + m·nnz)` amortised (the shrink, `O(m³ + m·Σnnz(G))`, happens at most
//! every `m + 1` appends).

use super::axpy::axpy;
use super::columns::{Init, LazyColumns, W, Z};
use super::gram_schmidt::{decompose, GRAM_DEPENDENT};
use super::row_index::{sparse_dot, RowIndex};
use super::{check_params, for_each_nz, fused_write, projection};
use crate::linalg::{cholesky_solve_in_place, dot, shifted_gram_factor, SymEigen};
use crate::linear::{check_example, weight_ok, LearnError, NewtonParams, OnlineLearner};
use crate::sketch::SketchError;
use crate::Row;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// `ρ²` above which the basis is changed (as Oja's).
const REBASE_RHO2: f64 = 1e2;
/// Largest `|VVᵀ − I|` entry tolerated after a shrink before `V` is re-orthonormalised (on
/// data touching few columns; see [`SparseFd::reorthonormalize`]).
const MAX_DRIFT: f64 = 1e-7;
/// Residual norm (relative to the row's norm) below which a raw row counts as nearly dependent
/// on `V` and the rows before it, so that the shrink checks `V`'s orthonormality.
const NEAR_DEPENDENT: f64 = 1e-3;
/// Most touched columns for which the exact `ZZᵀ` is computed after such a shrink (per `m`).
const FEW_PER_ROW: usize = 64;
/// Condition number of `N₁` above which the shrink takes the new basis directly.
const MAX_COND: f64 = 1e6;

/// One raw row of the buffer: `ĝ` (sparse) and `u = Zĝ` at the time it was appended (kept
/// current through rebases).
#[derive(Clone, Debug, Serialize, Deserialize)]
struct RawRow {
    indices: Vec<u32>,
    values: Vec<f64>,
    u: Vec<f64>,
}

/// Sparse-time FD-SON / RFD-SON (doubling buffer of `2m` rows).
///
/// ```
/// use sketchlearn::linear::sparse::SparseFd;
/// use sketchlearn::linear::{NewtonParams, OnlineLearner};
/// use sketchlearn::Row;
/// // RFD-SON, m = 4, α₀ = 1, over 2^22 features.
/// let mut fd = SparseFd::rfd(1 << 22, 4, 1.0, 3, NewtonParams::default()).unwrap();
/// for i in 0..30u32 {
///     let x = [i % 7, 1000 + i % 5, 4_000_000];
///     fd.learn(Row::Sparse { indices: &x, values: &[1.0, 0.5, 1.0] }, 1.0, 1.0).unwrap();
/// }
/// assert!(fd.predict(Row::Sparse { indices: &[4_000_000], values: &[1.0] }) > 0.0);
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SparseFd {
    params: NewtonParams,
    /// FD-SON's α, or RFD-SON's α₀.
    alpha: f64,
    regularized: bool,
    m: usize,
    cols: LazyColumns,
    f: Vec<f64>,
    active: Vec<bool>,
    trk: f64,
    /// `σ_i` of the first `k` rows of `V`.
    sigma: Vec<f64>,
    k: usize,
    g: Vec<RawRow>,
    c: Vec<f64>,
    b: Vec<f64>,
    /// `BBᵀ` of the `ℓ = k + r` rows, stride `2m`.
    gram: Vec<f64>,
    /// Cholesky factor of `αI + BBᵀ`, or the explicit inverse when `explicit`.
    chol: Vec<f64>,
    explicit: bool,
    shrink_total: f64,
    shrinks: u64,
    rows_seen: u64,
    examples: u64,
    pscale: f64,
    #[serde(skip)]
    z: Vec<f64>,
    #[serde(skip)]
    gx: Vec<f64>,
    #[serde(skip)]
    y: Vec<f64>,
    #[serde(skip)]
    h: Vec<f64>,
    #[serde(skip)]
    tmp: Vec<f64>,
    /// `G` by column, for `Gx` (rebuilt from `g` when behind it, e.g. after loading a model).
    #[serde(skip)]
    index: RowIndex,
}

impl SparseFd {
    /// FD-SON: `A = αI + BᵀB`, sketch size `m ≥ 1`, `α > 0` (dense: `FdCurvature::fd(d, m,
    /// FdVariant::Doubling, α)`); `seed` of the initial basis.
    pub fn fd(
        dim: usize,
        m: usize,
        alpha: f64,
        seed: u64,
        params: NewtonParams,
    ) -> Result<Self, LearnError> {
        Self::build(dim, m, alpha, false, seed, params)
    }

    /// RFD-SON: `α = α₀ + Σδ/2`, `α₀ > 0` (dense: `FdCurvature::rfd(d, m,
    /// FdVariant::Doubling, α₀)`).
    pub fn rfd(
        dim: usize,
        m: usize,
        alpha0: f64,
        seed: u64,
        params: NewtonParams,
    ) -> Result<Self, LearnError> {
        Self::build(dim, m, alpha0, true, seed, params)
    }

    fn build(
        dim: usize,
        m: usize,
        alpha: f64,
        regularized: bool,
        seed: u64,
        params: NewtonParams,
    ) -> Result<Self, LearnError> {
        check_params(&params, alpha)?;
        if m == 0 {
            return Err(LearnError::InvalidParameter(
                "sketch size must be at least 1 for fd/rfd curvature".into(),
            ));
        }
        if dim < 2 * m {
            return Err(LearnError::InvalidParameter(format!(
                "the sparse FD learner needs d >= 2m (d = {dim}, m = {m}); for such a small d \
                 use the dense fd-fast/rfd-fast curvature"
            )));
        }
        let rank = super::columns::initial_rank(dim, m);
        let mut f = vec![0.0; m * m];
        for i in 0..rank {
            f[i * m + i] = 1.0;
        }
        let cap = 2 * m;
        Ok(SparseFd {
            params,
            alpha,
            regularized,
            m,
            cols: LazyColumns::new(dim, m, Init::Structured { seed }),
            f,
            active: (0..m).map(|i| i < rank).collect(),
            trk: rank as f64,
            sigma: vec![0.0; m],
            k: 0,
            g: Vec::new(),
            c: Vec::new(),
            b: vec![0.0; m],
            gram: vec![0.0; cap * cap],
            chol: vec![0.0; cap * cap],
            explicit: false,
            shrink_total: 0.0,
            shrinks: 0,
            rows_seen: 0,
            examples: 0,
            pscale: 0.0,
            z: Vec::new(),
            gx: Vec::new(),
            y: Vec::new(),
            h: Vec::new(),
            tmp: Vec::new(),
            index: RowIndex::default(),
        })
    }

    /// The hyper-parameters.
    pub fn params(&self) -> &NewtonParams {
        &self.params
    }

    /// The `α` in use (`α₀ + Σδ/2` for RFD).
    pub fn alpha(&self) -> f64 {
        if self.regularized {
            self.alpha + 0.5 * self.shrink_total
        } else {
            self.alpha
        }
    }

    /// Number of shrinks so far.
    pub fn shrinks(&self) -> u64 {
        self.shrinks
    }

    /// `Σ_t δ_t`.
    pub fn total_shrinkage(&self) -> f64 {
        self.shrink_total
    }

    /// Rows of the buffer (`k + r`), as the dense sketch's `filled_rows`.
    pub fn filled_rows(&self) -> usize {
        self.k + self.g.len()
    }

    /// Number of lazy changes of basis so far.
    pub fn rebases(&self) -> u64 {
        self.cols.rebases()
    }

    /// Examples learned.
    pub fn examples_seen(&self) -> u64 {
        self.examples
    }

    /// Re-orthonormalises the active rows of `V = F·Z` against `K = ZZᵀ` when they have
    /// drifted from orthonormal by more than [`MAX_DRIFT`]: `F ← L⁻¹F` with `LLᵀ = FKFᵀ`.
    fn reorthonormalize(&mut self, kk: &[f64]) {
        let m = self.m;
        let act: Vec<usize> = (0..m).filter(|&i| self.active[i]).collect();
        let na = act.len();
        let mut fk = vec![0.0; na * m];
        for (a, &i) in act.iter().enumerate() {
            for c in 0..m {
                fk[a * m + c] = (0..m).map(|e| self.f[i * m + e] * kk[e * m + c]).sum();
            }
        }
        let mut w = vec![0.0; na * na];
        let mut drift: f64 = 0.0;
        for a in 0..na {
            for b in 0..na {
                let v = dot(
                    &fk[a * m..(a + 1) * m],
                    &self.f[act[b] * m..(act[b] + 1) * m],
                );
                w[a * na + b] = v;
                drift = drift.max((v - if a == b { 1.0 } else { 0.0 }).abs());
            }
        }
        // A NaN drift (non-finite state) is left to the learner's other guards.
        let drifted = drift > MAX_DRIFT;
        if !drifted || crate::linalg::cholesky_in_place(&mut w, na, na).is_err() {
            return;
        }
        for a in 0..na {
            for c in 0..m {
                let mut acc = self.f[act[a] * m + c];
                for b in 0..a {
                    acc -= w[a * na + b] * self.f[act[b] * m + c];
                }
                self.f[act[a] * m + c] = acc / w[a * na + a];
            }
        }
    }

    /// `max |VVᵀ − I|` over the active rows of `V = F·Z` (`O(m²d)`, for tests): how far the
    /// directions are from orthonormal.
    pub fn orthonormality_error(&self) -> f64 {
        let (m, d) = (self.m, self.cols.dim());
        let mut v = vec![0.0; m * d];
        let mut fz = vec![0.0; m];
        self.cols.for_each_column(|j, _, z| {
            mat_vec(&self.f, m, m, z, &mut fz);
            for i in 0..m {
                v[i * d + j] = fz[i];
            }
        });
        let mut worst: f64 = 0.0;
        for a in (0..m).filter(|&a| self.active[a]) {
            for b in (0..m).filter(|&b| self.active[b]) {
                let g = dot(&v[a * d..(a + 1) * d], &v[b * d..(b + 1) * d]);
                worst = worst.max((g - if a == b { 1.0 } else { 0.0 }).abs());
            }
        }
        worst
    }

    /// `BᵀB` as a dense `d × d` matrix (`O(d²)`, for tests).
    pub fn covariance(&self) -> Vec<f64> {
        let (m, d) = (self.m, self.cols.dim());
        let mut rows = vec![0.0; (self.k + self.g.len()) * d];
        let mut fz = vec![0.0; m];
        self.cols.for_each_column(|j, _, z| {
            mat_vec(&self.f, m, m, z, &mut fz);
            for i in 0..self.k {
                rows[i * d + j] = self.sigma[i] * fz[i];
            }
        });
        for (r, row) in self.g.iter().enumerate() {
            for (&j, &v) in row.indices.iter().zip(&row.values) {
                rows[(self.k + r) * d + j as usize] = v;
            }
        }
        let l = self.k + self.g.len();
        let mut cov = vec![0.0; d * d];
        for i in 0..l {
            let r = &rows[i * d..(i + 1) * d];
            for a in 0..d {
                if r[a] != 0.0 {
                    for c in 0..d {
                        cov[a * d + c] += r[a] * r[c];
                    }
                }
            }
        }
        cov
    }

    fn scratch(&mut self) {
        let (m, cap) = (self.m, 2 * self.m);
        self.z.resize(m, 0.0);
        self.y.resize(cap, 0.0);
        self.h.resize(cap, 0.0);
        self.tmp.resize(cap.max(m), 0.0);
    }

    /// `y = Bx = [σ∘(Fz)_{:k}; gx]` into `self.y[..ℓ]`.
    fn project(&mut self, z: &[f64], gx: &[f64]) {
        let (m, k) = (self.m, self.k);
        for i in 0..k {
            self.y[i] = self.sigma[i] * dot(&self.f[i * m..(i + 1) * m], z);
        }
        self.y[k..k + gx.len()].copy_from_slice(gx);
    }

    /// `h = (αI + BBᵀ)⁻¹ y` for `ℓ` rows.
    fn solve_small(&mut self, l: usize) {
        let cap = 2 * self.m;
        if self.explicit {
            for i in 0..l {
                self.h[i] = dot(&self.chol[i * cap..i * cap + l], &self.y[..l]);
            }
        } else {
            self.h[..l].copy_from_slice(&self.y[..l]);
            cholesky_solve_in_place(&self.chol, l, cap, &mut self.h);
        }
    }

    /// Recomputes the factor of `αI + BBᵀ` (eigen fallback as the dense curvature).
    fn refactor(&mut self) -> Result<(), LearnError> {
        let (l, cap, a) = (self.filled_rows(), 2 * self.m, self.alpha());
        self.explicit = shifted_gram_factor(&self.gram, l, cap, a, &mut self.chol)
            .map_err(SketchError::from)?;
        Ok(())
    }

    /// `w += coef·A⁻¹x` (with `Bx` in `self.y`) unless a touched `w̄_j`, `b` or `c` would become
    /// non-finite.
    fn step(&mut self, x: Row<'_>, coef: f64, z: &[f64], gx: &[f64]) -> bool {
        let (m, k) = (self.m, self.k);
        let l = k + gx.len();
        self.project(z, gx);
        self.solve_small(l);
        let f = coef / self.alpha();
        // db = Fᵀ(σ∘h_top) into tmp.
        self.tmp[..m].iter_mut().for_each(|v| *v = 0.0);
        for i in 0..k {
            let si = self.sigma[i] * self.h[i];
            for c in 0..m {
                self.tmp[c] += self.f[i * m + c] * si;
            }
        }
        let mut ok = (0..m).all(|i| weight_ok(self.b[i] - f * self.tmp[i]))
            && (0..gx.len()).all(|r| weight_ok(self.c[r] - f * self.h[k + r]));
        if ok {
            for_each_nz(x, |j, v| ok &= weight_ok(self.cols.slot(j)[W] + f * v));
        }
        if !ok {
            return false;
        }
        for i in 0..m {
            self.b[i] -= f * self.tmp[i];
        }
        for r in 0..gx.len() {
            self.c[r] -= f * self.h[k + r];
        }
        fused_write(&mut self.cols, x, f, None);
        true
    }

    /// Appends `ĝ = s·x` to the buffer (shrinking it when full); keeps `w`; updates `z`, `gx`.
    fn update(
        &mut self,
        x: Row<'_>,
        s: f64,
        xx: f64,
        z: &mut [f64],
        gx: &mut Vec<f64>,
    ) -> Result<(), LearnError> {
        let (m, cap) = (self.m, 2 * self.m);
        self.rows_seen += 1;
        let mut gg = 0.0;
        let (mut indices, mut values) = (Vec::new(), Vec::new());
        for_each_nz(x, |j, v| {
            let g = s * v;
            gg += g * g;
            if g != 0.0 {
                indices.push(j as u32);
                values.push(g);
            }
        });
        if gg == 0.0 {
            return Ok(()); // the dense sketch skips a zero row
        }
        let (k, r, l) = (self.k, self.g.len(), self.filled_rows());
        let u: Vec<f64> = z.iter().map(|v| s * v).collect();
        // New Gram row: [σ∘(F u)_{:k}, s·Gx, ‖ĝ‖²].
        for i in 0..k {
            let v = self.sigma[i] * dot(&self.f[i * m..(i + 1) * m], &u);
            self.gram[l * cap + i] = v;
            self.gram[i * cap + l] = v;
        }
        for q in 0..r {
            let v = s * gx[q];
            self.gram[l * cap + k + q] = v;
            self.gram[(k + q) * cap + l] = v;
        }
        self.gram[l * cap + l] = gg;
        let row_ok = gg.is_finite()
            && u.iter().all(|v| v.is_finite())
            && (0..=l).all(|i| self.gram[l * cap + i].is_finite());
        if !row_ok {
            return Err(LearnError::Diverged(format!(
                "FD update, example {} (non-finite sketch)",
                self.examples
            )));
        }
        if self.index.rows() == self.g.len() {
            self.index.push(&indices, &values);
        }
        self.g.push(RawRow { indices, values, u });
        self.c.push(0.0);
        gx.push(s * xx);
        if l + 1 == cap {
            return self.shrink(z, gx);
        }
        // Bordered Cholesky: the new last row of the factor of αI + BBᵀ.
        let a = self.alpha();
        let mut appended = !self.explicit;
        if appended {
            for j in 0..l {
                let mut t = self.gram[l * cap + j];
                for q in 0..j {
                    t -= self.chol[l * cap + q] * self.chol[j * cap + q];
                }
                self.chol[l * cap + j] = t / self.chol[j * cap + j];
            }
            let mut dd = self.gram[l * cap + l] + a;
            for q in 0..l {
                dd -= self.chol[l * cap + q] * self.chol[l * cap + q];
            }
            if dd > 0.0 && dd.is_finite() {
                self.chol[l * cap + l] = dd.sqrt();
            } else {
                appended = false;
            }
        }
        if !appended {
            self.refactor()?;
        }
        Ok(())
    }

    /// The end of an epoch: shrink the `2m` rows to at most `m − 1` (see the module docs).
    fn shrink(&mut self, z: &mut [f64], gx: &mut Vec<f64>) -> Result<(), LearnError> {
        let (m, cap) = (self.m, 2 * self.m);
        let (k, r) = (self.k, self.g.len());
        let act: Vec<usize> = (0..m).filter(|&i| self.active[i]).collect();
        let ma = act.len();
        // M = G Vᵀ restricted to the active rows of V: M[q][a] = (F u_q)_{act[a]}.
        let mut mm = vec![0.0; r * ma];
        for q in 0..r {
            for (a, &i) in act.iter().enumerate() {
                mm[q * ma + a] = dot(&self.f[i * m..(i + 1) * m], &self.g[q].u);
            }
        }
        // Algorithm 13 on P = [−M, I_r] with the Gram matrix [[I, Mᵀ], [M, GGᵀ]] of [V_a; G].
        let n = ma + r;
        let mut kr = vec![0.0; n * n];
        for a in 0..ma {
            kr[a * n + a] = 1.0;
        }
        for q in 0..r {
            for a in 0..ma {
                kr[(ma + q) * n + a] = mm[q * ma + a];
                kr[a * n + ma + q] = mm[q * ma + a];
            }
            for q2 in 0..r {
                kr[(ma + q) * n + ma + q2] = self.gram[(k + q) * cap + k + q2];
            }
        }
        let mut p = vec![0.0; r * n];
        for q in 0..r {
            for a in 0..ma {
                p[q * n + a] = -mm[q * ma + a];
            }
            p[q * n + ma + q] = 1.0;
        }
        let mut lmat = vec![0.0; r * r];
        let ind = decompose(&mut p, r, n, &kr, Some(&mut lmat), GRAM_DEPENDENT);
        let qi: Vec<usize> = (0..r).filter(|&q| ind[q]).collect();
        // A raw row (nearly) in the span of V and the rows before it: its residual direction is
        // known to few digits (see the re-orthonormalisation below).
        let near_dependent = (0..r).any(|q| {
            lmat[q * r + q] <= NEAR_DEPENDENT * self.gram[(k + q) * cap + k + q].max(0.0).sqrt()
        });
        let rr = qi.len();
        // C = diag(σ², 0) + [Mᵀ; Lᵀ][M, L] of size ma + r'.
        let nc = ma + rr;
        let mut col = vec![0.0; r * nc]; // [M, L_ind] (r × nc)
        for q in 0..r {
            col[q * nc..q * nc + ma].copy_from_slice(&mm[q * ma..(q + 1) * ma]);
            for (t, &qq) in qi.iter().enumerate() {
                col[q * nc + ma + t] = lmat[q * r + qq];
            }
        }
        let mut cmat = vec![0.0; nc * nc];
        for a in 0..nc {
            for b in 0..=a {
                let v: f64 = (0..r).map(|q| col[q * nc + a] * col[q * nc + b]).sum();
                cmat[a * nc + b] = v;
                cmat[b * nc + a] = v;
            }
        }
        for (a, &i) in act.iter().enumerate() {
            if i < k {
                cmat[a * nc + a] += self.sigma[i] * self.sigma[i];
            }
        }
        let mut eig = SymEigen::new(nc);
        eig.compute(&cmat).map_err(SketchError::from)?;
        let (lam, uvec) = (eig.values().to_vec(), eig.vectors().to_vec());
        // The dense rule: δ = λ_m, keep the leading λ_i − δ > tol among the first m − 1.
        let delta = if nc >= m { lam[m - 1].max(0.0) } else { 0.0 };
        let tol = lam.first().copied().unwrap_or(0.0).max(0.0) * cap as f64 * 4.0 * f64::EPSILON;
        let keep = lam
            .iter()
            .take(m - 1)
            .take_while(|&&x| x - delta > tol)
            .count();
        let mnew = m.min(nc);
        // N1 = (U1ᵀ + U2ᵀQ1) F_a (mnew × m), N2 = U2ᵀ Q2 (mnew × r); Q1 = p[qi][..ma], Q2 = p[qi][ma..].
        let mut n1a = vec![0.0; mnew * ma]; // (U1ᵀ + U2ᵀQ1)
        let mut n2 = vec![0.0; mnew * r];
        for i in 0..mnew {
            for a in 0..ma {
                let mut v = uvec[a * nc + i];
                for (t, &qq) in qi.iter().enumerate() {
                    v += uvec[(ma + t) * nc + i] * p[qq * n + a];
                }
                n1a[i * ma + a] = v;
            }
            for q in 0..r {
                n2[i * r + q] = qi
                    .iter()
                    .enumerate()
                    .map(|(t, &qq)| uvec[(ma + t) * nc + i] * p[qq * n + ma + q])
                    .sum();
            }
        }
        let mut n1 = vec![0.0; m * m];
        for i in 0..mnew {
            for c in 0..m {
                n1[i * m + c] = act
                    .iter()
                    .enumerate()
                    .map(|(a, &row)| n1a[i * ma + a] * self.f[row * m + c])
                    .sum();
            }
        }
        let mut n2full = vec![0.0; m * r];
        n2full[..mnew * r].copy_from_slice(&n2);
        // Fast path: A = N1⁻¹N2, F ← N1, Z += AG; else take the basis directly.
        let inv = if mnew == m { invert(&n1, m) } else { None };
        let mut g = std::mem::take(&mut self.g);
        match inv {
            Some(n1inv) => {
                let mut amat = vec![0.0; m * r];
                for i in 0..m {
                    for q in 0..r {
                        amat[i * r + q] =
                            (0..m).map(|c| n1inv[i * m + c] * n2full[c * r + q]).sum();
                    }
                }
                // tr(Z'Z'ᵀ) = tr K + 2Σ_q A_qᵀu_q + Σ_{q,q'} (A_qᵀA_q')(GGᵀ)_{qq'}.
                for q in 0..r {
                    let aq: f64 = (0..m).map(|i| amat[i * r + q] * g[q].u[i]).sum();
                    self.trk += 2.0 * aq;
                    for q2 in 0..r {
                        let aa: f64 = (0..m).map(|i| amat[i * r + q] * amat[i * r + q2]).sum();
                        self.trk += aa * self.gram[(k + q) * cap + k + q2];
                    }
                }
                // w̄ += Gᵀ(c − Aᵀb), Z += AG on G's columns; z += A·gx.
                let coef: Vec<f64> = (0..r)
                    .map(|q| self.c[q] - (0..m).map(|i| amat[i * r + q] * self.b[i]).sum::<f64>())
                    .collect();
                let at = transpose(&amat, m, r);
                for (q, row) in g.iter().enumerate() {
                    let aq = &at[q * m..(q + 1) * m];
                    for (&j, &v) in row.indices.iter().zip(&row.values) {
                        let slot = self.cols.current(j as usize);
                        slot[W] += coef[q] * v;
                        axpy(&mut slot[Z..Z + m], aq, v);
                    }
                }
                for i in 0..m {
                    z[i] += (0..r).map(|q| amat[i * r + q] * gx[q]).sum::<f64>();
                }
                self.f = n1;
                for i in 0..m {
                    self.active[i] = true;
                }
            }
            None => {
                // Z ← N1 Z with the transfer w̄ += Zᵀb (lazy), then Z += N2 G, w̄ += Gᵀc.
                self.cols.rebase(Some(&n1), &self.b);
                self.b.iter_mut().for_each(|v| *v = 0.0);
                let n2t = transpose(&n2full, m, r);
                for (q, row) in g.iter().enumerate() {
                    let nq = &n2t[q * m..(q + 1) * m];
                    for (&j, &v) in row.indices.iter().zip(&row.values) {
                        let slot = self.cols.current(j as usize);
                        slot[W] += self.c[q] * v;
                        axpy(&mut slot[Z..Z + m], nq, v);
                    }
                }
                for i in 0..m {
                    self.tmp[i] = dot(&n1[i * m..(i + 1) * m], z)
                        + (0..r).map(|q| n2full[i * r + q] * gx[q]).sum::<f64>();
                }
                z.copy_from_slice(&self.tmp[..m]);
                self.f.iter_mut().for_each(|v| *v = 0.0);
                for i in 0..m {
                    self.active[i] = i < mnew;
                    if i < mnew {
                        self.f[i * m + i] = 1.0;
                    }
                }
                self.trk = mnew as f64;
            }
        }
        // On data touching few columns (a low-dimensional set, hashed or not) the residuals of
        // the raw rows against V are tiny whenever V nearly spans the data, their directions
        // lose digits in the Gram-matrix Gram–Schmidt, and the loss of orthonormality compounds
        // from shrink to shrink (magic04 with an intercept: prediction error 1e-13 → 1e7 against
        // the dense learner within 3000 examples). There K = ZZᵀ is cheap to compute exactly,
        // and V is re-orthonormalised against it.
        if near_dependent {
            if let Some(kk) = self.cols.exact_gram(FEW_PER_ROW * m) {
                self.reorthonormalize(&kk);
            }
        }
        g.clear();
        self.g = g;
        self.index.clear();
        self.c.clear();
        gx.clear();
        // New top rows σ_i = √(λ_i − δ), i < keep; BBᵀ = diag(σ²).
        self.sigma.iter_mut().for_each(|v| *v = 0.0);
        for i in 0..keep {
            self.sigma[i] = lam[i].max(0.0).sqrt() * (1.0 - delta / lam[i]).max(0.0).sqrt();
        }
        self.k = keep;
        self.gram.iter_mut().for_each(|v| *v = 0.0);
        for i in 0..keep {
            self.gram[i * cap + i] = self.sigma[i] * self.sigma[i];
        }
        self.shrink_total += delta;
        self.shrinks += 1;
        if !self.shrink_total.is_finite() {
            return Err(SketchError::NonFinite("FD shrinkage overflowed".into()).into());
        }
        self.refactor()?;
        self.maybe_rebase(z, false);
        Ok(())
    }

    /// Rebase `Z ← FZ`, `F ← I`, `w̄ ← w̄ + Zᵀb + Gᵀc` when `V = FZ` cancels or when `force`.
    fn maybe_rebase(&mut self, z: &mut [f64], force: bool) {
        let m = self.m;
        let ma = self.active.iter().filter(|&&a| a).count();
        if !force {
            if ma == 0 {
                return;
            }
            let fn2: f64 = self.f.iter().map(|x| x * x).sum();
            if fn2 * self.trk / (ma * ma) as f64 <= REBASE_RHO2 {
                return;
            }
        }
        let mat = self.f.clone();
        for row in self.g.iter_mut() {
            for i in 0..m {
                self.tmp[i] = dot(&mat[i * m..(i + 1) * m], &row.u);
            }
            row.u.copy_from_slice(&self.tmp[..m]);
        }
        for (q, row) in self.g.iter().enumerate() {
            if self.c[q] != 0.0 {
                for (&j, &v) in row.indices.iter().zip(&row.values) {
                    self.cols.slot(j as usize)[W] += self.c[q] * v;
                }
            }
        }
        self.c.iter_mut().for_each(|v| *v = 0.0);
        for i in 0..m {
            self.tmp[i] = dot(&mat[i * m..(i + 1) * m], z);
        }
        z.copy_from_slice(&self.tmp[..m]);
        self.cols.rebase(Some(&mat), &self.b);
        self.b.iter_mut().for_each(|v| *v = 0.0);
        for i in 0..m {
            for c in 0..m {
                self.f[i * m + c] = if i == c && self.active[i] { 1.0 } else { 0.0 };
            }
        }
        self.trk = ma as f64;
    }

    fn learn_inner(
        &mut self,
        x: Row<'_>,
        y: f64,
        weight: f64,
        z: &mut [f64],
        gx: &mut Vec<f64>,
    ) -> Result<f64, LearnError> {
        let super::gather::Gathered { wx, xx, .. } = super::gather::gather(&mut self.cols, x, z);
        gx.clear();
        match x {
            Row::Sparse { indices, values } => {
                if self.index.rows() != self.g.len() {
                    self.index.clear();
                    for row in &self.g {
                        self.index.push(&row.indices, &row.values);
                    }
                }
                gx.resize(self.g.len(), 0.0);
                self.index.products(indices, values, gx);
            }
            Row::Dense(_) => {
                for row in &self.g {
                    gx.push(sparse_dot(&row.indices, &row.values, x));
                }
            }
        }
        let rest = dot(&self.b, z) + dot(&self.c, gx);
        let mut p = wx + rest;
        let flush = super::cancels(wx, rest, &mut self.pscale);
        if p.abs() > self.params.clip {
            let l = self.filled_rows();
            self.project(z, gx);
            self.solve_small(l);
            let q = (xx - dot(&self.y[..l], &self.h[..l])) / self.alpha();
            if let Some(tau) = projection(p, self.params.clip, q, xx, self.alpha()) {
                if !self.step(x, -tau / q, z, gx) {
                    return Err(LearnError::Diverged(format!(
                        "projection step, example {}",
                        self.examples
                    )));
                }
                p -= tau;
            }
        }
        let dl = weight * self.params.loss.derivative(p, y);
        if dl != 0.0 {
            self.update(x, self.params.c.sqrt() * dl, xx, z, gx)?;
            if !self.step(x, -dl, z, gx) {
                return Err(LearnError::Diverged(format!(
                    "Newton step, example {}",
                    self.examples
                )));
            }
        }
        if flush {
            self.maybe_rebase(z, true);
        }
        Ok(p)
    }
}

/// The transpose (row-major `cols × rows`) of a row-major `rows × cols` matrix.
fn transpose(a: &[f64], rows: usize, cols: usize) -> Vec<f64> {
    let mut t = vec![0.0; rows * cols];
    for i in 0..rows {
        for j in 0..cols {
            t[j * rows + i] = a[i * cols + j];
        }
    }
    t
}

/// `y = A x` for a row-major `rows × cols` `A`.
fn mat_vec(a: &[f64], rows: usize, cols: usize, x: &[f64], y: &mut [f64]) {
    for i in 0..rows {
        y[i] = dot(&a[i * cols..(i + 1) * cols], x);
    }
}

/// The inverse of a row-major `m × m` matrix by Gauss–Jordan with partial pivoting, or `None`
/// when it is singular or its condition number (Frobenius norms) exceeds [`MAX_COND`].
fn invert(a: &[f64], m: usize) -> Option<Vec<f64>> {
    let mut w = a.to_vec();
    let mut inv = vec![0.0; m * m];
    for i in 0..m {
        inv[i * m + i] = 1.0;
    }
    for c in 0..m {
        let piv = (c..m).max_by(|&x, &y| w[x * m + c].abs().total_cmp(&w[y * m + c].abs()))?;
        let pv = w[piv * m + c];
        if pv == 0.0 || !pv.is_finite() {
            return None;
        }
        if piv != c {
            for j in 0..m {
                w.swap(c * m + j, piv * m + j);
                inv.swap(c * m + j, piv * m + j);
            }
        }
        for j in 0..m {
            w[c * m + j] /= pv;
            inv[c * m + j] /= pv;
        }
        for r in 0..m {
            if r != c {
                let fct = w[r * m + c];
                if fct != 0.0 {
                    for j in 0..m {
                        w[r * m + j] -= fct * w[c * m + j];
                        inv[r * m + j] -= fct * inv[c * m + j];
                    }
                }
            }
        }
    }
    let na: f64 = a.iter().map(|x| x * x).sum::<f64>().sqrt();
    let ni: f64 = inv.iter().map(|x| x * x).sum::<f64>().sqrt();
    if (na * ni).is_finite() && na * ni <= MAX_COND {
        Some(inv)
    } else {
        None
    }
}

impl OnlineLearner for SparseFd {
    fn dim(&self) -> usize {
        self.cols.dim()
    }

    fn predict(&self, x: Row<'_>) -> f64 {
        let cg: f64 = self
            .g
            .iter()
            .zip(&self.c)
            .map(|(row, c)| c * sparse_dot(&row.indices, &row.values, x))
            .sum();
        (self.cols.score(x, &self.b) + cg).clamp(-self.params.clip, self.params.clip)
    }

    fn learn(&mut self, x: Row<'_>, y: f64, weight: f64) -> Result<f64, LearnError> {
        self.cols.prefetch(x);
        check_example(&x, y, weight, self.cols.dim())?;
        self.examples += 1;
        self.scratch();
        let mut z = std::mem::take(&mut self.z);
        let mut gx = std::mem::take(&mut self.gx);
        let r = self.learn_inner(x, y, weight, &mut z, &mut gx);
        self.z = z;
        self.gx = gx;
        r
    }

    #[inline]
    fn prefetch(&self, x: Row<'_>) {
        self.cols.prefetch(x);
    }

    fn weights(&self) -> Cow<'_, [f64]> {
        let mut w = self.cols.weights(&self.b);
        for (row, c) in self.g.iter().zip(&self.c) {
            for (&j, &v) in row.indices.iter().zip(&row.values) {
                w[j as usize] += c * v;
            }
        }
        Cow::Owned(w)
    }
}
