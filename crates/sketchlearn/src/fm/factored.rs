//! A sparse-aware, factored Generalized Frequent Directions sketch (SFTRL paper §3.1, Alg. 2 and
//! Alg. 3) for rows with few non-zeros, such as the one-hot `â = [x; 1]` of rating data.
//!
//! It computes the same `B₊ᵀB₊ − B₋ᵀB₋` as [`GeneralizedFrequentDirections`] (to rounding; the
//! tests in `tests/suite/fm_sftrl.rs` compare the two), with the same buffer sizes, the same shrink by
//! `σ_m²` and the same rule for dropping directions, but stores each side as a product
//!
//! ```text
//! B = C · Q,   Q = [ D ]   D: r_d × d dense rows (stored coordinate-major, d × r_d)
//!                  [ S ]   S: r_s × d sparse rows (the scaled rows inserted since the last
//!                                                  materialisation, CSR)
//! ```
//!
//! with a small coefficient matrix `C` (`rows × (r_d + r_s)`) and the Gram matrix `BBᵀ`.
//!
//! * **insert** `r` (nnz non-zeros): `Br = C(Qr)` costs `O(r_d·nnz + e + rows·(r_d + r_s))`, never
//!   `O(d)`, where `e` is the number of entries of `S` at `r`'s coordinates (an inverted index
//!   finds them; for one-hot ratings, the rows sharing `r`'s user, item or constant); `r` is
//!   appended to `S` and `BBᵀ` is bordered with `Br` and `‖r‖²`;
//! * **shrink** (when the buffer of `m` rows, per-row, or `2m` rows, doubling, is full): the
//!   eigendecomposition `BBᵀ = UΛUᵀ` of the small Gram matrix, `δ = λ_m`, and the new rows
//!   `√(1 − δ/λ_i)·(UᵀB)_i` for `i < m` with `λ_i − δ` above rounding: only `C` is rotated
//!   (one small GEMM, `O(rows²·(r_d + r_s))`), the new Gram matrix is `diag(λ_i − δ)`;
//! * **materialise** (right after a shrink once `S` holds at least `L` rows, or whenever `S` holds
//!   `4L` rows): `D ← C·Q` in one GEMM of `O(rows·r_d·d)` plus `O(rows·nnz(S))`, `S ← ∅`, `C ← I`.
//!   With `L ≈ √d` the amortised cost per row is `O(m²·d/L + m·(m + L)) = O(m²√d)` for the
//!   doubling variant (below the `O(m·d)` of a dense doubling buffer when `m ≪ √d`); the per-row
//!   variant adds an `m × m` eigendecomposition and an `O(m²·(m + L))` rotation per row;
//! * **`B·v`** for a sparse `v` (the prediction `‖B₊â‖² − ‖B₋â‖²`) costs
//!   `O(r_d·nnz + e + rows·(r_d + r_s))`, and `O(m·nnz)` once [`FactoredGfd::compact`] has
//!   emptied `S` (then `C = I`).
//!
//! The Gram matrix after a shrink is set to `diag(λ_i − δ)` (exact in exact arithmetic); every
//! 32nd materialisation recomputes it from `D` so that rounding cannot accumulate.
//!
//! **Signed mode** ([`FactoredFd::new_signed`], used by [`SftrlSplit`](super::SftrlSplit)): one
//! buffer whose rows carry signs, `Bᵀdiag(s)B`, compressed jointly — a Cholesky factor of the
//! small Gram matrix and one eigendecomposition of `Lᵀdiag(s)L` give the eigenvalues of the whole
//! signed sum, and the `m − 1` of largest magnitude are kept ([`Compression::Truncate`]) or
//! shrunk by the `m`-th ([`Compression::Shrink`]). The same factored storage, insertion and
//! materialisation serve both modes.
//!
//! [`GeneralizedFrequentDirections`]: crate::sketch::GeneralizedFrequentDirections

use crate::linalg::{gram_rows, matmul_into, SymEigen};
use crate::sketch::{FdVariant, SketchError};
use serde::{Deserialize, Serialize};

/// End of a list of the inverted index.
pub(super) const NONE: u32 = u32::MAX;

/// Recompute the Gram matrix from the dense rows every this many materialisations.
const GRAM_REFRESH: u64 = 32;

/// Signed mode: once the signed compressions since the Gram matrix was last computed from the
/// rows may have amplified its rounding by more than this factor in all (see
/// [`FactoredFd::signed_rotation`]), the rows are materialised and the Gram matrix recomputed.
const AMPLIFICATION_LIMIT: f64 = 1e3;

/// How a full buffer is compressed to at most `m − 1` rows.
///
/// ```
/// use sketchlearn::fm::Compression;
/// assert_ne!(Compression::Shrink, Compression::Truncate);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Compression {
    /// Frequent Directions: every kept eigenvalue (by magnitude) is reduced by `δ`, the `m`-th
    /// largest, and `Σ δ` bounds the spectral error (SFTRL Theorem 2; RFD paper Alg. 1).
    Shrink,
    /// Truncation: the `m − 1` eigenvalues of largest magnitude are kept unchanged and the rest
    /// dropped — the incremental SVD ("iSVD") that Ghashami, Liberty, Phillips and Woodruff
    /// (SIAM J. Comput. 2016, §5) compare FD with: no worst-case bound, but no shrinkage of what
    /// is kept. On data whose spectrum is flat at the top (the residuals of rating data) the
    /// shrink by `δ` removes nearly everything, truncation keeps the leading directions.
    Truncate,
}

