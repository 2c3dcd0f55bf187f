//! Property tests for merging (`sketchlearn::merge`): FD's bound for k merged shards and for
//! rounds merged over a common base, the empty state as the identity, exact averages and sums
//! on hand cases, finite predictions of merged learners, and clear errors.

#![allow(clippy::needless_range_loop)] // index loops mirror the maths

use crate::common;

use common::fd_bound;
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use sketchlearn::linear::{Algorithm, CurvatureKind, LearnerConfig, LinearModel, OnlineLearner};
use sketchlearn::loss::Loss;
use sketchlearn::merge::{Merge, MergeError};
use sketchlearn::sketch::{FdVariant, FrequentDirections, OjaSketch, Sketch};
use sketchlearn::spectral::sym_eigenvalues;
use sketchlearn::Row;

/// `n × d` rows of a decaying spectrum (column `j` scaled by `2^{−j/2}`), row-major.
fn rows(n: usize, d: usize, seed: u64) -> Vec<f64> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    (0..n * d)
        .map(|k| rng.random_range(-1.0..1.0) * 2f64.powf(-((k % d) as f64) / 2.0))
        .collect()
}

fn gram(a: &[f64], d: usize) -> Vec<f64> {
    let mut g = vec![0.0; d * d];
    for row in a.chunks(d) {
        for p in 0..d {
            for q in 0..d {
                g[p * d + q] += row[p] * row[q];
            }
        }
    }
    g
}

/// `‖AᵀA − BᵀB‖₂`.
fn sketch_error(a: &[f64], d: usize, fd: &FrequentDirections) -> f64 {
    let exact = gram(a, d);
    let b = fd.matrix().to_dense();
    let diff: Vec<f64> = exact.iter().zip(&b).map(|(x, y)| x - y).collect();
    let v = sym_eigenvalues(&diff, d).unwrap();
    v[0].abs().max(v[d - 1].abs())
}

fn insert_all(fd: &mut FrequentDirections, a: &[f64], d: usize) {
    for row in a.chunks(d) {
        fd.insert(Row::Dense(row)).unwrap();
    }
}

/// Merges `parts` pairwise as a tree (the order Dask's tree reduction uses).
fn tree_merge(mut parts: Vec<FrequentDirections>) -> FrequentDirections {
    while parts.len() > 1 {
        let mut next = Vec::new();
        let mut it = parts.into_iter();
        while let Some(mut a) = it.next() {
            if let Some(b) = it.next() {
                Merge::merge(&mut a, &b, None).unwrap();
            }
            next.push(a);
        }
        parts = next;
    }
    parts.pop().unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    #[test]
    fn k_shards_merged_stay_within_fd_bound(
        n in 1usize..80, d in 1usize..10, m in 1usize..6, k in 1usize..6, seed in any::<u64>(),
        doubling in any::<bool>(),
    ) {
        let variant = if doubling { FdVariant::Doubling } else { FdVariant::PerRow };
        let a = rows(n, d, seed);
        let chunk = n.div_ceil(k).max(1);
        let shards: Vec<_> = a.chunks(chunk * d).map(|part| {
            let mut fd = FrequentDirections::fd(d, m, variant).unwrap();
            insert_all(&mut fd, part, d);
            fd
        }).collect();
        let merged = tree_merge(shards);
        let tol = 1e-9 * (1.0 + a.iter().map(|x| x * x).sum::<f64>());
        let err = sketch_error(&a, d, &merged);
        prop_assert!(err <= merged.total_shrinkage() + tol, "{err} > Σδ {}", merged.total_shrinkage());
        prop_assert!(merged.total_shrinkage() <= fd_bound(&a, d, m) + tol);
        prop_assert_eq!(merged.rows_seen(), n as u64);
    }

    #[test]
    fn rounds_merged_over_a_base_stay_within_their_shrinkage(
        blocks in 1usize..5, per in 1usize..12, d in 1usize..8, m in 1usize..6, seed in any::<u64>(),
        rfd in any::<bool>(),
    ) {
        // Each round both workers start from the global sketch and insert their own block; the
        // merge over the base counts the global sketch once.
        let a = rows(2 * blocks * per, d, seed);
        let fresh = || if rfd {
            FrequentDirections::rfd(d, m, FdVariant::Doubling, 0.5).unwrap()
        } else {
            FrequentDirections::fd(d, m, FdVariant::Doubling).unwrap()
        };
        let mut global = fresh();
        for round in a.chunks(2 * per * d) {
            let (x, y) = round.split_at((round.len() / d / 2) * d);
            let (mut wa, mut wb) = (global.clone(), global.clone());
            insert_all(&mut wa, x, d);
            insert_all(&mut wb, y, d);
            Merge::merge(&mut wa, &wb, Some(&global)).unwrap();
            global = wa;
        }
        let tol = 1e-8 * (1.0 + a.iter().map(|x| x * x).sum::<f64>());
        let err = if rfd { sketch_error_rfd(&a, d, &global) } else { sketch_error(&a, d, &global) };
        prop_assert!(err <= global.total_shrinkage() + tol, "{err} > Σδ {}", global.total_shrinkage());
        prop_assert_eq!(global.rows_seen(), a.len() as u64 / d as u64);
        if rfd {
            prop_assert!((global.alpha() - 0.5 - global.total_shrinkage() / 2.0).abs() <= tol);
        }
    }

    #[test]
    fn a_merged_default_learner_predicts_finitely(
        n in 2usize..60, d in 1usize..6, seed in any::<u64>(), squared in any::<bool>(),
    ) {
        let loss = if squared { Loss::Squared } else { Loss::Logistic };
        let config = LearnerConfig { loss, ..LearnerConfig::default() };
        let base = LinearModel::new(config.clone(), config.build(d).unwrap());
        let a = rows(n, d, seed);
        let (mut x, mut y) = (base.clone(), base.clone());
        for (i, row) in a.chunks(d).enumerate() {
            let label = if row[0] > 0.0 { 1.0 } else { -1.0 };
            let target = if i % 2 == 0 { &mut x } else { &mut y };
            target.learner.learn(Row::Dense(row), label * 1e3f64.powi(squared as i32), 1.0).unwrap();
            target.examples_seen += 1;
        }
        x.merge(&y, Some(&base)).unwrap();
        prop_assert_eq!(x.examples_seen, n as u64);
        for row in a.chunks(d) {
            prop_assert!(x.learner.predict(Row::Dense(row)).is_finite());
        }
        prop_assert!(x.learner.weights().iter().all(|w| w.is_finite()));
    }
}

