//! Validation of a [`LearnerConfig`]: [`LearnerConfig::check`] → [`ValidLearnerConfig`], the only
//! form that builds learners (linfa's `Params` → `ValidParams` pattern). Every parameter and
//! every combination is checked here, once, whichever front end (CLI, Python, a model file)
//! asked; the one check that needs the dimension (a sparse-time FD sketch needs `d ≥ 2m`) is
//! made by [`ValidLearnerConfig::build`].

use super::config::{ADA_FD_STEP_SCALE, SKETCHY_STEP_SCALE};
use super::curvature::{
    AnyCurvature, FdCurvature, FullCurvature, IdentityCurvature, OjaCurvature, RpCurvature,
};
use super::sparse::{SparseFd, SparseLearner, SparseOja, SparseRp};
use super::{
    AdaFd, AdaGrad, Algorithm, AnyLearner, CurvatureKind, DiagonalAdaptation, FeatureScaling,
    Intercept, LearnError, LearnerConfig, MixRule, Mixture, Newton, NewtonParams, Ogd,
    Representation, RowScaling, RunningMean, ScaledMixture, Sketchy, StepSchedule,
    TargetStandardization, UnitScaling,
};
use crate::sketch::FdVariant;
use std::ops::Deref;

/// Why a [`LearnerConfig`] cannot build a learner.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A hyper-parameter is outside its domain.
    #[error("invalid parameter: {name} must be {domain}, got {value}")]
    OutOfDomain {
        /// The parameter's name (as in [`LearnerConfig`], e.g. `alpha`).
        name: &'static str,
        /// Its value.
        value: f64,
        /// What it must be (e.g. `finite and > 0`).
        domain: &'static str,
    },
    /// Two settings that cannot go together (e.g. diagonal adaptation with `auto`, the sparse
    /// representation with a full curvature).
    #[error("invalid configuration: {0}")]
    Conflict(String),
    /// A sketch of `size` rows in dimension `dim` that the learner cannot hold (the sparse-time
    /// FD learner's doubling buffer needs `d ≥ 2m`).
    #[error(
        "invalid configuration: the sparse FD learner needs d >= 2m (d = {dim}, m = {size}); \
         for such a small d use the dense representation"
    )]
    SketchTooLarge {
        /// The learner's dimension (with the intercept).
        dim: usize,
        /// The sketch size `m`.
        size: usize,
    },
    /// A learner's constructor refused its arguments.
    #[error(transparent)]
    Learner(#[from] LearnError),
}

/// For code that reports learner errors: a configuration error is an invalid parameter (or the
/// constructor's own error).
impl From<ConfigError> for LearnError {
    fn from(e: ConfigError) -> Self {
        match e {
            ConfigError::Learner(e) => e,
            other => LearnError::InvalidParameter(
                other
                    .to_string()
                    .trim_start_matches("invalid parameter: ")
                    .to_string(),
            ),
        }
    }
}

/// A [`LearnerConfig`] that passed [`LearnerConfig::check`]: it builds learners. It reads as the
/// configuration (`Deref`); to change a value, take it back out ([`ValidLearnerConfig::into_inner`])
/// and check again.
#[derive(Clone, Debug, PartialEq)]
pub struct ValidLearnerConfig(LearnerConfig);

impl Deref for ValidLearnerConfig {
    type Target = LearnerConfig;
    fn deref(&self) -> &LearnerConfig {
        &self.0
    }
}

fn positive(name: &'static str, value: f64) -> Result<(), ConfigError> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(ConfigError::OutOfDomain {
            name,
            value,
            domain: "finite and > 0",
        })
    }
}

