//! Sparse Oja-SON (SON paper §4, Algorithms 4 and 5, Appendix H).
//!
//! The dense learner ([`OjaSketch`](crate::sketch::OjaSketch) +
//! [`OjaCurvature`](crate::linear::curvature::OjaCurvature)) keeps orthonormal directions
//! `V ∈ ℝ^{m×d}`, eigenvalues `λ` and, per update with `ĝ`, `t ← t + 1`, `γ = min(c/t, 1)`,
//! `p = Vĝ`, `λ ← (1−γ)λ + γp²`, `V ← orth(V + γpĝᵀ)`, and `A⁻¹x = (x − Vᵀdiag(κ)Vx)/α` with
//! `κ_i = tλ_i/(α + tλ_i)`.
//!
//! Here `V = F·Z` with a lower-triangular `F ∈ ℝ^{m×m}` and `w = w̄ + Zᵀb`. With `z = Zx`
//! gathered from the example's columns:
//! * **prediction** `p = w̄ᵀx + bᵀz`; **projection** `xᵀA⁻¹x = (‖x‖² − Σκ_i(Fz)_i²)/α`;
//! * **step** `w += c·A⁻¹x`: `w̄ += (c/α)x` (example's coordinates), `b −= (c/α)Fᵀdiag(κ)Fz`;
//! * **sketch update** with `ĝ = s·x`: `u = Zĝ = s·z`, `p = Fu`; `δ = γu` (it solves `Fδ = γp`,
//!   so no triangular solve; `0` on dropped rows), `Z ← Z + δĝᵀ` (the example's columns), `w̄ −= (δᵀb)ĝ` (keeps `w`),
//!   `z ← z + δ(ĝᵀx)`;
//! * **orthonormalisation** on `F` alone. Since `V` has orthonormal rows and `Vĝ = p`, the new
//!   rows `V' = V + γpĝᵀ` have Gram matrix `V'V'ᵀ = I + βppᵀ`, `β = 2γ + γ²‖ĝ‖²`. Gram–Schmidt of
//!   the rows of `V'` (what the dense learner does) is `L⁻¹V'` with `LLᵀ = I + βppᵀ` (Cholesky,
//!   positive diagonal). With `x = √β·p`, `σ_{−1} = 1`, `σ_k = σ_{k−1} + x_k²`:
//!   `L = L̃·D^{½}`, `D_k = σ_k/σ_{k−1}`, `L̃_ik = x_i x_k/σ_k` (`i > k`), so `y = L̃⁻¹f` is
//!   `y_i = f_i − x_i S`, `S ← S + (x_i/σ_i)y_i`: `F ← D^{−½}L̃⁻¹F` in `O(m²)`. A row whose
//!   norm ratio `√(D_k/(1 + x_k²))` falls to `1e-10` is dropped, as the dense Gram–Schmidt does.
//!   This replaces the paper's `O(m³)` Gram–Schmidt in the metric of `K = ZZᵀ` (Alg. 5 line 4,
//!   Alg. 13). It does not drift: if `VVᵀ = I + E`, the next Gram matrix is `I + L⁻¹EL⁻ᵀ` with
//!   `‖L⁻¹‖ ≤ 1`, so rounding errors are contracted, not accumulated. (An exact
//!   re-orthonormalisation through `K` was tried and is *less* accurate: `K` squares the scale of
//!   `Z`, so its rounding error is `ε·ρ²` — see below — against `ε·ρ` for products with `F·Z`.)
//! * **change of basis**: `ρ² = ‖F‖²_F·tr(ZZᵀ)/m²` measures how much `V = FZ` cancels (1 at the
//!   start; `tr(ZZᵀ)` is kept in `O(m)` per update). When `ρ² > 100` (Oja's `Z` grows like
//!   `t^{cλ}`, fast on unnormalised data), `M = F`: `Z ← MZ` (lazily, see
//!   [`columns`](super::columns)), `F ← I`, `tr(ZZᵀ) ← m`, and at the same time `w̄ ← w̄ + Zᵀb`,
//!   `b ← 0` (lazily too). The same rebase is done when `w̄ᵀx` and `bᵀz` cancel by more than a
//!   factor 1000: on unnormalised data each Oja update moves `Zᵀb` by `γ(pᵀF⁻ᵀb)ĝ`, which `w̄`
//!   compensates, and without the transfer `w̄` and `Zᵀb` grow to 10⁶ times `w` within 20
//!   examples (measured), losing every digit. On normalised data rebases are rare; on the
//!   unnormalised ill-conditioned data of the tests they happen every few examples at first.
//!
//! **One column pass.** The sketch update and the Newton step that follows it change the same
//! columns: `w̄_j += (f − (δᵀb)s)·x_j` and `Z[:, j] += δ·s·x_j` are written in one visit per column
//! (`fused_write`) after the `O(m²)` parts of both are done, unless a
//! projection step, a due change of basis or a guard that cannot be proved from the gather's
//! maxima needs the columns in between (then the update, the change of basis and the guarded
//! step run one after the other, as in the paper).
//!
//! **Initial directions** (lazy initialisation): the dense learner starts from a seeded Gaussian
//! `V` (`O(md)`); here `Z₀` is the structured orthonormal matrix of
//! [`initial_directions`](super::initial_directions) generated on demand, `F₀ = I`, `K₀ = I`.
//! The dense reference is built from the same `V` with `OjaSketch::with_directions`.
//! Cost `O(m² + m·nnz)` per example (amortised).

