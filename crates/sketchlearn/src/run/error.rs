//! [`RunError`]: everything a run can fail on, each naming where.

use crate::data::ParseError;
use crate::linear::{ConfigError, LearnError};
use crate::model::ModelError;

/// Why [`train`](super::train) or [`evaluate`](super::evaluate) stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The input could not be opened, read or parsed (the error names file:line:column).
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// The learner refused an example (other than a refused step, which is counted, not
    /// fatal): e.g. a feature index outside the model's dimension.
    #[error("{source_name}:{line}: {error}")]
    Learn {
        /// The input's name.
        source_name: String,
        /// The example's line.
        line: u64,
        /// The learner's error (in the message, so not also a `source`: a chain printer such as
        /// anyhow's `{:#}` would print it twice).
        error: LearnError,
    },
    /// The learner's configuration is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A model could not be read or written.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The run's options do not fit the input (e.g. hash bits for LIBSVM input, an empty
    /// input).
    #[error("{0}")]
    Options(String),
    /// The observer refused to start ([`Observer::started`](super::Observer::started)).
    #[error(transparent)]
    Observer(super::ObserverError),
}

impl RunError {
    pub(crate) fn options(message: impl Into<String>) -> Self {
        RunError::Options(message.into())
    }
}

/// The one message of an input that holds no example (`train`, its walk, its label scan and
/// `fm`): what such an input can hold, so that a CSV file with only its header line does not
/// read as an empty file.
pub(crate) fn no_examples(name: &str) -> String {
    format!(
        "no examples in {name}: the input is empty or holds only blank lines, comments or a CSV \
         header line"
    )
}
