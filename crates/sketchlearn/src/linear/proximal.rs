//! OGD and AdaGrad with an elastic-net penalty `λ₁‖w‖₁ + (λ₂/2)‖w‖²`, by proximal steps
//! (truncated gradient, Langford, Li & Zhang 2009, JMLR 10, "Sparse online learning via
//! truncated gradient", with gravity applied every step; the L2 part is the proximal step of
//! the squared norm, as in the forward-backward splitting of Duchi & Singer 2009, FOBOS), kept
//! in **sparse time** by lazy updates.
//!
//! # The update (dense, eager)
//!
//! At example `t` with gradient `g` (non-zero only on the example's features) and per-coordinate
//! step `s_{t,i}` (OGD: `η/√t`; AdaGrad: `η/√G_i` with `G_i = Σ g_i²`), every coordinate takes
//! the gradient step and then the proximal step of the penalty:
//!
//! ```text
//! u_i = w_i − s_{t,i} g_i
//! w_i ← sign(u_i) · max(0, |u_i| − s_{t,i} λ₁) / (1 + s_{t,i} λ₂)          (1)
//! ```
//!
//! (the minimiser of `½(w − u)² + s(λ₁|w| + λ₂w²/2)`). Applied to all `d` coordinates this costs
//! `O(d)` per example.
//!
//! # The same in sparse time
//!
//! A coordinate absent from the examples `s+1 … t` has `g_i = 0` there, so it only undergoes
//! (1) with `u_i = w_i`: a shrink toward 0 that stops at 0 (the map is monotone and keeps
//! signs, so `|w|` decreases to 0 and stays there). It is applied when the coordinate is next
//! read (predicted or learned) — the accumulated shrink at once:
//!
//! * **AdaGrad**: `G_i` does not change while the coordinate is absent, so the step `s` is
//!   constant and `n` applications of `v ← (v − sλ₁)/(1 + sλ₂)` have the closed form, with
//!   `r = 1/(1 + sλ₂)`: `v_n = rⁿ v₀ − (λ₁/λ₂)(1 − rⁿ)` (`v₀ − n s λ₁` when `λ₂ = 0`), clipped
//!   at 0.
//! * **OGD**: the step `η/√k` changes every example. With `D_t = Π_{k≤t} (1 + s_k λ₂)` and
//!   `C_t = Σ_{k≤t} s_k λ₁ D_{k−1}`, each application of (1) keeps `v D + C` unchanged while
//!   `v > 0` (`v_k D_k = (v_{k−1} − s_kλ₁) D_{k−1}`), so `v_t = (v_s D_s − (C_t − C_s)) / D_t`,
//!   clipped at 0: two running scalars, and per coordinate the `(D, C)` of its last update.
//!   `D` grows like `exp(2ηλ₂√t)`; when it passes `10¹⁰⁰` every stored `D, C` is divided by it
//!   (an `O(d)` rescale, rare).
//!
//! So a learning step costs `O(nnz)` as without the penalty, and gives the eager update's
//! weights up to rounding (`tests/regularization.rs`: within 1e-9). With `λ₁ = λ₂ = 0` every
//! operation is the unpenalised learner's, bit for bit.

use super::{check_example, weight_ok, LearnError, OnlineLearner, Regularization};
use crate::loss::Loss;
use crate::Row;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// The proximal step (1) of the module documentation for step `s`.
#[inline]
fn prox(u: f64, s: f64, r: Regularization) -> f64 {
    if r.is_none() {
        return u;
    }
    let m = (u.abs() - s * r.l1).max(0.0);
    if m == 0.0 {
        return 0.0; // +0, not −0
    }
    u.signum() * m / (1.0 + s * r.l2)
}

/// The magnitude `m` with the sign of `v`, or `+0` when `m ≤ 0` (the missed proximal steps
/// shrank the coordinate past zero).
#[inline]
fn with_sign_of(v: f64, m: f64) -> f64 {
    if m > 0.0 {
        v.signum() * m
    } else {
        0.0
    }
}

fn check_eta(eta: f64) -> Result<(), LearnError> {
    if eta.is_finite() && eta > 0.0 {
        Ok(())
    } else {
        Err(LearnError::InvalidParameter(format!(
            "learning rate must be finite and > 0, got {eta}"
        )))
    }
}

/// Weights kept lazily: the stored values, and each coordinate as it is now (its missed
/// proximal steps applied).
trait Lazy {
    fn stored(&self) -> &[f64];
    fn penalty(&self) -> Regularization;
    fn current(&self, i: usize) -> f64;

    /// `wᵀx` with the current weights (without a penalty: the stored ones, as the plain
    /// learner computes it, bit for bit).
    fn lazy_predict(&self, x: Row<'_>) -> f64 {
        if self.penalty().is_none() {
            return x.dot(self.stored());
        }
        dot_current(x, self.stored().len(), |i| self.current(i))
    }

