//! What a run's warning tells the user to try: the flags that set a learner's step, named only
//! where that learner reads them (the CLI prints these texts after the warning and a `; `; the
//! policy is here, once, for every front end).

use super::Warning;
use crate::linear::{Algorithm, CurvatureKind, LearnerConfig};

/// A flag that sets the step of a learner, and which way shortens the step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// A step size: a smaller value shortens the step (`--learning-rate`).
    Size(&'static str),
    /// A regulariser: a larger value shortens the step (Newton's `--alpha` in `A = αI + SᵀS`,
    /// whose `1/α` acts as the step; RFD's `--alpha0`; Ada-FD's and Sketchy's `δ`).
    Damping(&'static str),
}

impl Step {
    /// The flag's name, as the CLI spells it.
    pub fn flag(self) -> &'static str {
        match self {
            Step::Size(f) | Step::Damping(f) => f,
        }
    }

    fn shorter(self) -> String {
        match self {
            Step::Size(f) => format!("a smaller {f}"),
            Step::Damping(f) => format!("a larger {f}"),
        }
    }
}

/// The step flags the advice suggests for `config`'s learner, in the order it names them: each
/// is one the learner reads (`LearnerConfig::check` and `build` in `linear/check.rs`), but not
/// every such flag is listed (Newton's `--c` scales its curvature and is not suggested; the
/// default mixtures also read `--alpha`, `--alpha0` and `--c`, tuned for them). Exhaustive (no
/// wildcard): a new algorithm must say which of its flags set its step.
/// - OGD, AdaGrad: `--learning-rate`; the AdaGrad grid too (its members learn at `η` and `8η`:
///   the flag moves the grid, [`LearnerConfig::adagrad_grid_members`]);
/// - Newton: `--alpha`, or `--alpha0` for an RFD curvature (whose `α` starts at `α₀` and is
///   learnt); it reads no learning rate;
/// - Ada-FD: `--learning-rate` and its `δ`, `--alpha`; Sketchy: `--learning-rate` and its `δ`,
///   `--alpha0`;
/// - the default mixtures: `--learning-rate` (the AdaGrad members'; the Newton members take
///   `α`, `α₀` in absolute units, tuned for the default);
/// - the running mean: none.
///
/// ```
/// use sketchlearn::linear::{Algorithm, CurvatureKind, LearnerConfig};
/// use sketchlearn::run::step_flags;
/// let flags = |c: &LearnerConfig| step_flags(c).iter().map(|s| s.flag()).collect::<Vec<_>>();
/// let newton = LearnerConfig { algorithm: Algorithm::Newton, ..LearnerConfig::default() };
/// assert_eq!(flags(&newton), ["--alpha0"]); // the default curvature is rfd-fast
/// let oja = LearnerConfig { curvature: CurvatureKind::Oja, ..newton };
/// assert_eq!(flags(&oja), ["--alpha"]);
/// ```
pub fn step_flags(config: &LearnerConfig) -> &'static [Step] {
    const RATE: Step = Step::Size("--learning-rate");
    const ALPHA: Step = Step::Damping("--alpha");
    const ALPHA0: Step = Step::Damping("--alpha0");
    match config.algorithm {
        Algorithm::Ogd
        | Algorithm::AdaGrad
        | Algorithm::AdaGradGrid
        | Algorithm::Auto
        | Algorithm::AutoSparse
        | Algorithm::AutoVerySparse => &[RATE],
        Algorithm::Newton => match config.curvature {
            CurvatureKind::Rfd | CurvatureKind::RfdFast => &[ALPHA0],
            CurvatureKind::Identity
            | CurvatureKind::Full
            | CurvatureKind::Fd
            | CurvatureKind::FdFast
            | CurvatureKind::Rp
            | CurvatureKind::Oja => &[ALPHA],
        },
        Algorithm::AdaFd => &[RATE, ALPHA],
        Algorithm::Sketchy => &[RATE, ALPHA0],
        Algorithm::RunningMean => &[],
    }
}