/// One side (`B₊` or `B₋`) of a [`FactoredGfd`]: an FD sketch stored as `B = C·Q`.
///
/// ```
/// use sketchlearn::fm::FactoredFd;
/// use sketchlearn::sketch::FdVariant;
/// // Per-row FD of size m = 2 keeps at most one row: inserting 3·e₀ then 2·e₁ fills the
/// // buffer, the eigenvalues of BBᵀ are 9 and 4, δ = 4, and the kept row is √5·e₀.
/// let mut fd = FactoredFd::new(2, 2, FdVariant::PerRow).unwrap();
/// fd.insert_scaled(&[0], &[1.0], 3.0).unwrap();
/// fd.insert_scaled(&[1], &[1.0], 2.0).unwrap();
/// assert_eq!(fd.filled_rows(), 1);
/// assert!((fd.total_shrinkage() - 4.0).abs() < 1e-12);
/// assert!((fd.norm_sq_of_product(&[0], &[1.0]) - 5.0).abs() < 1e-12);
/// assert!(fd.norm_sq_of_product(&[1], &[1.0]).abs() < 1e-12);
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FactoredFd {
    pub(super) dim: usize,
    pub(super) m: usize,
    pub(super) variant: FdVariant,
    /// `L`: materialise after a shrink once this many sparse rows are held.
    pub(super) sparse_target: usize,
    /// Dense rows of `Q`, coordinate-major: `dense[j * r_d + k]` is row `k`, coordinate `j`.
    pub(super) r_d: usize,
    pub(super) dense: Vec<f64>,
    /// Sparse rows of `Q` (CSR): row `s` is `sp_idx/sp_val[sp_start[s]..sp_start[s + 1]]`.
    pub(super) sp_start: Vec<usize>,
    pub(super) sp_idx: Vec<u32>,
    pub(super) sp_val: Vec<f64>,
    /// Inverted index of the sparse rows: `sp_head[j]` is the last entry at coordinate `j`
    /// (`NONE` if none), `sp_next[e]` the previous entry at the same coordinate, `sp_row[e]` the
    /// sparse row of entry `e`. `S·v` then costs the number of entries at `v`'s coordinates.
    pub(super) sp_head: Vec<u32>,
    pub(super) sp_next: Vec<u32>,
    pub(super) sp_row: Vec<u32>,
    /// Number of rows of `B`.
    pub(super) rows: usize,
    /// `C`, row-major `rows × (r_d + r_s)` with row stride `cstride`.
    pub(super) cstride: usize,
    pub(super) coef: Vec<f64>,
    /// `C` is exactly the `rows × rows` identity (then `B·v = Q·v`).
    pub(super) c_identity: bool,
    /// `BBᵀ`, row-major `rows × rows` with row stride `capacity`.
    pub(super) gram: Vec<f64>,
    /// Whether rows carry signs (a symmetric indefinite sketch `Bᵀ diag(s) B`).
    pub(super) signed: bool,
    /// Sign `s_k = ±1` of each row (all `+1` unless signed).
    pub(super) signs: Vec<f64>,
    pub(super) compression: Compression,
    pub(super) shrink_total: f64,
    pub(super) shrinks: u64,
    pub(super) rows_seen: u64,
    pub(super) materializations: u64,
    /// Signed mode: `ln` of the product of the amplifications of the compressions since the Gram
    /// matrix was last computed from the rows.
    pub(super) log_amplification: f64,
    /// The next materialisation recomputes the Gram matrix from the dense rows.
    pub(super) refresh_gram: bool,
    #[serde(skip)]
    ws: Workspace,
}

/// Scratch buffers, overwritten before they are read (not part of the state).
#[derive(Debug, Default)]
struct Workspace {
    eig: Option<SymEigen>,
    eig_signed: Option<SymEigen>,
    signed_m: Vec<f64>,
    signed_l: Vec<f64>,
    signed_lt: Vec<f64>,
    pivots: Vec<usize>,
    order: Vec<usize>,
    magnitudes: Vec<f64>,
    kept: Vec<f64>,
    new_signs: Vec<f64>,
    q: Vec<f64>,
    br: Vec<f64>,
    compact: Vec<f64>,
    coef_new: Vec<f64>,
    rot: Vec<f64>,
    cbuf: Vec<f64>,
    ct: Vec<f64>,
    dense_new: Vec<f64>,
    col: Vec<f64>,
}

impl Clone for Workspace {
    /// A cloned workspace starts empty.
    fn clone(&self) -> Self {
        Workspace::default()
    }
}

impl FactoredFd {
    /// An empty FD side of sketch size `m ≥ 1` over rows of dimension `dim`; the sparse buffer
    /// target `L` is `clamp(⌈√dim⌉, 8, 256)`.
    pub fn new(dim: usize, m: usize, variant: FdVariant) -> Result<Self, SketchError> {
        if m == 0 {
            return Err(SketchError::InvalidParameter(
                "sketch size must be at least 1".into(),
            ));
        }
        let sparse_target = ((dim as f64).sqrt().ceil() as usize).clamp(8, 256);
        variant.check(m)?;
        let capacity = variant.buffer_rows(m);
        let cstride = capacity + 4 * sparse_target;
        Ok(FactoredFd {
            dim,
            m,
            variant,
            sparse_target,
            r_d: 0,
            dense: Vec::new(),
            sp_start: vec![0],
            sp_idx: Vec::new(),
            sp_val: Vec::new(),
            sp_head: vec![NONE; dim],
            sp_next: Vec::new(),
            sp_row: Vec::new(),
            rows: 0,
            cstride,
            coef: vec![0.0; capacity * cstride],
            c_identity: true,
            gram: vec![0.0; capacity * capacity],
            signed: false,
            signs: vec![1.0; capacity],
            compression: Compression::Shrink,
            shrink_total: 0.0,
            shrinks: 0,
            rows_seen: 0,
            materializations: 0,
            log_amplification: 0.0,
            refresh_gram: false,
            ws: Workspace::default(),
        })
    }

