//! Model files of format version 8 (the last one before issue 26's bump to 9) keep loading,
//! predicting and learning exactly as the code that wrote them did, and re-save to the same
//! payload under the new version number.
//!
//! Version 9 changed no layout that a version-8 build could write *after* stop 37: it marks the
//! two layouts that stop added without a bump (the softmax learner's `RowScaled` wrapper,
//! `AnyMulticlass`'s fourth variant, and ProximalOgd's `(D, C)` pairs written for its stored
//! weights only), so that an older build refuses a new file with "written by a newer
//! sketchlearn" instead of a decoding error. The cases cover exactly those layouts, plus the
//! first-order learners whose state went through `Touched` in stop 37 (OGD, proximal AdaGrad)
//! and the default `auto` mixture (its unit scaling is version 8's change).
//!
//! Each `tests/golden/<name>-v8.model` learned the first 200 examples of `data/heart` (the
//! multiclass ones with the classes `a, b, c` given by the example's position mod 3) and was
//! written by `write_v8_models` at commit 7fde82f, the code of format version 8:
//! `cargo test -p sketchlearn --test suite -- --ignored v8_models::write_v8_models`. Its
//! `.predictions` record is the FNV-1a hash of the bit patterns of (1) the loaded model's
//! predictions (class probabilities for multiclass) of every example of heart, (2) the
//! progressive predictions of learning the remaining examples from the loaded state, and
//! (3) the final weights — so the whole state (accumulators, sketches, mixture weights, the
//! touched lists' contents) is checked, not only the weights.

use sketchlearn::linear::multiclass::{MulticlassConfig, MulticlassModel, Reduction};
use sketchlearn::linear::{
    Algorithm, LearnerConfig, LinearModel, OnlineLearner, Regularization, Representation,
};
use sketchlearn::model::{self, ModelError};

use crate::common;

use common::fixtures::{
    heart, learner_fingerprint, multiclass_fingerprint, record, row, trained_multiclass,
    write_record, LEARNED,
};
use common::golden::{golden_dir, Data};

/// The format version of the files (written by the code of that version).
const V8: u32 = 8;

/// The binary cases: name, configuration, penalty (a penalty makes OGD and AdaGrad the
/// proximal learners).
fn linear_cases() -> Vec<(&'static str, LearnerConfig, Regularization)> {
    let first_order = |algorithm| LearnerConfig {
        algorithm,
        ..LearnerConfig::default()
    };
    let l1 = Regularization { l1: 0.2, l2: 0.0 };
    let none = Regularization::default();
    vec![
        ("heart-auto-v8", LearnerConfig::default(), none),
        ("heart-ogd-v8", first_order(Algorithm::Ogd), none),
        ("heart-proximal-ogd-v8", first_order(Algorithm::Ogd), l1),
        (
            "heart-proximal-adagrad-v8",
            first_order(Algorithm::AdaGrad),
            l1,
        ),
    ]
}

/// The multiclass cases: the softmax learner (row-scaled) in dense and in sparse time.
fn softmax_cases() -> Vec<(&'static str, MulticlassConfig)> {
    // The sparse-time learner needs 2m ≤ d + 1 = 14. The softmax parameters are the defaults
    // of version 8 (the files were written with them; the untuned default changed in issue 24,
    // `sketch_choice.rs`).
    let softmax = |representation, size| MulticlassConfig {
        reduction: Reduction::Softmax,
        size,
        alpha0: 1.5,
        c: 0.05,
        ridge: 0.05,
        member: LearnerConfig {
            representation,
            ..LearnerConfig::default()
        },
        ..MulticlassConfig::default()
    };
    vec![
        ("heart-softmax-v8", softmax(Representation::Dense, 10)),
        (
            "heart-softmax-sparse-v8",
            softmax(Representation::Sparse, 5),
        ),
    ]
}

