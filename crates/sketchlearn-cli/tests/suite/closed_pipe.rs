//! A reader that goes away (`sketchlearn … | head`) ends the command quietly, as Unix tools end:
//! killed by SIGPIPE on the first write into the closed pipe — never a panic (exit 101) with a
//! backtrace on stderr (issue 26, item 2).

use std::process::{Command, Stdio};

fn repo_file(name: &str) -> String {
    format!("{}/../../data/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// Runs `args` with stdout a pipe whose read end is closed before the command starts, so that
/// its first write meets a closed pipe whatever the timing.
#[cfg(unix)]
fn with_closed_stdout(args: &[&str]) -> (std::process::ExitStatus, String) {
    use std::os::unix::io::FromRawFd;
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `pipe` fills two new descriptors; the read end is closed at once and the write
    // end is owned by the `File` handed to the child.
    let write_end = unsafe {
        assert_eq!(libc::pipe(fds.as_mut_ptr()), 0, "pipe");
        libc::close(fds[0]);
        std::fs::File::from_raw_fd(fds[1])
    };
    let out = Command::new(env!("CARGO_BIN_EXE_sketchlearn"))
        .args(args)
        .stdout(Stdio::from(write_end))
        .stderr(Stdio::piped())
        .output()
        .expect("binary runs");
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[cfg(unix)]
#[test]
fn a_closed_stdout_ends_the_command_by_sigpipe_not_a_panic() {
    use std::os::unix::process::ExitStatusExt;
    let dir = std::env::temp_dir().join(format!("sketchlearn-pipe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let model = dir.join("heart.model").to_string_lossy().into_owned();
    let heart = repo_file("heart.libsvm");
    let trained = Command::new(env!("CARGO_BIN_EXE_sketchlearn"))
        .args(["train", "--quiet", "-f", &model, &heart])
        .output()
        .unwrap();
    assert!(trained.status.success());
    for args in [
        vec!["train", "--quiet", "--json", heart.as_str()],
        vec!["test", "-i", model.as_str(), heart.as_str()],
        vec!["predict", "-i", model.as_str(), heart.as_str()],
        vec!["inspect", model.as_str()],
    ] {
        let (status, stderr) = with_closed_stdout(&args);
        assert_ne!(status.code(), Some(101), "{args:?} panicked: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(status.signal(), Some(13), "{args:?}: {status:?} {stderr}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
