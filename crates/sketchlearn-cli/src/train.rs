//! `sketchlearn train` and `sketchlearn test`: online learning with progressive validation
//! (VW habits: a progress table on stderr at doubling example counts, `-f` to save, `-i` to
//! resume, `-p` to write predictions).

use crate::learner_args::LearnerArgs;
use anyhow::{bail, Context, Result};
use serde::Serialize;
use sketchlearn::data::{for_each_row, ExampleReader, ExampleSource, Format, ReadAhead, VwOptions};
use sketchlearn::eval::{evaluate_with, progressive_with, Metrics, ProgressRow};
use sketchlearn::linear::{
    AnyLearner, InputProfile, LearnError, LinearModel, OnlineLearner, RepresentationChoice,
    SPARSITY_SAMPLE,
};
use sketchlearn::{Example, ParseError, Row};
use std::borrow::Cow;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::time::Instant;

/// Arguments of `sketchlearn train`.
#[derive(clap::Args, Debug)]
#[command(
    allow_negative_numbers = true,
    after_help = "\
Each example is predicted before it is learned (progressive validation); the progress table on \
stderr has rows at example counts 1, 2, 4, 8, ... Labels are ±1 for the classification losses \
(a score ≤ 0 predicts −1). With --passes N the file is read N times; the progressive metrics \
cover all passes, as in VW.\n\nSparse input: for --algo newton or auto with curvature oja, rp, fd/fd-fast or \
rfd/rfd-fast, the sparse-time learner (oja-sparse, rp-sparse, fd-sparse, rfd-sparse: \
O(m² + m·nnz) per example, mathematically the same learner) is chosen automatically when the \
input is VW text (hashed, d = 2^bits) or when the average number of non-zeros per example is \
below d/10 (over the whole file when d is read from it, else over its first 1000 examples; \
LIBSVM from standard input stays dense); fd/rfd need d >= 2m. --representation sparse \
(--sparse) forces it, --representation dense (--dense) prevents it.\n\nExample:\n  sketchlearn train data/heart.libsvm"
)]
pub struct TrainArgs {
    #[command(flatten)]
    pub learner: LearnerArgs,
    /// Number of passes over the data.
    #[arg(long, default_value_t = 1)]
    pub passes: u32,
    /// Seed of every random draw.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Save the final model to this file.
    #[arg(short = 'f', long = "final-model")]
    pub final_model: Option<String>,
    /// Resume from this model (its hyper-parameters are used; learner flags are refused).
    #[arg(short = 'i', long = "initial-model", conflicts_with = "LearnerArgs")]
    pub initial_model: Option<String>,
    /// Write each progressive prediction (raw score) to this file, one per line.
    #[arg(short = 'p', long = "predictions")]
    pub predictions: Option<String>,
    /// Print a JSON summary on stdout.
    #[arg(long)]
    pub json: bool,
    /// No progress table.
    #[arg(long)]
    pub quiet: bool,
    /// Parse on the learner's thread instead of a second one (same results; for many jobs
    /// sharing few cores).
    #[arg(long)]
    pub no_read_ahead: bool,
    /// Dimension d (default: one past the largest feature index of the file).
    #[arg(long)]
    pub dim: Option<usize>,
    /// LIBSVM indices start at 0.
    #[arg(long)]
    pub zero_based: bool,
    /// Input format: auto (`.vw`/`.vw.gz` → vw, else libsvm) | libsvm | vw.
    #[arg(long, default_value_t = Format::Auto)]
    pub format: Format,
    /// VW input: hash features into 2^B weights (VW's -b; default 18, or the model's with -i).
    #[arg(short = 'b', long)]
    pub bits: Option<u32>,
    /// Training file (LIBSVM or VW text; `-` = stdin, which then needs --dim for LIBSVM; `.gz`
    /// decompressed).
    pub file: String,
}

/// A reader of the training or test file.
type Reading = Box<dyn ExampleSource<Error = ParseError>>;

/// Opens `path` as an [`ExampleReader`]; with `ahead` it is parsed on a second thread
/// ([`ReadAhead`]).
fn open_reading(
    path: &str,
    format: Format,
    zero_based: bool,
    bits: u32,
    ahead: bool,
) -> Result<Reading> {
    let reader = ExampleReader::open(path, format, zero_based, bits)?;
    Ok(if ahead {
        Box::new(ReadAhead::new(reader))
    } else {
        Box::new(reader)
    })
}

