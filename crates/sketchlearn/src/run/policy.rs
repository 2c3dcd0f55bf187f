//! The two policies every front end applies to a learning pass, kept here once:
//!
//! * **refused steps** ([`learn_or_refuse`], [`Tolerant`]): a step the learner refuses with
//!   [`LearnError::Diverged`] (it would have made the weights non-finite) leaves the weights as
//!   they were; the example is scored with the prediction the unchanged learner makes, and the
//!   refusal is counted. Any other error stops the pass.
//! * **divergence** ([`diverged`], [`divergence_warning`]): a pass whose progressive loss is not
//!   finite or far above that of a constant prediction is flagged (constant steps meant for
//!   rows like one-hot ratings or unit rows make the predictions grow without bound on much
//!   larger rows), so that a report says so rather than print the loss as a result.

use super::Warning;
use crate::eval::Metrics;
use crate::linear::{LearnError, OnlineLearner};
use crate::loss::Loss;
use crate::{Example, Row};
use std::borrow::Cow;

/// Learns `(x, y)` with the refused-step policy: the prediction made before the update, or,
/// when the step is refused ([`LearnError::Diverged`]), the unchanged learner's prediction,
/// counting the refusal in `refused`.
///
/// ```
/// use sketchlearn::linear::{Algorithm, LearnerConfig, OnlineLearner};
/// use sketchlearn::loss::Loss;
/// use sketchlearn::run::learn_or_refuse;
/// use sketchlearn::Row;
/// // Constant-step OGD with the squared loss on huge rows diverges: its steps are refused.
/// let config = LearnerConfig {
///     algorithm: Algorithm::Ogd,
///     loss: Loss::Squared,
///     learning_rate: 1.0,
///     ..LearnerConfig::default()
/// };
/// let mut learner = config.build(2).unwrap();
/// let mut refused = 0;
/// for t in 0..200 {
///     let x = [1e60, if t % 2 == 0 { 1e60 } else { -1e60 }];
///     let p = learn_or_refuse(&mut learner, Row::Dense(&x), 1.0, 1.0, &mut refused).unwrap();
///     assert!(p.is_finite());
/// }
/// assert!(refused > 0);
/// assert!(learner.weights().iter().all(|w| w.is_finite()));
/// ```
#[inline]
pub fn learn_or_refuse<L: OnlineLearner + ?Sized>(
    learner: &mut L,
    x: Row<'_>,
    y: f64,
    weight: f64,
    refused: &mut u64,
) -> Result<f64, LearnError> {
    match learner.learn(x, y, weight) {
        Err(LearnError::Diverged(_)) => {
            *refused += 1;
            Ok(learner.predict(x))
        }
        other => other,
    }
}

/// A learner with the refused-step policy ([`learn_or_refuse`]), for loops that take an
/// [`OnlineLearner`] (e.g. [`eval::progressive`](crate::eval::progressive)).
pub struct Tolerant<'a, L: ?Sized> {
    /// The learner.
    pub inner: &'a mut L,
    /// Steps refused so far.
    pub refused: u64,
}

impl<'a, L: OnlineLearner + ?Sized> Tolerant<'a, L> {
    /// Wraps `inner` with no refusal counted yet.
    pub fn new(inner: &'a mut L) -> Self {
        Tolerant { inner, refused: 0 }
    }
}

