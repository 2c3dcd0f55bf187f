//! `-c/--cache FILE` on `train` and `test`, and `sketchlearn cache` (issue 27): the same model
//! bytes and test numbers with and without the cache, from a file and from standard input; a
//! cache that no longer fits is written anew with a note; a file that is not a cache is left
//! alone.

use crate::common;
use common::{failure, json, ok, repo_file, run, run_with_stdin, stdout_text, Scratch};

fn heart() -> String {
    repo_file("data/heart.libsvm")
}

fn train_model(dir: &Scratch, name: &str, flags: &[&str], data: &str) -> Vec<u8> {
    let model = dir.join(name);
    let mut args = vec!["train", "--quiet", "-f", model.to_str().unwrap()];
    args.extend_from_slice(flags);
    args.push(data);
    ok(&run(&args));
    std::fs::read(model).unwrap()
}

#[test]
fn train_and_test_through_a_cache_give_the_same_bits() {
    let dir = Scratch::new("cache-cli-same");
    let cache = dir.join("heart.cache");
    let c = cache.to_str().unwrap();
    let data = heart();
    for passes in ["1", "3"] {
        let plain = train_model(&dir, "plain.model", &["--passes", passes], &data);
        for round in 0..2 {
            let cached = train_model(&dir, "c.model", &["--passes", passes, "-c", c], &data);
            assert_eq!(cached, plain, "passes {passes}, round {round}");
        }
    }
    let model = dir.join("plain.model");
    let m = model.to_str().unwrap();
    let plain = json(&run(&["test", "--json", "-i", m, &data]));
    let cached = json(&run(&["test", "--json", "-i", m, "-c", c, &data]));
    assert_eq!(plain["error"], cached["error"]);
    assert_eq!(plain["log_loss"], cached["log_loss"]);
    assert_eq!(plain["auc"], cached["auc"]);
}

#[test]
fn the_cache_command_writes_then_finds_it_up_to_date() {
    let dir = Scratch::new("cache-cli-command");
    let data = dir.join("heart.libsvm");
    std::fs::copy(heart(), &data).unwrap();
    let data = data.to_str().unwrap();
    let cache = dir.join("h.cache");
    let c = cache.to_str().unwrap();
    let first = stdout_text(&run(&["cache", "-c", c, data]));
    assert_eq!(first.trim(), format!("cache {c}: 270 examples, written"));
    let again = stdout_text(&run(&["cache", "-c", c, data]));
    assert_eq!(again.trim(), format!("cache {c}: 270 examples, up to date"));
    // The input changes: written anew, with a note naming why.
    let mut text = std::fs::read_to_string(data).unwrap();
    text.push_str("+1 1:0.5\n");
    std::fs::write(data, text).unwrap();
    let out = ok(&run(&["cache", "-c", c, data])).clone();
    assert!(String::from_utf8_lossy(&out.stdout).contains("271 examples, written"));
    let note = String::from_utf8_lossy(&out.stderr);
    assert!(
        note.contains("note: the cache") && note.contains("the input changed"),
        "{note}"
    );
    // No -c: says what to give.
    let err = failure(&run(&["cache", data]));
    assert!(err.contains("sketchlearn cache -c FILE"), "{err}");
}

#[test]
fn a_cache_from_standard_input() {
    let dir = Scratch::new("cache-cli-stdin");
    let cache = dir.join("stdin.cache");
    let c = cache.to_str().unwrap();
    let text = std::fs::read(heart()).unwrap();
    let model = |name: &str, flags: &[&str]| {
        let path = dir.join(name);
        let mut args = vec![
            "train",
            "--quiet",
            "--passes",
            "2",
            "-f",
            path.to_str().unwrap(),
        ];
        args.extend_from_slice(flags);
        args.push("-");
        ok(&run_with_stdin(&args, &text));
        std::fs::read(path).unwrap()
    };
    let plain = model("plain.model", &[]);
    assert_eq!(model("cached.model", &["-c", c]), plain);
    assert!(std::fs::read(&cache).unwrap().starts_with(b"SKLCACHE"));
}

#[test]
fn a_file_that_is_not_a_cache_is_never_overwritten() {
    let dir = Scratch::new("cache-cli-foreign");
    let mine = dir.join("notes.txt");
    std::fs::write(&mine, "my notes\n").unwrap();
    let m = mine.to_str().unwrap();
    let err = failure(&run(&["train", "--quiet", "-c", m, &heart()]));
    assert!(err.contains("is not a sketchlearn cache"), "{err}");
    let err = failure(&run(&["cache", "-c", m, &heart()]));
    assert!(err.contains("is not a sketchlearn cache"), "{err}");
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "my notes\n");
    // The input itself as the cache path: refused before reading.
    let err = failure(&run(&["train", "--quiet", "-c", &heart(), &heart()]));
    assert!(err.contains("is the input file"), "{err}");
}

/// CSV through a cache (`sketchlearn cache` with the CSV flags, then `train -c`, 1 and 2
/// passes, and `test -c`): the same model bytes and test numbers as from the text; the
/// command finds its cache up to date.
#[test]
fn csv_through_a_cache_gives_the_same_bits() {
    let dir = Scratch::new("cache-cli-csv");
    let data = dir.join("people.csv");
    let mut text = String::from("Dept,Age,Left\n");
    for k in 0..300u32 {
        let dept = ["Sales", "R&D", "HR"][(k * 7 % 3) as usize];
        let age = 20 + (k * 13) % 41;
        let left = if (age + k % 5 * 3) % 2 == 0 {
            "Yes"
        } else {
            "No"
        };
        text.push_str(&format!("{dept},{age},{left}\n"));
    }
    std::fs::write(&data, text).unwrap();
    let data = data.to_str().unwrap();
    let cache = dir.join("people.cache");
    let c = cache.to_str().unwrap();
    let flags = ["--label-column", "Left"];
    let first = stdout_text(&run(&["cache", "-c", c, flags[0], flags[1], data]));
    assert_eq!(first.trim(), format!("cache {c}: 300 examples, written"));
    let again = stdout_text(&run(&["cache", "-c", c, flags[0], flags[1], data]));
    assert_eq!(again.trim(), format!("cache {c}: 300 examples, up to date"));
    for passes in ["1", "2"] {
        let plain = train_model(
            &dir,
            "plain.model",
            &[&flags[..], &["--passes", passes]].concat(),
            data,
        );
        let cached = train_model(
            &dir,
            "c.model",
            &[&flags[..], &["--passes", passes, "-c", c]].concat(),
            data,
        );
        assert_eq!(cached, plain, "passes {passes}");
    }
    let model = dir.join("plain.model");
    let m = model.to_str().unwrap();
    let plain = json(&run(&["test", "--json", "-i", m, data]));
    let cached = json(&run(&["test", "--json", "-i", m, "-c", c, data]));
    assert_eq!(plain["error"], cached["error"]);
    assert_eq!(plain["log_loss"], cached["log_loss"]);
}
