//! Online conditional gradient (OCG; Hazan, "Introduction to Online Convex Optimization" 2016,
//! Alg. "online conditional gradient") on the nuclear-norm ball of compact convexified FM (Lin et
//! al., WWW 2018; the OCG baseline of the SFTRL paper §5.1):
//!
//! ```text
//! K = {Θ ∈ ℝ^{(d+1)×(d+1)} symmetric : ‖Θ‖_* ≤ τ},   Θ_1 = 0,
//! F_t(Θ) = η Σ_{s≤t} ⟨∇f_s(Θ_s), Θ⟩ + ‖Θ − Θ_1‖²_F,
//! V_t = argmin_{V∈K} ⟨∇F_t(Θ_t), V⟩ = −τ·sign(λ)·v vᵀ   ((λ, v): the eigenpair of largest |λ|),
//! Θ_{t+1} = (1 − γ_t)Θ_t + γ_t V_t,   γ_t = min(1, c/√t).
//! ```
//!
//! `∇F_t(Θ_t) = η Σ q_s â_s â_sᵀ + 2Θ_t`. The gradient sum is stored sparse (only the entries
//! the examples touched), `Θ` as `scale · (M + Σ_k c_k u_k u_kᵀ)`: each step rescales and adds one
//! rank-one atom, atoms whose weight fell below `1e-15·τ` are dropped (their contribution is below
//! rounding), and for `(d+1)² ≤ 2²²` the atoms are folded into the dense `M` once there are
//! `(d+1)/4` of them. The eigenpair comes from warm-started power iteration
//! (power iteration, stopped at a relative residual of
//! `10⁻³` or after [`OcgParams::power_iters`] products).
//!
//! With `block = b > 1` the linear minimisation runs once per block of `b` examples, with all
//! their gradients (the paper's per-example OCG is `b = 1`); `t` then counts blocks. This is what
//! makes OCG tractable on MovieLens (each step costs `O(iterations·(nnz(Σ∇f) + atoms·d))`).

use super::quadratic_step::{self, quadratic_fm_fields, quadratic_fm_online, QuadraticFm};
use crate::linalg::{dot, matmul_into, power_iteration};
use crate::linear::{LearnError, OnlineLearner};
use crate::loss::Loss;
use crate::Row;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::HashMap;

/// Relative residual `‖Mv − λv‖ ≤ tol·|λ|` at which the power iteration stops: conditional
/// gradient only needs an approximate linear minimiser, and the warm start makes a few products
/// enough.
const POWER_TOL: f64 = 1e-3;

/// The most power iterations per linear minimisation: each costs a product with `∇F`, and
/// the iteration does not converge when the two extreme eigenvalues have the same magnitude, so
/// a larger bound (from a flag or a crafted model file) would only stall a step.
pub const MAX_POWER_ITERS: usize = 10_000;

/// Fold atoms into a dense matrix only when it has at most this many entries.
const DENSE_LIMIT: usize = 1 << 22;

/// Hyper-parameters of [`Ocg`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct OcgParams {
    /// `η > 0`, the weight of the gradient sum in `F_t`.
    pub eta: f64,
    /// Nuclear-norm radius `τ > 0`.
    pub radius: f64,
    /// `c > 0` of `γ_t = min(1, c/√t)` (Hazan's analysis uses 2).
    pub gamma: f64,
    /// Examples per linear minimisation (`≥ 1`; 1 = the paper's OCG).
    pub block: u64,
    /// Maximum power iterations per linear minimisation (`1..=`[`MAX_POWER_ITERS`]).
    pub power_iters: usize,
    /// Seed of the initial power-iteration vector.
    pub seed: u64,
    /// `μ` of the start `Θ₁ = μ·e eᵀ` (`e` the constant coordinate; `|μ| ≤ τ`), which is also the
    /// centre of `F_t`'s regulariser.
    pub intercept: f64,
}

impl Default for OcgParams {
    /// `η = 1, τ = 10, c = 2`, per-example steps, 20 power iterations, seed 0.
    fn default() -> Self {
        OcgParams {
            eta: 1.0,
            radius: 10.0,
            gamma: 2.0,
            block: 1,
            power_iters: 20,
            seed: 0,
            intercept: 0.0,
        }
    }
}