/// Hash bits for VW input: `--bits`, else those of the model's dimension, else 18.
fn vw_bits(bits: Option<u32>, model_dim: Option<usize>) -> Result<u32> {
    if let Some(b) = bits {
        if !(1..=32).contains(&b) {
            bail!("--bits must be between 1 and 32, got {b}");
        }
        return Ok(b);
    }
    match model_dim {
        Some(d) if d.is_power_of_two() => Ok(d.trailing_zeros()),
        Some(d) => bail!("the model's dimension {d} is not a power of two: give --bits"),
        None => Ok(VwOptions::default().bits),
    }
}

/// Arguments of `sketchlearn test`.
#[derive(clap::Args, Debug)]
pub struct TestArgs {
    /// The model to evaluate (written by `train -f`).
    #[arg(short = 'i', long = "initial-model")]
    pub initial_model: String,
    /// Write each prediction (raw score) to this file.
    #[arg(short = 'p', long = "predictions")]
    pub predictions: Option<String>,
    /// Print a JSON summary on stdout.
    #[arg(long)]
    pub json: bool,
    /// LIBSVM indices start at 0.
    #[arg(long)]
    pub zero_based: bool,
    /// Parse on the evaluating thread instead of a second one (same results).
    #[arg(long)]
    pub no_read_ahead: bool,
    /// Input format: auto (`.vw`/`.vw.gz` → vw, else libsvm) | libsvm | vw.
    #[arg(long, default_value_t = Format::Auto)]
    pub format: Format,
    /// VW input: hash bits (default: those of the model's dimension).
    #[arg(short = 'b', long)]
    pub bits: Option<u32>,
    /// Test file (LIBSVM or VW; `-` = stdin; `.gz` decompressed). Features unseen in training
    /// count as 0.
    pub file: String,
}

/// What `train --json` prints.
#[derive(Serialize, Debug)]
pub struct TrainReport {
    pub learner: String,
    pub examples: u64,
    pub passes: u32,
    pub dim: usize,
    pub progressive_error: Option<f64>,
    pub progressive_loss: f64,
    pub progressive_auc: Option<f64>,
    pub seconds: f64,
    pub examples_per_second: f64,
    pub refused_steps: u64,
    /// The learning pass diverged ([`crate::divergence::diverged`]; a warning on stderr says
    /// what to do).
    pub diverged: bool,
    /// For the `auto` mixture: each member and its final weight π (which member the mixture
    /// follows on this data).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mixture: Option<Vec<MemberWeight>>,
}

/// One member of a mixture in the `train` summary.
#[derive(Serialize, Debug)]
pub struct MemberWeight {
    pub learner: String,
    pub weight: f64,
}

/// The members of an `auto` or `adagrad-grid` model and their current mixture weights.
fn mixture_weights(model: &LinearModel) -> Option<Vec<MemberWeight>> {
    let AnyLearner::Mixture(mix) = &model.learner else {
        return None;
    };
    let names = model.config.mixture_members()?;
    Some(
        mix.member_weights()
            .into_iter()
            .enumerate()
            .map(|(k, weight)| MemberWeight {
                learner: names
                    .get(k)
                    .map_or_else(|| format!("member {}", k + 1), |c| c.describe()),
                weight,
            })
            .collect(),
    )
}

/// What `test --json` prints.
#[derive(Serialize, Debug)]
pub struct TestReport {
    pub learner: String,
    pub examples: u64,
    pub error: Option<f64>,
    pub loss: f64,
    pub auc: Option<f64>,
    pub rmse: f64,
    pub seconds: f64,
}

/// Forwards to a learner, writing every prediction and counting refused (diverging) steps, which
/// are reported rather than fatal: the weights stay as they were.
struct Tap<'a, L: ?Sized> {
    inner: &'a mut L,
    out: Option<BufWriter<File>>,
    io_error: Option<std::io::Error>,
    refused: u64,
}

impl<L: OnlineLearner + ?Sized> OnlineLearner for Tap<'_, L> {
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn predict(&self, x: Row<'_>) -> f64 {
        self.inner.predict(x)
    }
    fn learn(&mut self, x: Row<'_>, y: f64, weight: f64) -> Result<f64, LearnError> {
        let p = match self.inner.learn(x, y, weight) {
            Ok(p) => p,
            Err(LearnError::Diverged(_)) => {
                self.refused += 1;
                self.inner.predict(x)
            }
            Err(e) => return Err(e),
        };
        if let Some(out) = self.out.as_mut() {
            if let Err(e) = writeln!(out, "{p}") {
                self.io_error.get_or_insert(e);
            }
        }
        Ok(p)
    }
    fn weights(&self) -> Cow<'_, [f64]> {
        self.inner.weights()
    }
}

