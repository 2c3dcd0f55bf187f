//! `train --multiclass` / `--oaa K` end to end (issue 24, item 2): user labels in and out,
//! model files for test/predict/inspect, bit-exact resume, bad input at its line, CSV classes
//! with missing values (penguins, attrition).

use crate::common;
use crate::label_helpers;
use common::{assert_mentions, quiet_json, test_json};

use label_helpers::{failure, json, path, run, shared, write};
use std::path::Path;

/// `n` examples of 3 classes labelled 2, 5, 9 on 4 features (class c shifts feature c).
fn three_classes(n: usize) -> String {
    let mut s = String::new();
    let mut state = 5u64;
    for t in 0..n {
        let c = t % 3;
        s.push_str(["2", "5", "9"][c]);
        for j in 0..4 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let u = (state >> 11) as f64 / (1u64 << 53) as f64;
            let v = u - 0.5 + if j == c { 1.5 } else { 0.0 };
            s.push_str(&format!(" {}:{v:.4}", j + 1));
        }
        s.push('\n');
    }
    s
}

#[test]
fn multiclass_trains_tests_predicts_in_user_labels_and_resumes_bit_exact() {
    let all = three_classes(600);
    let lines: Vec<&str> = all.lines().collect();
    let f = write("mc.libsvm", &all);
    let first = write("mc_a.libsvm", &(lines[..250].join("\n") + "\n"));
    let second = write("mc_b.libsvm", &(lines[250..].join("\n") + "\n"));
    let s = quiet_json(
        "train",
        &[
            "--multiclass",
            "-f",
            &path("whole.model"),
            "-p",
            &path("whole.pred"),
            &f,
        ],
    );
    assert_eq!(s["classes"], serde_json::json!(["2", "5", "9"]));
    assert!(s["progressive_error"].as_f64().unwrap() < 0.15, "{s}");
    assert!(s["multiclass_log_loss"].as_f64().unwrap() > 0.0);
    let cm = s["confusion_matrix"].as_array().unwrap();
    assert_eq!(cm.len(), 3);
    let total: u64 = cm
        .iter()
        .flat_map(|r| r.as_array().unwrap())
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(total, 600);
    let preds = std::fs::read_to_string(path("whole.pred")).unwrap();
    assert_eq!(preds.lines().count(), 600);
    assert!(
        preds.lines().all(|l| ["2", "5", "9"].contains(&l)),
        "{preds}"
    );
    // -i then more training equals one longer run, byte for byte.
    quiet_json("train", &["--multiclass", "-f", &path("a.model"), &first]);
    quiet_json(
        "train",
        &["-i", &path("a.model"), "-f", &path("b.model"), &second],
    );
    assert_eq!(
        std::fs::read(path("whole.model")).unwrap(),
        std::fs::read(path("b.model")).unwrap()
    );
    let t = json(&run(&[
        "test",
        "--json",
        "-i",
        &path("whole.model"),
        "-p",
        &path("test.pred"),
        "--probabilities",
        &f,
    ]));
    assert!(t["error"].as_f64().unwrap() < 0.15, "{t}");
    assert!(t.get("progressive_error").is_none());
    let probs = std::fs::read_to_string(path("test.pred")).unwrap();
    for line in probs.lines() {
        let v: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(v.len(), 4, "label then one probability per class: {line}");
        let p: Vec<f64> = v[1..].iter().map(|x| x.parse().unwrap()).collect();
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-5);
    }
    // predict on rows without labels gives the labels test -p gave.
    let unlabeled: String = all
        .lines()
        .map(|l| l.split_once(' ').unwrap().1.to_string() + "\n")
        .collect();
    let u = write("mc_unlabeled.libsvm", &unlabeled);
    let out = run(&["predict", "-i", &path("whole.model"), "--probabilities", &u]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), probs);
    let out = run(&["inspect", "--json", &path("whole.model")]);
    let i = json(&out);
    assert_eq!(i["classes"], serde_json::json!(["2", "5", "9"]));
    assert_eq!(i["examples_seen"], 600);
}

