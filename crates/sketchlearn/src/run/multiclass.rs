//! A multiclass run (issue 24, item 2): [`train_multiclass`] settles the classes (a scan of a
//! re-readable input, `--classes`, `--oaa K`, or the resumed model's), maps the labels
//! ([`Labeled`]), chooses the one-against-all members' representation for the input
//! ([`MulticlassConfig::for_input`]) and runs progressive validation with the refused-step
//! policy ([`progressive_multiclass`]); [`evaluate_multiclass_input`] scores a held-out input.
//! A label that is not a class is an error at its line; when the input was scanned first,
//! before anything is learned.
//!
//! ```
//! use sketchlearn::data::ClassSpec;
//! use sketchlearn::linear::multiclass::MulticlassConfig;
//! use sketchlearn::run::{self, Input, MulticlassStart, TrainOptions};
//! let text = "a 1:1\nb 2:1\nc 3:1\n".replace('a', "2").replace('b', "5").replace('c', "9").repeat(100);
//! let fitted = run::train_multiclass(
//!     Input::bytes("three.libsvm", text.into_bytes()),
//!     MulticlassStart::New(MulticlassConfig::default(), ClassSpec::FromInput),
//!     &TrainOptions::default(),
//!     &mut (),
//! )?;
//! assert_eq!(fitted.model.classes.to_list(), "2,5,9");
//! assert!(fitted.metrics.error_rate().unwrap() < 0.05);
//! # Ok::<(), sketchlearn::run::RunError>(())
//! ```

use super::cancelled::Cancellation;
use super::evaluated_pass::{evaluated_pass, MulticlassPassKind};
use super::footprint::{cap_multiclass_size, check_dim, check_fits_multiclass, what_sets_dim};
use super::holdout::EarlyStop;
use super::input::examples;
use super::labels::new_classes;
use super::settle::{check_interactions, check_resumed};
use super::train::check_options;
use super::{csv, Input, LabelRuns, ReadOptions, RunError, TrainOptions, Warning};
use crate::cancel::Cancel;
use crate::data::{ClassSpec, ExampleSource, Format, InputSpec, LabelMap, Labeled};
use crate::eval::multiclass::{
    evaluate_multiclass, MulticlassMetrics, MulticlassPassReport, MulticlassProgress,
};
use crate::eval::EvalError;
use crate::linear::multiclass::{
    AnyMulticlass, MulticlassConfig, MulticlassLearner, MulticlassModel, OneVsAll, Reduction,
};
use crate::linear::{LearnError, ModelExtras, Regularization};
use std::marker::PhantomData;
use std::time::Instant;

/// Where the learner of a multiclass run comes from.
#[allow(clippy::large_enum_variant)] // one per run
pub enum MulticlassStart {
    /// A new learner of this configuration over the classes `spec` settles.
    New(MulticlassConfig, ClassSpec),
    /// Resume a model (its classes are the model's).
    Resume(MulticlassModel),
}

/// What a multiclass training run returns.
#[derive(Clone, Debug)]
pub struct MulticlassOutcome {
    /// The fitted model (`examples_seen` counts this run's examples too).
    pub model: MulticlassModel,
    /// Progressive metrics over all passes.
    pub metrics: MulticlassMetrics,
    /// Examples learned in this run (all passes).
    pub examples: u64,
    /// Steps refused.
    pub refused_steps: u64,
    /// Wall-clock seconds of the passes.
    pub seconds: f64,
    /// Passes made.
    pub passes: u32,
    /// The hold-out metrics of the returned model's pass (`--holdout`).
    pub holdout: Option<MulticlassMetrics>,
    /// The test input's metrics with the returned model ([`train_multiclass_and_test`]).
    pub test: Option<MulticlassMetrics>,
    /// The pass whose model is returned (the last, or the best one with the early stop).
    pub best_pass: u32,
    /// The early stop ended the run before its last pass.
    pub stopped_early: bool,
    /// The caller's [`Cancel`] hook stopped the run ([`train_multiclass_cancellable`]).
    pub cancelled: bool,
}

