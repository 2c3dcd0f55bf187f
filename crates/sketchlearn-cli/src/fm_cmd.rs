//! `sketchlearn fm`: online factorization machines (SFTRL paper) on ratings or LIBSVM data — one
//! online pass over the first fraction of the file (progressive validation), then evaluation on
//! the rest without updates.

use crate::prediction_sink::PredictionSink;
use anyhow::{bail, Context, Result};
use sketchlearn::data::ratings::{Malformed, OutOfScale, RatingsOptions};
use sketchlearn::eval::ProgressRow;
use sketchlearn::fm::run::{self, FmObserver, FmOverrides, FmReport, FmRunOptions, FmRunStart};
use sketchlearn::fm::{Compression, FmAlgorithm, SftrlBackend};
use sketchlearn::labels::Classes;
use sketchlearn::loss::Loss;
use sketchlearn::run::{progress_header, progress_row, warning_advice, ObserverError, Warning};
use std::io::Write;

/// Input kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FmFormat {
    /// `.libsvm`/`.svm`/`.txt` (and `.gz` of those) are LIBSVM, anything else ratings.
    Auto,
    /// `user item rating [timestamp]` (TSV `u.data`, `ratings.csv` with header, `::` `.dat`).
    Ratings,
    /// LIBSVM `label idx:val ...`; classifying: any two labels (-1/+1, 0/1, 2/4), the larger positive.
    Libsvm,
}

/// What to do with a rating outside `--scale`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ScalePolicy {
    /// Stop with an error naming the line.
    Error,
    /// Leave the rating out.
    Skip,
    /// Clamp it into the scale.
    Clamp,
}

