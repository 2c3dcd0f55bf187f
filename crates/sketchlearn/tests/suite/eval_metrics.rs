//! Tests of the progressive-validation loop and the metrics (`sketchlearn::eval`).

use std::borrow::Cow;
use std::convert::Infallible;
use std::io::Cursor;

use proptest::prelude::*;
use sketchlearn::eval::{
    evaluate, evaluate_with, progressive, progressive_with, EvalError, Metrics, ProgressRow,
};
use sketchlearn::linear::{LearnError, OnlineLearner};
use sketchlearn::loss::Loss;
use sketchlearn::{Example, LibsvmOptions, LibsvmReader, ParseError, ParseErrorKind, Row};

// ---------------------------------------------------------------------------------------------
// Test learners
// ---------------------------------------------------------------------------------------------

/// A fixed-weight learner that records every `learn` call. `learn` returns a scripted value
/// (different from `predict`), and can be told to fail on one call.
struct Recorder {
    w: Vec<f64>,
    /// `learn` call `k` (0-based) returns `script[k]`.
    script: Vec<f64>,
    /// (label, weight, indices) of each `learn` call, in order.
    calls: Vec<(f64, f64, Vec<u32>)>,
    /// 1-based call number that fails.
    fail_on: Option<usize>,
}

impl Recorder {
    fn new(w: Vec<f64>, script: Vec<f64>) -> Self {
        Recorder {
            w,
            script,
            calls: Vec::new(),
            fail_on: None,
        }
    }
}

impl OnlineLearner for Recorder {
    fn dim(&self) -> usize {
        self.w.len()
    }

    fn predict(&self, x: Row<'_>) -> f64 {
        x.dot(&self.w)
    }

    fn learn(&mut self, x: Row<'_>, y: f64, weight: f64) -> Result<f64, LearnError> {
        let indices = match x {
            Row::Sparse { indices, .. } => indices.to_vec(),
            Row::Dense(_) => panic!("the loop passes sparse rows"),
        };
        self.calls.push((y, weight, indices));
        if self.fail_on == Some(self.calls.len()) {
            return Err(LearnError::NonFinite("scripted failure".into()));
        }
        Ok(self.script[self.calls.len() - 1])
    }

    fn weights(&self) -> Cow<'_, [f64]> {
        Cow::Borrowed(&self.w)
    }
}

/// A perceptron that indexes its weights directly: it panics on a feature beyond `dim`, so it
/// shows whether `evaluate` drops unseen features before calling `predict`.
struct StrictPerceptron(Vec<f64>);

impl OnlineLearner for StrictPerceptron {
    fn dim(&self) -> usize {
        self.0.len()
    }

    fn predict(&self, x: Row<'_>) -> f64 {
        match x {
            Row::Sparse { indices, values } => indices
                .iter()
                .zip(values)
                .map(|(&i, &v)| self.0[i as usize] * v)
                .sum(),
            Row::Dense(v) => v.iter().zip(&self.0).map(|(a, b)| a * b).sum(),
        }
    }

    fn learn(&mut self, x: Row<'_>, y: f64, _weight: f64) -> Result<f64, LearnError> {
        let need = x.max_index_plus_one();
        if need > self.0.len() {
            return Err(LearnError::DimensionMismatch {
                index: need - 1,
                dim: self.0.len(),
            });
        }
        let p = self.predict(x);
        if (p > 0.0) != (y > 0.0) {
            x.axpy_into(y, &mut self.0);
        }
        Ok(p)
    }

    fn weights(&self) -> Cow<'_, [f64]> {
        Cow::Borrowed(&self.0)
    }
}

fn ex(label: f64, weight: f64, indices: &[u32], values: &[f64]) -> Example {
    Example {
        label,
        weight,
        indices: indices.to_vec(),
        values: values.to_vec(),
    }
}

