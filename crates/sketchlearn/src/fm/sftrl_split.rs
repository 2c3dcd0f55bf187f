//! SFTRL with an exact first-order part ("split SFTRL"): FTRL on the compact convex FM
//! `z = âᵀΘâ`, `â = [x; 1]` (SFTRL paper §2.2, eq. 4), where only the pairwise block of the
//! gradient sum is sketched, with its own step, by a jointly compressed signed sketch.
//!
//! **Why.** SFTRL (Alg. 4/5, [`Sftrl`](super::Sftrl)) sketches the whole `Σ q_t â_t â_tᵀ`. On
//! one-hot rating data its largest directions are the intercept and the heaviest users' and
//! items' diagonal entries `Σ q` (sums over hundreds of ratings), against single residuals off the
//! diagonal: the `m − 1` rows go to a few biases, every other user and item loses its bias, and the
//! sketch holds almost nothing of the user × item structure (`docs/results/fm_movielens.md`:
//! the pairwise part of SFTRL's test predictions has RMS 0.001). The entries that make a bias
//! model — the constant row/column and the diagonal of `Θ` — are only `2d + 1` numbers.
//!
//! **What.** `Θ` is split into its first-order part (`Θ_00`, `Θ_0j = Θ_j0`, `Θ_jj`) and its
//! pairwise part (`Θ_jk`, `j ≠ k`, both `≥ 1`), and the FTRL regulariser into
//! `½‖Θ_first − Θ₁‖²_F/η + ½‖Θ_pair‖²_F/η_p` (separable, so FTRL decouples):
//!
//! ```text
//! Θ_00 = μ − η Σ q_t,   Θ_0j = −η Σ q_t x_tj,   Θ_jj = −η Σ q_t x_tj²     (exact, O(d) memory)
//! Θ_pair = −η_p · offdiag(M),   M ≈ Σ q_t (x_t x_tᵀ − diag(x_t²))      (sketched, O(m·d))
//! z = Θ_00 + 2 Σ_j Θ_0j x_j + Σ_j Θ_jj x_j² + Σ_{j≠k} (Θ_pair)_jk x_j x_k
//! ```
//!
//! The example's pairwise matrix `q(x xᵀ − diag(x²))` is split into its eigen-directions (for two
//! non-zeros `a, b`: `c/2·[(e_a + e_b)(…)ᵀ − (e_a − e_b)(…)ᵀ]` with `c = q·x_a·x_b`; in general an
//! `nnz × nnz` eigendecomposition, `O(nnz³)`) and inserted as signed rows into a
//! [signed `FactoredFd`](FactoredFd::new_signed), which compresses the whole signed sum jointly
//! (by default by truncation, [`Compression::Truncate`]): the sketch then holds the leading
//! eigen-directions of `±` the residual structure, i.e. for ratings the leading singular vectors of
//! the user × item matrix of residuals, which is what predicts an unseen (user, item) pair. The
//! prediction reads only the off-diagonal part of the sketch (`Σ_k s_k[(b_kᵀx)² − Σ_j b_kj²x_j²]`).
//!
//! With `m − 1 ≥ d` nothing is ever dropped, and with `η_p = η` the model equals full FTRL
//! ([`DenseConvexFm`](super::DenseConvexFm), [`ConvexKind::Ftrl`](super::ConvexKind::Ftrl)) to
//! rounding (tested).
//!
//! **Cost.** Per example: `O(nnz)` for the first-order part; the sketch's columns at the example's
//! coordinates (`O(nnz·(r_d + rows·cols))`, see [`FactoredFd`]) for the prediction; `nnz` signed
//! rows (two for a rating) for the update, each with the factored sketch's amortised insertion
//! cost, plus an `nnz × nnz` eigendecomposition when `nnz > 2`. Rows with many non-zeros are
//! therefore much dearer than for [`Sftrl`](super::Sftrl), which inserts one row per example
//! (a9a, 14 non-zeros per row: over 10× its time).
//!
//! **Guarantees.** Under [`Compression::Shrink`] the sketch obeys the Frequent-Directions bound
//! `‖M − Bᵀdiag(s)B‖₂ ≤ Σ δ` (each compression moves the sum by at most its `δ`; property test in
//! `tests/suite/fm_sftrl_split.rs`), but on rating data the shrink removes the whole pairwise part (its
//! spectrum is flat at the top). Truncation, the default, has no worst-case bound; it is what
//! predicts.

