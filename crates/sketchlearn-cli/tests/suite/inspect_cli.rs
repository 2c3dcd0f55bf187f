//! `sketchlearn inspect` end to end (issue 25, item 4): text and JSON.

use crate::common;

use common::{repo_file, run, scratch_dir, stdout_text, train_quiet};

fn model(name: &str, flags: &[&str]) -> String {
    let path = scratch_dir("inspect")
        .join(name)
        .to_string_lossy()
        .into_owned();
    train_quiet(&path, flags, &repo_file("data/heart.libsvm"));
    path
}

fn stdout(out: std::process::Output) -> String {
    stdout_text(&out)
}

#[test]
fn text_shows_learner_weights_and_sketch() {
    let m = model("fd.skl", &["--curvature", "fd", "--size", "4"]);
    let text = stdout(run(&["inspect", "--top", "3", &m]));
    assert!(text.contains("learner        newton/fd m=4"), "{text}");
    assert!(text.contains("loss           logistic"), "{text}");
    assert!(text.contains("dimension      13"), "{text}");
    assert!(text.contains("examples seen  270"), "{text}");
    assert!(text.contains("intercept "), "{text}");
    assert!(text.contains("top 3 weights by magnitude"), "{text}");
    assert!(text.contains("sketches (top singular values)"), "{text}");
    assert!(text
        .lines()
        .any(|l| l.trim_start().starts_with("learner") && l.contains(" fd ")));
}

#[test]
fn json_has_sorted_weights_sketches_and_mixture() {
    let m = model("fd2.skl", &["--curvature", "fd", "--size", "4"]);
    let v: serde_json::Value =
        serde_json::from_str(&stdout(run(&["inspect", "--json", "--top", "5", &m]))).unwrap();
    assert_eq!(v["dim"], 13);
    assert_eq!(v["examples_seen"], 270);
    let w: Vec<f64> = v["top_weights"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["weight"].as_f64().unwrap().abs())
        .collect();
    assert_eq!(w.len(), 5);
    assert!(w.windows(2).all(|p| p[0] >= p[1]), "{w:?}");
    let s = v["sketches"][0]["singular_values"].as_array().unwrap();
    assert!(!s.is_empty() && s.len() <= 4);
    assert!(v.get("mixture").is_none());

    let auto = model("auto.skl", &[]);
    let v: serde_json::Value =
        serde_json::from_str(&stdout(run(&["inspect", "--json", &auto]))).unwrap();
    let members = v["mixture"].as_array().unwrap();
    assert_eq!(members.len(), 4);
    let total: f64 = members.iter().map(|m| m["weight"].as_f64().unwrap()).sum();
    assert!((total - 1.0).abs() < 1e-9, "{total}");
    assert!(v["sketches"].as_array().unwrap().len() >= 2);
}

#[test]
fn a_file_that_is_not_a_model_is_an_error() {
    let out = run(&["inspect", &repo_file("data/heart.libsvm")]);
    assert!(!out.status.success());
    assert!(!String::from_utf8_lossy(&out.stderr).is_empty());
}

