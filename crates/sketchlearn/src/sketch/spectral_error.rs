//! Relative spectral error of a covariance approximation (RFD paper §5.1):
//! `‖AᵀA − Â‖₂ / ‖AᵀA‖₂`, computed without forming any `d × d` matrix.
//!
//! The exact matrix is kept implicitly as the rows of `A` ([`RowMatrix`], CSR, optionally with a
//! signed weight per row for GFD's `Σ s_t g_t g_tᵀ`), the approximation as a [`SymOperator`], and
//! the spectral norm of the (generally indefinite) difference is the largest absolute eigenvalue
//! found by Lanczos iteration with full re-orthogonalisation ([`extreme_eigenvalue`]). Each
//! iteration costs one product with `A` and `Aᵀ` (`O(nnz)`) plus one with the sketch (`O(md)`).
//! When the Krylov space reaches dimension `d` (small problems) the result is exact up to rounding.

use crate::linalg::{axpy, dot, SymEigen};
use crate::Row;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};
use rand_xoshiro::Xoshiro256PlusPlus;

/// A symmetric linear operator on `ℝ^d`, given by its action on vectors.
pub trait SymOperator {
    /// Dimension `d`.
    fn dim(&self) -> usize;
    /// `out = M v` (`out` is overwritten).
    fn apply(&self, v: &[f64], out: &mut [f64]);
}

/// The rows of a matrix `A` in compressed sparse row form, with an optional weight `s_i` per
/// row; as an operator it is `Σ_i s_i a_i a_iᵀ` (= `AᵀA` with unit weights).
///
/// ```
/// use sketchlearn::sketch::{RowMatrix, SymOperator};
/// use sketchlearn::Row;
/// let mut a = RowMatrix::new(2);
/// a.push(Row::Dense(&[1.0, 2.0]), 1.0);
/// let mut out = [0.0; 2];
/// a.apply(&[1.0, 0.0], &mut out);
/// assert_eq!(out, [1.0, 2.0]);
/// ```
#[derive(Clone, Debug, Default)]
pub struct RowMatrix {
    dim: usize,
    indptr: Vec<usize>,
    indices: Vec<u32>,
    values: Vec<f64>,
    weights: Vec<f64>,
}

impl RowMatrix {
    /// An empty matrix with rows of dimension `dim`.
    pub fn new(dim: usize) -> Self {
        RowMatrix {
            dim,
            indptr: vec![0],
            ..Default::default()
        }
    }

    /// Appends a row with weight `s` (1 for `AᵀA`). Entries beyond `dim` grow the dimension.
    pub fn push(&mut self, row: Row<'_>, s: f64) {
        match row {
            Row::Dense(v) => {
                for (i, &x) in v.iter().enumerate() {
                    if x != 0.0 {
                        self.indices.push(i as u32);
                        self.values.push(x);
                    }
                }
            }
            Row::Sparse { indices, values } => {
                self.indices.extend_from_slice(indices);
                self.values.extend_from_slice(values);
            }
        }
        self.dim = self.dim.max(row.max_index_plus_one());
        self.indptr.push(self.indices.len());
        self.weights.push(s);
    }

    /// Sets the dimension (at least the largest index seen).
    pub fn set_dim(&mut self, dim: usize) {
        let need = self
            .indices
            .iter()
            .map(|&i| i as usize + 1)
            .max()
            .unwrap_or(0);
        self.dim = dim.max(need);
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.weights.len()
    }

