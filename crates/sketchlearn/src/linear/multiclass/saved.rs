//! Multiclass model files and the per-member representation choice.

use super::{AnyMulticlass, MulticlassConfig, MulticlassLearner, Reduction};
use crate::data::InputSpec;
use crate::labels::{ClassLabel, Classes};
use crate::linear::extras::{self, WithExtras};
use crate::linear::representation::fd_sketch_fits;
use crate::linear::{auto_sparse, InputProfile, LearnError, ModelExtras, Representation};
use crate::model::{self, ModelError};
use crate::Row;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The kind tag of a multiclass model file.
pub const MULTICLASS_MODEL_KIND: &str = "multiclass-learner";

impl MulticlassConfig {
    /// The configuration for an input of dimension `dim` (`hashed` for VW text, `avg_nnz` the
    /// average non-zeros per example when known): one-against-all members whose curvature has a
    /// sparse-time variant get it when [`auto_sparse`] says so for that member — the same rule
    /// as for a binary learner, so `K` members on R8's 23,585 features cost `O(K·(m² + m·nnz))`
    /// per example instead of `O(K·m·d)`. The softmax learner over a doubling FD/RFD, an RP or
    /// an Oja sketch (with or without `diag`) becomes the sparse-time
    /// [`SparseSoftmax`](crate::linear::sparse::SparseSoftmax) by the same rule (applied to a
    /// Newton learner of its curvature, size and intercept), recorded in
    /// `member.representation`. Before that, the untuned softmax learner's curvature is chosen
    /// for the input when [`MulticlassConfig::sketch_from_input`] says so (`sketch_choice.rs`:
    /// fd-fast on sparse input, rfd-fast on dense input).
    ///
    /// ```
    /// use sketchlearn::linear::multiclass::MulticlassConfig;
    /// let c = MulticlassConfig::default();
    /// use sketchlearn::linear::Representation;
    /// let sparse = c.for_input(20_000, false, Some(50.0)).member.representation;
    /// assert_eq!(sparse, Representation::Sparse);
    /// let dense = c.for_input(180, false, Some(45.0)).member.representation;
    /// assert_eq!(dense, Representation::Auto);
    /// use sketchlearn::linear::multiclass::Reduction;
    /// let softmax = MulticlassConfig { reduction: Reduction::Softmax, ..c };
    /// let sparse = softmax.for_input(20_000, false, Some(50.0)).member.representation;
    /// assert_eq!(sparse, Representation::Sparse);
    /// ```
    pub fn for_input(&self, dim: usize, hashed: bool, avg_nnz: Option<f64>) -> MulticlassConfig {
        let input = InputProfile {
            dim,
            hashed,
            avg_nnz,
            sample: None,
        };
        let mut c = self.clone().with_sketch_for(&input);
        let sparse = match c.reduction {
            Reduction::OneVsAll => auto_sparse(&c.member, &input),
            // The softmax learner keeps the `d/10` rule ([`InputProfile::is_sparse`]; the FD
            // cost rule of `auto_sparse` was measured for the binary FD-SON members only).
            Reduction::Softmax => {
                c.softmax_has_sparse()
                    && c.member.representation == Representation::Auto
                    && (!c.curvature.is_fd() || fd_sketch_fits(dim, c.bias, c.size))
                    && input.is_sparse()
            }
        };
        if sparse {
            c.member.representation = Representation::Sparse;
        }
        c
    }
}

/// A multiclass learner with what it needs to be used again: its configuration, state, the
/// user's classes (index `k` of the learner is `classes.labels()[k]`) and the examples seen.
///
/// ```
/// use sketchlearn::labels::Classes;
/// use sketchlearn::linear::multiclass::{MulticlassConfig, MulticlassModel};
/// use sketchlearn::Row;
/// let classes = Classes::parse_list("cat,dog,owl").unwrap();
/// let config = MulticlassConfig { classes: 3, ..Default::default() };
/// let mut m = MulticlassModel::build(config, classes, 2).unwrap();
/// m.learn(Row::Dense(&[1.0, 0.0]), 2, 1.0).unwrap();
/// let dir = std::env::temp_dir().join(format!("sketchlearn-doc-mc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// m.save(dir.join("m.model")).unwrap();
/// let back = MulticlassModel::load(dir.join("m.model")).unwrap();
/// assert_eq!(back.examples_seen, 1);
/// assert_eq!(back.predict_label(Row::Dense(&[1.0, 0.0])).to_string(), "owl");
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MulticlassModel {
    /// The hyper-parameters the learner was built with (after [`MulticlassConfig::for_input`]).
    pub config: MulticlassConfig,
    /// The learner's full state.
    pub learner: AnyMulticlass,
    /// The user's classes.
    pub classes: Classes,
    /// Examples learned so far (all passes).
    pub examples_seen: u64,
    /// How the training input was read (`None` when unknown, e.g. format 5 files).
    pub input: Option<InputSpec>,
    /// The one-against-all members' L1/L2 penalty and the VW interactions (`-q`): an optional
    /// trailer of the file, as for a linear model ([`ModelExtras`]).
    #[serde(skip)]
    pub extras: ModelExtras,
}

