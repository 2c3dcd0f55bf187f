//! [`train`]: a whole training run — open the input, settle the learner (new or resumed), run
//! the passes of progressive validation with the library's policies, and return the fitted
//! model with its metrics ([`TrainOutcome`]).

use super::cancelled::Cancellation;
use super::convention::{Convention, Seen};
use super::evaluate::evaluate_in;
use super::evaluated_pass::{evaluated_pass, BinaryPass};
use super::holdout::EarlyStop;
use super::input::examples;
use super::pass::RecentLines;
use super::settle::{settle, settle_guessed, Settled};
use super::speculation::{Deferred, Speculation};
use super::{
    constant_warning, divergence_warning, Evaluation, Input, LabelRuns, Observer, PassReport,
    ReadOptions, RunError, RunStart, Silent, Warning,
};
use crate::cancel::Cancel;
use crate::data::{ClassSpec, ExampleSource, Format, LabelMap, Labeled};
use crate::eval::{EvalError, Metrics};
use crate::linear::{
    AnyLearner, LearnerConfig, LinearModel, MemberWeight, OnlineLearner, Regularization,
    RepresentationChoice,
};
use crate::loss::Loss;
use std::time::Instant;

/// Where the learner of a run comes from.
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)] // one per run
pub enum Start {
    /// A new learner with this configuration (checked; `Representation::Auto` resolved for the
    /// input).
    New(LearnerConfig),
    /// Resume a model (its configuration and state, e.g. [`LinearModel::load`]).
    Resume(LinearModel),
}

/// The options of a training run.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainOptions {
    /// How to read the input.
    pub read: ReadOptions,
    /// Passes over the input (at least 1; a stream read once is spooled first, see [`Input`]).
    pub passes: u32,
    /// The dimension of a new learner (default: from the input: `2^bits` for VW, one past the
    /// largest index of LIBSVM input (a stream read once being spooled to find it), the columns
    /// of a CSV file).
    pub dim: Option<usize>,
    /// L1/L2 penalty of a new learner (OGD and AdaGrad; none by default).
    pub regularization: Regularization,
    /// Hold-out examples, early stop, shuffle buffer (all off by default).
    pub evaluation: Evaluation,
    /// The retirement threshold `ε` of a mixture's members, new or resumed
    /// ([`AnyLearner::set_retirement`](crate::linear::AnyLearner::set_retirement); 0: off);
    /// `None`: a new mixture's default, a resumed one's own.
    pub retirement: Option<f64>,
}

impl Default for TrainOptions {
    fn default() -> Self {
        TrainOptions {
            read: ReadOptions::default(),
            passes: 1,
            dim: None,
            regularization: Regularization::default(),
            evaluation: Evaluation::default(),
            retirement: None,
        }
    }
}

impl TrainOptions {
    /// At least one pass; more than one needs an input that can be re-read.
    /// Checks the number of passes; a run of several passes over a stream read once spools it
    /// first ([`Input::spool`]: an unlinked temporary file, within the input's spool limit).
    pub(crate) fn check_passes(&self, input: &mut Input) -> Result<(), RunError> {
        if self.passes == 0 {
            return Err(RunError::options("--passes must be at least 1"));
        }
        if self.passes > 1 {
            input.spool()?;
        }
        Ok(())
    }
}

/// What a training run returns. Built only by the run (`#[non_exhaustive]`: a new field is not
/// a breaking change for code that reads it).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct TrainOutcome {
    /// The fitted model (`examples_seen` counts this run's examples too).
    pub model: LinearModel,
    /// Progressive metrics over all passes.
    pub metrics: Metrics,
    /// Examples learned in this run (all passes).
    pub examples: u64,
    /// Passes made.
    pub passes: u32,
    /// Steps refused by the learner (weights left unchanged, the example scored anyway); a
    /// mixture's are its members' ([`AnyLearner::member_refused_steps`]).
    pub refused_steps: u64,
    /// The run diverged (a [`Warning::Diverged`] was given).
    pub diverged: bool,
    /// The largest label magnitude learned (all passes): with [`metrics`](Self::metrics), the
    /// input of [`divergence_warning`] (a front end that adds this run's metrics to others'
    /// judges them together).
    pub label_max: f64,
    /// Wall-clock seconds of the passes (reading and learning).
    pub seconds: f64,
    /// How the representation was settled (`Given` when resuming).
    pub representation: RepresentationChoice,
    /// The warnings given to the observer.
    pub warnings: Vec<Warning>,
    /// The hold-out metrics of the returned model's pass (`--holdout`).
    pub holdout: Option<Metrics>,
    /// The test input's metrics with the returned model ([`train_and_test`]).
    pub test: Option<Metrics>,
    /// The pass whose model is returned (the last, or the best one with the early stop).
    pub best_pass: u32,
    /// The early stop ended the run before its last pass.
    pub stopped_early: bool,
    /// The caller's [`Cancel`] hook stopped the run ([`train_cancellable`]): the model has
    /// learned the examples before the stop, whole.
    pub cancelled: bool,
}

