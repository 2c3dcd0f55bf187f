//! The flags a binary run takes, on a multiclass run (issue 25): `--holdout`, `--test`,
//! `--early-stop`, `--shuffle-buffer` (and the sorted-labels warning), `-q` and `--l1/--l2` —
//! through the same training loop as the binary learner.

use std::path::PathBuf;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sketchlearn"))
        .args(args)
        .output()
        .expect("binary runs")
}

/// The JSON on stdout of a command that succeeded.
fn json(args: &[&str]) -> serde_json::Value {
    let out = run(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {err}");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {err}"))
}

/// The error message of a command that failed (nothing on stdout).
fn refused(args: &[&str]) -> String {
    let out = run(args);
    assert!(!out.status.success(), "{args:?} should fail");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn penguins() -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/penguins.csv");
    p.to_string_lossy().into_owned()
}

fn scratch(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("sketchlearn-mc-options-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

fn error(v: &serde_json::Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("{key} in {v}"))
}

/// A multiclass AdaGrad run with a JSON summary.
const ADAGRAD: [&str; 6] = [
    "train",
    "--multiclass",
    "--algo",
    "adagrad",
    "--json",
    "--quiet",
];

const SPECIES: [&str; 6] = [
    "train",
    "--multiclass",
    "--label-column",
    "species",
    "--json",
    "--quiet",
];

#[test]
fn holdout_scores_every_kth_example_apart() {
    let v = json(&[&SPECIES[..], &["--holdout", "0.1", &penguins()]].concat());
    // Every 10th of 344 rows held out: 34 scored apart, 310 learned.
    assert_eq!(v["holdout"]["examples"], 34, "{v}");
    assert_eq!(v["examples"], 310, "{v}");
    let held = &v["holdout"];
    assert!(held["error"].as_f64().unwrap() < 0.15, "{v}");
    assert!(held["multiclass_log_loss"].as_f64().unwrap() > 0.0, "{v}");
    let err = refused(&[&SPECIES[..], &["--holdout", "0.9", &penguins()]].concat());
    assert!(err.contains("--holdout is the fraction"), "{err}");
}

#[test]
fn test_file_is_scored_after_each_pass_and_early_stop_keeps_the_best_pass() {
    let p = penguins();
    let v = json(&[&SPECIES[..], &["--passes", "3", "--test", &p, &p]].concat());
    assert_eq!(v["test"]["examples"], 344, "{v}");
    assert!(v["test"]["error"].as_f64().unwrap() < 0.1, "{v}");
    let out = run(&[
        "train",
        "--multiclass",
        "--label-column",
        "species",
        "--passes",
        "3",
        "--test",
        &p,
        &p,
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(err.matches("test log loss").count(), 3, "{err}");

    let dir = std::env::temp_dir().join(format!("sketchlearn-mc-es-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let model = dir.join("best.model").to_string_lossy().into_owned();
    let args = [
        "--passes",
        "8",
        "--holdout",
        "0.2",
        "--early-stop",
        "1",
        "-f",
        &model,
        &p,
    ];
    let v = json(&[&SPECIES[..], &args].concat());
    let (best, stopped) = (
        v["best_pass"].as_u64().unwrap(),
        v["stopped_early"].as_bool().unwrap(),
    );
    assert!((1..=8).contains(&best), "{v}");
    // The saved model is the best pass's: it has seen `best` passes of the 276 learned rows.
    let seen = run(&["inspect", "--json", &model]);
    let seen: serde_json::Value = serde_json::from_slice(&seen.stdout).unwrap();
    assert_eq!(seen["examples_seen"].as_u64().unwrap(), 276 * best, "{v}");
    assert!(stopped || best == 8, "{v}");
    let err = refused(&[&SPECIES[..], &["--passes", "3", "--early-stop", "1", &p]].concat());
    assert!(
        err.contains("--early-stop watches a held-out loss"),
        "{err}"
    );
}

#[test]
fn a_file_sorted_by_class_is_flagged_and_the_shuffle_buffer_mixes_it() {
    let text = std::fs::read_to_string(penguins()).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let header = lines.remove(0);
    lines.sort_by_key(|l| l.split(',').next().unwrap().to_owned());
    let sorted = scratch("sorted.csv", &(format!("{header}\n{}\n", lines.join("\n"))));
    let out = run(&[
        "train",
        "--multiclass",
        "--label-column",
        "species",
        &sorted,
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("the labels come in long runs") && err.contains("--shuffle-buffer"),
        "{err}"
    );
    let plain = json(&[&SPECIES[..], &[sorted.as_str()]].concat());
    let mixed = json(&[&SPECIES[..], &["--shuffle-buffer", "400", &sorted]].concat());
    assert_eq!(mixed["examples"], 344);
    // Sorted, each class is easy to guess from the last: the progressive error is far too low.
    assert!(
        error(&plain, "progressive_error") < error(&mixed, "progressive_error"),
        "{plain} {mixed}"
    );
    // The shuffle is seeded: the same run twice gives the same numbers.
    let again = json(&[&SPECIES[..], &["--shuffle-buffer", "400", &sorted]].concat());
    assert_eq!(mixed["progressive_error"], again["progressive_error"]);
    let other = json(
        &[
            &SPECIES[..],
            &["--shuffle-buffer", "400", "--seed", "3", &sorted],
        ]
        .concat(),
    );
    assert_ne!(mixed["multiclass_log_loss"], other["multiclass_log_loss"]);
}

/// Three classes: 3 when namespace `c` says `u`; else 1 or 2 by the XOR of `a = p` and `b =
/// r`, which no linear model of the namespaces' features separates; their product features
/// (`-q ab`) do.
fn xor_vw() -> String {
    let mut text = String::new();
    for i in 0..600 {
        let x = ["p", "q"][i % 2];
        let y = ["r", "s"][(i / 2 + i / 7) % 2];
        let z = ["t", "t", "u"][(i / 4 + i / 5) % 3];
        let class = match (x == "p") == (y == "r") {
            _ if z == "u" => 3,
            true => 1,
            false => 2,
        };
        text.push_str(&format!("{class} |a {x} |b {y} |c {z}\n"));
    }
    text
}

#[test]
fn interactions_cross_namespaces_and_the_model_keeps_them() {
    let data = scratch("xor3.vw", &xor_vw());
    let base = ADAGRAD;
    let without = json(&[&base[..], &[data.as_str()]].concat());
    let model = scratch("xor3.model", "");
    let with = json(&[&base[..], &["-q", "ab", "-f", &model, &data]].concat());
    assert!(error(&without, "progressive_error") > 0.3, "{without}");
    assert!(error(&with, "progressive_error") < 0.05, "{with}");
    // test and predict cross the same namespaces (kept in the model).
    let tested = json(&["test", "--json", "-i", &model, &data]);
    assert_eq!(error(&tested, "error"), 0.0, "{tested}");
    let predictions = scratch("xor3.pred", "");
    let out = run(&["predict", "-i", &model, "-p", &predictions, &data]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let predicted = std::fs::read_to_string(&predictions).unwrap();
    let text = xor_vw();
    let labels: Vec<&str> = text.lines().map(|l| l.split(' ').next().unwrap()).collect();
    let got: Vec<&str> = predicted
        .lines()
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    assert_eq!(got, labels);
    let err = refused(&["train", "--multiclass", "-q", "ab", &penguins()]);
    assert!(
        err.contains("-q/--interactions cross VW namespaces"),
        "{err}"
    );
}

/// 600 rows of three classes told by features 1–3, with 30 noise features.
fn noisy_libsvm() -> String {
    let mut text = String::new();
    let mut state = 11u64;
    for i in 0..600 {
        let class = i % 3 + 1;
        let mut row = format!("{class} {class}:1");
        for j in 4..=33 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            if (state >> 60) < 4 {
                row.push_str(&format!(" {j}:1"));
            }
        }
        text.push_str(&row);
        text.push('\n');
    }
    text
}

#[test]
fn l1_and_l2_penalise_the_one_against_all_members() {
    let data = scratch("noisy.libsvm", &noisy_libsvm());
    let base = ADAGRAD;
    let plain = json(&[&base[..], &[data.as_str()]].concat());
    let light = json(&[&base[..], &["--l1", "0.001", data.as_str()]].concat());
    let heavy = json(&[&base[..], &["--l1", "5", data.as_str()]].concat());
    let ridge = json(&[&base[..], &["--l2", "0.01", data.as_str()]].concat());
    assert!(error(&plain, "progressive_error") < 0.05, "{plain}");
    assert!(error(&light, "progressive_error") < 0.05, "{light}");
    assert!(error(&ridge, "progressive_error") < 0.05, "{ridge}");
    assert_ne!(plain["multiclass_log_loss"], light["multiclass_log_loss"]);
    // A penalty far above the gradients keeps every weight at 0: every class equally likely.
    let ln3 = 3f64.ln();
    assert!(
        (error(&heavy, "multiclass_log_loss") - ln3).abs() < 1e-9,
        "{heavy}"
    );
    let err = refused(&["train", "--multiclass", "--l1", "0.01", &data]);
    assert!(err.contains("--algo ogd or adagrad"), "{err}");
    let err = refused(&[
        "train",
        "--multiclass",
        "--reduction",
        "softmax",
        "--l2",
        "0.01",
        &data,
    ]);
    assert!(err.contains("softmax step is a Newton step"), "{err}");
}

/// `--reduction softmax` takes its sketch flags (it used to ignore them): the softmax
/// defaults given explicitly (`--size 20 --alpha0 1 --c 0.2`, and on this dense input the
/// curvature the default chooses, `rfd-fast`) are the run without them, each flag changes the
/// run (`--oja-c` too, which was once ignored), and a first-order `--algo` is refused.
#[test]
fn softmax_takes_the_sketch_flags() {
    let data = penguins();
    let softmax = |extra: &[&str]| {
        let mut args = SPECIES.to_vec();
        args.extend(["--reduction", "softmax"]);
        args.extend(extra);
        args.push(&data);
        json(&args)
    };
    let loss = |v: &serde_json::Value| error(v, "multiclass_log_loss");
    let plain = softmax(&[]);
    let explicit = softmax(&[
        "--size",
        "20",
        "--alpha0",
        "1",
        "--c",
        "0.2",
        "--curvature",
        "rfd-fast",
    ]);
    assert_eq!(loss(&plain), loss(&explicit), "{plain} / {explicit}");
    let oja = softmax(&["--curvature", "oja"]);
    let oja_half = softmax(&["--curvature", "oja", "--oja-c", "0.5"]);
    assert_ne!(loss(&oja), loss(&oja_half), "--oja-c: {oja} / {oja_half}");
    for flags in [
        &["--size", "2"][..],
        &["--alpha0", "20"],
        &["--c", "1"],
        // Not `fd`: with m = 20 ≥ d = 10 neither FD nor RFD ever shrinks, and both (α = α₀ = 1)
        // are the exact Newton step — the same run. RP's projection differs.
        &["--curvature", "rp"],
        &["--diag"],
    ] {
        let changed = softmax(flags);
        assert_ne!(loss(&plain), loss(&changed), "{flags:?}: {changed}");
    }
    let mut args = SPECIES.to_vec();
    args.extend(["--reduction", "softmax", "--algo", "adagrad", &data]);
    let err = refused(&args);
    assert!(
        err.contains("--reduction softmax")
            && err.contains("algorithm adagrad applies to one-against-all (oaa)"),
        "{err}"
    );
}

/// Sparse time exists for the softmax learner over a doubling FD/RFD, an RP or an Oja sketch,
/// with or without `--diag`: those run with `--representation sparse`, and each learns the same
/// fit as the dense representation (to rounding; RP draws the same rows, and Oja's sparse
/// start differs, so only its error is asked to be finite). Per-row FD and the full curvature
/// are refused before learning, with the flag that works; under the default representation
/// they run dense-time.
#[test]
fn softmax_sparse_time_over_each_sketch() {
    let data = penguins();
    let run_with = |extra: &[&str]| {
        let mut args = SPECIES.to_vec();
        args.extend(["--reduction", "softmax"]);
        args.extend(extra);
        args.push(&data);
        args.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let loss_of = |extra: &[&str]| {
        let args = run_with(extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        error(&json(&args), "multiclass_log_loss")
    };
    for flags in [
        &["--curvature", "rp"][..],
        &["--curvature", "oja"],
        // FD needs 2m ≤ d̃ = 11 in sparse time.
        &["--diag", "--size", "4"],
        &["--curvature", "rp", "--diag"],
    ] {
        let sparse = loss_of(&[flags, &["--representation", "sparse"]].concat());
        assert!(sparse.is_finite(), "{flags:?}");
        if flags[..2] != ["--curvature", "oja"] {
            let dense = loss_of(&[flags, &["--representation", "dense"]].concat());
            assert!(
                (sparse - dense).abs() <= 1e-9 * dense.abs(),
                "{flags:?}: {sparse} vs {dense}"
            );
        }
    }
    for curvature in ["fd", "full"] {
        let args = run_with(&["--curvature", curvature, "--representation", "sparse"]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let err = refused(&args);
        assert!(
            err.contains(&format!(
                "fd-fast, rfd-fast, rp or oja, not {curvature}: use --representation dense"
            )),
            "{curvature}: {err}"
        );
        let args = run_with(&["--curvature", curvature]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert!(
            error(&json(&args), "progressive_error").is_finite(),
            "{curvature}"
        );
    }
}

/// `--retire` on a multiclass run is refused with the core's message (the one Python's
/// `retire=` shows too, `bindings/python/tests/test_retire.py`), before any learning.
#[test]
fn retire_is_refused_with_the_cores_message() {
    let mut args = SPECIES.to_vec();
    let data = penguins();
    args.extend(["--retire", "0.1", &data]);
    let err = refused(&args);
    let message = sketchlearn::linear::multiclass_refuses_retire("--retire");
    assert!(err.contains(&message), "{err}");
    assert!(
        message.contains("multiclass keeps the default 1e-20"),
        "{message}"
    );
}
