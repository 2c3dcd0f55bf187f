//! Recovering the high-dimensional optimum: the naive solution (10), Algorithm 1 (dual random
//! projection) and Algorithm 2 (its iterative version) with divergence detection.

use super::data::Dataset;
use super::low_dim::LowDimSolver;
use super::problem::{Design, DrpLoss, Problem};
use super::projection::GaussianProjection;
use super::tron::TronOptions;
use super::DrpError;
use crate::cancel::Cancel;
use crate::linalg::dot;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// What Algorithm 2 does when its iterates stop contracting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum OnDivergence {
    /// Stop at the first diverging iteration (the default).
    Stop,
    /// Run all `T` iterations anyway (for measurements); the divergence is still reported.
    Continue,
}

/// Hyper-parameters of dual random projection; [`DrpParams::build`] validates them.
///
/// ```
/// use sketchlearn::drp::{DrpLoss, DrpParams};
/// let drp = DrpParams::new(DrpLoss::Logistic, 1.0, 50).iterations(3).seed(7).build().unwrap();
/// assert_eq!(drp.params().size, 50);
/// assert!(DrpParams::new(DrpLoss::Ridge, -1.0, 50).build().is_err()); // λ ≤ 0
/// assert!(DrpParams::new(DrpLoss::Ridge, 1.0, 0).build().is_err()); // m = 0
/// assert!(DrpParams::new(DrpLoss::Ridge, 1.0, 5).iterations(0).build().is_err()); // T = 0
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct DrpParams {
    /// The loss `ℓ`.
    pub loss: DrpLoss,
    /// Regularisation `λ > 0` of (1).
    pub lambda: f64,
    /// Number of random projections `m ≥ 1`.
    pub size: usize,
    /// Iterations `T ≥ 1` of Algorithm 2 (`T = 1` is Algorithm 1).
    pub iterations: usize,
    /// Seed of the Gaussian matrix `R`.
    pub seed: u64,
    /// Behaviour when Algorithm 2 diverges.
    pub on_divergence: OnDivergence,
    /// Stop Algorithm 2 early once `‖∇f(w̃^t)‖ ≤ tolerance·‖∇f(0)‖` (`0` = never; `[0, 1)`).
    pub tolerance: f64,
    /// Relative gradient tolerance of the low-dimensional Newton solver, in `(0, 1)`.
    pub low_dim_tolerance: f64,
    /// Maximum Newton iterations of the low-dimensional solver, `≥ 1`.
    pub low_dim_max_iterations: usize,
}

impl DrpParams {
    /// `T = 1` (Algorithm 1), seed 0, stop on divergence, no early stop, low-dimensional problems
    /// solved to a relative gradient of `1e-10` (at most 500 Newton iterations).
    pub fn new(loss: DrpLoss, lambda: f64, size: usize) -> Self {
        DrpParams {
            loss,
            lambda,
            size,
            iterations: 1,
            seed: 0,
            on_divergence: OnDivergence::Stop,
            tolerance: 0.0,
            low_dim_tolerance: 1e-10,
            low_dim_max_iterations: 500,
        }
    }

    /// Sets `T`.
    pub fn iterations(mut self, t: usize) -> Self {
        self.iterations = t;
        self
    }

    /// Sets the seed of `R`.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Sets the divergence behaviour.
    pub fn on_divergence(mut self, policy: OnDivergence) -> Self {
        self.on_divergence = policy;
        self
    }

    /// Sets the early-stopping tolerance of Algorithm 2.
    pub fn tolerance(mut self, tolerance: f64) -> Self {
        self.tolerance = tolerance;
        self
    }

    /// Validates every parameter.
    pub fn build(&self) -> Result<Drp, DrpError> {
        let problem = Problem::new(self.loss, self.lambda)?;
        let projection = GaussianProjection::new(self.size, self.seed)?;
        if self.iterations == 0 {
            return Err(DrpError::InvalidParameter(
                "iterations T must be at least 1 (T = 1 is Algorithm 1)".into(),
            ));
        }
        if !(self.tolerance.is_finite() && (0.0..1.0).contains(&self.tolerance)) {
            return Err(DrpError::InvalidParameter(format!(
                "tolerance must be in [0, 1), got {}",
                self.tolerance
            )));
        }
        if !(self.low_dim_tolerance.is_finite()
            && self.low_dim_tolerance > 0.0
            && self.low_dim_tolerance < 1.0)
        {
            return Err(DrpError::InvalidParameter(format!(
                "low-dimensional tolerance must be in (0, 1), got {}",
                self.low_dim_tolerance
            )));
        }
        if self.low_dim_max_iterations == 0 {
            return Err(DrpError::InvalidParameter(
                "low-dimensional max iterations must be at least 1".into(),
            ));
        }
        Ok(Drp {
            params: *self,
            problem,
            projection,
        })
    }
}

