//! Fail early, never destroy (issue 25, item 5): output paths are checked before any
//! training, and nothing is overwritten or lost when they are wrong.

use std::path::PathBuf;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sketchlearn"))
        .args(args)
        .output()
        .expect("binary runs")
}

/// A fresh copy of the repository's heart.libsvm in its own directory.
fn data(name: &str) -> (PathBuf, Vec<u8>) {
    let dir = std::env::temp_dir().join(format!("sketchlearn-paths-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/heart.libsvm");
    let bytes = std::fs::read(src).unwrap();
    let path = dir.join("data.libsvm");
    std::fs::write(&path, &bytes).unwrap();
    (path, bytes)
}

fn s(p: &std::path::Path) -> String {
    p.to_string_lossy().into_owned()
}

fn refused(out: &Output, want: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "should fail: {err}");
    assert!(err.contains(want), "expected {want:?} in: {err}");
    assert!(
        !err.contains("average"),
        "the check comes before training: {err}"
    );
}

#[test]
fn train_predictions_onto_the_input_leaves_it_intact() {
    let (path, bytes) = data("train-p");
    let p = s(&path);
    refused(&run(&["train", "-p", &p, &p]), "is the input file");
    // Another spelling of the same file (./ and a hard link) is the same file.
    let dir = path.parent().unwrap();
    let link = dir.join("link.libsvm");
    std::fs::hard_link(&path, &link).unwrap();
    refused(&run(&["train", "-p", &s(&link), &p]), "is the input file");
    refused(&run(&["train", "-f", &p, &p]), "is the input file");
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
}

#[test]
fn train_and_test_outputs_are_checked_before_the_data_is_read() {
    let (path, bytes) = data("train-dirs");
    let p = s(&path);
    let dir = s(path.parent().unwrap());
    refused(
        &run(&["train", "-f", "/no/such/dir/m.skl", &p]),
        "does not exist",
    );
    refused(&run(&["train", "-p", &dir, &p]), "is a directory");
    refused(
        &run(&["train", "-p", "/dev/null", &p]),
        "not a regular file",
    );
    // A FIFO would block the run (or feed a reader the user did not mean): refused too.
    let fifo = format!("{dir}/p.fifo");
    if Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success())
    {
        refused(
            &run(&["train", "-p", &fifo, &p]),
            "(a device, FIFO or socket)",
        );
    }
    let model = format!("{dir}/m.skl");
    refused(
        &run(&["train", "-f", &model, "-p", &model, &p]),
        "both be written",
    );
    assert!(!std::path::Path::new(&model).exists());

    assert!(run(&["train", "--quiet", "-f", &model, &p])
        .status
        .success());
    let model_bytes = std::fs::read(&model).unwrap();
    refused(
        &run(&["test", "-i", &model, "-p", &p, &p]),
        "is the input file",
    );
    refused(
        &run(&["test", "-i", &model, "-p", &model, &p]),
        "is the input file",
    );
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    assert_eq!(std::fs::read(&model).unwrap(), model_bytes);
}

#[test]
fn fm_and_drp_models_onto_the_input_are_refused() {
    let (path, bytes) = data("fm-drp");
    let p = s(&path);
    refused(&run(&["fm", "--quiet", "-f", &p, &p]), "is the input file");
    refused(&run(&["fm", "--quiet", "-p", &p, &p]), "is the input file");
    refused(
        &run(&[
            "drp", "--loss", "logistic", "--lambda", "1", "--size", "5", "-f", &p, &p,
        ]),
        "is the input file",
    );
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
}