/// The hash described in the module documentation, of a binary model.
fn linear_fingerprint(mut m: LinearModel, data: &Data) -> String {
    learner_fingerprint(&mut m.learner, data)
}

fn trained_linear(config: &LearnerConfig, reg: Regularization, data: &Data) -> LinearModel {
    let mut m = LinearModel::new(config.clone(), reg.build(config, 13).unwrap());
    m.extras.regularization = reg;
    for (i, v, y) in &data[..LEARNED] {
        m.learner.learn(row(i, v), *y, 1.0).unwrap();
    }
    m.examples_seen = LEARNED as u64;
    m
}

/// Writes the version-8 files (run once, with the code of format version 8, at commit 7fde82f).
#[test]
#[ignore]
fn write_v8_models() {
    assert_eq!(
        model::FORMAT_VERSION,
        V8,
        "only the code of version 8 writes these"
    );
    let data = heart();
    for (name, config, reg) in linear_cases() {
        let m = trained_linear(&config, reg, &data);
        m.save(golden_dir().join(format!("{name}.model"))).unwrap();
        write_record(name, linear_fingerprint(m, &data));
    }
    for (name, config) in softmax_cases() {
        let m = trained_multiclass(&config, &data);
        m.save(golden_dir().join(format!("{name}.model"))).unwrap();
        write_record(name, multiclass_fingerprint(m, &data));
    }
}

fn fixture(name: &str) -> Vec<u8> {
    common::fixtures::fixture(name, V8)
}

#[test]
fn v8_linear_models_load_predict_and_learn_the_same() {
    let data = heart();
    for (name, _, reg) in linear_cases() {
        fixture(name);
        let m = LinearModel::load(golden_dir().join(format!("{name}.model")))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            (m.examples_seen, m.extras.regularization),
            (LEARNED as u64, reg),
            "{name}"
        );
        if name == "heart-proximal-ogd-v8" {
            // Some weights are exactly zero: the file holds fewer (D, C) pairs than features
            // (stop 37's layout, not the one with a pair per feature).
            let zeros = m.learner.weights().iter().filter(|&&w| w == 0.0).count();
            assert!((1..13).contains(&zeros), "{zeros} zero weights");
        }
        assert_eq!(linear_fingerprint(m, &data), record(name), "{name}");
    }
}

#[test]
fn v8_softmax_models_load_predict_and_learn_the_same() {
    let data = heart();
    for (name, config) in softmax_cases() {
        fixture(name);
        let m = MulticlassModel::load(golden_dir().join(format!("{name}.model")))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            m.config,
            MulticlassConfig {
                classes: 3,
                ..config
            },
            "{name}"
        );
        assert_eq!(m.classes.to_list(), "a,b,c", "{name}");
        assert_eq!(multiclass_fingerprint(m, &data), record(name), "{name}");
    }
}

/// Each file loaded and saved again by this build: the image `save` would write.
fn resaved(name: &str, bytes: &[u8]) -> Vec<u8> {
    if name.contains("softmax") {
        MulticlassModel::from_bytes(bytes, name)
            .and_then(|m| m.to_bytes())
            .unwrap()
    } else {
        LinearModel::from_bytes(bytes, name)
            .and_then(|m| m.to_bytes())
            .unwrap()
    }
}

fn every_case() -> Vec<&'static str> {
    let linear = linear_cases().into_iter().map(|(name, ..)| name);
    linear
        .chain(softmax_cases().into_iter().map(|c| c.0))
        .collect()
}