    /// A signed sketch of `Σ_t s_t·g_t g_tᵀ` (`s_t = ±1`, symmetric and indefinite) as
    /// `Bᵀ diag(s) B`: rows are inserted with [`Self::insert_signed_row`] and a full buffer is
    /// compressed *jointly*, by the eigenvalues of largest magnitude of the whole signed sum
    /// (computed from a Cholesky factor `L` of the Gram matrix `BBᵀ` and the small
    /// `Lᵀdiag(s)L`, see [`Self::signed_rotation`]), so that terms of opposite sign cancel before
    /// anything is dropped. (The paper's GFD, SFTRL Alg. 2/3 and
    /// [`FactoredGfd`], sketches the two signs apart: a part common to both, such as the large
    /// diagonal of `x xᵀ` on one-hot data, then fills both sides.)
    ///
    /// ```
    /// use sketchlearn::fm::{Compression, FactoredFd};
    /// use sketchlearn::sketch::FdVariant;
    /// let mut fd = FactoredFd::new_signed(3, 3, FdVariant::PerRow, Compression::Truncate).unwrap();
    /// // (e₀ + e₁)(…)ᵀ − (e₀ − e₁)(…)ᵀ = 2(e₀e₁ᵀ + e₁e₀ᵀ): eigenvalues ±2, kept jointly.
    /// fd.insert_signed_row(&[0, 1], &[1.0, 1.0], 1.0, 1.0).unwrap();
    /// fd.insert_signed_row(&[0, 1], &[1.0, -1.0], 1.0, -1.0).unwrap();
    /// assert!((fd.quadratic_form(&[0, 1], &[1.0, 1.0]) - 4.0).abs() < 1e-12);
    /// assert!(fd.quadratic_form(&[0], &[1.0]).abs() < 1e-12);
    /// ```
    pub fn new_signed(
        dim: usize,
        m: usize,
        variant: FdVariant,
        compression: Compression,
    ) -> Result<Self, SketchError> {
        let mut fd = Self::new(dim, m, variant)?;
        fd.signed = true;
        fd.compression = compression;
        Ok(fd)
    }

    /// Dimension `d` of the rows.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Whether rows carry signs ([`Self::new_signed`]).
    pub fn is_signed(&self) -> bool {
        self.signed
    }

    /// The compression rule.
    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// The signs `s_k = ±1` of the rows of `B` (all `+1` unless signed).
    pub fn signs(&self) -> &[f64] {
        &self.signs[..self.rows]
    }

    /// Sketch size `m`.
    pub fn sketch_size(&self) -> usize {
        self.m
    }

    /// Buffer strategy.
    pub fn variant(&self) -> FdVariant {
        self.variant
    }

    /// Rows of the buffer: `m` (per-row), `2m` (doubling) or `ℓ` (buffered).
    pub fn capacity(&self) -> usize {
        self.variant.buffer_rows(self.m)
    }

    /// Number of (non-zero) rows of `B`.
    pub fn filled_rows(&self) -> usize {
        self.rows
    }

    /// Rows inserted so far (including zero rows, which take no buffer row).
    pub fn rows_seen(&self) -> u64 {
        self.rows_seen
    }

    /// `Σ δ_t`, the total shrinkage (FD error bound `‖AᵀA − BᵀB‖₂ ≤ Σ δ_t`).
    pub fn total_shrinkage(&self) -> f64 {
        self.shrink_total
    }

    /// Number of shrinks.
    pub fn shrinks(&self) -> u64 {
        self.shrinks
    }

    fn r_s(&self) -> usize {
        self.sp_start.len() - 1
    }

    fn cols(&self) -> usize {
        self.r_d + self.r_s()
    }

    /// Bytes held by the state (not counting the scratch buffers).
    pub fn state_bytes(&self) -> usize {
        8 * (self.dense.capacity()
            + self.sp_val.capacity()
            + self.coef.capacity()
            + self.gram.capacity()
            + self.signs.capacity()
            + self.sp_start.capacity())
            + 4 * (self.sp_idx.capacity()
                + self.sp_head.capacity()
                + self.sp_next.capacity()
                + self.sp_row.capacity())
    }

    /// `q = Q·v` for a sparse `v` with strictly increasing indices (`q` has `r_d + r_s` entries).
    fn q_times(&self, idx: &[u32], val: &[f64], q: &mut Vec<f64>) {
        let (r_d, r_s) = (self.r_d, self.r_s());
        q.clear();
        q.resize(r_d + r_s, 0.0);
        if r_d > 0 {
            let acc = &mut q[..r_d];
            for (&j, &v) in idx.iter().zip(val) {
                let col = &self.dense[j as usize * r_d..(j as usize + 1) * r_d];
                for (a, c) in acc.iter_mut().zip(col) {
                    *a += v * c;
                }
            }
        }
        if r_s > 0 {
            let sq = &mut q[r_d..];
            for (&j, &v) in idx.iter().zip(val) {
                let mut e = self.sp_head[j as usize];
                while e != NONE {
                    let e_ = e as usize;
                    sq[self.sp_row[e_] as usize] += v * self.sp_val[e_];
                    e = self.sp_next[e_];
                }
            }
        }
    }

    /// `out = C·q` (`rows` entries).
    fn c_times(&self, q: &[f64], out: &mut Vec<f64>) {
        let cols = q.len();
        out.clear();
        if self.c_identity {
            out.extend_from_slice(q);
            return;
        }
        out.extend((0..self.rows).map(|i| {
            let row = &self.coef[i * self.cstride..i * self.cstride + cols];
            crate::linalg::dot(row, q)
        }));
    }

