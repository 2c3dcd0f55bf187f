//! A refused merge changes nothing: every in-place merge ([`Merge::merge`],
//! [`MergeShare::merge_share`]) checks what can refuse it ([`Merge::check_merge`],
//! [`MergeShare::check_merge`]) before it changes its state, so after an error the state is the
//! one it was, byte for byte — also when the refusal comes from a part whose turn comes after
//! others' (a mixture's or a one-against-all model's later member). Each test but the last
//! fails on the code before `check_merge` (the earlier members were merged).

use sketchlearn::linear::{
    Algorithm, AnyLearner, CurvatureKind, LearnerConfig, LinearModel, MixRule, Mixture, OneVsAll,
    OnlineLearner,
};
use sketchlearn::loss::Loss;
use sketchlearn::merge::{Merge, MergeError, MergeShare};
use sketchlearn::model;
use sketchlearn::Row;

const D: usize = 6;

/// `n` dense rows learned into `l` (a fixed pattern shifted by `seed`).
fn learn(l: &mut impl OnlineLearner, n: usize, seed: usize) {
    for i in 0..n {
        let x: Vec<f64> = (0..l.dim().min(D))
            .map(|j| (((i + seed) * 7 + j * 3) % 11) as f64 / 5.0 - 1.0)
            .chain(std::iter::repeat(0.0))
            .take(l.dim())
            .collect();
        let y = if (i + seed) % 3 == 0 { 1.0 } else { -1.0 };
        l.learn(Row::Dense(&x), y, 1.0).unwrap();
    }
}

fn model(config: LearnerConfig, d: usize, n: usize, seed: usize) -> LinearModel {
    let mut m = LinearModel::new(config.clone(), config.build(d).unwrap());
    learn(&mut m.learner, n, seed);
    m.examples_seen = n as u64;
    m
}

fn bytes<T: serde::Serialize>(value: &T) -> Vec<u8> {
    model::to_bytes("test", value).unwrap()
}

/// `merge` of `a` with `b` over `base` is refused and leaves `a`'s bytes as they were.
fn refused_unchanged<T: Merge + serde::Serialize>(a: &mut T, b: &T, base: Option<&T>) {
    let before = bytes(a);
    assert!(a.check_merge(b, base).is_err(), "check_merge must refuse");
    let err = a.merge(b, base).unwrap_err();
    assert!(
        bytes(a) == before,
        "a refused merge ({err}) changed the state"
    );
}

/// An AdaGrad member (mergeable) and an Oja-SON member (no merge), default otherwise.
fn adagrad_and_oja() -> (LearnerConfig, LearnerConfig) {
    let adagrad = LearnerConfig {
        algorithm: Algorithm::AdaGrad,
        ..LearnerConfig::default()
    };
    let oja = LearnerConfig {
        algorithm: Algorithm::Newton,
        curvature: CurvatureKind::Oja,
        ..LearnerConfig::default()
    };
    (adagrad, oja)
}

fn oja_regression() -> LearnerConfig {
    LearnerConfig {
        loss: Loss::Squared,
        curvature: CurvatureKind::Oja,
        ..LearnerConfig::default()
    }
}

/// The default regressor with Oja's curvature: its first member (the running mean) merges,
/// the next ones (Oja-SON) are refused — the running mean must not have been merged.
#[test]
fn a_later_members_refusal_leaves_the_mixture_unchanged() {
    let mut a = model(oja_regression(), D, 30, 0);
    let b = model(oja_regression(), D, 20, 5);
    let base = model(oja_regression(), D, 0, 0);
    refused_unchanged(&mut a, &b, None);
    refused_unchanged(&mut a, &b, Some(&base));
}

/// A mixture whose second member has no merge (Oja-SON) after one that has (AdaGrad).
#[test]
fn a_mixture_refused_by_its_second_member_is_unchanged() {
    let (adagrad, oja) = adagrad_and_oja();
    let mixture = |n, seed| {
        let members = vec![adagrad.build(D).unwrap(), oja.build(D).unwrap()];
        let mut m = Mixture::new(members, Loss::Logistic, MixRule::AdaHedge, 1.0).unwrap();
        learn(&mut m, n, seed);
        AnyLearner::Mixture(m)
    };
    let (mut a, b) = (mixture(30, 0), mixture(20, 3));
    let before = bytes(&a);
    assert!(a.check_merge(&b, None).is_err());
    let err = a.merge_share(&b, None, 0.6).unwrap_err();
    assert!(matches!(err, MergeError::Unsupported(_)), "{err}");
    assert!(
        bytes(&a) == before,
        "a refused merge ({err}) changed the mixture"
    );
}

/// One against all whose second class's member has no merge: the first class is not merged.
#[test]
fn a_later_classs_refusal_leaves_one_against_all_unchanged() {
    let (adagrad, oja) = adagrad_and_oja();
    let ova = |n, seed| {
        let mut members = vec![adagrad.build(D).unwrap(), oja.build(D).unwrap()];
        for (k, m) in members.iter_mut().enumerate() {
            learn(m, n, seed + k);
        }
        OneVsAll::new(members, Loss::Logistic).unwrap()
    };
    let (mut a, b) = (ova(30, 0), ova(20, 4));
    refused_unchanged(&mut a, &b, None);
}

/// States of different dimensions, a base of another dimension, a base of another
/// configuration and different configurations: refused, unchanged.
#[test]
fn mismatched_shapes_and_configurations_leave_the_state_unchanged() {
    for config in [
        LearnerConfig::default(),
        LearnerConfig {
            loss: Loss::Squared,
            ..LearnerConfig::default()
        },
        LearnerConfig {
            algorithm: Algorithm::Newton,
            curvature: CurvatureKind::FdFast,
            ..LearnerConfig::default()
        },
        LearnerConfig {
            algorithm: Algorithm::Ogd,
            ..LearnerConfig::default()
        },
    ] {
        let mut a = model(config.clone(), D, 30, 0);
        let wide = model(config.clone(), D + 2, 20, 1);
        refused_unchanged(&mut a, &wide, None);
        let b = model(config.clone(), D, 20, 1);
        let wide_base = model(config.clone(), D + 2, 0, 0);
        refused_unchanged(&mut a, &b, Some(&wide_base));
        let other = LearnerConfig {
            seed: config.seed + 1,
            ..config.clone()
        };
        refused_unchanged(&mut a, &model(other.clone(), D, 20, 1), None);
        refused_unchanged(&mut a, &b, Some(&model(other, D, 0, 0)));
    }
}

/// A base that is another learner (a mixture against a single AdaGrad): refused, unchanged.
#[test]
fn a_base_of_another_learner_leaves_the_state_unchanged() {
    let config = LearnerConfig::default();
    let mut a = model(config.clone(), D, 30, 0).learner;
    let b = model(config.clone(), D, 20, 2).learner;
    let adagrad = LearnerConfig {
        algorithm: Algorithm::AdaGrad,
        ..config
    };
    let base = adagrad.build(D).unwrap();
    let before = bytes(&a);
    assert!(a.check_merge(&b, Some(&base)).is_err());
    a.merge_share(&b, Some(&base), 0.5).unwrap_err();
    assert!(bytes(&a) == before, "a refused merge changed the mixture");
}
