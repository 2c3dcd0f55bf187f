//! CSV with a header and a named label column through `train` (issue 25, item 2).

use crate::common;

use common::{
    assert_mentions, repo_file, run, run_with_stdin, scratch_dir, shared, test_json, train_quiet,
};
use std::process::Output;

/// The JSON of a run that succeeded, without its timing fields.
fn json_without_timing(out: &Output) -> serde_json::Value {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let mut v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for k in ["seconds", "examples_per_second"] {
        v.as_object_mut().unwrap().remove(k);
    }
    v
}

#[test]
fn attrition_from_a_pipe_trains_as_the_file_does() {
    let Some(data) = shared("attrition.csv") else {
        return;
    };
    let text = std::fs::read(&data).unwrap();
    let (from_file, from_pipe) = (scratch_path("file.model"), scratch_path("pipe.model"));
    let file = run(&[
        "train",
        "--json",
        "-f",
        &from_file,
        "--label-column",
        "Attrition",
        &data,
    ]);
    let pipe = run_with_stdin(
        &[
            "train",
            "--json",
            "-f",
            &from_pipe,
            "--label-column",
            "Attrition",
            "-",
        ],
        &text,
    );
    let (f, p) = (json_without_timing(&file), json_without_timing(&pipe));
    assert_eq!(f, p);
    assert_eq!(p["examples"], 1470);
    assert!(p["progressive_error"].as_f64().unwrap() < 0.16, "{p}");
    // The same model, byte for byte, and it tests a piped CSV through its columns.
    assert_eq!(
        std::fs::read(&from_file).unwrap(),
        std::fs::read(&from_pipe).unwrap()
    );
    let tested = run_with_stdin(&["test", "--json", "-i", &from_pipe, "-"], &text);
    let t = json_without_timing(&tested);
    assert_eq!(t["examples"], 1470);
}

#[test]
fn a_piped_csv_with_three_classes_trains_a_multiclass_model_as_the_file_does() {
    let data = repo_file("data/penguins.csv");
    let text = std::fs::read(&data).unwrap();
    let args = [
        "train",
        "--json",
        "--multiclass",
        "--label-column",
        "species",
    ];
    let file = run(&[&args[..], &[data.as_str()]].concat());
    let pipe = run_with_stdin(&[&args[..], &["-"]].concat(), &text);
    let (f, p) = (json_without_timing(&file), json_without_timing(&pipe));
    assert_eq!(f, p);
    assert_eq!(p["examples"], 344);
    assert!(p["progressive_error"].as_f64().unwrap() < 0.15, "{p}");
    // Without a CSV flag or --format csv, standard input is LIBSVM: a clear parse error.
    let out = run_with_stdin(&["train", "-"], &text);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("<stdin>:1"), "{err}");
}

/// A multiclass run on CSV prints the schema line a binary run prints (the one
/// `run::describe_schema`), naming the classes without a positive one; `--quiet` leaves it out.
#[test]
fn a_multiclass_csv_run_prints_the_schema_line() {
    let data = repo_file("data/penguins.csv");
    let line = "csv: 344 rows, d = 10 (5 numeric, 2 one-hot and 0 hashed columns), classes \
                Adelie,Chinstrap,Gentoo";
    let args = ["train", "--multiclass", "--label-column", "species", &data];
    let err = ok(&run(&args));
    assert_eq!(err.lines().next(), Some(line), "{err}");
    let err = ok(&run(&[&args[..], &["--quiet"]].concat()));
    assert!(!err.contains("csv:"), "{err}");
    // The binary line still says which class is positive.
    let text: String = (0..40)
        .map(|k| format!("{},{k}\n", ["no", "yes"][k % 2]))
        .collect();
    let binary = tmp("schema_binary.csv", &format!("y,x\n{text}"));
    let err = ok(&run(&["train", "--label-column", "y", &binary]));
    assert!(
        err.contains("classes no,yes (the second positive)"),
        "{err}"
    );
}

