//! `LinearLearners`: one core model — a binary classifier or regressor ([`LinearModel`]) or a
//! multiclass one ([`MulticlassModel`]: the core's one-against-all or softmax learner) — fed
//! whole arrays by Rust with the GIL released.
//!
//! The state ([`State`]) is the core's model, so that pickling, `save` and `load` use the
//! core's model-file bytes: the file is exactly the one `sketchlearn train -f` writes (with
//! `--multiclass` for more than two classes), classes included.

use crate::config::{choose_representation, get, learner_config, multiclass_config};
use crate::csv_scan::CsvScan;
use crate::errors::{learn_error, model_error};
use crate::features::HashedRow;
use crate::file_run::FileRun;
use crate::interrupt::Interrupt;
use crate::labels::{class_objects, classes_of};
use crate::retirement::{forget_retired, retired_members};
use crate::retirement::{multiclass_refuses, retired_at, set_retire, threshold};
use crate::rows::{RowScratch, Rows, RowsInput};
use crate::state::State;
use crate::tally::Tally;
use numpy::{PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};
use sketchlearn::eval::{EvalError, Metrics, ProgressRow};
use sketchlearn::linear::multiclass::{argmax, MulticlassLearner, MulticlassModel};
use sketchlearn::linear::{AnyLearner, LearnError, LearnerConfig, LinearModel, SparsitySample};
use sketchlearn::loss::Loss;
use sketchlearn::run::{progressive_pass, Observer};
use sketchlearn::{Example, Row};

/// One online learner over `d` features: binary (labels ±1), regression (real labels), or
/// multiclass (labels are class ids `0..K` as floats).
#[pyclass(module = "sketchlearn._core")]
pub struct LinearLearners {
    state: State,
    /// Progressive metrics, refused steps and largest label of this object's lifetime (not
    /// saved).
    tally: Tally,
    /// Scratch for rows that must be copied or hashed.
    scratch: RowScratch,
    hashed: HashedRow,
}

/// What one learning call did, for progress tables and counters.
struct Outcome {
    refused: u64,
    /// The largest label magnitude (binary/regression).
    label_max: f64,
    progress: Vec<ProgressRow>,
}

impl LinearLearners {
    /// This state merged with `other` over `base` (a new state; the GIL released meanwhile).
    fn merged_state(
        &self,
        py: Python<'_>,
        other: &LinearLearners,
        base: Option<&LinearLearners>,
    ) -> PyResult<State> {
        let (mine, theirs) = (&self.state, &other.state);
        let base = base.map(|b| &b.state);
        mine.check_merge(theirs, base)?; // before the copy: a refused merge copies nothing
        py.detach(|| {
            let mut merged = mine.clone();
            merged.merge(theirs, base).map(|()| merged)
        })
    }

    pub(crate) fn from_state(state: State) -> Self {
        LinearLearners {
            state,
            tally: Tally::default(),
            scratch: RowScratch::default(),
            hashed: HashedRow::default(),
        }
    }

    fn linear(&self) -> Option<&LinearModel> {
        match &self.state {
            State::Linear(m) => Some(m),
            State::Multi(_) => None,
        }
    }
}

/// Learns one example with the library's refused-step policy (as the CLI does), counting the
/// steps a mixture's members refused too; returns the prediction made before the update.
fn learn_row(
    learner: &mut AnyLearner,
    x: Row<'_>,
    y: f64,
    w: f64,
    refused: &mut u64,
) -> Result<f64, LearnError> {
    let absorbed = learner.member_refused_steps();
    let p = sketchlearn::run::learn_or_refuse(learner, x, y, w, refused);
    *refused += learner.member_refused_steps().saturating_sub(absorbed);
    p
}

