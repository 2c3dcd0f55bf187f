//! `sketchlearn fm`: online factorization machines (SFTRL paper) on ratings or LIBSVM data — one
//! online pass over the first fraction of the file (progressive validation), then evaluation on
//! the rest without updates.

use crate::fm_eta::{SIDE_COLUMNS_ETA_PAIRWISE, SIDE_FILES_ETA_PAIRWISE};
use crate::prediction_sink::PredictionSink;
use anyhow::{bail, Context, Result};
use serde::Serialize;
use sketchlearn::data::ratings::{
    read_header, read_ratings_with_side, Malformed, OutOfScale, RatingColumns, RatingsEncoder,
    RatingsFormat, RatingsOptions, RatingsTable, SideFeatures, TableMap, Unseen,
};
use sketchlearn::data::side_columns::SideTable;
use sketchlearn::eval::{evaluate_with, EvalError, Metrics, ProgressRow};
use sketchlearn::fm::{
    l2_normalize, AnyFm, Compression, FirstOrderStep, FmAlgorithm, FmConfig, FmModel, SftrlBackend,
};
use sketchlearn::linear::{LearnError, OnlineLearner, StepSchedule};
use sketchlearn::loss::Loss;
use sketchlearn::run::{divergence_warning, progressive_pass, Observer};
use sketchlearn::{Example, LibsvmOptions, LibsvmReader, Row};
use std::borrow::Cow;
use std::cell::Cell;
use std::convert::Infallible;
use std::io::Write;
use std::time::Instant;

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
feature at test time, see --unseen-error). The first --train-fraction of the file, in file order, is \
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
    /// Whether a flag of `--algo sftrl-split` alone is given.
    fn any_split_flag(&self) -> bool {
        self.eta_pairwise.is_some()
            || self.compression.is_some()
            || self.first_order.is_some()
            || self.adagrad_beta.is_some()
    }

    fn any_algorithm_flag(&self) -> bool {
        self.algo.is_some()
            || self.size.is_some()
            || self.eta.is_some()
            || self.any_split_flag()
            || self.loss.is_some()
            || self.rank.is_some()
            || self.backend.is_some()
            || self.radius.is_some()
            || self.project_every.is_some()
            || self.ocg_block.is_some()
            || self.ocg_gamma.is_some()
            || self.power_iters.is_some()
            || self.eta_linear.is_some()
            || self.eta_intercept.is_some()
            || self.reg_w.is_some()
            || self.reg_v.is_some()
            || self.init_std.is_some()
            || self.intercept.is_some()
            || self.decay
    }

    /// The algorithm: `--algo`, else sftrl-split on ratings and sftrl-fast on LIBSVM.
    pub fn algorithm(&self) -> FmAlgorithm {
        self.algo.unwrap_or(if self.is_libsvm() {
            FmAlgorithm::SftrlFast
        } else {
            FmAlgorithm::SftrlSplit
        })
    }

    /// The configuration: the algorithm's defaults overridden by the flags given.
    pub fn config(&self, default_loss: Loss) -> FmConfig {
        let algorithm = self.algorithm();
        let d = FmConfig::for_loss(algorithm, self.loss.unwrap_or(default_loss));
        FmConfig {
            algorithm,
            size: self.size.unwrap_or(d.size),
            eta: self.eta.unwrap_or(d.eta),
            eta_pairwise: self
                .eta_pairwise
                .unwrap_or_else(|| self.default_eta_pairwise(d.eta_pairwise)),
            compression: self.compression.unwrap_or(d.compression),
            first_order: match (self.first_order.as_deref(), d.first_order) {
                (Some("constant"), _) => FirstOrderStep::Constant,
                (_, FirstOrderStep::AdaGrad { beta }) => FirstOrderStep::AdaGrad {
                    beta: self.adagrad_beta.unwrap_or(beta),
                },
                (_, constant) => constant,
            },
            loss: d.loss,
            rank: self.rank.unwrap_or(d.rank),
            seed: self.seed,
            backend: self.backend.unwrap_or(d.backend),
            radius: self.radius.unwrap_or(d.radius),
            project_every: self.project_every.unwrap_or(d.project_every),
            ocg_block: self.ocg_block.unwrap_or(d.ocg_block),
            ocg_gamma: self.ocg_gamma.unwrap_or(d.ocg_gamma),
            power_iters: self.power_iters.unwrap_or(d.power_iters),
            schedule: if self.decay {
                StepSchedule::InverseSqrt
            } else {
                d.schedule
            },
            eta_linear: self.eta_linear.or(d.eta_linear),
            eta_intercept: self.eta_intercept.or(d.eta_intercept),
            reg_w: self.reg_w.unwrap_or(d.reg_w),
            reg_v: self.reg_v.unwrap_or(d.reg_v),
            init_std: self.init_std.unwrap_or(d.init_std),
            intercept: self.intercept.or(d.intercept),
            max_dense_entries: d.max_dense_entries,
        }
    }

    /// sftrl-split's pairwise step when `--eta-pairwise` is not given: `plain` (0.5) for ids
    /// alone, smaller with side features ([`SIDE_FILES_ETA_PAIRWISE`],
    /// [`SIDE_COLUMNS_ETA_PAIRWISE`]), the smaller when both kinds are given.
    fn default_eta_pairwise(&self, plain: f64) -> f64 {
        if self.user_features.is_some() || self.item_features.is_some() {
            SIDE_FILES_ETA_PAIRWISE
        } else if self.has_side_columns() {
            SIDE_COLUMNS_ETA_PAIRWISE
        } else {
            plain
        }
    }

    /// Whether `--columns` names side-feature columns (more than user, item and rating).
    fn has_side_columns(&self) -> bool {
        self.columns.as_ref().is_some_and(|c| c.len() > 3)
    }

    /// The data file (checked present by [`run`]).
    fn file(&self) -> &str {
        self.file.as_deref().unwrap_or("-")
    }

    fn is_libsvm(&self) -> bool {
        match self.format {
            FmFormat::Libsvm => true,
            FmFormat::Ratings => false,
            FmFormat::Auto => {
                let p = self.file().strip_suffix(".gz").unwrap_or(self.file());
                [".libsvm", ".svm", ".txt", ".svmlight"]
                    .iter()
                    .any(|e| p.ends_with(e))
            }
        }
    }
}

