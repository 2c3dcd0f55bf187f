//! Sparse RP-SON (SON paper Appendix G.1, Algorithm 7).
//!
//! `A = αI + SᵀS` with the Gaussian sketch `S ← S + rĝᵀ`, `r ~ N(0, I/m)` drawn exactly as
//! [`RandomProjection`](crate::sketch::RandomProjection) draws it (same seeded
//! `Xoshiro256PlusPlus`, `m` standard normals per update, times `1/√m`, also for a zero row), so
//! that the sparse and dense learners see the same sketch. The weights are `w = w̄ + Sᵀb`.
//!
//! Per example, with `z = Sx` gathered from the example's columns:
//! * prediction `p = w̄ᵀx + bᵀz`; projection `xᵀA⁻¹x = (‖x‖² − zᵀHz)/α`;
//! * a step `w += c·A⁻¹x = (c/α)(x − SᵀHz)` is `w̄ += (c/α)x` on the example's coordinates and
//!   `b −= (c/α)Hz`;
//! * the sketch update `S' = S + rĝᵀ` changes `Sᵀb` by `ĝ(rᵀb)`, so `w̄ −= (rᵀb)ĝ` keeps `w`;
//!   `S'S'ᵀ = SSᵀ + rqᵀ + qrᵀ` with `q = Sĝ + (‖ĝ‖²/2)r` (= `S'ĝ − (‖ĝ‖²/2)r`), the same
//!   symmetric rank-two update of `H = (αI + SSᵀ)⁻¹` as the dense sketch, and `S'x = z + r(ĝᵀx)`.
//!
//! The update's and the step's changes of the example's columns are written in one pass
//! (`fused_write`: `w̄_j += (f − (rᵀb)s)·x_j`, `S[:, j] += r·s·x_j`) unless the
//! step's guard cannot be proved from the gather's maxima or a projection step came first.
//!
//! `SSᵀ` is also kept (`O(m²)` per update) so that `H` can be recomputed from it when rounding
//! breaks the incremental update, where the dense sketch recomputes it from `S` (`O(m²d)`).
//! When `w̄ᵀx` and `bᵀz` cancel by more than a factor 1000 (large steps on unnormalised data),
//! `Sᵀb` is transferred into `w̄` lazily (see [`columns`](super::columns)) and `b ← 0`.
//! Cost `O(m² + m·nnz)` per example.

use super::columns::{Init, LazyColumns, W};
use super::{check_params, for_each_nz, fused_step_ok, fused_write, projection};
use crate::linalg::{dot, SymEigen};
use crate::linear::{check_example, weight_ok, LearnError, NewtonParams, OnlineLearner};
use crate::sketch::symmetric_rank_two;
use crate::sketch::SketchError;
use crate::Row;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// Sparse-time RP-SON.
///
/// ```
/// use sketchlearn::linear::sparse::SparseRp;
/// use sketchlearn::linear::{NewtonParams, OnlineLearner};
/// use sketchlearn::Row;
/// let mut rp = SparseRp::new(1 << 20, 5, 1.0, 7, NewtonParams::default()).unwrap();
/// for _ in 0..10 {
///     rp.learn(Row::Sparse { indices: &[3, 900_000], values: &[1.0, 0.5] }, 1.0, 1.0).unwrap();
/// }
/// assert!(rp.predict(Row::Sparse { indices: &[3], values: &[1.0] }) > 0.0);
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SparseRp {
    params: NewtonParams,
    alpha: f64,
    m: usize,
    cols: LazyColumns,
    b: Vec<f64>,
    /// `H = (αI + SSᵀ)⁻¹`, row-major `m × m`.
    h: Vec<f64>,
    /// `SSᵀ`.
    gram: Vec<f64>,
    rng: Xoshiro256PlusPlus,
    rows_seen: u64,
    t: u64,
    /// Running scale of `|p|` for the cancellation test.
    pscale: f64,
    #[serde(skip)]
    z: Vec<f64>,
    #[serde(skip)]
    hz: Vec<f64>,
    #[serde(skip)]
    r: Vec<f64>,
    #[serde(skip)]
    q: Vec<f64>,
    /// The last update's draw `r` (the column pass needs it after `r` is reused).
    #[serde(skip)]
    delta: Vec<f64>,
}

