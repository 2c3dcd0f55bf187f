//! `LinearLearners`: one linear learner (binary classification, regression) or K of them
//! (one-vs-rest multiclass), each fed whole arrays by Rust with the GIL released.
//!
//! The state is a list of the core's [`LinearModel`]s, so that pickling, `save` and `load` use
//! the core's model-file bytes: a single model is exactly a file `sketchlearn train -f` writes.

use crate::config::{choose_representation, learner_config};
use crate::errors::{learn_error, merge_error, model_error};
use crate::features::HashedRow;
use crate::rows::{Rows, RowsInput};
use numpy::{PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use sketchlearn::eval::{Metrics, ProgressRow};
use sketchlearn::linear::{
    AnyLearner, LearnError, LearnerConfig, LinearModel, OnlineLearner, LINEAR_MODEL_KIND,
};
use sketchlearn::loss::Loss;
use sketchlearn::merge::Merge;
use sketchlearn::model;
use sketchlearn::Row;

/// Rows learned between two checks for Ctrl-C (and two GIL releases).
const CHUNK: usize = 4096;

/// One or K online linear learners over the same features.
///
/// * K = 1: labels are used as they are (±1 for the classification losses, reals for squared);
/// * K > 1 (one-vs-rest): a label is a class index `k` (as a float), learner `k` sees +1 and
///   every other learner −1.
#[pyclass(module = "sketchlearn._core")]
pub struct LinearLearners {
    models: Vec<LinearModel>,
    /// Progressive metrics of this object's lifetime (not saved): binary/regression over the
    /// raw scores; one-vs-rest over "argmax of the K scores = label".
    metrics: Metrics,
    refused: u64,
    /// Scratch for rows that must be copied or hashed.
    scratch: Vec<f64>,
    hashed: HashedRow,
}

/// What one learning call did, for progress tables and counters.
struct Outcome {
    refused: u64,
    progress: Vec<ProgressRow>,
}

impl LinearLearners {
    fn from_models(models: Vec<LinearModel>) -> Self {
        LinearLearners {
            models,
            metrics: Metrics::without_auc(),
            refused: 0,
            scratch: Vec::new(),
            hashed: HashedRow::default(),
        }
    }

    fn one_vs_rest(&self) -> bool {
        self.models.len() > 1
    }
}

/// Learns one example with the library's refused-step policy (as the CLI does); returns the
/// prediction made before the update.
fn learn_row(
    learner: &mut AnyLearner,
    x: Row<'_>,
    y: f64,
    w: f64,
    refused: &mut u64,
) -> Result<f64, LearnError> {
    sketchlearn::run::learn_or_refuse(learner, x, y, w, refused)
}

/// Learns rows `lo..hi` of `rows` with every model (model-major: each learner's state stays in
/// cache across the chunk), then scores the chunk's progressive predictions.
#[allow(clippy::too_many_arguments)]
fn learn_chunk(
    models: &mut [LinearModel],
    metrics: &mut Metrics,
    rows: &Rows<'_>,
    y: &[f64],
    w: Option<&[f64]>,
    lo: usize,
    hi: usize,
    scratch: &mut Vec<f64>,
    progress: &mut Vec<ProgressRow>,
) -> Result<u64, (LearnError, usize)> {
    let k_models = models.len();
    let ovr = k_models > 1;
    let mut refused = 0;
    let mut scores = vec![0.0; (hi - lo) * k_models];
    for (k, model) in models.iter_mut().enumerate() {
        for i in lo..hi {
            let x = rows.row(i, scratch);
            let target = if ovr {
                if y[i] == k as f64 {
                    1.0
                } else {
                    -1.0
                }
            } else {
                y[i]
            };
            let weight = w.map_or(1.0, |w| w[i]);
            let p = learn_row(&mut model.learner, x, target, weight, &mut refused)
                .map_err(|e| (e, i))?;
            scores[(i - lo) * k_models + k] = p;
        }
        model.examples_seen += (hi - lo) as u64;
    }
    let loss = models[0].config.loss;
    for i in lo..hi {
        let weight = w.map_or(1.0, |w| w[i]);
        let features = rows.row(i, scratch).stored_len();
        let s = &scores[(i - lo) * k_models..(i - lo + 1) * k_models];
        let row = if ovr {
            // Multiclass progressive score: +1 when the argmax is right, −1 otherwise.
            let best = argmax(s);
            let ok = if best == y[i] as usize { 1.0 } else { -1.0 };
            metrics.add_with_progress(ok, 1.0, weight, Loss::Hinge, features)
        } else {
            metrics.add_with_progress(s[0], y[i], weight, loss, features)
        };
        progress.extend(row);
    }
    Ok(refused)
}

fn argmax(s: &[f64]) -> usize {
    let mut best = 0;
    for (k, &v) in s.iter().enumerate() {
        if v > s[best] {
            best = k;
        }
    }
    best
}

/// A progress row as Python sees it: `(average loss, since last, examples, weight, label,
/// prediction, features)`.
type ProgressTuple = (f64, f64, u64, f64, f64, f64, usize);

fn progress_tuple(r: &ProgressRow) -> ProgressTuple {
    (
        r.average_loss,
        r.since_last_loss,
        r.examples,
        r.weighted_examples,
        r.label,
        r.prediction,
        r.features,
    )
}

#[pymethods]
impl LinearLearners {
    /// Builds `n_models` learners for `dim` features from estimator parameters (see
    /// `config::learner_config`); `hashed` (River dictionaries), `avg_nnz` (sparse input's mean
    /// non-zeros per row) and `sparse` (force) choose the representation
    /// (`config::choose_representation`).
    #[new]
    #[pyo3(signature = (params, dim, n_models, *, hashed=false, avg_nnz=None, sparse=None, regression=false))]
    fn new(
        params: &Bound<'_, PyDict>,
        dim: usize,
        n_models: usize,
        hashed: bool,
        avg_nnz: Option<f64>,
        sparse: Option<bool>,
        regression: bool,
    ) -> PyResult<Self> {
        if n_models == 0 {
            return Err(PyValueError::new_err("n_models must be at least 1"));
        }
        let default_loss = if regression {
            Loss::Squared
        } else {
            Loss::Logistic
        };
        let config = learner_config(params, default_loss)?;
        let config = choose_representation(config, dim, hashed, avg_nnz, sparse)?;
        let models = (0..n_models)
            .map(|_| {
                config
                    .build(dim)
                    .map(|l| LinearModel::new(config.config().clone(), l))
                    .map_err(|e| learn_error(e.into(), None))
            })
            .collect::<PyResult<Vec<_>>>()?;
        Ok(Self::from_models(models))
    }

    /// Learns every row of `x` in order (progressive validation: each row is scored before it
    /// is learned) with the GIL released, checking for Ctrl-C every 4096 rows. Returns the
    /// progress rows (VW's doubling counts) reached during the call when `progress` is true.
    #[pyo3(signature = (x, y, sample_weight=None, progress=false))]
    fn learn(
        &mut self,
        py: Python<'_>,
        x: &Bound<'_, PyAny>,
        y: PyReadonlyArray1<'_, f64>,
        sample_weight: Option<PyReadonlyArray1<'_, f64>>,
        progress: bool,
    ) -> PyResult<Vec<ProgressTuple>> {
        let input = RowsInput::extract(x)?;
        let rows = input.rows()?;
        let y = y.as_slice()?;
        let w = sample_weight.as_ref().map(|w| w.as_slice()).transpose()?;
        let n = rows.n_rows();
        self.check_shape(&rows)?;
        if y.len() != n || w.is_some_and(|w| w.len() != n) {
            return Err(PyValueError::new_err(format!(
                "X has {n} rows but y has {} (and sample_weight {:?})",
                y.len(),
                w.map(|w| w.len())
            )));
        }
        rows.check_finite("X")?;
        if let Some(i) = y.iter().position(|v| !v.is_finite()) {
            return Err(PyValueError::new_err(format!(
                "y contains NaN or infinity: row {i}"
            )));
        }
        if let Some(i) = w.and_then(|w| w.iter().position(|v| !v.is_finite() || *v < 0.0)) {
            return Err(PyValueError::new_err(format!(
                "sample_weight must be finite and >= 0: row {i}"
            )));
        }
        let mut out = Outcome {
            refused: 0,
            progress: Vec::new(),
        };
        let mut lo = 0;
        while lo < n {
            let hi = (lo + CHUNK).min(n);
            let (models, metrics, scratch) =
                (&mut self.models, &mut self.metrics, &mut self.scratch);
            let progress_rows = &mut out.progress;
            let refused = py
                .detach(|| {
                    learn_chunk(models, metrics, &rows, y, w, lo, hi, scratch, progress_rows)
                })
                .map_err(|(e, i)| learn_error(e, Some(i)))?;
            out.refused += refused;
            lo = hi;
            py.check_signals()?;
        }
        self.refused += out.refused;
        Ok(if progress {
            out.progress.iter().map(progress_tuple).collect()
        } else {
            Vec::new()
        })
    }

    /// The progress row of the examples since the last doubling row, if any (the table's
    /// closing line, as `sketchlearn train` prints it).
    fn final_progress(&self) -> Option<ProgressTuple> {
        self.metrics.final_row().as_ref().map(progress_tuple)
    }

    /// The raw scores `wᵀx` of every row: an `(n, K)` array (GIL released).
    fn decision_function<'py>(
        &mut self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let input = RowsInput::extract(x)?;
        let rows = input.rows()?;
        self.check_shape(&rows)?;
        rows.check_finite("X")?;
        let n = rows.n_rows();
        let k_models = self.models.len();
        let (models, scratch) = (&self.models, &mut self.scratch);
        let scores = py.detach(|| {
            let mut scores = vec![0.0; n * k_models];
            for (k, m) in models.iter().enumerate() {
                for i in 0..n {
                    scores[i * k_models + k] = m.learner.predict(rows.row(i, scratch));
                }
            }
            scores
        });
        PyArray1::from_vec(py, scores).reshape([n, k_models])
    }

    /// Learns one River example: `x` a dict of feature name → value, hashed as VW does into
    /// the learner's `2^bits` features (see `features.rs`). Returns the prediction before the
    /// update. Binary (±1 labels) or regression only.
    #[pyo3(signature = (x, y, weight=1.0))]
    fn learn_one(&mut self, x: &Bound<'_, PyDict>, y: f64, weight: f64) -> PyResult<f64> {
        let bits = self.hash_bits()?;
        self.hashed.fill(x, bits)?;
        let row = self.hashed.row();
        let model = &mut self.models[0];
        let p = learn_row(&mut model.learner, row, y, weight, &mut self.refused)
            .map_err(|e| learn_error(e, None))?;
        model.examples_seen += 1;
        let loss = model.config.loss;
        self.metrics.add(p, y, weight, loss);
        Ok(p)
    }

    /// The raw score of one River example (a dict, hashed as in `learn_one`).
    fn predict_one(&mut self, x: &Bound<'_, PyDict>) -> PyResult<f64> {
        let bits = self.hash_bits()?;
        self.hashed.fill(x, bits)?;
        Ok(self.models[0].learner.predict(self.hashed.row()))
    }

    /// The weights of every learner as a `(K, d + intercept)` array (the intercept last).
    fn weights<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let rows: Vec<Vec<f64>> = self
            .models
            .iter()
            .map(|m| m.learner.weights().into_owned())
            .collect();
        PyArray2::from_vec2(py, &rows).map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Number of features `d`.
    #[getter]
    fn dim(&self) -> usize {
        self.models[0].learner.dim()
    }

    /// Number of learners K.
    #[getter]
    fn n_models(&self) -> usize {
        self.models.len()
    }

    /// Examples learned by each learner (all calls, all passes; saved in the model).
    #[getter]
    fn examples_seen(&self) -> u64 {
        self.models[0].examples_seen
    }

    /// Steps refused because they would have made the weights non-finite (this object only).
    #[getter]
    fn refused_steps(&self) -> u64 {
        self.refused
    }

    /// True when the learners are the sparse-time (O(m² + m·nnz)) ones.
    #[getter]
    fn sparse(&self) -> bool {
        self.models[0].config.representation == sketchlearn::linear::Representation::Sparse
            && matches!(
                self.models[0].config.algorithm,
                sketchlearn::linear::Algorithm::Newton | sketchlearn::linear::Algorithm::Auto
            )
    }

    /// The configuration in the CLI's words, e.g. `newton/rfd-fast m=10 alpha0=1 c=0.1 logistic`.
    #[getter]
    fn description(&self) -> String {
        self.models[0].config.describe()
    }

    /// The hyper-parameters as estimator parameters (for `sketchlearn.load`).
    fn params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let c: &LearnerConfig = &self.models[0].config;
        let d = PyDict::new(py);
        d.set_item("algo", c.algorithm.name())?;
        // The sparse-time learners by their CLI names (`rfd-sparse`, …), as `sketchlearn.load`
        // reads them.
        d.set_item("curvature", c.curvature_name())?;
        d.set_item("size", c.size)?;
        d.set_item("loss", c.loss.name())?;
        d.set_item("alpha", c.alpha)?;
        d.set_item("alpha0", c.alpha0)?;
        d.set_item("c", c.c)?;
        d.set_item("clip", c.clip)?;
        d.set_item("diag", c.diag)?;
        d.set_item("learning_rate", c.learning_rate)?;
        d.set_item("oja_c", c.oja_c)?;
        d.set_item("fit_intercept", c.bias)?;
        d.set_item("seed", c.seed)?;
        Ok(d)
    }

    /// Progressive (predict-then-learn) metrics of this object's learning calls:
    /// `(examples, mean loss, error rate or None)`. One-vs-rest: the loss is the multiclass
    /// error counted as a hinge on ±1.
    fn progressive(&self) -> (u64, f64, Option<f64>) {
        (
            self.metrics.examples(),
            self.metrics.mean_loss(),
            self.metrics.error_rate(),
        )
    }

    /// Merges `other` into these learners, learner by learner (iterative parameter mixing:
    /// weights averaged by the examples learned since `base`, sums added, sketches merged by
    /// FD's merge — `sketchlearn::merge`). `base`: the learners both started from (the last
    /// broadcast), or `None` when both started empty.
    #[pyo3(signature = (other, base=None))]
    fn merge(
        &mut self,
        other: PyRef<'_, LinearLearners>,
        base: Option<PyRef<'_, LinearLearners>>,
    ) -> PyResult<()> {
        if other.models.len() != self.models.len()
            || base
                .as_ref()
                .is_some_and(|b| b.models.len() != self.models.len())
        {
            return Err(PyValueError::new_err(
                "cannot merge: a different number of learners (classes)",
            ));
        }
        let mut merged = self.models.clone();
        for (k, m) in merged.iter_mut().enumerate() {
            let g = base.as_ref().map(|b| &b.models[k]);
            m.merge(&other.models[k], g).map_err(merge_error)?;
        }
        self.models = merged;
        Ok(())
    }

    /// Learns one file (LIBSVM, VW or CSV; `.gz` read through) with the Rust reader and the
    /// library's training run (`sketchlearn::run::train`, the CLI's), continuing from the
    /// current state, with the GIL released: no Python per row. Binary and regression only.
    /// Returns `(examples, mean progressive loss, error rate or None)` of this file.
    #[pyo3(signature = (path, format="auto", zero_based=false))]
    fn learn_file(
        &mut self,
        py: Python<'_>,
        path: std::path::PathBuf,
        format: &str,
        zero_based: bool,
    ) -> PyResult<(u64, f64, Option<f64>)> {
        use sketchlearn::run::{self, Input, ReadOptions, Silent, Start, TrainOptions};
        if self.one_vs_rest() {
            return Err(PyValueError::new_err(
                "learning from files needs one learner (binary or regression labels)",
            ));
        }
        let format = format
            .parse::<sketchlearn::data::Format>()
            .map_err(PyValueError::new_err)?;
        let options = TrainOptions {
            read: ReadOptions {
                format,
                zero_based,
                ..ReadOptions::default()
            },
            ..TrainOptions::default()
        };
        let start = Start::Resume(self.models[0].clone());
        let input = Input::path(path.to_string_lossy().into_owned());
        let outcome = py
            .detach(|| run::train(input, start, &options, &mut Silent))
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        self.models[0] = outcome.model;
        self.metrics.merge(&outcome.metrics);
        self.refused += outcome.refused_steps;
        Ok((
            outcome.examples,
            outcome.metrics.mean_loss(),
            outcome.metrics.error_rate(),
        ))
    }

    /// The largest total shrinkage `Σδ` among the learners' FD/RFD curvature sketches: FD's
    /// bound on the spectral error of a (merged) sketch, `‖GᵀG − BᵀB‖₂ ≤ Σδ`, for the
    /// scaled gradients `G` it summarises (`None` without an FD-family sketch).
    fn sketch_error_bound(&self) -> Option<f64> {
        self.models
            .iter()
            .filter_map(|m| crate::shrinkage::largest_shrinkage(&m.learner))
            .reduce(f64::max)
    }

    /// Every learner as the bytes of a model file (kind `linear-learner`, the CLI's format).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyBytes>>> {
        self.models
            .iter()
            .map(|m| {
                model::to_bytes(LINEAR_MODEL_KIND, m)
                    .map(|b| PyBytes::new(py, &b))
                    .map_err(model_error)
            })
            .collect()
    }

    /// The first learner's state alone — configuration, weights, sketch, example count — as
    /// model-file bytes without what a file adds about its data (classes, input format), so a
    /// model trained here and one trained by the CLI on the same rows compare byte for byte.
    fn state_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let mut m = self.models[0].clone();
        m.classes = None;
        m.input = None;
        model::to_bytes(LINEAR_MODEL_KIND, &m)
            .map(|b| PyBytes::new(py, &b))
            .map_err(model_error)
    }

    /// The learners back from [`LinearLearners::to_bytes`].
    #[staticmethod]
    fn from_bytes(states: Vec<Vec<u8>>) -> PyResult<Self> {
        if states.is_empty() {
            return Err(PyValueError::new_err("no learner state"));
        }
        let models = states
            .iter()
            .map(|b| LinearModel::from_bytes(b, "pickle"))
            .collect::<Result<Vec<_>, _>>()
            .map_err(model_error)?;
        if models
            .iter()
            .any(|m| m.learner.dim() != models[0].learner.dim())
        {
            return Err(PyValueError::new_err("learners of different dimensions"));
        }
        Ok(Self::from_models(models))
    }

    /// Writes the model file `sketchlearn test -i` reads (binary and regression models only:
    /// the CLI has no multiclass model yet).
    fn save(&self, path: std::path::PathBuf) -> PyResult<()> {
        if self.one_vs_rest() {
            return Err(PyValueError::new_err(
                "a one-vs-rest multiclass model has no CLI model file yet; pickle it instead",
            ));
        }
        self.models[0].save(path).map_err(model_error)
    }

    /// Reads a model file written by `sketchlearn train -f` or `save`.
    #[staticmethod]
    fn load(path: std::path::PathBuf) -> PyResult<Self> {
        let m = LinearModel::load(path).map_err(model_error)?;
        Ok(Self::from_models(vec![m]))
    }

    /// A copy of the learners' state (a plain memory copy, no serialisation; the progressive
    /// metrics start afresh, as after unpickling).
    fn __copy__(&self) -> Self {
        Self::from_models(self.models.clone())
    }

    /// Same as [`LinearLearners::__copy__`]: the state holds no Python objects.
    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> Self {
        self.__copy__()
    }

    /// Pickle support: rebuilt from the model-file bytes.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let states = PyList::new(py, slf.borrow().to_bytes(py)?)?;
        let ctor = slf.get_type().getattr("from_bytes")?;
        PyTuple::new(
            py,
            [ctor.into_any(), PyTuple::new(py, [states])?.into_any()],
        )
    }

    fn __repr__(&self) -> String {
        format!(
            "LinearLearners({} x {}, d={})",
            self.models.len(),
            self.models[0].config.describe(),
            self.dim()
        )
    }
}

impl LinearLearners {
    fn check_shape(&self, rows: &Rows<'_>) -> PyResult<()> {
        let d = self.dim();
        if rows.n_cols() != d {
            return Err(PyValueError::new_err(format!(
                "X has {} features, but the model was fitted with {d} features",
                rows.n_cols()
            )));
        }
        Ok(())
    }

    /// River dictionaries need a power-of-two dimension (`2^bits` hashed features).
    fn hash_bits(&self) -> PyResult<u32> {
        let d = self.dim();
        if !d.is_power_of_two() || self.one_vs_rest() {
            return Err(PyValueError::new_err(format!(
                "dictionary examples need one learner of dimension 2^bits, not {} of {d}",
                self.models.len()
            )));
        }
        Ok(d.trailing_zeros())
    }
}
