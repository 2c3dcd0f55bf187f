//! The types a user needs for the common tasks, in one `use`:
//!
//! ```
//! use sketchlearn::prelude::*;
//! ```
//!
//! | task | items |
//! |---|---|
//! | run a whole job (train, evaluate) on a file, bytes or a reader | [`run::train`](crate::run::train), [`run::evaluate`](crate::run::evaluate), [`Input`], [`TrainOptions`], [`ReadOptions`], [`Start`], [`Observer`], [`Silent`], [`RunError`] |
//! | configure and build a linear learner | [`LearnerConfig`], [`Algorithm`], [`CurvatureKind`], [`Representation`], [`ConfigError`], [`Loss`] |
//! | use a trained model (learn, predict, probability, save/load) | [`Learner`], [`LinearModel`], [`FmModel`] |
//! | drive a learner by hand | [`OnlineLearner`], [`AnyLearner`], [`LearnError`] |
//! | factorization machines | [`FmConfig`], [`FmAlgorithm`], [`AnyFm`] |
//! | multiclass | [`MulticlassConfig`], [`MulticlassLearner`], [`MulticlassModel`], [`Reduction`], [`Classes`], [`ClassLabel`], [`MulticlassMetrics`], [`progressive_multiclass`] |
//! | labels as the user has them | [`ClassScan`], [`scan_classes`], [`ClassSpec`], [`Task`], [`LabelMap`], [`Labeled`] |
//! | read data | [`Row`], [`Example`], [`Format`], [`ExampleReader`], [`LibsvmReader`], [`LibsvmOptions`], [`CsvReader`], [`CsvOptions`], [`VwReader`], [`VwOptions`], [`open_input`], [`ParseError`] |
//! | score | [`Metrics`], [`progressive`], [`evaluate`] |
//! | sketch a matrix | [`Sketch`], [`SketchConfig`], [`SketchMethod`], [`FrequentDirections`], [`FdVariant`], [`RowMatrix`], [`relative_spectral_error`], [`LanczosOptions`] |
//! | model files | [`ModelError`] |
//!
//! # Example
//!
//! Progressive validation of the default learner (the `auto` mixture) on a LIBSVM text, then the
//! model through the [`Learner`] trait:
//!
//! ```
//! use sketchlearn::prelude::*;
//! use std::io::Cursor;
//!
//! let text = "1 1:1 2:0.5\n-1 1:-1 3:1\n1 1:0.8 2:1\n-1 1:-0.9 3:0.7\n".repeat(25);
//! let reader = LibsvmReader::new(Cursor::new(text), "memory.libsvm", LibsvmOptions::default());
//! let examples: Vec<Example> = reader.collect::<Result<_, _>>().unwrap();
//!
//! let config = LearnerConfig { loss: Loss::Logistic, ..LearnerConfig::default() };
//! let mut model = LinearModel::new(config.clone(), config.build(3).unwrap());
//! let mut metrics = Metrics::new();
//! let n = progressive(&mut model.learner, examples.iter().cloned().map(Ok::<_, ParseError>),
//!                     config.loss, &mut metrics, |_| {}).unwrap();
//! model.examples_seen += n;
//! assert_eq!(n, 100);
//! assert!(metrics.error_rate().unwrap() < 0.1);
//!
//! let p = model.predict_proba(Row::Sparse { indices: &[0], values: &[1.0] }).unwrap();
//! assert!(p > 0.5);
//! ```

pub use crate::data::{
    open_input, scan_classes, ClassScan, ClassSpec, CsvOptions, CsvReader, Example, ExampleReader,
    Format, LabelMap, Labeled, LibsvmOptions, LibsvmReader, ParseError, Row, Task, VwOptions,
    VwReader,
};
pub use crate::eval::multiclass::{progressive_multiclass, MulticlassMetrics};
pub use crate::eval::{evaluate, progressive, Metrics};
pub use crate::fm::{AnyFm, FmAlgorithm, FmConfig, FmModel};
pub use crate::labels::{ClassLabel, Classes};
pub use crate::learner::Learner;
pub use crate::linear::multiclass::{
    MulticlassConfig, MulticlassLearner, MulticlassModel, Reduction,
};
pub use crate::linear::{
    Algorithm, AnyLearner, ConfigError, CurvatureKind, LearnError, LearnerConfig, LinearModel,
    OnlineLearner, Representation,
};
pub use crate::loss::Loss;
pub use crate::model::ModelError;
pub use crate::run::{Input, Observer, ReadOptions, RunError, Silent, Start, TrainOptions};
pub use crate::sketch::{
    relative_spectral_error, FdVariant, FrequentDirections, LanczosOptions, RowMatrix, Sketch,
    SketchConfig, SketchMethod,
};
