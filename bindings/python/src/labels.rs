//! Class labels between Python and the core's [`Classes`]: a Python `str` is a name
//! ([`ClassLabel::Text`]), anything with `__float__` (int, float, NumPy scalars, bool) a number
//! ([`ClassLabel::Number`]); back in Python an integral number is an `int`, other numbers a
//! `float`. So a model saved from Python prints the user's labels in `sketchlearn test -i` and
//! `predict -i`, and a CLI model loads with the CLI's labels as `classes_`.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyString;
use pyo3::IntoPyObjectExt;
use sketchlearn::labels::{ClassLabel, Classes};

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
fn label_object<'py>(py: Python<'py>, label: &ClassLabel) -> PyResult<Bound<'py, PyAny>> {
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
