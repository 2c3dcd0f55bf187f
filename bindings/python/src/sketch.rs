//! `SketchState`: one streaming covariance sketch of the core ([`AnySketch`]) fed NumPy/CSR
//! rows with the GIL released; the Python `FrequentDirections` transformer does the small
//! dense linear algebra on the matrices it returns.

use crate::errors::{model_error, sketch_error};
use crate::interrupt::Interrupt;
use crate::rows::{RowScratch, RowsInput};
use numpy::{PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use sketchlearn::model;
use sketchlearn::sketch::{
    relative_spectral_error, AnySketch, LanczosOptions, RowMatrix, Sketch, SketchConfig,
    SketchMatrix, SketchMethod,
};

/// The kind tag of pickled sketches.
const SKETCH_KIND: &str = "python-sketch";

/// A streaming sketch of `AᵀA` and the configuration that built it.
#[pyclass(module = "sketchlearn._core")]
pub struct SketchState {
    config: SketchConfig,
    sketch: AnySketch,
}

fn matrix_array<'py>(py: Python<'py>, m: &SketchMatrix<'_>) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let b = m.b[..m.rows * m.dim].to_vec();
    PyArray1::from_vec(py, b).reshape([m.rows, m.dim])
}

#[pymethods]
impl SketchState {
    /// A sketch of rows of dimension `dim`: `method` is a CLI name (`fd`, `fd-fast`, `rfd`,
    /// `rfd-fast`, `gfd`, `gfd-fast`, `rp`, `oja`).
    #[new]
    #[pyo3(signature = (method, size, dim, seed=0, alpha0=0.0, alpha=1.0, oja_c=1.0))]
    fn new(
        method: &str,
        size: usize,
        dim: usize,
        seed: u64,
        alpha0: f64,
        alpha: f64,
        oja_c: f64,
    ) -> PyResult<Self> {
        let method: SketchMethod = method.parse().map_err(sketch_error)?;
        let config = SketchConfig {
            method,
            size,
            seed,
            alpha0,
            alpha,
            oja_c,
        };
        let sketch = config.build(dim).map_err(sketch_error)?;
        Ok(SketchState { config, sketch })
    }

    /// Inserts every row of `x` (`signs`: GFD's per-row signs, default +1), GIL released.
    #[pyo3(signature = (x, signs=None))]
    fn insert(
        &mut self,
        py: Python<'_>,
        x: &Bound<'_, PyAny>,
        signs: Option<PyReadonlyArray1<'_, f64>>,
    ) -> PyResult<()> {
        let input = RowsInput::extract(x)?;
        let rows = input.rows()?;
        if rows.n_cols() != self.sketch.dim() {
            return Err(PyValueError::new_err(format!(
                "X has {} features, but the sketch has dimension {}",
                rows.n_cols(),
                self.sketch.dim()
            )));
        }
        rows.check_finite("X")?;
        let signs = signs.as_ref().map(|s| s.as_slice()).transpose()?;
        let n = rows.n_rows();
        if signs.is_some_and(|s| s.len() != n) {
            return Err(PyValueError::new_err("signs must have one value per row"));
        }
        let mut scratch = RowScratch::default();
        let interrupt = Interrupt::new();
        let (stop, sketch) = (&interrupt, &mut self.sketch);
        let result = py.detach(|| {
            for i in 0..n {
                if stop.due(i) {
                    break;
                }
                let s = signs.map_or(1.0, |s| s[i]);
                sketch
                    .insert(rows.row(i, &mut scratch), s)
                    .map_err(|e| (e, i))?;
            }
            Ok(())
        });
        interrupt.check()?;
        result.map_err(|(e, i)| PyValueError::new_err(format!("row {i}: {e}")))?;
        Ok(())
    }