fn print_header() {
    eprintln!(
        "{:<12} {:<12} {:>12} {:>12} {:>9} {:>9} {:>9}",
        "average", "since", "example", "example", "current", "current", "current"
    );
    eprintln!(
        "{:<12} {:<12} {:>12} {:>12} {:>9} {:>9} {:>9}",
        "loss", "last", "counter", "weight", "label", "predict", "features"
    );
}

fn print_row(r: &ProgressRow) {
    eprintln!(
        "{:<12.6} {:<12.6} {:>12} {:>12.1} {:>9.4} {:>9.4} {:>9}",
        r.average_loss,
        r.since_last_loss,
        r.examples,
        r.weighted_examples,
        r.label,
        r.prediction,
        r.features
    );
}

fn open_predictions(path: &Option<String>) -> Result<Option<BufWriter<File>>> {
    path.as_ref()
        .map(|p| {
            File::create(p)
                .map(BufWriter::new)
                .with_context(|| format!("cannot create predictions file {p}"))
        })
        .transpose()
}

pub fn train(args: &TrainArgs) -> Result<()> {
    if args.passes == 0 {
        bail!("--passes must be at least 1");
    }
    if args.passes > 1 && args.file == "-" {
        bail!("several passes need a file, not standard input");
    }
    let format = args.format.resolve(&args.file);
    let vw = format == Format::Vw;
    if args.bits.is_some() && !vw {
        bail!("--bits applies to VW input (feature hashing); LIBSVM indices are used as they are");
    }
    let mut sparse_note = String::new();
    let mut model = match &args.initial_model {
        Some(path) => LinearModel::load(path)?,
        None => {
            // Validated before reading the data.
            let valid = args.learner.config(args.seed)?.check()?;
            let (dim, avg_nnz) = if vw {
                if args.dim.is_some() {
                    bail!("VW input has dimension 2^bits: give --bits, not --dim");
                }
                (1usize << vw_bits(args.bits, None)?, None)
            } else {
                match (args.dim, args.file.as_str()) {
                    (Some(d), "-") => (d, None),
                    (None, "-") => bail!("reading standard input needs --dim"),
                    (Some(d), path) => {
                        // The first examples give the sparsity for the automatic choice.
                        let mut r = ExampleReader::open(path, format, args.zero_based, 18)?;
                        let (mut ex, mut n, mut nnz) = (Example::default(), 0u64, 0usize);
                        while n < SPARSITY_SAMPLE && r.read_into(&mut ex)? {
                            n += 1;
                            nnz += ex.indices.len();
                        }
                        (d, (n > 0).then(|| nnz as f64 / n as f64))
                    }
                    (None, path) => {
                        let mut nnz = 0usize;
                        let (n, dim) =
                            for_each_row(path, Format::Libsvm, args.zero_based, |row, _| {
                                nnz += row.stored_len();
                                Ok::<(), std::convert::Infallible>(())
                            })?;
                        (dim, (n > 0).then(|| nnz as f64 / n as f64))
                    }
                }
            };
            let (valid, choice) = valid.resolve(&InputProfile {
                dim,
                hashed: vw,
                avg_nnz,
            });
            if choice != RepresentationChoice::Given && choice != RepresentationChoice::Dense {
                sparse_note = format!("  [{choice}]");
            }
            let learner = valid.build(dim)?;
            LinearModel::new(valid.into_inner(), learner)
        }
    };
    let bits = if vw {
        let b = vw_bits(args.bits, Some(model.learner.dim()))?;
        if 1usize << b != model.learner.dim() {
            bail!(
                "--bits {b} does not match the model's dimension {}",
                model.learner.dim()
            );
        }
        b
    } else {
        18
    };
    let loss = model.config.loss;
    let mut metrics = Metrics::new();
    let quiet = args.quiet;
    if !quiet {
        eprintln!(
            "learner: {}  (d = {}){sparse_note}",
            model.config.describe(),
            model.learner.dim()
        );
        print_header();
    }
    let start = Instant::now();
    let mut tap = Tap {
        inner: &mut model.learner,
        out: open_predictions(&args.predictions)?,
        io_error: None,
        refused: 0,
    };
    let mut total = 0;
    let mut label_max = 0.0f64;
    let name = sketchlearn::data::source::source_name(&args.file);
    for _pass in 0..args.passes {
        // Parsed on a second thread while the learner learns (VW does the same).
        let mut reader = open_reading(
            &args.file,
            format,
            args.zero_based,
            bits,
            !args.no_read_ahead,
        )?;
        let n = progressive_with(
            &mut tap,
            |ex: &mut Example| {
                let more = reader.read_into(ex);
                if let Ok(true) = more {
                    label_max = label_max.max(ex.label.abs());
                }
                more
            },
            loss,
            &mut metrics,
            |row| {
                if !quiet {
                    print_row(row)
                }
            },
        )
        .map_err(|e| match e {
            sketchlearn::eval::EvalError::Source(e) => anyhow::Error::new(e),
            sketchlearn::eval::EvalError::Learn { source, .. } => {
                anyhow::anyhow!("{name}:{}: {source}", reader.line())
            }
        })?;
        total += n;
    }
    let seconds = start.elapsed().as_secs_f64();
    let refused = tap.refused;
    let diverged = crate::divergence::check(
        loss,
        &metrics,
        label_max,
        "try a smaller --learning-rate, rows scaled to unit norm, or the default --algo auto",
    );
    if let Some(mut out) = tap.out.take() {
        out.flush()?;
    }
    if let Some(e) = tap.io_error.take() {
        bail!("writing predictions: {e}");
    }
    if !quiet {
        if let Some(r) = metrics.final_row() {
            print_row(&r);
        }
        eprintln!();
        eprintln!("examples          {}", metrics.examples());
        if let Some(e) = metrics.error_rate() {
            eprintln!("progressive error {e:.6}");
        }
        eprintln!("average loss      {:.6}", metrics.mean_loss());
        eprintln!("seconds           {seconds:.3}");
        for (k, m) in mixture_weights(&model).iter().flatten().enumerate() {
            let head = if k == 0 { "mixture weights" } else { "" };
            eprintln!("{head:17} {:.3}  {}", m.weight, m.learner);
        }
        if refused > 0 {
            eprintln!("warning: {refused} steps refused (they would have made weights non-finite)");
        }
    }
    model.examples_seen += total;
    if let Some(path) = &args.final_model {
        model.save(path)?;
    }
    if args.json {
        let report = TrainReport {
            learner: model.config.describe(),
            examples: total,
            passes: args.passes,
            dim: model.learner.dim(),
            progressive_error: metrics.error_rate(),
            progressive_loss: metrics.mean_loss(),
            progressive_auc: metrics.auc(),
            seconds,
            examples_per_second: if seconds > 0.0 {
                total as f64 / seconds
            } else {
                0.0
            },
            refused_steps: refused,
            diverged,
            mixture: mixture_weights(&model),
        };
        println!("{}", serde_json::to_string(&report)?);
    }
    Ok(())
}

