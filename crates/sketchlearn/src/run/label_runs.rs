//! [`LabelRuns`]: is the stream sorted by label? Progressive validation assumes the examples
//! come in random order; a file sorted by class (all negatives, then all positives) gives a
//! meaningless progressive error and a learner that ends up fitting the last class.
//!
//! The check counts label changes between consecutive examples. In a random order of `n`
//! examples with class frequencies `p_c`, consecutive labels differ with probability
//! `1 − Σ p_c²`, so about `(n − 1)(1 − Σ p_c²)` changes are expected (the variance is of the same
//! order, so the count is within a few square roots of it). A sorted file has `K − 1`. Fewer
//! than a quarter of the expected changes, with at least 20 expected, is reported — far outside
//! the random-order range, and a real time-ordered stream that drifts is also worth the notice.
//! Classification only (labels are a few classes); regression labels are not checked.

use std::collections::BTreeMap;

/// Counts label changes and class frequencies of a stream (see the [module](self)
/// documentation).
///
/// ```
/// use sketchlearn::run::LabelRuns;
/// let mut sorted = LabelRuns::default();
/// for i in 0..200 {
///     sorted.add(if i < 100 { -1.0 } else { 1.0 });
/// }
/// assert_eq!(sorted.changes(), 1);
/// assert!(sorted.in_runs().is_some()); // ~100 changes expected
///
/// let mut mixed = LabelRuns::default();
/// for i in 0..200 {
///     mixed.add(if (i * 7919) % 13 < 6 { -1.0 } else { 1.0 });
/// }
/// assert!(mixed.in_runs().is_none());
/// ```
#[derive(Clone, Debug, Default)]
pub struct LabelRuns {
    counts: BTreeMap<u64, u64>,
    last: Option<f64>,
    changes: u64,
    n: u64,
    /// More distinct labels than a classification has: not checked.
    too_many: bool,
}

/// Distinct labels beyond which the labels are taken for a regression target.
const MAX_DISTINCT: usize = 64;

impl LabelRuns {
    /// Adds the next label.
    pub fn add(&mut self, label: f64) {
        self.n += 1;
        if self.last.is_some_and(|l| l != label) {
            self.changes += 1;
        }
        self.last = Some(label);
        if !self.too_many {
            *self.counts.entry(label.to_bits()).or_insert(0) += 1;
            self.too_many = self.counts.len() > MAX_DISTINCT;
        }
    }

    /// Label changes between consecutive examples.
    pub fn changes(&self) -> u64 {
        self.changes
    }

    /// The changes a random order of the same labels would have on average.
    pub fn expected_changes(&self) -> f64 {
        if self.n < 2 {
            return 0.0;
        }
        let n = self.n as f64;
        let same: f64 = self.counts.values().map(|&c| (c as f64 / n).powi(2)).sum();
        (n - 1.0) * (1.0 - same)
    }

    /// `Some((changes, expected))` when the labels come in long runs (fewer than a quarter of
    /// the expected changes, at least 20 expected); `None` otherwise or for regression labels.
    pub fn in_runs(&self) -> Option<(u64, f64)> {
        let expected = self.expected_changes();
        (!self.too_many && expected >= 20.0 && (self.changes as f64) < expected / 4.0)
            .then_some((self.changes, expected))
    }
}
