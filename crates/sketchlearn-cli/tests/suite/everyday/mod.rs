//! Helpers of the everyday-use tests (`evaluation_cli.rs`, `learner_options_cli.rs`): run the
//! binary, find the repository's data, scratch files, and check outcomes.
#![allow(dead_code)] // each test file uses its own subset

pub use crate::common::{json, run};
use crate::common::{repo_file, scratch_dir};

/// A file of the repository's `data/`.
pub fn data(name: &str) -> String {
    repo_file(&format!("data/{name}"))
}

/// A path in this process's scratch directory (any file there removed first).
pub fn scratch(name: &str) -> String {
    let p = scratch_dir("everyday").join(name);
    std::fs::remove_file(&p).ok();
    p.to_string_lossy().into_owned()
}

/// A scratch file holding `text`.
pub fn tmp(name: &str, text: &str) -> String {
    let p = scratch(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// The command failed, saying `text` on stderr.
pub fn fails_with(out: &std::process::Output, text: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains(text), "{err}");
}
