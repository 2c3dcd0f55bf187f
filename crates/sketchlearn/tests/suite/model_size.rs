//! Model files are sized to the data, not to the hashed dimension (issue 26, format version 7):
//! a learner over `d = 2²⁷` hashed features that has seen a few hundred of them writes a file of
//! kilobytes (version 6 wrote 8·d bytes per per-feature array: 5.4 GB for heart at `-b 27`), and
//! a model loaded from it predicts and learns bit for bit as the one that wrote it.

use sketchlearn::linear::{Algorithm, LearnerConfig, LinearModel, OnlineLearner, Representation};
use sketchlearn::Row;

/// Rows of heart (d = 13) with each feature hashed to a spread-out index below `dim`.
fn hashed_heart(dim: usize) -> Vec<(Vec<u32>, Vec<f64>, f64)> {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/heart.libsvm"),
    )
    .unwrap();
    let spread = |j: u64| ((j.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20) % dim as u64) as u32;
    text.lines()
        .map(|line| {
            let mut parts = line.split_whitespace();
            let y: f64 = parts.next().unwrap().parse().unwrap();
            let mut row: Vec<(u32, f64)> = parts
                .map(|p| {
                    let (j, v) = p.split_once(':').unwrap();
                    (spread(j.parse().unwrap()), v.parse().unwrap())
                })
                .collect();
            row.sort_by_key(|e| e.0);
            let (i, v) = row.into_iter().unzip();
            (i, v, if y > 0.0 { 1.0 } else { -1.0 })
        })
        .collect()
}

fn check(config: LearnerConfig, dim: usize, max_bytes: usize, resume: bool) {
    let data = hashed_heart(dim);
    let mut model = LinearModel::new(config.clone(), config.build(dim).unwrap());
    let learn = |m: &mut LinearModel, (i, v, y): &(Vec<u32>, Vec<f64>, f64)| {
        let x = Row::Sparse {
            indices: i,
            values: v,
        };
        m.learner.learn(x, *y, 1.0).unwrap().to_bits()
    };
    for ex in &data[..150] {
        learn(&mut model, ex);
    }
    let bytes = model.to_bytes().unwrap();
    assert!(
        bytes.len() < max_bytes,
        "{}: {} bytes for d = {dim}",
        config.describe(),
        bytes.len()
    );
    let mut back = LinearModel::from_bytes(&bytes, "memory").unwrap();
    assert_eq!(
        back.to_bytes().unwrap(),
        bytes,
        "the state changed in a round trip"
    );
    for (i, v, _) in &data {
        let x = Row::Sparse {
            indices: i,
            values: v,
        };
        let (p, q) = (back.learner.predict(x), model.learner.predict(x));
        assert_eq!(p.to_bits(), q.to_bits(), "loaded predictions differ");
    }
    if resume {
        for ex in &data[150..] {
            assert_eq!(
                learn(&mut back, ex),
                learn(&mut model, ex),
                "resumed learning differs"
            );
        }
        assert_eq!(back.to_bytes().unwrap(), model.to_bytes().unwrap());
    }
}

/// AdaGrad (weights and squared gradients, the arrays the default mixture's AdaGrad members
/// hold) at `d = 2²⁷`: a file of a few kilobytes (version 6: 2 GiB).
#[test]
fn an_adagrad_model_over_2_pow_27_features_is_small_and_resumes_exactly() {
    let config = LearnerConfig {
        algorithm: Algorithm::AdaGrad,
        ..LearnerConfig::default()
    };
    check(config, 1 << 27, 16 << 10, true);
}

/// The default learner as `train` builds it on sparse input (a mixture of sparse-time and
/// AdaGrad members) at `d = 2²⁰`.
#[test]
fn a_default_model_over_2_pow_20_features_is_small_and_resumes_exactly() {
    let config = LearnerConfig {
        representation: Representation::Sparse,
        ..LearnerConfig::default()
    };
    check(config, 1 << 20, 64 << 10, true);
}
