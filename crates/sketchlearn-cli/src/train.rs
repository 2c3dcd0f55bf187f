//! `sketchlearn train` and `sketchlearn test`: argument parsing and printing around the
//! library's run ([`sketchlearn::run::train`], [`sketchlearn::run::evaluate`]) — VW habits: a
//! progress table on stderr at doubling example counts, `-f` to save, `-i` to resume, `-p` to
//! write predictions.

use crate::class_args::ClassArgs;
use crate::eval_args::EvalArgs;
use crate::input_args::InputArgs;
use crate::learner_args::LearnerArgs;
use crate::prediction_output::PredictionFormat;
use crate::prediction_sink::PredictionSink;
use crate::quiet::Quiet;
use crate::saved_model::{check_input, AnyModel};
use anyhow::{bail, Context, Result};
use sketchlearn::data::{Format, InputSpec, VwOptions};
use sketchlearn::eval::{Metrics, ProgressRow};
use sketchlearn::labels::Classes;
use sketchlearn::linear::multiclass::MulticlassModel;
use sketchlearn::linear::{LearnerConfig, LinearModel, Regularization, RepresentationChoice};
use sketchlearn::loss::Loss;
use sketchlearn::run::{
    self, Input, Observer, ObserverError, PassReport, ReadOptions, RunStart, Start, TestReport,
    TrainOptions, TrainOutcome, TrainReport, Warning,
};
use std::io::Write;

/// Arguments of `sketchlearn train`.
#[derive(clap::Args, Debug)]
#[command(
    allow_negative_numbers = true,
    disable_help_flag = true,
    after_help = "Labels: any two classes (sorted, the later positive; --classes NEG,POS), more with \
--multiclass.\nRare flags, in docs/guide.md: --oja-c C, --no-read-ahead, --keep-names, --retire EPS.\n\
Example: sketchlearn train --passes 5 --holdout 0.1 --early-stop 2 data/heart.libsvm"
)]
pub struct TrainArgs {
    #[command(flatten)]
    pub learner: LearnerArgs,
    #[command(flatten)]
    pub class: ClassArgs,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub eval: EvalArgs,
    /// Seed of every random draw (sketches, shuffle)
    #[arg(long, value_name = "S", default_value_t = 0, help_heading = "Learner")]
    pub seed: u64,
    /// Retire mixture members weighing < EPS (default 1e-20; 0: never)
    #[arg(long, value_name = "EPS", help_heading = "Learner", hide = true)]
    pub retire: Option<f64>,
    /// Save the final model to this file
    #[arg(
        short = 'f',
        long = "final-model",
        value_name = "FILE",
        help_heading = "Output"
    )]
    pub final_model: Option<String>,
    /// Resume from this model (learner flags are refused)
    #[arg(
        short = 'i',
        long = "initial-model",
        value_name = "FILE",
        conflicts_with = "LearnerArgs",
        help_heading = "Output"
    )]
    pub initial_model: Option<String>,
    /// Write each progressive prediction to this file (- = stdout)
    #[arg(
        short = 'p',
        long = "predictions",
        value_name = "FILE",
        help_heading = "Output"
    )]
    pub predictions: Option<String>,
    /// Print a JSON summary on stdout
    #[arg(long, help_heading = "Output")]
    pub json: bool,
    /// VW input: keep feature names in the model for inspect (≤ 1,000,000; listed under
    /// "Rare flags" to keep `train --help` short)
    #[arg(long, hide = true)]
    pub keep_names: bool,
    #[command(flatten)]
    pub quiet: Quiet,
    /// Print help (the Output heading holds it: one heading fewer)
    #[arg(short = 'h', long, action = clap::ArgAction::Help, help_heading = "Output")]
    help: Option<bool>,
}

/// Arguments of `sketchlearn test`.
#[derive(clap::Args, Debug)]
pub struct TestArgs {
    #[command(flatten)]
    pub score: crate::score_args::ScoreArgs,
    /// Print a JSON summary on stdout.
    #[arg(long)]
    pub json: bool,
    /// LIBSVM indices start at 0.
    #[arg(long)]
    pub zero_based: bool,
    /// Parse on the evaluating thread instead of a second one (same results).
    #[arg(long)]
    pub no_read_ahead: bool,
    /// Input format: auto (`.vw` → vw, `.csv` → csv, `.tsv` → tsv, else libsvm) | libsvm | vw |
    /// csv | tsv (CSV separated by tabs).
    #[arg(long, default_value_t = Format::Auto)]
    pub format: Format,
    /// VW input: hash bits (default: those of the model's dimension).
    #[arg(short = 'b', long)]
    pub bits: Option<u32>,
    /// Read the examples through this binary cache (written on the first run; see `train -c`).
    #[arg(short = 'c', long, value_name = "FILE")]
    pub cache: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub quiet: Quiet,
    /// Test file (LIBSVM, VW or CSV; `-` = stdin; `.gz` decompressed). Features unseen in
    /// training count as 0.
    pub file: String,
}