impl TrainOutcome {
    /// Examples per second of the passes.
    pub fn examples_per_second(&self) -> f64 {
        if self.seconds > 0.0 {
            self.examples as f64 / self.seconds
        } else {
            0.0
        }
    }

    /// For a mixture (`auto`, `adagrad-grid`): each member and its weight now.
    pub fn mixture_weights(&self) -> Option<Vec<MemberWeight>> {
        self.model.mixture_weights()
    }
}

/// Trains a linear learner on `input` with the classes found in it
/// ([`train_classified`] with [`ClassSpec::FromInput`]).
pub fn train(
    input: Input,
    start: Start,
    options: &TrainOptions,
    observer: &mut dyn Observer,
) -> Result<TrainOutcome, RunError> {
    train_classified(input, start, options, &ClassSpec::FromInput, observer)
}

/// [`train`] that stops when `cancel` is requested (polled at every example read; see
/// [`cancel`](crate::cancel)): the pass ends as if the input ended there, so the returned model
/// has learned the examples read before the request, whole, and [`TrainOutcome::cancelled`] is
/// set (no further pass; an input cancelled before its first example is not an error). Never
/// requested, the run is [`train`]'s, bit for bit.
///
/// ```
/// use sketchlearn::cancel::Cancel;
/// use sketchlearn::linear::LearnerConfig;
/// use sketchlearn::run::{self, Input, Silent, Start, TrainOptions};
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// let text = "1 1:1 2:0.2\n-1 1:-1 2:0.1\n".repeat(1000);
/// let polls = AtomicUsize::new(0);
/// let after_300 = || polls.fetch_add(1, Ordering::Relaxed) >= 300;
/// let input = || Input::bytes("toy.libsvm", text.clone().into_bytes());
/// let options = TrainOptions { passes: 3, ..TrainOptions::default() };
/// let start = || Start::New(LearnerConfig::default());
/// let stopped = run::train_cancellable(input(), start(), &options, &mut Silent, Cancel::new(&after_300))?;
/// assert!(stopped.cancelled && stopped.passes == 1 && stopped.examples == 300);
/// let whole = run::train_cancellable(input(), start(), &options, &mut Silent, Cancel::never())?;
/// assert!(!whole.cancelled && whole.examples == 6000);
/// # Ok::<(), sketchlearn::run::RunError>(())
/// ```
pub fn train_cancellable(
    input: Input,
    start: Start,
    options: &TrainOptions,
    observer: &mut dyn Observer,
    cancel: Cancel<'_>,
) -> Result<TrainOutcome, RunError> {
    let classes = &ClassSpec::FromInput;
    train_run(input, None, start, options, classes, observer, cancel)
}

/// Trains with the classes given by `classes` ([`train_and_test`] without a test input).
pub fn train_classified(
    input: Input,
    start: Start,
    options: &TrainOptions,
    classes: &ClassSpec,
    observer: &mut dyn Observer,
) -> Result<TrainOutcome, RunError> {
    train_and_test(input, None, start, options, classes, observer)
}

