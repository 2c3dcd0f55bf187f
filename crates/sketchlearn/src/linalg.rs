//! Dense linear algebra helpers: the ONE module of the crate that touches `faer`.
//!
//! Every other module works on plain row-major `f64` slices and calls these helpers, so that a
//! `faer` upgrade touches this file only (`faer` is pinned to `~0.24.4`). All routines run
//! sequentially (`Par::Seq`): results are bit-for-bit reproducible for a given input, and the
//! machine-level parallelism is left to the caller.
//!
//! Conventions: matrices are row-major slices `a[i * cols + j]`; symmetric eigenvalues are
//! returned in **descending** order with eigenvectors as the columns of an `n × n` row-major
//! matrix.

use faer::diag::Diag;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::evd::{self_adjoint_evd, self_adjoint_evd_scratch, ComputeEigenvectors};
use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, MatMut, MatRef, Par};

/// Failure of a dense decomposition (the iterative eigen solver did not converge, which in
/// practice only happens on non-finite input).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinalgError {
    /// The symmetric eigen solver did not converge.
    #[error("symmetric eigendecomposition did not converge (non-finite input?)")]
    NoConvergence,
    /// The input contained NaN or infinity.
    #[error("matrix contains a non-finite value")]
    NonFinite,
    /// A Cholesky pivot was not positive.
    #[error("matrix is not (numerically) positive definite")]
    NotPositiveDefinite,
}

fn view(a: &[f64], rows: usize, cols: usize) -> MatRef<'_, f64> {
    MatRef::from_row_major_slice(&a[..rows * cols], rows, cols)
}

fn view_mut(a: &mut [f64], rows: usize, cols: usize) -> MatMut<'_, f64> {
    MatMut::from_row_major_slice_mut(&mut a[..rows * cols], rows, cols)
}

/// `out (rows × rows) = B Bᵀ` for a row-major `B` of shape `rows × cols` (the Gram matrix of
/// the rows). `out` is row-major and exactly symmetric.
pub fn gram_rows(b: &[f64], rows: usize, cols: usize, out: &mut [f64]) {
    let bv = view(b, rows, cols);
    matmul(
        view_mut(out, rows, rows),
        Accum::Replace,
        bv,
        bv.transpose(),
        1.0,
        Par::Seq,
    );
    symmetrize(out, rows);
}

/// `out (k × cols) = Uᵀ B` restricted to the first `k` columns of `U`: the rotation that turns
/// the rows of `B` into the directions of the eigenvectors `U` (`rows × rows`, row-major) of
/// `B Bᵀ`.
pub fn rotate_rows(u: &[f64], rows: usize, k: usize, b: &[f64], cols: usize, out: &mut [f64]) {
    let uv = view(u, rows, rows);
    let ut = uv.subcols(0, k).transpose();
    matmul(
        view_mut(out, k, cols),
        Accum::Replace,
        ut,
        view(b, rows, cols),
        1.0,
        Par::Seq,
    );
}

/// General product `out (n × p) = A (n × k) · B (k × p)`, all row-major, overwriting `out`.
pub fn matmul_into(a: &[f64], b: &[f64], n: usize, k: usize, p: usize, out: &mut [f64]) {
    matmul(
        view_mut(out, n, p),
        Accum::Replace,
        view(a, n, k),
        view(b, k, p),
        1.0,
        Par::Seq,
    );
}

/// `out[i] = b_i · x` for the `rows` rows of a row-major `B` (`rows × cols`): `out = B x`
/// through faer's matrix–vector kernel (SIMD chosen at run time), the hot loop of the sketched
/// Newton step.
pub fn rows_times_vector(b: &[f64], rows: usize, cols: usize, x: &[f64], out: &mut [f64]) {
    if rows == 0 {
        return;
    }
    matmul(
        MatMut::from_column_major_slice_mut(&mut out[..rows], rows, 1),
        Accum::Replace,
        view(b, rows, cols),
        MatRef::from_column_major_slice(&x[..cols], cols, 1),
        1.0,
        Par::Seq,
    );
}

/// `target += coef · Bᵀ z` for a row-major `B` (`rows × cols`) and `z` of length `rows`.
pub fn add_rows_transposed(
    b: &[f64],
    rows: usize,
    cols: usize,
    z: &[f64],
    coef: f64,
    target: &mut [f64],
) {
    if rows == 0 {
        return;
    }
    matmul(
        MatMut::from_column_major_slice_mut(&mut target[..cols], cols, 1),
        Accum::Add,
        view(b, rows, cols).transpose(),
        MatRef::from_column_major_slice(&z[..rows], rows, 1),
        coef,
        Par::Seq,
    );
}