pub fn test(args: &TestArgs) -> Result<()> {
    let model = LinearModel::load(&args.initial_model)?;
    let mut metrics = Metrics::new();
    let format = args.format.resolve(&args.file);
    let bits = if format == Format::Vw {
        let b = vw_bits(args.bits, Some(model.learner.dim()))?;
        if 1usize << b != model.learner.dim() {
            bail!(
                "--bits {b} does not match the model's dimension {}",
                model.learner.dim()
            );
        }
        b
    } else if args.bits.is_some() {
        bail!("--bits applies to VW input (feature hashing)");
    } else {
        18
    };
    let mut reader = open_reading(
        &args.file,
        format,
        args.zero_based,
        bits,
        !args.no_read_ahead,
    )?;
    let mut out = open_predictions(&args.predictions)?;
    let start = Instant::now();
    let mut io_error = None;
    let learner = &model.learner;
    let n = evaluate_with(
        learner,
        |ex: &mut Example| {
            let more = reader.read_into(ex)?;
            if more {
                if let Some(o) = out.as_mut() {
                    if let Err(e) = writeln!(o, "{}", learner.predict(ex.row())) {
                        io_error.get_or_insert(e);
                    }
                }
            }
            Ok::<bool, sketchlearn::ParseError>(more)
        },
        model.config.loss,
        &mut metrics,
        |_| {},
    )?;
    let seconds = start.elapsed().as_secs_f64();
    if let Some(mut o) = out {
        o.flush()?;
    }
    if let Some(e) = io_error {
        bail!("writing predictions: {e}");
    }
    let report = TestReport {
        learner: model.config.describe(),
        examples: n,
        error: metrics.error_rate(),
        loss: metrics.mean_loss(),
        auc: metrics.auc(),
        rmse: metrics.rmse(),
        seconds,
    };
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        println!("learner   {}", report.learner);
        println!("examples  {}", report.examples);
        if let Some(e) = report.error {
            println!("error     {e:.6}");
        }
        println!("loss      {:.6}", report.loss);
        if let Some(a) = report.auc {
            println!("auc       {a:.6}");
        }
        println!("seconds   {seconds:.3}");
    }
    Ok(())
}
