//! The squared loss's default intercept, the running label mean (`fm/label_mean.rs`): the
//! progressive prediction of a row depends on the labels before it only (no look-ahead, the row's
//! own label included), and the centre ends at the mean of the labels learned.

use proptest::prelude::*;
use sketchlearn::fm::{AnyFm, FmAlgorithm, FmConfig};
use sketchlearn::linear::OnlineLearner;
use sketchlearn::loss::Loss;
use sketchlearn::Row;

/// One-hot user + item rows (6 users, 5 items, d = 11).
fn rows(n: usize, seed: u64) -> Vec<[u32; 2]> {
    let mut state = seed | 1;
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            [((state >> 33) % 6) as u32, 6 + ((state >> 17) % 5) as u32]
        })
        .collect()
}

fn progressive(fm: &mut AnyFm, rows: &[[u32; 2]], labels: &[f64]) -> Vec<u64> {
    rows.iter()
        .zip(labels)
        .map(|(x, &y)| {
            let row = Row::Sparse {
                indices: x,
                values: &[1.0, 1.0],
            };
            fm.learn(row, y, 1.0).unwrap().to_bits()
        })
        .collect()
}

fn config(algorithm: FmAlgorithm) -> FmConfig {
    let mut c = FmConfig::for_loss(algorithm, Loss::Squared);
    c.size = 4;
    c.radius = 10.0;
    c
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    /// Two label sequences equal before row `k` and different from it on give the same
    /// progressive predictions for rows `0..=k`, to the bit, for every algorithm.
    #[test]
    fn a_prediction_sees_no_label_at_or_after_its_row(
        seed in any::<u64>(),
        labels in prop::collection::vec(1.0f64..5.0, 30),
        other in prop::collection::vec(1.0f64..5.0, 30),
        k in 0usize..30,
    ) {
        let x = rows(30, seed);
        let mut changed = labels.clone();
        changed[k..].copy_from_slice(&other[k..]);
        for algorithm in FmAlgorithm::ALL {
            let c = config(algorithm);
            let a = progressive(&mut c.build(11).unwrap(), &x, &labels);
            let b = progressive(&mut c.build(11).unwrap(), &x, &changed);
            prop_assert_eq!(&a[..=k], &b[..=k], "{}", algorithm);
        }
    }
}

/// The centre is the mean of the labels learned, the first prediction is made with none seen
/// (`μ₁ = 0`), and a fixed intercept or a classification loss builds the learner without the
/// centring.
#[test]
fn the_centre_is_the_mean_of_the_labels_learned() {
    let x = rows(50, 7);
    let labels: Vec<f64> = (0..50).map(|t| 1.0 + f64::from(t % 5)).collect();
    for algorithm in FmAlgorithm::ALL {
        let c = config(algorithm);
        let mut fm = c.build(11).unwrap();
        let p = progressive(&mut fm, &x, &labels);
        // No label seen: μ₁ = 0, the first prediction is the one of the fixed intercept 0.
        let zero = FmConfig {
            intercept: Some(0.0),
            ..c
        };
        let first = Row::Sparse {
            indices: &x[0],
            values: &[1.0, 1.0],
        };
        let untrained = zero.build(11).unwrap().predict(first);
        assert_eq!(f64::from_bits(p[0]), untrained, "{algorithm}");
        let AnyFm::LabelCentred(centred) = &fm else {
            panic!("{algorithm}: the squared-loss default is centred at the label mean")
        };
        let mean = labels.iter().sum::<f64>() / 50.0;
        assert!((centred.mean() - mean).abs() < 1e-12, "{algorithm}");
        let fixed = FmConfig {
            intercept: Some(3.0),
            ..c
        };
        assert!(!matches!(fixed.build(11).unwrap(), AnyFm::LabelCentred(_)));
        let logistic = FmConfig::for_loss(algorithm, Loss::Logistic);
        assert!(!matches!(
            FmConfig {
                radius: 10.0,
                ..logistic
            }
            .build(11)
            .unwrap(),
            AnyFm::LabelCentred(_)
        ));
    }
}