/// What `fm --json` prints.
#[derive(Serialize, Debug)]
pub struct FmReport {
    pub learner: String,
    pub algorithm: String,
    pub file: String,
    pub dim: usize,
    pub train_examples: u64,
    pub test_examples: u64,
    pub progressive_loss: f64,
    pub progressive_rmse: Option<f64>,
    pub progressive_error: Option<f64>,
    pub progressive_auc: Option<f64>,
    pub test_loss: Option<f64>,
    pub test_rmse: Option<f64>,
    pub test_error: Option<f64>,
    pub test_auc: Option<f64>,
    /// Learning pass + test predictions.
    pub seconds: f64,
    /// CPU time of the learning pass + test predictions (robust to other load on the machine).
    pub cpu_seconds: Option<f64>,
    pub train_seconds: f64,
    pub test_seconds: f64,
    pub load_seconds: f64,
    pub peak_rss_bytes: Option<u64>,
    pub model_bytes: usize,
    pub refused_steps: u64,
    /// The learning pass diverged ([`sketchlearn::run::diverged`]): its steps were too large
    /// for rows of this scale (a warning on stderr says what to do).
    pub diverged: bool,
    pub unseen_users: u64,
    pub unseen_items: u64,
    pub skipped_malformed: u64,
    pub out_of_scale: u64,
    pub clipped: bool,
    /// `--pairwise`: root mean square of the pairwise part of the test predictions
    /// ([`AnyFm::pairwise`](sketchlearn::fm::AnyFm::pairwise)).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test_pairwise_rms: Option<f64>,
    /// `--pairwise`: test RMSE of the predictions without their pairwise part (intercept,
    /// linear and diagonal terms only; unclipped).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test_rmse_without_pairwise: Option<f64>,
    /// Progressive learning curve: `[examples, mean loss so far]` at 1, 2, 4, 8, … and the end.
    pub progress: Vec<(u64, f64)>,
}

