//! Progressive validation and evaluation metrics: the one loop shared by the CLI, the Python
//! bindings, the tests and the experiments.
//!
//! * [`progressive`] / [`progressive_with`]: for each example, learn it and score the prediction
//!   [`OnlineLearner::learn`] made *before* the update (progressive validation, as in VW's
//!   "average loss").
//! * [`evaluate`] / [`evaluate_with`]: score a held-out set with [`OnlineLearner::predict`],
//!   without updates.
//! * [`Metrics`]: weighted count, mean loss, 0/1 error rate, RMSE and AUC of a stream of
//!   predictions, plus VW-style progress rows ([`ProgressRow`]) at example counts 1, 2, 4, 8, ...
//!
//! The `_with` variants read each example into one reused [`Example`] through a callback such as
//! [`LibsvmReader::read_into`](crate::LibsvmReader::read_into), so the loop itself allocates
//! nothing per example; the iterator variants take owned examples (any
//! `IntoIterator<Item = Result<Example, E>>`, e.g. a [`LibsvmReader`](crate::LibsvmReader), or
//! `examples.into_iter().map(Ok::<_, std::convert::Infallible>)` for in-memory data).

mod auc;
pub mod multiclass;

use serde::{Deserialize, Serialize};

pub use auc::{StreamingAuc, BINS as AUC_BINS, EXACT_AUC_LIMIT};

use crate::linear::{LearnError, OnlineLearner};
use crate::loss::Loss;
use crate::Example;

/// Accumulated, importance-weighted metrics of a stream of `(prediction, label, weight)`.
///
/// * **mean loss**: `Σ wᵢ ℓ(pᵢ; yᵢ) / Σ wᵢ`;
/// * **error rate** (VW convention): a score `p ≤ 0` predicts −1, a label counts as positive when
///   `y > 0`; the weighted fraction of sign disagreements. Defined for classification streams
///   only, see [`error_rate`](Metrics::error_rate);
/// * **RMSE** of the raw prediction against the label: `√(Σ wᵢ (pᵢ − yᵢ)² / Σ wᵢ)`;
/// * **AUC**: the weighted Mann–Whitney statistic, the probability that a random positive scores
///   above a random negative, ties counting ½ (examples drawn in proportion to their weights).
///   Bounded memory ([`StreamingAuc`]): exact for the first [`EXACT_AUC_LIMIT`] examples (16
///   bytes each), then from a fixed histogram of the scores with a reported error bound
///   ([`Metrics::auc_error_bound`]). [`Metrics::without_auc`] skips it.
///
/// Metrics also remember where the last progress row was emitted, so that [`ProgressRow`]s
/// follow the *cumulative* example count even across several calls of [`progressive`] with the
/// same metrics (batches, passes): see [`add_with_progress`](Metrics::add_with_progress) and
/// [`final_row`](Metrics::final_row).
///
/// It serializes as its [`MetricsSummary`].
///
/// ```
/// use sketchlearn::eval::Metrics;
/// use sketchlearn::loss::Loss;
///
/// let mut m = Metrics::new();
/// m.add(0.8, 1.0, 1.0, Loss::Hinge); // loss 0.2, correct
/// m.add(0.0, 1.0, 1.0, Loss::Hinge); // loss 1, wrong: a score of 0 predicts −1
/// m.add(-2.0, -1.0, 2.0, Loss::Hinge); // loss 0, correct, counts twice
/// assert_eq!(m.examples(), 3);
/// assert_eq!(m.weighted_examples(), 4.0);
/// assert!((m.mean_loss() - 1.2 / 4.0).abs() < 1e-12);
/// assert_eq!(m.error_rate(), Some(0.25));
/// // Positives score 0.8 and 0.0, the negative (weight 2) scores −2: every pair is ordered.
/// assert_eq!(m.auc(), Some(1.0));
///
/// // Without AUC data the other metrics are the same.
/// let mut small = Metrics::without_auc();
/// small.add(0.8, 1.0, 1.0, Loss::Hinge);
/// small.add(-2.0, -1.0, 2.0, Loss::Hinge);
/// assert_eq!(small.auc(), None);
/// assert_eq!(small.error_rate(), Some(0.0));
/// ```
#[derive(Clone, Debug)]
pub struct Metrics {
    examples: u64,
    weighted: f64,
    loss_sum: f64,
    error_weight: f64,
    squared_error_sum: f64,
    /// Weighted sums of `|p − y|`, `y` and `y²` (MAE and R²).
    abs_error_sum: f64,
    label_sum: f64,
    label_sq_sum: f64,
    /// False once an example was added with a regression loss and a label other than ±1.
    classification: bool,
    /// The AUC's data (`None`: not kept).
    auc: Option<StreamingAuc>,
    progress: ProgressState,
}

