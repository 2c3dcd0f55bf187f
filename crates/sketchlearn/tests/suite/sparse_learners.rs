//! The sparse-time SON learners through `LearnerConfig`/`AnyLearner`: model files (bit-identical
//! resume, including lazily rebased state; size proportional to the touched features), the
//! diagonal-adaptation and intercept wrappers (equal to the dense learners with the same
//! wrappers), huge hashed dimensions without start-up cost, and finiteness on hostile data.

use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, StandardNormal};
use rand_xoshiro::Xoshiro256PlusPlus;
use sketchlearn::linear::sparse::SparseLearner;
use sketchlearn::linear::{
    AnyLearner, CurvatureKind, LearnError, LearnerConfig, LinearModel, OnlineLearner,
    Representation,
};
use sketchlearn::loss::Loss;
use sketchlearn::Row;
use std::time::Instant;

type Data = Vec<(Vec<u32>, Vec<f64>, f64)>;

/// Sparse rows over `d` features, `nnz` non-zeros each, values `scale·N(0,1)`.
fn data(n: usize, d: usize, nnz: usize, scale: f64, seed: u64) -> Data {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let mut idx: Vec<u32> = (0..nnz).map(|_| rng.random_range(0..d as u32)).collect();
            idx.sort_unstable();
            idx.dedup();
            let val: Vec<f64> = idx
                .iter()
                .map(|_| {
                    let z: f64 = StandardNormal.sample(&mut rng);
                    scale * z
                })
                .collect();
            let s: f64 = idx
                .iter()
                .zip(&val)
                .map(|(&j, v)| if j % 3 == 0 { *v } else { -0.5 * v })
                .sum();
            (idx, val, if s > 0.0 { 1.0 } else { -1.0 })
        })
        .collect()
}

fn row(e: &(Vec<u32>, Vec<f64>, f64)) -> Row<'_> {
    Row::Sparse {
        indices: &e.0,
        values: &e.1,
    }
}

/// Learns, counting refused steps as the CLI does (they leave the weights unchanged).
fn learn(l: &mut impl OnlineLearner, e: &(Vec<u32>, Vec<f64>, f64)) -> f64 {
    match l.learn(row(e), e.2, 1.0) {
        Ok(p) => p,
        Err(LearnError::Diverged(_)) => l.predict(row(e)),
        Err(other) => panic!("{other}"),
    }
}

/// A curvature and its representation.
type Kind = (CurvatureKind, Representation);

fn sparse_kinds() -> [Kind; 4] {
    [
        CurvatureKind::Oja,
        CurvatureKind::Rp,
        CurvatureKind::FdFast,
        CurvatureKind::RfdFast,
    ]
    .map(|c| (c, Representation::Sparse))
}

fn config(kind: Kind, diag: bool, bias: bool, clip: f64) -> LearnerConfig {
    LearnerConfig {
        algorithm: sketchlearn::linear::Algorithm::Newton,
        curvature: kind.0,
        representation: kind.1,
        size: 4,
        diag,
        bias,
        clip,
        seed: 3,
        ..LearnerConfig::default()
    }
}

fn inner_sparse(l: &AnyLearner) -> Option<&SparseLearner> {
    match l {
        AnyLearner::Sparse(s) => Some(s),
        _ => None,
    }
}

