//! End-to-end tests of `sketchlearn drp`: the report, the saved model with `sketchlearn test`,
//! `--classes`, and clear errors for invalid input.

use crate::common;
use common::test_json;

use sketchlearn::drp::{low_rank, Dataset, LowRankSpec};
use sketchlearn::Row;
use std::io::Write;
use std::path::PathBuf;

use common::{assert_mentions, failure, json, ok, run, Scratch};

fn write_libsvm(data: &Dataset, path: &PathBuf) {
    let mut f = std::fs::File::create(path).unwrap();
    for i in 0..data.len() {
        write!(f, "{}", data.labels()[i]).unwrap();
        if let Row::Sparse { indices, values } = data.row(i) {
            for (j, v) in indices.iter().zip(values) {
                write!(f, " {}:{}", j + 1, v).unwrap();
            }
        }
        writeln!(f).unwrap();
    }
}

/// Rank-3 data, d = 300: a train and a test file in `dir`.
fn low_rank_files(dir: &Scratch) -> (String, String) {
    let all = low_rank(&LowRankSpec {
        n: 400,
        d: 300,
        rank: 3,
        flip: 0.05,
        seed: 8,
    })
    .unwrap();
    let (train, test) = all.split_at(250);
    let (a, b) = (dir.join("train.svm"), dir.join("test.svm"));
    write_libsvm(&train, &a);
    write_libsvm(&test, &b);
    (
        a.to_string_lossy().into_owned(),
        b.to_string_lossy().into_owned(),
    )
}

#[test]
fn drp_json_reports_every_solution_and_recovery_errors() {
    let dir = Scratch::new("drp-cli-json");
    let (train, test) = low_rank_files(&dir);
    for loss in ["ridge", "logistic", "smooth-hinge"] {
        let out = run(&[
            "drp",
            "--loss",
            loss,
            "--lambda",
            "0.5",
            "--size",
            "200",
            "--iterations",
            "4",
            "--exact",
            "--test",
            &test,
            "--seed",
            "3",
            "--json",
            &train,
        ]);
        let v = json(&out);
        assert_eq!(v["examples"], 250);
        assert_eq!(v["dim"], 300);
        assert_eq!(v["test_examples"], 150);
        assert_eq!(v["status"], "completed", "{loss}: {v}");
        let sol = v["solutions"].as_array().unwrap();
        let names: Vec<&str> = sol.iter().map(|s| s["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["naive", "alg1", "alg2", "alg2", "alg2", "exact"]);
        let err = |k: usize| sol[k]["recovery_error"].as_f64().unwrap();
        // Theorem 3: naive ≈ √(297/200) ≈ 1.2; Alg. 1 small; Alg. 2 contracts (Theorem 5).
        assert!(err(0) > 0.8, "{loss}: {v}");
        assert!(err(1) < 0.3, "{loss}: {v}");
        assert!(err(4) < err(1) * 1e-2, "{loss}: {v}");
        assert_eq!(err(5), 0.0);
        for s in sol {
            let e = s["test_error"].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&e));
            assert!(s["seconds"].as_f64().unwrap() >= 0.0);
            assert!(s["objective"].as_f64().unwrap().is_finite());
        }
        // The recovered solution is as good a classifier as the exact one.
        let (e4, ex) = (
            sol[4]["test_error"].as_f64().unwrap(),
            sol[5]["test_error"].as_f64().unwrap(),
        );
        assert!((e4 - ex).abs() < 0.01, "{loss}: {e4} vs {ex}");
    }
}