fn ok_all(examples: Vec<Example>) -> impl Iterator<Item = Result<Example, Infallible>> {
    examples.into_iter().map(Ok)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * (1.0 + a.abs().max(b.abs()))
}

// ---------------------------------------------------------------------------------------------
// Metrics by hand
// ---------------------------------------------------------------------------------------------

#[test]
fn error_loss_and_rmse_by_hand() {
    let mut m = Metrics::new();
    // (p, y, w): hinge loss, 0/1 error (p ≤ 0 predicts −1), squared error
    m.add(0.0, 1.0, 1.0, Loss::Hinge); // 1, wrong, 1
    m.add(0.0, -1.0, 2.0, Loss::Hinge); // 1, right, 1
    m.add(2.0, 1.0, 1.0, Loss::Hinge); // 0, right, 1
    m.add(-1.0, 1.0, 0.5, Loss::Hinge); // 2, wrong, 4
    assert_eq!(m.examples(), 4);
    assert_eq!(m.weighted_examples(), 4.5);
    assert!(close(m.mean_loss(), 4.0 / 4.5), "{}", m.mean_loss());
    assert!(close(m.error_rate().unwrap(), 1.5 / 4.5));
    assert!(close(m.rmse(), (6.0f64 / 4.5).sqrt()));
}

#[test]
fn error_rate_label_convention_and_zero_labels() {
    // Labels {0, 1} with a classification loss: 0 is negative (label > 0 is positive).
    let mut m = Metrics::new();
    m.add(0.0, 0.0, 1.0, Loss::Logistic); // predicts −1, label negative: right
    m.add(-0.3, 0.0, 1.0, Loss::Logistic); // right
    m.add(1e-300, 0.0, 1.0, Loss::Logistic); // a positive score predicts +1: wrong
    m.add(-0.0, 1.0, 1.0, Loss::Logistic); // −0 ≤ 0: wrong
    assert_eq!(m.error_rate(), Some(0.5));
}

#[test]
fn error_rate_only_for_classification_streams() {
    // Squared loss on ±1 labels (the RFD experiments): an error rate.
    let mut m = Metrics::new();
    m.add(0.5, 1.0, 1.0, Loss::Squared);
    m.add(0.5, -1.0, 3.0, Loss::Squared);
    assert_eq!(m.error_rate(), Some(0.75));
    // A regression label: no error rate, the other metrics stay.
    m.add(2.0, 2.5, 1.0, Loss::Squared);
    assert_eq!(m.error_rate(), None);
    assert!(close(m.mean_loss(), (0.125 + 3.0 * 1.125 + 0.125) / 5.0));
    assert!(close(
        m.rmse(),
        ((0.25 + 3.0 * 2.25 + 0.25) / 5.0f64).sqrt()
    ));
}

#[test]
fn empty_and_zero_weight_metrics() {
    let m = Metrics::new();
    assert_eq!(m.examples(), 0);
    assert!(m.mean_loss().is_nan());
    assert!(m.rmse().is_nan());
    assert_eq!(m.error_rate(), None);
    assert_eq!(m.auc(), None);
    assert_eq!(m.final_row(), None);

    let mut m = Metrics::new();
    m.add(1.0, -1.0, 0.0, Loss::Logistic);
    m.add(-1.0, 1.0, 0.0, Loss::Logistic);
    assert_eq!(m.examples(), 2);
    assert_eq!(m.weighted_examples(), 0.0);
    assert_eq!(m.error_rate(), None);
    assert_eq!(m.auc(), None, "zero-weight examples carry no AUC pairs");
}

