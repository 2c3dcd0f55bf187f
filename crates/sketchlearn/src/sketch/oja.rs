//! Oja's sketch (SON paper, Luo et al. 2016, §3, Eq. (4) and Algorithm 3).
//!
//! Estimated eigenvectors `V ∈ ℝ^{m×d}` (orthonormal rows) and eigenvalues `Λ` of the to-sketch
//! stream, updated with the learning rate `γ_t = min(c/t, 1)` (paper: `Γ_t` of order `1/t`;
//! DESIGN.md §4 item 9 — the paper's analysis uses `c = 1`, the authors' VW code `c = 2`):
//!
//! `Λ ← (1 − γ)Λ + γ·diag(Vg)²`, `V ← orth(V + γ (Vg) gᵀ)`, `S = (tΛ)^½ V`,
//! `H = diag(1/(α + tλ_i))`.
//!
//! The initial `V` is a seeded Gaussian matrix with orthonormalised rows.
//!
//! **Orthonormalisation in `O(md)`.** The Gram matrix of `V + γpgᵀ` (`p = Vg`, `V` orthonormal)
//! is `I + (2γ + γ²‖g‖²)ppᵀ`, whose Cholesky factor is known in closed form
//! ([`oja_rank_one`](super::oja_rank_one), with the derivation): Gram–Schmidt's result
//! `L⁻¹(V + γpgᵀ)` costs `O(md)` per row instead of the `O(m²d)` of two Gram–Schmidt passes
//! (the cost SON §3 states for Oja's sketch). The explicit Gram–Schmidt
//! ([`orthonormalize_rows`]) still runs every `FULL_EVERY` (256) updates and whenever the
//! condition number `1 + β‖p‖²` of that Gram matrix exceeds `FAST_MAX_COND` (10⁴): it
//! removes the rounding the closed form accumulates (which grows with that condition number).
//! Both give the same rows up to rounding (`tests/suite/oja_rank_one.rs`).

use super::error::{check_pos, check_row};
use super::oja_rank_one::{apply_rows, update_apply_rows, RankOneCholesky, RankOneRow};
use super::{Sketch, SketchError, SketchMatrix};
use crate::linalg::orthonormalize_rows;
use crate::Row;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::borrow::Cow;

/// Updates between two explicit Gram–Schmidt orthonormalisations (the `t` of the update is a
/// multiple of it), which reset the rounding of the `O(md)` closed form.
pub(crate) const FULL_EVERY: u64 = 256;

/// Largest condition number `1 + β‖p‖²` of the updated rows' Gram matrix for which the `O(md)`
/// closed form is used; above it, the explicit Gram–Schmidt.
pub(crate) const FAST_MAX_COND: f64 = 1e4;

/// Relative norm below which a row counts as dependent (as in [`orthonormalize_rows`]).
const DEPENDENT: f64 = 1e-10;

/// Oja's streaming eigenvector sketch with its diagonal `H`.
///
/// ```
/// use sketchlearn::sketch::{OjaSketch, Sketch};
/// use sketchlearn::Row;
/// let mut oja = OjaSketch::new(3, 1, 1.0, 1.0, 42).unwrap();
/// for _ in 0..200 {
///     oja.insert(Row::Dense(&[3.0, 0.0, 0.0])).unwrap();
///     oja.insert(Row::Dense(&[0.0, 1.0, 0.0])).unwrap();
/// }
/// // The one estimated direction aligns with the dominant axis e1.
/// assert!(oja.eigenvectors()[0].abs() > 0.99);
/// ```
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct OjaSketch {
    m: usize,
    dim: usize,
    alpha: f64,
    c: f64,
    t: u64,
    lambda: Vec<f64>,
    v: Vec<f64>,
    h: Vec<f64>,
    p: Vec<f64>,
    /// Scratch of the closed-form orthonormalisation (not stored).
    #[serde(skip)]
    rows: Vec<RankOneRow>,
    #[serde(skip)]
    run: Vec<f64>,
}

impl OjaSketch {
    /// Sketch size `m ≥ 0` (m = 0 keeps no direction: Oja-SON is then projected OGD with step
    /// `1/α`), regularizer `α > 0` of `H`, learning-rate constant `c > 0`, seed of the initial
    /// directions.
    pub fn new(dim: usize, m: usize, alpha: f64, c: f64, seed: u64) -> Result<Self, SketchError> {
        check_pos("alpha", alpha)?;
        check_pos("oja learning-rate constant c", c)?;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let v: Vec<f64> = (0..m * dim)
            .map(|_| StandardNormal.sample(&mut rng))
            .collect();
        Self::with_directions(dim, m, alpha, c, v)
    }

    /// Like [`OjaSketch::new`] but starting from the given directions `v` (row-major `m × d`;
    /// its rows are orthonormalised, dependent rows become zero) instead of seeded Gaussian ones.
    /// Used to start a dense learner from the same directions as the sparse-time Oja learner
    /// (`linear::sparse::initial_directions`).
    pub fn with_directions(
        dim: usize,
        m: usize,
        alpha: f64,
        c: f64,
        mut v: Vec<f64>,
    ) -> Result<Self, SketchError> {
        check_pos("alpha", alpha)?;
        check_pos("oja learning-rate constant c", c)?;
        if v.len() != m * dim {
            return Err(SketchError::InvalidParameter(format!(
                "initial directions have {} entries, expected m·d = {}",
                v.len(),
                m * dim
            )));
        }
        orthonormalize_rows(&mut v, m, dim);
        Ok(OjaSketch {
            m,
            dim,
            alpha,
            c,
            t: 0,
            lambda: vec![0.0; m],
            v,
            h: vec![1.0 / alpha; m],
            p: vec![0.0; m],
            rows: Vec::new(),
            run: Vec::new(),
        })
    }

