//! An intercept (bias) for any learner: a constant feature appended at index `d`, as Vowpal
//! Wabbit's constant feature (value 1 by default). The wrapped learner has dimension `d + 1`;
//! its last weight times the constant is the bias. The constant goes through the wrapped
//! learner's update like any feature (so the curvature sketches and diagonal adaptation see it
//! too).
//!
//! The constant's value sets how fast a scale-free learner moves the bias: AdaGrad's step on a
//! coordinate is `η·g/√Σg²` in weight units whatever the feature's scale, so with a constant `v`
//! the bias moves by `v·η` per step while the features move by `η`. A value below 1 gives the
//! bias a smaller learning rate than the weights (River's `LogisticRegression` learns its
//! intercept by plain SGD at a fixed 0.01 for the same reason).

use super::{LearnError, OnlineLearner};
use crate::merge::{MergeResult, MergeShare};
use crate::Row;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// Appends a constant feature to every example.
///
/// ```
/// use sketchlearn::linear::{AdaGrad, Intercept, OnlineLearner};
/// use sketchlearn::loss::Loss;
/// use sketchlearn::Row;
/// // Two features plus the bias: the inner learner has dimension 3.
/// let mut model = Intercept::new(AdaGrad::new(3, Loss::Logistic, 0.5).unwrap());
/// assert_eq!(model.dim(), 2);
/// for _ in 0..10 {
///     model.learn(Row::Sparse { indices: &[], values: &[] }, 1.0, 1.0).unwrap();
/// }
/// // With no features at all, only the bias can learn the constant label.
/// assert!(model.predict(Row::Dense(&[0.0, 0.0])) > 0.0);
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Intercept<L> {
    inner: L,
    /// The constant feature's value (finite, > 0).
    value: f64,
    #[serde(skip)]
    indices: Vec<u32>,
    #[serde(skip)]
    values: Vec<f64>,
}

impl<L: OnlineLearner> Intercept<L> {
    /// Wraps `inner`, whose dimension must be `d + 1` (the last coordinate is the bias), with
    /// the constant feature 1.
    pub fn new(inner: L) -> Self {
        Intercept {
            inner,
            value: 1.0,
            indices: Vec::new(),
            values: Vec::new(),
        }
    }

    /// Wraps `inner` with the constant feature `value` (finite, > 0).
    ///
    /// ```
    /// use sketchlearn::linear::{AdaGrad, Intercept, OnlineLearner};
    /// use sketchlearn::loss::Loss;
    /// let model = Intercept::with_value(AdaGrad::new(3, Loss::Logistic, 4.0).unwrap(), 0.03);
    /// assert!(model.is_ok());
    /// assert!(Intercept::with_value(AdaGrad::new(3, Loss::Logistic, 4.0).unwrap(), 0.0).is_err());
    /// ```
    pub fn with_value(inner: L, value: f64) -> Result<Self, LearnError> {
        if !(value.is_finite() && value > 0.0) {
            return Err(LearnError::InvalidParameter(format!(
                "the intercept's constant feature must be finite and > 0, got {value}"
            )));
        }
        Ok(Intercept {
            value,
            ..Intercept::new(inner)
        })
    }

    /// The constant feature's value.
    pub fn value(&self) -> f64 {
        self.value
    }

    /// The wrapped learner (dimension `d + 1`).
    pub fn inner(&self) -> &L {
        &self.inner
    }

    /// The wrapped learner, to change (a mixture's retirement threshold: `any.rs`).
    pub(super) fn inner_mut(&mut self) -> &mut L {
        &mut self.inner
    }

    /// The bias: the constant feature's weight times its value.
    pub fn bias(&self) -> f64 {
        self.value * self.inner.weights().last().copied().unwrap_or(0.0)
    }

