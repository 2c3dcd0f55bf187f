//! Online conditional gradient (`fm/ocg.rs`; Hazan 2016, OCG) checked against two steps computed
//! by hand (issue 26, item 7) on `d = 2`, squared loss, `η = 1`, `τ = 1`, `γ_t = min(1, 1/√t)`.
//! With `â = (x, 1)`, `Θ₁ = 0`, `ℓ' = z − y`:
//!
//! 1. `x = (1, 0)`, `y = 2`: `â = (1, 0, 1)`, `z₁ = 0`, `q₁ = −2`, `∇F = −2ââᵀ`: `λ = −4` with
//!    `v = â/√2`, so `V = +τvvᵀ`; `γ₁ = 1` ⇒ `Θ₂ = ââᵀ/2`: it predicts `(âᵀâ)²/2 = 2` on `x₁`.
//! 2. `x = (0, 1)`, `y = 0`: `b̂ = (0, 1, 1)`, `z₂ = (âᵀb̂)²/2 = 1/2 = q₂`;
//!    `∇F = q₁ââᵀ + q₂b̂b̂ᵀ + 2Θ₂ = −ââᵀ + b̂b̂ᵀ/2`. On `span{â, b̂}` (`âᵀâ = b̂ᵀb̂ = 2`,
//!    `âᵀb̂ = 1`) it acts on the coefficients `(α, β)` of `αâ + βb̂` as `[[−2, −1], [1/2, 1]]`:
//!    `λ² + λ − 3/2 = 0`, the largest `|λ| = (1 + √7)/2` at `λ = −(1 + √7)/2`, eigenvector
//!    `α = 2(λ − 1)β`. `V = +τvvᵀ`, `γ₂ = 1/√2`, `Θ₃ = (1 − γ₂)Θ₂ + γ₂vvᵀ`.
//!
//! The eigenvector comes from a power iteration stopped at a relative residual of `10⁻³`, hence
//! the tolerance.

use crate::common;

use common::assert_close;
use sketchlearn::fm::{Ocg, OcgParams};
use sketchlearn::linear::OnlineLearner;
use sketchlearn::loss::Loss;
use sketchlearn::Row;

fn dot(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn ocg_takes_the_hand_computed_steps() {
    let params = OcgParams {
        eta: 1.0,
        radius: 1.0,
        gamma: 1.0,
        power_iters: 200,
        ..OcgParams::default()
    };
    let mut ocg = Ocg::new(2, Loss::Squared, params).unwrap();
    let (x1, x2) = ([1.0, 0.0], [0.0, 1.0]);
    let (a, b) = ([1.0, 0.0, 1.0], [0.0, 1.0, 1.0]);
    let tol = 5e-3;

    assert_close(
        "z₁",
        ocg.learn(Row::Dense(&x1), 2.0, 1.0).unwrap(),
        0.0,
        0.0,
    );
    assert_close("Θ₂ on x₁", ocg.predict(Row::Dense(&x1)), 2.0, 1e-12);
    assert_close(
        "z₂",
        ocg.learn(Row::Dense(&x2), 0.0, 1.0).unwrap(),
        0.5,
        1e-12,
    );

    let lambda = -(1.0 + 7f64.sqrt()) / 2.0;
    let alpha = 2.0 * (lambda - 1.0);
    let u: [f64; 3] = std::array::from_fn(|i| alpha * a[i] + b[i]);
    let norm2 = dot(&u, &u);
    let g2 = 1.0 / 2f64.sqrt();
    // Θ₃ = (1 − γ₂)·ââᵀ/2 + γ₂·uuᵀ/‖u‖²: xᵀΘ₃x for x = â, b̂.
    let theta3 =
        |x: &[f64; 3]| (1.0 - g2) * dot(&a, x).powi(2) / 2.0 + g2 * dot(&u, x).powi(2) / norm2;
    assert_close("Θ₃ on x₁", ocg.predict(Row::Dense(&x1)), theta3(&a), tol);
    assert_close("Θ₃ on x₂", ocg.predict(Row::Dense(&x2)), theta3(&b), tol);
    assert!(ocg.nuclear_norm_bound() <= 1.0 + 1e-12);
}
