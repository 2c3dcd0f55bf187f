//! Full-matrix baselines for the compact convex FM `z = âᵀΘâ` (SFTRL paper §2.2–2.3, §5.1):
//! FTRL (Alg. 1 with `R = ½‖Θ‖²_F`, eq. 4) and online gradient descent on the dense
//! `(d+1) × (d+1)` matrix `Θ`, optionally constrained to the nuclear-norm ball
//! `K = {Θ symmetric : ‖Θ‖_* ≤ τ}` of compact convexified FM (Lin et al., WWW 2018).
//!
//! * **FTRL**: `Θ_{t+1} = argmin_{Θ∈K} ⟨Σ_{s≤t} ∇f_s, Θ⟩ + ‖Θ‖²_F/(2η) = Π_K(−η Σ_{s≤t} ∇f_s)`.
//!   Unconstrained (`K = ℝ^{(d+1)²}`) this is `Θ_{t+1} = Θ_t − η∇f_t`: exactly OGD with a
//!   constant step (DESIGN.md §4 item 14), and what SFTRL sketches.
//! * **OGD**: `Θ_{t+1} = Π_K(Θ_t − η_t ∇f_t)` with `η_t = η/√t` (or constant).
//!
//! The gradients `∇f_t = q_t â_t â_tᵀ` (eq. 2) touch only `nnz(â)²` entries, so an unconstrained
//! step and a prediction cost `O(nnz²)`; the state is `O(d²)` memory. The Euclidean projection
//! onto `K` is an eigendecomposition (`O(d³)`) followed by the projection of the eigenvalues onto
//! the ℓ₁ ball of radius `τ` ([`project_l1_ball`]); it is done every `every`-th step
//! ([`NuclearBall::every`], 1 = exact projected algorithm), so that moderate `d` stays tractable.

use super::quadratic_step::{self, quadratic_fm_fields, quadratic_fm_online, QuadraticFm};
use crate::linalg::{matmul_into, SymEigen};
use crate::linear::{LearnError, OnlineLearner, StepSchedule};
use crate::loss::Loss;
use crate::Row;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// Which full-matrix algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ConvexKind {
    /// FTRL with `R = ½‖Θ‖²_F` (SFTRL Alg. 1).
    Ftrl,
    /// Online gradient descent with the given step schedule.
    Ogd(StepSchedule),
}

/// The nuclear-norm ball constraint `‖Θ‖_* ≤ radius`, enforced every `every` steps.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct NuclearBall {
    /// `τ > 0`.
    pub radius: f64,
    /// Project after every `every`-th update (`≥ 1`; 1 is the exact projected algorithm).
    pub every: u64,
}

/// FTRL or OGD on the dense `(d+1) × (d+1)` compact FM matrix.
///
/// ```
/// use sketchlearn::fm::{ConvexKind, DenseConvexFm};
/// use sketchlearn::linear::{OnlineLearner, StepSchedule};
/// use sketchlearn::loss::Loss;
/// use sketchlearn::Row;
/// let mut ftrl = DenseConvexFm::new(3, ConvexKind::Ftrl, 0.1, Loss::Squared, None, 1 << 12).unwrap();
/// let x = Row::Sparse { indices: &[0, 2], values: &[1.0, 1.0] };
/// assert_eq!(ftrl.learn(x, 4.0, 1.0).unwrap(), 0.0);
/// // One step: Θ = −η·q·ââᵀ with q = 0 − 4, and âᵀââᵀâ = 9 for â = [1, 0, 1, 1].
/// assert!((ftrl.predict(x) - 0.1 * 4.0 * 9.0).abs() < 1e-12);
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DenseConvexFm {
    pub(super) dim: usize,
    pub(super) kind: ConvexKind,
    pub(super) eta: f64,
    pub(super) loss: Loss,
    pub(super) ball: Option<NuclearBall>,
    /// `Θ`, row-major `(d+1) × (d+1)`, symmetric.
    pub(super) theta: Vec<f64>,
    /// FTRL with a constraint: `Σ ∇f_s` (the projection is applied to `−η` times it).
    pub(super) grad_sum: Option<Vec<f64>>,
    /// `μ` of the centre `Θ₁ = μ·e eᵀ`.
    pub(super) intercept: f64,
    pub(super) t: u64,
    pub(super) projections: u64,
    #[serde(skip)]
    pub(super) idx: Vec<u32>,
    #[serde(skip)]
    pub(super) val: Vec<f64>,
}

