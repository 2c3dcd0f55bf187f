//! Full-matrix AdaGrad with a Frequent Directions sketch of the gradients: the machinery shared
//! by [`AdaFd`](super::AdaFd) (Wan, Wei & Zhang, IJCAI 2018) and [`Sketchy`](super::Sketchy)
//! (Feinberg et al., NeurIPS 2023), which differ only in the spectral function of the
//! preconditioner ([`FdPreconditioner`]).
//!
//! Full-matrix AdaGrad (Duchi, Hazan & Singer 2011) steps `w ← w − η H_t⁻¹ g_t` with `H_t` a
//! function of `G_t = Σ_{s≤t} g_s g_sᵀ`. Both methods replace `G_t` by `B_tᵀB_t`, the FD sketch
//! of the gradients `g_1..g_t` (rows of `A`; per-row FD with an `m`-row buffer, so at most
//! `m − 1` directions are kept, as in google-research/precondition's `oco/algorithms.py`),
//! and apply a function of its eigendecomposition `B_tᵀB_t = V Λ Vᵀ`:
//!
//! ```text
//! H_t⁻¹ = V diag(f(λ_i)) Vᵀ + o·(I − V Vᵀ)
//! ```
//!
//! with `f` and the coefficient `o` outside the sketch's row space given by the method. The
//! gradient `g_t` is in the sketch before the step (AdaGrad's `G_t` includes `g_t`).
//!
//! **Computing the step in `O(k²d + k³)` without forming `V`.** Let `B` hold the `k` rows of the
//! sketch after the insert (not necessarily orthogonal: before the buffer is full no shrink has
//! rotated them) and `B Bᵀ = U Λ Uᵀ` (a `k × k` eigenproblem). Then `V = Bᵀ U Λ^{-1/2}` for the
//! eigenvalues `λ_i > 0`, so
//!
//! ```text
//! H_t⁻¹ g = o·g + V diag(f(λ) − o) Vᵀ g = o·g + Bᵀ U diag((f(λ_i) − o)/λ_i) Uᵀ (B g),
//! ```
//!
//! two products with `B` (`O(kd)`) around a `k × k` problem. Eigenvalues below `10⁻¹²·λ_1` are
//! rounding (a direction the rows do not span): they count as outside, coefficient `o`.
//! The sketch's shrink is `O(m²d)` per example once the buffer is full: dense time, as in both
//! papers' per-row algorithms.
//!
//! **The largest gradient taken.** A gradient `g = s·x` of squared norm above
//! [`MAX_ROW_SQUARED_NORM`] (`10²⁰⁰`, FD-SON's bound), or NaN, is refused before the sketch
//! changes, with the sketched curvatures' message (`check_scaled_row` in
//! `curvature/sketched.rs`: what is too large, and to divide the large feature columns),
//! because every intermediate of the step is at most quadratic in the rows, as in FD-SON: FD
//! never adds mass, so `‖B‖_F² ≤ Σ_t ‖g_t‖²` (Liberty 2013, Ghashami et al. 2016, Lemma 1),
//! which bounds the Gram matrix `BBᵀ` (formed by the shrink and by the step), its eigenvalues
//! `λ_i`, the escaped mass `ρ_{1:t}` (at most the mass inserted, `Σ_t ‖g_t‖²`) and
//! `|Bg| ≤ ‖B‖_F‖g‖`: all below `t·10²⁰⁰`, finite for `t < 10¹⁰⁰` rows. The step itself is
//! `‖H⁻¹g‖ ≤ max(f, o)·‖g‖`, checked by the weight rule ([`weight_ok`]; a refused step is
//! [`LearnError::Diverged`]). Without the bound, a row of about `10¹⁵⁴` per value made `BBᵀ`
//! infinite and the step failed with the eigensolver's "matrix contains a non-finite value",
//! which named neither the row's size nor a remedy (measured at d = 5, m = 3; the learner
//! restored its sketch).

use super::curvature::{check_scaled_row, MAX_ROW_SQUARED_NORM};
use super::{check_example, weight_ok, LearnError, OnlineLearner};
use crate::linalg::{add_rows_transposed, gram_rows, rows_times_vector, SymEigen};
use crate::loss::Loss;
use crate::sketch::{FdVariant, FrequentDirections, Sketch};
use crate::Row;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::fmt::Debug;
use std::marker::PhantomData;

