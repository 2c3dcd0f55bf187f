//! The low-dimensional problems: (6) `min_z λ/2‖z‖² + Σ ℓ(y_i zᵀx̂_i)` of Algorithm 1 and its
//! shifted form (13) `min_z λ/2‖z + s‖² + Σ ℓ(y_i zᵀx̂_i + o_i)` of Algorithm 2
//! (`s = Rᵀw̃^{t−1}/√m`, `o_i = y_i x_iᵀw̃^{t−1}`).
//!
//! Ridge has the closed form `z = (λI + X̂X̂ᵀ)⁻¹(X̂b − λs)` with `b_i = y_i(1 − o_i)` (§3, "Application
//! to the square loss"); the `m × m` Cholesky factor is computed once and reused by every
//! iteration of Algorithm 2, and for `m > n` the `n × n` Woodbury form
//! `(λI + X̂X̂ᵀ)⁻¹ = (I − X̂(λI + X̂ᵀX̂)⁻¹X̂ᵀ)/λ` is used instead. Logistic and smoothed hinge are
//! solved to a tight relative gradient tolerance by trust-region Newton–CG, switching to dense
//! Newton steps (`m × m` Hessian by GEMM, Cholesky) when CG needs more than `m` iterations.

use super::problem::{Design, DrpLoss, MarginObjective, SmoothObjective};
use super::tron::{tron, TronOptions};
use super::DrpError;
use crate::cancel::Cancel;
use crate::linalg::{add_weighted_gram_cols, dot, gram_cols, gram_rows, SpdFactor};

/// The projected training matrix `X̂ᵀ = XᵀR/√m`: `n` rows `x̂_i ∈ ℝ^m`, dense, row-major.
///
/// ```
/// use sketchlearn::drp::{Dataset, GaussianProjection};
/// use sketchlearn::Row;
/// let mut data = Dataset::new(3);
/// data.push(Row::Dense(&[1.0, 0.0, 2.0]), 1.0).unwrap();
/// let r = GaussianProjection::new(2, 1).unwrap();
/// let p = r.project(&data);
/// assert_eq!((p.rows(), p.cols()), (1, 2));
/// assert_eq!(p.row(0), &r.project_row(data.row(0))[..]);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Projected {
    n: usize,
    m: usize,
    p: Vec<f64>,
}

impl Projected {
    pub(crate) fn new(n: usize, m: usize, p: Vec<f64>) -> Self {
        debug_assert_eq!(p.len(), n * m);
        Projected { n, m, p }
    }

    /// Number of examples `n`.
    pub fn rows(&self) -> usize {
        self.n
    }

    /// Projected dimension `m`.
    pub fn cols(&self) -> usize {
        self.m
    }

    /// `x̂_i`.
    pub fn row(&self, i: usize) -> &[f64] {
        &self.p[i * self.m..(i + 1) * self.m]
    }

    /// All rows, row-major `n × m`.
    pub fn as_slice(&self) -> &[f64] {
        &self.p
    }
}

impl Design for Projected {
    fn rows(&self) -> usize {
        self.n
    }
    fn cols(&self) -> usize {
        self.m
    }
    fn mul(&self, w: &[f64], out: &mut [f64]) {
        for (i, o) in out.iter_mut().enumerate().take(self.n) {
            *o = dot(self.row(i), w);
        }
    }
    fn mul_t_add(&self, c: &[f64], out: &mut [f64]) {
        for (i, &ci) in c.iter().enumerate().take(self.n) {
            if ci != 0.0 {
                crate::linalg::axpy(ci, self.row(i), out);
            }
        }
    }
}

enum RidgeFactor {
    /// `λI_m + X̂X̂ᵀ` (`m ≤ n`).
    Primal(SpdFactor),
    /// `λI_n + X̂ᵀX̂` (`m > n`).
    Dual(SpdFactor),
}

/// The low-dimensional solution and how it was obtained.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LowDimSolution {
    pub z: Vec<f64>,
    pub iterations: usize,
    pub relative_grad_norm: f64,
    pub converged: bool,
}

