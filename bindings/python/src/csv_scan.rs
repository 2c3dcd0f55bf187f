//! CSV files read as one input by `sketchlearn.dask`: [`scan_csv_files`] finds their common
//! [`Schema`] (one scan of every file by the Rust reader, [`Schema::scan_files`]), and a
//! learner built with it ([`LinearLearners`](crate::learners::LinearLearners)'s `csv`) reads
//! each file through that schema, so a column means the same feature on every worker.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use sketchlearn::data::{
    open_input, CaseTwins, ColumnRef, CsvExampleOptions, Format, InputSpec, MixedColumn, Schema,
};
use sketchlearn::labels::ClassLabel;

/// The schema of a list of CSV files and what its scan found (an opaque object for
/// `LinearLearners(csv=...)`).
#[pyclass(module = "sketchlearn._core", frozen)]
pub struct CsvScan {
    pub schema: Schema,
    labels: Vec<ClassLabel>,
    /// The library's warnings about columns of numbers read as strings ([`MixedColumn`]).
    warnings: Vec<String>,
    /// The library's warning about labels that differ only by case ([`CaseTwins`]).
    case_warning: Option<String>,
}

impl CsvScan {
    /// How a learner built with this scan reads its input: CSV through the schema.
    pub fn input_spec(&self) -> InputSpec {
        InputSpec::new(Format::Csv, false, None, Some(self.schema.clone()))
    }
}

#[pymethods]
impl CsvScan {
    /// Features the columns give (the learner's dimension).
    #[getter]
    fn dim(&self) -> usize {
        self.schema.dim()
    }

    /// Data rows of all the files.
    #[getter]
    fn rows(&self) -> u64 {
        self.schema.rows()
    }

    /// The distinct labels in increasing order (numbers before names; `str`, `int` or
    /// `float`), empty without a label column.
    #[getter]
    fn labels<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        self.labels
            .iter()
            .map(|l| crate::labels::label_object(py, l))
            .collect()
    }

    /// The scan's warnings, as `sketchlearn train` words them: a column of numbers with
    /// other values among them, read as strings ([`MixedColumn`]), once for all the files.
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }

    /// The warning about the first two labels that differ only by case, each with the file,
    /// line and column where it first appears ([`CaseTwins`]), or `None`: for a classifier
    /// whose classes are the labels found, once for all the files.
    #[getter]
    fn case_warning(&self) -> Option<String> {
        self.case_warning.clone()
    }

    /// Whether the files have a label column.
    #[getter]
    fn has_labels(&self) -> bool {
        self.schema.label_column().is_some()
    }
}

/// Parses a column given as a name (`str`) or a 0-based position (`int`).
fn column_ref(column: &Bound<'_, PyAny>) -> PyResult<ColumnRef> {
    if let Ok(i) = column.extract::<usize>() {
        return Ok(ColumnRef::Index(i));
    }
    let name: String = column.extract().map_err(|_| {
        PyValueError::new_err("a CSV column is a name (str) or a 0-based position (int)")
    })?;
    Ok(ColumnRef::Name(name))
}

/// One scan of the CSV files `paths` (`.gz` read through) as one input, in order, with the GIL
/// released: the schema (header as `has_header` says, or detected from the first file;
/// `label_column` by name or position, default the column named `label`; `ignore_columns`
/// give no feature; string columns with more than `max_categories` values hashed into
/// `2**hash_bits` features — the CLI's `--header`/`--no-header`, `--label-column`,
/// `--ignore-columns`, `--max-categories`, `--hash-bits`), the labels and the warnings
/// (`warnings`, `case_warning`). The fields are separated as `format` says (a
/// [`file_format`](crate::file_format::file_format) name: `"csv"` commas, `"tsv"` tabs,
/// `"auto"` each file as its name says). Errors name the file, line and column.
#[pyfunction]
#[pyo3(signature = (paths, *, format="auto", has_header=None, label_column=None, ignore_columns=Vec::new(), max_categories=64, hash_bits=10))]
#[allow(clippy::too_many_arguments)]
pub fn scan_csv_files(
    py: Python<'_>,
    paths: Vec<String>,
    format: &str,
    has_header: Option<bool>,
    label_column: Option<Bound<'_, PyAny>>,
    ignore_columns: Vec<Bound<'_, PyAny>>,
    max_categories: usize,
    hash_bits: u32,
) -> PyResult<CsvScan> {
    let options = CsvExampleOptions {
        has_header,
        label_column: label_column.as_ref().map(column_ref).transpose()?,
        ignore_columns: ignore_columns
            .iter()
            .map(column_ref)
            .collect::<PyResult<_>>()?,
        max_categories,
        hash_bits,
    };
    let separator = match crate::file_format::file_format(format, None)? {
        Format::Auto => None,
        f if f.is_csv() => Some(f.separator()),
        f => {
            return Err(PyValueError::new_err(format!(
                "format='{f}' is not CSV: the scan reads CSV files"
            )))
        }
    };
    let sources = || paths.iter().map(|p| open_input(p).map(|r| (r, p.clone())));
    let found = py
        .detach(|| Schema::scan_files_separated(sources(), separator, &options))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(CsvScan {
        schema: found.schema,
        labels: found.labels,
        warnings: found.mixed.iter().map(MixedColumn::to_string).collect(),
        case_warning: found.case_twins.as_ref().map(CaseTwins::to_string),
    })
}
