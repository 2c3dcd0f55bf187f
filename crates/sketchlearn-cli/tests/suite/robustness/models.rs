//! Validated models through the command line (issue 26, item 4): a model file with an intact
//! frame but weights no training produces is refused by every command that loads it, with a
//! clear error (the hostile byte-level cases are `crates/sketchlearn/tests/suite/hostile_models.rs`).

use super::{assert_clear_error, repo_file, run, Scratch};
use sketchlearn::linear::{AnyLearner, FixedLinear, LearnerConfig, LinearModel};

#[test]
fn a_model_with_impossible_weights_is_refused_on_load() {
    let dir = Scratch::new("models");
    let path = dir.path("huge.model");
    // 1e300 is finite (FixedLinear accepts it) but beyond any weight a step may produce.
    let learner = AnyLearner::Fixed(FixedLinear::new(vec![1e300; 13], "crafted").unwrap());
    LinearModel::new(LearnerConfig::default(), learner)
        .save(&path)
        .unwrap();
    let heart = repo_file("heart.libsvm");
    for args in [
        vec!["predict", "-i", &path, &heart],
        vec!["test", "-i", &path, &heart],
        vec!["train", "--quiet", "-i", &path, &heart],
        vec!["inspect", &path],
    ] {
        let out = run(&args, None);
        assert_clear_error(
            &out,
            "invalid model: weight 0 is 1e300 (beyond any a step may produce, 1e100)",
        );
    }
}

/// A model file of a later format version (a newer sketchlearn's, well formed: its checksum
/// matches) is refused by every command that loads it, naming both versions and saying to
/// upgrade — not a decoding error (issue 26: what a version-8 build says of this build's files).
#[test]
fn a_model_of_a_newer_format_version_is_refused_with_an_upgrade_message() {
    let dir = Scratch::new("models-future");
    let path = dir.path("future.model");
    let config = LearnerConfig::default();
    let model = LinearModel::new(config.clone(), config.build(13).unwrap());
    let mut bytes = model.to_bytes().unwrap();
    bytes[8..12].copy_from_slice(&(sketchlearn::model::FORMAT_VERSION + 1).to_le_bytes());
    let k = usize::from(u16::from_le_bytes([bytes[12], bytes[13]]));
    let mut h = crc32fast::Hasher::new();
    h.update(&bytes[..22 + k]);
    h.update(&bytes[26 + k..]);
    bytes[22 + k..26 + k].copy_from_slice(&h.finalize().to_le_bytes());
    std::fs::write(&path, &bytes).unwrap();
    let heart = repo_file("heart.libsvm");
    let (newer, this) = (
        sketchlearn::model::FORMAT_VERSION + 1,
        sketchlearn::model::FORMAT_VERSION,
    );
    let message = format!(
        "{path}: model file format version {newer} is not supported: this build reads versions \
         4 to {this}; the file was written by a newer sketchlearn, upgrade sketchlearn to read it"
    );
    for args in [
        vec!["predict", "-i", &path, &heart],
        vec!["test", "-i", &path, &heart],
        vec!["train", "--quiet", "-i", &path, &heart],
        vec!["inspect", &path],
    ] {
        assert_clear_error(&run(&args, None), &message);
    }
    assert_eq!(
        std::fs::read(&path).unwrap(),
        bytes,
        "the file is left as it was"
    );
}
