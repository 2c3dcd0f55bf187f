//! Sketchy AdaGrad (S-AdaGrad): Vladimir Feinberg, Xinyi Chen, Y. Jennifer Sun, Rohan Anil and
//! Elad Hazan, "Sketchy: Memory-efficient Adaptive Regularization with Frequent Directions",
//! NeurIPS 2023 (arXiv 2302.03764), the online-convex-optimisation algorithm (S-AdaGrad).
//!
//! Full-matrix AdaGrad `w ← w − η G_t^{-1/2} g_t` with `G_t` replaced by the FD sketch of the
//! gradients **plus the mass FD let escape**, so the preconditioner never under-estimates
//! `G_t` (FD's `0 ⪯ G_t − B_tᵀB_t ⪯ ρ_{1:t} I`):
//!
//! ```text
//! B_t = FD(B_{t−1}, g_t), shrunk by ρ_t (the m-th eigenvalue of the buffer; 0 while it is not full)
//! ρ_{1:t} = Σ_{s≤t} ρ_s
//! w_{t+1} = w_t − η (δI + ρ_{1:t} I + B_tᵀB_t)^{-1/2} g_t
//! ```
//!
//! With `B_tᵀB_t = V Λ Vᵀ` and `α_t = δ + ρ_{1:t}`: `f(λ) = (α_t + λ)^{-1/2}` along the sketch,
//! `o = α_t^{-1/2}` outside it (a pseudo-inverse, `o = 0`, while `α_t = 0`). This is
//! google-research/precondition's `S_ADA` (`oco/algorithms.py`, `_sada`: the sketch takes `g`
//! unscaled, `alpha += rho²` with `rho` the smallest singular value, eigenvalues inverted by
//! `rsqrt`), whose `δ` is the initial `alpha`. The escaped mass is RFD's idea (Luo et al.) with
//! all of `ρ_t` added back rather than half, under the square root of AdaGrad rather than in a
//! Newton step. `δ` is `LearnerConfig::alpha0` (`≥ 0`, as RFD's `α₀`): with `δ = 0` the
//! learner is invariant to the scale of the gradients.
//!
//! When `m > d` nothing escapes and Sketchy is full-matrix AdaGrad with `H = (δI + G)^{1/2}`:
//! `tests/suite/fd_adagrad.rs` checks both against a direct dense implementation, and a hand-checked
//! case where a direction escapes.

use super::fd_adagrad::{FdAdaGrad, FdPreconditioner};
use super::LearnError;
use crate::loss::Loss;

/// Sketchy's spectral function (see the [module](self) docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SketchyRule;

impl FdPreconditioner for SketchyRule {
    const NAME: &'static str = "Sketchy";

    fn inside(lambda: f64, delta: f64, escaped: f64) -> f64 {
        1.0 / (delta + escaped + lambda).sqrt()
    }

    fn outside(delta: f64, escaped: f64) -> f64 {
        let alpha = delta + escaped;
        if alpha > 0.0 {
            1.0 / alpha.sqrt()
        } else {
            0.0
        }
    }
}

/// Sketchy AdaGrad (Feinberg et al., NeurIPS 2023): `w ← w − η (δI + ρ_{1:t}I + BᵀB)^{-1/2} g`
/// with `B` the FD sketch of the gradients and `ρ_{1:t}` the mass it let escape (see the
/// [module](self) docs).
///
/// ```
/// use sketchlearn::linear::{OnlineLearner, Sketchy};
/// use sketchlearn::loss::Loss;
/// use sketchlearn::Row;
/// let mut s = Sketchy::new(2, 3, Loss::Squared, 1.0, 0.0).unwrap();
/// s.learn(Row::Dense(&[3.0, 4.0]), 1.0, 1.0).unwrap();
/// // g = −(3, 4): (ggᵀ)^{-1/2} g = g/‖g‖, so w = (0.6, 0.8), whatever the scale of g.
/// let w = s.weights();
/// assert!((w[0] - 0.6).abs() < 1e-12 && (w[1] - 0.8).abs() < 1e-12);
/// ```
pub type Sketchy = FdAdaGrad<SketchyRule>;

impl Sketchy {
    /// Dimension `dim`, FD sketch of `m ≥ 1` rows, learning rate `η > 0`, initial `δ ≥ 0`.
    pub fn new(dim: usize, m: usize, loss: Loss, eta: f64, delta: f64) -> Result<Self, LearnError> {
        if !(delta.is_finite() && delta >= 0.0) {
            return Err(LearnError::InvalidParameter(format!(
                "Sketchy: δ must be finite and >= 0, got {delta}"
            )));
        }
        FdAdaGrad::build(dim, m, loss, eta, delta)
    }
}
