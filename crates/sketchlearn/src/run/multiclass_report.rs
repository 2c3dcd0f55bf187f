//! The summary of a multiclass run or evaluation, as `sketchlearn train --json` and
//! `test --json` print it for a multiclass model: error, multiclass log loss and the
//! confusion matrix.

use super::MulticlassOutcome;
use crate::eval::multiclass::MulticlassMetrics;
use crate::linear::multiclass::{MulticlassLearner, MulticlassModel};
use serde::Serialize;

/// A multiclass summary ([`MulticlassReport::of_evaluation`], [`MulticlassReport::of_training`]).
#[derive(Serialize, Debug)]
pub struct MulticlassReport {
    /// The learner's description.
    pub learner: String,
    /// The classes, in the model's order.
    pub classes: Vec<String>,
    /// Examples.
    pub examples: u64,
    /// Dimension d.
    pub dim: usize,
    /// Progressive error (training).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub progressive_error: Option<f64>,
    /// Test error (evaluation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<f64>,
    /// The error's standard error.
    pub error_se: f64,
    /// The mean multiclass log loss.
    pub multiclass_log_loss: f64,
    /// `confusion_matrix[true][predicted]`, rows and columns in `classes` order.
    pub confusion_matrix: Vec<Vec<u64>>,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Steps refused (training only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused_steps: Option<u64>,
    /// The hold-out examples of the returned model's pass.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub holdout: Option<MulticlassHeldOut>,
    /// The test input scored with the returned model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test: Option<MulticlassHeldOut>,
    /// The pass whose model is returned (training only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub best_pass: Option<u32>,
    /// The early stop ended the run before its last pass (training only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped_early: Option<bool>,
}

/// A held-out evaluation in the summary: examples, error and multiclass log loss.
#[derive(Serialize, Debug)]
pub struct MulticlassHeldOut {
    /// Examples.
    pub examples: u64,
    /// Error rate.
    pub error: Option<f64>,
    /// Mean multiclass log loss.
    pub multiclass_log_loss: f64,
}

impl MulticlassHeldOut {
    /// The summary of `m`.
    pub fn of(m: &MulticlassMetrics) -> Self {
        MulticlassHeldOut {
            examples: m.examples(),
            error: m.error_rate(),
            multiclass_log_loss: m.log_loss(),
        }
    }
}

impl MulticlassReport {
    /// The summary of `model` evaluated (no learning) with `metrics` in `seconds`: the test
    /// error.
    pub fn of_evaluation(
        model: &MulticlassModel,
        metrics: &MulticlassMetrics,
        seconds: f64,
    ) -> Self {
        let mut r = Self::common(model, metrics, seconds);
        r.error = metrics.error_rate();
        r
    }

    /// The summary of a training run (its model, progressive error, refused steps, hold-out,
    /// test and early stop).
    pub fn of_training(outcome: &MulticlassOutcome) -> Self {
        let mut r = Self::common(&outcome.model, &outcome.metrics, outcome.seconds);
        r.progressive_error = outcome.metrics.error_rate();
        r.refused_steps = Some(outcome.refused_steps);
        r.holdout = outcome.holdout.as_ref().map(MulticlassHeldOut::of);
        r.test = outcome.test.as_ref().map(MulticlassHeldOut::of);
        r.best_pass = Some(outcome.best_pass);
        r.stopped_early = Some(outcome.stopped_early);
        r
    }

    /// The fields both summaries have (the others empty).
    fn common(model: &MulticlassModel, metrics: &MulticlassMetrics, seconds: f64) -> Self {
        let s = metrics.summary();
        MulticlassReport {
            learner: model.config.describe(),
            classes: model.classes.names(),
            examples: s.examples,
            dim: model.learner.dim(),
            progressive_error: None,
            error: None,
            error_se: s.error_se,
            multiclass_log_loss: s.log_loss,
            confusion_matrix: s.confusion_matrix,
            seconds,
            refused_steps: None,
            holdout: None,
            test: None,
            best_pass: None,
            stopped_early: None,
        }
    }
}