/// Reusable workspace for symmetric eigendecompositions of one size (no allocation per call).
pub struct SymEigen {
    n: usize,
    input: Mat<f64>,
    vectors_cm: Mat<f64>,
    diag: Diag<f64>,
    scratch: MemBuffer,
    values: Vec<f64>,
    vectors: Vec<f64>,
    want_vectors: bool,
}

impl std::fmt::Debug for SymEigen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SymEigen").field("n", &self.n).finish()
    }
}

impl SymEigen {
    /// A workspace for `n × n` problems computing eigenvalues and eigenvectors.
    pub fn new(n: usize) -> Self {
        Self::with_vectors(n, true)
    }

    /// A workspace for `n × n` problems; eigenvectors only when `want_vectors`.
    pub fn with_vectors(n: usize, want_vectors: bool) -> Self {
        let compute = if want_vectors {
            ComputeEigenvectors::Yes
        } else {
            ComputeEigenvectors::No
        };
        let req = self_adjoint_evd_scratch::<f64>(n, compute, Par::Seq, Default::default());
        SymEigen {
            n,
            input: Mat::zeros(n, n),
            vectors_cm: Mat::zeros(n, n),
            diag: Diag::zeros(n),
            scratch: MemBuffer::new(req),
            values: vec![0.0; n],
            vectors: vec![0.0; if want_vectors { n * n } else { 0 }],
            want_vectors,
        }
    }

    /// Problem size.
    pub fn size(&self) -> usize {
        self.n
    }

    /// Decomposes the symmetric row-major `n × n` matrix `a` (only its lower triangle is read).
    pub fn compute(&mut self, a: &[f64]) -> Result<(), LinalgError> {
        let n = self.n;
        if a[..n * n].iter().any(|x| !x.is_finite()) {
            return Err(LinalgError::NonFinite);
        }
        for i in 0..n {
            for j in 0..n {
                self.input[(i, j)] = a[i * n + j];
            }
        }
        let stack = MemStack::new(&mut self.scratch);
        let vecs = if self.want_vectors {
            Some(self.vectors_cm.as_mut())
        } else {
            None
        };
        self_adjoint_evd(
            self.input.as_ref(),
            self.diag.as_mut(),
            vecs,
            Par::Seq,
            stack,
            Default::default(),
        )
        .map_err(|_| LinalgError::NoConvergence)?;
        // faer returns ascending order; we expose descending.
        let col = self.diag.as_ref().column_vector();
        for k in 0..n {
            self.values[k] = col[n - 1 - k];
        }
        if self.want_vectors {
            for i in 0..n {
                for k in 0..n {
                    self.vectors[i * n + k] = self.vectors_cm[(i, n - 1 - k)];
                }
            }
        }
        if self.values.iter().any(|x| !x.is_finite()) {
            return Err(LinalgError::NonFinite);
        }
        Ok(())
    }

    /// Eigenvalues in descending order (valid after [`SymEigen::compute`]).
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// Eigenvectors as the columns of a row-major `n × n` matrix, in the order of
    /// [`SymEigen::values`]. Empty when the workspace computes eigenvalues only.
    pub fn vectors(&self) -> &[f64] {
        &self.vectors
    }

    /// `out = (αI + A)⁻¹` for the last computed `A = UΛUᵀ` (`n × n`, row-major) with the
    /// eigenvalues clamped at 0: `out_ij = Σ_k u_ik u_jk / (α + max(λ_k, 0))` — the regularised
    /// inverse of random-projection sketches (SON paper, Alg. 3's `H`). Needs the vectors.
    pub fn clamped_inverse(&self, alpha: f64, out: &mut [f64]) {
        let m = self.n;
        let (lam, u) = (&self.values, &self.vectors);
        for i in 0..m {
            for j in 0..m {
                out[i * m + j] = (0..m)
                    .map(|k| u[i * m + k] * u[j * m + k] / (alpha + lam[k].max(0.0)))
                    .sum();
            }
        }
    }
}

/// The row-major `n × n` matrix `c·I` (the inverse `I/α` a curvature starts from).
pub fn scaled_identity(n: usize, c: f64) -> Vec<f64> {
    let mut a = vec![0.0; n * n];
    for i in 0..n {
        a[i * n + i] = c;
    }
    a
}

/// Eigenvalues (descending) of a symmetric row-major `n × n` matrix.
pub fn sym_eigenvalues(a: &[f64], n: usize) -> Result<Vec<f64>, LinalgError> {
    let mut eig = SymEigen::with_vectors(n, false);
    eig.compute(a)?;
    Ok(eig.values().to_vec())
}