#[test]
fn oaa_k_and_softmax_and_declared_classes() {
    let text: String = three_classes(300)
        .replace("\n2 ", "\n1 ")
        .replace("\n5 ", "\n2 ")
        .replace("\n9 ", "\n3 ");
    let text = text
        .strip_prefix("2 ")
        .map_or(text.clone(), |t| format!("1 {t}"));
    let f = write("oaa.libsvm", &text);
    let a = quiet_json("train", &["--oaa", "3", &f]);
    assert_eq!(a["classes"], serde_json::json!(["1", "2", "3"]));
    let b = quiet_json("train", &["--multiclass", "--reduction", "softmax", &f]);
    assert!(b["learner"].as_str().unwrap().starts_with("softmax"), "{b}");
    assert!(b["progressive_error"].as_f64().unwrap() < 0.2, "{b}");
    let c = quiet_json("train", &["--multiclass", "--classes", "3,1,2", &f]);
    assert_eq!(c["classes"], serde_json::json!(["3", "1", "2"]));
}

#[test]
fn bad_multiclass_input_fails_at_its_line_and_saves_nothing() {
    let f = write("mc_bad.libsvm", &(three_classes(30) + "7 1:1\n"));
    let model = path("bad.model");
    let vw_labels = write("mc_bad_oaa.libsvm", "1 1:1\n2 2:1\n3 3:1\n7 1:1\n1 2:2\n");
    // (flags, file, what the message must contain)
    let cases: [(&[&str], &str, [String; 2]); 3] = [
        (
            &["--oaa", "3"],
            &vw_labels,
            [format!("{vw_labels}:4:1"), "label 7".into()],
        ),
        (
            &["--multiclass", "--classes", "2,5,9"],
            &f,
            [format!("{f}:31:1"), "--classes".into()],
        ),
        (
            &["--multiclass", "--classes", "2"],
            &f,
            ["--classes".into(), "two".into()],
        ),
    ];
    for (flags, file, want) in cases {
        let mut args = vec!["train", "-f", &model];
        args.extend_from_slice(flags);
        args.push(file);
        let e = failure(&run(&args));
        assert!(
            want.iter().all(|w| e.contains(w.as_str())),
            "{flags:?}: {e}"
        );
    }
    assert!(!Path::new(&model).exists());
    let good = write("mc_good.libsvm", &three_classes(30));
    quiet_json("train", &["--multiclass", "-f", &model, &good]);
    let pred = path("unseen.pred");
    let e = failure(&run(&["test", "-i", &model, "-p", &pred, &f]));
    assert!(e.contains(&format!("{f}:31:1")), "{e}");
    let e = failure(&run(&["train", "--multiclass", "--loss", "squared", &good]));
    assert!(e.contains("classification loss"), "{e}");
    let e = failure(&run(&["train", "-i", &model, "--classes", "2,5", &good]));
    assert!(e.contains("disagrees"), "{e}");
    // A class stream read once needs its classes.
    let e = failure(&run(&["train", "--multiclass", "--dim", "4", "-"]));
    assert!(e.contains("--classes") || e.contains("--oaa"), "{e}");
}

