//! One training pass with the evaluation adapters of [`Evaluation`]: the stream is shuffled
//! ([`ShuffleBuffer`]), its labels watched ([`LabelRuns`]), every k-th example held out
//! ([`HoldoutSplit`]), and the rest learned by the pass of the learner's kind ([`PassKind`]:
//! [`BinaryPass`] for a binary or regression learner, [`MulticlassPassKind`] for a multiclass
//! one) — the same adapters, in the same order, for both.

use super::holdout::{HoldoutSplit, Shared};
use super::pass::progressive_pass_in_batches;
use super::{progressive_pass, Evaluation, LabelRuns, Observer, PassOutcome, ShuffleBuffer};
use crate::eval::multiclass::{
    class_of, progressive_multiclass, MulticlassMetrics, MulticlassPass, MulticlassProgress,
};
use crate::eval::{EvalError, Metrics};
use crate::linear::multiclass::MulticlassLearner;
use crate::linear::{AnyLearner, OnlineLearner};
use crate::loss::Loss;
use crate::Example;
use std::cell::RefCell;

/// What a training pass does with a learner of one kind: its progressive pass (reporting to
/// the kind's observer), and how a held-out example is scored.
pub(crate) trait PassKind {
    /// The learner.
    type Learner: ?Sized;
    /// Its metrics.
    type Metrics;
    /// What scoring a held-out example needs besides the learner (the loss of a binary learner).
    type Score: Copy;

    /// Empty metrics (of the hold-out examples).
    fn metrics(&self) -> Self::Metrics;
    /// See [`PassKind::Score`].
    fn score(&self) -> Self::Score;
    /// Predicts `ex` with `learner` (no update) and scores it into `metrics`.
    fn hold_out(score: Self::Score, learner: &Self::Learner, ex: &Example, m: &mut Self::Metrics);
    /// A progressive pass of `learner` over `next`.
    fn pass<E: std::error::Error + 'static>(
        &mut self,
        learner: &mut Self::Learner,
        next: impl FnMut(&mut Example) -> Result<bool, E>,
        metrics: &mut Self::Metrics,
    ) -> Result<PassOutcome, EvalError<E>>;
    /// The same pass over a learner shared with the hold-out split.
    fn shared_pass<E: std::error::Error + 'static>(
        &mut self,
        learner: &RefCell<&mut Self::Learner>,
        next: impl FnMut(&mut Example) -> Result<bool, E>,
        metrics: &mut Self::Metrics,
    ) -> Result<PassOutcome, EvalError<E>>;
}

/// A binary or regression learner's pass ([`progressive_pass`]) reporting to `observer`.
pub(crate) struct BinaryPass<'o> {
    pub loss: Loss,
    pub observer: &'o mut dyn Observer,
}

impl PassKind for BinaryPass<'_> {
    type Learner = AnyLearner;
    type Metrics = Metrics;
    type Score = Loss;

    fn metrics(&self) -> Metrics {
        Metrics::new()
    }
    fn score(&self) -> Loss {
        self.loss
    }
    fn hold_out(loss: Loss, learner: &AnyLearner, ex: &Example, m: &mut Metrics) {
        m.add(learner.predict(ex.row()), ex.label, ex.weight, loss);
    }
    fn pass<E: std::error::Error + 'static>(
        &mut self,
        learner: &mut AnyLearner,
        next: impl FnMut(&mut Example) -> Result<bool, E>,
        metrics: &mut Metrics,
    ) -> Result<PassOutcome, EvalError<E>> {
        progressive_pass(learner, next, self.loss, metrics, self.observer)
    }
    fn shared_pass<E: std::error::Error + 'static>(
        &mut self,
        learner: &RefCell<&mut AnyLearner>,
        next: impl FnMut(&mut Example) -> Result<bool, E>,
        metrics: &mut Metrics,
    ) -> Result<PassOutcome, EvalError<E>> {
        // One example at a time: a held-out example is predicted with the weights of every
        // example before it, as VW's hold-out does (a batch would be learned only after it).
        let shared = &mut Shared(learner);
        progressive_pass_in_batches(shared, next, self.loss, metrics, self.observer, 1)
    }
}