/// Solver of (6)/(13) over one projected matrix (the ridge factorisation is cached).
pub(crate) struct LowDimSolver<'a> {
    p: &'a Projected,
    y: &'a [f64],
    loss: DrpLoss,
    lambda: f64,
    options: TronOptions,
    ridge: Option<RidgeFactor>,
    cancel: Cancel<'a>,
}

impl<'a> LowDimSolver<'a> {
    pub fn new(
        p: &'a Projected,
        y: &'a [f64],
        loss: DrpLoss,
        lambda: f64,
        options: TronOptions,
        cancel: Cancel<'a>,
    ) -> Self {
        LowDimSolver {
            p,
            y,
            loss,
            lambda,
            options,
            ridge: None,
            cancel,
        }
    }

    /// Minimises `λ/2‖z + s‖² + Σ ℓ(y_i zᵀx̂_i + o_i)` (`None` = zero shift/offset).
    pub fn solve(
        &mut self,
        offset: Option<&[f64]>,
        shift: Option<&[f64]>,
    ) -> Result<LowDimSolution, DrpError> {
        let m = self.p.cols();
        let mut z = vec![0.0; m];
        let mut obj = MarginObjective::new(self.p, self.loss, self.lambda, self.y, offset, shift);
        if self.loss == DrpLoss::Ridge {
            self.ridge_closed_form(offset, shift, &mut z)?;
            // Report the residual of the normal equations (a check of the factorisation).
            let mut g0 = vec![0.0; m];
            obj.value(&vec![0.0; m]);
            obj.gradient(&vec![0.0; m], &mut g0);
            let mut g = vec![0.0; m];
            obj.value(&z);
            obj.gradient(&z, &mut g);
            let (gn, gn0) = (dot(&g, &g).sqrt(), dot(&g0, &g0).sqrt());
            return Ok(LowDimSolution {
                z,
                iterations: 1,
                relative_grad_norm: if gn0 > 0.0 { gn / gn0 } else { 0.0 },
                converged: true,
            });
        }
        // Trust-region Newton–CG first; if its Hessian–vector products cost more than forming
        // the m × m Hessian twice (a budget of m CG iterations, 2nm² flops: ill-conditioned
        // problems such as a9a), finish with dense Newton steps (GEMM + Cholesky).
        let budget = TronOptions {
            max_cg_total: m.max(10),
            ..self.options
        };
        let report = tron(&mut obj, &mut z, budget, self.cancel)?;
        let g0 = report.grad_norm0;
        let (iterations, grad_norm, converged) = if report.budget_exhausted && !report.converged {
            let (it, gn, conv) = dense_newton(
                &mut obj,
                (self.p, self.lambda),
                &mut z,
                (self.options, self.cancel),
                g0,
            )?;
            (report.iterations + it, gn, conv)
        } else {
            (report.iterations, report.grad_norm, report.converged)
        };
        if z.iter().any(|v| !v.is_finite()) {
            return Err(DrpError::NonFinite(
                "the low-dimensional solution is not finite".into(),
            ));
        }
        Ok(LowDimSolution {
            z,
            iterations,
            relative_grad_norm: if g0 > 0.0 { grad_norm / g0 } else { 0.0 },
            converged,
        })
    }

