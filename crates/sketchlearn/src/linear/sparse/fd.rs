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
//!   stored `m × d` matrix of `columns.rs`), of which the first `k` carry the
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
//! # Shrink
//!
//! At the end of an epoch the `2m` rows are shrunk to at most `m − 1` through Algorithms 11–13
//! from small matrices only: see `fd_shrink.rs` for the derivation, the precision
//! of the Gram-matrix Gram–Schmidt and the re-orthonormalisation on data touching few columns.
//!
//! **Cost on high-dimensional data.** The fast path needs `N₁` well conditioned, and on text it
//! almost never is: on r8_earn_vs_rest (m = 10) all but one of about 700 shrinks take the direct
//! path, and `N₁`'s singular values are typically six near 1, two or three between 1e-2 and 1e-4
//! and one below 1e-8 — kept directions made of new words lie (nearly) in the span of `G` alone,
//! and no `F'(Z + AG)` with a well-conditioned `F'` can express a direction without a `Z` part.
//! (That is with `C`'s eigenvectors as the basis's completing rows; taking them from the old
//! basis instead makes `N₁` well conditioned on w8a and r8 at most shrinks: see `fd_shrink.rs`.
//! On the generated stream of random features it does not.)
//! So every shrink changes the basis, and each column touched afterwards pays one `O(m²)`
//! catch-up (two for an epoch of a closed group) instead of `O(m)`: measured 13 µs per example at
//! m = 10, nnz = 50 (`sketchlearn-repro sparse-scaling`), about 10× sparse Oja. The raw rows' products `Gx`
//! go through an inverted index (`row_index::RowIndex`).
//!
//! As for Oja, a rebase `Z ← FZ`, `F ← I`, `w̄ ← w̄ + Zᵀb + Gᵀc` is made when `V = FZ` cancels
//! (`‖F‖²_F·tr(ZZᵀ)/m² > 100`) or `w̄ᵀx` and the rest of `p` cancel by a factor 1000.
//! Cost per example `O(m² + m·nnz)` amortised (the shrink, `O(m³ + m·Σnnz(G))`, happens at most
//! every `m + 1` appends).

use super::columns::{head, Init, LazyColumns};
use super::fd_shrink::ShrinkWork;
use super::for_each_nz;
use super::heads::HeadsCurvature;
use super::newton::{
    check_params, stored_layout, SparseCurvature, SparseNewton, SparseWeights, ToSketch,
};
use super::row_index::{sparse_dot, RowIndex};
use crate::linalg::{cholesky_solve_in_place, dot, shifted_gram_append_row, shifted_gram_factor};
use crate::linear::curvature::{check_row_norm, MAX_ROW_SQUARED_NORM};
use crate::linear::{weight_ok, LearnError, NewtonParams};
use crate::sketch::SketchError;
use crate::Row;
use serde::{Deserialize, Serialize};

/// `ρ²` above which the basis is changed (as Oja's).
const REBASE_RHO2: f64 = 1e2;

/// One raw row of the buffer: `ĝ` (sparse) and `u = Zĝ` at the time it was appended (kept
/// current through rebases).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(super) struct RawRow {
    pub(super) indices: Vec<u32>,
    pub(super) values: Vec<f64>,
    pub(super) u: Vec<f64>,
}

/// Sparse-time FD-SON / RFD-SON (doubling buffer of `2m` rows): the driver [`SparseNewton`]
/// over [`SparseFdCurvature`].
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
pub type SparseFd = SparseNewton<SparseFdCurvature>;

