//! `sketchlearn train` and `sketchlearn test`: argument parsing and printing around the
//! library's run ([`sketchlearn::run::train`], [`sketchlearn::run::evaluate`]) — VW habits: a
//! progress table on stderr at doubling example counts, `-f` to save, `-i` to resume, `-p` to
//! write predictions.

use crate::class_args::ClassArgs;
use crate::learner_args::LearnerArgs;
use crate::prediction_output::PredictionFormat;
use crate::saved_model::{check_input, AnyModel};
use anyhow::{bail, Context, Result};
use serde::Serialize;
use sketchlearn::data::{Format, InputSpec, Schema};
use sketchlearn::eval::ProgressRow;
use sketchlearn::labels::Classes;
use sketchlearn::linear::multiclass::MulticlassModel;
use sketchlearn::linear::{LinearModel, MemberWeight, OnlineLearner, RepresentationChoice};
use sketchlearn::loss::Loss;
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
stderr has rows at example counts 1, 2, 4, 8, ... With --passes N the file is read N times; the \
progressive metrics cover all passes, as in VW.\n\nLabels: a binary classifier takes any two \
distinct labels (-1/+1, 0/1, 2/4, Yes/No in CSV). As in scikit-learn, the classes are sorted \
(numbers by value, names alphabetically) and the larger / later one is the positive class; \
--classes NEG,POS gives them in another order, and is needed on a stream read once (-) whose \
labels are not -1/+1 or 0/1. The classes are stored in the model; test, predict and -p print \
labels in them. A third label is an error naming its line: use --multiclass (or --oaa K, VW's \
labels 1..K). --loss squared keeps real labels as they are. -p writes the predicted label and \
the probability of the positive class (logistic loss; hinge losses: the label only), the value \
(regression), with --multiclass the label (--probabilities: then one probability per class), \
or with --raw the margins.\n\nSparse input: for --algo newton or auto with curvature oja, rp, fd/fd-fast or \
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
    #[command(flatten)]
    pub class: ClassArgs,
    /// The CSV schema when the input was converted from CSV (set by `csv_input`).
    #[arg(skip)]
    pub csv_schema: Option<Schema>,
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
    /// Write each progressive prediction to this file, one per line (`-` = standard output):
    /// the label and the positive class's probability (see below).
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
    /// Write each prediction to this file (`-` = standard output): the label in the model's
    /// classes and the positive class's probability (logistic), the label (hinge), the value
    /// (squared loss).
    #[arg(short = 'p', long = "predictions")]
    pub predictions: Option<String>,
    /// -p writes raw margins wᵀx (multiclass: the probabilities only).
    #[arg(long, conflicts_with = "probabilities")]
    pub raw: bool,
    /// Multiclass -p: the label, then one probability per class.
    #[arg(long)]
    pub probabilities: bool,
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
    /// A classifier's classes, negative then positive.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub classes: Option<Vec<String>>,
    /// For the `auto` mixture: each member and its final weight π (which member the mixture
    /// follows on this data).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mixture: Option<Vec<MemberWeight>>,
}

/// What `test --json` prints: only the metrics that apply to the loss (classification: error,
/// log loss for the logistic loss or the loss by its name, AUC; regression: RMSE, MAE, R²).
#[derive(Serialize, Debug)]
pub struct TestReport {
    pub learner: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub classes: Option<Vec<String>>,
    pub examples: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_loss: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hinge_loss: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub smooth_hinge_loss: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auc: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rmse: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mae: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub r2: Option<f64>,
    pub seconds: f64,
}

