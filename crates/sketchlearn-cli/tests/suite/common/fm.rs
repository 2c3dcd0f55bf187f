//! `sketchlearn fm` helpers: a saved model's own predictions and comparing prediction lists.
#![allow(dead_code)] // each test file uses a part

use super::process::{ok, run};

/// The predictions of the FM model `model` for `data` by `fm -i MODEL --train-fraction 0 -p`
/// (no learning), written to `out`; the run must succeed without a divergence warning
/// (nothing is learned).
pub fn fm_own_predictions(model: &str, data: &str, out: &std::path::Path) -> Vec<f64> {
    let o = out.to_str().unwrap();
    let args = [
        "fm",
        "--quiet",
        "-i",
        model,
        "--train-fraction",
        "0",
        "-p",
        o,
        data,
    ];
    let err = String::from_utf8_lossy(&ok(&run(&args)).stderr).into_owned();
    assert!(!err.contains("diverged"), "{err}");
    parse_predictions(&std::fs::read_to_string(out).unwrap())
}

/// One number a line.
pub fn parse_predictions(text: &str) -> Vec<f64> {
    text.lines().map(|l| l.parse().unwrap()).collect()
}

/// Two prediction lists agree to rounding (`fm -i` compacts the model before it predicts,
/// `fm predict` does not: the same model, sums in another order).
pub fn assert_same_predictions(got: &[f64], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (k, (a, b)) in got.iter().zip(want).enumerate() {
        assert!(
            (a - b).abs() <= 1e-12 * b.abs().max(1.0),
            "{what}: line {k}: {a} vs {b}"
        );
    }
}