use super::columns::{Init, LazyColumns, W};
use super::gram_schmidt::DEPENDENT;
use super::{
    all_finite, check_params, for_each_nz, fused_step_ok, fused_write, lower_mul, lower_tmul,
    projection,
};
use crate::linalg::dot;
use crate::linear::{check_example, weight_ok, LearnError, NewtonParams, OnlineLearner};
use crate::Row;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// `ρ²` above which the basis is changed.
const REBASE_RHO2: f64 = 1e2;

/// Sparse-time Oja-SON.
///
/// ```
/// use sketchlearn::linear::sparse::SparseOja;
/// use sketchlearn::linear::{NewtonParams, OnlineLearner};
/// use sketchlearn::Row;
/// // 2^24 features: nothing of size d is touched at start-up.
/// let mut oja = SparseOja::new(1 << 24, 10, 1.0, 1.0, 0, NewtonParams::default()).unwrap();
/// for _ in 0..10 {
///     oja.learn(Row::Sparse { indices: &[3, 9_000_000], values: &[1.0, 0.5] }, 1.0, 1.0).unwrap();
/// }
/// assert!(oja.predict(Row::Sparse { indices: &[3], values: &[1.0] }) > 0.0);
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SparseOja {
    params: NewtonParams,
    alpha: f64,
    oja_c: f64,
    m: usize,
    cols: LazyColumns,
    /// `V = F·Z`, lower triangular, row-major `m × m`.
    f: Vec<f64>,
    /// `tr(ZZᵀ)`.
    trk: f64,
    /// Rows of `V` that are non-zero.
    active: Vec<bool>,
    lambda: Vec<f64>,
    b: Vec<f64>,
    /// Sketch updates (the dense sketch's `t`).
    t: u64,
    examples: u64,
    /// Running scale of `|p|` for the cancellation test.
    pscale: f64,
    #[serde(skip)]
    z: Vec<f64>,
    #[serde(skip)]
    y: Vec<f64>,
    #[serde(skip)]
    v: Vec<f64>,
    #[serde(skip)]
    run: Vec<f64>,
    /// `δ` of the last sketch update (the column pass needs it after `run` is reused).
    #[serde(skip)]
    delta: Vec<f64>,
}

impl SparseOja {
    /// Dimension `d`, sketch size `m ≥ 0` (0: projected OGD with step `1/α`), `α > 0`, Oja's
    /// learning-rate constant `c > 0` of `γ_t = min(c/t, 1)`, seed of the initial directions.
    pub fn new(
        dim: usize,
        m: usize,
        alpha: f64,
        oja_c: f64,
        seed: u64,
        params: NewtonParams,
    ) -> Result<Self, LearnError> {
        check_params(&params, alpha)?;
        if !(oja_c.is_finite() && oja_c > 0.0) {
            return Err(LearnError::InvalidParameter(format!(
                "oja learning-rate constant c must be finite and > 0, got {oja_c}"
            )));
        }
        let rank = super::columns::initial_rank(dim, m);
        let mut f = vec![0.0; m * m];
        for i in 0..rank {
            f[i * m + i] = 1.0;
        }
        Ok(SparseOja {
            params,
            alpha,
            oja_c,
            m,
            cols: LazyColumns::new(dim, m, Init::Structured { seed }),
            trk: rank as f64,
            f,
            active: (0..m).map(|i| i < rank).collect(),
            lambda: vec![0.0; m],
            b: vec![0.0; m],
            t: 0,
            examples: 0,
            pscale: 0.0,
            z: Vec::new(),
            y: Vec::new(),
            v: Vec::new(),
            run: Vec::new(),
            delta: Vec::new(),
        })
    }

