//! A model file as `train -i`, `test`, `predict` and `inspect` take it: a binary/regression
//! ([`LinearModel`]) or a multiclass ([`MulticlassModel`]) model, told apart by its kind tag,
//! and the check of new data against the input the model was trained on (issue 25, item 5).

use anyhow::{bail, Result};
use sketchlearn::data::{Format, InputSpec, Schema};
use sketchlearn::linear::multiclass::{MulticlassModel, MULTICLASS_MODEL_KIND};
use sketchlearn::linear::LinearModel;

/// A loaded model.
#[allow(clippy::large_enum_variant)] // one per command
pub enum AnyModel {
    /// Binary or regression.
    Linear(LinearModel),
    /// Multiclass.
    Multiclass(MulticlassModel),
}

impl AnyModel {
    /// Loads the model at `path`, of either kind.
    pub fn load(path: &str) -> Result<AnyModel> {
        Ok(match sketchlearn::model::peek_kind(path)?.as_str() {
            MULTICLASS_MODEL_KIND => AnyModel::Multiclass(MulticlassModel::load(path)?),
            _ => AnyModel::Linear(LinearModel::load(path)?),
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
}

/// Checks data `file` read as `format` (`Auto` resolved from the name), `zero_based` and
/// `bits` against the model's input; returns the resolved format. A model trained on CSV reads
/// CSV whatever the name says (its schema names the columns).
pub fn check_input(
    model: &AnyModel,
    file: &str,
    format: Format,
    zero_based: bool,
    bits: Option<u32>,
) -> Result<Format> {
    let given = format;
    let mut format = format.resolve(file);
    let Some(spec) = model.input() else {
        return Ok(format);
    };
    if spec.format == Format::Csv && given == Format::Auto {
        format = Format::Csv;
    }
    if let Err(e) = spec.check(format, zero_based, bits, file) {
        bail!("{e}");
    }
    Ok(format)
}
