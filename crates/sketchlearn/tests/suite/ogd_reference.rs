//! OGD's `1/√t` schedule against an independent, from-scratch reference (issue 26, item 7):
//! `w_{t+1} = w_t − (η/√t)·ℓ'(w_tᵀx_t, y_t)·x_t` (Zinkevich 2003, the step of SON §5's first-order
//! baseline), with the squared loss `ℓ'(p, y) = p − y` and the logistic loss
//! `ℓ'(p, y) = −y/(1 + e^{yp})` written out here, not taken from the library.

use crate::common;

use sketchlearn::linear::{Ogd, OnlineLearner, StepSchedule};
use sketchlearn::loss::Loss;
use sketchlearn::Row;

/// `ℓ'(p, y)`.
type Derivative = fn(f64, f64) -> f64;

/// A deterministic stream of `n` rows of dimension `d` with ±1 labels.
fn stream(n: usize, d: usize) -> Vec<(Vec<f64>, f64)> {
    let mut lcg = common::Lcg(12345);
    let mut next = || lcg.symmetric();
    (0..n)
        .map(|_| {
            let x: Vec<f64> = (0..d).map(|_| next()).collect();
            let y = if x[0] - 0.5 * x[1] + 0.1 * next() > 0.0 {
                1.0
            } else {
                -1.0
            };
            (x, y)
        })
        .collect()
}

fn reference(
    data: &[(Vec<f64>, f64)],
    eta: f64,
    derivative: impl Fn(f64, f64) -> f64,
) -> (Vec<f64>, Vec<f64>) {
    let d = data[0].0.len();
    let mut w = vec![0.0; d];
    let mut predictions = Vec::new();
    for (t, (x, y)) in data.iter().enumerate() {
        let p: f64 = w.iter().zip(x).map(|(a, b)| a * b).sum();
        predictions.push(p);
        let step = eta / ((t + 1) as f64).sqrt() * derivative(p, *y);
        for (wi, xi) in w.iter_mut().zip(x) {
            *wi -= step * xi;
        }
    }
    (w, predictions)
}

#[test]
fn ogd_inverse_sqrt_matches_the_reference_step_by_step() {
    let data = stream(300, 5);
    let cases: [(Loss, Derivative); 2] = [
        (Loss::Squared, |p, y| p - y),
        (Loss::Logistic, |p, y| -y / (1.0 + (y * p).exp())),
    ];
    for (loss, derivative) in cases {
        let eta = 0.3;
        let (w_ref, p_ref) = reference(&data, eta, derivative);
        let mut ogd = Ogd::new(5, loss, eta, StepSchedule::InverseSqrt, f64::INFINITY).unwrap();
        for ((x, y), want) in data.iter().zip(&p_ref) {
            let p = ogd.learn(Row::Dense(x), *y, 1.0).unwrap();
            assert!(
                (p - want).abs() <= 1e-12 * (1.0 + want.abs()),
                "{loss:?}: {p} vs {want}"
            );
        }
        for (a, b) in ogd.weights().iter().zip(&w_ref) {
            assert!(
                (a - b).abs() <= 1e-12 * (1.0 + b.abs()),
                "{loss:?}: {a} vs {b}"
            );
        }
        // The schedule matters: a constant step gives other weights.
        let mut constant = Ogd::new(5, loss, eta, StepSchedule::Constant, f64::INFINITY).unwrap();
        for (x, y) in &data {
            constant.learn(Row::Dense(x), *y, 1.0).unwrap();
        }
        assert!(constant
            .weights()
            .iter()
            .zip(&w_ref)
            .any(|(a, b)| (a - b).abs() > 1e-3));
    }
}
