//! One progressive pass of a learner over examples held in memory, as `sketchlearn train` runs
//! it: a refused (diverging) step is counted, not fatal (the library's policy,
//! [`sketchlearn::run::Tolerant`]).

use anyhow::Result;
use sketchlearn::eval::{progressive_with, EvalError, Metrics};
use sketchlearn::linear::{AnyLearner, LearnError, LearnerConfig};
use sketchlearn::run::Tolerant;
use sketchlearn::Example;
use std::convert::Infallible;
use std::time::Instant;

/// An in-memory example source for [`progressive_with`] / `evaluate_with`: copies the next
/// example into the (cleared) slot without allocating once the slot has grown.
pub fn slice_source(data: &[Example]) -> impl FnMut(&mut Example) -> Result<bool, Infallible> + '_ {
    let mut i = 0;
    move |slot| {
        let Some(ex) = data.get(i) else {
            return Ok(false);
        };
        i += 1;
        slot.label = ex.label;
        slot.weight = ex.weight;
        slot.indices.extend_from_slice(&ex.indices);
        slot.values.extend_from_slice(&ex.values);
        Ok(true)
    }
}

/// What one progressive pass of `learner` over `data` came to.
pub struct Progressive {
    pub metrics: Metrics,
    pub refused: u64,
    /// `Some((example, why))` when a learner error other than a refused step stopped the pass.
    pub failure: Option<(u64, LearnError)>,
}

/// One progressive pass of `learner` over `data` with `cfg`'s loss (metrics without AUC).
pub fn progressive(learner: &mut AnyLearner, cfg: &LearnerConfig, data: &[Example]) -> Progressive {
    let mut metrics = Metrics::without_auc();
    let mut counting = Tolerant::new(learner);
    let result = progressive_with(
        &mut counting,
        slice_source(data),
        cfg.loss,
        &mut metrics,
        |_| {},
    );
    let refused = counting.refused;
    let failure = match result {
        Ok(_) => None,
        Err(EvalError::Learn { example, source }) => Some((example, source)),
        Err(EvalError::Source(never)) => match never {},
    };
    Progressive {
        metrics,
        refused,
        failure,
    }
}

/// The result of one progressive pass.
pub struct Pass {
    pub learner: AnyLearner,
    /// Progressive 0/1 error.
    pub error: f64,
    /// Number of refused (diverging) updates.
    pub refused: u64,
    pub seconds: f64,
}

/// One progressive pass of the learner `cfg` over `data`. Refused (diverging) updates are
/// counted and the pass goes on; any other learner error is returned.
pub fn learn_pass(cfg: &LearnerConfig, dim: usize, data: &[Example]) -> Result<Pass> {
    let start = Instant::now();
    let mut learner = cfg.check()?.build_unscaled(dim)?;
    let p = progressive(&mut learner, cfg, data);
    if let Some((example, source)) = p.failure {
        anyhow::bail!("{}: example {example}: {source}", cfg.describe())
    }
    Ok(Pass {
        learner,
        error: p.metrics.error_rate().unwrap_or(f64::NAN),
        refused: p.refused,
        seconds: start.elapsed().as_secs_f64(),
    })
}
