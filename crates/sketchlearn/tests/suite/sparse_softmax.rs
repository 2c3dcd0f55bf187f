//! The sparse-time softmax learner (`SparseSoftmax`, issue 24 item 2) equals the dense
//! `SoftmaxSon` over the doubling FD/RFD curvature: the probabilities and scores of every round
//! and the weights at the end agree on random sparse data through many FD shrinks (a shrink
//! every `m + 1` examples), with and without projection and intercept, with importance weights
//! (zeros included). A model file written mid-stream resumes bit for bit, and a damaged one is
//! refused with the reason.
//!
//! "Agree" is [`allowed`]: `TOL·(1 + scale)` plus a multiple of how far the dense learner moves
//! from itself when its inputs move by one ulp (the largest spread of its rounding twins,
//! [`common::twins`]). The dense learner amplifies rounding on some streams (Newton steps that
//! overshoot the scores, see [`allowed`]), and no other order of the same operations can agree
//! with it more closely than it agrees with itself; from the same state the two forms' rounds
//! agree to a few ulps (`one_row_sketch_steps_agree_from_the_same_state`). A stream is compared until the two sketches part ([`sketch_gap`]: the
//! sparse FD shrink's own precision on nearly dependent rows, tested in
//! `tests/suite/sparse_equivalence.rs`).

use crate::common;

use common::twins::{twin_spread, RoundingTwins};
use common::{scale_of, spread};
use proptest::prelude::*;
use sketchlearn::labels::Classes;
use sketchlearn::linear::curvature::FdCurvature;
use sketchlearn::linear::multiclass::{
    AnyMulticlass, MulticlassConfig, MulticlassLearner, MulticlassModel, Reduction, SoftmaxParams,
    SoftmaxSon,
};
use sketchlearn::linear::sparse::SparseSoftmax;
use sketchlearn::linear::{CurvatureKind, Representation};
use sketchlearn::sketch::FdVariant;
use sketchlearn::Row;

const TOL: f64 = 1e-9;

/// How many times the rounding twin's spread the sparse form may differ by (see [`allowed`]).
const AMPLIFIED: f64 = 64.0;

/// Relative difference of the two learners' sketches `BᵀB` beyond which a stream is compared
/// no further (see [`sketch_gap`]).
const SKETCH_TOL: f64 = 1e-11;

/// Cases of the equivalence proptest.
const CASES: u32 = 48;

type Data = common::ClassRows;

fn data(n: usize, d: usize, k: usize, density: f64, seed: u64) -> Data {
    common::class_rows(n, d, k, density, seed)
}

#[derive(Clone, Copy, Debug)]
struct Case {
    k: usize,
    d: usize,
    m: usize,
    rfd: bool,
    bias: bool,
    clip: f64,
    c: f64,
}

fn params(case: &Case) -> SoftmaxParams {
    SoftmaxParams {
        c: case.c,
        ridge: 0.1,
        clip: case.clip,
        bias: case.bias.then_some(1.0),
        diag: None,
    }
}

fn pair(case: &Case, seed: u64) -> (SoftmaxSon<FdCurvature>, SparseSoftmax) {
    let de = case.d + case.bias as usize;
    let (p, alpha) = (params(case), 0.5);
    let (dense, sparse) = if case.rfd {
        (
            FdCurvature::rfd(de, case.m, FdVariant::Doubling, alpha).unwrap(),
            SparseSoftmax::rfd(case.k, case.d, case.m, alpha, seed, p).unwrap(),
        )
    } else {
        (
            FdCurvature::fd(de, case.m, FdVariant::Doubling, alpha).unwrap(),
            SparseSoftmax::fd(case.k, case.d, case.m, alpha, seed, p).unwrap(),
        )
    };
    (SoftmaxSon::new(case.k, dense, p).unwrap(), sparse)
}

/// The dense learner's rounding twins ([`common::twins`]).
type Twins = RoundingTwins<SoftmaxSon<FdCurvature>>;