impl TestArgs {
    /// The test file, through its `--cache` when given.
    pub fn input(&self) -> Input {
        crate::input_args::with_cache(Input::path(&self.file), self.cache.as_ref())
    }
}

/// What `train` and `test` show while the library runs: the learner line and progress table on
/// stderr (unless quiet), each prediction in the `-p` file (opened when the run starts, after
/// the configuration and the input were checked; in place when the run ends well), warnings on stderr.
struct Terminal<'a> {
    quiet: bool,
    /// -p writes margins.
    raw: bool,
    format: PredictionFormat,
    /// Whether to print the learner line and the table (train only).
    table: bool,
    predictions_path: Option<&'a str>,
    predictions: Option<PredictionSink>,
    error: Option<anyhow::Error>,
    /// The learner, for the advice after a warning (`run::warning_advice`).
    config: Option<LearnerConfig>,
}

impl<'a> Terminal<'a> {
    fn new(quiet: bool, table: bool, predictions_path: Option<&'a str>) -> Self {
        Terminal {
            quiet,
            raw: false,
            format: PredictionFormat::Raw,
            table,
            predictions_path,
            predictions: None,
            error: None,
            config: None,
        }
    }

    /// Flushes the predictions; the first error met while writing them.
    fn finish(mut self) -> Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        if let Some(out) = self.predictions.take() {
            out.finish().context("writing predictions")?;
        }
        Ok(())
    }
}

impl Observer for Terminal<'_> {
    fn started(&mut self, start: &RunStart<'_>) -> Result<(), ObserverError> {
        if let (Some(schema), false) = (start.schema, self.quiet) {
            eprintln!("{}", run::describe_schema(schema, start.classes, false));
        }
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
        self.config = Some(start.config.clone());
        self.format = PredictionFormat::binary(start.config.loss, start.classes.cloned(), self.raw);
        self.ready()
    }
    /// Creates the `-p` file (once: a run that learns from a guess asks first).
    fn ready(&mut self) -> Result<(), ObserverError> {
        if let (Some(p), None) = (self.predictions_path, &self.predictions) {
            self.predictions = Some(PredictionSink::create(p)?);
        }
        Ok(())
    }
    fn progress(&mut self, row: &ProgressRow) {
        if self.table && !self.quiet {
            print_row(row, &self.format);
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
        if let PredictionFormat::Binary { probability, .. } = self.format {
            self.format = PredictionFormat::Binary {
                classes: classes.clone(),
                probability,
            };
        }
    }
    fn warning(&mut self, warning: &Warning) {
        let advice = run::warning_advice(warning, self.config.as_ref());
        eprintln!("{}", warning_line(warning, advice.as_deref()));
    }
    fn pass_done(&mut self, r: &PassReport<'_>) {
        if !self.quiet {
            let numbers = |m: &Metrics| (m.mean_loss(), m.error_rate());
            if let Some(line) = pass_line(r, "loss", numbers) {
                eprintln!("{line}");
            }
        }
    }
}

/// The line of a pass with hold-out or test numbers (`None` without them): the progressive
/// loss, then each held-out loss and error, the loss named `loss` (`log loss` for multiclass)
/// and given with the error by `numbers`.
pub(crate) fn pass_line<M>(
    r: &PassReport<'_, M>,
    loss: &str,
    numbers: impl Fn(&M) -> (f64, Option<f64>),
) -> Option<String> {
    if r.holdout.is_none() && r.test.is_none() {
        return None;
    }
    let progressive = numbers(r.progressive).0;
    let mut line = format!("pass {:<3} progressive {loss} {progressive:.6}", r.pass);
    for (name, m) in [("holdout", r.holdout), ("test", r.test)] {
        if let Some((l, error)) = m.map(&numbers) {
            line.push_str(&format!("  {name} {loss} {l:.6}"));
            if let Some(e) = error {
                line.push_str(&format!(" error {e:.4}"));
            }
        }
    }
    Some(line)
}

/// A run's warning (or note) as printed, with what to try (`advice`: `run::warning_advice`'s
/// or a command's own) after a `; `.
pub(crate) fn warning_line(warning: &Warning, advice: Option<&str>) -> String {
    match advice {
        Some(advice) => format!("{}: {warning}; {advice}", warning.kind()),
        None => format!("{}: {warning}", warning.kind()),
    }
}