    /// Merges `other` into this sketch (FD, RFD and GFD of the same configuration: stack and
    /// re-shrink; FD's error bound then holds for the union of the two streams).
    fn merge(&mut self, other: PyRef<'_, SketchState>) -> PyResult<()> {
        if other.config != self.config {
            return Err(PyValueError::new_err(format!(
                "cannot merge sketches of different configurations ({:?} vs {:?})",
                self.config, other.config
            )));
        }
        match (&mut self.sketch, &other.sketch) {
            (AnySketch::Fd(a), AnySketch::Fd(b)) => a.merge(b).map_err(sketch_error),
            (AnySketch::Gfd(a), AnySketch::Gfd(b)) => a.merge(b).map_err(sketch_error),
            _ => Err(PyValueError::new_err(format!(
                "{} sketches cannot be merged (fd, rfd and gfd can)",
                self.config.method
            ))),
        }
    }

    /// `(B₊, B₋ or None, α)`: the approximation of `AᵀA` is `B₊ᵀB₊ − B₋ᵀB₋ + αI` (only GFD
    /// has `B₋`; only RFD has `α > 0`).
    #[allow(clippy::type_complexity)]
    fn matrices<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(
        Bound<'py, PyArray2<f64>>,
        Option<Bound<'py, PyArray2<f64>>>,
        f64,
    )> {
        Ok(match &self.sketch {
            AnySketch::Fd(s) => (matrix_array(py, &s.matrix())?, None, s.alpha()),
            AnySketch::Gfd(s) => (
                matrix_array(py, &s.positive().matrix())?,
                Some(matrix_array(py, &s.negative().matrix())?),
                0.0,
            ),
            AnySketch::Rp(s) => (matrix_array(py, &s.matrix())?, None, 0.0),
            AnySketch::Oja(s) => (matrix_array(py, &s.matrix())?, None, 0.0),
        })
    }

    /// ‖AᵀA − approximation‖₂ / ‖AᵀA‖₂ for the rows of `x` (Lanczos, no d × d matrix).
    #[pyo3(signature = (x, signs=None))]
    fn relative_spectral_error(
        &self,
        py: Python<'_>,
        x: &Bound<'_, PyAny>,
        signs: Option<PyReadonlyArray1<'_, f64>>,
    ) -> PyResult<f64> {
        let input = RowsInput::extract(x)?;
        let rows = input.rows()?;
        rows.check_finite("X")?;
        let signs = signs.as_ref().map(|s| s.as_slice()).transpose()?;
        let sketch = &self.sketch;
        py.detach(|| {
            let mut exact = RowMatrix::new(sketch.dim());
            let mut scratch = RowScratch::default();
            for i in 0..rows.n_rows() {
                exact.push(rows.row(i, &mut scratch), signs.map_or(1.0, |s| s[i]));
            }
            exact.set_dim(sketch.dim());
            relative_spectral_error(&exact, &*sketch.operator(), LanczosOptions::default())
        })
        .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Dimension `d`.
    #[getter]
    fn dim(&self) -> usize {
        self.sketch.dim()
    }

    /// Rows inserted so far (merged sketches add up).
    #[getter]
    fn rows_seen(&self) -> u64 {
        match &self.sketch {
            AnySketch::Fd(s) => s.rows_seen(),
            AnySketch::Gfd(s) => s.rows_seen(),
            AnySketch::Rp(s) => s.rows_seen(),
            AnySketch::Oja(s) => s.rows_seen(),
        }
    }

    /// FD/GFD total shrinkage (an upper bound on the spectral error), `None` for RP and Oja.
    #[getter]
    fn total_shrinkage(&self) -> Option<f64> {
        self.sketch.total_shrinkage()
    }

    /// The state as model-file bytes.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let b = model::to_bytes(SKETCH_KIND, &(&self.config, &self.sketch)).map_err(model_error)?;
        Ok(PyBytes::new(py, &b))
    }

    /// The sketch back from [`SketchState::to_bytes`], read in place from the `bytes` object
    /// (no copy into a list of Python integers) and decoded with the GIL released.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, state: &[u8]) -> PyResult<Self> {
        let (config, sketch): (SketchConfig, AnySketch) = py
            .detach(|| model::from_bytes(state, SKETCH_KIND, "pickle"))
            .map_err(model_error)?;
        Ok(SketchState { config, sketch })
    }

    /// Pickle support.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let state = slf.borrow().to_bytes(slf.py())?;
        crate::pickling::reduce_with(slf.as_any(), state)
    }
}
