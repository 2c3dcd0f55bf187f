//! The front door for models: one trait, [`Learner`], that a trained model of one real-valued
//! output implements — learn one example, predict a raw score or a probability, save to and load
//! from a model file.
//!
//! It follows River's `learn_one`/`predict_one` and scikit-learn's estimator contract, at the
//! level of a *model* (configuration + state + count of examples, what a model file holds):
//!
//! | method | contract |
//! |---|---|
//! | [`learn`](Learner::learn) | predict `x`, update on `(x, y)`, return the prediction made **before** the update (what progressive validation scores) |
//! | [`predict`](Learner::predict) | the raw score, no update |
//! | [`predict_proba`](Learner::predict_proba) | `Some(P(y = +1 \| x))` when the loss is a log-likelihood (logistic), `None` otherwise |
//! | [`save`](Learner::save) / [`load`](Learner::load) | versioned, checksummed model files through [`crate::model`] |
//!
//! Implementors: [`LinearModel`] (every linear learner, the default mixture included) and
//! [`FmModel`] (every factorization machine).
//!
//! # Which trait when
//!
//! * [`Learner`] — a *model*: it knows its loss (so it can turn a score into a probability), counts
//!   the examples it has seen and reads/writes its model file. Start here.
//! * [`OnlineLearner`](crate::linear::OnlineLearner) — an *algorithm*: the state of one learner
//!   without its configuration (no loss, no file). [`eval::progressive`](crate::eval::progressive)
//!   and the mixtures work at this level; a model's `learner` field implements it.
//! * [`MulticlassLearner`](crate::linear::multiclass::MulticlassLearner) — `K` classes. It is a
//!   separate trait rather than `Learner` with associated types for the label and the outputs:
//!   its label is a class id (not a real number), its score and its probabilities are one per
//!   class (a `Vec`, not an `f64`), and its probabilities always exist (a distribution over the
//!   classes, whatever the members' loss). With associated types every generic consumer of
//!   `Learner` (metrics on scores, the AUC, the divergence rule, `dyn Learner`) would need bounds
//!   on them for a case that does not share their arithmetic; two small traits say what each
//!   model can do. No multiclass *model file* type exists on `main` yet, so
//!   `MulticlassLearner` has no `save`/`load` here.
//!
//! # No hidden work
//!
//! [`LinearModel`]'s methods allocate nothing per call. [`FmModel`] scales a row to unit norm
//! first when it was trained with `normalize` (then one copy of the row's values is made).
//!
//! # Example
//!
//! ```
//! use sketchlearn::prelude::*;
//!
//! // A logistic-loss linear model on 2 features, through the trait only.
//! let config = LearnerConfig { loss: Loss::Logistic, ..LearnerConfig::default() };
//! let mut model = LinearModel::new(config.clone(), config.build(2).unwrap());
//! for _ in 0..50 {
//!     model.learn(Row::Dense(&[1.0, 0.2]), 1.0).unwrap();
//!     model.learn(Row::Dense(&[-1.0, 0.1]), -1.0).unwrap();
//! }
//! assert_eq!(model.examples_seen(), 100);
//! let p = model.predict_proba(Row::Dense(&[1.0, 0.0])).unwrap();
//! assert!(p > 0.5, "P(+1 | x) = {p}");
//!
//! // Save, load, same predictions. `dyn Learner` works for save/predict/learn.
//! let path = std::env::temp_dir().join(format!("doc-learner-{}.skl", std::process::id()));
//! let boxed: Box<dyn Learner> = Box::new(model);
//! boxed.save(&path).unwrap();
//! let back = LinearModel::load(&path).unwrap();
//! assert_eq!(back.predict(Row::Dense(&[0.3, 0.3])), boxed.predict(Row::Dense(&[0.3, 0.3])));
//! # std::fs::remove_file(&path).ok();
//!
//! // A factorization machine with the square loss: no probability.
//! let fm_config = FmConfig::new(FmAlgorithm::SftrlFast);
//! let fm = FmModel::new(fm_config, fm_config.build(4).unwrap());
//! assert_eq!(fm.predict_proba(Row::Sparse { indices: &[0, 2], values: &[1.0, 1.0] }), None);
//! ```