/// Symmetric sparse accumulator of `Σ q â âᵀ`: entries `(i ≤ j)` without duplicates.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(super) struct SymSparse {
    pub(super) n: usize,
    #[serde(serialize_with = "crate::sorted_map::serialize")]
    pub(super) pos: HashMap<u64, u32>,
    pub(super) i: Vec<u32>,
    pub(super) j: Vec<u32>,
    pub(super) v: Vec<f64>,
}

impl SymSparse {
    fn add(&mut self, a: u32, b: u32, g: f64) {
        let (i, j) = if a <= b { (a, b) } else { (b, a) };
        let key = i as u64 * self.n as u64 + j as u64;
        let next = self.v.len() as u32;
        let p = *self.pos.entry(key).or_insert(next) as usize;
        if p == self.v.len() {
            self.i.push(i);
            self.j.push(j);
            self.v.push(g);
        } else {
            self.v[p] += g;
        }
    }

    /// `out += scale · G x`.
    fn matvec_add(&self, x: &[f64], scale: f64, out: &mut [f64]) {
        for ((&i, &j), &v) in self.i.iter().zip(&self.j).zip(&self.v) {
            let (i, j) = (i as usize, j as usize);
            let sv = scale * v;
            out[i] += sv * x[j];
            if i != j {
                out[j] += sv * x[i];
            }
        }
    }
}

/// Online conditional gradient on the nuclear-norm ball (see the module documentation).
///
/// ```
/// use sketchlearn::fm::{Ocg, OcgParams};
/// use sketchlearn::linear::OnlineLearner;
/// use sketchlearn::loss::Loss;
/// use sketchlearn::Row;
/// let mut ocg = Ocg::new(4, Loss::Squared, OcgParams { radius: 5.0, ..Default::default() }).unwrap();
/// for _ in 0..100 {
///     ocg.learn(Row::Sparse { indices: &[0, 2], values: &[1.0, 1.0] }, 3.0, 1.0).unwrap();
/// }
/// let p = ocg.predict(Row::Sparse { indices: &[0, 2], values: &[1.0, 1.0] });
/// assert!(p > 1.0);
/// // Every iterate stays in the ball.
/// assert!(ocg.nuclear_norm_bound() <= 5.0 + 1e-9);
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Ocg {
    pub(super) dim: usize,
    pub(super) loss: Loss,
    pub(super) params: OcgParams,
    pub(super) scale: f64,
    pub(super) dense: Option<Vec<f64>>,
    /// Σ|c| of the atoms folded into `dense` (for the nuclear-norm bound).
    pub(super) dense_weight: f64,
    pub(super) atom_u: Vec<f64>,
    pub(super) atom_c: Vec<f64>,
    pub(super) grad: SymSparse,
    pub(super) v: Vec<f64>,
    pub(super) steps: u64,
    pub(super) pending: u64,
    pub(super) examples: u64,
    #[serde(skip)]
    pub(super) idx: Vec<u32>,
    #[serde(skip)]
    pub(super) val: Vec<f64>,
}

impl Ocg {
    /// OCG over `dim` features (matrices of size `dim + 1`).
    pub fn new(dim: usize, loss: Loss, params: OcgParams) -> Result<Self, LearnError> {
        Self::check_params(&params)?;
        let n = dim + 1;
        if n > u32::MAX as usize {
            return Err(LearnError::InvalidParameter(format!(
                "dimension {dim} is too large"
            )));
        }
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(params.seed);
        let v = (0..n).map(|_| StandardNormal.sample(&mut rng)).collect();
        let (atom_u, atom_c) = if params.intercept != 0.0 {
            let mut e = vec![0.0; n];
            e[n - 1] = 1.0;
            (e, vec![params.intercept])
        } else {
            (Vec::new(), Vec::new())
        };
        Ok(Ocg {
            dim,
            loss,
            params,
            scale: 1.0,
            dense: None,
            dense_weight: 0.0,
            atom_u,
            atom_c,
            grad: SymSparse {
                n,
                ..Default::default()
            },
            v,
            steps: 0,
            pending: 0,
            examples: 0,
            idx: Vec::new(),
            val: Vec::new(),
        })
    }

