//! Property tests for merging the sparse-time FD/RFD-SON learners (`linear/sparse/merge.rs`):
//! k shards merged keep FD's bound for the whole stream (the to-sketch rows `ĝ = √c·ℓ'(p)·x`
//! are recomputed from the predictions each learner returned), rounds merged over a common
//! base stay within their accounted shrinkage, the weights are the example-weighted average,
//! the empty learner is the identity, merged learners keep learning, RP/Oja are refused.

#![allow(clippy::needless_range_loop)] // index loops mirror the maths

use crate::common;

use common::fd_bound;
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use sketchlearn::linear::sparse::{SparseFd, SparseLearner, SparseOja, SparseRp};
use sketchlearn::linear::{NewtonParams, OnlineLearner};
use sketchlearn::merge::{share_of, MergeError, MergeShare};
use sketchlearn::spectral::sym_eigenvalues;
use sketchlearn::Row;

/// A sparse example: sorted distinct indices below `d`, values in [−1, 1], a ±1 label.
type Example = (Vec<u32>, Vec<f64>, f64);

fn stream(n: usize, d: usize, seed: u64) -> Vec<Example> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let nnz = rng.random_range(1..6);
            let (idx, val) = common::random_sparse_row(&mut rng, d, nnz, false);
            let y = if val[0] + 0.3 * rng.random_range(-1.0..1.0) > 0.0 {
                1.0
            } else {
                -1.0
            };
            (idx, val, y)
        })
        .collect()
}

fn fresh(d: usize, m: usize, rfd: bool) -> SparseFd {
    let params = NewtonParams::default();
    if rfd {
        SparseFd::rfd(d, m, 0.5, 7, params).unwrap()
    } else {
        SparseFd::fd(d, m, 0.5, 7, params).unwrap()
    }
}

/// Learns `examples`, appending the dense to-sketch rows `ĝ = √c·ℓ'(p)·x` to `sketched`.
fn learn_all(l: &mut SparseFd, examples: &[Example], d: usize, sketched: &mut Vec<f64>) {
    let params = *l.params();
    for (idx, val, y) in examples {
        let x = Row::Sparse {
            indices: idx,
            values: val,
        };
        let p = l.learn(x, *y, 1.0).unwrap();
        let s = params.c.sqrt() * params.loss.derivative(p, *y);
        let mut row = vec![0.0; d];
        for (&j, &v) in idx.iter().zip(val) {
            row[j as usize] = s * v;
        }
        sketched.extend(row);
    }
}

/// `‖AᵀA − BᵀB‖₂` with `BᵀB` the learner's sketch.
fn sketch_error(a: &[f64], d: usize, l: &SparseFd) -> f64 {
    let mut diff = l.covariance();
    diff.iter_mut().for_each(|x| *x = -*x);
    for row in a.chunks(d) {
        for p in 0..d {
            for q in 0..d {
                diff[p * d + q] += row[p] * row[q];
            }
        }
    }
    let v = sym_eigenvalues(&diff, d).unwrap();
    v[0].abs().max(v[d - 1].abs())
}

fn merge(a: &mut SparseFd, b: &SparseFd, base: Option<&SparseFd>) {
    let g = base.map_or(0, |g| g.examples_seen());
    let share = share_of(a.examples_seen(), b.examples_seen(), g);
    a.merge_share(b, base, share).unwrap();
}

fn probes(d: usize) -> Vec<Example> {
    stream(20, d, 99)
}