/// The flags to try when a pass of `config`'s learner diverged (the CLI's hint after
/// [`Warning::Diverged`]): a shorter step through the flags of [`step_flags`], rows at unit
/// scale, and the default `--algo auto` unless the run already is one of its mixtures.
///
/// The running mean reads only the labels and has no step: it predicts their mean, so its
/// progressive loss is never far above a constant's and it "diverges" only when the loss of
/// the labels themselves is not finite (squared labels above `f64::MAX`, labels of about
/// `1e154` or more). No flag or feature scaling helps there; dividing the labels by a constant
/// does, and the hint says that alone.
///
/// ```
/// use sketchlearn::linear::{Algorithm, LearnerConfig};
/// use sketchlearn::run::divergence_advice;
/// let auto = LearnerConfig::default();
/// assert!(!divergence_advice(&auto).contains("--algo auto"));
/// let ogd = LearnerConfig { algorithm: Algorithm::Ogd, ..auto.clone() };
/// assert!(divergence_advice(&ogd).contains("a smaller --learning-rate"));
/// let newton = LearnerConfig { algorithm: Algorithm::Newton, ..auto };
/// assert!(divergence_advice(&newton).starts_with("try a larger --alpha0, rows"));
/// ```
pub fn divergence_advice(config: &LearnerConfig) -> String {
    if config.algorithm == Algorithm::RunningMean {
        return "try labels divided by a constant: the running mean reads only the labels, and \
                their squared error is too large for a float"
            .into();
    }
    let steps: Vec<String> = step_flags(config).iter().map(|s| s.shorter()).collect();
    let mut tries: Vec<String> = Some(steps.join(" or "))
        .filter(|s| !s.is_empty())
        .into_iter()
        .collect();
    tries.push("rows scaled to unit norm".into());
    if !config.algorithm.is_auto() {
        tries.push("the default --algo auto".into());
    }
    try_one_of(tries)
}

/// What to try after `warning` (the CLI prints it after the warning and a `; `), for a run of
/// `config`'s learner (`None`: a run without one binary learner's configuration, such as a
/// multiclass run or a cache): `None` when there is nothing to suggest.
/// - [`Warning::Diverged`]: [`divergence_advice`], or nothing without a configuration (a front
///   end with its own step flags, such as `fm`, gives its own).
/// - [`Warning::NoBetterThanConstant`]: another learner, or another value of the flags of
///   [`step_flags`] for a single learner. The default mixture (`auto`, `auto-sparse`) already
///   weighs learners at several steps, so no flag is suggested there: the honest hint is the
///   input (features that cannot predict the labels, or a wrong label or feature column).
/// - [`Warning::LabelsInRuns`]: a shuffle.
/// - [`Warning::UnseenCategories`]: nothing (its message names the likely cause).
/// - [`Warning::MixedColumn`]: nothing (its message says how to make the column numeric).
/// - [`Warning::ClassesDifferByCase`]: nothing (its message says what to do).
/// - Notes (every other kind, listed: a new kind must choose): nothing.
///
/// ```
/// use sketchlearn::linear::{Algorithm, LearnerConfig};
/// use sketchlearn::run::{warning_advice, Warning};
/// let constant = Warning::NoBetterThanConstant { error: 0.4, constant: 0.4 };
/// let auto = LearnerConfig::default();
/// let hint = warning_advice(&constant, Some(&auto)).unwrap();
/// assert!(!hint.contains("--algo") && hint.contains("labels"));
/// let ogd = LearnerConfig { algorithm: Algorithm::Ogd, ..auto };
/// let hint = warning_advice(&constant, Some(&ogd)).unwrap();
/// assert!(hint.contains("the default learner") && !hint.contains("--alpha"));
/// let diverged = Warning::Diverged { mean_loss: 1e300 };
/// assert_eq!(warning_advice(&diverged, None), None);
/// ```
pub fn warning_advice(warning: &Warning, config: Option<&LearnerConfig>) -> Option<String> {
    match warning {
        Warning::Diverged { .. } => config.map(divergence_advice),
        Warning::NoBetterThanConstant { .. } => config.map(constant_advice),
        Warning::LabelsInRuns { .. } => Some(
            "shuffle it: --shuffle-buffer N (N about the length of the runs or more), or train \
             on a shuffled copy (`shuf`, or the .shuf file)"
                .into(),
        ),
        Warning::SketchSizeCapped { .. }
        | Warning::MemoryGrowsWithFeatures { .. }
        | Warning::CacheRebuilt { .. }
        | Warning::UnseenWhileLearning { .. }
        | Warning::UnseenCategories(_)
        | Warning::MixedColumn(_)
        | Warning::ClassesDifferByCase { .. } => None,
    }
}

/// [`warning_advice`] after [`Warning::NoBetterThanConstant`].
fn constant_advice(config: &LearnerConfig) -> String {
    if config.algorithm.is_auto() {
        return "the features may not predict the labels: check the label and feature columns"
            .into();
    }
    let mut tries = vec!["the default learner (no --algo)".to_string()];
    if config.diag {
        tries.push("without --diag".into());
    }
    let flags: Vec<&str> = step_flags(config).iter().map(|s| s.flag()).collect();
    if !flags.is_empty() {
        tries.push(format!("another {}", flags.join(" / ")));
    }
    try_one_of(tries)
}

