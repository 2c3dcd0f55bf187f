//! The sparse-time softmax learner over the RP and Oja sketches, and with SON's diagonal
//! adaptation (`DiagonalScaled`, over RP, Oja and RFD), equals the dense-time `SoftmaxSon` over
//! the same curvature from the same start (issue 24): the probabilities of every round, the
//! scores of a prediction without learning, and the weights at the end, on random sparse data
//! with 2–5 classes and importance weights (zeros included), with and without projection and
//! intercept. A model saved mid-stream resumes bit for bit, and a damaged one is refused.
//!
//! "Equal" is `TOL·(1 + scale)` plus a multiple of how far the dense learner moves from itself
//! when its inputs move by one ulp (the largest spread of its rounding twins, `common/twins.rs`;
//! `sparse_softmax.rs` explains why the dense learner's own amplification of rounding must be
//! allowed for). RP draws the same Gaussian rows in both forms (same seed); the dense Oja
//! curvature is started from the sparse learner's initial directions. Over RFD a stream is compared until the two FD sketches part (the sparse
//! shrink's own precision, see `sparse_softmax.rs`).

use crate::common;

use common::twins::{twin_spread, RoundingTwins};
use common::{scale_of, spread};
use proptest::prelude::*;
use sketchlearn::labels::Classes;
use sketchlearn::linear::curvature::{AnyCurvature, FdCurvature, RpCurvature};
use sketchlearn::linear::multiclass::{
    AnyMulticlass, DiagonalScaled, MulticlassConfig, MulticlassLearner, MulticlassModel, Reduction,
    SoftmaxParams, SoftmaxSon,
};
use sketchlearn::linear::sparse::{SparseSoftmax, SparseSoftmaxOja, SparseSoftmaxRp};
use sketchlearn::linear::{CurvatureKind, Representation};
use sketchlearn::sketch::FdVariant;
use sketchlearn::Row;

/// Relative agreement asked of every compared quantity.
const TOL: f64 = 1e-9;

/// How many times the rounding twin's spread the sparse form may differ by.
const AMPLIFIED: f64 = 64.0;

/// Relative difference of the FD sketches beyond which an RFD stream is compared no further.
const SKETCH_TOL: f64 = 1e-11;

const CASES: u32 = 64;

type Data = common::ClassRows;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Rp,
    Oja,
    Rfd,
}

#[derive(Clone, Copy, Debug)]
struct Case {
    kind: Kind,
    diag: bool,
    k: usize,
    d: usize,
    m: usize,
    bias: bool,
    clip: f64,
    c: f64,
}

const ALPHA: f64 = 0.5;
const OJA_C: f64 = 1.0;
const D0: f64 = 0.1;

fn params(case: &Case) -> SoftmaxParams {
    SoftmaxParams {
        c: case.c,
        ridge: 0.1,
        clip: case.clip,
        bias: case.bias.then_some(1.0),
        diag: case.diag.then_some(D0),
    }
}

/// The dense learner and the sparse-time one over the same curvature.
fn pair(case: &Case, seed: u64) -> (SoftmaxSon, AnyMulticlass) {
    let de = case.d + case.bias as usize;
    let p = params(case);
    let curvature = match case.kind {
        Kind::Rp => AnyCurvature::Rp(RpCurvature::new(de, case.m, ALPHA, seed).unwrap()),
        Kind::Oja => AnyCurvature::Oja(common::dense_oja(de, case.m, ALPHA, OJA_C, seed)),
        Kind::Rfd => {
            AnyCurvature::Fd(FdCurvature::rfd(de, case.m, FdVariant::Doubling, ALPHA).unwrap())
        }
    };
    let dense = SoftmaxSon::new(case.k, curvature, p).unwrap();
    // With diagonal adaptation the wrapper appends the intercept: the learner inside has d̃
    // inputs and none of its own.
    let (dim, inner) = if case.diag {
        let inner = SoftmaxParams {
            bias: None,
            diag: None,
            ..p
        };
        (de, inner)
    } else {
        (case.d, p)
    };
    let (k, m) = (case.k, case.m);
    let sparse = match case.kind {
        Kind::Rp => AnyMulticlass::SparseSoftmaxRp(Box::new(
            SparseSoftmaxRp::rp(k, dim, m, ALPHA, seed, inner).unwrap(),
        )),
        Kind::Oja => AnyMulticlass::SparseSoftmaxOja(Box::new(
            SparseSoftmaxOja::oja(k, dim, m, ALPHA, OJA_C, seed, inner).unwrap(),
        )),
        Kind::Rfd => AnyMulticlass::SparseSoftmax(Box::new(
            SparseSoftmax::rfd(k, dim, m, ALPHA, seed, inner).unwrap(),
        )),
    };
    let sparse = if case.diag {
        let wrapped = DiagonalScaled::new(sparse, p.bias, D0).unwrap();
        AnyMulticlass::DiagonalScaled(Box::new(wrapped))
    } else {
        sparse
    };
    (dense, sparse)
}

