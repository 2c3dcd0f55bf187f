//! What a `LinearLearners` object counts over its lifetime (not saved: a copy, a pickle or a
//! rebuilt delta starts afresh): the progressive metrics, the refused steps and the largest
//! label learned — the inputs of the library's end-of-run warnings, which `sketchlearn train`
//! gives on stderr and the Python estimators as `RuntimeWarning`s.

use sketchlearn::eval::Metrics;
use sketchlearn::loss::Loss;
use sketchlearn::run::divergence_warning;

/// The lifetime counts of one learner object.
pub struct Tally {
    /// Progressive metrics: binary/regression over the raw scores; multiclass over "most
    /// probable class = label".
    pub metrics: Metrics,
    /// Steps refused because they would have made the weights non-finite
    /// (`sketchlearn::run::learn_or_refuse`).
    pub refused: u64,
    /// The largest label magnitude learned (binary/regression).
    pub label_max: f64,
}

impl Default for Tally {
    fn default() -> Self {
        Tally {
            metrics: Metrics::without_auc(),
            refused: 0,
            label_max: 0.0,
        }
    }
}

impl Tally {
    /// The library's divergence warning for everything counted, learned with `loss`
    /// ([`divergence_warning`]: the progressive loss not finite or far above a constant
    /// prediction's — the rule `sketchlearn train` ends its run with), as its text.
    pub fn divergence(&self, loss: Loss) -> Option<String> {
        divergence_warning(loss, &self.metrics, self.label_max).map(|w| w.to_string())
    }
}