    /// `B·v` for a sparse `v` (empty when `B` has no row).
    fn product(&self, idx: &[u32], val: &[f64]) -> Vec<f64> {
        let mut out = Vec::new();
        if self.rows > 0 {
            let mut q = Vec::new();
            self.q_times(idx, val, &mut q);
            self.c_times(&q, &mut out);
        }
        out
    }

    /// `‖B·v‖²` for a sparse `v` (strictly increasing indices `< dim`).
    pub fn norm_sq_of_product(&self, idx: &[u32], val: &[f64]) -> f64 {
        self.product(idx, val).iter().map(|x| x * x).sum()
    }

    /// `vᵀ Bᵀ diag(s) B v = Σ_k s_k (B v)_k²` for a sparse `v` (equals
    /// [`Self::norm_sq_of_product`] unless signed).
    pub fn quadratic_form(&self, idx: &[u32], val: &[f64]) -> f64 {
        let bv = self.product(idx, val);
        bv.iter().zip(&self.signs).map(|(x, s)| s * x * x).sum()
    }

    /// The off-diagonal part of the quadratic form, `Σ_{j≠k} M_jk x_j x_k` with
    /// `M = Bᵀ diag(s) B`: `Σ_k s_k [(Bx)_k² − Σ_j x_j² B_kj²]` (the factorization-machine
    /// identity), `O(nnz · (r_d + rows·cols))`.
    ///
    /// ```
    /// use sketchlearn::fm::FactoredFd;
    /// use sketchlearn::sketch::FdVariant;
    /// let mut fd = FactoredFd::new(3, 3, FdVariant::PerRow).unwrap();
    /// fd.insert_scaled(&[0, 1], &[1.0, 2.0], 1.0).unwrap();
    /// // M = [1 2; 2 4]: off-diagonal part of xᵀMx at x = (1, 1) is 2·2 = 4.
    /// assert!((fd.pairwise_form(&[0, 1], &[1.0, 1.0]) - 4.0).abs() < 1e-12);
    /// ```
    pub fn pairwise_form(&self, idx: &[u32], val: &[f64]) -> f64 {
        if self.rows == 0 || idx.len() < 2 {
            return 0.0;
        }
        let mut cols = Vec::new();
        self.columns(idx, &mut cols);
        self.pairwise_from_columns(val, &cols)
    }

    /// The columns `B e_j` for `j` in `idx`, row-major `idx.len() × filled_rows()` into `out`
    /// (`O(nnz · (r_d + rows·cols))`).
    pub fn columns(&self, idx: &[u32], out: &mut Vec<f64>) {
        out.clear();
        let (mut q, mut col) = (Vec::new(), Vec::new());
        for &j in idx {
            self.q_times(&[j], &[1.0], &mut q);
            self.c_times(&q, &mut col);
            out.extend_from_slice(&col[..self.rows]);
        }
    }

    /// [`Self::pairwise_form`] from the columns of [`Self::columns`] at the same coordinates.
    pub fn pairwise_from_columns(&self, val: &[f64], cols: &[f64]) -> f64 {
        let rows = self.rows;
        if rows == 0 || val.len() < 2 {
            return 0.0;
        }
        let mut total = 0.0;
        for k in 0..rows {
            let (mut b, mut d) = (0.0, 0.0);
            for (j, &v) in val.iter().enumerate() {
                let c = v * cols[j * rows + k];
                b += c;
                d += c * c;
            }
            total += self.signs[k] * (b * b - d);
        }
        total
    }

    /// Inserts `scale · v` for a sparse `v` with strictly increasing indices `< dim` and finite
    /// values (checked by the caller). A row that is zero after scaling takes no buffer row.
    pub fn insert_scaled(
        &mut self,
        idx: &[u32],
        val: &[f64],
        scale: f64,
    ) -> Result<(), SketchError> {
        self.insert_signed_row(idx, val, scale, 1.0)
    }

    /// Inserts the row `scale · v` with sign `sign = ±1` (adds `sign·scale²·v vᵀ` to the sketched
    /// sum); a negative sign needs a [signed](Self::new_signed) sketch.
    pub fn insert_signed_row(
        &mut self,
        idx: &[u32],
        val: &[f64],
        scale: f64,
        sign: f64,
    ) -> Result<(), SketchError> {
        self.insert_row(idx, val, scale, sign, None)
    }

    /// [`Self::insert_signed_row`] with `product = B·v` (unscaled `v`, one entry per row of `B`)
    /// supplied by the caller, who has it from [`Self::columns`].
    pub fn insert_signed_row_with_product(
        &mut self,
        idx: &[u32],
        val: &[f64],
        scale: f64,
        sign: f64,
        product: &[f64],
    ) -> Result<(), SketchError> {
        if product.len() != self.rows {
            return Err(SketchError::InvalidParameter(format!(
                "product has {} entries for {} rows",
                product.len(),
                self.rows
            )));
        }
        self.insert_row(idx, val, scale, sign, Some(product))
    }