impl DenseConvexFm {
    /// A learner over `dim` features; refuses `(dim + 1)² > max_entries` (the dense matrix would
    /// need `8·(dim+1)²` bytes, twice that for constrained FTRL).
    pub fn new(
        dim: usize,
        kind: ConvexKind,
        eta: f64,
        loss: Loss,
        ball: Option<NuclearBall>,
        max_entries: usize,
    ) -> Result<Self, LearnError> {
        Self::check_params(eta, ball)?;
        let n = dim + 1;
        let entries = n
            .checked_mul(n)
            .filter(|&e| e <= max_entries)
            .ok_or_else(|| {
                LearnError::InvalidParameter(format!(
                "the dense (d+1)×(d+1) matrix for d = {dim} has {} entries, above the limit of \
                 {max_entries} ({} MB); use sftrl or fm-sgd for this dimension",
                n as u128 * n as u128,
                8 * max_entries / 1_000_000
            ))
            })?;
        let grad_sum = (kind == ConvexKind::Ftrl && ball.is_some()).then(|| vec![0.0; entries]);
        Ok(DenseConvexFm {
            dim,
            kind,
            eta,
            loss,
            ball,
            theta: vec![0.0; entries],
            grad_sum,
            intercept: 0.0,
            t: 0,
            projections: 0,
            idx: Vec::new(),
            val: Vec::new(),
        })
    }

    /// The checks of [`DenseConvexFm::new`] that do not depend on the dimension: `η > 0`, a
    /// ball of radius `τ > 0` projected every `≥ 1` steps.
    pub(crate) fn check_params(eta: f64, ball: Option<NuclearBall>) -> Result<(), LearnError> {
        super::check_positive("eta", eta)?;
        if let Some(b) = ball {
            super::check_positive("nuclear-norm radius", b.radius)?;
            if b.every == 0 {
                return Err(LearnError::InvalidParameter(
                    "projection interval must be at least 1".into(),
                ));
            }
        }
        Ok(())
    }

    /// Starts from `Θ₁ = μ·e eᵀ` (`e` the constant coordinate) instead of 0; FTRL is then centred
    /// there (`R(Θ) = ½‖Θ − Θ₁‖²_F`). Must be called before learning.
    pub fn with_intercept(mut self, mu: f64) -> Result<Self, LearnError> {
        super::check_intercept(mu)?;
        let n = self.dim + 1;
        self.theta[n * n - 1] += mu - self.intercept;
        self.intercept = mu;
        Ok(self)
    }

    /// The algorithm.
    pub fn kind(&self) -> ConvexKind {
        self.kind
    }

    /// Number of projections onto the nuclear-norm ball done so far.
    pub fn projections(&self) -> u64 {
        self.projections
    }

    /// The pairwise part `Σ_{j≠k} Θ_jk x_j x_k` of the prediction (see
    /// [`AnyFm::pairwise`](super::AnyFm::pairwise)).
    pub fn pairwise(&self, x: Row<'_>) -> f64 {
        super::pairwise_from_quad(x, self.dim, |i, v| self.quad(i, v))
    }

    /// `Θ`, row-major `(d+1) × (d+1)`.
    pub fn theta(&self) -> &[f64] {
        &self.theta
    }

    /// Bytes held by the model state.
    pub fn state_bytes(&self) -> usize {
        8 * (self.theta.len() + self.grad_sum.as_ref().map_or(0, Vec::len))
    }

    fn quad(&self, idx: &[u32], val: &[f64]) -> f64 {
        let n = self.dim + 1;
        let mut s = 0.0;
        for (&a, &va) in idx.iter().zip(val) {
            let row = &self.theta[a as usize * n..(a as usize + 1) * n];
            let mut r = 0.0;
            for (&b, &vb) in idx.iter().zip(val) {
                r += row[b as usize] * vb;
            }
            s += va * r;
        }
        s
    }

    /// Projects `Θ` (OGD) or `−η Σ∇f` (FTRL) onto the nuclear-norm ball.
    fn project(&mut self, radius: f64) -> Result<(), LearnError> {
        let n = self.dim + 1;
        if let Some(g) = &self.grad_sum {
            for (t, &s) in self.theta.iter_mut().zip(g) {
                *t = -self.eta * s;
            }
            self.theta[n * n - 1] += self.intercept;
        }
        project_nuclear_ball(&mut self.theta, n, radius)?;
        self.projections += 1;
        Ok(())
    }
}

impl QuadraticFm for DenseConvexFm {
    quadratic_fm_fields!();

    fn score(&self, idx: &[u32], val: &[f64]) -> f64 {
        self.quad(idx, val)
    }

