//! One label map for every format (issue 24, item 5): a CSV column's class names and LIBSVM's
//! numbers go through the same classes — scanned from the labels as written, declared with
//! `--classes`, stored in the model — for training, `test`, `predict` and `-p`, binary and
//! multiclass; a label that is not a class is an error at its file:line:column naming the
//! classes. Model files written before the change (by main 8876293) load and predict the same
//! bytes. The small files are in `tests/data` (README there).

use crate::common;
use common::{
    assert_mentions, failure, ok, quiet_json, repo_file, run, scratch_dir, scratch_file,
    stdout_text,
};

fn data(name: &str) -> String {
    repo_file(&format!("crates/sketchlearn-cli/tests/data/{name}"))
}

/// A path in this test file's scratch folder (not created).
fn scratch(name: &str) -> String {
    scratch_dir("label-map")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// The first field of each line `predict` (or `-p`) wrote: the predicted label.
fn labels(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect()
}

/// The labels as written in the column `column` of a CSV file with a header.
fn csv_column(path: &str, column: usize) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .skip(1)
        .map(|l| l.split(',').nth(column).unwrap().to_string())
        .collect()
}

#[test]
fn csv_names_binary_train_test_predict_and_p_in_the_names() {
    let (csv, model, pred) = (data("answers.csv"), scratch("a.model"), scratch("a.pred"));
    let t = quiet_json(
        "train",
        &["--label-column", "answer", "-f", &model, "-p", &pred, &csv],
    );
    assert_eq!(t["classes"], serde_json::json!(["No", "Yes"]));
    let written = std::fs::read_to_string(&pred).unwrap();
    assert!(labels(&written).iter().all(|l| l == "Yes" || l == "No"));
    let test = quiet_json("test", &["-i", &model, &csv]);
    let predicted = labels(&stdout_text(&run(&["predict", "-i", &model, &csv])));
    let truth = csv_column(&csv, 2);
    let wrong = predicted.iter().zip(&truth).filter(|(p, t)| p != t).count();
    assert_eq!(test["error"].as_f64().unwrap(), wrong as f64 / 60.0);
    assert!(wrong <= 6, "{wrong} of 60 wrong");
    assert_mentions(
        &stdout_text(&run(&["inspect", &model])),
        &["classes        No,Yes"],
    );
}

/// `--classes Yes,No` on a CSV column (refused before the one map): `No` is the positive class,
/// so the printed probability is `No`'s, and the model keeps the declared order.
#[test]
fn csv_names_in_a_declared_order() {
    let (csv, model) = (data("answers.csv"), scratch("declared.model"));
    let t = quiet_json(
        "train",
        &[
            "--label-column",
            "answer",
            "--classes",
            "Yes,No",
            "-f",
            &model,
            &csv,
        ],
    );
    assert_eq!(t["classes"], serde_json::json!(["Yes", "No"]));
    let out = stdout_text(&run(&["predict", "-i", &model, &csv]));
    for line in out.lines() {
        let (label, p) = line.split_once(' ').unwrap();
        let p: f64 = p.parse().unwrap();
        assert_eq!(label == "No", p > 0.5, "{line}");
    }
    let e = failure(&run(&[
        "train",
        "--label-column",
        "answer",
        "--classes",
        "Yes,Maybe",
        &csv,
    ]));
    assert_mentions(
        &e,
        &[
            "answers.csv:2:",
            "label No is not one of the classes Yes,Maybe",
        ],
    );
}

/// Unseen names and a third name: errors at file:line:column (the label column's), naming the
/// classes known; regression on names and `--oaa` on names are errors too.
#[test]
fn csv_label_errors_name_file_line_column_and_the_classes() {
    let (csv, model) = (data("answers.csv"), scratch("e.model"));
    ok(&run(&[
        "train",
        "--quiet",
        "--label-column",
        "answer",
        "-f",
        &model,
        &csv,
    ]));
    let bad = scratch_file(
        "label-map",
        "bad.csv",
        b"x,group,answer\n0.1,a,Yes\n0.3,b,Maybe\n",
    );
    let bad = bad.to_string_lossy();
    let e = failure(&run(&["test", "-i", &model, &bad]));
    assert_mentions(
        &e,
        &[
            "bad.csv:3:7: label Maybe is not one of the classes No,Yes",
            "trained on these classes",
        ],
    );
    // predict ignores a row's label, known or not.
    assert_eq!(
        labels(&stdout_text(&run(&["predict", "-i", &model, &bad]))).len(),
        2
    );
    let three = "x,group,answer\n0.1,a,Yes\n0.3,b,No\n1,c,Maybe\n";
    let three = scratch_file("label-map", "three.csv", three.as_bytes());
    let three = three.to_string_lossy();
    let e = failure(&run(&["train", "--label-column", "answer", &three]));
    assert_mentions(
        &e,
        &[
            "three.csv:4:5: label Maybe is not one of the classes No,Yes",
            "--multiclass",
        ],
    );
    let e = failure(&run(&[
        "train",
        "--loss",
        "squared",
        "--label-column",
        "answer",
        &three,
    ]));
    assert_mentions(
        &e,
        &["three.csv:2:7: label Yes is not a number", "--multiclass"],
    );
    let e = failure(&run(&[
        "train",
        "--oaa",
        "3",
        "--label-column",
        "answer",
        &three,
    ]));
    assert_mentions(
        &e,
        &[
            "three.csv:2:7: label Yes is not one of the classes 1,2,3",
            "--oaa 3",
        ],
    );
}