/// CPU time of this (single-threaded) process so far, in seconds, from `/proc/self/schedstat`
/// (nanosecond resolution): unlike wall time it does not grow when other processes share the
/// cores.
pub fn cpu_seconds() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/schedstat").ok()?;
    let ns: u64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 * 1e-9)
}

/// Peak resident set size of this process (`VmHWM` of `/proc/self/status`), in bytes.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn print_header() {
    eprintln!(
        "{:<12} {:<12} {:>12} {:>9} {:>9} {:>9}",
        "average", "since", "example", "current", "current", "current"
    );
    eprintln!(
        "{:<12} {:<12} {:>12} {:>9} {:>9} {:>9}",
        "loss", "last", "counter", "label", "predict", "features"
    );
}

fn print_row(r: &ProgressRow) {
    eprintln!(
        "{:<12.6} {:<12.6} {:>12} {:>9.4} {:>9.4} {:>9}",
        r.average_loss, r.since_last_loss, r.examples, r.label, r.prediction, r.features
    );
}

/// An FM whose predictions are clipped into a range (the reported ones; learning uses the raw
/// predictions inside the learner).
struct Clipped<'a> {
    inner: &'a mut AnyFm,
    clip: Option<(f64, f64)>,
}

impl OnlineLearner for Clipped<'_> {
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn predict(&self, x: Row<'_>) -> f64 {
        clip(self.inner.predict(x), self.clip)
    }
    fn learn(&mut self, x: Row<'_>, y: f64, weight: f64) -> Result<f64, LearnError> {
        Ok(clip(self.inner.learn(x, y, weight)?, self.clip))
    }
    fn weights(&self) -> Cow<'_, [f64]> {
        self.inner.weights()
    }
}

fn clip(p: f64, range: Option<(f64, f64)>) -> f64 {
    match range {
        Some((lo, hi)) => p.clamp(lo, hi),
        None => p,
    }
}

/// The learning pass's progress: the curve for the report, the table on stderr.
struct Progress {
    quiet: bool,
    curve: Vec<(u64, f64)>,
}

impl Observer for Progress {
    fn progress(&mut self, row: &ProgressRow) {
        self.curve.push((row.examples, row.average_loss));
        if !self.quiet {
            print_row(row);
        }
    }
}

/// The data, in memory, in file order.
#[allow(clippy::large_enum_variant)] // one value per run
enum Data {
    Ratings {
        table: RatingsTable,
        encoder: RatingsEncoder,
        map: TableMap,
    },
    Libsvm(Vec<Example>),
}

impl Data {
    fn len(&self) -> usize {
        match self {
            Data::Ratings { table, .. } => table.len(),
            Data::Libsvm(v) => v.len(),
        }
    }

    fn dim(&self, given: Option<usize>) -> usize {
        match self {
            Data::Ratings { encoder, .. } => encoder.dim(),
            Data::Libsvm(rows) => given.unwrap_or_else(|| {
                rows.iter()
                    .filter_map(|e| e.indices.last())
                    .map(|&i| i as usize + 1)
                    .max()
                    .unwrap_or(0)
            }),
        }
    }
}

/// The examples, encoded on demand (ratings: one-hot user and item, side features), counting
/// the ids unseen in training.
struct Examples<'a> {
    data: &'a Data,
    normalize: bool,
    unseen_users: Cell<u64>,
    unseen_items: Cell<u64>,
}

