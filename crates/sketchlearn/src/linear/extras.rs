//! [`ModelExtras`]: what a linear model file keeps besides what format version 6 holds
//! (configuration, learner state, example count, classes and [`InputSpec`] — the CSV columns
//! live there): its L1/L2 regularisation and its VW namespace interactions.
//!
//! # In the file: an optional trailer
//!
//! The extras are written **after** the [`LinearModel`] value in the same checksummed payload
//! (postcard encodes a pair as its two values one after the other), and only when there is
//! something to keep: a model without extras has exactly the payload of format version 6, so
//! existing files, golden hashes and other readers are unchanged; a model with extras is read by
//! this build and refused by older ones (their decoder finds bytes left over), never misread.
//! The format version stays the same: the trailer is optional, not a new layout. The names of
//! hashed VW features ([`FeatureNames`], `train --keep-names`) follow as a second optional
//! trailer, written only when there are names, on the same terms.
//!
//! [`InputSpec`]: crate::data::InputSpec

use super::{LinearModel, Regularization};
use crate::data::{FeatureNames, Interactions};
use crate::model::{self, ModelError};
use serde::{Deserialize, Serialize};

/// What a linear model keeps besides its learner (see the [module](self) documentation).
///
/// ```
/// use sketchlearn::linear::{LearnerConfig, LinearModel, ModelExtras, Regularization};
/// let config = LearnerConfig::default();
/// let mut model = LinearModel::new(config.clone(), config.build(2).unwrap());
/// assert!(model.extras.is_empty());
/// model.extras.regularization = Regularization { l1: 1e-3, l2: 0.0 };
/// let back = LinearModel::from_bytes(&model.to_bytes().unwrap(), "memory").unwrap();
/// assert_eq!(back.extras, model.extras);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelExtras {
    /// The L1/L2 regularisation the learner applies (none by default).
    pub regularization: Regularization,
    /// VW namespace pairs crossed into quadratic features (`-q ab`; none by default).
    pub interactions: Interactions,
    /// The names of hashed VW features (`train --keep-names`; none by default): a second
    /// trailer after the first, so a file without names is byte for byte as before.
    #[serde(skip)]
    pub feature_names: FeatureNames,
}

impl ModelExtras {
    /// Nothing to keep (the file then has no trailer).
    pub fn is_empty(&self) -> bool {
        *self == ModelExtras::default()
    }
}

/// A model file value that carries [`ModelExtras`] as an optional trailer (a linear model, a
/// multiclass model): the value itself serializes without them (`#[serde(skip)]`).
pub(crate) trait WithExtras: Serialize + serde::de::DeserializeOwned {
    /// The extras kept in the trailer.
    fn extras(&self) -> &ModelExtras;
    /// The extras, to fill in from the trailer.
    fn extras_mut(&mut self) -> &mut ModelExtras;
}

impl WithExtras for LinearModel {
    fn extras(&self) -> &ModelExtras {
        &self.extras
    }
    fn extras_mut(&mut self) -> &mut ModelExtras {
        &mut self.extras
    }
}

/// The payload of `m`: the model, then its extras when there are any.
pub(crate) fn to_bytes<M: WithExtras>(kind: &str, m: &M) -> Result<Vec<u8>, ModelError> {
    let e = m.extras();
    if e.is_empty() {
        model::to_bytes(kind, m)
    } else if e.feature_names.is_empty() {
        model::to_bytes(kind, &(m, e))
    } else {
        model::to_bytes(kind, &(m, e, &e.feature_names))
    }
}

/// Decodes a payload of the current layout: the model, then (if bytes remain) its extras.
pub(crate) fn decode<M: WithExtras>(payload: &[u8], source_name: &str) -> Result<M, ModelError> {
    let (mut m, rest) =
        postcard::take_from_bytes::<M>(payload).map_err(|e| ModelError::Decode {
            path: source_name.to_owned(),
            message: e.to_string(),
        })?;
    if !rest.is_empty() {
        let (extras, names) =
            postcard::take_from_bytes::<ModelExtras>(rest).map_err(|e| ModelError::Decode {
                path: source_name.to_owned(),
                message: e.to_string(),
            })?;
        *m.extras_mut() = extras;
        if !names.is_empty() {
            m.extras_mut().feature_names = model::decode_payload(names, source_name)?;
        }
    }
    Ok(m)
}

/// Writes `m` atomically ([`model::save`]), with its extras when there are any.
pub(crate) fn save<M: WithExtras>(
    path: impl AsRef<std::path::Path>,
    kind: &str,
    m: &M,
) -> Result<(), ModelError> {
    let e = m.extras();
    if e.is_empty() {
        model::save(path, kind, m)
    } else if e.feature_names.is_empty() {
        model::save(path, kind, &(m, e))
    } else {
        model::save(path, kind, &(m, e, &e.feature_names))
    }
}
