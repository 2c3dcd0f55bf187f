//! Multiclass metrics (error, multiclass log loss, confusion matrix) and the progressive loop
//! of a [`MulticlassLearner`] with the refused-step policy.
//!
//! Examples carry their class as an index `0..K` in [`Example::label`] (what
//! [`Labeled`](crate::data::Labeled) with [`LabelMap::Multiclass`](crate::data::LabelMap)
//! produces from the user's labels).
//!
//! ```
//! use sketchlearn::eval::multiclass::{progressive_multiclass, MulticlassMetrics};
//! use sketchlearn::linear::multiclass::MulticlassConfig;
//! use sketchlearn::Example;
//! let mut learner = MulticlassConfig { classes: 3, ..Default::default() }.build(3).unwrap();
//! let data: Vec<Example> = (0..300)
//!     .map(|t| Example { label: (t % 3) as f64, weight: 1.0, indices: vec![(t % 3) as u32], values: vec![1.0] })
//!     .collect();
//! let mut data = data.into_iter();
//! let mut metrics = MulticlassMetrics::new(3);
//! let pass = progressive_multiclass(
//!     &mut learner,
//!     |ex: &mut Example| Ok::<_, std::convert::Infallible>(data.next().map(|d| *ex = d).is_some()),
//!     &mut metrics,
//!     &mut (),
//! )
//! .unwrap();
//! assert_eq!(pass.examples, 300);
//! assert!(metrics.error_rate().unwrap() < 0.05);
//! let s = metrics.summary();
//! assert_eq!(s.confusion_matrix.iter().flatten().sum::<u64>(), 300);
//! ```

use super::EvalError;
use crate::linear::multiclass::MulticlassLearner;
use crate::linear::LearnError;
use crate::Example;
use serde::{Deserialize, Serialize};

/// The smallest probability the log loss takes (scikit-learn clips the same way), so that one
/// confident mistake costs `ln 10¹⁵ ≈ 34.5`, not infinity.
pub const LOG_LOSS_EPS: f64 = 1e-15;

/// Weighted multiclass metrics of a stream of predictions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MulticlassMetrics {
    classes: usize,
    examples: u64,
    weight: f64,
    wrong: f64,
    log_loss: f64,
    /// Row `true class`, column `predicted class`, counts of examples (row-major `K × K`).
    confusion: Vec<u64>,
    since_weight: f64,
    since_wrong: f64,
    next_row: u64,
}

/// One progress line at cumulative counts 1, 2, 4, 8, …
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MulticlassRow {
    /// Examples so far.
    pub examples: u64,
    /// Weighted error so far.
    pub error: f64,
    /// Weighted error of the examples since the previous row.
    pub since_last_error: f64,
    /// Weighted mean multiclass log loss so far.
    pub log_loss: f64,
    /// The last example's class index.
    pub class: usize,
    /// The class predicted for it.
    pub predicted: usize,
}

/// What a JSON summary holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MulticlassSummary {
    /// Examples scored.
    pub examples: u64,
    /// Sum of their weights.
    pub weighted_examples: f64,
    /// Weighted error rate (NaN without weight).
    pub error: f64,
    /// Its binomial standard error `√(e(1−e)/n)`.
    pub error_se: f64,
    /// Weighted mean multiclass log loss `−ln max(p_y, 10⁻¹⁵)`.
    pub log_loss: f64,
    /// `confusion_matrix[true][predicted]`, counts.
    pub confusion_matrix: Vec<Vec<u64>>,
}

impl MulticlassMetrics {
    /// Empty metrics of `k` classes.
    pub fn new(k: usize) -> Self {
        MulticlassMetrics {
            classes: k,
            examples: 0,
            weight: 0.0,
            wrong: 0.0,
            log_loss: 0.0,
            confusion: vec![0; k * k],
            since_weight: 0.0,
            since_wrong: 0.0,
            next_row: 1,
        }
    }