    fn insert_row(
        &mut self,
        idx: &[u32],
        val: &[f64],
        scale: f64,
        sign: f64,
        product: Option<&[f64]>,
    ) -> Result<(), SketchError> {
        if sign != 1.0 && !(self.signed && sign == -1.0) {
            return Err(SketchError::InvalidParameter(format!(
                "row sign must be +1{}, got {sign}",
                if self.signed { " or -1" } else { "" }
            )));
        }
        if !scale.is_finite() {
            return Err(SketchError::NonFinite(format!("row scale {scale}")));
        }
        if let Some(&last) = idx.last() {
            if last as usize >= self.dim {
                return Err(SketchError::DimensionMismatch {
                    index: last as usize,
                    dim: self.dim,
                });
            }
        }
        if val.iter().any(|v| !v.is_finite()) {
            return Err(SketchError::NonFinite(
                "row contains NaN or infinity".into(),
            ));
        }
        self.rows_seen += 1;
        let norm_sq: f64 = val.iter().map(|v| (scale * v) * (scale * v)).sum();
        if !val.iter().any(|&v| scale * v != 0.0) {
            return Ok(());
        }
        // B r with the unscaled row, scaled afterwards.
        let mut q = std::mem::take(&mut self.ws.q);
        let mut br = std::mem::take(&mut self.ws.br);
        match product {
            Some(p) => {
                br.clear();
                br.extend_from_slice(p);
            }
            None => {
                self.q_times(idx, val, &mut q);
                self.c_times(&q, &mut br);
            }
        }
        // Append the row to S (scaled) and to C (a unit coefficient).
        let new_col = self.cols();
        let sparse_row = self.r_s() as u32;
        for (&j, &v) in idx.iter().zip(val) {
            let y = scale * v;
            if y != 0.0 {
                let e = self.sp_idx.len() as u32;
                self.sp_idx.push(j);
                self.sp_val.push(y);
                self.sp_row.push(sparse_row);
                self.sp_next.push(self.sp_head[j as usize]);
                self.sp_head[j as usize] = e;
            }
        }
        self.sp_start.push(self.sp_idx.len());
        let cap = self.capacity();
        let new_row = self.rows;
        self.signs[new_row] = sign;
        for i in 0..new_row {
            self.coef[i * self.cstride + new_col] = 0.0;
        }
        let row = &mut self.coef[new_row * self.cstride..new_row * self.cstride + new_col + 1];
        row.iter_mut().for_each(|c| *c = 0.0);
        row[new_col] = 1.0;
        // Border the Gram matrix.
        for (i, &b) in br.iter().enumerate() {
            let g = scale * b;
            self.gram[i * cap + new_row] = g;
            self.gram[new_row * cap + i] = g;
        }
        self.gram[new_row * cap + new_row] = norm_sq;
        // C stays the identity when the new unit row lands on the diagonal.
        let was_identity = self.c_identity;
        self.c_identity &= new_row == new_col;
        self.rows += 1;
        self.ws.q = q;
        self.ws.br = br;
        if self.rows == cap {
            if let Err(e) = self.shrink() {
                // Leave the sketch as it was before this row (the shrink changed nothing).
                self.undo_last_sparse_row();
                self.rows -= 1;
                self.rows_seen -= 1;
                self.c_identity = was_identity;
                return Err(e);
            }
            if self.r_s() >= self.sparse_target || self.refresh_gram {
                self.materialize()?;
            }
        } else if self.r_s() >= 4 * self.sparse_target {
            self.materialize()?;
        }
        Ok(())
    }

    /// Removes the last sparse row of `S` (and its inverted-index entries).
    fn undo_last_sparse_row(&mut self) {
        let start = self.sp_start[self.sp_start.len() - 2];
        for e in (start..self.sp_idx.len()).rev() {
            self.sp_head[self.sp_idx[e] as usize] = self.sp_next[e];
        }
        self.sp_idx.truncate(start);
        self.sp_val.truncate(start);
        self.sp_next.truncate(start);
        self.sp_row.truncate(start);
        self.sp_start.pop();
    }

    /// Compresses the full buffer to at most `m − 1` rows: unsigned, by `δ = λ_m` of `BBᵀ` (the
    /// rule of [`FrequentDirections`](crate::sketch::FrequentDirections)); signed, through
    /// [`Self::signed_rotation`]. Only `C` is rotated.
    fn shrink(&mut self) -> Result<(), SketchError> {
        let (l, cap) = (self.rows, self.capacity());
        let cols = self.cols();
        let compact = &mut self.ws.compact;
        compact.clear();
        for i in 0..l {
            compact.extend_from_slice(&self.gram[i * cap..i * cap + l]);
        }
        // W (keep × l): the new rows are W·B; `kept` their squared norms, `new_signs` their signs.
        let mut kept = std::mem::take(&mut self.ws.kept);
        let mut new_signs = std::mem::take(&mut self.ws.new_signs);
        kept.clear();
        new_signs.clear();
        let delta = if self.signed {
            let (delta, amplification) = self.signed_rotation(&mut kept, &mut new_signs)?;
            self.log_amplification += amplification.max(1.0).ln();
            self.refresh_gram |= self.log_amplification > AMPLIFICATION_LIMIT.ln();
            delta
        } else {
            let eig = match &mut self.ws.eig {
                Some(e) if e.size() == l => e,
                slot => slot.insert(SymEigen::new(l)),
            };
            eig.compute(compact)?;
            let (lambda, u) = (eig.values(), eig.vectors());
            let (delta, keep) = crate::sketch::shrink_rule(lambda, self.m);
            // New C rows: s_i Σ_k U[k, i] C[k, :], i.e. C ← W·C with W = diag(s)·U[:, :keep]ᵀ.
            let w = &mut self.ws.rot;
            w.clear();
            w.resize(keep * l, 0.0);
            for i in 0..keep {
                let s = (1.0 - delta / lambda[i]).max(0.0).sqrt();
                for k in 0..l {
                    w[i * l + k] = s * u[k * l + i];
                }
                kept.push(lambda[i] - delta);
                new_signs.push(1.0);
            }
            delta
        };
        let keep = kept.len();
        let w = &self.ws.rot;
        let cs = self.cstride;
        if self.c_identity {
            // C = I (cols = l): the new C is W itself.
            for i in 0..keep {
                self.coef[i * cs..i * cs + cols].copy_from_slice(&w[i * l..(i + 1) * l]);
            }
        } else {
            let coef_new = &mut self.ws.coef_new;
            coef_new.clear();
            coef_new.resize(keep * cols, 0.0);
            if keep * l * cols >= 4096 {
                let c = &mut self.ws.cbuf;
                c.clear();
                for k in 0..l {
                    c.extend_from_slice(&self.coef[k * cs..k * cs + cols]);
                }
                matmul_into(w, c, keep, l, cols, coef_new);
            } else {
                for i in 0..keep {
                    let dst = &mut coef_new[i * cols..(i + 1) * cols];
                    for k in 0..l {
                        let wk = w[i * l + k];
                        if wk != 0.0 {
                            crate::linalg::axpy(wk, &self.coef[k * cs..k * cs + cols], dst);
                        }
                    }
                }
            }
            for i in 0..keep {
                self.coef[i * cs..i * cs + cols]
                    .copy_from_slice(&coef_new[i * cols..(i + 1) * cols]);
            }
        }
        for i in 0..keep {
            for j in 0..keep {
                self.gram[i * cap + j] = if i == j { kept[i] } else { 0.0 };
            }
            self.signs[i] = new_signs[i];
        }
        self.ws.kept = kept;
        self.ws.new_signs = new_signs;
        self.rows = keep;
        self.c_identity = false;
        self.shrink_total += delta;
        self.shrinks += 1;
        if !self.shrink_total.is_finite() {
            return Err(SketchError::NonFinite("FD shrinkage overflowed".into()));
        }
        Ok(())
    }

