//! What a `LinearLearners` object holds: one core model, either a binary/regression
//! [`LinearModel`] or a [`MulticlassModel`] (one-against-all or softmax) — exactly what
//! `sketchlearn train -f` writes without and with `--multiclass`, so that `save`, `load` and
//! pickling are the core's model-file bytes.

use crate::errors::{merge_error, model_error};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use sketchlearn::labels::Classes;
use sketchlearn::linear::multiclass::{
    AnyMulticlass, MulticlassLearner, MulticlassModel, OneVsAll, MULTICLASS_MODEL_KIND,
};
use sketchlearn::linear::{LinearModel, OnlineLearner, LINEAR_MODEL_KIND};
use sketchlearn::merge::Merge;
use sketchlearn::model::{self, AnyModel, ModelError};
use sketchlearn::Row;
use std::path::Path;

/// One core model.
#[derive(Clone)]
#[allow(clippy::large_enum_variant)] // one per estimator
pub enum State {
    /// Binary classification (labels ±1) or regression.
    Linear(LinearModel),
    /// `K > 2` classes (ids `0..K`).
    Multi(MulticlassModel),
}

impl State {
    /// How the training input was read (CSV through a schema, for learners built from a CSV
    /// scan), `None` when unknown.
    pub fn input(&self) -> Option<&sketchlearn::data::InputSpec> {
        match self {
            State::Linear(m) => m.input.as_ref(),
            State::Multi(m) => m.input.as_ref(),
        }
    }

    /// Input dimension `d`.
    pub fn dim(&self) -> usize {
        match self {
            State::Linear(m) => m.learner.dim(),
            State::Multi(m) => m.learner.dim(),
        }
    }

    /// Number of score columns: 1, or `K`.
    pub fn n_scores(&self) -> usize {
        match self {
            State::Linear(_) => 1,
            State::Multi(m) => m.classes.len(),
        }
    }

    /// The classes recorded in the model (`None`: regression, or a binary model of unknown
    /// labels, which the CLI reads as ±1).
    pub fn classes(&self) -> Option<&Classes> {
        match self {
            State::Linear(m) => m.classes.as_ref(),
            State::Multi(m) => Some(&m.classes),
        }
    }

    /// Examples learned (all calls and passes; saved in the model).
    pub fn examples_seen(&self) -> u64 {
        match self {
            State::Linear(m) => m.examples_seen,
            State::Multi(m) => m.examples_seen,
        }
    }

    /// The configuration in the CLI's words.
    pub fn describe(&self) -> String {
        match self {
            State::Linear(m) => m.config.describe(),
            State::Multi(m) => m.config.describe(),
        }
    }

    /// The raw scores of row `x` into `out` (`n_scores` values).
    pub fn scores_into(&self, x: Row<'_>, out: &mut [f64]) {
        match self {
            State::Linear(m) => out[0] = m.learner.predict(x),
            State::Multi(m) => out.copy_from_slice(&m.learner.scores(x)),
        }
    }

    /// The weights as rows, one per score column (`d` values and the intercept's, if any).
    pub fn weight_rows(&self) -> Vec<Vec<f64>> {
        match self {
            State::Linear(m) => vec![m.learner.weights().into_owned()],
            State::Multi(m) => m.learner.class_weights(),
        }
    }

    /// Every rule that can refuse [`merge`](Self::merge), nothing changed: the same kind of
    /// model (and of base), a one-against-all multiclass model (softmax states have no merge)
    /// with the same classes, and the core's rules (`Merge::check_merge`: configurations,
    /// shapes, and every member's, so that no part is merged when a later one is refused).
    pub fn check_merge(&self, other: &State, base: Option<&State>) -> PyResult<()> {
        match (self, other) {
            (State::Linear(a), State::Linear(b)) => {
                a.check_merge(b, linear_base(base)?).map_err(merge_error)
            }
            (State::Multi(a), State::Multi(b)) => {
                let (x, y) = (one_vs_all(a)?, one_vs_all(b)?);
                let g = multi_base(base)?;
                if a.classes != b.classes || g.is_some_and(|g| g.classes != a.classes) {
                    return Err(different());
                }
                let g = g.map(one_vs_all).transpose()?;
                x.check_merge(y, g).map_err(merge_error)
            }
            _ => Err(different()),
        }
    }

    /// Merges `other` (and `base`, the state both started from) into `self`: iterative
    /// parameter mixing (`sketchlearn::merge`). All or nothing: a refused merge
    /// ([`check_merge`](Self::check_merge)'s error) leaves `self` as it was.
    pub fn merge(&mut self, other: &State, base: Option<&State>) -> PyResult<()> {
        self.check_merge(other, base)?;
        match (self, other) {
            (State::Linear(a), State::Linear(b)) => {
                a.merge(b, linear_base(base)?).map_err(merge_error)
            }
            (State::Multi(a), State::Multi(b)) => {
                let g = multi_base(base)?;
                let seen = g.map(|g| g.examples_seen);
                let g = g.map(one_vs_all).transpose()?;
                if let (AnyMulticlass::OneVsAll(x), y) = (&mut a.learner, one_vs_all(b)?) {
                    x.merge(y, g).map_err(merge_error)?;
                }
                a.examples_seen =
                    (a.examples_seen + b.examples_seen).saturating_sub(seen.unwrap_or(0));
                Ok(())
            }
            _ => Err(different()), // refused by the check
        }
    }