#[test]
fn auc_by_hand_with_ties_and_weights() {
    // (score, label, weight). Positives: a (0.9, w1), b (0.5, w2); negatives c (0.5, w1),
    // d (0.1, w3), e (0.9, w1). Pairs (positive over negative, ½ for ties, times weights):
    //   a: c → 1, d → 3, e (tie) → ½        = 4.5
    //   b: c (tie) → ½·2 = 1, d → 6, e → 0  = 7
    // AUC = 11.5 / (3 · 5) = 23/30.
    let mut m = Metrics::new();
    for &(s, y, w) in &[
        (0.9, 1.0, 1.0),
        (0.5, 1.0, 2.0),
        (0.5, -1.0, 1.0),
        (0.1, -1.0, 3.0),
        (0.9, -1.0, 1.0),
    ] {
        m.add(s, y, w, Loss::Logistic);
    }
    assert!(close(m.auc().unwrap(), 23.0 / 30.0), "{:?}", m.auc());
    // Computing it does not consume anything.
    assert!(close(m.auc().unwrap(), 23.0 / 30.0));

    // All tied: ½. Perfectly reversed: 0. +0 and −0 tie.
    let mut m = Metrics::new();
    m.add(0.0, 1.0, 1.0, Loss::Logistic);
    m.add(-0.0, -1.0, 1.0, Loss::Logistic);
    assert_eq!(m.auc(), Some(0.5));
    let mut m = Metrics::new();
    m.add(-1.0, 1.0, 1.0, Loss::Logistic);
    m.add(1.0, -1.0, 1.0, Loss::Logistic);
    assert_eq!(m.auc(), Some(0.0));
}

#[test]
fn auc_none_with_one_class_or_without_data() {
    let mut m = Metrics::new();
    m.add(0.3, 1.0, 1.0, Loss::Logistic);
    m.add(-0.3, 1.0, 1.0, Loss::Logistic);
    assert_eq!(m.auc(), None);
    m.add(-0.3, 0.0, 1.0, Loss::Logistic); // label 0 is a negative
    assert_eq!(m.auc(), Some(0.75));

    let mut small = Metrics::without_auc();
    assert!(!small.keeps_auc());
    small.add(0.3, 1.0, 1.0, Loss::Logistic);
    small.add(-0.3, -1.0, 1.0, Loss::Logistic);
    assert_eq!(small.auc(), None);
    assert_eq!(small.error_rate(), Some(0.0));
}

#[test]
fn merge_equals_adding_in_sequence() {
    let data: Vec<(f64, f64, f64)> = (0..37)
        .map(|i| {
            let s = ((i * 7919) % 13) as f64 / 4.0 - 1.5;
            let y = if (i * 31) % 5 < 2 { 1.0 } else { -1.0 };
            (s, y, 0.5 + (i % 3) as f64)
        })
        .collect();
    let mut all = Metrics::new();
    let (mut a, mut b) = (Metrics::new(), Metrics::new());
    for (k, &(s, y, w)) in data.iter().enumerate() {
        all.add(s, y, w, Loss::Logistic);
        let part = if k < 20 { &mut a } else { &mut b };
        part.add(s, y, w, Loss::Logistic);
    }
    a.merge(&b);
    let (x, y) = (a.summary(), all.summary());
    assert_eq!(x.examples, y.examples);
    assert!(close(x.weighted_examples, y.weighted_examples));
    assert!(close(x.mean_loss, y.mean_loss));
    assert!(close(x.error_rate.unwrap(), y.error_rate.unwrap()));
    assert!(close(x.rmse, y.rmse));
    assert!(close(x.auc.unwrap(), y.auc.unwrap()));

    // AUC data survives a merge only if both sides kept it.
    let mut c = Metrics::new();
    c.add(1.0, 1.0, 1.0, Loss::Logistic);
    c.merge(&Metrics::without_auc());
    assert!(!c.keeps_auc());
    assert_eq!(c.auc(), None);
}