/// A new multiclass model for `input` (CSV: of its scanned columns, kept in the model), its
/// dimension, sketch size ([`cap_multiclass_size`]) and memory checked ([`check_fits_multiclass`]:
/// the note when its memory grows with the features used).
fn new_model(
    input: &mut Input,
    config: MulticlassConfig,
    spec: &ClassSpec,
    options: &TrainOptions,
) -> Result<(MulticlassModel, Vec<Warning>), RunError> {
    let format = input.format(options.read.format);
    check_interactions(options, format, input.name())?;
    check_penalty(&config, options.regularization)?;
    let bits = options.read.bits(format, None)?;
    let schema = if format == Format::Csv {
        Some(csv::scan_new(input, options)?)
    } else {
        None
    };
    let (classes, p) = new_classes(
        input,
        &options.read,
        bits,
        schema.as_ref(),
        spec,
        options.dim,
    )?;
    let what = what_sets_dim(options.dim, p.hashed, schema.is_some(), input.name());
    check_dim(p.dim, &what)?;
    let config = MulticlassConfig {
        classes: classes.len(),
        ..config.for_input(p.dim, p.hashed, p.avg_nnz)
    };
    let (config, capped) = cap_multiclass_size(config, p.dim)?;
    let memory = check_fits_multiclass(&config, &options.regularization, p.dim, &what)?;
    let invalid = |e: LearnError| RunError::options(format!("multiclass learner: {e}"));
    let mut model = MulticlassModel::build(config, classes, p.dim).map_err(invalid)?;
    let penalty = options.regularization;
    if !penalty.is_none() {
        // One-against-all members with the penalty (`check_penalty`: the only reduction that
        // takes one); their hyper-parameters are the plain members'.
        let member = &model.config.member;
        let members = (0..model.classes.len())
            .map(|_| penalty.build(member, p.dim))
            .collect::<Result<Vec<_>, _>>()?;
        let ova = OneVsAll::of_class_learners(members, member.loss).map_err(invalid)?;
        model.learner = AnyMulticlass::OneVsAll(ova);
    }
    if let Some(schema) = schema {
        model.input = Some(InputSpec::new(Format::Csv, false, None, Some(schema)));
    }
    model.extras = ModelExtras {
        regularization: penalty,
        interactions: options.read.interactions,
        ..ModelExtras::default()
    };
    Ok((model, capped.into_iter().chain(memory).collect()))
}

/// `--l1/--l2` of a new multiclass learner: applied by one-against-all members that are
/// first-order learners ([`Regularization::check`]); the softmax learner's step is a Newton
/// step under a non-diagonal metric, where the proximal step of an L1 penalty has no closed
/// form, so it takes none.
fn check_penalty(config: &MulticlassConfig, penalty: Regularization) -> Result<(), RunError> {
    if penalty.is_none() {
        return Ok(());
    }
    if config.reduction != Reduction::OneVsAll {
        return Err(RunError::options(
            "--l1/--l2 are applied by one-against-all members that are first-order learners \
             (--reduction oaa --algo adagrad or ogd): the softmax step is a Newton step under a \
             non-diagonal metric, where the proximal step of a penalty has no closed form",
        ));
    }
    penalty.check(&config.member)?;
    Ok(())
}

/// Maps a pass's error to a run error at the source's line.
fn run_error(e: EvalError<crate::data::ParseError>, name: &str, line: u64) -> RunError {
    match e {
        EvalError::Source(e) => RunError::Parse(e),
        EvalError::Learn { source, .. } => RunError::Learn {
            source_name: name.to_owned(),
            line,
            error: source,
        },
    }
}

/// Trains a multiclass learner on `input` ([`train_multiclass_and_test`] without a test
/// input).
pub fn train_multiclass(
    input: Input,
    start: MulticlassStart,
    options: &TrainOptions,
    progress: &mut dyn MulticlassProgress,
) -> Result<MulticlassOutcome, RunError> {
    train_multiclass_and_test(input, None, start, options, progress)
}

