//! A whole dual-random-projection run on LIBSVM files, as `sketchlearn drp` runs it: read the
//! training (and test) file, fit the naive solution (10), Algorithm 1 and the iterations of
//! Algorithm 2, optionally solve the exact problem, and report every solution's objective,
//! relative gradient, test error (or RMSE) and distance to the optimum ([`DrpReport`]).

use super::{
    recovered_model, relative_error, Alg2Status, Dataset, DrpError, DrpFit, DrpLoss, DrpParams,
    ExactSolution, ExactSolver, OnDivergence, Problem,
};
use crate::linear::LinearModel;
use serde::Serialize;
use std::time::Instant;

/// What to run: the problem, the projection, the files.
#[derive(Clone, Debug)]
pub struct DrpJob {
    /// The loss ℓ.
    pub loss: DrpLoss,
    /// λ of λ/2‖w‖².
    pub lambda: f64,
    /// The number of random projections m.
    pub size: usize,
    /// Iterations T of Algorithm 2 (T = 1 is Algorithm 1).
    pub iterations: usize,
    /// Seed of the random matrix R.
    pub seed: u64,
    /// Run all T iterations even when Algorithm 2 diverges.
    pub keep_going: bool,
    /// Also solve the full problem (trust-region Newton).
    pub exact: bool,
    /// Relative gradient tolerance of the exact solver (checked even without `exact`).
    pub exact_tolerance: f64,
    /// Real-valued targets: ridge regression (needs [`DrpLoss::Ridge`]).
    pub regression: bool,
    /// Two classes `A,B` of a multiclass file: A becomes +1, B becomes −1, other rows skipped.
    pub classes: Option<Vec<f64>>,
    /// LIBSVM indices start at 0.
    pub zero_based: bool,
    /// Return the recovered model ([`DrpRun::model`]).
    pub keep_model: bool,
    /// The training file (LIBSVM; `-` = stdin; `.gz` decompressed).
    pub train: String,
    /// A test file scored with every solution.
    pub test: Option<String>,
}

/// What can stop a [`DrpJob`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DrpJobError {
    /// The flags do not make a problem (the message names the flag).
    #[error("{0}")]
    Invalid(String),
    /// A file could not be read.
    #[error("reading {path}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: Box<DrpError>,
    },
    /// The fit failed.
    #[error(transparent)]
    Drp(#[from] DrpError),
}

/// One solution of the report.
#[derive(Serialize, Debug, Clone)]
pub struct SolutionRow {
    /// `naive`, `alg1`, `alg2`, `exact`.
    pub name: String,
    /// Iteration of Algorithm 2 (1 for alg1, 0 for naive and exact).
    pub t: usize,
    /// f(w).
    pub objective: f64,
    /// ‖∇f(w)‖/‖∇f(0)‖.
    pub relative_grad_norm: f64,
    /// Classification: the test file's error rate.
    pub test_error: Option<f64>,
    /// Regression: the test file's root mean squared error.
    pub test_rmse: Option<f64>,
    /// ‖w − w*‖/‖w*‖ (with the exact solution).
    pub recovery_error: Option<f64>,
    /// Cumulative seconds (projection + low-dimensional solves + recovery).
    pub seconds: f64,
}

/// A run's report (what `sketchlearn drp --json` prints).
#[derive(Serialize, Debug)]
pub struct DrpReport {
    /// The loss's name.
    pub loss: String,
    /// Real-valued targets (ridge regression).
    pub regression: bool,
    /// λ.
    pub lambda: f64,
    /// m.
    pub size: usize,
    /// T.
    pub iterations: usize,
    /// The seed of R.
    pub seed: u64,
    /// Training examples n.
    pub examples: usize,
    /// Dimension d.
    pub dim: usize,
    /// Stored entries of the training data.
    pub nnz: usize,
    /// Test examples.
    pub test_examples: Option<usize>,
    /// Seconds to read the training file.
    pub load_seconds: f64,
    /// Seconds to project.
    pub projection_seconds: f64,
    /// `completed`, `converged at t=..` or `diverged at t=..`.
    pub status: String,
    /// The iteration at which Algorithm 2 diverged.
    pub diverged_at: Option<usize>,
    /// Every solution.
    pub solutions: Vec<SolutionRow>,
    /// Iteration of the recovered model (when it is kept).
    pub saved_iteration: Option<usize>,
}