/// How Algorithm 2 ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Alg2Status {
    /// All `T` iterations ran and `‖∇f(w̃^t)‖` decreased at each of them.
    Completed,
    /// `‖∇f(w̃^t)‖ ≤ tolerance·‖∇f(0)‖` at iteration `at`; the remaining iterations were skipped.
    Converged {
        /// The iteration (1-based).
        at: usize,
    },
    /// At iteration `at ≥ 2` the divergence test of [`Drp::fit`] fired (`f(w̃^t)` and
    /// `‖∇f(w̃^t)‖` both doubled in one step or both rose over two steps, or became non-finite):
    /// `m` is too small for the data's effective rank and the iteration does not contract
    /// (Theorems 5–6). With [`OnDivergence::Stop`] the iterations after `at` were not run.
    Diverged {
        /// The first diverging iteration (1-based).
        at: usize,
    },
}

/// `completed`, `converged at t=2`, `diverged at t=3` (the CLI's report and the Python
/// estimator's `status_`).
///
/// ```
/// use sketchlearn::drp::Alg2Status;
/// assert_eq!(Alg2Status::Diverged { at: 3 }.to_string(), "diverged at t=3");
/// ```
impl std::fmt::Display for Alg2Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Alg2Status::Completed => f.write_str("completed"),
            Alg2Status::Converged { at } => write!(f, "converged at t={at}"),
            Alg2Status::Diverged { at } => write!(f, "diverged at t={at}"),
        }
    }
}

/// Diagnostics of one recovered vector.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct IterationReport {
    /// Iteration `t` (1 = Algorithm 1).
    pub t: usize,
    /// `f(w̃^t)` of problem (1).
    pub objective: f64,
    /// `‖∇f(w̃^t)‖`; since `f` is `λ`-strongly convex, `‖w̃^t − w*‖ ≤ ‖∇f(w̃^t)‖/λ`.
    pub grad_norm: f64,
    /// `‖w̃^t − w̃^{t−1}‖` (`‖w̃¹‖` for `t = 1`).
    pub step_norm: f64,
    /// Newton iterations of the low-dimensional solve (1 for the ridge closed form).
    pub low_dim_iterations: usize,
    /// Relative gradient norm reached by the low-dimensional solve.
    pub low_dim_relative_grad: f64,
    /// Whether the low-dimensional solve reached its tolerance.
    pub low_dim_converged: bool,
    /// Seconds of this iteration (low-dimensional solve + dual recovery + diagnostics).
    pub seconds: f64,
}

/// The result of [`Drp::fit`].
#[derive(Clone, Debug, PartialEq)]
pub struct DrpFit {
    /// `z*` of the low-dimensional problem (6).
    pub z: Vec<f64>,
    /// The naive solution `ŵ = R z*/√m` (10).
    pub naive: Vec<f64>,
    /// `f(ŵ)` and `‖∇f(ŵ)‖`.
    pub naive_objective: f64,
    /// `‖∇f(ŵ)‖`.
    pub naive_grad_norm: f64,
    /// `w̃¹, …, w̃^t` (`w̃¹` is Algorithm 1's output), fewer than `T` after a stop.
    pub iterates: Vec<Vec<f64>>,
    /// One report per iterate.
    pub reports: Vec<IterationReport>,
    /// `‖∇f(0)‖`, the scale of the gradient norms.
    pub grad_norm0: f64,
    /// How Algorithm 2 ended.
    pub status: Alg2Status,
    /// Seconds spent computing `X̂ = RᵀX/√m`.
    pub projection_seconds: f64,
    /// Seconds spent computing the naive solution (generating `R` once more).
    pub naive_seconds: f64,
    /// Total seconds of [`Drp::fit`].
    pub seconds: f64,
}

impl DrpFit {
    /// `‖∇f(w)‖/‖∇f(0)‖` of a solution whose gradient norm is `grad_norm` (the scale floored
    /// at the smallest positive number, so that `w = 0` is not a division by zero).
    pub fn relative_grad_norm(&self, grad_norm: f64) -> f64 {
        grad_norm / self.grad_norm0.max(f64::MIN_POSITIVE)
    }

    /// Algorithm 1's recovered solution `w̃ = −(1/λ)X D(y) α̂` (12).
    pub fn alg1(&self) -> &[f64] {
        &self.iterates[0]
    }