/// The progress table's header, or a row with the classes `format` prints predictions in (the
/// user's labels for a binary classifier: `run::progress_row`).
fn print_header() {
    run::progress_header().iter().for_each(|l| eprintln!("{l}"));
}

fn print_row(r: &ProgressRow, format: &PredictionFormat) {
    let classes = match format {
        PredictionFormat::Binary { classes, .. } => Some(classes),
        _ => None,
    };
    eprintln!("{}", run::progress_row(r, classes));
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
        ..ReadOptions::default()
    }
}

/// How `args` reads its input (the model keeps it; a CSV file's schema is added by the
/// library when it scans the columns).
fn input_spec(args: &TrainArgs, format: Format) -> InputSpec {
    let input = &args.input;
    InputSpec::new(
        format,
        input.zero_based,
        Some(input.bits.unwrap_or(VwOptions::default().bits)),
        None,
    )
}

/// Where a training run starts: a binary/regression learner, or a multiclass one (new or
/// resumed).
#[allow(clippy::large_enum_variant)] // one per run
enum Begin {
    Binary(Start),
    Multiclass(Option<MulticlassModel>),
}

/// The start of a run from the flags and the model to resume (checked against the data), and
/// the format the data is read as (a CSV model reads CSV whatever the name says).
fn begin(args: &TrainArgs) -> Result<(Begin, Format)> {
    let input = &args.input;
    let resumed = args
        .initial_model
        .as_deref()
        .map(AnyModel::load)
        .transpose()?;
    let format = match &resumed {
        Some(m) => check_input(m, &input.file, input.format, input.zero_based, input.bits)?,
        None => input.format(),
    };
    let begin = match resumed {
        Some(AnyModel::Multiclass(m)) => Begin::Multiclass(Some(m)),
        None if args.class.is_multiclass() => Begin::Multiclass(None),
        Some(AnyModel::Linear(m)) => {
            if args.class.is_multiclass() {
                bail!("--multiclass/--oaa/--reduction: the model to resume is binary");
            }
            Begin::Binary(Start::Resume(m))
        }
        None => Begin::Binary(Start::New(args.learner.config(args.seed)?)),
    };
    Ok((begin, format))
}

pub fn train(args: &TrainArgs) -> Result<()> {
    args.input.check()?;
    if args.predictions.is_some() && args.eval.holdout.is_some() {
        bail!(
            "-p writes a prediction per example, and --holdout leaves some out of learning: \
             use one, or `sketchlearn test -p` on a held-out file"
        );
    }
    let (begin, format) = begin(args)?;
    crate::keep_names::check(args.keep_names, format, &args.input.file)?;
    let spec = input_spec(args, format);
    let start = match begin {
        Begin::Binary(start) => start,
        Begin::Multiclass(m) => return crate::multiclass_cmd::train(args, m, spec),
    };
    if args.class.probabilities {
        bail!("--probabilities is for multiclass models (binary -p writes the positive class's probability)");
    }
    let options = TrainOptions {
        read: ReadOptions {
            format,
            ..args.input.read_options()?
        },
        passes: args.eval.passes,
        dim: args.input.dim,
        regularization: match args.initial_model {
            Some(_) => Regularization::default(),
            None => args.learner.regularization(),
        },
        evaluation: args.eval.evaluation(args.seed),
        retirement: args.retire,
    };
    let quiet = args.quiet.quiet;
    let mut terminal = Terminal::new(quiet, true, args.predictions.as_deref());
    terminal.raw = args.class.raw;
    let test = args.eval.test.as_deref().map(Input::path);
    let mut outcome = run::train_and_test(
        args.input.input(),
        test,
        start,
        &options,
        &args.class.spec()?,
        &mut terminal,
    )?;
    terminal.finish()?;
    let bits = outcome
        .model
        .input
        .get_or_insert(spec)
        .bits
        .unwrap_or(VwOptions::default().bits);
    if args.keep_names {
        crate::keep_names::record(&mut outcome.model.extras, &args.input.file, bits, quiet)?;
    }
    // Only for a summary or `--json`: the exact AUC sorts every progressive score (issue 27).
    let report = (!quiet || args.json).then(|| TrainReport::of(&outcome));
    if let (false, Some(report)) = (quiet, &report) {
        print_summary(&outcome, report, args.class.raw);
    }
    if let Some(path) = &args.final_model {
        outcome.model.save(path)?;
    }
    if let (true, Some(report)) = (args.json, &report) {
        println!("{}", serde_json::to_string(report)?);
    }
    skip_freeing(outcome);
    Ok(())
}

