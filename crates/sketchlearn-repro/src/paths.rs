//! Where things are: the repository root, the cache of generated files, and the `sketchlearn`
//! command-line binary the experiments run as a child process.

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The `sketchlearn` binary of this build, for the experiments that run the command line as a
/// child process (end-to-end timings, peak memory, `fm --json` reports). It sits next to this
/// binary (`target/release/sketchlearn`). Under `cargo run` it is built first, with this
/// binary's profile, so that a report never measures a stale command line; run directly, this
/// binary uses the one that is there.
pub fn cli_exe() -> Result<PathBuf> {
    static BUILT: OnceLock<Result<(), String>> = OnceLock::new();
    let me = std::env::current_exe().context("locating the sketchlearn-repro binary")?;
    let dir = me.parent().context("the binary's folder")?;
    let exe = dir.join(format!("sketchlearn{}", std::env::consts::EXE_SUFFIX));
    if let Some(cargo) = std::env::var_os("CARGO") {
        let built = BUILT.get_or_init(|| {
            let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.toml");
            let mut cmd = Command::new(cargo);
            cmd.args([
                "build",
                "--quiet",
                "-p",
                "sketchlearn-cli",
                "--manifest-path",
            ])
            .arg(manifest);
            match dir.file_name().and_then(|p| p.to_str()) {
                Some("debug") => {}
                Some("release") => {
                    cmd.arg("--release");
                }
                Some(profile) => {
                    cmd.args(["--profile", profile]);
                }
                None => {}
            }
            eprintln!("building the sketchlearn command line (cargo build -p sketchlearn-cli)");
            match cmd.status() {
                Ok(s) if s.success() => Ok(()),
                Ok(s) => Err(format!("cargo build -p sketchlearn-cli exited with {s}")),
                Err(e) => Err(format!("running cargo: {e}")),
            }
        });
        if let Err(e) = built {
            bail!("{e}");
        }
    }
    if !exe.exists() {
        bail!(
            "{} not found: build it with `cargo build --release -p sketchlearn-cli` (or run this \
             through `cargo run --release -p sketchlearn-repro`)",
            exe.display()
        );
    }
    Ok(exe)
}

/// The repository root: the current folder or the nearest one above it holding `Cargo.lock` and
/// `crates/`, else the workspace this binary was built from.
pub fn repo_root() -> PathBuf {
    let mut p = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    loop {
        if p.join("Cargo.lock").exists() && p.join("crates").exists() {
            return p;
        }
        if !p.pop() {
            break;
        }
    }
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    built.canonicalize().unwrap_or(built)
}

/// Cache folder for generated files (`target/peers` under the repository root), created.
pub fn cache_dir() -> Result<PathBuf> {
    let d = repo_root().join("target/peers");
    std::fs::create_dir_all(&d).with_context(|| format!("creating {}", d.display()))?;
    Ok(d)
}