/// [`train_multiclass`] that stops when `cancel` is requested, as
/// [`train_cancellable`](super::train_cancellable) does: the model has learned the examples
/// read before the request, whole, and [`MulticlassOutcome::cancelled`] is set.
pub fn train_multiclass_cancellable(
    input: Input,
    start: MulticlassStart,
    options: &TrainOptions,
    progress: &mut dyn MulticlassProgress,
    cancel: Cancel<'_>,
) -> Result<MulticlassOutcome, RunError> {
    multiclass_run(input, None, start, options, progress, cancel)
}

/// Trains a multiclass learner on `input` ([module](self) documentation) with the evaluation
/// of a binary run ([`TrainOptions::evaluation`], [`train_and_test`](super::train_and_test)):
/// shuffle buffer, hold-out examples, the `test` input scored after each pass, the early stop
/// on the held-out multiclass log loss, the sorted-labels warning. A resumed model learns on
/// from where it stopped, bit for bit as one longer run. `--classes` with a resumed model must
/// list the model's classes.
///
/// ```
/// use sketchlearn::data::ClassSpec;
/// use sketchlearn::linear::multiclass::MulticlassConfig;
/// use sketchlearn::run::{self, Evaluation, Input, MulticlassStart, TrainOptions};
/// let text = "1 1:1\n2 2:1\n3 3:1\n".repeat(100);
/// let options = TrainOptions {
///     passes: 4,
///     evaluation: Evaluation { holdout: Some(0.1), early_stop: Some(1), ..Evaluation::default() },
///     ..TrainOptions::default()
/// };
/// let fitted = run::train_multiclass_and_test(
///     Input::bytes("train.libsvm", text.clone().into_bytes()),
///     Some(Input::bytes("test.libsvm", text.into_bytes())),
///     MulticlassStart::New(MulticlassConfig::default(), ClassSpec::FromInput),
///     &options,
///     &mut (),
/// )?;
/// assert_eq!(fitted.test.unwrap().error_rate(), Some(0.0));
/// assert_eq!(fitted.holdout.unwrap().examples(), 30); // every 10th of 300
/// # Ok::<(), sketchlearn::run::RunError>(())
/// ```
pub fn train_multiclass_and_test(
    input: Input,
    test: Option<Input>,
    start: MulticlassStart,
    options: &TrainOptions,
    progress: &mut dyn MulticlassProgress,
) -> Result<MulticlassOutcome, RunError> {
    multiclass_run(input, test, start, options, progress, Cancel::never())
}

