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
//! weights up to rounding (`tests/suite/regularization.rs`: within 1e-9). With `λ₁ = λ₂ = 0` every
//! operation is the unpenalised learner's, bit for bit.
//!
//! # Saved in proportion to the features touched (issue 26)
//!
//! Both keep their per-feature state in [`Touched`] arrays, so a save and the load check read
//! the touched features only, not all `d` (a `-b 27` model). A coordinate's `(D, C)` matters
//! only while its weight is non-zero (a zero weight stays zero until it is next updated, which
//! sets its `(D, C)`), so OGD's are kept — and written — only there: untouched features hold
//! zeros (allocated lazily, no memory) instead of `(1, 0)` — see [`ProximalOgd`]'s layout.

use super::validate::largest;
use super::{check_example, weight_ok, LearnError, OnlineLearner, Regularization};
use crate::loss::Loss;
use crate::model::touched::Touched;
use crate::Row;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

mod ogd_state;
use ogd_state::OgdState;

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

/// [`Lazy`] and [`OnlineLearner`] for a learner with the field `reg` and methods `stored()`
/// (stored weights), `current(i)` (coordinate `i` now) and `step(x, y, weight, p)` (the update
/// after the prediction `p`): the example check, the lazy prediction and weights are the same
/// for both.
macro_rules! lazy {
    ($t:ty) => {
        impl Lazy for $t {
            fn stored(&self) -> &[f64] {
                <$t>::stored(self)
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
                <$t>::stored(self).len()
            }

            fn predict(&self, x: Row<'_>) -> f64 {
                self.lazy_predict(x)
            }

            fn learn(&mut self, x: Row<'_>, y: f64, weight: f64) -> Result<f64, LearnError> {
                check_example(&x, y, weight, self.dim())?;
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
    /// Per feature: the stored weight `w_i` and `G_i` (two sparse arrays in the file).
    coords: Touched<2>,
    /// The example count at each coordinate's last update (a sparse array in the file).
    last: Touched<1, u64>,
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
            coords: Touched::new(dim),
            last: Touched::new(dim),
            t: 0,
            loss,
            eta,
            reg,
        })
    }

    fn stored(&self) -> &[f64] {
        self.coords.array(0)
    }

    /// `max_i |w_i|` of the current weights (`+∞` if one is NaN), from the touched features.
    pub(crate) fn largest_weight(&self) -> f64 {
        let touched = self.coords.features().into_iter();
        largest(touched.map(|i| self.current(i)))
    }

    /// Coordinate `i` now: its stored value shrunk by the `t − last_i` proximal steps it missed.
    #[inline]
    fn current(&self, i: usize) -> f64 {
        let [v, g2] = self.coords.at(i);
        let [last] = self.last.at(i);
        let n = self.t.saturating_sub(last);
        if n == 0 || v == 0.0 || g2 == 0.0 || self.reg.is_none() {
            return v;
        }
        let s = self.eta / g2.sqrt();
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
        let g2 = self.coords.at(i)[1] + g * g;
        let (u, s) = if g2 == 0.0 {
            (w, 0.0)
        } else {
            (w - self.eta * g / g2.sqrt(), self.eta / g2.sqrt())
        };
        let w = prox(u, s, self.reg);
        if !(g2.is_finite() && weight_ok(w)) {
            return Err(LearnError::Diverged(format!("AdaGrad coordinate {i}")));
        }
        self.coords.set(i, [w, g2]);
        self.last.set(i, [self.t + 1]);
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
            .filter(|&(&i, _)| (i as usize) < dim)
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
    /// Per feature: the stored weight, and `(D, C)` at its last update (see [`OgdState`] for
    /// how they are written).
    state: OgdState,
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
            state: OgdState(Touched::new(dim)),
            d_now: 1.0,
            c_now: 0.0,
            t: 0,
            loss,
            eta,
            reg,
        })
    }

    fn stored(&self) -> &[f64] {
        self.state.0.array(0)
    }

    /// `max_i |w_i|` of the current weights (`+∞` if one is NaN), from the touched features.
    pub(crate) fn largest_weight(&self) -> f64 {
        let touched = self.state.0.features().into_iter();
        largest(touched.map(|i| self.current(i)))
    }

    #[inline]
    fn current(&self, i: usize) -> f64 {
        let [v, d, c] = self.state.0.at(i);
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
            self.state.0.set(i, [w, self.d_now, self.c_now]);
        }
        Ok(())
    }

    /// Advances `D` and `C` by the step `s` of example `t` (rescaling when `D` is large: the
    /// touched features' `(D, C)`, the others being zero).
    fn advance(&mut self, s: f64) {
        self.c_now += s * self.reg.l1 * self.d_now;
        self.d_now *= 1.0 + s * self.reg.l2;
        if self.d_now > RESCALE_AT {
            let f = self.d_now;
            for i in self.state.0.features() {
                let [w, d, c] = self.state.0.at(i);
                self.state.0.set(i, [w, d / f, c / f]);
            }
            self.d_now /= f;
            self.c_now /= f;
        }
    }
}