/// What the progress rows need besides the totals.
#[derive(Clone, Copy, Debug, Default)]
struct ProgressState {
    /// `examples` when the last row was emitted.
    examples_at_last_row: u64,
    /// Weight and loss sum of the examples since the last row.
    since_weight: f64,
    since_loss: f64,
    /// The last example added.
    label: f64,
    prediction: f64,
    features: usize,
}

impl Default for Metrics {
    /// Same as [`Metrics::new`] (AUC data kept).
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// Empty metrics that keep the data the AUC needs.
    pub fn new() -> Self {
        Metrics {
            examples: 0,
            weighted: 0.0,
            loss_sum: 0.0,
            error_weight: 0.0,
            squared_error_sum: 0.0,
            abs_error_sum: 0.0,
            label_sum: 0.0,
            label_sq_sum: 0.0,
            classification: true,
            auc: Some(StreamingAuc::default()),
            progress: ProgressState::default(),
        }
    }

    /// Empty metrics that do not keep AUC data (constant memory; [`auc`](Metrics::auc) is then
    /// always `None`).
    pub fn without_auc() -> Self {
        Metrics {
            auc: None,
            ..Metrics::new()
        }
    }

    /// Whether AUC data is kept.
    pub fn keeps_auc(&self) -> bool {
        self.auc.is_some()
    }

    /// Adds one scored example: raw prediction `p`, label `y`, importance weight `w ≥ 0`, scored
    /// with `loss`. Also advances the progress-row state (a row due at this count is dropped;
    /// use [`add_with_progress`](Metrics::add_with_progress) to get it).
    pub fn add(&mut self, prediction: f64, label: f64, weight: f64, loss: Loss) {
        let _ = self.add_with_progress(prediction, label, weight, loss, 0);
    }

    /// [`add`](Metrics::add), then returns the progress row if the cumulative example count is
    /// now a power of two (1, 2, 4, 8, ...). `features` (the number of stored features of the
    /// example) is only reported in rows.
    ///
    /// ```
    /// use sketchlearn::eval::Metrics;
    /// use sketchlearn::loss::Loss;
    /// let mut m = Metrics::new();
    /// let rows: Vec<u64> = (0..10)
    ///     .filter_map(|_| m.add_with_progress(0.0, 1.0, 1.0, Loss::Hinge, 3))
    ///     .map(|row| row.examples)
    ///     .collect();
    /// assert_eq!(rows, [1, 2, 4, 8]);
    /// assert_eq!(m.final_row().unwrap().examples, 10);
    /// ```
    pub fn add_with_progress(
        &mut self,
        prediction: f64,
        label: f64,
        weight: f64,
        loss: Loss,
        features: usize,
    ) -> Option<ProgressRow> {
        let loss_value = loss.value(prediction, label);
        let wrong = (prediction > 0.0) != (label > 0.0);
        let residual = prediction - label;

        self.examples += 1;
        self.weighted += weight;
        self.loss_sum += weight * loss_value;
        if wrong {
            self.error_weight += weight;
        }
        self.squared_error_sum += weight * residual * residual;
        self.abs_error_sum += weight * residual.abs();
        self.label_sum += weight * label;
        self.label_sq_sum += weight * label * label;
        if !loss.is_classification() && label != 1.0 && label != -1.0 {
            self.classification = false;
        }
        if let Some(auc) = self.auc.as_mut().filter(|_| weight > 0.0) {
            auc.add(prediction, label > 0.0, weight);
        }

        let p = &mut self.progress;
        p.since_weight += weight;
        p.since_loss += weight * loss_value;
        p.label = label;
        p.prediction = prediction;
        p.features = features;

        if self.examples.is_power_of_two() {
            let row = self.current_row();
            let p = &mut self.progress;
            p.examples_at_last_row = self.examples;
            p.since_weight = 0.0;
            p.since_loss = 0.0;
            Some(row)
        } else {
            None
        }
    }

    /// The row describing the examples since the last emitted progress row, if any were added:
    /// a stream of 10 examples has rows at 1, 2, 4, 8, and this gives the row at 10 (`None` for
    /// a stream of 8). It does not reset anything: calling it twice gives the same row.
    pub fn final_row(&self) -> Option<ProgressRow> {
        (self.examples > self.progress.examples_at_last_row).then(|| self.current_row())
    }