impl LearnerConfig {
    /// Validates every parameter and every combination (see [`ConfigError`]): the learning
    /// rates and `α`, `c`, Oja's `c` finite and positive, `α₀` finite and `≥ 0`, the projection
    /// bound `> 0` (∞ = none), `d₀` and the intercept's constant positive where used; no
    /// diagonal adaptation of `auto` (it has a diagonally adapted member); an FD/RFD sketch of at
    /// least one row; the sparse representation only for Newton and `auto` with a curvature that
    /// has a sparse-time learner (oja, rp, fd, rfd).
    pub fn check(&self) -> Result<ValidLearnerConfig, ConfigError> {
        positive("alpha", self.alpha)?;
        positive("c", self.c)?;
        positive("oja_c", self.oja_c)?;
        positive("learning_rate", self.learning_rate)?;
        if !(self.alpha0.is_finite() && self.alpha0 >= 0.0) {
            return Err(ConfigError::OutOfDomain {
                name: "alpha0",
                value: self.alpha0,
                domain: "finite and >= 0",
            });
        }
        if self.clip.is_nan() || self.clip <= 0.0 {
            return Err(ConfigError::OutOfDomain {
                name: "clip",
                value: self.clip,
                domain: "> 0 (inf = no projection)",
            });
        }
        if self.diag || self.algorithm.is_auto() {
            positive("diag_d0", self.diag_d0)?;
        }
        if self.bias {
            positive("bias_value", self.bias_value)?;
        }
        self.check_combinations()?;
        Ok(ValidLearnerConfig(self.clone()))
    }

    fn check_combinations(&self) -> Result<(), ConfigError> {
        let newton = self.algorithm == Algorithm::Newton || self.algorithm.is_auto();
        if self.algorithm.is_auto() && self.diag {
            return Err(ConfigError::Conflict(format!(
                "diagonal adaptation applies to one learner (--algo newton or adagrad); \
                 {} already has a diagonally adapted member",
                self.algorithm
            )));
        }
        if matches!(
            self.algorithm,
            Algorithm::AutoSparse | Algorithm::AutoVerySparse
        ) && !self.loss.is_classification()
        {
            return Err(ConfigError::Conflict(format!(
                "{} is the default's composition for a classifier on sparse data; with the {} \
                 loss use --algo auto",
                self.algorithm, self.loss
            )));
        }
        if self.algorithm.is_sketched_adagrad() && self.size == 0 {
            return Err(ConfigError::Conflict(format!(
                "sketch size must be at least 1 for {}",
                self.algorithm
            )));
        }
        if newton && self.curvature.is_fd() && self.size == 0 {
            return Err(ConfigError::Conflict(
                "sketch size must be at least 1 for fd/rfd curvature (rp and oja allow 0)".into(),
            ));
        }
        if self.representation == Representation::Sparse {
            if !newton {
                return Err(ConfigError::Conflict(format!(
                    "the sparse representation applies to newton and auto ({} is O(nnz) per \
                     example already)",
                    self.algorithm
                )));
            }
            if !self.curvature.has_sparse_learner() {
                return Err(ConfigError::Conflict(format!(
                    "curvature {} has no sparse-time learner (use oja, rp, fd or rfd)",
                    self.curvature
                )));
            }
        }
        Ok(())
    }

    /// [`check`](LearnerConfig::check), then [`ValidLearnerConfig::build`].
    pub fn build(&self, dim: usize) -> Result<AnyLearner, ConfigError> {
        self.check()?.build(dim)
    }
}

impl ValidLearnerConfig {
    /// The configuration.
    pub fn config(&self) -> &LearnerConfig {
        &self.0
    }

    /// The configuration, to change and check again.
    pub fn into_inner(self) -> LearnerConfig {
        self.0
    }

    /// Builds the learner for dimension `dim` (the intercept, when configured, adds one).
    /// [`Representation::Auto`] builds the dense learner here: resolve it against the input
    /// first ([`ValidLearnerConfig::resolve`]) to let the library choose. The only error left
    /// after [`LearnerConfig::check`] is [`ConfigError::SketchTooLarge`] (sparse FD, `d < 2m`).
    ///
    /// A single Newton learner ([`Algorithm::Newton`]) learns rows divided by their running
    /// RMS norm ([`RowScaling`]): its `α` (and RFD's `α₀`) count in units of the mean squared
    /// row norm, and its predictions are invariant to multiplying every feature by one
    /// constant, so that one default works on rows of any global scale
    /// (`tests/suite/single_learner_scaling.rs`). Dense and sparse-time learners get the same
    /// wrapper (their predictions stay equal), whose state is two numbers. The mixture's
    /// members, tuned on the shared sets in absolute units, are built without it
    /// ([`Self::build_unscaled`]).
    ///
    /// A logistic mixture built here predicts its members' calibrated probabilities
    /// (`calibrated_output` below); built as a member ([`Self::build_unscaled`]), an AdaGrad grid
    /// keeps its raw score.
    pub fn build(&self, dim: usize) -> Result<AnyLearner, ConfigError> {
        let built = build(&self.0, dim, true)?;
        if !self.0.algorithm.row_scaled() {
            return Ok(built);
        }
        Ok(AnyLearner::RowScaling(Box::new(RowScaling::new(built))))
    }