/// `try a`, `try a, or b`, `try a, b, or c`.
fn try_one_of(mut tries: Vec<String>) -> String {
    let last = tries.pop().unwrap_or_default();
    match tries.is_empty() {
        true => format!("try {last}"),
        false => format!("try {}, or {last}", tries.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(algorithm: Algorithm, curvature: CurvatureKind) -> LearnerConfig {
        LearnerConfig {
            algorithm,
            curvature,
            ..LearnerConfig::default()
        }
    }

    /// Each algorithm's hints name the step flags it reads and no other (Newton reads no
    /// learning rate; OGD and AdaGrad no α; RFD takes α₀ rather than α; the running mean none).
    #[test]
    fn the_advice_names_only_the_flags_the_learner_reads() {
        let constant = Warning::NoBetterThanConstant {
            error: 0.4,
            constant: 0.4,
        };
        let diverged = Warning::Diverged { mean_loss: 1e300 };
        let cases = [
            (Algorithm::Ogd, CurvatureKind::RfdFast, "--learning-rate"),
            (
                Algorithm::AdaGrad,
                CurvatureKind::RfdFast,
                "--learning-rate",
            ),
            (
                Algorithm::AdaGradGrid,
                CurvatureKind::RfdFast,
                "--learning-rate",
            ),
            (Algorithm::Newton, CurvatureKind::RfdFast, "--alpha0"),
            (Algorithm::Newton, CurvatureKind::Rfd, "--alpha0"),
            (Algorithm::Newton, CurvatureKind::Oja, "--alpha"),
            (Algorithm::Newton, CurvatureKind::Rp, "--alpha"),
            (Algorithm::Newton, CurvatureKind::Fd, "--alpha"),
            (Algorithm::Newton, CurvatureKind::Full, "--alpha"),
            (
                Algorithm::AdaFd,
                CurvatureKind::RfdFast,
                "--learning-rate --alpha",
            ),
            (
                Algorithm::Sketchy,
                CurvatureKind::RfdFast,
                "--learning-rate --alpha0",
            ),
            (Algorithm::RunningMean, CurvatureKind::RfdFast, ""),
        ];
        let all = ["--learning-rate", "--alpha", "--alpha0"];
        for (algorithm, curvature, expected) in cases {
            let c = config(algorithm, curvature);
            let expected: Vec<&str> = expected.split_whitespace().collect();
            let constant = warning_advice(&constant, Some(&c)).unwrap();
            let diverged = warning_advice(&diverged, Some(&c)).unwrap();
            for hint in [&constant, &diverged] {
                // A flag is named when followed by a space, '/', ',' or the end.
                let named = |f: &str| {
                    hint.match_indices(f).any(|(i, _)| {
                        matches!(
                            hint[i + f.len()..].chars().next(),
                            None | Some(' ' | ',' | '/')
                        )
                    })
                };
                for flag in all {
                    assert_eq!(named(flag), expected.contains(&flag), "{c:?}: {hint}");
                }
                assert!(hint.starts_with("try ") && !hint.ends_with(';'), "{hint}");
            }
            assert!(
                constant.contains("the default learner (no --algo)"),
                "{constant}"
            );
            // The running mean has no step to shorten: its hint is the labels' scale.
            let mean = algorithm == Algorithm::RunningMean;
            assert_eq!(
                diverged.ends_with("or the default --algo auto"),
                !mean,
                "{diverged}"
            );
        }
    }

    /// Divergence asks for a shorter step: a smaller step size, a larger regulariser.
    #[test]
    fn divergence_asks_for_a_shorter_step_in_each_flags_direction() {
        let ada_fd = config(Algorithm::AdaFd, CurvatureKind::RfdFast);
        assert_eq!(
            divergence_advice(&ada_fd),
            "try a smaller --learning-rate or a larger --alpha, rows scaled to unit norm, or \
             the default --algo auto"
        );
        let auto = LearnerConfig::default();
        assert_eq!(
            divergence_advice(&auto),
            "try a smaller --learning-rate, or rows scaled to unit norm"
        );
        let mean = config(Algorithm::RunningMean, CurvatureKind::RfdFast);
        let hint = divergence_advice(&mean);
        assert!(
            hint.starts_with("try labels divided by a constant"),
            "{hint}"
        );
        assert!(!hint.contains("rows") && !hint.contains("--algo"), "{hint}");
    }
}
