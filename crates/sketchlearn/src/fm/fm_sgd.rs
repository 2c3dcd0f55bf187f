//! The practitioner's non-convex factorization machine (Rendle, ICDM 2010) trained by plain SGD:
//!
//! ```text
//! ŷ(x) = w₀ + Σ_i w_i x_i + Σ_{i<j} ⟨v_i, v_j⟩ x_i x_j
//!      = w₀ + wᵀx + ½ Σ_f [(Σ_i v_{i,f} x_i)² − Σ_i v_{i,f}² x_i²]        (Rendle eq. 5)
//! ```
//!
//! with rank-`k` factors `v_i ∈ ℝᵏ`, `O(k·nnz)` per prediction and per update. With `g = ℓ'(ŷ)`:
//! `w₀ −= η₀ g`, `w_i −= η_w(g x_i + λ_w w_i)`, `v_{i,f} −= η(g·x_i(s_f − v_{i,f} x_i) + λ_v v_{i,f})`
//! (`η₀`, `η_w` default to `η`; River's `FMRegressor` has the three rates separately)
//! where `s_f = Σ_j v_{j,f} x_j` (only the coordinates of `x` are touched; the regularisation is
//! applied lazily, at the features an example has, as usual for sparse SGD). The factors start
//! at seeded `N(0, σ²)` values (`σ = init_std`), the weights at 0 and `w₀` at `intercept`.

use crate::linear::{LearnError, OnlineLearner, StepSchedule};
use crate::loss::Loss;
use crate::Row;
use rand::SeedableRng;
use rand_distr::{Distribution, Normal};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// Hyper-parameters of [`FmSgd`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct FmSgdParams {
    /// Rank `k ≥ 1` of the factors.
    pub rank: usize,
    /// Learning rate `η > 0` of the factors (and of everything else unless set below).
    pub eta: f64,
    /// Learning rate of the linear weights `w` (default `η`); River's FM has separate ones.
    pub eta_linear: Option<f64>,
    /// Learning rate of the intercept `w₀` (default `η`).
    pub eta_intercept: Option<f64>,
    /// Constant or `η/√t`.
    pub schedule: StepSchedule,
    /// L2 penalty of the linear weights (`≥ 0`).
    pub reg_w: f64,
    /// L2 penalty of the factors (`≥ 0`).
    pub reg_v: f64,
    /// Standard deviation of the initial factors (`≥ 0`).
    pub init_std: f64,
    /// Initial intercept `w₀`.
    pub intercept: f64,
    /// Seed of the initial factors.
    pub seed: u64,
}

impl Default for FmSgdParams {
    /// Rank 10, `η = 0.01` constant, `λ_w = λ_v = 0`, `σ = 0.1`, `w₀ = 0`, seed 0 (the defaults
    /// of River's `FMRegressor` with a rank-10 initialisation of `σ = 0.1`).
    fn default() -> Self {
        FmSgdParams {
            rank: 10,
            eta: 0.01,
            eta_linear: None,
            eta_intercept: None,
            schedule: StepSchedule::Constant,
            reg_w: 0.0,
            reg_v: 0.0,
            init_std: 0.1,
            intercept: 0.0,
            seed: 0,
        }
    }
}

/// Rendle's FM by SGD (see the module documentation).
///
/// ```
/// use sketchlearn::fm::{FmSgd, FmSgdParams};
/// use sketchlearn::linear::OnlineLearner;
/// use sketchlearn::loss::Loss;
/// use sketchlearn::Row;
/// let mut fm = FmSgd::new(4, Loss::Squared, FmSgdParams { eta: 0.05, ..Default::default() }).unwrap();
/// for _ in 0..200 {
///     fm.learn(Row::Sparse { indices: &[0, 2], values: &[1.0, 1.0] }, 4.0, 1.0).unwrap();
///     fm.learn(Row::Sparse { indices: &[1, 3], values: &[1.0, 1.0] }, 1.0, 1.0).unwrap();
/// }
/// assert!((fm.predict(Row::Sparse { indices: &[0, 2], values: &[1.0, 1.0] }) - 4.0).abs() < 0.1);
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FmSgd {
    pub(super) dim: usize,
    pub(super) loss: Loss,
    pub(super) params: FmSgdParams,
    pub(super) w0: f64,
    pub(super) w: Vec<f64>,
    /// Factors, row-major `dim × rank`.
    pub(super) v: Vec<f64>,
    pub(super) t: u64,
    #[serde(skip)]
    sums: Vec<f64>,
}