/// `‖α₀I + AᵀA − (BᵀB + αI)‖₂` for an RFD sketch with `α₀ = 0.5` (RFD's own error, at most
/// `Σδ/2`, so within `Σδ` too).
fn sketch_error_rfd(a: &[f64], d: usize, fd: &FrequentDirections) -> f64 {
    let mut exact = gram(a, d);
    for i in 0..d {
        exact[i * d + i] += 0.5;
    }
    let b = fd.matrix().to_dense();
    let diff: Vec<f64> = exact.iter().zip(&b).map(|(x, y)| x - y).collect();
    let v = sym_eigenvalues(&diff, d).unwrap();
    v[0].abs().max(v[d - 1].abs())
}

fn model(config: &LearnerConfig, d: usize) -> LinearModel {
    LinearModel::new(config.clone(), config.build(d).unwrap())
}

fn learn(m: &mut LinearModel, x: &[f64], y: f64) {
    m.learner.learn(Row::Dense(x), y, 1.0).unwrap();
    m.examples_seen += 1;
}

#[test]
fn merging_with_the_empty_state_is_the_identity() {
    for algorithm in [Algorithm::AdaGrad, Algorithm::Newton, Algorithm::Auto] {
        let config = LearnerConfig {
            algorithm,
            ..LearnerConfig::default()
        };
        let empty = model(&config, 3);
        let mut a = empty.clone();
        for (x, y) in [([1.0, 0.5, 0.0], 1.0), ([0.0, -1.0, 2.0], -1.0)] {
            learn(&mut a, &x, y);
        }
        let want: Vec<f64> = a.learner.weights().into_owned();
        let probe = Row::Dense(&[0.3, -0.2, 1.0]);
        let p = a.learner.predict(probe);
        // The empty state from scratch, and a worker that learned nothing since the base.
        a.merge(&empty, None).unwrap();
        let trained = a.clone();
        a.merge(&trained, Some(&trained)).unwrap();
        assert_eq!(a.learner.weights().into_owned(), want, "{algorithm:?}");
        assert_eq!(a.learner.predict(probe), p, "{algorithm:?}");
        assert_eq!(a.examples_seen, 2);
    }
}