/// Ends the life of a finished run's outcome without freeing it: the process exits right
/// after `train` returns, and the kernel takes back its memory at once, while freeing the
/// model piece by piece (its tables, sketches, member threads' buffers and the AUC's scores:
/// megabytes, some of them unmapped one by one) costs about a millisecond of a
/// 100-millisecond run (issue 27: the whole process is what is compared with VW). Called only
/// when everything is written: the predictions flushed and renamed into place
/// (`Terminal::finish`), the model saved (written, synced, renamed), the JSON printed (a
/// failed print ends the process with its error, `signals`); an error on the way returns
/// before this point and is reported as before. Nothing the outcome owns writes anything when
/// dropped (no file handles or buffered writers are in it), so skipping its destructors skips
/// no output.
fn skip_freeing(outcome: TrainOutcome) {
    std::mem::forget(outcome);
}

/// The summary on stderr after training.
fn print_summary(outcome: &TrainOutcome, report: &TrainReport, raw: bool) {
    let metrics = &outcome.metrics;
    if let Some(r) = metrics.final_row() {
        let (loss, classes) = (outcome.model.config.loss, outcome.model.classes.clone());
        print_row(&r, &PredictionFormat::binary(loss, classes, raw));
    }
    eprintln!();
    eprintln!("examples          {}", metrics.examples());
    if let Some(e) = report.progressive_error {
        eprintln!("progressive error {e:.6}");
    }
    if let Some(c) = &outcome.model.classes {
        eprintln!(
            "classes           {} (positive: {})",
            c.to_list(),
            c.labels()[1]
        );
    }
    let squared = outcome.model.config.loss == Loss::Squared;
    let named = if squared { "  (½ squared error)" } else { "" };
    eprintln!("average loss      {:.6}{named}", report.progressive_loss);
    if let (Some(rmse), Some(mae)) = (report.progressive_rmse, report.progressive_mae) {
        eprintln!("progressive rmse  {rmse:.6}");
        eprintln!("progressive mae   {mae:.6}");
        if let Some(r2) = report.progressive_r2 {
            eprintln!("progressive r2    {r2:.6}");
        }
    }
    for (name, m) in [("holdout", &report.holdout), ("test", &report.test)] {
        if let Some(m) = m {
            let error = match (m.error, m.rmse) {
                (Some(e), _) => format!(", error {e:.6}"),
                (None, Some(rmse)) => format!(", rmse {rmse:.6}"),
                (None, None) => String::new(), // HeldOut::of gives one of them
            };
            eprintln!(
                "{name:<17} loss {:.6}{error} ({} examples)",
                m.loss, m.examples
            );
        }
    }
    if report.stopped_early || report.best_pass < report.passes {
        eprintln!(
            "early stop        the model of pass {} (best held-out loss) of {} passes run",
            report.best_pass, report.passes
        );
    }
    eprintln!("seconds           {:.3}", report.seconds);
    for (k, m) in report.mixture.iter().flatten().enumerate() {
        let head = if k == 0 { "mixture weights" } else { "" };
        eprintln!("{head:17} {:.3}  {}", m.weight, m.learner);
    }
    if report.refused_steps > 0 {
        eprintln!(
            "warning: {} steps refused (they would have made weights non-finite)",
            report.refused_steps
        );
    }
}

pub fn test(args: &TestArgs) -> Result<()> {
    let model = AnyModel::load(&args.score.initial_model)?;
    let format = check_input(&model, &args.file, args.format, args.zero_based, args.bits)?;
    let read = read_options(format, args.zero_based, args.bits, args.no_read_ahead);
    match &model {
        AnyModel::Multiclass(m) => crate::multiclass_cmd::test(args, m, read),
        AnyModel::Linear(m) => test_linear(args, m, read),
    }
}

fn test_linear(args: &TestArgs, model: &LinearModel, read: ReadOptions) -> Result<()> {
    if args.score.probabilities {
        bail!("--probabilities is for multiclass models");
    }
    let mut terminal = Terminal::new(true, false, args.score.predictions.as_deref());
    terminal.raw = args.score.raw;
    let outcome = run::evaluate(args.input(), model, &read, &mut terminal)?;
    terminal.finish()?;
    let report = TestReport::of(model, &outcome);
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        println!("learner   {}", report.learner);
        if let Some(c) = &report.classes {
            println!("classes   {}", c.join(","));
        }
        println!("examples  {}", report.examples);
        for (name, v) in report.named_metrics() {
            println!("{name:<9} {v:.6}");
        }
        println!("seconds   {:.3}", report.seconds);
    }
    Ok(())
}