    /// The last iterate of Algorithm 2.
    pub fn last(&self) -> &[f64] {
        self.iterates.last().expect("at least one iterate")
    }

    /// The iterate with the smallest `‖∇f‖` (the last one unless Algorithm 2 diverged): what
    /// the CLI saves as the recovered model.
    pub fn best(&self) -> &[f64] {
        &self.iterates[self.best_index()]
    }

    /// Index (0-based) in `iterates` of the final iterate: the last one, unless Algorithm 2
    /// stopped at a divergence — then the last iterate before it (the diverged iterate is
    /// kept in `iterates` for the report, but it is not the run's result). With
    /// [`OnDivergence::Continue`] the run goes on past a divergence and the last iterate is
    /// the final one.
    ///
    /// ```
    /// use sketchlearn::drp::{low_rank, DrpLoss, DrpParams, LowRankSpec};
    /// let data = low_rank(&LowRankSpec { n: 120, d: 60, rank: 3, flip: 0.0, seed: 1 }).unwrap();
    /// let fit = DrpParams::new(DrpLoss::Ridge, 1.0, 20).iterations(3).build().unwrap().fit(&data).unwrap();
    /// assert_eq!(fit.final_index(), fit.iterates.len() - 1);
    /// assert_eq!(fit.final_iterate(), fit.last());
    /// ```
    pub fn final_index(&self) -> usize {
        let last = self.iterates.len() - 1;
        match self.status {
            Alg2Status::Diverged { at } if at == self.reports[last].t && last > 0 => last - 1,
            _ => last,
        }
    }

    /// The iterate at [`DrpFit::final_index`]: what the CLI saves as the recovered model.
    pub fn final_iterate(&self) -> &[f64] {
        &self.iterates[self.final_index()]
    }

    /// Index (0-based) of [`DrpFit::best`] in `iterates`.
    pub fn best_index(&self) -> usize {
        let mut best = 0;
        for (k, r) in self.reports.iter().enumerate() {
            if r.grad_norm < self.reports[best].grad_norm {
                best = k;
            }
        }
        best
    }
}

/// Validated dual random projection (build it with [`DrpParams::build`]).
///
/// ```
/// use sketchlearn::drp::{relative_error, Dataset, DrpLoss, DrpParams, ExactSolver, Problem};
/// use sketchlearn::Row;
/// // Rank-2 data in d = 50: m = 20 projections recover w* well, Algorithm 2 better still.
/// let mut data = Dataset::new(50);
/// let u: Vec<f64> = (0..50).map(|j| ((j * 7 % 11) as f64 - 5.0) / 10.0).collect();
/// let v: Vec<f64> = (0..50).map(|j| ((j * 3 % 5) as f64 - 2.0) / 5.0).collect();
/// for i in 0..40 {
///     let (a, b) = (((i * 13 % 17) as f64 - 8.0) / 8.0, ((i * 5 % 7) as f64 - 3.0) / 3.0);
///     let x: Vec<f64> = (0..50).map(|j| a * u[j] + b * v[j]).collect();
///     data.push(Row::Dense(&x), if a + 0.3 * b > 0.0 { 1.0 } else { -1.0 }).unwrap();
/// }
/// let exact = ExactSolver::default().solve(&Problem::new(DrpLoss::Logistic, 1.0).unwrap(), &data).unwrap();
/// let fit = DrpParams::new(DrpLoss::Logistic, 1.0, 20).iterations(4).build().unwrap().fit(&data).unwrap();
/// let naive = relative_error(&fit.naive, &exact.w);
/// let alg1 = relative_error(fit.alg1(), &exact.w);
/// let alg2 = relative_error(fit.last(), &exact.w);
/// assert!(alg1 < naive && alg2 < alg1 / 10.0, "{naive} {alg1} {alg2}");
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Drp {
    params: DrpParams,
    problem: Problem,
    projection: GaussianProjection,
}

/// `‖a − b‖/‖b‖` (`‖a‖` if `b = 0`); vectors of different lengths are padded with zeros.
///
/// ```
/// assert_eq!(sketchlearn::drp::relative_error(&[1.0, 1.0], &[1.0, 0.0]), 1.0);
/// ```
pub fn relative_error(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().max(b.len());
    let (mut diff, mut norm) = (0.0, 0.0);
    for k in 0..n {
        let (x, y) = (
            a.get(k).copied().unwrap_or(0.0),
            b.get(k).copied().unwrap_or(0.0),
        );
        diff += (x - y) * (x - y);
        norm += y * y;
    }
    if norm > 0.0 {
        (diff / norm).sqrt()
    } else {
        diff.sqrt()
    }
}