/// Trains a linear learner on `input`: progressive validation (each example predicted, then
/// learned) for `options.passes` passes, with the refused-step and divergence policies
/// ([`learn_or_refuse`](super::learn_or_refuse), [`divergence_warning`]), reporting to
/// `observer`.
///
/// A new learner's configuration is checked first ([`LearnerConfig::check`]); its dimension
/// comes from the options or the input, and its `Representation::Auto` is resolved for the
/// input (hashed, or sparse rows → the sparse-time learner), which the returned model records.
///
/// Labels (issue 24): a classifier's labels may be in any two-class convention (`−1/+1`,
/// `0/1`, `2/4`, …); the classes come from `classes` ([`LabelMap::settle`]: a scan of the
/// input when it can be re-read, a declared list, or `−1/+1`/`0/1` on a stream read once), the
/// later-sorted one positive, and are stored in the model; a resumed model keeps its own. A
/// third label is an error at its line, before anything is learned when the input was scanned.
/// Regression keeps its labels.
///
/// ```
/// use sketchlearn::linear::{LearnerConfig, OnlineLearner};
/// use sketchlearn::run::{self, Input, Silent, Start, TrainOptions};
///
/// let text = "1 1:0.5 3:1\n-1 2:1\n1 1:0.7 3:0.8\n-1 2:0.9 3:0.1\n".repeat(50);
/// let outcome = run::train(
///     Input::bytes("toy.libsvm", text.into_bytes()),
///     Start::New(LearnerConfig::default()),
///     &TrainOptions { passes: 2, ..TrainOptions::default() },
///     &mut Silent,
/// )?;
/// assert_eq!((outcome.examples, outcome.model.learner.dim()), (400, 3));
/// assert!(outcome.metrics.error_rate().unwrap() < 0.1);
/// assert!(!outcome.diverged);
/// # Ok::<(), sketchlearn::run::RunError>(())
/// ```
///
/// With a `test` input, after every pass an evaluation of the model on it (reported to the
/// observer's [`pass_done`](Observer::pass_done); the early stop watches its loss when given).
///
/// ```
/// use sketchlearn::data::ClassSpec;
/// use sketchlearn::linear::LearnerConfig;
/// use sketchlearn::run::{self, Evaluation, Input, Silent, Start, TrainOptions};
/// let text = "1 1:1 2:0.2\n-1 1:-1 2:0.1\n".repeat(100);
/// let options = TrainOptions {
///     passes: 5,
///     evaluation: Evaluation { holdout: Some(0.1), early_stop: Some(1), ..Evaluation::default() },
///     ..TrainOptions::default()
/// };
/// let fitted = run::train_and_test(
///     Input::bytes("train.libsvm", text.clone().into_bytes()),
///     Some(Input::bytes("test.libsvm", text.into_bytes())),
///     Start::New(LearnerConfig::default()),
///     &options,
///     &ClassSpec::FromInput,
///     &mut Silent,
/// )?;
/// assert_eq!(fitted.test.unwrap().error_rate(), Some(0.0));
/// assert_eq!(fitted.holdout.unwrap().examples(), 20); // every 10th of 200
/// assert!(fitted.stopped_early || fitted.passes == 5);
/// # Ok::<(), sketchlearn::run::RunError>(())
/// ```
pub fn train_and_test(
    input: Input,
    test: Option<Input>,
    start: Start,
    options: &TrainOptions,
    classes: &ClassSpec,
    observer: &mut dyn Observer,
) -> Result<TrainOutcome, RunError> {
    train_run(
        input,
        test,
        start,
        options,
        classes,
        observer,
        Cancel::never(),
    )
}

/// [`train_and_test`] stopped by `cancel` ([`train_cancellable`]). A new learner on a plain
/// dense LIBSVM file starts learning from a guess of its dimension and classes, kept when the
/// first pass shows it right, else the run starts again with the walk ([`super::speculation`]):
/// the same learner, outputs and errors either way.
fn train_run(
    mut input: Input,
    mut test: Option<Input>,
    start: Start,
    options: &TrainOptions,
    classes: &ClassSpec,
    observer: &mut dyn Observer,
    cancel: Cancel<'_>,
) -> Result<TrainOutcome, RunError> {
    check_options(&mut input, test.as_mut(), options)?;
    let format = input.format(options.read.format);
    options.read.bits(format, None)?;
    let guessed = match (&start, cancel.is_never()) {
        (Start::New(config), true) => settle_guessed(&mut input, config, options, classes),
        _ => None,
    };
    if let Some((settled, speculation)) = guessed {
        // The walk reports the observer's refusal before learning: so does the guess.
        observer.ready().map_err(RunError::Observer)?;
        let mut deferred = Deferred::holding(observer);
        let run = learn(
            &mut input,
            &mut test,
            settled,
            Some(speculation),
            options,
            &mut deferred,
            cancel,
        );
        if run.is_ok() || deferred.released() {
            return run;
        }
    }
    let settled = settle(&mut input, start, options, classes)?;
    let mut observer = Deferred::passing(observer);
    learn(
        &mut input,
        &mut test,
        settled,
        None,
        options,
        &mut observer,
        cancel,
    )
}