    /// The signed compression (`ws.compact` holds the Gram matrix `G = BBᵀ`, `l = rows`). A
    /// Cholesky factorisation without pivoting, `G = LLᵀ`, dropping a row whose remaining pivot is
    /// below `10⁻¹⁰` of its own squared norm (it lies in the span of the rows before it), writes
    /// `B = LZ` with orthonormal rows `Z` (`r` of them, one per kept pivot). The non-zero
    /// eigenvalues of `Bᵀdiag(s)B = Zᵀ(Lᵀdiag(s)L)Z` are those of the `r × r` matrix
    /// `M = Lᵀdiag(s)L = UΛUᵀ`. Keeps the `m − 1` of largest `|λ_i|` (less `δ`, the `m`-th
    /// largest, under [`Compression::Shrink`]): row `i` becomes `√(|λ_i| − δ)·u_iᵀZ =
    /// √(|λ_i| − δ)·(L_P⁻ᵀu_i)ᵀB_P` (`P` the kept pivots), sign `sgn λ_i`, so the new Gram matrix
    /// is `diag(|λ_i| − δ)`. Writes `W` into `ws.rot`; returns `δ` and the amplification
    /// `max_i ‖w_i‖² · max_k G_kk / max_i (|λ_i| − δ)`. One `r × r` eigenproblem per compression.
    ///
    /// **Rounding.** The new Gram matrix is `W G Wᵀ`, so an error `E` in the stored `G` becomes
    /// `W E Wᵀ`: relative to the matrix's scale it grows by up to the amplification. When the rows
    /// are nearly dependent (dense rows in a dimension below the buffer's size, e.g. the pairwise
    /// rows of australian.libsvm, d = 14, in a buffer of 20) a kept direction is a combination of
    /// rows with large cancelling coefficients, amplifications reach 10⁶ and more, and taking
    /// `diag(|λ_i| − δ)` on trust let the error compound from one compression to the next until
    /// the sketch was garbage (entries of 10¹⁰). The caller therefore multiplies the
    /// amplifications up and, past [`AMPLIFICATION_LIMIT`], materialises the rows and recomputes
    /// `G` from them ([`Self::materialize`]). On rating data the amplification stays near 1 (the
    /// mean of its logarithm on MovieLens-100K is 0.004) and this never costs anything.
    fn signed_rotation(
        &mut self,
        kept: &mut Vec<f64>,
        new_signs: &mut Vec<f64>,
    ) -> Result<(f64, f64), SketchError> {
        let (l, m) = (self.rows, self.m);
        let g = &self.ws.compact;
        let gmax = (0..l).map(|i| g[i * l + i]).fold(0.0f64, f64::max);
        let mut amplification = 0.0f64;
        // L (l × l, column p for the p-th kept pivot), pivots P.
        let lmat = &mut self.ws.signed_l;
        lmat.clear();
        lmat.resize(l * l, 0.0);
        let piv = &mut self.ws.pivots;
        piv.clear();
        for i in 0..l {
            let row_i = &lmat[i * l..i * l + piv.len()];
            let d = g[i * l + i] - crate::linalg::dot(row_i, row_i);
            if d.is_nan() || d <= 1e-10 * g[i * l + i] {
                continue; // dependent on the rows before it: expressed through their pivots
            }
            let c = piv.len();
            let dd = d.sqrt();
            lmat[i * l + c] = dd;
            for k in i + 1..l {
                let t = g[k * l + i]
                    - crate::linalg::dot(&lmat[k * l..k * l + c], &lmat[i * l..i * l + c]);
                lmat[k * l + c] = t / dd;
            }
            piv.push(i);
        }
        let r = piv.len();
        // M = Lᵀdiag(s)L from L's columns (contiguous copies; column a is zero above row piv[a]).
        let lt = &mut self.ws.signed_lt;
        lt.clear();
        lt.resize(2 * r * l, 0.0);
        let (lcol, lscaled) = lt.split_at_mut(r * l);
        for k in 0..l {
            for a in 0..r {
                let x = lmat[k * l + a];
                lcol[a * l + k] = x;
                lscaled[a * l + k] = x * self.signs[k];
            }
        }
        let mm = &mut self.ws.signed_m;
        mm.clear();
        mm.resize(r * r, 0.0);
        for a in 0..r {
            let from = piv[a];
            let sa = &lscaled[a * l + from..(a + 1) * l];
            for b in 0..=a {
                let t = crate::linalg::dot(sa, &lcol[b * l + from..(b + 1) * l]);
                mm[a * r + b] = t;
                mm[b * r + a] = t;
            }
        }
        let eig2 = match &mut self.ws.eig_signed {
            Some(e) if e.size() == r => e,
            slot => slot.insert(SymEigen::new(r)),
        };
        if r > 0 {
            eig2.compute(mm)?;
        }
        let (lam, u) = (eig2.values(), eig2.vectors());
        let order = &mut self.ws.order;
        order.clear();
        order.extend(0..r);
        order.sort_by(|&a, &b| lam[b].abs().total_cmp(&lam[a].abs()).then(a.cmp(&b)));
        let magnitudes = &mut self.ws.magnitudes;
        magnitudes.clear();
        magnitudes.extend(order.iter().map(|&i| lam[i].abs()));
        let delta = match self.compression {
            Compression::Shrink if r >= m => magnitudes[m - 1],
            _ => 0.0,
        };
        let keep = crate::sketch::rows_kept(magnitudes, m, delta);
        let w = &mut self.ws.rot;
        w.clear();
        w.resize(keep * l, 0.0);
        let t = &mut self.ws.col;
        for (i, &oi) in order.iter().take(keep).enumerate() {
            let mag = lam[oi].abs() - delta;
            // t = L_P⁻ᵀ u_i: back substitution with the upper triangular L_Pᵀ (L_P[a][c] is
            // lmat[piv[a] * l + c]).
            // Column by column: once t_c is known, row c of L_P (contiguous) updates t_0..t_c.
            t.clear();
            t.extend((0..r).map(|a| u[a * r + oi]));
            for c in (0..r).rev() {
                let row = &lmat[piv[c] * l..piv[c] * l + c + 1];
                let tc = t[c] / row[c];
                t[c] = tc;
                crate::linalg::axpy(-tc, &row[..c], &mut t[..c]);
            }
            let s = mag.sqrt();
            let mut w_sq = 0.0;
            for a in 0..r {
                let x = s * t[a];
                w[i * l + piv[a]] = x;
                w_sq += x * x;
            }
            amplification = amplification.max(w_sq);
            kept.push(mag);
            new_signs.push(if lam[oi] < 0.0 { -1.0 } else { 1.0 });
        }
        if w.iter().any(|x| !x.is_finite()) {
            return Err(SketchError::NonFinite("signed compression".into()));
        }
        let kept_max = kept.iter().fold(0.0f64, |a, &x| a.max(x));
        let amplification = if kept_max > 0.0 {
            amplification * gmax / kept_max
        } else {
            0.0
        };
        Ok((delta, amplification))
    }

