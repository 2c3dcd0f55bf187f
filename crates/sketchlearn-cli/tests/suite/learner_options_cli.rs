//! Learner options a VW user reaches for (issue 25, item 7) and a readable `train --help`
//! (item 8), end to end.

use crate::common;
use crate::everyday;
use common::{quiet_json, test_json};

use everyday::{data, fails_with, json, run, scratch, tmp};

/// Zero weights among the features of an `inspect --json` (all of them: `--top` = d).
fn zeros(model: &str, dim: usize) -> usize {
    let v = json(&run(&[
        "inspect",
        "--json",
        "--top",
        &dim.to_string(),
        model,
    ]));
    v["top_weights"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["weight"].as_f64() == Some(0.0))
        .count()
        + dim.saturating_sub(v["top_weights"].as_array().unwrap().len())
}

#[test]
fn l1_makes_weights_exactly_zero_and_is_kept_in_the_model() {
    let file = data("heart.libsvm");
    let dim = 13;
    let plain = scratch("plain.model");
    let l1 = scratch("l1.model");
    let p = quiet_json("train", &["--algo", "adagrad", "-f", &plain, &file]);
    let r = quiet_json(
        "train",
        &["--algo", "adagrad", "--l1", "0.2", "-f", &l1, &file],
    );
    assert!(zeros(&l1, dim) > zeros(&plain, dim), "L1 zeroes weights");
    // Still a useful classifier.
    assert!(r["progressive_error"].as_f64().unwrap() < 0.3, "{r} vs {p}");
    let i = json(&run(&["inspect", "--json", &l1]));
    assert_eq!(i["regularization"]["l1"], 0.2);
    // Resuming keeps the penalty (and refuses new learner flags).
    quiet_json("train", &["-i", &l1, "-f", &l1, &file]);
    let i = json(&run(&["inspect", "--json", &l1]));
    assert_eq!(i["regularization"]["l1"], 0.2);
    fails_with(&run(&["train", "-i", &l1, "--l1", "0.1", &file]), "--l1");
}

#[test]
fn l2_with_ogd_shrinks_the_weights_and_l1_0_is_no_penalty() {
    let heart = data("heart.libsvm");
    let norm = |extra: &[&str]| {
        let m = scratch(&format!("ogd{}.model", extra.len()));
        let mut args = vec!["train", "--quiet", "--algo", "ogd", "-f", &m];
        args.extend_from_slice(extra);
        args.push(&heart);
        json(&run(&[&args[..], &["--json"]].concat()));
        let v = json(&run(&["inspect", "--json", "--top", "13", &m]));
        let w: Vec<f64> = v["top_weights"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["weight"].as_f64().unwrap())
            .collect();
        w.iter().map(|x| x * x).sum::<f64>().sqrt()
    };
    let plain = norm(&[]);
    assert!(norm(&["--l2", "1"]) < 0.8 * plain);
    assert_eq!(norm(&["--l1", "0", "--l2", "0"]), plain);
}

#[test]
fn a_learner_that_cannot_honour_the_penalty_is_refused() {
    let heart = data("heart.libsvm");
    fails_with(
        &run(&["train", "--l1", "0.1", &heart]),
        "--algo ogd or adagrad",
    );
    fails_with(
        &run(&["train", "--l2", "0.1", "--curvature", "fd", &heart]),
        "newton",
    );
    fails_with(
        &run(&[
            "train", "--l1", "0.1", "--algo", "adagrad", "--diag", &heart,
        ]),
        "--diag",
    );
    fails_with(
        &run(&["train", "--l1", "-1", "--algo", "adagrad", &heart]),
        "l1 must be finite and >= 0",
    );
    fails_with(
        &run(&[
            "train", "--l1", "0.1", "--algo", "ogd", "--clip", "2", &heart,
        ]),
        "--clip",
    );
}

