//! A saved linear model of either kind — binary/regression ([`LinearModel`]) or multiclass
//! ([`MulticlassModel`]) — told apart by its kind tag, and the check of new data against the
//! input it was trained on. What `train -i`, `test`, `predict` and `inspect` load.

use crate::data::{Format, InputSpec, Schema};
use crate::linear::multiclass::{MulticlassModel, MULTICLASS_MODEL_KIND};
use crate::linear::LinearModel;
use crate::model::ModelError;
use std::path::Path;

/// A loaded linear model of either kind.
///
/// ```
/// use sketchlearn::linear::{LearnerConfig, LinearModel};
/// use sketchlearn::model::AnyModel;
/// let config = LearnerConfig::default();
/// let model = LinearModel::new(config.clone(), config.build(3).unwrap());
/// let path = std::env::temp_dir().join(format!("doc-any-model-{}.skl", std::process::id()));
/// model.save(&path).unwrap();
/// assert!(matches!(AnyModel::load(&path).unwrap(), AnyModel::Linear(_)));
/// # std::fs::remove_file(&path).ok();
/// ```
#[allow(clippy::large_enum_variant)] // one per command
pub enum AnyModel {
    /// Binary or regression.
    Linear(LinearModel),
    /// Multiclass.
    Multiclass(MulticlassModel),
}

impl AnyModel {
    /// Loads the model at `path`, of either kind.
    pub fn load(path: impl AsRef<Path>) -> Result<AnyModel, ModelError> {
        let (bytes, kind, name) = super::read_with_kind(path.as_ref())?;
        Self::from_image(&bytes, &kind, &name)
    }

    /// The model of kind `kind` (read by the caller) from its file image `bytes`.
    pub(crate) fn from_image(bytes: &[u8], kind: &str, name: &str) -> Result<Self, ModelError> {
        Ok(match kind {
            MULTICLASS_MODEL_KIND => {
                AnyModel::Multiclass(MulticlassModel::from_bytes(bytes, name)?)
            }
            _ => AnyModel::Linear(LinearModel::from_bytes(bytes, name)?),
        })
    }

    /// How its training input was read (`None` for files of format 4 and 5).
    pub fn input(&self) -> Option<&InputSpec> {
        match self {
            AnyModel::Linear(m) => m.input.as_ref(),
            AnyModel::Multiclass(m) => m.input.as_ref(),
        }
    }

    /// The CSV schema of a model trained on CSV.
    pub fn schema(&self) -> Option<&Schema> {
        self.input().and_then(|i| i.schema.as_ref())
    }

    /// Checks data `file` read as `format` (`Auto` resolved from the name), `zero_based` and
    /// `bits` against the model's input ([`InputSpec::check`]); returns the resolved format. A
    /// model trained on CSV reads CSV whatever the name says (its schema names the columns).
    pub fn check_input(
        &self,
        file: &str,
        format: Format,
        zero_based: bool,
        bits: Option<u32>,
    ) -> Result<Format, String> {
        let mut resolved = format.resolve(file);
        let Some(spec) = self.input() else {
            return Ok(resolved);
        };
        if spec.format == Format::Csv && format == Format::Auto && !resolved.is_csv() {
            resolved = Format::Csv;
        }
        spec.check(resolved, zero_based, bits, file)?;
        Ok(resolved)
    }
}