/// Arguments of `sketchlearn fm`.
#[derive(clap::Args, Debug)]
#[command(
    allow_negative_numbers = true,
    args_conflicts_with_subcommands = true,
    after_help = "\
Model: the compact convex FM z = âᵀΘâ with â = [x; 1] (sftrl, sftrl-fast, sftrl-split, ftrl, \
ogd, ocg) or \
Rendle's FM w0 + wᵀx + Σ⟨v_i,v_j⟩x_i x_j of rank k (fm-sgd). Ratings become one-hot user + item \
features (ids remapped densely on the training part; an id unseen in training loses its one-hot \
feature at test time, see --unseen-error; --json counts such test examples in unseen_users and \
unseen_items, and a model resumed with -i counts those it learns in unseen_users_learning and \
unseen_items_learning). The first --train-fraction of the file, in file order, is \
learned in one pass with progressive validation; the rest is predicted without updates. \
`seconds` is the learning pass plus the test predictions (data loading excluded); \
peak_rss_bytes is the process's VmHWM.\n\n\
sftrl-split (this crate): the first-order part exact with AdaGrad steps, the pairwise part \
sketched alone and compressed jointly — the most accurate here on ratings at its defaults; its \
cost grows with the non-zeros per row (an nnz × nnz eigendecomposition and nnz sketch rows per \
example).\n\n\
Scale: the default steps suit rows like one-hot ratings (two ones) or unit rows (--normalize). \
On much larger rows (side features without --normalize, raw LIBSVM values) constant steps can \
diverge; the report then says so (`diverged`, and a warning on stderr).\n\n\
Examples:\n  sketchlearn fm --scale 1,5 -f ml.model movielens100k.tsv   (sftrl-split, m = 10)\n  \
sketchlearn fm --algo sftrl-fast --size 10 --eta 0.01 movielens100k.tsv\n  \
sketchlearn fm --algo sftrl --size 20 --loss logistic --normalize --json spam.shuf.libsvm"
)]
pub struct FmArgs {
    /// Algorithm: sftrl | sftrl-fast | sftrl-split | ftrl | ogd | ocg | fm-sgd [default:
    /// sftrl-split on ratings (the most accurate on MovieLens, docs/results/fm_movielens.md),
    /// sftrl-fast on LIBSVM].
    #[arg(long)]
    pub algo: Option<FmAlgorithm>,
    /// Sketch size m (sftrl, sftrl-fast, sftrl-split).
    #[arg(long)]
    pub size: Option<usize>,
    /// Step size η (default: per algorithm and loss, see FmConfig::for_loss).
    #[arg(long)]
    pub eta: Option<f64>,
    /// sftrl-split: step η_p of the pairwise part (--eta is the first-order part's) [default:
    /// 0.5; 0.01 with side columns in --columns; 0.001 with --user-features/--item-features].
    #[arg(long)]
    pub eta_pairwise: Option<f64>,
    /// sftrl-split: compression of the pairwise sketch: truncate (keep the m − 1 largest
    /// eigenvalues, the default) | shrink (Frequent Directions' shrink by the m-th).
    #[arg(long, value_parser = parse_compression)]
    pub compression: Option<Compression>,
    /// sftrl-split: step of the first-order part (intercept, linear and diagonal terms):
    /// adagrad (η/(β + √Σg²) per entry, the default) | constant (η, the paper's FTRL).
    #[arg(long, value_parser = ["adagrad", "constant"])]
    pub first_order: Option<String>,
    /// sftrl-split with --first-order adagrad: β (default 5).
    #[arg(long)]
    pub adagrad_beta: Option<f64>,
    /// Loss: square | logistic (default: square for ratings, logistic for LIBSVM).
    #[arg(long, value_parser = parse_loss)]
    pub loss: Option<Loss>,
    /// Rank k of fm-sgd.
    #[arg(long)]
    pub rank: Option<usize>,
    /// Fraction of the file (in file order) learned online; the rest is the test part.
    #[arg(long, default_value_t = 0.8)]
    pub train_fraction: f64,
    /// Seed (fm-sgd initial factors, OCG's initial vector).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// `--quiet`: nothing on stderr but warnings and errors (no progress table), as in every
    /// subcommand.
    #[command(flatten)]
    pub quiet: crate::quiet::Quiet,
    /// Input kind.
    #[arg(long, value_enum, default_value = "auto")]
    pub format: FmFormat,
    /// GFD implementation of sftrl: factored (sparse-aware) | reference (the crate's dense GFD).
    #[arg(long, value_parser = parse_backend)]
    pub backend: Option<SftrlBackend>,
    /// Nuclear-norm radius τ (ocg; optional constraint of ftrl/ogd).
    #[arg(long)]
    pub radius: Option<f64>,
    /// ftrl/ogd with --radius: project every K steps (1 = exact; projection costs O(d³)).
    #[arg(long)]
    pub project_every: Option<u64>,
    /// ocg: examples per linear minimisation (1 = per example).
    #[arg(long)]
    pub ocg_block: Option<u64>,
    /// ocg: c of the step γ_t = min(1, c/√t).
    #[arg(long)]
    pub ocg_gamma: Option<f64>,
    /// ocg: maximum power iterations per step.
    #[arg(long)]
    pub power_iters: Option<usize>,
    /// fm-sgd: learning rate of the linear weights (default --eta).
    #[arg(long)]
    pub eta_linear: Option<f64>,
    /// fm-sgd: learning rate of the intercept (default --eta).
    #[arg(long)]
    pub eta_intercept: Option<f64>,
    /// fm-sgd: L2 penalty of the linear weights.
    #[arg(long)]
    pub reg_w: Option<f64>,
    /// fm-sgd: L2 penalty of the factors.
    #[arg(long)]
    pub reg_v: Option<f64>,
    /// fm-sgd: standard deviation of the initial factors.
    #[arg(long)]
    pub init_std: Option<f64>,
    /// Initial intercept μ (convex learners: start from and centre FTRL at Θ₁ = μ·e eᵀ;
    /// fm-sgd: w0 = μ). The paper uses 0 [default: squared loss: the running mean of the
    /// ratings learned so far (each prediction from the earlier ones only); other losses: 0].
    #[arg(long)]
    pub intercept: Option<f64>,
    /// fm-sgd: decay the learning rate as η/√t.
    #[arg(long)]
    pub decay: bool,
    /// Scale every row (LIBSVM rows, encoded ratings) to unit L2 norm.
    #[arg(long)]
    pub normalize: bool,
    /// LIBSVM: dimension d (default: one past the largest index of the file).
    #[arg(long)]
    pub dim: Option<usize>,
    /// LIBSVM indices start at 0.
    #[arg(long)]
    pub zero_based: bool,
    /// Ratings: declared scale MIN,MAX (e.g. 1,5).
    #[arg(long, value_delimiter = ',', num_args = 1, value_name = "MIN,MAX")]
    pub scale: Option<Vec<f64>>,
    /// Ratings: the user, item and rating columns, then any side-feature columns, each a
    /// header name or a 1-based position (e.g. --columns userId,movieId,rating or
    /// user,item,rating,age,genres); other columns are ignored. Side columns: numbers
    /// standardised, other values one-hot (`a|b`: two values), missing values absent
    /// [default: the first three fields, then an optional timestamp; with -i the model's].
    #[arg(
        long,
        value_delimiter = ',',
        num_args = 1,
        value_name = "USER,ITEM,RATING[,SIDE..]"
    )]
    pub columns: Option<Vec<String>>,
    /// Ratings outside --scale: error | skip | clamp.
    #[arg(long, value_enum, default_value = "error")]
    pub out_of_scale: ScalePolicy,
    /// Ratings: skip malformed rows (counted) instead of stopping at the first.
    #[arg(long)]
    pub skip_malformed: bool,
    /// Ratings: an id unseen in training at test time is an error instead of a cold-start
    /// prediction without its one-hot feature.
    #[arg(long)]
    pub unseen_error: bool,
    /// Ratings: MovieLens-100K u.user side features (age bucket, gender, occupation).
    #[arg(long)]
    pub user_features: Option<String>,
    /// Ratings: MovieLens-100K u.item side features (genres, decade; latin-1).
    #[arg(long)]
    pub item_features: Option<String>,
    /// Ratings: clip predictions into the rating scale (--scale, else the training range)
    /// for the reported metrics (learning uses the raw predictions).
    #[arg(long)]
    pub clip_predictions: bool,
    /// Save the model (with the ratings encoder) after the learning pass.
    #[arg(short = 'f', long = "final-model")]
    pub final_model: Option<String>,
    /// Start from this model (its hyper-parameters and encoder; algorithm flags are refused).
    #[arg(short = 'i', long = "initial-model")]
    pub initial_model: Option<String>,
    /// Write the test predictions (one per line) to this file.
    #[arg(short = 'p', long = "predictions")]
    pub predictions: Option<String>,
    /// Also report what the pairwise interactions add to the test predictions (square loss):
    /// `test_pairwise_rms` and `test_rmse_without_pairwise` (unclipped), from a separate pass
    /// over the test part after the timed ones.
    #[arg(long)]
    pub pairwise: bool,
    /// Ratings file or LIBSVM file (`-` = stdin; `.gz` decompressed).
    pub file: Option<String>,
    #[command(subcommand)]
    pub action: Option<FmAction>,
}