/// A finished run: the report, the warnings met (solvers that stopped short) and the
/// recovered model ([`DrpJob::keep_model`]: the final iterate, or the one before a divergence).
#[derive(Debug)]
pub struct DrpRun {
    /// The report.
    pub report: DrpReport,
    /// Warnings, one line each (without a `warning: ` prefix).
    pub warnings: Vec<String>,
    /// The recovered model.
    pub model: Option<LinearModel>,
}

impl DrpJob {
    /// Runs the job.
    ///
    /// ```
    /// use sketchlearn::drp::{DrpJob, DrpLoss};
    /// let path = std::env::temp_dir().join(format!("doc-drp-job-{}.libsvm", std::process::id()));
    /// std::fs::write(&path, "1 1:1 2:0.5\n-1 1:-1 3:0.5\n1 2:1\n-1 3:1\n").unwrap();
    /// let job = DrpJob {
    ///     loss: DrpLoss::Logistic, lambda: 1.0, size: 3, iterations: 2, seed: 0,
    ///     keep_going: false, exact: true, exact_tolerance: 1e-10, regression: false,
    ///     classes: None, zero_based: false, keep_model: true,
    ///     train: path.to_string_lossy().into_owned(), test: None,
    /// };
    /// let run = job.run().unwrap();
    /// assert_eq!(run.report.examples, 4);
    /// assert_eq!(run.report.solutions[0].name, "naive");
    /// assert_eq!(run.report.solutions.last().unwrap().recovery_error, Some(0.0));
    /// assert!(run.model.is_some());
    /// # std::fs::remove_file(&path).ok();
    /// ```
    pub fn run(&self) -> Result<DrpRun, DrpJobError> {
        let drp = DrpParams {
            iterations: self.iterations,
            seed: self.seed,
            on_divergence: if self.keep_going {
                OnDivergence::Continue
            } else {
                OnDivergence::Stop
            },
            ..DrpParams::new(self.loss, self.lambda, self.size)
        }
        .build()?;
        let exact_solver = ExactSolver::new(self.exact_tolerance, 1000)?;
        let map = label_map(&self.classes)?;
        if self.regression && self.loss != DrpLoss::Ridge {
            return Err(DrpJobError::Invalid(format!(
                "--regression needs --loss ridge (ridge regression); --loss {} is a \
                 classification loss and takes labels ±1",
                self.loss
            )));
        }
        let read = |path: &str| {
            let data = if self.regression {
                Dataset::load_regression(path, self.zero_based)
            } else {
                Dataset::load(path, self.zero_based, map.clone())
            };
            data.map_err(|source| DrpJobError::Read {
                path: path.to_string(),
                source: Box::new(source),
            })
        };
        let t0 = Instant::now();
        let train = read(&self.train)?;
        let load_seconds = t0.elapsed().as_secs_f64();
        if train.is_empty() {
            return Err(DrpJobError::Invalid(format!(
                "{}: no training example (check --classes)",
                self.train
            )));
        }
        let test = self.test.as_deref().map(read).transpose()?;
        let fit = drp.fit(&train)?;
        let mut warnings = Vec::new();
        let exact = if self.exact {
            let sol = exact_solver.solve(&Problem::new(self.loss, self.lambda)?, &train)?;
            if !sol.converged {
                warnings.push(format!(
                    "the exact solver stopped after {} iterations at ‖∇f‖/‖∇f(0)‖ = {:.2e} \
                     (tolerance {:e}); recovery errors are measured against this w",
                    sol.iterations,
                    sol.grad_norm / sol.grad_norm0.max(f64::MIN_POSITIVE),
                    self.exact_tolerance
                ));
            }
            Some(sol)
        } else {
            None
        };
        for r in fit.reports.iter().filter(|r| !r.low_dim_converged) {
            warnings.push(format!(
                "the low-dimensional solve of iteration {} stopped at a relative gradient \
                 of {:.2e}",
                r.t, r.low_dim_relative_grad
            ));
        }
        let model = self
            .keep_model
            .then(|| recovered_model(drp.params(), &fit, train.len()))
            .transpose()?;
        let (status, diverged_at) = status_text(fit.status);
        let report = DrpReport {
            loss: self.loss.to_string(),
            regression: self.regression,
            lambda: self.lambda,
            size: self.size,
            iterations: self.iterations,
            seed: self.seed,
            examples: train.len(),
            dim: train.dim(),
            nnz: train.nnz(),
            test_examples: test.as_ref().map(|t| t.len()),
            load_seconds,
            projection_seconds: fit.projection_seconds,
            status,
            diverged_at,
            solutions: solution_rows(&fit, exact.as_ref(), test.as_ref()),
            saved_iteration: model.as_ref().map(|_| fit.reports[fit.final_index()].t),
        };
        Ok(DrpRun {
            report,
            warnings,
            model,
        })
    }
}