    fn extend(&self, x: Row<'_>, indices: &mut Vec<u32>, values: &mut Vec<f64>) {
        let d = self.dim();
        indices.clear();
        values.clear();
        match x {
            Row::Dense(v) => {
                for (i, &xi) in v.iter().enumerate().take(d) {
                    if xi != 0.0 {
                        indices.push(i as u32);
                        values.push(xi);
                    }
                }
            }
            Row::Sparse {
                indices: idx,
                values: val,
            } if idx.last().is_none_or(|&i| (i as usize) < d) => {
                // The common case: every feature in range, the bias goes last.
                indices.extend_from_slice(idx);
                values.extend_from_slice(val);
                indices.push(d as u32);
                values.push(self.value);
                return;
            }
            Row::Sparse {
                indices: idx,
                values: val,
            } => {
                // Out-of-range features are kept: the wrapped learner reports them (learn) or
                // ignores them (predict); they must not collide with the bias index.
                for (&i, &xi) in idx.iter().zip(val) {
                    if (i as usize) < d {
                        indices.push(i);
                        values.push(xi);
                    } else {
                        indices.push(i.saturating_add(1));
                        values.push(xi);
                    }
                }
            }
        }
        // Keep indices sorted: the bias index d goes before any (shifted) out-of-range index.
        let pos = indices.partition_point(|&i| (i as usize) < d);
        indices.insert(pos, d as u32);
        values.insert(pos, self.value);
    }
}

/// `out = [x (zero-padded to d, features beyond d dropped); value]`.
fn dense_with_bias(x: &[f64], d: usize, value: f64, out: &mut Vec<f64>) {
    out.clear();
    out.extend_from_slice(&x[..x.len().min(d)]);
    out.resize(d, 0.0);
    out.push(value);
}

impl<L: OnlineLearner> OnlineLearner for Intercept<L> {
    fn dim(&self) -> usize {
        // The inner learner has the bias column, so at least one; a damaged model file's inner
        // of none reports `usize::MAX` (as the release build's wrapping did), which the load
        // checks refuse as a dimension above 2^32 instead of panicking in a debug build.
        self.inner.dim().checked_sub(1).unwrap_or(usize::MAX)
    }

    fn predict(&self, x: Row<'_>) -> f64 {
        let (mut i, mut v) = (Vec::new(), Vec::new());
        if let Row::Dense(x) = x {
            dense_with_bias(x, self.dim(), self.value, &mut v);
            return self.inner.predict(Row::Dense(&v));
        }
        self.extend(x, &mut i, &mut v);
        self.inner.predict(Row::Sparse {
            indices: &i,
            values: &v,
        })
    }

    fn learn(&mut self, x: Row<'_>, y: f64, weight: f64) -> Result<f64, LearnError> {
        if let Row::Dense(v) = x {
            if v.len() > self.dim() {
                return Err(LearnError::DimensionMismatch {
                    index: v.len() - 1,
                    dim: self.dim(),
                });
            }
        }
        let (mut i, mut v) = (
            std::mem::take(&mut self.indices),
            std::mem::take(&mut self.values),
        );
        // A dense row stays dense (the inner learner's contiguous, vectorised path); a sparse
        // one gets the bias index appended.
        let r = if let Row::Dense(x) = x {
            dense_with_bias(x, self.dim(), self.value, &mut v);
            self.inner.learn(Row::Dense(&v), y, weight)
        } else {
            self.extend(x, &mut i, &mut v);
            self.inner.learn(
                Row::Sparse {
                    indices: &i,
                    values: &v,
                },
                y,
                weight,
            )
        };
        self.indices = i;
        self.values = v;
        match r {
            Err(LearnError::DimensionMismatch { index, .. }) => {
                Err(LearnError::DimensionMismatch {
                    index: index - 1,
                    dim: self.dim(),
                })
            }
            other => other,
        }
    }

    #[inline]
    fn prefetch(&self, x: Row<'_>) {
        self.inner.prefetch(x);
    }

    /// The wrapped learner's weights; the last one is the bias ([`Intercept::bias`]: the
    /// constant's weight times its value).
    fn weights(&self) -> Cow<'_, [f64]> {
        let w = self.inner.weights();
        if self.value == 1.0 {
            return w;
        }
        let mut w = w.into_owned();
        if let Some(b) = w.last_mut() {
            *b *= self.value;
        }
        Cow::Owned(w)
    }
}

/// The wrapped learners merged (the bias is one of their weights).
impl<L: MergeShare> MergeShare for Intercept<L> {
    fn check_merge(&self, other: &Self, base: Option<&Self>) -> MergeResult {
        crate::merge::with_base(self, other, base, |a, b| {
            crate::merge::same("intercept value", a.value.to_bits(), b.value.to_bits())
        })?;
        self.inner.check_merge(&other.inner, base.map(|b| &b.inner))
    }