/// How far the sparse-time form may be from the dense learner: [`TOL`] relative to the
/// quantity's scale, plus [`AMPLIFIED`] times the largest spread between the dense learner and
/// its rounding twins ([`common::twins`]) on the same quantity. Why the second term: the dense
/// learner itself amplifies rounding. A round whose Newton step overshoots the score along `x̃` — `ω·q·μ > 2`
/// with `q = x̃ᵀΦ⁻¹x̃` and `μ` the largest eigenvalue of `Γ⁻¹(diag(p) − ppᵀ)` — multiplies a
/// score error along `x̃` by `|1 − ω·q·μ|` (the step's Jacobian on `W x̃` is
/// `I − ω·q·Γ⁻¹(diag(p) − ppᵀ)`). On `known_drift_on_an_ill_conditioned_stream` (m = 1 FD,
/// c = 0.1) `ω·q·μ` reaches 22; the twin's one-ulp perturbation of the *first* row alone grows
/// to 5.5e-9 in the weights by round 300, all of its growth in rounds with `ω·q·μ > 2` (×7.4
/// at 11.3, ×4.8 at 16.6, ×4.7 at 22.4), and the sparse form ends 1.1e-8 away — the same
/// order. No reordering of the sparse form can agree with the dense learner better than the
/// dense learner agrees with itself under rounding; a norm bound on the rounds' Jacobians
/// (`Π(1 + ω‖Γ⁻¹J‖‖x̃‖‖Φ⁻¹x̃‖)`) is 3e36 on that stream, too loose to test anything, so the
/// twins measure the amplification along the actual trajectory instead. Several of them: the
/// amplification depends on the direction of a perturbation, and one twin can keep to weakly
/// amplified directions (on `one_row_sketch_seed_384_agrees` four twins end 3.7e-11, 1.8e-8,
/// 2.4e-10 and 9.9e-10 from the dense learner's weights at round 181, the sparse form 1.2e-8;
/// the first twin alone did not allow that).
/// (`scale_of`: each class score is a sum over the same sketch corrections, so its rounding
/// error follows the largest score, not its own — seen: m = 1 FD, scores 26.3 and −3.7 after 61
/// shrinks, both off by ~6e-9.)
fn allowed(a: &[f64], twins: &[Vec<f64>], scale: f64) -> f64 {
    TOL * (1.0 + scale) + AMPLIFIED * twin_spread(a, twins)
}

/// `max |BᵀB − B̃ᵀB̃| / max |BᵀB|` between the dense learner's FD buffer and the sparse
/// learner's sketch. The two agree to rounding until a shrink meets a raw row nearly in the span
/// of the sketch and the rows before it: the sparse shrink orthonormalises the residuals through
/// their Gram matrix and loses digits there (`fd_shrink.rs`, "Precision"; e.g. m = 2, d = 10,
/// seed 11: a residual of 1.2e-5 of its row's norm at shrink 41 leaves the sketches 1.1e-8
/// apart, `V` 6.2e-9 from orthonormal, and the weights 1.8e-9 apart three rounds later while
/// the rounding twin stays within 3.4e-14). That is the sparse FD sketch's precision, tested
/// against its dense reference in `sparse_equivalence.rs`; what this file tests is the softmax
/// learner's representation of `W` over a shared sketch, so a stream is compared up to the
/// round where the sketches part.
fn sketch_gap(dense: &SoftmaxSon<FdCurvature>, sparse: &SparseSoftmax) -> f64 {
    common::fd_sketch_gap(dense.curvature(), sparse)
}

/// What one stream showed: the largest difference relative to what is allowed, the rounds
/// compared (all of them unless the sketches parted), and the sparse learner's FD shrinks.
struct Outcome {
    worst: f64,
    rounds: usize,
    shrinks: u64,
}