    /// `z = (λI + X̂X̂ᵀ)⁻¹ (X̂ b − λ s)`, `b_i = y_i (1 − o_i)`.
    fn ridge_closed_form(
        &mut self,
        offset: Option<&[f64]>,
        shift: Option<&[f64]>,
        z: &mut [f64],
    ) -> Result<(), DrpError> {
        let (n, m, lambda) = (self.p.rows(), self.p.cols(), self.lambda);
        let b: Vec<f64> = (0..n)
            .map(|i| self.y[i] * (1.0 - offset.map_or(0.0, |o| o[i])))
            .collect();
        z.iter_mut().for_each(|v| *v = 0.0);
        self.p.mul_t_add(&b, z);
        if let Some(s) = shift {
            crate::linalg::axpy(-lambda, s, z);
        }
        if self.ridge.is_none() {
            self.ridge = Some(if m <= n {
                let mut a = vec![0.0; m * m];
                gram_cols(self.p.as_slice(), n, m, &mut a);
                for k in 0..m {
                    a[k * m + k] += lambda;
                }
                RidgeFactor::Primal(SpdFactor::new(&a, m)?)
            } else {
                let mut k = vec![0.0; n * n];
                gram_rows(self.p.as_slice(), n, m, &mut k);
                for i in 0..n {
                    k[i * n + i] += lambda;
                }
                RidgeFactor::Dual(SpdFactor::new(&k, n)?)
            });
        }
        match self.ridge.as_ref().expect("just set") {
            RidgeFactor::Primal(f) => f.solve_in_place(z),
            RidgeFactor::Dual(f) => {
                let mut t = vec![0.0; n];
                self.p.mul(z, &mut t);
                f.solve_in_place(&mut t);
                for v in t.iter_mut() {
                    *v = -*v;
                }
                self.p.mul_t_add(&t, z);
                z.iter_mut().for_each(|v| *v /= lambda);
            }
        }
        Ok(())
    }
}

/// Damped Newton with the dense Hessian `λI + X̂ᵀ diag(ℓ'') X̂` (Cholesky) and Armijo
/// backtracking, from `z`; stops at `‖∇F‖ ≤ tolerance·g0`. When the predicted decrease is below
/// the rounding noise of `F`, a step is accepted iff it decreases `‖∇F‖`. Returns (iterations,
/// final `‖∇F‖`, converged); `cancel` is polled before each Newton step.
fn dense_newton(
    obj: &mut MarginObjective<'_, Projected>,
    (p, lambda): (&Projected, f64),
    z: &mut [f64],
    (options, cancel): (TronOptions, Cancel<'_>),
    g0: f64,
) -> Result<(usize, f64, bool), DrpError> {
    let (n, m) = (p.rows(), p.cols());
    let mut g = vec![0.0; m];
    let mut g_new = vec![0.0; m];
    let mut z_new = vec![0.0; m];
    let mut step = vec![0.0; m];
    let mut h = vec![0.0; m * m];
    let mut f = obj.value(z);
    obj.gradient(z, &mut g);
    let mut gn = dot(&g, &g).sqrt();
    let mut iterations = 0;
    while iterations < options.max_iterations {
        if gn <= options.tolerance * g0 {
            return Ok((iterations, gn, true));
        }
        cancel.check()?;
        iterations += 1;
        h.iter_mut().for_each(|v| *v = 0.0);
        for k in 0..m {
            h[k * m + k] = lambda;
        }
        add_weighted_gram_cols(p.as_slice(), n, m, obj.curvature(), &mut h);
        let factor = SpdFactor::new(&h, m)?;
        for k in 0..m {
            step[k] = -g[k];
        }
        factor.solve_in_place(&mut step);
        let gs = dot(&g, &step);
        let mut t = 1.0;
        let accepted = loop {
            for k in 0..m {
                z_new[k] = z[k] + t * step[k];
            }
            let f_new = obj.value(&z_new);
            if -gs * t <= 1e-11 * f.abs() {
                // In the rounding noise of F: judge by the gradient norm.
                obj.gradient(&z_new, &mut g_new);
                let gn_new = dot(&g_new, &g_new).sqrt();
                if gn_new < gn {
                    f = f_new;
                    break true;
                }
                break false;
            }
            if f_new <= f + 1e-4 * t * gs {
                f = f_new;
                obj.gradient(&z_new, &mut g_new);
                break true;
            }
            t *= 0.5;
            if t < 1e-12 {
                break false;
            }
        };
        if !accepted {
            obj.value(z);
            obj.gradient(z, &mut g);
            break;
        }
        z.copy_from_slice(&z_new);
        g.copy_from_slice(&g_new);
        gn = dot(&g, &g).sqrt();
    }
    Ok((iterations, gn, gn <= options.tolerance * g0))
}
