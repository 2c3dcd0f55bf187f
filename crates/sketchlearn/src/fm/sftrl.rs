//! Sketched Follow-The-Regularized-Leader (SFTRL paper, Luo et al. KDD 2018, Alg. 4 per-row and
//! Alg. 5 doubling space) for the compact convex factorization machine `z = âᵀΘâ`, `â = [x; 1]`
//! (§2.2).
//!
//! FTRL with `R(Θ) = ½‖Θ‖²_F` (eq. 4) has `Θ_{t+1} = −η Σ_{s≤t} ∇f_s(Θ_s)` with the rank-one
//! gradients `∇f_s = q_s â_s â_sᵀ`, `q_s = φ'_s(z_s)` (eq. 2). SFTRL replaces the sum by its GFD
//! sketch `B₊ᵀB₊ − B₋ᵀB₋` (eq. 8–9), so (DESIGN.md §4 item 12)
//!
//! ```text
//! z_t = −η · âᵀ(B₊ᵀB₊ − B₋ᵀB₋)â = −η · (‖B₊â‖² − ‖B₋â‖²),
//! ```
//!
//! and the update appends `√q_t·â` to `B₊` when `q_t > 0`, `√(−q_t)·â` to `B₋` when `q_t < 0`
//! and does nothing when `q_t = 0` (item 13; the doubling variant keeps the appended row in its
//! "else" branch). Each side keeps at most `m − 1` rows. With `m ≥ d + 2` nothing is ever lost
//! and SFTRL equals full FTRL ([`DenseConvexFm`](super::DenseConvexFm) with
//! [`ConvexKind::Ftrl`](super::ConvexKind::Ftrl)) to rounding.
//!
//! Two interchangeable sketch backends compute the same `B₊ᵀB₊ − B₋ᵀB₋`:
//! [`SftrlBackend::Factored`] ([`FactoredGfd`], sparse-aware, the default) and
//! [`SftrlBackend::Reference`] (the crate's dense
//! [`GeneralizedFrequentDirections`]).

use super::factored::FactoredGfd;
use crate::linear::{LearnError, OnlineLearner};
use crate::loss::Loss;
use crate::sketch::{FdVariant, GeneralizedFrequentDirections};
use crate::Row;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// Which GFD implementation an [`Sftrl`] learner uses (both give the same predictions to
/// rounding).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SftrlBackend {
    /// [`FactoredGfd`]: `B = C·Q` with the inserted sparse rows kept sparse; per example
    /// `O(m·(nnz + L))` plus amortised `O(m²·d/L)` with `L ≈ √d`.
    Factored,
    /// The crate's [`GeneralizedFrequentDirections`] (dense `m × (d+1)` buffers, `O(m²·d)` per
    /// shrink).
    Reference,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[allow(clippy::large_enum_variant)]
pub(super) enum Gfd {
    Factored(FactoredGfd),
    Reference(GeneralizedFrequentDirections),
}

/// SFTRL (Alg. 4 with [`FdVariant::PerRow`], Alg. 5 with [`FdVariant::Doubling`]).
///
/// ```
/// use sketchlearn::fm::{Sftrl, SftrlBackend};
/// use sketchlearn::linear::OnlineLearner;
/// use sketchlearn::loss::Loss;
/// use sketchlearn::sketch::FdVariant;
/// use sketchlearn::Row;
/// // d = 4 one-hot features (2 users, 2 items), sketch size m = 3, η = 0.05.
/// let mut fm = Sftrl::new(4, 3, FdVariant::Doubling, 0.05, Loss::Squared, SftrlBackend::Factored)
///     .unwrap();
/// let data = [([0u32, 2], 5.0), ([0, 3], 4.0), ([1, 2], 2.0), ([1, 3], 1.0)];
/// for _ in 0..50 {
///     for (idx, y) in &data {
///         fm.learn(Row::Sparse { indices: idx, values: &[1.0, 1.0] }, *y, 1.0).unwrap();
///     }
/// }
/// // User 0 rates higher than user 1.
/// let p0 = fm.predict(Row::Sparse { indices: &[0, 2], values: &[1.0, 1.0] });
/// let p1 = fm.predict(Row::Sparse { indices: &[1, 2], values: &[1.0, 1.0] });
/// assert!(p0 > p1);
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Sftrl {
    pub(super) dim: usize,
    pub(super) m: usize,
    pub(super) eta: f64,
    pub(super) loss: Loss,
    pub(super) variant: FdVariant,
    pub(super) backend: SftrlBackend,
    pub(super) gfd: Gfd,
    /// `μ` of the FTRL centre `Θ₁ = μ·e e ᵀ` (`e` the constant coordinate): `z = μ − η·(…)`.
    pub(super) intercept: f64,
    pub(super) examples: u64,
    #[serde(skip)]
    pub(super) idx: Vec<u32>,
    #[serde(skip)]
    pub(super) val: Vec<f64>,
}

