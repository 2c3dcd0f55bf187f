//! CSV with a header and a named label column through `train` (issue 25, item 2).

use std::path::PathBuf;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sketchlearn"))
        .args(args)
        .output()
        .expect("binary runs")
}

fn shared(name: &str) -> Option<String> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data")
        .join(name);
    p.exists().then(|| p.to_string_lossy().into_owned())
}

fn tmp(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("sketchlearn-csv-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

#[test]
fn attrition_trains_with_a_named_string_label() {
    let Some(data) = shared("attrition.csv") else {
        return;
    };
    let out = run(&["train", "--json", "--label-column", "Attrition", &data]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("csv: 1470 rows"), "{err}");
    assert!(err.contains("classes No,Yes"), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["examples"], 1470);
    // Better than always answering the majority class "No" (16% attrition).
    assert!(v["progressive_error"].as_f64().unwrap() < 0.16, "{v}");
}

#[test]
fn penguins_parse_and_three_classes_are_named() {
    let Some(data) = shared("penguins.shuf.csv") else {
        return;
    };
    let out = run(&["train", "--label-column", "species", &data]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("3 classes (Adelie,Chinstrap,Gentoo)") && err.contains("--multiclass"),
        "{err}"
    );
    // A regression target with missing values: a clear error at the first one.
    let out = run(&[
        "train",
        "--loss",
        "squared",
        "--label-column",
        "body_mass_g",
        &data,
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("penguins.shuf.csv:90:")
            && err.contains("missing label in column 'body_mass_g'"),
        "{err}"
    );
}

#[test]
fn regression_on_a_csv_with_string_columns_and_missing_values() {
    let mut text = String::from("id,city,x,y\n");
    for k in 0..200 {
        let city = ["Oslo", "Lima", "Pune"][k % 3];
        let x = if k % 17 == 0 {
            "NA".to_string()
        } else {
            format!("{}", (k % 10) as f64 / 10.0)
        };
        let y = 1.0 + (k % 10) as f64 / 10.0 + (k % 3) as f64;
        text.push_str(&format!("{k},{city},{x},{y}\n"));
    }
    let data = tmp("reg.csv", &text);
    let out = run(&[
        "train",
        "--json",
        "--loss",
        "squared",
        "--label-column",
        "y",
        "--ignore-columns",
        "id",
        &data,
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("csv: 200 rows, d = 4 (1 numeric, 1 one-hot and 0 hashed columns)"),
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["examples"], 200);
    assert_eq!(v["dim"], 4);
}

#[test]
fn csv_errors_name_file_line_and_column() {
    let bad = tmp("bad.csv", "y,x,c\n1,2,a\n0,3\n");
    let out = run(&["train", "--label-column", "y", &bad]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("bad.csv:3: expected 3 fields, found 2"),
        "{err}"
    );

    let out = run(&["train", "--label-column", "nope", &bad]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("label column 'nope' is not one of the 3 columns: y, x, c"),
        "{err}"
    );
    let good = tmp("good.csv", "y,x\n1,2\n0,3\n");
    let out = run(&["train", &good]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no label column: give --label-column NAME|INDEX (columns: y, x)"),
        "{err}"
    );
}
