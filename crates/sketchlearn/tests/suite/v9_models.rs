//! Model files of format version 9 (issue 26 item 7: "a golden model file of today's format
//! … loads and predicts the same forever, or fails with a version message"), for the layouts
//! the version-8 fixtures (`v8_models.rs`) do not hold: the `auto-sparse` default of sparse
//! input (FD-SON + diag and the AdaGrad grid in sparse time), the softmax learner's untuned
//! sparse choice (fd-fast, sparse time) and a factorization machine (`sftrl-split`, the
//! default for ratings).
//!
//! Each `tests/golden/<name>-v9.model` learned the first 200 examples of `data/heart` (the
//! softmax one with the classes `a, b, c` given by the example's position mod 3) and was
//! written by `write_v9_models`, with the code of format version 9:
//! `cargo test -p sketchlearn --test suite -- --ignored v9_models::write_v9_models`. Its `.predictions`
//! record is the hash of `common::fixtures::learner_fingerprint` (predictions of every example
//! from the loaded state, progressive predictions of learning the rest, final weights). A
//! change of learning code that changes these bits re-records them (say why in the commit);
//! a change of layout must keep the files loading or refuse them with a version message.

use sketchlearn::fm::{FmAlgorithm, FmConfig, FmModel};
use sketchlearn::linear::multiclass::{MulticlassConfig, MulticlassModel, Reduction};
use sketchlearn::linear::{
    Algorithm, CurvatureKind, LearnerConfig, LinearModel, OnlineLearner, Representation,
};
use sketchlearn::model;

use crate::common;

use common::fixtures::{
    fixture, heart, learner_fingerprint, multiclass_fingerprint, record, row, trained_multiclass,
    write_record, LEARNED,
};
use common::golden::{golden_dir, Data};

/// The format version of the files.
const V9: u32 = 9;

/// `auto-sparse` in sparse time (sketch size 5: sparse time needs `2m ≤ d + 1 = 14`).
fn auto_sparse() -> LearnerConfig {
    LearnerConfig {
        algorithm: Algorithm::AutoSparse,
        representation: Representation::Sparse,
        size: 5,
        ..LearnerConfig::default()
    }
}

/// The softmax learner with the feature sketch its untuned default takes on sparse input.
fn softmax_fd_fast() -> MulticlassConfig {
    MulticlassConfig {
        reduction: Reduction::Softmax,
        curvature: CurvatureKind::FdFast,
        size: 5,
        member: LearnerConfig {
            representation: Representation::Sparse,
            ..LearnerConfig::default()
        },
        ..MulticlassConfig::default()
    }
}

fn path(name: &str) -> std::path::PathBuf {
    golden_dir().join(format!("{name}.model"))
}

fn learn_first(learner: &mut impl OnlineLearner, data: &Data) {
    for (i, v, y) in &data[..LEARNED] {
        learner.learn(row(i, v), *y, 1.0).unwrap();
    }
}

/// Writes the version-9 files (run once, with the code of format version 9).
#[test]
#[ignore]
fn write_v9_models() {
    assert_eq!(
        model::FORMAT_VERSION,
        V9,
        "only the code of version 9 writes these"
    );
    let data = heart();
    let config = auto_sparse();
    let mut linear = LinearModel::new(config.clone(), config.build(13).unwrap());
    learn_first(&mut linear.learner, &data);
    linear.examples_seen = LEARNED as u64;
    let softmax = trained_multiclass(&softmax_fd_fast(), &data);
    let fm_config = FmConfig::new(FmAlgorithm::SftrlSplit);
    let mut fm = FmModel::new(fm_config, fm_config.build(13).unwrap());
    learn_first(&mut fm.learner, &data);
    fm.examples_seen = LEARNED as u64;
    linear.save(path("heart-auto-sparse-v9")).unwrap();
    softmax.save(path("heart-softmax-fd-fast-v9")).unwrap();
    fm.save(path("heart-fm-sftrl-split-v9")).unwrap();
    let records = [
        (
            "heart-auto-sparse-v9",
            learner_fingerprint(&mut linear.learner, &data),
        ),
        (
            "heart-softmax-fd-fast-v9",
            multiclass_fingerprint(softmax, &data),
        ),
        (
            "heart-fm-sftrl-split-v9",
            learner_fingerprint(&mut fm.learner, &data),
        ),
    ];
    for (name, hash) in records {
        write_record(name, hash);
    }
}

#[test]
fn v9_auto_sparse_model_loads_predicts_and_learns_the_same() {
    let name = "heart-auto-sparse-v9";
    fixture(name, V9);
    let mut m = LinearModel::load(path(name)).unwrap();
    assert_eq!(m.config, auto_sparse());
    assert_eq!(m.examples_seen, LEARNED as u64);
    assert_eq!(learner_fingerprint(&mut m.learner, &heart()), record(name));
}

#[test]
fn v9_softmax_model_loads_predicts_and_learns_the_same() {
    let name = "heart-softmax-fd-fast-v9";
    fixture(name, V9);
    let m = MulticlassModel::load(path(name)).unwrap();
    let expected = MulticlassConfig {
        classes: 3,
        ..softmax_fd_fast()
    };
    assert_eq!(m.config, expected);
    assert_eq!(m.classes.to_list(), "a,b,c");
    assert_eq!(multiclass_fingerprint(m, &heart()), record(name));
}

#[test]
fn v9_fm_model_loads_predicts_and_learns_the_same() {
    let name = "heart-fm-sftrl-split-v9";
    fixture(name, V9);
    let mut m = FmModel::load(path(name)).unwrap();
    assert_eq!(m.config, FmConfig::new(FmAlgorithm::SftrlSplit));
    assert_eq!(m.examples_seen, LEARNED as u64);
    assert_eq!(learner_fingerprint(&mut m.learner, &heart()), record(name));
}
