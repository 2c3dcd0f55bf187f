//! A single Newton learner at its defaults (`ValidLearnerConfig::build`: rows divided by their
//! running RMS norm, `linear/row_scaling.rs`) is invariant to multiplying every feature by
//! `10^k`: the same progressive predictions up to rounding (issue 28, item 3). And on the SON paper's
//! ill-conditioned data with rows of squared norm ≈ 1500 (`α = 1` in absolute units overshoots
//! a thousand-fold) every curvature learns. The same for the sketched AdaGrads (Ada-FD,
//! Sketchy), which learn row-scaled data too.

use crate::common;

use common::progressive_error;
use proptest::prelude::*;
use sketchlearn::linear::{Algorithm, CurvatureKind, LearnerConfig, OnlineLearner};
use sketchlearn::synthetic::ill_conditioned;
use sketchlearn::{Example, Row};

/// Ada-FD and Sketchy at their defaults (sketch size 4), with or without diagonal adaptation.
fn sketched_adagrad(algorithm: Algorithm, diag: bool) -> LearnerConfig {
    LearnerConfig {
        algorithm,
        size: 4,
        diag,
        ..LearnerConfig::default()
    }
}

/// Every curvature's Newton learner, then Ada-FD and Sketchy, with their names.
fn learners(diag: bool) -> Vec<(String, LearnerConfig)> {
    let mut v: Vec<(String, LearnerConfig)> = CurvatureKind::ALL
        .into_iter()
        .map(|c| (c.to_string(), newton(c, diag)))
        .collect();
    for a in [Algorithm::AdaFd, Algorithm::Sketchy] {
        v.push((a.to_string(), sketched_adagrad(a, diag)));
    }
    v
}

fn newton(curvature: CurvatureKind, diag: bool) -> LearnerConfig {
    LearnerConfig {
        algorithm: Algorithm::Newton,
        curvature,
        size: 4,
        diag,
        ..LearnerConfig::default()
    }
}

/// Progressive scores of one pass, every feature `i` multiplied by `scale[i]`.
fn pass(config: &LearnerConfig, data: &[Example], scale: &[f64]) -> Vec<f64> {
    let d = scale.len();
    let mut learner = config.build(d).unwrap();
    data.iter()
        .map(|ex| {
            let x: Vec<f64> = ex.values.iter().zip(scale).map(|(v, s)| v * s).collect();
            learner.learn(Row::Dense(&x), ex.label, 1.0).unwrap()
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, rng_seed: proptest::test_runner::RngSeed::Fixed(28), ..ProptestConfig::default() })]
    #[test]
    fn global_rescaling_leaves_the_predictions(
        learner in 0..learners(false).len(),
        diag in any::<bool>(),
        exponent in -4i32..=4,
    ) {
        let data = ill_conditioned(300, 8, 100.0, 11);
        let (_, config) = learners(diag).swap_remove(learner);
        let ones = vec![1.0; 8];
        let scale = vec![10f64.powi(exponent); 8];
        let (a, b) = (pass(&config, &data, &ones), pass(&config, &data, &scale));
        for (t, (p, q)) in a.iter().zip(&b).enumerate() {
            prop_assert!((p - q).abs() <= 1e-6 * (1.0 + p.abs()), "example {t}: {p} vs {q}");
        }
        prop_assert_eq!(progressive_error(&data, &a), progressive_error(&data, &b));
    }
}

/// d = 200, κ = 100: ‖x‖² ≈ 200 + 10·50. Before the row scaling, FD-SON and Oja-SON at `α = 1`
/// diverged here (progressive error above 0.5 on the d = 1000 stream); now every curvature
/// learns (chance is 0.5).
#[test]
fn every_curvature_learns_on_large_dense_rows() {
    let data = ill_conditioned(3000, 200, 100.0, 5);
    for (name, config) in learners(false) {
        let scores = pass(&config, &data, &[1.0; 200]);
        let err = progressive_error(&data, &scores);
        assert!(err < 0.3, "{name}: progressive error {err}");
        let tail = &scores[scores.len() / 2..];
        let positive = tail.iter().filter(|&&p| p > 0.0).count();
        assert!(
            positive > tail.len() / 10 && positive < tail.len() * 9 / 10,
            "{name}: predicts one class"
        );
    }
}
