//! Ada-FD (Wan, Wei & Zhang, IJCAI 2018) and Sketchy AdaGrad (Feinberg et al., NeurIPS 2023)
//! against their update rules: with a sketch larger than the dimension nothing escapes and both
//! equal a direct dense full-matrix AdaGrad (`G = Σ g gᵀ` kept whole, its matrix function
//! computed by a Jacobi eigendecomposition written here); a hand-checked stream where FD lets a
//! direction escape shows Sketchy adding the escaped mass back and Ada-FD not.

use crate::common;

use common::Lcg;
use sketchlearn::linear::{AdaFd, Algorithm, LearnerConfig, OnlineLearner, Sketchy};
use sketchlearn::loss::Loss;
use sketchlearn::Row;

/// Eigenvalues and eigenvectors (columns of `v`, row-major) of a symmetric `n × n` matrix by
/// cyclic Jacobi rotations.
fn jacobi(mut a: Vec<f64>, n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut v = vec![0.0; n * n];
    for i in 0..n {
        v[i * n + i] = 1.0;
    }
    for _sweep in 0..100 {
        let off: f64 = (0..n)
            .flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| a[i * n + j] * a[i * n + j])
            .sum();
        if off < 1e-30 {
            break;
        }
        for p in 0..n {
            for q in p + 1..n {
                let apq = a[p * n + q];
                if apq.abs() < 1e-300 {
                    continue;
                }
                let theta = (a[q * n + q] - a[p * n + p]) / (2.0 * apq);
                // The smaller root of t² + 2θt − 1 = 0 (t = 1 when θ = 0).
                let t = if theta == 0.0 {
                    1.0
                } else {
                    theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt())
                };
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for k in 0..n {
                    let (akp, akq) = (a[k * n + p], a[k * n + q]);
                    a[k * n + p] = c * akp - s * akq;
                    a[k * n + q] = s * akp + c * akq;
                }
                for k in 0..n {
                    let (apk, aqk) = (a[p * n + k], a[q * n + k]);
                    a[p * n + k] = c * apk - s * aqk;
                    a[q * n + k] = s * apk + c * aqk;
                }
                for k in 0..n {
                    let (vkp, vkq) = (v[k * n + p], v[k * n + q]);
                    v[k * n + p] = c * vkp - s * vkq;
                    v[k * n + q] = s * vkp + c * vkq;
                }
            }
        }
    }
    ((0..n).map(|i| a[i * n + i]).collect(), v)
}

/// Full-matrix AdaGrad kept whole: `G += g gᵀ`, `w −= η F(G) g` with `F` a function of the
/// eigenvalues of `G`.
struct DenseAdaGrad {
    w: Vec<f64>,
    g: Vec<f64>,
    eta: f64,
    f: fn(f64) -> f64,
}

impl DenseAdaGrad {
    fn new(d: usize, eta: f64, f: fn(f64) -> f64) -> Self {
        DenseAdaGrad {
            w: vec![0.0; d],
            g: vec![0.0; d * d],
            eta,
            f,
        }
    }

    fn learn(&mut self, x: &[f64], y: f64) -> f64 {
        let d = x.len();
        let p: f64 = x.iter().zip(&self.w).map(|(a, b)| a * b).sum();
        let s = Loss::Logistic.derivative(p, y);
        let grad: Vec<f64> = x.iter().map(|v| s * v).collect();
        for i in 0..d {
            for j in 0..d {
                self.g[i * d + j] += grad[i] * grad[j];
            }
        }
        let (lambda, v) = jacobi(self.g.clone(), d);
        for k in 0..d {
            let proj: f64 = (0..d).map(|i| v[i * d + k] * grad[i]).sum();
            let c = (self.f)(lambda[k].max(0.0)) * proj;
            for i in 0..d {
                self.w[i] -= self.eta * c * v[i * d + k];
            }
        }
        p
    }
}

fn stream(n: usize, d: usize, seed: u64) -> Vec<(Vec<f64>, f64)> {
    let mut rng = Lcg(seed);
    (0..n)
        .map(|_| {
            let x: Vec<f64> = (0..d).map(|_| rng.symmetric()).collect();
            // Correlated features, a noisy linear label.
            let z = x[0] + 0.5 * x[1] - x[2] + 0.3 * rng.symmetric();
            (x, if z > 0.0 { 1.0 } else { -1.0 })
        })
        .collect()
}

/// Compares a sketched learner with `m = d + 1` (nothing escapes) with the dense rule.
fn matches_dense<L: OnlineLearner>(mut sketched: L, mut dense: DenseAdaGrad, d: usize) {
    for (t, (x, y)) in stream(200, d, 7).iter().enumerate() {
        let p = sketched.learn(Row::Dense(x), *y, 1.0).unwrap();
        let q = dense.learn(x, *y);
        assert!(
            (p - q).abs() <= 1e-9 * (1.0 + q.abs()),
            "example {t}: {p} vs {q}"
        );
    }
    for (a, b) in sketched.weights().iter().zip(&dense.w) {
        assert!(
            (a - b).abs() <= 1e-9 * (1.0 + b.abs()),
            "weights {a} vs {b}"
        );
    }
}