/// The FD/RFD curvature `A = αI + BᵀB` over the doubling buffer `B = [diag(σ)·V_{:k}; G]`,
/// `V = F·Z`, with the weights' extra part `Gᵀc` (see the [module](self) docs).
///
/// With `K` weight vectors over the same sketch (the sparse-time softmax learner, `K` heads in
/// the column store) `c` holds `K` numbers per raw row (`c[q·K + h]` for head `h`) and every
/// change of the columns keeps each `w_h = w̄_h + Zᵀb_h + Gᵀc_h`; the binary learners are the
/// case `K = 1`. (The binary learners' model files list these fields themselves, see
/// `stored_layout!`; the serde derive is the softmax learner's.)
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SparseFdCurvature {
    /// FD-SON's α, or RFD-SON's α₀.
    pub(super) alpha: f64,
    pub(super) regularized: bool,
    pub(super) m: usize,
    pub(super) f: Vec<f64>,
    pub(super) active: Vec<bool>,
    pub(super) trk: f64,
    /// `σ_i` of the first `k` rows of `V`.
    pub(super) sigma: Vec<f64>,
    pub(super) k: usize,
    pub(super) g: Vec<RawRow>,
    pub(super) c: Vec<f64>,
    /// `BBᵀ` of the `ℓ = k + r` rows, stride `2m`.
    pub(super) gram: Vec<f64>,
    /// Cholesky factor of `αI + BBᵀ`, or the explicit inverse when `explicit`.
    pub(super) chol: Vec<f64>,
    pub(super) explicit: bool,
    pub(super) shrink_total: f64,
    pub(super) shrinks: u64,
    pub(super) rows_seen: u64,
    /// `Gx` of the current example.
    #[serde(skip)]
    pub(super) gx: Vec<f64>,
    #[serde(skip)]
    y: Vec<f64>,
    #[serde(skip)]
    pub(super) h: Vec<f64>,
    #[serde(skip)]
    pub(super) tmp: Vec<f64>,
    /// `G` by column, for `Gx` (rebuilt from `g` when behind it, e.g. after loading a model).
    #[serde(skip)]
    pub(super) index: RowIndex,
    /// The shrink's scratch matrices and the spare raw rows (boxed: they are many vectors).
    #[serde(skip)]
    pub(super) work: Option<Box<ShrinkWork>>,
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
        let cols = LazyColumns::new(dim, m, Init::Structured { seed });
        let curv = SparseFdCurvature::new(m, rank, alpha, regularized);
        Ok(SparseNewton::from_parts(params, cols, curv))
    }

    /// The same learner with a buffer of `rows ≥ 2m` rows instead of the paper's `2m`
    /// (dense reference: [`FdVariant::Buffer`](crate::sketch::FdVariant::Buffer)`(rows)`):
    /// shrunk by its `m`-th eigenvalue to at most `m − 1` rows when full, so the shrink, the
    /// basis change it makes and the columns' catch-up after it come every `rows − m + 1`
    /// appends instead of every `m + 1`, at `O(rows²)` per example for the small solves.
    /// Only before the first example.
    ///
    /// ```
    /// use sketchlearn::linear::sparse::SparseFd;
    /// use sketchlearn::linear::NewtonParams;
    /// let fd = SparseFd::rfd(1 << 20, 4, 1.0, 3, NewtonParams::default()).unwrap();
    /// assert_eq!(fd.with_buffer(32).unwrap().buffer_rows(), 32);
    /// ```
    pub fn with_buffer(mut self, rows: usize) -> Result<Self, LearnError> {
        let m = self.curv.m;
        crate::sketch::FdVariant::Buffer(rows)
            .check(m)
            .map_err(|e| LearnError::InvalidParameter(e.to_string()))?;
        if self.curv.rows_seen > 0 {
            return Err(LearnError::InvalidParameter(
                "the FD buffer length is set before the first example".into(),
            ));
        }
        if self.w.cols.dim() < rows {
            return Err(LearnError::InvalidParameter(format!(
                "an FD buffer of {rows} rows needs d >= {rows} (d = {})",
                self.w.cols.dim()
            )));
        }
        self.curv.gram = vec![0.0; rows * rows];
        self.curv.chol = vec![0.0; rows * rows];
        Ok(self)
    }

    /// Rows of the buffer `ℓ` (`2m` unless set by [`with_buffer`](Self::with_buffer)).
    pub fn buffer_rows(&self) -> usize {
        self.curv.cap()
    }

    /// Number of shrinks so far.
    pub fn shrinks(&self) -> u64 {
        self.curv.shrinks
    }

    /// `Σ_t δ_t`.
    pub fn total_shrinkage(&self) -> f64 {
        self.curv.shrink_total
    }

    /// Rows of the buffer (`k + r`), as the dense sketch's `filled_rows`.
    pub fn filled_rows(&self) -> usize {
        self.curv.filled_rows()
    }

    /// `max |VVᵀ − I|` over the active rows of `V = F·Z` (`O(m²d)`, for tests): how far the
    /// directions are from orthonormal.
    pub fn orthonormality_error(&self) -> f64 {
        let (m, d) = (self.curv.m, self.w.cols.dim());
        let mut v = vec![0.0; m * d];
        let mut fz = vec![0.0; m];
        self.w.cols.for_each_column(|j, _, z| {
            mat_vec(&self.curv.f, m, m, z, &mut fz);
            for i in 0..m {
                v[i * d + j] = fz[i];
            }
        });
        let active = &self.curv.active;
        let mut worst: f64 = 0.0;
        for a in (0..m).filter(|&a| active[a]) {
            for b in (0..m).filter(|&b| active[b]) {
                let g = dot(&v[a * d..(a + 1) * d], &v[b * d..(b + 1) * d]);
                worst = worst.max((g - if a == b { 1.0 } else { 0.0 }).abs());
            }
        }
        worst
    }

    /// `BᵀB` as a dense `d × d` matrix (`O(d²)`, for tests).
    pub fn covariance(&self) -> Vec<f64> {
        self.curv.covariance(&self.w.cols)
    }
}

