//! `sketchlearn drp`: dual random projection (DRP paper Alg. 1 and 2) on a LIBSVM file, with the
//! naive solution (10), optionally the exact optimum and a test set, and the recovered model saved
//! as a linear model file that `sketchlearn test` evaluates.

use anyhow::{bail, Context, Result};
use serde::Serialize;
use sketchlearn::drp::{
    recovered_model, relative_error, Alg2Status, Dataset, DrpFit, DrpLoss, DrpParams,
    ExactSolution, ExactSolver, OnDivergence, Problem,
};
use std::time::Instant;

/// Arguments of `sketchlearn drp`.
#[derive(clap::Args, Debug)]
#[command(
    allow_negative_numbers = true,
    after_help = "\
Solves min_w λ/2‖w‖² + Σ_i ℓ(y_i x_iᵀw) (no 1/n; LIBLINEAR's C = 1/λ for logistic and squared \
hinge, C = 1/(2λ) for its L2-loss SVR = ridge) from m Gaussian random projections x̂ = Rᵀx/√m: \
the naive solution ŵ = Rz*/√m, Algorithm 1's dual recovery w̃ = −(1/λ)X D(y) α̂ and T − 1 more \
iterations of Algorithm 2. No intercept. Labels must be ±1 (use --classes A,B for other labels), \
or real-valued targets with --loss ridge --regression (ridge regression: min_w λ/2‖w‖² + \
Σ_i ½(t_i − x_iᵀw)², the test file scored by RMSE). \
‖∇f‖ is relative to ‖∇f(0)‖; since f is λ-strongly convex, ‖w − w*‖ ≤ ‖∇f(w)‖/λ. Algorithm 2 \
stops when ‖∇f‖ grows (divergence: m too small for the data's effective rank) unless \
--keep-going. Seconds of a DRP row are cumulative (projection + low-dimensional solves + \
recovery), data loading excluded.\n\n\
Example:\n  sketchlearn drp --loss logistic --lambda 1 --size 200 --iterations 3 --exact \\\n      \
--test a9a.t.libsvm -f drp.model a9a.libsvm\n  sketchlearn test -i drp.model a9a.t.libsvm"
)]
pub struct DrpArgs {
    /// `--quiet`: nothing on stderr but warnings and errors (this command writes no notes).
    #[command(flatten)]
    pub quiet: crate::quiet::Quiet,
    /// Loss: ridge | logistic | smooth-hinge.
    #[arg(long, default_value = "logistic", value_parser = parse_loss)]
    pub loss: DrpLoss,
    /// Regularisation λ > 0 of λ/2‖w‖².
    #[arg(long, default_value_t = 1.0)]
    pub lambda: f64,
    /// Number of random projections m.
    #[arg(long)]
    pub size: usize,
    /// Iterations T of Algorithm 2 (T = 1 is Algorithm 1).
    #[arg(long, default_value_t = 1)]
    pub iterations: usize,
    /// Also solve the full problem (trust-region Newton) and report ‖w − w*‖/‖w*‖.
    #[arg(long)]
    pub exact: bool,
    /// Relative gradient tolerance of the exact solver.
    #[arg(long, default_value_t = 1e-10)]
    pub exact_tolerance: f64,
    /// Test file (LIBSVM) for the test error of every solution.
    #[arg(long)]
    pub test: Option<String>,
    /// Seed of the random matrix R.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Run all T iterations even when Algorithm 2 diverges.
    #[arg(long)]
    pub keep_going: bool,
    /// Real-valued labels: ridge regression on the targets as written (needs `--loss ridge`;
    /// the test file is scored by RMSE, the saved model predicts the target).
    #[arg(long, conflicts_with = "classes")]
    pub regression: bool,
    /// Two classes A,B of a multiclass file: A becomes +1, B becomes −1, other rows are skipped.
    #[arg(long, value_delimiter = ',', num_args = 1, value_name = "A,B")]
    pub classes: Option<Vec<f64>>,
    /// Save the recovered model for `sketchlearn test`: the final iterate (when Algorithm 2
    /// stops at a divergence, the iterate before it).
    #[arg(short = 'f', long = "final-model")]
    pub final_model: Option<String>,
    /// Print one JSON object on stdout instead of a table.
    #[arg(long)]
    pub json: bool,
    /// LIBSVM indices start at 0.
    #[arg(long)]
    pub zero_based: bool,
    /// Training file (LIBSVM; `-` = stdin; `.gz` decompressed).
    pub file: String,
}

fn parse_loss(s: &str) -> Result<DrpLoss, String> {
    s.parse()
}