    fn current_row(&self) -> ProgressRow {
        let p = &self.progress;
        ProgressRow {
            examples: self.examples,
            weighted_examples: self.weighted,
            average_loss: self.mean_loss(),
            since_last_loss: p.since_loss / p.since_weight,
            label: p.label,
            prediction: p.prediction,
            features: p.features,
        }
    }

    /// The number of examples added (whatever their weights).
    pub fn examples(&self) -> u64 {
        self.examples
    }

    /// The sum of the importance weights.
    pub fn weighted_examples(&self) -> f64 {
        self.weighted
    }

    /// The weighted mean loss; NaN when the total weight is 0.
    pub fn mean_loss(&self) -> f64 {
        self.loss_sum / self.weighted
    }

    /// The weighted 0/1 error rate (a score `≤ 0` predicts −1; a label `> 0` is positive).
    ///
    /// `None` when the total weight is 0, or when the stream is not a classification stream: an
    /// example was added with a regression loss ([`Loss::is_classification`] false) and a label
    /// other than ±1. So a squared loss on ±1 labels (as in the RFD paper's experiments) has an
    /// error rate, a regression stream has none.
    pub fn error_rate(&self) -> Option<f64> {
        (self.classification && self.weighted > 0.0).then(|| self.error_weight / self.weighted)
    }

    /// The error rate of the best constant prediction (always the more frequent class): the
    /// smaller of the weighted shares of positive and negative labels; `None` as for
    /// [`error_rate`](Metrics::error_rate).
    ///
    /// ```
    /// use sketchlearn::eval::Metrics;
    /// use sketchlearn::loss::Loss;
    /// let mut m = Metrics::new();
    /// m.add(-0.3, 1.0, 1.0, Loss::Logistic);
    /// m.add(0.1, -1.0, 3.0, Loss::Logistic);
    /// assert_eq!(m.constant_error_rate(), Some(0.25));
    /// ```
    pub fn constant_error_rate(&self) -> Option<f64> {
        // Weight of the positive labels: (Σw + Σw·y) / 2 for y ∈ {−1, 1}.
        let positive = ((self.weighted + self.label_sum) / 2.0 / self.weighted).clamp(0.0, 1.0);
        self.error_rate().map(|_| positive.min(1.0 - positive))
    }

    /// The weighted root mean squared error of the raw predictions; NaN when the total weight is 0.
    pub fn rmse(&self) -> f64 {
        (self.squared_error_sum / self.weighted).sqrt()
    }

    /// The weighted mean absolute error of the raw predictions; NaN when the total weight is 0.
    pub fn mae(&self) -> f64 {
        self.abs_error_sum / self.weighted
    }

    /// The coefficient of determination `R² = 1 − SSE/SST` of the raw predictions, with
    /// `SST = Σw(y − ȳ)² = Σwy² − (Σwy)²/Σw` (weighted; scikit-learn's `r2_score`): 1 for a
    /// perfect fit, 0 for the constant mean, negative when worse. `None` without weight or when
    /// the labels are constant (SST = 0).
    ///
    /// ```
    /// use sketchlearn::eval::Metrics;
    /// use sketchlearn::loss::Loss;
    /// let mut m = Metrics::new();
    /// for (p, y) in [(1.0, 1.0), (2.0, 3.0), (3.0, 2.0)] {
    ///     m.add(p, y, 1.0, Loss::Squared);
    /// }
    /// assert!((m.r2().unwrap() - 0.0).abs() < 1e-12); // SSE 2 = SST 2
    /// assert!((m.mae() - 2.0 / 3.0).abs() < 1e-12);
    /// ```
    pub fn r2(&self) -> Option<f64> {
        if self.weighted <= 0.0 {
            return None;
        }
        let sst = self.label_sq_sum - self.label_sum * self.label_sum / self.weighted;
        (sst > 1e-12 * self.label_sq_sum.max(f64::MIN_POSITIVE))
            .then(|| 1.0 - self.squared_error_sum / sst)
    }

    /// The weighted AUC (Mann–Whitney statistic, ties ½), computed now (O(n log n) on a copy of
    /// the stored scores while exact, O(bins) after). `None` when AUC data is not kept, or when
    /// the positives or the negatives have no (positive) weight. NaN scores sort after (or,
    /// negative NaN, before) every number and never tie.
    pub fn auc(&self) -> Option<f64> {
        self.auc.as_ref()?.auc().map(|(a, _)| a)
    }

