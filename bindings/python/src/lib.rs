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
//! * [`errors`]: core errors → Python exceptions; [`interrupt`]: Ctrl-C during long Rust work.

mod config;
mod csv_scan;
mod drp;
mod errors;
mod features;
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

/// One pass over a LIBSVM or VW file (`.gz` read through) by the Rust reader, no Python per
/// row: `(labels, rows, stored features, hashed, first rows)` with the distinct labels in
/// increasing order, `hashed` for VW text (`2^bits` hashed weights) and the first rows'
/// `(rows, stored features, distinct features)` ([`sketchlearn::linear::SparsityProbe`], `None`
/// for an empty file: the default's members, as `sketchlearn train` chooses them). The
/// classes of a model learned from several files are found across all of them before
/// learning, and the stored features per row choose the representation as the CLI's
/// pre-scan does (`sketchlearn.dask`). CSV is refused (its labels are a column chosen by
/// name). More distinct labels than the library's limit is an error at the line of the one
/// too many.
#[pyfunction]
#[pyo3(signature = (path, format="auto", zero_based=false))]
fn scan_file(
    py: Python<'_>,
    path: std::path::PathBuf,
    format: &str,
    zero_based: bool,
) -> PyResult<FileScan> {
    use sketchlearn::data::{ClassScan, Example, ExampleReader, ExampleSource, Format};
    use sketchlearn::labels::ClassLabel;
    let format = format.parse::<Format>().map_err(PyValueError::new_err)?;
    let path = path.to_string_lossy().into_owned();
    let (scan, rows, nnz, hashed, probe) = py
        .detach(|| {
            let mut reader = ExampleReader::open(&path, format, zero_based, 18)?;
            let hashed = matches!(reader, ExampleReader::Vw(_));
            let (mut scan, mut ex) = (ClassScan::new(path.as_str()), Example::default());
            let (mut rows, mut nnz) = (0u64, 0u64);
            let mut probe = sketchlearn::linear::SparsityProbe::default();
            while reader.read_into(&mut ex)? {
                scan.add(ex.label, reader.line())?;
                rows += 1;
                nnz += ex.indices.len() as u64;
                probe.observe(&ex.indices);
            }
            Ok::<_, sketchlearn::data::ParseError>((scan, rows, nnz, hashed, probe))
        })
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let labels = scan
        .labels()
        .filter_map(|(label, _)| match label {
            ClassLabel::Number(v) => Some(*v),
            ClassLabel::Text(_) => None,
        })
        .collect();
    let first_rows = probe.sample().map(|s| (s.rows, s.nnz, s.distinct));
    Ok((labels, rows, nnz, hashed, first_rows))
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
    m.add_function(wrap_pyfunction!(scan_file, m)?)?;
    m.add_function(wrap_pyfunction!(csv_scan::scan_csv_files, m)?)?;
    m.add_function(wrap_pyfunction!(drp::drp_fit, m)?)?;
    m.add("MODEL_FORMAT_VERSION", sketchlearn::model::FORMAT_VERSION)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