    /// Scores the probabilities `p` (one per class) of an example of class `class` with
    /// importance `weight`; the prediction is the most probable class (the first of ties).
    /// Returns a progress row when one falls due.
    pub fn add(&mut self, p: &[f64], class: usize, weight: f64) -> Option<MulticlassRow> {
        let predicted = crate::linear::multiclass::argmax(p);
        let k = self.classes;
        self.examples += 1;
        self.weight += weight;
        self.since_weight += weight;
        let miss = if predicted == class { 0.0 } else { weight };
        self.wrong += miss;
        self.since_wrong += miss;
        let py = p.get(class).copied().unwrap_or(0.0);
        let py = if py.is_nan() { 0.0 } else { py };
        self.log_loss -= weight * py.max(LOG_LOSS_EPS).ln();
        if class < k && predicted < k {
            self.confusion[class * k + predicted] += 1;
        }
        if self.examples < self.next_row {
            return None;
        }
        self.next_row *= 2;
        let row = MulticlassRow {
            examples: self.examples,
            error: self.error_rate().unwrap_or(f64::NAN),
            since_last_error: self.since_wrong / self.since_weight,
            log_loss: self.log_loss(),
            class,
            predicted,
        };
        self.since_weight = 0.0;
        self.since_wrong = 0.0;
        Some(row)
    }

    /// Number of classes.
    pub fn classes(&self) -> usize {
        self.classes
    }

    /// Examples scored.
    pub fn examples(&self) -> u64 {
        self.examples
    }

    /// Weighted error rate; `None` before any weight.
    pub fn error_rate(&self) -> Option<f64> {
        (self.weight > 0.0).then(|| self.wrong / self.weight)
    }

    /// Weighted mean multiclass log loss (NaN before any weight).
    pub fn log_loss(&self) -> f64 {
        self.log_loss / self.weight
    }

    /// `confusion()[t][p]`: examples of class `t` predicted as `p`.
    pub fn confusion(&self) -> Vec<Vec<u64>> {
        self.confusion
            .chunks(self.classes.max(1))
            .map(<[u64]>::to_vec)
            .collect()
    }

    /// The summary for reports.
    pub fn summary(&self) -> MulticlassSummary {
        let e = self.error_rate().unwrap_or(f64::NAN);
        MulticlassSummary {
            examples: self.examples,
            weighted_examples: self.weight,
            error: e,
            error_se: (e * (1.0 - e) / self.examples as f64).sqrt(),
            log_loss: self.log_loss(),
            confusion_matrix: self.confusion(),
        }
    }
}

/// What a progressive or evaluation pass reports to its caller, example by example.
pub trait MulticlassProgress {
    /// A run of the learner described by `learner` is about to read examples of these classes
    /// (called by
    /// [`run::train_multiclass`](crate::run::train_multiclass) and
    /// [`run::evaluate_multiclass_input`](crate::run::evaluate_multiclass_input) after the
    /// classes were settled and checked); an error stops the run before any example is read.
    fn started(
        &mut self,
        _classes: &crate::labels::Classes,
        _learner: &str,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        Ok(())
    }
    /// A training run reads a CSV input with this schema into these classes (called by
    /// [`run::train_multiclass`](crate::run::train_multiclass) just before
    /// [`started`](Self::started), as a binary run's [`RunStart::schema`](crate::run::RunStart)).
    fn schema(&mut self, _schema: &crate::data::Schema, _classes: &crate::labels::Classes) {}
    /// A progress row fell due.
    fn row(&mut self, _row: &MulticlassRow) {}
    /// The probabilities scored for `ex` (its label is the class index).
    fn prediction(&mut self, _ex: &Example, _p: &[f64]) {}
    /// A training pass ended (with its hold-out and test metrics when the run has them).
    fn pass_done(&mut self, _report: &MulticlassPassReport<'_>) {}
    /// Something to tell the user (the run goes on).
    fn warning(&mut self, _warning: &crate::run::Warning) {}
}

/// The numbers of a training pass just ended ([`MulticlassProgress::pass_done`]).
pub type MulticlassPassReport<'a> = crate::run::PassReport<'a, MulticlassMetrics>;

impl MulticlassProgress for () {}

/// The counts of a pass.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MulticlassPass {
    /// Examples read in this call.
    pub examples: u64,
    /// Steps refused in this call ([`LearnError::Diverged`]: the example is scored with the
    /// unchanged learner's probabilities).
    pub refused: u64,
}

