//! Trust-region Newton with conjugate gradients (Lin, Weng & Keerthi 2008, "Trust region Newton
//! method for large-scale logistic regression" — the solver of LIBLINEAR's primal `-s 0/2/11`),
//! written from the paper: the CG inner loop stops at the trust-region boundary (Steihaug) or
//! when `‖r‖ ≤ ξ_k‖∇f‖`, and the radius follows the paper's update rules with
//! `η0 = 1e-4, η1 = 0.25, η2 = 0.75, σ1 = 0.25, σ2 = 0.5, σ3 = 4`.
//!
//! Two changes aim at *tight* tolerances (the recovery errors we measure go down to 1e-12):
//! the forcing term `ξ_k = min(0.1, √(‖∇f_k‖/‖∇f_0‖))` makes the outer iteration superlinear,
//! and when the predicted reduction falls into the rounding noise of `f` a step is accepted iff
//! it decreases `‖∇f‖` (the function-value ratio test is meaningless there).

use super::problem::SmoothObjective;
use crate::cancel::{Cancel, Cancelled};
use crate::linalg::{axpy, dot};

/// Options of the trust-region Newton solver.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct TronOptions {
    /// Stop when `‖∇f(w)‖ ≤ tolerance · ‖∇f(w₀)‖`.
    pub tolerance: f64,
    /// Maximum outer (Newton) iterations.
    pub max_iterations: usize,
    /// Maximum conjugate-gradient iterations in total (`usize::MAX` = no limit); when it runs
    /// out the solver returns its current iterate with `budget_exhausted`.
    pub max_cg_total: usize,
}

/// What the solver did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct TronReport {
    pub iterations: usize,
    pub cg_iterations: usize,
    pub objective: f64,
    pub grad_norm: f64,
    pub grad_norm0: f64,
    pub converged: bool,
    pub budget_exhausted: bool,
}

const ETA0: f64 = 1e-4;
const ETA1: f64 = 0.25;
const ETA2: f64 = 0.75;
const SIGMA1: f64 = 0.25;
const SIGMA2: f64 = 0.5;
const SIGMA3: f64 = 4.0;

fn norm(v: &[f64]) -> f64 {
    dot(v, v).sqrt()
}

