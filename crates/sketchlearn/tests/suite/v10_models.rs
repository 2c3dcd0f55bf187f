//! Model files of format version 10: the default classifier saved with its calibrated output
//! (`linear/mixture_output.rs`). `tests/golden/heart-auto-v10.model` learned the first 200
//! examples of `data/heart` with the default and was written by `write_v10_models`, with the
//! code of format version 10:
//! `cargo test -p sketchlearn --test suite -- --ignored v10_models::write_v10_models`. Its
//! `.predictions` record is the hash of `common::fixtures::learner_fingerprint` (predictions of
//! every example from the loaded state, progressive predictions of learning the rest, final
//! weights), so the file must go on predicting with the calibrated probabilities it was saved
//! with.

use sketchlearn::linear::{LearnerConfig, LinearModel, OnlineLearner};
use sketchlearn::model;

use crate::common;

use common::fixtures::{fixture, heart, learner_fingerprint, record, row, write_record, LEARNED};
use common::golden::golden_dir;

/// The format version of the files.
const V10: u32 = 10;

const NAME: &str = "heart-auto-v10";

/// Writes the version-10 file (run once, with the code of format version 10).
#[test]
#[ignore]
fn write_v10_models() {
    assert_eq!(
        model::FORMAT_VERSION,
        V10,
        "only the code of version 10 writes these"
    );
    let data = heart();
    let config = LearnerConfig::default();
    let mut m = LinearModel::new(config.clone(), config.build(13).unwrap());
    for (i, v, y) in &data[..LEARNED] {
        m.learner.learn(row(i, v), *y, 1.0).unwrap();
    }
    m.examples_seen = LEARNED as u64;
    m.save(golden_dir().join(format!("{NAME}.model"))).unwrap();
    write_record(NAME, learner_fingerprint(&mut m.learner, &data));
}

#[test]
fn v10_default_model_loads_and_predicts_calibrated_the_same() {
    fixture(NAME, V10);
    let path = golden_dir().join(format!("{NAME}.model"));
    let m = LinearModel::load(&path).unwrap();
    assert_eq!(m.config, LearnerConfig::default());
    assert!(m.mixture().unwrap().calibrates_output());
    let mut raw = m.clone();
    assert_eq!(
        learner_fingerprint(&mut m.clone().learner, &heart()),
        record(NAME)
    );
    // The raw output of the same state is another prediction (the flag is what the file keeps).
    raw.learner.set_calibrated_output(false);
    assert_ne!(
        learner_fingerprint(&mut raw.learner, &heart()),
        record(NAME)
    );
}

/// `inspect` says how the model predicts: the version-10 default shows its members' scales
/// `s_k` (one per member, finite, ≥ 0) after the weights; a version-9 default file (raw output)
/// and a single learner's model show none.
#[test]
fn inspect_shows_the_calibrated_output_and_its_scales() {
    use sketchlearn::model::ModelSummary;
    fixture(NAME, V10);
    let v10 = LinearModel::load(golden_dir().join(format!("{NAME}.model"))).unwrap();
    let summary = ModelSummary::of_linear(&v10, 3, 3);
    let scales = summary.output_scales.clone().expect("calibrated output");
    assert_eq!(scales.len(), summary.mixture.as_ref().unwrap().len());
    assert!(
        scales.iter().all(|s| s.is_finite() && *s >= 0.0),
        "{scales:?}"
    );
    // Learned 200 examples: the scales have moved from their start, 1.
    assert!(scales.iter().any(|s| *s != 1.0), "{scales:?}");
    let text = summary.text("m.skl");
    assert!(
        text.contains("the members' calibrated probabilities; s = "),
        "{text}"
    );
    let v9 = LinearModel::load(golden_dir().join("heart-auto-sparse-v9.model")).unwrap();
    let summary = ModelSummary::of_linear(&v9, 3, 3);
    assert!(summary.mixture.is_some());
    assert_eq!(summary.output_scales, None);
    assert!(!summary.text("m.skl").contains("calibrated probabilities"));
}