    /// Estimated eigenvectors `V` (row-major `m × d`, orthonormal rows).
    pub fn eigenvectors(&self) -> &[f64] {
        &self.v
    }

    /// Estimated eigenvalues `Λ` (of the average `GᵀG / t`).
    pub fn eigenvalues(&self) -> &[f64] {
        &self.lambda
    }

    /// Diagonal of `H = (αI + SSᵀ)⁻¹ = diag(1/(α + tλ_i))`.
    pub fn h_diag(&self) -> &[f64] {
        &self.h
    }

    /// Number of updates `t`.
    pub fn t(&self) -> u64 {
        self.t
    }

    /// [`Sketch::insert`] of `g`; when `x` (length `d`) is given, also `vx = V'x` with the
    /// updated rows `V'`, computed in the same pass over `V` when the closed-form
    /// orthonormalisation runs on a contiguous `g` (then `true` is returned; otherwise `vx` is
    /// not written and the caller computes `V'x` itself).
    ///
    /// ```
    /// use sketchlearn::sketch::{OjaSketch, Sketch};
    /// use sketchlearn::Row;
    /// let mut oja = OjaSketch::new(3, 2, 1.0, 1.0, 42).unwrap();
    /// let (g, x) = ([0.3, -0.2, 0.1], [1.0, 0.5, 0.0]);
    /// let mut vx = [0.0; 2];
    /// for _ in 0..300 {
    ///     if oja.insert_projecting(Row::Dense(&g), Some(&x), &mut vx).unwrap() {
    ///         let v = oja.eigenvectors();
    ///         let direct = v[3] * x[0] + v[4] * x[1] + v[5] * x[2];
    ///         assert!((vx[1] - direct).abs() < 1e-12);
    ///     }
    /// }
    /// ```
    pub fn insert_projecting(
        &mut self,
        g: Row<'_>,
        x: Option<&[f64]>,
        vx: &mut [f64],
    ) -> Result<bool, SketchError> {
        check_row(&g, self.dim)?;
        let (m, d) = (self.m, self.dim);
        self.t += 1;
        let gamma = (self.c / self.t as f64).min(1.0);
        g.dot_rows(&self.v, d, &mut self.p);
        for i in 0..m {
            self.lambda[i] = (1.0 - gamma) * self.lambda[i] + gamma * self.p[i] * self.p[i];
        }
        let mut projected = false;
        if self.p.iter().any(|&x| x != 0.0) {
            let fast = self.rank_one_rows(gamma, &g);
            match (fast, g.contiguous(d)) {
                (true, Some(gd)) => {
                    let x = x.filter(|x| x.len() == d);
                    let (rows, p) = (&self.rows, &self.p);
                    update_apply_rows(rows, (gamma, p), &mut self.v, gd, x, vx, &mut self.run);
                    projected = x.is_some();
                }
                _ => {
                    for i in 0..m {
                        if self.p[i] != 0.0 {
                            g.axpy_into(gamma * self.p[i], &mut self.v[i * d..(i + 1) * d]);
                        }
                    }
                    if fast {
                        apply_rows(&self.rows, &mut self.v, d, &mut self.run);
                    } else {
                        orthonormalize_rows(&mut self.v, m, d);
                    }
                }
            }
        }
        let t = self.t as f64;
        for i in 0..m {
            self.h[i] = 1.0 / (self.alpha + t * self.lambda[i]);
        }
        if self.lambda.iter().any(|x| !x.is_finite()) {
            return Err(SketchError::NonFinite("Oja eigenvalue overflowed".into()));
        }
        Ok(projected)
    }

    /// The coefficients of the closed-form orthonormalisation of the rows of `V + γpgᵀ` (`p` the
    /// `Vg` before the step) into `self.rows`: the Cholesky factor of their Gram matrix
    /// `I + (2γ + γ²‖g‖²)ppᵀ` (module docs). Returns `false` when the explicit Gram–Schmidt is
    /// due instead: every [`FULL_EVERY`] updates, when a row is dependent or the Gram matrix's
    /// condition number exceeds [`FAST_MAX_COND`].
    fn rank_one_rows(&mut self, gamma: f64, g: &Row<'_>) -> bool {
        if self.t % FULL_EVERY == 0 {
            return false;
        }
        let beta = 2.0 * gamma + gamma * gamma * g.squared_norm();
        let mut chol = RankOneCholesky::new(beta, DEPENDENT);
        self.rows.clear();
        for &p in &self.p {
            match chol.row(p) {
                Some(r) => self.rows.push(r),
                None => return false,
            }
        }
        // σ is finite here: every row passed the finite test of `D_k = σ_k/σ_{k−1}`.
        chol.sigma() <= FAST_MAX_COND
    }
}

impl Sketch for OjaSketch {
    fn dim(&self) -> usize {
        self.dim
    }

    fn sketch_size(&self) -> usize {
        self.m
    }

    fn rows_seen(&self) -> u64 {
        self.t
    }

    fn insert(&mut self, g: Row<'_>) -> Result<(), SketchError> {
        self.insert_projecting(g, None, &mut []).map(|_| ())
    }

    fn matrix(&self) -> SketchMatrix<'_> {
        let (m, d) = (self.m, self.dim);
        let t = self.t as f64;
        let mut b = self.v.clone();
        for i in 0..m {
            let s = (t * self.lambda[i]).max(0.0).sqrt();
            b[i * d..(i + 1) * d].iter_mut().for_each(|x| *x *= s);
        }
        SketchMatrix {
            b: Cow::Owned(b),
            rows: m,
            dim: d,
            alpha: 0.0,
        }
    }
}