impl SparseFdCurvature {
    /// Rows of the buffer `ℓ` (`2m` for the paper's doubling buffer): the stride of the
    /// stored `ℓ × ℓ` Gram matrix, so a saved model carries its schedule without a field of
    /// its own (models saved before the buffer was selectable have `ℓ = 2m`).
    pub(super) fn cap(&self) -> usize {
        let cap = (self.gram.len() as f64).sqrt() as usize;
        // Rounding of the square root of a perfect square (a corrupt length is caught by the
        // checks on the stored state).
        if (cap + 1) * (cap + 1) <= self.gram.len() {
            cap + 1
        } else {
            cap
        }
    }

    /// An empty buffer of `2m` rows over the basis `F = I` on the first `rank` rows.
    pub(super) fn new(m: usize, rank: usize, alpha: f64, regularized: bool) -> Self {
        let mut f = vec![0.0; m * m];
        for i in 0..rank {
            f[i * m + i] = 1.0;
        }
        let cap = 2 * m;
        SparseFdCurvature {
            alpha,
            regularized,
            m,
            f,
            active: (0..m).map(|i| i < rank).collect(),
            trk: rank as f64,
            sigma: vec![0.0; m],
            k: 0,
            g: Vec::new(),
            c: Vec::new(),
            gram: vec![0.0; cap * cap],
            chol: vec![0.0; cap * cap],
            explicit: false,
            shrink_total: 0.0,
            shrinks: 0,
            rows_seen: 0,
            gx: Vec::new(),
            y: Vec::new(),
            h: Vec::new(),
            tmp: Vec::new(),
            index: RowIndex::default(),
            work: None,
        }
    }

    /// Rows of the buffer (`k + r`).
    pub(super) fn filled_rows(&self) -> usize {
        self.k + self.g.len()
    }

    /// `h = H·Bx` (in `self.h`) and `v = Fᵀ(σ∘h_top)` (in `self.tmp`), so that
    /// `A⁻¹x = (x − Zᵀv − Gᵀh_G)/α`.
    pub(super) fn direction(&mut self, z: &[f64]) {
        let (m, k) = (self.m, self.k);
        let l = k + self.gx.len();
        self.project(z);
        self.solve_small(l);
        self.tmp[..m].iter_mut().for_each(|v| *v = 0.0);
        for i in 0..k {
            let si = self.sigma[i] * self.h[i];
            for c in 0..m {
                self.tmp[c] += self.f[i * m + c] * si;
            }
        }
    }