/// `fm`'s subcommand.
#[derive(clap::Subcommand, Debug)]
pub enum FmAction {
    /// Score new (user, item) pairs with a model saved by `fm -f` on ratings (LIBSVM rows with
    /// one saved on LIBSVM): a line in, a line out (unseen ids: see --help).
    Predict(crate::fm_predict::FmPredictArgs),
}

fn parse_loss(s: &str) -> Result<Loss, String> {
    match s {
        "square" => Ok(Loss::Squared),
        other => other.parse(),
    }
}

fn parse_compression(s: &str) -> Result<Compression, String> {
    match s {
        "truncate" => Ok(Compression::Truncate),
        "shrink" => Ok(Compression::Shrink),
        _ => Err(format!(
            "unknown compression '{s}' (expected truncate or shrink)"
        )),
    }
}

fn parse_backend(s: &str) -> Result<SftrlBackend, String> {
    match s {
        "factored" => Ok(SftrlBackend::Factored),
        "reference" => Ok(SftrlBackend::Reference),
        _ => Err(format!(
            "unknown backend '{s}' (expected factored or reference)"
        )),
    }
}

impl FmArgs {
    /// The hyper-parameters given (the library resolves and checks them).
    fn overrides(&self) -> FmOverrides {
        FmOverrides {
            algo: self.algo,
            size: self.size,
            eta: self.eta,
            eta_pairwise: self.eta_pairwise,
            compression: self.compression,
            first_order_constant: self.first_order.as_deref().map(|f| f == "constant"),
            adagrad_beta: self.adagrad_beta,
            loss: self.loss,
            rank: self.rank,
            backend: self.backend,
            radius: self.radius,
            project_every: self.project_every,
            ocg_block: self.ocg_block,
            ocg_gamma: self.ocg_gamma,
            power_iters: self.power_iters,
            eta_linear: self.eta_linear,
            eta_intercept: self.eta_intercept,
            reg_w: self.reg_w,
            reg_v: self.reg_v,
            init_std: self.init_std,
            intercept: self.intercept,
            decay: self.decay,
            seed: self.seed,
        }
    }