/// Learns rows `lo..hi` of `rows` in order with `step` — which learns one row (its index and
/// weight given) and returns what progressive validation scores: `(prediction, label, loss)`,
/// the prediction made before the update — adding each to `metrics` and its progress rows.
/// Stops before a row when `interrupt` is [due](Interrupt::due) (Ctrl-C).
fn learn_rows(
    rows: &Rows<'_>,
    w: Option<&[f64]>,
    interrupt: &Interrupt,
    scratch: &mut RowScratch,
    (metrics, progress): (&mut Metrics, &mut Vec<ProgressRow>),
    mut step: impl FnMut(Row<'_>, usize, f64) -> Result<(f64, f64, Loss), LearnError>,
) -> Result<(), (LearnError, usize)> {
    for i in 0..rows.n_rows() {
        if interrupt.due(i) {
            break;
        }
        let x = rows.row(i, scratch);
        let features = x.stored_len();
        let weight = w.map_or(1.0, |w| w[i]);
        let (p, label, loss) = step(x, i, weight).map_err(|e| (e, i))?;
        progress.extend(metrics.add_with_progress(p, label, weight, loss, features));
    }
    Ok(())
}

/// Learns the rows of a binary or regression model in order as `sketchlearn train` does:
/// through the library's progressive pass ([`progressive_pass`]: batches of examples, the
/// default mixture's members on two threads, the same bits as one row at a time — the core's
/// `tests/suite/mixture.rs` pins it), with the refused-step policy, each prediction before its update
/// scored into `metrics` and its progress rows. Stops before a row when `interrupt` is
/// [due](Interrupt::due) (Ctrl-C), after the rows already read are learned. On an error, the
/// row it names.
fn learn_linear_rows(
    model: &mut LinearModel,
    (rows, y, w): (&Rows<'_>, &[f64], Option<&[f64]>),
    interrupt: &Interrupt,
    scratch: &mut RowScratch,
    (metrics, progress): (&mut Metrics, &mut Vec<ProgressRow>),
    (refused, label_max): (&mut u64, &mut f64),
) -> Result<(), (LearnError, usize)> {
    let mut i = 0;
    let next = |ex: &mut Example| {
        if i == rows.n_rows() || interrupt.due(i) {
            return Ok::<_, std::convert::Infallible>(false);
        }
        ex.clear();
        match rows.row(i, scratch) {
            Row::Sparse { indices, values } => {
                ex.indices.extend_from_slice(indices);
                ex.values.extend_from_slice(values);
            }
            Row::Dense(values) => {
                ex.indices.extend(0..values.len() as u32);
                ex.values.extend_from_slice(values);
            }
        }
        (ex.label, ex.weight) = (y[i], w.map_or(1.0, |w| w[i]));
        i += 1;
        Ok(true)
    };
    let loss = model.config.loss;
    let mut observer = ProgressRows(progress);
    // A mixture absorbs its members' refused steps: counted here, as `sketchlearn train` does.
    let absorbed = model.learner.member_refused_steps();
    let pass = progressive_pass(&mut model.learner, next, loss, metrics, &mut observer);
    *refused += model
        .learner
        .member_refused_steps()
        .saturating_sub(absorbed);
    match pass {
        Ok(pass) => {
            model.examples_seen += pass.examples;
            *refused += pass.refused_steps;
            *label_max = label_max.max(pass.label_max);
            Ok(())
        }
        Err(EvalError::Learn { example, source }) => {
            model.examples_seen += example - 1;
            Err((source, example as usize - 1))
        }
        Err(EvalError::Source(never)) => match never {},
    }
}

/// Collects the progress rows of a [`progressive_pass`] (what `verbose=True` prints).
struct ProgressRows<'a>(&'a mut Vec<ProgressRow>);

impl Observer for ProgressRows<'_> {
    fn progress(&mut self, row: &ProgressRow) {
        self.0.push(*row);
    }
}

/// One example of a multiclass model as `sketchlearn train --multiclass` learns it (a refused
/// step keeps the state and counts; the probabilities before the update are scored). The
/// progressive score is +1 when the most probable class is the label, −1 otherwise.
fn multiclass_step(
    model: &mut MulticlassModel,
    x: Row<'_>,
    class: usize,
    weight: f64,
    refused: &mut u64,
) -> Result<(f64, f64, Loss), LearnError> {
    let p = match model.learn(x, class, weight) {
        Ok(p) => p,
        Err(LearnError::Diverged(_)) => {
            *refused += 1;
            model.learner.predict_proba(x)
        }
        Err(e) => return Err(e),
    };
    let ok = if argmax(&p) == class { 1.0 } else { -1.0 };
    Ok((ok, 1.0, Loss::Hinge))
}