/// The passes of [`train_run`] for the learner `settled`; with a `speculation`, the first
/// pass's examples are checked against its guess, and `observer` releases its held events when
/// the guess holds (else the run ends with an error, and nothing reached the observer).
fn learn(
    input: &mut Input,
    test: &mut Option<Input>,
    settled: Settled,
    mut speculation: Option<Speculation>,
    options: &TrainOptions,
    observer: &mut Deferred<'_>,
    cancel: Cancel<'_>,
) -> Result<TrainOutcome, RunError> {
    let format = input.format(options.read.format);
    let Settled {
        mut model,
        representation,
        mut notes,
        mut map,
    } = settled;
    notes.extend(input.notes());
    let start_classes = map.classes();
    let bits = options.read.bits(format, Some(model.learner.dim()))?;
    observer
        .started(&RunStart {
            config: &model.config,
            dim: model.learner.dim(),
            representation,
            classes: start_classes.as_ref(),
            schema: (format == Format::Csv).then_some(model.schema()).flatten(),
        })
        .map_err(RunError::Observer)?;
    notes.iter().for_each(|w| observer.warning(w));
    let loss = model.config.loss;
    let mut metrics = Metrics::new();
    let start = Instant::now();
    let (mut total, mut refused, mut label_max) = (0, 0, 0.0f64);
    let mut warnings = notes;
    let mut runs = LabelRuns::default();
    let mut stop = options.evaluation.early_stop.map(EarlyStop::new);
    let (mut passes, mut last) = (0, (None, None));
    // The learned examples are those read, in order, unless shuffled or held out.
    let in_order = options.evaluation.holdout.is_none() && options.evaluation.shuffle_buffer == 0;
    let cancellation = Cancellation::new(cancel);
    for pass in 1..=options.passes {
        let reader = examples(
            input,
            &options.read,
            bits,
            model.schema(),
            model.extras.interactions,
        )?;
        for w in input.notes() {
            observer.warning(&w);
            warnings.push(w);
        }
        let mut reader = Labeled::new(reader, map, input.name());
        let mut lines = RecentLines::new();
        let seen = Seen::default();
        let mut watched = Convention::new(&mut *observer, &seen);
        let mut kind = BinaryPass {
            loss,
            observer: &mut watched,
        };
        let absorbed = model.learner.member_refused_steps();
        let done = evaluated_pass(
            &mut kind,
            &mut model.learner,
            |ex| {
                let more = cancellation.read(|| reader.read_into(ex));
                let guess = speculation.as_mut().filter(|_| pass == 1);
                let more = Speculation::watch_in(guess, more, ex, reader.line());
                if let Ok(true) = more {
                    lines.push(reader.line());
                }
                if let LabelMap::Implicit(now) = reader.map() {
                    seen.note(*now);
                }
                more
            },
            &mut metrics,
            &options.evaluation,
            pass,
            &mut runs,
        )
        .map_err(|e| match e {
            EvalError::Source(e) => RunError::Parse(e),
            EvalError::Learn { source, example } => RunError::Learn {
                source_name: input.name().to_owned(),
                line: lines
                    .line_of(example)
                    .filter(|_| in_order)
                    .unwrap_or_else(|| reader.line()),
                error: source,
            },
        })?;
        drop(watched); // hands on the predictions held back for the convention
        map = reader.into_parts().1;
        observer.keep_guess(speculation.take())?;
        record_classes(&mut model, &map);
        passes = pass;
        total += done.outcome.examples;
        model.examples_seen += done.outcome.examples;
        refused += done.outcome.refused_steps + absorbed_since(&model.learner, absorbed);
        label_max = label_max.max(done.outcome.label_max);
        if pass == 1 {
            runs_warning(&runs, observer, &mut warnings);
            unseen_warning(input, done.outcome.examples, observer, &mut warnings);
        }
        if cancellation.stopped() {
            break;
        }
        let (read, warned) = (&options.read, &mut warnings);
        let tested = test_pass(test.as_mut(), &model, read, observer, warned)?;
        observer.pass_done(&PassReport {
            pass,
            progressive: &metrics,
            holdout: done.holdout.as_ref(),
            test: tested.as_ref(),
        });
        let held = tested
            .as_ref()
            .or(done.holdout.as_ref())
            .map(Metrics::mean_loss);
        last = (done.holdout, tested);
        if EarlyStop::watch(stop.as_mut(), pass, held, || (model.clone(), last.clone())) {
            break;
        }
    }
    cancellation.check_not_empty(total, input)?;
    let cancelled = cancellation.stopped();
    let seconds = start.elapsed().as_secs_f64();
    let stopped_early = passes < options.passes && !cancelled;
    let (best_pass, (model, last)) = EarlyStop::best_or(stop, passes, (model, last));
    let diverged = end_warnings(loss, &metrics, label_max, observer, &mut warnings);
    Ok(TrainOutcome {
        model,
        metrics,
        examples: total,
        passes,
        refused_steps: refused,
        diverged,
        label_max,
        seconds,
        representation,
        warnings,
        holdout: last.0,
        test: last.1,
        best_pass,
        stopped_early,
        cancelled,
    })
}