impl SparseRp {
    /// Dimension `d`, sketch size `m ≥ 0`, `α > 0`, seed of the Gaussian draws (the dense
    /// `RpCurvature::new(d, m, α, seed)` with the same seed draws the same `r`'s).
    pub fn new(
        dim: usize,
        m: usize,
        alpha: f64,
        seed: u64,
        params: NewtonParams,
    ) -> Result<Self, LearnError> {
        check_params(&params, alpha)?;
        let mut h = vec![0.0; m * m];
        for i in 0..m {
            h[i * m + i] = 1.0 / alpha;
        }
        Ok(SparseRp {
            params,
            alpha,
            m,
            cols: LazyColumns::new(dim, m, Init::Zero),
            b: vec![0.0; m],
            h,
            gram: vec![0.0; m * m],
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            rows_seen: 0,
            t: 0,
            pscale: 0.0,
            z: Vec::new(),
            hz: Vec::new(),
            r: Vec::new(),
            q: Vec::new(),
            delta: Vec::new(),
        })
    }

    /// The hyper-parameters.
    pub fn params(&self) -> &NewtonParams {
        &self.params
    }

    /// Examples learned.
    pub fn examples_seen(&self) -> u64 {
        self.t
    }

    fn scratch(&mut self) {
        let m = self.m;
        self.z.resize(m, 0.0);
        self.hz.resize(m, 0.0);
        self.r.resize(m, 0.0);
        self.q.resize(m, 0.0);
        self.delta.resize(m, 0.0);
    }

    /// `Hz` (in `self.hz`) for the step direction `A⁻¹x = (x − SᵀHz)/α`; returns whether
    /// `b − (coef/α)·Hz` stays acceptable.
    fn step_direction(&mut self, coef: f64, z: &[f64]) -> bool {
        let (m, f) = (self.m, coef / self.alpha);
        for i in 0..m {
            self.hz[i] = dot(&self.h[i * m..(i + 1) * m], z);
        }
        (0..m).all(|i| weight_ok(self.b[i] - f * self.hz[i]))
    }

    /// `w += coef·A⁻¹x` unless a touched `w̄_j` or `b` would become non-finite.
    fn step(&mut self, x: Row<'_>, coef: f64, z: &[f64]) -> bool {
        let (m, f) = (self.m, coef / self.alpha);
        let mut ok = self.step_direction(coef, z);
        if ok {
            for_each_nz(x, |j, v| ok &= weight_ok(self.cols.slot(j)[W] + f * v));
        }
        if !ok {
            return false;
        }
        for i in 0..m {
            self.b[i] -= f * self.hz[i];
        }
        fused_write(&mut self.cols, x, f, None);
        true
    }

    /// Sketch update with `ĝ = s·x` on everything but the example's columns: the draw `r`,
    /// `SSᵀ`, `H` and `z ← S'x`. Returns `Some(rᵀb)` (`r` in `self.delta`) when `S` and `w̄` must
    /// still change on the example's columns ([`SparseRp::update_columns`]: `S ← S + rĝᵀ`,
    /// `w̄ −= (rᵀb)ĝ`, which keeps `w`), `None` when `ĝ = 0`. A refused update
    /// ([`LearnError::Diverged`]) changes nothing but the random stream; when `H` cannot be
    /// recomputed the columns are updated before the error, as the rest of the sketch is.
    fn prepare_update(
        &mut self,
        x: Row<'_>,
        s: f64,
        xx: f64,
        z: &mut [f64],
    ) -> Result<Option<f64>, LearnError> {
        let m = self.m;
        let scale = 1.0 / (m.max(1) as f64).sqrt();
        for ri in self.r.iter_mut() {
            let g: f64 = StandardNormal.sample(&mut self.rng);
            *ri = g * scale;
        }
        self.rows_seen += 1;
        // ‖ĝ‖² = s²‖x‖².
        let gg = s * s * xx;
        if gg == 0.0 {
            return Ok(None);
        }
        let rb = dot(&self.r, &self.b);
        for i in 0..m {
            self.q[i] = s * z[i] + 0.5 * gg * self.r[i];
        }
        // Refuse (leaving S, H and w̄ as they are) an update that cannot stay finite.
        let gmax = gg.sqrt();
        let finite = gg.is_finite()
            && (rb * gmax).is_finite()
            && (0..m).all(|i| {
                (self.r[i] * gmax).is_finite()
                    && (0..m).all(|j| {
                        (self.gram[i * m + j] + self.r[i] * self.q[j] + self.q[i] * self.r[j])
                            .is_finite()
                    })
            });
        if !finite {
            return Err(LearnError::Diverged(format!(
                "RP update, example {} (non-finite sketch)",
                self.t
            )));
        }
        self.delta.copy_from_slice(&self.r);
        // q = Sĝ + (‖ĝ‖²/2) r with the old S (above); SSᵀ += rqᵀ + qrᵀ.
        for i in 0..m {
            for j in 0..m {
                self.gram[i * m + j] += self.r[i] * self.q[j] + self.q[i] * self.r[j];
            }
        }
        let sxx = s * xx;
        for i in 0..m {
            z[i] += self.r[i] * sxx;
        }
        // The dense sketch's update of H (recomputed from SSᵀ when it fails or cancels).
        if !symmetric_rank_two(&mut self.h, &mut self.hz, &mut self.r, &mut self.q) {
            if let Err(e) = self.recompute_h() {
                self.update_columns(x, s, rb);
                return Err(e);
            }
        }
        Ok(Some(rb))
    }