impl Examples<'_> {
    fn get(&self, k: usize, ex: &mut Example) -> Result<()> {
        match self.data {
            Data::Ratings {
                table,
                encoder,
                map,
            } => {
                let out = encoder.encode_checked(table, map, k, ex)?;
                if self.normalize {
                    l2_normalize(ex);
                }
                self.unseen_users
                    .set(self.unseen_users.get() + out.unseen_user as u64);
                self.unseen_items
                    .set(self.unseen_items.get() + out.unseen_item as u64);
            }
            Data::Libsvm(rows) => ex.clone_from(&rows[k]),
        }
        Ok(())
    }

    /// Reads examples `range` in turn: a source for the evaluation loops (the first encoding
    /// error is kept in `error` and ends the stream).
    fn source<'s>(
        &'s self,
        range: std::ops::Range<usize>,
        error: &'s mut Option<anyhow::Error>,
    ) -> impl FnMut(&mut Example) -> Result<bool, Infallible> + 's {
        let mut k = range.start;
        move |ex| {
            if k >= range.end {
                return Ok(false);
            }
            if let Err(e) = self.get(k, ex) {
                *error = Some(e);
                return Ok(false);
            }
            k += 1;
            Ok(true)
        }
    }
}

/// The model to start from (`-i`) or `None`, and the configuration.
fn starting_model(args: &FmArgs, libsvm: bool) -> Result<(Option<FmModel>, FmConfig)> {
    if let Some(path) = &args.initial_model {
        if args.any_algorithm_flag() {
            bail!("hyper-parameters come from the model given with -i; drop the algorithm flags");
        }
        let model = FmModel::load(path)?;
        let config = model.config;
        return Ok((Some(model), config));
    }
    if args.any_split_flag() && args.algorithm() != FmAlgorithm::SftrlSplit {
        bail!(
            "--eta-pairwise, --compression, --first-order and --adagrad-beta are options of \
             --algo sftrl-split"
        );
    }
    if args.first_order.as_deref() == Some("constant") && args.adagrad_beta.is_some() {
        bail!("--adagrad-beta needs --first-order adagrad");
    }
    let default_loss = if libsvm {
        Loss::Logistic
    } else {
        Loss::Squared
    };
    let config = args.config(default_loss);
    config.build(0)?; // validate before reading the data
    Ok((None, config))
}

/// A LIBSVM file in memory (labels ±1 for a classification loss; rows normalised on request).
fn load_libsvm(args: &FmArgs, loss: Loss, normalize: bool) -> Result<Data> {
    let mut reader = LibsvmReader::open(
        args.file(),
        LibsvmOptions {
            zero_based: args.zero_based,
        },
    )?;
    let mut rows = Vec::new();
    let mut ex = Example::default();
    let mut scan = sketchlearn::data::ClassScan::new(args.file());
    while reader.read_into(&mut ex)? {
        if loss.is_classification() {
            scan.add(ex.label, reader.line())?;
        }
        if normalize {
            l2_normalize(&mut ex);
        }
        rows.push(ex.clone());
    }
    has_examples(rows.len(), args.file())?;
    if loss.is_classification() {
        // Two classes in any convention (-1/+1, 0/1, 2/4; the larger positive), as `train`.
        let classes = scan.binary_only(
            "sketchlearn fm learns two classes only; train --multiclass learns more",
        )?;
        for r in &mut rows {
            r.label = classes.binary_target(&sketchlearn::labels::ClassLabel::Number(r.label))?;
        }
    }
    Ok(Data::Libsvm(rows))
}

/// An input without one example (an empty file or stream, a header alone) is an error that says
/// so, as in `train`, instead of a run over nothing (NaN metrics) or a class check that finds no
/// labels.
fn has_examples(n: usize, file: &str) -> Result<()> {
    if n == 0 {
        bail!(
            "no examples in {}: the input is empty",
            sketchlearn::data::source::source_name(file)
        );
    }
    Ok(())
}

