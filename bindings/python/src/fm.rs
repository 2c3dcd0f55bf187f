//! `FmLearner`: one online factorization machine of the core (`sketchlearn::fm`, the SFTRL
//! paper's learners and Rendle's FM-SGD) fed whole arrays by Rust with the GIL released. Its
//! state is the core's [`FmModel`], so `save`/`load`/pickling use the model file that
//! `sketchlearn fm -f` writes and `sketchlearn fm predict -i` reads.

use crate::config::get;
use crate::errors::{learn_error, model_error};
use crate::interrupt::Interrupt;
use crate::rows::{RowScratch, Rows, RowsInput};
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};
use sketchlearn::eval::Metrics;
use sketchlearn::fm::{FmAlgorithm, FmConfig, FmModel, FM_MODEL_KIND};
use sketchlearn::linear::OnlineLearner;
use sketchlearn::loss::Loss;
use sketchlearn::model;
use sketchlearn::Row;

/// An online factorization machine over `d` features (labels ±1 for a classification loss,
/// reals for the squared loss).
#[pyclass(module = "sketchlearn._core")]
pub struct FmLearner {
    model: FmModel,
    metrics: Metrics,
    refused: u64,
    scratch: RowScratch,
    unit: Vec<f64>,
}

/// The configuration of the estimator parameters (`algo`, `size`, `eta`, `eta_pairwise`,
/// `rank`, `loss`, `intercept`, `seed`): the algorithm's defaults for the loss
/// ([`FmConfig::for_loss`], as `sketchlearn fm` takes them), overridden by the values given.
fn fm_config(params: &Bound<'_, PyDict>, default_loss: Loss) -> PyResult<FmConfig> {
    let algorithm: FmAlgorithm = get::<String>(params, "algo")?
        .map(|s| s.parse().map_err(PyValueError::new_err))
        .transpose()?
        .unwrap_or(FmAlgorithm::SftrlFast);
    let loss: Loss = get::<String>(params, "loss")?
        .map(|s| s.parse().map_err(PyValueError::new_err))
        .transpose()?
        .unwrap_or(default_loss);
    let d = FmConfig::for_loss(algorithm, loss);
    Ok(FmConfig {
        size: get(params, "size")?.unwrap_or(d.size),
        eta: get(params, "eta")?.unwrap_or(d.eta),
        eta_pairwise: get(params, "eta_pairwise")?.unwrap_or(d.eta_pairwise),
        rank: get(params, "rank")?.unwrap_or(d.rank),
        intercept: get(params, "intercept")?.or(d.intercept),
        seed: get(params, "seed")?.unwrap_or(d.seed),
        ..d
    })
}

/// `x / ‖x‖` into `out` (as `sketchlearn::fm::l2_normalize` scales a LIBSVM example; a zero
/// or non-finite norm leaves the row as it is).
fn unit_row<'a>(x: Row<'a>, out: &'a mut Vec<f64>) -> Row<'a> {
    let values = match x {
        Row::Sparse { values, .. } => values,
        Row::Dense(values) => values,
    };
    let n: f64 = values.iter().map(|v| v * v).sum::<f64>().sqrt();
    out.clear();
    if n > 0.0 && n.is_finite() {
        out.extend(values.iter().map(|v| v / n));
    } else {
        out.extend_from_slice(values);
    }
    match x {
        Row::Sparse { indices, .. } => Row::Sparse {
            indices,
            values: out,
        },
        Row::Dense(_) => Row::Dense(out),
    }
}

impl FmLearner {
    fn from_model(model: FmModel) -> Self {
        FmLearner {
            model,
            metrics: Metrics::without_auc(),
            refused: 0,
            scratch: RowScratch::default(),
            unit: Vec::new(),
        }
    }

    fn check_shape(&self, rows: &Rows<'_>) -> PyResult<()> {
        let d = self.model.learner.dim();
        if rows.n_cols() != d {
            return Err(PyValueError::new_err(format!(
                "X has {} features, but the model was fitted with {d} features",
                rows.n_cols()
            )));
        }
        rows.check_finite("X")
    }
}

#[pymethods]
impl FmLearner {
    /// Builds a factorization machine for `dim` features; `normalize` scales every row to
    /// unit norm first (the CLI's `--normalize`).
    #[new]
    #[pyo3(signature = (params, dim, *, normalize=false, regression=false))]
    fn new(
        params: &Bound<'_, PyDict>,
        dim: usize,
        normalize: bool,
        regression: bool,
    ) -> PyResult<Self> {
        let default_loss = if regression {
            Loss::Squared
        } else {
            Loss::Logistic
        };
        let config = fm_config(params, default_loss)?;
        let learner = config.build(dim).map_err(|e| learn_error(e, None))?;
        let mut model = FmModel::new(config, learner);
        model.normalize = normalize;
        Ok(Self::from_model(model))
    }