/// Spectral norm (largest absolute eigenvalue) of a symmetric row-major `n × n` matrix.
pub fn sym_spectral_norm(a: &[f64], n: usize) -> Result<f64, LinalgError> {
    if n == 0 {
        return Ok(0.0);
    }
    let v = sym_eigenvalues(a, n)?;
    Ok(v[0].abs().max(v[n - 1].abs()))
}

/// Singular values (descending) of a row-major `rows × cols` matrix.
pub fn singular_values(a: &[f64], rows: usize, cols: usize) -> Result<Vec<f64>, LinalgError> {
    if a[..rows * cols].iter().any(|x| !x.is_finite()) {
        return Err(LinalgError::NonFinite);
    }
    view(a, rows, cols)
        .singular_values()
        .map_err(|_| LinalgError::NoConvergence)
}

/// Orthonormalises the rows of the row-major `rows × cols` matrix `v` in place by classical
/// Gram–Schmidt with one re-orthogonalisation pass (CGS2, "twice is enough": Giraud et al.
/// 2005), each pass two matrix–vector products against the rows already done. A row that
/// becomes numerically dependent on the previous ones is replaced by zeros; the number of
/// non-zero (orthonormal) rows is returned.
pub fn orthonormalize_rows(v: &mut [f64], rows: usize, cols: usize) -> usize {
    let mut rank = 0;
    let mut c = vec![0.0; rows];
    for i in 0..rows {
        let (done, rest) = v.split_at_mut(i * cols);
        let row = &mut rest[..cols];
        let norm0 = dot(row, row).sqrt();
        for _pass in 0..2 {
            rows_times_vector(done, i, cols, row, &mut c[..i]);
            add_rows_transposed(done, i, cols, &c[..i], -1.0, row);
        }
        let norm = dot(row, row).sqrt();
        if norm > 1e-10 * norm0 && norm > 0.0 && norm.is_finite() {
            row.iter_mut().for_each(|x| *x /= norm);
            rank += 1;
        } else {
            row.iter_mut().for_each(|x| *x = 0.0);
        }
    }
    rank
}

/// In-place Cholesky factorisation `A = L Lᵀ` of the symmetric positive definite `n × n` matrix
/// stored row-major with row stride `stride` (only the lower triangle is read; `L` overwrites it,
/// the strict upper triangle is left untouched). Fails with [`LinalgError::NotPositiveDefinite`]
/// when a pivot is not positive (or not finite).
pub fn cholesky_in_place(a: &mut [f64], n: usize, stride: usize) -> Result<(), LinalgError> {
    for j in 0..n {
        let mut d = a[j * stride + j];
        for k in 0..j {
            d -= a[j * stride + k] * a[j * stride + k];
        }
        if !(d > 0.0 && d.is_finite()) {
            return Err(LinalgError::NotPositiveDefinite);
        }
        let d = d.sqrt();
        a[j * stride + j] = d;
        for i in j + 1..n {
            let mut s = a[i * stride + j];
            for k in 0..j {
                s -= a[i * stride + k] * a[j * stride + k];
            }
            a[i * stride + j] = s / d;
        }
    }
    Ok(())
}

/// Solves `L Lᵀ x = b` in place (`b` becomes `x`) with the factor from [`cholesky_in_place`].
pub fn cholesky_solve_in_place(l: &[f64], n: usize, stride: usize, b: &mut [f64]) {
    for i in 0..n {
        let mut s = b[i];
        for k in 0..i {
            s -= l[i * stride + k] * b[k];
        }
        b[i] = s / l[i * stride + i];
    }
    for i in (0..n).rev() {
        let mut s = b[i];
        for k in i + 1..n {
            s -= l[k * stride + i] * b[k];
        }
        b[i] = s / l[i * stride + i];
    }
}

