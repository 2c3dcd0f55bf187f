//! [`train`]: a whole training run — open the input, settle the learner (new or resumed), run
//! the passes of progressive validation with the library's policies, and return the fitted
//! model with its metrics ([`TrainOutcome`]).

use super::convention::{Convention, Seen};
use super::dimension::profile;
use super::footprint::{cap_size, check_dim, check_fits};
use super::input::examples;
use super::labels::{model_map, new_map};
use super::pass::RecentLines;
use super::{
    divergence_warning, progressive_pass, Input, Observer, ReadOptions, RunError, RunStart, Warning,
};
use crate::data::{ClassSpec, ExampleSource, LabelMap, Labeled};
use crate::eval::{EvalError, Metrics};
use crate::linear::{
    LearnerConfig, LinearModel, MemberWeight, OnlineLearner, RepresentationChoice,
};
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrainOptions {
    /// How to read the input.
    pub read: ReadOptions,
    /// Passes over the input (at least 1; a stream read once is spooled first, see [`Input`]).
    pub passes: u32,
    /// The dimension of a new learner (default: from the input: `2^bits` for VW, one past the
    /// largest index of LIBSVM input, a stream read once being spooled to find it).
    pub dim: Option<usize>,
}

impl Default for TrainOptions {
    fn default() -> Self {
        TrainOptions {
            read: ReadOptions::default(),
            passes: 1,
            dim: None,
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

/// What a training run returns.
#[derive(Clone, Debug)]
pub struct TrainOutcome {
    /// The fitted model (`examples_seen` counts this run's examples too).
    pub model: LinearModel,
    /// Progressive metrics over all passes.
    pub metrics: Metrics,
    /// Examples learned in this run (all passes).
    pub examples: u64,
    /// Passes made.
    pub passes: u32,
    /// Steps refused by the learner (weights left unchanged, the example scored anyway).
    pub refused_steps: u64,
    /// The run diverged (a [`Warning::Diverged`] was given).
    pub diverged: bool,
    /// Wall-clock seconds of the passes (reading and learning).
    pub seconds: f64,
    /// How the representation was settled (`Given` when resuming).
    pub representation: RepresentationChoice,
    /// The warnings given to the observer.
    pub warnings: Vec<Warning>,
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
pub fn train_classified(
    mut input: Input,
    start: Start,
    options: &TrainOptions,
    classes: &ClassSpec,
    observer: &mut dyn Observer,
) -> Result<TrainOutcome, RunError> {
    options.check_passes(&mut input)?;
    let format = input.format(options.read.format);
    options.read.bits(format, None)?;
    let mut notes = Vec::new();
    let (mut model, representation, mut map) = match start {
        Start::Resume(model) => {
            model.config.check()?;
            let map = model_map(
                model.classes.as_ref(),
                model.config.loss,
                classes,
                input.name(),
            )?;
            (model, RepresentationChoice::Given, map)
        }
        Start::New(config) => {
            let valid = config.check()?;
            let bits = options.read.bits(format, None)?;
            let map = new_map(&mut input, &options.read, bits, classes, valid.loss)?;
            let input_profile = profile(&mut input, &options.read, options.dim)?;
            let dim = input_profile.dim;
            let what_sets_dim = match (options.dim, input_profile.hashed) {
                (Some(_), _) => "--dim".to_owned(),
                (None, true) => "2^bits of the hashed input".to_owned(),
                (None, false) => format!("one past the largest feature index of {}", input.name()),
            };
            check_dim(dim, &what_sets_dim)?;
            let (valid, note) = cap_size(valid, dim)?;
            notes.extend(note);
            let (valid, choice) = valid.resolve(&input_profile);
            check_fits(&valid, dim, &what_sets_dim)?;
            let learner = valid.build(dim)?;
            (LinearModel::new(valid.into_inner(), learner), choice, map)
        }
    };
    let bits = options.read.bits(format, Some(model.learner.dim()))?;
    observer
        .started(&RunStart {
            config: &model.config,
            dim: model.learner.dim(),
            representation,
            classes: map.classes().as_ref(),
        })
        .map_err(RunError::Observer)?;
    for w in &notes {
        observer.warning(w);
    }
    let loss = model.config.loss;
    let mut metrics = Metrics::new();
    let start = Instant::now();
    let (mut total, mut refused, mut label_max) = (0, 0, 0.0f64);
    for _pass in 0..options.passes {
        let reader = examples(&mut input, &options.read, bits)?;
        let mut reader = Labeled::new(reader, map, input.name());
        let mut lines = RecentLines::new();
        let seen = Seen::default();
        let mut watched = Convention {
            inner: &mut *observer,
            seen: &seen,
        };
        let pass = progressive_pass(
            &mut model.learner,
            |ex| {
                let more = reader.read_into(ex);
                if let Ok(true) = more {
                    lines.push(reader.line());
                }
                if let LabelMap::Implicit(now) = reader.map() {
                    seen.note(*now);
                }
                more
            },
            loss,
            &mut metrics,
            &mut watched,
        )
        .map_err(|e| match e {
            EvalError::Source(e) => RunError::Parse(e),
            EvalError::Learn { source, example } => RunError::Learn {
                source_name: input.name().to_owned(),
                line: lines.line_of(example).unwrap_or_else(|| reader.line()),
                error: source,
            },
        })?;
        map = reader.into_parts().1;
        total += pass.examples;
        refused += pass.refused_steps;
        label_max = label_max.max(pass.label_max);
    }
    if total == 0 {
        return Err(RunError::options(format!(
            "no examples in {}: the input is empty",
            input.name()
        )));
    }
    let seconds = start.elapsed().as_secs_f64();
    let diverged = divergence_warning(loss, &metrics, label_max);
    if let Some(w) = &diverged {
        observer.warning(w);
    }
    let warnings: Vec<Warning> = notes.into_iter().chain(diverged).collect();
    model.examples_seen += total;
    if let LabelMap::Binary(_) | LabelMap::Implicit(_) = map {
        model.classes = map.classes();
    }
    Ok(TrainOutcome {
        model,
        metrics,
        examples: total,
        passes: options.passes,
        refused_steps: refused,
        diverged: warnings
            .iter()
            .any(|w| matches!(w, Warning::Diverged { .. })),
        seconds,
        representation,
        warnings,
    })
}
