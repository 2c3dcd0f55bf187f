//! Committed model files (`tests/golden/*-vN.model`) and their records: the examples each file
//! learned, the hash of what a loaded model does, and the record files beside the models
//! (shared by `v8_models.rs` and `v9_models.rs`).
#![allow(dead_code)] // not every test file that says `mod common;` uses the fixtures

use super::golden::{golden_dir, read_libsvm, root, Data, Fnv};
use sketchlearn::linear::multiclass::{MulticlassConfig, MulticlassLearner, MulticlassModel};
use sketchlearn::linear::OnlineLearner;
use sketchlearn::Row;

/// Examples learned before each file was saved (the first 200 of `data/heart`).
pub const LEARNED: usize = 200;

/// `data/heart`, the examples every fixture learns from.
pub fn heart() -> Data {
    read_libsvm(&root().join("data/heart.libsvm"), usize::MAX)
}

/// Example `(i, v)` as a sparse row.
pub fn row<'a>(i: &'a [u32], v: &'a [f64]) -> Row<'a> {
    Row::Sparse {
        indices: i,
        values: v,
    }
}

/// The FNV-1a hash of the bit patterns of (1) a loaded binary learner's predictions of every
/// example of `data`, (2) its progressive predictions learning the examples after the first
/// [`LEARNED`], and (3) its final weights — the whole state is checked, not only the weights.
pub fn learner_fingerprint(learner: &mut impl OnlineLearner, data: &Data) -> String {
    let mut h = Fnv::new();
    for (i, v, _) in data {
        h.f64(learner.predict(row(i, v)));
    }
    for (i, v, y) in &data[LEARNED..] {
        h.f64(learner.learn(row(i, v), *y, 1.0).unwrap_or(f64::NAN));
    }
    learner.weights().iter().for_each(|&w| h.f64(w));
    h.hex()
}

/// [`learner_fingerprint`] of a multiclass model (class probabilities; the classes `a, b, c`
/// given by the example's position mod 3).
pub fn multiclass_fingerprint(mut m: MulticlassModel, data: &Data) -> String {
    let mut h = Fnv::new();
    for (i, v, _) in data {
        m.learner
            .predict_proba(row(i, v))
            .iter()
            .for_each(|&p| h.f64(p));
    }
    for (t, (i, v, _)) in data.iter().enumerate().skip(LEARNED) {
        let p = m.learn(row(i, v), t % 3, 1.0).unwrap();
        p.iter().for_each(|&x| h.f64(x));
    }
    for w in m.learner.class_weights() {
        w.iter().for_each(|&x| h.f64(x));
    }
    h.hex()
}

/// A multiclass model of `config` that learned the first [`LEARNED`] examples of `data`.
pub fn trained_multiclass(config: &MulticlassConfig, data: &Data) -> MulticlassModel {
    let classes = sketchlearn::labels::Classes::parse_list("a,b,c").unwrap();
    let mut m = MulticlassModel::build(config.clone(), classes, 13).unwrap();
    for (t, (i, v, _)) in data[..LEARNED].iter().enumerate() {
        m.learn(row(i, v), t % 3, 1.0).unwrap();
    }
    m
}

/// Writes the record of fixture `name`.
pub fn write_record(name: &str, hash: String) {
    let path = golden_dir().join(format!("{name}.predictions"));
    std::fs::write(path, hash + "\n").unwrap();
}

/// The record of fixture `name`.
pub fn record(name: &str) -> String {
    let path = golden_dir().join(format!("{name}.predictions"));
    std::fs::read_to_string(path).unwrap().trim().to_owned()
}

/// The bytes of fixture `name`, checked to be a file of format version `version`.
pub fn fixture(name: &str, version: u32) -> Vec<u8> {
    let bytes = std::fs::read(golden_dir().join(format!("{name}.model"))).unwrap();
    assert_eq!(
        &bytes[8..12],
        &version.to_le_bytes(),
        "{name} is a version-{version} file"
    );
    bytes
}