/// A ratings file in memory with its encoder (the model's, or fitted on the training part),
/// and the rating scale (`--scale`, else the training range).
fn load_ratings(args: &FmArgs, model: &mut Option<FmModel>) -> Result<(Data, Option<(f64, f64)>)> {
    let scale = match &args.scale {
        None => None,
        Some(v) if v.len() == 2 => Some((v[0], v[1])),
        Some(v) => bail!("--scale needs MIN,MAX, got {} numbers", v.len()),
    };
    let mut options = RatingsOptions {
        format: RatingsFormat::Auto,
        scale,
        out_of_scale: match args.out_of_scale {
            ScalePolicy::Error => OutOfScale::Error,
            ScalePolicy::Skip => OutOfScale::Skip,
            ScalePolicy::Clamp => OutOfScale::Clamp,
        },
        malformed: if args.skip_malformed {
            Malformed::Skip
        } else {
            Malformed::Error
        },
        columns: RatingColumns::default(),
    };
    let spec = column_spec(args, model.as_ref())?;
    let side = match &spec {
        Some(spec) => {
            let (columns, side) = rating_columns(spec, args.file(), &options)?;
            options.columns = columns;
            side
        }
        None => SideTable::default(),
    };
    let table = read_ratings_with_side(args.file(), &options, side)?;
    let n_train = table.split_point(args.train_fraction);
    let mut encoder = match model.as_mut().map(|m| m.encoder.take()) {
        Some(Some(enc)) => enc,
        Some(None) => bail!("the model given with -i was not trained on ratings"),
        None => {
            let side = if args.user_features.is_some() || args.item_features.is_some() {
                Some(SideFeatures::movielens(
                    args.user_features.as_deref(),
                    args.item_features.as_deref(),
                )?)
            } else {
                None
            };
            RatingsEncoder::fit(&table, 0..n_train, side)
        }
    };
    if args.unseen_error {
        encoder.unseen = Unseen::Error;
    }
    let range = scale.or_else(|| {
        table.ratings[..n_train]
            .iter()
            .fold(None, |acc: Option<(f64, f64)>, r| match acc {
                None => Some((r.rating, r.rating)),
                Some((lo, hi)) => Some((lo.min(r.rating), hi.max(r.rating))),
            })
    });
    let map = encoder.map_table(&table);
    Ok((
        Data::Ratings {
            table,
            encoder,
            map,
        },
        range,
    ))
}

/// The `--columns` list to read the ratings with: the flag's, else the one a model given with
/// `-i` was trained with when it has side columns (so the same columns give the same features).
/// A flag's side columns must be the model's.
fn column_spec(args: &FmArgs, model: Option<&FmModel>) -> Result<Option<Vec<String>>> {
    let stored = model
        .and_then(|m| m.encoder.as_ref())
        .and_then(RatingsEncoder::side_columns);
    let Some(spec) = &args.columns else {
        return Ok(stored.map(|c| c.spec.clone()));
    };
    let given = spec.get(3..).unwrap_or_default();
    let trained: Vec<&str> = stored.map_or(Vec::new(), |c| c.names().collect());
    if model.is_some() && given != trained.as_slice() {
        bail!(
            "--columns names the side columns [{}], the model given with -i was trained with \
             [{}]; give the model's (or leave --columns out to use its list)",
            given.join(","),
            trained.join(",")
        );
    }
    Ok(Some(spec.clone()))
}

/// `--columns`: the user, item and rating fields of `file` and its side columns (an empty
/// table that the reader fills), by header name (the header is read first) or 1-based position.
pub fn rating_columns(
    spec: &[String],
    file: &str,
    options: &RatingsOptions,
) -> Result<(RatingColumns, SideTable)> {
    let names: Vec<&str> = spec.iter().map(String::as_str).collect();
    let header = if names.iter().all(|c| c.parse::<usize>().is_ok()) {
        None
    } else {
        let probe = RatingsOptions {
            columns: RatingColumns::default(),
            ..*options
        };
        read_header(file, &probe)?
    };
    if names.len() < 3 {
        bail!(
            "--columns needs user,item,rating (then any side columns), got {} column(s)",
            names.len()
        );
    }
    let columns = RatingColumns::resolve(&names[..3], header.as_deref(), file)?;
    let mut taken = vec![columns.user, columns.item, columns.rating];
    let mut side = Vec::new();
    for name in &names[3..] {
        let field = RatingColumns::field(name, header.as_deref(), file)?;
        if taken.contains(&field) {
            bail!("--columns names one column twice: {}", names.join(","));
        }
        taken.push(field);
        side.push((name.to_string(), field));
    }
    let mut table = SideTable::new(side);
    table.spec = spec.to_vec();
    Ok((columns, table))
}