/// [`cholesky_solve_in_place`]'s solution of `L Lᵀ x = b` (equal to rounding; the sums run in
/// another order), shaped for the small factors FD-SON solves with at every example
/// (`n ≤ 2m`): the reciprocals of the diagonal are taken first (independent divisions, off the
/// substitutions' chain of dependent steps); the forward substitution takes one [`dot`] of a
/// contiguous row of `L` per unknown; the backward substitution subtracts each solved
/// unknown's multiple of a contiguous row of `L` from the unknowns before it (`Lᵀ`'s columns
/// are `L`'s rows) instead of gathering a column of `L` per unknown. Beyond 64 unknowns it is
/// [`cholesky_solve_in_place`].
pub fn cholesky_solve_by_rows(l: &[f64], n: usize, stride: usize, b: &mut [f64]) {
    const MAX: usize = 64;
    if n > MAX {
        return cholesky_solve_in_place(l, n, stride, b);
    }
    let mut recip = [0.0f64; MAX];
    for (i, r) in recip[..n].iter_mut().enumerate() {
        *r = 1.0 / l[i * stride + i];
    }
    for i in 0..n {
        let s = b[i] - dot(&l[i * stride..i * stride + i], &b[..i]);
        b[i] = s * recip[i];
    }
    for k in (0..n).rev() {
        let bk = b[k] * recip[k];
        b[k] = bk;
        for (bi, &lki) in b[..k].iter_mut().zip(&l[k * stride..k * stride + k]) {
            *bi -= lki * bk;
        }
    }
}

/// Dot product of two equally long slices.
#[inline]
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    // Four accumulators let the compiler vectorise without reassociation surprises.
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut s = [0.0f64; 4];
    let chunks = n / 4;
    for c in 0..chunks {
        let k = 4 * c;
        s[0] += a[k] * b[k];
        s[1] += a[k + 1] * b[k + 1];
        s[2] += a[k + 2] * b[k + 2];
        s[3] += a[k + 3] * b[k + 3];
    }
    let mut tail = 0.0;
    for k in 4 * chunks..n {
        tail += a[k] * b[k];
    }
    (s[0] + s[1]) + (s[2] + s[3]) + tail
}

/// `y += a · x` on equally long slices.
#[inline]
pub fn axpy(a: f64, x: &[f64], y: &mut [f64]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += a * xi;
    }
}

/// Makes the row-major `n × n` matrix `a` exactly symmetric: each off-diagonal pair becomes its
/// mean (GEMM may differ in the last bit between the two triangles).
fn symmetrize(a: &mut [f64], n: usize) {
    for i in 0..n {
        for j in 0..i {
            let v = 0.5 * (a[i * n + j] + a[j * n + i]);
            a[i * n + j] = v;
            a[j * n + i] = v;
        }
    }
}

/// `out (cols × cols) = Aᵀ A` for a row-major `A` of shape `rows × cols` (the Gram matrix of the
/// columns). `out` is row-major and exactly symmetric.
pub fn gram_cols(a: &[f64], rows: usize, cols: usize, out: &mut [f64]) {
    let av = view(a, rows, cols);
    matmul(
        view_mut(out, cols, cols),
        Accum::Replace,
        av.transpose(),
        av,
        1.0,
        Par::Seq,
    );
    symmetrize(out, cols);
}

/// Factors `K = αI + G` for the leading `l × l` block of a Gram matrix `G` stored row-major with
/// row stride `cap` (the small system of every FD/RFD Woodbury solve). Normally the Cholesky
/// factor is written into `out`'s lower triangle (same stride) and `Ok(false)` is returned; when
/// rounding makes `K` not positive definite, `out` receives the explicit inverse
/// `U diag(1/(α + max(λ, 0))) Uᵀ` from the eigendecomposition of `G` and `Ok(true)` is returned.
pub fn shifted_gram_factor(
    gram: &[f64],
    l: usize,
    cap: usize,
    alpha: f64,
    out: &mut [f64],
) -> Result<bool, LinalgError> {
    for i in 0..l {
        for j in 0..=i {
            out[i * cap + j] = gram[i * cap + j] + if i == j { alpha } else { 0.0 };
        }
    }
    if cholesky_in_place(out, l, cap).is_ok() {
        return Ok(false);
    }
    let mut g = vec![0.0; l * l];
    for i in 0..l {
        g[i * l..(i + 1) * l].copy_from_slice(&gram[i * cap..i * cap + l]);
    }
    let mut eig = SymEigen::new(l);
    eig.compute(&g)?;
    let (lam, u) = (eig.values(), eig.vectors());
    for i in 0..l {
        for j in 0..l {
            out[i * cap + j] = (0..l)
                .map(|q| u[i * l + q] * u[j * l + q] / (alpha + lam[q].max(0.0)))
                .sum();
        }
    }
    Ok(true)
}

