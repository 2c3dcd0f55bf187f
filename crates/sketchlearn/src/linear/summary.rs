//! Looking into a trained learner: its largest weights and the spectra of its sketches.

use super::curvature::AnyCurvature;
use super::sparse::SparseLearner;
use super::{AnyLearner, OnlineLearner};
use crate::sketch::Sketch;
use serde::{Deserialize, Serialize};

/// The `k` weights of largest magnitude, as `(index, weight)`, largest first (ties by index).
///
/// ```
/// use sketchlearn::linear::top_weights;
/// assert_eq!(top_weights(&[0.1, -3.0, 2.0, 0.0], 2), vec![(1, -3.0), (2, 2.0)]);
/// ```
pub fn top_weights(weights: &[f64], k: usize) -> Vec<(usize, f64)> {
    let mut order: Vec<(usize, f64)> = weights
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, w)| *w != 0.0)
        .collect();
    order.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()).then(a.0.cmp(&b.0)));
    order.truncate(k);
    order
}

/// One curvature sketch inside a learner.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SketchSummary {
    /// Where it sits (`member 2`, `member 1 / diagonal`, or empty for the learner itself).
    pub path: String,
    /// `fd`, `rp`, `oja`, `fd-sparse`, `oja-sparse`.
    pub kind: String,
    /// The isotropic part `α` of the sketch (0 where there is none).
    pub alpha: f64,
    /// The singular values of the sketch `S` (square roots of the eigenvalues of `SᵀS`),
    /// largest first.
    pub singular_values: Vec<f64>,
}

/// The largest sparse-FD dimension whose `d × d` covariance is formed to get its spectrum.
const MAX_DENSE_SPECTRUM_DIM: usize = 2048;

/// Every curvature sketch of `learner` (through intercepts, scalings and mixtures) with its top
/// `k` singular values. First-order learners and the full curvature have none.
///
/// ```
/// use sketchlearn::linear::{sketch_summaries, CurvatureKind, LearnerConfig, Algorithm, OnlineLearner};
/// use sketchlearn::Row;
/// let config = LearnerConfig { algorithm: Algorithm::Newton, curvature: CurvatureKind::Fd, size: 2, ..Default::default() };
/// let mut learner = config.build(3).unwrap();
/// learner.learn(Row::Dense(&[3.0, 0.0, 4.0]), 1.0, 1.0).unwrap();
/// let sketches = sketch_summaries(&learner, 5);
/// assert_eq!(sketches.len(), 1);
/// assert_eq!(sketches[0].kind, "fd");
/// assert!(sketches[0].singular_values[0] > 0.0);
/// ```
pub fn sketch_summaries(learner: &AnyLearner, k: usize) -> Vec<SketchSummary> {
    let mut out = Vec::new();
    walk(learner, String::new(), k, &mut out);
    out
}

fn join(path: &str, step: &str) -> String {
    if path.is_empty() {
        step.to_string()
    } else {
        format!("{path} / {step}")
    }
}

fn walk(learner: &AnyLearner, path: String, k: usize, out: &mut Vec<SketchSummary>) {
    let mut push = |kind: &str, alpha: f64, mut values: Vec<f64>| {
        values.sort_by(|a, b| b.total_cmp(a));
        values.truncate(k);
        out.push(SketchSummary {
            path: path.clone(),
            kind: kind.to_string(),
            alpha,
            singular_values: values,
        });
    };
    match learner {
        AnyLearner::Intercept(l) => walk(l.inner(), path, k, out),
        AnyLearner::FeatureScaling(l) => walk(l.inner(), path, k, out),
        AnyLearner::RowScaling(l) => walk(l.inner(), path, k, out),
        AnyLearner::UnitScaling(l) => walk(l.inner(), path, k, out),
        AnyLearner::TargetStandardization(l) => walk(l.inner(), path, k, out),
        AnyLearner::Diagonal(l) => walk(l.inner(), join(&path, "diagonal"), k, out),
        AnyLearner::Mixture(mix) => {
            for (i, m) in mix.members().iter().enumerate() {
                walk(m, join(&path, &format!("member {}", i + 1)), k, out);
            }
        }
        AnyLearner::ScaledMixture(mix) => {
            for (i, m) in mix.mixture().members().iter().enumerate() {
                walk(m, join(&path, &format!("member {}", i + 1)), k, out);
            }
        }
        AnyLearner::Newton(n) => {
            let (kind, matrix) = match n.curvature() {
                AnyCurvature::Fd(c) => ("fd", c.sketch().matrix()),
                AnyCurvature::Rp(c) => ("rp", c.sketch().matrix()),
                AnyCurvature::Oja(c) => ("oja", c.sketch().matrix()),
                AnyCurvature::Identity(_) | AnyCurvature::Full(_) => return,
            };
            let values = crate::linalg::singular_values(&matrix.b, matrix.rows, matrix.dim)
                .unwrap_or_default();
            push(kind, matrix.alpha, values);
        }
        AnyLearner::Sparse(SparseLearner::Oja(s)) => {
            let values = s.eigenvalues().iter().map(|e| e.max(0.0).sqrt()).collect();
            push("oja-sparse", 0.0, values);
        }
        AnyLearner::Sparse(SparseLearner::Fd(s)) if s.dim() <= MAX_DENSE_SPECTRUM_DIM => {
            let cov = s.covariance();
            let n = (cov.len() as f64).sqrt().round() as usize;
            let values = crate::linalg::sym_eigenvalues(&cov, n)
                .unwrap_or_default()
                .into_iter()
                .map(|e| e.max(0.0).sqrt())
                .collect();
            push("fd-sparse", s.alpha(), values);
        }
        AnyLearner::AdaFd(l) => push("ada-fd", l.delta(), gradient_spectrum(l.sketch())),
        AnyLearner::Sketchy(l) => push(
            "sketchy",
            l.delta() + l.sketch().total_shrinkage(),
            gradient_spectrum(l.sketch()),
        ),
        _ => {}
    }
}

/// The singular values of an FD sketch of the gradients (Ada-FD, Sketchy).
fn gradient_spectrum(sketch: &crate::sketch::FrequentDirections) -> Vec<f64> {
    use crate::sketch::Sketch;
    let m = sketch.matrix();
    crate::linalg::singular_values(&m.b, m.rows, m.dim).unwrap_or_default()
}