/// The first pass's warning that the labels come in runs (a file sorted by label), given to
/// `observer` and kept in `warnings`.
fn runs_warning(runs: &LabelRuns, observer: &mut dyn Observer, warnings: &mut Vec<Warning>) {
    if let Some((changes, expected)) = runs.in_runs() {
        let w = Warning::LabelsInRuns { changes, expected };
        observer.warning(&w);
        warnings.push(w);
    }
}

/// The warning about CSV values unseen in training ([`Warning::UnseenCategories`]) that `input`
/// met in `examples` rows (a resumed model's learning input, a test input), once per input,
/// given to `observer` and kept in `warnings`.
fn unseen_warning(
    input: &mut Input,
    examples: u64,
    observer: &mut dyn Observer,
    warnings: &mut Vec<Warning>,
) {
    if let Some(w) = input.unseen_categories(examples) {
        observer.warning(&w);
        warnings.push(w);
    }
}

/// The metrics of `model` on the `test` input after a pass (its unseen-values warning given to
/// `observer`, [`unseen_warning`]).
fn test_pass(
    test: Option<&mut Input>,
    model: &LinearModel,
    read: &ReadOptions,
    observer: &mut dyn Observer,
    warnings: &mut Vec<Warning>,
) -> Result<Option<Metrics>, RunError> {
    let Some(test) = test else {
        return Ok(None);
    };
    let tested = evaluate_in(test, model, read, &mut Silent)?;
    unseen_warning(test, tested.examples, observer, warnings);
    Ok(Some(tested.metrics))
}

/// The warnings at the end of a run, given to `observer` and kept in `warnings`: divergence
/// ([`divergence_warning`]), else a constant prediction ([`constant_warning`]). True when the
/// run diverged.
fn end_warnings(
    loss: Loss,
    metrics: &Metrics,
    label_max: f64,
    observer: &mut dyn Observer,
    warnings: &mut Vec<Warning>,
) -> bool {
    let diverged = divergence_warning(loss, metrics, label_max);
    let constant = constant_warning(loss, metrics).filter(|_| diverged.is_none());
    let is_diverged = diverged.is_some();
    for w in diverged.into_iter().chain(constant) {
        observer.warning(&w);
        warnings.push(w);
    }
    is_diverged
}

/// A run that read no example is an error ("no examples").
pub(crate) fn not_empty(examples: u64, input: &Input) -> Result<(), RunError> {
    if examples == 0 {
        return Err(RunError::options(super::error::no_examples(input.name())));
    }
    Ok(())
}

/// The checks of a run's options; an input or test input read once is spooled when the run
/// reads it several times ([`TrainOptions::check_passes`]).
pub(crate) fn check_options(
    input: &mut Input,
    test: Option<&mut Input>,
    options: &TrainOptions,
) -> Result<(), RunError> {
    options.check_passes(input)?;
    let tested = test.is_some();
    if let Some(test) = test {
        options.check_passes(test)?;
    }
    options.evaluation.check(options.passes, tested)
}

/// Stores a binary run's classes in the model (those of its label map: numbers, or a CSV
/// column's names), so a test input after a pass and the saved model read labels in them;
/// regression keeps none.
fn record_classes(model: &mut LinearModel, map: &LabelMap) {
    if let LabelMap::Binary(_) | LabelMap::Implicit(_) = map {
        model.classes = map.classes();
    }
}

/// The member steps `learner`'s mixtures refused since they had refused `before`
/// ([`AnyLearner::member_refused_steps`]): a mixture absorbs them (the member keeps its state,
/// the mixture goes on), so the pass's policy never sees them; the run counts them with its own.
fn absorbed_since(learner: &AnyLearner, before: u64) -> u64 {
    learner.member_refused_steps().saturating_sub(before)
}