/// Appends row `l` to the Cholesky factor of `K = αI + G` held by `out` for the leading
/// `l × l` block (as [`shifted_gram_factor`] left it, not the explicit inverse), after `G` was
/// bordered by its row and column `l` (row stride `cap`): `O(l²)` instead of a refactorisation
/// in `O(l³)`. Returns `false` when the new pivot is not positive (or not finite); the caller
/// then refactors with [`shifted_gram_factor`].
///
/// [`cholesky_in_place`] computes row `l` of `L` from `K`'s row `l` and the rows of `L` before
/// it alone (`L_lj = (K_lj − Σ_{k<j} L_lk L_jk)/L_jj`, `L_ll² = K_ll − Σ_k L_lk²`), and rows `< l`
/// do not depend on row `l`; so this row, computed with the same terms in the same order (and
/// `K_lj = G_lj + 0`, `K_ll = G_ll + α` as there), makes the whole factor equal to the bit to
/// the one a refactorisation of the `(l + 1) × (l + 1)` block gives, and it fails exactly when
/// that refactorisation's last pivot does.
///
/// (Tested to the bit against the refactorisation: `appending_rows_equals_refactoring`.)
pub fn shifted_gram_append_row(
    gram: &[f64],
    l: usize,
    cap: usize,
    alpha: f64,
    out: &mut [f64],
) -> bool {
    for j in 0..l {
        let mut s = gram[l * cap + j] + 0.0;
        for k in 0..j {
            s -= out[l * cap + k] * out[j * cap + k];
        }
        out[l * cap + j] = s / out[j * cap + j];
    }
    let mut d = gram[l * cap + l] + alpha;
    for k in 0..l {
        d -= out[l * cap + k] * out[l * cap + k];
    }
    if !(d > 0.0 && d.is_finite()) {
        return false;
    }
    out[l * cap + l] = d.sqrt();
    true
}

/// Cholesky factor `A = L Lᵀ` of a symmetric positive definite `n × n` matrix, computed by
/// `faer`'s blocked (sequential) factorisation, for repeated solves with the same matrix.
#[derive(Clone, Debug)]
pub struct SpdFactor {
    l: Mat<f64>,
}

impl SpdFactor {
    /// Factors the symmetric row-major `n × n` matrix `a` (only its lower triangle is read).
    /// Fails with [`LinalgError::NonFinite`] on NaN/∞ and [`LinalgError::NotPositiveDefinite`]
    /// when a pivot is not positive.
    pub fn new(a: &[f64], n: usize) -> Result<Self, LinalgError> {
        if a[..n * n].iter().any(|x| !x.is_finite()) {
            return Err(LinalgError::NonFinite);
        }
        let mut l = Mat::<f64>::zeros(n, n);
        for i in 0..n {
            for j in 0..=i {
                l[(i, j)] = a[i * n + j];
            }
        }
        let req = faer::linalg::cholesky::llt::factor::cholesky_in_place_scratch::<f64>(
            n,
            Par::Seq,
            Default::default(),
        );
        let mut mem = MemBuffer::new(req);
        faer::linalg::cholesky::llt::factor::cholesky_in_place(
            l.as_mut(),
            Default::default(),
            Par::Seq,
            MemStack::new(&mut mem),
            Default::default(),
        )
        .map_err(|_| LinalgError::NotPositiveDefinite)?;
        for i in 0..n {
            if !(l[(i, i)] > 0.0 && l[(i, i)].is_finite()) {
                return Err(LinalgError::NotPositiveDefinite);
            }
        }
        Ok(SpdFactor { l })
    }

    /// Size `n`.
    pub fn size(&self) -> usize {
        self.l.nrows()
    }

    /// Solves `A x = b` in place (`b` becomes `x`); `b.len()` must be `n`.
    pub fn solve_in_place(&self, b: &mut [f64]) {
        let n = self.size();
        let rhs = MatMut::from_column_major_slice_mut(&mut b[..n], n, 1);
        let mut mem = MemBuffer::new(faer::dyn_stack::StackReq::EMPTY);
        faer::linalg::cholesky::llt::solve::solve_in_place(
            self.l.as_ref(),
            rhs,
            Par::Seq,
            MemStack::new(&mut mem),
        );
    }
}

/// `out (cols × cols) += Aᵀ diag(w) A = Σ_r w_r a_r a_rᵀ` for a row-major `A` (`rows × cols`)
/// and non-negative row weights `w` (the Gauss–Newton/Hessian matrix of a margin loss). Rows
/// are scaled by `√w_r` in blocks and accumulated with GEMM; only `O(block · cols)` extra memory.
pub fn add_weighted_gram_cols(a: &[f64], rows: usize, cols: usize, w: &[f64], out: &mut [f64]) {
    const BLOCK: usize = 256;
    let mut scaled = vec![0.0; BLOCK.min(rows) * cols];
    let mut start = 0;
    while start < rows {
        let len = BLOCK.min(rows - start);
        for r in 0..len {
            let s = w[start + r].max(0.0).sqrt();
            let src = &a[(start + r) * cols..(start + r + 1) * cols];
            for (d, x) in scaled[r * cols..(r + 1) * cols].iter_mut().zip(src) {
                *d = s * x;
            }
        }
        let sv = view(&scaled, len, cols);
        matmul(
            view_mut(out, cols, cols),
            Accum::Add,
            sv.transpose(),
            sv,
            1.0,
            Par::Seq,
        );
        start += len;
    }
    symmetrize(out, cols);
}

