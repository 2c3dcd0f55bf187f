//! Tab-separated files through `train`, `test`, `predict` and `--cache`: read as the same
//! CSV is, and a `.csv` file that is separated by tabs or a row with a trailing comma is told so.

use crate::common;

use common::{
    assert_mentions, failure, ok, run, run_with_stdin, scratch_dir, shared, test_json, train_quiet,
};

fn scratch_path(name: &str) -> String {
    let p = scratch_dir("tsv-cli").join(name);
    std::fs::remove_file(&p).ok();
    p.to_string_lossy().into_owned()
}

#[test]
fn penguins_as_tsv_train_test_predict_and_cache_as_the_csv() {
    let Some(csv) = shared("penguins.shuf.csv") else {
        return;
    };
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(!text.contains('"') && !text.contains('\t'));
    let tsv = scratch_path("penguins.tsv");
    std::fs::write(&tsv, text.replace(',', "\t")).unwrap();
    let flags = ["--multiclass", "--label-column", "species"];
    let (from_csv, from_tsv) = (scratch_path("csv.model"), scratch_path("tsv.model"));
    train_quiet(&from_csv, &flags, &csv);
    train_quiet(&from_tsv, &flags, &tsv);
    assert_eq!(
        std::fs::read(&from_csv).unwrap(),
        std::fs::read(&from_tsv).unwrap()
    );
    // The model's column names are the header's, and it scores a TSV as the CSV.
    let (a, b) = (test_json(&from_csv, &csv), test_json(&from_csv, &tsv));
    assert_eq!(a["examples"], b["examples"]);
    assert_eq!(a["error"], b["error"]);
    let pa = run(&["predict", "-i", &from_tsv, &csv]);
    let pb = run(&["predict", "-i", &from_tsv, &tsv]);
    assert!(
        pb.status.success(),
        "{}",
        String::from_utf8_lossy(&pb.stderr)
    );
    assert_eq!(pa.stdout, pb.stdout);
    // Through a cache: written on the first run, read on the second, the same model.
    let cache = scratch_path("penguins.cache");
    let (c1, c2) = (scratch_path("c1.model"), scratch_path("c2.model"));
    for model in [&c1, &c2] {
        let mut f = flags.to_vec();
        f.extend(["-c", &cache]);
        train_quiet(model, &f, &tsv);
    }
    assert_eq!(
        std::fs::read(&c1).unwrap(),
        std::fs::read(&from_csv).unwrap()
    );
    assert_eq!(
        std::fs::read(&c2).unwrap(),
        std::fs::read(&from_csv).unwrap()
    );
}

#[test]
fn a_csv_separated_by_tabs_and_a_trailing_comma_are_named() {
    let tabbed = scratch_path("tabbed.csv");
    std::fs::write(&tabbed, "a\tb\ty\n1\t2\t0\n3\t4\t1\n").unwrap();
    let err = failure(&run(&["train", "--quiet", &tabbed]));
    assert_mentions(&err, &["tabbed.csv:1:1", "separated by tabs", ".tsv"]);
    let trailing = scratch_path("trailing.csv");
    std::fs::write(&trailing, "a,b,y\n1,2,0,\n3,4,1,\n").unwrap();
    let err = failure(&run(&[
        "train",
        "--quiet",
        "--label-column",
        "y",
        &trailing,
    ]));
    assert_mentions(
        &err,
        &["trailing.csv:2:6", "a trailing ','", "3 are expected"],
    );
}

#[test]
fn text_in_latin1_after_the_first_line_names_the_encoding() {
    let csv = scratch_path("latin1.csv");
    std::fs::write(&csv, b"name,y\nab,1\ncaf\xe9,0\n").unwrap();
    let err = failure(&run(&["train", "--quiet", "--label-column", "y", &csv]));
    assert_mentions(
        &err,
        &["latin1.csv:3:4", "not UTF-8", "iconv -f latin1 -t utf-8"],
    );
    let libsvm = scratch_path("latin1.libsvm");
    std::fs::write(&libsvm, b"1 1:2\n-1 1:3 2:\xe9\n").unwrap();
    let err = failure(&run(&["train", "--quiet", &libsvm]));
    assert_mentions(&err, &["latin1.libsvm:2:10", "not UTF-8", "iconv"]);
    assert!(!err.contains("cannot parse value"), "{err}");
}

