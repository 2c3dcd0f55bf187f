//! `sketchlearn train` and `sketchlearn test`: argument parsing and printing around the
//! library's run ([`sketchlearn::run::train`], [`sketchlearn::run::evaluate`]) — VW habits: a
//! progress table on stderr at doubling example counts, `-f` to save, `-i` to resume, `-p` to
//! write predictions.

use crate::learner_args::LearnerArgs;
use anyhow::{Context, Result};
use serde::Serialize;
use sketchlearn::data::Format;
use sketchlearn::eval::ProgressRow;
use sketchlearn::linear::{LinearModel, MemberWeight, OnlineLearner, RepresentationChoice};
use sketchlearn::run::{
    self, Input, Observer, ObserverError, ReadOptions, RunStart, Start, TrainOptions, Warning,
};
use std::fs::File;
use std::io::{BufWriter, Write};

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
standard input, a pipe or a FIFO is read once, as a file is: spooled to a temporary file when \
it must be read again); fd/rfd need d >= 2m. --representation sparse \
(--sparse) forces it, --representation dense (--dense) prevents it.\n\nExample:\n  sketchlearn train data/heart.libsvm"
)]
pub struct TrainArgs {
    #[command(flatten)]
    pub learner: LearnerArgs,
    /// Number of passes over the data.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
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
    /// Write each progressive prediction (raw score) to this file, one per line (`-` =
    /// standard output).
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
    /// Training file (LIBSVM or VW text; `-` = stdin; `.gz` decompressed). A stream (stdin, a
    /// pipe, a FIFO, `<(…)`) is read once; when it must be read again (--passes, or no --dim
    /// for LIBSVM) it is spooled to a temporary file (in $TMPDIR, at most 64 GiB, removed at
    /// exit).
    pub file: String,
}

/// Arguments of `sketchlearn test`.
#[derive(clap::Args, Debug)]
pub struct TestArgs {
    /// The model to evaluate (written by `train -f`).
    #[arg(short = 'i', long = "initial-model")]
    pub initial_model: String,
    /// Write each prediction (raw score) to this file (`-` = standard output).
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
    /// The learning pass diverged (the library's divergence rule; a warning on stderr says
    /// what to do).
    pub diverged: bool,
    /// For the `auto` mixture: each member and its final weight π (which member the mixture
    /// follows on this data).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mixture: Option<Vec<MemberWeight>>,
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

/// What `train` and `test` show while the library runs: the learner line and progress table on
/// stderr (unless quiet), each prediction in the `-p` file (created when the run starts, after
/// the configuration and the input were checked), warnings on stderr.
struct Terminal<'a> {
    quiet: bool,
    /// Whether to print the learner line and the table (train only).
    table: bool,
    predictions_path: Option<&'a str>,
    predictions: Option<BufWriter<Box<dyn Write>>>,
    error: Option<anyhow::Error>,
    /// What to change when the pass diverged.
    advice: &'a str,
}

impl<'a> Terminal<'a> {
    fn new(quiet: bool, table: bool, predictions_path: Option<&'a str>, advice: &'a str) -> Self {
        Terminal {
            quiet,
            table,
            predictions_path,
            predictions: None,
            error: None,
            advice,
        }
    }

    /// Flushes the predictions; the first error met while writing them.
    fn finish(mut self) -> Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        if let Some(mut out) = self.predictions.take() {
            out.flush().context("writing predictions")?;
        }
        Ok(())
    }
}