    /// How far [`auc`](Metrics::auc) may be from the exact value: 0 while every score is kept
    /// (the first [`EXACT_AUC_LIMIT`] examples), else the bound of [`StreamingAuc`].
    pub fn auc_error_bound(&self) -> Option<f64> {
        self.auc.as_ref()?.auc().map(|(_, e)| e)
    }

    /// Adds `other`'s examples to these metrics, as if they had been added here after ours.
    ///
    /// AUC data is kept only if both kept it. For progress rows, `other`'s examples count as added
    /// since our last row, and `other`'s last example becomes the last example (if it has any).
    pub fn merge(&mut self, other: &Metrics) {
        self.examples += other.examples;
        self.weighted += other.weighted;
        self.loss_sum += other.loss_sum;
        self.error_weight += other.error_weight;
        self.squared_error_sum += other.squared_error_sum;
        self.abs_error_sum += other.abs_error_sum;
        self.label_sum += other.label_sum;
        self.label_sq_sum += other.label_sq_sum;
        self.classification &= other.classification;
        match (self.auc.as_mut(), other.auc.as_ref()) {
            (Some(a), Some(b)) => a.merge(b),
            _ => self.auc = None,
        }
        self.progress.since_weight += other.weighted;
        self.progress.since_loss += other.loss_sum;
        if other.examples > 0 {
            self.progress.label = other.progress.label;
            self.progress.prediction = other.progress.prediction;
            self.progress.features = other.progress.features;
        }
    }

    /// The metrics as plain numbers (what [`Metrics`] serializes as).
    pub fn summary(&self) -> MetricsSummary {
        MetricsSummary {
            examples: self.examples,
            weighted_examples: self.weighted,
            mean_loss: self.mean_loss(),
            error_rate: self.error_rate(),
            rmse: self.rmse(),
            auc: self.auc(),
        }
    }
}

impl Serialize for Metrics {
    /// Serializes the [`MetricsSummary`] (not the stored AUC data).
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.summary().serialize(serializer)
    }
}

/// The values of a [`Metrics`] at one moment (see its accessors for the definitions).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricsSummary {
    /// Number of examples.
    pub examples: u64,
    /// Sum of importance weights.
    pub weighted_examples: f64,
    /// Weighted mean loss (NaN, serialized by `serde_json` as `null`, when there is no weight).
    pub mean_loss: f64,
    /// Weighted 0/1 error rate of a classification stream.
    pub error_rate: Option<f64>,
    /// Weighted RMSE of the raw predictions (NaN when there is no weight).
    pub rmse: f64,
    /// Weighted AUC, when kept and both classes are present.
    pub auc: Option<f64>,
}

/// One VW-style progress line, emitted at cumulative example counts 1, 2, 4, 8, ... (and, at the
/// caller's choice, once more at the end: [`Metrics::final_row`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProgressRow {
    /// Examples so far.
    pub examples: u64,
    /// Sum of importance weights so far.
    pub weighted_examples: f64,
    /// Weighted mean loss so far (NaN when the weight so far is 0).
    pub average_loss: f64,
    /// Weighted mean loss of the examples since the previous row (NaN when their weight is 0).
    pub since_last_loss: f64,
    /// Label of the last example.
    pub label: f64,
    /// Prediction scored for the last example.
    pub prediction: f64,
    /// Number of stored features of the last example.
    pub features: usize,
}

/// Why [`progressive`] or [`evaluate`] stopped.
///
/// `E` is the error type of the example source (e.g. [`ParseError`](crate::ParseError)), passed
/// through unchanged.
#[derive(Debug, thiserror::Error)]
pub enum EvalError<E> {
    /// The example source failed (its error, unchanged: a parse error keeps its file, line and
    /// column, and displays exactly as before).
    #[error(transparent)]
    Source(E),
    /// The learner rejected an example.
    #[error("learning failed on example {example} (1-based, counted in this call)")]
    Learn {
        /// 1-based index of the example within this call.
        example: u64,
        /// The learner's error.
        source: LearnError,
    },
}