/// A multiclass model trained on CSV: each class's largest weights, named by the schema, in
/// text and JSON (issue 24).
#[test]
fn a_multiclass_model_shows_each_classes_weights_by_name() {
    let dir = std::env::temp_dir().join(format!("sketchlearn-inspect-mc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("colors.csv").to_string_lossy().into_owned();
    let mut text = String::from("kind,color,size\n");
    for i in 0..90 {
        let (kind, color) = [("a", "red"), ("b", "green"), ("c", "blue")][i % 3];
        text.push_str(&format!("{kind},{color},{}\n", (i % 7) as f64 / 7.0));
    }
    std::fs::write(&csv, text).unwrap();
    for reduction in ["oaa", "softmax"] {
        let path = dir
            .join(format!("{reduction}.model"))
            .to_string_lossy()
            .into_owned();
        stdout(run(&[
            "train",
            "--quiet",
            "--multiclass",
            "--reduction",
            reduction,
            "--label-column",
            "kind",
            "-f",
            &path,
            &csv,
        ]));
        let shown = stdout(run(&["inspect", "--top", "4", &path]));
        for class in ["a", "b", "c"] {
            let want = format!("class {class}");
            let at = shown
                .find(&want)
                .unwrap_or_else(|| panic!("{want}:\n{shown}"));
            let table: Vec<&str> = shown[at..].lines().take(7).collect();
            assert!(
                table[3..].iter().any(|l| l.ends_with("color=red")),
                "{table:?}"
            );
        }
        let json: serde_json::Value =
            serde_json::from_str(&stdout(run(&["inspect", "--json", "--top", "4", &path])))
                .unwrap();
        let classes = json["class_weights"].as_array().unwrap();
        assert_eq!(classes.len(), 3);
        // Each class's own colour has its largest colour weight, and a positive one.
        for (k, own) in ["color=red", "color=green", "color=blue"]
            .iter()
            .enumerate()
        {
            assert_eq!(classes[k]["class"], ["a", "b", "c"][k]);
            let weights = classes[k]["top_weights"].as_array().unwrap();
            let best = weights
                .iter()
                .filter(|w| w["name"].as_str().unwrap().starts_with("color="))
                .max_by(|x, y| {
                    x["weight"]
                        .as_f64()
                        .partial_cmp(&y["weight"].as_f64())
                        .unwrap()
                })
                .unwrap();
            assert_eq!(best["name"], *own, "{reduction}: {weights:?}");
            assert!(
                best["weight"].as_f64().unwrap() > 0.0,
                "{reduction}: {weights:?}"
            );
        }
    }
}

/// An FM model trained with side columns (`fm --columns user,item,rating,age,genres,city` on the
/// committed `ratings_side.csv`): `inspect` lists its side columns and names every weight —
/// `user=<id>`, `item=<id>`, `age` (numeric), `genres=<value>` and `city=<value>` (one-hot).
#[test]
fn fm_model_names_ids_and_side_columns() {
    let m = scratch_dir("inspect")
        .join("fm_side.skl")
        .to_string_lossy()
        .into_owned();
    let data = repo_file("crates/sketchlearn-cli/tests/data/ratings_side.csv");
    let spec = "user,item,rating,age,genres,city";
    common::ok(&run(&["fm", "--quiet", "--columns", spec, "-f", &m, &data]));
    let text = stdout(run(&["inspect", "--top", "4", &m]));
    assert!(text.contains("learner        sftrl-split"), "{text}");
    assert!(text.contains("input          ratings"), "{text}");
    assert!(text.contains("side columns   age, genres, city"), "{text}");
    let v: serde_json::Value =
        serde_json::from_str(&stdout(run(&["inspect", "--json", "--top", "1000", &m]))).unwrap();
    let dim = v["dim"].as_u64().unwrap() as usize;
    let weights = v["top_weights"].as_array().unwrap();
    assert_eq!(weights.len(), dim);
    let name = |w: &serde_json::Value| w["name"].as_str().unwrap().to_owned();
    let mut names: Vec<(u64, String)> = weights
        .iter()
        .map(|w| (w["index"].as_u64().unwrap(), name(w)))
        .collect();
    names.sort();
    // Users, then items, then the side columns' 7 features (the last indices).
    assert_eq!(names[0].1, "user=u0");
    assert!(names.iter().any(|(_, n)| n == "item=m2"));
    let side: Vec<&str> = names[dim - 7..].iter().map(|(_, n)| n.as_str()).collect();
    assert_eq!(side[0], "age");
    assert_eq!(side.iter().filter(|n| n.starts_with("genres=")).count(), 3);
    assert_eq!(side.iter().filter(|n| n.starts_with("city=")).count(), 3);
    assert!(names[..dim - 7]
        .iter()
        .all(|(_, n)| n.starts_with("user=") || n.starts_with("item=")));
}

/// An FM model's intercept policy: a squared-loss model trained with the default is centred at
/// the running label mean, and `inspect` shows it with `μ` (the mean of the training part's
/// ratings) and the count it is over; `--intercept MU` shows a fixed centre.
#[test]
fn fm_model_shows_its_label_mean_centre() {
    let dir = scratch_dir("inspect");
    let m = dir.join("fm_mean.skl").to_string_lossy().into_owned();
    let data = repo_file("crates/sketchlearn-cli/tests/data/ratings_side.csv");
    let report: serde_json::Value = serde_json::from_str(&stdout(run(&[
        "fm",
        "--quiet",
        "--json",
        "--columns",
        "user,item,rating",
        "-f",
        &m,
        &data,
    ])))
    .unwrap();
    let n = report["train_examples"].as_u64().unwrap() as usize;
    // The training part's mean rating, from the file (header; rating in the third column).
    let text = std::fs::read_to_string(&data).unwrap();
    let ratings: Vec<f64> = text
        .lines()
        .skip(1)
        .take(n)
        .map(|l| l.split(',').nth(2).unwrap().parse().unwrap())
        .collect();
    let mean = ratings.iter().sum::<f64>() / n as f64;
    let shown = stdout(run(&["inspect", &m]));
    let want = format!("centred at     label mean {mean:.6} over {n} labels");
    assert!(shown.contains(&want), "{want}\n{shown}");
    let v: serde_json::Value =
        serde_json::from_str(&stdout(run(&["inspect", "--json", &m]))).unwrap();
    assert_eq!(v["centred_at"]["label_mean"], true);
    assert!((v["centred_at"]["value"].as_f64().unwrap() - mean).abs() < 1e-9);
    assert_eq!(v["centred_at"]["labels"].as_f64().unwrap(), n as f64);
    // A fixed intercept.
    let fixed = dir.join("fm_fixed.skl").to_string_lossy().into_owned();
    common::ok(&run(&[
        "fm",
        "--quiet",
        "--intercept",
        "2.5",
        "--columns",
        "user,item,rating",
        "-f",
        &fixed,
        &data,
    ]));
    assert!(stdout(run(&["inspect", &fixed])).contains("centred at     2.500000 (fixed)"));
    let v: serde_json::Value =
        serde_json::from_str(&stdout(run(&["inspect", "--json", &fixed]))).unwrap();
    assert_eq!(v["centred_at"]["label_mean"], false);
    assert_eq!(v["centred_at"]["value"], 2.5);
    assert!(v["centred_at"].get("labels").is_none());
}
