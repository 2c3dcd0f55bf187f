//! Helpers of the everyday-use tests (`evaluation_cli.rs`, `learner_options_cli.rs`): run the
//! binary, find the repository's data, scratch files, and check outcomes.
#![allow(dead_code)] // each test file uses its own subset

use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs `sketchlearn` with `args`.
pub fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sketchlearn"))
        .args(args)
        .output()
        .expect("binary runs")
}

/// A file of the repository's `data/`.
pub fn data(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../data")
        .join(name);
    p.to_string_lossy().into_owned()
}

/// A path in this process's scratch directory (any file there removed first).
pub fn scratch(name: &str) -> String {
    let dir = std::env::temp_dir().join(format!("sketchlearn-everyday-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::remove_file(&p).ok();
    p.to_string_lossy().into_owned()
}

/// A scratch file holding `text`.
pub fn tmp(name: &str, text: &str) -> String {
    let p = scratch(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// The JSON on stdout of a command that succeeded.
pub fn json(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The command failed, saying `text` on stderr.
pub fn fails_with(out: &Output, text: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains(text), "{err}");
}