#[test]
fn ada_fd_with_a_sketch_larger_than_d_is_full_matrix_adagrad_delta_plus_root() {
    let (d, eta, delta) = (5, 0.7, 0.3);
    let dense = DenseAdaGrad::new(d, eta, |l| 1.0 / (0.3 + l.sqrt()));
    matches_dense(
        AdaFd::new(d, d + 1, Loss::Logistic, eta, delta).unwrap(),
        dense,
        d,
    );
}

#[test]
fn sketchy_with_a_sketch_larger_than_d_is_full_matrix_adagrad_inverse_root() {
    let (d, eta, delta) = (5, 0.7, 0.2);
    let dense = DenseAdaGrad::new(d, eta, |l| 1.0 / (0.2 + l).sqrt());
    matches_dense(
        Sketchy::new(d, d + 1, Loss::Logistic, eta, delta).unwrap(),
        dense,
        d,
    );
}

/// Squared loss (`ℓ' = p − y`), `d = 2`, `m = 2` (the per-row FD keeps one direction), η = 1:
///
/// 1. `x = (1, 0)`, `y = 1`: `g = (−1, 0)`, sketch `{(−1, 0)}`, `λ = 1`.
/// 2. `x = (0, 2)`, `y = 1`, `p = 0`: `g = (0, −2)`; the buffer is full, `B Bᵀ = diag(1, 4)`,
///    shrink by `ρ = 1`: sketch `{(0, −√3)}`, escaped mass 1.
/// 3. `x = (1, 0)`, `y = 3`: `g = (p − 3, 0)`; buffer `{(0, −√3), g}`, `B Bᵀ = diag(3, (p−3)²)`,
///    shrink by `ρ = 3` (when `(p − 3)² > 3`): sketch `{(√((p−3)² − 3), 0)}`, escaped 1 + 3 = 4.
#[test]
fn hand_checked_escape() {
    let xs = [([1.0, 0.0], 1.0), ([0.0, 2.0], 1.0), ([1.0, 0.0], 3.0)];
    let run = |l: &mut dyn OnlineLearner| {
        xs.iter()
            .map(|(x, y)| l.learn(Row::Dense(x), *y, 1.0).unwrap())
            .collect::<Vec<_>>()
    };
    // Sketchy, δ = 0: step 1 `g/1`; step 2 (α = 1, λ = 3) `g/√(1 + 3)`; step 3 (α = 4,
    // λ = (p−3)² − 3 = 1 with p = 1) `g/√(4 + 1)` — exactly full-matrix AdaGrad's
    // `diag(5, 4)^{-1/2} g`: the escaped mass restores what FD dropped.
    let mut sketchy = Sketchy::new(2, 2, Loss::Squared, 1.0, 0.0).unwrap();
    let p = run(&mut sketchy);
    assert_eq!(p[..2], [0.0, 0.0]);
    assert!((p[2] - 1.0).abs() < 1e-12, "{p:?}");
    let w = sketchy.weights();
    let want = [1.0 + 2.0 / 5f64.sqrt(), 1.0];
    assert!(
        (w[0] - want[0]).abs() < 1e-12 && (w[1] - want[1]).abs() < 1e-12,
        "{w:?}"
    );
    assert!((sketchy.sketch().total_shrinkage() - 4.0).abs() < 1e-12);

    // Ada-FD, δ = 1: step 1 `g/(1 + 1)`: w = (1/2, 0); step 2 `g/(1 + √3)`; step 3 with
    // p = 1/2, g = (−5/2, 0), sketch {(−√(25/4 − 3), 0)}: `g/(1 + √13/2)` — δ fixed, the
    // escaped mass (1 + 3) is not added back (full-matrix AdaGrad: `g/(1 + √(1 + 25/4))`).
    let mut ada = AdaFd::new(2, 2, Loss::Squared, 1.0, 1.0).unwrap();
    let p = run(&mut ada);
    assert!((p[2] - 0.5).abs() < 1e-12, "{p:?}");
    let w = ada.weights();
    let want = [
        0.5 + 2.5 / (1.0 + 13f64.sqrt() / 2.0),
        2.0 / (1.0 + 3f64.sqrt()),
    ];
    assert!(
        (w[0] - want[0]).abs() < 1e-12 && (w[1] - want[1]).abs() < 1e-12,
        "{w:?}"
    );
}

#[test]
fn both_learn_from_sparse_rows_as_from_dense_ones() {
    for algorithm in [Algorithm::AdaFd, Algorithm::Sketchy] {
        let config = LearnerConfig {
            algorithm,
            size: 3,
            ..LearnerConfig::default()
        };
        let mut dense = config.build(6).unwrap();
        let mut sparse = config.build(6).unwrap();
        for (x, y) in stream(100, 6, 3) {
            let (idx, val): (Vec<u32>, Vec<f64>) = x
                .iter()
                .enumerate()
                .filter(|(i, _)| i % 3 != 1)
                .map(|(i, v)| (i as u32, *v))
                .unzip();
            let mut full = vec![0.0; 6];
            for (&i, &v) in idx.iter().zip(&val) {
                full[i as usize] = v;
            }
            let p = dense.learn(Row::Dense(&full), y, 1.0).unwrap();
            let q = common::learn_sparse(&mut sparse, &idx, &val, y);
            assert!((p - q).abs() < 1e-12, "{algorithm}: {p} vs {q}");
        }
    }
}