    /// The hyper-parameters.
    pub fn params(&self) -> &NewtonParams {
        &self.params
    }

    /// Examples learned.
    pub fn examples_seen(&self) -> u64 {
        self.examples
    }

    /// Estimated eigenvalues `λ`.
    pub fn eigenvalues(&self) -> &[f64] {
        &self.lambda
    }

    /// Number of lazy changes of basis so far.
    pub fn rebases(&self) -> u64 {
        self.cols.rebases()
    }

    /// The current directions `V = F·Z` as a dense `m × d` matrix (`O(m²d)`, for tests).
    pub fn directions(&self) -> Vec<f64> {
        let (m, d) = (self.m, self.cols.dim());
        let mut v = vec![0.0; m * d];
        let mut fz = vec![0.0; m];
        self.cols.for_each_column(|j, _, z| {
            lower_mul(&self.f, m, z, &mut fz);
            for i in 0..m {
                v[i * d + j] = fz[i];
            }
        });
        v
    }

    fn scratch(&mut self) {
        let m = self.m;
        self.z.resize(m, 0.0);
        self.y.resize(m, 0.0);
        self.v.resize(m, 0.0);
        self.run.resize(m, 0.0);
        self.delta.resize(m, 0.0);
    }

    /// `κ_i = tλ_i/(α + tλ_i)`.
    #[inline]
    fn kappa(&self, i: usize) -> f64 {
        let tl = self.t as f64 * self.lambda[i];
        tl / (self.alpha + tl)
    }

    /// `v = Fᵀdiag(κ)Fz` (in `self.v`): `A⁻¹x = (x − Zᵀv)/α`. Returns whether `b − (coef/α)·v`
    /// stays acceptable.
    #[inline(always)]
    fn step_direction(&mut self, coef: f64, z: &[f64], m: usize) -> bool {
        let f = coef / self.alpha;
        lower_mul(&self.f, m, z, &mut self.y);
        let (t, alpha) = (self.t as f64, self.alpha);
        for (y, &l) in self.y[..m].iter_mut().zip(&self.lambda[..m]) {
            let tl = t * l;
            *y *= tl / (alpha + tl);
        }
        lower_tmul(&self.f, m, &self.y, &mut self.v);
        self.b[..m]
            .iter()
            .zip(&self.v[..m])
            .fold(true, |ok, (b, v)| ok & weight_ok(b - f * v))
    }

    /// `w += coef·A⁻¹x` unless a touched `w̄_j` or `b` would become non-finite.
    fn step(&mut self, x: Row<'_>, coef: f64, z: &[f64], m: usize) -> bool {
        let f = coef / self.alpha;
        let mut ok = self.step_direction(coef, z, m);
        if ok {
            for_each_nz(x, |j, v| ok &= weight_ok(self.cols.slot(j)[W] + f * v));
        }
        if !ok {
            return false;
        }
        for i in 0..m {
            self.b[i] -= f * self.v[i];
        }
        fused_write(&mut self.cols, x, f, None);
        true
    }