/// Minimises `obj` from the starting point `w` (overwritten with the solution), polling
/// `cancel` before each Newton iteration (`w` then holds the last accepted iterate).
pub(crate) fn tron<O: SmoothObjective>(
    obj: &mut O,
    w: &mut [f64],
    opts: TronOptions,
    cancel: Cancel<'_>,
) -> Result<TronReport, Cancelled> {
    let n = obj.dim();
    let mut g = vec![0.0; n];
    let mut s = vec![0.0; n];
    let mut r = vec![0.0; n];
    let mut d = vec![0.0; n];
    let mut hd = vec![0.0; n];
    let mut w_new = vec![0.0; n];
    let mut g_new = vec![0.0; n];

    let mut f = obj.value(w);
    obj.gradient(w, &mut g);
    let gnorm0 = norm(&g);
    let mut gnorm = gnorm0;
    let mut delta = gnorm0;
    let mut report = TronReport {
        iterations: 0,
        cg_iterations: 0,
        objective: f,
        grad_norm: gnorm,
        grad_norm0: gnorm0,
        converged: gnorm <= opts.tolerance * gnorm0 || gnorm0 == 0.0,
        budget_exhausted: false,
    };
    if report.converged || !f.is_finite() {
        return Ok(report);
    }
    let max_cg = n.max(20);
    let mut first = true;
    while report.iterations < opts.max_iterations {
        cancel.check()?;
        let remaining = opts.max_cg_total.saturating_sub(report.cg_iterations);
        if remaining == 0 {
            report.budget_exhausted = true;
            break;
        }
        let xi = 0.1f64.min((gnorm / gnorm0).sqrt());
        let (cg_iter, boundary) = trcg(
            obj,
            delta,
            &g,
            xi,
            max_cg.min(remaining),
            &mut s,
            &mut r,
            &mut d,
            &mut hd,
        );
        report.cg_iterations += cg_iter;
        for i in 0..n {
            w_new[i] = w[i] + s[i];
        }
        let gs = dot(&g, &s);
        // r = −g − H s, so sᵀH s = −gᵀs − sᵀr.
        let prered = -0.5 * (gs - dot(&s, &r));
        let f_new = obj.value(&w_new);
        let actred = f - f_new;
        let snorm = norm(&s);
        if first {
            delta = delta.min(snorm);
            first = false;
        }
        let noise = 1e-11 * f.abs().max(f_new.abs());
        if prered.abs() <= noise {
            // Rounding noise: judge the step by the gradient norm instead of f.
            obj.gradient(&w_new, &mut g_new);
            let gnorm_new = norm(&g_new);
            if gnorm_new < gnorm && gnorm_new.is_finite() {
                w.copy_from_slice(&w_new);
                g.copy_from_slice(&g_new);
                f = f_new;
                gnorm = gnorm_new;
                report.iterations += 1;
                if gnorm <= opts.tolerance * gnorm0 {
                    report.converged = true;
                    break;
                }
                continue;
            }
            // No measurable progress is possible any more.
            obj.value(w);
            obj.gradient(w, &mut g);
            break;
        }
        let alpha = if f_new - f - gs <= 0.0 {
            SIGMA3
        } else {
            SIGMA1.max(-0.5 * (gs / (f_new - f - gs)))
        };
        if actred < ETA0 * prered {
            delta = (alpha.max(SIGMA1) * snorm).min(SIGMA2 * delta);
        } else if actred < ETA1 * prered {
            delta = (SIGMA1 * delta).max((alpha * snorm).min(SIGMA2 * delta));
        } else if actred < ETA2 * prered {
            delta = (SIGMA1 * delta).max((alpha * snorm).min(SIGMA3 * delta));
        } else if boundary {
            delta *= SIGMA3;
        } else {
            delta = delta.max((alpha * snorm).min(SIGMA3 * delta));
        }
        if actred > ETA0 * prered && f_new.is_finite() {
            report.iterations += 1;
            w.copy_from_slice(&w_new);
            f = f_new;
            obj.gradient(w, &mut g);
            gnorm = norm(&g);
            if gnorm <= opts.tolerance * gnorm0 {
                report.converged = true;
                break;
            }
        } else {
            // Rejected: restore the curvature at w for the next CG.
            obj.value(w);
            obj.gradient(w, &mut g);
        }
        if delta.is_nan() || delta <= 0.0 || delta.is_infinite() {
            break;
        }
    }
    report.objective = f;
    report.grad_norm = gnorm;
    Ok(report)
}

/// Steihaug CG on `min gᵀs + ½sᵀHs` within `‖s‖ ≤ Δ`; returns (iterations, hit boundary).
/// On return `r = −g − H s`.
#[allow(clippy::too_many_arguments)]
fn trcg<O: SmoothObjective>(
    obj: &mut O,
    delta: f64,
    g: &[f64],
    xi: f64,
    max_cg: usize,
    s: &mut [f64],
    r: &mut [f64],
    d: &mut [f64],
    hd: &mut [f64],
) -> (usize, bool) {
    s.iter_mut().for_each(|x| *x = 0.0);
    for i in 0..g.len() {
        r[i] = -g[i];
        d[i] = r[i];
    }
    let cgtol = xi * norm(g);
    let mut rtr = dot(r, r);
    let mut iter = 0;
    while iter < max_cg {
        if rtr.sqrt() <= cgtol {
            break;
        }
        iter += 1;
        obj.hess_vec(d, hd);
        let dhd = dot(d, hd);
        if dhd.is_nan() || dhd <= 0.0 {
            // Cannot happen for λ > 0; guard against rounding.
            break;
        }
        let mut alpha = rtr / dhd;
        axpy(alpha, d, s);
        if norm(s) > delta {
            axpy(-alpha, d, s);
            let std = dot(s, d);
            let sts = dot(s, s);
            let dtd = dot(d, d);
            let dsq = delta * delta;
            let rad = (std * std + dtd * (dsq - sts)).max(0.0).sqrt();
            alpha = if std >= 0.0 {
                (dsq - sts) / (std + rad)
            } else {
                (rad - std) / dtd
            };
            axpy(alpha, d, s);
            axpy(-alpha, hd, r);
            return (iter, true);
        }
        axpy(-alpha, hd, r);
        let rnew = dot(r, r);
        let beta = rnew / rtr;
        for i in 0..d.len() {
            d[i] = r[i] + beta * d[i];
        }
        rtr = rnew;
    }
    (iter, false)
}