/// The label map of `--classes A,B` (A → +1, B → −1, others skipped; none: as written).
fn label_map(
    classes: &Option<Vec<f64>>,
) -> Result<impl Fn(f64) -> Option<f64> + Clone + use<>, DrpJobError> {
    let pair = match classes {
        None => None,
        Some(v) if v.len() == 2 && v[0] != v[1] => Some((v[0], v[1])),
        Some(v) => {
            return Err(DrpJobError::Invalid(format!(
                "--classes needs two different labels A,B, got {v:?}"
            )))
        }
    };
    Ok(move |y: f64| match pair {
        None => Some(y),
        Some((a, _)) if y == a => Some(1.0),
        Some((_, b)) if y == b => Some(-1.0),
        Some(_) => None,
    })
}

/// Every solution of a fit as report rows (recovery errors against `exact` if given).
fn solution_rows(
    fit: &DrpFit,
    exact: Option<&ExactSolution>,
    test: Option<&Dataset>,
) -> Vec<SolutionRow> {
    let rec = |w: &[f64]| exact.map(|e| relative_error(w, &e.w));
    let classified = test.filter(|t| !t.is_regression());
    let err = |w: &[f64]| classified.map(|t| t.error_rate(w));
    let regressed = test.filter(|t| t.is_regression());
    let rmse = |w: &[f64]| regressed.map(|t| t.rmse(w));
    let row = |name: &str, t, objective, grad: f64, w: &[f64], seconds| SolutionRow {
        name: name.into(),
        t,
        objective,
        relative_grad_norm: fit.relative_grad_norm(grad),
        test_error: err(w),
        test_rmse: rmse(w),
        recovery_error: rec(w),
        seconds,
    };
    let first = &fit.reports[0];
    let naive_seconds = fit.projection_seconds + first.seconds + fit.naive_seconds;
    let mut rows = vec![row(
        "naive",
        0,
        fit.naive_objective,
        fit.naive_grad_norm,
        &fit.naive,
        naive_seconds,
    )];
    let mut cumulative = fit.projection_seconds;
    for (w, r) in fit.iterates.iter().zip(&fit.reports) {
        cumulative += r.seconds;
        let name = if r.t == 1 { "alg1" } else { "alg2" };
        rows.push(row(name, r.t, r.objective, r.grad_norm, w, cumulative));
    }
    if let Some(e) = exact {
        let mut exact_row = row("exact", 0, e.objective, e.grad_norm, &e.w, e.seconds);
        exact_row.recovery_error = Some(0.0);
        rows.push(exact_row);
    }
    rows
}

/// Algorithm 2's status as text, and the iteration it diverged at.
fn status_text(status: Alg2Status) -> (String, Option<usize>) {
    let diverged_at = match status {
        Alg2Status::Diverged { at } => Some(at),
        _ => None,
    };
    (status.to_string(), diverged_at)
}