/// Train k examples, save, load, train the rest: bit-identical predictions, weights and files,
/// for every sparse kind, with and without wrappers and projection. The data are unnormalised
/// (values ×30) so that rebases (lazy epochs, pending transfers) are part of the saved state.
#[test]
fn resume_is_bit_identical() {
    let d = 300;
    let set = data(400, d, 12, 30.0, 5);
    let dir = std::env::temp_dir().join(format!("sparse-resume-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for kind in sparse_kinds() {
        for (diag, bias, clip) in [(false, false, f64::INFINITY), (true, true, 2.0)] {
            let cfg = config(kind, diag, bias, clip);
            let mut whole = cfg.build(d).unwrap();
            let full: Vec<f64> = set.iter().map(|e| learn(&mut whole, e)).collect();
            let mut first = LinearModel::new(cfg.clone(), cfg.build(d).unwrap());
            let k = 217;
            let mut resumed: Vec<f64> = set[..k]
                .iter()
                .map(|e| learn(&mut first.learner, e))
                .collect();
            first.examples_seen = k as u64;
            let path = dir.join(format!("{}-{diag}.skl", kind.0));
            first.save(&path).unwrap();
            let mut back = LinearModel::load(&path).unwrap();
            assert_eq!(back.examples_seen, k as u64);
            resumed.extend(set[k..].iter().map(|e| learn(&mut back.learner, e)));
            for (t, (a, b)) in full.iter().zip(&resumed).enumerate() {
                assert_eq!(
                    a.to_bits(),
                    b.to_bits(),
                    "{kind:?} diag={diag}: example {t}"
                );
            }
            assert_eq!(whole.weights(), back.learner.weights(), "{kind:?}");
            if let Some(s) = inner_sparse(&whole) {
                eprintln!("{kind:?}: {} rebases", s.rebases());
            }
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// With diagonal adaptation and an intercept, the sparse RP and FD learners still equal the
/// dense ones (the wrappers only rescale `x` and add a feature).
#[test]
fn wrappers_match_dense() {
    let d = 60;
    let set = data(500, d, 8, 0.5, 9);
    for curvature in [
        CurvatureKind::Rp,
        CurvatureKind::FdFast,
        CurvatureKind::RfdFast,
    ] {
        let (sparse, dense) = (
            (curvature, Representation::Sparse),
            (curvature, Representation::Dense),
        );
        for (diag, clip) in [(true, f64::INFINITY), (true, 1.0), (false, 1.0)] {
            let mut s = config(sparse, diag, true, clip).build(d).unwrap();
            let mut de = config(dense, diag, true, clip).build(d).unwrap();
            let mut sum = 0.0;
            for (t, e) in set.iter().enumerate() {
                let (ps, pd) = (learn(&mut s, e), learn(&mut de, e));
                sum += pd.abs();
                let scale = pd.abs().max(sum / (t + 1) as f64);
                assert!(
                    (ps - pd).abs() <= 1e-9 * scale,
                    "{curvature} sparse diag={diag} clip={clip} example {t}: {ps} vs {pd}"
                );
            }
        }
    }
}

/// 2^26 hashed features: building the learner touches nothing of size d (zeroed memory is not
/// committed until used), learning touches only the examples' features, and the model file
/// holds only the touched columns. (Without `diag`: diagonal adaptation keeps a dense `d`-vector
/// that is saved whole.)
#[test]
fn huge_dimension_has_no_start_up_cost() {
    let d = 1usize << 26;
    let set = data(2000, d, 20, 1.0 / 20f64.sqrt(), 1);
    for kind in sparse_kinds() {
        let cfg = config(kind, false, true, f64::INFINITY);
        let start = Instant::now();
        let mut l = cfg.build(d).unwrap();
        let built = start.elapsed().as_secs_f64();
        for e in &set {
            learn(&mut l, e);
        }
        let total = start.elapsed().as_secs_f64();
        assert!(built < 0.5, "{kind:?}: start-up {built} s");
        assert!(total < 20.0, "{kind:?}: {total} s for 2000 examples");
        let model = LinearModel::new(cfg, l);
        let bytes = sketchlearn::model::to_bytes(sketchlearn::linear::LINEAR_MODEL_KIND, &model)
            .unwrap()
            .len();
        // ≈ 40k touched features × (m + 2) f64 ≈ 2 MB (not 2^26 × 6 × 8 bytes = 3.2 GB).
        eprintln!(
            "{kind:?}: start-up {built:.4} s, 2000 examples {total:.3} s, model {bytes} bytes"
        );
        assert!(bytes < 8_000_000, "{kind:?}: model file of {bytes} bytes");
        let p = model.learner.predict(row(&set[0]));
        assert!(p.is_finite());
    }
}

/// Hostile inputs: huge values (1e6), alternating labels, squared loss with a tiny α — the
/// learners refuse diverging steps but never produce a non-finite prediction or weight.
#[test]
fn never_nan_on_hostile_data() {
    let d = 200;
    let mut set = data(300, d, 30, 1e6, 2);
    for (t, e) in set.iter_mut().enumerate() {
        e.2 = if t % 2 == 0 { 1.0 } else { -1.0 };
    }
    for kind in sparse_kinds() {
        for loss in [Loss::Logistic, Loss::Squared, Loss::Hinge] {
            let cfg = LearnerConfig {
                loss,
                alpha: 1e-6,
                alpha0: 1e-6,
                c: 10.0,
                ..config(kind, false, true, f64::INFINITY)
            };
            let mut l = cfg.build(d).unwrap();
            for e in &set {
                let p = match l.learn(row(e), e.2, 1.0) {
                    Ok(p) => p,
                    Err(LearnError::Diverged(_)) | Err(LearnError::Sketch(_)) => l.predict(row(e)),
                    Err(other) => panic!("{other}"),
                };
                assert!(p.is_finite(), "{kind:?} {loss:?}: prediction {p}");
            }
            assert!(
                l.weights().iter().all(|w| w.is_finite()),
                "{kind:?} {loss:?}"
            );
        }
    }
}

/// Names, parsing and the names of the sparse-time learners.
#[test]
fn curvature_names() {
    for kind in CurvatureKind::ALL {
        let parsed: CurvatureKind = kind.name().parse().unwrap();
        assert_eq!(parsed, kind);
    }
    for (kind, _) in sparse_kinds() {
        assert!(kind.has_sparse_learner());
    }
    assert_eq!(CurvatureKind::FdFast.sparse_name(), Some("fd-sparse"));
    assert_eq!(CurvatureKind::Fd.sparse_name(), Some("fd-sparse"));
    assert_eq!(CurvatureKind::Full.sparse_name(), None);
    assert!("oja-sparse".parse::<CurvatureKind>().is_err());
    let cfg = config(sparse_kinds()[0], false, true, f64::INFINITY);
    assert!(cfg.describe().contains("oja-sparse"));
    // FD needs d ≥ 2m (+1 for the intercept here).
    assert!(config(sparse_kinds()[2], false, false, f64::INFINITY)
        .build(7)
        .is_err());
}

/// The weight guard on the touched coordinates: a Newton step that would carry `w̄_j` beyond
/// `MAX_WEIGHT` is refused (`Diverged`), for every sparse kind — also on the one-pass path where
/// the sketch update and the step share the column pass (the guard is then proved from the
/// gather's maxima and must fall back to the per-column check when it cannot be), and the
/// weights stay finite. (The sketch update before the step is kept: it leaves `w` unchanged
/// mathematically, though at such scales not to the last digit.)
#[test]
fn weight_guard_refuses_a_step_beyond_max_weight() {
    let d = 40;
    for kind in sparse_kinds() {
        let cfg = LearnerConfig {
            loss: Loss::Squared,
            ..config(kind, false, false, f64::INFINITY)
        };
        // The sparse learner's own guard: without the row scaling of a single learner.
        let mut l = cfg.check().unwrap().build_unscaled(d).unwrap();
        // Ordinary examples first, so that the sketch and b are not trivial.
        for t in 0..20u32 {
            let x = Row::Sparse {
                indices: &[t % 7, 10 + t % 5],
                values: &[1.0, -0.5],
            };
            l.learn(x, if t % 3 == 0 { -1.0 } else { 1.0 }, 1.0)
                .unwrap();
        }
        // Squared loss: the step on w̄_3 is about (y − p)·x_3/α = 1e90·1e20 ≫ MAX_WEIGHT = 1e100.
        let x = Row::Sparse {
            indices: &[3, 30],
            values: &[1e20, 1e20],
        };
        match l.learn(x, 1e90, 1.0) {
            Err(LearnError::Diverged(_)) | Err(LearnError::Sketch(_)) => {}
            other => panic!("{kind:?}: a step beyond MAX_WEIGHT was taken: {other:?}"),
        }
        assert!(l.weights().iter().all(|w| w.is_finite()), "{kind:?}");
        assert!(l
            .predict(Row::Sparse {
                indices: &[1],
                values: &[1.0]
            })
            .is_finite());
    }
}