use super::factored::{Compression, FactoredFd};
use crate::linalg::SymEigen;
use crate::linear::{LearnError, OnlineLearner};
use crate::loss::Loss;
use crate::sketch::FdVariant;
use crate::Row;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// The step of the first-order part's FTRL.
///
/// ```
/// use sketchlearn::fm::FirstOrderStep;
/// assert_ne!(FirstOrderStep::Constant, FirstOrderStep::AdaGrad { beta: 1.0 });
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum FirstOrderStep {
    /// `R(Θ) = ½‖Θ − Θ₁‖²/η` (SFTRL eq. 4): every entry `θ = −η Σ g`.
    Constant,
    /// Per-entry AdaGrad dual averaging (Duchi, Hazan and Singer, JMLR 2011, the primal-dual
    /// update with `ψ_t(θ) = (β + √(Σ_s g_s²))·θ²/2`): `θ = −η Σ g / (β + √(Σ g²))`, so that an
    /// entry with many large gradients (a heavy user's bias) takes smaller steps than a rare one.
    AdaGrad {
        /// `β > 0`.
        beta: f64,
    },
}

/// SFTRL with an exact first-order part and a jointly compressed signed sketch of the pairwise
/// part (see the module documentation).
///
/// ```
/// use sketchlearn::fm::{Compression, SftrlSplit};
/// use sketchlearn::linear::OnlineLearner;
/// use sketchlearn::loss::Loss;
/// use sketchlearn::sketch::FdVariant;
/// use sketchlearn::Row;
/// // 2 users (features 0, 1) × 2 items (2, 3); user 0 likes item 2, user 1 likes item 3.
/// let mut fm = SftrlSplit::new(4, 3, FdVariant::Doubling, 0.05, 0.2, Loss::Squared).unwrap();
/// let data = [([0u32, 2], 5.0), ([0, 3], 1.0), ([1, 2], 1.0), ([1, 3], 5.0)];
/// for _ in 0..30 {
///     for (idx, y) in &data {
///         fm.learn(Row::Sparse { indices: idx, values: &[1.0, 1.0] }, *y, 1.0).unwrap();
///     }
/// }
/// // A bias model cannot tell these pairs apart; the pairwise part does.
/// let p02 = fm.predict(Row::Sparse { indices: &[0, 2], values: &[1.0, 1.0] });
/// let p03 = fm.predict(Row::Sparse { indices: &[0, 3], values: &[1.0, 1.0] });
/// assert!(p02 > 4.0 && p03 < 2.0);
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SftrlSplit {
    pub(super) dim: usize,
    pub(super) m: usize,
    pub(super) eta: f64,
    pub(super) eta_pair: f64,
    pub(super) loss: Loss,
    pub(super) intercept: f64,
    pub(super) step: FirstOrderStep,
    /// `Σ q_t` and (AdaGrad) `Σ q_t²`.
    pub(super) sum_q: f64,
    pub(super) sq_q: f64,
    /// `Σ q_t x_tj` and (AdaGrad) `Σ (q_t x_tj)²`.
    pub(super) linear: Vec<f64>,
    pub(super) linear_sq: Vec<f64>,
    /// `Σ q_t x_tj²` and (AdaGrad) `Σ (q_t x_tj²)²`.
    pub(super) diagonal: Vec<f64>,
    pub(super) diagonal_sq: Vec<f64>,
    /// Signed sketch `Bᵀdiag(s)B` of `Σ q_t (x_t x_tᵀ − diag(x_t²))`.
    pub(super) pair: FactoredFd,
    pub(super) examples: u64,
    #[serde(skip)]
    ws: Scratch,
}

/// Buffers overwritten before they are read.
#[derive(Debug, Default)]
struct Scratch {
    idx: Vec<u32>,
    val: Vec<f64>,
    mat: Vec<f64>,
    row: Vec<f64>,
    cols: Vec<f64>,
    eig: Option<SymEigen>,
}

impl Clone for Scratch {
    fn clone(&self) -> Self {
        Scratch::default()
    }
}