    /// The run's options.
    fn options(&self) -> Result<FmRunOptions> {
        let file = self.file.clone().unwrap_or_else(|| "-".into());
        let libsvm = match self.format {
            FmFormat::Libsvm => true,
            FmFormat::Ratings => false,
            FmFormat::Auto => run::looks_like_libsvm(&file),
        };
        let scale = match self.scale.as_deref() {
            None => None,
            _ if libsvm => None,
            Some(&[lo, hi]) => Some((lo, hi)),
            Some(v) => bail!("--scale needs MIN,MAX, got {} numbers", v.len()),
        };
        let ratings = RatingsOptions {
            scale,
            out_of_scale: match self.out_of_scale {
                ScalePolicy::Error => OutOfScale::Error,
                ScalePolicy::Skip => OutOfScale::Skip,
                ScalePolicy::Clamp => OutOfScale::Clamp,
            },
            malformed: if self.skip_malformed {
                Malformed::Skip
            } else {
                Malformed::Error
            },
            ..RatingsOptions::default()
        };
        Ok(FmRunOptions {
            file,
            libsvm,
            overrides: self.overrides(),
            initial_model: self.initial_model.clone(),
            train_fraction: self.train_fraction,
            normalize: self.normalize,
            dim: self.dim,
            zero_based: self.zero_based,
            ratings,
            columns: self.columns.clone(),
            unseen_error: self.unseen_error,
            user_features: self.user_features.clone(),
            item_features: self.item_features.clone(),
            clip_predictions: self.clip_predictions,
            final_model: self.final_model.clone(),
            pairwise: self.pairwise,
        })
    }
}

/// What `fm` shows while it runs: the learner and the progress table on stderr (unless
/// `--quiet`), warnings with the flags to change, the test predictions to `-p`.
struct Printer<'a> {
    quiet: bool,
    split: bool,
    predictions: Option<&'a str>,
    sink: Option<PredictionSink>,
    io_error: Option<std::io::Error>,
    classes: Option<Classes>,
}