    /// The checks of [`Ocg::new`] that do not depend on the dimension.
    pub(crate) fn check_params(params: &OcgParams) -> Result<(), LearnError> {
        super::check_positive("eta", params.eta)?;
        super::check_positive("nuclear-norm radius", params.radius)?;
        super::check_positive("OCG step constant", params.gamma)?;
        if params.block == 0 || params.power_iters == 0 {
            return Err(LearnError::InvalidParameter(
                "OCG block size and power iterations must be at least 1".into(),
            ));
        }
        if params.power_iters > MAX_POWER_ITERS {
            return Err(LearnError::InvalidParameter(format!(
                "OCG power iterations must be at most {MAX_POWER_ITERS}, got {}",
                params.power_iters
            )));
        }
        if !(params.intercept.is_finite() && params.intercept.abs() <= params.radius) {
            return Err(LearnError::InvalidParameter(format!(
                "OCG intercept must be finite with |intercept| <= radius, got {}",
                params.intercept
            )));
        }
        Ok(())
    }

    /// The pairwise part `Σ_{j≠k} Θ_jk x_j x_k` of the prediction (see
    /// [`AnyFm::pairwise`](super::AnyFm::pairwise)).
    pub fn pairwise(&self, x: Row<'_>) -> f64 {
        super::pairwise_from_quad(x, self.dim, |i, v| self.quad(i, v))
    }

    /// Linear-minimisation steps done.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Rank-one atoms currently held (not folded into the dense part).
    pub fn atoms(&self) -> usize {
        self.atom_c.len()
    }

    /// An upper bound on `‖Θ‖_*`: `scale·(‖M‖_* bound + Σ|c_k|)`, where the dense part's bound is
    /// the sum of the absolute weights folded into it. Stays `≤ τ` (convex combinations of points
    /// of the ball).
    pub fn nuclear_norm_bound(&self) -> f64 {
        self.scale * (self.dense_weight + self.atom_c.iter().map(|c| c.abs()).sum::<f64>())
    }

    /// Bytes held by the model state.
    pub fn state_bytes(&self) -> usize {
        8 * (self.dense.as_ref().map_or(0, Vec::len)
            + self.atom_u.capacity()
            + self.atom_c.capacity()
            + self.v.capacity()
            + self.grad.v.capacity())
            + 8 * self.grad.i.capacity()
            + 16 * self.grad.pos.capacity()
    }

    fn n(&self) -> usize {
        self.dim + 1
    }

    /// `âᵀΘâ`.
    fn quad(&self, idx: &[u32], val: &[f64]) -> f64 {
        let n = self.n();
        let mut s = 0.0;
        if let Some(m) = &self.dense {
            for (&a, &va) in idx.iter().zip(val) {
                let row = &m[a as usize * n..(a as usize + 1) * n];
                let r: f64 = idx
                    .iter()
                    .zip(val)
                    .map(|(&b, &vb)| row[b as usize] * vb)
                    .sum();
                s += va * r;
            }
        }
        for (k, &c) in self.atom_c.iter().enumerate() {
            let u = &self.atom_u[k * n..(k + 1) * n];
            let p: f64 = idx.iter().zip(val).map(|(&j, &x)| u[j as usize] * x).sum();
            s += c * p * p;
        }
        self.scale * s
    }

    /// `out = ∇F(Θ) x = η G x + 2(Θ − Θ₁) x`.
    fn grad_f_apply(&self, x: &[f64], out: &mut [f64]) {
        let n = self.n();
        out.iter_mut().for_each(|o| *o = 0.0);
        self.grad.matvec_add(x, self.params.eta, out);
        let two_s = 2.0 * self.scale;
        if let Some(m) = &self.dense {
            for i in 0..n {
                out[i] += two_s * dot(&m[i * n..(i + 1) * n], x);
            }
        }
        for (k, &c) in self.atom_c.iter().enumerate() {
            let u = &self.atom_u[k * n..(k + 1) * n];
            let p = two_s * c * dot(u, x);
            crate::linalg::axpy(p, u, out);
        }
        out[n - 1] -= 2.0 * self.params.intercept * x[n - 1];
    }

