//! Helpers of the label and multiclass CLI tests (`labels_cli.rs`, `multiclass_cli.rs`): run
//! the binary, scratch files in a per-process directory, JSON and failure checks, shared data.
#![allow(dead_code)] // each test file uses its part

use crate::common::scratch_dir;
pub use crate::common::{json, run, shared};
use std::path::PathBuf;
use std::process::Output;

pub fn dir() -> PathBuf {
    scratch_dir("labels")
}

pub fn path(name: &str) -> String {
    dir().join(name).to_string_lossy().into_owned()
}

pub fn write(name: &str, text: &str) -> String {
    let p = path(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// The stderr of a command that must fail with status 1.
pub fn failure(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(1), "should fail with status 1");
    String::from_utf8_lossy(&out.stderr).into_owned()
}