/// Progressive validation: for each example, `p = learner.learn(x, y, w)` (the prediction made
/// before the update), then `metrics` scores `p` with `loss`, and `on_row` is called with each
/// [`ProgressRow`] that falls due (cumulative counts 1, 2, 4, 8, ... of `metrics`). Returns the
/// number of examples read in this call.
///
/// On an error, the examples before it remain learned and in `metrics`. A source error is
/// returned as [`EvalError::Source`] unchanged; to skip a bad line and go on, pass the reader by
/// reference (`reader.by_ref()`) and call again. The final row at the end of a stream whose
/// length is not a power of two is [`Metrics::final_row`].
///
/// ```
/// use std::borrow::Cow;
/// use sketchlearn::eval::{progressive, Metrics};
/// use sketchlearn::linear::{LearnError, OnlineLearner};
/// use sketchlearn::loss::Loss;
/// use sketchlearn::{Example, Row};
///
/// /// A perceptron: w += y·x on a mistake (a score ≤ 0 predicts −1).
/// struct Perceptron(Vec<f64>);
/// impl OnlineLearner for Perceptron {
///     fn dim(&self) -> usize { self.0.len() }
///     fn predict(&self, x: Row<'_>) -> f64 { x.dot(&self.0) }
///     fn learn(&mut self, x: Row<'_>, y: f64, _weight: f64) -> Result<f64, LearnError> {
///         let p = self.predict(x);
///         if (p > 0.0) != (y > 0.0) {
///             x.axpy_into(y, &mut self.0);
///         }
///         Ok(p)
///     }
///     fn weights(&self) -> Cow<'_, [f64]> { Cow::Borrowed(&self.0) }
/// }
///
/// // Feature 0 decides the label; feature 1 is a constant.
/// let data: Vec<Example> = (0..100)
///     .map(|i| {
///         let y = if i % 3 == 0 { -1.0 } else { 1.0 };
///         Example { label: y, weight: 1.0, indices: vec![0, 1], values: vec![y, 1.0] }
///     })
///     .collect();
///
/// let mut learner = Perceptron(vec![0.0; 2]);
/// let mut metrics = Metrics::new();
/// let mut rows = Vec::new();
/// let n = progressive(
///     &mut learner,
///     data.into_iter().map(Ok::<_, std::convert::Infallible>),
///     Loss::Hinge,
///     &mut metrics,
///     |row| rows.push(row.examples),
/// )?;
/// assert_eq!(n, 100);
/// assert_eq!(rows, [1, 2, 4, 8, 16, 32, 64]);
/// assert_eq!(metrics.final_row().unwrap().examples, 100);
/// // Only the second example is a mistake (a score of 0 is right on the first, a negative, and
/// // wrong on the second, a positive); the perceptron is then exact.
/// assert_eq!(metrics.error_rate(), Some(0.01));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn progressive<L, E>(
    learner: &mut L,
    examples: impl IntoIterator<Item = Result<Example, E>>,
    loss: Loss,
    metrics: &mut Metrics,
    on_row: impl FnMut(&ProgressRow),
) -> Result<u64, EvalError<E>>
where
    L: OnlineLearner + ?Sized,
    E: std::error::Error + 'static,
{
    progressive_with(learner, owned_source(examples), loss, metrics, on_row)
}

/// [`progressive`] reading each example into one reused [`Example`]: `next(&mut ex)` fills `ex`
/// and returns `Ok(true)`, or returns `Ok(false)` at the end, as
/// [`LibsvmReader::read_into`](crate::LibsvmReader::read_into) does (`ex` is
/// [cleared](Example::clear) before each call, so a source that leaves the weight alone gets 1).
///
/// ```
/// use std::io::Cursor;
/// use sketchlearn::eval::{progressive_with, EvalError, Metrics};
/// # use std::borrow::Cow;
/// # use sketchlearn::linear::{LearnError, OnlineLearner};
/// # use sketchlearn::Row;
/// use sketchlearn::loss::Loss;
/// use sketchlearn::{LibsvmOptions, LibsvmReader};
/// # struct Zero(usize);
/// # impl OnlineLearner for Zero {
/// #     fn dim(&self) -> usize { self.0 }
/// #     fn predict(&self, _: Row<'_>) -> f64 { 0.0 }
/// #     fn learn(&mut self, _: Row<'_>, _: f64, _: f64) -> Result<f64, LearnError> { Ok(0.0) }
/// #     fn weights(&self) -> Cow<'_, [f64]> { Cow::Owned(vec![0.0; self.0]) }
/// # }
///
/// let text = "1 1:0.5\n-1 2:1\n1 3:x\n";
/// let mut reader =
///     LibsvmReader::new(Cursor::new(text), "train.libsvm", LibsvmOptions::default());
/// let mut metrics = Metrics::new();
/// let err = progressive_with(
///     &mut Zero(3),
///     |ex| reader.read_into(ex),
///     Loss::Logistic,
///     &mut metrics,
///     |_| {},
/// )
/// .unwrap_err();
/// assert!(matches!(err, EvalError::Source(_)));
/// assert_eq!(err.to_string(), r#"train.libsvm:3:5: cannot parse value "x""#);
/// assert_eq!(metrics.examples(), 2);
/// ```
pub fn progressive_with<L, E>(
    learner: &mut L,
    next: impl FnMut(&mut Example) -> Result<bool, E>,
    loss: Loss,
    metrics: &mut Metrics,
    on_row: impl FnMut(&ProgressRow),
) -> Result<u64, EvalError<E>>
where
    L: OnlineLearner + ?Sized,
    E: std::error::Error + 'static,
{
    run(
        next,
        |ex| learner.learn(ex.row(), ex.label, ex.weight),
        loss,
        metrics,
        on_row,
    )
}

