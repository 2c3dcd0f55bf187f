//! The `sketchlearn._core` extension module: a thin layer between NumPy/SciPy/River inputs and
//! the `sketchlearn` core. Everything Python users see is written in Python on top of it
//! (`python/sketchlearn/`); this crate only walks buffers, releases the GIL and converts
//! errors.
//!
//! * [`config`]: estimator parameters → `LearnerConfig`, and the one representation choice;
//! * [`learners`]: `LinearLearners` (binary, regression, multiclass) over one core model
//!   ([`state`]), whose bytes are the CLI's model file; [`labels`]: class labels ↔ Python;
//! * [`csv_scan`]: the common schema of a list of CSV files (`sketchlearn.dask`);
//! * [`drp`]: `drp_fit` (dual random projection, batch) into a `LinearLearners`;
//! * [`fm`]: `FmLearner` (the core's factorization machines, `sketchlearn fm`'s model file);
//! * [`sketch`]: `SketchState` (FD, RFD, GFD, RP, Oja);
//! * [`rows`]: NumPy and CSR rows; [`features`]: River dicts hashed as VW does;
//! * [`errors`]: core errors → Python exceptions; [`interrupt`]: Ctrl-C during long Rust work;
//! * [`tally`]: what a learner object counts for the end-of-run warnings (refused steps,
//!   divergence).

mod config;
mod csv_scan;
mod drp;
mod errors;
mod features;
mod file_format;
mod file_run;
mod fm;
mod interrupt;
mod labels;
mod learners;
mod pickling;
mod retirement;
mod rows;
mod shrinkage;
mod sketch;
mod state;
mod tally;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// The kind tag of the model file at `path` (`linear-learner`, `multiclass-learner`,
/// `fm-learner`, …), read from its header without decoding the model.
#[pyfunction]
fn model_kind(path: std::path::PathBuf) -> PyResult<String> {
    sketchlearn::model::peek_kind(path).map_err(errors::model_error)
}

/// `(rows, stored features, distinct features)` of a file's first rows
/// ([`sketchlearn::linear::SparsitySample`]).
type FirstRows = (u64, u64, u64);

/// What [`scan_file`] returns: labels, rows, stored features, hashed, first rows.
type FileScan = (Vec<f64>, u64, u64, bool, Option<FirstRows>);

/// The walk over a LIBSVM or VW file before learning ([`sketchlearn::run::walk_file`], the
/// CLI's walk: values passed over, no Python per row): `(labels, rows, stored features,
/// hashed, first rows)` with the distinct labels in increasing order (empty unless `labels`),
/// `hashed` for VW text (`2^bits` hashed weights) and the first rows' `(rows, stored
/// features, distinct features)` ([`sketchlearn::linear::SparsityProbe`], `None` for an empty
/// file: the default's members, as `sketchlearn train` chooses them). `rows` and `stored
/// features` count every example of LIBSVM text, the first rows of VW text (hashed input's
/// representation does not depend on them). The classes of a model learned from several
/// files are found across all of them before learning, and the stored features per row
/// choose the representation as the CLI's pre-scan does (`sketchlearn.dask`). `threads=1`
/// walks on the calling thread alone (else a large plain file on two). CSV is refused (its
/// labels are a column chosen by name). A bad label or index is an error at its file, line
/// and column; a bad value is left to the learning pass. More distinct labels than the
/// library's limit is an error at the line of the one too many.
#[pyfunction]
#[pyo3(signature = (path, format="auto", zero_based=false, *, labels=true, threads=None))]
fn scan_file(
    py: Python<'_>,
    path: std::path::PathBuf,
    format: &str,
    zero_based: bool,
    labels: bool,
    threads: Option<usize>,
) -> PyResult<FileScan> {
    use sketchlearn::labels::ClassLabel;
    use sketchlearn::run::{walk_file, ReadOptions};
    let two_threads = !file_run::one_thread(threads)?;
    let read = ReadOptions {
        format: format.parse().map_err(PyValueError::new_err)?,
        zero_based,
        ..ReadOptions::default()
    };
    let path = path.to_string_lossy().into_owned();
    let found = py
        .detach(|| walk_file(&path, &read, labels, two_threads))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let labels = found
        .labels
        .iter()
        .flat_map(|scan| scan.labels())
        .filter_map(|(label, _)| match label {
            ClassLabel::Number(v) => Some(*v),
            ClassLabel::Text(_) => None,
        })
        .collect();
    let first_rows = found.sample.map(|s| (s.rows, s.nnz, s.distinct));
    Ok((labels, found.rows, found.nnz, found.hashed, first_rows))
}

/// The compiled core of the `sketchlearn` Python package.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<learners::LinearLearners>()?;
    m.add_class::<sketch::SketchState>()?;
    m.add_class::<fm::FmLearner>()?;
    m.add_class::<csv_scan::CsvScan>()?;
    m.add_function(wrap_pyfunction!(model_kind, m)?)?;
    m.add_function(wrap_pyfunction!(labels::label_targets, m)?)?;
    m.add_function(wrap_pyfunction!(labels::case_twins, m)?)?;
    m.add_function(wrap_pyfunction!(scan_file, m)?)?;
    m.add_function(wrap_pyfunction!(csv_scan::scan_csv_files, m)?)?;
    m.add_function(wrap_pyfunction!(file_format::py_file_format, m)?)?;
    m.add_function(wrap_pyfunction!(file_format::reads_as_csv, m)?)?;
    m.add_function(wrap_pyfunction!(file_format::resolved_format, m)?)?;
    m.add_function(wrap_pyfunction!(drp::drp_fit, m)?)?;
    m.add("MODEL_FORMAT_VERSION", sketchlearn::model::FORMAT_VERSION)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