#[test]
fn penguins_train_test_and_predict_species_with_missing_values() {
    let Some(data) = shared("penguins.shuf.csv") else {
        return;
    };
    let model = path("penguins.model");
    let t = quiet_json(
        "train",
        &[
            "--multiclass",
            "--label-column",
            "species",
            "-f",
            &model,
            &data,
        ],
    );
    assert_eq!(
        t["classes"],
        serde_json::json!(["Adelie", "Chinstrap", "Gentoo"])
    );
    assert_eq!(t["examples"], 344);
    // Better than the majority class (Adelie, 152/344 → error 0.56).
    assert!(t["progressive_error"].as_f64().unwrap() < 0.2, "{t}");
    let e = test_json(&model, &data);
    assert!(e["error"].as_f64().unwrap() < 0.1, "{e}");
    // Rows to score without the species column, one with missing values (NA, empty).
    let rows = write(
        "penguins_new.csv",
        "island,bill_length_mm,bill_depth_mm,flipper_length_mm,body_mass_g,sex,year\n\
         Biscoe,47.5,14.9,220,5300,male,2008\nTorgersen,NA,,NA,NA,,2007\n",
    );
    let out = run(&["predict", "-i", &model, "--probabilities", &rows]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let labels: Vec<&str> = text.lines().map(|l| l.split(' ').next().unwrap()).collect();
    assert_eq!(labels.len(), 2);
    assert_eq!(labels[0], "Gentoo", "{text}");
    assert!(["Adelie", "Chinstrap", "Gentoo"].contains(&labels[1]));
    // An unseen species at test time: its line and column.
    let bad = write(
        "penguins_bad.csv",
        "species,island,bill_length_mm,bill_depth_mm,flipper_length_mm,body_mass_g,sex,year\n\
         Emperor,Biscoe,47.5,14.9,220,5300,male,2008\n",
    );
    let err = failure(&run(&["test", "-i", &model, &bad]));
    assert_mentions(&err, &[format!("{bad}:2:1").as_str(), "Emperor"]);
}

#[test]
fn attrition_trains_tests_and_predicts_yes_no() {
    let Some(data) = shared("attrition.csv") else {
        return;
    };
    let (model, p) = (path("attrition.model"), path("attrition.pred"));
    let t = quiet_json(
        "train",
        &["--label-column", "Attrition", "-f", &model, "-p", &p, &data],
    );
    assert_eq!(t["classes"], serde_json::json!(["No", "Yes"]));
    let preds = std::fs::read_to_string(&p).unwrap();
    assert!(preds
        .lines()
        .all(|l| l.starts_with("No ") || l.starts_with("Yes ")));
    let e = test_json(&model, &data);
    assert!(e["error"].as_f64().unwrap() < 0.16, "{e}");
    assert!(e["auc"].as_f64().unwrap() > 0.75, "{e}");
    let out = run(&["predict", "-i", &model, &data]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().count(), 1470);
    assert!(text
        .lines()
        .all(|l| l.starts_with("No ") || l.starts_with("Yes ")));
    // Resuming on the same columns learns on.
    let t2 = quiet_json("train", &["-i", &model, &data]);
    assert_eq!(t2["classes"], serde_json::json!(["No", "Yes"]));
}

/// `n` sparse examples of 4 classes over 2000 features, up to 6 non-zeros each: three of the
/// 10 features of class `c` (`4j + c + 1`, `j < 10`) and three anywhere.
fn sparse_four_classes(n: usize) -> String {
    let mut s = String::new();
    let mut state = 11u64;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        state >> 11
    };
    for t in 0..n {
        let c = t % 4;
        let mut idx: Vec<u64> = (0..6)
            .map(|i| {
                if i < 3 {
                    4 * (next() % 10) + c as u64 + 1
                } else {
                    4 * (next() % 500) + 1 + next() % 4
                }
            })
            .collect();
        idx.sort_unstable();
        idx.dedup();
        s.push_str(&(c + 1).to_string());
        for j in idx {
            s.push_str(&format!(" {j}:0.4"));
        }
        s.push('\n');
    }
    s
}

/// On sparse input the softmax reduction runs in sparse time (`SparseSoftmax`), learns the
/// same as the dense-time learner (`--representation dense`), and its model resumes bit for bit
/// and is inspected like the dense one.
#[test]
fn softmax_on_sparse_input_is_sparse_time_and_learns_as_the_dense_one() {
    let all = sparse_four_classes(800);
    let lines: Vec<&str> = all.lines().collect();
    let f = write("sm_sparse.libsvm", &all);
    let first = write("sm_sparse_a.libsvm", &(lines[..300].join("\n") + "\n"));
    let second = write("sm_sparse_b.libsvm", &(lines[300..].join("\n") + "\n"));
    let softmax = ["--multiclass", "--reduction", "softmax"];
    let whole = path("sm_whole.model");
    let sparse = quiet_json("train", &[&softmax[..], &["-f", &whole, &f]].concat());
    let learner = sparse["learner"].as_str().unwrap();
    assert!(learner.starts_with("softmax sparse-time"), "{learner}");
    let dense = quiet_json(
        "train",
        &[&softmax[..], &["--representation", "dense", &f]].concat(),
    );
    assert!(!dense["learner"].as_str().unwrap().contains("sparse-time"));
    let (es, ed) = (
        sparse["progressive_error"].as_f64().unwrap(),
        dense["progressive_error"].as_f64().unwrap(),
    );
    assert_eq!(es, ed, "the same learner in two representations");
    assert!(es < 0.3, "{sparse}");
    let half = path("sm_half.model");
    quiet_json("train", &[&softmax[..], &["-f", &half, &first]].concat());
    let resumed = path("sm_resumed.model");
    quiet_json("train", &["-i", &half, "-f", &resumed, &second]);
    let bytes = |p: &str| std::fs::read(p).unwrap();
    assert_eq!(
        bytes(&whole),
        bytes(&resumed),
        "-i then more training = one run"
    );
    let t = test_json(&whole, &f);
    assert!(t["error"].as_f64().unwrap() < 0.3, "{t}");
    let out = run(&["inspect", "--json", &whole]);
    let i = json(&out);
    assert_eq!(i["class_weights"].as_array().unwrap().len(), 4, "{i}");
}
