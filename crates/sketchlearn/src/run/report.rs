//! The summaries of a binary or regression run, as `sketchlearn train --json` and
//! `test --json` print them: only the metrics that apply (classification: error, AUC and the
//! loss by its name; regression: RMSE, MAE and R²).

use super::{EvalOutcome, TrainOutcome};
use crate::eval::Metrics;
use crate::labels::Classes;
use crate::linear::{LinearModel, MemberWeight, OnlineLearner};
use crate::loss::Loss;
use serde::Serialize;

/// A training run's summary ([`TrainReport::of`]).
#[derive(Serialize, Debug)]
pub struct TrainReport {
    /// The learner's description.
    pub learner: String,
    /// Examples learned (all passes).
    pub examples: u64,
    /// Passes run.
    pub passes: u32,
    /// Dimension d.
    pub dim: usize,
    /// Progressive error rate (classification).
    pub progressive_error: Option<f64>,
    /// The mean of the loss over the progressive predictions.
    pub progressive_loss: f64,
    /// A classification stream's AUC (`null` for regression, which has no classes).
    pub progressive_auc: Option<f64>,
    /// Regression (labels that are not two classes): the progressive RMSE, MAE and R² of the
    /// predictions, each named as what it is (`progressive_loss` is the mean of the loss, ½
    /// squared error for `--loss squared`); absent for classification.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub progressive_rmse: Option<f64>,
    /// Regression: the progressive mean absolute error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub progressive_mae: Option<f64>,
    /// Regression: the progressive R².
    #[serde(skip_serializing_if = "Option::is_none")]
    pub progressive_r2: Option<f64>,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Examples per second.
    pub examples_per_second: f64,
    /// Steps refused (they would have made weights non-finite).
    pub refused_steps: u64,
    /// The learning pass diverged (the library's divergence rule).
    pub diverged: bool,
    /// A classifier's classes, negative then positive.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub classes: Option<Vec<String>>,
    /// For the `auto` mixture: each member and its final weight π.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mixture: Option<Vec<MemberWeight>>,
    /// The held-out examples of the returned model's pass.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub holdout: Option<HeldOut>,
    /// The returned model on the test input.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test: Option<HeldOut>,
    /// The pass whose model is returned (the best one with an early stop).
    pub best_pass: u32,
    /// The early stop ended the run before its last pass.
    pub stopped_early: bool,
}

/// Metrics of held-out examples (hold-out, test input).
#[derive(Serialize, Debug)]
pub struct HeldOut {
    /// Examples.
    pub examples: u64,
    /// The mean of the loss.
    pub loss: f64,
    /// Error rate (classification).
    pub error: Option<f64>,
    /// Regression: the RMSE of the held-out predictions (`loss` is ½ their squared error).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rmse: Option<f64>,
}

impl HeldOut {
    /// The summary of `m`.
    pub fn of(m: &Metrics) -> Self {
        HeldOut {
            examples: m.examples(),
            loss: m.mean_loss(),
            error: m.error_rate(),
            rmse: m.error_rate().is_none().then(|| m.rmse()),
        }
    }
}