fn norm(v: &[f64]) -> f64 {
    dot(v, v).sqrt()
}

/// The divergence test of Algorithm 2 for the new iterate `now` after `before` (see
/// [`Drp::fit`]): non-finite values, or both `f` and `‖∇f‖` more than doubled in one iteration,
/// or both are above their values two iterations earlier (no progress over two iterations).
fn diverging(before: &[IterationReport], now: &IterationReport) -> bool {
    if !(now.objective.is_finite() && now.grad_norm.is_finite()) {
        return true;
    }
    let k = before.len();
    let jump = k >= 1
        && now.objective > 2.0 * before[k - 1].objective
        && now.grad_norm > 2.0 * before[k - 1].grad_norm;
    let stalled = k >= 2 && {
        let p = &before[k - 2];
        now.objective > p.objective + 1e-12 * p.objective.abs() && now.grad_norm > p.grad_norm
    };
    jump || stalled
}

impl Drp {
    /// The validated parameters.
    pub fn params(&self) -> &DrpParams {
        &self.params
    }

    /// Problem (1) being solved.
    pub fn problem(&self) -> &Problem {
        &self.problem
    }

    /// The random matrix `R`.
    pub fn projection(&self) -> &GaussianProjection {
        &self.projection
    }

    /// Runs Algorithm 2 with `T` iterations on `data` (Algorithm 1 is its first iteration) and
    /// computes the naive solution (10) from the first low-dimensional solution.
    ///
    /// Iteration `t` solves (13) with `s = Rᵀw̃^{t−1}/√m` and `o_i = y_i x_iᵀw̃^{t−1}` (DESIGN.md
    /// §4 item 17), sets `α̂^t_i = ℓ'(y_i x̂_iᵀz^t + o_i)` and `w̃^t = −(1/λ)X D(y) α̂^t`. Because
    /// `w̃^{t−1}` is a combination of the examples, `Rᵀw̃^{t−1}/√m = −(1/λ)Σ α̂^{t−1}_i y_i x̂_i`
    /// needs no new draw of `R`: the projection is computed once, as the paper stresses.
    ///
    /// Divergence: the error `‖w̃^t − w*‖` is not observable, but `f(w̃^t)` (`≥ 0` for the three
    /// losses) and `‖∇f(w̃^t)‖` are (`O(nnz)` each), and since `f` is `λ`-strongly convex,
    /// `‖w̃^t − w*‖ ≤ ‖∇f(w̃^t)‖/λ`. Iteration `t` is marked as diverging when *both* more than
    /// double in one step, or *both* exceed their values at `t − 2` (no progress in two steps).
    /// Weaker tests gave false alarms on real data, where `f` and `‖∇f‖` zig-zag (up at even,
    /// down at odd iterations) while the Euclidean error falls at every step (r8 and MNIST,
    /// logistic, `m = 800`); diverging runs multiply both by 10–10⁴ per iteration (see
    /// [`Alg2Status::Diverged`]).
    pub fn fit(&self, data: &Dataset) -> Result<DrpFit, DrpError> {
        self.fit_cancellable(data, Cancel::never())
    }

