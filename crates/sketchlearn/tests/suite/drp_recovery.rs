//! Dual random projection (DRP paper, Zhang et al. 2013): Algorithm 1 against the closed form
//! (15) and an independent implementation, Algorithm 2 (T = 1 equals Algorithm 1, convergence on
//! low-rank data, divergence detection) and Theorem 3's √((d − r)/m) law for the naive solution.

// Dense reference computations index several arrays in lockstep, as in the library.
#![allow(clippy::needless_range_loop)]

use crate::common;
use sketchlearn::drp::{
    low_rank, relative_error, Alg2Status, Dataset, DrpLoss, DrpParams, ExactSolver,
    GaussianProjection, LowRankSpec, OnDivergence, Problem,
};

fn dense_rows(data: &Dataset) -> Vec<Vec<f64>> {
    (0..data.len())
        .map(|i| {
            let mut x = vec![0.0; data.dim()];
            data.row(i).write_dense(&mut x);
            x
        })
        .collect()
}

/// `P = XᵀR/√m` (n × m, row-major) from the entries of `R`, independently of `project`.
fn projected_by_entries(data: &Dataset, r: &GaussianProjection) -> Vec<f64> {
    let (n, m, d) = (data.len(), r.size(), data.dim());
    let rows = dense_rows(data);
    let mut p = vec![0.0; n * m];
    for i in 0..n {
        for k in 0..m {
            let mut s = 0.0;
            for j in 0..d {
                if rows[i][j] != 0.0 {
                    s += rows[i][j] * r.entry(j, k);
                }
            }
            p[i * m + k] = s / (m as f64).sqrt();
        }
    }
    p
}

fn exact(loss: DrpLoss, lambda: f64, data: &Dataset) -> Vec<f64> {
    let problem = Problem::new(loss, lambda).unwrap();
    let sol = ExactSolver::new(1e-13, 1000)
        .unwrap()
        .solve(&problem, data)
        .unwrap();
    assert!(sol.converged);
    sol.w
}

/// Eq. (15): for ridge, Algorithm 1 gives w̃ = X(λI + XᵀRRᵀX/m)⁻¹y (the paper writes S for R).
/// The relative error of each iterate against `w_star`.
fn errors_of(iterates: &[Vec<f64>], w_star: &[f64]) -> Vec<f64> {
    iterates.iter().map(|w| relative_error(w, w_star)).collect()
}

#[test]
fn ridge_alg1_equals_closed_form_15() {
    for (n, d, m, lambda, seed) in [(30, 80, 10, 0.5, 1u64), (25, 60, 40, 2.0, 2)] {
        // m = 40 > n = 25 exercises the n × n (Woodbury) form of the low-dimensional solve.
        let data = low_rank(&LowRankSpec {
            n,
            d,
            rank: 20.min(n),
            flip: 0.1,
            seed,
        })
        .unwrap();
        let drp = DrpParams::new(DrpLoss::Ridge, lambda, m)
            .seed(seed + 10)
            .build()
            .unwrap();
        let fit = drp.fit(&data).unwrap();
        let p = projected_by_entries(&data, drp.projection());
        let w15 = common::dual_ridge(&p, m, lambda, &data);
        let err = relative_error(fit.alg1(), &w15);
        assert!(err < 1e-10, "n={n} m={m}: ‖w̃ − w̃(15)‖/‖w̃(15)‖ = {err:e}");
    }
}

