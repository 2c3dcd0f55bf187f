//! The `sketchlearn._core` extension module: a thin layer between NumPy/SciPy/River inputs and
//! the `sketchlearn` core. Everything Python users see is written in Python on top of it
//! (`python/sketchlearn/`); this crate only walks buffers, releases the GIL and converts
//! errors.
//!
//! * [`config`]: estimator parameters → `LearnerConfig`, and the one representation choice;
//! * [`learners`]: `LinearLearners` (binary, regression, multiclass) over one core model
//!   ([`state`]), whose bytes are the CLI's model file; [`labels`]: class labels ↔ Python;
//! * [`drp`]: `drp_fit` (dual random projection, batch) into a `LinearLearners`;
//! * [`fm`]: `FmLearner` (the core's factorization machines, `sketchlearn fm`'s model file);
//! * [`sketch`]: `SketchState` (FD, RFD, GFD, RP, Oja);
//! * [`rows`]: NumPy and CSR rows; [`features`]: River dicts hashed as VW does;
//! * [`errors`]: core errors → Python exceptions.

mod config;
mod drp;
mod errors;
mod features;
mod fm;
mod labels;
mod learners;
mod pickling;
mod rows;
mod shrinkage;
mod sketch;
mod state;

use pyo3::prelude::*;

/// The kind tag of the model file at `path` (`linear-learner`, `multiclass-learner`,
/// `fm-learner`, …), read from its header without decoding the model.
#[pyfunction]
fn model_kind(path: std::path::PathBuf) -> PyResult<String> {
    sketchlearn::model::peek_kind(path).map_err(errors::model_error)
}

/// The compiled core of the `sketchlearn` Python package.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<learners::LinearLearners>()?;
    m.add_class::<sketch::SketchState>()?;
    m.add_class::<fm::FmLearner>()?;
    m.add_function(wrap_pyfunction!(model_kind, m)?)?;
    m.add_function(wrap_pyfunction!(drp::drp_fit, m)?)?;
    m.add("MODEL_FORMAT_VERSION", sketchlearn::model::FORMAT_VERSION)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