#[test]
fn adagrad_weights_average_and_squared_gradients_add() {
    // 1-d AdaGrad, η = 1, squared loss: from w = 0, (x=2, y=1) gives g = −2, G = 4, w = 1;
    // (x=1, y=−3) gives g = 3, G = 9, w = −1. A third example on shard a: (x=1, y=1) from
    // w = 1 has g = 0 (no change). Shares 2/3 and 1/3.
    let config = LearnerConfig {
        algorithm: Algorithm::AdaGrad,
        loss: Loss::Squared,
        learning_rate: 1.0,
        bias: false,
        ..LearnerConfig::default()
    };
    let empty = model(&config, 1);
    let (mut a, mut b) = (empty.clone(), empty.clone());
    learn(&mut a, &[2.0], 1.0);
    learn(&mut a, &[1.0], 1.0);
    learn(&mut b, &[1.0], -3.0);
    assert_eq!(a.learner.weights()[0], 1.0);
    assert_eq!(b.learner.weights()[0], -1.0);
    a.merge(&b, Some(&empty)).unwrap();
    let w = a.learner.weights()[0];
    assert!((w - (2.0 / 3.0 - 1.0 / 3.0)).abs() < 1e-15, "{w}");
    // G = 4 + 9: the next step on (x=1, y=0) from w = 1/3 is g = 1/3, w −= (1/3)/√(13 + 1/9).
    let mut next = a.clone();
    learn(&mut next, &[1.0], 0.0);
    let want = 1.0 / 3.0 - (1.0 / 3.0) / (13.0f64 + 1.0 / 9.0).sqrt();
    assert!((next.learner.weights()[0] - want).abs() < 1e-15);
    assert_eq!(a.examples_seen, 3);
}

#[test]
fn different_configurations_and_unmergeable_states_are_clear_errors() {
    let a = LearnerConfig::default();
    let b = LearnerConfig {
        size: a.size + 1,
        ..a.clone()
    };
    let mut x = model(&a, 2);
    assert!(matches!(
        x.merge(&model(&b, 2), None),
        Err(MergeError::Incompatible(_))
    ));
    assert!(matches!(
        x.merge(&model(&a, 3), None),
        Err(MergeError::Incompatible(_))
    ));
    for curvature in [CurvatureKind::Oja, CurvatureKind::Rp, CurvatureKind::Full] {
        let c = LearnerConfig {
            algorithm: Algorithm::Newton,
            curvature,
            ..a.clone()
        };
        let mut y = model(&c, 2);
        let err = y.merge(&model(&c, 2), None).unwrap_err();
        assert!(matches!(err, MergeError::Unsupported(_)), "{err}");
    }
    let mut oja = OjaSketch::new(3, 2, 0.1, 0.5, 7);
    if let Ok(o) = oja.as_mut() {
        let other = o.clone();
        assert!(matches!(
            Merge::merge(o, &other, None),
            Err(MergeError::Unsupported(_))
        ));
    }
    let mut fd = FrequentDirections::fd(3, 2, FdVariant::PerRow).unwrap();
    let other = FrequentDirections::fd(3, 3, FdVariant::PerRow).unwrap();
    assert!(matches!(
        Merge::merge(&mut fd, &other, None),
        Err(MergeError::Incompatible(_))
    ));
}

#[test]
fn one_vs_all_merges_class_by_class() {
    use sketchlearn::linear::{MulticlassLearner, OneVsAll};
    let members = |k| {
        (0..k)
            .map(|_| LearnerConfig::default().build(2).unwrap())
            .collect::<Vec<_>>()
    };
    let empty = OneVsAll::new(members(3), Loss::Logistic).unwrap();
    let (mut a, mut b) = (empty.clone(), empty.clone());
    let data = [([1.0, 0.0], 0), ([0.0, 1.0], 1), ([-1.0, -1.0], 2)];
    for _ in 0..30 {
        for (x, c) in data {
            a.learn(Row::Dense(&x), c, 1.0).unwrap();
        }
    }
    for (x, c) in data {
        b.learn(Row::Dense(&x), c, 1.0).unwrap();
    }
    let scores_a = a.scores(Row::Dense(&[1.0, 0.0]));
    let mut merged = a.clone();
    Merge::merge(&mut merged, &b, Some(&empty)).unwrap();
    assert_eq!(merged.examples_seen(), 93);
    for (x, c) in data {
        assert_eq!(merged.predict_class(Row::Dense(&x)), c);
    }
    // An idle worker (nothing learned since the base) is the identity, class by class.
    let mut same = a.clone();
    Merge::merge(&mut same, &a, Some(&a)).unwrap();
    assert_eq!(same.scores(Row::Dense(&[1.0, 0.0])), scores_a);
    let two = OneVsAll::new(members(2), Loss::Logistic).unwrap();
    assert!(matches!(
        Merge::merge(&mut merged, &two, None),
        Err(MergeError::Incompatible(_))
    ));
}