/// The dense learner's rounding twins ([`common::twins`]).
type Twins = RoundingTwins<SoftmaxSon>;

fn allowed(a: &[f64], twins: &[Vec<f64>], scale: f64) -> f64 {
    TOL * (1.0 + scale) + AMPLIFIED * twin_spread(a, twins)
}

/// `max |BᵀB − B̃ᵀB̃| / max |BᵀB|` of the two FD sketches (0 for RP and Oja, whose sketches
/// are the same numbers in both forms up to rounding that the scores check).
fn sketch_gap(dense: &SoftmaxSon, sparse: &AnyMulticlass) -> f64 {
    match (dense.curvature(), sparse.unscaled()) {
        (AnyCurvature::Fd(fd), AnyMulticlass::SparseSoftmax(s)) => common::fd_sketch_gap(fd, s),
        _ => 0.0,
    }
}

/// Runs both learners and the twin over `rows`; returns the rounds compared.
fn run_case(case: &Case, seed: u64, rows: &Data) -> Result<usize, TestCaseError> {
    let (mut dense, mut sparse) = pair(case, seed);
    let mut twins = Twins::of(&dense, seed);
    for (t, (idx, val, y, w)) in rows.iter().enumerate() {
        let x = Row::Sparse {
            indices: idx,
            values: val,
        };
        // The scores before learning, then the probabilities `learn` returns from them: a
        // change `Δz` of the scores moves `p` by at most `2·max|Δz|` (to first order), so the
        // probabilities are held to the scores' allowance (on saturated probabilities the
        // twin's own spread in `p` says little).
        let (sd, st, ss) = (
            dense.scores(x),
            twins.map(|l| l.scores(x)),
            sparse.scores(x),
        );
        let tol = allowed(&sd, &st, scale_of(&sd));
        prop_assert!(
            spread(&sd, &ss) <= tol,
            "scores before round {t}: {sd:?} vs {ss:?} (twin {st:?})"
        );
        let pd = dense.learn(x, *y, *w).unwrap();
        twins.learn(idx, val, *y, *w).unwrap();
        let ps = sparse
            .learn(x, *y, *w)
            .map_err(|e| TestCaseError::fail(format!("round {t}: sparse refused: {e}")))?;
        if sketch_gap(&dense, &sparse) > SKETCH_TOL {
            return Ok(t);
        }
        prop_assert!(
            spread(&pd, &ps) <= TOL + 2.0 * tol,
            "round {t}: {pd:?} vs {ps:?}"
        );
        let (sd, st, ss) = (
            dense.scores(x),
            twins.map(|l| l.scores(x)),
            sparse.scores(x),
        );
        let tol = allowed(&sd, &st, scale_of(&sd));
        prop_assert!(
            spread(&sd, &ss) <= tol,
            "scores after round {t}: {sd:?} vs {ss:?} (twin {st:?})"
        );
    }
    let flat = |w: Vec<Vec<f64>>| w.concat();
    let as_dense = |l: &SoftmaxSon| flat(AnyMulticlass::Softmax(l.clone()).class_weights());
    let (wd, wt, ws) = (
        as_dense(&dense),
        twins.map(as_dense),
        flat(sparse.class_weights()),
    );
    prop_assert_eq!(wd.len(), ws.len());
    let tol = allowed(&wd, &wt, scale_of(&wd));
    prop_assert!(
        spread(&wd, &ws) <= tol,
        "weights differ by {:e} > {tol:e}",
        spread(&wd, &ws)
    );
    Ok(rows.len())
}

fn case_strategy() -> impl Strategy<Value = Case> {
    (
        prop_oneof![Just(Kind::Rp), Just(Kind::Oja), Just(Kind::Rfd)],
        any::<bool>(),
        2usize..6,
        8usize..40,
        1usize..5,
        any::<bool>(),
        prop_oneof![Just(f64::INFINITY), Just(0.8)],
        prop_oneof![Just(0.1), Just(1.0)],
    )
        .prop_map(|(kind, diag, k, d, m, bias, clip, c)| Case {
            kind,
            // RFD is tested without diagonal adaptation in `sparse_softmax.rs`.
            diag: diag || kind == Kind::Rfd,
            k,
            d,
            m,
            bias,
            clip,
            c,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(common::cases(CASES)))]

    /// Dense and sparse-time softmax SON agree round by round and in their weights, over RP
    /// and Oja, with and without diagonal adaptation, and over RFD with it.
    #[test]
    fn sparse_time_softmax_equals_dense_over_each_sketch(
        case in case_strategy(),
        seed in 0u64..1000,
    ) {
        let rows = common::class_rows(300, case.d, case.k, 0.25, seed);
        let rounds = run_case(&case, seed, &rows)?;
        prop_assert!(case.kind == Kind::Rfd || rounds == rows.len());
    }
}

