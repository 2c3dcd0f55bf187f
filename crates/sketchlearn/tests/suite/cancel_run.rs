//! A training run stopped by its caller's `Cancel` hook (`run::train_cancellable`,
//! `run::train_multiclass_cancellable`): the model is the one a run over the examples read
//! before the stop gives, bit for bit (whole rows only), and a hook never requested changes
//! nothing.

use sketchlearn::cancel::Cancel;
use sketchlearn::data::ClassSpec;
use sketchlearn::linear::multiclass::{MulticlassConfig, MulticlassLearner, MulticlassModel};
use sketchlearn::linear::LearnerConfig;
use sketchlearn::run::{
    self, Input, MulticlassOutcome, MulticlassStart, Silent, Start, TrainOptions, TrainOutcome,
};
use sketchlearn::Example;
use std::sync::atomic::{AtomicUsize, Ordering};

/// `n` LIBSVM lines of 5 features with labels from `labels` (a fixed pattern, no randomness).
fn lines(n: usize, labels: &[&str]) -> String {
    (0..n)
        .map(|i| {
            let label = labels[(i * 7 + i / 3) % labels.len()];
            let f = |j: usize| ((i * 31 + j * 17) % 23) as f64 / 23.0 - 0.4;
            format!(
                "{label} 1:{} 2:{} 3:{} 4:{} 5:{}\n",
                f(1),
                f(2),
                f(3),
                f(4),
                f(5)
            )
        })
        .collect()
}

fn input(text: &str) -> Input {
    Input::bytes("rows.libsvm", text.as_bytes().to_vec())
}

/// A run of the default learner over `text`, stopped by `hook`.
fn binary_run(
    text: &str,
    options: &TrainOptions,
    hook: &(dyn Fn() -> bool + Sync),
) -> TrainOutcome {
    let start = Start::New(LearnerConfig::default());
    run::train_cancellable(input(text), start, options, &mut Silent, Cancel::new(hook)).unwrap()
}

/// A multiclass run of the default learner over `text`, stopped by `hook`.
fn multiclass_run(text: &str, hook: &(dyn Fn() -> bool + Sync)) -> MulticlassOutcome {
    let start = MulticlassStart::New(MulticlassConfig::default(), ClassSpec::FromInput);
    let options = TrainOptions::default();
    run::train_multiclass_cancellable(input(text), start, &options, &mut (), Cancel::new(hook))
        .unwrap()
}

/// A hook that asks to stop from its `n`-th poll on (the run polls once per example read).
fn after(polls: &AtomicUsize, n: usize) -> impl Fn() -> bool + Sync + '_ {
    move || polls.fetch_add(1, Ordering::Relaxed) >= n
}

#[test]
fn a_cancelled_binary_run_is_the_run_over_the_rows_before_the_stop() {
    let text = lines(2000, &["0", "1"]);
    let options = TrainOptions::default();
    let start = || Start::New(LearnerConfig::default());
    for stop_at in [1usize, 255, 256, 700] {
        let polls = AtomicUsize::new(0);
        let hook = after(&polls, stop_at);
        let cancelled = binary_run(&text, &options, &hook);
        assert!(cancelled.cancelled && !cancelled.stopped_early);
        assert_eq!(cancelled.examples, stop_at as u64);
        let head: String = text
            .lines()
            .take(stop_at)
            .map(|l| format!("{l}\n"))
            .collect();
        // The classes come from a scan of the whole input: give the head the same ones.
        let classes = ClassSpec::Declared(cancelled.model.classes.clone().unwrap());
        let head_run =
            run::train_classified(input(&head), start(), &options, &classes, &mut Silent).unwrap();
        assert_eq!(
            cancelled.model.to_bytes().unwrap(),
            head_run.model.to_bytes().unwrap(),
            "stopped at {stop_at}"
        );
        assert_eq!(cancelled.metrics.mean_loss(), head_run.metrics.mean_loss());
    }
}

#[test]
fn an_uncancelled_run_gives_the_same_bits_and_a_stop_before_any_row_is_no_error() {
    let text = lines(600, &["-1", "1"]);
    let options = TrainOptions {
        passes: 2,
        ..TrainOptions::default()
    };
    let start = || Start::New(LearnerConfig::default());
    let plain = run::train(input(&text), start(), &options, &mut Silent).unwrap();
    let never = || false;
    let hooked = binary_run(&text, &options, &never);
    assert!(!hooked.cancelled);
    assert_eq!(hooked.examples, 1200);
    assert_eq!(
        plain.model.to_bytes().unwrap(),
        hooked.model.to_bytes().unwrap()
    );
    let at_once = || true;
    let none = binary_run(&text, &options, &at_once);
    assert!(none.cancelled);
    assert_eq!((none.examples, none.model.examples_seen), (0, 0));
}

#[test]
fn a_cancelled_multiclass_run_is_the_run_over_the_rows_before_the_stop() {
    let text = lines(900, &["1", "2", "3"]);
    let options = TrainOptions::default();
    let start = || MulticlassStart::New(MulticlassConfig::default(), ClassSpec::FromInput);
    let polls = AtomicUsize::new(0);
    let hook = after(&polls, 333);
    let cancelled = multiclass_run(&text, &hook);
    assert!(cancelled.cancelled);
    assert_eq!(cancelled.examples, 333);
    let head: String = text.lines().take(333).map(|l| format!("{l}\n")).collect();
    let head_run = run::train_multiclass(input(&head), start(), &options, &mut ()).unwrap();
    let never = || false;
    let whole = multiclass_run(&text, &never);
    let plain = run::train_multiclass(input(&text), start(), &options, &mut ()).unwrap();
    assert!(!whole.cancelled && whole.examples == 900);
    for i in 0..50 {
        let values: Vec<f64> = (0..5)
            .map(|j| ((i * 13 + j * 7) % 11) as f64 / 11.0)
            .collect();
        let ex = Example {
            label: 0.0,
            weight: 1.0,
            indices: vec![0, 1, 2, 3, 4],
            values,
        };
        let p = |m: &MulticlassModel| m.learner.predict_proba(ex.row());
        assert_eq!(p(&cancelled.model), p(&head_run.model));
        assert_eq!(p(&whole.model), p(&plain.model));
    }
}