#[test]
fn retire_applies_to_mixtures_and_is_refused_elsewhere() {
    let heart = data("heart.libsvm");
    fails_with(
        &run(&["train", "--algo", "ogd", "--retire", "0.5", &heart]),
        "--retire applies to mixtures",
    );
    fails_with(&run(&["train", "--retire", "1", &heart]), "[0, 1)");
    let out = run(&["train", "--quiet", "--retire", "0", &heart]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A member retired at importance weight `+∞` says so in `train --json` and `inspect --json`
/// (it printed `"retired_at": null`, which read as an active member). An empty row of weight
/// `f64::MAX` is a check point retiring nobody (a tie); unit rows set the members apart; a second
/// empty row of weight `f64::MAX` takes the weight seen to `∞`, where the loser retires. (A row
/// of values with such a weight is refused, and a refused row changes nothing.)
#[test]
fn a_member_retired_at_infinity_is_reported_as_retired() {
    let rows: String = (0..10)
        .map(|i| {
            let y = if i % 3 == 0 { -1 } else { 1 };
            match i {
                0 => "1 1.7976931348623157e308 |\n".to_owned(),
                7 => format!("{y} 1.7976931348623157e308 |\n"),
                _ => format!("{y} 1 | a:{y} b:0.5\n"),
            }
        })
        .collect();
    let file = tmp("huge_weights.vw", &rows);
    let model = scratch("huge_weights.model");
    // `-b 2`: 4 hashed weights, so the retirement's coverage (3·d stored entries seen) is
    // reached within these rows (at the default 2^18 it takes 786,432 entries).
    let flags = [
        "--algo",
        "adagrad-grid",
        "--retire",
        "0.45",
        "-b",
        "2",
        "-f",
        &model,
    ];
    let trained = quiet_json("train", &[&flags[..], &[&file]].concat());
    let inspected = json(&run(&["inspect", "--json", &model]));
    for v in [trained, inspected] {
        let members = v["mixture"].as_array().unwrap();
        assert_eq!(members.len(), 2, "{v}");
        let (gone, kept) = if members[0]["retired"] == true {
            (&members[0], &members[1])
        } else {
            (&members[1], &members[0])
        };
        assert_eq!(gone["retired"], true, "{v}");
        assert_eq!(gone["retired_at"], "inf", "{v}");
        assert_eq!(kept["retired"], false, "{v}");
        assert!(kept.get("retired_at").is_none(), "{v}");
    }
}

#[test]
fn train_help_is_grouped_short_and_shows_defaults() {
    let out = run(&["train", "--help"]);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    let lines = help.lines().count();
    // 68 after the class flags joined; 60 with -h under Output, --l2 on --l1's line, and the
    // rare flags named in another's line or the footer (their detail in docs/guide.md).
    assert!(lines <= 60, "{lines} lines:\n{help}");
    let guide = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/guide.md"),
    )
    .unwrap();
    for flag in [
        "--l2",
        "--no-header",
        "--bias-value",
        "--hash-bits",
        "--oja-c",
        "--no-read-ahead",
        "--retire",
    ] {
        // A flag without a line of its own is still named in the help, and explained in the
        // guide.
        assert!(help.contains(flag), "{flag} missing:\n{help}");
        assert!(guide.contains(flag), "{flag} missing from docs/guide.md");
    }
    for heading in [
        "Learner:",
        "Loss:",
        "Sketch:",
        "Input:",
        "Output:",
        "Evaluation:",
    ] {
        assert!(
            help.lines().any(|l| l == heading),
            "{heading} missing:\n{help}"
        );
    }
    for default in [
        "[default: auto]",
        "[default: 0.5]",
        "[default: logistic]",
        "[default: rfd-fast]",
        "[default: 10; softmax: 20]",
        "[default: 0.1; softmax: 0.2]",
        "[default: 1]",
        "[default: 0]",
        "[default: 64]",
    ] {
        assert!(help.contains(default), "{default} missing:\n{help}");
    }
    // Every option line fits in 100 columns (clap then keeps one line per option).
    assert!(help.lines().all(|l| l.chars().count() <= 100), "{help}");
}

/// Every subcommand takes `--quiet` (a script may pass it to each; `cache` and `fm predict`
/// refused it before) and then writes nothing on stderr, its results still on stdout.
#[test]
fn quiet_means_the_same_in_every_subcommand() {
    let heart = data("heart.libsvm");
    let m = scratch("quiet.model");
    let out = run(&["train", "--quiet", "-f", &m, &heart]);
    assert!(out.status.success() && out.stderr.is_empty() && out.stdout.is_empty());
    let ratings: String = (0..60)
        .map(|k| format!("{}\t{}\t{}\n", k % 7, k % 5, 1 + k % 5))
        .collect();
    let ratings = everyday::tmp("quiet-ratings.tsv", &ratings);
    let pairs = everyday::tmp("quiet-pairs.tsv", "1\t2\n3\t4\n");
    let (fm, cache) = (scratch("quiet-fm.model"), scratch("quiet.cache"));
    for args in [
        vec!["test", "--quiet", "-i", &m, &heart],
        vec!["predict", "--quiet", "-i", &m, &heart],
        vec!["inspect", "--quiet", &m],
        vec!["sketch", "--quiet", "--method", "fd", "--size", "4", &heart],
        vec!["cache", "--quiet", "-c", &cache, &heart],
        vec!["drp", "--quiet", "--size", "5", &heart],
        vec!["fm", "--quiet", "-f", &fm, &ratings],
        vec!["fm", "predict", "--quiet", "-i", &fm, &pairs],
    ] {
        let out = run(&args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stderr.is_empty(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.stdout.is_empty(), "{args:?}: results still on stdout");
    }
}

/// XOR of two namespaces: no linear model of the features separates it; the crossed features
/// (`-q ab`) do, and `test` and `predict` cross them the same way from the model.
#[test]
fn q_crosses_vw_namespaces_in_train_test_and_predict() {
    let mut text = String::new();
    for i in 0..400u32 {
        let (x, y) = (
            ["p", "q"][(i % 2) as usize],
            ["r", "s"][((i / 2 + i / 7) % 2) as usize],
        );
        let label = if (x == "p") == (y == "r") { 1 } else { -1 };
        text.push_str(&format!("{label} |a {x} |b {y}\n"));
    }
    let dir = std::env::temp_dir().join(format!("sketchlearn-q-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("xor.vw").to_string_lossy().into_owned();
    std::fs::write(&file, &text).unwrap();
    let m = scratch("q.model");
    let linear = quiet_json("train", &["--algo", "adagrad", &file]);
    let crossed = quiet_json("train", &["--algo", "adagrad", "-q", "ab", "-f", &m, &file]);
    assert!(
        linear["progressive_error"].as_f64().unwrap() > 0.3,
        "{linear}"
    );
    assert!(
        crossed["progressive_error"].as_f64().unwrap() < 0.05,
        "{crossed}"
    );
    let t = test_json(&m, &file);
    assert_eq!(t["error"].as_f64(), Some(0.0));
    let rows = dir.join("rows.vw").to_string_lossy().into_owned();
    std::fs::write(&rows, "|a p |b r\n|a p |b s\n").unwrap();
    let out = run(&["predict", "-i", &m, &rows]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let labels: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.split(' ').next().unwrap().to_string())
        .collect();
    assert_eq!(labels, ["1", "-1"]);

    fails_with(
        &run(&["train", "-q", "ab", &data("heart.libsvm")]),
        "cross VW namespaces",
    );
    fails_with(
        &run(&["train", "-q", "abc", &file]),
        "two namespace letters",
    );
    fails_with(
        &run(&["train", "-q", "ab", "-i", &m, &file]),
        "keeps its own interactions",
    );
}

/// `--algo ada-fd` and `--algo sketchy` (issue 28, item 4) train, save, and test from the
/// model file; an L1 penalty is refused with the reason.
#[test]
fn the_sketched_adagrads_train_save_and_test() {
    let file = data("heart.libsvm");
    for (algo, name) in [("ada-fd", "ada-fd m=10"), ("sketchy", "sketchy m=10")] {
        let model = scratch(&format!("{algo}.model"));
        let r = quiet_json("train", &["--algo", algo, "-f", &model, &file]);
        assert!(r["learner"].as_str().unwrap().starts_with(name), "{r}");
        let e = r["progressive_error"].as_f64().unwrap();
        assert!(e < 0.3, "{algo}: progressive error {e}");
        let t = test_json(&model, &file);
        assert!(t["error"].as_f64().unwrap() < e, "{algo}: {t}");
        fails_with(
            &run(&["train", "--algo", algo, "--l1", "0.1", &file]),
            "full-matrix preconditioner",
        );
    }
}
