//! End-to-end tests of the `sketchlearn` binary, including the README's main command.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sketchlearn"))
}

fn repo_file(rel: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel);
    p.to_string_lossy().into_owned()
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("binary runs")
}

fn json(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON on stdout")
}

fn tmp(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sketchlearn-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn readme_main_command_reports_error_and_speed() {
    let heart = repo_file("data/heart.libsvm");
    let out = run(&["sketch", "--method", "rfd-fast", "--size", "5", &heart]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("relative_spectral_error"), "{text}");
    assert!(text.contains("rows                     270"), "{text}");
}

#[test]
fn json_has_the_documented_keys_for_every_method() {
    let heart = repo_file("data/heart.libsvm");
    for method in [
        "fd", "fd-fast", "rfd", "rfd-fast", "gfd", "gfd-fast", "rp", "oja",
    ] {
        let v = json(&run(&[
            "sketch", "--method", method, "--size", "4", "--json", &heart,
        ]));
        for key in [
            "method",
            "size",
            "rows",
            "dim",
            "seconds",
            "relative_spectral_error",
        ] {
            assert!(v.get(key).is_some(), "{method}: missing {key} in {v}");
        }
        assert_eq!(v["rows"], 270);
        assert_eq!(v["dim"], 13);
        let err = v["relative_spectral_error"].as_f64().unwrap();
        assert!(err.is_finite() && err >= 0.0, "{method}: {err}");
        if method.starts_with("fd") || method.starts_with("rfd") {
            assert!(err < 1.0, "{method}: FD-family error {err} should be < 1");
        }
    }
}

#[test]
fn rfd_halves_fd_error_on_real_data() {
    let heart = repo_file("data/australian.libsvm");
    let err = |m: &str| {
        json(&run(&[
            "sketch", "--method", m, "--size", "5", "--json", &heart,
        ]))["relative_spectral_error"]
            .as_f64()
            .unwrap()
    };
    let (fd, rfd) = (err("fd-fast"), err("rfd-fast"));
    assert!(rfd < 0.75 * fd, "fd {fd} rfd {rfd}");
}

#[test]
fn sketch_size_at_least_rank_is_exact() {
    let heart = repo_file("data/heart.libsvm");
    let v = json(&run(&[
        "sketch", "--method", "fd", "--size", "14", "--json", &heart,
    ]));
    assert!(
        v["relative_spectral_error"].as_f64().unwrap() < 1e-10,
        "{v}"
    );
}

#[test]
fn stdin_gzip_and_file_agree() {
    let heart = repo_file("data/heart.libsvm");
    let bytes = std::fs::read(&heart).unwrap();
    let base = json(&run(&[
        "sketch", "--method", "rfd", "--size", "3", "--json", &heart,
    ]));

    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&bytes).unwrap();
    let gz_path = tmp("heart.libsvm.gz", &gz.finish().unwrap());
    let from_gz = json(&run(&[
        "sketch",
        "--method",
        "rfd",
        "--size",
        "3",
        "--json",
        gz_path.to_str().unwrap(),
    ]));

    let mut child = bin()
        .args(["sketch", "--method", "rfd", "--size", "3", "--json", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&bytes).unwrap();
    let from_stdin = json(&child.wait_with_output().unwrap());

    for v in [&from_gz, &from_stdin] {
        assert_eq!(v["rows"], base["rows"]);
        assert_eq!(v["dim"], base["dim"]);
        assert_eq!(
            v["relative_spectral_error"],
            base["relative_spectral_error"]
        );
        assert_eq!(v["alpha"], base["alpha"]);
    }
}

#[test]
fn same_seed_same_bits() {
    let heart = repo_file("data/heart.libsvm");
    let a = json(&run(&[
        "sketch", "--method", "rp", "--size", "4", "--seed", "9", "--json", &heart,
    ]));
    let b = json(&run(&[
        "sketch", "--method", "rp", "--size", "4", "--seed", "9", "--json", &heart,
    ]));
    let c = json(&run(&[
        "sketch", "--method", "rp", "--size", "4", "--seed", "10", "--json", &heart,
    ]));
    assert_eq!(a["relative_spectral_error"], b["relative_spectral_error"]);
    assert_ne!(a["relative_spectral_error"], c["relative_spectral_error"]);
}

#[test]
fn csv_input_works_and_gfd_refuses_it() {
    let p = tmp("m.csv", b"a,b,c\n1,0,2\n0,3,0\n4,5,6\n");
    let path = p.to_str().unwrap();
    let v = json(&run(&[
        "sketch", "--method", "fd", "--size", "4", "--json", path,
    ]));
    assert_eq!(v["rows"], 3);
    assert_eq!(v["dim"], 3);
    assert!(v["relative_spectral_error"].as_f64().unwrap() < 1e-12);
    let out = run(&["sketch", "--method", "gfd", "--size", "4", path]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("label"));
}

#[test]
fn malformed_input_names_file_line_and_column() {
    let p = tmp("bad.libsvm", b"+1 1:0.5 2:1\n# comment\n-1 1:0.5 3:abc\n");
    let out = run(&[
        "sketch",
        "--method",
        "fd",
        "--size",
        "2",
        p.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.libsvm:3:"), "{err}");
    assert!(err.contains("abc"), "{err}");
}

#[test]
fn invalid_parameters_are_rejected_with_a_message() {
    let heart = repo_file("data/heart.libsvm");
    for args in [
        vec!["sketch", "--method", "fd", "--size", "0", heart.as_str()],
        vec![
            "sketch",
            "--method",
            "rfd",
            "--size",
            "3",
            "--alpha0",
            "-1",
            heart.as_str(),
        ],
        vec![
            "sketch",
            "--method",
            "rp",
            "--size",
            "3",
            "--alpha",
            "NaN",
            heart.as_str(),
        ],
        vec!["sketch", "--method", "nope", "--size", "3", heart.as_str()],
        vec![
            "sketch",
            "--method",
            "fd",
            "--size",
            "3",
            "/nonexistent/file.libsvm",
        ],
    ] {
        let out = run(&args);
        assert!(!out.status.success(), "{args:?} should fail");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(!err.trim().is_empty(), "{args:?}: empty message");
    }
}

#[test]
fn dimension_smaller_than_file_is_an_error() {
    let heart = repo_file("data/heart.libsvm");
    let out = run(&[
        "sketch", "--method", "fd", "--size", "3", "--dim", "5", &heart,
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("dimension") && err.contains("heart.libsvm:1"),
        "{err}"
    );
}

#[test]
fn help_on_every_subcommand() {
    for sub in [
        vec!["--help"],
        vec!["sketch", "--help"],
        vec!["repro", "--help"],
    ] {
        let out = run(&sub);
        assert!(out.status.success());
        assert!(String::from_utf8_lossy(&out.stdout).contains("Usage"));
    }
}
