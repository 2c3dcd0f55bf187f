//! The Newton driver against a from-scratch dense SON Algorithm 1 (Luo et al. 2016, issue 26,
//! item 7), prediction by prediction: `A₀ = αI`; for each example the generalised projection
//! onto `{|wᵀx| ≤ C}` in the `A` norm, `w ← w − (τ / xᵀA⁻¹x)·A⁻¹x` with
//! `τ = sign(p)(|p| − C)`; then `g = ℓ'(p, y)·x`, `A ← A + c·ggᵀ` and the Newton step
//! `w ← w − A⁻¹g`. Here `A` is kept whole and every solve is a Gaussian elimination — nothing is
//! taken from the library but the configuration.

use crate::common;

use sketchlearn::linear::{Algorithm, CurvatureKind, LearnerConfig, OnlineLearner, Representation};
use sketchlearn::loss::Loss;
use sketchlearn::Row;

const D: usize = 5;

/// Solves `A z = b` by Gaussian elimination with partial pivoting.
fn solve(a: &[[f64; D]; D], b: &[f64; D]) -> [f64; D] {
    let (mut m, mut r) = (*a, *b);
    for k in 0..D {
        let p = (k..D)
            .max_by(|&i, &j| m[i][k].abs().total_cmp(&m[j][k].abs()))
            .unwrap();
        m.swap(k, p);
        r.swap(k, p);
        for i in k + 1..D {
            let f = m[i][k] / m[k][k];
            let pivot = m[k];
            for (mij, pkj) in m[i][k..].iter_mut().zip(&pivot[k..]) {
                *mij -= f * pkj;
            }
            r[i] -= f * r[k];
        }
    }
    let mut z = [0.0; D];
    for k in (0..D).rev() {
        let s: f64 = (k + 1..D).map(|j| m[k][j] * z[j]).sum();
        z[k] = (r[k] - s) / m[k][k];
    }
    z
}

fn dot(a: &[f64; D], b: &[f64; D]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// SON Algorithm 1 with a full `A`, the logistic loss; returns each prediction.
fn son(data: &[([f64; D], f64)], alpha: f64, c: f64, clip: f64) -> Vec<f64> {
    let mut a = [[0.0; D]; D];
    for (i, row) in a.iter_mut().enumerate() {
        row[i] = alpha;
    }
    let mut w = [0.0; D];
    let mut out = Vec::new();
    for (x, y) in data {
        let mut p = dot(&w, x);
        if p.abs() > clip {
            let ax = solve(&a, x);
            let tau = p.signum() * (p.abs() - clip);
            let q = dot(x, &ax);
            for (wi, axi) in w.iter_mut().zip(&ax) {
                *wi -= tau / q * axi;
            }
            p -= tau;
        }
        out.push(p);
        let dl = -y / (1.0 + (y * p).exp());
        let g: [f64; D] = x.map(|xi| dl * xi);
        for i in 0..D {
            for j in 0..D {
                a[i][j] += c * g[i] * g[j];
            }
        }
        let step = solve(&a, &g);
        for (wi, si) in w.iter_mut().zip(&step) {
            *wi -= si;
        }
    }
    out
}

fn stream(n: usize) -> Vec<([f64; D], f64)> {
    let mut lcg = common::Lcg(4242);
    let mut next = || lcg.symmetric();
    (0..n)
        .map(|_| {
            let x = [next() * 3.0, next(), next() * 0.5, next() * 2.0, next()];
            let y = if x[0] + x[1] - x[3] + 0.3 * next() > 0.0 {
                1.0
            } else {
                -1.0
            };
            (x, y)
        })
        .collect()
}

#[test]
fn newton_full_and_an_exact_sketch_follow_son_algorithm_1() {
    let data = stream(400);
    let (alpha, c) = (0.5, 0.3);
    for clip in [f64::INFINITY, 1.5] {
        let want = son(&data, alpha, c, clip);
        // Full curvature, and FD with m > d (nothing is ever shrunk: the sketch is exact).
        for (curvature, size, tol) in [
            (CurvatureKind::Full, 1, 1e-9),
            (CurvatureKind::Fd, D + 1, 1e-6),
        ] {
            let config = LearnerConfig {
                algorithm: Algorithm::Newton,
                curvature,
                representation: Representation::Dense,
                size,
                alpha,
                c,
                clip,
                loss: Loss::Logistic,
                bias: false,
                diag: false,
                ..LearnerConfig::default()
            };
            // The paper's algorithm: without the row scaling of a single learner's default.
            let mut learner = config.check().unwrap().build_unscaled(D).unwrap();
            for (t, ((x, y), w)) in data.iter().zip(&want).enumerate() {
                let p = learner.learn(Row::Dense(x), *y, 1.0).unwrap();
                assert!(
                    (p - w).abs() <= tol * (1.0 + w.abs()),
                    "{curvature:?} clip {clip}: example {t}: {p} vs SON Alg. 1 {w}"
                );
            }
        }
    }
}
