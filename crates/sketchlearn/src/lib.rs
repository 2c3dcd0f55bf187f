//! # sketchlearn
//!
//! Second-order online learning with streaming matrix sketches: Frequent Directions (FD),
//! Robust/Regularized FD (RFD), Generalized FD (GFD), Gaussian random projection and Oja's sketch.
//!
//! The crate is pure Rust; [`linalg`] is the only module that touches `faer`.

#![warn(missing_docs)]

pub mod data;
pub mod linalg;

pub use data::{Example, Row};
pub mod sketch;