impl WithExtras for MulticlassModel {
    fn extras(&self) -> &ModelExtras {
        &self.extras
    }
    fn extras_mut(&mut self) -> &mut ModelExtras {
        &mut self.extras
    }
}

/// `MulticlassModel` as of format version 5 (no input description).
#[derive(Deserialize)]
struct MulticlassModelV5 {
    config: MulticlassConfig,
    learner: AnyMulticlass,
    classes: Classes,
    examples_seen: u64,
}

impl MulticlassModel {
    /// The CSV schema of the training file, when the model was trained on CSV.
    pub fn schema(&self) -> Option<&crate::data::Schema> {
        self.input.as_ref().and_then(|i| i.schema.as_ref())
    }

    /// The name of feature `j` where known ([`LinearModel::feature_name`]'s policy).
    ///
    /// [`LinearModel::feature_name`]: crate::linear::LinearModel::feature_name
    pub fn feature_name(&self, j: usize) -> Option<String> {
        crate::linear::saved::feature_name(self.schema(), &self.extras, j)
    }

    /// A model of `config` over `classes` (`config.classes` is set to their number) for input
    /// dimension `dim`, validating the configuration.
    pub fn build(
        config: MulticlassConfig,
        classes: Classes,
        dim: usize,
    ) -> Result<MulticlassModel, LearnError> {
        let config = MulticlassConfig {
            classes: classes.len(),
            ..config
        };
        Ok(MulticlassModel {
            learner: config.build(dim)?,
            config,
            classes,
            examples_seen: 0,
            input: None,
            extras: ModelExtras::default(),
        })
    }

    /// Learns `(x, class)`, counting the example; see [`MulticlassLearner::learn`].
    pub fn learn(&mut self, x: Row<'_>, class: usize, weight: f64) -> Result<Vec<f64>, LearnError> {
        let p = self.learner.learn(x, class, weight);
        if !matches!(p, Err(LearnError::InvalidParameter(_))) {
            self.examples_seen += 1;
        }
        p
    }

    /// The user's label of the most probable class of `x`.
    pub fn predict_label(&self, x: Row<'_>) -> &ClassLabel {
        &self.classes.labels()[self.learner.predict_class(x)]
    }

    /// Writes the model atomically (temporary file + rename).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), ModelError> {
        extras::save(path, MULTICLASS_MODEL_KIND, self)
    }

    /// The model file image [`MulticlassModel::save`] writes.
    pub fn to_bytes(&self) -> Result<Vec<u8>, ModelError> {
        extras::to_bytes(MULTICLASS_MODEL_KIND, self)
    }

    /// Reads a model written by [`MulticlassModel::save`] (this format version or 5 to 8); a
    /// corrupted or foreign file, or one whose learner disagrees with its classes, is an error.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, ModelError> {
        model::load_with(path, MULTICLASS_MODEL_KIND, decode)
    }

    /// [`MulticlassModel::load`] from a model file image (`source_name` names it in errors).
    ///
    /// ```
    /// use sketchlearn::labels::Classes;
    /// use sketchlearn::linear::multiclass::{MulticlassConfig, MulticlassModel, Reduction};
    /// let classes = Classes::parse_list("a,b,c").unwrap();
    /// let m = MulticlassModel::build(MulticlassConfig::default(), classes.clone(), 2).unwrap();
    /// let back = MulticlassModel::from_bytes(&m.to_bytes().unwrap(), "memory").unwrap();
    /// assert_eq!(back.classes.to_list(), "a,b,c");
    /// let softmax = MulticlassConfig { reduction: Reduction::Softmax, ..Default::default() };
    /// let fresh = MulticlassModel::build(softmax, classes, 2).unwrap(); // nothing learned yet
    /// assert!(MulticlassModel::from_bytes(&fresh.to_bytes().unwrap(), "memory").is_ok());
    /// ```
    pub fn from_bytes(bytes: &[u8], source_name: &str) -> Result<Self, ModelError> {
        model::from_bytes_with(bytes, MULTICLASS_MODEL_KIND, source_name, decode)
    }
}

