//! The two passes of an FM run: [`learn`] — progressive validation over the training part with
//! the library's refused-step and divergence policies ([`progressive_pass`],
//! [`divergence_warning`]) — and [`test`], predictions without updates over the rest; and the
//! untimed [`pairwise_stats`] pass. Reported predictions may be clipped into the rating scale
//! ([`Clipped`]); learning always uses the raw ones.

use super::data::Examples;
use super::{FmObserver, FmRunError};
use crate::eval::{evaluate_each, EvalError, Metrics, ProgressRow};
use crate::fm::{AnyFm, FmModel};
use crate::linear::{LearnError, OnlineLearner};
use crate::run::{divergence_warning, progressive_pass, Observer, Warning};
use crate::{Example, Row};
use std::borrow::Cow;
use std::ops::Range;
use std::time::Instant;

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

/// `p` clamped into `range` (`--clip`), or `p`.
pub(super) fn clip(p: f64, range: Option<(f64, f64)>) -> f64 {
    match range {
        Some((lo, hi)) => p.clamp(lo, hi),
        None => p,
    }
}

/// The learning pass's progress: the curve for the report, each row to the front end.
struct Progress<'a> {
    observer: &'a mut dyn FmObserver,
    curve: Vec<(u64, f64)>,
}

impl Observer for Progress<'_> {
    fn progress(&mut self, row: &ProgressRow) {
        self.curve.push((row.examples, row.average_loss));
        self.observer.progress(row);
    }
}

/// What the learning pass produced.
pub(super) struct Learned {
    pub(super) metrics: Metrics,
    /// `(examples, mean loss so far)` at 1, 2, 4, 8, … and the end.
    pub(super) progress: Vec<(u64, f64)>,
    pub(super) refused: u64,
    pub(super) diverged: bool,
    pub(super) seconds: f64,
    /// Learning examples whose user and whose item the model never saw (their
    /// [`Warning::UnseenWhileLearning`], once the run's learning part succeeded:
    /// [`Learned::unseen_warning`]).
    pub(super) unseen: (u64, u64),
    /// Examples learned.
    pub(super) examples: u64,
}

impl Learned {
    /// The note on the ids a resumed model never saw while learning, if it met any.
    pub(super) fn unseen_warning(&self) -> Option<Warning> {
        (self.unseen != (0, 0)).then_some(Warning::UnseenWhileLearning {
            users: self.unseen.0,
            items: self.unseen.1,
            examples: self.examples,
        })
    }
}

/// One online pass over examples `0..n_train` with the library's policies (refused steps,
/// divergence: a [`Warning::Diverged`](crate::run::Warning::Diverged) to the observer; ids
/// the model never saw are counted in [`Learned::unseen`] — only a resumed model meets them,
/// a new one's id maps are fitted on the learning part). `examples` counts from zero.
pub(super) fn learn(
    model: &mut FmModel,
    examples: &Examples<'_>,
    n_train: usize,
    clip_range: Option<(f64, f64)>,
    observer: &mut dyn FmObserver,
) -> Result<Learned, FmRunError> {
    let loss = model.config.loss;
    let mut metrics = Metrics::new();
    let mut progress = Progress {
        observer,
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
        EvalError::Learn { example, source } => FmRunError::Learn {
            example,
            error: source,
        },
    })?;
    if let Some(e) = source_error {
        return Err(e);
    }
    let warning = divergence_warning(loss, &metrics, pass.label_max);
    if let Some(w) = &warning {
        progress.observer.warning(w);
    }
    let seconds = start.elapsed().as_secs_f64();
    if let Some(r) = metrics.final_row() {
        progress.progress(&r);
    }
    let unseen = examples.unseen();
    model.examples_seen += n_train as u64;
    Ok(Learned {
        metrics,
        progress: progress.curve,
        refused: pass.refused_steps,
        diverged: warning.is_some(),
        seconds,
        unseen,
        examples: n_train as u64,
    })
}

/// Evaluates examples `range` without updates, each prediction to the observer's
/// [`test_prediction`](FmObserver::test_prediction); the metrics and the seconds taken.
pub(super) fn test(
    model: &mut FmModel,
    examples: &Examples<'_>,
    range: Range<usize>,
    clip_range: Option<(f64, f64)>,
    observer: &mut dyn FmObserver,
) -> Result<(Metrics, f64), FmRunError> {
    let mut metrics = Metrics::new();
    let writes = observer.test_started()?;
    let loss = model.config.loss;
    let clipped = Clipped {
        inner: &mut model.learner,
        clip: clip_range,
    };
    let start = Instant::now();
    let mut source_error = None;
    // The written prediction is the scored one (features beyond the learner's dimension
    // dropped, as `evaluate_with` does): each example is predicted once.
    evaluate_each(
        &clipped,
        examples.source(range, &mut source_error),
        loss,
        &mut metrics,
        |_| {},
        |p| {
            if writes {
                observer.test_prediction(p);
            }
        },
    )
    .map_err(|e| match e {
        EvalError::Source(e) => match e {},
        EvalError::Learn { source, .. } => FmRunError::Learner(source),
    })?;
    if let Some(e) = source_error {
        return Err(e);
    }
    Ok((metrics, start.elapsed().as_secs_f64()))
}

/// The RMS of the pairwise part of the predictions of examples `range` and their RMSE without
/// it ([`AnyFm::pairwise`]; an untimed pass).
pub(super) fn pairwise_stats(
    model: &FmModel,
    examples: &Examples<'_>,
    range: Range<usize>,
) -> Result<(f64, f64), FmRunError> {
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