impl Sftrl {
    /// SFTRL over `dim` features (the sketch has dimension `dim + 1`), sketch size `m ≥ 1`,
    /// step `η > 0`.
    pub fn new(
        dim: usize,
        m: usize,
        variant: FdVariant,
        eta: f64,
        loss: Loss,
        backend: SftrlBackend,
    ) -> Result<Self, LearnError> {
        Self::check_params(m, variant, eta)?;
        let n = dim
            .checked_add(1)
            .filter(|&n| n <= u32::MAX as usize)
            .ok_or_else(|| LearnError::InvalidParameter(format!("dimension {dim} is too large")))?;
        let gfd = match backend {
            SftrlBackend::Factored => Gfd::Factored(FactoredGfd::new(n, m, variant)?),
            SftrlBackend::Reference => {
                Gfd::Reference(GeneralizedFrequentDirections::new(n, m, variant)?)
            }
        };
        Ok(Sftrl {
            dim,
            m,
            eta,
            loss,
            variant,
            backend,
            gfd,
            intercept: 0.0,
            examples: 0,
            idx: Vec::new(),
            val: Vec::new(),
        })
    }

    /// The checks of [`Sftrl::new`] that do not depend on the dimension: `η > 0`, `m` in
    /// `1..=`[`MAX_FM_SIZE`](super::MAX_FM_SIZE), a buffer the variant allows.
    pub(crate) fn check_params(m: usize, variant: FdVariant, eta: f64) -> Result<(), LearnError> {
        super::check_positive("eta", eta)?;
        super::check_size("sketch size m", m)?;
        variant.check(m)?;
        Ok(())
    }

    /// FTRL centred at `Θ₁ = μ·e eᵀ` instead of 0 (`e` the constant coordinate of `â`), i.e.
    /// `R(Θ) = ½‖Θ − Θ₁‖²_F` in eq. 4: every prediction starts at the intercept `μ` (River's
    /// `intercept` of its FM). `μ = 0` (the default) is the paper's Alg. 4/5.
    pub fn with_intercept(mut self, mu: f64) -> Result<Self, LearnError> {
        super::check_intercept(mu)?;
        self.intercept = mu;
        Ok(self)
    }

    /// Sketch size `m`.
    pub fn sketch_size(&self) -> usize {
        self.m
    }

    /// `η`.
    pub fn eta(&self) -> f64 {
        self.eta
    }

    /// Per-row (Alg. 4) or doubling (Alg. 5).
    pub fn variant(&self) -> FdVariant {
        self.variant
    }

    /// The sketch backend.
    pub fn backend(&self) -> SftrlBackend {
        self.backend
    }

    /// Examples learned.
    pub fn examples(&self) -> u64 {
        self.examples
    }

    /// The spectral-error bound of the GFD sketch of `Σ q_t â_t â_tᵀ` (sum of both sides' total
    /// shrinkage, at most SFTRL Theorem 2's right-hand side).
    pub fn sketch_error_bound(&self) -> f64 {
        match &self.gfd {
            Gfd::Factored(g) => g.error_bound(),
            Gfd::Reference(g) => g.error_bound(),
        }
    }

    /// Rows currently held by `(B₊, B₋)`.
    pub fn sketch_rows(&self) -> (usize, usize) {
        match &self.gfd {
            Gfd::Factored(g) => (g.positive().filled_rows(), g.negative().filled_rows()),
            Gfd::Reference(g) => (g.positive().filled_rows(), g.negative().filled_rows()),
        }
    }

    /// Bytes held by the model state (sketch buffers).
    pub fn state_bytes(&self) -> usize {
        match &self.gfd {
            Gfd::Factored(g) => g.state_bytes(),
            Gfd::Reference(g) => {
                let side =
                    |f: &crate::sketch::FrequentDirections| 8 * f.capacity() * (self.dim + 1);
                side(g.positive()) + side(g.negative())
            }
        }
    }

    /// Prepares the sketch for fast predictions (the factored backend empties its sparse
    /// buffers); the model does not change.
    pub fn compact(&mut self) -> Result<(), LearnError> {
        if let Gfd::Factored(g) = &mut self.gfd {
            g.compact()?;
        }
        Ok(())
    }

