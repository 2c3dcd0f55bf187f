//! The running mean of the labels seen so far: the constant predictor every regression default
//! must beat. As a member of the squared-loss mixture ([`super::LearnerConfig::auto_members`]) it
//! bounds the mixture's progressive squared error by the running mean's plus the mixing regret
//! (see [`super::MixRule::AdaHedgeScaled`]): on a stream where the linear members diverge or have
//! not yet learned the label's offset, the mixture falls back on it.
//!
//! With importance weights `w_s` the prediction for round `t` is the weighted mean
//! `ȳ_{t−1} = Σ_{s<t} w_s y_s / Σ_{s<t} w_s` (0 before any label), updated incrementally
//! (West, *Updating mean and variance estimates: an improved method*, CACM 1979):
//! `ȳ_t = ȳ_{t−1} + w_t/W_t · (y_t − ȳ_{t−1})` with `W_t = Σ_{s≤t} w_s`.

use super::{check_example, LearnError, OnlineLearner};
use crate::merge::{MergeResult, MergeShare};
use crate::Row;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// Predicts the importance-weighted running mean of the labels; ignores the features.
///
/// ```
/// use sketchlearn::linear::{OnlineLearner, RunningMean};
/// use sketchlearn::Row;
/// let mut m = RunningMean::new(2);
/// let x = Row::Dense(&[1.0, 2.0]);
/// assert_eq!(m.learn(x, 4.0, 1.0).unwrap(), 0.0); // nothing seen yet
/// assert_eq!(m.learn(x, 8.0, 1.0).unwrap(), 4.0);
/// assert_eq!(m.predict(x), 6.0);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunningMean {
    dim: usize,
    /// `W`: the importance weights seen.
    total_weight: f64,
    /// `ȳ`: the weighted mean of the labels seen.
    mean: f64,
}

impl RunningMean {
    /// A running mean for examples of dimension `dim` (the features are checked, not used).
    pub fn new(dim: usize) -> Self {
        RunningMean {
            dim,
            total_weight: 0.0,
            mean: 0.0,
        }
    }

    /// The current mean (0 before any label).
    pub fn mean(&self) -> f64 {
        self.mean
    }
}

impl OnlineLearner for RunningMean {
    fn dim(&self) -> usize {
        self.dim
    }

    fn predict(&self, _x: Row<'_>) -> f64 {
        self.mean
    }

    fn learn(&mut self, x: Row<'_>, y: f64, weight: f64) -> Result<f64, LearnError> {
        check_example(&x, y, weight, self.dim)?;
        let p = self.mean;
        if weight > 0.0 {
            self.total_weight += weight;
            self.mean += weight / self.total_weight * (y - self.mean);
        }
        Ok(p)
    }

    /// No feature weights: all zeros (the mean is not a weight of `x`).
    fn weights(&self) -> Cow<'_, [f64]> {
        Cow::Owned(vec![0.0; self.dim])
    }
}

/// The weighted mean of both shards' labels (exactly one stream's).
impl MergeShare for RunningMean {
    fn check_merge(&self, other: &Self, base: Option<&Self>) -> MergeResult {
        crate::merge::with_base(self, other, base, |a, b| {
            crate::merge::same("dimension", a.dim, b.dim)
        })
    }

    fn merge_share(&mut self, other: &Self, base: Option<&Self>, _share: f64) -> MergeResult {
        self.check_merge(other, base)?;
        let m = |s: &Self| (s.total_weight, s.mean, 0.0);
        (self.total_weight, self.mean, _) =
            crate::merge::merge_moments(m(self), m(other), base.map(m));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-checked: labels 3, 5, 10 (weights 1, 1, 2) give the progressive predictions
    /// 0, 3, 4 and then the weighted mean (3 + 5 + 2·10)/4 = 7.
    #[test]
    fn equals_the_running_mean_by_hand() {
        let mut m = RunningMean::new(1);
        let x = Row::Dense(&[123.0]);
        assert_eq!(m.learn(x, 3.0, 1.0).unwrap(), 0.0);
        assert_eq!(m.learn(x, 5.0, 1.0).unwrap(), 3.0);
        assert_eq!(m.learn(x, 10.0, 2.0).unwrap(), 4.0);
        assert_eq!(m.predict(x), 7.0);
        // A zero weight changes nothing.
        assert_eq!(m.learn(x, 1e9, 0.0).unwrap(), 7.0);
        assert_eq!(m.mean(), 7.0);
    }

    /// Over a long stream it equals the mean computed directly, to rounding.
    #[test]
    fn equals_the_direct_mean() {
        let mut m = RunningMean::new(0);
        let empty = Row::Sparse {
            indices: &[],
            values: &[],
        };
        let mut sum = 0.0;
        for t in 1..=1000 {
            let y = ((t * 7919) % 1013) as f64 * 100.0;
            let p = m.learn(empty, y, 1.0).unwrap();
            if t > 1 {
                assert!((p - sum / (t - 1) as f64).abs() <= 1e-9 * sum.abs(), "{t}");
            }
            sum += y;
        }
    }
}