    /// The model-file bytes (kind `linear-learner` or `multiclass-learner`).
    pub fn to_bytes(&self) -> Result<Vec<u8>, ModelError> {
        match self {
            State::Linear(m) => model::to_bytes(LINEAR_MODEL_KIND, m),
            State::Multi(m) => model::to_bytes(MULTICLASS_MODEL_KIND, m),
        }
    }

    /// This state's delta against `base`, the state it grew from (`sketchlearn::model::
    /// delta_bytes`: the per-feature stores' entries that differ from the base's; what
    /// `sketchlearn.dask` sends between workers, which hold the base).
    pub fn delta_bytes(&self, base: &State) -> PyResult<Vec<u8>> {
        match (self, base) {
            (State::Linear(m), State::Linear(g)) => model::delta_bytes(LINEAR_DELTA_KIND, m, g),
            (State::Multi(m), State::Multi(g)) => model::delta_bytes(MULTICLASS_DELTA_KIND, m, g),
            _ => return Err(different()),
        }
        .map_err(model_error)
    }

    /// The state back from its [`State::delta_bytes`] against the same `base` (another base is
    /// an error).
    pub fn from_delta_bytes(bytes: &[u8], base: &State) -> PyResult<State> {
        match base {
            State::Linear(g) => {
                model::from_delta_bytes(bytes, LINEAR_DELTA_KIND, g, "delta").map(State::Linear)
            }
            State::Multi(g) => {
                model::from_delta_bytes(bytes, MULTICLASS_DELTA_KIND, g, "delta").map(State::Multi)
            }
        }
        .map_err(model_error)
    }

    /// The state back from [`State::to_bytes`].
    pub fn from_bytes(bytes: &[u8], name: &str) -> PyResult<State> {
        match LinearModel::from_bytes(bytes, name) {
            Ok(m) => Ok(State::Linear(m)),
            Err(ModelError::WrongKind { .. }) => MulticlassModel::from_bytes(bytes, name)
                .map(State::Multi)
                .map_err(model_error),
            Err(e) => Err(model_error(e)),
        }
    }

    /// Writes the model file the CLI reads.
    pub fn save(&self, path: &Path) -> PyResult<()> {
        match self {
            State::Linear(m) => m.save(path),
            State::Multi(m) => m.save(path),
        }
        .map_err(model_error)
    }

    /// Reads a model file of either kind (`sketchlearn train -f`, with or without
    /// `--multiclass`).
    pub fn load(path: &Path) -> PyResult<State> {
        // The library's loader: the file read once, dispatched on its kind.
        match AnyModel::load(path).map_err(model_error)? {
            AnyModel::Linear(m) => Ok(State::Linear(m)),
            AnyModel::Multiclass(m) => Ok(State::Multi(m)),
        }
    }

    /// The state without what a file adds about its data (the input format, and a binary
    /// model's classes), as model-file bytes: learner state compared byte for byte.
    pub fn state_bytes(&self) -> Result<Vec<u8>, ModelError> {
        match self {
            State::Linear(m) => {
                let mut m = m.clone();
                m.classes = None;
                m.input = None;
                model::to_bytes(LINEAR_MODEL_KIND, &m)
            }
            State::Multi(m) => {
                let mut m = m.clone();
                m.input = None;
                model::to_bytes(MULTICLASS_MODEL_KIND, &m)
            }
        }
    }
}

/// The kind tags of the deltas of the two kinds of model.
const LINEAR_DELTA_KIND: &str = "linear-learner-delta";
const MULTICLASS_DELTA_KIND: &str = "multiclass-learner-delta";

/// A linear merge's base (a linear state, or an error).
fn linear_base(base: Option<&State>) -> PyResult<Option<&LinearModel>> {
    match base {
        None => Ok(None),
        Some(State::Linear(g)) => Ok(Some(g)),
        Some(_) => Err(different()),
    }
}

/// A multiclass merge's base (a multiclass state, or an error).
fn multi_base(base: Option<&State>) -> PyResult<Option<&MulticlassModel>> {
    match base {
        None => Ok(None),
        Some(State::Multi(g)) => Ok(Some(g)),
        Some(_) => Err(different()),
    }
}

/// A multiclass model's one-against-all learner (softmax models have no merge).
fn one_vs_all(m: &MulticlassModel) -> PyResult<&OneVsAll> {
    match &m.learner {
        AnyMulticlass::OneVsAll(x) => Ok(x),
        _ => Err(pyo3::exceptions::PyNotImplementedError::new_err(
            "softmax multiclass models cannot be merged (use reduction=\"oaa\")",
        )),
    }
}

fn different() -> PyErr {
    PyValueError::new_err("cannot merge: different kinds of models or classes")
}