    /// `y = Bx = [σ∘(Fz)_{:k}; Gx]` into `self.y[..ℓ]`.
    fn project(&mut self, z: &[f64]) {
        let (m, k) = (self.m, self.k);
        for i in 0..k {
            self.y[i] = self.sigma[i] * dot(&self.f[i * m..(i + 1) * m], z);
        }
        self.y[k..k + self.gx.len()].copy_from_slice(&self.gx);
    }

    /// `h = (αI + BBᵀ)⁻¹ y` for `ℓ` rows.
    fn solve_small(&mut self, l: usize) {
        let cap = self.cap();
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
    pub(super) fn refactor(&mut self) -> Result<(), LearnError> {
        let (l, cap, a) = (self.filled_rows(), self.cap(), self.alpha());
        self.explicit = shifted_gram_factor(&self.gram, l, cap, a, &mut self.chol)
            .map_err(SketchError::from)?;
        Ok(())
    }

    /// `Gx` of the current example into `self.gx`.
    fn raw_products(&mut self, x: Row<'_>) {
        self.gx.clear();
        match x {
            Row::Sparse { indices, values } => {
                if self.index.rows() != self.g.len() {
                    self.index.clear();
                    for row in &self.g {
                        self.index.push(&row.indices, &row.values);
                    }
                }
                self.gx.resize(self.g.len(), 0.0);
                self.index.products(indices, values, &mut self.gx);
            }
            Row::Dense(_) => {
                for row in &self.g {
                    self.gx.push(sparse_dot(&row.indices, &row.values, x));
                }
            }
        }
    }

    /// Appends `ĝ = s·x` to the buffer (shrinking it when full); keeps `w`; updates `z`, `gx`.
    /// Refused before anything changes: a row above [`MAX_ROW_SQUARED_NORM`] (or NaN), by the
    /// dense learner's rule ([`check_row_norm`]), and a row whose `u = Zĝ` or new Gram row is
    /// not finite (formed in `self.y`, a scratch, and written only once checked).
    fn append(
        &mut self,
        g: ToSketch<'_>,
        z: &mut [f64],
        gx: &mut Vec<f64>,
        w: &mut SparseWeights,
    ) -> Result<(), LearnError> {
        let (m, cap) = (self.m, self.cap());
        self.check_row(g)?;
        let ToSketch { x, s, xx, example } = g;
        let mut gg = 0.0;
        let RawRow {
            mut indices,
            mut values,
            mut u,
        } = self
            .work
            .as_mut()
            .and_then(|w| w.spare.pop())
            .unwrap_or_default();
        indices.clear();
        values.clear();
        u.clear();
        for_each_nz(x, |j, v| {
            let g = s * v;
            gg += g * g;
            if g != 0.0 {
                indices.push(j as u32);
                values.push(g);
            }
        });
        if gg == 0.0 {
            self.rows_seen += 1;
            let work = self.work.get_or_insert_default();
            work.spare.push(RawRow { indices, values, u });
            return Ok(()); // the dense sketch skips a zero row
        }
        let (k, r, l) = (self.k, self.g.len(), self.filled_rows());
        u.extend(z.iter().map(|v| s * v));
        // New Gram row: [σ∘(F u)_{:k}, s·Gx, ‖ĝ‖²].
        for i in 0..k {
            self.y[i] = self.sigma[i] * dot(&self.f[i * m..(i + 1) * m], &u);
        }
        for q in 0..r {
            self.y[k + q] = s * gx[q];
        }
        self.y[l] = gg;
        let row_ok = gg.is_finite()
            && u.iter().all(|v| v.is_finite())
            && self.y[..=l].iter().all(|v| v.is_finite());
        if !row_ok {
            let work = self.work.get_or_insert_default();
            work.spare.push(RawRow { indices, values, u });
            return Err(LearnError::Diverged(format!(
                "FD update, example {example} (non-finite sketch)"
            )));
        }
        self.rows_seen += 1;
        for (i, &v) in self.y[..=l].iter().enumerate() {
            self.gram[l * cap + i] = v;
            self.gram[i * cap + l] = v;
        }
        if self.index.rows() == self.g.len() {
            self.index.push(&indices, &values);
        }
        self.g.push(RawRow { indices, values, u });
        let heads = w.b.len() / m;
        self.c.extend(std::iter::repeat_n(0.0, heads));
        gx.push(s * xx);
        if l + 1 == cap {
            return self.shrink(w, z, gx);
        }
        self.append_factor_row(l)
    }

    /// Bordered Cholesky: the new last row `l` of the factor of `αI + BBᵀ`
    /// ([`shifted_gram_append_row`]; a refactorisation when the factor is explicit or the new
    /// pivot is not positive).
    fn append_factor_row(&mut self, l: usize) -> Result<(), LearnError> {
        let (cap, a) = (self.cap(), self.alpha());
        if self.explicit || !shifted_gram_append_row(&self.gram, l, cap, a, &mut self.chol) {
            self.refactor()?;
        }
        Ok(())
    }

    /// Rebase `Z ← FZ`, `F ← I`, `w̄ ← w̄ + Zᵀb + Gᵀc` when `V = FZ` cancels or when `force`.
    pub(super) fn maybe_rebase(&mut self, w: &mut SparseWeights, z: &mut [f64], force: bool) {
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
        let heads = w.b.len() / m;
        for (q, row) in self.g.iter().enumerate() {
            for (h, &cq) in self.c[q * heads..(q + 1) * heads].iter().enumerate() {
                if cq != 0.0 {
                    for (&j, &v) in row.indices.iter().zip(&row.values) {
                        w.cols.slot(j as usize)[head(m, h)] += cq * v;
                    }
                }
            }
        }
        self.c.iter_mut().for_each(|v| *v = 0.0);
        for i in 0..m {
            self.tmp[i] = dot(&mat[i * m..(i + 1) * m], z);
        }
        z.copy_from_slice(&self.tmp[..m]);
        w.rebase(Some(&mat));
        for i in 0..m {
            for c in 0..m {
                self.f[i * m + c] = if i == c && self.active[i] { 1.0 } else { 0.0 };
            }
        }
        self.trk = ma as f64;
    }
}

impl SparseFdCurvature {
    /// `BᵀB` as a dense `d × d` matrix over the columns `cols` (`O(d²)`, for tests).
    pub(super) fn covariance(&self, cols: &LazyColumns) -> Vec<f64> {
        let c = self;
        let (m, d) = (c.m, cols.dim());
        let mut rows = vec![0.0; (c.k + c.g.len()) * d];
        let mut fz = vec![0.0; m];
        cols.for_each_column(|j, _, z| {
            mat_vec(&c.f, m, m, z, &mut fz);
            for i in 0..c.k {
                rows[i * d + j] = c.sigma[i] * fz[i];
            }
        });
        for (r, row) in c.g.iter().enumerate() {
            for (&j, &v) in row.indices.iter().zip(&row.values) {
                rows[(c.k + r) * d + j as usize] = v;
            }
        }
        let l = c.k + c.g.len();
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
}

impl SparseCurvature for SparseFdCurvature {
    fn size(&self) -> usize {
        self.m
    }