/// An `(n, k)` array whose row `i` is written by `f(row i, out)`, computed with the GIL
/// released.
fn per_row<'py>(
    py: Python<'py>,
    rows: &Rows<'_>,
    k: usize,
    scratch: &mut RowScratch,
    f: impl Fn(Row<'_>, &mut [f64]) + Sync,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let n = rows.n_rows();
    let values = py.detach(|| {
        let mut values = vec![0.0; n * k];
        for (i, out) in values.chunks_mut(k).enumerate() {
            f(rows.row(i, scratch), out);
        }
        values
    });
    PyArray1::from_vec(py, values).reshape([n, k])
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
    /// Builds a learner for `dim` features from estimator parameters (see
    /// `config::learner_config`). `classes`: `None` (regression, or binary labels ±1 of unknown
    /// names), two labels (a binary model recording them: the first is −1, the second +1) or
    /// `K > 2` labels (a multiclass model of `reduction` "oaa" or "softmax", the CLI's
    /// `--multiclass --reduction`), sorted as `numpy.unique` sorts them. `hashed` (River
    /// dictionaries), `avg_nnz` (sparse input's mean non-zeros per row) and `sparse` (force)
    /// choose the representation (`config::choose_representation`); `first_rows` = `(rows,
    /// stored features, distinct features)` of the input's first 1000 rows, when known, the
    /// default's members ([`SparsitySample`], the rule `sketchlearn train` applies). `csv`:
    /// the [`CsvScan`] of the CSV files the learner is to read (`dim` must be its `dim`): the
    /// model reads CSV through that schema, as a model the CLI trained on CSV does.
    #[new]
    #[pyo3(signature = (params, dim, classes=None, *, reduction="oaa", hashed=false, avg_nnz=None, sparse=None, regression=false, first_rows=None, csv=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        params: &Bound<'_, PyDict>,
        dim: usize,
        classes: Option<Vec<Bound<'_, PyAny>>>,
        reduction: &str,
        hashed: bool,
        avg_nnz: Option<f64>,
        sparse: Option<bool>,
        regression: bool,
        first_rows: Option<(u64, u64, u64)>,
        csv: Option<PyRef<'_, CsvScan>>,
    ) -> PyResult<Self> {
        let read_as = csv.as_deref().map(|scan| scan.input_spec());
        if let Some(scan) = csv.as_deref().filter(|s| s.schema.dim() != dim) {
            return Err(PyValueError::new_err(format!(
                "dim {dim} differs from the CSV files' {} features",
                scan.schema.dim()
            )));
        }
        let default_loss = if regression {
            Loss::Squared
        } else {
            Loss::Logistic
        };
        let config = learner_config(params, default_loss)?;
        let retire: Option<f64> = get(params, "retire")?;
        let classes = classes.as_deref().map(classes_of).transpose()?;
        if let Some(classes) = classes.clone().filter(|c| !c.is_binary()) {
            if retire.is_some() {
                return Err(multiclass_refuses());
            }
            let input = (dim, hashed, avg_nnz);
            let mc = multiclass_config(params, config, reduction, input, sparse)?;
            let mut model = MulticlassModel::build(mc, classes, dim)
                .map_err(|e| PyValueError::new_err(format!("multiclass learner: {e}")))?;
            model.input = read_as;
            return Ok(Self::from_state(State::Multi(model)));
        }
        let sample = first_rows.map(|(rows, nnz, distinct)| SparsitySample {
            rows,
            nnz,
            distinct,
        });
        let config = choose_representation(config, dim, hashed, avg_nnz, sample, sparse)?;
        let mut learner = config.build(dim).map_err(|e| learn_error(e.into(), None))?;
        if let Some(epsilon) = retire {
            set_retire(&mut learner, epsilon)?;
        }
        let mut model = LinearModel::new(config.config().clone(), learner);
        model.classes = classes;
        model.input = read_as;
        Ok(Self::from_state(State::Linear(model)))
    }

    /// Learns every row of `x` in order (progressive validation: each row is scored before it
    /// is learned) with the GIL released, checking for Ctrl-C every 0.1 s ([`Interrupt`]: on
    /// `KeyboardInterrupt` the model has learned the rows before it, whole). Returns the
    /// progress rows (VW's doubling counts) reached during the call when `progress` is true.
    /// `threads=1` learns on the calling thread alone (no second thread for the mixture's
    /// members; the same results), as [`learn_file`](Self::learn_file).
    #[pyo3(signature = (x, y, sample_weight=None, progress=false, threads=None))]
    fn learn(
        &mut self,
        py: Python<'_>,
        x: &Bound<'_, PyAny>,
        y: PyReadonlyArray1<'_, f64>,
        sample_weight: Option<PyReadonlyArray1<'_, f64>>,
        progress: bool,
        threads: Option<usize>,
    ) -> PyResult<Vec<ProgressTuple>> {
        let one_thread = crate::file_run::one_thread(threads)?;
        let input = RowsInput::extract(x)?;
        let rows = input.rows()?;
        let y = y.as_slice()?;
        let w = sample_weight.as_ref().map(|w| w.as_slice()).transpose()?;
        self.check_learn_input(&rows, y, w)?;
        let mut out = Outcome {
            refused: 0,
            label_max: 0.0,
            progress: Vec::new(),
        };
        let interrupt = Interrupt::new();
        let (metrics, scratch) = (&mut self.tally.metrics, &mut self.scratch);
        let tally = (metrics, &mut out.progress);
        let (count, labels) = (&mut out.refused, &mut out.label_max);
        let state = &mut self.state;
        let stop = &interrupt;
        let pass = || match state {
            State::Linear(m) => {
                let counts = (count, labels);
                learn_linear_rows(m, (&rows, y, w), stop, scratch, tally, counts)
            }
            State::Multi(m) => learn_rows(&rows, w, stop, scratch, tally, |x, i, wt| {
                multiclass_step(m, x, y[i] as usize, wt, count)
            }),
        };
        let result = py.detach(|| crate::file_run::on_threads(one_thread, pass));
        self.tally.refused += out.refused;
        self.tally.label_max = self.tally.label_max.max(out.label_max);
        interrupt.check()?;
        result.map_err(|(e, i)| learn_error(e, Some(i)))?;
        Ok(if progress {
            out.progress.iter().map(progress_tuple).collect()
        } else {
            Vec::new()
        })
    }

    /// The progress row of the examples since the last doubling row, if any (the table's
    /// closing line, as `sketchlearn train` prints it).
    fn final_progress(&self) -> Option<ProgressTuple> {
        self.tally.metrics.final_row().as_ref().map(progress_tuple)
    }

    /// The raw scores of every row: an `(n, 1)` array (`wᵀx`) or `(n, K)` for a multiclass
    /// model (the members' margins, or the softmax logits), GIL released.
    fn decision_function<'py>(
        &mut self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let input = RowsInput::extract(x)?;
        let rows = input.rows()?;
        self.check_predict_input(&rows)?;
        let (state, scratch) = (&self.state, &mut self.scratch);
        per_row(py, &rows, state.n_scores(), scratch, |x, out| {
            state.scores_into(x, out)
        })
    }

    /// Class probabilities of a multiclass model, `(n, K)` (the core's: normalised member
    /// sigmoids for one-against-all, the softmax for softmax), GIL released.
    fn predict_proba<'py>(
        &mut self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let input = RowsInput::extract(x)?;
        let rows = input.rows()?;
        self.check_predict_input(&rows)?;
        let State::Multi(model) = &self.state else {
            return Err(PyValueError::new_err(
                "predict_proba of the core is for multiclass models",
            ));
        };
        per_row(
            py,
            &rows,
            model.classes.len(),
            &mut self.scratch,
            |x, out| out.copy_from_slice(&model.learner.predict_proba(x)),
        )
    }

    /// Learns one River example: `x` a dict of feature name → value, hashed as VW does into
    /// the learner's `2^bits` features (see `features.rs`). Returns the prediction before the
    /// update. Binary (±1 labels) or regression only.
    #[pyo3(signature = (x, y, weight=1.0))]
    fn learn_one(&mut self, x: &Bound<'_, PyDict>, y: f64, weight: f64) -> PyResult<f64> {
        let bits = self.hash_bits()?;
        self.hashed.fill(x, bits)?;
        let State::Linear(model) = &mut self.state else {
            unreachable!("hash_bits checked the model is linear")
        };
        let row = self.hashed.row();
        let p = learn_row(&mut model.learner, row, y, weight, &mut self.tally.refused)
            .map_err(|e| learn_error(e, None))?;
        model.examples_seen += 1;
        let loss = model.config.loss;
        self.tally.metrics.add(p, y, weight, loss);
        self.tally.label_max = self.tally.label_max.max(y.abs());
        Ok(p)
    }

    /// The raw score of one River example (a dict, hashed as in `learn_one`).
    fn predict_one(&mut self, x: &Bound<'_, PyDict>) -> PyResult<f64> {
        let bits = self.hash_bits()?;
        self.hashed.fill(x, bits)?;
        let mut s = [0.0];
        self.state.scores_into(self.hashed.row(), &mut s);
        Ok(s[0])
    }

    /// The weights as a `(K, d + intercept)` array (the intercept last; K = 1 for a binary or
    /// regression model).
    fn weights<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        PyArray2::from_vec2(py, &self.state.weight_rows())
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Number of features `d`.
    #[getter]
    fn dim(&self) -> usize {
        self.state.dim()
    }

    /// Number of score columns: 1 (binary, regression) or K (multiclass).
    #[getter]
    fn n_scores(&self) -> usize {
        self.state.n_scores()
    }

    /// The classes recorded in the model, as Python labels (`None`: regression, or a binary
    /// model of unnamed ±1 labels).
    fn classes<'py>(&self, py: Python<'py>) -> PyResult<Option<Vec<Bound<'py, PyAny>>>> {
        self.state
            .classes()
            .map(|c| class_objects(py, c))
            .transpose()
    }

    /// Examples learned (all calls, all passes; saved in the model).
    #[getter]
    fn examples_seen(&self) -> u64 {
        self.state.examples_seen()
    }

    /// Steps refused because they would have made the weights non-finite (this object only).
    #[getter]
    fn refused_steps(&self) -> u64 {
        self.tally.refused
    }

    /// The library's divergence warning for this object's learning calls, as its text
    /// (`sketchlearn::run::divergence_warning`, the rule `sketchlearn train` ends its run
    /// with: the progressive loss since this object was built not finite, or far above a
    /// constant prediction's — e.g. rows of `1e300`s, which the default mixture's members
    /// score but do not refuse), or `None`; always `None` for a multiclass model (which the
    /// CLI does not judge either).
    #[getter]
    fn divergence(&self) -> Option<String> {
        match &self.state {
            State::Linear(m) => self.tally.divergence(m.config.loss),
            State::Multi(_) => None,
        }
    }

    /// True when the learners (a multiclass model's members) are the sparse-time
    /// (O(m² + m·nnz)) ones.
    #[getter]
    fn sparse(&self) -> bool {
        let c = self.learner_config();
        c.representation == sketchlearn::linear::Representation::Sparse && c.algorithm.has_newton()
    }

    /// Where the weights of a fixed-weights model come from (`drp logistic lambda=1 m=500 T=3
    /// seed=0 (Alg.2 iterate t=3)`, written by `sketchlearn drp -f` or `DRPClassifier.save`);
    /// `None` for a model that learns.
    #[getter]
    fn fixed_description(&self) -> Option<String> {
        match self.linear().map(|m| &m.learner) {
            Some(sketchlearn::linear::AnyLearner::Fixed(f)) => Some(f.description().to_string()),
            _ => None,
        }
    }

    /// The retirement threshold `ε` of the model's mixture (`retire=`, the CLI's `--retire`);
    /// `None` without a mixture.
    #[getter]
    fn retire(&self) -> Option<f64> {
        self.linear().and_then(threshold)
    }

    /// Per member of the model's mixture, the importance weight it had seen when the member
    /// retired (`None` while it learns); `None` without a mixture.
    #[getter]
    fn retired_at(&self) -> Option<Vec<Option<f64>>> {
        self.linear().and_then(retired_at)
    }

    /// The configuration in the CLI's words, e.g. `newton/rfd-fast m=10 alpha0=1 c=0.1 logistic`.
    #[getter]
    fn description(&self) -> String {
        self.state.describe()
    }

    /// The hyper-parameters as estimator parameters (for `sketchlearn.load`); a multiclass
    /// model adds `reduction`.
    fn params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let c: &LearnerConfig = self.learner_config();
        let d = PyDict::new(py);
        d.set_item("algo", c.algorithm.name())?;
        // The sparse-time learners by their CLI names (`rfd-sparse`, …), as `sketchlearn.load`
        // reads them.
        d.set_item("curvature", c.curvature_name())?;
        d.set_item("size", c.size)?;
        // The library's default as `None`, as a new estimator has it: a clone then fits any
        // data a new one fits (a multiclass fit refuses an explicit `retire`).
        let retire = self
            .retire()
            .filter(|&e| e != sketchlearn::linear::DEFAULT_RETIREMENT);
        d.set_item("retire", retire)?;
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
        if let State::Multi(m) = &self.state {
            d.set_item("reduction", m.config.reduction.name())?;
        }
        Ok(d)
    }

    /// Progressive (predict-then-learn) metrics of this object's learning calls:
    /// `(examples, mean loss, error rate or None)`. Multiclass: the loss is the multiclass
    /// error counted as a hinge on ±1.
    fn progressive(&self) -> (u64, f64, Option<f64>) {
        (
            self.tally.metrics.examples(),
            self.tally.metrics.mean_loss(),
            self.tally.metrics.error_rate(),
        )
    }

    /// Merges `other` into this state (iterative parameter mixing: weights averaged by the
    /// examples learned since `base`, sums added, sketches merged by FD's merge —
    /// `sketchlearn::merge`; a one-against-all model member by member). `base`: the state both
    /// started from (the last broadcast), or `None` when both started empty. A refused merge
    /// (`ValueError`: different kinds, configurations, classes or shapes; `NotImplementedError`:
    /// a state with no sound merge) raises with this state unchanged.
    #[pyo3(signature = (other, base=None))]
    fn merge(
        &mut self,
        other: PyRef<'_, LinearLearners>,
        base: Option<PyRef<'_, LinearLearners>>,
    ) -> PyResult<()> {
        self.state = self.merged_state(other.py(), &other, base.as_deref())?;
        Ok(())
    }

    /// [`merge`](Self::merge) with no copy of this state: the merge runs on it in place (the
    /// same function on the same inputs, so the same bytes as [`merged`](Self::merged)). A
    /// refused merge (different kinds, configurations, classes or shapes, a state with no
    /// sound merge — checked before anything changes) leaves this state as it was; only a
    /// numerical failure of a sketch's decomposition during the merge (non-finite states)
    /// can leave it part-merged. For a caller that owns the state and needs only the result,
    /// such as `sketchlearn.dask`'s client, which merges its own rebuilds of the tasks'
    /// deltas (a copy of a `2^20`-feature state is ~0.25 s of CPU, on the fit's tail after
    /// its last task; docs/results/dask.md, dask16).
    #[pyo3(signature = (other, base=None))]
    fn merge_in_place(
        &mut self,
        py: Python<'_>,
        other: PyRef<'_, LinearLearners>,
        base: Option<PyRef<'_, LinearLearners>>,
    ) -> PyResult<()> {
        let (mine, theirs) = (&mut self.state, &other.state);
        let base = base.as_deref().map(|b| &b.state);
        py.detach(|| mine.merge(theirs, base))
    }

    /// [`merge`](Self::merge) into a new object, leaving this one unchanged: one copy of the
    /// state instead of a copy and then a merge into the copy (`sketchlearn.dask` merges task
    /// results, which other tasks may still read).
    #[pyo3(signature = (other, base=None))]
    fn merged(
        &self,
        other: PyRef<'_, LinearLearners>,
        base: Option<PyRef<'_, LinearLearners>>,
    ) -> PyResult<Self> {
        self.merged_state(other.py(), &other, base.as_deref())
            .map(Self::from_state)
    }

    /// Learns one file (LIBSVM, VW or CSV; `.gz` read through) with the Rust reader and the
    /// library's training run (`sketchlearn::run::train_cancellable`, or
    /// `train_multiclass_cancellable` for a multiclass model, as the CLI's `train -i`),
    /// continuing from the current state, with the GIL released: no Python per row. A
    /// multiclass model's file labels must be among its classes (an error at the line
    /// otherwise); its examples are not added to [`progressive`](Self::progressive) (multiclass
    /// metrics are the run's own). Ctrl-C ([`Interrupt`]) stops the run at the next example
    /// read: the state keeps every row learned before it, whole, and `KeyboardInterrupt` is
    /// raised. `threads=1` learns on the calling thread alone (no read-ahead thread, no second
    /// thread for the mixture's members; the same results): for a caller that owns one core,
    /// such as a Dask worker of one thread. Returns `(examples, mean progressive loss, error
    /// rate or None)` of this file.
    #[pyo3(signature = (path, format="auto", zero_based=false, threads=None))]
    fn learn_file(
        &mut self,
        py: Python<'_>,
        path: std::path::PathBuf,
        format: &str,
        zero_based: bool,
        threads: Option<usize>,
    ) -> PyResult<(u64, f64, Option<f64>)> {
        let run = FileRun::new(&path, format, zero_based, threads)?;
        let start = self.state.clone();
        let (state, summary) = run.learn(py, start, &mut self.tally)?;
        self.state = state;
        summary
    }

    /// A new state: this one after [`learn_file`](Self::learn_file) over `path`, this one
    /// left unchanged (one copy of the state, where copying and then learning makes two). The
    /// new object's progressive metrics are those of this file; Ctrl-C raises
    /// `KeyboardInterrupt` and returns nothing.
    #[pyo3(signature = (path, format="auto", zero_based=false, threads=None))]
    fn learned_file(
        &self,
        py: Python<'_>,
        path: std::path::PathBuf,
        format: &str,
        zero_based: bool,
        threads: Option<usize>,
    ) -> PyResult<Self> {
        self.learned_files(py, vec![path], format, zero_based, threads)
    }

    /// A new state: this one after [`learn_file`](Self::learn_file) over each of `paths` in
    /// turn, this one left unchanged — the same runs on the same states, so the same bits as
    /// [`learned_file`](Self::learned_file) and then `learn_file` for the others, with one copy
    /// of the state instead of one a file (`learn_file` keeps the state it started from until
    /// its file is read through: a d-sized copy, ~0.13 s at 2^20 features with every column
    /// touched; a `sketchlearn.dask` task learns its files one after the other and discards
    /// its state on an error). The new object's progressive metrics are those of these files.
    #[pyo3(signature = (paths, format="auto", zero_based=false, threads=None))]
    fn learned_files(
        &self,
        py: Python<'_>,
        paths: Vec<std::path::PathBuf>,
        format: &str,
        zero_based: bool,
        threads: Option<usize>,
    ) -> PyResult<Self> {
        let mut tally = Tally::default();
        let mut state = self.state.clone();
        for path in &paths {
            let run = FileRun::new(path, format, zero_based, threads)?;
            let (next, summary) = run.learn(py, state, &mut tally)?;
            summary?;
            state = next;
        }
        let mut out = Self::from_state(state);
        out.tally = tally;
        Ok(out)
    }

    /// The largest total shrinkage `Σδ` among the FD/RFD curvature sketches — of the model, of
    /// a one-against-all model's members, or a softmax model's one feature-side sketch shared
    /// by its `K` classes: FD's bound on the spectral error of a (merged) sketch,
    /// `‖GᵀG − BᵀB‖₂ ≤ Σδ`, for the rows `G` it summarises (binary and one-against-all: the
    /// scaled gradients; softmax: the rows `√(c·ω)·x̃`). `None` without an FD-family sketch
    /// (RP, Oja, first-order learners: no shrinkage, no such bound).
    fn sketch_error_bound(&self) -> Option<f64> {
        match &self.state {
            State::Linear(m) => crate::shrinkage::largest_shrinkage(&m.learner),
            State::Multi(m) => crate::shrinkage::largest_multiclass_shrinkage(&m.learner),
        }
    }

    /// This state's delta against `base`, the state it grew from: model bytes holding, of the
    /// per-feature stores (sparse-time column stores, unit scaling's moments, first-order
    /// arrays), only the features that differ from `base` — for a learner that learned a block
    /// since `base`, that block's features. [`patched`](Self::patched) rebuilds the state bit
    /// for bit from them and the same base (`sketchlearn.dask` sends these between workers,
    /// which all hold the round's base). The GIL is released meanwhile. Returned as a 1-D
    /// `uint8` array owning the encoded bytes (no copy into a `bytes`: ~0.1 GB and a memory
    /// pass with the GIL held for a 2^20-feature delta; docs/results/dask.md, dask57).
    fn delta_from<'py>(
        &self,
        py: Python<'py>,
        base: PyRef<'py, LinearLearners>,
    ) -> PyResult<Bound<'py, PyArray1<u8>>> {
        let (state, base_state) = (&self.state, &base.state);
        let b = py.detach(|| state.delta_bytes(base_state))?;
        Ok(PyArray1::from_vec(py, b))
    }

    /// The retired members of every mixture in the state, as `(mixture, member)` pairs: a
    /// binary or regression model's mixture is 0, a one-against-all model's class `c`'s is
    /// `c`; empty without a mixture (the core's retirement, `retired_at` per mixture).
    #[getter]
    fn retired_members(&self) -> Vec<(usize, usize)> {
        retired_members(&self.state)
    }

    /// Puts `base`'s learner back for each `(mixture, member)` of `members` (numbered as
    /// `retired_members`), all retired in this state (`base`: the state it grew from; the
    /// core's `AnyLearner::forget_retired`, class by class for one-against-all): the
    /// predictions and what it learns next are the same bits, only those members' states
    /// differ. `sketchlearn.dask` does this, before a round's merge, for the members retired
    /// in every task of the round, which the merge keeps retired (the deltas then hold nothing
    /// of them). An empty `members` changes nothing; an active member, a mixture that does not
    /// exist or a base of another kind is an error, with nothing changed.
    /// The GIL is released meanwhile: putting a 2^20-feature member back drops its learned
    /// state and clones the base's (0.02–0.25 s), and another task's transfer from this Dask
    /// worker (a round's retired members, a few bytes) waited for it (docs/results/dask.md,
    /// dask57).
    fn forget_retired(
        &mut self,
        py: Python<'_>,
        base: PyRef<'_, LinearLearners>,
        members: Vec<(usize, usize)>,
    ) -> PyResult<()> {
        let (state, base_state) = (&mut self.state, &base.state);
        py.detach(|| forget_retired(state, base_state, &members))
    }

    /// The state whose [`delta_from`](Self::delta_from) `base` is `delta` (another base is an
    /// error); progressive metrics start afresh, as after unpickling. `delta`: the `bytes`, or
    /// a 1-D `uint8` array holding them (`numpy.frombuffer` of the buffer a Dask transfer
    /// delivers: read where it is, not copied into a `bytes` first — ~0.1 GB a 2^20-feature
    /// delta). Decoded with the GIL released; the caller does not write the array meanwhile.
    #[staticmethod]
    fn patched(
        py: Python<'_>,
        base: PyRef<'_, LinearLearners>,
        delta: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let base_state = &base.state;
        let decode = |bytes: &[u8]| {
            py.detach(|| State::from_delta_bytes(bytes, base_state))
                .map(Self::from_state)
        };
        if let Ok(b) = delta.cast::<PyBytes>() {
            return decode(b.as_bytes());
        }
        let array: PyReadonlyArray1<'_, u8> = delta.extract().map_err(|_| {
            PyTypeError::new_err(format!(
                "patched: the delta must be bytes or a 1-D uint8 array, not {}",
                delta
                    .get_type()
                    .name()
                    .map_or_else(|_| "?".into(), |n| n.to_string())
            ))
        })?;
        decode(
            array
                .as_slice()
                .map_err(|_| PyValueError::new_err("patched: the delta array is not contiguous"))?,
        )
    }

    /// The model as the bytes of a model file (kind `linear-learner` or
    /// `multiclass-learner`, the CLI's format).
    /// The GIL is released while encoding (a large sparse model takes a while; Dask's worker
    /// keeps answering meanwhile).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let state = &self.state;
        let b = py.detach(|| state.to_bytes()).map_err(model_error)?;
        Ok(PyBytes::new(py, &b))
    }

    /// The learner state alone — configuration, weights, sketch, example count — as
    /// model-file bytes without what a file adds about its data (the input format; a binary
    /// model's classes), so a model trained here and one trained by the CLI on the same rows
    /// compare byte for byte.
    fn state_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let b = self.state.state_bytes().map_err(model_error)?;
        Ok(PyBytes::new(py, &b))
    }

    /// The model back from [`LinearLearners::to_bytes`]: read in place from the `bytes`
    /// object (no copy into a list of Python integers) and decoded with the GIL released.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, state: &[u8]) -> PyResult<Self> {
        py.detach(|| State::from_bytes(state, "pickle"))
            .map(Self::from_state)
    }

    /// Writes the model file `sketchlearn test -i` and `predict -i` read.
    fn save(&self, path: std::path::PathBuf) -> PyResult<()> {
        self.state.save(&path)
    }

    /// Reads a model file written by `sketchlearn train -f` (binary, regression or
    /// `--multiclass`) or `save`.
    #[staticmethod]
    fn load(path: std::path::PathBuf) -> PyResult<Self> {
        State::load(&path).map(Self::from_state)
    }

    /// A copy of the state (a plain memory copy, no serialisation; the progressive metrics
    /// start afresh, as after unpickling).
    fn __copy__(&self) -> Self {
        Self::from_state(self.state.clone())
    }

    /// Same as [`LinearLearners::__copy__`]: the state holds no Python objects.
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
            "LinearLearners({}, d={})",
            self.state.describe(),
            self.dim()
        )
    }
}

