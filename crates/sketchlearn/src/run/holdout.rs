//! Evaluation people trust, as stream adapters of a training pass: [`Evaluation`] (the
//! settings), the hold-out split ([`HoldoutSplit`]: every k-th example is predicted with the
//! current weights, scored apart and not learned, as VW's `--holdout_period`), and the early
//! stop on the held-out loss ([`EarlyStop`]). The shuffle buffer is [`super::shuffle`], the
//! sorted-labels check [`super::label_runs`].

use super::RunError;
use crate::linear::multiclass::MulticlassLearner;
use crate::linear::{LearnError, OnlineLearner};
use crate::{Example, Row};
use std::borrow::Cow;
use std::cell::RefCell;

/// How a training run evaluates besides progressive validation (all off by default).
///
/// ```
/// use sketchlearn::run::Evaluation;
/// let e = Evaluation { holdout: Some(0.1), ..Evaluation::default() };
/// assert_eq!(e.holdout_period(), Some(10)); // every 10th example is held out
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Evaluation {
    /// Hold out this fraction of the examples (in `(0, 0.5]`): every `k`-th one, `k =
    /// round(1/fraction)`, is predicted (not learned) and scored into the hold-out metrics of
    /// its pass — the same examples in every pass.
    pub holdout: Option<f64>,
    /// Stop when the held-out loss (of the test input if there is one, else of the hold-out
    /// examples) has not improved for this many passes, and return the model of the best pass.
    pub early_stop: Option<u32>,
    /// Shuffle the stream through a buffer of this many examples (0: read in file order).
    pub shuffle_buffer: usize,
    /// The seed of the shuffle (each pass shuffles differently, deterministically).
    pub seed: u64,
}

impl Evaluation {
    /// `k` of "every k-th example is held out".
    pub fn holdout_period(&self) -> Option<u64> {
        self.holdout.map(|f| (1.0 / f).round().max(2.0) as u64)
    }

    /// Checks the settings for a run of `passes` passes (`test`: a test input is given).
    pub(crate) fn check(&self, passes: u32, test: bool) -> Result<(), RunError> {
        if let Some(f) = self.holdout {
            if !(f > 0.0 && f <= 0.5) {
                return Err(RunError::options(format!(
                    "--holdout is the fraction of examples held out, in (0, 0.5]; got {f}"
                )));
            }
        }
        if let Some(p) = self.early_stop {
            if p == 0 {
                return Err(RunError::options(
                    "--early-stop takes a patience of at least 1 pass",
                ));
            }
            if self.holdout.is_none() && !test {
                return Err(RunError::options(
                    "--early-stop watches a held-out loss: give --holdout FRACTION or --test FILE",
                ));
            }
            if passes < 2 {
                return Err(RunError::options(
                    "--early-stop chooses among passes: give --passes N with N >= 2",
                ));
            }
        }
        Ok(())
    }
}

/// A learner shared between the pass (which learns) and the hold-out split (which predicts the
/// held-out examples in between): the two never borrow it at the same time. A binary learner
/// or a multiclass one.
pub(crate) struct Shared<'c, 'l, L: ?Sized>(pub &'c RefCell<&'l mut L>);

impl<L: OnlineLearner + ?Sized> OnlineLearner for Shared<'_, '_, L> {
    fn dim(&self) -> usize {
        self.0.borrow().dim()
    }
    fn predict(&self, x: Row<'_>) -> f64 {
        self.0.borrow().predict(x)
    }
    #[inline]
    fn learn(&mut self, x: Row<'_>, y: f64, weight: f64) -> Result<f64, LearnError> {
        self.0.borrow_mut().learn(x, y, weight)
    }
    fn weights(&self) -> Cow<'_, [f64]> {
        Cow::Owned(self.0.borrow().weights().into_owned())
    }
    #[inline]
    fn prefetch(&self, x: Row<'_>) {
        self.0.borrow().prefetch(x)
    }
}