impl FmSgd {
    /// A rank-`k` FM over `dim` features.
    pub fn new(dim: usize, loss: Loss, params: FmSgdParams) -> Result<Self, LearnError> {
        Self::check_params(&params)?;
        let len = dim.checked_mul(params.rank).ok_or_else(|| {
            LearnError::InvalidParameter(format!("dim {dim} × rank {} overflows", params.rank))
        })?;
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(params.seed);
        let normal = Normal::new(0.0, params.init_std)
            .map_err(|e| LearnError::InvalidParameter(format!("init_std: {e}")))?;
        let v = (0..len).map(|_| normal.sample(&mut rng)).collect();
        Ok(FmSgd {
            dim,
            loss,
            params,
            w0: params.intercept,
            w: vec![0.0; dim],
            v,
            t: 0,
            sums: Vec::new(),
        })
    }

    /// The checks of [`FmSgd::new`] that do not depend on the dimension.
    pub(crate) fn check_params(params: &FmSgdParams) -> Result<(), LearnError> {
        super::check_positive("eta", params.eta)?;
        if let Some(e) = params.eta_linear {
            super::check_positive("linear learning rate", e)?;
        }
        if let Some(e) = params.eta_intercept {
            super::check_positive("intercept learning rate", e)?;
        }
        super::check_size("FM rank k", params.rank)?;
        for (name, x) in [
            ("reg_w", params.reg_w),
            ("reg_v", params.reg_v),
            ("init_std", params.init_std),
        ] {
            if !(x.is_finite() && x >= 0.0) {
                return Err(LearnError::InvalidParameter(format!(
                    "{name} must be finite and >= 0, got {x}"
                )));
            }
        }
        if !params.intercept.is_finite() {
            return Err(LearnError::InvalidParameter(format!(
                "intercept must be finite, got {}",
                params.intercept
            )));
        }
        Ok(())
    }

    /// The intercept `w₀`.
    pub fn intercept(&self) -> f64 {
        self.w0
    }

    /// The factor `v_i` of feature `i`.
    pub fn factor(&self, i: usize) -> &[f64] {
        let k = self.params.rank;
        &self.v[i * k..(i + 1) * k]
    }

    /// Bytes held by the model state.
    pub fn state_bytes(&self) -> usize {
        8 * (self.w.capacity() + self.v.capacity() + 1)
    }

    /// The pairwise part `Σ_{j<k} ⟨v_j, v_k⟩ x_j x_k` of the prediction (see
    /// [`AnyFm::pairwise`](super::AnyFm::pairwise)).
    pub fn pairwise(&self, x: Row<'_>) -> f64 {
        let mut sums = Vec::new();
        self.parts(x, &mut sums).1
    }

    /// Prediction; fills `sums` with `s_f = Σ_i v_{i,f} x_i`.
    fn score(&self, x: Row<'_>, sums: &mut Vec<f64>) -> f64 {
        let (linear, pairwise) = self.parts(x, sums);
        linear + pairwise
    }