#[test]
fn metrics_serialize_as_summary() {
    let mut m = Metrics::new();
    m.add(1.0, 1.0, 1.0, Loss::Hinge);
    m.add(-1.0, -1.0, 1.0, Loss::Hinge);
    let json: serde_json::Value = serde_json::to_value(&m).unwrap();
    assert_eq!(json["examples"], 2);
    assert_eq!(json["mean_loss"], 0.0);
    assert_eq!(json["error_rate"], 0.0);
    assert_eq!(json["auc"], 1.0);
    assert_eq!(json["rmse"], 0.0);
    assert!(json.get("auc_data").is_none());
    let empty = serde_json::to_value(Metrics::without_auc()).unwrap();
    assert!(empty["auc"].is_null());
    assert!(empty["mean_loss"].is_null(), "NaN serializes as null");
}

/// O(n²) weighted pair count.
fn brute_force_auc(data: &[(f64, f64, f64)]) -> Option<f64> {
    let (mut num, mut pos, mut neg) = (0.0, 0.0, 0.0);
    for &(s, y, w) in data {
        if y > 0.0 {
            pos += w;
        } else {
            neg += w;
        }
        if y <= 0.0 {
            continue;
        }
        for &(t, z, v) in data {
            if z > 0.0 {
                continue;
            }
            if s > t {
                num += w * v;
            } else if s == t {
                num += 0.5 * w * v;
            }
        }
    }
    (pos > 0.0 && neg > 0.0).then(|| num / (pos * neg))
}

/// The streaming AUC of `data` (score, label, weight) under `loss` is the brute-force one within
/// `tol` (or both are undefined).
fn auc_agrees(data: &[(f64, f64, f64)], loss: Loss, tol: f64) -> Result<(), TestCaseError> {
    let mut m = Metrics::new();
    for &(s, y, w) in data {
        m.add(s, y, w, loss);
    }
    match (m.auc(), brute_force_auc(data)) {
        (None, None) => {}
        (Some(a), Some(b)) => prop_assert!((a - b).abs() <= tol, "{} vs {}", a, b),
        (a, b) => prop_assert!(false, "{:?} vs {:?}", a, b),
    }
    Ok(())
}

proptest! {
    #[test]
    fn auc_matches_brute_force(
        data in prop::collection::vec(
            (
                // Few distinct scores, so that ties are common; labels ±1 or 0; weights incl. 0.
                (-4i32..=4).prop_map(|k| k as f64 / 2.0),
                prop::sample::select(vec![-1.0, 0.0, 1.0]),
                prop::sample::select(vec![0.0, 0.25, 1.0, 3.0]),
            ),
            0..60,
        )
    ) {
        auc_agrees(&data, Loss::Logistic, 1e-12)?;
    }

    #[test]
    fn auc_matches_brute_force_on_continuous_scores(
        data in prop::collection::vec(
            (-1e3f64..1e3, prop::bool::ANY, 0.0f64..5.0),
            0..80,
        )
    ) {
        let data: Vec<(f64, f64, f64)> =
            data.into_iter().map(|(s, y, w)| (s, if y { 1.0 } else { -1.0 }, w)).collect();
        auc_agrees(&data, Loss::Hinge, 1e-10)?;
    }
}

// ---------------------------------------------------------------------------------------------
// progressive
// ---------------------------------------------------------------------------------------------

