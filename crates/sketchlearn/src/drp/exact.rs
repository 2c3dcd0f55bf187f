//! The exact solver of the full problem (1): trust-region Newton with conjugate gradients on the
//! sparse data, as LIBLINEAR's primal solvers (see `tron.rs`). Every Hessian–vector product costs
//! two passes over the non-zeros; nothing of size `d × d` or `n × n` is formed.

use super::data::Dataset;
use super::problem::{MarginObjective, Problem};
use super::tron::{tron, TronOptions};
use super::DrpError;
use crate::cancel::Cancel;
use crate::linalg::dot;
use std::time::Instant;

/// Trust-region Newton–CG on problem (1) (validated options).
///
/// Check [`ExactSolution::converged`]: for the smoothed hinge with a very small `λ` (below about
/// 1e-2 on nearly separable data) the quadratic model has no curvature for the misclassified
/// examples (their loss is linear) and the trust region makes slow progress; 3 of 400 random
/// small problems with `λ ∈ [1e-3, 1e-2]` needed more than the default 1000 iterations.
///
/// ```
/// use sketchlearn::drp::{Dataset, DrpLoss, ExactSolver, Problem};
/// use sketchlearn::Row;
/// let mut data = Dataset::new(2);
/// data.push(Row::Dense(&[1.0, 0.5]), 1.0).unwrap();
/// data.push(Row::Dense(&[-0.5, 1.0]), -1.0).unwrap();
/// let problem = Problem::new(DrpLoss::Logistic, 0.1).unwrap();
/// let exact = ExactSolver::default().solve(&problem, &data).unwrap();
/// assert!(exact.converged);
/// // KKT: the gradient vanishes at the optimum.
/// let g = problem.gradient(&data, &exact.w);
/// assert!(g.iter().all(|x| x.abs() < 1e-9));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ExactSolver {
    tolerance: f64,
    max_iterations: usize,
}

impl Default for ExactSolver {
    /// Relative gradient tolerance `1e-10`, at most 1000 Newton iterations.
    fn default() -> Self {
        ExactSolver {
            tolerance: 1e-10,
            max_iterations: 1000,
        }
    }
}

/// The exact solution and how it was obtained.
#[derive(Clone, Debug, PartialEq)]
pub struct ExactSolution {
    /// `w*` (length `d`).
    pub w: Vec<f64>,
    /// `f(w*)`.
    pub objective: f64,
    /// `‖∇f(w*)‖`.
    pub grad_norm: f64,
    /// `‖∇f(0)‖`.
    pub grad_norm0: f64,
    /// Newton iterations.
    pub iterations: usize,
    /// Conjugate-gradient iterations (Hessian–vector products) in total.
    pub cg_iterations: usize,
    /// Whether `‖∇f(w*)‖ ≤ tolerance·‖∇f(0)‖` was reached.
    pub converged: bool,
    /// Wall time of the solve (the data already in memory).
    pub seconds: f64,
}

impl ExactSolver {
    /// Stops when `‖∇f(w)‖ ≤ tolerance·‖∇f(0)‖` (`0 < tolerance < 1`) or after
    /// `max_iterations ≥ 1` Newton iterations.
    pub fn new(tolerance: f64, max_iterations: usize) -> Result<Self, DrpError> {
        if !(tolerance.is_finite() && tolerance > 0.0 && tolerance < 1.0) {
            return Err(DrpError::InvalidParameter(format!(
                "exact-solver tolerance must be in (0, 1), got {tolerance}"
            )));
        }
        if max_iterations == 0 {
            return Err(DrpError::InvalidParameter(
                "exact-solver max_iterations must be at least 1".into(),
            ));
        }
        Ok(ExactSolver {
            tolerance,
            max_iterations,
        })
    }

    /// The relative gradient tolerance.
    pub fn tolerance(&self) -> f64 {
        self.tolerance
    }

    /// Solves (1) from `w = 0`.
    pub fn solve(&self, problem: &Problem, data: &Dataset) -> Result<ExactSolution, DrpError> {
        if data.is_empty() {
            return Err(DrpError::Empty);
        }
        problem.check_data(data)?;
        let start = Instant::now();
        let mut w = vec![0.0; data.dim()];
        let mut obj = MarginObjective::new(
            data,
            problem.loss(),
            problem.lambda(),
            data.labels(),
            data.base_offsets(),
            None,
        );
        let report = tron(
            &mut obj,
            &mut w,
            TronOptions {
                tolerance: self.tolerance,
                max_iterations: self.max_iterations,
                max_cg_total: usize::MAX,
            },
            Cancel::never(),
        )?;
        if w.iter().any(|v| !v.is_finite()) {
            return Err(DrpError::NonFinite(
                "the exact solution is not finite".into(),
            ));
        }
        let g = problem.gradient(data, &w);
        Ok(ExactSolution {
            objective: problem.objective(data, &w),
            grad_norm: dot(&g, &g).sqrt(),
            grad_norm0: report.grad_norm0,
            iterations: report.iterations,
            cg_iterations: report.cg_iterations,
            converged: report.converged,
            seconds: start.elapsed().as_secs_f64(),
            w,
        })
    }
}