/// Decodes a payload of format `version` (5 has no input description; 4 is refused) and
/// checks it.
fn decode(version: u32, payload: &[u8], name: &str) -> Result<MulticlassModel, ModelError> {
    let m = match version {
        5 => {
            let v5: MulticlassModelV5 = model::decode_payload(payload, name)?;
            MulticlassModel {
                config: v5.config,
                learner: v5.learner,
                classes: v5.classes,
                examples_seen: v5.examples_seen,
                input: None,
                extras: ModelExtras::default(),
            }
        }
        4 => {
            return Err(ModelError::UnsupportedVersion {
                path: name.to_owned(),
                found: 4,
                oldest: 5,
                supported: model::FORMAT_VERSION,
            })
        }
        _ => extras::decode::<MulticlassModel>(payload, name)?,
    };
    if m.learner.classes() != m.classes.len() || m.config.classes != m.classes.len() {
        return Err(ModelError::Decode {
            path: name.to_owned(),
            message: format!(
                "the learner has {} classes but the file lists {}",
                m.learner.classes(),
                m.classes.len()
            ),
        });
    }
    check_loaded(&m).map_err(|reason| ModelError::Invalid {
        path: name.to_owned(),
        reason,
    })?;
    Ok(m)
}

/// Checks a decoded multiclass model's state (issue 26): no NaN anywhere, every one-vs-all
/// member as a binary model is checked (`linear/validate.rs`), a softmax learner's sizes and
/// parameters, and finite scores for the zero row — a file with a valid checksum but numbers no
/// training produces is an error, not a panic or a NaN later.
fn check_loaded(m: &MulticlassModel) -> Result<(), String> {
    crate::linear::validate::check_no_nan(&m.learner).map_err(|e| e.to_string())?;
    match &m.learner {
        AnyMulticlass::OneVsAll(o) => {
            for (k, member) in o.members().iter().enumerate() {
                crate::linear::validate::check_learner(member)
                    .map_err(|e| format!("class {k}: {e}"))?;
            }
        }
        softmax => check_softmax(softmax)?,
    }
    let scores = m.learner.scores(Row::Sparse {
        indices: &[],
        values: &[],
    });
    if scores.iter().any(|s| !s.is_finite()) {
        return Err(format!("the model scores {scores:?}"));
    }
    Ok(())
}

/// A softmax learner as [`MulticlassConfig::build`] makes it (a dense- or sparse-time learner,
/// possibly inside [`RowScaled`](super::RowScaled) and, sparse-time, inside
/// [`DiagonalScaled`](super::DiagonalScaled)); a wrapper around anything else is refused.
fn check_softmax(l: &AnyMulticlass) -> Result<(), String> {
    let sparse = |e: String| format!("sparse softmax: {e}");
    match l {
        AnyMulticlass::OneVsAll(_) => Err("a softmax wrapper around one-against-all".into()),
        AnyMulticlass::Softmax(s) => s.check_loaded(),
        AnyMulticlass::SparseSoftmax(s) => s.check_loaded().map_err(sparse),
        AnyMulticlass::SparseSoftmaxRp(s) => s.check_loaded().map_err(sparse),
        AnyMulticlass::SparseSoftmaxOja(s) => s.check_loaded().map_err(sparse),
        AnyMulticlass::RowScaled(r) => {
            r.check_scale()?;
            match r.inner() {
                AnyMulticlass::RowScaled(_) => Err("a row-scaled learner wraps another".into()),
                inner => check_softmax(inner),
            }
        }
        AnyMulticlass::DiagonalScaled(d) => {
            d.check_loaded()?;
            match d.inner() {
                inner @ (AnyMulticlass::SparseSoftmax(_)
                | AnyMulticlass::SparseSoftmaxRp(_)
                | AnyMulticlass::SparseSoftmaxOja(_)) => check_softmax(inner),
                _ => Err("diagonal adaptation wraps a sparse-time softmax learner".into()),
            }
        }
    }
}
