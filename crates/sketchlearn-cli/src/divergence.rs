//! Flagging a learning pass that diverged, for `train` and `fm`: a constant step meant for rows
//! of one scale (one-hot ratings, unit rows) on much larger rows makes the predictions grow
//! without bound, and a report should say so rather than print the resulting loss as a result.

use sketchlearn::eval::Metrics;
use sketchlearn::loss::Loss;

/// Whether a learning pass diverged: its progressive loss is not finite, or (square loss) its
/// progressive RMSE exceeds ten times `1 + max |y|` of the training labels — worse than ten
/// times a constant prediction — or (classification) its mean loss exceeds ten times that of
/// the constant prediction 0 (`10 ln 2` for the logistic loss). Such a pass is what constant
/// steps meant for rows like one-hot ratings (two ones) or unit rows do on much larger rows,
/// e.g. ratings with side features and no `--normalize`.
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

/// [`diverged`] for a pass's progressive `metrics` (labels at most `label_max` in magnitude);
/// when it did, a warning on stderr ending in `advice` (what to change, e.g. "try --normalize,
/// or a smaller --eta").
pub fn check(loss: Loss, metrics: &Metrics, label_max: f64, advice: &str) -> bool {
    let mean_loss = metrics.mean_loss();
    let rmse = (!loss.is_classification()).then(|| metrics.rmse());
    let diverged = diverged(loss, mean_loss, rmse, label_max);
    if diverged {
        eprintln!(
            "warning: the learning pass diverged (progressive loss {mean_loss:.3e}): the steps \
             are too large for rows of this scale; {advice}"
        );
    }
    diverged
}

#[cfg(test)]
mod tests {
    use super::diverged;
    use sketchlearn::loss::Loss;

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
}
