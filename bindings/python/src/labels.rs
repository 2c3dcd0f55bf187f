//! Class labels between Python and the core's [`Classes`]: a Python `str` is a name
//! ([`ClassLabel::Text`]), anything with `__float__` (int, float, NumPy scalars, bool) a number
//! ([`ClassLabel::Number`]); back in Python an integral number is an `int`, other numbers a
//! `float`. So a model saved from Python prints the user's labels in `sketchlearn test -i` and
//! `predict -i`, and a CLI model loads with the CLI's labels as `classes_`.
//!
//! [`label_targets`] maps an estimator's labels to the learner's targets with the core's one
//! [`LabelMap`] — the map `sketchlearn train` applies to a file's labels — so the package and
//! the command line follow one policy (two classes: the second `+1`, the first `−1`; more:
//! the class's index).

use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyString;
use pyo3::IntoPyObjectExt;
use sketchlearn::data::{ClassScan, LabelMap};
use sketchlearn::labels::{case_note, ClassLabel, Classes, LabelError};

/// One Python label as a [`ClassLabel`].
fn class_label(obj: &Bound<'_, PyAny>) -> PyResult<ClassLabel> {
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(ClassLabel::Text(s.to_cow()?.into_owned()));
    }
    match obj.extract::<f64>() {
        Ok(x) if x.is_finite() => Ok(ClassLabel::Number(x)),
        _ => Err(PyValueError::new_err(format!(
            "class label {obj} is neither a string nor a finite number"
        ))),
    }
}

/// The classes of `labels`, which must be sorted as the core sorts them (numbers by value,
/// names by text: what `numpy.unique` gives for a numeric or a string array), distinct, and at
/// least two.
pub fn classes_of(labels: &[Bound<'_, PyAny>]) -> PyResult<Classes> {
    let given = labels
        .iter()
        .map(class_label)
        .collect::<PyResult<Vec<_>>>()?;
    let classes = Classes::from_observed(given.iter().cloned())
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    if classes.labels() != given.as_slice() {
        return Err(PyValueError::new_err(format!(
            "classes must be distinct and sorted (numbers before names), got {}",
            given
                .iter()
                .map(|l| l.to_string())
                .collect::<Vec<_>>()
                .join(",")
        )));
    }
    Ok(classes)
}

/// A label as a Python object: a name as `str`, an integral number as `int`, else `float`.
pub fn label_object<'py>(py: Python<'py>, label: &ClassLabel) -> PyResult<Bound<'py, PyAny>> {
    match label {
        ClassLabel::Text(s) => s.into_bound_py_any(py),
        ClassLabel::Number(x) if x.fract() == 0.0 && x.abs() < 9.0e15 => {
            (*x as i64).into_bound_py_any(py)
        }
        ClassLabel::Number(x) => x.into_bound_py_any(py),
    }
}

/// The classes as a list of Python labels, in the model's order.
pub fn class_objects<'py>(py: Python<'py>, classes: &Classes) -> PyResult<Vec<Bound<'py, PyAny>>> {
    classes
        .labels()
        .iter()
        .map(|l| label_object(py, l))
        .collect()
}

/// The learner's targets of the labels `y` for a model of the classes `classes`, in their
/// order (an estimator's `classes_`; a CLI model's may be in a declared order): through the
/// core's [`LabelMap`], `−1/+1` for two classes (the second positive), the class index `0..K`
/// for more. `y` is a float64 array (numeric or boolean labels, converted by the caller) or
/// any sequence of labels (strings). A label that is not a class is a `ValueError` naming the
/// row, the label and the classes.
#[pyfunction]
pub fn label_targets<'py>(
    py: Python<'py>,
    classes: Vec<Bound<'py, PyAny>>,
    y: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let given = classes
        .iter()
        .map(class_label)
        .collect::<PyResult<Vec<_>>>()?;
    let classes = Classes::declared(given).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let mut map = if classes.is_binary() {
        LabelMap::Binary(classes)
    } else {
        LabelMap::Multiclass(classes)
    };
    let mut target = |row: usize, label: &ClassLabel| {
        map.target(label)
            .map_err(|e| PyValueError::new_err(unknown_label(row, e)))
    };
    let targets = if let Ok(numbers) = y.extract::<PyReadonlyArray1<'py, f64>>() {
        let numbers = numbers.as_slice()?;
        let mut out = Vec::with_capacity(numbers.len());
        for (row, &x) in numbers.iter().enumerate() {
            out.push(target(row, &ClassLabel::Number(x))?);
        }
        out
    } else {
        let mut out = Vec::with_capacity(y.len().unwrap_or(0));
        for (row, label) in y.try_iter()?.enumerate() {
            out.push(target(row, &class_label(&label?)?)?);
        }
        out
    };
    Ok(PyArray1::from_vec(py, targets))
}

/// The message of a label that is not a class, in the package's terms (`classes=`), not the
/// command line's (`--classes`), with the library's note on a class that differs from it only
/// by case ([`case_note`]).
fn unknown_label(row: usize, e: LabelError) -> String {
    match e {
        LabelError::Unknown { label, classes, .. } => format!(
            "row {row}: label {label} is not one of the classes {classes}{} (the classes are \
             fixed by the first fit, or by classes= on the first partial_fit: list every label \
             there)",
            case_note(&label, &classes)
        ),
        other => format!("row {row}: {other}"),
    }
}

/// A label's name and the row where it first appears.
type Twin = (String, u64);

/// The first two names among `labels` that differ only by case (`Yes` and `yes`: the
/// library's rule, [`ClassScan::case_twins`], behind `sketchlearn train`'s warning), each with
/// its first row, in the order they first appear; `None` when there are none. `labels` are the
/// distinct labels and `rows` the row where each first appears (`numpy.unique(y,
/// return_index=True)`); numbers are never twins.
#[pyfunction]
pub fn case_twins(labels: Vec<Bound<'_, PyAny>>, rows: Vec<u64>) -> PyResult<Option<(Twin, Twin)>> {
    if labels.len() != rows.len() {
        return Err(PyValueError::new_err(format!(
            "{} labels but {} rows",
            labels.len(),
            rows.len()
        )));
    }
    let mut scan = ClassScan::new("labels");
    for (label, &row) in labels.iter().zip(&rows) {
        let label = class_label(label)?;
        if matches!(label, ClassLabel::Text(_)) {
            scan.add_label(&label, row, 1)
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
        }
    }
    Ok(scan.case_twins())
}
