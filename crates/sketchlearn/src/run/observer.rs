//! How a run reports while it runs: the [`Observer`] a front end implements (a progress table,
//! a predictions file, a Python callback), and the [`Warning`]s the library raises.

use crate::data::{MixedColumn, Schema, UnseenCategories};
use crate::eval::{Metrics, ProgressRow};
use crate::labels::Classes;
use crate::linear::{LearnerConfig, RepresentationChoice};
use std::fmt;

/// What is known when learning starts (after the configuration was checked, the dimension
/// determined and the representation chosen).
#[derive(Clone, Copy, Debug)]
pub struct RunStart<'a> {
    /// The configuration of the learner (the representation as resolved).
    pub config: &'a LearnerConfig,
    /// The learner's dimension (without the intercept).
    pub dim: usize,
    /// How the representation was settled (its `Display` is the note reports print).
    pub representation: RepresentationChoice,
    /// A classifier's classes in the user's convention (negative, positive), as far as known
    /// when the run starts (a stream read once: `−1/+1` until a `0` shows the `0/1`
    /// convention); `None` for regression.
    pub classes: Option<&'a Classes>,
    /// The CSV schema the input is read with (a new model's, as scanned), if the input is CSV.
    pub schema: Option<&'a Schema>,
}

/// Something a front end should tell its user; the run goes on.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Warning {
    /// The learning pass diverged ([`diverged`](super::diverged)): its progressive loss is
    /// not finite or far above that of a constant prediction. A front end adds what to change:
    /// [`divergence_advice`](super::divergence_advice) (through
    /// [`warning_advice`](super::warning_advice)) names the flags of the run's learner.
    Diverged {
        /// The progressive mean loss.
        mean_loss: f64,
    },
    /// The sketch size was larger than the dimension, and was capped at it (a sketch of `d`
    /// rows already holds all of a `d`-dimensional curvature).
    SketchSizeCapped {
        /// The configured size.
        size: usize,
        /// The dimension.
        dim: usize,
        /// The size used: `dim`, or the default size where a mixture's is larger.
        cap: usize,
    },
    /// The learner's memory grows with the distinct features the input uses, and all `d` of
    /// them would need more than the machine has (`run/footprint.rs`): the run goes on, and
    /// fails for lack of memory only if the input uses that many.
    MemoryGrowsWithFeatures {
        /// Bytes per feature used.
        bytes_per_feature: f64,
        /// Bytes if every feature is used.
        all_features: f64,
        /// The machine's memory, bytes.
        machine: u64,
    },
    /// A classifier's progressive error is not better than always predicting the more frequent
    /// class by one standard error: it has not learned ([`constant_warning`](super::constant_warning)).
    /// [`warning_advice`](super::warning_advice) says what to change.
    NoBetterThanConstant {
        /// The progressive error rate.
        error: f64,
        /// The error rate of always predicting the more frequent class.
        constant: f64,
    },
    /// The labels come in long runs ([`LabelRuns`](super::LabelRuns)): the input looks sorted
    /// by label. [`warning_advice`](super::warning_advice) gives the fix (the shuffle-buffer option, or a shuffled copy).
    LabelsInRuns {
        /// Label changes between consecutive examples of the first pass.
        changes: u64,
        /// The changes a random order would have on average.
        expected: f64,
    },
    /// The input's binary cache ([`Input::cache`](super::Input::cache)) did not fit the run
    /// and is written anew.
    CacheRebuilt {
        /// The cache's path.
        path: String,
        /// Why (the input changed, other read options, damage, a stream).
        reason: String,
    },
    /// A resumed ratings model (`fm -i`) learned from examples whose user or item it never saw:
    /// its encoder is kept, so such an example is learned without that id's one-hot feature
    /// (as an unseen id of the test part is predicted, which the report counts).
    UnseenWhileLearning {
        /// Learning examples whose user the model never saw.
        users: u64,
        /// Learning examples whose item the model never saw.
        items: u64,
        /// The learning examples.
        examples: u64,
    },
    /// A model trained on CSV read rows whose value in a one-hot column it never saw: such a
    /// value counts as missing ([`UnseenCategories`], which names the likely cause when the
    /// rows look like LIBSVM or VW text).
    UnseenCategories(UnseenCategories),
    /// A new model's CSV input has a column of numbers with other values among them, read as
    /// strings ([`MixedColumn`]: the scan names the column, its counts and the first other
    /// value; a column of numbers with only strays is an error instead).
    MixedColumn(MixedColumn),
    /// A new classifier's classes, found in its input, include two names that differ only by
    /// case (`Yes` and `yes`): they are learned as two classes, since labels are compared
    /// exactly ([`crate::labels::differ_only_by_case`]). The first such pair, each with the
    /// line where it first appears.
    ClassesDifferByCase {
        /// The spelling seen first, and its first line.
        first: (String, u64),
        /// The other spelling, and its first line.
        second: (String, u64),
    },
}

impl Warning {
    /// `"warning"` when the run's numbers are suspect (a divergence, no better than the
    /// constant, labels in runs), else `"note"`: the CLI's prefix.
    pub fn kind(&self) -> &'static str {
        match self {
            Warning::Diverged { .. }
            | Warning::NoBetterThanConstant { .. }
            | Warning::LabelsInRuns { .. }
            | Warning::UnseenCategories(_)
            | Warning::MixedColumn(_)
            | Warning::ClassesDifferByCase { .. } => "warning",
            Warning::SketchSizeCapped { .. }
            | Warning::MemoryGrowsWithFeatures { .. }
            | Warning::CacheRebuilt { .. }
            | Warning::UnseenWhileLearning { .. } => "note",
        }
    }
}

