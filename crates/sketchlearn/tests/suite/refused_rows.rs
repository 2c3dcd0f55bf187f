//! A row the default learner refuses (one of its members refuses it: a value too large for a
//! sketch, or a step its weights' guard rejects) changes nothing but the count of refusals: the
//! mixture's weights and losses, every member and the shared feature scaling stay as they were,
//! so the next predictions and learning results are bit for bit those of a copy taken before the
//! row. The classification and regression defaults (`auto`, with their feature and label
//! scaling) and the multiclass default.

use crate::common::sparse_rows::{self, row};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use sketchlearn::linear::multiclass::{AnyMulticlass, MulticlassConfig, MulticlassLearner};
use sketchlearn::linear::{AnyLearner, LearnerConfig, OnlineLearner};
use sketchlearn::loss::Loss;

/// Values that replace some of an ordinary row's to make it hostile.
const HOSTILE: [f64; 8] = [1e300, -1e300, 1e160, -1e160, 1e80, -1e80, 1e40, 1e20];

/// `n` rows over `d` features (about half the features each), values in `[-1, 1]`, labels ±1
/// (the sign of the values' sum, a little noise).
fn data(n: usize, d: usize, seed: u64) -> Vec<(Vec<u32>, Vec<f64>, f64)> {
    sparse_rows::rows(n, d, seed, |v, u| {
        if v.iter().sum::<f64>() + 0.3 * (u - 0.5) > 0.0 {
            1.0
        } else {
            -1.0
        }
    })
}

/// The default of `loss` (a mixture; the squared loss's with its label statistics) after `before`, then the hostile row: returns whether a member refused it.
fn binary_case(
    loss: Loss,
    d: usize,
    before: &[(Vec<u32>, Vec<f64>, f64)],
    hostile: (&[u32], &[f64], f64),
    after: &[(Vec<u32>, Vec<f64>, f64)],
) -> Result<bool, TestCaseError> {
    let config = LearnerConfig {
        loss,
        ..LearnerConfig::default()
    };
    let mut l = config.build(d).unwrap();
    for (i, v, y) in before {
        let _ = l.learn(row(i, v), *y, 1.0);
    }
    let (mut kept, refused) = (l.clone(), l.member_refused_steps());
    let (hi, hv, hy) = hostile;
    let r = l.learn(row(hi, hv), hy, 1.0);
    if r.is_ok() && l.member_refused_steps() == refused {
        return Ok(false);
    }
    same_after(&mut l, &mut kept, after, &format!("default {loss:?}"))?;
    Ok(true)
}

fn same_after(
    l: &mut AnyLearner,
    kept: &mut AnyLearner,
    after: &[(Vec<u32>, Vec<f64>, f64)],
    what: &str,
) -> Result<(), TestCaseError> {
    for (t, (i, v, y)) in after.iter().enumerate() {
        let x = row(i, v);
        let (a, b) = (l.predict(x), kept.predict(x));
        prop_assert!(
            a.to_bits() == b.to_bits(),
            "{what}: prediction {t} after: {a} vs {b}"
        );
        let (a, b) = (
            l.learn(x, *y, 1.0).unwrap(),
            kept.learn(x, *y, 1.0).unwrap(),
        );
        prop_assert!(
            a.to_bits() == b.to_bits(),
            "{what}: learning {t} after: {a} vs {b}"
        );
    }
    Ok(())
}

/// The refusals of a one-against-all learner counted by the reduction and inside its members
/// (the members' own counts: a reduction that does not undo the row leaves them there).
fn all_refusals(m: &AnyMulticlass) -> u64 {
    match m {
        AnyMulticlass::OneVsAll(o) => {
            let inner: u64 = o
                .members()
                .iter()
                .map(AnyLearner::member_refused_steps)
                .sum();
            o.refused() + inner
        }
        other => other.refused(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    /// The binary default (`auto`) and the multiclass default: a row with one to three hostile
    /// values after 0–40 ordinary rows.
    #[test]
    fn a_row_a_member_refuses_leaves_the_default_learners_unchanged(
        d in 4usize..10,
        n in 0usize..40,
        seed in any::<u64>(),
        picks in prop::collection::vec((any::<prop::sample::Index>(), 0usize..HOSTILE.len()), 1..4),
    ) {
        let rows = data(n + 11, d, seed);
        let (before, after) = (&rows[..n], &rows[n + 1..]);
        let hi: Vec<u32> = (0..d as u32).collect();
        let mut hv: Vec<f64> = (0..d).map(|j| 0.3 * (j as f64 + 1.0).sin()).collect();
        for (at, k) in &picks {
            hv[at.index(d)] = HOSTILE[*k];
        }
        for loss in [Loss::Logistic, Loss::Squared] {
            binary_case(loss, d, before, (&hi, &hv, rows[n].2), after)?;
        }
        // Multiclass: three classes from the sign and size of the label's row sum.
        let class = |v: &[f64]| {
            let s: f64 = v.iter().sum();
            if s > 0.5 { 2 } else if s > -0.5 { 1 } else { 0 }
        };
        // Its row: the first hostile value made one of the largest four (±1e300, ±1e160), so
        // that most cases draw a row the classes refuse.
        hv[picks[0].0.index(d)] = HOSTILE[picks[0].1 % 4];
        let mut m = MulticlassConfig { classes: 3, ..MulticlassConfig::default() }.build(d).unwrap();
        for (i, v, _) in before {
            let _ = m.learn(row(i, v), class(v), 1.0);
        }
        let (mut kept, refused) = (m.clone(), all_refusals(&m));
        let r = m.learn(row(&hi, &hv), class(&hv[..]), 1.0);
        if r.is_err() || all_refusals(&m) != refused {
            // A hostile value is refused alike by every class (a counted run drew 43 refused
            // rows in 50 cases; 26 before the row was made larger), so the scores below cannot
            // tell whether the reduction undid the row: the examples seen can. Only above the
            // mixture's size test (1e60, the crate's `SUSPECT_ROW`) is the row undone.
            if hv.iter().map(|v| v * v).sum::<f64>() > 1e60 {
                prop_assert_eq!(m.examples_seen(), kept.examples_seen(), "multiclass: examples seen");
            }
            for (t, (i, v, _)) in after.iter().enumerate() {
                let x = row(i, v);
                let (a, b) = (m.scores(x), kept.scores(x));
                prop_assert!(a == b, "multiclass: scores {t} after: {a:?} vs {b:?}");
                let (a, b) = (m.learn(x, class(v), 1.0).unwrap(), kept.learn(x, class(v), 1.0).unwrap());
                prop_assert!(a == b, "multiclass: learning {t} after: {a:?} vs {b:?}");
            }
        }
    }
}