/// Dominant eigenpair (the eigenvalue of largest magnitude) of a symmetric operator by power
/// iteration, warm-started from `v` (which need not be normalised; a zero `v` is replaced by the
/// all-ones direction). `apply(x, out)` must write `A x` into `out`. Stops after `max_iters`
/// products or once `‖Av − λv‖ ≤ tol·|λ|`. On return `v` is unit-norm and the Rayleigh quotient
/// `λ = vᵀAv` is returned with the number of products used; `λ = 0` when `A v = 0`.
///
/// Used for the linear minimisation over the nuclear-norm ball of online conditional gradient
/// (`argmin_{‖V‖_* ≤ τ} ⟨M, V⟩ = −τ·sign(λ)·v vᵀ` for a symmetric `M`).
pub fn power_iteration(
    mut apply: impl FnMut(&[f64], &mut [f64]),
    v: &mut [f64],
    max_iters: usize,
    tol: f64,
) -> (f64, usize) {
    let n = v.len();
    if n == 0 {
        return (0.0, 0);
    }
    let norm = dot(v, v).sqrt();
    if !(norm > 0.0 && norm.is_finite()) {
        v.iter_mut().for_each(|x| *x = 1.0 / (n as f64).sqrt());
    } else {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    let mut w = vec![0.0; n];
    let mut lambda = 0.0;
    for it in 1..=max_iters.max(1) {
        apply(v, &mut w);
        lambda = dot(v, &w);
        let wn = dot(&w, &w).sqrt();
        if !(wn > 0.0 && wn.is_finite()) {
            return (if wn == 0.0 { 0.0 } else { lambda }, it);
        }
        // Residual ‖Av − λv‖² = ‖Av‖² − λ² for a unit v.
        let resid = (wn * wn - lambda * lambda).max(0.0).sqrt();
        for (x, y) in v.iter_mut().zip(&w) {
            *x = y / wn;
        }
        if resid <= tol * lambda.abs() {
            return (lambda, it);
        }
    }
    (lambda, max_iters.max(1))
}

/// A fixed-seed xorshift stream of uniforms in [−½, ½) for the unit tests of the small dense
/// products (this module's and `sketch::fd_products`'), so that both draw the same systems.
#[cfg(test)]
pub(crate) fn test_uniforms() -> impl FnMut() -> f64 {
    let mut s = 0x2545_F491_4F6C_DD1Du64;
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    }
}

#[cfg(test)]
mod tests {
    /// The row-wise solve equals the column-wise one to rounding, on random SPD systems of
    /// the FD sizes (with a row stride wider than `n`, as FD-SON's factor has) and beyond the
    /// 64 unknowns of its stack buffer.
    #[test]
    fn cholesky_solve_by_rows_equals_in_place() {
        let mut next = crate::linalg::test_uniforms();
        for (n, stride) in [(1, 1), (5, 8), (20, 20), (21, 24), (70, 72)] {
            let y: Vec<f64> = (0..n * n).map(|_| next()).collect();
            let mut a = vec![0.0; n * stride];
            for i in 0..n {
                for j in 0..n {
                    let g: f64 = (0..n).map(|q| y[q * n + i] * y[q * n + j]).sum();
                    a[i * stride + j] = g + if i == j { 0.5 } else { 0.0 };
                }
            }
            super::cholesky_in_place(&mut a, n, stride).unwrap();
            let b: Vec<f64> = (0..n).map(|_| next()).collect();
            let (mut x1, mut x2) = (b.clone(), b);
            super::cholesky_solve_in_place(&a, n, stride, &mut x1);
            super::cholesky_solve_by_rows(&a, n, stride, &mut x2);
            let scale = x1.iter().fold(0.0f64, |m, x| m.max(x.abs()));
            for (p, q) in x1.iter().zip(&x2) {
                assert!((p - q).abs() <= 1e-10 * scale, "n = {n}: {p} vs {q}");
            }
        }
    }

