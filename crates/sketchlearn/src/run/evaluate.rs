//! [`evaluate`]: a held-out evaluation of a model on an input, without updates.

use super::input::examples;
use super::labels::for_model;
use super::settle::stored_map;
use super::{Input, Observer, ReadOptions, RunError, RunStart};
use crate::data::{ClassSpec, ExampleSource, Labeled};
use crate::eval::{evaluate_with, EvalError, Metrics};
use crate::linear::{LinearModel, OnlineLearner, RepresentationChoice};
use crate::Row;
use std::borrow::Cow;
use std::cell::RefCell;
use std::time::Instant;

/// What an evaluation returns.
#[derive(Clone, Debug)]
pub struct EvalOutcome {
    /// The metrics of the predictions.
    pub metrics: Metrics,
    /// Examples evaluated.
    pub examples: u64,
    /// Wall-clock seconds (reading and predicting).
    pub seconds: f64,
}

/// Forwards each prediction to the observer.
struct Reporting<'a, 'o> {
    inner: &'a dyn OnlineLearner,
    observer: RefCell<&'a mut (dyn Observer + 'o)>,
}

impl OnlineLearner for Reporting<'_, '_> {
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn predict(&self, x: Row<'_>) -> f64 {
        let p = self.inner.predict(x);
        self.observer.borrow_mut().prediction(p);
        p
    }
    fn learn(
        &mut self,
        x: Row<'_>,
        _y: f64,
        _weight: f64,
    ) -> Result<f64, crate::linear::LearnError> {
        Ok(self.predict(x))
    }
    fn weights(&self) -> Cow<'_, [f64]> {
        self.inner.weights()
    }
}

/// Evaluates `model` on `input` without updating it ([`evaluate_with`]: features beyond the
/// model's dimension count as zero, as do CSV values unseen in training, with a
/// [`Warning::UnseenCategories`](super::Warning::UnseenCategories)); each prediction and progress row goes to `observer`. VW
/// input is hashed with the model's bits unless `options.bits` says otherwise (and agrees).
/// A classifier's labels are read in the model's classes (`−1/+1` for files of format 4 and 5):
/// a label that is not one of them is an error at its line.
///
/// ```
/// use sketchlearn::linear::LearnerConfig;
/// use sketchlearn::run::{self, Input, ReadOptions, Silent, Start, TrainOptions};
/// let text = "1 1:1 2:0.2\n-1 1:-1 2:0.1\n".repeat(100);
/// let fitted = run::train(
///     Input::bytes("train.libsvm", text.clone().into_bytes()),
///     Start::New(LearnerConfig::default()),
///     &TrainOptions::default(),
///     &mut Silent,
/// )?;
/// let test = run::evaluate(
///     Input::bytes("test.libsvm", text.into_bytes()),
///     &fitted.model,
///     &ReadOptions::default(),
///     &mut Silent,
/// )?;
/// assert_eq!(test.examples, 200);
/// assert_eq!(test.metrics.error_rate(), Some(0.0));
/// # Ok::<(), sketchlearn::run::RunError>(())
/// ```
pub fn evaluate(
    mut input: Input,
    model: &LinearModel,
    options: &ReadOptions,
    observer: &mut dyn Observer,
) -> Result<EvalOutcome, RunError> {
    let outcome = evaluate_in(&mut input, model, options, observer)?;
    if let Some(w) = input.unseen_categories(outcome.examples) {
        observer.warning(&w);
    }
    Ok(outcome)
}

/// [`evaluate`] of an input that stays the caller's (a test input read after every pass).
pub(crate) fn evaluate_in(
    input: &mut Input,
    model: &LinearModel,
    options: &ReadOptions,
    observer: &mut dyn Observer,
) -> Result<EvalOutcome, RunError> {
    let format = input.format(options.format);
    let bits = options.bits(format, Some(model.learner.dim()))?;
    let map = stored_map(model, &ClassSpec::FromInput, input.name())?;
    let classes = map.classes();
    let reader = examples(
        input,
        options,
        bits,
        model.schema(),
        model.extras.interactions,
    )?;
    let mut reader = Labeled::new(reader, map, input.name());
    let notes = input.notes();
    observer
        .started(&RunStart {
            config: &model.config,
            dim: model.learner.dim(),
            representation: RepresentationChoice::Given,
            classes: classes.as_ref(),
            schema: None,
        })
        .map_err(RunError::Observer)?;
    for w in &notes {
        observer.warning(w);
    }
    let mut metrics = Metrics::new();
    let start = Instant::now();
    let reporting = Reporting {
        inner: &model.learner,
        observer: RefCell::new(observer),
    };
    let examples = evaluate_with(
        &reporting,
        |ex| reader.read_into(ex),
        model.config.loss,
        &mut metrics,
        |row| reporting.observer.borrow_mut().progress(row),
    )
    .map_err(|e| match e {
        EvalError::Source(e) => RunError::Parse(for_model(e)),
        EvalError::Learn { source, .. } => RunError::Learn {
            source_name: input.name().to_owned(),
            line: reader.line(),
            error: source,
        },
    })?;
    Ok(EvalOutcome {
        metrics,
        examples,
        seconds: start.elapsed().as_secs_f64(),
    })
}