/// Eigenvalues below this fraction of the largest are treated as zero (see the module docs).
const RELATIVE_RANK_TOLERANCE: f64 = 1e-12;

/// The spectral function of a sketched full-matrix AdaGrad: the preconditioner `H⁻¹` applied to
/// the gradient, as a function of the sketch `BᵀB = V Λ Vᵀ`, the method's `δ` and the
/// escaped mass `ρ_{1:t} = Σ_s ρ_s` (the FD shrinkage so far, [`FrequentDirections::total_shrinkage`]).
pub trait FdPreconditioner: Clone + Debug + Default {
    /// The method's name, for messages.
    const NAME: &'static str;
    /// The coefficient `f(λ)` along an eigenvector of `BᵀB` with eigenvalue `λ > 0`.
    fn inside(lambda: f64, delta: f64, escaped: f64) -> f64;
    /// The coefficient `o` on the part of the gradient outside the sketch's row space.
    fn outside(delta: f64, escaped: f64) -> f64;
}

/// Sketched full-matrix AdaGrad (see the [module](self) docs); `P` is the method.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct FdAdaGrad<P: FdPreconditioner> {
    w: Vec<f64>,
    /// The FD sketch of the gradients (per-row buffer of `m` rows).
    sketch: FrequentDirections,
    loss: Loss,
    eta: f64,
    delta: f64,
    #[serde(skip)]
    work: Workspace,
    #[serde(skip)]
    method: PhantomData<P>,
}

/// Buffers of one step, overwritten before they are read (not part of the state).
#[derive(Default)]
struct Workspace {
    gram: Vec<f64>,
    eig: Option<SymEigen>,
    projected: Vec<f64>,
    rotated: Vec<f64>,
    step: Vec<f64>,
}

impl Clone for Workspace {
    fn clone(&self) -> Self {
        Workspace::default()
    }
}

impl Debug for Workspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Workspace")
    }
}

impl<P: FdPreconditioner> FdAdaGrad<P> {
    /// A learner of dimension `dim` with an FD sketch of `m ≥ 1` rows (it keeps at most
    /// `m − 1` directions), learning rate `η > 0` and `δ` (finite; `> 0` or `≥ 0` as the
    /// method requires — checked by the caller's constructor).
    pub(crate) fn build(
        dim: usize,
        m: usize,
        loss: Loss,
        eta: f64,
        delta: f64,
    ) -> Result<Self, LearnError> {
        if !(eta.is_finite() && eta > 0.0) {
            return Err(LearnError::InvalidParameter(format!(
                "{}: learning rate must be finite and > 0, got {eta}",
                P::NAME
            )));
        }
        Ok(FdAdaGrad {
            w: vec![0.0; dim],
            sketch: FrequentDirections::fd(dim, m, FdVariant::PerRow)?,
            loss,
            eta,
            delta,
            work: Workspace::default(),
            method: PhantomData,
        })
    }

    /// The FD sketch of the gradients seen so far.
    pub fn sketch(&self) -> &FrequentDirections {
        &self.sketch
    }

    /// The method's `δ`.
    pub fn delta(&self) -> f64 {
        self.delta
    }

    /// Checks the sizes of a loaded state (the sketch's buffer against the weights).
    pub(crate) fn check_state(&self) -> Result<(), String> {
        let m = self.sketch.sketch_size();
        if m == 0 {
            return Err("an FD sketch of size 0".into());
        }
        self.sketch.check_state(self.w.len(), m, FdVariant::PerRow)
    }