/// Runs the dense learner, its rounding twin and the sparse-time learner over `rows`, checking
/// every round's probabilities and scores against [`allowed`]; returns the largest difference
/// seen relative to what is allowed.
fn run_both(
    dense: &mut SoftmaxSon<FdCurvature>,
    twins: &mut Twins,
    sparse: &mut SparseSoftmax,
    rows: &Data,
) -> Result<(f64, usize), TestCaseError> {
    let mut worst: f64 = 0.0;
    for (t, (idx, val, y, w)) in rows.iter().enumerate() {
        let x = Row::Sparse {
            indices: idx,
            values: val,
        };
        let (pd, pt) = (dense.learn(x, *y, *w), twins.learn(idx, val, *y, *w));
        let ps = sparse.learn(x, *y, *w);
        let (pd, pt, ps) = match (pd, pt, ps) {
            (Ok(a), Ok(b), Ok(c)) => (a, b, c),
            (a, b, c) => {
                return Err(TestCaseError::fail(format!(
                    "round {t}: {a:?} vs twins {b:?} vs sparse {c:?}"
                )))
            }
        };
        if sketch_gap(dense, sparse) > SKETCH_TOL {
            return Ok((worst, t));
        }
        let tol = allowed(&pd, &pt, 1.0);
        worst = worst.max(spread(&pd, &ps) / tol);
        prop_assert!(
            spread(&pd, &ps) <= tol,
            "round {t}: {pd:?} vs {ps:?} (twins {pt:?})"
        );
        // Predictions without learning (the copy path of stale columns) agree too.
        let (sd, st, ss) = (
            dense.scores(x),
            twins.map(|l| l.scores(x)),
            sparse.scores(x),
        );
        let tol = allowed(&sd, &st, scale_of(&sd));
        worst = worst.max(spread(&sd, &ss) / tol);
        prop_assert!(
            spread(&sd, &ss) <= tol,
            "scores after round {t}: {sd:?} vs {ss:?} (twins {st:?})"
        );
    }
    Ok((worst, rows.len()))
}

/// Checks the final weights as [`run_both`] checks the scores; returns the ratio to what is
/// allowed.
fn weights_agree(
    dense: &SoftmaxSon<FdCurvature>,
    twins: &Twins,
    sparse: &SparseSoftmax,
) -> Result<f64, TestCaseError> {
    let (wd, wt, ws) = (
        dense.weights(),
        twins.map(|l| l.weights().to_vec()),
        sparse.weights(),
    );
    prop_assert_eq!(wd.len(), ws.len());
    let tol = allowed(wd, &wt, scale_of(wd));
    prop_assert!(
        spread(wd, &ws) <= tol,
        "weights differ by {:e} > {tol:e}",
        spread(wd, &ws)
    );
    Ok(spread(wd, &ws) / tol)
}

/// Runs one case: every round until the sketches part, and the final weights if they never do.
fn check_case(case: &Case, seed: u64, rows: &Data) -> Result<Outcome, TestCaseError> {
    let (mut dense, mut sparse) = pair(case, seed);
    let mut twins = Twins::of(&dense, seed);
    let (mut worst, rounds) = run_both(&mut dense, &mut twins, &mut sparse, rows)?;
    if rounds == rows.len() {
        worst = worst.max(weights_agree(&dense, &twins, &sparse)?);
    }
    Ok(Outcome {
        worst,
        rounds,
        shrinks: sparse.shrinks(),
    })
}

fn case_strategy() -> impl Strategy<Value = Case> {
    (
        2usize..6,
        8usize..40,
        1usize..5,
        any::<bool>(),
        any::<bool>(),
        prop_oneof![Just(f64::INFINITY), Just(0.8)],
        prop_oneof![Just(0.1), Just(1.0)],
    )
        .prop_map(|(k, d, m, rfd, bias, clip, c)| Case {
            k,
            d,
            m,
            rfd,
            bias,
            clip,
            c,
        })
}

proptest! {
    // A random seed again since the sparse FD shrink's fast path also requires `‖N₁⁻¹‖ ≤ 1e6`
    // (`fd_shrink.rs::invert`): before it, a well-conditioned but tiny `N₁` gave
    // `A = N₁⁻¹N₂` up to 1e33 and moved `W` by up to 3e-2 on about one random stream in 400
    // (kept as `shrink_fast_path_with_a_tiny_basis_change`).
    #![proptest_config(ProptestConfig::with_cases(common::cases(CASES)))]

    /// Dense and sparse-time softmax SON agree round by round and in their weights.
    #[test]
    fn sparse_time_softmax_equals_dense(case in case_strategy(), seed in 0u64..1000) {
        let rows = data(300, case.d, case.k, 0.25, seed);
        let out = check_case(&case, seed, &rows)?;
        if std::env::var_os("SOFTMAX_STATS").is_some() {
            eprintln!("STATS {case:?} seed {seed} worst {:e} rounds {} shrinks {}", out.worst, out.rounds, out.shrinks);
        }
        prop_assert!(out.rounds < rows.len() || out.shrinks >= 10, "only {} shrinks", out.shrinks);
    }
}

