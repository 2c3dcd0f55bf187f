//! Bounded, declared resources (issue 26, item 3): a dimension or sketch that would not fit is
//! refused before anything is allocated, with what it would need and which option changes it;
//! a sketch larger than the dimension is capped at it, with a note.

use super::{assert_clear_error, repo_file, run, Scratch};

#[test]
fn huge_dimensions_are_clear_errors_before_any_allocation() {
    let dir = Scratch::new("limits");
    let heart = repo_file("heart.libsvm");
    let big_index = dir.path("big.libsvm");
    std::fs::write(&big_index, "1 4000000000:1\n-1 1:1\n").unwrap();
    let vw = dir.path("t.vw");
    std::fs::write(&vw, "1 |f a:1\n-1 |f b:1\n").unwrap();
    let usize_max = usize::MAX.to_string();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["--dim", &usize_max, &heart],
            "above the largest supported, 2^32",
        ),
        (
            vec!["--dim", "10000000000000", &heart],
            "above the largest supported",
        ),
        (vec![&big_index], "one past the largest feature index of"),
        (vec!["-b", "32", &vw], "2^bits of the hashed input"),
        (
            vec![
                "--algo",
                "newton",
                "--curvature",
                "fd",
                "--size",
                "1000000",
                "--dim",
                "1000000",
                &heart,
            ],
            "or a smaller --size",
        ),
    ];
    for (args, needle) in cases {
        let mut all = vec!["train", "--quiet"];
        all.extend(args);
        let out = run(&all, None);
        let err = assert_clear_error(&out, needle);
        // A machine with terabytes of memory would train the 4e9-index case; the others are
        // refused by the 32-bit limit or by any machine's memory.
        assert!(err.contains("GiB") || err.contains("2^32"), "{err}");
    }
}

/// `-b 27` (2^27 hashed features): the default learner's memory grows with the features the
/// input uses (lazily touched stores), so a small input trains — with a note giving the memory
/// per feature and for all of them when that is more than the machine has — unless one of its
/// arrays alone (the column store, ~13 GiB) is more than the machine has: then a clear error.
/// AdaGrad likewise. (Before, `-b 27` was refused: 46.3 GiB "all features used".)
#[test]
fn hashing_into_2_27_trains_when_the_used_features_fit() {
    let dir = Scratch::new("bits27");
    let vw = dir.path("t.vw");
    std::fs::write(&vw, "1 |f a:1 b:2\n-1 |f b:1 c:1\n1 |f a:1\n").unwrap();
    for algo in ["auto", "adagrad"] {
        let out = run(&["train", "--algo", algo, "-b", "27", &vw], None);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        if out.status.success() {
            let note = err.lines().find(|l| l.contains("memory grows"));
            assert!(
                note.is_none_or(|n| n.contains("bytes with each distinct feature")),
                "{err}"
            );
        } else {
            let err = assert_clear_error(&out, "in one array");
            assert!(err.contains("fewer -b bits"), "{err}");
        }
    }
}

/// `train --json --algo newton --curvature C --size M` on heart.
fn newton(curvature: &str, size: &str) -> std::process::Output {
    let heart = repo_file("heart.libsvm");
    let args = [
        "train",
        "--quiet",
        "--json",
        "--algo",
        "newton",
        "--curvature",
        curvature,
    ];
    run(&[&args[..], &["--size", size, &heart]].concat(), None)
}

#[test]
fn a_sketch_larger_than_the_dimension_is_capped_with_a_note() {
    for curvature in ["fd", "oja", "rp", "rfd"] {
        let out = newton(curvature, "100000");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{curvature}: {err}");
        assert!(
            err.contains(
                "the sketch size 100000 is larger than the dimension d = 13: capped at 13"
            ),
            "{err}"
        );
        let capped = newton(curvature, "13");
        let strip = |o: &std::process::Output| {
            let mut v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            let o = v.as_object_mut().unwrap();
            o.remove("seconds");
            o.remove("examples_per_second");
            o.remove("learner");
            v
        };
        assert_eq!(strip(&out), strip(&capped), "{curvature}");
    }
}