#[test]
fn an_empty_input_says_no_examples() {
    let (path, _) = data("empty");
    let empty = path.parent().unwrap().join("empty.libsvm");
    std::fs::write(&empty, "").unwrap();
    let out = run(&["train", "--dim", "3", &s(&empty)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("no examples"),
        "{err}"
    );
    assert!(!err.contains("diverge"), "{err}");
}

/// Every command that reads examples says "no examples" for an empty input (a file, a header
/// alone, a stream) and writes nothing: before, `fm` ran over nothing and reported NaN (exit
/// 0) or "found no labels", `fm predict`, `cache` and `sketch` succeeded on nothing.
#[test]
fn every_command_says_no_examples_for_an_empty_input() {
    let (path, _) = data("empty-all");
    let dir = path.parent().unwrap();
    let file = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        s(&p)
    };
    let (empty, empty_tsv) = (file("empty.libsvm", ""), file("empty.tsv", ""));
    let header = file("header.csv", "user,item,rating\n");
    let pairs_header = file("pairs.csv", "user,item\n");
    let ratings: String = (0..60)
        .map(|k| format!("{}\t{}\t{}\n", k % 7, k % 5, 1 + k % 5))
        .collect();
    let ratings = file("ratings.tsv", &ratings);
    let (model, fm) = (s(&dir.join("m.skl")), s(&dir.join("fm.model")));
    assert!(run(&["train", "--quiet", "-f", &model, &s(&path)])
        .status
        .success());
    assert!(run(&["fm", "--quiet", "-f", &fm, &ratings])
        .status
        .success());
    let out = |name: &str| s(&dir.join(name));
    let (new_fm, preds, cache) = (out("new-fm.model"), out("p.txt"), out("e.cache"));
    for args in [
        vec!["test", "-i", &model, &empty],
        vec!["predict", "-i", &model, &empty],
        vec!["fm", "-f", &new_fm, &empty_tsv],
        vec!["fm", "-f", &new_fm, &header],
        vec!["fm", "-f", &new_fm, &empty],
        vec!["fm", "--loss", "squared", "-f", &new_fm, &empty],
        vec!["fm", "predict", "-i", &fm, "-p", &preds, &empty_tsv],
        vec![
            "fm",
            "predict",
            "-i",
            &fm,
            "--columns",
            "user,item",
            &pairs_header,
        ],
        vec!["cache", "-c", &cache, &empty],
        vec!["sketch", "--method", "fd", "--size", "3", &empty],
    ] {
        let o = run(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            !o.status.success() && err.contains("no examples in"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("NaN") && !err.contains("diverge"), "{err}");
    }
    for written in [&new_fm, &preds, &cache] {
        assert!(!std::path::Path::new(written).exists(), "{written} written");
    }
}

/// `-f` onto an existing file that is not a model (another data set: `-f other.libsvm` typed
/// for `-i`) is refused and the file left as it was; it used to be replaced by the model. An
/// existing model is still replaced (VW's `-f`), and so is an empty file.
#[test]
fn a_model_path_holding_another_file_is_refused_and_left_alone() {
    let (input, _) = data("foreign");
    let dir = input.parent().unwrap();
    let other = dir.join("other.libsvm");
    std::fs::write(&other, "1 1:1\n-1 2:1\n").unwrap();
    let out = run(&["train", "--quiet", "-f", &s(&other), &s(&input)]);
    refused(&out, "is not a sketchlearn model");
    assert_eq!(std::fs::read(&other).unwrap(), b"1 1:1\n-1 2:1\n");
    let model = dir.join("m.skl");
    for _ in 0..2 {
        let out = run(&["train", "--quiet", "-f", &s(&model), &s(&input)]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let empty = dir.join("empty.skl");
    std::fs::write(&empty, b"").unwrap();
    let out = run(&["train", "--quiet", "-f", &s(&empty), &s(&input)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::read(&empty).unwrap().starts_with(b"SKLMODEL"));
}

/// `-p` onto an existing file that is not predictions (a data set, notes) is refused and the
/// file left as it was, by every command that writes predictions (train, train --multiclass,
/// test, predict, fm, fm predict), naming `--overwrite`; it used to be replaced. An existing
/// predictions file is replaced (a re-run), and `--overwrite` lets `-p` and `-f` replace any
/// file (never the input itself).
#[test]
fn a_predictions_path_holding_another_file_is_refused_and_left_alone() {
    let (input, _) = data("foreign-p");
    let dir = input.parent().unwrap();
    let file = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        s(&p)
    };
    let ok = |args: &[&str]| {
        let out = run(args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let ratings: String = (0..60)
        .map(|k| format!("{}\t{}\t{}\n", k % 7, k % 5, 1 + k % 5))
        .collect();
    let ratings = file("ratings.tsv", &ratings);
    let (model, fm) = (s(&dir.join("m.skl")), s(&dir.join("fm.model")));
    ok(&["train", "--quiet", "-f", &model, &s(&input)]);
    ok(&["fm", "--quiet", "-f", &fm, &ratings]);
    let multi = file(
        "multi.libsvm",
        "1 1:1\n2 2:1\n3 3:1\n1 1:0.5\n2 2:0.5\n3 3:0.5\n",
    );
    let data = &s(&input);
    let notes = "1 1:1 2:0.5\n-1 3:1\n";
    let commands: Vec<Vec<&str>> = vec![
        vec!["train", "--quiet", data],
        vec!["train", "--quiet", "--multiclass", &multi],
        vec!["test", "--quiet", "-i", &model, data],
        vec!["predict", "-i", &model, data],
        vec!["fm", "--quiet", &ratings],
        vec!["fm", "predict", "-i", &fm, &ratings],
    ];
    for (k, command) in commands.iter().enumerate() {
        let preds = file(&format!("p{k}.txt"), notes);
        let with = |extra: &[&str]| {
            let mut args = command.clone();
            let at = if command[..2] == ["fm", "predict"] {
                2
            } else {
                1
            };
            for (j, a) in ["-p", &preds].iter().chain(extra).enumerate() {
                args.insert(at + j, a);
            }
            run(&args)
        };
        let out = with(&[]);
        refused(&out, "is not predictions");
        refused(&out, "--overwrite");
        assert_eq!(
            std::fs::read_to_string(&preds).unwrap(),
            notes,
            "{command:?}"
        );
        let out = with(&["--overwrite"]);
        assert!(out.status.success(), "{command:?}: {out:?}");
        let written = std::fs::read_to_string(&preds).unwrap();
        assert_ne!(written, notes, "{command:?}");
        // Its own predictions file is replaced on a re-run.
        let out = with(&[]);
        assert!(out.status.success(), "{command:?}: {out:?}");
        assert_eq!(
            std::fs::read_to_string(&preds).unwrap(),
            written,
            "{command:?}"
        );
    }
    // -f: --overwrite replaces a file that is not a model; the input stays refused.
    let other = file("other.libsvm", notes);
    ok(&["train", "--quiet", "--overwrite", "-f", &other, data]);
    assert!(std::fs::read(&other).unwrap().starts_with(b"SKLMODEL"));
    refused(
        &run(&["train", "--overwrite", "-p", data, data]),
        "is the input file",
    );
}