    /// `H⁻¹ g` for `g = s·x` into `work.step` (see the module docs for the formula).
    fn precondition(&mut self, x: Row<'_>, s: f64) -> Result<(), LearnError> {
        let d = self.w.len();
        let k = self.sketch.filled_rows();
        let escaped = self.sketch.total_shrinkage();
        let outside = P::outside(self.delta, escaped);
        let work = &mut self.work;
        work.step.clear();
        work.step.resize(d, 0.0);
        x.axpy_into(outside * s, &mut work.step);
        if k == 0 {
            return Ok(());
        }
        let b = self.sketch.rows();
        work.gram.resize(k * k, 0.0);
        gram_rows(b, k, d, &mut work.gram);
        let eig = match &mut work.eig {
            Some(e) if e.size() == k => e,
            slot => slot.insert(SymEigen::new(k)),
        };
        eig.compute(&work.gram)
            .map_err(crate::sketch::SketchError::from)?;
        // B g = s·(B x).
        work.projected.resize(k, 0.0);
        match x {
            Row::Dense(v) if v.len() == d => rows_times_vector(b, k, d, v, &mut work.projected),
            _ => {
                for (i, p) in work.projected.iter_mut().enumerate() {
                    *p = x.dot(&b[i * d..(i + 1) * d]);
                }
            }
        }
        let (lambda, u) = (eig.values(), eig.vectors());
        let floor = lambda[0] * RELATIVE_RANK_TOLERANCE;
        // z = diag(c) Uᵀ (B g), then y = U z.
        work.rotated.clear();
        work.rotated.resize(k, 0.0);
        for j in 0..k {
            if !(lambda[j] > floor && lambda[j] > 0.0) {
                continue;
            }
            let c = (P::inside(lambda[j], self.delta, escaped) - outside) / lambda[j];
            let proj: f64 = (0..k).map(|i| u[i * k + j] * work.projected[i]).sum();
            let zj = c * s * proj;
            for (i, r) in work.rotated.iter_mut().enumerate() {
                *r += u[i * k + j] * zj;
            }
        }
        add_rows_transposed(b, k, d, &work.rotated, 1.0, &mut work.step);
        Ok(())
    }
}

impl<P: FdPreconditioner> OnlineLearner for FdAdaGrad<P> {
    fn dim(&self) -> usize {
        self.w.len()
    }

    fn predict(&self, x: Row<'_>) -> f64 {
        x.dot(&self.w)
    }

    /// Predicts `p = wᵀx`, then with `g = weight·ℓ'(p, y)·x`: inserts `g` into the sketch and
    /// steps `w ← w − η H⁻¹ g`. A gradient above [`MAX_ROW_SQUARED_NORM`] is refused first
    /// ([`LearnError::Sketch`], see the [module](self) docs), and a step that would make a
    /// weight non-finite is refused ([`LearnError::Diverged`]): either way the learner is left
    /// as it was.
    fn learn(&mut self, x: Row<'_>, y: f64, weight: f64) -> Result<f64, LearnError> {
        check_example(&x, y, weight, self.w.len())?;
        let p = x.dot(&self.w);
        let s = weight * self.loss.derivative(p, y);
        if s == 0.0 || !s.is_finite() {
            return Ok(p);
        }
        check_scaled_row(x, s, MAX_ROW_SQUARED_NORM)?;
        let before = self.sketch.clone();
        let stepped = self
            .sketch
            .insert_scaled(x, s)
            .map_err(LearnError::from)
            .and_then(|()| self.precondition(x, s));
        let eta = self.eta;
        let ok = stepped.is_ok()
            && self
                .w
                .iter()
                .zip(&self.work.step)
                .all(|(w, h)| weight_ok(w - eta * h));
        if !ok {
            self.sketch = before;
            stepped?;
            return Err(LearnError::Diverged(format!(
                "{} step, example {}",
                P::NAME,
                self.sketch.rows_seen() + 1
            )));
        }
        for (w, h) in self.w.iter_mut().zip(&self.work.step) {
            *w -= eta * h;
        }
        Ok(p)
    }

    fn weights(&self) -> Cow<'_, [f64]> {
        Cow::Borrowed(&self.w)
    }
}

#[cfg(test)]
mod tests {
    use super::super::AdaFd;
    use super::*;

    #[test]
    fn a_state_whose_sketch_does_not_fit_the_weights_is_refused() {
        let mut l = AdaFd::new(4, 2, Loss::Logistic, 0.5, 1.0).unwrap();
        assert!(l.check_state().is_ok());
        l.sketch = FrequentDirections::fd(5, 2, FdVariant::PerRow).unwrap();
        let err = l.check_state().unwrap_err();
        assert!(err.contains("expected 4"), "{err}");
    }
}
