//! A sparse-aware, factored Generalized Frequent Directions sketch (SFTRL paper §3.1, Alg. 2 and
//! Alg. 3) for rows with few non-zeros, such as the one-hot `â = [x; 1]` of rating data.
//!
//! It computes the same `B₊ᵀB₊ − B₋ᵀB₋` as [`GeneralizedFrequentDirections`] (to rounding; the
//! tests in `tests/fm_sftrl.rs` compare the two), with the same buffer sizes, the same shrink by
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
//! [`GeneralizedFrequentDirections`]: crate::sketch::GeneralizedFrequentDirections

use crate::linalg::{gram_rows, matmul_into, SymEigen};
use crate::sketch::{FdVariant, SketchError};
use serde::{Deserialize, Serialize};

/// End of a list of the inverted index.
const NONE: u32 = u32::MAX;

/// Recompute the Gram matrix from the dense rows every this many materialisations.
const GRAM_REFRESH: u64 = 32;

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
    dim: usize,
    m: usize,
    variant: FdVariant,
    /// `L`: materialise after a shrink once this many sparse rows are held.
    sparse_target: usize,
    /// Dense rows of `Q`, coordinate-major: `dense[j * r_d + k]` is row `k`, coordinate `j`.
    r_d: usize,
    dense: Vec<f64>,
    /// Sparse rows of `Q` (CSR): row `s` is `sp_idx/sp_val[sp_start[s]..sp_start[s + 1]]`.
    sp_start: Vec<usize>,
    sp_idx: Vec<u32>,
    sp_val: Vec<f64>,
    /// Inverted index of the sparse rows: `sp_head[j]` is the last entry at coordinate `j`
    /// (`NONE` if none), `sp_next[e]` the previous entry at the same coordinate, `sp_row[e]` the
    /// sparse row of entry `e`. `S·v` then costs the number of entries at `v`'s coordinates.
    sp_head: Vec<u32>,
    sp_next: Vec<u32>,
    sp_row: Vec<u32>,
    /// Number of rows of `B`.
    rows: usize,
    /// `C`, row-major `rows × (r_d + r_s)` with row stride `cstride`.
    cstride: usize,
    coef: Vec<f64>,
    /// `C` is exactly the `rows × rows` identity (then `B·v = Q·v`).
    c_identity: bool,
    /// `BBᵀ`, row-major `rows × rows` with row stride `capacity`.
    gram: Vec<f64>,
    shrink_total: f64,
    shrinks: u64,
    rows_seen: u64,
    materializations: u64,
    #[serde(skip)]
    ws: Workspace,
}

/// Scratch buffers, overwritten before they are read (not part of the state).
#[derive(Debug, Default)]
struct Workspace {
    eig: Option<SymEigen>,
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
        let capacity = match variant {
            FdVariant::PerRow => m,
            FdVariant::Doubling => 2 * m,
        };
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
            shrink_total: 0.0,
            shrinks: 0,
            rows_seen: 0,
            materializations: 0,
            ws: Workspace::default(),
        })
    }

    /// Dimension `d` of the rows.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Sketch size `m`.
    pub fn sketch_size(&self) -> usize {
        self.m
    }

    /// Buffer strategy.
    pub fn variant(&self) -> FdVariant {
        self.variant
    }

    /// Rows of the buffer: `m` (per-row) or `2m` (doubling).
    pub fn capacity(&self) -> usize {
        match self.variant {
            FdVariant::PerRow => self.m,
            FdVariant::Doubling => 2 * self.m,
        }
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

    /// `‖B·v‖²` for a sparse `v` (strictly increasing indices `< dim`).
    pub fn norm_sq_of_product(&self, idx: &[u32], val: &[f64]) -> f64 {
        if self.rows == 0 {
            return 0.0;
        }
        let mut q = Vec::new();
        let mut out = Vec::new();
        self.q_times(idx, val, &mut q);
        self.c_times(&q, &mut out);
        out.iter().map(|x| x * x).sum()
    }

    /// Inserts `scale · v` for a sparse `v` with strictly increasing indices `< dim` and finite
    /// values (checked by the caller). A row that is zero after scaling takes no buffer row.
    pub fn insert_scaled(
        &mut self,
        idx: &[u32],
        val: &[f64],
        scale: f64,
    ) -> Result<(), SketchError> {
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
        self.q_times(idx, val, &mut q);
        self.c_times(&q, &mut br);
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
            if self.r_s() >= self.sparse_target {
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

    /// Shrinks the full buffer by `δ = λ_m` of `BBᵀ`, keeping at most `m − 1` rows (the rule of
    /// [`FrequentDirections`](crate::sketch::FrequentDirections)).
    fn shrink(&mut self) -> Result<(), SketchError> {
        let (l, m, cap) = (self.rows, self.m, self.capacity());
        let cols = self.cols();
        let compact = &mut self.ws.compact;
        compact.clear();
        for i in 0..l {
            compact.extend_from_slice(&self.gram[i * cap..i * cap + l]);
        }
        let eig = match &mut self.ws.eig {
            Some(e) if e.size() == l => e,
            slot => slot.insert(SymEigen::new(l)),
        };
        eig.compute(compact)?;
        let lambda = eig.values();
        let u = eig.vectors();
        let delta = if l >= m { lambda[m - 1].max(0.0) } else { 0.0 };
        let tol = lambda[0].max(0.0) * (l as f64) * 4.0 * f64::EPSILON;
        let keep = lambda
            .iter()
            .take(m.saturating_sub(1))
            .take_while(|&&x| x - delta > tol)
            .count();
        // New C rows: s_i Σ_k U[k, i] C[k, :], i.e. C ← W·C with W = diag(s)·U[:, :keep]ᵀ.
        let cs = self.cstride;
        let w = &mut self.ws.rot;
        w.clear();
        w.resize(keep * l, 0.0);
        for i in 0..keep {
            let s = (1.0 - delta / lambda[i]).max(0.0).sqrt();
            for k in 0..l {
                w[i * l + k] = s * u[k * l + i];
            }
        }
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
                self.gram[i * cap + j] = if i == j { lambda[i] - delta } else { 0.0 };
            }
        }
        self.rows = keep;
        self.c_identity = false;
        self.shrink_total += delta;
        self.shrinks += 1;
        if !self.shrink_total.is_finite() {
            return Err(SketchError::NonFinite("FD shrinkage overflowed".into()));
        }
        Ok(())
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
        if self.materializations % GRAM_REFRESH == 0 && rows > 0 {
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
    positive: FactoredFd,
    negative: FactoredFd,
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