    /// Row `i` as a sparse view.
    pub fn row(&self, i: usize) -> Row<'_> {
        let (a, b) = (self.indptr[i], self.indptr[i + 1]);
        Row::Sparse {
            indices: &self.indices[a..b],
            values: &self.values[a..b],
        }
    }

    /// Weight of row `i`.
    pub fn weight(&self, i: usize) -> f64 {
        self.weights[i]
    }

    /// Squared Frobenius norm of the rows, weights ignored (`‖A‖²_F`).
    pub fn frobenius_sq(&self) -> f64 {
        self.values.iter().map(|x| x * x).sum()
    }

    /// The dense `d × d` matrix `Σ s_i a_i a_iᵀ` (tests and small `d` only).
    pub fn to_dense_gram(&self) -> Vec<f64> {
        let d = self.dim;
        let mut out = vec![0.0; d * d];
        for r in 0..self.rows() {
            let (a, b) = (self.indptr[r], self.indptr[r + 1]);
            let s = self.weights[r];
            for p in a..b {
                let (i, x) = (self.indices[p] as usize, self.values[p]);
                for q in a..b {
                    out[i * d + self.indices[q] as usize] += s * x * self.values[q];
                }
            }
        }
        out
    }
}

impl SymOperator for RowMatrix {
    fn dim(&self) -> usize {
        self.dim
    }

    fn apply(&self, v: &[f64], out: &mut [f64]) {
        out.iter_mut().for_each(|x| *x = 0.0);
        for r in 0..self.rows() {
            let row = self.row(r);
            let c = row.dot(v) * self.weights[r];
            if c != 0.0 {
                row.axpy_into(c, out);
            }
        }
    }
}

/// `A − B` of two operators of the same dimension.
struct Difference<'a> {
    a: &'a dyn SymOperator,
    b: &'a dyn SymOperator,
}

impl SymOperator for Difference<'_> {
    fn dim(&self) -> usize {
        self.a.dim().max(self.b.dim())
    }

    fn apply(&self, v: &[f64], out: &mut [f64]) {
        self.a.apply(v, out);
        let mut tmp = vec![0.0; out.len()];
        self.b.apply(v, &mut tmp);
        for (o, t) in out.iter_mut().zip(tmp) {
            *o -= t;
        }
    }
}

/// Options of the Lanczos iteration.
#[derive(Clone, Copy, Debug)]
pub struct LanczosOptions {
    /// Largest Krylov dimension (capped at `d`).
    pub max_iter: usize,
    /// Stop when the residual of the extreme Ritz pair is below `tol · |θ|`.
    pub tol: f64,
    /// Seed of the random start vector.
    pub seed: u64,
}

impl Default for LanczosOptions {
    fn default() -> Self {
        LanczosOptions {
            max_iter: 300,
            tol: 1e-10,
            seed: 0x5eed,
        }
    }
}

/// The eigenvalue of largest absolute value of a symmetric operator, by Lanczos iteration with
/// full re-orthogonalisation. Returns 0 for the zero operator or `d = 0`.
///
/// ```
/// use sketchlearn::sketch::{extreme_eigenvalue, LanczosOptions, RowMatrix};
/// use sketchlearn::Row;
/// let mut a = RowMatrix::new(3);
/// a.push(Row::Dense(&[1.0, 0.0, 0.0]), -5.0);
/// a.push(Row::Dense(&[0.0, 1.0, 0.0]), 2.0);
/// let lam = extreme_eigenvalue(&a, LanczosOptions::default()).unwrap();
/// assert!((lam + 5.0).abs() < 1e-9);
/// ```
pub fn extreme_eigenvalue(
    op: &dyn SymOperator,
    opts: LanczosOptions,
) -> Result<f64, crate::linalg::LinalgError> {
    let d = op.dim();
    if d == 0 {
        return Ok(0.0);
    }
    let kmax = opts.max_iter.clamp(1, d);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(opts.seed);
    let mut q: Vec<f64> = (0..d).map(|_| StandardNormal.sample(&mut rng)).collect();
    let n0 = dot(&q, &q).sqrt();
    q.iter_mut().for_each(|x| *x /= n0);
    let mut basis: Vec<f64> = Vec::with_capacity(kmax * d);
    let mut alphas: Vec<f64> = Vec::with_capacity(kmax);
    let mut betas: Vec<f64> = Vec::with_capacity(kmax);
    let mut w = vec![0.0; d];
    let mut best = 0.0f64;
    for k in 0..kmax {
        basis.extend_from_slice(&q);
        op.apply(&q, &mut w);
        let a = dot(&w, &q);
        alphas.push(a);
        // Full re-orthogonalisation, twice, against every basis vector.
        for _ in 0..2 {
            for j in 0..=k {
                let qj = &basis[j * d..(j + 1) * d];
                let c = dot(qj, &w);
                axpy(-c, qj, &mut w);
            }
        }
        let b = dot(&w, &w).sqrt();
        let n = k + 1;
        let check = n == kmax || n % 5 == 0 || b <= f64::EPSILON * a.abs().max(best.abs());
        if check {
            let [(lo, r_lo), (hi, r_hi)] = ritz_extremes(&alphas, &betas, b)?;
            best = if hi.abs() >= lo.abs() { hi } else { lo };
            let scale = best.abs();
            let invariant = b <= 1e-13 * scale.max(f64::MIN_POSITIVE);
            // Both ends must have converged: the largest |λ| may sit at either end.
            if n == kmax || invariant || (r_lo <= opts.tol * scale && r_hi <= opts.tol * scale) {
                return Ok(best);
            }
        }
        if b == 0.0 {
            return Ok(best);
        }
        betas.push(b);
        for (qi, wi) in q.iter_mut().zip(&w) {
            *qi = wi / b;
        }
    }
    Ok(best)
}

