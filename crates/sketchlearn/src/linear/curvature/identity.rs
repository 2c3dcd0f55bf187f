//! `A = αI`: the Newton step becomes online gradient descent with step `1/α` (and the SON
//! projection becomes the Euclidean projection onto `{|wᵀx| ≤ C}`).

use super::Curvature;
use crate::sketch::SketchError;
use crate::Row;
use serde::{Deserialize, Serialize};

/// The identity curvature `αI`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct IdentityCurvature {
    dim: usize,
    alpha: f64,
}

impl IdentityCurvature {
    /// `αI` on `ℝ^dim`; `α > 0`.
    pub fn new(dim: usize, alpha: f64) -> Result<Self, SketchError> {
        if !(alpha.is_finite() && alpha > 0.0) {
            return Err(SketchError::InvalidParameter(format!(
                "alpha must be finite and > 0, got {alpha}"
            )));
        }
        Ok(IdentityCurvature { dim, alpha })
    }
}

impl Curvature for IdentityCurvature {
    fn dim(&self) -> usize {
        self.dim
    }
    fn update(&mut self, _g: Row<'_>, _scale: f64) -> Result<(), SketchError> {
        Ok(())
    }
    fn inv_quad(&self, x: Row<'_>) -> f64 {
        x.squared_norm() / self.alpha
    }
    fn add_solve(&mut self, x: Row<'_>, coef: f64, target: &mut [f64]) {
        x.axpy_into(coef / self.alpha, target);
    }
    fn alpha(&self) -> f64 {
        self.alpha
    }
}