lazy!(ProximalOgd);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linear::first_order::tests::learn_a_few;

    const PENALTY: Regularization = Regularization { l1: 0.05, l2: 0.1 };

    /// ProximalAdaGrad's fields as they were written before [`Touched`]: the file's bytes.
    #[derive(Serialize)]
    struct PlainAdaGrad {
        #[serde(with = "crate::model::sparse_vec")]
        w: Vec<f64>,
        #[serde(with = "crate::model::sparse_vec")]
        g2: Vec<f64>,
        #[serde(with = "crate::model::sparse_vec")]
        last: Vec<u64>,
        t: u64,
        loss: Loss,
        eta: f64,
        reg: Regularization,
    }

    /// The same bytes as the plain arrays; a NaN (or junk count) in every untouched entry
    /// changes neither the bytes nor the load check's bound; loaded back, the same bytes.
    #[test]
    fn adagrad_writes_the_same_bytes_and_reads_only_the_touched_features() {
        let mut l = ProximalAdaGrad::new(4096, Loss::Logistic, 0.5, PENALTY).unwrap();
        learn_a_few(&mut l);
        let plain = PlainAdaGrad {
            w: l.coords.array(0).to_vec(),
            g2: l.coords.array(1).to_vec(),
            last: l.last.array(0).to_vec(),
            t: l.t,
            loss: l.loss,
            eta: l.eta,
            reg: l.reg,
        };
        let bytes = postcard::to_allocvec(&l).unwrap();
        assert_eq!(bytes, postcard::to_allocvec(&plain).unwrap());
        let bound = l.largest_weight();
        assert_eq!(bound, largest(l.weights().iter().copied()));
        assert!(bound > 0.0);
        let back: ProximalAdaGrad = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(postcard::to_allocvec(&back).unwrap(), bytes);
        l.coords.poison_untouched();
        l.last.fill_untouched(u64::MAX);
        assert_eq!(postcard::to_allocvec(&l).unwrap(), bytes);
        assert_eq!(l.largest_weight(), bound);
    }

    /// ProximalOgd's fields as written by model format 8 and before: a pair for each feature.
    #[derive(Serialize)]
    struct PlainOgd {
        #[serde(with = "crate::model::sparse_vec")]
        w: Vec<f64>,
        at: Vec<(f64, f64)>,
        d_now: f64,
        c_now: f64,
        t: u64,
        loss: Loss,
        eta: f64,
        reg: Regularization,
    }

    /// A learner with a strong penalty and a fast-growing `D`, so that weights return to zero
    /// and the running products are rescaled.
    fn trained_ogd() -> ProximalOgd {
        let r = Regularization { l1: 1.0, l2: 40.0 };
        let mut l = ProximalOgd::new(4096, Loss::Logistic, 2.0, r).unwrap();
        for _ in 0..40 {
            learn_a_few(&mut l);
        }
        l
    }

    /// The pairs are written for the stored weights only (the file grows with the features
    /// touched); a file of the old layout (a pair per feature, `(1, 0)` never updated) of
    /// format 8 loads to a learner that continues with the same bits, and is refused from
    /// format 9 (which marks the new layout); untouched entries are never read; a pair count
    /// that is neither is refused.
    #[test]
    fn ogd_writes_pairs_of_stored_weights_and_reads_the_old_layout() {
        let mut l = trained_ogd();
        assert!(l.d_now < RESCALE_AT && l.c_now > 0.0);
        let w = l.stored().to_vec();
        let stored: Vec<usize> = (0..w.len()).filter(|&i| w[i] != 0.0).collect();
        assert!(
            !stored.is_empty() && stored.len() < l.state.0.features().len(),
            "{stored:?} {:?} {}",
            l.state.0.features(),
            l.d_now
        );
        let bytes = postcard::to_allocvec(&l).unwrap();
        let at = |every: bool| -> Vec<(f64, f64)> {
            (0..w.len())
                .filter(|&i| every || w[i] != 0.0)
                .map(|i| match l.state.0.at(i) {
                    [0.0, ..] => (1.0, 0.0),
                    [_, d, c] => (d, c),
                })
                .collect()
        };
        let plain = |every| PlainOgd {
            w: w.clone(),
            at: at(every),
            d_now: l.d_now,
            c_now: l.c_now,
            t: l.t,
            loss: l.loss,
            eta: l.eta,
            reg: l.reg,
        };
        assert_eq!(bytes, postcard::to_allocvec(&plain(false)).unwrap());
        let old = postcard::to_allocvec(&plain(true)).unwrap();
        assert!(old.len() > bytes.len() + 16 * 4000);
        let bound = l.largest_weight();
        assert_eq!(bound, largest(l.weights().iter().copied()));
        assert!(postcard::from_bytes::<ProximalOgd>(&old).is_err());
        let _v8 = crate::model::sparse_vec::VersionScope::new(8);
        for file in [&bytes, &old] {
            let mut back: ProximalOgd = postcard::from_bytes(file).unwrap();
            assert_eq!(postcard::to_allocvec(&back).unwrap(), bytes);
            let mut same = l.clone();
            learn_a_few(&mut back);
            learn_a_few(&mut same);
            assert_eq!(
                postcard::to_allocvec(&back).unwrap(),
                postcard::to_allocvec(&same).unwrap()
            );
        }
        let mut wrong = plain(false);
        wrong.at.pop();
        let e = postcard::from_bytes::<ProximalOgd>(&postcard::to_allocvec(&wrong).unwrap());
        assert!(e.is_err());
        l.state.0.poison_untouched();
        assert_eq!(postcard::to_allocvec(&l).unwrap(), bytes);
        assert_eq!(l.largest_weight(), bound);
    }
}
