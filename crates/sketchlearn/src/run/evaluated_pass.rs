//! One training pass with the evaluation adapters of [`Evaluation`]: the stream is shuffled
//! ([`ShuffleBuffer`]), its labels watched ([`LabelRuns`]), every k-th example held out
//! ([`HoldoutSplit`]), and the rest learned by [`progressive_pass`].

use super::holdout::{HoldoutSplit, Shared};
use super::{progressive_pass, Evaluation, LabelRuns, Observer, PassOutcome, ShuffleBuffer};
use crate::eval::{EvalError, Metrics};
use crate::linear::OnlineLearner;
use crate::loss::Loss;
use crate::Example;
use std::cell::RefCell;

/// What [`evaluated_pass`] returns besides the progressive metrics.
pub(crate) struct EvaluatedPass {
    pub outcome: PassOutcome,
    /// The held-out examples' metrics (with `--holdout`).
    pub holdout: Option<Metrics>,
}

/// Pass number `pass` (1-based) over `next` (see the [module](self) documentation); `runs`
/// watches the labels learned or held out.
#[allow(clippy::too_many_arguments)]
pub(crate) fn evaluated_pass<L, E>(
    learner: &mut L,
    mut next: impl FnMut(&mut Example) -> Result<bool, E>,
    loss: Loss,
    metrics: &mut Metrics,
    observer: &mut dyn Observer,
    evaluation: &Evaluation,
    pass: u32,
    runs: &mut LabelRuns,
) -> Result<EvaluatedPass, EvalError<E>>
where
    L: OnlineLearner + ?Sized,
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
        let outcome = progressive_pass(learner, ordered, loss, metrics, observer)?;
        return Ok(EvaluatedPass {
            outcome,
            holdout: None,
        });
    };
    let cell = RefCell::new(learner);
    let mut split = HoldoutSplit {
        learner: &cell,
        period,
        loss,
        metrics: Metrics::new(),
        seen: 0,
    };
    let outcome = progressive_pass(
        &mut Shared(&cell),
        |ex| split.next(ex, &mut ordered),
        loss,
        metrics,
        observer,
    )?;
    Ok(EvaluatedPass {
        outcome,
        holdout: Some(split.metrics),
    })
}
