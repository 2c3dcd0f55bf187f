//! `AnyFm::pairwise`: the part of a factorization machine's prediction that a linear model cannot
//! express, for every FM learner — the prediction minus its single-feature parts, zero for one
//! feature, and exactly zero for Rendle's FM whose factors start (and so stay) at zero.

use crate::common;

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use sketchlearn::fm::{AnyFm, FmAlgorithm, FmConfig};
use sketchlearn::linear::OnlineLearner;
use sketchlearn::Row;

const D: usize = 8;

/// `nnz` distinct sorted features below `D` with values in [−1, 1].
fn row(rng: &mut Xoshiro256PlusPlus, nnz: usize) -> (Vec<u32>, Vec<f64>) {
    let mut idx: Vec<u32> = Vec::new();
    while idx.len() < nnz {
        let j = rng.random_range(0..D as u32);
        if !idx.contains(&j) {
            idx.push(j);
        }
    }
    idx.sort_unstable();
    let val = idx.iter().map(|_| rng.random_range(-1.0..1.0)).collect();
    (idx, val)
}

fn trained(config: FmConfig, seed: u64) -> AnyFm {
    let mut fm = config.build(D).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    for t in 0..300 {
        let (idx, val) = row(&mut rng, 1 + t % 3);
        // A target with a genuine interaction between features 0 and 1.
        let x = |j: u32| idx.iter().position(|&i| i == j).map_or(0.0, |p| val[p]);
        let y = 3.0 + x(2) + 2.0 * x(0) * x(1);
        common::learn_sparse(&mut fm, &idx, &val, y);
    }
    fm
}

/// `predict(x) − pairwise(x)` is the sum of the single-feature parts
/// `predict(x_j e_j) − predict(0)` plus `predict(0)`; a single feature has no pairwise part.
#[test]
fn pairwise_is_the_prediction_minus_its_single_feature_parts() {
    for algorithm in FmAlgorithm::ALL {
        let config = FmConfig {
            radius: 50.0,
            ..FmConfig::new(algorithm)
        };
        let fm = trained(config, 11);
        let empty = Row::Sparse {
            indices: &[],
            values: &[],
        };
        let p0 = fm.predict(empty);
        assert_eq!(fm.pairwise(empty), 0.0, "{algorithm:?}");
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        let mut largest: f64 = 0.0;
        for _ in 0..50 {
            let nnz = 2 + rng.random_range(0..2);
            let (idx, val) = row(&mut rng, nnz);
            let x = Row::Sparse {
                indices: &idx,
                values: &val,
            };
            let mut parts = p0;
            for (&j, &v) in idx.iter().zip(&val) {
                let single = Row::Sparse {
                    indices: &[j],
                    values: &[v],
                };
                let pw = fm.pairwise(single);
                assert!(
                    pw.abs() <= 1e-9 * (1.0 + fm.predict(single).abs()),
                    "{algorithm:?}: {pw}"
                );
                parts += fm.predict(single) - p0;
            }
            let (p, pw) = (fm.predict(x), fm.pairwise(x));
            let rest = p - pw;
            assert!(
                (rest - parts).abs() <= 1e-9 * (1.0 + p.abs() + pw.abs()),
                "{algorithm:?}: prediction {p}, pairwise {pw}, single-feature parts {parts}"
            );
            largest = largest.max(pw.abs());
        }
        // The target has an interaction, so every learner has learned some pairwise part.
        assert!(
            largest > 1e-3,
            "{algorithm:?}: largest pairwise part {largest}"
        );
    }
}

/// Rendle's FM with factors initialised at zero never moves them (their gradient is a sum of
/// other factors): a linear model, the "biases only" baseline of the MovieLens report.
#[test]
fn fm_sgd_with_zero_initial_factors_stays_linear() {
    let config = FmConfig {
        init_std: 0.0,
        ..FmConfig::new(FmAlgorithm::FmSgd)
    };
    let fm = trained(config, 3);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
    for _ in 0..20 {
        let (idx, val) = row(&mut rng, 3);
        let x = Row::Sparse {
            indices: &idx,
            values: &val,
        };
        assert_eq!(fm.pairwise(x), 0.0);
    }
    // It did learn (its linear part moved).
    assert!(fm.weights().iter().any(|w| w.abs() > 1e-3));
}