/// What the learning pass produced.
struct Learned {
    metrics: Metrics,
    progress: Vec<(u64, f64)>,
    refused: u64,
    diverged: bool,
    seconds: f64,
}

/// One online pass over examples `0..n_train` with the library's policies (refused steps,
/// divergence).
fn learn(
    model: &mut FmModel,
    examples: &Examples<'_>,
    n_train: usize,
    clip_range: Option<(f64, f64)>,
    quiet: bool,
) -> Result<Learned> {
    let loss = model.config.loss;
    let mut metrics = Metrics::new();
    let mut progress = Progress {
        quiet,
        curve: Vec::new(),
    };
    let mut clipped = Clipped {
        inner: &mut model.learner,
        clip: clip_range,
    };
    let start = Instant::now();
    let mut source_error = None;
    let pass = progressive_pass(
        &mut clipped,
        examples.source(0..n_train, &mut source_error),
        loss,
        &mut metrics,
        &mut progress,
    )
    .map_err(|e| match e {
        EvalError::Source(e) => match e {},
        EvalError::Learn { example, source } => {
            anyhow::anyhow!("learning example {example}: {source}")
        }
    })?;
    if let Some(e) = source_error {
        return Err(e);
    }
    let warning = divergence_warning(loss, &metrics, pass.label_max);
    if let Some(w) = &warning {
        let advice = if model.config.algorithm == FmAlgorithm::SftrlSplit {
            "try --normalize, or a smaller --eta and --eta-pairwise"
        } else {
            "try --normalize, or a smaller --eta"
        };
        eprintln!("warning: {w}; {advice}");
    }
    let seconds = start.elapsed().as_secs_f64();
    if let Some(r) = metrics.final_row() {
        progress.curve.push((r.examples, r.average_loss));
        if !quiet {
            print_row(&r);
        }
    }
    model.examples_seen += n_train as u64;
    Ok(Learned {
        metrics,
        progress: progress.curve,
        refused: pass.refused_steps,
        diverged: warning.is_some(),
        seconds,
    })
}

/// Evaluates examples `range` without updates, writing each prediction to `-p`.
fn test(
    model: &mut FmModel,
    examples: &Examples<'_>,
    range: std::ops::Range<usize>,
    clip_range: Option<(f64, f64)>,
    predictions: Option<&str>,
) -> Result<(Metrics, f64)> {
    let mut metrics = Metrics::new();
    let mut out = predictions.map(PredictionSink::create).transpose()?;
    let loss = model.config.loss;
    let clipped = Clipped {
        inner: &mut model.learner,
        clip: clip_range,
    };
    let start = Instant::now();
    let mut source_error = None;
    let mut io_error = None;
    let mut next = examples.source(range, &mut source_error);
    evaluate_with(
        &clipped,
        |ex: &mut Example| -> Result<bool, Infallible> {
            let more = next(ex)?;
            if more {
                if let Some(o) = out.as_mut() {
                    if let Err(e) = writeln!(o, "{}", clipped.predict(ex.row())) {
                        io_error.get_or_insert(e);
                    }
                }
            }
            Ok(more)
        },
        loss,
        &mut metrics,
        |_| {},
    )
    .map_err(|e| match e {
        EvalError::Source(e) => match e {},
        EvalError::Learn { source, .. } => anyhow::Error::new(source),
    })?;
    drop(next);
    if let Some(e) = source_error {
        return Err(e);
    }
    let seconds = start.elapsed().as_secs_f64();
    if let Some(e) = io_error {
        bail!("writing predictions: {e}");
    }
    if let Some(o) = out {
        o.finish().context("writing predictions")?;
    }
    Ok((metrics, seconds))
}

/// `--pairwise`: the RMS of the pairwise part of the test predictions and the test RMSE
/// without it (an untimed pass).
fn pairwise_stats(
    model: &FmModel,
    examples: &Examples<'_>,
    range: std::ops::Range<usize>,
) -> Result<(f64, f64)> {
    let (mut pw2, mut se) = (0.0, 0.0);
    let mut ex = Example::default();
    let count = range.len() as f64;
    for k in range {
        ex.clear();
        examples.get(k, &mut ex)?;
        let pw = model.learner.pairwise(ex.row());
        let rest = model.learner.predict(ex.row()) - pw;
        pw2 += pw * pw;
        se += (rest - ex.label).powi(2);
    }
    Ok(((pw2 / count).sqrt(), (se / count).sqrt()))
}