/// Smallest and largest Ritz values of the tridiagonal `T_k`, each with its residual `|β_k y_k|`.
fn ritz_extremes(
    alphas: &[f64],
    betas: &[f64],
    beta_next: f64,
) -> Result<[(f64, f64); 2], crate::linalg::LinalgError> {
    let n = alphas.len();
    let mut t = vec![0.0; n * n];
    for i in 0..n {
        t[i * n + i] = alphas[i];
        if i + 1 < n {
            t[i * n + i + 1] = betas[i];
            t[(i + 1) * n + i] = betas[i];
        }
    }
    let mut eig = SymEigen::new(n);
    eig.compute(&t)?;
    let (vals, vecs) = (eig.values(), eig.vectors());
    let pair = |idx: usize| (vals[idx], (beta_next * vecs[(n - 1) * n + idx]).abs());
    Ok([pair(n - 1), pair(0)])
}

/// Relative spectral error `‖M − Â‖₂ / ‖M‖₂` of an approximation `Â` of `M = Σ s_i a_i a_iᵀ`
/// (RFD paper §5.1: Error-FD with `Â = BᵀB`, Error-RFD with `Â = BᵀB + αI`).
///
/// ```
/// use sketchlearn::sketch::{relative_spectral_error, FdVariant, FrequentDirections, LanczosOptions, RowMatrix, Sketch};
/// use sketchlearn::Row;
/// let rows = [[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [1.0, 1.0, 0.0]];
/// let mut exact = RowMatrix::new(3);
/// let mut fd = FrequentDirections::fd(3, 3, FdVariant::PerRow).unwrap();
/// for r in &rows {
///     exact.push(Row::Dense(r), 1.0);
///     fd.insert(Row::Dense(r)).unwrap();
/// }
/// // m = 3 ≥ rank 2: the sketch is exact.
/// let err = relative_spectral_error(&exact, &fd.matrix(), LanczosOptions::default()).unwrap();
/// assert!(err < 1e-12);
/// ```
pub fn relative_spectral_error(
    exact: &RowMatrix,
    approx: &dyn SymOperator,
    opts: LanczosOptions,
) -> Result<f64, crate::linalg::LinalgError> {
    let norm = extreme_eigenvalue(exact, opts)?.abs();
    let diff = Difference {
        a: exact,
        b: approx,
    };
    let err = extreme_eigenvalue(&diff, opts)?.abs();
    Ok(if norm > 0.0 { err / norm } else { err })
}
