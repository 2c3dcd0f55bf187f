//! Labels as users have them (issue 24, item 1) and predictions in their convention (issue 25,
//! item 1), end to end through the binary: 0/1 and 2/4 learn exactly as -1/+1, the classes are
//! stored in the model and printed by test/predict/-p, bad labels fail at their line.

use crate::common;
use crate::label_helpers;
use common::{assert_mentions, quiet_json, test_json};

use label_helpers::{failure, json, path, run, shared, write};
use std::path::PathBuf;
use std::process::Output;

fn run_stdin(args: &[&str], input: &str) -> Output {
    common::run_with_stdin(args, input.as_bytes())
}

fn heart_text() -> String {
    std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/heart.libsvm"),
    )
    .unwrap()
}

/// `text` (LIBSVM, labels -1/+1 or as written) with its negative label written `neg` and its
/// positive `pos`.
fn relabel(text: &str, neg: &str, pos: &str) -> String {
    text.lines()
        .map(|l| {
            let (y, rest) = l.split_once(' ').unwrap();
            let negative = y.starts_with('-') || y == "0";
            format!("{} {rest}\n", if negative { neg } else { pos })
        })
        .collect()
}

/// Train (progressive) and test JSON of `text` written with the labels `neg`/`pos`.
fn errors(text: &str, neg: &str, pos: &str, name: &str) -> (f64, f64, serde_json::Value) {
    let f = write(&format!("{name}.libsvm"), &relabel(text, neg, pos));
    let model = path(&format!("{name}.model"));
    let t = quiet_json("train", &["-f", &model, &f]);
    let e = test_json(&model, &f);
    (
        t["progressive_error"].as_f64().unwrap(),
        e["error"].as_f64().unwrap(),
        t,
    )
}

fn same_errors_in_every_convention(text: &str, name: &str) {
    let (p, t, base) = errors(text, "-1", "+1", &format!("{name}_pm"));
    assert_eq!(base["classes"], serde_json::json!(["-1", "1"]));
    for (neg, pos) in [("0", "1"), ("2", "4")] {
        let (p2, t2, j) = errors(text, neg, pos, &format!("{name}_{neg}{pos}"));
        assert_eq!((p2, t2), (p, t), "{name} {neg}/{pos}");
        assert_eq!(j["classes"], serde_json::json!([neg, pos]));
        assert_eq!(j["progressive_loss"], base["progressive_loss"]);
    }
}

#[test]
fn heart_zero_one_and_two_four_give_exactly_the_errors_of_plus_minus_one() {
    same_errors_in_every_convention(&heart_text(), "heart");
}

#[test]
fn breast_cancer_zero_one_and_two_four_give_exactly_the_errors_of_plus_minus_one() {
    if let Some(f) = shared("breast-cancer.libsvm") {
        same_errors_in_every_convention(&std::fs::read_to_string(f).unwrap(), "bc");
    }
}

