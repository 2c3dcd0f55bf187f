//! A trained linear learner as a model file: its configuration, its full state (weights AND
//! sketch/curvature state, so training can resume bit for bit) and how many examples it has seen.
//! The file format (magic number, version, checksum, atomic writes) is [`crate::model`]'s.

use super::{AnyLearner, LearnerConfig};
use crate::model::{self, ModelError};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The kind tag of linear-learner model files.
pub const LINEAR_MODEL_KIND: &str = "linear-learner";

/// A learner with the configuration that built it.
///
/// ```
/// use sketchlearn::linear::{LearnerConfig, LinearModel, OnlineLearner};
/// use sketchlearn::Row;
/// let config = LearnerConfig::default();
/// let mut model = LinearModel::new(config.clone(), config.build(3).unwrap());
/// model.learner.learn(Row::Dense(&[1.0, 0.0, 2.0]), 1.0, 1.0).unwrap();
/// model.examples_seen += 1;
/// let path = std::env::temp_dir().join(format!("doc-model-{}.skl", std::process::id()));
/// model.save(&path).unwrap();
/// let back = LinearModel::load(&path).unwrap();
/// assert_eq!(back.learner.weights(), model.learner.weights());
/// # std::fs::remove_file(&path).ok();
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LinearModel {
    /// The hyper-parameters the learner was built with.
    pub config: LearnerConfig,
    /// The learner's full state.
    pub learner: AnyLearner,
    /// Examples learned so far (all passes).
    pub examples_seen: u64,
}

impl LinearModel {
    /// A model that has seen no example yet.
    pub fn new(config: LearnerConfig, learner: AnyLearner) -> Self {
        LinearModel {
            config,
            learner,
            examples_seen: 0,
        }
    }

    /// Writes the model atomically (temporary file + rename).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), ModelError> {
        model::save(path, LINEAR_MODEL_KIND, self)
    }

    /// Reads a model written by [`LinearModel::save`]; a corrupted or foreign file is an error.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, ModelError> {
        model::load(path, LINEAR_MODEL_KIND)
    }
}
