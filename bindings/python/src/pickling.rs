//! Pickle support shared by the state classes: an object is rebuilt by its type's
//! `from_bytes(state)` from the bytes its `to_bytes()` wrote (the core's model-file bytes).

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

/// `(type(obj).from_bytes, (state,))`, what `__reduce__` returns.
pub fn reduce_with<'py>(
    obj: &Bound<'py, PyAny>,
    state: Bound<'py, PyBytes>,
) -> PyResult<Bound<'py, PyTuple>> {
    let py = obj.py();
    let ctor = obj.get_type().getattr("from_bytes")?;
    PyTuple::new(py, [ctor.into_any(), PyTuple::new(py, [state])?.into_any()])
}