    /// `D ← C·Q`, `S ← ∅`, `C ← I` (the represented `B` does not change).
    fn materialize(&mut self) -> Result<(), SketchError> {
        let (d, rows, r_d, r_s) = (self.dim, self.rows, self.r_d, self.r_s());
        let cs = self.cstride;
        let mut dense_new = std::mem::take(&mut self.ws.dense_new);
        dense_new.clear();
        dense_new.resize(d * rows, 0.0);
        if r_d > 0 && rows > 0 {
            // dense_new (d × rows) = D (d × r_d) · C_dᵀ (r_d × rows).
            let ct = &mut self.ws.ct;
            ct.clear();
            ct.resize(r_d * rows, 0.0);
            for i in 0..rows {
                for k in 0..r_d {
                    ct[k * rows + i] = self.coef[i * cs + k];
                }
            }
            matmul_into(&self.dense, ct, d, r_d, rows, &mut dense_new);
        }
        if rows > 0 {
            let col = &mut self.ws.col;
            for s in 0..r_s {
                col.clear();
                col.extend((0..rows).map(|i| self.coef[i * cs + r_d + s]));
                for p in self.sp_start[s]..self.sp_start[s + 1] {
                    let j = self.sp_idx[p] as usize;
                    crate::linalg::axpy(
                        self.sp_val[p],
                        col,
                        &mut dense_new[j * rows..(j + 1) * rows],
                    );
                }
            }
        }
        std::mem::swap(&mut self.dense, &mut dense_new);
        self.ws.dense_new = dense_new;
        self.r_d = rows;
        self.c_identity = true;
        for &j in &self.sp_idx {
            self.sp_head[j as usize] = NONE;
        }
        self.sp_start.clear();
        self.sp_start.push(0);
        self.sp_idx.clear();
        self.sp_val.clear();
        self.sp_next.clear();
        self.sp_row.clear();
        for i in 0..rows {
            let row = &mut self.coef[i * cs..i * cs + rows];
            row.iter_mut().for_each(|c| *c = 0.0);
            row[i] = 1.0;
        }
        self.materializations += 1;
        let refresh =
            std::mem::take(&mut self.refresh_gram) || self.materializations % GRAM_REFRESH == 0;
        if refresh {
            self.log_amplification = 0.0;
        }
        if refresh && rows > 0 {
            // Exact Gram from the dense rows (row-major copy of B, then B Bᵀ).
            let mut b = vec![0.0; rows * d];
            for j in 0..d {
                for k in 0..rows {
                    b[k * d + j] = self.dense[j * rows + k];
                }
            }
            let mut g = vec![0.0; rows * rows];
            gram_rows(&b, rows, d, &mut g);
            let cap = self.capacity();
            for i in 0..rows {
                self.gram[i * cap..i * cap + rows].copy_from_slice(&g[i * rows..(i + 1) * rows]);
            }
        }
        Ok(())
    }