#[test]
fn progressive_learns_each_example_once_in_order_and_scores_learns_prediction() {
    let examples = vec![
        ex(1.0, 1.0, &[0], &[1.0]),
        ex(-1.0, 2.0, &[1], &[1.0]),
        ex(1.0, 0.5, &[0, 1], &[1.0, 1.0]),
    ];
    // predict would give 10, 10, 20 (weights 10): learn returns other, scripted values.
    let mut learner = Recorder::new(vec![10.0, 10.0], vec![-1.0, 0.5, 3.0]);
    let mut metrics = Metrics::new();
    let n = progressive(
        &mut learner,
        ok_all(examples.clone()),
        Loss::Squared,
        &mut metrics,
        |_| {},
    )
    .unwrap();
    assert_eq!(n, 3);
    let expected_calls: Vec<(f64, f64, Vec<u32>)> = examples
        .iter()
        .map(|e| (e.label, e.weight, e.indices.clone()))
        .collect();
    assert_eq!(learner.calls, expected_calls);

    let mut reference = Metrics::new();
    reference.add(-1.0, 1.0, 1.0, Loss::Squared);
    reference.add(0.5, -1.0, 2.0, Loss::Squared);
    reference.add(3.0, 1.0, 0.5, Loss::Squared);
    assert_eq!(metrics.summary(), reference.summary());
    // ½·(4·1 + 2.25·2 + 4·0.5) / 3.5
    assert!(close(metrics.mean_loss(), 0.5 * 10.5 / 3.5));
    // Wrong: −1 on a positive (weight 1) and 0.5 on a negative (weight 2).
    assert_eq!(metrics.error_rate(), Some(3.0 / 3.5));
}

/// Hinge loss with label 1 and prediction `1 − k` is `k`: example `k` (1-based) has loss `k`.
/// [`progressive`] with the hinge loss over `examples` (none fails to read), each progress row
/// appended to `rows`: the number of examples learned, or the error.
fn hinge_pass(
    learner: &mut Recorder,
    examples: Vec<Example>,
    metrics: &mut Metrics,
    rows: &mut Vec<ProgressRow>,
) -> Result<u64, EvalError<Infallible>> {
    progressive(learner, ok_all(examples), Loss::Hinge, metrics, |row| {
        rows.push(*row)
    })
}

fn losses_one_to(n: usize) -> (Recorder, Vec<Example>) {
    let script = (1..=n).map(|k| 1.0 - k as f64).collect();
    let examples = (0..n)
        .map(|k| ex(1.0, 1.0, &[0, 2][..k % 3], &[1.0, 1.0][..k % 3]))
        .collect();
    (Recorder::new(vec![0.0; 3], script), examples)
}

#[test]
fn progress_rows_at_powers_of_two_with_since_last_averages() {
    let (mut learner, examples) = losses_one_to(10);
    let mut metrics = Metrics::new();
    let mut rows: Vec<ProgressRow> = Vec::new();
    let n = hinge_pass(&mut learner, examples, &mut metrics, &mut rows).unwrap();
    assert_eq!(n, 10);
    let counts: Vec<u64> = rows.iter().map(|r| r.examples).collect();
    assert_eq!(counts, [1, 2, 4, 8]);
    // Losses 1..=k: average (k+1)/2; since the previous row at j: (j+1+k)/2.
    let averages: Vec<f64> = rows.iter().map(|r| r.average_loss).collect();
    assert_eq!(averages, [1.0, 1.5, 2.5, 4.5]);
    let since: Vec<f64> = rows.iter().map(|r| r.since_last_loss).collect();
    assert_eq!(since, [1.0, 2.0, 3.5, 6.5]);
    let r8 = rows[3];
    assert_eq!(r8.weighted_examples, 8.0);
    assert_eq!((r8.label, r8.prediction, r8.features), (1.0, -7.0, 1)); // example 8: k=7, 7%3=1

    let last = metrics.final_row().expect("10 is not a power of two");
    assert_eq!(last.examples, 10);
    assert_eq!(last.average_loss, 5.5);
    assert_eq!(last.since_last_loss, 9.5);
    assert_eq!((last.prediction, last.features), (-9.0, 0));
    assert_eq!(metrics.final_row(), Some(last), "final_row does not reset");

    // A stream of a power-of-two length has no extra final row.
    let (mut learner, examples) = losses_one_to(8);
    let mut metrics = Metrics::new();
    hinge_pass(&mut learner, examples, &mut metrics, &mut Vec::new()).unwrap();
    assert_eq!(metrics.final_row(), None);
}

