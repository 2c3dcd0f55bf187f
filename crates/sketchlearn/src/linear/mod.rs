//! Online linear learners: first-order baselines (OGD, AdaGrad), the Sketched Online Newton
//! learner generic over a [`curvature::Curvature`] model (SON paper Alg. 1), and diagonal
//! adaptation (SON §5.2); full-matrix AdaGrad on an FD sketch of the gradients ([`AdaFd`],
//! [`Sketchy`]).
//!
//! Every learner implements [`OnlineLearner`] (River's `learn_one`/`predict_one` contract):
//! [`OnlineLearner::learn`] returns the prediction made *before* the update, which is what
//! progressive validation scores.

use crate::data::all_finite;
use crate::{Example, Row};

mod ada_fd;
mod any;
mod calibration;
mod check;
mod config;
pub mod curvature;
mod data_sparsity;
mod diagonal;
mod extras;
mod fd_adagrad;
mod feature_scaling;
mod first_order;
mod fixed;
mod handoff;
mod intercept;
mod legacy;
mod member_thread;
mod member_weight;
mod mixture;
mod mixture_batch;
mod mixture_lone;
mod mixture_output;
mod mixture_retirement;
mod mixture_wire;
mod model_merge;
pub mod multiclass;
mod newton;
pub(crate) mod prefetch;
mod proximal;
mod regularization;
mod representation;
mod rescaling;
mod row_scaling;
mod running_mean;
mod saved;
mod scaled_mixture;
mod shared_scaling;
mod sketchy;
pub mod sparse;
mod summary;
mod target_standardization;
mod undo;
mod unit_scaling;
pub(crate) mod validate;

pub use ada_fd::{AdaFd, AdaFdRule};
pub use any::{multiclass_refuses_retire, AnyLearner};
pub use check::{calibrated_output, ConfigError, ValidLearnerConfig};
pub use config::{
    Algorithm, CurvatureKind, LearnerConfig, Representation, ADA_FD_STEP_SCALE,
    MEMBER_ALPHA0_SCALE, SKETCHY_STEP_SCALE,
};
pub use data_sparsity::{sparse_data, very_sparse_data, SparsityProbe, SparsitySample};
pub use diagonal::DiagonalAdaptation;
pub use extras::ModelExtras;
pub use fd_adagrad::{FdAdaGrad, FdPreconditioner};
pub use feature_scaling::FeatureScaling;
pub use first_order::{AdaGrad, Ogd, StepSchedule};
pub use fixed::FixedLinear;
pub use intercept::Intercept;
pub use member_weight::MemberWeight;
pub use mixture::{MixRule, Mixture};
pub use mixture_batch::{on_one_thread, weighing_on};
pub use mixture_retirement::{
    Retirement, COVERAGE as RETIREMENT_COVERAGE, DEFAULT_EPSILON as DEFAULT_RETIREMENT,
};
pub use multiclass::{
    AnyMulticlass, MulticlassConfig, MulticlassLearner, OneVsAll, Reduction, SoftmaxParams,
    SoftmaxSon,
};
pub use newton::{Newton, NewtonParams};
pub use proximal::{ProximalAdaGrad, ProximalOgd};
pub use regularization::Regularization;
pub use representation::{
    auto_sparse, InputProfile, RepresentationChoice, FD_SPARSE_FRACTION, SPARSITY_SAMPLE,
};
pub use row_scaling::{RowScale, RowScaling};
pub use running_mean::RunningMean;
pub use saved::{LinearModel, LINEAR_MODEL_KIND};
pub use scaled_mixture::{LabelScale, ScaledMixture};
pub use sketchy::{Sketchy, SketchyRule};
pub use summary::{sketch_summaries, top_weights, SketchSummary};
pub use target_standardization::TargetStandardization;
pub use unit_scaling::UnitScaling;

/// What can go wrong while learning.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum LearnError {
    /// A hyper-parameter is out of its domain.
    #[error("invalid parameter: {0}")]
    InvalidParameter(String),
    /// The example has a non-finite feature value, label or weight.
    #[error("non-finite input: {0}")]
    NonFinite(String),
    /// A feature index is outside the model's dimension.
    #[error("feature index {index} (0-based) is outside the model's dimension {dim}")]
    DimensionMismatch {
        /// The offending 0-based index.
        index: usize,
        /// The model's dimension.
        dim: usize,
    },
    /// The update would have produced non-finite weights; the model was left unchanged.
    #[error("update skipped: it would make the weights non-finite ({0})")]
    Diverged(String),
    /// A sketch failed.
    #[error(transparent)]
    Sketch(#[from] crate::sketch::SketchError),
}

/// An online learner of a linear score `wᵀx`, one example at a time.
pub trait OnlineLearner {
    /// Dimension `d` of the weight vector.
    fn dim(&self) -> usize;