/// The progress table shows a string-labelled run's labels and predictions in its classes
/// (`yes`/`no`, as `predict` prints them), not the internal `-1/+1` and margin; `--raw` shows
/// the numbers, as its predictions do.
#[test]
fn the_progress_table_shows_the_users_labels() {
    let text: String = (0..40)
        .map(|k| format!("{},{k}\n", ["no", "yes"][usize::from(k >= 20)]))
        .collect();
    let data = tmp("table_labels.csv", &format!("y,x\n{text}"));
    // The table's rows: the lines after the header whose 3rd field (example counter) is a number.
    let columns = |err: &str| -> Vec<(String, String)> {
        let rows = err.lines().skip_while(|l| !l.starts_with("loss"));
        rows.skip(1)
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .take_while(|f| f.len() == 7)
            .map(|f| (f[4].to_string(), f[5].to_string()))
            .collect()
    };
    let rows = columns(&ok(&run(&["train", "--label-column", "y", &data])));
    assert!(rows.len() >= 6, "{rows:?}");
    assert_eq!(rows[0].0, "no", "{rows:?}");
    assert_eq!(rows.last().unwrap().0, "yes", "{rows:?}");
    for (label, predict) in &rows {
        assert!(["no", "yes"].contains(&label.as_str()), "{rows:?}");
        assert!(["no", "yes"].contains(&predict.as_str()), "{rows:?}");
    }
    let raw = columns(&ok(&run(&["train", "--raw", "--label-column", "y", &data])));
    assert_eq!(raw[0].0, "-1.0000", "{raw:?}");
}

/// A model trained on a CSV with a header reads a scoring file's first line as its header
/// (`test` and `predict` have no `--no-header`): a headerless file whose first row is all text
/// is refused with that said, and the model's columns named, on `predict` and on `test`.
#[test]
fn a_headerless_scoring_file_with_a_text_first_row_is_told_its_first_line_is_the_header() {
    let rows: String = (0..30)
        .map(|k| {
            format!(
                "{},{},{}\n",
                ["no", "yes"][k % 2],
                ["red", "blue"][k % 2],
                k % 3
            )
        })
        .collect();
    let data = tmp("header_train.csv", &format!("y,colour,size\n{rows}"));
    let model = scratch_path("header.model");
    ok(&run(&[
        "train",
        "--quiet",
        "-f",
        &model,
        "--label-column",
        "y",
        &data,
    ]));
    let unlabelled = tmp("header_predict.csv", "red,small\nblue,1\n");
    let labelled = tmp("header_test.csv", "yes,red,small\nno,blue,1\n");
    for (command, file) in [("predict", &unlabelled), ("test", &labelled)] {
        let out = run(&[command, "-i", &model, file]);
        assert!(!out.status.success(), "{command}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_mentions(
            &err,
            &[
                ":1:",
                "read as the file's header",
                "must be a header naming the model's columns (y, colour, size)",
            ],
        );
    }
}

fn scratch_path(name: &str) -> String {
    let p = scratch_dir("csv-cli").join(name);
    std::fs::remove_file(&p).ok();
    p.to_string_lossy().into_owned()
}