    /// Oja update with `ĝ = s·x` on everything but the example's columns: `t`, `λ`, `tr(ZZᵀ)`,
    /// `z ← Z'x` and `F`; returns `Some(δᵀb)` (`δ` in `self.delta`) when `Z` and `w̄` must still
    /// change on the example's columns ([`SparseOja::update_columns`]), `None` when the sketch
    /// did not move. Transactional: when any quantity of the update would be non-finite (absurdly
    /// scaled data), nothing changes and the update is refused ([`LearnError::Diverged`]).
    #[inline(always)]
    fn prepare_update(
        &mut self,
        s: f64,
        xx: f64,
        z: &mut [f64],
        m: usize,
    ) -> Result<Option<f64>, LearnError> {
        let t = self.t + 1;
        let gamma = (self.oja_c / t as f64).min(1.0);
        // u = Zĝ = s·z (in self.v), p = F u (in self.y).
        for (v, zi) in self.v[..m].iter_mut().zip(&z[..m]) {
            *v = s * zi;
        }
        lower_mul(&self.f, m, &self.v, &mut self.y);
        let refuse = || {
            Err(LearnError::Diverged(format!(
                "Oja update, example {} (non-finite sketch)",
                self.examples
            )))
        };
        let lambda_ok = self.lambda[..m]
            .iter()
            .zip(&self.y[..m])
            .fold(true, |ok, (l, y)| {
                let l = (1.0 - gamma) * l + gamma * y * y;
                ok & l.is_finite() & (t as f64 * l).is_finite()
            });
        if !lambda_ok {
            return refuse();
        }
        let moved = self.y.iter().any(|&p| p != 0.0);
        let (mut gg, mut db, mut beta) = (0.0, 0.0, 0.0);
        if moved {
            // δ solves F δ = γ p with p = F u: δ = γ u on the active rows (F restricted to
            // them is lower triangular with a positive diagonal; a dropped row's row and
            // column of F are zero), δ_i = 0 on dropped rows. No triangular solve needed.
            for (i, (d, u)) in self.delta[..m].iter_mut().zip(&self.v[..m]).enumerate() {
                *d = if self.active[i] && self.f[i * m + i] != 0.0 {
                    gamma * u
                } else {
                    0.0
                };
            }
            // ‖ĝ‖² = s²‖x‖².
            gg = s * s * xx;
            db = dot(&self.delta, &self.b);
            beta = 2.0 * gamma + gamma * gamma * gg;
            let dmax = self.delta.iter().fold(0.0f64, |a, d| a.max(d.abs()));
            let sig: f64 = 1.0 + beta * dot(&self.y, &self.y);
            let trk =
                self.trk + 2.0 * dot(&self.delta, &self.v) + gg * dot(&self.delta, &self.delta);
            if !(gg.is_finite()
                && db.is_finite()
                && sig.is_finite()
                && trk.is_finite()
                && (dmax * gg.sqrt()).is_finite()
                && (db * gg.sqrt()).is_finite())
            {
                return refuse();
            }
        }
        self.t = t;
        for (l, y) in self.lambda[..m].iter_mut().zip(&self.y[..m]) {
            *l = (1.0 - gamma) * *l + gamma * y * y;
        }
        if !moved {
            return Ok(None);
        }
        // tr(ZZᵀ) += 2δᵀu + ‖ĝ‖²‖δ‖².
        let (delta, u) = (&self.delta, &self.v);
        self.trk += 2.0 * dot(delta, u) + gg * dot(delta, delta);
        let sxx = s * xx;
        for (zi, d) in z[..m].iter_mut().zip(&delta[..m]) {
            *zi += d * sxx;
        }
        self.rank_one_orthonormalize(beta, m);
        Ok(Some(db))
    }

    /// The update's change on the example's columns: `Z ← Z + δĝᵀ`, `w̄ −= (δᵀb)ĝ` (keeps `w`).
    fn update_columns(&mut self, x: Row<'_>, s: f64, db: f64) {
        fused_write(&mut self.cols, x, -db * s, Some((&self.delta, s)));
    }

    /// The error of an update that left `b` or `F` non-finite.
    fn check_finite(&self) -> Result<(), LearnError> {
        if !(all_finite(&self.b) & all_finite(&self.f)) {
            return Err(LearnError::Diverged(format!(
                "Oja update, example {}",
                self.examples
            )));
        }
        Ok(())
    }

    /// `F ← L⁻¹F` with `LLᵀ = I + βppᵀ` (p in `self.y`), `O(m²)`.
    ///
    /// Per row one division and one square root: with `r_k = 1/σ_k`, `D_k = σ_k·r_{k−1}`,
    /// `D_k^{−½} = √(σ_{k−1}·r_k)` and `x_k/σ_k = x_k·r_k`; the dependence test
    /// `√(D_k/(1 + x_k²)) > 1e-10` is `D_k > 1e-20·(1 + x_k²)` (no square root).
    #[inline(always)]
    fn rank_one_orthonormalize(&mut self, beta: f64, m: usize) {
        let sb = beta.sqrt();
        let (mut sig_prev, mut r_prev) = (1.0f64, 1.0f64);
        self.run.iter_mut().for_each(|x| *x = 0.0);
        for i in 0..m {
            if !self.active[i] {
                continue;
            }
            let xi = sb * self.y[i];
            let sig = sig_prev + xi * xi;
            let di = sig * r_prev;
            let row = &mut self.f[i * m..(i + 1) * m];
            if !(di > DEPENDENT * DEPENDENT * (1.0 + xi * xi) && di.is_finite()) {
                row.iter_mut().for_each(|v| *v = 0.0);
                self.active[i] = false;
                continue;
            }
            let r = 1.0 / sig;
            let (inv, coef) = ((sig_prev * r).sqrt(), xi * r);
            for (f, run) in row[..=i].iter_mut().zip(&mut self.run[..=i]) {
                let yv = *f - xi * *run;
                *run += coef * yv;
                *f = yv * inv;
            }
            (sig_prev, r_prev) = (sig, r);
        }
    }

