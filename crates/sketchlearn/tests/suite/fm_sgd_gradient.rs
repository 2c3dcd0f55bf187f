//! FM-SGD's step is the gradient of the loss, checked by finite differences against an
//! independent model.
//!
//! Rendle's FM (Rendle 2010, eq. 1): `p(θ) = w₀ + Σ_i w_i x_i + Σ_{i<j} ⟨v_i, v_j⟩ x_i x_j`. One
//! SGD step on an example of weight `c` minimises
//! `J(θ) = c·ℓ(p(θ), y) + (λ_w/2) Σ_{i: x_i ≠ 0} w_i² + (λ_v/2) Σ_{i: x_i ≠ 0} ‖v_i‖²`
//! (the penalties on the features the example touches, as River and libFM apply them), so
//! `θ_after = θ_before − η ∇J(θ_before)` for each block with its own rate. The test evaluates `p`
//! by the double sum over pairs (not the library's `O(nk)` identity), checks the library's
//! prediction against it, and compares `(θ_before − θ_after)/η` with central differences of `J`.

use sketchlearn::fm::{FmSgd, FmSgdParams};
use sketchlearn::linear::OnlineLearner;
use sketchlearn::loss::Loss;
use sketchlearn::Row;

/// The parameters `(w₀, w, v)` of an FM of rank `k`, `v` row-major `d × k`.
#[derive(Clone)]
struct Params {
    w0: f64,
    w: Vec<f64>,
    v: Vec<f64>,
}

fn read(fm: &FmSgd, d: usize) -> Params {
    Params {
        w0: fm.intercept(),
        w: fm.weights().to_vec(),
        v: (0..d).flat_map(|i| fm.factor(i).to_vec()).collect(),
    }
}

/// `p(θ)` by the definition: the pairwise sum over `i < j`.
fn predict(p: &Params, k: usize, idx: &[usize], val: &[f64]) -> f64 {
    let mut z = p.w0;
    for (a, (&i, &xi)) in idx.iter().zip(val).enumerate() {
        z += p.w[i] * xi;
        for (&j, &xj) in idx[a + 1..].iter().zip(&val[a + 1..]) {
            let dot: f64 = (0..k).map(|f| p.v[i * k + f] * p.v[j * k + f]).sum();
            z += dot * xi * xj;
        }
    }
    z
}

struct Step {
    loss: Loss,
    y: f64,
    c: f64,
    reg_w: f64,
    reg_v: f64,
}

/// `J(θ)` of the module documentation.
fn objective(p: &Params, k: usize, idx: &[usize], val: &[f64], s: &Step) -> f64 {
    let mut j = s.c * s.loss.value(predict(p, k, idx, val), s.y);
    for &i in idx {
        j += 0.5 * s.reg_w * p.w[i] * p.w[i];
        j += 0.5 * s.reg_v * (0..k).map(|f| p.v[i * k + f].powi(2)).sum::<f64>();
    }
    j
}

/// Central difference of `J` in the parameter that `at` selects.
fn numeric(
    p: &Params,
    at: impl Fn(&mut Params) -> &mut f64,
    k: usize,
    idx: &[usize],
    val: &[f64],
    s: &Step,
) -> f64 {
    let h = 1e-6;
    let (mut plus, mut minus) = (p.clone(), p.clone());
    *at(&mut plus) += h;
    *at(&mut minus) -= h;
    (objective(&plus, k, idx, val, s) - objective(&minus, k, idx, val, s)) / (2.0 * h)
}

fn check(loss: Loss, y: f64, c: f64, reg_w: f64, reg_v: f64, seed: u64) {
    let (d, k) = (7, 3);
    let (eta, eta_w, eta_0) = (0.05, 0.02, 0.03);
    let params = FmSgdParams {
        rank: k,
        eta,
        eta_linear: Some(eta_w),
        eta_intercept: Some(eta_0),
        reg_w,
        reg_v,
        init_std: 0.4,
        intercept: 0.2,
        seed,
        ..Default::default()
    };
    let mut fm = FmSgd::new(d, loss, params).unwrap();
    // Move away from w = 0 first, so that every block of the gradient is exercised.
    for t in 0..5u32 {
        let x = Row::Sparse {
            indices: &[t, t + 1, 6],
            values: &[1.0, -0.5, 0.7],
        };
        fm.learn(x, y, 1.0).unwrap();
    }
    let (idx, val) = (vec![0usize, 2, 3, 5], vec![0.8, -1.1, 0.4, 1.5]);
    let idx32: Vec<u32> = idx.iter().map(|&i| i as u32).collect();
    let x = Row::Sparse {
        indices: &idx32,
        values: &val,
    };
    let before = read(&fm, d);
    let p = predict(&before, k, &idx, &val);
    assert!(
        (fm.predict(x) - p).abs() <= 1e-12 * (1.0 + p.abs()),
        "prediction"
    );
    fm.learn(x, y, c).unwrap();
    let after = read(&fm, d);
    let s = Step {
        loss,
        y,
        c,
        reg_w,
        reg_v,
    };
    let close = |analytic: f64, numeric: f64, what: &str| {
        assert!(
            (analytic - numeric).abs() <= 1e-6 * (1.0 + numeric.abs()),
            "{loss:?} y={y} c={c} {what}: step/η = {analytic}, finite difference {numeric}"
        );
    };
    let g0 = numeric(&before, |q| &mut q.w0, k, &idx, &val, &s);
    close((before.w0 - after.w0) / eta_0, g0, "w0");
    for &i in &idx {
        let g = numeric(&before, |q| &mut q.w[i], k, &idx, &val, &s);
        close((before.w[i] - after.w[i]) / eta_w, g, &format!("w[{i}]"));
        for f in 0..k {
            let g = numeric(&before, |q| &mut q.v[i * k + f], k, &idx, &val, &s);
            let analytic = (before.v[i * k + f] - after.v[i * k + f]) / eta;
            close(analytic, g, &format!("v[{i}][{f}]"));
        }
    }
    // Features the example does not touch do not move.
    for i in [1, 4, 6] {
        assert_eq!(before.w[i], after.w[i]);
        assert_eq!(before.v[i * k..(i + 1) * k], after.v[i * k..(i + 1) * k]);
    }
}

#[test]
fn fm_sgd_step_is_the_gradient_by_finite_differences() {
    for seed in [1, 2, 3] {
        check(Loss::Squared, 3.5, 1.0, 0.0, 0.0, seed);
        check(Loss::Squared, -1.0, 2.5, 0.1, 0.05, seed);
        check(Loss::Logistic, 1.0, 1.0, 0.0, 0.0, seed);
        check(Loss::Logistic, -1.0, 0.7, 0.2, 0.3, seed);
    }
}