#[test]
fn drp_table_output_and_saved_model_with_test_command() {
    let dir = Scratch::new("drp-cli-table");
    let (train, test) = low_rank_files(&dir);
    let model = dir.join("drp.model");
    let model_s = model.to_string_lossy().into_owned();
    let drp = |extra: &[&str]| {
        let mut args = vec![
            "drp",
            "--loss",
            "logistic",
            "--size",
            "150",
            "--iterations",
            "3",
        ];
        args.extend_from_slice(extra);
        run(&args)
    };
    let out = drp(&["--exact", "--test", &test, "-f", &model_s, &train]);
    ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "naive",
        "alg1",
        "alg2 t=3",
        "exact",
        "algorithm 2: completed",
        "saved the t=3 iterate",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
    // The same run as JSON gives the saved iterate's test error...
    let v = json(&drp(&["--test", &test, "--json", &train]));
    let saved = v["solutions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["t"] == 3)
        .unwrap()["test_error"]
        .as_f64()
        .unwrap();
    // ...which `sketchlearn test` reproduces from the model file.
    let t = json(&run(&["test", "-i", &model_s, "--json", &test]));
    assert_eq!(t["examples"], 150);
    assert!(
        (t["error"].as_f64().unwrap() - saved).abs() < 1e-12,
        "{t} vs {saved}"
    );
    // A DRP model has fixed weights: resuming training is refused with a clear message.
    let out = run(&["train", "-i", &model_s, &train]);
    let err = failure(&out);
    assert!(err.contains("fixed weights"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn drp_classes_maps_two_labels_of_a_multiclass_file() {
    let dir = Scratch::new("drp-cli-classes");
    let path = dir.join("multi.svm");
    std::fs::write(
        &path,
        "3 1:1 2:0.5\n8 1:-1 3:1\n5 2:1\n3 1:0.8 3:-0.2\n8 2:-1 3:0.7\n",
    )
    .unwrap();
    let p = path.to_string_lossy().into_owned();
    let v = json(&run(&[
        "drp",
        "--size",
        "4",
        "--classes",
        "3,8",
        "--json",
        &p,
    ]));
    assert_eq!(v["examples"], 4);
    // Without --classes the labels 3, 8 and 5 are refused, naming the line and the fix.
    let out = run(&["drp", "--size", "4", &p]);
    let err = failure(&out);
    assert_mentions(&err, &["multi.svm:1", "--classes"]);
}

#[test]
fn drp_invalid_arguments_are_clear_errors() {
    let dir = Scratch::new("drp-cli-invalid");
    let (train, _) = low_rank_files(&dir);
    for (args, needle) in [
        (vec!["--lambda", "0", "--size", "5"], "lambda"),
        (vec!["--lambda", "nan", "--size", "5"], "lambda"),
        (vec!["--size", "0"], "projection size"),
        (vec!["--size", "5", "--iterations", "0"], "iterations"),
        (vec!["--size", "5", "--exact-tolerance", "2"], "tolerance"),
        (vec!["--size", "5", "--loss", "hinge"], "unknown loss"),
        (
            vec!["--size", "5", "--classes", "1"],
            "two different labels",
        ),
    ] {
        let mut all = vec!["drp"];
        all.extend(args.iter());
        all.push(&train);
        let out = run(&all);
        assert!(!out.status.success(), "{all:?} succeeded");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{all:?}: {err}");
        assert!(!err.contains("panicked"), "{all:?}: {err}");
    }
    let out = run(&["drp", "--size", "5", "/nonexistent/file.svm"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/file.svm"));
}

/// `-f` saves the final iterate, and `test` and `inspect` name the model as a DRP model. On
/// data of rank 150 with m = 10, Algorithm 2 diverges: with `--keep-going` the final iterate is
/// the last (t = 6, not the one with the smallest ‖∇f‖, t = 1), without it the one before the
/// divergence.
#[test]
fn drp_saves_the_final_iterate_and_test_and_inspect_name_it() {
    let dir = Scratch::new("drp-cli-final");
    let all = low_rank(&LowRankSpec {
        n: 200,
        d: 400,
        rank: 150,
        flip: 0.1,
        seed: 21,
    })
    .unwrap();
    let data = dir.join("rank150.svm");
    write_libsvm(&all, &data);
    let data = data.to_string_lossy().into_owned();
    let model = dir.join("drp.model").to_string_lossy().into_owned();
    let drp = |extra: &[&str]| {
        let mut args = vec![
            "drp",
            "--loss",
            "ridge",
            "--lambda",
            "0.001",
            "--size",
            "10",
            "--iterations",
            "6",
            "--json",
            "-f",
            &model,
        ];
        args.extend_from_slice(extra);
        args.push(&data);
        json(&run(&args))
    };
    let kept = drp(&["--keep-going"]);
    let at = kept["diverged_at"].as_u64().expect("diverges");
    assert!(at < 6, "{kept}");
    assert_eq!(kept["saved_iteration"], 6, "{kept}");
    let weights = |v: &serde_json::Value| v["top_weights"].to_string();
    let last = json(&run(&["inspect", "--json", &model]));
    assert!(
        last["learner"].as_str().unwrap().starts_with("drp ridge")
            && last["learner"]
                .as_str()
                .unwrap()
                .ends_with("(Alg.2 iterate t=6)"),
        "{last}"
    );
    let t = test_json(&model, &data);
    assert!(
        t["learner"].as_str().unwrap().starts_with("drp ridge"),
        "{t}"
    );
    let text = ok(&run(&["test", "-i", &model, &data])).stdout.clone();
    let text = String::from_utf8_lossy(&text);
    assert!(
        text.contains("drp ridge") && !text.contains("ogd"),
        "{text}"
    );
    let stopped = drp(&[]);
    assert_eq!(stopped["diverged_at"], at, "{stopped}");
    assert_eq!(stopped["saved_iteration"], at - 1, "{stopped}");
    let before = json(&run(&["inspect", "--json", &model]));
    assert_ne!(weights(&before), weights(&last));
}

/// Solves `(λI + XᵀX) w = Xᵀt` (ridge regression's normal equation, no intercept) by Gaussian
/// elimination with partial pivoting: independent of the library's solvers.
fn normal_equation(x: &[Vec<f64>], t: &[f64], lambda: f64) -> Vec<f64> {
    let d = x[0].len();
    let mut a = vec![vec![0.0; d + 1]; d];
    for (row, &ti) in x.iter().zip(t) {
        for j in 0..d {
            for k in 0..d {
                a[j][k] += row[j] * row[k];
            }
            a[j][d] += row[j] * ti;
        }
    }
    for (j, r) in a.iter_mut().enumerate() {
        r[j] += lambda;
    }
    for c in 0..d {
        let p = (c..d)
            .max_by(|&i, &k| a[i][c].abs().total_cmp(&a[k][c].abs()))
            .unwrap();
        a.swap(c, p);
        let pivot = a[c].clone();
        for row in &mut a[c + 1..] {
            let f = row[c] / pivot[c];
            for (x, p) in row[c..].iter_mut().zip(&pivot[c..]) {
                *x -= f * p;
            }
        }
    }
    let mut w = vec![0.0; d];
    for c in (0..d).rev() {
        let s: f64 = (c + 1..d).map(|k| a[c][k] * w[k]).sum();
        w[c] = (a[c][d] - s) / a[c][c];
    }
    w
}

/// `n` rows of 6 features with real targets `t = xᵀw₀ + noise` (a fixed pattern), as LIBSVM.
fn regression_rows(n: usize) -> (Vec<Vec<f64>>, Vec<f64>, String) {
    let w0 = [1.5, -2.0, 0.5, 3.0, 0.0, -0.75];
    let mut text = String::new();
    let (mut x, mut t) = (Vec::new(), Vec::new());
    for i in 0..n {
        let row: Vec<f64> = (0..6)
            .map(|j| ((i * 37 + j * 11 + i * j) % 29) as f64 / 29.0 - 0.5)
            .collect();
        let noise = ((i * 17) % 13) as f64 / 13.0 - 0.5;
        let target = row.iter().zip(w0).map(|(a, b)| a * b).sum::<f64>() + 0.2 * noise;
        text.push_str(&format!("{target}"));
        for (j, v) in row.iter().enumerate() {
            text.push_str(&format!(" {}:{v}", j + 1));
        }
        text.push('\n');
        x.push(row);
        t.push(target);
    }
    (x, t, text)
}

#[test]
fn drp_regression_reads_real_targets_and_solves_ridge_regression() {
    let dir = Scratch::new("drp-cli-regression");
    let (x, t, text) = regression_rows(80);
    let data = dir.join("reg.svm").to_string_lossy().into_owned();
    std::fs::write(&data, &text).unwrap();
    let model = dir.join("reg.model").to_string_lossy().into_owned();
    let lambda = 0.5;
    let v = json(&run(&[
        "drp",
        "--loss",
        "ridge",
        "--regression",
        "--lambda",
        "0.5",
        "--size",
        "60",
        "--iterations",
        "30",
        "--exact",
        "--json",
        "--test",
        &data,
        "-f",
        &model,
        &data,
    ]));
    assert_eq!(v["regression"], true, "{v}");
    let w = normal_equation(&x, &t, lambda);
    let rmse = |w: &[f64]| {
        let s: f64 = x
            .iter()
            .zip(&t)
            .map(|(r, ti)| (ti - r.iter().zip(w).map(|(a, b)| a * b).sum::<f64>()).powi(2))
            .sum();
        (s / x.len() as f64).sqrt()
    };
    let sol = v["solutions"].as_array().unwrap();
    let exact = sol.last().unwrap();
    assert_eq!(exact["name"], "exact");
    let exact_rmse = exact["test_rmse"].as_f64().unwrap();
    assert!(
        (exact_rmse - rmse(&w)).abs() < 1e-9,
        "{exact_rmse} vs {}",
        rmse(&w)
    );
    assert!(exact["test_error"].is_null(), "{exact}");
    // The saved final iterate of Algorithm 2 predicts what the normal equation's w predicts
    // (n = 80 ≫ d = 6: Algorithm 2 contracts for m = 60; at m ≤ 12 it diverges here).
    assert_eq!(v["status"], "completed", "{v}");
    let raw = ok(&run(&["predict", "-i", &model, "--raw", &data]))
        .stdout
        .clone();
    let preds: Vec<f64> = String::from_utf8_lossy(&raw)
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(preds.len(), x.len());
    for (p, r) in preds.iter().zip(&x) {
        let want: f64 = r.iter().zip(&w).map(|(a, b)| a * b).sum();
        assert!(
            (p - want).abs() < 1e-6 * (1.0 + want.abs()),
            "{p} vs {want}"
        );
    }
    // The table names its column; without --regression a real label names the flag.
    let table = ok(&run(&[
        "drp",
        "--loss",
        "ridge",
        "--regression",
        "--size",
        "6",
        "--test",
        &data,
        &data,
    ]))
    .stdout
    .clone();
    assert_mentions(&String::from_utf8_lossy(&table), &["test RMSE"]);
    let err = failure(&run(&["drp", "--loss", "ridge", "--size", "6", &data]));
    assert_mentions(&err, &["reg.svm:1: label", "--loss ridge --regression"]);
}

#[test]
fn drp_regression_refuses_classification_options() {
    let dir = Scratch::new("drp-cli-regression-errors");
    let data = dir.join("reg.svm").to_string_lossy().into_owned();
    std::fs::write(&data, regression_rows(10).2).unwrap();
    let err = failure(&run(&["drp", "--regression", "--size", "4", &data]));
    assert_mentions(
        &err,
        &["--regression needs --loss ridge", "--loss logistic"],
    );
    let err = failure(&run(&[
        "drp",
        "--loss",
        "ridge",
        "--regression",
        "--classes",
        "1,2",
        "--size",
        "4",
        &data,
    ]));
    assert_mentions(&err, &["--regression", "--classes"]);
}