/// Evaluation without learning: scores `learner.predict(x)` for each example with `loss` into
/// `metrics` (progress rows and [`Metrics::final_row`] as in [`progressive`]). Returns the
/// number of examples read in this call.
///
/// Features at or beyond `learner.dim()` (unseen in training) are dropped before `predict` is
/// called, so they count as zero whatever the learner does with them. The learner is borrowed
/// immutably: evaluation cannot update it. The only possible error is [`EvalError::Source`].
pub fn evaluate<L, E>(
    learner: &L,
    examples: impl IntoIterator<Item = Result<Example, E>>,
    loss: Loss,
    metrics: &mut Metrics,
    on_row: impl FnMut(&ProgressRow),
) -> Result<u64, EvalError<E>>
where
    L: OnlineLearner + ?Sized,
    E: std::error::Error + 'static,
{
    evaluate_with(learner, owned_source(examples), loss, metrics, on_row)
}

/// [`evaluate`] reading each example into one reused [`Example`] (see [`progressive_with`]).
pub fn evaluate_with<L, E>(
    learner: &L,
    next: impl FnMut(&mut Example) -> Result<bool, E>,
    loss: Loss,
    metrics: &mut Metrics,
    on_row: impl FnMut(&ProgressRow),
) -> Result<u64, EvalError<E>>
where
    L: OnlineLearner + ?Sized,
    E: std::error::Error + 'static,
{
    evaluate_each(learner, next, loss, metrics, on_row, |_| {})
}

/// [`evaluate_with`] handing each example's prediction to `on_prediction` (in input order,
/// before it is scored): for a front end that also writes the predictions, so that each
/// example is predicted once and the written value is the scored one.
pub(crate) fn evaluate_each<L, E>(
    learner: &L,
    next: impl FnMut(&mut Example) -> Result<bool, E>,
    loss: Loss,
    metrics: &mut Metrics,
    on_row: impl FnMut(&ProgressRow),
    mut on_prediction: impl FnMut(f64),
) -> Result<u64, EvalError<E>>
where
    L: OnlineLearner + ?Sized,
    E: std::error::Error + 'static,
{
    let dim = learner.dim();
    run(
        next,
        |ex| {
            let prediction = learner.predict(ex.row_within(dim));
            on_prediction(prediction);
            Ok(prediction)
        },
        loss,
        metrics,
        on_row,
    )
}

/// Adapts an iterator of owned examples to the `read_into` style (moves each into the slot).
fn owned_source<E>(
    examples: impl IntoIterator<Item = Result<Example, E>>,
) -> impl FnMut(&mut Example) -> Result<bool, E> {
    let mut examples = examples.into_iter();
    move |slot| match examples.next() {
        None => Ok(false),
        Some(Ok(ex)) => {
            *slot = ex;
            Ok(true)
        }
        Some(Err(e)) => Err(e),
    }
}

/// The loop: read, score, add to metrics, emit rows.
fn run<E>(
    mut next: impl FnMut(&mut Example) -> Result<bool, E>,
    mut score: impl FnMut(&Example) -> Result<f64, LearnError>,
    loss: Loss,
    metrics: &mut Metrics,
    mut on_row: impl FnMut(&ProgressRow),
) -> Result<u64, EvalError<E>> {
    let mut ex = Example::default();
    let mut n = 0u64;
    loop {
        ex.clear();
        if !next(&mut ex).map_err(EvalError::Source)? {
            return Ok(n);
        }
        n += 1;
        let prediction = score(&ex).map_err(|source| EvalError::Learn { example: n, source })?;
        if let Some(row) =
            metrics.add_with_progress(prediction, ex.label, ex.weight, loss, ex.indices.len())
        {
            on_row(&row);
        }
    }
}