impl LinearLearners {
    /// The binary learner's configuration, or a one-against-all model's members'.
    fn learner_config(&self) -> &LearnerConfig {
        match &self.state {
            State::Linear(m) => &m.config,
            State::Multi(m) => &m.config.member,
        }
    }

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

    fn check_predict_input(&self, rows: &Rows<'_>) -> PyResult<()> {
        self.check_shape(rows)?;
        rows.check_finite("X")
    }

    /// Shapes, finite values, weights ≥ 0 and (multiclass) class ids in `0..K`.
    fn check_learn_input(&self, rows: &Rows<'_>, y: &[f64], w: Option<&[f64]>) -> PyResult<()> {
        let n = rows.n_rows();
        self.check_shape(rows)?;
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
        if let State::Multi(m) = &self.state {
            let k = m.classes.len() as f64;
            if let Some(i) = y
                .iter()
                .position(|&v| v < 0.0 || v >= k || v.fract() != 0.0)
            {
                return Err(PyValueError::new_err(format!(
                    "row {i}: class id {} is not one of 0..{k}",
                    y[i]
                )));
            }
        }
        if let Some(i) = w.and_then(|w| w.iter().position(|v| !v.is_finite() || *v < 0.0)) {
            return Err(PyValueError::new_err(format!(
                "sample_weight must be finite and >= 0: row {i}"
            )));
        }
        Ok(())
    }

    /// River dictionaries need a binary or regression model of dimension `2^bits`.
    fn hash_bits(&self) -> PyResult<u32> {
        let d = self.dim();
        if !d.is_power_of_two() || self.linear().is_none() {
            return Err(PyValueError::new_err(format!(
                "dictionary examples need a binary or regression model of dimension 2^bits, \
                 not {}",
                self.state.describe()
            )));
        }
        Ok(d.trailing_zeros())
    }
}
