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

/// The JSON summary of a run without its timings and learner description (which names `m`).
fn results(out: &std::process::Output) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let o = v.as_object_mut().unwrap();
    for key in ["seconds", "examples_per_second", "learner"] {
        o.remove(key);
    }
    v
}

/// The default mixture's sketch size is capped at `d` too (it was refused, "needs 1788.2 GiB up
/// front", and a size that fitted, `--size 2000` on a9a, ran for more than ten minutes), but
/// never below the default `m = 10`, so a file with `d < 10` keeps the default's sketches.
#[test]
fn the_default_learners_sketch_size_is_capped_too() {
    let heart = repo_file("heart.libsvm");
    let train = |extra: &[&str], file: &str| train_ok(&[&["--json"], extra, &[file]].concat());
    let big = train(&["--size", "100000"], &heart);
    let err = String::from_utf8_lossy(&big.stderr);
    assert!(
        err.contains("the sketch size 100000 is larger than the dimension d = 13: capped at 13"),
        "{err}"
    );
    assert_eq!(results(&big), results(&train(&["--size", "13"], &heart)));
    let dir = Scratch::new("capdefault");
    let small = dir.path("d5.libsvm");
    let rows: String = (0..60)
        .map(|i| {
            format!(
                "{} 1:{} 3:{} 5:0.5\n",
                if i % 3 == 0 { 1 } else { -1 },
                i % 7,
                i % 4
            )
        })
        .collect();
    std::fs::write(&small, rows).unwrap();
    let capped = train(&["--size", "50"], &small);
    let err = String::from_utf8_lossy(&capped.stderr);
    assert!(
        err.contains("larger than the dimension d = 5: capped at 10"),
        "{err}"
    );
    let default = train(&[], &small);
    assert!(!String::from_utf8_lossy(&default.stderr).contains("capped"));
    assert_eq!(results(&capped), results(&default));
}

/// Issue 26 item 3 for the multiclass learners: a `--size` above `d` is capped as for binary
/// ones — one-against-all members by the binary rule (never below the default `m = 10`), the
/// softmax learner's shared sketch at `max(d, 20)` — with the same note, and the capped run
/// equals the run at the capped size. Before, `--multiclass --size 100000` was refused ("needs
/// … GiB") and a size above `d` that fitted ran at the larger `m`.
#[test]
fn multiclass_sketch_sizes_are_capped_at_the_dimension() {
    let dir = Scratch::new("capmulti");
    let file = dir.path("k3.libsvm");
    let rows: String = (0..90)
        .map(|i| {
            let features: String = (1..=30)
                .filter(|j| (i + j) % 4 == 0)
                .map(|j| format!(" {j}:{}", (i * j) % 5))
                .collect();
            format!("{}{features}\n", i % 3)
        })
        .collect();
    std::fs::write(&file, rows).unwrap();
    let train = |extra: &[&str]| train_ok(&[&["--json", "--multiclass"], extra, &[&file]].concat());
    for (reduction, cap) in [("oaa", "30"), ("softmax", "30")] {
        let big = train(&["--reduction", reduction, "--size", "100000"]);
        let err = String::from_utf8_lossy(&big.stderr);
        assert!(
            err.contains(
                "the sketch size 100000 is larger than the dimension d = 30: capped at 30"
            ),
            "{reduction}: {err}"
        );
        let at_cap = train(&["--reduction", reduction, "--size", cap]);
        assert!(!String::from_utf8_lossy(&at_cap.stderr).contains("capped"));
        assert_eq!(results(&big), results(&at_cap), "{reduction}");
    }
}

/// `sketchlearn train --quiet ARGS`, which must succeed.
fn train_ok(args: &[&str]) -> std::process::Output {
    let out = run(&[&["train", "--quiet"], args].concat(), None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// This machine's memory in GiB (`MemTotal`, as the footprint check reads it).
fn machine_gib() -> f64 {
    let info = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let kib: f64 = info
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(f64::INFINITY);
    kib / (1u64 << 20) as f64
}

/// The multiclass memory check (`run/footprint.rs::check_fits_multiclass`, issue 24) through the
/// command line. One-against-all over the lazily touched default members at `-b 27` trains a
/// small 3-class VW file, with the note of the bytes per distinct feature when all 2^27 would
/// not fit (its "all used" figure is that many bytes times 2^27); the dense softmax learner
/// takes its `K × 2^27` weights up front (416 bytes a feature at K = 12 and m = 20: 52.0 GiB), so where
/// that is more than the machine has it is refused before anything is allocated, and at `-b 31`
/// (832 GiB) everywhere.
#[test]
fn multiclass_memory_note_and_refusal() {
    let dir = Scratch::new("multiclass27");
    let vw = dir.path("t.vw");
    std::fs::write(&vw, "1 |f a:1 b:2\n2 |f b:1 c:1\n3 |f a:1\n").unwrap();
    let out = run(&["train", "--multiclass", "-b", "27", &vw], None);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    let note = err.lines().find(|l| l.contains("memory grows"));
    match note {
        Some(note) => {
            let number = |after: &str, before: &str| -> f64 {
                let tail = &note[note.find(after).unwrap() + after.len()..];
                tail[..tail.find(before).unwrap()].trim().parse().unwrap()
            };
            let per_feature = number("grows by", "bytes with each distinct feature");
            let all = number("feature the input uses:", "GiB if all are used");
            let expected = per_feature * (1u64 << 27) as f64 / (1u64 << 30) as f64;
            assert!(per_feature > 100.0, "{note}");
            assert!((all - expected).abs() <= 0.01 * expected + 0.1, "{note}");
            assert!(
                all > machine_gib() && note.contains("fewer -b bits"),
                "{note}"
            );
        }
        // Over 100 bytes a feature: 12.5 GiB for 2^27, so no note means a larger machine.
        None => assert!(machine_gib() > 12.5, "no note: {err}"),
    }
    let softmax = |bits: &str| {
        let args = [
            "train",
            "--oaa",
            "12",
            "--reduction",
            "softmax",
            "--representation",
            "dense",
            "-b",
            bits,
        ];
        run(&[&args[..], &[vw.as_str()]].concat(), None)
    };
    let mut refused = vec!["31"];
    if machine_gib() < 52.0 {
        refused.push("27");
    }
    for bits in refused {
        let err = assert_clear_error(&softmax(bits), "up front");
        // The untuned softmax sketch has m = 20 rows (`sketch_choice.rs`): 416 bytes a feature.
        assert!(err.contains("416 bytes a feature"), "{err}");
        assert!(
            err.contains("fewer -b bits") && err.contains("K=12"),
            "{err}"
        );
    }
}
