//! Helpers of the label and multiclass CLI tests (`labels_cli.rs`, `multiclass_cli.rs`): run
//! the binary, scratch files in a per-process directory, JSON and failure checks, shared data.
#![allow(dead_code)] // each test file uses its part

use std::path::PathBuf;
use std::process::{Command, Output};

pub fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sketchlearn"))
        .args(args)
        .output()
        .expect("binary runs")
}

pub fn dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("sketchlearn-labels-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

pub fn path(name: &str) -> String {
    dir().join(name).to_string_lossy().into_owned()
}

pub fn write(name: &str, text: &str) -> String {
    let p = path(name);
    std::fs::write(&p, text).unwrap();
    p
}

pub fn json(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

/// The stderr of a command that must fail with status 1.
pub fn failure(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(1), "should fail with status 1");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A file in the shared data directory, or `None` with a note on stderr (shared data is not in
/// the repository, so its absence never fails a test).
pub fn shared(name: &str) -> Option<String> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data")
        .join(name);
    if !p.exists() {
        eprintln!(
            "SKIPPED: {} is not here (shared data, not in the repository)",
            p.display()
        );
        return None;
    }
    Some(p.to_string_lossy().into_owned())
}
