//! An existing `-p` file survives a run that fails after it has scored some rows, for every
//! subcommand that writes predictions and whose failure can come after the first prediction:
//! `predict`, `fm` (the test part) and `fm predict`, from a file and from a pipe. (`train`,
//! `test` and `train --multiclass`: `sources::a_bad_value_is_an_error_at_its_column_and_leaves_the_model`.)
//! The predictions go to a temporary file beside the target that is put in place only when the
//! run ends well, so the user's file keeps its bytes and no partial or temporary file is left.

use super::{assert_clear_error, bash, bin, repo_file, Scratch};
use std::process::Command;

/// Runs `sketchlearn ARGS -p P FILE` and `cat FILE | sketchlearn ARGS -p P -` on `bad`, each of
/// which must fail with `want` (`{name}` replaced by the source's name) after scoring rows,
/// leaving `p.txt` (the user's earlier predictions: one value a line, as every command here
/// writes) as it was; then the same command on `good`
/// replaces it. `dir` must hold nothing but `keep` and the files made here.
fn assert_kept(dir: &Scratch, args: &str, bad: &str, good: &str, want: &str, keep: &[&str]) {
    let predictions = dir.path("p.txt");
    std::fs::write(&predictions, "0.5\n").unwrap();
    let run = |file: &str, source: &str| {
        let cmd = format!("'{}' {args} -p '{predictions}'", bin());
        match source {
            "file" => bash(&format!("{cmd} '{file}'")),
            _ => bash(&format!("cat '{file}' | {cmd} -")),
        }
    };
    for (source, name) in [("file", bad), ("pipe", "<stdin>")] {
        let out = run(bad, source);
        assert_clear_error(&out, &want.replace("{name}", name));
        assert_eq!(
            std::fs::read_to_string(&predictions).unwrap(),
            "0.5\n",
            "{args} from a {source}"
        );
        let mut names: Vec<&str> = keep.to_vec();
        names.push("p.txt");
        names.sort();
        assert_eq!(
            dir.names(),
            names,
            "{args} from a {source}: no temporary file"
        );
    }
    for source in ["file", "pipe"] {
        std::fs::write(&predictions, "0.5\n").unwrap();
        let out = run(good, source);
        assert!(
            out.status.success(),
            "{args}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let written = std::fs::read_to_string(&predictions).unwrap();
        assert_ne!(written, "0.5\n", "{args} from a {source}");
        assert!(written.lines().count() > 1);
    }
}

#[test]
fn predict_keeps_an_existing_predictions_file_when_a_later_row_is_bad() {
    let dir = Scratch::new("p-predict");
    let model = dir.path("heart.model");
    let heart = repo_file("heart.libsvm");
    let trained = Command::new(bin())
        .args(["train", "--quiet", "-f", &model, &heart])
        .output()
        .unwrap();
    assert!(trained.status.success());
    let text = std::fs::read_to_string(&heart).unwrap();
    let mut lines: Vec<String> = text.lines().take(30).map(str::to_owned).collect();
    let good = dir.path("good.libsvm");
    std::fs::write(&good, lines.join("\n") + "\n").unwrap();
    lines[19] = "+1 1:0.5 3:0.5x 4:1".to_owned();
    let bad = dir.path("bad.libsvm");
    std::fs::write(&bad, lines.join("\n") + "\n").unwrap();
    assert_kept(
        &dir,
        &format!("predict -i '{model}'"),
        &bad,
        &good,
        "{name}:20:12: cannot parse value \"0.5x\"",
        &["bad.libsvm", "good.libsvm", "heart.model"],
    );
}

/// Ratings with the user `u9` only in the test part: `--unseen-error` stops the test part
/// there, after the test rows before it were predicted.
fn ratings(unseen_at_the_end: bool) -> String {
    let mut s = String::from("user,item,rating\n");
    for k in 0..40 {
        s.push_str(&format!("u{},i{},{}\n", k % 5, k % 7, 1 + (k * 3) % 5));
    }
    for k in 0..9 {
        s.push_str(&format!("u{},i{},3\n", k % 5, k % 7));
    }
    if unseen_at_the_end {
        s.push_str("u9,i1,4\n");
    } else {
        s.push_str("u1,i1,4\n");
    }
    s
}

#[test]
fn fm_keeps_an_existing_predictions_file_when_the_test_part_fails() {
    let dir = Scratch::new("p-fm");
    let (bad, good) = (dir.path("bad.csv"), dir.path("good.csv"));
    std::fs::write(&bad, ratings(true)).unwrap();
    std::fs::write(&good, ratings(false)).unwrap();
    assert_kept(
        &dir,
        "fm --quiet --unseen-error --format ratings",
        &bad,
        &good,
        ":51: user id \"u9\" in field 1 (\"user\") was not seen in training",
        &["bad.csv", "good.csv"],
    );
}

#[test]
fn fm_predict_keeps_an_existing_predictions_file_when_a_later_pair_is_bad() {
    let dir = Scratch::new("p-fm-predict");
    let (train, model) = (dir.path("train.csv"), dir.path("fm.model"));
    std::fs::write(&train, ratings(false)).unwrap();
    let trained = Command::new(bin())
        .args(["fm", "--quiet", "-f", &model, &train])
        .output()
        .unwrap();
    assert!(
        trained.status.success(),
        "{}",
        String::from_utf8_lossy(&trained.stderr)
    );
    let (bad, good) = (dir.path("bad.txt"), dir.path("good.txt"));
    std::fs::write(&good, "u1 i2\nu3 i4\nu0 i0\n").unwrap();
    std::fs::write(&bad, "u1 i2\nu3 i4\nu0\n").unwrap();
    assert_kept(
        &dir,
        &format!("fm predict -i '{model}'"),
        &bad,
        &good,
        "{name}:3: expected a user in field 1 and an item in field 2",
        &["bad.txt", "fm.model", "good.txt", "train.csv"],
    );
}
