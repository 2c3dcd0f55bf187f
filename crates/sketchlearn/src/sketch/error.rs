//! Errors raised by the streaming sketches.

use crate::linalg::LinalgError;

/// What went wrong while building or updating a sketch.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SketchError {
    /// A hyper-parameter is out of its domain (e.g. sketch size 0, negative α, NaN).
    #[error("invalid parameter: {0}")]
    InvalidParameter(String),
    /// A row has a feature index outside the sketch's dimension.
    #[error("row has (0-based) feature index {index} but the sketch has dimension {dim}")]
    DimensionMismatch {
        /// The offending 0-based index.
        index: usize,
        /// The sketch's dimension.
        dim: usize,
    },
    /// A row (or its scale) is NaN or infinite, or the sketch overflowed.
    #[error("non-finite value: {0}")]
    NonFinite(String),
    /// Two sketches cannot be merged.
    #[error("cannot merge: {0}")]
    Incompatible(String),
    /// A dense decomposition failed.
    #[error(transparent)]
    Linalg(#[from] LinalgError),
}

/// Checks a row before insertion: finite values, indices inside `dim`.
pub(crate) fn check_row(row: &crate::Row<'_>, dim: usize) -> Result<(), SketchError> {
    let need = row.max_index_plus_one();
    if need > dim {
        return Err(SketchError::DimensionMismatch {
            index: need - 1,
            dim,
        });
    }
    // The vectorised test without an early exit (a row is almost always finite).
    let finite = match row {
        crate::Row::Dense(v) => crate::data::all_finite(v),
        crate::Row::Sparse { values, .. } => crate::data::all_finite(values),
    };
    if !finite {
        return Err(SketchError::NonFinite(
            "row contains NaN or infinity".into(),
        ));
    }
    Ok(())
}

/// Validates a sketch size (must be at least 1).
pub(crate) fn check_size(m: usize) -> Result<(), SketchError> {
    if m == 0 {
        return Err(SketchError::InvalidParameter(
            "sketch size must be at least 1".into(),
        ));
    }
    Ok(())
}

/// Validates a non-negative finite scalar.
pub(crate) fn check_nonneg(name: &str, x: f64) -> Result<(), SketchError> {
    if !x.is_finite() || x < 0.0 {
        return Err(SketchError::InvalidParameter(format!(
            "{name} must be finite and >= 0, got {x}"
        )));
    }
    Ok(())
}

/// Validates a positive finite scalar.
pub(crate) fn check_pos(name: &str, x: f64) -> Result<(), SketchError> {
    if !x.is_finite() || x <= 0.0 {
        return Err(SketchError::InvalidParameter(format!(
            "{name} must be finite and > 0, got {x}"
        )));
    }
    Ok(())
}