impl<L: OnlineLearner + ?Sized> OnlineLearner for Tolerant<'_, L> {
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn predict(&self, x: Row<'_>) -> f64 {
        self.inner.predict(x)
    }
    #[inline]
    fn learn(&mut self, x: Row<'_>, y: f64, weight: f64) -> Result<f64, LearnError> {
        learn_or_refuse(self.inner, x, y, weight, &mut self.refused)
    }
    fn weights(&self) -> Cow<'_, [f64]> {
        self.inner.weights()
    }
    #[inline]
    fn prefetch(&self, x: Row<'_>) {
        self.inner.prefetch(x)
    }
    /// The inner learner's batch, with a refused step handled as [`learn_or_refuse`] does: the
    /// batch resumes after the refused example, scored by the kept state.
    fn learn_batch(&mut self, batch: &[Example], out: &mut Vec<f64>) -> Result<(), LearnError> {
        out.clear();
        let mut part = Vec::new();
        let mut start = 0;
        while start < batch.len() {
            let result = self.inner.learn_batch(&batch[start..], &mut part);
            out.extend_from_slice(&part);
            match result {
                Ok(()) => break,
                Err(LearnError::Diverged(_)) => {
                    let refused = start + part.len();
                    self.refused += 1;
                    out.push(self.inner.predict(batch[refused].row()));
                    start = refused + 1;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// Whether a learning pass diverged: its progressive loss is not finite, or (square loss) its
/// progressive RMSE exceeds ten times `1 + max |y|` of the training labels — worse than ten
/// times a constant prediction — or (classification) its mean loss exceeds ten times that of
/// the constant prediction 0 (`10 ln 2` for the logistic loss).
///
/// ```
/// use sketchlearn::loss::Loss;
/// use sketchlearn::run::diverged;
/// assert!(!diverged(Loss::Logistic, 0.69, None, 1.0));
/// assert!(diverged(Loss::Logistic, 7.0, None, 1.0));
/// assert!(diverged(Loss::Squared, 1e4, Some(61.0), 5.0));
/// ```
pub fn diverged(loss: Loss, mean_loss: f64, rmse: Option<f64>, label_max: f64) -> bool {
    if !mean_loss.is_finite() {
        return true;
    }
    if loss.is_classification() {
        mean_loss > 10.0 * loss.value(0.0, 1.0).max(loss.value(0.0, -1.0))
    } else {
        rmse.is_some_and(|r| !r.is_finite() || r > 10.0 * (1.0 + label_max))
    }
}

/// [`diverged`] for a pass's progressive `metrics` (labels at most `label_max` in magnitude):
/// the warning to give, if it did.
pub fn divergence_warning(loss: Loss, metrics: &Metrics, label_max: f64) -> Option<Warning> {
    if metrics.examples() == 0 || metrics.weighted_examples() == 0.0 {
        // Nothing learned, nothing diverged (e.g. `fm -i M --train-fraction 0`); rows of weight
        // 0 only (a masked batch) leave the mean loss 0/0, which is no divergence either.
        return None;
    }
    let mean_loss = metrics.mean_loss();
    let rmse = (!loss.is_classification()).then(|| metrics.rmse());
    diverged(loss, mean_loss, rmse, label_max).then_some(Warning::Diverged { mean_loss })
}

/// The minimum number of examples before a classifier no better than a constant is reported
/// ([`constant_warning`]): fewer are too few to call it a failure to learn.
pub const CONSTANT_MIN_EXAMPLES: u64 = 100;

/// A classifier whose progressive error over at least [`CONSTANT_MIN_EXAMPLES`] examples is not
/// better than always predicting the more frequent class by one standard error
/// (`√(c(1 − c)/n)` for the constant's error `c` over `n` examples) has not learned (issue 28: a single
/// learner that "stays on one class" — a step far too small for the rows' scale, or a diagonal
/// that keeps shrinking the steps on raw features): the warning to give, if so. Classes must
/// both occur (the constant's error is then above 0).
///
/// ```
/// use sketchlearn::eval::Metrics;
/// use sketchlearn::loss::Loss;
/// use sketchlearn::run::constant_warning;
/// let mut m = Metrics::new();
/// for t in 0..200 {
///     m.add(-1.0, if t % 3 == 0 { 1.0 } else { -1.0 }, 1.0, Loss::Logistic);
/// }
/// assert!(constant_warning(Loss::Logistic, &m).is_some());
/// assert!(constant_warning(Loss::Squared, &m).is_none());
/// for _ in 0..100 {
///     m.add(1.0, 1.0, 1.0, Loss::Logistic); // now clearly better than the constant
/// }
/// assert!(constant_warning(Loss::Logistic, &m).is_none());
/// ```
pub fn constant_warning(loss: Loss, metrics: &Metrics) -> Option<Warning> {
    let (error, constant) = (metrics.error_rate()?, metrics.constant_error_rate()?);
    let examples = metrics.examples();
    let se = (constant * (1.0 - constant) / examples as f64).sqrt();
    (loss.is_classification()
        && examples >= CONSTANT_MIN_EXAMPLES
        && constant > 0.0
        && error > constant - se)
        .then_some(Warning::NoBetterThanConstant { error, constant })
}

#[cfg(test)]
mod tests {
    use super::diverged;
    use crate::loss::Loss;

    #[test]
    fn divergence_rule() {
        assert!(!diverged(Loss::Squared, 0.5, Some(1.0), 5.0));
        assert!(!diverged(Loss::Squared, 1e3, Some(59.0), 5.0));
        assert!(diverged(Loss::Squared, 1e4, Some(61.0), 5.0));
        assert!(diverged(
            Loss::Squared,
            f64::INFINITY,
            Some(f64::INFINITY),
            5.0
        ));
        assert!(!diverged(Loss::Logistic, 0.69, None, 1.0));
        assert!(!diverged(Loss::Logistic, 6.9, None, 1.0));
        assert!(diverged(Loss::Logistic, 7.0, None, 1.0));
        assert!(diverged(Loss::Logistic, f64::NAN, None, 1.0));
        // Hinge: the constant prediction 0 has loss 1.
        assert!(!diverged(Loss::Hinge, 9.0, None, 1.0));
        assert!(diverged(Loss::Hinge, 11.0, None, 1.0));
    }

    #[test]
    fn rows_of_weight_zero_only_do_not_diverge() {
        use super::divergence_warning;
        use crate::eval::Metrics;
        let mut m = Metrics::new();
        for _ in 0..5 {
            m.add(3.0, -1.0, 0.0, Loss::Logistic); // a masked batch: its mean loss is 0/0
        }
        assert!(divergence_warning(Loss::Logistic, &m, 1.0).is_none());
        m.add(1e300, -1.0, 1.0, Loss::Logistic);
        assert!(divergence_warning(Loss::Logistic, &m, 1.0).is_some());
    }
}