impl SftrlSplit {
    /// Split SFTRL over `dim` features, sketch size `m ≥ 1` (buffer per [`FdVariant`], at most
    /// `m − 1` rows kept), first-order step `η > 0`, pairwise step `η_p > 0`, truncation
    /// ([`Compression::Truncate`]; see [`Self::with_compression`]) and the constant first-order
    /// step ([`FirstOrderStep::Constant`]; see [`Self::with_first_order_step`]). The command
    /// line's and [`FmConfig`](super::FmConfig)'s defaults are AdaGrad steps with `β = 5`,
    /// `η = 0.2`, `η_p = 0.5` (square loss; logistic `η = 1`, `η_p = 0.3`), measured in
    /// `docs/results/fm_movielens.md` and `fm_binary.md`.
    pub fn new(
        dim: usize,
        m: usize,
        variant: FdVariant,
        eta: f64,
        eta_pair: f64,
        loss: Loss,
    ) -> Result<Self, LearnError> {
        Self::check_params(m, variant, eta, eta_pair, FirstOrderStep::Constant)?;
        if dim > u32::MAX as usize {
            return Err(LearnError::InvalidParameter(format!(
                "dimension {dim} is too large"
            )));
        }
        Ok(SftrlSplit {
            dim,
            m,
            eta,
            eta_pair,
            loss,
            intercept: 0.0,
            step: FirstOrderStep::Constant,
            sum_q: 0.0,
            sq_q: 0.0,
            linear: vec![0.0; dim],
            linear_sq: Vec::new(),
            diagonal: vec![0.0; dim],
            diagonal_sq: Vec::new(),
            pair: FactoredFd::new_signed(dim, m, variant, Compression::Truncate)?,
            examples: 0,
            ws: Scratch::default(),
        })
    }

    /// Compresses the pairwise sketch by `compression` instead of truncation (only before
    /// learning: the sketch is replaced by an empty one).
    pub fn with_compression(mut self, compression: Compression) -> Result<Self, LearnError> {
        self.pair = FactoredFd::new_signed(self.dim, self.m, self.pair.variant(), compression)?;
        Ok(self)
    }

    /// The first-order part's step (only before learning).
    pub fn with_first_order_step(mut self, step: FirstOrderStep) -> Result<Self, LearnError> {
        check_step(step)?;
        if let FirstOrderStep::AdaGrad { .. } = step {
            self.linear_sq = vec![0.0; self.dim];
            self.diagonal_sq = vec![0.0; self.dim];
        } else {
            self.linear_sq = Vec::new();
            self.diagonal_sq = Vec::new();
        }
        self.step = step;
        Ok(self)
    }

    /// The checks of [`SftrlSplit::new`] and [`SftrlSplit::with_first_order_step`] that do not
    /// depend on the dimension: `η, η_p > 0`, `m` in `1..=`[`MAX_FM_SIZE`](super::MAX_FM_SIZE),
    /// a buffer the variant allows, AdaGrad's `β > 0`.
    pub(crate) fn check_params(
        m: usize,
        variant: FdVariant,
        eta: f64,
        eta_pair: f64,
        step: FirstOrderStep,
    ) -> Result<(), LearnError> {
        super::check_positive("eta", eta)?;
        super::check_positive("pairwise eta", eta_pair)?;
        super::check_size("sketch size m", m)?;
        variant.check(m)?;
        check_step(step)
    }

    /// The first-order part's step.
    pub fn first_order_step(&self) -> FirstOrderStep {
        self.step
    }

    /// The step of an entry whose squared gradients sum to `g2`.
    fn rate(&self, g2: f64) -> f64 {
        match self.step {
            FirstOrderStep::Constant => self.eta,
            FirstOrderStep::AdaGrad { beta } => self.eta / (beta + g2.sqrt()),
        }
    }

    /// `(Θ_0j, Θ_jj)`.
    fn first_order(&self, j: usize) -> (f64, f64) {
        match self.step {
            FirstOrderStep::Constant => (-self.eta * self.linear[j], -self.eta * self.diagonal[j]),
            FirstOrderStep::AdaGrad { .. } => (
                -self.rate(self.linear_sq[j]) * self.linear[j],
                -self.rate(self.diagonal_sq[j]) * self.diagonal[j],
            ),
        }
    }

    /// FTRL centred at `Θ₁ = μ·e eᵀ` (see [`Sftrl::with_intercept`](super::Sftrl::with_intercept)).
    pub fn with_intercept(mut self, mu: f64) -> Result<Self, LearnError> {
        super::check_intercept(mu)?;
        self.intercept = mu;
        Ok(self)
    }

    /// Sketch size `m`.
    pub fn sketch_size(&self) -> usize {
        self.m
    }

    /// First-order step `η`.
    pub fn eta(&self) -> f64 {
        self.eta
    }