/// Algorithm 1 implemented independently: project with `project_row`, solve (6) by damped
/// Newton with a dense Hessian, α̂_i = ℓ'(y_i x̂_iᵀz*), w̃ = −(1/λ)Σ α̂_i y_i x_i.
fn alg1_reference(loss: DrpLoss, lambda: f64, data: &Dataset, r: &GaussianProjection) -> Vec<f64> {
    let (n, m) = (data.len(), r.size());
    let y = data.labels();
    let xh: Vec<Vec<f64>> = (0..n).map(|i| r.project_row(data.row(i))).collect();
    let f = |z: &[f64]| -> f64 {
        0.5 * lambda * z.iter().map(|v| v * v).sum::<f64>()
            + (0..n)
                .map(|i| loss.value(y[i] * xh[i].iter().zip(z).map(|(a, b)| a * b).sum::<f64>()))
                .sum::<f64>()
    };
    let mut z = vec![0.0; m];
    for _ in 0..100 {
        let mut g: Vec<f64> = z.iter().map(|v| lambda * v).collect();
        let mut h = vec![0.0; m * m];
        for k in 0..m {
            h[k * m + k] = lambda;
        }
        for i in 0..n {
            let s = y[i] * xh[i].iter().zip(&z).map(|(a, b)| a * b).sum::<f64>();
            let (d1, d2) = (loss.derivative(s), loss.second_derivative(s));
            for a in 0..m {
                g[a] += d1 * y[i] * xh[i][a];
                for b in 0..m {
                    h[a * m + b] += d2 * xh[i][a] * xh[i][b];
                }
            }
        }
        if g.iter().map(|v| v * v).sum::<f64>().sqrt() < 1e-13 {
            break;
        }
        let mut step = g.clone();
        common::spd_solve(&h, m, &mut step);
        let f0 = f(&z);
        let mut t = 1.0;
        loop {
            let trial: Vec<f64> = z.iter().zip(&step).map(|(a, b)| a - t * b).collect();
            if f(&trial) <= f0 || t < 1e-10 {
                z = trial;
                break;
            }
            t *= 0.5;
        }
    }
    let alpha: Vec<f64> = (0..n)
        .map(|i| loss.derivative(y[i] * xh[i].iter().zip(&z).map(|(a, b)| a * b).sum::<f64>()))
        .collect();
    Problem::new(loss, lambda)
        .unwrap()
        .primal_from_dual(data, &alpha)
}

/// Algorithm 2 with T = 1 is Algorithm 1 — checked against the independent Algorithm 1 for
/// every loss, and the first iterate of a longer run is bit-identical to a T = 1 run.
#[test]
fn alg2_with_one_iteration_equals_alg1() {
    let data = low_rank(&LowRankSpec {
        n: 60,
        d: 120,
        rank: 8,
        flip: 0.1,
        seed: 5,
    })
    .unwrap();
    for loss in DrpLoss::ALL {
        let one = DrpParams::new(loss, 0.7, 12).seed(9).build().unwrap();
        let fit1 = one.fit(&data).unwrap();
        let fit3 = DrpParams::new(loss, 0.7, 12)
            .seed(9)
            .iterations(3)
            .on_divergence(OnDivergence::Continue)
            .build()
            .unwrap()
            .fit(&data)
            .unwrap();
        assert_eq!(fit1.iterates.len(), 1);
        assert_eq!(fit3.iterates.len(), 3);
        assert_eq!(fit1.alg1(), fit3.alg1(), "{loss}");
        let reference = alg1_reference(loss, 0.7, &data, one.projection());
        let err = relative_error(fit1.alg1(), &reference);
        assert!(err < 1e-8, "{loss}: Alg.1 vs independent Alg.1: {err:e}");
    }
}

/// Theorem 5: with m comfortably above the rank (here m = 130 r), Algorithm 2 contracts to w*
/// geometrically. (The per-iteration factor is about ‖I − AAᵀ/m‖ ≈ 2√(r/m) for the r × m
/// Gaussian A = UᵀR, so "comfortably" means m ≫ r; at m = 12 r the factor is about 0.5.)
#[test]
fn alg2_converges_on_low_rank_data() {
    let data = low_rank(&LowRankSpec {
        n: 150,
        d: 800,
        rank: 3,
        flip: 0.1,
        seed: 11,
    })
    .unwrap();
    for loss in DrpLoss::ALL {
        let lambda = 0.5;
        let w_star = exact(loss, lambda, &data);
        let w_norm = w_star.iter().map(|v| v * v).sum::<f64>().sqrt();
        let fit = DrpParams::new(loss, lambda, 400)
            .iterations(12)
            .seed(3)
            .build()
            .unwrap()
            .fit(&data)
            .unwrap();
        let errors = errors_of(&fit.iterates, &w_star);
        assert_eq!(fit.status, Alg2Status::Completed, "{loss}: {errors:?}");
        let naive = relative_error(&fit.naive, &w_star);
        assert!(errors[0] < 0.2 && naive > 1.0, "{loss}: {naive} {errors:?}");
        for t in 1..5 {
            assert!(errors[t] < 0.3 * errors[t - 1], "{loss}: {errors:?}");
        }
        assert!(errors[11] < 1e-10, "{loss}: {errors:?}");
        // The gradient norm certifies the error: ‖w̃ − w*‖ ≤ ‖∇f(w̃)‖/λ.
        for (w, r) in fit.iterates.iter().zip(&fit.reports) {
            let abs_err = relative_error(w, &w_star) * w_norm;
            assert!(abs_err <= r.grad_norm / lambda * (1.0 + 1e-6) + 1e-12);
        }
    }
}

