//! Estimator parameters → the core's [`LearnerConfig`], and the one place where the binding
//! chooses between the dense and the sparse-time learners.
//!
//! The representation choice itself is the library's ([`ValidLearnerConfig::resolve`], the
//! rule `sketchlearn train` follows); nothing else in the binding builds a configuration.

use pyo3::conversion::FromPyObjectOwned;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use sketchlearn::linear::multiclass::{MulticlassConfig, Reduction, SoftmaxGiven};
use sketchlearn::linear::{
    Algorithm, CurvatureKind, InputProfile, LearnerConfig, Representation, SparsitySample,
    ValidLearnerConfig,
};
use sketchlearn::loss::Loss;
use std::str::FromStr;

/// `params[key]` when present and not `None`.
pub fn get<'py, T: FromPyObjectOwned<'py>>(
    params: &Bound<'py, PyDict>,
    key: &str,
) -> PyResult<Option<T>> {
    match params.get_item(key)? {
        Some(v) if !v.is_none() => v.extract::<T>().map(Some).map_err(|e| {
            let e: PyErr = e.into();
            PyValueError::new_err(format!("parameter {key}: {e}"))
        }),
        _ => Ok(None),
    }
}

/// Parses a named enum value (`algo`, `curvature`, `loss`) the way the CLI does.
fn named<'py, T: FromStr<Err = String>>(
    params: &Bound<'py, PyDict>,
    key: &str,
) -> PyResult<Option<T>> {
    get::<String>(params, key)?
        .map(|s| T::from_str(&s).map_err(|e| PyValueError::new_err(format!("{key}: {e}"))))
        .transpose()
}

/// The configuration of the estimator parameters in `params` (keys as the Python
/// constructors name them: `algo`, `curvature`, `size`, `loss`, `diag`, `learning_rate`,
/// `alpha`, `alpha0`, `c`, `clip`, `oja_c`, `fit_intercept`, `seed`; a missing or `None`
/// value takes the library default, as an absent CLI flag does). `default_loss` is the
/// estimator's (logistic for classifiers, squared for regressors).
pub fn learner_config(params: &Bound<'_, PyDict>, default_loss: Loss) -> PyResult<LearnerConfig> {
    let d = LearnerConfig::default();
    let curvature: Option<CurvatureKind> = named(params, "curvature")?;
    let diag = get::<bool>(params, "diag")?.unwrap_or(false);
    Ok(LearnerConfig {
        // As on the command line: a curvature or diag without an algorithm names one Newton
        // learner.
        algorithm: named(params, "algo")?.unwrap_or(if curvature.is_some() || diag {
            Algorithm::Newton
        } else {
            d.algorithm
        }),
        curvature: curvature.unwrap_or(d.curvature),
        size: get(params, "size")?.unwrap_or(d.size),
        loss: named(params, "loss")?.unwrap_or(default_loss),
        alpha: get(params, "alpha")?.unwrap_or(d.alpha),
        alpha0: get(params, "alpha0")?.unwrap_or(d.alpha0),
        c: get(params, "c")?.unwrap_or(d.c),
        clip: get(params, "clip")?.unwrap_or(d.clip),
        diag,
        diag_d0: d.diag_d0,
        learning_rate: get(params, "learning_rate")?.unwrap_or(d.learning_rate),
        seed: get(params, "seed")?.unwrap_or(d.seed),
        oja_c: get(params, "oja_c")?.unwrap_or(d.oja_c),
        bias: get(params, "fit_intercept")?.unwrap_or(d.bias),
        bias_value: d.bias_value,
        representation: d.representation,
    })
}

/// The binding's choice of representation. `sparse`: `Some(true)` forces the sparse-time
/// learner of the curvature (an error when it has none), `Some(false)` keeps the dense one,
/// `None` (auto) lets the library choose ([`ValidLearnerConfig::resolve`]: hashed input, i.e.
/// River dictionaries, or an average of fewer than `d/10` non-zeros per row (FD/RFD: `d/(4m)`,
/// where the dense learner is cheaper above, measured) — `avg_nnz`, known
/// for SciPy sparse input, `None` for dense arrays), the rule `sketchlearn train` follows, so
/// that a file gives the same learner in Python and on the command line. The configuration is
/// checked ([`LearnerConfig::check`]) with the library's messages.
pub fn choose_representation(
    mut config: LearnerConfig,
    dim: usize,
    hashed: bool,
    avg_nnz: Option<f64>,
    sample: Option<SparsitySample>,
    sparse: Option<bool>,
) -> PyResult<ValidLearnerConfig> {
    config.representation = match sparse {
        Some(true) => Representation::Sparse,
        Some(false) => Representation::Dense,
        None => Representation::Auto,
    };
    let valid = config
        .check()
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let (resolved, _) = valid.resolve(&InputProfile {
        dim,
        hashed,
        avg_nnz,
        sample,
    });
    Ok(resolved)
}

/// The multiclass configuration `sketchlearn train --multiclass --reduction R` builds
/// ([`MulticlassConfig::from_member`], the CLI's mapping): one-against-all over `member`, or
/// softmax with `member`'s sketch parameters and `params`' `alpha0`/`c` when given (else the
/// softmax defaults), with the representation chosen by the library for the input
/// (`input = (dim, hashed, avg_nnz)`, [`MulticlassConfig::for_input`]) unless `sparse` forces
/// it.
pub fn multiclass_config(
    params: &Bound<'_, PyDict>,
    mut member: LearnerConfig,
    reduction: &str,
    (dim, hashed, avg_nnz): (usize, bool, Option<f64>),
    sparse: Option<bool>,
) -> PyResult<MulticlassConfig> {
    let reduction: Reduction = reduction.parse().map_err(PyValueError::new_err)?;
    member.representation = match sparse {
        Some(true) => Representation::Sparse,
        Some(false) => Representation::Dense,
        None => Representation::Auto,
    };
    let given = SoftmaxGiven {
        alpha0: get(params, "alpha0")?,
        c: get(params, "c")?,
        curvature: named(params, "curvature")?,
        size: get(params, "size")?,
    };
    let config = MulticlassConfig::from_member(reduction, member, given)
        .map_err(|e| PyValueError::new_err(format!("reduction={reduction}: {e}")))?;
    Ok(config.for_input(dim, hashed, avg_nnz))
}