/// What `train` and `test` show while the library runs: the learner line and progress table on
/// stderr (unless quiet), each prediction in the `-p` file (created when the run starts, after
/// the configuration and the input were checked), warnings on stderr.
struct Terminal<'a> {
    quiet: bool,
    /// -p writes margins.
    raw: bool,
    /// Classes to print instead of the run's (a CSV file's class names).
    display: Option<Classes>,
    format: PredictionFormat,
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
            raw: false,
            display: None,
            format: PredictionFormat::Raw,
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
        let classes = self.display.clone().or_else(|| start.classes.cloned());
        self.format = PredictionFormat::binary(start.config.loss, classes, self.raw);
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
            if let Err(e) = writeln!(out, "{}", self.format.line(score)) {
                self.predictions = None;
                self.error
                    .get_or_insert(anyhow::Error::new(e).context("writing predictions"));
            }
        }
    }
    fn classes(&mut self, classes: &Classes) {
        if self.display.is_none() {
            if let PredictionFormat::Binary { probability, .. } = self.format {
                self.format = PredictionFormat::Binary {
                    classes: classes.clone(),
                    probability,
                };
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

pub(crate) fn read_options(
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

/// How `args` reads its input (the model keeps it; CSV: the schema).
fn input_spec(args: &TrainArgs) -> InputSpec {
    let format = args.format.resolve(&args.file);
    match &args.csv_schema {
        Some(schema) => InputSpec::new(Format::Csv, false, None, Some(schema.clone())),
        None => InputSpec::new(format, args.zero_based, Some(args.bits.unwrap_or(18)), None),
    }
}

/// Where a training run starts: a binary/regression learner, or a multiclass one (new or
/// resumed).
#[allow(clippy::large_enum_variant)] // one per run
enum Begin {
    Binary(Start),
    Multiclass(Option<MulticlassModel>),
}

/// The start of a run from the flags and the model to resume (checked against the data).
fn begin(args: &TrainArgs) -> Result<Begin> {
    let resumed = args
        .initial_model
        .as_deref()
        .map(AnyModel::load)
        .transpose()?;
    if let (Some(m), None) = (&resumed, &args.csv_schema) {
        check_input(m, &args.file, args.format, args.zero_based, args.bits)?;
    }
    // CSV rows converted to LIBSVM carry -1/+1 or class indices, not the names.
    let csv_classes = args.csv_schema.as_ref().and_then(|s| s.classes()).is_some();
    Ok(match resumed {
        Some(AnyModel::Multiclass(mut m)) => {
            if csv_classes {
                m.classes = crate::csv_input::index_classes(m.classes.len());
            }
            Begin::Multiclass(Some(m))
        }
        None if args.class.is_multiclass() => Begin::Multiclass(None),
        Some(AnyModel::Linear(mut m)) => {
            if args.class.is_multiclass() {
                bail!("--multiclass/--oaa/--reduction: the model to resume is binary");
            }
            if csv_classes {
                m.classes = None;
            }
            Begin::Binary(Start::Resume(m))
        }
        None => Begin::Binary(Start::New(args.learner.config(args.seed)?)),
    })
}

pub fn train(args: &TrainArgs) -> Result<()> {
    let spec = input_spec(args);
    let start = match begin(args)? {
        Begin::Binary(start) => start,
        Begin::Multiclass(m) => return crate::multiclass_cmd::train(args, m, spec),
    };
    if args.class.probabilities {
        bail!("--probabilities is for multiclass models (binary -p writes the positive class's probability)");
    }
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
    terminal.raw = args.class.raw;
    terminal.display = args.csv_schema.as_ref().and_then(|s| s.classes().cloned());
    let mut outcome = run::train_classified(
        Input::path(&args.file),
        start,
        &options,
        &args.class.spec()?,
        &mut terminal,
    )?;
    terminal.finish()?;
    if let (Some(c), Some(_)) = (terminal_display(args), &outcome.model.classes) {
        outcome.model.classes = Some(c);
    }
    outcome.model.input.get_or_insert(spec);
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
        if let Some(c) = &outcome.model.classes {
            eprintln!(
                "classes           {} (positive: {})",
                c.to_list(),
                c.labels()[1]
            );
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
            classes: outcome.model.classes.as_ref().map(Classes::names),
            mixture,
        };
        println!("{}", serde_json::to_string(&report)?);
    }
    Ok(())
}

/// The class names of a CSV file's labels.
fn terminal_display(args: &TrainArgs) -> Option<Classes> {
    args.csv_schema.as_ref().and_then(|s| s.classes().cloned())
}

pub fn test(args: &TestArgs) -> Result<()> {
    let model = AnyModel::load(&args.initial_model)?;
    let format = check_input(&model, &args.file, args.format, args.zero_based, args.bits)?;
    let mut read = read_options(format, args.zero_based, args.bits, args.no_read_ahead);
    let converted = match (format, model.schema()) {
        (Format::Csv, Some(schema)) => {
            Some(crate::csv_input::TempLibsvm::convert(&args.file, schema)?)
        }
        (Format::Csv, None) => bail!(
            "{}: CSV needs a model trained on CSV (it keeps the columns)",
            args.file
        ),
        _ => None,
    };
    let file = converted.as_ref().map_or(args.file.as_str(), |c| c.path());
    if converted.is_some() {
        read = read_options(Format::Libsvm, true, None, args.no_read_ahead);
    }
    match &model {
        AnyModel::Multiclass(m) => crate::multiclass_cmd::test(args, m, file, read),
        AnyModel::Linear(m) => test_linear(args, m, file, read, converted.is_some()),
    }
}

fn test_linear(
    args: &TestArgs,
    model: &LinearModel,
    file: &str,
    read: ReadOptions,
    csv: bool,
) -> Result<()> {
    if args.probabilities {
        bail!("--probabilities is for multiclass models");
    }
    let mut terminal = Terminal::new(true, false, args.predictions.as_deref(), "");
    terminal.raw = args.raw;
    let mut evaluated = model.clone();
    if csv && model.classes.is_some() {
        // CSV class names were converted to -1/+1.
        terminal.display = model.classes.clone();
        evaluated.classes = None;
    }
    let outcome = run::evaluate(Input::path(file), &evaluated, &read, &mut terminal)?;
    terminal.finish()?;
    let metrics = &outcome.metrics;
    let loss = model.config.loss;
    let classify = loss.is_classification();
    let named = |l: Loss| (loss == l).then(|| metrics.mean_loss());
    let report = TestReport {
        learner: crate::drp_cmd::model_name(model),
        classes: model.classes.as_ref().map(Classes::names),
        examples: outcome.examples,
        error: metrics.error_rate().filter(|_| classify),
        log_loss: named(Loss::Logistic),
        hinge_loss: named(Loss::Hinge),
        smooth_hinge_loss: named(Loss::SmoothHinge),
        auc: metrics.auc().filter(|_| classify),
        rmse: (!classify).then(|| metrics.rmse()),
        mae: (!classify).then(|| metrics.mae()),
        r2: metrics.r2().filter(|_| !classify),
        seconds: outcome.seconds,
    };
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        println!("learner   {}", report.learner);
        if let Some(c) = &report.classes {
            println!("classes   {}", c.join(","));
        }
        println!("examples  {}", report.examples);
        let lines = [
            ("error", report.error),
            ("log loss", report.log_loss),
            ("hinge", report.hinge_loss),
            ("s-hinge", report.smooth_hinge_loss),
            ("auc", report.auc),
            ("rmse", report.rmse),
            ("mae", report.mae),
            ("r2", report.r2),
        ];
        for (name, v) in lines {
            if let Some(v) = v {
                println!("{name:<9} {v:.6}");
            }
        }
        println!("seconds   {:.3}", report.seconds);
    }
    Ok(())
}