    /// The `α` in use (`α₀ + Σδ/2` for RFD).
    fn alpha(&self) -> f64 {
        if self.regularized {
            self.alpha + 0.5 * self.shrink_total
        } else {
            self.alpha
        }
    }

    fn scratch(&mut self) {
        let (m, cap) = (self.m, self.cap());
        self.y.resize(cap, 0.0);
        self.h.resize(cap, 0.0);
        self.tmp.resize(cap.max(m), 0.0);
    }

    fn begin(&mut self, x: Row<'_>) {
        self.raw_products(x);
    }

    /// `bᵀz + cᵀGx`.
    fn rest(&self, z: &[f64], b: &[f64]) -> f64 {
        dot(b, z) + dot(&self.c, &self.gx)
    }

    /// `(Bx)ᵀ(αI + BBᵀ)⁻¹(Bx)`.
    fn quad(&mut self, z: &[f64], _m: usize) -> f64 {
        let l = self.filled_rows();
        self.project(z);
        self.solve_small(l);
        dot(&self.y[..l], &self.h[..l])
    }

    /// `h = H·Bx` (in `self.h`) and `Fᵀ(σ∘h_top)` (in `self.tmp`): `A⁻¹x = (x − BᵀH·Bx)/α`,
    /// i.e. `v = Fᵀ(σ∘h_top)` and `c`'s part `h_G`. Also checks `c − (coef/α)·h_G`.
    fn step_direction(&mut self, coef: f64, z: &[f64], b: &[f64], _m: usize) -> bool {
        let (m, k) = (self.m, self.k);
        self.direction(z);
        let f = coef / self.alpha();
        (0..m).all(|i| weight_ok(b[i] - f * self.tmp[i]))
            && (0..self.gx.len()).all(|r| weight_ok(self.c[r] - f * self.h[k + r]))
    }