impl FmObserver for Printer<'_> {
    fn started(&mut self, start: &FmRunStart<'_>) {
        self.split = start.config.algorithm == FmAlgorithm::SftrlSplit;
        if self.quiet {
            return;
        }
        eprintln!(
            "learner: {}  (d = {}, {} train + {} test examples)",
            start.config.describe(),
            start.dim,
            start.train_examples,
            start.test_examples
        );
        progress_header().iter().for_each(|l| eprintln!("{l}"));
        self.classes = start.classes.cloned();
    }
    fn progress(&mut self, r: &ProgressRow) {
        if !self.quiet {
            eprintln!("{}", progress_row(r, self.classes.as_ref()));
        }
    }
    fn warning(&mut self, w: &Warning) {
        let advice = match (w, self.split) {
            (Warning::Diverged { .. }, true) => {
                Some("try --normalize, or a smaller --eta and --eta-pairwise".into())
            }
            (Warning::Diverged { .. }, false) => Some("try --normalize, or a smaller --eta".into()),
            _ => warning_advice(w, None),
        };
        eprintln!("{}", crate::train::warning_line(w, advice.as_deref()));
    }
    fn test_started(&mut self) -> Result<bool, ObserverError> {
        if let Some(path) = self.predictions {
            self.sink = Some(PredictionSink::create(path)?);
        }
        Ok(self.sink.is_some())
    }
    fn test_prediction(&mut self, p: f64) {
        if let Some(o) = self.sink.as_mut() {
            if let Err(e) = writeln!(o, "{p}") {
                self.io_error.get_or_insert(e);
            }
        }
    }
}

pub fn run(args: &FmArgs) -> Result<()> {
    let options = args.options()?;
    options.check()?;
    if args.file.is_none() {
        bail!("fm needs a FILE (ratings or LIBSVM; `-` for standard input); `fm predict` scores new pairs");
    }
    let side = [args.user_features.as_deref(), args.item_features.as_deref()];
    let inputs: Vec<&str> = std::iter::once(options.file.as_str())
        .chain(side.into_iter().flatten())
        .collect();
    crate::paths::check_learning_outputs(
        &inputs,
        args.initial_model.as_deref(),
        args.final_model.as_deref(),
        args.predictions.as_deref(),
        crate::paths::Written::Values,
    )?;
    let mut printer = Printer {
        quiet: args.quiet.quiet,
        split: false,
        predictions: args.predictions.as_deref(),
        sink: None,
        io_error: None,
        classes: None,
    };
    let outcome = run::train_and_test(&options, &mut printer)?;
    if let Some(e) = printer.io_error {
        bail!("writing predictions: {e}");
    }
    if let Some(o) = printer.sink {
        o.finish().context("writing predictions")?;
    }
    if args.json {
        println!("{}", serde_json::to_string(&outcome.report)?);
    } else {
        print(
            &outcome.report,
            options.libsvm,
            outcome.model.config.loss.is_classification(),
        );
    }
    Ok(())
}

/// The plain-text report on stdout.
fn print(r: &FmReport, libsvm: bool, classification: bool) {
    let opt = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:.6}"));
    println!("learner            {}", r.learner);
    println!("dimension          {}", r.dim);
    println!(
        "examples           {} train, {} test",
        r.train_examples, r.test_examples
    );
    if classification {
        println!("progressive error  {}", opt(r.progressive_error));
        println!("progressive AUC    {}", opt(r.progressive_auc));
        println!("test error         {}", opt(r.test_error));
        println!("test AUC           {}", opt(r.test_auc));
    } else {
        println!("progressive RMSE   {}", opt(r.progressive_rmse));
        println!("test RMSE          {}", opt(r.test_rmse));
        if let (Some(rms), Some(without)) = (r.test_pairwise_rms, r.test_rmse_without_pairwise) {
            println!("pairwise part RMS  {rms:.6} (test RMSE without it {without:.6})");
        }
    }
    println!("progressive loss   {:.6}", r.progressive_loss);
    println!(
        "seconds            {:.3} (learning {:.3}, test {:.3}; loading {:.3})",
        r.seconds, r.train_seconds, r.test_seconds, r.load_seconds
    );
    if let Some(c) = r.cpu_seconds {
        println!("CPU seconds        {c:.3}");
    }
    println!("model bytes        {}", r.model_bytes);
    if let Some(b) = r.peak_rss_bytes {
        println!("peak RSS bytes     {b}");
    }
    if !libsvm {
        println!(
            "unseen in test     {} users, {} items",
            r.unseen_users, r.unseen_items
        );
    }
    if r.refused_steps > 0 {
        println!(
            "warning: {} steps refused (they would have made the model non-finite)",
            r.refused_steps
        );
    }
}