    // The examples that were doc tests when this module was public.
    #[test]
    fn example_gram_rows_and_cols() {
        let b = [1.0, 2.0, 0.0, 3.0]; // 2 × 2
        let mut g = [0.0; 4];
        crate::linalg::gram_rows(&b, 2, 2, &mut g);
        assert_eq!(g, [5.0, 6.0, 6.0, 9.0]); // B Bᵀ
        crate::linalg::gram_cols(&b, 2, 2, &mut g);
        assert_eq!(g, [1.0, 2.0, 2.0, 13.0]); // Bᵀ B
    }

    #[test]
    fn example_matmul_into() {
        let a = [1.0, 2.0]; // 1 × 2
        let b = [3.0, 4.0]; // 2 × 1
        let mut out = [0.0];
        crate::linalg::matmul_into(&a, &b, 1, 2, 1, &mut out);
        assert_eq!(out, [11.0]);
    }

    #[test]
    fn example_rows_times_vector() {
        let b = [1.0, 2.0, 0.0, 3.0, 0.0, 1.0]; // 2 × 3
        let mut z = [0.0; 2];
        crate::linalg::rows_times_vector(&b, 2, 3, &[1.0, 1.0, 2.0], &mut z);
        assert_eq!(z, [3.0, 5.0]);
    }

    #[test]
    fn example_add_rows_transposed() {
        let b = [1.0, 2.0, 0.0, 3.0, 0.0, 1.0]; // 2 × 3
        let mut t = [1.0; 3];
        crate::linalg::add_rows_transposed(&b, 2, 3, &[1.0, -1.0], 2.0, &mut t);
        assert_eq!(t, [-3.0, 5.0, -1.0]);
    }

    #[test]
    fn example_symeigen() {
        use crate::linalg::SymEigen;
        let mut eig = SymEigen::new(2);
        eig.compute(&[2.0, 1.0, 1.0, 2.0]).unwrap();
        assert!((eig.values()[0] - 3.0).abs() < 1e-12);
        assert!((eig.values()[1] - 1.0).abs() < 1e-12);
    }

    #[test]
    fn example_sym_spectral_norm() {
        let a = [1.0, 0.0, 0.0, -3.0];
        assert!((crate::linalg::sym_spectral_norm(&a, 2).unwrap() - 3.0).abs() < 1e-12);
    }

    #[test]
    fn example_cholesky_in_place() {
        use crate::linalg::{cholesky_in_place, cholesky_solve_in_place};
        let mut a = [4.0, 2.0, 2.0, 3.0];
        cholesky_in_place(&mut a, 2, 2).unwrap();
        let mut b = [2.0, 1.0];
        cholesky_solve_in_place(&a, 2, 2, &mut b);
        assert!((4.0 * b[0] + 2.0 * b[1] - 2.0).abs() < 1e-14);
        assert!((2.0 * b[0] + 3.0 * b[1] - 1.0).abs() < 1e-14);
    }

    #[test]
    fn example_shifted_gram_factor() {
        use crate::linalg::{cholesky_solve_in_place, shifted_gram_factor};
        let g = [4.0, 2.0, 2.0, 3.0];
        let mut f = [0.0; 4];
        assert_eq!(shifted_gram_factor(&g, 2, 2, 1.0, &mut f), Ok(false));
        let mut b = [1.0, 0.0];
        cholesky_solve_in_place(&f, 2, 2, &mut b); // (I + G)⁻¹ e₁
        assert!((5.0 * b[0] + 2.0 * b[1] - 1.0).abs() < 1e-14);
    }

    proptest::proptest! {
        /// Growing the factor of `αI + BBᵀ` row by row ([`shifted_gram_append_row`]) gives the
        /// same bits as refactoring every leading block, including the rows with a zero or
        /// repeated `B` row and tiny `α` that make a pivot fail (then both refuse).
        #[test]
        fn appending_rows_equals_refactoring(
            rows in proptest::collection::vec(proptest::collection::vec(-4i32..5, 3), 1..12),
            scale in -6i32..6,
            alpha_exp in -20i32..2,
        ) {
            use crate::linalg::{shifted_gram_append_row, shifted_gram_factor};
            let cap = rows.len();
            let b: Vec<Vec<f64>> = rows
                .iter()
                .map(|r| r.iter().map(|&v| v as f64 * 1.7f64.powi(scale) / 3.0).collect())
                .collect();
            let mut g = vec![0.0; cap * cap];
            for i in 0..cap {
                for j in 0..cap {
                    g[i * cap + j] = crate::linalg::dot(&b[i], &b[j]);
                }
            }
            let alpha = 10f64.powi(alpha_exp);
            let mut grown = vec![0.0; cap * cap];
            let mut explicit = shifted_gram_factor(&g, 1, cap, alpha, &mut grown).unwrap();
            for l in 1..cap {
                if explicit || !shifted_gram_append_row(&g, l, cap, alpha, &mut grown) {
                    explicit = shifted_gram_factor(&g, l + 1, cap, alpha, &mut grown).unwrap();
                }
                let mut full = grown.clone();
                let full_explicit = shifted_gram_factor(&g, l + 1, cap, alpha, &mut full).unwrap();
                proptest::prop_assert_eq!(explicit, full_explicit);
                let bits = |f: &[f64]| f.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                proptest::prop_assert_eq!(bits(&grown), bits(&full));
            }
        }
    }