pub fn run(args: &FmArgs) -> Result<()> {
    if !(0.0..=1.0).contains(&args.train_fraction) {
        bail!(
            "--train-fraction must be in [0, 1], got {}",
            args.train_fraction
        );
    }
    if args.file.is_none() {
        bail!("fm needs a FILE (ratings or LIBSVM; `-` for standard input); `fm predict` scores new pairs");
    }
    crate::paths::check_learning_outputs(
        &[args.file()],
        args.initial_model.as_deref(),
        args.final_model.as_deref(),
        args.predictions.as_deref(),
    )?;
    let libsvm = args.is_libsvm();
    if libsvm && args.columns.is_some() {
        bail!("--columns applies to ratings files (this one is read as LIBSVM; see --format)");
    }
    let (mut model, config) = starting_model(args, libsvm)?;

    let load_start = Instant::now();
    let normalize = model.as_ref().map_or(args.normalize, |m| m.normalize);
    let (data, scale_range) = if libsvm {
        (load_libsvm(args, config.loss, normalize)?, None)
    } else {
        load_ratings(args, &mut model)?
    };
    let load_seconds = load_start.elapsed().as_secs_f64();
    let n = data.len();
    has_examples(n, args.file())?;
    let n_train = ((n as f64) * args.train_fraction).floor() as usize;
    let dim = data.dim(args.dim);
    let mut model = match model {
        Some(m) => m,
        None => {
            let mut m = FmModel::new(config, config.build(dim)?);
            m.normalize = normalize;
            m
        }
    };
    let clip_range = if args.clip_predictions {
        if libsvm {
            bail!("--clip-predictions applies to ratings only");
        }
        scale_range
    } else {
        None
    };
    if !args.quiet.quiet {
        eprintln!(
            "learner: {}  (d = {}, {} train + {} test examples)",
            model.config.describe(),
            model.learner.dim(),
            n_train,
            n - n_train
        );
        print_header();
    }
    let examples = Examples {
        data: &data,
        normalize,
        unseen_users: Cell::new(0),
        unseen_items: Cell::new(0),
    };
    let cpu_start = cpu_seconds();
    let mut learned = learn(&mut model, &examples, n_train, clip_range, args.quiet.quiet)?;
    // Saved before the compaction for fast predictions, which changes the arithmetic of later
    // steps: a model resumed with -i goes on exactly as an uninterrupted run would.
    if let Some(path) = &args.final_model {
        if let Data::Ratings { encoder, .. } = &data {
            model.encoder = Some(encoder.clone());
        }
        model.save(path)?;
    }
    let compact_start = Instant::now();
    model.learner.compact()?;
    learned.seconds += compact_start.elapsed().as_secs_f64();
    let unseen_before_test = (examples.unseen_users.get(), examples.unseen_items.get());
    let (test_metrics, test_seconds) = test(
        &mut model,
        &examples,
        n_train..n,
        clip_range,
        args.predictions.as_deref(),
    )?;
    let cpu_used = match (cpu_start, cpu_seconds()) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    let unseen = (
        examples.unseen_users.get() - unseen_before_test.0,
        examples.unseen_items.get() - unseen_before_test.1,
    );
    let pairwise = if args.pairwise && !model.config.loss.is_classification() && n > n_train {
        Some(pairwise_stats(&model, &examples, n_train..n)?)
    } else {
        None
    };
    let report = FmReport::new(
        args,
        &model,
        &data,
        &learned,
        (&test_metrics, test_seconds),
        load_seconds,
        cpu_used,
        unseen,
        clip_range.is_some(),
        pairwise,
    );
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        report.print(libsvm, model.config.loss.is_classification(), pairwise);
    }
    Ok(())
}