    /// True when `ρ² = ‖F‖²_F·tr(ZZᵀ)/m_active²` exceeds [`REBASE_RHO2`] (`O(m²)`).
    fn rebase_due(&self) -> bool {
        let ma = self.active.iter().filter(|&&a| a).count();
        if ma == 0 {
            return false;
        }
        dot(&self.f, &self.f) * self.trk / (ma * ma) as f64 > REBASE_RHO2
    }

    /// Changes the basis (and transfers `Zᵀb` into `w̄`) when `V = FZ` cancels too much, or
    /// when `force` (see the module documentation).
    fn maybe_rebase(&mut self, z: &mut [f64], force: bool) {
        if !force && !self.rebase_due() {
            return;
        }
        let m = self.m;
        // M = F with dropped rows replaced by unit rows (invertible, lower triangular).
        let mut mat = self.f.clone();
        for i in 0..m {
            if !self.active[i] || mat[i * m + i] == 0.0 {
                mat[i * m..(i + 1) * m].iter_mut().for_each(|x| *x = 0.0);
                mat[i * m + i] = 1.0;
                self.active[i] = false;
                self.f[i * m..(i + 1) * m].iter_mut().for_each(|x| *x = 0.0);
            }
        }
        // z ← M z; the new Z is V (orthonormal rows) plus the dropped rows.
        lower_mul(&mat, m, z, &mut self.y);
        z.copy_from_slice(&self.y[..m]);
        for i in 0..m {
            for c in 0..m {
                self.f[i * m + c] = if i == c && self.active[i] { 1.0 } else { 0.0 };
            }
        }
        self.trk = self.active.iter().filter(|&&a| a).count() as f64;
        self.cols.rebase(Some(&mat), &self.b);
        self.b.iter_mut().for_each(|x| *x = 0.0);
    }

    #[inline(always)]
    fn learn_inner(
        &mut self,
        x: Row<'_>,
        y: f64,
        weight: f64,
        z: &mut [f64],
        m: usize,
    ) -> Result<f64, LearnError> {
        let super::gather::Gathered { wx, xx, wmax, xmax } =
            super::gather::gather(&mut self.cols, x, z);
        let bz = dot(&self.b, z);
        let mut p = wx + bz;
        let flush = super::cancels(wx, bz, &mut self.pscale);
        let mut projected = false;
        if p.abs() > self.params.clip {
            lower_mul(&self.f, m, z, &mut self.y);
            let proj: f64 = (0..m).map(|i| self.kappa(i) * self.y[i] * self.y[i]).sum();
            let q = (xx - proj) / self.alpha;
            if let Some(tau) = projection(p, self.params.clip, q, xx, self.alpha) {
                if !self.step(x, -tau / q, z, m) {
                    return Err(LearnError::Diverged(format!(
                        "projection step, example {}",
                        self.examples
                    )));
                }
                p -= tau;
                projected = true;
            }
        }
        let dl = weight * self.params.loss.derivative(p, y);
        if dl != 0.0 {
            let s = self.params.c.sqrt() * dl;
            let db = self.prepare_update(s, xx, z, m)?;
            let (f, a) = (-dl / self.alpha, -dl / self.alpha - db.unwrap_or(0.0) * s);
            // One pass over the columns for the update and the step when nothing in between
            // needs them: no change of basis due, and the guards provably pass (the step's
            // w̄ bound from the gather's maxima is void after a projection step).
            let fused = self.check_finite().is_ok()
                && !(db.is_some() && self.rebase_due())
                && !projected
                && fused_step_ok(wmax, xmax, a)
                && self.step_direction(-dl, z, m);
            if fused {
                fused_write(&mut self.cols, x, a, db.map(|_| (&self.delta[..], s)));
                for i in 0..m {
                    self.b[i] -= f * self.v[i];
                }
            } else {
                if let Some(db) = db {
                    self.update_columns(x, s, db);
                    self.maybe_rebase(z, false);
                }
                self.check_finite()?;
                if !self.step(x, -dl, z, m) {
                    return Err(LearnError::Diverged(format!(
                        "Newton step, example {}",
                        self.examples
                    )));
                }
            }
        }
        if flush {
            self.maybe_rebase(z, true);
        }
        Ok(p)
    }
}

impl OnlineLearner for SparseOja {
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
        self.examples += 1;
        self.scratch();
        let mut z = std::mem::take(&mut self.z);
        // m = 10 (the papers' and VW's usual size) is compiled apart with `m` known, which
        // unrolls the O(m²) loops; the same operations in the same order (the same bits).
        let r = match self.m {
            10 => self.learn_inner(x, y, weight, &mut z, 10),
            m => self.learn_inner(x, y, weight, &mut z, m),
        };
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