use crate::fm::FmModel;
use crate::linear::{LearnError, LinearModel, OnlineLearner};
use crate::loss::{sigmoid, Loss};
use crate::model::ModelError;
use crate::Row;
use std::path::Path;

/// A trained model of one real-valued output: learn, predict, predict a probability, save, load.
///
/// See the [module documentation](self) for the contract, the implementors and why multiclass
/// models have their own trait.
pub trait Learner {
    /// The input dimension `d`: feature indices must be `< d` to be learned (predictions ignore
    /// features beyond it).
    fn dim(&self) -> usize;

    /// The raw score for `x` now (no update): `wᵀx` for a linear model, the FM's output for an
    /// FM. For the logistic loss it is a log-odds; for the square loss, the predicted value.
    fn predict(&self, x: Row<'_>) -> f64;

    /// `P(y = +1 | x)` when the model's loss is the logistic loss (`σ(score)`), `None` for the
    /// other losses: the square loss predicts a value, and a hinge margin is not a calibrated
    /// probability (scikit-learn's `LinearSVC` has no `predict_proba` either, and the Python
    /// package's estimators offer it for the logistic loss only).
    fn predict_proba(&self, x: Row<'_>) -> Option<f64>;

    /// Predicts `x`, then learns `(x, y)` with importance `weight`; returns the prediction made
    /// *before* the update.
    ///
    /// Errors: an invalid example (non-finite value, label or weight, a feature index `≥ dim()`)
    /// changes nothing and is not counted. [`LearnError::Diverged`] means the step was refused
    /// because it would have made a weight non-finite or too large: the weights are unchanged,
    /// the example is counted in [`examples_seen`](Learner::examples_seen), and the prediction
    /// before the update is still [`predict`](Learner::predict)`(x)` (the run module's
    /// refused-step policy decides whether to go on).
    fn learn_weighted(&mut self, x: Row<'_>, y: f64, weight: f64) -> Result<f64, LearnError>;

    /// [`learn_weighted`](Learner::learn_weighted) with importance 1.
    fn learn(&mut self, x: Row<'_>, y: f64) -> Result<f64, LearnError> {
        self.learn_weighted(x, y, 1.0)
    }

    /// Examples learned so far (all passes, refused steps included).
    fn examples_seen(&self) -> u64;

    /// Writes the model file atomically (temporary file + rename), through [`crate::model`].
    fn save(&self, path: &Path) -> Result<(), ModelError>;

    /// Reads a model file written by [`save`](Learner::save); a corrupted, foreign or
    /// wrong-kind file is an error.
    fn load(path: &Path) -> Result<Self, ModelError>
    where
        Self: Sized;
}

/// `σ(score)` for the logistic loss, `None` for the others.
fn probability(loss: Loss, score: f64) -> Option<f64> {
    (loss == Loss::Logistic).then(|| sigmoid(score))
}

/// Counts the example unless the learner refused it as invalid input.
fn count(seen: &mut u64, result: &Result<f64, LearnError>) {
    if matches!(result, Ok(_) | Err(LearnError::Diverged(_))) {
        *seen += 1;
    }
}

impl Learner for LinearModel {
    fn dim(&self) -> usize {
        self.learner.dim()
    }

    fn predict(&self, x: Row<'_>) -> f64 {
        self.learner.predict(x)
    }

    fn predict_proba(&self, x: Row<'_>) -> Option<f64> {
        probability(self.config.loss, self.learner.predict(x))
    }

    fn learn_weighted(&mut self, x: Row<'_>, y: f64, weight: f64) -> Result<f64, LearnError> {
        let result = self.learner.learn(x, y, weight);
        count(&mut self.examples_seen, &result);
        result
    }

    fn examples_seen(&self) -> u64 {
        self.examples_seen
    }

    fn save(&self, path: &Path) -> Result<(), ModelError> {
        LinearModel::save(self, path)
    }

    fn load(path: &Path) -> Result<Self, ModelError> {
        LinearModel::load(path)
    }
}

/// `x` scaled to unit Euclidean norm (a zero or non-finite norm leaves it as it is), as
/// [`crate::fm::l2_normalize`] does for an [`Example`](crate::Example).
fn unit_values(x: Row<'_>) -> Vec<f64> {
    let values = match x {
        Row::Dense(v) => v,
        Row::Sparse { values, .. } => values,
    };
    let n = values.iter().map(|v| v * v).sum::<f64>().sqrt();
    if n > 0.0 && n.is_finite() {
        values.iter().map(|v| v / n).collect()
    } else {
        values.to_vec()
    }
}

/// Calls `f` on `x`, scaled to unit norm first when `normalize`.
fn with_row<T>(x: Row<'_>, normalize: bool, f: impl FnOnce(Row<'_>) -> T) -> T {
    if !normalize {
        return f(x);
    }
    let values = unit_values(x);
    match x {
        Row::Dense(_) => f(Row::Dense(&values)),
        Row::Sparse { indices, .. } => f(Row::Sparse {
            indices,
            values: &values,
        }),
    }
}

impl Learner for FmModel {
    fn dim(&self) -> usize {
        self.learner.dim()
    }

    fn predict(&self, x: Row<'_>) -> f64 {
        with_row(x, self.normalize, |x| self.learner.predict(x))
    }

    fn predict_proba(&self, x: Row<'_>) -> Option<f64> {
        probability(self.config.loss, Learner::predict(self, x))
    }

    fn learn_weighted(&mut self, x: Row<'_>, y: f64, weight: f64) -> Result<f64, LearnError> {
        let learner = &mut self.learner;
        let result = with_row(x, self.normalize, |x| learner.learn(x, y, weight));
        count(&mut self.examples_seen, &result);
        result
    }

    fn examples_seen(&self) -> u64 {
        self.examples_seen
    }

    fn save(&self, path: &Path) -> Result<(), ModelError> {
        FmModel::save(self, path)
    }

    fn load(path: &Path) -> Result<Self, ModelError> {
        FmModel::load(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fm::{FmAlgorithm, FmConfig};
    use crate::linear::LearnerConfig;

    #[test]
    fn learn_returns_the_prediction_before_the_update_and_counts() {
        let config = LearnerConfig::default();
        let mut model = LinearModel::new(config.clone(), config.build(2).unwrap());
        let x = Row::Dense(&[1.0, -1.0]);
        for _ in 0..5 {
            let before = Learner::predict(&model, x);
            assert_eq!(model.learn(x, 1.0).unwrap(), before);
        }
        assert_eq!(model.examples_seen, 5);
        // An invalid example is refused and not counted.
        assert!(model.learn(Row::Dense(&[1.0, 2.0, 3.0]), 1.0).is_err());
        assert!(model.learn(x, f64::NAN).is_err());
        assert_eq!(Learner::examples_seen(&model), 5);
    }

    #[test]
    fn probabilities_only_for_the_logistic_loss() {
        for loss in Loss::ALL {
            let config = LearnerConfig {
                loss,
                ..LearnerConfig::default()
            };
            let mut model = LinearModel::new(config.clone(), config.build(1).unwrap());
            model.learn(Row::Dense(&[1.0]), 1.0).unwrap();
            let p = model.predict_proba(Row::Dense(&[1.0]));
            assert_eq!(p.is_some(), loss == Loss::Logistic, "{loss}");
            if let Some(p) = p {
                assert_eq!(p, sigmoid(Learner::predict(&model, Row::Dense(&[1.0]))));
            }
        }
    }

    #[test]
    fn a_normalized_fm_sees_unit_rows() {
        let config = FmConfig::new(FmAlgorithm::SftrlFast);
        let mut plain = FmModel::new(config, config.build(3).unwrap());
        let mut scaled = plain.clone();
        scaled.normalize = true;
        let unit = Row::Sparse {
            indices: &[0, 2],
            values: &[0.6, 0.8],
        };
        let big = Row::Sparse {
            indices: &[0, 2],
            values: &[6.0, 8.0],
        };
        for _ in 0..3 {
            let a = plain.learn(unit, 2.0).unwrap();
            let b = scaled.learn(big, 2.0).unwrap();
            assert_eq!(a.to_bits(), b.to_bits());
        }
        assert_eq!(
            Learner::predict(&plain, unit).to_bits(),
            Learner::predict(&scaled, big).to_bits()
        );
    }
}