    /// `Θ ← Θ − η_t·q·ââᵀ` (FTRL also adds the gradient to its sum), then the projection onto
    /// the nuclear-norm ball every `every` steps.
    fn apply(&mut self, idx: &[u32], val: &[f64], z: f64, q: f64) -> Result<f64, LearnError> {
        let step = match self.kind {
            ConvexKind::Ftrl | ConvexKind::Ogd(StepSchedule::Constant) => self.eta,
            ConvexKind::Ogd(StepSchedule::InverseSqrt) => self.eta / ((self.t + 1) as f64).sqrt(),
        };
        let n = self.dim + 1;
        for (&a, &va) in idx.iter().zip(val) {
            let base = a as usize * n;
            for (&b, &vb) in idx.iter().zip(val) {
                let g = q * va * vb;
                self.theta[base + b as usize] -= step * g;
                if let Some(s) = &mut self.grad_sum {
                    s[base + b as usize] += g;
                }
            }
        }
        self.t += 1;
        match self.ball {
            Some(b) if self.t % b.every == 0 => self.project(b.radius).map(|()| z),
            _ => Ok(z),
        }
    }
}

impl OnlineLearner for DenseConvexFm {
    quadratic_fm_online!();

    /// The linear part `w = 2Θ[0..d, d]`.
    fn weights(&self) -> Cow<'_, [f64]> {
        let n = self.dim + 1;
        Cow::Owned(
            (0..self.dim)
                .map(|j| 2.0 * self.theta[j * n + self.dim])
                .collect(),
        )
    }
}

/// Euclidean projection of the symmetric row-major `n × n` matrix `a` onto
/// `{‖Θ‖_* ≤ radius}` in place: `a = QΛQᵀ`, the eigenvalues are projected onto the ℓ₁ ball
/// ([`project_l1_ball`]) and `a` is rebuilt from the surviving ones. Returns the nuclear norm
/// before the projection. `O(n³)`.
///
/// ```
/// use sketchlearn::fm::project_nuclear_ball;
/// let mut a = [3.0, 0.0, 0.0, -1.0];
/// let before = project_nuclear_ball(&mut a, 2, 2.0).unwrap();
/// assert!((before - 4.0).abs() < 1e-12);
/// // |λ| = (3, 1) shrunk by 1 to (2, 0).
/// assert!((a[0] - 2.0).abs() < 1e-12 && a[3].abs() < 1e-12);
/// ```
pub fn project_nuclear_ball(a: &mut [f64], n: usize, radius: f64) -> Result<f64, LearnError> {
    let mut eig = SymEigen::new(n);
    eig.compute(&a[..n * n])
        .map_err(|e| LearnError::Diverged(format!("nuclear-norm projection: {e}")))?;
    let mut lambda = eig.values().to_vec();
    let before: f64 = lambda.iter().map(|x| x.abs()).sum();
    if before <= radius {
        return Ok(before);
    }
    project_l1_ball(&mut lambda, radius);
    let keep: Vec<usize> = (0..n).filter(|&i| lambda[i] != 0.0).collect();
    let r = keep.len();
    let u = eig.vectors();
    // a = U_r diag(λ_r) U_rᵀ as one GEMM: (n × r) · (r × n).
    let mut left = vec![0.0; n * r];
    let mut right = vec![0.0; r * n];
    for i in 0..n {
        for (k, &c) in keep.iter().enumerate() {
            left[i * r + k] = u[i * n + c] * lambda[c];
            right[k * n + i] = u[i * n + c];
        }
    }
    if r == 0 {
        a[..n * n].iter_mut().for_each(|x| *x = 0.0);
    } else {
        matmul_into(&left, &right, n, r, n, &mut a[..n * n]);
        for i in 0..n {
            for j in 0..i {
                let v = 0.5 * (a[i * n + j] + a[j * n + i]);
                a[i * n + j] = v;
                a[j * n + i] = v;
            }
        }
    }
    Ok(before)
}

/// Projects `v` onto the ℓ₁ ball `{‖v‖₁ ≤ radius}` in place (soft-thresholding at the level
/// `θ` with `Σ max(|v_i| − θ, 0) = radius`; Duchi et al. 2008). A vector inside the ball is left
/// unchanged.
///
/// ```
/// let mut v = [3.0, -1.0, 0.5];
/// sketchlearn::fm::project_l1_ball(&mut v, 2.0);
/// assert_eq!(v, [2.0, 0.0, 0.0]);
/// ```
pub fn project_l1_ball(v: &mut [f64], radius: f64) {
    let total: f64 = v.iter().map(|x| x.abs()).sum();
    if total <= radius {
        return;
    }
    let mut mags: Vec<f64> = v.iter().map(|x| x.abs()).collect();
    mags.sort_unstable_by(|a, b| b.total_cmp(a));
    let (mut cum, mut theta) = (0.0, 0.0);
    for (i, &mag) in mags.iter().enumerate() {
        cum += mag;
        let t = (cum - radius) / (i + 1) as f64;
        if mag > t {
            theta = t;
        } else {
            break;
        }
    }
    for x in v.iter_mut() {
        let m = (x.abs() - theta).max(0.0);
        *x = x.signum() * m;
    }
}