    /// Builds the learner as the papers state it, without the [`RowScaling`] of a single Newton
    /// learner (`α`, `α₀` in absolute units): what the mixture builds for its members, and what
    /// the paper reproductions (`sketchlearn-repro`) tune over the papers' grids. An AdaGrad
    /// grid built here is a member: it predicts raw, the score its parent grades
    /// (`calibrated_output` below).
    pub fn build_unscaled(&self, dim: usize) -> Result<AnyLearner, ConfigError> {
        build(&self.0, dim, false)
    }
}

/// Whether a mixture built from `config` predicts its members' calibrated probabilities
/// (`Mixture::set_calibrated_output`, `linear/mixture_output.rs`), `alone` when it is not
/// another mixture's member. With the logistic loss: the default (`auto`, `auto-sparse`,
/// `auto-very-sparse`, never
/// a member) always (stop 56), an AdaGrad grid when used alone (stop 57; measured in
/// `docs/results/calibration.md`). The default's grid is its member: it keeps the raw score
/// the default calibrates and grades. One-against-all turns its class learners raw
/// (`OneVsAll::of_class_learners`). The one place this is decided (the paper reproductions
/// that mix members themselves ask it too).
///
/// ```
/// use sketchlearn::linear::{calibrated_output, LearnerConfig};
/// let default = LearnerConfig::default();
/// assert!(calibrated_output(&default, true));
/// ```
pub fn calibrated_output(config: &LearnerConfig, alone: bool) -> bool {
    config.loss == crate::loss::Loss::Logistic && (config.algorithm.is_auto() || alone)
}

/// Builds a configuration that passed [`LearnerConfig::check`] (and so do the members it
/// derives: they only scale positive values).
/// `alone`: not another mixture's member ([`calibrated_output`]).
fn build(config: &LearnerConfig, dim: usize, alone: bool) -> Result<AnyLearner, ConfigError> {
    if let Some(members) = config.mixture_members() {
        return mixture_of(config, &members, dim, alone);
    }
    if config.algorithm == Algorithm::RunningMean {
        return Ok(AnyLearner::RunningMean(RunningMean::new(dim)));
    }
    if config.bias {
        let inner = LearnerConfig {
            bias: false,
            ..config.clone()
        };
        return Ok(AnyLearner::Intercept(Box::new(Intercept::with_value(
            build(&inner, dim + 1, alone)?,
            config.bias_value,
        )?)));
    }
    let base = match config.algorithm {
        Algorithm::Ogd => AnyLearner::Ogd(Ogd::new(
            dim,
            config.loss,
            config.learning_rate,
            StepSchedule::InverseSqrt,
            config.clip,
        )?),
        Algorithm::AdaGrad => {
            AnyLearner::AdaGrad(AdaGrad::new(dim, config.loss, config.learning_rate)?)
        }
        Algorithm::AdaFd => AnyLearner::AdaFd(AdaFd::new(
            dim,
            config.size,
            config.loss,
            ADA_FD_STEP_SCALE * config.learning_rate,
            config.alpha,
        )?),
        Algorithm::Sketchy => AnyLearner::Sketchy(Sketchy::new(
            dim,
            config.size,
            config.loss,
            SKETCHY_STEP_SCALE * config.learning_rate,
            config.alpha0,
        )?),
        Algorithm::Auto
        | Algorithm::AutoSparse
        | Algorithm::AutoVerySparse
        | Algorithm::AdaGradGrid
        | Algorithm::RunningMean => {
            unreachable!("mixtures and the running mean are handled above")
        }
        Algorithm::Newton if config.representation == Representation::Sparse => {
            AnyLearner::Sparse(build_sparse(config, dim)?)
        }
        Algorithm::Newton => AnyLearner::Newton(Newton::new(
            dense_curvature(config, dim)?,
            newton_params(config),
        )?),
    };
    Ok(if config.diag {
        AnyLearner::Diagonal(Box::new(DiagonalAdaptation::new(
            base,
            config.loss,
            config.diag_d0,
        )?))
    } else {
        base
    })
}