/// A multiclass learner's pass ([`progressive_multiclass`]) of `classes` classes reporting to
/// `progress`.
pub(crate) struct MulticlassPassKind<'o, L: ?Sized> {
    pub classes: usize,
    pub progress: &'o mut dyn MulticlassProgress,
    pub learner: std::marker::PhantomData<fn(&L)>,
}

impl<L: MulticlassLearner + ?Sized> PassKind for MulticlassPassKind<'_, L> {
    type Learner = L;
    type Metrics = MulticlassMetrics;
    type Score = ();

    fn metrics(&self) -> MulticlassMetrics {
        MulticlassMetrics::new(self.classes)
    }
    fn score(&self) {}
    fn hold_out((): (), learner: &L, ex: &Example, m: &mut MulticlassMetrics) {
        // The labels come mapped to class indices (`Labeled`: a label that is no class is an
        // error at its line before it gets here).
        if let Ok(class) = class_of(ex, learner.classes()) {
            m.add(&learner.predict_proba(ex.row()), class, ex.weight);
        }
    }
    fn pass<E: std::error::Error + 'static>(
        &mut self,
        learner: &mut L,
        next: impl FnMut(&mut Example) -> Result<bool, E>,
        metrics: &mut MulticlassMetrics,
    ) -> Result<PassOutcome, EvalError<E>> {
        progressive_multiclass(learner, next, metrics, self.progress).map(outcome)
    }
    fn shared_pass<E: std::error::Error + 'static>(
        &mut self,
        learner: &RefCell<&mut L>,
        next: impl FnMut(&mut Example) -> Result<bool, E>,
        metrics: &mut MulticlassMetrics,
    ) -> Result<PassOutcome, EvalError<E>> {
        progressive_multiclass(&mut Shared(learner), next, metrics, self.progress).map(outcome)
    }
}

/// A multiclass pass's counts as a [`PassOutcome`] (no label magnitude: labels are classes).
fn outcome(p: MulticlassPass) -> PassOutcome {
    PassOutcome {
        examples: p.examples,
        refused_steps: p.refused,
        label_max: 0.0,
    }
}

/// What [`evaluated_pass`] returns besides the progressive metrics.
pub(crate) struct EvaluatedPass<M> {
    pub outcome: PassOutcome,
    /// The held-out examples' metrics (with `--holdout`).
    pub holdout: Option<M>,
}

/// Pass number `pass` (1-based) of `learner` over `next` (see the [module](self)
/// documentation); `runs` watches the labels learned or held out.
pub(crate) fn evaluated_pass<K, E>(
    kind: &mut K,
    learner: &mut K::Learner,
    mut next: impl FnMut(&mut Example) -> Result<bool, E>,
    metrics: &mut K::Metrics,
    evaluation: &Evaluation,
    pass: u32,
    runs: &mut LabelRuns,
) -> Result<EvaluatedPass<K::Metrics>, EvalError<E>>
where
    K: PassKind,
    E: std::error::Error + 'static,
{
    let mut shuffle = (evaluation.shuffle_buffer > 0).then(|| {
        let seed = evaluation.seed ^ u64::from(pass).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        ShuffleBuffer::new(evaluation.shuffle_buffer, seed)
    });
    let mut ordered = |ex: &mut Example| {
        let more = match shuffle.as_mut() {
            Some(s) => s.next(ex, &mut next)?,
            None => next(ex)?,
        };
        if more {
            runs.add(ex.label);
        }
        Ok(more)
    };
    let Some(period) = evaluation.holdout_period() else {
        let outcome = kind.pass(learner, ordered, metrics)?;
        return Ok(EvaluatedPass {
            outcome,
            holdout: None,
        });
    };
    let cell = RefCell::new(learner);
    let mut split = HoldoutSplit {
        learner: &cell,
        period,
        score: kind.score(),
        hold_out: K::hold_out,
        metrics: kind.metrics(),
        seen: 0,
    };
    let outcome = kind.shared_pass(&cell, |ex| split.next(ex, &mut ordered), metrics)?;
    Ok(EvaluatedPass {
        outcome,
        holdout: Some(split.metrics),
    })
}
