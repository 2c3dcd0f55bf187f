//! A fixed linear scorer: an expert of the experts setting, for the mixture tests.

use sketchlearn::linear::{LearnError, OnlineLearner};
use sketchlearn::Row;
use std::borrow::Cow;

/// A fixed linear scorer that "learns" by ignoring the example.
#[derive(Clone, Debug)]
pub struct Expert(pub Vec<f64>);

impl OnlineLearner for Expert {
    fn dim(&self) -> usize {
        self.0.len()
    }
    fn predict(&self, x: Row<'_>) -> f64 {
        x.dot(&self.0)
    }
    fn learn(&mut self, x: Row<'_>, _y: f64, _w: f64) -> Result<f64, LearnError> {
        Ok(self.predict(x))
    }
    fn weights(&self) -> Cow<'_, [f64]> {
        Cow::Borrowed(&self.0)
    }
}
