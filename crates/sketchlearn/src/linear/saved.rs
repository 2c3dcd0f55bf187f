//! A trained linear learner as a model file: its configuration, its full state (weights AND
//! sketch/curvature state, so training can resume bit for bit) and how many examples it has seen.
//! The file format (magic number, version, checksum, atomic writes) is [`crate::model`]'s.
//!
//! Files of format version 4 (before the configuration had a separate [`Representation`]) and 5
//! (before models kept their classes and input description) are converted on load
//! (`legacy.rs`: their classes are `None`, i.e. `−1/+1`); a loaded configuration goes through
//! [`LearnerConfig::check`] like one given on a command line.
//!
//! [`Representation`]: super::Representation

use super::extras::{self, ModelExtras};
use super::legacy::{LinearModelV4, LinearModelV5};
use super::{AnyLearner, LearnerConfig, MemberWeight, Mixture};
use crate::data::{InputSpec, Schema};
use crate::labels::Classes;
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
    /// The hyper-parameters the learner was built with (the representation as resolved).
    pub config: LearnerConfig,
    /// The learner's full state.
    pub learner: AnyLearner,
    /// Examples learned so far (all passes).
    pub examples_seen: u64,
    /// A classifier's classes in the user's convention (index 0 negative, 1 positive; the
    /// learner predicts `±1`); `None` for regression and for files of format version 4 and 5,
    /// whose classes are `−1/+1`.
    pub classes: Option<Classes>,
    /// How the training input was read (`None` when unknown, e.g. format 4 and 5 files).
    pub input: Option<InputSpec>,
    /// What the model keeps besides its learner (regularisation, interactions): an optional
    /// trailer of the file ([`ModelExtras`]).
    #[serde(skip)]
    pub extras: ModelExtras,
}

impl LinearModel {
    /// A model that has seen no example yet.
    pub fn new(config: LearnerConfig, learner: AnyLearner) -> Self {
        LinearModel {
            config,
            learner,
            examples_seen: 0,
            classes: None,
            input: None,
            extras: ModelExtras::default(),
        }
    }

    /// The CSV schema of the training file, when the model was trained on CSV (kept in its
    /// [`InputSpec`]).
    pub fn schema(&self) -> Option<&Schema> {
        self.input.as_ref().and_then(|i| i.schema.as_ref())
    }

    /// The name of feature `j` where known: its CSV column (through the schema), else the
    /// names of VW features kept by `train --keep-names` ([`ModelExtras::feature_names`]).
    pub fn feature_name(&self, j: usize) -> Option<String> {
        feature_name(self.schema(), &self.extras, j)
    }

    /// The model's name in reports (`test`, `inspect`): a recovered DRP model (fixed
    /// weights) by its own description (`drp logistic lambda=… (Alg.2 iterate t=…)`), any
    /// other by its configuration ([`LearnerConfig::describe`]).
    pub fn name(&self) -> String {
        match &self.learner {
            AnyLearner::Fixed(f) => f.description().to_string(),
            _ => self.config.describe(),
        }
    }

    /// The model's mixture (`auto`, `auto-sparse`, `adagrad-grid`, whether or not its rows are
    /// scaled), if it is one ([`AnyLearner::mixture`]).
    pub fn mixture(&self) -> Option<&Mixture> {
        self.learner.mixture()
    }

    /// For a mixture (`auto`, `auto-sparse`, `adagrad-grid`): each member (described), its
    /// current weight π, i.e. which member the mixture follows on the data seen, and whether and
    /// when it retired; `None` for one learner.
    pub fn mixture_weights(&self) -> Option<Vec<MemberWeight>> {
        let mix = self.mixture()?;
        let names = self.config.mixture_members()?;
        let retired = mix.retirement().retired_at();
        Some(
            mix.member_weights()
                .into_iter()
                .zip(retired)
                .enumerate()
                .map(|(k, (weight, retired_at))| {
                    let learner = names
                        .get(k)
                        .map_or_else(|| format!("member {}", k + 1), |c| c.describe());
                    MemberWeight::new(learner, weight, retired_at)
                })
                .collect(),
        )
    }

    /// Writes the model atomically (temporary file + rename).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), ModelError> {
        extras::save(path, LINEAR_MODEL_KIND, self)
    }

    /// The model file image [`LinearModel::save`] writes (for models kept in memory or sent
    /// over a network, e.g. between cluster workers).
    pub fn to_bytes(&self) -> Result<Vec<u8>, ModelError> {
        extras::to_bytes(LINEAR_MODEL_KIND, self)
    }

    /// Reads a model written by [`LinearModel::save`] (this version or format version 4 or 5); a
    /// corrupted or foreign file, or one whose configuration does not pass
    /// [`LearnerConfig::check`], is an error.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, ModelError> {
        model::load_with(path, LINEAR_MODEL_KIND, decode)
    }

    /// [`LinearModel::load`] from a model file image (`source_name` names it in errors).
    pub fn from_bytes(bytes: &[u8], source_name: &str) -> Result<Self, ModelError> {
        model::from_bytes_with(bytes, LINEAR_MODEL_KIND, source_name, decode)
    }
}

/// Decodes a payload of format `version` and checks its configuration.
fn decode(version: u32, payload: &[u8], source_name: &str) -> Result<LinearModel, ModelError> {
    let model: LinearModel = match version {
        4 => model::decode_payload::<LinearModelV4>(payload, source_name)?.into(),
        5 => model::decode_payload::<LinearModelV5>(payload, source_name)?.into(),
        _ => extras::decode(payload, source_name)?,
    };
    let invalid = |reason: String| ModelError::Invalid {
        path: source_name.to_owned(),
        reason,
    };
    model.config.check().map_err(|e| invalid(e.to_string()))?;
    super::validate::check_model(&model).map_err(|e| invalid(e.to_string()))?;
    if model.classes.as_ref().is_some_and(|c| !c.is_binary()) {
        return Err(invalid("a binary model lists more than two classes".into()));
    }
    if !model
        .extras
        .feature_names
        .fits(super::OnlineLearner::dim(&model.learner))
    {
        return Err(invalid(
            "a feature name's index is outside the dimension".into(),
        ));
    }
    Ok(model)
}

/// The one naming policy of a model's features (linear and multiclass): the CSV schema's name,
/// else the kept VW names.
pub(crate) fn feature_name(
    schema: Option<&Schema>,
    extras: &ModelExtras,
    j: usize,
) -> Option<String> {
    schema
        .and_then(|s| s.feature_name(j))
        .or_else(|| extras.feature_names.name(j))
}