/// Progressive validation of a multiclass learner: for each example, the probabilities before
/// the update are scored into `metrics` and reported to `progress`. A refused step
/// ([`LearnError::Diverged`]) keeps the learner as it was and is counted; any other learner
/// error stops the pass ([`EvalError::Learn`]), as does a source error ([`EvalError::Source`]);
/// the examples before it stay learned.
pub fn progressive_multiclass<L, E>(
    learner: &mut L,
    mut next: impl FnMut(&mut Example) -> Result<bool, E>,
    metrics: &mut MulticlassMetrics,
    progress: &mut dyn MulticlassProgress,
) -> Result<MulticlassPass, EvalError<E>>
where
    L: MulticlassLearner + ?Sized,
{
    let mut ex = Example::default();
    let mut pass = MulticlassPass::default();
    loop {
        ex.clear();
        if !next(&mut ex).map_err(EvalError::Source)? {
            return Ok(pass);
        }
        pass.examples += 1;
        let fail = |source| EvalError::Learn {
            example: pass.examples,
            source,
        };
        let class = class_of(&ex, learner.classes()).map_err(fail)?;
        let p = match learner.learn(ex.row(), class, ex.weight) {
            Ok(p) => p,
            Err(LearnError::Diverged(_)) => {
                pass.refused += 1;
                learner.predict_proba(ex.row())
            }
            Err(e) => return Err(fail(e)),
        };
        progress.prediction(&ex, &p);
        if let Some(row) = metrics.add(&p, class, ex.weight) {
            progress.row(&row);
        }
    }
}

/// Scores a held-out stream without learning (features at or beyond the learner's dimension
/// count as zero). Returns the number of examples read.
pub fn evaluate_multiclass<L, E>(
    learner: &L,
    mut next: impl FnMut(&mut Example) -> Result<bool, E>,
    metrics: &mut MulticlassMetrics,
    progress: &mut dyn MulticlassProgress,
) -> Result<u64, EvalError<E>>
where
    L: MulticlassLearner + ?Sized,
{
    let dim = learner.dim();
    let mut ex = Example::default();
    let mut n = 0;
    loop {
        ex.clear();
        if !next(&mut ex).map_err(EvalError::Source)? {
            return Ok(n);
        }
        n += 1;
        let class = class_of(&ex, learner.classes())
            .map_err(|source| EvalError::Learn { example: n, source })?;
        let p = learner.predict_proba(ex.row_within(dim));
        progress.prediction(&ex, &p);
        if let Some(row) = metrics.add(&p, class, ex.weight) {
            progress.row(&row);
        }
    }
}

/// The class index an example's label holds.
pub(crate) fn class_of(ex: &Example, k: usize) -> Result<usize, LearnError> {
    let y = ex.label;
    if y >= 0.0 && y.fract() == 0.0 && y < k as f64 {
        Ok(y as usize)
    } else {
        Err(LearnError::InvalidParameter(format!(
            "label {y} is not a class index 0..{k} (map the labels with data::Labeled)"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_by_hand() {
        let mut m = MulticlassMetrics::new(3);
        assert!(m.add(&[0.7, 0.2, 0.1], 0, 1.0).is_some());
        assert!(m.add(&[0.2, 0.5, 0.3], 2, 1.0).is_some());
        assert!(m.add(&[0.0, 0.0, 1.0], 1, 2.0).is_none());
        assert_eq!(m.error_rate(), Some(3.0 / 4.0));
        let ll = -(0.7f64.ln() + 0.3f64.ln() + 2.0 * LOG_LOSS_EPS.ln()) / 4.0;
        assert!((m.log_loss() - ll).abs() < 1e-12);
        assert_eq!(
            m.confusion(),
            vec![vec![1, 0, 0], vec![0, 0, 1], vec![0, 1, 0]]
        );
        let s = m.summary();
        assert!((s.error_se - (0.75f64 * 0.25 / 3.0).sqrt()).abs() < 1e-15);
    }

    #[test]
    fn a_label_that_is_no_class_index_is_an_error() {
        let mut l = crate::linear::multiclass::MulticlassConfig {
            classes: 2,
            ..Default::default()
        }
        .build(1)
        .unwrap();
        let mut sent = false;
        let err = progressive_multiclass(
            &mut l,
            |ex: &mut Example| {
                ex.label = 2.0;
                Ok::<_, std::convert::Infallible>(!std::mem::replace(&mut sent, true))
            },
            &mut MulticlassMetrics::new(2),
            &mut (),
        )
        .unwrap_err();
        assert!(matches!(err, EvalError::Learn { example: 1, .. }));
    }
}
