//! A whole run, the one entry a command line, a Python binding and a cluster worker call:
//! open a source ([`Input`]: a file, `.gz`, standard input, bytes in memory, any reader) in a
//! detected or given [`Format`](crate::data::Format), settle the learner (a new
//! [`LearnerConfig`](crate::linear::LearnerConfig), checked, its dimension and representation
//! chosen from the input; or a resumed [`LinearModel`](crate::linear::LinearModel)), run
//! progressive validation for N passes with the refused-step and divergence policies
//! ([`learn_or_refuse`], [`divergence_warning`]), report through an [`Observer`], and return the metrics and
//! the fitted model ([`train`] → [`TrainOutcome`]); [`evaluate`] scores a held-out input.
//!
//! ```no_run
//! use sketchlearn::linear::LearnerConfig;
//! use sketchlearn::run::{self, Input, ReadOptions, Silent, Start, TrainOptions};
//!
//! let fitted = run::train(
//!     Input::path("data/heart.libsvm"),
//!     Start::New(LearnerConfig::default()),
//!     &TrainOptions::default(),
//!     &mut Silent,
//! )?;
//! println!("progressive error {:?}", fitted.metrics.error_rate());
//! fitted.model.save("heart.model")?;
//! let test = run::evaluate(
//!     Input::path("data/heart.libsvm"),
//!     &fitted.model,
//!     &ReadOptions::default(),
//!     &mut Silent,
//! )?;
//! println!("test error {:?}", test.metrics.error_rate());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod advice;
mod cache;
mod cache_file;
mod cancelled;
mod convention;
mod csv;
pub(crate) mod error;
mod evaluate;
mod evaluated_pass;
mod file_walk;
mod footprint;
mod halves;
mod holdout;
mod input;
mod label_runs;
mod labels;
mod memory_bound;
mod multiclass;
mod multiclass_report;
mod observer;
mod output_kind;
mod pass;
mod policy;
mod prescan;
mod progress_table;
mod report;
mod settle;
mod shuffle;
mod speculation;
mod spool;
mod train;

pub use advice::{divergence_advice, step_flags, warning_advice, Step};
pub use cache::{write_cache, CacheOutcome};
pub use csv::describe_schema;
pub use error::RunError;
pub use evaluate::{evaluate, EvalOutcome};
pub use file_walk::{walk_file, FileWalk};
pub use footprint::{estimated_bytes, machine_memory, MAX_DIM};
pub use holdout::Evaluation;
pub use input::{Input, ReadOptions};
pub use label_runs::LabelRuns;
pub use multiclass::{
    evaluate_multiclass_input, train_multiclass, train_multiclass_and_test,
    train_multiclass_cancellable, MulticlassOutcome, MulticlassStart,
};
pub use multiclass_report::{MulticlassHeldOut, MulticlassReport};
pub use observer::{Observer, ObserverError, PassReport, RunStart, Silent, Warning};
pub use output_kind::{file_holds, Written, HEAD as OUTPUT_HEAD};
pub use pass::{progressive_pass, PassOutcome};
pub use policy::{
    constant_warning, diverged, divergence_warning, learn_or_refuse, Tolerant,
    CONSTANT_MIN_EXAMPLES,
};
pub use progress_table::{progress_header, progress_row};
pub use report::{HeldOut, TestReport, TrainReport};
pub use shuffle::ShuffleBuffer;
pub use spool::DEFAULT_SPOOL_LIMIT;
pub use train::{
    train, train_and_test, train_cancellable, train_classified, Start, TrainOptions, TrainOutcome,
};