    /// The dense `(d+1) × (d+1)` matrix `Θ = −η(B₊ᵀB₊ − B₋ᵀB₋)` (tests and small `d` only).
    pub fn theta_dense(&self) -> Vec<f64> {
        let mut g = match &self.gfd {
            Gfd::Factored(g) => g.to_dense(),
            Gfd::Reference(g) => g.to_dense(),
        };
        g.iter_mut().for_each(|x| *x *= -self.eta);
        let n = self.dim + 1;
        g[n * n - 1] += self.intercept;
        g
    }

    /// The pairwise part `−η·Σ_{j≠k} (B₊ᵀB₊ − B₋ᵀB₋)_jk x_j x_k` of the prediction (see
    /// [`AnyFm::pairwise`](super::AnyFm::pairwise)); `nnz + 1` quadratic forms of the sketch.
    pub fn pairwise(&self, x: Row<'_>) -> f64 {
        -self.eta * super::pairwise_from_quad(x, self.dim, |i, v| self.quad(i, v))
    }

    /// `âᵀ(B₊ᵀB₊ − B₋ᵀB₋)â` for `â = [x; 1]` given as sparse indices/values (last index `d`).
    fn quad(&self, idx: &[u32], val: &[f64]) -> f64 {
        match &self.gfd {
            Gfd::Factored(g) => g.quadratic_form(idx, val),
            Gfd::Reference(g) => {
                let n = self.dim + 1;
                let side = |f: &crate::sketch::FrequentDirections| -> f64 {
                    f.rows()
                        .chunks_exact(n)
                        .map(|r| {
                            let s: f64 =
                                idx.iter().zip(val).map(|(&j, &v)| r[j as usize] * v).sum();
                            s * s
                        })
                        .sum()
                };
                side(g.positive()) - side(g.negative())
            }
        }
    }
}

impl OnlineLearner for Sftrl {
    fn dim(&self) -> usize {
        self.dim
    }

    /// `z = μ − η·âᵀ(B₊ᵀB₊ − B₋ᵀB₋)â` (`μ = 0` unless [`Sftrl::with_intercept`]; features at or beyond `dim()` are ignored).
    fn predict(&self, x: Row<'_>) -> f64 {
        let (idx, val) = super::augmented(x, self.dim);
        self.intercept - self.eta * self.quad(&idx, &val)
    }

    fn learn(&mut self, x: Row<'_>, y: f64, weight: f64) -> Result<f64, LearnError> {
        let (idx, val) = super::step_row(x, y, weight, self.dim, &mut self.idx, &mut self.val)?;
        let z = self.intercept - self.eta * self.quad(&idx, &val);
        let q = weight * self.loss.derivative(z, y);
        // The row √|q|·â must stay far from overflow (its squared norm enters Gram matrices):
        // a larger one is refused by `check_step`, the model left unchanged.
        let row_sq = q.abs() * val.iter().map(|v| v * v).sum::<f64>();
        let result = super::check_step(z, q, row_sq).and_then(|()| {
            // Alg. 4/5 lines 7–17 (item 13): the sign of q_t picks the side.
            let r = match &mut self.gfd {
                Gfd::Factored(g) => g.insert_signed(&idx, &val, q),
                Gfd::Reference(g) => g.insert_signed(
                    Row::Sparse {
                        indices: &idx,
                        values: &val,
                    },
                    q,
                ),
            };
            r.map(|()| z).map_err(LearnError::from)
        });
        self.idx = idx;
        self.val = val;
        if result.is_ok() {
            self.examples += 1;
        }
        result
    }

    /// The linear part `w = 2Θ[0..d, d]` of the compact model (`O(m·d)`).
    fn weights(&self) -> Cow<'_, [f64]> {
        let n = self.dim + 1;
        let mut w = vec![0.0; self.dim];
        match &self.gfd {
            Gfd::Reference(g) => {
                for (f, sign) in [(g.positive(), 1.0), (g.negative(), -1.0)] {
                    for r in f.rows().chunks_exact(n) {
                        for j in 0..self.dim {
                            w[j] += sign * r[j] * r[self.dim];
                        }
                    }
                }
            }
            Gfd::Factored(g) => {
                for (f, sign) in [(g.positive(), 1.0), (g.negative(), -1.0)] {
                    let rows = f.to_rows();
                    for r in rows.chunks_exact(n) {
                        for j in 0..self.dim {
                            w[j] += sign * r[j] * r[self.dim];
                        }
                    }
                }
            }
        }
        w.iter_mut().for_each(|x| *x *= -2.0 * self.eta);
        Cow::Owned(w)
    }
}
