//! # sketchlearn
//!
//! Second-order online learning with streaming matrix sketches: Frequent Directions (FD),
//! Robust/Regularized FD (RFD), Generalized FD (GFD), Gaussian random projection and Oja's sketch.
//!
//! The crate is pure Rust; [`linalg`] is the only module that touches `faer`.

#![warn(missing_docs)]
// Numeric kernels index several arrays in lockstep; iterator chains would hide the maths.
#![allow(clippy::needless_range_loop)]

pub mod data;
pub mod drp;
pub mod eval;
pub mod fm;
pub mod labels;
pub mod linalg;
pub mod linear;
pub mod loss;
pub mod model;
pub mod run;

pub mod sketch;

pub use data::{
    open_input, CsvOptions, CsvReader, Example, LibsvmOptions, LibsvmReader, ParseError,
    ParseErrorKind, Row,
};
pub use sketch::{Sketch, SketchConfig, SketchError, SketchMethod};