/// A version-8 file saved again is the same bytes but for the version number, the checksum and
/// (from version 10) the calibrated-output flag of each `AdaHedgeCalibrated` mixture: version 9
/// changed no layout that version 8 wrote since stop 37 (it only marks them), nor did version 11
/// (a new algorithm name). The default's file
/// holds two such mixtures (the default and its AdaGrad grid), each one saved value longer
/// (the flag, 0: the raw output it was written with); it re-saves to itself and predicts and
/// learns as recorded.
#[test]
fn v8_models_resave_to_the_same_payload_under_versions_9_to_11() {
    for name in every_case() {
        let old = fixture(name);
        let new = resaved(name, &old);
        assert_eq!(&new[8..12], &11u32.to_le_bytes(), "{name}");
        let k = usize::from(u16::from_le_bytes([old[12], old[13]]));
        let crc = 22 + k..26 + k;
        let flags = if name.contains("auto") { 2 } else { 0 };
        assert_eq!(new.len(), old.len() + 8 * flags, "{name}");
        if flags > 0 {
            assert_eq!(resaved(name, &new), new, "{name}");
            let m = LinearModel::from_bytes(&new, name).unwrap();
            assert!(!m.mixture().unwrap().calibrates_output(), "{name}");
            assert_eq!(linear_fingerprint(m, &heart()), record(name), "{name}");
            continue;
        }
        for range in [0..8, 12..crc.start, crc.end..old.len()] {
            assert_eq!(new[range.clone()], old[range], "{name}");
        }
    }
}

/// `bytes` with the format version `version` and a checksum that matches (a well-formed file of
/// that version).
fn as_version(mut bytes: Vec<u8>, version: u32) -> Vec<u8> {
    bytes[8..12].copy_from_slice(&version.to_le_bytes());
    let k = usize::from(u16::from_le_bytes([bytes[12], bytes[13]]));
    let mut h = crc32fast::Hasher::new();
    h.update(&bytes[..22 + k]);
    h.update(&bytes[26 + k..]);
    bytes[22 + k..26 + k].copy_from_slice(&h.finalize().to_le_bytes());
    bytes
}

/// A well-formed file of a later format version (11) is refused before its payload is read, by
/// the loader of every kind and by `peek_kind`, with a message that names both versions and says
/// to upgrade — what a version-9 build now says of every file this build writes.
#[test]
fn a_future_version_is_refused_with_an_upgrade_message() {
    use sketchlearn::fm::{FmAlgorithm, FmConfig, FmModel, FM_MODEL_KIND};
    let fm_config = FmConfig::new(FmAlgorithm::FmSgd);
    let fm = FmModel::new(fm_config, fm_config.build(3).unwrap());
    let images = [
        (
            "linear",
            resaved("heart-auto-v8", &fixture("heart-auto-v8")),
        ),
        (
            "softmax",
            resaved("heart-softmax-v8", &fixture("heart-softmax-v8")),
        ),
        ("fm", model::to_bytes(FM_MODEL_KIND, &fm).unwrap()),
    ];
    let dir = std::env::temp_dir().join(format!("sketchlearn-v12-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (what, image) in images {
        let future = as_version(image.clone(), 12);
        let path = dir.join(format!("{what}.model"));
        std::fs::write(&path, &future).unwrap();
        let name = path.display().to_string();
        let errors = [
            LinearModel::from_bytes(&future, &name).err(),
            MulticlassModel::from_bytes(&future, &name).err(),
            FmModel::from_bytes(&future, &name).err(),
            LinearModel::load(&path).err(),
            MulticlassModel::load(&path).err(),
            FmModel::load(&path).err(),
            model::peek_kind(&path).err(),
        ];
        for err in errors {
            let want = ModelError::UnsupportedVersion {
                path: name.clone(),
                found: 12,
                oldest: 4,
                supported: 11,
            };
            assert_eq!(err.as_ref(), Some(&want), "{what}");
            assert_eq!(
                want.to_string(),
                format!(
                    "{name}: model file format version 12 is not supported: this build reads \
                     versions 4 to 11; the file was written by a newer sketchlearn, upgrade \
                     sketchlearn to read it"
                )
            );
        }
        // The same image under this version loads (the refusal is the version's alone).
        assert!(model::peek_kind(&path).is_err());
        std::fs::write(&path, as_version(image, 11)).unwrap();
        assert!(model::peek_kind(&path).is_ok(), "{what}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