#[test]
fn bad_parameters_are_refused() {
    assert!(AdaFd::new(3, 2, Loss::Logistic, 1.0, 0.0).is_err());
    assert!(Sketchy::new(3, 2, Loss::Logistic, 1.0, -1.0).is_err());
    assert!(Sketchy::new(3, 2, Loss::Logistic, 0.0, 1.0).is_err());
    assert!(AdaFd::new(3, 0, Loss::Logistic, 1.0, 1.0).is_err());
    let zero = LearnerConfig {
        algorithm: Algorithm::Sketchy,
        size: 0,
        ..LearnerConfig::default()
    };
    assert!(zero.check().unwrap_err().to_string().contains("at least 1"));
    assert_eq!("ada-fd".parse::<Algorithm>(), Ok(Algorithm::AdaFd));
    assert_eq!("sketchy".parse::<Algorithm>(), Ok(Algorithm::Sketchy));
}

/// A configured learner steps `ADA_FD_STEP_SCALE · η` / `SKETCHY_STEP_SCALE · η` (`-l η` in
/// diagonal AdaGrad's units), with `δ` from `alpha` / `alpha0`.
#[test]
fn a_configured_learner_takes_the_scaled_step() {
    use sketchlearn::linear::{ADA_FD_STEP_SCALE, SKETCHY_STEP_SCALE};
    let data = stream(60, 4, 9);
    for algorithm in [Algorithm::AdaFd, Algorithm::Sketchy] {
        let config = LearnerConfig {
            algorithm,
            size: 3,
            bias: false,
            ..LearnerConfig::default()
        };
        let mut built = config.check().unwrap().build_unscaled(4).unwrap();
        let eta = config.learning_rate;
        let mut direct: Box<dyn OnlineLearner> = match algorithm {
            Algorithm::AdaFd => Box::new(
                AdaFd::new(4, 3, Loss::Logistic, ADA_FD_STEP_SCALE * eta, config.alpha).unwrap(),
            ),
            _ => Box::new(
                Sketchy::new(
                    4,
                    3,
                    Loss::Logistic,
                    SKETCHY_STEP_SCALE * eta,
                    config.alpha0,
                )
                .unwrap(),
            ),
        };
        for (x, y) in &data {
            let p = built.learn(Row::Dense(x), *y, 1.0).unwrap();
            let q = direct.learn(Row::Dense(x), *y, 1.0).unwrap();
            assert_eq!(p, q, "{algorithm}");
        }
    }
}

/// Learns the first rows of [`stream`], then gives a row of `values` times `factor` (hinge
/// loss, label against the prediction: `g = ±x`); returns the error's message and whether the
/// serialized state is byte-for-byte what it was before that row.
fn refuse_a_huge_row<L>(mut l: L, factor: f64) -> (String, bool)
where
    L: OnlineLearner + serde::Serialize,
{
    let rows = stream(8, 5, 11);
    for (x, y) in &rows[..6] {
        l.learn(Row::Dense(x), *y, 1.0).unwrap();
    }
    let before = postcard::to_allocvec(&l).unwrap();
    let huge: Vec<f64> = rows[6].0.iter().map(|v| v * factor).collect();
    let y = if l.predict(Row::Dense(&huge)) > 0.0 {
        -1.0
    } else {
        1.0
    };
    let err = l.learn(Row::Dense(&huge), y, 1.0).unwrap_err().to_string();
    (err, postcard::to_allocvec(&l).unwrap() == before)
}

/// A gradient above FD-SON's bound (`‖g‖² > 1e200`: here about `1e240`, which both took, and
/// `1e600`, which made the Gram matrix infinite and failed with the eigensolver's "matrix
/// contains a non-finite value") is refused before the sketch changes, with the sketched
/// curvatures' message (what is too large, and what to do); the state is byte-identical.
#[test]
fn a_gradient_too_large_for_the_sketch_is_refused_with_the_fix_and_changes_nothing() {
    for factor in [1e120, 1e300, -1e300] {
        for (name, (err, same)) in [
            (
                "ada-fd",
                refuse_a_huge_row(AdaFd::new(5, 3, Loss::Hinge, 0.5, 1.0).unwrap(), factor),
            ),
            (
                "sketchy",
                refuse_a_huge_row(Sketchy::new(5, 3, Loss::Hinge, 0.5, 0.0).unwrap(), factor),
            ),
        ] {
            for needle in [
                "a feature value is too large",
                "divide the large feature columns",
            ] {
                assert!(err.contains(needle), "{name} ×{factor:e}: {err}");
            }
            assert!(same, "{name} ×{factor:e}: the state changed");
        }
    }
}