#[test]
fn progress_rows_are_weighted() {
    // Losses 1, 2, 3, 4 with weights 1, 3, 1, 3.
    let (mut learner, mut examples) = losses_one_to(4);
    for (k, e) in examples.iter_mut().enumerate() {
        e.weight = if k % 2 == 0 { 1.0 } else { 3.0 };
    }
    let mut metrics = Metrics::new();
    let mut rows = Vec::new();
    hinge_pass(&mut learner, examples, &mut metrics, &mut rows).unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[1].weighted_examples, 4.0);
    assert_eq!(rows[1].average_loss, 7.0 / 4.0);
    assert_eq!(rows[1].since_last_loss, 2.0);
    assert_eq!(rows[2].weighted_examples, 8.0);
    assert_eq!(rows[2].average_loss, 22.0 / 8.0);
    assert_eq!(rows[2].since_last_loss, 15.0 / 4.0);
}

#[test]
fn progress_rows_follow_the_cumulative_count_across_calls() {
    let (mut learner, examples) = losses_one_to(8);
    let mut metrics = Metrics::new();
    let mut rows = Vec::new();
    let (first, second) = examples.split_at(3);
    let n1 = hinge_pass(&mut learner, first.to_vec(), &mut metrics, &mut rows).unwrap();
    assert_eq!(metrics.final_row().unwrap().examples, 3);
    let n2 = hinge_pass(&mut learner, second.to_vec(), &mut metrics, &mut rows).unwrap();
    assert_eq!((n1, n2), (3, 5));
    let counts: Vec<u64> = rows.iter().map(|r| r.examples).collect();
    assert_eq!(counts, [1, 2, 4, 8]);
    assert_eq!(
        rows[2].since_last_loss, 3.5,
        "examples 3 and 4, across the two calls"
    );
    assert_eq!(metrics.final_row(), None);
}

#[test]
fn source_error_is_passed_through_unchanged() {
    let parse_error = ParseError::new(
        "train.libsvm",
        3,
        7,
        ParseErrorKind::MissingColon("4".into()),
    );
    let items = vec![
        Ok(ex(1.0, 1.0, &[0], &[1.0])),
        Ok(ex(-1.0, 1.0, &[1], &[1.0])),
        Err(parse_error.clone()),
        Ok(ex(1.0, 1.0, &[0], &[1.0])),
    ];
    let mut learner = Recorder::new(vec![0.0; 2], vec![0.5; 4]);
    let mut metrics = Metrics::new();
    let err = progressive(&mut learner, items, Loss::Logistic, &mut metrics, |_| {}).unwrap_err();
    assert_eq!(err.to_string(), parse_error.to_string());
    match err {
        EvalError::Source(e) => assert_eq!(e, parse_error),
        other => panic!("expected a source error, got {other:?}"),
    }
    assert_eq!(learner.calls.len(), 2, "nothing learned after the error");
    assert_eq!(metrics.examples(), 2);
}

#[test]
fn learn_error_reports_the_one_based_example_index() {
    let (mut learner, examples) = losses_one_to(6);
    learner.fail_on = Some(3);
    let mut metrics = Metrics::new();
    let err = hinge_pass(&mut learner, examples, &mut metrics, &mut Vec::new()).unwrap_err();
    match &err {
        EvalError::Learn { example, source } => {
            assert_eq!(*example, 3);
            assert_eq!(*source, LearnError::NonFinite("scripted failure".into()));
        }
        other => panic!("expected a learn error, got {other:?}"),
    }
    assert!(err.to_string().contains("example 3"), "{err}");
    let source = std::error::Error::source(&err).expect("the learn error is the source");
    assert_eq!(source.to_string(), "non-finite input: scripted failure");
    assert_eq!(learner.calls.len(), 3);
    assert_eq!(metrics.examples(), 2, "the failed example is not scored");

    // The index counts within the call, not cumulatively in the metrics.
    let (mut learner, examples) = losses_one_to(4);
    learner.fail_on = Some(2);
    let err = hinge_pass(&mut learner, examples, &mut metrics, &mut Vec::new()).unwrap_err();
    assert!(
        matches!(err, EvalError::Learn { example: 2, .. }),
        "{err:?}"
    );
}

