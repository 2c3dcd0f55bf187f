//! L1 and L2 regularisation of the first-order learners: the settings ([`Regularization`],
//! checked against the learner that must honour them) and where they are applied
//! ([`Regularization::build`]: OGD and AdaGrad become their proximal versions,
//! [`ProximalOgd`](super::ProximalOgd) and [`ProximalAdaGrad`](super::ProximalAdaGrad)).

use super::{
    Algorithm, AnyLearner, ConfigError, Intercept, LearnerConfig, ProximalAdaGrad, ProximalOgd,
};
use serde::{Deserialize, Serialize};

/// The elastic-net penalty `λ₁‖w‖₁ + (λ₂/2)‖w‖²` added to the loss of every example (the
/// intercept is penalised like any weight, as in VW).
///
/// ```
/// use sketchlearn::linear::{Algorithm, LearnerConfig, Regularization};
/// let r = Regularization { l1: 1e-4, l2: 0.0 };
/// let adagrad = LearnerConfig { algorithm: Algorithm::AdaGrad, ..LearnerConfig::default() };
/// assert!(r.check(&adagrad).is_ok());
/// let err = r.check(&LearnerConfig::default()).unwrap_err(); // auto: a mixture
/// assert!(err.to_string().contains("--algo ogd or adagrad"));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Regularization {
    /// `λ₁ ≥ 0`: the L1 weight (sparse weights).
    pub l1: f64,
    /// `λ₂ ≥ 0`: the L2 weight (small weights).
    pub l2: f64,
}

impl Regularization {
    /// No penalty.
    pub fn is_none(&self) -> bool {
        self.l1 == 0.0 && self.l2 == 0.0
    }

    /// Checks the values (finite, `≥ 0`) and that `config`'s learner can honour them: OGD and
    /// AdaGrad can (in sparse time, by lazy proximal steps); the Newton learners and the
    /// mixtures cannot, and say so.
    pub fn check(&self, config: &LearnerConfig) -> Result<(), ConfigError> {
        for (name, value) in [("l1", self.l1), ("l2", self.l2)] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(ConfigError::OutOfDomain {
                    name,
                    value,
                    domain: "finite and >= 0",
                });
            }
        }
        if self.is_none() {
            return Ok(());
        }
        match config.algorithm {
            Algorithm::Ogd if config.clip.is_finite() => Err(ConfigError::Conflict(
                "--l1/--l2 with --algo ogd take no --clip (the projection and the proximal step \
                 are not combined)"
                    .into(),
            )),
            Algorithm::Ogd | Algorithm::AdaGrad if !config.diag => Ok(()),
            a => Err(ConfigError::Conflict(format!(
                "--l1/--l2 are applied by the first-order learners (--algo ogd or adagrad, \
                 without --diag); {a}{} does not take a penalty: {}",
                if config.diag { " with --diag" } else { "" },
                why_not(a)
            ))),
        }
    }

    // (`why_not` below says why the others refuse.)

    /// Builds `config`'s learner for dimension `dim` with the penalty: OGD or AdaGrad's
    /// proximal learner with the same step sizes (inside the intercept, when configured); the
    /// plain learner when there is no penalty. Checks `config` and `self` first.
    pub fn build(&self, config: &LearnerConfig, dim: usize) -> Result<AnyLearner, ConfigError> {
        let valid = config.check()?;
        self.check(config)?;
        if self.is_none() {
            return valid.build(dim);
        }
        let inner_dim = dim + usize::from(config.bias);
        let (loss, eta) = (config.loss, config.learning_rate);
        let core = match config.algorithm {
            Algorithm::Ogd => {
                AnyLearner::ProximalOgd(ProximalOgd::new(inner_dim, loss, eta, *self)?)
            }
            _ => AnyLearner::ProximalAdaGrad(ProximalAdaGrad::new(inner_dim, loss, eta, *self)?),
        };
        Ok(if config.bias {
            AnyLearner::Intercept(Box::new(Intercept::with_value(core, config.bias_value)?))
        } else {
            core
        })
    }
}

/// Why `algorithm` takes no penalty. The proximal step of `λ₁‖w‖₁` is closed-form (a
/// soft-threshold per weight) only under a diagonal metric: `argmin_w ½‖w − v‖²_A + s·λ₁‖w‖₁`
/// with `A` diagonal splits into one-dimensional problems, while the Newton learners' metric
/// `A_t = αI + SᵀS` (a sketch) couples the weights, so the step is a Lasso problem of its own,
/// solved only iteratively. The mixtures hold Newton members, and a penalty given to only some
/// members would change what the mixture compares.
///
/// ```
/// use sketchlearn::linear::{Algorithm, LearnerConfig, Regularization};
/// let newton = LearnerConfig { algorithm: Algorithm::Newton, ..LearnerConfig::default() };
/// let err = Regularization { l1: 1e-3, l2: 0.0 }.check(&newton).unwrap_err().to_string();
/// assert!(err.contains("no closed form"), "{err}");
/// ```
fn why_not(algorithm: Algorithm) -> &'static str {
    match algorithm {
        Algorithm::Newton => {
            "its step uses the sketched metric αI + SᵀS, which couples the weights, so the \
             proximal step of an L1 penalty has no closed form (it is a Lasso problem of its own)"
        }
        Algorithm::Ogd | Algorithm::AdaGrad => {
            "--diag feeds the learner D_t^(-1/2)x with D_t changing every step, so a penalty on \
             its weights would be a changing penalty on the model's weights"
        }
        Algorithm::AdaGradGrid => {
            "it is a mixture of AdaGrad learners of several step sizes, whose weights a \
             penalty would not leave comparable (give --algo adagrad -l ETA with the penalty)"
        }
        Algorithm::RunningMean => "it predicts the mean label and has no weights",
        Algorithm::AdaFd | Algorithm::Sketchy => {
            "its step uses a full-matrix preconditioner (an FD sketch of the gradients), which \
             couples the weights, so the proximal step of an L1 penalty has no closed form"
        }
        _ => {
            "the mixture holds sketched Newton members, whose metric αI + SᵀS couples the \
             weights, so the proximal step of an L1 penalty has no closed form for them"
        }
    }
}