    /// Pairwise step `η_p`.
    pub fn eta_pairwise(&self) -> f64 {
        self.eta_pair
    }

    /// Examples learned.
    pub fn examples(&self) -> u64 {
        self.examples
    }

    /// The pairwise sketch.
    pub fn pair_sketch(&self) -> &FactoredFd {
        &self.pair
    }

    /// Bytes held by the model state.
    pub fn state_bytes(&self) -> usize {
        self.pair.state_bytes()
            + 8 * (self.linear.capacity()
                + self.diagonal.capacity()
                + self.linear_sq.capacity()
                + self.diagonal_sq.capacity())
    }

    /// Prepares the sketch for fast predictions (empties its sparse buffer); the model does not
    /// change.
    pub fn compact(&mut self) -> Result<(), LearnError> {
        self.pair.compact().map_err(LearnError::from)
    }

    /// The dense `(d+1) × (d+1)` matrix `Θ` (constant coordinate last; tests and small `d`).
    pub fn theta_dense(&self) -> Vec<f64> {
        let (d, n) = (self.dim, self.dim + 1);
        let mut t = vec![0.0; n * n];
        let rows = self.pair.to_rows();
        for (b, &s) in rows.chunks_exact(d.max(1)).zip(self.pair.signs()) {
            for j in 0..d {
                if b[j] == 0.0 {
                    continue;
                }
                for k in 0..d {
                    if j != k {
                        t[j * n + k] -= self.eta_pair * s * b[j] * b[k];
                    }
                }
            }
        }
        for j in 0..d {
            let (lin, diag) = self.first_order(j);
            t[j * n + j] = diag;
            t[j * n + d] = lin;
            t[d * n + j] = lin;
        }
        t[d * n + d] = self.intercept - self.rate(self.sq_q) * self.sum_q;
        t
    }

    /// The pairwise part `Σ_{j≠k} Θ_jk x_j x_k` of the prediction (features at or beyond `dim()`
    /// ignored).
    pub fn pairwise(&self, x: Row<'_>) -> f64 {
        let (idx, val) = super::in_range(x, self.dim);
        -self.eta_pair * self.pair.pairwise_form(&idx, &val)
    }

    /// `z` for the in-range non-zeros `idx`/`val` of `x`, given the sketch's columns there
    /// ([`FactoredFd::columns`]).
    fn score(&self, idx: &[u32], val: &[f64], cols: &[f64]) -> f64 {
        let mut z = self.intercept - self.rate(self.sq_q) * self.sum_q;
        for (&j, &v) in idx.iter().zip(val) {
            let (lin, diag) = self.first_order(j as usize);
            z += v * (2.0 * lin + v * diag);
        }
        z - self.eta_pair * self.pair.pairwise_from_columns(val, cols)
    }

    /// Inserts `q(x xᵀ − diag(x²))` into the pairwise sketch as signed rows along its
    /// eigen-directions.
    /// `cols` are the sketch's columns at `idx` ([`FactoredFd::columns`]), which give `B·v` of
    /// the two-feature rows without another pass over the sketch.
    fn insert_pairwise(
        &mut self,
        idx: &[u32],
        val: &[f64],
        q: f64,
        cols: &[f64],
    ) -> Result<(), LearnError> {
        let k = idx.len();
        if k < 2 || q == 0.0 {
            return Ok(());
        }
        if k == 2 {
            // x_a x_b (e_a e_bᵀ + e_b e_aᵀ) = (x_a x_b / 2)[(e_a + e_b)(…)ᵀ − (e_a − e_b)(…)ᵀ].
            let c = q * val[0] * val[1];
            if c == 0.0 {
                return Ok(());
            }
            let (scale, sign) = ((c.abs() / 2.0).sqrt(), c.signum());
            let rows = cols.len() / 2;
            let (ca, cb) = cols.split_at(rows);
            let mut p = std::mem::take(&mut self.ws.row);
            p.clear();
            p.extend(ca.iter().zip(cb).map(|(a, b)| a + b));
            let shrinks = self.pair.shrinks();
            let first = self
                .pair
                .insert_signed_row_with_product(idx, &[1.0, 1.0], scale, sign, &p);
            let second = first.and_then(|()| {
                if self.pair.shrinks() == shrinks && self.pair.filled_rows() == rows + 1 {
                    // B gained the row scale·(e_a + e_b), orthogonal to e_a − e_b.
                    p.clear();
                    p.extend(ca.iter().zip(cb).map(|(a, b)| a - b));
                    p.push(0.0);
                    self.pair
                        .insert_signed_row_with_product(idx, &[1.0, -1.0], scale, -sign, &p)
                } else {
                    self.pair.insert_signed_row(idx, &[1.0, -1.0], scale, -sign)
                }
            });
            self.ws.row = p;
            return second.map_err(LearnError::from);
        }
        let mat = &mut self.ws.mat;
        mat.clear();
        for a in 0..k {
            for b in 0..k {
                mat.push(if a == b { 0.0 } else { val[a] * val[b] });
            }
        }
        let eig = match &mut self.ws.eig {
            Some(e) if e.size() == k => e,
            slot => slot.insert(SymEigen::new(k)),
        };
        eig.compute(mat)
            .map_err(|e| LearnError::Diverged(e.to_string()))?;
        let (lam, u) = (eig.values(), eig.vectors());
        let tol = lam.iter().fold(0.0f64, |a, x| a.max(x.abs())) * (k as f64) * 4.0 * f64::EPSILON;
        let mut row = std::mem::take(&mut self.ws.row);
        let mut result = Ok(());
        for i in 0..k {
            let c = q * lam[i];
            if lam[i].abs() <= tol || c == 0.0 {
                continue;
            }
            row.clear();
            row.extend((0..k).map(|a| u[a * k + i]));
            if let Err(e) = self
                .pair
                .insert_signed_row(idx, &row, c.abs().sqrt(), c.signum())
            {
                result = Err(e.into());
                break;
            }
        }
        self.ws.row = row;
        result
    }
}