fn predictions(l: &SparseFd, d: usize) -> Vec<f64> {
    probes(d)
        .iter()
        .map(|(i, v, _)| {
            l.predict(Row::Sparse {
                indices: i,
                values: v,
            })
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn k_shards_merged_stay_within_fd_bound_of_the_whole_stream(
        k in 2usize..5, per in 1usize..40, d in 16usize..40, m in 2usize..6,
        seed in any::<u64>(), rfd in any::<bool>(),
    ) {
        let examples = stream(k * per, d, seed);
        let mut sketched = Vec::new();
        let mut shards: Vec<SparseFd> = examples
            .chunks(per)
            .map(|part| {
                let mut l = fresh(d, m, rfd);
                learn_all(&mut l, part, d, &mut sketched);
                l
            })
            .collect();
        // Tree reduction, as sketchlearn.dask merges.
        while shards.len() > 1 {
            let mut next = Vec::new();
            let mut it = shards.into_iter();
            while let Some(mut a) = it.next() {
                if let Some(b) = it.next() {
                    merge(&mut a, &b, None);
                }
                next.push(a);
            }
            shards = next;
        }
        let merged = &shards[0];
        let tol = 1e-8 * (1.0 + sketched.iter().map(|x| x * x).sum::<f64>());
        let err = sketch_error(&sketched, d, merged);
        prop_assert!(err <= merged.total_shrinkage() + tol, "{err} > Σδ {}", merged.total_shrinkage());
        prop_assert!(merged.total_shrinkage() <= fd_bound(&sketched, d, m) + tol);
        prop_assert_eq!(merged.examples_seen(), (k * per) as u64);
        prop_assert!(merged.filled_rows() < m);
        prop_assert!(merged.orthonormality_error() < 1e-9);
        // It keeps learning, finitely.
        let mut more = merged.clone();
        learn_all(&mut more, &stream(3 * m, d, seed ^ 1), d, &mut Vec::new());
        prop_assert!(more.weights().iter().all(|w| w.is_finite()));
    }

    #[test]
    fn rounds_merged_over_a_base_stay_within_their_shrinkage(
        rounds in 1usize..4, per in 1usize..25, d in 16usize..40, m in 2usize..6,
        seed in any::<u64>(), rfd in any::<bool>(),
    ) {
        let examples = stream(2 * rounds * per, d, seed);
        let mut sketched = Vec::new();
        let mut global = fresh(d, m, rfd);
        for round in examples.chunks(2 * per) {
            let (x, y) = round.split_at(round.len() / 2);
            let (mut wa, mut wb) = (global.clone(), global.clone());
            learn_all(&mut wa, x, d, &mut sketched);
            learn_all(&mut wb, y, d, &mut sketched);
            let (va, vb) = (wa.weights().into_owned(), wb.weights().into_owned());
            let share = share_of(wa.examples_seen(), wb.examples_seen(), global.examples_seen());
            merge(&mut wa, &wb, Some(&global));
            // The weights: the example-weighted average of the two sides.
            for (j, w) in wa.weights().iter().enumerate() {
                let want = share * va[j] + (1.0 - share) * vb[j];
                prop_assert!((w - want).abs() <= 1e-9 * (1.0 + want.abs()), "w[{j}] {w} vs {want}");
            }
            global = wa;
        }
        let tol = 1e-8 * (1.0 + sketched.iter().map(|x| x * x).sum::<f64>());
        let err = sketch_error(&sketched, d, &global);
        prop_assert!(err <= global.total_shrinkage() + tol, "{err} > Σδ {}", global.total_shrinkage());
        prop_assert_eq!(global.examples_seen(), examples.len() as u64);
    }
}

#[test]
fn merging_with_the_empty_learner_is_the_identity() {
    let (d, m) = (30, 4);
    let mut a = fresh(d, m, true);
    learn_all(&mut a, &stream(25, d, 3), d, &mut Vec::new());
    let before = (predictions(&a, d), a.covariance(), a.total_shrinkage());
    let empty = fresh(d, m, true);
    merge(&mut a, &empty, None);
    assert_eq!(
        (predictions(&a, d), a.covariance(), a.total_shrinkage()),
        before
    );
    let mut e = empty.clone();
    merge(&mut e, &a, None);
    assert_eq!(
        (predictions(&e, d), e.covariance(), e.examples_seen()),
        (before.0, before.1, 25)
    );
    // Over a base: a side that learned nothing since the base changes nothing either.
    let base = a.clone();
    let mut b = base.clone();
    learn_all(&mut b, &stream(5, d, 4), d, &mut Vec::new());
    let want = predictions(&b, d);
    let mut idle = base.clone();
    merge(&mut idle, &b, Some(&base));
    assert_eq!(predictions(&idle, d), want);
    merge(&mut b, &base, Some(&base));
    assert_eq!(predictions(&b, d), want);
}

#[test]
fn a_merged_learner_predicts_like_its_shards_on_separate_features() {
    // Two shards on disjoint features, each seen by one side only: the merged weights are the
    // halves of each side's, so its margins are half of each side's on its own features.
    let (d, m) = (64, 3);
    let rows = |lo: u32| -> Vec<Example> {
        (0..30)
            .map(|i| {
                let y = if i % 2 == 0 { 1.0 } else { -1.0 };
                (vec![lo + i % 5, lo + 5 + i % 3], vec![y, 0.5 * y], y)
            })
            .collect()
    };
    let (mut a, mut b) = (fresh(d, m, false), fresh(d, m, false));
    learn_all(&mut a, &rows(0), d, &mut Vec::new());
    learn_all(&mut b, &rows(32), d, &mut Vec::new());
    let at = |l: &SparseFd, j: u32| {
        l.predict(Row::Sparse {
            indices: &[j],
            values: &[1.0],
        })
    };
    let (pa, pb) = (at(&a, 1), at(&b, 33));
    assert!(pa.abs() > 0.1 && pb.abs() > 0.1);
    merge(&mut a, &b, None);
    assert!((at(&a, 1) - 0.5 * pa).abs() < 1e-9 * (1.0 + pa.abs()));
    assert!((at(&a, 33) - 0.5 * pb).abs() < 1e-9 * (1.0 + pb.abs()));
}

#[test]
fn sparse_rp_and_oja_are_refused_and_configurations_checked() {
    let params = NewtonParams::default();
    let rp = SparseLearner::Rp(SparseRp::new(40, 3, 1.0, 1, params).unwrap());
    let oja = SparseLearner::Oja(SparseOja::new(40, 3, 1.0, 1.0, 1, params).unwrap());
    for (l, name) in [(rp, "RP"), (oja, "Oja")] {
        match l.clone().merge_share(&l, None, 0.5) {
            Err(MergeError::Unsupported(msg)) => assert!(msg.contains(name), "{msg}"),
            other => panic!("{name}: {other:?}"),
        }
    }
    let mut a = fresh(40, 3, false);
    learn_all(&mut a, &stream(5, 40, 1), 40, &mut Vec::new());
    let b = fresh(40, 4, false);
    let err = a.merge_share(&b, None, 0.5).unwrap_err();
    assert!(err.to_string().contains("sketch size"), "{err}");
}