#[test]
fn format_tsv_reads_a_stream_and_another_name_as_the_csv() {
    let Some(csv) = shared("penguins.shuf.csv") else {
        return;
    };
    let text = std::fs::read_to_string(&csv).unwrap();
    let tsv_text = text.replace(',', "\t");
    let txt = scratch_path("penguins-tabs.txt");
    std::fs::write(&txt, &tsv_text).unwrap();
    let flags = ["--multiclass", "--label-column", "species"];
    let from_csv = scratch_path("fmt-csv.model");
    train_quiet(&from_csv, &flags, &csv);
    let expected = std::fs::read(&from_csv).unwrap();
    // `cat x.tsv | sketchlearn train --format tsv ... -`, and a TSV named .txt.
    let piped = scratch_path("fmt-pipe.model");
    let mut args = vec!["train", "--quiet", "-f", &piped, "--format", "tsv"];
    args.extend(flags);
    args.push("-");
    ok(&run_with_stdin(&args, tsv_text.as_bytes()));
    assert_eq!(std::fs::read(&piped).unwrap(), expected);
    let named = scratch_path("fmt-txt.model");
    train_quiet(&named, &[&flags[..], &["--format", "tsv"]].concat(), &txt);
    assert_eq!(std::fs::read(&named).unwrap(), expected);
    // test and predict take the flag, on a stream and on the file; the CSV's model reads both.
    let score = |cmd: &str, file: &str, stdin: &[u8]| {
        let out = ok(&run_with_stdin(
            &[cmd, "-i", &from_csv, "--format", "tsv", file],
            stdin,
        ))
        .clone();
        String::from_utf8(out.stdout).unwrap()
    };
    let on_csv =
        String::from_utf8(ok(&run(&["predict", "-i", &from_csv, &csv])).stdout.clone()).unwrap();
    assert_eq!(score("predict", "-", tsv_text.as_bytes()), on_csv);
    assert_eq!(score("predict", &txt, b""), on_csv);
    assert_eq!(on_csv.lines().count(), text.lines().count() - 1);
    let err = |out: &std::process::Output| String::from_utf8_lossy(&out.stderr).into_owned();
    let t_csv = run(&["test", "--json", "-i", &from_csv, &csv]);
    let t_tsv = run_with_stdin(
        &["test", "--json", "-i", &piped, "--format", "tsv", "-"],
        tsv_text.as_bytes(),
    );
    assert!(t_tsv.status.success(), "{}", err(&t_tsv));
    let (a, b): (serde_json::Value, serde_json::Value) = (
        serde_json::from_slice(&t_csv.stdout).unwrap(),
        serde_json::from_slice(&t_tsv.stdout).unwrap(),
    );
    assert_eq!((&a["examples"], &a["error"]), (&b["examples"], &b["error"]));
    // The cache command too; a later train through it gives the same model.
    let cache = scratch_path("fmt.cache");
    ok(&run(&[
        "cache",
        "--format",
        "tsv",
        "--label-column",
        "species",
        "-c",
        &cache,
        &txt,
    ]));
    let cached = scratch_path("fmt-cached.model");
    train_quiet(
        &cached,
        &[&flags[..], &["--format", "tsv", "-c", &cache]].concat(),
        &txt,
    );
    assert_eq!(std::fs::read(&cached).unwrap(), expected);
}

#[test]
fn the_wrong_separator_for_a_stream_names_the_fix() {
    let rows = "a,b,y\n1,2,0\n3,4,1\n";
    let as_tsv = [
        "train",
        "--quiet",
        "--format",
        "tsv",
        "--label-column",
        "y",
        "-",
    ];
    // A CSV read as TSV: one field holding commas.
    let out = run_with_stdin(&as_tsv, rows.as_bytes());
    assert_mentions(
        &failure(&out),
        &["<stdin>:1:1", "separated by commas", "--format csv"],
    );
    // A TSV stream read as CSV: --format tsv named.
    let tabs = rows.replace(',', "\t");
    let out = run_with_stdin(
        &["train", "--quiet", "--label-column", "y", "-"],
        tabs.as_bytes(),
    );
    assert_mentions(
        &failure(&out),
        &["<stdin>:1:1", "separated by tabs", "--format tsv"],
    );
    // Semicolons stay out of scope: the conversion is named.
    let semi = rows.replace(',', ";");
    let out = run_with_stdin(&as_tsv, semi.as_bytes());
    assert_mentions(&failure(&out), &["separated by semicolons", "sep=';'"]);
    // CSV-only flags with another format are still refused.
    let out = run(&[
        "train",
        "--quiet",
        "--format",
        "vw",
        "--label-column",
        "y",
        "x.vw",
    ]);
    assert_mentions(&failure(&out), &["--label-column", "--format csv / tsv"]);
}