impl FmReport {
    #[allow(clippy::too_many_arguments)]
    fn new(
        args: &FmArgs,
        model: &FmModel,
        data: &Data,
        learned: &Learned,
        (test_metrics, test_seconds): (&Metrics, f64),
        load_seconds: f64,
        cpu_seconds: Option<f64>,
        (unseen_users, unseen_items): (u64, u64),
        clipped: bool,
        pairwise: Option<(f64, f64)>,
    ) -> Self {
        let train_metrics = &learned.metrics;
        let classification = model.config.loss.is_classification();
        let has_test = test_metrics.examples() > 0;
        let (skipped_malformed, out_of_scale) = match data {
            Data::Ratings { table, .. } => (table.stats.malformed, table.stats.out_of_scale),
            Data::Libsvm(_) => (0, 0),
        };
        FmReport {
            learner: model.config.describe(),
            algorithm: model.config.algorithm.name().to_string(),
            file: args.file().to_string(),
            dim: model.learner.dim(),
            train_examples: train_metrics.examples(),
            test_examples: test_metrics.examples(),
            progressive_loss: train_metrics.mean_loss(),
            progressive_rmse: (!classification).then(|| train_metrics.rmse()),
            progressive_error: if classification {
                train_metrics.error_rate()
            } else {
                None
            },
            progressive_auc: if classification {
                train_metrics.auc()
            } else {
                None
            },
            test_loss: has_test.then(|| test_metrics.mean_loss()),
            test_rmse: (has_test && !classification).then(|| test_metrics.rmse()),
            test_error: if classification && has_test {
                test_metrics.error_rate()
            } else {
                None
            },
            test_auc: if classification && has_test {
                test_metrics.auc()
            } else {
                None
            },
            seconds: learned.seconds + test_seconds,
            cpu_seconds,
            train_seconds: learned.seconds,
            test_seconds,
            load_seconds,
            peak_rss_bytes: peak_rss_bytes(),
            model_bytes: model.learner.state_bytes(),
            refused_steps: learned.refused,
            diverged: learned.diverged,
            unseen_users,
            unseen_items,
            skipped_malformed,
            out_of_scale,
            clipped,
            test_pairwise_rms: pairwise.map(|p| p.0),
            test_rmse_without_pairwise: pairwise.map(|p| p.1),
            progress: learned.progress.clone(),
        }
    }

    /// The plain-text report on stdout.
    fn print(&self, libsvm: bool, classification: bool, pairwise: Option<(f64, f64)>) {
        let opt = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:.6}"));
        println!("learner            {}", self.learner);
        println!("dimension          {}", self.dim);
        println!(
            "examples           {} train, {} test",
            self.train_examples, self.test_examples
        );
        if classification {
            println!("progressive error  {}", opt(self.progressive_error));
            println!("progressive AUC    {}", opt(self.progressive_auc));
            println!("test error         {}", opt(self.test_error));
            println!("test AUC           {}", opt(self.test_auc));
        } else {
            println!("progressive RMSE   {}", opt(self.progressive_rmse));
            println!("test RMSE          {}", opt(self.test_rmse));
            if let Some((rms, without)) = pairwise {
                println!("pairwise part RMS  {rms:.6} (test RMSE without it {without:.6})");
            }
        }
        println!("progressive loss   {:.6}", self.progressive_loss);
        println!(
            "seconds            {:.3} (learning {:.3}, test {:.3}; loading {:.3})",
            self.seconds, self.train_seconds, self.test_seconds, self.load_seconds
        );
        if let Some(c) = self.cpu_seconds {
            println!("CPU seconds        {c:.3}");
        }
        println!("model bytes        {}", self.model_bytes);
        if let Some(b) = self.peak_rss_bytes {
            println!("peak RSS bytes     {b}");
        }
        if !libsvm {
            println!(
                "unseen in test     {} users, {} items",
                self.unseen_users, self.unseen_items
            );
        }
        if self.refused_steps > 0 {
            println!(
                "warning: {} steps refused (they would have made the model non-finite)",
                self.refused_steps
            );
        }
    }
}