impl OnlineLearner for SftrlSplit {
    fn dim(&self) -> usize {
        self.dim
    }

    /// `z = Θ_00 + 2Σ Θ_0j x_j + Σ Θ_jj x_j² + Σ_{j≠k} (Θ_pair)_jk x_j x_k` (features at or beyond
    /// `dim()` are ignored).
    fn predict(&self, x: Row<'_>) -> f64 {
        let (idx, val) = super::in_range(x, self.dim);
        let mut cols = Vec::new();
        self.pair.columns(&idx, &mut cols);
        self.score(&idx, &val, &cols)
    }

    fn learn(&mut self, x: Row<'_>, y: f64, weight: f64) -> Result<f64, LearnError> {
        let ws = &mut self.ws;
        let (mut idx, mut val) = super::step_row(x, y, weight, self.dim, &mut ws.idx, &mut ws.val)?;
        idx.pop();
        val.pop();
        let mut cols = std::mem::take(&mut self.ws.cols);
        self.pair.columns(&idx, &mut cols);
        let z = self.score(&idx, &val, &cols);
        let q = weight * self.loss.derivative(z, y);
        // `|q|·‖x‖⁴` is the scale of the sketched rows' Gram entries (`check_step` refuses a
        // step past it, the model left unchanged).
        let norm_sq: f64 = val.iter().map(|v| v * v).sum();
        let result = super::check_step(z, q, q.abs() * norm_sq * norm_sq).and_then(|()| {
            self.insert_pairwise(&idx, &val, q, &cols).map(|()| {
                self.sum_q += q;
                for (&j, &v) in idx.iter().zip(&val) {
                    self.linear[j as usize] += q * v;
                    self.diagonal[j as usize] += q * v * v;
                }
                if let FirstOrderStep::AdaGrad { .. } = self.step {
                    self.sq_q += q * q;
                    for (&j, &v) in idx.iter().zip(&val) {
                        self.linear_sq[j as usize] += (q * v) * (q * v);
                        self.diagonal_sq[j as usize] += (q * v * v) * (q * v * v);
                    }
                }
                self.examples += 1;
                z
            })
        });
        self.ws.idx = idx;
        self.ws.val = val;
        self.ws.cols = cols;
        result
    }

    /// The linear part `w = 2Θ[0..d, d]` (`O(d)`).
    fn weights(&self) -> Cow<'_, [f64]> {
        Cow::Owned((0..self.dim).map(|j| 2.0 * self.first_order(j).0).collect())
    }
}

/// AdaGrad's `β` must be finite and positive.
fn check_step(step: FirstOrderStep) -> Result<(), LearnError> {
    match step {
        FirstOrderStep::AdaGrad { beta } => super::check_positive("AdaGrad beta", beta),
        FirstOrderStep::Constant => Ok(()),
    }
}