/// [`train_multiclass_and_test`] stopped by `cancel` ([`train_multiclass_cancellable`]).
fn multiclass_run(
    mut input: Input,
    mut test: Option<Input>,
    start: MulticlassStart,
    options: &TrainOptions,
    progress: &mut dyn MulticlassProgress,
    cancel: Cancel<'_>,
) -> Result<MulticlassOutcome, RunError> {
    check_options(&mut input, test.as_mut(), options)?;
    let format = input.format(options.read.format);
    let (mut model, memory) = match start {
        MulticlassStart::Resume(m) => {
            check_resumed(options)?;
            (m, Vec::new())
        }
        MulticlassStart::New(config, spec) => new_model(&mut input, config, &spec, options)?,
    };
    let bits = options.read.bits(format, Some(model.learner.dim()))?;
    if let Some(schema) = model.schema().filter(|_| format == Format::Csv) {
        progress.schema(schema, &model.classes);
    }
    progress
        .started(&model.classes, &model.config.describe())
        .map_err(RunError::Observer)?;
    for w in &memory {
        progress.warning(w);
    }
    let k = model.classes.len();
    let mut metrics = MulticlassMetrics::new(k);
    let t = Instant::now();
    let (mut total, mut refused, mut passes) = (0, 0, 0);
    let mut runs = LabelRuns::default();
    let mut stop = options.evaluation.early_stop.map(EarlyStop::new);
    let mut last = (None, None);
    let cancellation = Cancellation::new(cancel);
    for pass in 1..=options.passes {
        let schema = model.schema().filter(|_| format == Format::Csv);
        let interactions = model.extras.interactions;
        let reader = examples(&mut input, &options.read, bits, schema, interactions)?;
        for w in input.notes() {
            progress.warning(&w);
        }
        let map = LabelMap::Multiclass(model.classes.clone());
        let mut source = Labeled::new(reader, map, input.name());
        let mut kind = MulticlassPassKind {
            classes: k,
            progress: &mut *progress,
            learner: PhantomData,
        };
        let done = evaluated_pass(
            &mut kind,
            &mut model.learner,
            |ex| cancellation.read(|| source.read_into(ex)),
            &mut metrics,
            &options.evaluation,
            pass,
            &mut runs,
        )
        .map_err(|e| run_error(e, input.name(), source.line()))?;
        passes = pass;
        total += done.outcome.examples;
        model.examples_seen += done.outcome.examples;
        refused += done.outcome.refused_steps;
        if let (1, Some((changes, expected))) = (pass, runs.in_runs()) {
            progress.warning(&Warning::LabelsInRuns { changes, expected });
        }
        if let Some(w) = input.unseen_categories(done.outcome.examples) {
            progress.warning(&w);
        }
        if cancellation.stopped() {
            break;
        }
        let tested = match test.as_mut() {
            Some(t) => {
                let (tested, n) = evaluate_in(t, &model, &options.read, &mut ())?;
                if let Some(w) = t.unseen_categories(n) {
                    progress.warning(&w);
                }
                Some(tested)
            }
            None => None,
        };
        progress.pass_done(&MulticlassPassReport {
            pass,
            progressive: &metrics,
            holdout: done.holdout.as_ref(),
            test: tested.as_ref(),
        });
        let held = tested.as_ref().or(done.holdout.as_ref());
        let held = held.map(MulticlassMetrics::log_loss);
        last = (done.holdout, tested);
        if EarlyStop::watch(stop.as_mut(), pass, held, || (model.clone(), last.clone())) {
            break;
        }
    }
    cancellation.check_not_empty(total, &input)?;
    let cancelled = cancellation.stopped();
    let seconds = t.elapsed().as_secs_f64();
    let (best_pass, (model, last)) = EarlyStop::best_or(stop, passes, (model, last));
    Ok(MulticlassOutcome {
        model,
        metrics,
        examples: total,
        refused_steps: refused,
        seconds,
        passes,
        holdout: last.0,
        test: last.1,
        best_pass,
        stopped_early: passes < options.passes && !cancelled,
        cancelled,
    })
}

/// Scores `model` on `input` without learning; a label that is not one of the model's classes
/// is an error at its line. Returns the metrics and the number of examples.
pub fn evaluate_multiclass_input(
    mut input: Input,
    model: &MulticlassModel,
    options: &ReadOptions,
    progress: &mut dyn MulticlassProgress,
) -> Result<(MulticlassMetrics, u64), RunError> {
    progress
        .started(&model.classes, &model.config.describe())
        .map_err(RunError::Observer)?;
    let (metrics, n) = evaluate_in(&mut input, model, options, progress)?;
    if let Some(w) = input.unseen_categories(n) {
        progress.warning(&w);
    }
    Ok((metrics, n))
}

/// [`evaluate_multiclass_input`] of an input that may be read again (a test input after each
/// pass), without the `started` call.
fn evaluate_in(
    input: &mut Input,
    model: &MulticlassModel,
    options: &ReadOptions,
    progress: &mut dyn MulticlassProgress,
) -> Result<(MulticlassMetrics, u64), RunError> {
    let format = input.format(options.format);
    let bits = options.bits(format, Some(model.learner.dim()))?;
    let schema = model.schema().filter(|_| format == Format::Csv);
    let interactions = model.extras.interactions;
    let reader = examples(input, options, bits, schema, interactions)?;
    for w in input.notes() {
        progress.warning(&w);
    }
    let map = LabelMap::Multiclass(model.classes.clone());
    let mut source = Labeled::new(reader, map, input.name());
    let mut metrics = MulticlassMetrics::new(model.classes.len());
    let n = evaluate_multiclass(
        &model.learner,
        |ex| source.read_into(ex),
        &mut metrics,
        progress,
    )
    .map_err(|e| match e {
        EvalError::Source(e) => RunError::Parse(super::labels::for_model(e)),
        e => run_error(e, input.name(), source.line()),
    })?;
    Ok((metrics, n))
}
