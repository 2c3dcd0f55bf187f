//! Ada-FD: Yuanyu Wan, Nan Wei and Lijun Zhang, "Efficient Adaptive Online Learning via
//! Frequent Directions", IJCAI 2018 (pp. 2748–2754), the composite-mirror-descent variant
//! ADA-FD (M) without a regulariser (journal version: Wan & Zhang, IEEE TPAMI 2022).
//!
//! Full-matrix AdaGrad's proximal matrix `H_t = δI + G_t^{1/2}`, `G_t = Σ_{s≤t} g_s g_sᵀ`,
//! with `G_t` replaced by the FD sketch `B_tᵀB_t` of the gradients:
//!
//! ```text
//! B_t = FD(B_{t−1}, g_t)                       (per-row FD, m rows, m − 1 kept)
//! H_t = δI + (B_tᵀB_t)^{1/2}
//! w_{t+1} = w_t − η H_t⁻¹ g_t
//! ```
//!
//! With `B_tᵀB_t = V Λ Vᵀ` and `σ_i = √λ_i` (the sketch's singular values):
//! `H_t⁻¹ = V diag(1/(δ + σ_i)) Vᵀ + (1/δ)(I − V Vᵀ)`, i.e. in the terms of
//! [`FdPreconditioner`]: `f(λ) = 1/(δ + √λ)`, `o = 1/δ`. Equivalently
//! `H_t⁻¹ g = (1/δ)(g − V diag(σ_i/(δ + σ_i)) Vᵀ g)`, the form of google-research/precondition
//! (`oco/algorithms.py`, `_adafd`: "they add delta to the *square rooted* eigenvalues"), whose
//! `δ` is fixed (no escaped mass is added back). `δ` (`LearnerConfig::alpha`) must be `> 0`:
//! outside the sketch the step is `η g/δ`.
//!
//! When `m > d` no direction is ever lost (the `m`-th eigenvalue of `m` rows in dimension
//! `d < m` is 0) and Ada-FD is full-matrix AdaGrad with `H = δI + G^{1/2}`:
//! `tests/suite/fd_adagrad.rs` checks both against a direct dense implementation.

use super::fd_adagrad::{FdAdaGrad, FdPreconditioner};
use super::LearnError;
use crate::loss::Loss;

/// Ada-FD's spectral function (see the [module](self) docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AdaFdRule;

impl FdPreconditioner for AdaFdRule {
    const NAME: &'static str = "Ada-FD";

    fn inside(lambda: f64, delta: f64, _escaped: f64) -> f64 {
        1.0 / (delta + lambda.sqrt())
    }

    fn outside(delta: f64, _escaped: f64) -> f64 {
        1.0 / delta
    }
}

/// Ada-FD (Wan, Wei & Zhang, IJCAI 2018): full-matrix AdaGrad on an FD sketch of the
/// gradients, `w ← w − η (δI + (BᵀB)^{1/2})⁻¹ g` (see the [module](self) docs).
///
/// ```
/// use sketchlearn::linear::{AdaFd, OnlineLearner};
/// use sketchlearn::loss::Loss;
/// use sketchlearn::Row;
/// let mut ada = AdaFd::new(2, 3, Loss::Squared, 1.0, 1.0).unwrap();
/// ada.learn(Row::Dense(&[3.0, 4.0]), 1.0, 1.0).unwrap();
/// // g = (0 − 1)·(3, 4), ‖g‖ = 5: H = I + (ggᵀ)^{1/2} has eigenvalue 1 + 5 along g, so
/// // w = −g/6 = (0.5, 0.6666…).
/// let w = ada.weights();
/// assert!((w[0] - 0.5).abs() < 1e-12 && (w[1] - 4.0 / 6.0).abs() < 1e-12);
/// ```
pub type AdaFd = FdAdaGrad<AdaFdRule>;

impl AdaFd {
    /// Dimension `dim`, FD sketch of `m ≥ 1` rows, learning rate `η > 0`, `δ > 0`.
    pub fn new(dim: usize, m: usize, loss: Loss, eta: f64, delta: f64) -> Result<Self, LearnError> {
        if !(delta.is_finite() && delta > 0.0) {
            return Err(LearnError::InvalidParameter(format!(
                "Ada-FD: δ must be finite and > 0, got {delta}"
            )));
        }
        FdAdaGrad::build(dim, m, loss, eta, delta)
    }
}
