//! Validated models through the command line (issue 26, item 4): a model file with an intact
//! frame but weights no training produces is refused by every command that loads it, with a
//! clear error (the hostile byte-level cases are `crates/sketchlearn/tests/hostile_models.rs`).

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
