//! `drp_fit`: dual random projection (Zhang et al., COLT 2013; the core's [`sketchlearn::drp`],
//! `sketchlearn drp`) on a NumPy or CSR matrix, run by Rust with the GIL released. The result is
//! the recovered model the CLI saves with `drp -f` ([`recovered_model`]) inside a
//! [`LinearLearners`], so scoring, `save`, `load` and pickling are the linear models' own.

use crate::config::get;
use crate::interrupt::Interrupt;
use crate::labels::classes_of;
use crate::learners::LinearLearners;
use crate::rows::{RowScratch, Rows, RowsInput};
use crate::state::State;
use numpy::PyReadonlyArray1;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use sketchlearn::cancel::Cancel;
use sketchlearn::drp::{recovered_model, Dataset, DrpError, DrpLoss, DrpParams, OnDivergence};

fn drp_error(e: DrpError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// The parameters of `params` (`loss`, `lambda`, `size`, `iterations`, `seed`, `keep_going`;
/// a missing or `None` value takes the CLI's default, except `size`, which is required).
fn drp_params(params: &Bound<'_, PyDict>) -> PyResult<DrpParams> {
    let loss: DrpLoss = get::<String>(params, "loss")?
        .map(|s| s.parse().map_err(PyValueError::new_err))
        .transpose()?
        .unwrap_or(DrpLoss::Logistic);
    let size = get(params, "size")?
        .ok_or_else(|| PyValueError::new_err("parameter size (m projections) is required"))?;
    let on_divergence = if get(params, "keep_going")?.unwrap_or(false) {
        OnDivergence::Continue
    } else {
        OnDivergence::Stop
    };
    Ok(DrpParams {
        iterations: get(params, "iterations")?.unwrap_or(1),
        seed: get(params, "seed")?.unwrap_or(0),
        on_divergence,
        ..DrpParams::new(loss, get(params, "lambda")?.unwrap_or(1.0), size)
    })
}

/// The rows with labels `y` (±1, or real targets when `regression`) as the core's training
/// set of dimension `rows.n_cols()` (a dense row enters as its non-zeros, as a LIBSVM line does).
fn dataset(rows: &Rows<'_>, y: &[f64], regression: bool) -> Result<Dataset, String> {
    let mut data = if regression {
        Dataset::regression(rows.n_cols())
    } else {
        Dataset::new(rows.n_cols())
    };
    let mut scratch = RowScratch::default();
    for (i, &label) in y.iter().enumerate() {
        let row = rows.row(i, &mut scratch);
        let pushed = if regression {
            data.push_target(row, label)
        } else {
            data.push(row, label)
        };
        pushed.map_err(|e| format!("row {i}: {e}"))?;
    }
    Ok(data)
}

/// Solves problem (1) of the DRP paper on `(x, y)` (labels ±1: `y` = +1 for `classes[1]`; with
/// `classes=None`, ridge regression on real targets `y`, loss `ridge`) and returns the recovered
/// model (recording `classes`) and a report: `status` (`completed`,
/// `converged at t=..`, `diverged at t=..`), `iteration` (the `t` kept), `objective`
/// `f(w̃)` and `relative_grad_norm` `‖∇f(w̃)‖/‖∇f(0)‖` of the kept iterate, and the naive
/// solution's `naive_objective`. Ctrl-C is checked every 0.1 s during the fit
/// ([`Interrupt`]): `KeyboardInterrupt` is raised and nothing is returned.
#[pyfunction]
pub fn drp_fit<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    y: PyReadonlyArray1<'py, f64>,
    params: &Bound<'py, PyDict>,
    classes: Option<Vec<Bound<'py, PyAny>>>,
) -> PyResult<(LinearLearners, Bound<'py, PyDict>)> {
    let drp = drp_params(params)?.build().map_err(drp_error)?;
    let classes = classes.as_deref().map(classes_of).transpose()?;
    let regression = classes.is_none();
    let input = RowsInput::extract(x)?;
    let rows = input.rows()?;
    let y = y.as_slice()?;
    if y.len() != rows.n_rows() {
        return Err(PyValueError::new_err(format!(
            "X has {} rows but y has {}",
            rows.n_rows(),
            y.len()
        )));
    }
    rows.check_finite("X")?;
    let interrupt = Interrupt::new();
    let poll = || interrupt.poll();
    let result = py.detach(|| {
        let data = dataset(&rows, y, regression)?;
        let fit = drp
            .fit_cancellable(&data, Cancel::new(&poll))
            .map_err(|e| e.to_string())?;
        Ok((data, fit))
    });
    let (data, fit) = result.map_err(|e| interrupt.raise_or(PyValueError::new_err::<String>(e)))?;
    let mut model = recovered_model(drp.params(), &fit, data.len()).map_err(drp_error)?;
    model.classes = classes;

    let kept = &fit.reports[fit.final_index()];
    let report = PyDict::new(py);
    report.set_item("status", fit.status.to_string())?;
    report.set_item("iteration", kept.t)?;
    report.set_item("objective", kept.objective)?;
    report.set_item("relative_grad_norm", fit.relative_grad_norm(kept.grad_norm))?;
    report.set_item("naive_objective", fit.naive_objective)?;
    let unconverged: Vec<usize> = fit
        .reports
        .iter()
        .filter(|r| !r.low_dim_converged)
        .map(|r| r.t)
        .collect();
    report.set_item("low_dim_unconverged", unconverged)?;
    Ok((LinearLearners::from_state(State::Linear(model)), report))
}
