//! Model files of format version 4 (written before the configuration split of issue 23) must
//! keep loading, predicting and learning exactly as the code that wrote them did.
//!
//! Each file in `tests/golden/` is a [`LinearModel`] that learned the first `LEARNED` examples of
//! its data set (heart: 200); `<name>.predictions` holds one FNV-1a hash of the bit patterns of (1) the loaded
//! model's predictions of every example, then (2) the progressive predictions of learning the
//! remaining examples from the loaded state, then (3) the final weights. So the hash checks the
//! whole state (sketches, accumulators, mixture weights), not only the weights.
//!
//! The files were written by this test file's `write_v4_models` at commit 2247148 (the code of
//! format version 4); it is gone because today's code writes version 5.
//!
//! Cases: sparse-time Oja-SON (`--curvature oja --sparse`), the default `auto` mixture with its
//! sparse-time members (what `train` chooses on a sparse file), sparse-time FD-SON with diagonal
//! adaptation, all on a generated sparse stream (d = 1000); and AdaGrad on `data/heart`.

use sketchlearn::linear::{LinearModel, OnlineLearner};
use sketchlearn::Row;

use crate::common;

use common::golden::{golden_dir, read_libsvm, root, xorshift, Data, Fnv, Planted};

/// Examples of the sparse stream learned before the model was saved (heart: 200).
const LEARNED: usize = 300;

fn heart() -> Data {
    read_libsvm(&root().join("data/heart.libsvm"), usize::MAX)
}

/// A deterministic sparse stream: d = 1000, about 8 non-zeros per row, labels from a planted
/// direction with noise (xorshift, independent of any crate's generator).
fn sparse1000() -> Data {
    Planted {
        rows: 900,
        draws: 8,
        scale: 999.0,
        always: Some(999),
        value: (1.5, -0.25),
        signal: |j| j % 4 == 1,
        off: -0.2,
        noise: Some(0.3),
    }
    .stream(xorshift(0x2545_F491_4F6C_DD1D))
}

/// The hash described in the module documentation.
fn fingerprint(mut model: LinearModel, data: &Data, learned: usize) -> String {
    let mut h = Fnv::new();
    for (i, v, _) in data {
        h.f64(model.learner.predict(Row::Sparse {
            indices: i,
            values: v,
        }));
    }
    for (i, v, y) in &data[learned..] {
        let x = Row::Sparse {
            indices: i,
            values: v,
        };
        let p = model.learner.learn(x, *y, 1.0).unwrap_or(f64::NAN);
        h.f64(p);
    }
    for w in model.learner.weights().iter() {
        h.f64(*w);
    }
    h.hex()
}

fn check(name: &str, data: &Data, learned: usize) {
    let model = LinearModel::load(golden_dir().join(format!("{name}.model")))
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(model.examples_seen, learned as u64, "{name}");
    let hash = fingerprint(model, data, learned);
    let record = golden_dir().join(format!("{name}.predictions"));
    let want = std::fs::read_to_string(&record).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(hash, want.trim(), "{name}: predictions changed");
}

#[test]
fn sparse_oja_v4_model_loads_predicts_and_learns_the_same() {
    check("sparse-oja-v4", &sparse1000(), LEARNED);
}

/// The version-4 curvatures become a curvature and a representation.
#[test]
fn v4_configurations_are_converted() {
    use sketchlearn::linear::{Algorithm, CurvatureKind, LearnerConfig, Representation};
    let config = |name: &str| {
        LinearModel::load(golden_dir().join(format!("{name}.model")))
            .unwrap()
            .config
    };
    let oja = config("sparse-oja-v4");
    let sparse = |algorithm, curvature| (algorithm, curvature, Representation::Sparse);
    let kinds = |c: &LearnerConfig| (c.algorithm, c.curvature, c.representation);
    assert_eq!(kinds(&oja), sparse(Algorithm::Newton, CurvatureKind::Oja));
    assert_eq!(oja.seed, 7);
    let auto = config("sparse-auto-v4");
    assert_eq!(
        kinds(&auto),
        sparse(Algorithm::Auto, CurvatureKind::RfdFast)
    );
    assert!(
        auto.describe().starts_with("auto[newton/rfd-sparse m=10"),
        "{}",
        auto.describe()
    );
    let fd = config("sparse-fd-diag-v4");
    assert_eq!(
        (fd.curvature, fd.representation, fd.diag),
        (CurvatureKind::FdFast, Representation::Sparse, true)
    );
    let heart = config("heart-auto-v4");
    assert_eq!(
        (heart.curvature, heart.representation),
        (CurvatureKind::RfdFast, Representation::Dense)
    );
    let adagrad = config("heart-adagrad-v4");
    assert_eq!(
        (adagrad.algorithm, adagrad.representation),
        (Algorithm::AdaGrad, Representation::Auto)
    );
}

