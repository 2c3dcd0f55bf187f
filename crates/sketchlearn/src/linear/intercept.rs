//! An intercept (bias) for any learner: a constant feature 1 appended at index `d`, as Vowpal
//! Wabbit's constant feature. The wrapped learner has dimension `d + 1`; its last weight is the
//! bias. The constant goes through the wrapped learner's update like any feature (so the
//! curvature sketches and diagonal adaptation see it too).

use super::{LearnError, OnlineLearner};
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
    #[serde(skip)]
    indices: Vec<u32>,
    #[serde(skip)]
    values: Vec<f64>,
}

impl<L: OnlineLearner> Intercept<L> {
    /// Wraps `inner`, whose dimension must be `d + 1` (the last coordinate is the bias).
    pub fn new(inner: L) -> Self {
        Intercept {
            inner,
            indices: Vec::new(),
            values: Vec::new(),
        }
    }

    /// The wrapped learner (dimension `d + 1`).
    pub fn inner(&self) -> &L {
        &self.inner
    }

    /// The bias weight.
    pub fn bias(&self) -> f64 {
        self.inner.weights().last().copied().unwrap_or(0.0)
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
                values.push(1.0);
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
        values.insert(pos, 1.0);
    }
}

/// `out = [x (zero-padded to d, features beyond d dropped); 1]`.
fn dense_with_bias(x: &[f64], d: usize, out: &mut Vec<f64>) {
    out.clear();
    out.extend_from_slice(&x[..x.len().min(d)]);
    out.resize(d, 0.0);
    out.push(1.0);
}

impl<L: OnlineLearner> OnlineLearner for Intercept<L> {
    fn dim(&self) -> usize {
        self.inner.dim() - 1
    }

    fn predict(&self, x: Row<'_>) -> f64 {
        let (mut i, mut v) = (Vec::new(), Vec::new());
        if let Row::Dense(x) = x {
            dense_with_bias(x, self.dim(), &mut v);
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
            dense_with_bias(x, self.dim(), &mut v);
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

    fn weights(&self) -> Cow<'_, [f64]> {
        self.inner.weights()
    }
}