    /// [`Drp::fit`], polling `cancel` every 256 features of the projection, before every
    /// Newton iteration of the low-dimensional solves and before every iteration of Algorithm 2;
    /// once it asks to stop, the fit returns [`DrpError::Cancelled`] and its partial results are
    /// dropped (so a caller's model is either the whole fit's or untouched). The bits of a fit
    /// that is not cancelled do not depend on the hook.
    ///
    /// ```
    /// use sketchlearn::cancel::Cancel;
    /// use sketchlearn::drp::{low_rank, DrpError, DrpLoss, DrpParams, LowRankSpec};
    /// let data = low_rank(&LowRankSpec { n: 50, d: 40, rank: 2, flip: 0.0, seed: 1 }).unwrap();
    /// let drp = DrpParams::new(DrpLoss::Logistic, 1.0, 10).iterations(3).build().unwrap();
    /// let stop = || true;
    /// assert!(matches!(drp.fit_cancellable(&data, Cancel::new(&stop)), Err(DrpError::Cancelled(_))));
    /// let go = || false;
    /// assert_eq!(drp.fit_cancellable(&data, Cancel::new(&go)).unwrap().iterates, drp.fit(&data).unwrap().iterates);
    /// ```
    pub fn fit_cancellable(&self, data: &Dataset, cancel: Cancel<'_>) -> Result<DrpFit, DrpError> {
        if data.is_empty() {
            return Err(DrpError::Empty);
        }
        self.problem.check_data(data)?;
        let start = Instant::now();
        let (n, d, m) = (data.len(), data.dim(), self.params.size);
        let (loss, lambda) = (self.params.loss, self.params.lambda);
        let y = data.labels();

        let t0 = Instant::now();
        let projected = self.projection.project_cancellable(data, cancel)?;
        let projection_seconds = t0.elapsed().as_secs_f64();

        let mut solver = LowDimSolver::new(
            &projected,
            y,
            loss,
            lambda,
            TronOptions {
                tolerance: self.params.low_dim_tolerance,
                max_iterations: self.params.low_dim_max_iterations,
                max_cg_total: usize::MAX,
            },
            cancel,
        );
        let grad_norm0 = norm(&self.problem.gradient(data, &vec![0.0; d]));

        let mut iterates: Vec<Vec<f64>> = Vec::new();
        let mut reports: Vec<IterationReport> = Vec::new();
        let mut alpha_prev: Vec<f64> = vec![0.0; n];
        let mut offset = vec![0.0; n];
        let mut shift = vec![0.0; m];
        let mut z_first = Vec::new();
        // A regression set's offsets c_i = 1 − t_i (Dataset::regression) join those of (13).
        let base = data.base_offsets();
        let mut status = Alg2Status::Completed;
        let mut margins = vec![0.0; n];
        for t in 1..=self.params.iterations {
            cancel.check()?;
            let ti = Instant::now();
            let (off, sh) = if t == 1 {
                (base, None)
            } else {
                let w_prev = iterates.last().expect("t > 1");
                data.margins(w_prev, &mut offset);
                for i in 0..n {
                    offset[i] *= y[i];
                }
                if let Some(c) = base {
                    offset.iter_mut().zip(c).for_each(|(o, c)| *o += c);
                }
                // s = Rᵀw̃/√m = −(1/λ) Σ α̂_i y_i x̂_i.
                let c: Vec<f64> = (0..n).map(|i| -alpha_prev[i] * y[i] / lambda).collect();
                shift.iter_mut().for_each(|v| *v = 0.0);
                projected.mul_t_add(&c, &mut shift);
                (Some(&offset[..]), Some(&shift[..]))
            };
            let sol = solver.solve(off, sh)?;
            projected.mul(&sol.z, &mut margins);
            let alpha: Vec<f64> = (0..n)
                .map(|i| loss.derivative(y[i] * margins[i] + off.map_or(0.0, |o| o[i])))
                .collect();
            let w = self.problem.primal_from_dual(data, &alpha);
            let g = self.problem.gradient(data, &w);
            let grad_norm = norm(&g);
            let step_norm = match iterates.last() {
                Some(prev) => w
                    .iter()
                    .zip(prev)
                    .map(|(a, b)| (a - b) * (a - b))
                    .sum::<f64>()
                    .sqrt(),
                None => norm(&w),
            };
            let report = IterationReport {
                t,
                objective: self.problem.objective(data, &w),
                grad_norm,
                step_norm,
                low_dim_iterations: sol.iterations,
                low_dim_relative_grad: sol.relative_grad_norm,
                low_dim_converged: sol.converged,
                seconds: ti.elapsed().as_secs_f64(),
            };
            if t == 1 {
                z_first = sol.z;
            }
            let diverged = diverging(&reports, &report);
            iterates.push(w);
            reports.push(report);
            alpha_prev = alpha;
            if diverged {
                if status == Alg2Status::Completed {
                    status = Alg2Status::Diverged { at: t };
                }
                if self.params.on_divergence == OnDivergence::Stop {
                    break;
                }
            } else if self.params.tolerance > 0.0
                && grad_norm <= self.params.tolerance * grad_norm0
                && status == Alg2Status::Completed
            {
                status = Alg2Status::Converged { at: t };
                break;
            }
        }

        let t0 = Instant::now();
        let naive = self.projection.back_project(&z_first, d);
        let naive_seconds = t0.elapsed().as_secs_f64();
        let naive_grad = norm(&self.problem.gradient(data, &naive));
        Ok(DrpFit {
            naive_objective: self.problem.objective(data, &naive),
            naive_grad_norm: naive_grad,
            naive,
            z: z_first,
            iterates,
            reports,
            grad_norm0,
            status,
            projection_seconds,
            naive_seconds,
            seconds: start.elapsed().as_secs_f64(),
        })
    }
}
