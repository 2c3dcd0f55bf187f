//! One progressive-validation pass with the library's policies: [`progressive_pass`] is
//! [`eval::progressive_with`] over a learner with the refused-step policy, reporting to an
//! [`Observer`]; [`train`](super::train) runs it once per pass, and front ends with their own
//! example source (e.g. `sketchlearn fm`) call it directly.

use super::{Observer, Tolerant};
use crate::eval::{progressive_with, EvalError, Metrics};
use crate::linear::{LearnError, OnlineLearner};
use crate::loss::Loss;
use crate::{Example, Row};
use std::borrow::Cow;
use std::cell::RefCell;

/// What one pass did besides the metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PassOutcome {
    /// Examples read.
    pub examples: u64,
    /// Steps refused by the learner (weights left unchanged, the example scored anyway).
    pub refused_steps: u64,
    /// The largest label magnitude seen (for [`divergence_warning`](super::divergence_warning)).
    pub label_max: f64,
}

/// Forwards each prediction to the observer.
struct Reporting<'a, 'o, L: ?Sized> {
    inner: Tolerant<'a, L>,
    observer: &'a RefCell<&'o mut dyn Observer>,
}

impl<L: OnlineLearner + ?Sized> OnlineLearner for Reporting<'_, '_, L> {
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn predict(&self, x: Row<'_>) -> f64 {
        self.inner.predict(x)
    }
    #[inline]
    fn learn(&mut self, x: Row<'_>, y: f64, weight: f64) -> Result<f64, LearnError> {
        let p = self.inner.learn(x, y, weight)?;
        self.observer.borrow_mut().prediction(p);
        Ok(p)
    }
    fn weights(&self) -> Cow<'_, [f64]> {
        self.inner.weights()
    }
}

/// Progressive validation of `learner` over the examples `next` yields (see
/// [`progressive_with`]) with the refused-step policy ([`learn_or_refuse`](super::learn_or_refuse)):
/// every prediction and due progress row goes to `observer`, `metrics` accumulates (across
/// calls: rows follow its cumulative count).
///
/// ```
/// use sketchlearn::eval::Metrics;
/// use sketchlearn::linear::LearnerConfig;
/// use sketchlearn::loss::Loss;
/// use sketchlearn::run::{progressive_pass, Silent};
/// use sketchlearn::Example;
/// let data: Vec<Example> = (0..50)
///     .map(|i| {
///         let y = if i % 2 == 0 { 1.0 } else { -1.0 };
///         Example { label: y, weight: 1.0, indices: vec![0, 1], values: vec![y, 1.0] }
///     })
///     .collect();
/// let mut learner = LearnerConfig::default().build(2).unwrap();
/// let mut metrics = Metrics::new();
/// let mut rows = data.iter();
/// let next = |ex: &mut Example| {
///     Ok::<_, std::convert::Infallible>(rows.next().map(|e| ex.clone_from(e)).is_some())
/// };
/// let pass = progressive_pass(&mut learner, next, Loss::Logistic, &mut metrics, &mut Silent)?;
/// assert_eq!((pass.examples, pass.refused_steps, pass.label_max), (50, 0, 1.0));
/// assert!(metrics.error_rate().unwrap() < 0.1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn progressive_pass<L, E>(
    learner: &mut L,
    mut next: impl FnMut(&mut Example) -> Result<bool, E>,
    loss: Loss,
    metrics: &mut Metrics,
    observer: &mut dyn Observer,
) -> Result<PassOutcome, EvalError<E>>
where
    L: OnlineLearner + ?Sized,
    E: std::error::Error + 'static,
{
    let observer = RefCell::new(observer);
    let mut label_max = 0.0f64;
    let mut reporting = Reporting {
        inner: Tolerant::new(learner),
        observer: &observer,
    };
    let examples = progressive_with(
        &mut reporting,
        |ex: &mut Example| {
            let more = next(ex);
            if let Ok(true) = more {
                label_max = label_max.max(ex.label.abs());
            }
            more
        },
        loss,
        metrics,
        |row| observer.borrow_mut().progress(row),
    )?;
    Ok(PassOutcome {
        examples,
        refused_steps: reporting.inner.refused,
        label_max,
    })
}