    /// One linear minimisation and convex-combination step.
    fn step(&mut self) {
        let mut v = std::mem::take(&mut self.v);
        let (lambda, _) = power_iteration(
            |x, out| self.grad_f_apply(x, out),
            &mut v,
            self.params.power_iters,
            POWER_TOL,
        );
        self.v = v;
        self.steps += 1;
        if lambda == 0.0 || !lambda.is_finite() {
            return;
        }
        let gamma = (self.params.gamma / (self.steps as f64).sqrt()).min(1.0);
        let tau = self.params.radius;
        let atom = -tau * lambda.signum();
        if gamma >= 1.0 {
            self.dense = None;
            self.dense_weight = 0.0;
            self.atom_u.clear();
            self.atom_c.clear();
            self.scale = 1.0;
        } else {
            self.scale *= 1.0 - gamma;
        }
        self.atom_u.extend_from_slice(&self.v);
        self.atom_c.push(gamma * atom / self.scale);
        self.tidy();
    }

    /// Renormalises the scale, drops negligible atoms and folds atoms into the dense part.
    fn tidy(&mut self) {
        let n = self.n();
        if self.scale < 1e-150 {
            let s = self.scale;
            self.atom_c.iter_mut().for_each(|c| *c *= s);
            if let Some(m) = &mut self.dense {
                m.iter_mut().for_each(|x| *x *= s);
            }
            self.dense_weight *= s;
            self.scale = 1.0;
        }
        let floor = 1e-15 * self.params.radius / self.scale;
        if self.atom_c.iter().any(|c| c.abs() < floor) {
            let mut k = 0;
            for src in 0..self.atom_c.len() {
                if self.atom_c[src].abs() >= floor {
                    self.atom_c[k] = self.atom_c[src];
                    self.atom_u.copy_within(src * n..(src + 1) * n, k * n);
                    k += 1;
                }
            }
            self.atom_c.truncate(k);
            self.atom_u.truncate(k * n);
        }
        let k = self.atom_c.len();
        if n * n <= DENSE_LIMIT && k >= (n / 4).max(16) {
            // M += U diag(c) Uᵀ as one GEMM: (n × k)·(k × n).
            let mut left = vec![0.0; n * k];
            let mut right = vec![0.0; k * n];
            for a in 0..k {
                for i in 0..n {
                    let u = self.atom_u[a * n + i];
                    left[i * k + a] = u * self.atom_c[a];
                    right[a * n + i] = u;
                }
            }
            let mut prod = vec![0.0; n * n];
            matmul_into(&left, &right, n, k, n, &mut prod);
            let m = self.dense.get_or_insert_with(|| vec![0.0; n * n]);
            for (x, p) in m.iter_mut().zip(&prod) {
                *x += p;
            }
            self.dense_weight += self.atom_c.iter().map(|c| c.abs()).sum::<f64>();
            self.atom_c.clear();
            self.atom_u.clear();
        }
    }
}

impl QuadraticFm for Ocg {
    quadratic_fm_fields!();

    fn score(&self, idx: &[u32], val: &[f64]) -> f64 {
        self.quad(idx, val)
    }

    /// Adds `q·ââᵀ` (upper triangle) to the block's gradient; a full block takes a step.
    fn apply(&mut self, idx: &[u32], val: &[f64], z: f64, q: f64) -> Result<f64, LearnError> {
        if q != 0.0 {
            for (p, (&a, &va)) in idx.iter().zip(val).enumerate() {
                for (&b, &vb) in idx[p..].iter().zip(&val[p..]) {
                    self.grad.add(a, b, q * va * vb);
                }
            }
        }
        self.examples += 1;
        self.pending += 1;
        if self.pending >= self.params.block {
            self.pending = 0;
            self.step();
        }
        Ok(z)
    }
}

impl OnlineLearner for Ocg {
    quadratic_fm_online!();

    /// The linear part `w = 2Θ[0..d, d]`.
    fn weights(&self) -> Cow<'_, [f64]> {
        let n = self.n();
        let d = self.dim;
        let mut w = vec![0.0; d];
        if let Some(m) = &self.dense {
            for j in 0..d {
                w[j] += m[j * n + d];
            }
        }
        for (k, &c) in self.atom_c.iter().enumerate() {
            let u = &self.atom_u[k * n..(k + 1) * n];
            for j in 0..d {
                w[j] += c * u[j] * u[d];
            }
        }
        w.iter_mut().for_each(|x| *x *= 2.0 * self.scale);
        Cow::Owned(w)
    }
}