/// Each of the three on a wider sparse stream (most columns never touched, others stale over
/// Oja's changes of basis), every round compared.
#[test]
fn each_agrees_on_a_wide_sparse_stream() {
    for (kind, diag) in [
        (Kind::Rp, false),
        (Kind::Oja, false),
        (Kind::Rp, true),
        (Kind::Oja, true),
        (Kind::Rfd, true),
    ] {
        let case = Case {
            kind,
            diag,
            k: 4,
            d: 400,
            m: 5,
            bias: true,
            clip: f64::INFINITY,
            c: 0.1,
        };
        let rows = common::class_rows(600, case.d, case.k, 0.03, 11);
        let rounds = run_case(&case, 3, &rows).unwrap_or_else(|e| panic!("{case:?}: {e}"));
        assert_eq!(rounds, rows.len(), "{case:?}: the sketches parted");
    }
}

/// The model `MulticlassConfig` builds for sparse input with each sketch, saved mid-stream and
/// loaded, continues bit for bit; and its sparse-time form is what `unscaled` shows.
#[test]
fn each_resumes_bit_exact_from_a_file() {
    let rows = common::class_rows(400, 60, 4, 0.1, 5);
    let dir = common::scratch::Scratch::new("sparse-softmax-sketches");
    for (curvature, diag) in [
        (CurvatureKind::Rp, false),
        (CurvatureKind::Oja, false),
        (CurvatureKind::Rp, true),
        (CurvatureKind::Oja, true),
        (CurvatureKind::RfdFast, true),
    ] {
        let mut config = MulticlassConfig {
            reduction: Reduction::Softmax,
            curvature,
            diag,
            size: 4,
            alpha: 1.0,
            ..MulticlassConfig::default()
        };
        config.member.representation = Representation::Sparse;
        let classes = Classes::parse_list("a,b,c,d").unwrap();
        let mut m = MulticlassModel::build(config, classes, 60).unwrap();
        let sparse_time = matches!(
            m.learner.unscaled(),
            AnyMulticlass::SparseSoftmax(_)
                | AnyMulticlass::SparseSoftmaxRp(_)
                | AnyMulticlass::SparseSoftmaxOja(_)
        );
        assert!(sparse_time, "{curvature} diag {diag}");
        let x = |(idx, val, _, _): &(Vec<u32>, Vec<f64>, usize, f64)| -> (Vec<u32>, Vec<f64>) {
            (idx.clone(), val.clone())
        };
        for row in &rows[..211] {
            let (i, v) = x(row);
            m.learn(
                Row::Sparse {
                    indices: &i,
                    values: &v,
                },
                row.2,
                row.3,
            )
            .unwrap();
        }
        let path = dir.path(&format!("{curvature}-{diag}.model"));
        m.save(&path).unwrap();
        let mut back = MulticlassModel::load(&path).unwrap();
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for row in &rows[211..] {
            let (i, v) = x(row);
            let r = Row::Sparse {
                indices: &i,
                values: &v,
            };
            let a = m.learn(r, row.2, row.3).unwrap();
            let b = back.learn(r, row.2, row.3).unwrap();
            assert_eq!(bits(&a), bits(&b), "{curvature} diag {diag}");
        }
        assert_eq!(m.learner.class_weights(), back.learner.class_weights());
    }
}

/// A damaged state in each new kind of file is refused with the reason (classes that disagree
/// with the heads); the undamaged file loads.
#[test]
fn damaged_files_are_refused() {
    let rows = common::class_rows(40, 60, 4, 0.1, 9);
    let dir = common::scratch::Scratch::new("sparse-softmax-sketches-bad");
    for (curvature, diag) in [
        (CurvatureKind::Rp, false),
        (CurvatureKind::Oja, false),
        (CurvatureKind::Oja, true),
    ] {
        let mut config = MulticlassConfig {
            reduction: Reduction::Softmax,
            curvature,
            diag,
            size: 4,
            ..MulticlassConfig::default()
        };
        config.member.representation = Representation::Sparse;
        let classes = Classes::parse_list("a,b,c,d").unwrap();
        let mut m = MulticlassModel::build(config, classes, 60).unwrap();
        for (idx, val, y, w) in &rows {
            let x = Row::Sparse {
                indices: idx,
                values: val,
            };
            m.learn(x, *y, *w).unwrap();
        }
        let err = common::mismatched_classes_error(&m, &dir.path("m.model"));
        assert!(err.contains("classes"), "{curvature}: {err}");
    }
}
