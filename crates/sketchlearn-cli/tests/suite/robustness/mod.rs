//! Issue 26: every hostile or careless use we found, through the command line — each ends in the
//! right result or a clear error (exit 1 or 2), never a panic (101), an abort, a hang, or a lost
//! or truncated file. One file per concern:
//!
//! - `sources`: a file, a pipe on standard input, a FIFO and a process substitution train alike
//!   (same flags, same model bytes), passes included;
//! - `io_faults`: `/dev/full`, a file-size limit during save, a kill during save, stale
//!   temporary files;
//! - `limits`: huge feature indices, `--dim`, `-b`, `--size`;
//! - `huge_values`: a row too large for the sketch stops the run at its line, saying what to do;
//! - `models`: hostile model files (valid checksum, bad contents);
//! - `predictions`: an existing `-p` file survives `predict`, `fm` and `fm predict` runs that fail
//!   after scoring some rows.

mod huge_values;
mod io_faults;
mod limits;
mod models;
mod predictions;
mod sources;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_sketchlearn")
}

pub fn repo_file(name: &str) -> String {
    format!("{}/../../data/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// A fresh scratch directory for one test (removed by [`Scratch`]'s drop).
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(test: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("sketchlearn-robust-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
    pub fn path(&self, name: &str) -> String {
        self.0.join(name).to_str().unwrap().to_owned()
    }
    /// The names in the directory, sorted.
    pub fn names(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&self.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `script` with `bash -c` (pipes, process substitution).
pub fn bash(script: &str) -> Output {
    Command::new("bash")
        .arg("-c")
        .arg(script)
        .output()
        .expect("bash runs")
}

/// Runs the binary with `args` (stdin empty unless `stdin` is given).
pub fn run(args: &[&str], stdin: Option<&Path>) -> Output {
    let mut cmd = Command::new(bin());
    cmd.args(args);
    cmd.stdin(match stdin {
        Some(p) => Stdio::from(std::fs::File::open(p).unwrap()),
        None => Stdio::null(),
    });
    cmd.output().expect("binary runs")
}

/// Asserts a clean failure: exit status 1 and an `error:` line containing `needle`.
pub fn assert_clear_error(out: &Output, needle: &str) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(1),
        "status {:?}, stderr: {err}",
        out.status
    );
    assert!(err.starts_with("error: "), "{err}");
    assert!(err.contains(needle), "expected {needle:?} in: {err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}