/// One solution of the report.
#[derive(Serialize, Debug, Clone)]
pub struct SolutionRow {
    /// `naive`, `alg1`, `alg2`, `exact`.
    pub name: String,
    /// Iteration of Algorithm 2 (1 for alg1, 0 for naive and exact).
    pub t: usize,
    pub objective: f64,
    pub relative_grad_norm: f64,
    /// Classification: the test file's error rate.
    pub test_error: Option<f64>,
    /// `--regression`: the test file's root mean squared error.
    pub test_rmse: Option<f64>,
    pub recovery_error: Option<f64>,
    pub seconds: f64,
}

/// What `sketchlearn drp --json` prints.
#[derive(Serialize, Debug)]
pub struct DrpReport {
    pub loss: String,
    /// `--regression`: real-valued targets (ridge regression).
    pub regression: bool,
    pub lambda: f64,
    pub size: usize,
    pub iterations: usize,
    pub seed: u64,
    pub examples: usize,
    pub dim: usize,
    pub nnz: usize,
    pub test_examples: Option<usize>,
    pub load_seconds: f64,
    pub projection_seconds: f64,
    /// `completed`, `converged at t=..` or `diverged at t=..`.
    pub status: String,
    pub diverged_at: Option<usize>,
    pub solutions: Vec<SolutionRow>,
    /// Iteration saved with `-f` (the smallest ‖∇f‖).
    pub saved_iteration: Option<usize>,
}

fn label_map(classes: &Option<Vec<f64>>) -> Result<impl Fn(f64) -> Option<f64> + Clone> {
    let pair = match classes {
        None => None,
        Some(v) if v.len() == 2 && v[0] != v[1] => Some((v[0], v[1])),
        Some(v) => bail!("--classes needs two different labels A,B, got {v:?}"),
    };
    Ok(move |y: f64| match pair {
        None => Some(y),
        Some((a, _)) if y == a => Some(1.0),
        Some((_, b)) if y == b => Some(-1.0),
        Some(_) => None,
    })
}

/// Every solution of a fit as report rows (recovery errors against `exact` if given).
pub fn solution_rows(
    fit: &DrpFit,
    exact: Option<&ExactSolution>,
    test: Option<&Dataset>,
) -> Vec<SolutionRow> {
    let g0 = fit.grad_norm0.max(f64::MIN_POSITIVE);
    let rec = |w: &[f64]| exact.map(|e| relative_error(w, &e.w));
    let classified = test.filter(|t| !t.is_regression());
    let err = |w: &[f64]| classified.map(|t| t.error_rate(w));
    let regressed = test.filter(|t| t.is_regression());
    let rmse = |w: &[f64]| regressed.map(|t| t.rmse(w));
    let first = &fit.reports[0];
    let mut rows = vec![SolutionRow {
        name: "naive".into(),
        t: 0,
        objective: fit.naive_objective,
        relative_grad_norm: fit.naive_grad_norm / g0,
        test_error: err(&fit.naive),
        test_rmse: rmse(&fit.naive),
        recovery_error: rec(&fit.naive),
        seconds: fit.projection_seconds + first.seconds + fit.naive_seconds,
    }];
    let mut cumulative = fit.projection_seconds;
    for (w, r) in fit.iterates.iter().zip(&fit.reports) {
        cumulative += r.seconds;
        rows.push(SolutionRow {
            name: if r.t == 1 { "alg1" } else { "alg2" }.into(),
            t: r.t,
            objective: r.objective,
            relative_grad_norm: r.grad_norm / g0,
            test_error: err(w),
            test_rmse: rmse(w),
            recovery_error: rec(w),
            seconds: cumulative,
        });
    }
    if let Some(e) = exact {
        rows.push(SolutionRow {
            name: "exact".into(),
            t: 0,
            objective: e.objective,
            relative_grad_norm: e.grad_norm / g0,
            test_error: err(&e.w),
            test_rmse: rmse(&e.w),
            recovery_error: Some(0.0),
            seconds: e.seconds,
        });
    }
    rows
}

pub fn status_text(status: Alg2Status) -> (String, Option<usize>) {
    let diverged_at = match status {
        Alg2Status::Diverged { at } => Some(at),
        _ => None,
    };
    (status.to_string(), diverged_at)
}

