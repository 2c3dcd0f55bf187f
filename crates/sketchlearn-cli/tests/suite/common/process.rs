//! Running the binary and reading what it printed, and scratch files per test file.
#![allow(dead_code)] // each test file uses a part

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// The `sketchlearn` binary under test.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sketchlearn"))
}

/// Runs the binary with `args` and waits for it.
pub fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("binary runs")
}

/// Runs the binary with `args` and `input` on its standard input; waits for it. (A failed write
/// is ignored: the binary may exit before it reads all of `input`.)
pub fn run_with_stdin(args: &[&str], input: &[u8]) -> Output {
    use std::io::Write;
    let mut child = bin()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary runs");
    // Written on a thread, so that a child filling its stdout pipe cannot deadlock the test.
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input).ok());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
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

/// The standard output of a command that succeeded, as text.
pub fn stdout_text(out: &Output) -> String {
    String::from_utf8(ok(out).stdout.clone()).expect("UTF-8 on stdout")
}

/// The JSON of `COMMAND --json --quiet ARGS…`, which must succeed.
pub fn quiet_json(command: &str, args: &[&str]) -> serde_json::Value {
    let mut all = vec![command, "--json", "--quiet"];
    all.extend_from_slice(args);
    json(&run(&all))
}

/// The JSON of `test --json -i MODEL DATA`, which must succeed.
pub fn test_json(model: &str, data: &str) -> serde_json::Value {
    json(&run(&["test", "--json", "-i", model, data]))
}

/// Trains `data` into the model file `model` (`train --quiet -f MODEL FLAGS… DATA`), asserting
/// that it succeeded.
pub fn train_quiet(model: &str, flags: &[&str], data: &str) {
    let mut args = vec!["train", "--quiet", "-f", model];
    args.extend_from_slice(flags);
    args.push(data);
    ok(&run(&args));
}

/// Asserts that `text` (a command's output) mentions every one of `needles`.
pub fn assert_mentions(text: &str, needles: &[&str]) {
    for n in needles {
        assert!(text.contains(n), "{n:?} not in: {text}");
    }
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

/// A file of `../shared/data` (beside the repository): `None` when it is absent on this machine
/// (the test returns early, saying so on stderr); under `CI=true`, where `../shared` must be
/// there, a missing file fails the test instead of skipping it.
pub fn shared(name: &str) -> Option<String> {
    let p = repo_file(&format!("../shared/data/{name}"));
    if std::path::Path::new(&p).exists() {
        return Some(p);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{p} is missing (CI=true: the test may not skip)"
    );
    eprintln!("SKIPPED: {p} is not here (shared data, not in the repository)");
    None
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
