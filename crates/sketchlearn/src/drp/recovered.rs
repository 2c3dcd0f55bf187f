//! The recovered solution of dual random projection as a linear model file: fixed weights
//! ([`FixedLinear`]) that `sketchlearn test`, `predict` and the Python package score like any
//! trained model. `sketchlearn drp -f` and the Python `DRPClassifier` write it through this one
//! function, so their files agree byte for byte on the same data and seed.

use super::{DrpError, DrpFit, DrpParams};
use crate::linear::{Algorithm, AnyLearner, FixedLinear, LearnerConfig, LinearModel};

/// The final iterate of `fit` ([`DrpFit::final_iterate`]: the last one, or the one before a
/// divergence) as a model of fixed weights without intercept (problem (1) has none), described
/// as `drp logistic lambda=1 m=500 T=3 seed=0 (Alg.2 iterate t=3)`; `examples` is the number
/// of training examples.
///
/// ```
/// use sketchlearn::drp::{low_rank, recovered_model, DrpLoss, DrpParams, LowRankSpec};
/// use sketchlearn::linear::{AnyLearner, OnlineLearner};
/// let data = low_rank(&LowRankSpec { n: 60, d: 30, rank: 2, flip: 0.0, seed: 1 }).unwrap();
/// let drp = DrpParams::new(DrpLoss::Logistic, 1.0, 10).iterations(2).build().unwrap();
/// let fit = drp.fit(&data).unwrap();
/// let model = recovered_model(drp.params(), &fit, data.len()).unwrap();
/// assert_eq!(model.learner.weights().as_ref(), fit.final_iterate());
/// assert_eq!(model.examples_seen, 60);
/// let AnyLearner::Fixed(fixed) = &model.learner else { panic!("fixed weights") };
/// assert_eq!(fixed.description(), "drp logistic lambda=1 m=10 T=2 seed=0 (Alg.2 iterate t=2)");
/// ```
pub fn recovered_model(
    params: &DrpParams,
    fit: &DrpFit,
    examples: usize,
) -> Result<LinearModel, DrpError> {
    let t = fit.reports[fit.final_index()].t;
    let description = format!(
        "drp {} lambda={} m={} T={} seed={} (Alg.2 iterate t={t})",
        params.loss, params.lambda, params.size, params.iterations, params.seed
    );
    let config = LearnerConfig {
        algorithm: Algorithm::Ogd,
        loss: params.loss.to_loss(),
        bias: false,
        ..LearnerConfig::default()
    };
    let fixed = FixedLinear::new(fit.final_iterate().to_vec(), description)
        .map_err(|e| DrpError::NonFinite(e.to_string()))?;
    let mut model = LinearModel::new(config, AnyLearner::Fixed(fixed));
    model.examples_seen = examples as u64;
    Ok(model)
}