#[test]
fn predictions_print_the_users_labels_and_the_positive_probability() {
    let f = write("h24p.libsvm", &relabel(&heart_text(), "2", "4"));
    let (m, p, raw) = (path("h24p.model"), path("h24p.pred"), path("h24p.raw"));
    quiet_json("train", &["-f", &m, "-p", &p, &f]);
    quiet_json("train", &["--raw", "-p", &raw, &f]);
    let (lines, margins) = (
        std::fs::read_to_string(&p).unwrap(),
        std::fs::read_to_string(&raw).unwrap(),
    );
    assert_eq!(lines.lines().count(), 270);
    for (line, margin) in lines.lines().zip(margins.lines()) {
        let (label, prob) = line.split_once(' ').unwrap();
        let (prob, margin): (f64, f64) = (prob.parse().unwrap(), margin.parse().unwrap());
        assert_eq!(
            label,
            if margin > 0.0 { "4" } else { "2" },
            "{line} / {margin}"
        );
        assert!((prob - 1.0 / (1.0 + (-margin).exp())).abs() < 1e-6);
    }
    // test -p and predict write the same lines for the same rows.
    let (tp, pp) = (path("h24p.test"), path("h24p.predict"));
    json(&run(&["test", "--json", "-i", &m, "-p", &tp, &f]));
    assert!(run(&["predict", "-i", &m, "-p", &pp, &f]).status.success());
    let (a, b) = (
        std::fs::read_to_string(tp).unwrap(),
        std::fs::read_to_string(pp).unwrap(),
    );
    assert_eq!(a, b);
    assert!(a
        .lines()
        .all(|l| l.starts_with("2 ") || l.starts_with("4 ")));
    // --classes 4,2 makes 2 the positive class: the same error, labels the other way round.
    let j = json(&run(&[
        "train",
        "--json",
        "--quiet",
        "--classes",
        "4,2",
        &f,
    ]));
    assert_eq!(j["classes"], serde_json::json!(["4", "2"]));
    // A hinge model prints the label only.
    let hm = path("h24h.model");
    quiet_json("train", &["--loss", "hinge", "-f", &hm, &f]);
    let out = run(&["predict", "-i", &hm, &f]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.lines().all(|l| l == "2" || l == "4"), "{text}");
}

#[test]
fn a_third_label_names_the_line_and_multiclass_and_saves_nothing() {
    let mut text = relabel(&heart_text(), "0", "1");
    text.push_str("2 1:1\n");
    let f = write("heart_three.libsvm", &text);
    let model = path("three.model");
    let e = failure(&run(&[
        "train",
        "-f",
        &model,
        "-p",
        &path("three.pred"),
        &f,
    ]));
    assert_mentions(&e, &[format!("{f}:271:1").as_str(), "--multiclass"]);
    assert!(!std::path::Path::new(&model).exists());
    assert!(!std::path::Path::new(&path("three.pred")).exists());
}

/// Names as labels in a LIBSVM file (a model trained in Python on string labels, a user's
/// `pos`/`neg`): the error at the line says labels there are numbers and a CSV label column
/// takes names (it said only `cannot parse label "pos"`, also with `--classes neg,pos`).
#[test]
fn names_as_libsvm_labels_say_where_names_are_read() {
    let f = write("names.libsvm", &relabel(&heart_text(), "neg", "pos"));
    for extra in [&[][..], &["--classes", "neg,pos"][..]] {
        let e = failure(&run(&[&["train"][..], extra, &[f.as_str()][..]].concat()));
        assert_mentions(
            &e,
            &[
                format!("{f}:1:1: cannot parse label \"pos\"").as_str(),
                "labels are numbers",
                "a CSV file with a label column",
            ],
        );
    }
}

