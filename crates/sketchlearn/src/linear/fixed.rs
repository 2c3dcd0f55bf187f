//! A linear model with fixed weights: it predicts `wᵀx` and never learns. This is how a model
//! computed offline (e.g. recovered by dual random projection, [`crate::drp`]) becomes a
//! [`super::LinearModel`] that `sketchlearn test` and every evaluation path can use.

use super::{LearnError, OnlineLearner};
use crate::Row;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// Fixed weights `w` with a description of where they come from.
///
/// ```
/// use sketchlearn::linear::{FixedLinear, OnlineLearner};
/// use sketchlearn::Row;
/// let mut model = FixedLinear::new(vec![1.0, -2.0], "drp logistic m=50").unwrap();
/// assert_eq!(model.predict(Row::Dense(&[3.0, 1.0])), 1.0);
/// assert_eq!(model.predict(Row::Sparse { indices: &[1, 7], values: &[1.0, 5.0] }), -2.0);
/// assert!(model.learn(Row::Dense(&[1.0, 0.0]), 1.0, 1.0).is_err()); // weights are fixed
/// assert!(FixedLinear::new(vec![f64::NAN], "bad").is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FixedLinear {
    w: Vec<f64>,
    description: String,
}

impl FixedLinear {
    /// Wraps finite weights `w` (dimension `w.len()`).
    pub fn new(w: Vec<f64>, description: impl Into<String>) -> Result<Self, LearnError> {
        if let Some(i) = w.iter().position(|x| !x.is_finite()) {
            return Err(LearnError::NonFinite(format!("fixed weight {i}")));
        }
        Ok(FixedLinear {
            w,
            description: description.into(),
        })
    }

    /// Where the weights come from (e.g. `drp logistic lambda=1 m=100 T=3`).
    pub fn description(&self) -> &str {
        &self.description
    }
}

impl OnlineLearner for FixedLinear {
    fn dim(&self) -> usize {
        self.w.len()
    }

    fn predict(&self, x: Row<'_>) -> f64 {
        x.dot(&self.w)
    }

    fn learn(&mut self, _x: Row<'_>, _y: f64, _weight: f64) -> Result<f64, LearnError> {
        Err(LearnError::InvalidParameter(format!(
            "this model has fixed weights ({}) and cannot be trained further",
            self.description
        )))
    }

    fn weights(&self) -> Cow<'_, [f64]> {
        Cow::Borrowed(&self.w)
    }
}