    /// The update's change on the example's columns (`r` in `self.delta`).
    fn update_columns(&mut self, x: Row<'_>, s: f64, rb: f64) {
        fused_write(&mut self.cols, x, -rb * s, Some((&self.delta, s)));
    }

    /// `H = (αI + SSᵀ)⁻¹` from the kept `SSᵀ` (clamped eigendecomposition).
    fn recompute_h(&mut self) -> Result<(), LearnError> {
        let m = self.m;
        let mut eig = SymEigen::new(m);
        eig.compute(&self.gram).map_err(SketchError::from)?;
        let (lam, u) = (eig.values(), eig.vectors());
        for i in 0..m {
            for j in 0..m {
                self.h[i * m + j] = (0..m)
                    .map(|k| u[i * m + k] * u[j * m + k] / (self.alpha + lam[k].max(0.0)))
                    .sum();
            }
        }
        Ok(())
    }

    fn learn_inner(
        &mut self,
        x: Row<'_>,
        y: f64,
        weight: f64,
        z: &mut [f64],
    ) -> Result<f64, LearnError> {
        let m = self.m;
        let super::gather::Gathered { wx, xx, wmax, xmax } =
            super::gather::gather(&mut self.cols, x, z);
        let bz = dot(&self.b, z);
        let mut p = wx + bz;
        let flush = super::cancels(wx, bz, &mut self.pscale);
        let mut projected = false;
        if p.abs() > self.params.clip {
            for i in 0..m {
                self.hz[i] = dot(&self.h[i * m..(i + 1) * m], z);
            }
            let q = (xx - dot(z, &self.hz)) / self.alpha;
            if let Some(tau) = projection(p, self.params.clip, q, xx, self.alpha) {
                if !self.step(x, -tau / q, z) {
                    return Err(LearnError::Diverged(format!(
                        "projection step, example {}",
                        self.t
                    )));
                }
                p -= tau;
                projected = true;
            }
        }
        let dl = weight * self.params.loss.derivative(p, y);
        if dl != 0.0 {
            let s = self.params.c.sqrt() * dl;
            let rb = self.prepare_update(x, s, xx, z)?;
            let (f, a) = (-dl / self.alpha, -dl / self.alpha - rb.unwrap_or(0.0) * s);
            // One pass over the columns for the update and the step when the guards provably
            // pass (the gather's w̄ bound is void after a projection step).
            let fused = !projected && fused_step_ok(wmax, xmax, a) && self.step_direction(-dl, z);
            if fused {
                fused_write(&mut self.cols, x, a, rb.map(|_| (&self.delta[..], s)));
                for i in 0..m {
                    self.b[i] -= f * self.hz[i];
                }
            } else {
                if let Some(rb) = rb {
                    self.update_columns(x, s, rb);
                }
                if !self.step(x, -dl, z) {
                    return Err(LearnError::Diverged(format!(
                        "Newton step, example {}",
                        self.t
                    )));
                }
            }
        }
        if flush {
            // w̄ ← w̄ + Sᵀb (lazily), b ← 0: see `columns`.
            self.cols.rebase(None, &self.b);
            self.b.iter_mut().for_each(|x| *x = 0.0);
        }
        Ok(p)
    }

    /// Number of transfers of `Sᵀb` into `w̄` so far.
    pub fn rebases(&self) -> u64 {
        self.cols.rebases()
    }
}

impl OnlineLearner for SparseRp {
    fn dim(&self) -> usize {
        self.cols.dim()
    }

    fn predict(&self, x: Row<'_>) -> f64 {
        self.cols
            .score(x, &self.b)
            .clamp(-self.params.clip, self.params.clip)
    }

    fn learn(&mut self, x: Row<'_>, y: f64, weight: f64) -> Result<f64, LearnError> {
        self.cols.prefetch(x);
        check_example(&x, y, weight, self.cols.dim())?;
        self.t += 1;
        self.scratch();
        let mut z = std::mem::take(&mut self.z);
        let r = self.learn_inner(x, y, weight, &mut z);
        self.z = z;
        r
    }

    #[inline]
    fn prefetch(&self, x: Row<'_>) {
        self.cols.prefetch(x);
    }

    fn weights(&self) -> Cow<'_, [f64]> {
        Cow::Owned(self.cols.weights(&self.b))
    }
}