impl Observer for Terminal<'_> {
    fn started(&mut self, start: &RunStart<'_>) -> Result<(), ObserverError> {
        if self.table && !self.quiet {
            let note = match start.representation {
                RepresentationChoice::Given | RepresentationChoice::Dense => String::new(),
                choice => format!("  [{choice}]"),
            };
            eprintln!(
                "learner: {}  (d = {}){note}",
                start.config.describe(),
                start.dim
            );
            print_header();
        }
        if let Some(p) = self.predictions_path {
            let out: Box<dyn Write> = if p == "-" {
                Box::new(std::io::stdout())
            } else {
                Box::new(
                    File::create(p)
                        .map_err(|e| format!("cannot create predictions file {p}: {e}"))?,
                )
            };
            self.predictions = Some(BufWriter::new(out));
        }
        Ok(())
    }
    fn progress(&mut self, row: &ProgressRow) {
        if self.table && !self.quiet {
            print_row(row);
        }
    }
    #[inline]
    fn prediction(&mut self, score: f64) {
        if let Some(out) = self.predictions.as_mut() {
            if let Err(e) = writeln!(out, "{score}") {
                self.predictions = None;
                self.error
                    .get_or_insert(anyhow::Error::new(e).context("writing predictions"));
            }
        }
    }
    fn warning(&mut self, warning: &Warning) {
        match warning {
            Warning::Diverged { .. } => eprintln!("warning: {warning}; {}", self.advice),
            _ => eprintln!("note: {warning}"),
        }
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

fn read_options(
    format: Format,
    zero_based: bool,
    bits: Option<u32>,
    no_read_ahead: bool,
) -> ReadOptions {
    ReadOptions {
        format,
        zero_based,
        bits,
        read_ahead: !no_read_ahead,
    }
}

pub fn train(args: &TrainArgs) -> Result<()> {
    let start = match &args.initial_model {
        Some(path) => Start::Resume(LinearModel::load(path)?),
        None => Start::New(args.learner.config(args.seed)?),
    };
    let options = TrainOptions {
        read: read_options(args.format, args.zero_based, args.bits, args.no_read_ahead),
        passes: args.passes,
        dim: args.dim,
    };
    let mut terminal = Terminal::new(
        args.quiet,
        true,
        args.predictions.as_deref(),
        "try a smaller --learning-rate, rows scaled to unit norm, or the default --algo auto",
    );
    let outcome = run::train(Input::path(&args.file), start, &options, &mut terminal)?;
    terminal.finish()?;
    let metrics = &outcome.metrics;
    let mixture = outcome.mixture_weights();
    if !args.quiet {
        if let Some(r) = metrics.final_row() {
            print_row(&r);
        }
        eprintln!();
        eprintln!("examples          {}", metrics.examples());
        if let Some(e) = metrics.error_rate() {
            eprintln!("progressive error {e:.6}");
        }
        eprintln!("average loss      {:.6}", metrics.mean_loss());
        eprintln!("seconds           {:.3}", outcome.seconds);
        for (k, m) in mixture.iter().flatten().enumerate() {
            let head = if k == 0 { "mixture weights" } else { "" };
            eprintln!("{head:17} {:.3}  {}", m.weight, m.learner);
        }
        if outcome.refused_steps > 0 {
            eprintln!(
                "warning: {} steps refused (they would have made weights non-finite)",
                outcome.refused_steps
            );
        }
    }
    if let Some(path) = &args.final_model {
        outcome.model.save(path)?;
    }
    if args.json {
        let report = TrainReport {
            learner: outcome.model.config.describe(),
            examples: outcome.examples,
            passes: outcome.passes,
            dim: outcome.model.learner.dim(),
            progressive_error: metrics.error_rate(),
            progressive_loss: metrics.mean_loss(),
            progressive_auc: metrics.auc(),
            seconds: outcome.seconds,
            examples_per_second: outcome.examples_per_second(),
            refused_steps: outcome.refused_steps,
            diverged: outcome.diverged,
            mixture,
        };
        println!("{}", serde_json::to_string(&report)?);
    }
    Ok(())
}

pub fn test(args: &TestArgs) -> Result<()> {
    let model = LinearModel::load(&args.initial_model)?;
    let options = read_options(args.format, args.zero_based, args.bits, args.no_read_ahead);
    let mut terminal = Terminal::new(true, false, args.predictions.as_deref(), "");
    let outcome = run::evaluate(Input::path(&args.file), &model, &options, &mut terminal)?;
    terminal.finish()?;
    let metrics = &outcome.metrics;
    let report = TestReport {
        learner: crate::drp_cmd::model_name(&model),
        examples: outcome.examples,
        error: metrics.error_rate(),
        loss: metrics.mean_loss(),
        auc: metrics.auc(),
        rmse: metrics.rmse(),
        seconds: outcome.seconds,
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
        println!("seconds   {:.3}", report.seconds);
    }
    Ok(())
}