    /// The prediction's linear part `w₀ + wᵀx` and pairwise part `½(Σ_f s_f² − Σ_i ‖v_i‖²x_i²)`;
    /// fills `sums` with `s_f = Σ_i v_{i,f} x_i`.
    fn parts(&self, x: Row<'_>, sums: &mut Vec<f64>) -> (f64, f64) {
        let k = self.params.rank;
        sums.clear();
        sums.resize(k, 0.0);
        let mut lin = self.w0;
        let mut sq = 0.0;
        let visit = |i: usize, xi: f64| {
            if i >= self.dim || xi == 0.0 {
                return;
            }
            lin += self.w[i] * xi;
            let vi = &self.v[i * k..(i + 1) * k];
            for (s, &vf) in sums.iter_mut().zip(vi) {
                let a = vf * xi;
                *s += a;
                sq += a * a;
            }
        };
        x.for_each_entry(visit);
        let inter: f64 = sums.iter().map(|s| s * s).sum::<f64>() - sq;
        (lin, 0.5 * inter)
    }
}

impl OnlineLearner for FmSgd {
    fn dim(&self) -> usize {
        self.dim
    }

    fn predict(&self, x: Row<'_>) -> f64 {
        let mut sums = Vec::new();
        self.score(x, &mut sums)
    }

    fn learn(&mut self, x: Row<'_>, y: f64, weight: f64) -> Result<f64, LearnError> {
        crate::linear::check_example(&x, y, weight, self.dim)?;
        let mut sums = std::mem::take(&mut self.sums);
        let p = self.score(x, &mut sums);
        let g = weight * self.loss.derivative(p, y);
        if !p.is_finite() || !g.is_finite() {
            self.sums = sums;
            return Err(LearnError::Diverged(format!("prediction {p}")));
        }
        self.t += 1;
        let decay = match self.params.schedule {
            StepSchedule::Constant => 1.0,
            StepSchedule::InverseSqrt => 1.0 / (self.t as f64).sqrt(),
        };
        let eta = self.params.eta * decay;
        let eta_w = self.params.eta_linear.unwrap_or(self.params.eta) * decay;
        let eta_0 = self.params.eta_intercept.unwrap_or(self.params.eta) * decay;
        let k = self.params.rank;
        let (rw, rv) = (self.params.reg_w, self.params.reg_v);
        // Refuse a step that would make a touched parameter non-finite (the model is unchanged).
        let finite_after = |x: Row<'_>| -> bool {
            let ok = |i: usize, xi: f64| -> bool {
                let w = self.w[i] - eta_w * (g * xi + rw * self.w[i]);
                w.is_finite()
                    && self.v[i * k..(i + 1) * k]
                        .iter()
                        .zip(sums.iter())
                        .all(|(&vf, &s)| {
                            (vf - eta * (g * xi * (s - vf * xi) + rv * vf)).is_finite()
                        })
            };
            match x {
                Row::Dense(vals) => vals
                    .iter()
                    .enumerate()
                    .all(|(i, &xi)| xi == 0.0 || ok(i, xi)),
                Row::Sparse { indices, values } => indices
                    .iter()
                    .zip(values)
                    .all(|(&i, &xi)| xi == 0.0 || ok(i as usize, xi)),
            }
        };
        if !(self.w0 - eta_0 * g).is_finite() || !finite_after(x) {
            self.t -= 1;
            self.sums = sums;
            return Err(LearnError::Diverged(format!(
                "the step would make the factors non-finite (prediction {p})"
            )));
        }
        self.w0 -= eta_0 * g;
        let update = |i: usize, xi: f64| {
            if xi == 0.0 {
                return;
            }
            self.w[i] -= eta_w * (g * xi + rw * self.w[i]);
            let vi = &mut self.v[i * k..(i + 1) * k];
            for (vf, &s) in vi.iter_mut().zip(sums.iter()) {
                let grad = g * xi * (s - *vf * xi) + rv * *vf;
                *vf -= eta * grad;
            }
        };
        x.for_each_entry(update);
        self.sums = sums;
        Ok(p)
    }

    fn weights(&self) -> Cow<'_, [f64]> {
        Cow::Borrowed(&self.w)
    }
}
