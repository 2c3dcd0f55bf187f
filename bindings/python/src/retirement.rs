//! The retirement of a mixture's negligible members from Python (`retire=`, the CLI's
//! `--retire EPS`; the rule is the core's `linear/mixture_retirement.rs`): set on a new learner
//! as `sketchlearn train` sets it ([`TrainOptions::retirement`]), with the CLI's errors, and
//! read back (the threshold, each member's retirement point).
//!
//! [`TrainOptions::retirement`]: sketchlearn::run::TrainOptions

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use sketchlearn::linear::{multiclass_refuses_retire, AnyLearner, LinearModel};

/// Sets the threshold `ε` of every mixture in `learner` ([`AnyLearner::retire`], the rule
/// `--retire` goes through): an error for `ε` outside `[0, 1)` (NaN included) and for a
/// learner that holds no mixture.
pub fn set_retire(learner: &mut AnyLearner, epsilon: f64) -> PyResult<()> {
    learner
        .retire(epsilon, "retire", "leave retire=None")
        .map_err(PyValueError::new_err)
}

/// The refusal of `retire` by a multiclass model, the core's as for `sketchlearn train
/// --multiclass --retire` ([`multiclass_refuses_retire`]): its members keep the default.
pub fn multiclass_refuses() -> PyErr {
    PyValueError::new_err(multiclass_refuses_retire("retire"))
}

/// The mixture's threshold `ε` (`None`: no mixture).
pub fn threshold(model: &LinearModel) -> Option<f64> {
    model.mixture().map(|m| m.retirement().epsilon())
}

/// Per member of the mixture: the importance weight seen when it retired, `None` while it
/// learns (`None` for a model without a mixture).
pub fn retired_at(model: &LinearModel) -> Option<Vec<Option<f64>>> {
    model.mixture().map(|m| m.retirement().retired_at())
}