    /// Learns every row in order (progressive validation), GIL released, Ctrl-C checked every
    /// 0.1 s (on `KeyboardInterrupt` the rows before it are learned, whole); a step refused by the divergence guard keeps the state and is counted.
    fn learn(
        &mut self,
        py: Python<'_>,
        x: &Bound<'_, PyAny>,
        y: PyReadonlyArray1<'_, f64>,
    ) -> PyResult<()> {
        let input = RowsInput::extract(x)?;
        let rows = input.rows()?;
        let y = y.as_slice()?;
        self.check_shape(&rows)?;
        if y.len() != rows.n_rows() || y.iter().any(|v| !v.is_finite()) {
            return Err(PyValueError::new_err(
                "y must be finite, one value per row of X",
            ));
        }
        let interrupt = Interrupt::new();
        let stop = &interrupt;
        let FmLearner {
            model,
            metrics,
            refused,
            scratch,
            unit,
        } = self;
        let result = py.detach(|| {
            for (i, &yi) in y.iter().enumerate() {
                if stop.due(i) {
                    break;
                }
                let mut x = rows.row(i, scratch);
                if model.normalize {
                    x = unit_row(x, unit);
                }
                let p = sketchlearn::run::learn_or_refuse(&mut model.learner, x, yi, 1.0, refused)
                    .map_err(|e| (e, i))?;
                model.examples_seen += 1;
                metrics.add(p, yi, 1.0, model.config.loss);
            }
            Ok(())
        });
        interrupt.check()?;
        result.map_err(|(e, i)| learn_error(e, Some(i)))?;
        Ok(())
    }

    /// The predictions `ŷ(x)` (raw scores for a classification loss), GIL released.
    fn predict<'py>(
        &mut self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let input = RowsInput::extract(x)?;
        let rows = input.rows()?;
        self.check_shape(&rows)?;
        let FmLearner {
            model,
            scratch,
            unit,
            ..
        } = self;
        let p = py.detach(|| {
            (0..rows.n_rows())
                .map(|i| {
                    let mut x = rows.row(i, scratch);
                    if model.normalize {
                        x = unit_row(x, unit);
                    }
                    model.learner.predict(x)
                })
                .collect::<Vec<f64>>()
        });
        Ok(PyArray1::from_vec(py, p))
    }

    /// `(examples, mean loss, error rate or None)` of progressive validation in this object.
    fn progressive(&self) -> (u64, f64, Option<f64>) {
        (
            self.metrics.examples(),
            self.metrics.mean_loss(),
            self.metrics.error_rate(),
        )
    }

    /// Number of features `d`.
    #[getter]
    fn dim(&self) -> usize {
        self.model.learner.dim()
    }

    /// Examples learned (saved in the model).
    #[getter]
    fn examples_seen(&self) -> u64 {
        self.model.examples_seen
    }

    /// Steps refused by the divergence guard (this object only).
    #[getter]
    fn refused_steps(&self) -> u64 {
        self.refused
    }

    /// The estimator parameters of the model (for `sketchlearn.load`).
    fn params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let c = &self.model.config;
        let d = PyDict::new(py);
        d.set_item("algo", c.algorithm.name())?;
        d.set_item("size", c.size)?;
        d.set_item("eta", c.eta)?;
        d.set_item("eta_pairwise", c.eta_pairwise)?;
        d.set_item("rank", c.rank)?;
        d.set_item("loss", c.loss.name())?;
        d.set_item("intercept", c.intercept)?;
        d.set_item("seed", c.seed)?;
        d.set_item("normalize", self.model.normalize)?;
        Ok(d)
    }

    /// Writes the model file of `sketchlearn fm -f` (read by `sketchlearn fm predict -i`).
    fn save(&self, path: std::path::PathBuf) -> PyResult<()> {
        if self.model.encoder.is_some() {
            return Err(PyValueError::new_err("a ratings model is saved by the CLI"));
        }
        self.model.save(path).map_err(model_error)
    }

    /// Reads a model file of `sketchlearn fm -f` trained on LIBSVM rows (not ratings).
    #[staticmethod]
    fn load(path: std::path::PathBuf) -> PyResult<Self> {
        let m = FmModel::load(path).map_err(model_error)?;
        if m.encoder.is_some() {
            return Err(PyValueError::new_err(
                "a model of ratings (user/item ids) cannot be used on arrays; use `sketchlearn fm predict`",
            ));
        }
        Ok(Self::from_model(m))
    }

    /// The model as model-file bytes.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let b = model::to_bytes(FM_MODEL_KIND, &self.model).map_err(model_error)?;
        Ok(PyBytes::new(py, &b))
    }

    /// The model back from [`FmLearner::to_bytes`], checked as [`FmModel::load`] checks a file
    /// (`fm/validate.rs`): bytes whose checksum matches but whose state no training produces
    /// (sizes that disagree, an index out of range, a number that is not finite) are refused.
    /// Read in place from the `bytes` object (no copy into a list of Python integers) and
    /// decoded with the GIL released.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, state: &[u8]) -> PyResult<Self> {
        py.detach(|| FmModel::from_bytes(state, "pickle"))
            .map(Self::from_model)
            .map_err(model_error)
    }

    fn __copy__(&self) -> Self {
        Self::from_model(self.model.clone())
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> Self {
        self.__copy__()
    }

    /// Pickle support: rebuilt from the model-file bytes.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let state = slf.borrow().to_bytes(slf.py())?;
        crate::pickling::reduce_with(slf.as_any(), state)
    }

    fn __repr__(&self) -> String {
        format!(
            "FmLearner({} m={} eta={} {}, d={})",
            self.model.config.algorithm,
            self.model.config.size,
            self.model.config.eta,
            self.model.config.loss.name(),
            self.dim()
        )
    }
}