/// Sparse rows over a larger `d` touching few columns (most of them never touched, others
/// stale over many changes of basis) still agree with the dense learner.
#[test]
fn agrees_on_a_wide_sparse_stream() {
    let case = Case {
        k: 4,
        d: 400,
        m: 5,
        rfd: true,
        bias: true,
        clip: f64::INFINITY,
        c: 0.1,
    };
    let rows = data(600, case.d, case.k, 0.03, 11);
    let out = check_case(&case, 3, &rows).unwrap();
    assert_eq!(out.rounds, rows.len(), "the sketches parted");
    assert!(out.shrinks > 50);
    eprintln!("largest difference / allowed {:e}", out.worst);
}

fn model(representation: Representation) -> MulticlassModel {
    let mut config = MulticlassConfig {
        reduction: Reduction::Softmax,
        curvature: CurvatureKind::RfdFast,
        size: 4,
        ..MulticlassConfig::default()
    };
    config.member.representation = representation;
    let classes = Classes::parse_list("a,b,c,d").unwrap();
    MulticlassModel::build(config, classes, 60).unwrap()
}

/// A model saved mid-stream (between shrinks, with raw rows buffered and stale columns) and
/// loaded again continues bit for bit.
#[test]
fn save_and_load_mid_stream_resume_bit_exact() {
    let rows = data(500, 60, 4, 0.1, 5);
    let mut m = model(Representation::Sparse);
    assert!(matches!(
        m.learner.unscaled(),
        AnyMulticlass::SparseSoftmax(_)
    ));
    for (idx, val, y, w) in &rows[..233] {
        let x = Row::Sparse {
            indices: idx,
            values: val,
        };
        m.learn(x, *y, *w).unwrap();
    }
    let dir =
        std::env::temp_dir().join(format!("sketchlearn-sparse-softmax-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("m.model");
    m.save(&path).unwrap();
    let mut back = MulticlassModel::load(&path).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let AnyMulticlass::SparseSoftmax(s) = m.learner.unscaled() else {
        panic!("not sparse-time")
    };
    assert!(s.shrinks() > 5);
    for (idx, val, y, w) in &rows[233..] {
        let x = Row::Sparse {
            indices: idx,
            values: val,
        };
        let a = m.learn(x, *y, *w).unwrap();
        let b = back.learn(x, *y, *w).unwrap();
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&a), bits(&b));
    }
    assert_eq!(m.learner.class_weights(), back.learner.class_weights());
}

/// The configuration picks the sparse-time learner for sparse input (diagonal adaptation
/// included, as a wrapper), and refuses it where it has no sparse-time form.
#[test]
fn the_configuration_chooses_and_refuses() {
    let softmax = MulticlassConfig {
        reduction: Reduction::Softmax,
        classes: 3,
        ..MulticlassConfig::default()
    };
    let sparse = softmax.for_input(20_000, false, Some(40.0));
    assert!(matches!(
        sparse.build(20_000).unwrap().unscaled(),
        AnyMulticlass::SparseSoftmax(_)
    ));
    assert!(sparse.describe().contains("sparse-time"));
    let dense = softmax.for_input(180, false, Some(45.0));
    assert!(matches!(
        dense.build(180).unwrap().unscaled(),
        AnyMulticlass::Softmax(_)
    ));
    let diag = MulticlassConfig {
        diag: true,
        ..softmax.clone()
    };
    let built = diag
        .for_input(20_000, false, Some(40.0))
        .build(20_000)
        .unwrap();
    let AnyMulticlass::RowScaled(outer) = &built else {
        panic!("not row-scaled")
    };
    assert!(matches!(outer.inner(), AnyMulticlass::DiagonalScaled(_)));
    assert!(matches!(built.unscaled(), AnyMulticlass::SparseSoftmax(_)));
    for (curvature, fits) in [(CurvatureKind::Rp, "Rp"), (CurvatureKind::Oja, "Oja")] {
        let c = MulticlassConfig {
            curvature,
            ..softmax.clone()
        };
        let built = c
            .for_input(20_000, false, Some(40.0))
            .build(20_000)
            .unwrap();
        let got = match built.unscaled() {
            AnyMulticlass::SparseSoftmaxRp(_) => "Rp",
            AnyMulticlass::SparseSoftmaxOja(_) => "Oja",
            _ => "other",
        };
        assert_eq!(got, fits);
    }
    let mut forced = MulticlassConfig {
        curvature: CurvatureKind::Full,
        ..softmax
    };
    forced.member.representation = Representation::Sparse;
    let err = forced.build(50).unwrap_err().to_string();
    assert!(err.contains("fd-fast, rfd-fast, rp or oja"), "{err}");
}

