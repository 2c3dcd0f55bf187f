//! How the core's errors become Python exceptions: invalid parameters and bad input are
//! `ValueError`, unreadable model files `OSError`/`ValueError` as Python users expect.

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::PyErr;
use sketchlearn::linear::LearnError;
use sketchlearn::model::ModelError;
use sketchlearn::SketchError;

/// A learner error as a `ValueError`; `row` (0-based) names the example when there is one.
pub fn learn_error(e: LearnError, row: Option<usize>) -> PyErr {
    match row {
        Some(r) => PyValueError::new_err(format!("row {r}: {e}")),
        None => PyValueError::new_err(e.to_string()),
    }
}

/// A model-file error: I/O failures are `OSError`, anything else (corrupted, foreign or newer
/// file) is `ValueError`.
pub fn model_error(e: ModelError) -> PyErr {
    match e {
        ModelError::Io { .. } => PyOSError::new_err(e.to_string()),
        other => PyValueError::new_err(other.to_string()),
    }
}

/// A sketch error as a `ValueError`.
pub fn sketch_error(e: SketchError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// A merge error: states that cannot be merged soundly (`Unsupported`) are
/// `NotImplementedError`, different configurations `ValueError`.
pub fn merge_error(e: sketchlearn::merge::MergeError) -> PyErr {
    match e {
        sketchlearn::merge::MergeError::Unsupported(_) => {
            pyo3::exceptions::PyNotImplementedError::new_err(e.to_string())
        }
        other => PyValueError::new_err(other.to_string()),
    }
}