fn tmp(name: &str, text: &str) -> String {
    let p = scratch_path(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// `train --json --loss squared --label-column LABEL --ignore-columns IGNORED DATA`, which must
/// succeed: its stderr and its JSON.
fn csv_regression(data: &str, label: &str, ignored: &str) -> (String, serde_json::Value) {
    let out = run(&[
        "train",
        "--json",
        "--loss",
        "squared",
        "--label-column",
        label,
        "--ignore-columns",
        ignored,
        data,
    ]);
    let err = ok(&out);
    (err, serde_json::from_slice(&out.stdout).unwrap())
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
    // The third species at its first line (the one label map of every format: issue 24).
    assert_mentions(
        &err,
        &[
            "penguins.shuf.csv:7:1: label Gentoo is not one of the classes Adelie,Chinstrap",
            "--multiclass",
        ],
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
    let (err, v) = csv_regression(&data, "y", "id");
    assert!(
        err.contains("csv: 200 rows, d = 4 (1 numeric, 1 one-hot and 0 hashed columns)"),
        "{err}"
    );
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

fn ok(out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    err
}

/// The CSV model keeps its columns: `test` reads another CSV through them (in any column
/// order), and `inspect` names the top weights.
#[test]
fn a_csv_model_is_tested_on_csv_and_inspect_names_its_features() {
    let Some(data) = shared("attrition.csv") else {
        return;
    };
    let model = tmp("attrition.model", "");
    std::fs::remove_file(&model).ok();
    train_quiet(&model, &["--label-column", "Attrition"], &data);
    let v = test_json(&model, &data);
    assert_eq!(v["examples"], 1470);
    assert!(v["error"].as_f64().unwrap() < 0.16, "{v}");

    // The same rows with the columns in another order read into the same features.
    let text = std::fs::read_to_string(&data).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let mut reordered: Vec<String> =
        vec![header.iter().rev().cloned().collect::<Vec<_>>().join(",")];
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        reordered.push(f.iter().rev().cloned().collect::<Vec<_>>().join(","));
    }
    let other = tmp("attrition_reversed.csv", &(reordered.join("\n") + "\n"));
    let out2 = run(&["test", "--json", "-i", &model, &other]);
    ok(&out2);
    let v2: serde_json::Value = serde_json::from_slice(&out2.stdout).unwrap();
    assert_eq!(v2["loss"], v["loss"], "same features in any column order");

    let out = run(&["inspect", "--json", &model]);
    ok(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = v["top_weights"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["name"].as_str().expect("every CSV feature has a name"))
        .collect();
    assert_eq!(names.len(), 10);
    assert!(
        names.iter().any(|n| n.contains('=')),
        "one-hot names: {names:?}"
    );
    assert_eq!(v["csv_columns"].as_array().unwrap().len(), 31);
}

/// Penguins: numeric and string columns with missing values (two rows have all four
/// measurements empty, `sex` is empty in 11 rows) read as absent features; a numeric label.
#[test]
fn penguins_with_missing_values_train_and_the_species_need_multiclass() {
    let Some(data) = shared("penguins.shuf.csv") else {
        return;
    };
    let (err, v) = csv_regression(&data, "year", "species");
    assert!(
        err.contains("csv: 344 rows, d = 9 (4 numeric, 2 one-hot and 0 hashed columns)"),
        "{err}"
    );
    assert_eq!(v["examples"], 344);
    // A missing label is an error naming file, line, column and the column's name.
    let out = run(&["train", "--label-column", "sex", &data]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("missing label in column 'sex'"), "{err}");
    assert!(err.contains("penguins.shuf.csv:"), "{err}");
}

#[test]
fn csv_header_flags_and_bad_values() {
    // Without a header the columns are numbered; --no-header reads the first line as data.
    let data = tmp("noheader.csv", "1,0.5,a\n-1,0.1,b\n1,0.7,a\n-1,0.2,b\n");
    let out = run(&[
        "train",
        "--json",
        "--no-header",
        "--label-column",
        "0",
        &data,
    ]);
    ok(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["examples"].as_u64(), v["dim"].as_u64()),
        (Some(4), Some(3))
    );
    // --header on a file whose first line looks like data: that line becomes the names
    // (the label column "0.5" then holds three values: a regression target here, since a
    // classifier refuses a third class).
    let out = run(&[
        "train",
        "--json",
        "--header",
        "--label-column",
        "1",
        "--loss",
        "squared",
        &data,
    ]);
    ok(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["examples"], 3);
    // A row with too many fields: file:line:column.
    let bad = tmp("badvalue.csv", "y,x\n1,0.5\n-1,0.25,7\n");
    let out = run(&["train", "--label-column", "y", &bad]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("badvalue.csv:3:9: expected 2 fields, found 3"),
        "{err}"
    );
    // CSV flags with another format are refused.
    let libsvm = tmp("x.libsvm", "1 1:1\n");
    let out = run(&["train", "--label-column", "y", &libsvm]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("apply to CSV input"));
}

#[test]
fn a_numeric_column_with_text_in_a_test_file_is_an_error_with_line_and_column() {
    let train = tmp("num_train.csv", "y,x\n1,0.5\n-1,-0.25\n1,0.75\n-1,-1\n");
    let model = tmp("num.model", "");
    std::fs::remove_file(&model).ok();
    train_quiet(&model, &["--label-column", "y"], &train);
    let test = tmp("num_test.csv", "y,x\n1,0.5\n-1,abc\n");
    let out = run(&["test", "-i", &model, &test]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_mentions(&err, &["num_test.csv:3:4:", "column 'x' is numeric"]);
    // A LIBSVM model cannot read CSV: no columns to read it with.
    let libsvm = tmp("plain.libsvm", "1 1:1\n-1 2:1\n");
    let lmodel = tmp("plain.model", "");
    std::fs::remove_file(&lmodel).ok();
    ok(&run(&["train", "--quiet", "-f", &lmodel, &libsvm]));
    let out = run(&["test", "-i", &lmodel, &train]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("was not trained on CSV"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A column of numbers with one stray text (a spreadsheet's `n/a2`) used to become a string
/// column without a word, every number a category of its own; now the scan refuses it before
/// learning, naming the column, the counts, the value and its line, and the fixes. A column
/// with more other values is read as strings, as before, with a warning on stderr.
#[test]
fn a_column_of_numbers_with_a_stray_text_is_refused_and_a_mixed_one_warned_about() {
    let mut text = String::from("y,amount,size\n");
    for k in 0..300 {
        let amount = if k == 200 {
            "n/a2".to_string()
        } else {
            format!("{}.5", k % 17)
        };
        let size = if k % 5 == 0 {
            "XL".to_string()
        } else {
            (k % 3).to_string()
        };
        text.push_str(&format!("{},{amount},{size}\n", ["no", "yes"][k % 2]));
    }
    let data = tmp("stray.csv", &text);
    let out = run(&["train", "--quiet", "--label-column", "y", &data]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_mentions(
        &err,
        &[
            "stray.csv:202:4: column 'amount': 299 of its 300 values are numbers and 1 is not, \
             the first \"n/a2\" here",
            "write a missing value as empty or NA",
            "--ignore-columns amount",
        ],
    );
    let out = run(&[
        "train",
        "--quiet",
        "--label-column",
        "y",
        "--ignore-columns",
        "amount",
        &data,
    ]);
    let err = ok(&out);
    assert_mentions(
        &err,
        &[
            "warning: ",
            "stray.csv: column 'size' is read as strings (one-hot), every distinct number a \
             category of its own: 240 of its 300 values are numbers and 60 are not, the first \
             \"XL\" at ",
            "stray.csv:2:8; if the column is numeric, write a missing value as empty or NA",
        ],
    );
}

/// A quoted field holding a line break (as pandas and Python's `csv` write a text with a
/// newline) is refused at the physical line where its record starts, after blank, comment and
/// CRLF lines, in `train` and in `predict`; the message said only "unterminated quoted field",
/// and now says that CSV lets quoted fields span lines, that records are read one per line
/// here, and how to rewrite the file.
#[test]
fn a_quoted_field_with_a_line_break_is_named_at_the_line_where_its_record_starts() {
    let text = "y,note,x\r\n\r\n# c\r\nyes,\"a\",1\r\nno,\"two\r\nlines\",2\r\nyes,\"b\",3\r\n";
    let data = tmp("newline.csv", text);
    let out = run(&["train", "--quiet", "--label-column", "y", &data]);
    assert!(!out.status.success());
    let hint = [
        "newline.csv:5:4: unterminated quoted field",
        "CSV lets a quoted field span lines",
        "records are read one per line here",
        "replace the line breaks inside fields",
    ];
    assert_mentions(&String::from_utf8_lossy(&out.stderr), &hint);
    let train = tmp("newline_train.csv", "y,note,x\nyes,a,1\nno,b,2\nyes,a,3\n");
    let model = scratch_path("newline.model");
    train_quiet(&model, &["--label-column", "y"], &train);
    let out = run(&["predict", "-i", &model, &data]);
    assert!(!out.status.success());
    assert_mentions(&String::from_utf8_lossy(&out.stderr), &hint);
}

/// A string column with more distinct values than `--max-categories` is hashed into
/// 2^`--hash-bits` buckets (item 2: "hashed when large"), end to end: the schema line says
/// so, `inspect` names the buckets by column, `test` reads a value never seen in training
/// (it hashes like any other), and impossible hashing flags are refused before training.
#[test]
fn a_string_column_with_many_values_is_hashed_and_inspect_names_its_buckets() {
    let mut text = String::from("city,x,y\n");
    for i in 0..200 {
        let c = i % 20;
        text.push_str(&format!(
            "c{c},{:.2},{}\n",
            (i * 37 % 100) as f64 / 100.0,
            u8::from(c < 10)
        ));
    }
    let data = tmp("cities.csv", &text);
    let model = scratch_path("cities.skl");
    let args = ["train", "--label-column", "y", "-f", &model];
    let one_hot = ok(&run(&["train", "--label-column", "y", &data]));
    assert!(
        one_hot.contains("d = 21 (1 numeric, 1 one-hot and 0 hashed columns)"),
        "{one_hot}"
    );
    let err = ok(&run(
        &[&args[..], &["--max-categories", "5", &data]].concat()
    ));
    assert!(
        err.contains("d = 1025 (1 numeric, 0 one-hot and 1 hashed columns)"),
        "{err}"
    );
    let small = ok(&run(&[
        "train",
        "--label-column",
        "y",
        "--max-categories",
        "5",
        "--hash-bits",
        "2",
        &data,
    ]));
    assert!(
        small.contains("d = 5 (1 numeric, 0 one-hot and 1 hashed columns)"),
        "{small}"
    );
    let inspect = run(&["inspect", "--json", "--top", "5", &model]);
    let shown = String::from_utf8_lossy(&inspect.stdout);
    assert!(
        inspect.status.success() && shown.contains("\"city=#"),
        "{shown}"
    );
    let unseen = tmp("cities-new.csv", "city,x,y\nnowhere,0.5,1\n");
    let t = test_json(&model, &unseen);
    assert_eq!(t["examples"], 1, "{t}");
    for (flags, want) in [
        (
            ["--hash-bits", "40"],
            "--hash-bits must be between 1 and 24",
        ),
        (["--max-categories", "x"], "invalid value 'x'"),
    ] {
        let out = run(&[&["train", "--label-column", "y"][..], &flags, &[&data]].concat());
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && e.contains(want), "{flags:?}: {e}");
    }
}

/// A model of a label and one string column, trained on CSV without a header, given a LIBSVM or
/// VW file: each line is one field, one category never seen, and was scored as the intercept
/// alone without a word. Its first line is now refused as that format's text; and a CSV whose
/// values were unseen in training is scored with one warning (rows, column, first line) by
/// `predict` and by `test` alike.
#[test]
fn text_of_another_format_or_unseen_categories_through_a_one_string_column_model_are_not_silent() {
    let train = tmp("cat_train.csv", "yes,red\nno,blue\nyes,red\nno,green\n");
    let model = tmp("cat.model", "");
    std::fs::remove_file(&model).ok();
    train_quiet(&model, &["--no-header", "--label-column", "0"], &train);
    let libsvm = tmp("cat_rows.libsvm", "+1 1:0.5 2:1\n-1 1:0.2\n");
    let vw = tmp("cat_rows.vw", "1 |a x:1\n-1 |a y\n");
    for (command, file, format) in [
        ("predict", &libsvm, "LIBSVM"),
        ("test", &libsvm, "LIBSVM"),
        ("predict", &vw, "VW"),
    ] {
        let out = run(&[command, "-i", &model, file]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{command} {file}: {err}");
        assert!(out.stdout.is_empty(), "{command} {file}");
        let looks =
            format!("1:1: this line looks like {format} text, but the model was trained on CSV");
        assert_mentions(&err, &[&looks]);
    }
    let rows = tmp("cat_new.csv", "red\npurple\npink\n");
    let out = run(&["predict", "-i", &model, &rows]);
    let err = ok(&out);
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 3);
    let warning = "cat_new.csv: 2 of the 3 rows have a value unseen in training in \
                   column 'column 1' (the first at line 2: \"purple\")";
    assert_mentions(&err, &[warning, "counts as missing"]);
    let labelled = tmp("cat_new_labelled.csv", "yes,red\nno,purple\nyes,pink\n");
    let err = ok(&run(&["test", "-i", &model, &labelled]));
    let warning = warning.replace("cat_new.csv", "cat_new_labelled.csv");
    assert_mentions(&err, &[&warning]);
    // Known values only: no warning.
    let err = ok(&run(&["test", "-i", &model, &train]));
    assert!(!err.contains("unseen"), "{err}");
}