/// A model file whose sparse softmax state is inconsistent is refused with the reason.
#[test]
fn a_damaged_sparse_softmax_file_is_refused() {
    let rows = data(40, 60, 4, 0.1, 9);
    let mut m = model(Representation::Sparse);
    for (idx, val, y, w) in &rows {
        let x = Row::Sparse {
            indices: idx,
            values: val,
        };
        m.learn(x, *y, *w).unwrap();
    }
    let dir = std::env::temp_dir().join(format!(
        "sketchlearn-sparse-softmax-bad-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("m.model");
    // A model whose classes disagree with the learner's heads: 3 listed, 4 heads.
    let err = common::mismatched_classes_error(&m, &path);
    assert!(err.contains("classes"), "{err}");
    // A dense model of the same data loads (the check is not over-eager).
    let dense = model(Representation::Dense);
    dense.save(&path).unwrap();
    MulticlassModel::load(&path).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The stream on which the sparse-time and dense softmax drift apart by more than [`TOL`]
/// (m = 1 FD, c = 0.1: a shrink every second append, Newton steps overshooting the scores by
/// `ω·q·μ` up to 22, see [`allowed`]). The drift is the dense learner's own: its rounding twin
/// ends with weights more than `TOL` away from it, and the sparse form stays within what the
/// twin's spread allows.
#[test]
fn drift_on_an_ill_conditioned_stream_is_the_dense_learners_own() {
    let case = Case {
        k: 4,
        d: 25,
        m: 1,
        rfd: false,
        bias: true,
        clip: f64::INFINITY,
        c: 0.1,
    };
    let rows = data(300, case.d, case.k, 0.25, 413);
    let (mut dense, _) = pair(&case, 413);
    let mut twins = Twins::of(&dense, 413);
    for (idx, val, y, w) in &rows {
        let x = Row::Sparse {
            indices: idx,
            values: val,
        };
        dense.learn(x, *y, *w).unwrap();
        twins.learn(idx, val, *y, *w).unwrap();
    }
    let moved = twin_spread(dense.weights(), &twins.map(|l| l.weights().to_vec()));
    assert!(moved > TOL, "the dense learner alone moves by {moved:e}");
    let out = check_case(&case, 413, &rows).unwrap();
    assert_eq!(out.rounds, rows.len(), "the sketches parted");
    eprintln!(
        "weights: dense vs twins {moved:e}; sparse difference / allowed {:e}",
        out.worst
    );
}

/// The stream on which the sparse FD shrink's fast path changes `W` (see the proptest's
/// configuration): m = 2, d = 11, no intercept, seed 44. At shrink 2 the new directions lie
/// outside the old basis, `N₁` is tiny yet well conditioned, `A = N₁⁻¹N₂` reaches 1e33, and the
/// fast path's `Z += AG`, `w̄ += Gᵀ(c − Aᵀb)` cancel in numbers of 1e14: the weights move by
/// 3.1e-2 (in ulps of 2e14) while the sketches agree to 1e-14. The shrink now also bounds
/// `‖N₁⁻¹‖` (`fd_shrink.rs::invert`) and takes the direct path there; without that bound this
/// fails.
#[test]
fn shrink_fast_path_with_a_tiny_basis_change() {
    let case = Case {
        k: 4,
        d: 11,
        m: 2,
        rfd: false,
        bias: false,
        clip: f64::INFINITY,
        c: 0.1,
    };
    let rows = data(300, case.d, case.k, 0.25, 44);
    let out = check_case(&case, 44, &rows).unwrap();
    assert_eq!(out.rounds, rows.len(), "the sketches parted");
}

/// A case with a one-row FD sketch (m = 1: the doubling buffer of two rows is shrunk to none,
/// so `B` holds the one raw row appended since the last shrink, or nothing), FD, intercept, no
/// projection.
fn one_row_case(k: usize, d: usize, c: f64) -> Case {
    Case {
        k,
        d,
        m: 1,
        rfd: false,
        bias: true,
        clip: f64::INFINITY,
        c,
    }
}

/// The proptest's case that failed at stop 55 with a single rounding twin: k = 4, d = 9, m = 1
/// FD, intercept, c = 0.1, seed 384. At round 181 the scores after the round were 1.70e-8 apart
/// (0.6869367803014086 against 0.6869367633075534) where one twin allowed 1.49e-8 (its own
/// spread 5.1e-11, ×64, plus 1e-9·(1 + 10.6)). The four twins allow it with room (see
/// [`common::twins`]); the steps agree from the same state
/// ([`one_row_sketch_steps_agree_from_the_same_state`]).
#[test]
fn one_row_sketch_seed_384_agrees() {
    let case = one_row_case(4, 9, 0.1);
    let rows = data(300, case.d, case.k, 0.25, 384);
    let out = check_case(&case, 384, &rows).unwrap();
    assert_eq!(out.rounds, rows.len(), "the sketches parted");
    assert!(out.shrinks >= 100, "{} shrinks", out.shrinks);
}

/// A second case the proptest drew at stop 56 on main's single rounding twin (branch dask56's
/// full suite: k = 5, d = 20, m = 1 FD, intercept, c = 0.1, seed 810); the four twins allow it.
#[test]
fn one_row_sketch_seed_810_agrees() {
    let case = one_row_case(5, 20, 0.1);
    let rows = data(300, case.d, case.k, 0.25, 810);
    let out = check_case(&case, 810, &rows).unwrap();
    assert_eq!(out.rounds, rows.len(), "the sketches parted");
}

/// `dense` with the weights `W` and the class factor `Γ` of `sparse` (its sketch is the same to
/// the bit at m = 1, checked by the caller): through the dense learner's serde form, with the
/// infinite projection bound written as `f64::MAX` (JSON has no infinity; no finite score exceeds
/// either).
fn dense_at_the_state_of(
    dense: &SoftmaxSon<FdCurvature>,
    sparse: &SparseSoftmax,
) -> SoftmaxSon<FdCurvature> {
    let mut v = serde_json::to_value(dense).unwrap();
    v["w"] = serde_json::to_value(sparse.weights()).unwrap();
    v["gamma"] = serde_json::to_value(sparse.class_factor()).unwrap();
    if v["params"]["clip"].is_null() {
        v["params"]["clip"] = serde_json::json!(f64::MAX);
    }
    serde_json::from_value(v).unwrap()
}

/// Runs the sparse-time and the dense learner over `rows` and, before every round, puts the
/// sparse learner's state into a copy of the dense one; returns the largest difference between
/// the two learners' weights after the round from that same state, in units of
/// `ε·max|W|` (`W` after the round).
fn same_state_steps(case: &Case, seed: u64, rows: &Data) -> f64 {
    let (mut dense, mut sparse) = pair(case, seed);
    let mut worst: f64 = 0.0;
    for (t, (idx, val, y, w)) in rows.iter().enumerate() {
        let x = Row::Sparse {
            indices: idx,
            values: val,
        };
        assert_eq!(
            sketch_gap(&dense, &sparse),
            0.0,
            "round {t}: the sketches differ"
        );
        let mut copy = dense_at_the_state_of(&dense, &sparse);
        copy.learn(x, *y, *w).unwrap();
        dense.learn(x, *y, *w).unwrap();
        sparse.learn(x, *y, *w).unwrap();
        let ws = sparse.weights();
        let ulps =
            spread(copy.weights(), &ws) / (f64::EPSILON * scale_of(&ws)).max(f64::MIN_POSITIVE);
        worst = worst.max(ulps);
    }
    worst
}

/// Why the one-row sketch's streams differ by more than `TOL`: rounding, amplified. From the
/// same state (`W`, `Γ` and, at m = 1, the sketch to the bit) the sparse-time round and the dense
/// round give weights within a few ulps of the weights' scale at every round (3.4 `ε·max|W|` at
/// most on seed 384, 6.5 on these four streams, 29 in a temporary sweep of 600 random m = 1
/// streams; seed 384's round 145, where the two learners' weights part from 1.0e-10 to 8.5e-10,
/// agrees to the bit), while over the stream the learners' difference grows from 6.6e-14 at
/// round 42 to 8.9e-5 at round 299: the dense learner's own amplification ([`allowed`]). The
/// streams are seed 384 and the three of [`twins_allow_random_streams`]'s 4,000 m = 1 streams on
/// which one twin did not allow the difference (3.1, 3.5 and 8.9 times the allowance; the four
/// twins' largest ratio there is 0.055).
#[test]
fn one_row_sketch_steps_agree_from_the_same_state() {
    for (k, d, c, seed) in [
        (4, 9, 0.1, 384),
        (2, 29, 0.1, 422),
        (5, 31, 0.1, 785),
        (2, 31, 1.0, 614),
    ] {
        let case = one_row_case(k, d, c);
        let rows = data(300, case.d, case.k, 0.25, seed);
        let ulps = same_state_steps(&case, seed, &rows);
        assert!(ulps <= 64.0, "seed {seed}: {ulps} ulps");
        eprintln!("seed {seed}: {ulps} ulps");
    }
}

/// The difference of each stream relative to what one twin (the first) and what all the twins
/// allow ([`allowed`]), over every round's probabilities and scores and the final weights, up
/// to the round where the sketches part.
fn allowance_ratios(case: &Case, seed: u64, rows: &Data) -> (f64, f64) {
    let (mut dense, mut sparse) = pair(case, seed);
    let mut twins = Twins::of(&dense, seed);
    let (mut one, mut all) = (0.0f64, 0.0f64);
    let mut note = |d: f64, a: &[f64], t: &[Vec<f64>], scale: f64| {
        one = one.max(d / allowed(a, &t[..1], scale));
        all = all.max(d / allowed(a, t, scale));
    };
    for (idx, val, y, w) in rows {
        let x = Row::Sparse {
            indices: idx,
            values: val,
        };
        let pd = dense.learn(x, *y, *w).unwrap();
        let pt = twins.learn(idx, val, *y, *w).unwrap();
        let ps = sparse.learn(x, *y, *w).unwrap();
        if sketch_gap(&dense, &sparse) > SKETCH_TOL {
            return (one, all);
        }
        note(spread(&pd, &ps), &pd, &pt, 1.0);
        let (sd, st) = (dense.scores(x), twins.map(|l| l.scores(x)));
        note(spread(&sd, &sparse.scores(x)), &sd, &st, scale_of(&sd));
    }
    let (wd, wt) = (dense.weights(), twins.map(|l| l.weights().to_vec()));
    note(spread(wd, &sparse.weights()), wd, &wt, scale_of(wd));
    (one, all)
}

/// The measurement behind [`common::twins`]: `SOFTMAX_STREAMS` random streams (default 4,000)
/// drawn as the proptest draws them, with `m = SOFTMAX_M` (default 1; 0 draws m from 1 to 4),
/// from the seed `SOFTMAX_SEED` (default 7). Every stream's difference is within what the
/// twins allow; printed: how many one twin would not allow, and the largest ratios. Seen:
/// m = 1, seed 7: one twin fails 3 of 4,000 (largest ratio 8.9), the four twins' largest ratio
/// 0.055; m from 1 to 4, 3,000 streams, seed 1: 0 and 0.22. About 30 s:
/// `cargo test -p sketchlearn --test suite sparse_softmax::twins_allow_random_streams -- --ignored --nocapture`.
#[test]
#[ignore]
fn twins_allow_random_streams() {
    use rand::{Rng, SeedableRng};
    let var = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let (n, m) = (var("SOFTMAX_STREAMS", 4000), var("SOFTMAX_M", 1) as usize);
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(var("SOFTMAX_SEED", 7));
    let (mut one_fails, mut worst_one, mut worst_all) = (0, 0.0f64, 0.0f64);
    for _ in 0..n {
        let case = Case {
            k: rng.random_range(2..6),
            d: rng.random_range(8..40),
            m: if m == 0 { rng.random_range(1..5) } else { m },
            rfd: rng.random(),
            bias: rng.random(),
            clip: if rng.random() { f64::INFINITY } else { 0.8 },
            c: if rng.random() { 0.1 } else { 1.0 },
        };
        let seed: u64 = rng.random_range(0..1000);
        let (one, all) = allowance_ratios(&case, seed, &data(300, case.d, case.k, 0.25, seed));
        assert!(all <= 1.0, "{case:?} seed {seed}: {all} of the allowance");
        one_fails += (one > 1.0) as usize;
        (worst_one, worst_all) = (worst_one.max(one), worst_all.max(all));
    }
    eprintln!("{n} streams: one twin fails {one_fails}, largest ratio {worst_one:.3e}; four twins {worst_all:.3e}");
}