    /// Every current weight.
    fn lazy_weights(&self) -> Cow<'_, [f64]> {
        Cow::Owned((0..self.stored().len()).map(|i| self.current(i)).collect())
    }
}

/// [`Lazy`] and [`OnlineLearner`] for a learner with fields `w` (stored weights) and `reg`, and
/// methods `current(i)` (coordinate `i` now) and `step(x, y, weight, p)` (the update after the
/// prediction `p`): the example check, the lazy prediction and weights are the same for both.
macro_rules! lazy {
    ($t:ty) => {
        impl Lazy for $t {
            fn stored(&self) -> &[f64] {
                &self.w
            }
            fn penalty(&self) -> Regularization {
                self.reg
            }
            fn current(&self, i: usize) -> f64 {
                <$t>::current(self, i)
            }
        }

        impl OnlineLearner for $t {
            fn dim(&self) -> usize {
                self.w.len()
            }

            fn predict(&self, x: Row<'_>) -> f64 {
                self.lazy_predict(x)
            }

            fn learn(&mut self, x: Row<'_>, y: f64, weight: f64) -> Result<f64, LearnError> {
                check_example(&x, y, weight, self.w.len())?;
                let p = self.predict(x);
                self.step(x, y, weight, p).map(|()| p)
            }

            fn weights(&self) -> Cow<'_, [f64]> {
                self.lazy_weights()
            }
        }
    };
}

/// Diagonal AdaGrad with the elastic-net penalty, lazy (see the [module](self) documentation).
///
/// ```
/// use sketchlearn::linear::{OnlineLearner, ProximalAdaGrad, Regularization};
/// use sketchlearn::loss::Loss;
/// use sketchlearn::Row;
/// let strong = Regularization { l1: 10.0, l2: 0.0 };
/// let mut ada = ProximalAdaGrad::new(2, Loss::Squared, 1.0, strong).unwrap();
/// ada.learn(Row::Dense(&[2.0, 0.0]), 1.0, 1.0).unwrap();
/// assert_eq!(ada.weights()[0], 0.0); // the step 1 is smaller than the threshold s·λ₁ = 5
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ProximalAdaGrad {
    #[serde(with = "crate::model::sparse_vec")]
    w: Vec<f64>,
    #[serde(with = "crate::model::sparse_vec")]
    g2: Vec<f64>,
    /// The example count at each coordinate's last update.
    #[serde(with = "crate::model::sparse_vec")]
    last: Vec<u64>,
    t: u64,
    loss: Loss,
    eta: f64,
    reg: Regularization,
}

impl ProximalAdaGrad {
    /// Learning rate `η > 0`, penalty `reg`.
    pub fn new(dim: usize, loss: Loss, eta: f64, reg: Regularization) -> Result<Self, LearnError> {
        check_eta(eta)?;
        Ok(ProximalAdaGrad {
            w: vec![0.0; dim],
            g2: vec![0.0; dim],
            last: vec![0; dim],
            t: 0,
            loss,
            eta,
            reg,
        })
    }

    /// Coordinate `i` now: its stored value shrunk by the `t − last_i` proximal steps it missed.
    #[inline]
    fn current(&self, i: usize) -> f64 {
        let (v, n) = (self.w[i], self.t.saturating_sub(self.last[i]));
        if n == 0 || v == 0.0 || self.g2[i] == 0.0 || self.reg.is_none() {
            return v;
        }
        let s = self.eta / self.g2[i].sqrt();
        let (l1, l2, n) = (self.reg.l1, self.reg.l2, n as f64);
        let m = if l2 == 0.0 {
            v.abs() - n * s * l1
        } else {
            let rn = (-n * (s * l2).ln_1p()).exp();
            rn * v.abs() - (l1 / l2) * (1.0 - rn)
        };
        with_sign_of(v, m)
    }

    /// The update after the prediction `p` of example `(x, y, weight)`.
    fn step(&mut self, x: Row<'_>, y: f64, weight: f64, p: f64) -> Result<(), LearnError> {
        let dl = weight * self.loss.derivative(p, y);
        // Coordinates updated here are current after example t + 1 (`last = t + 1`).
        let result = for_each_entry(x, |i, xi| self.update_coord(i, dl * xi));
        self.t += 1;
        result
    }

    fn update_coord(&mut self, i: usize, g: f64) -> Result<(), LearnError> {
        let w = self.current(i);
        let g2 = self.g2[i] + g * g;
        let (u, s) = if g2 == 0.0 {
            (w, 0.0)
        } else {
            (w - self.eta * g / g2.sqrt(), self.eta / g2.sqrt())
        };
        let w = prox(u, s, self.reg);
        if !(g2.is_finite() && weight_ok(w)) {
            return Err(LearnError::Diverged(format!("AdaGrad coordinate {i}")));
        }
        self.g2[i] = g2;
        self.w[i] = w;
        self.last[i] = self.t + 1;
        Ok(())
    }
}

