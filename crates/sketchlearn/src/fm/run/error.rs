//! [`FmRunError`]: everything a factorization-machine run ([`train_and_test`](super::train_and_test),
//! [`score_pairs`](super::score_pairs), [`score_rows`](super::score_rows)) can fail on. Each
//! variant shows the error it carries as it is (`transparent`), so a front end prints the same
//! message, with the same chain of causes, as the function that failed.

use crate::data::ratings::RatingsError;
use crate::data::ParseError;
use crate::labels::LabelError;
use crate::linear::LearnError;
use crate::model::ModelError;

/// Why an FM run stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FmRunError {
    /// The input could not be opened, read or parsed (file, line, column).
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// A ratings file could not be read or encoded (a rating out of scale, an unseen id with
    /// `unseen_error`, a bad side value, …).
    #[error(transparent)]
    Ratings(#[from] RatingsError),
    /// A class label could not be mapped to ±1.
    #[error(transparent)]
    Label(#[from] LabelError),
    /// The configuration is invalid, or the learner refused to compact.
    #[error(transparent)]
    Learner(#[from] LearnError),
    /// The learner failed on a training example (1-based).
    #[error("learning example {example}: {error}")]
    Learn {
        /// The example (1-based, in file order).
        example: u64,
        /// The learner's error.
        error: LearnError,
    },
    /// A model could not be read or written.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// A line of the input could not be read.
    #[error("{source_name}:{line}: reading")]
    Read {
        /// The input's name.
        source_name: String,
        /// 1-based line.
        line: u64,
        /// Why.
        #[source]
        error: std::io::Error,
    },
    /// The predictions could not be written.
    #[error(transparent)]
    Write(#[from] std::io::Error),
    /// The observer or the prediction sink failed (e.g. its output cannot be written).
    #[error(transparent)]
    Output(#[from] crate::run::ObserverError),
    /// The options do not fit each other or the input (a message naming the option).
    #[error("{0}")]
    Options(String),
}

impl FmRunError {
    pub(crate) fn options(message: impl Into<String>) -> Self {
        FmRunError::Options(message.into())
    }
}
