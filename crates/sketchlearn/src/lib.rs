//! # sketchlearn
//!
//! Second-order online learning with streaming matrix sketches: Frequent Directions (FD),
//! Robust/Regularized FD (RFD), Generalized FD (GFD), Gaussian random projection and Oja's sketch.
//!
//! Start with the [`prelude`] (one `use` for the common tasks) and the [`Learner`] trait (learn,
//! predict, probability, save/load of a trained model). Runnable programs are in the crate's
//! `examples/` directory (`cargo run --release -p sketchlearn --example train_evaluate`).
//!
//! ```
//! use sketchlearn::prelude::*;
//!
//! let config = LearnerConfig::default(); // the `auto` mixture, logistic loss
//! let mut model = LinearModel::new(config.clone(), config.build(2).unwrap());
//! let before = model.learn(Row::Dense(&[1.0, -0.5]), 1.0).unwrap(); // prediction before the update
//! assert_eq!(before, 0.0);
//! assert!(model.predict(Row::Dense(&[1.0, -0.5])) > 0.0);
//! ```
//!
//! The crate is pure Rust; one internal module is the only one that touches `faer`, and
//! [`spectral`] is the public part of the dense linear algebra.

#![warn(missing_docs)]
// Numeric kernels index several arrays in lockstep; iterator chains would hide the maths.
#![allow(clippy::needless_range_loop)]

pub mod cancel;
pub mod data;
mod dispatch;
pub mod drp;
pub mod eval;
pub mod fm;
pub(crate) mod huge_pages;
pub mod labels;
pub mod learner;
pub(crate) mod linalg;
pub mod linear;
pub mod loss;
pub mod merge;
pub mod model;
pub mod prelude;
pub mod run;
pub mod sketch;
pub mod small_sym_eigen;
pub(crate) mod sorted_map;
pub mod spectral;
pub mod synthetic;

pub use learner::Learner;

pub use data::{
    open_input, CsvOptions, CsvReader, Example, LibsvmOptions, LibsvmReader, ParseError,
    ParseErrorKind, Row,
};
pub use sketch::{Sketch, SketchConfig, SketchError, SketchMethod};
