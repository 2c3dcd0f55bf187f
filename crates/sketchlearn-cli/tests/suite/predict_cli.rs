//! `sketchlearn predict` end to end (issue 25, item 1): rows without labels, labels and
//! probabilities in the user's convention, raw margins, streaming through a pipe, and the
//! bad-input cases (nothing overwritten).

use crate::common;

use common::{bin, run, scratch_dir, stdout_text, train_quiet};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, Stdio};

fn dir() -> PathBuf {
    scratch_dir("predict")
}

fn path(name: &str) -> String {
    dir().join(name).to_string_lossy().into_owned()
}

/// A separable 2-feature problem: label 1 when x1 > x2.
fn train_data() -> String {
    let mut s = String::new();
    for k in 0..200 {
        let a = (k * 37 % 100) as f64 / 100.0;
        let b = (k * 61 % 100) as f64 / 100.0;
        s.push_str(&format!("{} 1:{a} 2:{b}\n", if a > b { 1 } else { -1 }));
    }
    s
}

/// `predict -i MODEL -` running, its stdin and stdout piped.
fn predict_from_stdin(model: &str) -> Child {
    bin()
        .args(["predict", "-i", model, "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap()
}

fn trained(name: &str, extra: &[&str]) -> String {
    let data = path(&format!("{name}.libsvm"));
    std::fs::write(&data, train_data()).unwrap();
    let model = path(&format!("{name}.skl"));
    train_quiet(&model, extra, &data);
    model
}

#[test]
fn scores_rows_without_labels_as_label_and_probability() {
    let model = trained("logistic", &[]);
    let rows = path("rows.txt");
    std::fs::write(&rows, "1:0.9 2:0.1\n2:0.9\n\n-1 1:0.9 2:0.1\n").unwrap();
    let text = stdout_text(&run(&["predict", "-i", &model, &rows]));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    let (label, p) = lines[0].split_once(' ').unwrap();
    assert_eq!(label, "1");
    assert!(p.parse::<f64>().unwrap() > 0.5);
    let (label, p) = lines[1].split_once(' ').unwrap();
    assert_eq!(label, "-1");
    assert!(p.parse::<f64>().unwrap() < 0.5);
    assert_eq!(lines[2], lines[0], "a labelled row is scored the same");

    let named = stdout_text(&run(&[
        "predict",
        "-i",
        &model,
        "--classes",
        "No,Yes",
        &rows,
    ]));
    assert!(named.starts_with("Yes "), "{named}");

    let raw = stdout_text(&run(&["predict", "-i", &model, "--raw", &rows]));
    let m: f64 = raw.lines().next().unwrap().parse().unwrap();
    assert!(m > 0.0);

    let out = path("out.txt");
    assert!(run(&["predict", "-i", &model, "-p", &out, &rows])
        .status
        .success());
    assert_eq!(std::fs::read_to_string(&out).unwrap(), text);
}

#[test]
fn regression_writes_the_value() {
    let model = trained("squared", &["--loss", "squared"]);
    let text = stdout_text(&{
        let mut child = predict_from_stdin(&model);
        child.stdin.take().unwrap().write_all(b"1:0.5\n").unwrap();
        child.wait_with_output().unwrap()
    });
    assert_eq!(text.lines().count(), 1);
    assert!(text.trim().parse::<f64>().unwrap().is_finite(), "{text}");
}

#[test]
fn streams_a_line_in_a_line_out() {
    let model = trained("stream", &[]);
    let mut child = predict_from_stdin(&model);
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    for row in ["1:0.9 2:0.1", "1:0.1 2:0.9", "2:0.3"] {
        // The answer to each row arrives before the next row is written.
        writeln!(stdin, "{row}").unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        assert_eq!(line.split_whitespace().count(), 2, "{line:?}");
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

/// Rows with features the model never saw (a held-out split of sparse text: r8's test rows
/// hold words its training rows do not) are scored as `test` scores them, those features
/// counting as zero, with one warning naming the first such row. `predict` used to refuse
/// them at that row, while `test` scored the same file.
#[test]
fn features_beyond_the_dimension_count_as_zero_as_in_test() {
    let model = trained("beyond", &[]);
    let (wide, narrow) = (path("beyond-wide.libsvm"), path("beyond-narrow.libsvm"));
    std::fs::write(&wide, "1 1:0.9 2:0.1\n-1 1:0.5 9:1\n1 2:0.2 12:3\n").unwrap();
    std::fs::write(&narrow, "1 1:0.9 2:0.1\n-1 1:0.5\n1 2:0.2\n").unwrap();
    let out = run(&["predict", "-i", &model, &wide]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches("warning:").count(), 1, "{err}");
    assert!(
        err.contains("beyond-wide.libsvm:2: feature index 9 is beyond the model's dimension 2"),
        "{err}"
    );
    let narrow_out = run(&["predict", "-i", &model, &narrow]);
    assert!(narrow_out.status.success());
    assert!(narrow_out.stderr.is_empty());
    assert_eq!(stdout_text(&out), stdout_text(&narrow_out));
    let test_preds = path("beyond-test.txt");
    let tested = run(&["test", "-i", &model, "-p", &test_preds, &wide]);
    assert!(tested.status.success());
    assert_eq!(
        std::fs::read_to_string(&test_preds).unwrap(),
        stdout_text(&out)
    );
}

#[test]
fn bad_rows_and_bad_paths_fail_without_writing() {
    let model = trained("bad", &[]);
    let out = run(&["predict", "-i", &model, "-"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no examples"));

    let rows = path("bad-rows.txt");
    std::fs::write(&rows, "1:0.5\n1:x\n").unwrap();
    let out = run(&["predict", "-i", &model, &rows]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad-rows.txt:2:3: cannot parse value \"x\""),
        "{err}"
    );

    std::fs::write(&rows, "1:0.5\n9:1\n").unwrap();
    // -p onto the input, onto the model, into a missing directory: refused, nothing touched.
    let before = std::fs::read(&rows).unwrap();
    let model_before = std::fs::read(&model).unwrap();
    for (target, want) in [
        (rows.clone(), "is the input file"),
        (model.clone(), "is the input file"),
        (path("no/such/dir/p.txt"), "does not exist"),
        (dir().to_string_lossy().into_owned(), "is a directory"),
    ] {
        let out = run(&["predict", "-i", &model, "-p", &target, &rows]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(want),
            "{target}: {err}"
        );
    }
    assert_eq!(std::fs::read(&rows).unwrap(), before);
    assert_eq!(std::fs::read(&model).unwrap(), model_before);
}

/// Every learner scores such rows, not only those that pass over indices they do not hold:
/// a softmax model with diagonal adaptation and no intercept read its diagonal at the new
/// index (an index out of bounds, a panic) when `predict` handed it the whole row; the row
/// is now cut to the model's dimension as `test` cuts it, for every learner.
#[test]
fn a_softmax_diagonal_model_scores_rows_beyond_its_dimension() {
    let data = path("softmax-beyond.libsvm");
    let rows = "1 1:1 2:0.5\n2 1:-1 3:1\n3 2:1 3:-0.5\n".repeat(4);
    std::fs::write(&data, rows).unwrap();
    let model = path("softmax-beyond.skl");
    train_quiet(
        &model,
        &["--reduction", "softmax", "--diag", "--no-bias"],
        &data,
    );
    let (wide, narrow) = (path("softmax-wide.libsvm"), path("softmax-narrow.libsvm"));
    std::fs::write(&wide, "1 1:1 2:0.5 7:3\n2 1:-1 9:1\n").unwrap();
    std::fs::write(&narrow, "1 1:1 2:0.5\n2 1:-1\n").unwrap();
    let out = run(&["predict", "-i", &model, &wide]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let narrow_out = run(&["predict", "-i", &model, &narrow]);
    assert_eq!(stdout_text(&out), stdout_text(&narrow_out));
    assert_eq!(stdout_text(&out).lines().count(), 2);
}

/// Text in another encoding (a Latin-1 byte) gets the one message `train` gives for it
/// (`text_input::utf8_line`): file, line and column of the byte, and the `iconv` fix, on the
/// first line as on a later one.
#[test]
fn a_non_utf8_row_is_named_with_file_line_and_column_as_train_names_it() {
    let model = trained("latin1.model", &[]);
    let first = path("latin1_first.libsvm");
    std::fs::write(&first, b"1 1:0.5 2:\xe9\n").unwrap();
    let stderr = |args: &[&str]| {
        let out = run(args);
        assert!(!out.status.success(), "{args:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let predicted = stderr(&["predict", "-i", &model, &first]);
    let expected = format!("{first}:1:11: not UTF-8 text (byte 0xe9)");
    assert!(predicted.contains(&expected), "{predicted}");
    assert!(predicted.contains("iconv"), "{predicted}");
    assert_eq!(predicted, stderr(&["train", &first]));
    let later = path("latin1_later.libsvm");
    std::fs::write(&later, b"1 1:0.5\n-1 1:0.2 2:\xe9\n").unwrap();
    let predicted = stderr(&["predict", "-i", &model, &later]);
    assert!(
        predicted.contains(&format!("{later}:2:12: not UTF-8 text")),
        "{predicted}"
    );
}