/// Index 0 in a file read as 1-based names the flag that reads it (it said "use zero-based
/// mode"), and the flag then reads the file.
#[test]
fn index_zero_names_the_zero_based_flag() {
    let f = write("zero.libsvm", "1 0:1 2:1\n-1 1:1\n");
    let e = failure(&run(&["train", &f]));
    assert_mentions(&e, &[format!("{f}:1:3").as_str(), "--zero-based"]);
    let out = run(&["train", "--quiet", "--zero-based", &f]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A label column that is constant names the one label it found and the flags that learn
/// from it (it used to say "found 5", read as a count), and `--classes` is such a way out.
#[test]
fn a_constant_label_names_it_and_the_way_out() {
    let csv = write("constant.csv", "a,b,y\n1,2,5\n3,4,5\n5,6,5\n");
    let e = failure(&run(&["train", "--label-column", "y", &csv]));
    assert_mentions(
        &e,
        &[
            "found only the label 5",
            "--classes NEG,POS",
            "--loss squared",
        ],
    );
    let f = write("constant.libsvm", "0 1:1\n0 2:1\n");
    let e = failure(&run(&["train", &f]));
    assert_mentions(&e, &["found only the label 0", "--classes NEG,POS"]);
    let out = run(&["train", "--quiet", "--classes", "0,1", &f]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let e = failure(&run(&["train", "--classes", "1", &f]));
    assert_mentions(&e, &["found only the label 1"]);
}

#[test]
fn a_stream_read_once_takes_plus_minus_one_and_zero_one_else_needs_classes() {
    let text = relabel(&heart_text(), "2", "4");
    let e = failure(&run_stdin(&["train", "--dim", "13", "-"], &text));
    assert_mentions(&e, &["<stdin>:1:1", "--classes"]);
    let file = write("h24s.libsvm", &text);
    let want = quiet_json("train", &[&file]);
    let got = json(&run_stdin(
        &[
            "train",
            "--json",
            "--quiet",
            "--dim",
            "13",
            "--classes",
            "2,4",
            "-",
        ],
        &text,
    ));
    assert_eq!(got["progressive_error"], want["progressive_error"]);
    let zero_one = json(&run_stdin(
        &["train", "--json", "--quiet", "--dim", "13", "-"],
        &relabel(&heart_text(), "0", "1"),
    ));
    assert_eq!(zero_one["progressive_error"], want["progressive_error"]);
    assert_eq!(zero_one["classes"], serde_json::json!(["0", "1"]));
    // -p on the stream prints 0/1 once the stream showed a 0 (heart's second label), exactly
    // as on the file, whose classes were scanned first.
    let zo = relabel(&heart_text(), "0", "1");
    let (ps, pf) = (path("h01s.pred"), path("h01f.pred"));
    let f01 = write("h01s.libsvm", &zo);
    quiet_json("train", &["-p", &pf, &f01]);
    json(&run_stdin(
        &["train", "--json", "--quiet", "--dim", "13", "-p", &ps, "-"],
        &zo,
    ));
    let (s, f) = (
        std::fs::read_to_string(ps).unwrap(),
        std::fs::read_to_string(pf).unwrap(),
    );
    let rest = |t: &str| t.lines().skip(1).map(str::to_owned).collect::<Vec<_>>();
    assert_eq!(rest(&s), rest(&f));
    assert!(rest(&s)
        .iter()
        .all(|l| l.starts_with("0 ") || l.starts_with("1 ")));
}

/// A 0/1 stream read once whose first 300 labels are all 1 (longer than a batch, so the
/// convention is still open when the first predictions are made): `-p` prints the user's 0/1
/// from the first line, with and without `--dim`, exactly as on the file.
#[test]
fn a_zero_one_stream_prints_zero_one_from_its_first_line() {
    let zo = relabel(&heart_text(), "0", "1");
    let positives: String = zo
        .lines()
        .filter(|l| l.starts_with("1 "))
        .collect::<Vec<_>>()
        .join("\n");
    let text = format!("{}\n{zo}", [positives.as_str(); 3].join("\n"));
    assert!(text.lines().take_while(|l| l.starts_with("1 ")).count() > 300);
    let file = write("h01runs.libsvm", &text);
    let pf = path("h01runs_f.pred");
    json(&run(&["train", "--json", "--quiet", "-p", &pf, &file]));
    let want = std::fs::read_to_string(pf).unwrap();
    for (name, dim) in [("h01runs_s.pred", None), ("h01runs_d.pred", Some("13"))] {
        let ps = path(name);
        let mut args = vec!["train", "--json", "--quiet", "-p", &ps];
        if let Some(d) = dim {
            args.extend(["--dim", d]);
        }
        args.push("-");
        json(&run_stdin(&args, &text));
        let got = std::fs::read_to_string(&ps).unwrap();
        assert_eq!(got.lines().count(), text.lines().count(), "{name}");
        assert!(
            got.lines()
                .all(|l| l.starts_with("0 ") || l.starts_with("1 ")),
            "{name}"
        );
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn classes_that_disagree_with_the_file_or_the_model_are_errors() {
    let f = write("h01c.libsvm", &relabel(&heart_text(), "0", "1"));
    let e = failure(&run(&["train", "--classes", "0,2", &f]));
    assert_mentions(&e, &[format!("{f}:1:1").as_str(), "label 1"]);
    let m = path("h01c.model");
    quiet_json("train", &["-f", &m, &f]);
    // An unseen class at test time, and a label that is not a number.
    let g = write("h24c.libsvm", &relabel(&heart_text(), "2", "4"));
    let e = failure(&run(&["test", "-i", &m, &g]));
    assert_mentions(&e, &[format!("{g}:1:1").as_str(), "0,1"]);
    let bad = write("word.libsvm", "1 1:1\nyes 2:1\n0 1:2\n");
    let e = failure(&run(&["train", &bad]));
    assert!(e.contains(&format!("{bad}:2:")), "{e}");
}

/// Labels that differ from the classes only by case (a model trained on `yes`/`no`, a file
/// scored with `Yes`/`No`; a stray `Yes` in training; `--classes` in another case): the error
/// names both spellings, where it said only "not one of the classes no,yes".
#[test]
fn labels_that_differ_from_the_classes_only_by_case_are_named_as_such() {
    let rows = |yes: &str, no: &str| -> String {
        let mut text = String::from("y,x\n");
        for k in 0..40 {
            let (y, x) = if k % 2 == 0 { (yes, 1.0) } else { (no, -1.0) };
            text.push_str(&format!("{y},{}\n", x + 0.01 * k as f64));
        }
        text
    };
    let train = write("case_train.csv", &rows("yes", "no"));
    let model = path("case.model");
    quiet_json("train", &["--label-column", "y", "-f", &model, &train]);
    let test = write("case_test.csv", &rows("Yes", "No"));
    let e = failure(&run(&["test", "-i", &model, &test]));
    assert_mentions(
        &e,
        &[
            format!(
                "{test}:2:1: label Yes is not one of the classes no,yes: Yes and yes differ \
                     only by case"
            )
            .as_str(),
            "the model was trained on these classes",
        ],
    );
    let mut stray = rows("yes", "no");
    stray.push_str("YES,1\n");
    let stray = write("case_stray.csv", &stray);
    let e = failure(&run(&["train", "--label-column", "y", &stray]));
    assert_mentions(
        &e,
        &[format!(
            "{stray}:42:1: label YES is not one of the classes no,yes: YES and yes differ \
                   only by case"
        )
        .as_str()],
    );
    let e = failure(&run(&[
        "train",
        "--label-column",
        "y",
        "--classes",
        "No,Yes",
        &train,
    ]));
    assert_mentions(
        &e,
        &["label no is not one of the classes No,Yes: no and No differ only by case"],
    );
}

/// Classes found in the input that differ only by case (`yes` and `Yes`) are learned as two
/// classes, by `--multiclass` and by a binary learner alike: the run says so, once, naming both
/// spellings and their first lines; a declared list (`--classes`) is taken as meant.
#[test]
fn classes_that_differ_only_by_case_are_warned_about_once() {
    let text = "x,y\n1,yes\n2,no\n3,maybe\n1,Yes\n2,no\n1,yes\n1,YES\n";
    let multi = write("case_multi.csv", text);
    let out = run(&[
        "train",
        "--quiet",
        "--multiclass",
        "--label-column",
        "y",
        &multi,
    ]);
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    let warning = "warning: the labels yes (first at line 2) and Yes (first at line 5) differ \
                   only by case: they are learned as two classes";
    assert_eq!(err.matches(warning).count(), 1, "{err}");
    let binary = write("case_binary.csv", "x,y\n1,yes\n2,Yes\n3,Yes\n1,yes\n");
    let out = run(&["train", "--quiet", "--label-column", "y", &binary]);
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_mentions(
        &err,
        &["the labels yes (first at line 2) and Yes (first at line 3) differ only by case"],
    );
    let declared = run(&[
        "train",
        "--quiet",
        "--multiclass",
        "--classes",
        "yes,no,maybe,Yes,YES",
        "--label-column",
        "y",
        &multi,
    ]);
    assert!(declared.status.success(), "{declared:?}");
    let err = String::from_utf8_lossy(&declared.stderr);
    assert!(!err.contains("differ only by case"), "{err}");
    let plain = write("case_plain.csv", "x,y\n1,yes\n2,no\n3,maybe\n");
    let out = run(&[
        "train",
        "--quiet",
        "--multiclass",
        "--label-column",
        "y",
        &plain,
    ]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("differ only by case"));
}

#[test]
fn regression_keeps_its_labels_and_reports_regression_metrics() {
    let f = write("h24r.libsvm", &relabel(&heart_text(), "2", "4"));
    let (m, p) = (path("h24r.model"), path("h24r.pred"));
    let t = quiet_json("train", &["--loss", "squared", "-f", &m, &f]);
    assert!(t.get("classes").is_none(), "{t}");
    let j = json(&run(&["test", "--json", "-i", &m, "-p", &p, &f]));
    for key in ["rmse", "mae", "r2"] {
        assert!(j[key].as_f64().is_some(), "no {key} in {j}");
    }
    for key in ["error", "auc", "log_loss"] {
        assert!(j.get(key).is_none(), "{key} in {j}");
    }
    // Values on the labels' scale (2..4), not classes.
    let values: Vec<f64> = std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    assert!((2.5..3.5).contains(&mean), "{mean}");
    // Classification reports no regression metrics.
    let c = path("h24rc.model");
    quiet_json("train", &["-f", &c, &f]);
    let j = test_json(&c, &f);
    assert!(
        j.get("rmse").is_none() && j["log_loss"].as_f64().is_some(),
        "{j}"
    );
}

/// `train` on a regression stream reports RMSE, MAE and R² (item 6), each what the `-p`
/// predictions give against the labels, and no AUC; a classifier reports no regression metric.
#[test]
fn train_reports_regression_metrics_and_no_auc_for_regression() {
    // Labels of both signs: a stream with positives and negatives, where an AUC could be
    // computed (and was reported) though the values are no classes.
    let text = relabel(&heart_text(), "-2", "4");
    let f = write("h24t.libsvm", &text);
    let p = path("h24t.pred");
    let t = quiet_json("train", &["--loss", "squared", "-p", &p, &f]);
    assert!(
        t["progressive_auc"].is_null() && t["progressive_error"].is_null(),
        "{t}"
    );
    let labels: Vec<f64> = text
        .lines()
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect();
    let preds: Vec<f64> = std::fs::read_to_string(&p)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    let n = labels.len() as f64;
    let sse: f64 = labels
        .iter()
        .zip(&preds)
        .map(|(y, p)| (y - p).powi(2))
        .sum();
    let mae = labels
        .iter()
        .zip(&preds)
        .map(|(y, p)| (y - p).abs())
        .sum::<f64>()
        / n;
    let mean = labels.iter().sum::<f64>() / n;
    let sst: f64 = labels.iter().map(|y| (y - mean).powi(2)).sum();
    for (key, want) in [
        ("progressive_rmse", (sse / n).sqrt()),
        ("progressive_mae", mae),
        ("progressive_r2", 1.0 - sse / sst),
    ] {
        let got = t[key].as_f64().unwrap_or(f64::NAN);
        assert!(
            (got - want).abs() <= 1e-9 * want.abs().max(1.0),
            "{key}: {got} vs {want}"
        );
    }
    // ½ squared error is what progressive_loss is for --loss squared.
    let half_mse = t["progressive_loss"].as_f64().unwrap();
    assert!((half_mse - sse / n / 2.0).abs() < 1e-9, "{t}");
    let c = quiet_json("train", &["--holdout", "0.2", &f]);
    assert!(c["progressive_auc"].as_f64().is_some(), "{c}");
    for key in ["progressive_rmse", "progressive_mae", "progressive_r2"] {
        assert!(c.get(key).is_none(), "{key} in {c}");
    }
    assert!(c["holdout"].get("rmse").is_none(), "{c}");
    // Held-out regression numbers give the RMSE beside the loss (½ squared error).
    let h = quiet_json("train", &["--loss", "squared", "--holdout", "0.2", &f]);
    let (loss, rmse) = (h["holdout"]["loss"].as_f64(), h["holdout"]["rmse"].as_f64());
    assert!(
        (rmse.unwrap() - (2.0 * loss.unwrap()).sqrt()).abs() < 1e-9,
        "{h}"
    );
    let out = run(&["train", "--loss", "squared", "--holdout", "0.2", &f]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("(½ squared error)") && err.contains(", rmse "),
        "{err}"
    );
}

#[test]
fn a_vw_model_refuses_libsvm_rows_and_a_libsvm_model_vw_text() {
    let vw = write("lab.vw", &"1 |a x:1 y:0.5\n-1 |a z:1\n".repeat(20));
    let lib = write("lab.libsvm", &"1 1:1 2:0.5\n-1 3:1\n".repeat(20));
    let (mv, ml) = (path("lab_vw.model"), path("lab_lib.model"));
    quiet_json("train", &["-b", "10", "-f", &mv, &vw]);
    quiet_json("train", &["-f", &ml, &lib]);
    for cmd in ["test", "predict"] {
        let e = failure(&run(&[cmd, "-i", &mv, &lib]));
        assert!(
            e.contains("trained on VW text") && e.contains("--format vw"),
            "{cmd}: {e}"
        );
        let e = failure(&run(&[cmd, "-i", &ml, &vw]));
        assert!(
            e.contains("trained on LIBSVM") && e.contains("--format libsvm"),
            "{cmd}: {e}"
        );
        let e = failure(&run(&[cmd, "-i", &ml, "--zero-based", &lib]));
        assert!(e.contains("drop --zero-based"), "{cmd}: {e}");
    }
}

#[test]
fn a_format_5_model_loads_as_plus_minus_one() {
    let golden = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../sketchlearn/tests/golden/heart-auto-v5.model");
    let heart = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/heart.libsvm");
    let (g, h) = (golden.to_str().unwrap(), heart.to_str().unwrap());
    let j = test_json(g, h);
    assert!(j["error"].as_f64().unwrap() < 0.3, "{j}");
    let out = run(&["predict", "-i", g, h]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines()
            .all(|l| l.starts_with("-1 ") || l.starts_with("1 ")),
        "{text}"
    );
    // 0/1 labels are not the classes of a format-5 model.
    let f = write("h01v5.libsvm", &relabel(&heart_text(), "0", "1"));
    let e = failure(&run(&["test", "-i", g, &f]));
    assert_mentions(&e, &[format!("{f}:2:1").as_str(), "-1,1"]);
}

#[test]
fn fm_takes_two_classes_in_any_convention_and_refuses_three() {
    let f = write("fm24.libsvm", &relabel(&heart_text(), "2", "4"));
    let g = write("fmpm.libsvm", &heart_text());
    let a = quiet_json("fm", &[&f]);
    let b = quiet_json("fm", &[&g]);
    assert_eq!(a["test_error"], b["test_error"], "{a}\n{b}");
    let mut three = heart_text();
    three.push_str("3 1:1\n");
    let t = write("fm3.libsvm", &three);
    let e = failure(&run(&["fm", &t]));
    assert_mentions(&e, &[format!("{t}:271:1").as_str(), "two classes"]);
    // fm has neither --multiclass nor --classes: its error must not suggest them.
    assert!(
        !e.contains("--classes") && !e.contains("needs --multiclass"),
        "{e}"
    );
    // and its help states the convention it follows (it said "labels > 0 become +1").
    let help = String::from_utf8_lossy(&run(&["fm", "--help"]).stdout).into_owned();
    assert!(!help.contains("labels > 0 become +1"), "{help}");
    assert_mentions(
        &help,
        &["any two labels (-1/+1, 0/1, 2/4), the larger positive"],
    );
}