/// With m far below the effective rank Algorithm 2 does not contract; the divergence is detected,
/// and with the Stop policy the iteration stops there and `best()` is the best iterate.
#[test]
fn alg2_divergence_is_detected() {
    let data = low_rank(&LowRankSpec {
        n: 200,
        d: 400,
        rank: 150,
        flip: 0.1,
        seed: 21,
    })
    .unwrap();
    let lambda = 1e-3;
    let w_star = exact(DrpLoss::Ridge, lambda, &data);
    let cont = DrpParams::new(DrpLoss::Ridge, lambda, 10)
        .iterations(6)
        .on_divergence(OnDivergence::Continue)
        .build()
        .unwrap()
        .fit(&data)
        .unwrap();
    let errors = errors_of(&cont.iterates, &w_star);
    assert_eq!(cont.iterates.len(), 6);
    assert!(errors[5] > errors[0], "errors grow: {errors:?}");
    let Alg2Status::Diverged { at } = cont.status else {
        panic!("divergence not detected: {:?} {errors:?}", cont.status);
    };
    assert!(at >= 2);
    let stop = DrpParams::new(DrpLoss::Ridge, lambda, 10)
        .iterations(6)
        .build()
        .unwrap()
        .fit(&data)
        .unwrap();
    assert_eq!(stop.status, Alg2Status::Diverged { at });
    assert_eq!(stop.iterates.len(), at);
    assert_eq!(stop.iterates[..], cont.iterates[..at]);
    assert!(stop.best_index() < at);
    // The final iterate: the one before the divergence when the run stopped there, the last
    // one when it went on.
    assert_eq!(stop.final_index(), at - 2);
    assert_eq!(stop.reports[stop.final_index()].t, at - 1);
    assert_eq!(cont.final_index(), 5);
    assert_eq!(cont.final_iterate(), cont.last());
}

/// Theorem 3: the naive solution ŵ = Rz*/√m is off by about √((d − r)/m)·‖w*‖.
///
/// Mechanism (the proof's): the component of ŵ outside span(X) is (I − UUᵀ)Rz*/√m, a Gaussian
/// vector in d − r dimensions independent of z* (z* depends on R only through UᵀR), so its norm
/// is √((d − r)/m)·‖z*‖ up to a χ²_{d−r} fluctuation (±3 % at d − r = 1995), and the in-span
/// error is small. Checked: (a) ‖ŵ − w*‖ = √((d − r)/m)·‖z*‖ within 5 % at every m; (b) with
/// m ≥ 20 r, where Theorem 1 gives ‖z*‖ ≈ ‖w*‖, ‖ŵ − w*‖/‖w*‖ = √((d − r)/m) within 15 %.
/// (Measured: (a) within 2.5 %, (b) within 8 %; at m = 10 r, (b) is off by 33 % because
/// ‖z*‖/‖w*‖ = 1.31 there.)
#[test]
fn naive_error_follows_sqrt_d_minus_r_over_m() {
    let (d, r) = (2000, 5);
    let data = low_rank(&LowRankSpec {
        n: 200,
        d,
        rank: r,
        flip: 0.1,
        seed: 31,
    })
    .unwrap();
    for loss in [DrpLoss::Ridge, DrpLoss::Logistic] {
        let w_star = exact(loss, 1.0, &data);
        let w_norm = w_star.iter().map(|v| v * v).sum::<f64>().sqrt();
        for (k, m) in [50usize, 100, 200, 400, 800].into_iter().enumerate() {
            let fit = DrpParams::new(loss, 1.0, m)
                .seed(40 + k as u64)
                .build()
                .unwrap()
                .fit(&data)
                .unwrap();
            let naive = relative_error(&fit.naive, &w_star);
            let law = (((d - r) as f64) / m as f64).sqrt();
            let z_norm = fit.z.iter().map(|v| v * v).sum::<f64>().sqrt();
            let mechanism = naive / (law * z_norm / w_norm);
            assert!(
                (0.95..=1.05).contains(&mechanism),
                "{loss} m={m}: naive error {naive:.3} vs √((d−r)/m)·‖z*‖/‖w*‖: ratio {mechanism:.3}"
            );
            if m >= 20 * r {
                let ratio = naive / law;
                assert!(
                    (0.85..=1.15).contains(&ratio),
                    "{loss} m={m}: naive error {naive:.3}, ratio to √((d−r)/m) {ratio:.3}"
                );
            }
            let alg1 = relative_error(fit.alg1(), &w_star);
            assert!(
                alg1 < 0.15 * naive,
                "{loss} m={m}: Alg.1 {alg1} vs naive {naive}"
            );
        }
    }
}
