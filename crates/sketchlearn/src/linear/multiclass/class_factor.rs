//! The class-side Kronecker factor of [`SoftmaxSon`](super::SoftmaxSon): `Γ = Σ̄ + λI`, with
//! `Σ̄ = Σ_s ω_s (diag(p_s) − p_s p_sᵀ) / Σ_s ω_s` the importance-weighted running average of the
//! multinomial Hessian's class part and `λ > 0` a ridge (see the softmax module's derivation).

use crate::linalg::{cholesky_in_place, cholesky_solve_in_place};
use crate::linear::LearnError;
use serde::{Deserialize, Serialize};

/// `Γ = Σ̄ + λI` (`K × K`), kept as the weighted sum of `diag(p) − ppᵀ` and the total weight.
///
/// ```
/// use sketchlearn::linear::multiclass::ClassFactor;
/// let mut gamma = ClassFactor::new(2, 0.5).unwrap();
/// gamma.add(&[0.5, 0.5], 1.0);
/// // Σ̄ = [[¼, −¼], [−¼, ¼]], so Γ = [[¾, −¼], [−¼, ¾]]; (1, −1) is an eigenvector of
/// // eigenvalue 1, (1, 1) one of eigenvalue λ = ½.
/// let mut r = vec![1.0, -1.0];
/// gamma.solve(&mut r).unwrap();
/// assert!((r[0] - 1.0).abs() < 1e-15 && (r[1] + 1.0).abs() < 1e-15);
/// let mut r = vec![1.0, 1.0];
/// gamma.solve(&mut r).unwrap();
/// assert!((r[0] - 2.0).abs() < 1e-15);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassFactor {
    k: usize,
    ridge: f64,
    /// `Σ_s ω_s (diag(p_s) − p_s p_sᵀ)`, row-major `K × K`.
    sum: Vec<f64>,
    /// `Σ_s ω_s`.
    weight: f64,
    #[serde(skip)]
    chol: Vec<f64>,
}

impl ClassFactor {
    /// `Γ = λI` before any example; `K ≥ 2`, `λ` finite and `> 0`.
    pub fn new(k: usize, ridge: f64) -> Result<Self, LearnError> {
        if k < 2 {
            return Err(LearnError::InvalidParameter(format!(
                "a multiclass model needs at least 2 classes, got {k}"
            )));
        }
        if !(ridge.is_finite() && ridge > 0.0) {
            return Err(LearnError::InvalidParameter(format!(
                "the class-side ridge must be finite and > 0, got {ridge}"
            )));
        }
        Ok(ClassFactor {
            k,
            ridge,
            sum: vec![0.0; k * k],
            weight: 0.0,
            chol: Vec::new(),
        })
    }

    /// Checks a loaded factor against `k` classes: valid `K` and `λ` (as [`ClassFactor::new`]),
    /// a `K × K` sum, a finite weight `≥ 0`.
    pub(crate) fn check_loaded(&self, k: usize) -> Result<(), LearnError> {
        Self::new(self.k, self.ridge)?;
        if self.k != k
            || self.sum.len() != k * k
            || !(self.weight >= 0.0 && self.weight.is_finite())
        {
            return Err(LearnError::InvalidParameter(format!(
                "class factor of {} classes ({} entries, weight {}) for {k} classes",
                self.k,
                self.sum.len(),
                self.weight
            )));
        }
        Ok(())
    }

    /// The number of classes `K`.
    pub fn classes(&self) -> usize {
        self.k
    }

    /// The ridge `λ`.
    pub fn ridge(&self) -> f64 {
        self.ridge
    }

    /// Adds `ω (diag(p) − ppᵀ)` with importance `ω ≥ 0`.
    pub fn add(&mut self, p: &[f64], weight: f64) {
        let k = self.k;
        for i in 0..k {
            let wi = weight * p[i];
            for j in 0..k {
                self.sum[i * k + j] -= wi * p[j];
            }
            self.sum[i * k + i] += wi;
        }
        self.weight += weight;
    }

    /// `Γ` itself, row-major `K × K` (for tests and inspection).
    pub fn matrix(&self) -> Vec<f64> {
        let k = self.k;
        let scale = if self.weight > 0.0 {
            1.0 / self.weight
        } else {
            0.0
        };
        let mut g: Vec<f64> = self.sum.iter().map(|s| s * scale).collect();
        for i in 0..k {
            g[i * k + i] += self.ridge;
        }
        g
    }

    /// `r ← Γ⁻¹ r` by a Cholesky factorisation (`O(K³)`; `Γ ⪰ λI` is positive definite, a
    /// failure means non-finite input and is reported as [`LearnError::Diverged`]).
    pub fn solve(&mut self, r: &mut [f64]) -> Result<(), LearnError> {
        let k = self.k;
        let mut chol = std::mem::take(&mut self.chol);
        chol.clear();
        chol.extend(self.matrix());
        let ok = cholesky_in_place(&mut chol, k, k).is_ok();
        if ok {
            cholesky_solve_in_place(&chol, k, k, r);
        }
        self.chol = chol;
        if ok {
            Ok(())
        } else {
            Err(LearnError::Diverged(
                "the class-side factor is not positive definite".into(),
            ))
        }
    }
}