#[test]
fn progressive_with_read_into_matches_the_iterator_version() {
    let text = "1 1:1 3:0.5\n-1 2:1\n# comment\n\n1 1:0.5 2:0.2\n-1 2:2 3:1 4:9\n1 1:2\n";
    let read =
        |text: &str| LibsvmReader::new(Cursor::new(text.to_owned()), "t", LibsvmOptions::default());

    let mut a = StrictPerceptron(vec![0.0; 4]);
    let mut ma = Metrics::new();
    let mut rows_a = Vec::new();
    let mut reader = read(text);
    let na = progressive_with(
        &mut a,
        |ex| reader.read_into(ex),
        Loss::Hinge,
        &mut ma,
        |r| rows_a.push(*r),
    )
    .unwrap();

    let mut b = StrictPerceptron(vec![0.0; 4]);
    let mut mb = Metrics::new();
    let mut rows_b = Vec::new();
    let nb = progressive(&mut b, read(text), Loss::Hinge, &mut mb, |r| {
        rows_b.push(*r)
    })
    .unwrap();

    assert_eq!((na, nb), (5, 5));
    assert_eq!(a.0, b.0);
    assert_eq!(ma.summary(), mb.summary());
    assert_eq!(rows_a, rows_b);
    assert_eq!(rows_a[2].features, 3, "example 4 has three features");
    assert_ne!(a.0, vec![0.0; 4], "the perceptron learned something");
}

#[test]
fn progressive_with_parse_error_keeps_line_and_column_and_can_resume() {
    let text = "1 1:1\n-1 2:1\n1 1:1 2:oops\n-1 2:1\n";
    let mut reader = LibsvmReader::new(Cursor::new(text), "bad.libsvm", LibsvmOptions::default());
    let mut learner = StrictPerceptron(vec![0.0; 2]);
    let mut metrics = Metrics::new();
    let err = progressive_with(
        &mut learner,
        |ex| reader.read_into(ex),
        Loss::Hinge,
        &mut metrics,
        |_| {},
    )
    .unwrap_err();
    let EvalError::Source(e) = err else {
        panic!("expected a source error")
    };
    assert_eq!(
        (e.source_name.as_str(), e.line, e.column),
        ("bad.libsvm", 3, 9)
    );
    assert_eq!(e.kind, ParseErrorKind::UnparsableValue("oops".into()));
    // The reader goes on with the next line: a caller may skip the bad one.
    let n = progressive_with(
        &mut learner,
        |ex| reader.read_into(ex),
        Loss::Hinge,
        &mut metrics,
        |_| {},
    )
    .unwrap();
    assert_eq!(n, 1);
    assert_eq!(metrics.examples(), 3);
}

// ---------------------------------------------------------------------------------------------
// evaluate
// ---------------------------------------------------------------------------------------------

#[test]
fn evaluate_predicts_without_learning() {
    let examples = vec![
        ex(1.0, 1.0, &[0], &[1.0]),
        ex(-1.0, 2.0, &[1], &[1.0]),
        ex(1.0, 1.0, &[0, 1], &[1.0, 1.0]),
    ];
    // predict gives 2, −3, −1; learn would give 100.
    let learner = Recorder::new(vec![2.0, -3.0], vec![100.0; 3]);
    let mut metrics = Metrics::new();
    let mut rows = Vec::new();
    let n = evaluate(
        &learner,
        ok_all(examples),
        Loss::Squared,
        &mut metrics,
        |r| rows.push(r.examples),
    )
    .unwrap();
    assert_eq!(n, 3);
    assert!(learner.calls.is_empty(), "evaluate never calls learn");
    let mut reference = Metrics::new();
    reference.add(2.0, 1.0, 1.0, Loss::Squared);
    reference.add(-3.0, -1.0, 2.0, Loss::Squared);
    reference.add(-1.0, 1.0, 1.0, Loss::Squared);
    assert_eq!(metrics.summary(), reference.summary());
    assert_eq!(metrics.error_rate(), Some(0.25));
    assert_eq!(rows, [1, 2]);
    assert_eq!(metrics.final_row().unwrap().examples, 3);
}

