//! How the package's file methods (`partial_fit_file`, `sketchlearn.dask.fit`) read a file:
//! [`file_format`] joins `format` and pandas' `sep=` into the library's [`Format`] — the one
//! validation of both, whose separators are the library's ([`Format::separator`] of the CSV
//! formats) — and [`reads_as_csv`] / [`resolved_format`] say how a path is read ([`Format::resolve`]).
//! The binding passes the format on; the library splits the fields.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyString;
use sketchlearn::data::{Format, InputSpec};

/// A separator as Python writes it (`'\t'`, `','`): the library's are ASCII.
fn py_str(text: &str) -> String {
    format!("'{}'", text.escape_debug())
}

/// The separator of a CSV format as `sep=` gives it (`","`, `"\t"`).
fn sep_of(format: Format) -> String {
    char::from(format.separator().byte()).to_string()
}

/// The format files are read as, from `format` (`"auto"`, `"libsvm"`, `"vw"`, `"csv"`,
/// `"tsv"`) and `sep` (`None`: `format` alone, `"auto"` then going by each file's name).
/// `sep` is one of the CSV formats' separators (`","` or `"\t"`), and makes the file CSV
/// separated by it whatever its name (as pandas' `read_csv(sep=...)`): it goes with `"auto"`
/// or `"csv"` (the CSV family), or with its own format (`"tsv"` with `"\t"`); anything else is
/// a `ValueError` naming what is allowed.
pub fn file_format(format: &str, sep: Option<&Bound<'_, PyString>>) -> PyResult<Format> {
    let format: Format = format.parse().map_err(PyValueError::new_err)?;
    let Some(given) = sep else { return Ok(format) };
    let sep = given.to_cow()?;
    let sep: &str = &sep;
    let separated: Vec<Format> = Format::ALL.into_iter().filter(|f| f.is_csv()).collect();
    let Some(&by_sep) = separated.iter().find(|&&f| sep_of(f) == sep) else {
        let allowed: Vec<String> = separated.iter().map(|&f| py_str(&sep_of(f))).collect();
        return Err(PyValueError::new_err(format!(
            "sep must be {} (or None: as the file's name says, .tsv separated by tabs and .csv \
             by commas), not {}",
            allowed.join(" or "),
            given.repr()?
        )));
    };
    match format {
        Format::Auto | Format::Csv => Ok(by_sep),
        f if f == by_sep => Ok(f),
        f if f.is_csv() => Err(PyValueError::new_err(format!(
            "format='{f}' is separated by {}, but sep={}: give one of them (format='csv' with \
             sep={} reads it)",
            py_str(&sep_of(f)),
            py_str(sep),
            py_str(sep)
        ))),
        f => Err(PyValueError::new_err(format!(
            "sep={} applies to CSV files, but format='{f}' is not CSV: leave sep out, or give \
             format='auto' or 'csv'",
            py_str(sep)
        ))),
    }
}

/// [`file_format`]'s name (`"auto"`, `"libsvm"`, `"vw"`, `"csv"`, `"tsv"`): what the file
/// methods pass on to the reader and the scan.
#[pyfunction(name = "file_format")]
#[pyo3(signature = (format="auto", sep=None))]
pub fn py_file_format(format: &str, sep: Option<Bound<'_, PyString>>) -> PyResult<&'static str> {
    file_format(format, sep.as_ref()).map(Format::name)
}

/// Whether `path` is read as CSV (comma or tab separated, through a schema) with `format`
/// (a [`file_format`] name; `"auto"`: by the name, `.csv`/`.tsv`, `.gz` looked through).
#[pyfunction]
#[pyo3(signature = (path, format="auto"))]
pub fn reads_as_csv(path: std::path::PathBuf, format: &str) -> PyResult<bool> {
    let format = file_format(format, None)?;
    Ok(format.resolve(&path.to_string_lossy()).is_csv())
}

/// Refuses, before reading, a file that learners fitted on CSV would read as LIBSVM or VW
/// (`format` resolved from the name of `path`, a `data.txt` given without `sep=`): its rows
/// would fail as labels that are not numbers, far from the cause. The error names the
/// `sep=` that reads it through the learners' columns.
pub fn check_csv_learners(input: Option<&InputSpec>, path: &str, format: Format) -> PyResult<()> {
    let read = format.resolve(path);
    match input {
        Some(spec) if spec.format.is_csv() && !read.is_csv() => {
            Err(PyValueError::new_err(format!(
                "{path}: the estimator was fitted on CSV, but this file is read as {} (format='{}' \
                 {}): give sep=',' or sep='\\t' to read it as CSV separated by commas or tabs \
                 (or a .csv or .tsv name)",
                read.name(),
                format.name(),
                if format == Format::Auto { "goes by the file's name" } else { "given" },
            )))
        }
        _ => Ok(()),
    }
}

/// The format `path` is read as with `format` (a [`file_format`] name; `"auto"`: by the name,
/// `.vw`, `.csv`, `.tsv`, else LIBSVM, `.gz` looked through): [`Format::resolve`]'s name, so
/// that Python repeats none of the library's name rules.
#[pyfunction]
#[pyo3(signature = (path, format="auto"))]
pub fn resolved_format(path: std::path::PathBuf, format: &str) -> PyResult<&'static str> {
    let format = file_format(format, None)?;
    Ok(format.resolve(&path.to_string_lossy()).name())
}