    fn apply_step(&mut self, f: f64, b: &mut [f64], _m: usize) {
        let k = self.k;
        for i in 0..self.m {
            b[i] -= f * self.tmp[i];
        }
        for r in 0..self.gx.len() {
            self.c[r] -= f * self.h[k + r];
        }
    }

    /// `‖ĝ‖² = s²‖x‖²` within [`MAX_ROW_SQUARED_NORM`]: the dense learner's rule (its
    /// derivation there).
    fn check_row(&self, g: ToSketch<'_>) -> Result<(), LearnError> {
        Ok(check_row_norm(g.s * g.s * g.xx, MAX_ROW_SQUARED_NORM)?)
    }

    /// Appends `ĝ` to the buffer (the raw row is stored, the columns do not change) and shrinks
    /// a full buffer (which changes the columns of `G` through `w`): nothing left to write.
    fn prepare_update(
        &mut self,
        g: ToSketch<'_>,
        z: &mut [f64],
        w: &mut SparseWeights,
        _m: usize,
    ) -> Result<Option<f64>, LearnError> {
        let mut gx = std::mem::take(&mut self.gx);
        let r = self.append(g, z, &mut gx, w);
        self.gx = gx;
        r.map(|()| None)
    }

    fn delta(&self) -> &[f64] {
        &[]
    }

    /// Never: the step after an append is always the guarded one.
    fn fusable(&self, _pending: bool, _b: &[f64]) -> bool {
        false
    }

    /// `Z ← FZ`, `F ← I`, `w̄ ← w̄ + Zᵀb + Gᵀc`.
    fn transfer(&mut self, w: &mut SparseWeights, z: &mut [f64]) {
        self.maybe_rebase(w, z, true);
    }

    /// `w̄ᵀx + bᵀZx + cᵀGx`.
    fn score(&self, w: &SparseWeights, x: Row<'_>) -> f64 {
        let cg: f64 = self
            .g
            .iter()
            .zip(&self.c)
            .map(|(row, c)| c * sparse_dot(&row.indices, &row.values, x))
            .sum();
        w.cols.score(x, &w.b) + cg
    }

    /// Adds `Gᵀc`.
    fn add_weights(&self, w: &mut [f64]) {
        for (row, c) in self.g.iter().zip(&self.c) {
            for (&j, &v) in row.indices.iter().zip(&row.values) {
                w[j as usize] += c * v;
            }
        }
    }

    fn add_weights_at(&self, cols: &[u32], w: &mut [f64]) {
        for (row, c) in self.g.iter().zip(&self.c) {
            for (j, &v) in row.indices.iter().zip(&row.values) {
                if let Ok(k) = cols.binary_search(j) {
                    w[k] += c * v;
                }
            }
        }
    }