impl TrainReport {
    /// The summary of a training run.
    ///
    /// ```
    /// use sketchlearn::linear::LearnerConfig;
    /// use sketchlearn::run::{self, Input, Silent, Start, TrainOptions, TrainReport};
    /// let path = std::env::temp_dir().join(format!("doc-train-report-{}.libsvm", std::process::id()));
    /// std::fs::write(&path, "1 1:1\n-1 2:1\n1 1:1\n-1 2:1\n").unwrap();
    /// let start = Start::New(LearnerConfig::default());
    /// let outcome = run::train(Input::path(path.to_str().unwrap()), start, &TrainOptions::default(), &mut Silent).unwrap();
    /// let report = TrainReport::of(&outcome);
    /// assert_eq!((report.examples, report.passes), (4, 1));
    /// assert!(report.progressive_error.is_some() && report.progressive_rmse.is_none());
    /// # std::fs::remove_file(&path).ok();
    /// ```
    pub fn of(outcome: &TrainOutcome) -> Self {
        let metrics = &outcome.metrics;
        // A classification stream has an error rate (also a squared loss on two classes); a
        // regression stream has RMSE, MAE and R² instead, and no AUC.
        let classify = metrics.error_rate().is_some();
        TrainReport {
            learner: outcome.model.config.describe(),
            examples: outcome.examples,
            passes: outcome.passes,
            dim: outcome.model.learner.dim(),
            progressive_error: metrics.error_rate(),
            progressive_loss: metrics.mean_loss(),
            progressive_auc: metrics.auc().filter(|_| classify),
            progressive_rmse: (!classify).then(|| metrics.rmse()),
            progressive_mae: (!classify).then(|| metrics.mae()),
            progressive_r2: metrics.r2().filter(|_| !classify),
            seconds: outcome.seconds,
            examples_per_second: outcome.examples_per_second(),
            refused_steps: outcome.refused_steps,
            diverged: outcome.diverged,
            classes: outcome.model.classes.as_ref().map(Classes::names),
            mixture: outcome.mixture_weights(),
            holdout: outcome.holdout.as_ref().map(HeldOut::of),
            test: outcome.test.as_ref().map(HeldOut::of),
            best_pass: outcome.best_pass,
            stopped_early: outcome.stopped_early,
        }
    }
}

/// An evaluation's summary ([`TestReport::of`]): only the metrics that apply to the loss.
#[derive(Serialize, Debug)]
pub struct TestReport {
    /// The model's name ([`LinearModel::name`]).
    pub learner: String,
    /// A classifier's classes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub classes: Option<Vec<String>>,
    /// Examples evaluated.
    pub examples: u64,
    /// The mean of the model's loss (what `train --test` and the early stop report).
    pub loss: f64,
    /// Error rate (classification).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<f64>,
    /// The logistic loss, for a logistic model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_loss: Option<f64>,
    /// The hinge loss, for a hinge model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hinge_loss: Option<f64>,
    /// The smoothed hinge loss, for a smooth-hinge model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub smooth_hinge_loss: Option<f64>,
    /// AUC (classification).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auc: Option<f64>,
    /// RMSE (regression).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rmse: Option<f64>,
    /// MAE (regression).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mae: Option<f64>,
    /// R² (regression).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub r2: Option<f64>,
    /// Wall-clock seconds.
    pub seconds: f64,
}

impl TestReport {
    /// The summary of `model`'s evaluation `outcome`.
    pub fn of(model: &LinearModel, outcome: &EvalOutcome) -> Self {
        let metrics = &outcome.metrics;
        let loss = model.config.loss;
        let classify = loss.is_classification();
        let named = |l: Loss| (loss == l).then(|| metrics.mean_loss());
        TestReport {
            learner: model.name(),
            classes: model.classes.as_ref().map(Classes::names),
            examples: outcome.examples,
            loss: metrics.mean_loss(),
            error: metrics.error_rate().filter(|_| classify),
            log_loss: named(Loss::Logistic),
            hinge_loss: named(Loss::Hinge),
            smooth_hinge_loss: named(Loss::SmoothHinge),
            auc: metrics.auc().filter(|_| classify),
            rmse: (!classify).then(|| metrics.rmse()),
            mae: (!classify).then(|| metrics.mae()),
            r2: metrics.r2().filter(|_| !classify),
            seconds: outcome.seconds,
        }
    }

    /// The metrics that apply, each with its short name (`error`, `log loss`, `auc`, `rmse`, …).
    pub fn named_metrics(&self) -> Vec<(&'static str, f64)> {
        let lines = [
            ("error", self.error),
            ("log loss", self.log_loss),
            ("hinge", self.hinge_loss),
            ("s-hinge", self.smooth_hinge_loss),
            ("auc", self.auc),
            ("rmse", self.rmse),
            ("mae", self.mae),
            ("r2", self.r2),
        ];
        lines
            .into_iter()
            .filter_map(|(name, v)| v.map(|v| (name, v)))
            .collect()
    }
}