#[test]
fn evaluate_ignores_features_beyond_dim() {
    // Trained on 2 features; the test set has features 2 and 7 that were never seen. The strict
    // learner would panic on them: evaluate must drop them.
    let learner = StrictPerceptron(vec![1.0, -1.0]);
    let test = vec![
        ex(1.0, 1.0, &[0, 2, 7], &[3.0, 5.0, 5.0]),
        ex(-1.0, 1.0, &[1, 7], &[2.0, 100.0]),
        ex(1.0, 1.0, &[9], &[1.0]),
    ];
    let mut metrics = Metrics::new();
    let n = evaluate(
        &learner,
        ok_all(test.clone()),
        Loss::Squared,
        &mut metrics,
        |_| {},
    )
    .unwrap();
    assert_eq!(n, 3);
    let mut reference = Metrics::new();
    reference.add(3.0, 1.0, 1.0, Loss::Squared);
    reference.add(-2.0, -1.0, 1.0, Loss::Squared);
    reference.add(0.0, 1.0, 1.0, Loss::Squared);
    assert_eq!(metrics.summary(), reference.summary());

    // The `_with` variant, on the same data, agrees; and a learner whose predict already ignores
    // unseen features (Row::dot) gives the same scores.
    let mut it = test.clone().into_iter();
    let mut m2 = Metrics::new();
    evaluate_with(
        &learner,
        |slot: &mut Example| -> Result<bool, Infallible> {
            Ok(it.next().map(|e| *slot = e).is_some())
        },
        Loss::Squared,
        &mut m2,
        |_| {},
    )
    .unwrap();
    assert_eq!(m2.summary(), reference.summary());
    let dot = Recorder::new(vec![1.0, -1.0], vec![]);
    let mut m3 = Metrics::new();
    evaluate(&dot, ok_all(test), Loss::Squared, &mut m3, |_| {}).unwrap();
    assert_eq!(m3.summary(), reference.summary());

    // progressive, by contrast, passes the whole row to learn (which rejects it here).
    let mut strict = StrictPerceptron(vec![1.0, -1.0]);
    let err = progressive(
        &mut strict,
        ok_all(vec![ex(1.0, 1.0, &[0, 2], &[1.0, 1.0])]),
        Loss::Hinge,
        &mut Metrics::new(),
        |_| {},
    )
    .unwrap_err();
    assert!(matches!(
        err,
        EvalError::Learn {
            example: 1,
            source: LearnError::DimensionMismatch { index: 2, dim: 2 }
        }
    ));
}

#[test]
fn evaluate_accepts_unsized_learners() {
    let learner: Box<dyn OnlineLearner> = Box::new(StrictPerceptron(vec![1.0]));
    let mut metrics = Metrics::without_auc();
    evaluate(
        &*learner,
        ok_all(vec![ex(1.0, 1.0, &[0], &[1.0])]),
        Loss::Logistic,
        &mut metrics,
        |_| {},
    )
    .unwrap();
    let mut boxed: Box<dyn OnlineLearner> = Box::new(StrictPerceptron(vec![0.0]));
    progressive(
        &mut *boxed,
        ok_all(vec![ex(1.0, 1.0, &[0], &[1.0])]),
        Loss::Logistic,
        &mut metrics,
        |_| {},
    )
    .unwrap();
    assert_eq!(metrics.examples(), 2);
    assert_eq!(boxed.weights().as_ref(), &[1.0]);
}
