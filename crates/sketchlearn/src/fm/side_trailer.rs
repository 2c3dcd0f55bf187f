//! The optional trailer of an FM model file: the ratings encoder's side-feature columns
//! ([`SideColumns`]), written after the [`FmModel`] value in the same checksummed payload
//! (postcard encodes a pair as its two values one after the other) and only when the model has
//! side columns. A model without them has exactly the payload it had before side columns
//! existed, so existing files and their bytes are unchanged; a file with the trailer is refused
//! by older builds (their decoder finds bytes left over), never misread. The same scheme as the
//! linear models' [`ModelExtras`](crate::linear::ModelExtras).

use super::FmModel;
use crate::data::side_columns::SideColumns;
use crate::linear::OnlineLearner;
use crate::model::{self, ModelError};

/// Decodes an FM payload: the model, then (if bytes remain) its side columns, which need a
/// ratings encoder and must give the learner's dimension.
pub(super) fn decode(_version: u32, payload: &[u8], name: &str) -> Result<FmModel, ModelError> {
    let (mut m, rest) =
        postcard::take_from_bytes::<FmModel>(payload).map_err(|e| ModelError::Decode {
            path: name.to_owned(),
            message: e.to_string(),
        })?;
    if rest.is_empty() {
        return Ok(m);
    }
    let columns: SideColumns = model::decode_payload(rest, name)?;
    let invalid = |reason: String| ModelError::Invalid {
        path: name.to_owned(),
        reason,
    };
    columns.check().map_err(invalid)?;
    let encoder = (m.encoder.as_mut())
        .ok_or_else(|| invalid("side columns without a ratings encoder".into()))?;
    encoder.set_side_columns(Some(columns));
    if encoder.dim() != m.learner.dim() {
        return Err(invalid(format!(
            "the ratings encoder with its side columns gives {} features, the learner has {}",
            encoder.dim(),
            m.learner.dim()
        )));
    }
    Ok(m)
}