    fn own_columns(&self, out: &mut Vec<u32>) {
        out.extend(self.g.iter().flat_map(|row| row.indices.iter().copied()));
    }
}

/// `K` heads over the FD buffer: the own coefficients are `c` (`c[q·K + h]` for raw row `q`),
/// the own direction `h_G` (the raw rows' part of `h = H·Bx`).
impl HeadsCurvature for SparseFdCurvature {
    fn solve(&mut self, z: &[f64], _m: usize) {
        self.direction(z);
    }

    fn solved(&self) -> &[f64] {
        &self.tmp[..self.m]
    }

    fn own_score(&self, h: usize, heads: usize) -> f64 {
        self.gx
            .iter()
            .enumerate()
            .map(|(q, g)| self.c[q * heads + h] * g)
            .sum()
    }

    fn add_own_scores(&self, x: Row<'_>, out: &mut [f64]) {
        let heads = out.len();
        let gx: Vec<f64> = self
            .g
            .iter()
            .map(|row| sparse_dot(&row.indices, &row.values, x))
            .collect();
        for (h, o) in out.iter_mut().enumerate() {
            let raw: f64 = gx
                .iter()
                .enumerate()
                .map(|(q, g)| self.c[q * heads + h] * g)
                .sum();
            *o += raw;
        }
    }

    fn own_step_ok(&self, f: &[f64]) -> bool {
        let heads = f.len();
        let hg = &self.h[self.k..self.k + self.gx.len()];
        f.iter().enumerate().all(|(h, fh)| {
            hg.iter()
                .enumerate()
                .all(|(q, g)| weight_ok(self.c[q * heads + h] - fh * g))
        })
    }

    fn own_step(&mut self, f: &[f64]) {
        let heads = f.len();
        for (q, g) in self.h[self.k..self.k + self.gx.len()].iter().enumerate() {
            for (h, fh) in f.iter().enumerate() {
                self.c[q * heads + h] -= fh * g;
            }
        }
    }

    fn add_head_weights(&self, w: &mut [f64], heads: usize) {
        let de = w.len() / heads.max(1);
        for (q, row) in self.g.iter().enumerate() {
            for h in 0..heads {
                let c = self.c[q * heads + h];
                for (&j, &v) in row.indices.iter().zip(&row.values) {
                    w[h * de + j as usize] += c * v;
                }
            }
        }
    }

    fn check_heads(&self, w: &SparseWeights, heads: usize) -> Result<(), String> {
        super::validate::check_fd_heads(self, &w.cols, heads)
    }
}

/// `y = A x` for a row-major `rows × cols` `A`.
fn mat_vec(a: &[f64], rows: usize, cols: usize, x: &[f64], y: &mut [f64]) {
    for i in 0..rows {
        y[i] = dot(&a[i * cols..(i + 1) * cols], x);
    }
}

stored_layout!(SparseFdCurvature, "SparseFd", SparseFdCurvature::new(0, 0, 1.0, false), {
    params: NewtonParams = params,
    alpha: f64 = curv.alpha,
    regularized: bool = curv.regularized,
    m: usize = curv.m,
    cols: LazyColumns = w.cols,
    f: Vec<f64> = curv.f,
    active: Vec<bool> = curv.active,
    trk: f64 = curv.trk,
    sigma: Vec<f64> = curv.sigma,
    k: usize = curv.k,
    g: Vec<RawRow> = curv.g,
    c: Vec<f64> = curv.c,
    b: Vec<f64> = w.b,
    gram: Vec<f64> = curv.gram,
    chol: Vec<f64> = curv.chol,
    explicit: bool = curv.explicit,
    shrink_total: f64 = curv.shrink_total,
    shrinks: u64 = curv.shrinks,
    rows_seen: u64 = curv.rows_seen,
    examples: u64 = examples,
    pscale: f64 = pscale,
});