const GIB: f64 = (1u64 << 30) as f64;

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::Diverged { mean_loss } => write!(
                f,
                "the learning pass diverged (progressive loss {mean_loss:.3e}): the steps are \
                 too large for rows of this scale"
            ),
            Warning::SketchSizeCapped { size, dim, cap } => write!(
                f,
                "the sketch size {size} is larger than the dimension d = {dim}: capped at {cap}"
            ),
            Warning::MemoryGrowsWithFeatures {
                bytes_per_feature,
                all_features,
                machine,
            } => write!(
                f,
                "the learner's memory grows by {bytes_per_feature:.0} bytes with each distinct \
                 feature the input uses: {:.1} GiB if all are used, more than this machine's \
                 {:.1} GiB (fewer -b bits or a smaller --dim bound it)",
                all_features / GIB,
                *machine as f64 / GIB
            ),
            Warning::NoBetterThanConstant { error, constant } => write!(
                f,
                "the progressive error {error:.4} is not better by one standard error than always \
                 predicting the more frequent class ({constant:.4}): the learner has not learned"
            ),
            Warning::LabelsInRuns { changes, expected } => write!(
                f,
                "the labels come in long runs ({changes} label changes where a random order \
                 has about {expected:.0}): the input looks sorted by label, so the progressive \
                 numbers do not estimate the error on new data"
            ),
            Warning::CacheRebuilt { path, reason } => {
                write!(f, "the cache {path} is written anew: {reason}")
            }
            Warning::UnseenWhileLearning {
                users,
                items,
                examples,
            } => write!(
                f,
                "of the {examples} learning examples, {users} have a user and {items} an item \
                 the resumed model never saw: they are learned without that id's feature (the \
                 model's id maps are kept; --unseen-error refuses them)"
            ),
            Warning::UnseenCategories(unseen) => unseen.fmt(f),
            Warning::MixedColumn(mixed) => mixed.fmt(f),
            Warning::ClassesDifferByCase { first, second } => write!(
                f,
                "the labels {} (first at line {}) and {} (first at line {}) differ only by \
                 case: they are learned as two classes, since labels are compared exactly (if \
                 they name one class, make their case uniform before training)",
                first.0, first.1, second.0, second.1
            ),
        }
    }
}

/// An observer's refusal to start a run (e.g. its output file cannot be created).
pub type ObserverError = Box<dyn std::error::Error + Send + Sync>;

/// Receives a run's events. Every method has an empty default: implement what you show.
pub trait Observer {
    /// The run is about to read its input, before its start is known: an error stops the run
    /// before any example is learned ([`RunError::Observer`]), as [`started`](Self::started)'s
    /// does. A run that learns from a guess of its input (a new learner on a dense LIBSVM
    /// file, `run/speculation.rs`) calls [`started`](Self::started) only once its first pass
    /// showed the guess right: an observer that may refuse for a reason of its own (an output
    /// it cannot create) refuses here, so that no pass is learned in vain. Called at most once
    /// per run, and only on such a run. It comes before any example is read, so with both an
    /// observer that refuses here and a bad input line the guessed run reports the observer's
    /// error where a walked run (which reads the whole input before `started`) reports the
    /// line's.
    ///
    /// [`RunError::Observer`]: super::RunError::Observer
    fn ready(&mut self) -> Result<(), ObserverError> {
        Ok(())
    }
    /// Learning (or evaluation) starts: the configuration was checked and the input opened.
    /// An error stops the run before any example is read ([`RunError::Observer`]).
    ///
    /// [`RunError::Observer`]: super::RunError::Observer
    fn started(&mut self, _start: &RunStart<'_>) -> Result<(), ObserverError> {
        Ok(())
    }
    /// A progress row fell due (cumulative example counts 1, 2, 4, 8, …).
    fn progress(&mut self, _row: &ProgressRow) {}
    /// The prediction (raw score) scored for the next example, in input order: before its
    /// update when learning (progressive validation), without update when evaluating.
    fn prediction(&mut self, _score: f64) {}
    /// The classes of a binary run became known after it started: a stream read once showed
    /// its convention (`0/1` or `−1/+1`) at its first negative label. The predictions from the
    /// next one on are in these classes.
    fn classes(&mut self, _classes: &Classes) {}
    /// A warning.
    fn warning(&mut self, _warning: &Warning) {}
    /// A pass ended (with `--holdout` or a test input: their metrics for this pass).
    fn pass_done(&mut self, _report: &PassReport<'_>) {}
}

/// What is known at the end of a training pass: of a binary or regression run ([`Metrics`]),
/// or of a multiclass one ([`MulticlassPassReport`](crate::eval::multiclass::MulticlassPassReport)).
#[derive(Clone, Copy, Debug)]
pub struct PassReport<'a, M = Metrics> {
    /// The pass (1-based).
    pub pass: u32,
    /// Progressive metrics of the run so far (all passes).
    pub progressive: &'a M,
    /// The held-out examples of this pass (`--holdout`).
    pub holdout: Option<&'a M>,
    /// The test input, scored with the weights at the end of this pass.
    pub test: Option<&'a M>,
}

/// An observer that ignores everything.
#[derive(Clone, Copy, Debug, Default)]
pub struct Silent;

impl Observer for Silent {}