lazy!(ProximalAdaGrad);

/// `Σ w_i x_i` with `w_i = current(i)` over the stored entries of `x` inside `dim`.
#[inline]
fn dot_current(x: Row<'_>, dim: usize, current: impl Fn(usize) -> f64) -> f64 {
    match x {
        Row::Dense(v) => v
            .iter()
            .take(dim)
            .enumerate()
            .map(|(i, xi)| xi * current(i))
            .sum(),
        Row::Sparse { indices, values } => indices
            .iter()
            .zip(values)
            .filter(|(&i, _)| (i as usize) < dim)
            .map(|(&i, xi)| xi * current(i as usize))
            .sum(),
    }
}

/// Calls `f(i, x_i)` for every stored entry of `x`.
#[inline]
fn for_each_entry(
    x: Row<'_>,
    mut f: impl FnMut(usize, f64) -> Result<(), LearnError>,
) -> Result<(), LearnError> {
    match x {
        Row::Dense(v) => v.iter().enumerate().try_for_each(|(i, &xi)| f(i, xi)),
        Row::Sparse { indices, values } => indices
            .iter()
            .zip(values)
            .try_for_each(|(&i, &xi)| f(i as usize, xi)),
    }
}

/// Online gradient descent with step `η/√t` and the elastic-net penalty, lazy (see the
/// [module](self) documentation).
///
/// ```
/// use sketchlearn::linear::{OnlineLearner, ProximalOgd, Regularization};
/// use sketchlearn::loss::Loss;
/// use sketchlearn::Row;
/// let l2 = Regularization { l1: 0.0, l2: 1.0 };
/// let mut ogd = ProximalOgd::new(1, Loss::Squared, 1.0, l2).unwrap();
/// ogd.learn(Row::Dense(&[1.0]), 2.0, 1.0).unwrap();
/// assert_eq!(ogd.weights()[0], 1.0); // u = 0 − 1·(0 − 2) = 2, then 2/(1 + 1·1)
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ProximalOgd {
    #[serde(with = "crate::model::sparse_vec")]
    w: Vec<f64>,
    /// `(D, C)` at each coordinate's last update.
    at: Vec<(f64, f64)>,
    d_now: f64,
    c_now: f64,
    t: u64,
    loss: Loss,
    eta: f64,
    reg: Regularization,
}

/// `D` beyond which the running products are rescaled.
const RESCALE_AT: f64 = 1e100;

impl ProximalOgd {
    /// Learning rate `η > 0` (step `η/√t`), penalty `reg`.
    pub fn new(dim: usize, loss: Loss, eta: f64, reg: Regularization) -> Result<Self, LearnError> {
        check_eta(eta)?;
        Ok(ProximalOgd {
            w: vec![0.0; dim],
            at: vec![(1.0, 0.0); dim],
            d_now: 1.0,
            c_now: 0.0,
            t: 0,
            loss,
            eta,
            reg,
        })
    }

    #[inline]
    fn current(&self, i: usize) -> f64 {
        let v = self.w[i];
        let (d, c) = self.at[i];
        if v == 0.0 || (d == self.d_now && c == self.c_now) {
            return v;
        }
        let m = (v.abs() * d - (self.c_now - c)) / self.d_now;
        with_sign_of(v, m)
    }

    /// The update after the prediction `p` of example `(x, y, weight)`.
    fn step(&mut self, x: Row<'_>, y: f64, weight: f64, p: f64) -> Result<(), LearnError> {
        self.t += 1;
        let s = self.eta / (self.t as f64).sqrt();
        let step = -s * weight * self.loss.derivative(p, y);
        let mut updated = Vec::new();
        for_each_entry(x, |i, xi| {
            let w = prox(self.current(i) + step * xi, s, self.reg);
            if !weight_ok(w) {
                return Err(LearnError::Diverged(format!(
                    "OGD step, example {}",
                    self.t
                )));
            }
            updated.push((i, w));
            Ok(())
        })?;
        self.advance(s);
        for (i, w) in updated {
            self.w[i] = w;
            self.at[i] = (self.d_now, self.c_now);
        }
        Ok(())
    }

    /// Advances `D` and `C` by the step `s` of example `t` (rescaling when `D` is large).
    fn advance(&mut self, s: f64) {
        self.c_now += s * self.reg.l1 * self.d_now;
        self.d_now *= 1.0 + s * self.reg.l2;
        if self.d_now > RESCALE_AT {
            let f = self.d_now;
            for a in &mut self.at {
                *a = (a.0 / f, a.1 / f);
            }
            self.d_now /= f;
            self.c_now /= f;
        }
    }
}

lazy!(ProximalOgd);