    /// The raw score `wᵀx` the learner would predict for `x` now (no update). Features beyond
    /// `dim()` are ignored.
    fn predict(&self, x: Row<'_>) -> f64;

    /// Predicts `x`, then updates on `(x, y)` with importance `weight`; returns the prediction
    /// made before the update.
    fn learn(&mut self, x: Row<'_>, y: f64, weight: f64) -> Result<f64, LearnError>;

    /// The current weight vector (for inspection and tests; sketched learners may compute it).
    fn weights(&self) -> std::borrow::Cow<'_, [f64]>;

    /// A hint that `x` is learned next: learners whose per-feature state lives in large tables
    /// (the sparse-time learners, diagonal adaptation) start loading the example's entries, so
    /// that wrappers can issue every load before any of them is waited for. No effect on results.
    #[inline]
    fn prefetch(&self, _x: Row<'_>) {}

    /// [`OnlineLearner::learn`] on each example of `batch` in order, its predictions pushed onto
    /// `out` (cleared first); stops at the first error, `out` then holding the predictions of
    /// the examples before it. A learner made of independent parts (the members of an
    /// [`AnyLearner`] mixture) may learn them on two threads: the same bits as one thread
    /// (`tests/suite/mixture.rs`).
    fn learn_batch(&mut self, batch: &[Example], out: &mut Vec<f64>) -> Result<(), LearnError> {
        learn_each(self, batch, out)
    }

    /// This learner as a unit scaling of an [`AnyLearner`], if it is one
    /// ([`AnyLearner::UnitScaling`]; `None` for every other learner): the members of a
    /// [`Mixture`] that all are unit scalings of the same examples share one scaling state,
    /// observed once per example (`linear/shared_scaling.rs`).
    ///
    /// ```
    /// use sketchlearn::linear::{AdaGrad, AnyLearner, OnlineLearner, UnitScaling};
    /// use sketchlearn::loss::Loss;
    /// let ada = AnyLearner::AdaGrad(AdaGrad::new(3, Loss::Logistic, 0.5).unwrap());
    /// assert!(ada.as_unit_scaling().is_none());
    /// let scaled = AnyLearner::UnitScaling(Box::new(UnitScaling::new(ada)));
    /// assert_eq!(scaled.as_unit_scaling().unwrap().features_seen(), 0);
    /// ```
    fn as_unit_scaling(&self) -> Option<&UnitScaling<AnyLearner>> {
        None
    }

    /// Steps refused so far by the mixtures inside this learner (members that refused an example
    /// the mixture went on with), `0` for a learner that holds none: how a mixture tells that a
    /// member refused a row ([`Mixture`]'s `learn_normalized`).
    fn nested_refusals(&self) -> u64 {
        0
    }

    /// [`OnlineLearner::as_unit_scaling`], to change.
    fn as_unit_scaling_mut(&mut self) -> Option<&mut UnitScaling<AnyLearner>> {
        None
    }
}

/// [`OnlineLearner::learn_batch`] one example after the other (its default): `out` cleared,
/// then [`learn_onto`].
pub(crate) fn learn_each<L: OnlineLearner + ?Sized>(
    learner: &mut L,
    batch: &[Example],
    out: &mut Vec<f64>,
) -> Result<(), LearnError> {
    out.clear();
    learn_onto(learner, batch, out)
}

/// [`OnlineLearner::learn`] on each example of `batch` in order, its predictions appended to
/// `out`; stops at the first error (also a part of a mixture's batch, `mixture_batch.rs`).
pub(crate) fn learn_onto<L: OnlineLearner + ?Sized>(
    learner: &mut L,
    batch: &[Example],
    out: &mut Vec<f64>,
) -> Result<(), LearnError> {
    for ex in batch {
        out.push(learner.learn(ex.row(), ex.label, ex.weight)?);
    }
    Ok(())
}

/// Largest weight magnitude a step may produce. A step that would exceed it (or produce NaN/∞)
/// is refused with [`LearnError::Diverged`], so that weights and predictions stay finite even
/// when an algorithm diverges on badly scaled data (e.g. OGD with squared loss and features of
/// 1e8): predictions `wᵀx` then stay finite for any `Σ|x_i| < 1e200`.
pub const MAX_WEIGHT: f64 = 1e100;

/// True when `w` is an acceptable weight value (finite, `|w| ≤ MAX_WEIGHT`).
#[inline]
pub(crate) fn weight_ok(w: f64) -> bool {
    w.abs() <= MAX_WEIGHT
}

/// `s` clamped to `[−clip, clip]` (NaN stays NaN); unlike `f64::clamp`, never panics — a
/// hostile model file may hold `clip < 0` or NaN, and loading it must not abort.
#[inline]
pub(crate) fn clip_score(s: f64, clip: f64) -> f64 {
    if s > clip {
        clip
    } else if s < -clip {
        -clip
    } else {
        s
    }
}

/// Checks an example before learning: finite label, weight and values; indices inside `dim`.
pub(crate) fn check_example(
    x: &Row<'_>,
    y: f64,
    weight: f64,
    dim: usize,
) -> Result<(), LearnError> {
    if !y.is_finite() {
        return Err(LearnError::NonFinite(format!("label {y}")));
    }
    if !weight.is_finite() || weight < 0.0 {
        return Err(LearnError::NonFinite(format!("importance weight {weight}")));
    }
    let need = x.max_index_plus_one();
    if need > dim {
        return Err(LearnError::DimensionMismatch {
            index: need - 1,
            dim,
        });
    }
    let finite = match x {
        Row::Dense(v) => all_finite(v),
        Row::Sparse { values, .. } => all_finite(values),
    };
    if !finite {
        return Err(LearnError::NonFinite("feature value".into()));
    }
    Ok(())
}