    /// Empties the sparse buffer into the dense rows, so that [`Self::norm_sq_of_product`]
    /// costs `O(m·nnz)` (call it once learning is over). `B` does not change.
    pub fn compact(&mut self) -> Result<(), SketchError> {
        if self.r_s() > 0 {
            self.materialize()?;
        }
        Ok(())
    }

    /// The rows of `B`, row-major `filled_rows() × dim` (computed: `O(rows·cols·d)`).
    pub fn to_rows(&self) -> Vec<f64> {
        let (d, rows, r_d, r_s) = (self.dim, self.rows, self.r_d, self.r_s());
        let cs = self.cstride;
        let mut out = vec![0.0; rows * d];
        for i in 0..rows {
            let dst = &mut out[i * d..(i + 1) * d];
            for k in 0..r_d {
                let c = self.coef[i * cs + k];
                if c != 0.0 {
                    for j in 0..d {
                        dst[j] += c * self.dense[j * r_d + k];
                    }
                }
            }
            for s in 0..r_s {
                let c = self.coef[i * cs + r_d + s];
                for p in self.sp_start[s]..self.sp_start[s + 1] {
                    dst[self.sp_idx[p] as usize] += c * self.sp_val[p];
                }
            }
        }
        out
    }
}

/// Generalized Frequent Directions (SFTRL Alg. 2 per-row, Alg. 3 doubling) with two
/// [`FactoredFd`] sides: `Σ s_t g_t g_tᵀ ≈ B₊ᵀB₊ − B₋ᵀB₋`, each side keeping at most `m − 1`
/// rows; a term with `s_t = 0` changes nothing (DESIGN.md §4 item 13).
///
/// ```
/// use sketchlearn::fm::FactoredGfd;
/// use sketchlearn::sketch::FdVariant;
/// let mut gfd = FactoredGfd::new(3, 2, FdVariant::PerRow).unwrap();
/// gfd.insert_signed(&[0, 2], &[1.0, 1.0], 2.0).unwrap();
/// gfd.insert_signed(&[1], &[1.0], -0.5).unwrap();
/// // vᵀ(B₊ᵀB₊ − B₋ᵀB₋)v = 2·(v₀ + v₂)² − 0.5·v₁² while each side holds fewer than m rows.
/// let q = gfd.quadratic_form(&[0, 1, 2], &[1.0, 1.0, 1.0]);
/// assert!((q - (8.0 - 0.5)).abs() < 1e-12);
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FactoredGfd {
    pub(super) positive: FactoredFd,
    pub(super) negative: FactoredFd,
}

impl FactoredGfd {
    /// A GFD sketch of size `m ≥ 1` over dimension `dim`.
    pub fn new(dim: usize, m: usize, variant: FdVariant) -> Result<Self, SketchError> {
        Ok(FactoredGfd {
            positive: FactoredFd::new(dim, m, variant)?,
            negative: FactoredFd::new(dim, m, variant)?,
        })
    }

    /// Adds `s · g gᵀ` for a sparse `g` (strictly increasing indices `< dim`).
    pub fn insert_signed(&mut self, idx: &[u32], val: &[f64], s: f64) -> Result<(), SketchError> {
        if !s.is_finite() {
            return Err(SketchError::NonFinite(format!("GFD sign weight {s}")));
        }
        if s > 0.0 {
            self.positive.insert_scaled(idx, val, s.sqrt())
        } else if s < 0.0 {
            self.negative.insert_scaled(idx, val, (-s).sqrt())
        } else {
            Ok(())
        }
    }

    /// `vᵀ(B₊ᵀB₊ − B₋ᵀB₋)v = ‖B₊v‖² − ‖B₋v‖²` for a sparse `v`.
    pub fn quadratic_form(&self, idx: &[u32], val: &[f64]) -> f64 {
        self.positive.norm_sq_of_product(idx, val) - self.negative.norm_sq_of_product(idx, val)
    }

    /// The positive side `B₊`.
    pub fn positive(&self) -> &FactoredFd {
        &self.positive
    }

    /// The negative side `B₋`.
    pub fn negative(&self) -> &FactoredFd {
        &self.negative
    }

    /// Dimension `d`.
    pub fn dim(&self) -> usize {
        self.positive.dim()
    }

    /// The sum of both sides' total shrinkage: a bound on the spectral error (at most the
    /// right-hand side of SFTRL Theorem 2).
    pub fn error_bound(&self) -> f64 {
        self.positive.total_shrinkage() + self.negative.total_shrinkage()
    }

    /// Empties both sparse buffers (see [`FactoredFd::compact`]).
    pub fn compact(&mut self) -> Result<(), SketchError> {
        self.positive.compact()?;
        self.negative.compact()
    }

    /// The dense `d × d` matrix `B₊ᵀB₊ − B₋ᵀB₋` (tests and small `d` only).
    pub fn to_dense(&self) -> Vec<f64> {
        let d = self.dim();
        let mut out = vec![0.0; d * d];
        for (side, sign) in [(&self.positive, 1.0), (&self.negative, -1.0)] {
            let rows = side.to_rows();
            for r in rows.chunks(d) {
                for i in 0..d {
                    if r[i] != 0.0 {
                        crate::linalg::axpy(sign * r[i], r, &mut out[i * d..(i + 1) * d]);
                    }
                }
            }
        }
        out
    }

    /// Bytes held by the state.
    pub fn state_bytes(&self) -> usize {
        self.positive.state_bytes() + self.negative.state_bytes()
    }
}