    #[test]
    fn example_spdfactor() {
        use crate::linalg::SpdFactor;
        let f = SpdFactor::new(&[4.0, 2.0, 2.0, 3.0], 2).unwrap();
        let mut b = [2.0, 1.0];
        f.solve_in_place(&mut b);
        assert!((4.0 * b[0] + 2.0 * b[1] - 2.0).abs() < 1e-14);
        assert!((2.0 * b[0] + 3.0 * b[1] - 1.0).abs() < 1e-14);
        assert!(SpdFactor::new(&[1.0, 2.0, 2.0, 1.0], 2).is_err());
    }

    #[test]
    fn example_add_weighted_gram_cols() {
        let a = [1.0, 2.0, 0.0, 3.0]; // 2 × 2
        let mut h = [1.0, 0.0, 0.0, 1.0];
        crate::linalg::add_weighted_gram_cols(&a, 2, 2, &[4.0, 1.0], &mut h);
        assert_eq!(h, [5.0, 8.0, 8.0, 26.0]);
    }

    #[test]
    fn example_power_iteration() {
        let a = [2.0, 1.0, 1.0, -3.0];
        let mut v = vec![1.0, 0.0];
        let (lambda, _) = crate::linalg::power_iteration(
            |x, out| {
                out[0] = a[0] * x[0] + a[1] * x[1];
                out[1] = a[2] * x[0] + a[3] * x[1];
            },
            &mut v,
            500,
            1e-12,
        );
        // Eigenvalues (−1 ± √29)/2: the dominant one is −(1 + √29)/2.
        assert!((lambda + (1.0 + 29f64.sqrt()) / 2.0).abs() < 1e-9);
    }

    use super::*;

    #[test]
    fn eigen_reconstructs() {
        let a = [4.0, 1.0, 0.5, 1.0, 3.0, 0.2, 0.5, 0.2, 1.0];
        let mut e = SymEigen::new(3);
        e.compute(&a).unwrap();
        let (vals, vecs) = (e.values(), e.vectors());
        assert!(vals[0] >= vals[1] && vals[1] >= vals[2]);
        for i in 0..3 {
            for j in 0..3 {
                let r: f64 = (0..3)
                    .map(|k| vecs[i * 3 + k] * vals[k] * vecs[j * 3 + k])
                    .sum();
                assert!((r - a[i * 3 + j]).abs() < 1e-12, "{i},{j}: {r}");
            }
        }
    }

    #[test]
    fn eigen_rejects_nan() {
        let mut e = SymEigen::new(2);
        assert_eq!(
            e.compute(&[f64::NAN, 0.0, 0.0, 1.0]),
            Err(LinalgError::NonFinite)
        );
    }

    #[test]
    fn rotate_matches_naive() {
        let b = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]; // 2 × 3
        let u = [0.6, -0.8, 0.8, 0.6]; // 2 × 2
        let mut out = [0.0; 3];
        rotate_rows(&u, 2, 1, &b, 3, &mut out);
        for j in 0..3 {
            let naive = 0.6 * b[j] + 0.8 * b[3 + j];
            assert!((out[j] - naive).abs() < 1e-14);
        }
    }

    #[test]
    fn gram_schmidt_orthonormal_and_rank() {
        let mut v = vec![1.0, 1.0, 0.0, 2.0, 2.0, 0.0, 0.0, 1.0, 1.0];
        let r = orthonormalize_rows(&mut v, 3, 3);
        assert_eq!(r, 2);
        assert_eq!(&v[3..6], &[0.0, 0.0, 0.0]);
        assert!((dot(&v[0..3], &v[0..3]) - 1.0).abs() < 1e-14);
        assert!(dot(&v[0..3], &v[6..9]).abs() < 1e-14);
    }
}