pub fn run(args: &DrpArgs) -> Result<()> {
    crate::paths::check_learning_outputs(&[&args.file], None, args.final_model.as_deref(), None)?;
    let drp = DrpParams {
        iterations: args.iterations,
        seed: args.seed,
        on_divergence: if args.keep_going {
            OnDivergence::Continue
        } else {
            OnDivergence::Stop
        },
        ..DrpParams::new(args.loss, args.lambda, args.size)
    }
    .build()?;
    let exact_solver = ExactSolver::new(args.exact_tolerance, 1000)?;
    let map = label_map(&args.classes)?;

    if args.regression && args.loss != DrpLoss::Ridge {
        bail!(
            "--regression needs --loss ridge (ridge regression); --loss {} is a classification \
             loss and takes labels ±1",
            args.loss
        );
    }
    let read = |path: &str| {
        let data = if args.regression {
            Dataset::load_regression(path, args.zero_based)
        } else {
            Dataset::load(path, args.zero_based, map.clone())
        };
        data.with_context(|| format!("reading {path}"))
    };

    let t0 = Instant::now();
    let train = read(&args.file)?;
    let load_seconds = t0.elapsed().as_secs_f64();
    if train.is_empty() {
        bail!("{}: no training example (check --classes)", args.file);
    }
    let test = args.test.as_deref().map(read).transpose()?;

    let fit = drp.fit(&train)?;
    let exact = if args.exact {
        let problem = Problem::new(args.loss, args.lambda)?;
        let sol = exact_solver.solve(&problem, &train)?;
        if !sol.converged {
            eprintln!(
                "warning: the exact solver stopped after {} iterations at ‖∇f‖/‖∇f(0)‖ = {:.2e} \
                 (tolerance {:e}); recovery errors are measured against this w",
                sol.iterations,
                sol.grad_norm / sol.grad_norm0.max(f64::MIN_POSITIVE),
                args.exact_tolerance
            );
        }
        Some(sol)
    } else {
        None
    };
    for r in fit.reports.iter().filter(|r| !r.low_dim_converged) {
        eprintln!(
            "warning: the low-dimensional solve of iteration {} stopped at a relative gradient \
             of {:.2e}",
            r.t, r.low_dim_relative_grad
        );
    }
    let rows = solution_rows(&fit, exact.as_ref(), test.as_ref());
    let (status, diverged_at) = status_text(fit.status);

    let mut saved_iteration = None;
    if let Some(path) = &args.final_model {
        let t = fit.reports[fit.final_index()].t;
        recovered_model(drp.params(), &fit, train.len())?
            .save(path)
            .with_context(|| format!("saving {path}"))?;
        saved_iteration = Some(t);
    }

    let report = DrpReport {
        loss: args.loss.to_string(),
        regression: args.regression,
        lambda: args.lambda,
        size: args.size,
        iterations: args.iterations,
        seed: args.seed,
        examples: train.len(),
        dim: train.dim(),
        nnz: train.nnz(),
        test_examples: test.as_ref().map(|t| t.len()),
        load_seconds,
        projection_seconds: fit.projection_seconds,
        status,
        diverged_at,
        solutions: rows,
        saved_iteration,
    };
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
        return Ok(());
    }
    print_report(&report, args);
    Ok(())
}

/// Prints `report` as the text table (`--json` prints the struct instead).
fn print_report(report: &DrpReport, args: &DrpArgs) {
    println!(
        "drp: loss {}, lambda {}, m {}, T {}, seed {}",
        report.loss, report.lambda, report.size, report.iterations, report.seed
    );
    println!(
        "train: n = {}, d = {}, nnz = {} (read in {:.3} s); projection {:.3} s",
        report.examples, report.dim, report.nnz, report.load_seconds, report.projection_seconds
    );
    if let Some(n) = report.test_examples {
        println!("test: n = {n}");
    }
    println!();
    let test_column = if args.regression {
        "test RMSE"
    } else {
        "test error"
    };
    println!(
        "{:<10} {:>16} {:>12} {:>11} {:>12} {:>9}",
        "solution", "objective", "‖∇f‖ rel.", test_column, "‖w−w*‖/‖w*‖", "seconds"
    );
    let opt = |v: Option<f64>, prec: usize| match v {
        Some(x) => format!("{x:.prec$}"),
        None => "-".into(),
    };
    for r in &report.solutions {
        let name = match r.name.as_str() {
            "alg2" => format!("alg2 t={}", r.t),
            other => other.to_string(),
        };
        println!(
            "{:<10} {:>16.6} {:>12.3e} {:>11} {:>12} {:>9.3}",
            name,
            r.objective,
            r.relative_grad_norm,
            opt(r.test_error.or(r.test_rmse), 4),
            r.recovery_error.map_or("-".into(), |e| format!("{e:.3e}")),
            r.seconds
        );
    }
    println!();
    println!("algorithm 2: {}", report.status);
    if report.diverged_at.is_some() {
        println!(
            "warning: Algorithm 2 diverged: m = {} is too small for the effective rank of the \
             data at lambda = {} (increase --size or --lambda); the best iterate is kept",
            args.size, args.lambda
        );
    }
    if let (Some(path), Some(t)) = (&args.final_model, report.saved_iteration) {
        println!("saved the t={t} iterate to {path}");
    }
}