/// The online mixture of `members` (each built for `dim`) with [`LearnerConfig::mix_rule`].
/// `alone`: not another mixture's member ([`calibrated_output`]); its members are.
fn mixture_of(
    config: &LearnerConfig,
    members: &[LearnerConfig],
    dim: usize,
    alone: bool,
) -> Result<AnyLearner, ConfigError> {
    // Auto's regression members learn standardised labels on RMS-scaled features
    // (`regression_members`); the running mean needs neither. Its classification members learn
    // features brought down to unit scale ([`UnitScaling`], `auto_members`).
    let auto = config.algorithm.is_auto();
    let normalize = auto && !config.loss.is_classification();
    let members = members
        .iter()
        .map(|c| {
            let built = build(c, dim, false)?;
            Ok(if normalize && c.algorithm != Algorithm::RunningMean {
                AnyLearner::TargetStandardization(Box::new(TargetStandardization::new(
                    AnyLearner::FeatureScaling(Box::new(FeatureScaling::new(built))),
                )))
            } else if auto && config.loss.is_classification() {
                AnyLearner::UnitScaling(Box::new(UnitScaling::new(built)))
            } else {
                built
            })
        })
        .collect::<Result<Vec<_>, ConfigError>>()?;
    if config.mix_rule() == MixRule::AdaHedgeScaled {
        return Ok(AnyLearner::ScaledMixture(Box::new(ScaledMixture::new(
            members,
        )?)));
    }
    let mut mixture = Mixture::new(members, config.loss, config.mix_rule(), 1.0)?;
    mixture.set_calibrated_output(calibrated_output(config, alone));
    Ok(AnyLearner::Mixture(mixture))
}

fn newton_params(config: &LearnerConfig) -> NewtonParams {
    NewtonParams {
        loss: config.loss,
        c: config.c,
        clip: config.clip,
    }
}

/// The dense curvature model of a Newton learner.
fn dense_curvature(config: &LearnerConfig, dim: usize) -> Result<AnyCurvature, LearnError> {
    let (m, alpha, alpha0) = (config.size, config.alpha, config.alpha0);
    Ok(match config.curvature {
        CurvatureKind::Identity => AnyCurvature::Identity(IdentityCurvature::new(dim, alpha)?),
        CurvatureKind::Full => AnyCurvature::Full(FullCurvature::new(dim, alpha)?),
        CurvatureKind::Fd => AnyCurvature::Fd(FdCurvature::fd(dim, m, FdVariant::PerRow, alpha)?),
        CurvatureKind::FdFast => {
            AnyCurvature::Fd(FdCurvature::fd(dim, m, FdVariant::Doubling, alpha)?)
        }
        CurvatureKind::Rfd => {
            AnyCurvature::Fd(FdCurvature::rfd(dim, m, FdVariant::PerRow, alpha0)?)
        }
        CurvatureKind::RfdFast => {
            AnyCurvature::Fd(FdCurvature::rfd(dim, m, FdVariant::Doubling, alpha0)?)
        }
        CurvatureKind::Rp => AnyCurvature::Rp(RpCurvature::new(dim, m, alpha, config.seed)?),
        CurvatureKind::Oja => {
            AnyCurvature::Oja(OjaCurvature::new(dim, m, alpha, config.oja_c, config.seed)?)
        }
    })
}

/// The sparse-time SON learner of a curvature (FD and RFD with the doubling buffer).
fn build_sparse(config: &LearnerConfig, dim: usize) -> Result<SparseLearner, ConfigError> {
    let (m, seed, params) = (config.size, config.seed, newton_params(config));
    if config.curvature.is_fd() && dim < 2 * m {
        return Err(ConfigError::SketchTooLarge { dim, size: m });
    }
    Ok(match config.curvature {
        CurvatureKind::Oja => SparseLearner::Oja(SparseOja::new(
            dim,
            m,
            config.alpha,
            config.oja_c,
            seed,
            params,
        )?),
        CurvatureKind::Rp => SparseLearner::Rp(SparseRp::new(dim, m, config.alpha, seed, params)?),
        CurvatureKind::Fd | CurvatureKind::FdFast => {
            SparseLearner::Fd(SparseFd::fd(dim, m, config.alpha, seed, params)?)
        }
        CurvatureKind::Rfd | CurvatureKind::RfdFast => {
            SparseLearner::Fd(SparseFd::rfd(dim, m, config.alpha0, seed, params)?)
        }
        CurvatureKind::Identity | CurvatureKind::Full => {
            unreachable!(
                "check refuses the sparse representation of {}",
                config.curvature
            )
        }
    })
}
