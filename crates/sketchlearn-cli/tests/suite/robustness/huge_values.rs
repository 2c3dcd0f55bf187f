//! Feature values too large for a learner's sketch: the run stops at the row with a clear error
//! that names the file and line, says what was wrong and what to do, and writes no model.

use super::{assert_clear_error, run, Scratch};

/// Eight ordinary LIBSVM rows over five features, row `at` (0-based) with every value times
/// `factor`.
fn one_huge_row(dir: &Scratch, factor: f64, at: usize) -> String {
    let path = dir.path("huge.libsvm");
    let rows: String = (0..8)
        .map(|i| {
            let f = if i == at { factor } else { 1.0 };
            let values: String = (1..=5)
                .map(|j| format!(" {j}:{:e}", f * ((i * 7 + j * 3) % 11) as f64 / 10.0 - 0.4))
                .collect();
            format!("{}{values}\n", if i % 2 == 0 { "+1" } else { "-1" })
        })
        .collect();
    std::fs::write(&path, rows).unwrap();
    path
}

/// Trains `learner` (its flags) with the squared loss on [`one_huge_row`] with a row of
/// `1e300` values at line 4, whose gradient `p − y` makes its sketch row infinite: the run stops
/// at `FILE:4:` with the message of `check_row_norm` (what is too large, and what to do) and
/// writes no model.
fn refused_at_its_line_with_the_fix(dir: &Scratch, learner: &[&str]) {
    let data = one_huge_row(dir, 1e300, 3);
    let model = dir.path("m.model");
    let mut args = vec!["train", "--quiet", "--size", "3", "--loss", "squared"];
    args.extend_from_slice(learner);
    args.extend_from_slice(&["-f", &model, &data]);
    let err = assert_clear_error(&run(&args, None), &format!("{data}:4: "));
    for needle in [
        "a feature value is too large",
        "divide the large feature columns",
    ] {
        assert!(err.contains(needle), "{learner:?}: {err}");
    }
    assert!(!std::path::Path::new(&model).exists(), "{learner:?}");
}

/// A row of 1e300 values is refused at its line by the FD, RP and Oja sketches, with one message
/// that says what to do (`check_row_norm`). (A row of ~1e90 values, above Oja's own bound, does
/// not reach the sketch at that size from the command line: a single learner divides its rows by
/// their running RMS norm. The library tests cover it.)
#[test]
fn a_row_too_large_for_the_sketch_is_refused_at_its_line_with_the_fix() {
    let dir = Scratch::new("huge-values");
    for curvature in ["oja", "fd", "rp"] {
        refused_at_its_line_with_the_fix(&dir, &["--algo", "newton", "--curvature", curvature]);
    }
}

/// Ada-FD and Sketchy refuse it by the same rule and message (they failed with the eigensolver's
/// "matrix contains a non-finite value", which named neither the value nor a remedy).
#[test]
fn ada_fd_and_sketchy_refuse_a_row_too_large_for_their_sketch_at_its_line_with_the_fix() {
    let dir = Scratch::new("huge-values-adagrad");
    for algo in ["ada-fd", "sketchy"] {
        refused_at_its_line_with_the_fix(&dir, &["--algo", algo]);
    }
}
