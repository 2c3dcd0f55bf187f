//! Helpers of the label and multiclass CLI tests (`labels_cli.rs`, `multiclass_cli.rs`): run
//! the binary, scratch files in a per-process directory, JSON and failure checks, shared data.
#![allow(dead_code)] // each test file uses its part

pub use crate::common::{json, run};
use crate::common::{repo_file, scratch_dir};
use std::path::{Path, PathBuf};
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

/// A file in the shared data directory, or `None` with a note on stderr (shared data is not in
/// the repository, so its absence never fails a test).
pub fn shared(name: &str) -> Option<String> {
    let p = repo_file(&format!("../shared/data/{name}"));
    if !Path::new(&p).exists() {
        eprintln!("SKIPPED: {p} is not here (shared data, not in the repository)");
        return None;
    }
    Some(p)
}