#[test]
fn csv_names_multiclass_train_test_predict_resume_and_errors() {
    let (csv, model) = (data("kinds.csv"), scratch("k.model"));
    let t = quiet_json(
        "train",
        &["--multiclass", "--label-column", "kind", "-f", &model, &csv],
    );
    assert_eq!(t["classes"], serde_json::json!(["cat", "dog", "owl"]));
    let predicted = labels(&stdout_text(&run(&["predict", "-i", &model, &csv])));
    let truth = csv_column(&csv, 2);
    let wrong = predicted.iter().zip(&truth).filter(|(p, t)| p != t).count();
    let test = quiet_json("test", &["-i", &model, &csv]);
    assert_eq!(test["error"].as_f64().unwrap(), wrong as f64 / 90.0);
    assert!(wrong <= 5, "{wrong} of 90 wrong");
    // Resumed on the same file: the classes are the model's.
    let resumed = scratch("k2.model");
    let r = quiet_json(
        "train",
        &["--multiclass", "-i", &model, "-f", &resumed, &csv],
    );
    assert_eq!(r["classes"], t["classes"]);
    // Declared order: the probabilities follow it.
    let declared = scratch("k3.model");
    let d = quiet_json(
        "train",
        &[
            "--multiclass",
            "--label-column",
            "kind",
            "--classes",
            "owl,dog,cat",
            "-f",
            &declared,
            &csv,
        ],
    );
    assert_eq!(d["classes"], serde_json::json!(["owl", "dog", "cat"]));
    let probs = stdout_text(&run(&["predict", "--probabilities", "-i", &declared, &csv]));
    for line in probs.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let p: Vec<f64> = f[1..].iter().map(|x| x.parse().unwrap()).collect();
        let best = (0..3).max_by(|&a, &b| p[a].total_cmp(&p[b])).unwrap();
        assert_eq!(f[0], ["owl", "dog", "cat"][best], "{line}");
    }
    let bad = scratch_file("label-map", "kbad.csv", b"x,y,kind\n0,2,cat\n1,1,emu\n");
    let e = failure(&run(&["test", "-i", &model, &bad.to_string_lossy()]));
    assert_mentions(
        &e,
        &["kbad.csv:3:5: label emu is not one of the classes cat,dog,owl"],
    );
}

/// LIBSVM labels 1/2: the classes are the numbers, printed as written; an unseen 3 at `test`
/// is an error at its line naming 1,2.
#[test]
fn libsvm_one_two_labels_print_as_written() {
    let (f, model) = (data("one_two.libsvm"), scratch("12.model"));
    let t = quiet_json("train", &["-f", &model, &f]);
    assert_eq!(t["classes"], serde_json::json!(["1", "2"]));
    let predicted = labels(&stdout_text(&run(&["predict", "-i", &model, &f])));
    assert!(predicted.iter().all(|l| l == "1" || l == "2"));
    assert!(predicted.iter().any(|l| l == "1") && predicted.iter().any(|l| l == "2"));
    let bad = scratch_file("label-map", "bad.libsvm", b"1 1:0.5 2:1\n3 1:1 2:1\n");
    let e = failure(&run(&["test", "-i", &model, &bad.to_string_lossy()]));
    assert_mentions(
        &e,
        &["bad.libsvm:2:1: label 3 is not one of the classes 1,2"],
    );
}

/// Model files written by main 8876293, before the one label map (a CSV binary model, a CSV
/// multiclass model, a LIBSVM 1/2 model): they load, and `predict` writes the bytes main wrote.
#[test]
fn model_files_from_before_the_one_map_predict_the_same_bytes() {
    for (model, rows, flags) in [
        ("answers-adagrad-v7", "answers.csv", &[][..]),
        ("kinds-adagrad-v7", "kinds.csv", &["--probabilities"][..]),
        ("one_two-adagrad-v7", "one_two.libsvm", &[][..]),
    ] {
        let m = data(&format!("{model}.model"));
        let mut args = vec!["predict", "-i", m.as_str()];
        args.extend_from_slice(flags);
        let rows = data(rows);
        args.push(&rows);
        let want = std::fs::read_to_string(data(&format!("{model}.predictions"))).unwrap();
        assert_eq!(stdout_text(&run(&args)), want, "{model}");
        ok(&run(&["test", "-i", &m, &rows]));
    }
}
