//! [`FmReport`]: the metrics and measures of an FM run ([`train_and_test`](super::train_and_test)),
//! as `sketchlearn fm --json` prints them (the field order is the JSON's).

use super::data::FmData;
use super::passes::Learned;
use crate::eval::Metrics;
use crate::fm::FmModel;
use crate::linear::OnlineLearner;
use serde::Serialize;

/// What an FM run measured: progressive metrics of the learning pass, test metrics, times,
/// memory, counts.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FmReport {
    /// The learner ([`FmConfig::describe`](crate::fm::FmConfig::describe)).
    pub learner: String,
    /// The algorithm's name.
    pub algorithm: String,
    /// The input file (`-`: standard input).
    pub file: String,
    /// The learner's dimension.
    pub dim: usize,
    /// Examples learned (the first `train_fraction` of the file).
    pub train_examples: u64,
    /// Examples tested (the rest).
    pub test_examples: u64,
    /// Progressive mean loss.
    pub progressive_loss: f64,
    /// Progressive RMSE (regression).
    pub progressive_rmse: Option<f64>,
    /// Progressive error rate (classification).
    pub progressive_error: Option<f64>,
    /// Progressive AUC (classification).
    pub progressive_auc: Option<f64>,
    /// Test mean loss (with a test part).
    pub test_loss: Option<f64>,
    /// Test RMSE (regression, with a test part).
    pub test_rmse: Option<f64>,
    /// Test error rate (classification, with a test part).
    pub test_error: Option<f64>,
    /// Test AUC (classification, with a test part).
    pub test_auc: Option<f64>,
    /// Learning pass + test predictions.
    pub seconds: f64,
    /// CPU time of the learning pass + test predictions (robust to other load on the machine).
    pub cpu_seconds: Option<f64>,
    /// The learning pass (with the compaction for fast predictions).
    pub train_seconds: f64,
    /// The test predictions.
    pub test_seconds: f64,
    /// Reading (and encoding) the data.
    pub load_seconds: f64,
    /// The process's peak resident set size (`VmHWM`).
    pub peak_rss_bytes: Option<u64>,
    /// The learner's state, bytes.
    pub model_bytes: usize,
    /// Steps refused (they would have made the model non-finite).
    pub refused_steps: u64,
    /// The learning pass diverged ([`crate::run::diverged`]): its steps were too large for rows
    /// of this scale (the observer got a [`Warning::Diverged`](crate::run::Warning::Diverged)).
    pub diverged: bool,
    /// Test examples whose user was unseen in training.
    pub unseen_users: u64,
    /// Test examples whose item was unseen in training.
    pub unseen_items: u64,
    /// Learning examples whose user the model never saw (only a model resumed with
    /// `initial_model` meets them; the observer got a
    /// [`Warning::UnseenWhileLearning`](crate::run::Warning::UnseenWhileLearning)).
    pub unseen_users_learning: u64,
    /// Learning examples whose item the model never saw (as `unseen_users_learning`).
    pub unseen_items_learning: u64,
    /// Malformed rows skipped.
    pub skipped_malformed: u64,
    /// Ratings outside the declared scale (skipped or clamped).
    pub out_of_scale: u64,
    /// Reported predictions were clipped into the rating scale.
    pub clipped: bool,
    /// Root mean square of the pairwise part of the test predictions
    /// ([`AnyFm::pairwise`](crate::fm::AnyFm::pairwise)), when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test_pairwise_rms: Option<f64>,
    /// Test RMSE of the predictions without their pairwise part (intercept, linear and diagonal
    /// terms only; unclipped), when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test_rmse_without_pairwise: Option<f64>,
    /// Progressive learning curve: `[examples, mean loss so far]` at 1, 2, 4, 8, … and the end.
    pub progress: Vec<(u64, f64)>,
}

/// The test part's measures, for [`FmReport::new`].
pub(super) struct Tested {
    pub(super) metrics: Metrics,
    pub(super) seconds: f64,
    pub(super) cpu_seconds: Option<f64>,
    /// Unseen users and items in the test part.
    pub(super) unseen: (u64, u64),
    pub(super) pairwise: Option<(f64, f64)>,
}

impl FmReport {
    pub(super) fn new(
        file: &str,
        model: &FmModel,
        data: &FmData,
        (learned, load_seconds): (Learned, f64),
        tested: &Tested,
        clipped: bool,
    ) -> Self {
        let train = &learned.metrics;
        let test = &tested.metrics;
        let classification = model.config.loss.is_classification();
        let has_test = test.examples() > 0;
        let (skipped_malformed, out_of_scale) = data.skipped();
        let when = |yes: bool, x: Option<f64>| if yes { x } else { None };
        FmReport {
            learner: model.config.describe(),
            algorithm: model.config.algorithm.name().to_string(),
            file: file.to_string(),
            dim: model.learner.dim(),
            train_examples: train.examples(),
            test_examples: test.examples(),
            progressive_loss: train.mean_loss(),
            progressive_rmse: (!classification).then(|| train.rmse()),
            progressive_error: when(classification, train.error_rate()),
            progressive_auc: when(classification, train.auc()),
            test_loss: has_test.then(|| test.mean_loss()),
            test_rmse: (has_test && !classification).then(|| test.rmse()),
            test_error: when(classification && has_test, test.error_rate()),
            test_auc: when(classification && has_test, test.auc()),
            seconds: learned.seconds + tested.seconds,
            cpu_seconds: tested.cpu_seconds,
            train_seconds: learned.seconds,
            test_seconds: tested.seconds,
            load_seconds,
            peak_rss_bytes: peak_rss_bytes(),
            model_bytes: model.learner.state_bytes(),
            refused_steps: learned.refused,
            diverged: learned.diverged,
            unseen_users: tested.unseen.0,
            unseen_items: tested.unseen.1,
            unseen_users_learning: learned.unseen.0,
            unseen_items_learning: learned.unseen.1,
            skipped_malformed,
            out_of_scale,
            clipped,
            test_pairwise_rms: tested.pairwise.map(|p| p.0),
            test_rmse_without_pairwise: tested.pairwise.map(|p| p.1),
            progress: learned.progress,
        }
    }
}

/// CPU time of this (single-threaded) process so far, in seconds, from `/proc/self/schedstat`
/// (nanosecond resolution): unlike wall time it does not grow when other processes share the
/// cores. `None` where there is no such file.
pub(super) fn cpu_seconds() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/schedstat").ok()?;
    let ns: u64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 * 1e-9)
}

/// Peak resident set size of this process (`VmHWM` of `/proc/self/status`), in bytes.
fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
