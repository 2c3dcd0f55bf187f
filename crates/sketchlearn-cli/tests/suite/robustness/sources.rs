//! One input model for every source (issue 26, item 1): a regular file may be read more than
//! once; standard input, a pipe, a FIFO and a process substitution are opened and read once —
//! and train with the same flags as the file, to the same model, bit for bit.

use super::{bash, bin, repo_file, Scratch};
use std::process::{Command, Output};

/// The ways of handing the same data to `train`.
#[derive(Clone, Copy, Debug)]
enum Source {
    File,
    StdinPipe,
    Fifo,
    ProcessSubstitution,
}

/// Runs `train --quiet --json -f MODEL FLAGS <source of data>`; returns the output and the
/// model's bytes.
fn train_from(
    source: Source,
    data: &str,
    flags: &[&str],
    dir: &Scratch,
    tag: &str,
) -> (Output, Vec<u8>) {
    let model = dir.path(&format!("{tag}.model"));
    let mut args: Vec<String> = ["train", "--quiet", "--json", "-f", &model]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.extend(flags.iter().map(|s| s.to_string()));
    let quoted = args
        .iter()
        .map(|a| format!("'{a}'"))
        .collect::<Vec<_>>()
        .join(" ");
    let out = match source {
        Source::File => Command::new(bin()).args(&args).arg(data).output().unwrap(),
        Source::StdinPipe => bash(&format!("cat '{data}' | '{}' {quoted} -", bin())),
        Source::ProcessSubstitution => bash(&format!("'{}' {quoted} <(cat '{data}')", bin())),
        Source::Fifo => {
            let fifo = dir.path(&format!("{tag}.fifo"));
            let c = std::ffi::CString::new(fifo.clone()).unwrap();
            // SAFETY: a valid NUL-terminated path; mkfifo only creates a directory entry.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
            let (src, dst) = (data.to_owned(), fifo.clone());
            // The writer blocks until the reader opens the FIFO, and writes it once: a second
            // open by the reader would hang (and the test time out).
            let writer = std::thread::spawn(move || std::fs::copy(src, dst).map(|_| ()));
            let out = Command::new(bin()).args(&args).arg(&fifo).output().unwrap();
            writer.join().unwrap().unwrap();
            out
        }
    };
    let bytes = std::fs::read(&model).unwrap_or_default();
    (out, bytes)
}

/// The `--json` summary without the timings.
fn summary(out: &Output) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let o = v.as_object_mut().unwrap();
    o.remove("seconds");
    o.remove("examples_per_second");
    v
}

#[test]
fn every_source_trains_like_the_file_with_the_same_flags() {
    let dir = Scratch::new("sources");
    let data = repo_file("heart.libsvm");
    let flag_sets: [&[&str]; 4] = [
        &[],
        &["--passes", "2"],
        &["--dim", "13"],
        &["--algo", "newton", "--curvature", "oja", "--passes", "3"],
    ];
    for (k, flags) in flag_sets.iter().enumerate() {
        let (file_out, file_model) =
            train_from(Source::File, &data, flags, &dir, &format!("file{k}"));
        assert!(
            file_out.status.success(),
            "{}",
            String::from_utf8_lossy(&file_out.stderr)
        );
        let expected = summary(&file_out);
        assert_eq!(
            expected["examples"],
            270 * flags
                .iter()
                .position(|f| *f == "--passes")
                .map_or(1, |i| flags[i + 1].parse::<u64>().unwrap())
        );
        for source in [Source::StdinPipe, Source::Fifo, Source::ProcessSubstitution] {
            let tag = format!("{source:?}{k}");
            let (out, model) = train_from(source, &data, flags, &dir, &tag);
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{source:?} {flags:?}: {err}");
            assert_eq!(summary(&out), expected, "{source:?} {flags:?}");
            assert!(
                model == file_model,
                "{source:?} {flags:?}: the model differs from the file's"
            );
        }
    }
}

