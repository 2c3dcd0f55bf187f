//! `sketchlearn drp`: dual random projection (DRP paper Alg. 1 and 2) on a LIBSVM file, with the
//! naive solution (10), optionally the exact optimum and a test set, and the recovered model saved
//! as a linear model file that `sketchlearn test` evaluates: the library's [`DrpJob`].

use anyhow::{Context, Result};
use sketchlearn::drp::{DrpJob, DrpLoss};

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

pub fn run(args: &DrpArgs) -> Result<()> {
    let inputs: Vec<&str> = std::iter::once(args.file.as_str())
        .chain(args.test.as_deref())
        .collect();
    crate::paths::check_learning_outputs(
        &inputs,
        None,
        args.final_model.as_deref(),
        None,
        crate::paths::Written::Values,
    )?;
    let job = DrpJob {
        loss: args.loss,
        lambda: args.lambda,
        size: args.size,
        iterations: args.iterations,
        seed: args.seed,
        keep_going: args.keep_going,
        exact: args.exact,
        exact_tolerance: args.exact_tolerance,
        regression: args.regression,
        classes: args.classes.clone(),
        zero_based: args.zero_based,
        keep_model: args.final_model.is_some(),
        train: args.file.clone(),
        test: args.test.clone(),
    };
    let run = job.run()?;
    for w in &run.warnings {
        eprintln!("warning: {w}");
    }
    if let (Some(path), Some(model)) = (&args.final_model, &run.model) {
        model.save(path).with_context(|| format!("saving {path}"))?;
    }
    if args.json {
        println!("{}", serde_json::to_string(&run.report)?);
    } else {
        print!("{}", run.report.text(args.final_model.as_deref()));
    }
    Ok(())
}
