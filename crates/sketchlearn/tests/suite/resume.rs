//! Training k examples, saving, loading and training the rest is bit-identical to one
//! uninterrupted run, for every learner (weights AND sketch/curvature state are in the file).

use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};
use rand_xoshiro::Xoshiro256PlusPlus;
use sketchlearn::linear::{Algorithm, CurvatureKind, LearnerConfig, LinearModel, OnlineLearner};
use sketchlearn::loss::Loss;
use sketchlearn::model::ModelError;
use sketchlearn::Row;

fn data(n: usize, d: usize) -> Vec<(Vec<u32>, Vec<f64>, f64)> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(42);
    (0..n)
        .map(|i| {
            let mut idx = Vec::new();
            let mut val = Vec::new();
            for j in 0..d {
                if (i + j) % 3 != 0 {
                    idx.push(j as u32);
                    let z: f64 = StandardNormal.sample(&mut rng);
                    val.push(z + if j == 0 { 1.0 } else { 0.0 });
                }
            }
            let y = if val.first().copied().unwrap_or(0.0) > 0.3 {
                1.0
            } else {
                -1.0
            };
            (idx, val, y)
        })
        .collect()
}

fn configs() -> Vec<LearnerConfig> {
    let mut out = vec![
        LearnerConfig {
            algorithm: Algorithm::Ogd,
            ..Default::default()
        },
        LearnerConfig {
            algorithm: Algorithm::AdaGrad,
            ..Default::default()
        },
    ];
    for curvature in CurvatureKind::ALL {
        for diag in [false, true] {
            out.push(LearnerConfig {
                algorithm: Algorithm::Newton,
                curvature,
                size: 3,
                diag,
                clip: if diag { 2.0 } else { f64::INFINITY },
                loss: if diag { Loss::Squared } else { Loss::Logistic },
                seed: 7,
                ..Default::default()
            });
        }
    }
    // The default auto mixture, dense and with sparse-time members.
    out.push(LearnerConfig {
        size: 3,
        seed: 7,
        ..Default::default()
    });
    out.push(LearnerConfig {
        size: 3,
        curvature: CurvatureKind::RfdFast,
        representation: sketchlearn::linear::Representation::Sparse,
        ..Default::default()
    });
    out
}

/// The progressive predictions of learning `part` in order.
fn learn_all<L: OnlineLearner + ?Sized>(
    learner: &mut L,
    part: &[(Vec<u32>, Vec<f64>, f64)],
) -> Vec<f64> {
    part.iter()
        .map(|(idx, val, y)| {
            let x = Row::Sparse {
                indices: idx,
                values: val,
            };
            learner.learn(x, *y, 1.0).unwrap()
        })
        .collect()
}

#[test]
fn save_load_resume_is_bit_identical() {
    let d = 6;
    let stream = data(120, d);
    let dir = std::env::temp_dir().join(format!("sketchlearn-resume-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (n, cfg) in configs().into_iter().enumerate() {
        let mut straight = cfg.build(d).unwrap();
        let mut first = LinearModel::new(cfg.clone(), cfg.build(d).unwrap());
        let k = 37; // mid-way through a doubling buffer for m = 3
        let preds_a = learn_all(&mut straight, &stream);
        let mut preds_b = learn_all(&mut first.learner, &stream[..k]);
        let path = dir.join(format!("m{n}.skl"));
        first.save(&path).unwrap();
        let mut resumed = LinearModel::load(&path).unwrap();
        preds_b.extend(learn_all(&mut resumed.learner, &stream[k..]));
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(
            bits(&preds_a),
            bits(&preds_b),
            "{}: predictions differ",
            cfg.describe()
        );
        assert_eq!(
            bits(&straight.weights()),
            bits(&resumed.learner.weights()),
            "{}: weights differ",
            cfg.describe()
        );
        // And the test must be able to fail: a fresh learner does not match.
        let fresh = cfg.build(d).unwrap();
        assert_ne!(bits(&fresh.weights()), bits(&straight.weights()));
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn corrupted_or_foreign_model_files_are_clear_errors() {
    let dir = std::env::temp_dir().join(format!("sketchlearn-badmodel-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = LearnerConfig::default();
    let model = LinearModel::new(cfg.clone(), cfg.build(4).unwrap());
    let path = dir.join("good.skl");
    model.save(&path).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x55;
    let bad = dir.join("bad.skl");
    std::fs::write(&bad, &bytes).unwrap();
    let err = LinearModel::load(&bad).unwrap_err();
    assert!(matches!(err, ModelError::Corrupted { .. }), "{err}");
    let foreign = dir.join("data.libsvm");
    std::fs::write(&foreign, "+1 1:0.5\n").unwrap();
    let err = LinearModel::load(&foreign).unwrap_err();
    assert!(matches!(err, ModelError::NotAModel { .. }), "{err}");
    assert!(err.to_string().contains("data.libsvm"));
    std::fs::remove_dir_all(&dir).ok();
}

/// `n` rows of 50 distinct features of `0..d` each (seeded).
fn wide(n: usize, d: usize) -> Vec<(Vec<u32>, Vec<f64>, f64)> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
    (0..n)
        .map(|_| {
            let mut idx: Vec<u32> = (0..50)
                .map(|_| {
                    let u: f64 = rand::Rng::random(&mut rng);
                    (u * d as f64) as u32
                })
                .collect();
            idx.sort_unstable();
            idx.dedup();
            let val: Vec<f64> = idx
                .iter()
                .map(|_| StandardNormal.sample(&mut rng))
                .collect();
            let y = if val[0] > 0.0 { 1.0 } else { -1.0 };
            (idx, val, y)
        })
        .collect()
}

/// Thousands of features: the first-order arrays' touched lists are compacted several times
/// before the save (a compaction once dropped the feature that triggered it, so that weight
/// was missing from the file and a resumed run drifted from the straight one).
#[test]
fn a_wide_stream_resumes_bit_identically() {
    let d = 1 << 16;
    let stream = wide(300, d);
    let first_order = configs().into_iter().take(2);
    let diag = LearnerConfig {
        algorithm: Algorithm::Newton,
        curvature: CurvatureKind::Identity,
        diag: true,
        ..Default::default()
    };
    let auto = LearnerConfig::default();
    let dir = std::env::temp_dir().join(format!("sketchlearn-wide-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for cfg in first_order.chain([diag, auto]) {
        let mut straight = cfg.build(d).unwrap();
        let mut first = LinearModel::new(cfg.clone(), cfg.build(d).unwrap());
        let k = 200; // ≈ 9,900 features listed: compacted at 2,049, 4,097 and 8,193
        let preds_a = learn_all(&mut straight, &stream);
        let mut preds_b = learn_all(&mut first.learner, &stream[..k]);
        let path = dir.join(format!("{}.skl", cfg.algorithm.name()));
        first.save(&path).unwrap();
        let mut resumed = LinearModel::load(&path).unwrap();
        preds_b.extend(learn_all(&mut resumed.learner, &stream[k..]));
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&preds_a), bits(&preds_b), "{}", cfg.describe());
        assert_eq!(
            bits(&straight.weights()),
            bits(&resumed.learner.weights()),
            "{}",
            cfg.describe()
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}