    fn merge_share(&mut self, other: &Self, base: Option<&Self>, share: f64) -> MergeResult {
        self.check_merge(other, base)?;
        self.inner
            .merge_share(&other.inner, base.map(|b| &b.inner), share)
    }
}

#[cfg(test)]
mod tests {
    use super::Intercept;
    use crate::linear::{AdaGrad, OnlineLearner};
    use crate::loss::Loss;
    use crate::Row;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// The wrapper with constant `v` is the wrapped learner fed `[x; v]`, to the bit, on dense
    /// and sparse rows; its last weight is the bias `v·w_d`.
    #[test]
    fn constant_value_is_an_appended_feature() {
        let (d, v) = (6, 0.03125);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let mut wrapped =
            Intercept::with_value(AdaGrad::new(d + 1, Loss::Logistic, 4.0).unwrap(), v).unwrap();
        let mut plain = AdaGrad::new(d + 1, Loss::Logistic, 4.0).unwrap();
        for t in 0..300 {
            let x: Vec<f64> = (0..d)
                .map(|_| {
                    if rng.random_bool(0.5) {
                        rng.random_range(-3.0..3.0)
                    } else {
                        0.0
                    }
                })
                .collect();
            let y = if rng.random_bool(0.5) { 1.0 } else { -1.0 };
            let mut full = x.clone();
            full.push(v);
            let (expected, got) = if t % 2 == 0 {
                (
                    plain.learn(Row::Dense(&full), y, 1.0).unwrap(),
                    wrapped.learn(Row::Dense(&x), y, 1.0).unwrap(),
                )
            } else {
                let indices: Vec<u32> = (0..d as u32).filter(|&i| x[i as usize] != 0.0).collect();
                let values: Vec<f64> = indices.iter().map(|&i| x[i as usize]).collect();
                let (mut fi, mut fv) = (indices.clone(), values.clone());
                fi.push(d as u32);
                fv.push(v);
                (
                    plain
                        .learn(
                            Row::Sparse {
                                indices: &fi,
                                values: &fv,
                            },
                            y,
                            1.0,
                        )
                        .unwrap(),
                    wrapped
                        .learn(
                            Row::Sparse {
                                indices: &indices,
                                values: &values,
                            },
                            y,
                            1.0,
                        )
                        .unwrap(),
                )
            };
            assert_eq!(got.to_bits(), expected.to_bits(), "example {t}");
        }
        let (w, p) = (wrapped.weights(), plain.weights());
        assert_eq!(&w[..d], &p[..d]);
        assert_eq!(w[d], v * p[d]);
        assert_eq!(wrapped.bias(), v * p[d]);
    }

    /// AdaGrad's step is scale-free per coordinate, so the bias (constant × weight) moves `v`
    /// times as far with the constant `v` as with 1: the point of a constant below 1.
    #[test]
    fn adagrad_bias_moves_in_proportion_to_the_constant() {
        let empty = Row::Sparse {
            indices: &[],
            values: &[],
        };
        let bias_after = |v: f64, labels: &[f64]| {
            let mut m =
                Intercept::with_value(AdaGrad::new(3, Loss::Logistic, 4.0).unwrap(), v).unwrap();
            for &y in labels {
                m.learn(empty, y, 1.0).unwrap();
            }
            m.bias()
        };
        // The first step: exactly v·η (the gradient's sign times the rate, in bias units).
        assert_eq!(bias_after(1.0, &[1.0]), 4.0);
        assert_eq!(bias_after(1.0 / 32.0, &[1.0]), 4.0 / 32.0);
        let labels = [1.0, 1.0, -1.0, 1.0];
        let (one, small) = (bias_after(1.0, &labels), bias_after(1.0 / 32.0, &labels));
        assert!(one.abs() > 1.0, "{one}");
        // Not exactly: the loss derivative at each step depends on the bias reached so far.
        assert!(
            small.abs() < one.abs() / 8.0 && small.abs() > 0.0,
            "{small} vs {one}"
        );
    }

    #[test]
    fn non_positive_or_non_finite_constants_are_rejected() {
        for v in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let inner = AdaGrad::new(3, Loss::Logistic, 0.5).unwrap();
            assert!(Intercept::with_value(inner, v).is_err(), "{v}");
        }
    }
}