impl<L: MulticlassLearner + ?Sized> MulticlassLearner for Shared<'_, '_, L> {
    fn classes(&self) -> usize {
        self.0.borrow().classes()
    }
    fn dim(&self) -> usize {
        MulticlassLearner::dim(&**self.0.borrow())
    }
    fn scores(&self, x: Row<'_>) -> Vec<f64> {
        self.0.borrow().scores(x)
    }
    fn predict_proba(&self, x: Row<'_>) -> Vec<f64> {
        self.0.borrow().predict_proba(x)
    }
    fn predict_class(&self, x: Row<'_>) -> usize {
        self.0.borrow().predict_class(x)
    }
    fn learn(&mut self, x: Row<'_>, class: usize, weight: f64) -> Result<Vec<f64>, LearnError> {
        MulticlassLearner::learn(&mut **self.0.borrow_mut(), x, class, weight)
    }
    fn refused(&self) -> u64 {
        self.0.borrow().refused()
    }
    fn examples_seen(&self) -> u64 {
        self.0.borrow().examples_seen()
    }
}

/// Splits a stream: every `period`-th example is predicted with `learner` (no update) and
/// scored into `metrics` by `hold_out` (the learner kind's scoring, with `score`: the loss of a
/// binary learner); the others are passed on to be learned.
pub(crate) struct HoldoutSplit<'c, 'l, L: ?Sized, S, M> {
    pub learner: &'c RefCell<&'l mut L>,
    pub period: u64,
    pub score: S,
    pub hold_out: fn(S, &L, &Example, &mut M),
    pub metrics: M,
    pub seen: u64,
}

impl<L: ?Sized, S: Copy, M> HoldoutSplit<'_, '_, L, S, M> {
    /// The next example to learn, scoring the held-out ones met on the way.
    pub fn next<E>(
        &mut self,
        ex: &mut Example,
        inner: &mut impl FnMut(&mut Example) -> Result<bool, E>,
    ) -> Result<bool, E> {
        loop {
            if !inner(ex)? {
                return Ok(false);
            }
            self.seen += 1;
            if self.seen % self.period != 0 {
                return Ok(true);
            }
            (self.hold_out)(self.score, &self.learner.borrow(), ex, &mut self.metrics);
        }
    }
}

/// The early stop: the best held-out loss so far, the pass and model that gave it.
pub(crate) struct EarlyStop<M> {
    patience: u32,
    best: Option<(f64, u32, M)>,
}

impl<M> EarlyStop<M> {
    pub fn new(patience: u32) -> Self {
        EarlyStop {
            patience,
            best: None,
        }
    }

    /// Records pass `pass`'s held-out loss (its model made by `snapshot` only when it is the
    /// best so far); true when the run should stop.
    pub fn after_pass(&mut self, pass: u32, loss: f64, snapshot: impl FnOnce() -> M) -> bool {
        let better = match &self.best {
            Some((best, _, _)) => loss < *best,
            None => loss.is_finite(),
        };
        if better {
            self.best = Some((loss, pass, snapshot()));
        }
        let best_pass = self.best.as_ref().map_or(0, |b| b.1);
        pass >= best_pass + self.patience
    }

    /// The best pass and its model.
    pub fn into_best(self) -> Option<(u32, M)> {
        self.best.map(|(_, pass, m)| (pass, m))
    }

    /// [`EarlyStop::after_pass`] when the run has an early stop and pass `pass` a held-out
    /// loss; false (go on) otherwise.
    pub fn watch(
        stop: Option<&mut Self>,
        pass: u32,
        held: Option<f64>,
        snapshot: impl FnOnce() -> M,
    ) -> bool {
        match (stop, held) {
            (Some(stop), Some(held)) => stop.after_pass(pass, held, snapshot),
            _ => false,
        }
    }

    /// The pass and model a run returns: the best one kept by the early stop, else `last`
    /// (of pass `passes`).
    pub fn best_or(stop: Option<Self>, passes: u32, last: M) -> (u32, M) {
        stop.and_then(EarlyStop::into_best)
            .unwrap_or((passes, last))
    }
}
