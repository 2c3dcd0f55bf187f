//! The retirement of a mixture's negligible members from Python (`retire=`, the CLI's
//! `--retire EPS`; the rule is the core's `linear/mixture_retirement.rs`): set on a new learner
//! as `sketchlearn train` sets it ([`TrainOptions::retirement`]), with the CLI's errors, and
//! read back (the threshold, each member's retirement point); and the retired members of every
//! mixture of a state, put back to a base's for `sketchlearn.dask` ([`retired_members`],
//! [`forget_retired`]).
//!
//! [`TrainOptions::retirement`]: sketchlearn::run::TrainOptions

use crate::state::State;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use sketchlearn::linear::{multiclass_refuses_retire, AnyLearner, LinearModel, Mixture};

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

/// The retired members of every mixture of `state`, as `(mixture, member)` pairs: a binary or
/// regression model's one mixture is mixture 0, a one-against-all model's class `c` holds
/// mixture `c` (each a default `auto` mixture); empty for a state without a mixture (a single
/// learner, softmax).
pub fn retired_members(state: &State) -> Vec<(usize, usize)> {
    let mixtures: Vec<Option<&Mixture>> = match state {
        State::Linear(m) => vec![m.mixture()],
        State::Multi(m) => m.learner.class_mixtures(),
    };
    let mut out = Vec::new();
    for (c, mix) in mixtures.iter().enumerate() {
        let Some(mix) = mix else { continue };
        let at = mix.retirement().retired_at();
        out.extend((0..at.len()).filter(|&k| at[k].is_some()).map(|k| (c, k)));
    }
    out
}

/// Puts `base`'s learner back for each `(mixture, member)` of `members` (numbered as
/// [`retired_members`] numbers them), all retired in `state`: the core's
/// `AnyLearner::forget_retired` (mixture 0 of a binary or regression model) or
/// `AnyMulticlass::forget_retired` (class by class). All or nothing; an empty `members`
/// changes nothing.
pub fn forget_retired(state: &mut State, base: &State, members: &[(usize, usize)]) -> PyResult<()> {
    let refused = |e: sketchlearn::linear::LearnError| PyValueError::new_err(e.to_string());
    match (state, base) {
        _ if members.is_empty() => Ok(()),
        (State::Linear(m), State::Linear(b)) => {
            if let Some(&(c, _)) = members.iter().find(|p| p.0 != 0) {
                return Err(PyValueError::new_err(format!(
                    "forget_retired: a binary or regression model has one mixture, 0, not {c}"
                )));
            }
            let ks: Vec<usize> = members.iter().map(|p| p.1).collect();
            m.learner.forget_retired(&b.learner, &ks).map_err(refused)
        }
        (State::Multi(m), State::Multi(b)) => m
            .learner
            .forget_retired(&b.learner, members)
            .map_err(refused),
        _ => Err(PyValueError::new_err(
            "forget_retired: the base must be the same kind of model (binary or regression, or \
             multiclass)",
        )),
    }
}
