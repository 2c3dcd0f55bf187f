//! `train --keep-names` end to end (issue 25, item 4): VW feature names kept in the model and
//! shown by `inspect` (text and JSON), extended on resume, refused for LIBSVM.

use crate::common;

use common::{failure, ok, run, scratch_dir, scratch_file, stdout_text};

const VW: &[u8] = b"1 |a x y:2 |b z\n-1 |a w |b z q\n1 |a x |b q\n-1 |a w y\n";

fn train(dir: &str, model: &str, flags: &[&str], data: &str) -> String {
    let path = scratch_dir(dir).join(model).to_string_lossy().into_owned();
    let mut args = vec!["train", "--quiet", "-f", &path];
    args.extend_from_slice(flags);
    args.push(data);
    ok(&run(&args));
    path
}

#[test]
fn inspect_names_vw_features_and_crosses() {
    let data = scratch_file("keep_names", "t.vw", VW);
    let data = data.to_str().unwrap();
    let m = train("keep_names", "m.skl", &["--keep-names", "-q", "ab"], data);
    let text = stdout_text(&run(&["inspect", "--top", "20", &m]));
    for name in ["a^x", "a^y", "a^w", "b^z", "b^q", "a^x*b^q"] {
        assert!(text.contains(&format!("  {name}\n")), "{name}: {text}");
    }
    let v: serde_json::Value =
        serde_json::from_str(&stdout_text(&run(&["inspect", "--json", &m]))).unwrap();
    let top = v["top_weights"].as_array().unwrap();
    assert!(top.iter().all(|w| w["name"].is_string()), "{v}");
    // Without the flag: no names.
    let plain = train("keep_names", "plain.skl", &["-q", "ab"], data);
    let v: serde_json::Value =
        serde_json::from_str(&stdout_text(&run(&["inspect", "--json", &plain]))).unwrap();
    assert!(v["top_weights"]
        .as_array()
        .unwrap()
        .iter()
        .all(|w| w.get("name").is_none()));
}

#[test]
fn names_do_not_change_the_learner_and_resume_extends_them() {
    let dir = "keep_names_resume";
    let first = scratch_file(dir, "first.vw", b"1 |a x\n-1 |a w\n");
    let second = scratch_file(dir, "second.vw", b"1 |a x |c new\n-1 |a w\n");
    let named = train(dir, "named.skl", &["--keep-names"], first.to_str().unwrap());
    let plain = train(dir, "plain.skl", &[], first.to_str().unwrap());
    let weights = |m: &str| {
        let v: serde_json::Value =
            serde_json::from_str(&stdout_text(&run(&["inspect", "--json", m]))).unwrap();
        v["top_weights"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| (w["index"].as_u64().unwrap(), w["weight"].as_f64().unwrap()))
            .collect::<Vec<_>>()
    };
    assert_eq!(weights(&named), weights(&plain));
    let path = scratch_dir(dir).join("resumed.skl");
    let resumed = path.to_str().unwrap();
    let second = second.to_str().unwrap();
    ok(&run(&[
        "train",
        "--quiet",
        "--keep-names",
        "-i",
        &named,
        "-f",
        resumed,
        second,
    ]));
    let text = stdout_text(&run(&["inspect", resumed]));
    for name in ["a^x", "a^w", "c^new"] {
        assert!(text.contains(name), "{name}: {text}");
    }
}

#[test]
fn keep_names_on_libsvm_is_refused_before_training() {
    let data = scratch_file("keep_names_libsvm", "t.libsvm", b"1 1:1\n-1 2:1\n");
    let model = scratch_dir("keep_names_libsvm").join("m.skl");
    let out = run(&[
        "train",
        "--quiet",
        "--keep-names",
        "-f",
        model.to_str().unwrap(),
        data.to_str().unwrap(),
    ]);
    let err = failure(&out);
    assert!(
        err.contains("--keep-names") && err.contains("LIBSVM has no names"),
        "{err}"
    );
    assert!(!model.exists());
}
