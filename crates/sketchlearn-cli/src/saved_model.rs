//! A model file as `train -i`, `test`, `predict` and `inspect` take it: the library's
//! [`AnyModel`], and the check of new data against the input the model was trained on
//! (issue 25, item 5).

use anyhow::Result;
use sketchlearn::data::Format;
pub use sketchlearn::model::AnyModel;

/// [`AnyModel::check_input`], its message as an error.
pub fn check_input(
    model: &AnyModel,
    file: &str,
    format: Format,
    zero_based: bool,
    bits: Option<u32>,
) -> Result<Format> {
    model
        .check_input(file, format, zero_based, bits)
        .map_err(anyhow::Error::msg)
}
