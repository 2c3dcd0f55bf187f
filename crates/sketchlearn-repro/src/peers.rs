//! The peers: Vowpal Wabbit and River, run as the Python scripts of `scripts/peers/` with the
//! `.venv-peers` interpreter (see `scripts/peers/README.md`); each script prints JSON lines.

use crate::paths::repo_root;
use anyhow::{Context, Result};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

/// Where the peers live: the repository root (holding `scripts/peers/`) and the `.venv-peers`
/// interpreter.
pub struct Peers {
    pub root: PathBuf,
    pub python: PathBuf,
}

/// The `.venv-peers` interpreter, if it exists.
pub fn find_python() -> Option<Peers> {
    let root = repo_root();
    let python = root.join(".venv-peers/bin/python");
    python.exists().then_some(Peers { python, root })
}

/// The interpreter for `scripts/peers/run_vw.py`, checked to import `vowpalwabbit`, or why the
/// VW peers cannot be run.
pub fn find_peers() -> std::result::Result<Peers, String> {
    let root = repo_root();
    let script = root.join("scripts/peers/run_vw.py");
    let python = root.join(".venv-peers/bin/python");
    if !script.exists() {
        return Err(format!("{} not found", script.display()));
    }
    if !python.exists() {
        return Err(format!(
            "{} not found: create it with `python3 -m venv .venv-peers && .venv-peers/bin/pip \
             install vowpalwabbit==9.11.9 river==0.26.1` (see scripts/peers/README.md)",
            python.display()
        ));
    }
    let ok = Command::new(&python)
        .args(["-c", "import vowpalwabbit"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !ok {
        return Err(format!(
            "{} cannot import vowpalwabbit (install vowpalwabbit==9.11.9 into .venv-peers)",
            python.display()
        ));
    }
    Ok(Peers { root, python })
}

impl Peers {
    /// Runs `script ARGS` (a path from the repository root) in the root, stderr passed through:
    /// its exit status and the JSON lines of its stdout.
    fn json_lines(&self, script: &Path, args: &[String]) -> Result<(ExitStatus, Vec<Value>)> {
        let out = Command::new(&self.python)
            .arg(self.root.join(script))
            .args(args)
            .current_dir(&self.root)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .output()
            .with_context(|| format!("running {}", script.display()))?;
        let lines = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        Ok((out.status, lines))
    }

    /// Runs a peer script, returning its JSON lines.
    pub fn run_script(&self, script: &str, args: &[String]) -> Result<Vec<Value>> {
        eprintln!("  {script} {}", args.join(" "));
        Ok(self.json_lines(Path::new(script), args)?.1)
    }

    /// Runs `run_vw.py ARGS` and returns its JSON lines (a warning when it fails part-way).
    pub fn run_vw(&self, args: &[String]) -> Result<Vec<Value>> {
        eprintln!("  run_vw.py {}", args.join(" "));
        let (status, lines) = self.json_lines(Path::new("scripts/peers/run_vw.py"), args)?;
        if !status.success() {
            eprintln!(
                "  warning: run_vw.py exited with {status} after {} JSON lines",
                lines.len()
            );
        }
        Ok(lines)
    }
}

/// River's FMRegressor on `file` through `scripts/peers/river_fm.py` (JSON lines), or why it
/// could not run.
pub fn run_river(file: &Path) -> std::result::Result<Vec<Value>, String> {
    let root = repo_root();
    let python = root.join(".venv-peers/bin/python");
    let script = root.join("scripts/peers/river_fm.py");
    if !python.exists() || !script.exists() {
        return Err(format!(
            "{} or {} not found (python3 -m venv .venv-peers && .venv-peers/bin/pip install \
             river==0.26.1)",
            python.display(),
            script.display()
        ));
    }
    eprintln!("  river_fm.py {}", file.display());
    let peers = Peers { root, python };
    let (status, lines) = peers
        .json_lines(
            Path::new("scripts/peers/river_fm.py"),
            &[file.display().to_string()],
        )
        .map_err(|e| format!("starting {}: {e:#}", peers.python.display()))?;
    if !status.success() {
        return Err(format!("river_fm.py exited with {status}"));
    }
    Ok(lines)
}
