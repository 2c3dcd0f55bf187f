//! Running the binary and reading what it printed, and scratch files per test file.
#![allow(dead_code)] // each test file uses a part

use std::path::PathBuf;
use std::process::{Command, Output};

/// The `sketchlearn` binary under test.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sketchlearn"))
}

/// Runs the binary with `args` and waits for it.
pub fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("binary runs")
}

/// `out`, after asserting that the command succeeded (its stderr in the message otherwise).
pub fn ok(out: &Output) -> &Output {
    assert!(
        out.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The JSON a successful command printed on stdout.
pub fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&ok(out).stdout).expect("valid JSON on stdout")
}

/// The standard error of a command that must fail (asserts that it did).
pub fn failure(out: &Output) -> String {
    assert!(!out.status.success(), "succeeded but should have failed");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A path under the repository's root, as a string.
pub fn repo_file(rel: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel);
    p.to_string_lossy().into_owned()
}

/// The scratch folder `sketchlearn-<tag>-<pid>` in the system's temporary folder (created).
pub fn scratch_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sketchlearn-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes `bytes` to `name` in the scratch folder of `tag`; its path.
pub fn scratch_file(tag: &str, name: &str, bytes: &[u8]) -> PathBuf {
    let p = scratch_dir(tag).join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// A scratch folder per test (tests run in parallel), removed when dropped.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(tag: &str) -> Self {
        Scratch(scratch_dir(tag))
    }

    pub fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.0).ok();
    }
}
