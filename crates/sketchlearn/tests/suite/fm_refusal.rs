//! A row an FM learner refuses (an invalid value, or a step its guards reject) leaves the
//! learner as it was: the same postcard bytes, and the same predictions and learning results
//! after it as a copy taken before the row. Every algorithm, both losses, both SFTRL backends and
//! both compressions of sftrl-split.

use crate::common::sparse_rows::{self, row};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use sketchlearn::fm::{AnyFm, Compression, FmAlgorithm, FmConfig, SftrlBackend};
use sketchlearn::linear::{LearnError, OnlineLearner};
use sketchlearn::loss::Loss;

/// Values that replace some of an ordinary row's to make it hostile.
const HOSTILE: [f64; 9] = [
    f64::NAN,
    f64::INFINITY,
    -1e300,
    1e300,
    1e160,
    -1e160,
    1e80,
    -1e80,
    1e40,
];

/// Labels of the hostile row (the first ones ordinary).
const LABELS: [f64; 6] = [1.0, -1.0, 1e160, -1e300, f64::NAN, 3.0];

/// `n` rows over `d` features (about half the features each), values in `[-1, 1]`, labels ±1.
fn data(n: usize, d: usize, seed: u64) -> Vec<(Vec<u32>, Vec<f64>, f64)> {
    sparse_rows::rows(n, d, seed, |_, u| if u < 0.5 { 1.0 } else { -1.0 })
}

/// The configurations checked: every algorithm (and SFTRL backend, sftrl-split compression).
fn configs(loss: Loss, d: usize) -> Vec<(String, FmConfig)> {
    let mut out = Vec::new();
    for algorithm in FmAlgorithm::ALL {
        let mut c = FmConfig::for_loss(algorithm, loss);
        c.size = 3.min(d);
        c.rank = 3;
        c.radius = 10.0;
        match algorithm {
            FmAlgorithm::Sftrl | FmAlgorithm::SftrlFast => {
                for backend in [SftrlBackend::Factored, SftrlBackend::Reference] {
                    out.push((
                        format!("{algorithm:?} {backend:?}"),
                        FmConfig { backend, ..c },
                    ));
                }
            }
            FmAlgorithm::SftrlSplit => {
                for compression in [Compression::Shrink, Compression::Truncate] {
                    let c = FmConfig { compression, ..c };
                    out.push((format!("{algorithm:?} {compression:?}"), c));
                }
            }
            _ => out.push((format!("{algorithm:?}"), c)),
        }
    }
    out
}

/// Learns `before` and then the hostile row; when it is refused, checks the state and what
/// follows against a copy taken before it. Returns whether the row was refused.
fn refusal_changes_nothing(
    mut fm: AnyFm,
    before: &[(Vec<u32>, Vec<f64>, f64)],
    hostile: (&[u32], &[f64], f64),
    after: &[(Vec<u32>, Vec<f64>, f64)],
    what: &str,
) -> Result<bool, TestCaseError> {
    for (i, v, y) in before {
        // An ordinary row may be refused too (a step too large): not this test's.
        let _ = fm.learn(row(i, v), *y, 1.0);
    }
    let (bytes, mut kept) = (postcard::to_allocvec(&fm).unwrap(), fm.clone());
    let (hi, hv, hy) = hostile;
    if fm.learn(row(hi, hv), hy, 1.0).is_ok() {
        return Ok(false);
    }
    sparse_rows::unchanged_by_the_refusal(&mut fm, &mut kept, &bytes, after, what)?;
    Ok(true)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, .. ProptestConfig::default() })]

    /// The row is an ordinary one with one to three values replaced by [`HOSTILE`] ones (or an
    /// ordinary row with a hostile label), after 0–30 ordinary rows.
    #[test]
    fn a_refused_row_leaves_every_fm_learner_unchanged(
        d in 4usize..9,
        n in 0usize..30,
        seed in any::<u64>(),
        picks in prop::collection::vec((any::<prop::sample::Index>(), 0usize..HOSTILE.len()), 0..4),
        label in 0usize..LABELS.len(),
        squared in any::<bool>(),
    ) {
        let rows = data(n + 6, d, seed);
        let (before, after) = (&rows[..n], &rows[n + 1..]);
        let hi: Vec<u32> = (0..d as u32).collect();
        let mut hv: Vec<f64> = (0..d).map(|j| 0.3 * (j as f64 + 1.0).sin()).collect();
        for (at, k) in &picks {
            hv[at.index(d)] = HOSTILE[*k];
        }
        let loss = if squared { Loss::Squared } else { Loss::Logistic };
        let hy = if squared { LABELS[label] } else { LABELS[label % 2] };
        for (name, config) in configs(loss, d) {
            let fm = config.build(d).unwrap();
            let what = format!("{name} {loss:?} d={d} n={n} row {hv:?} label {hy}");
            refusal_changes_nothing(fm, before, (&hi, &hv, hy), after, &what)?;
        }
    }
}

/// Every configuration, with each loss, refuses a valid row of one value `10⁸⁰` or `10¹⁶⁰` after
/// 20 ordinary rows (its step would leave the finite numbers: a refusal of the update, not of
/// the input), and that refusal changes nothing.
#[test]
fn every_fm_learner_refuses_a_huge_valid_row_and_stays_unchanged() {
    let d = 6;
    let rows = data(26, d, 7);
    let (before, after) = (&rows[..20], &rows[21..]);
    let hi: Vec<u32> = (0..d as u32).collect();
    for loss in [Loss::Squared, Loss::Logistic] {
        for (name, config) in configs(loss, d) {
            let mut refused = false;
            for huge in [1e80, 1e160] {
                let mut hv = vec![0.5; d];
                hv[2] = huge;
                let mut probe = config.build(d).unwrap();
                for (i, v, y) in before {
                    let _ = probe.learn(row(i, v), *y, 1.0);
                }
                let outcome = probe.learn(row(&hi, &hv), 1.0, 1.0);
                if let Err(e) = &outcome {
                    assert!(matches!(e, LearnError::Diverged(_)), "{name} {loss:?}: {e}");
                }
                let what = format!("{name} {loss:?} value {huge:e}");
                let fm = config.build(d).unwrap();
                let result = refusal_changes_nothing(fm, before, (&hi, &hv, 1.0), after, &what);
                refused |= result.unwrap();
            }
            assert!(refused, "{name} {loss:?}: took both huge rows");
        }
    }
}