#[test]
fn an_empty_stream_is_an_error_not_a_model_of_nothing() {
    for flags in ["", "--dim 3", "--passes 2"] {
        let out = bash(&format!("true | '{}' train --quiet {flags} -", bin()));
        super::assert_clear_error(&out, "no examples in <stdin>");
        let out = bash(&format!("'{}' train --quiet {flags} <(true)", bin()));
        super::assert_clear_error(&out, "the input is empty");
    }
}

/// A CSV file with only its header line has no example: the error says what the input may
/// hold (it used to say only "the input is empty", about a file that is not), in train and fm.
#[test]
fn a_csv_header_alone_is_named_in_the_error() {
    let dir = std::env::temp_dir().join(format!("sl-header-only-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("header.csv");
    std::fs::write(&csv, "label,a,b\n").unwrap();
    for sub in ["train", "fm"] {
        let out = bash(&format!("'{}' {sub} --quiet '{}'", bin(), csv.display()));
        let err = super::assert_clear_error(&out, "no examples in");
        assert!(
            err.contains("only blank lines, comments or a CSV header line"),
            "{err}"
        );
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_spooled_stream_leaves_no_file_behind() {
    let dir = Scratch::new("spool");
    let data = repo_file("heart.libsvm");
    let tmp = dir.path("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let out = bash(&format!(
        "cat '{data}' | TMPDIR='{tmp}' '{}' train --quiet --passes 2 -",
        bin()
    ));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0);
}

/// A bad value on an otherwise plain line (which the dimension scan passes over, reading only
/// labels and indices) is the same error at the same line and column from a file and from a
/// pipe, with and without `--dim`, and the model file of an earlier run is left as it was.
#[test]
fn a_bad_value_is_an_error_at_its_column_and_leaves_the_model() {
    let dir = Scratch::new("bad-value");
    let text = std::fs::read_to_string(repo_file("heart.libsvm")).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let mut tokens: Vec<&str> = lines[199].split(' ').collect();
    let k = tokens.iter().position(|t| t.starts_with("3:")).unwrap();
    tokens[k] = "3:0.5x";
    // The 1-based column of the value: the tokens before it and their spaces, then "3:".
    let column = tokens[..k].iter().map(|t| t.len() + 1).sum::<usize>() + 3;
    let line = tokens.join(" ");
    lines[199] = &line;
    let bad = dir.path("bad.libsvm");
    std::fs::write(&bad, lines.join("\n") + "\n").unwrap();
    let model = dir.path("kept.model");
    let first = Command::new(bin())
        .args(["train", "--quiet", "-f", &model, &repo_file("heart.libsvm")])
        .output()
        .unwrap();
    assert!(first.status.success());
    let kept = std::fs::read(&model).unwrap();
    // The user's predictions file, too, is left as it was (predictions are written to a
    // temporary file put in place when the run ends well).
    let predictions = dir.path("p.txt");
    std::fs::write(&predictions, "mine\n").unwrap();
    for flags in ["", "--dim 13", "--algo newton --curvature oja"] {
        for (name, script) in [
            (
                "bad.libsvm",
                format!(
                    "'{}' train --quiet -f '{model}' -p '{predictions}' {flags} '{bad}'",
                    bin()
                ),
            ),
            (
                "<stdin>",
                format!(
                    "cat '{bad}' | '{}' train --quiet -f '{model}' {flags} -",
                    bin()
                ),
            ),
        ] {
            let out = bash(&script);
            let want = format!("{name}:200:{column}: cannot parse value \"0.5x\"");
            super::assert_clear_error(&out, &want);
            assert_eq!(std::fs::read(&model).unwrap(), kept, "{script}");
            assert_eq!(std::fs::read_to_string(&predictions).unwrap(), "mine\n");
        }
    }
    assert_eq!(dir.names(), ["bad.libsvm", "kept.model", "p.txt"]);
}