/// A version-4 file resaved is a file of the current version (11) that loads to the same model.
#[test]
fn a_v4_model_resaved_is_version_5_and_the_same() {
    let v4 = LinearModel::load(golden_dir().join("sparse-auto-v4.model")).unwrap();
    let bytes = v4.to_bytes().unwrap();
    assert_eq!(
        &bytes[8..12],
        &sketchlearn::model::FORMAT_VERSION.to_le_bytes()
    );
    assert_eq!(sketchlearn::model::FORMAT_VERSION, 11);
    let v5 = LinearModel::from_bytes(&bytes, "memory").unwrap();
    assert_eq!(v5.config, v4.config);
    let data = sparse1000();
    assert_eq!(
        fingerprint(v5, &data, LEARNED),
        fingerprint(v4, &data, LEARNED)
    );
}

/// A version-3 file (or any older) fails with a message naming the versions.
#[test]
fn older_versions_fail_with_a_version_message() {
    let mut bytes = std::fs::read(golden_dir().join("heart-adagrad-v4.model")).unwrap();
    bytes[8..12].copy_from_slice(&3u32.to_le_bytes());
    let err = LinearModel::from_bytes(&bytes, "old.model").unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("version 3") && msg.contains("older"), "{msg}");
}

#[test]
fn sparse_auto_v4_model_loads_predicts_and_learns_the_same() {
    check("sparse-auto-v4", &sparse1000(), LEARNED);
}

#[test]
fn sparse_fd_diag_v4_model_loads_predicts_and_learns_the_same() {
    check("sparse-fd-diag-v4", &sparse1000(), LEARNED);
}

#[test]
fn heart_adagrad_v4_model_loads_predicts_and_learns_the_same() {
    check("heart-adagrad-v4", &heart(), 200);
}

/// Format version 5 (before models stored their classes and input): written at commit
/// 7904cfe by the default `auto` learner after the first 200 examples of heart; it loads as a
/// ±1 model and predicts and learns exactly as then.
#[test]
fn heart_auto_v5_model_loads_predicts_and_learns_the_same() {
    check("heart-auto-v5", &heart(), 200);
}

/// A version-5 multiclass model (the default one-against-all over classes a,b,c, 200 examples
/// of heart labelled t mod 3, written at commit 7904cfe) loads, predicts and learns the same.
#[test]
fn heart_multiclass_v5_model_loads_predicts_and_learns_the_same() {
    use sketchlearn::linear::multiclass::{MulticlassLearner, MulticlassModel};
    let mut m = MulticlassModel::load(golden_dir().join("heart-multiclass-v5.model")).unwrap();
    assert_eq!(
        (m.examples_seen, m.classes.to_list().as_str()),
        (200, "a,b,c")
    );
    let data = heart();
    let mut h = Fnv::new();
    for (i, v, _) in &data {
        let p = m.learner.predict_proba(Row::Sparse {
            indices: i,
            values: v,
        });
        p.iter().for_each(|&x| h.f64(x));
    }
    for (t, (i, v, _)) in data.iter().enumerate().skip(200) {
        let p = m
            .learn(
                Row::Sparse {
                    indices: i,
                    values: v,
                },
                t % 3,
                1.0,
            )
            .unwrap();
        p.iter().for_each(|&x| h.f64(x));
    }
    let want =
        std::fs::read_to_string(golden_dir().join("heart-multiclass-v5.predictions")).unwrap();
    assert_eq!(format!("{:016x}", h.0), want.trim(), "predictions changed");
}

/// The configurations of the version-6 golden files: the default `auto` mixture and AdaGrad
/// (whose per-feature arrays version 7 stores as their non-zero entries).
fn v6_cases() -> [(&'static str, sketchlearn::linear::LearnerConfig); 2] {
    use sketchlearn::linear::{Algorithm, LearnerConfig};
    [
        ("heart-auto-v6", LearnerConfig::default()),
        (
            "heart-adagrad-v6",
            LearnerConfig {
                algorithm: Algorithm::AdaGrad,
                ..LearnerConfig::default()
            },
        ),
    ]
}

/// Writes the version-6 golden files (run once, with the code of format version 6, at commit
/// c7023d0: `cargo test -p sketchlearn --test suite -- --ignored golden_models::write_v6_models`).
#[test]
#[ignore]
fn write_v6_models() {
    let data = heart();
    for (name, config) in v6_cases() {
        let mut model = LinearModel::new(config.clone(), config.build(13).unwrap());
        for (i, v, y) in &data[..200] {
            let x = Row::Sparse {
                indices: i,
                values: v,
            };
            model.learner.learn(x, *y, 1.0).unwrap();
        }
        model.examples_seen = 200;
        model
            .save(golden_dir().join(format!("{name}.model")))
            .unwrap();
        let hash = fingerprint(model, &data, 200);
        std::fs::write(
            golden_dir().join(format!("{name}.predictions")),
            hash + "\n",
        )
        .unwrap();
    }
}

/// Format version 6 (before per-feature arrays were stored sparsely): files written at commit
/// c7023d0 by `write_v6_models` load, predict and learn exactly as then.
#[test]
fn v6_models_load_predict_and_learn_the_same() {
    for (name, _) in v6_cases() {
        let bytes = std::fs::read(golden_dir().join(format!("{name}.model"))).unwrap();
        assert_eq!(&bytes[8..12], &6u32.to_le_bytes(), "{name}");
        check(name, &heart(), 200);
    }
}
