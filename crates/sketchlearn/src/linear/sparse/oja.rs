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
//!   `y_i = f_i − x_i S`, `S ← S + (x_i/σ_i)y_i`: `F ← D^{−½}L̃⁻¹F` in `O(m²)` (the factor is
//!   `sketch::oja_rank_one`, which the dense sketch applies to `V` in `O(md)`). A row whose
//!   norm ratio `√(D_k/(1 + x_k²))` falls to `1e-10` is dropped, as the dense Gram–Schmidt does.
//!   This replaces the paper's `O(m³)` Gram–Schmidt in the metric of `K = ZZᵀ` (Alg. 5 line 4,
//!   Alg. 13). It does not drift: if `VVᵀ = I + E`, the next Gram matrix is `I + L⁻¹EL⁻ᵀ` with
//!   `‖L⁻¹‖ ≤ 1`, so rounding errors are contracted, not accumulated. (An exact
//!   re-orthonormalisation through `K` was tried and is *less* accurate: `K` squares the scale of
//!   `Z`, so its rounding error is `ε·ρ²` — see below — against `ε·ρ` for products with `F·Z`.)
//! * **change of basis**: `ρ² = ‖F‖²_F·tr(ZZᵀ)/m²` measures how much `V = FZ` cancels (1 at the
//!   start; `tr(ZZᵀ)` is kept in `O(m)` per update). When `ρ² > 100` (Oja's `Z` grows like
//!   `t^{cλ}`, fast on unnormalised data), `M = F`: `Z ← MZ` (lazily, see
//!   `columns.rs`), `F ← I`, `tr(ZZᵀ) ← m`, and at the same time `w̄ ← w̄ + Zᵀb`,
//!   `b ← 0` (lazily too). The same rebase is done when `w̄ᵀx` and `bᵀz` cancel by more than a
//!   factor 1000: on unnormalised data each Oja update moves `Zᵀb` by `γ(pᵀF⁻ᵀb)ĝ`, which `w̄`
//!   compensates, and without the transfer `w̄` and `Zᵀb` grow to 10⁶ times `w` within 20
//!   examples (measured), losing every digit. On normalised data rebases are rare; on the
//!   unnormalised ill-conditioned data of the tests they happen every few examples at first.
//!
//! **One column pass.** The sketch update and the Newton step that follows it change the same
//! columns: `w̄_j += (f − (δᵀb)s)·x_j` and `Z[:, j] += δ·s·x_j` are written in one visit per column
//! by the driver ([`SparseNewton`]) after the `O(m²)` parts of both are
//! done, unless a projection step, a due change of basis or a guard that cannot be proved from
//! the gather's maxima needs the columns in between (then the update, the change of basis and
//! the guarded step run one after the other, as in the paper).
//!
//! **Initial directions** (lazy initialisation): the dense learner starts from a seeded Gaussian
//! `V` (`O(md)`); here `Z₀` is the structured orthonormal matrix of
//! [`initial_directions`](super::initial_directions) generated on demand, `F₀ = I`, `K₀ = I`.
//! The dense reference is built from the same `V` with `OjaSketch::with_directions`.
//! Cost `O(m² + m·nnz)` per example (amortised).

use super::columns::{Init, LazyColumns};
use super::gram_schmidt::DEPENDENT;
use super::heads::HeadsCurvature;
use super::newton::{
    check_params, stored_layout, SparseCurvature, SparseNewton, SparseWeights, ToSketch,
};
use super::{all_finite, lower_mul, lower_tmul};
use crate::linalg::dot;
use crate::linear::curvature::{check_row_norm, MAX_OJA_ROW_SQUARED_NORM};
use crate::linear::{weight_ok, LearnError, NewtonParams};
use crate::sketch::RankOneCholesky;

/// `ρ²` above which the basis is changed.
const REBASE_RHO2: f64 = 1e2;

/// Sparse-time Oja-SON: the driver [`SparseNewton`] over Oja's sketch [`SparseOjaCurvature`].
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
pub type SparseOja = SparseNewton<SparseOjaCurvature>;

/// Oja's curvature `A⁻¹x = (x − Vᵀdiag(κ)Vx)/α` with `V = F·Z` (see the [module](self) docs).
/// (The binary learner's model files list these fields themselves, see `stored_layout!`; the
/// serde derive is the sparse-time softmax learner's.)
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct SparseOjaCurvature {
    pub(super) alpha: f64,
    pub(super) oja_c: f64,
    pub(super) m: usize,
    /// `V = F·Z`, lower triangular, row-major `m × m`.
    pub(super) f: Vec<f64>,
    /// `tr(ZZᵀ)`.
    pub(super) trk: f64,
    /// Rows of `V` that are non-zero.
    pub(super) active: Vec<bool>,
    pub(super) lambda: Vec<f64>,
    /// Sketch updates (the dense sketch's `t`).
    pub(super) t: u64,
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
        let cols = LazyColumns::new(dim, m, Init::Structured { seed });
        let curv = SparseOjaCurvature::new(m, rank, alpha, oja_c);
        Ok(SparseNewton::from_parts(params, cols, curv))
    }

    /// Estimated eigenvalues `λ`.
    pub fn eigenvalues(&self) -> &[f64] {
        &self.curv.lambda
    }

    /// The current directions `V = F·Z` as a dense `m × d` matrix (`O(m²d)`, for tests).
    pub fn directions(&self) -> Vec<f64> {
        let (m, d) = (self.curv.m, self.w.cols.dim());
        let mut v = vec![0.0; m * d];
        let mut fz = vec![0.0; m];
        self.w.cols.for_each_column(|j, _, z| {
            lower_mul(&self.curv.f, m, z, &mut fz);
            for i in 0..m {
                v[i * d + j] = fz[i];
            }
        });
        v
    }
}

impl SparseOjaCurvature {
    /// `F = I` on the first `rank` rows (the initial `Z₀` has `rank` non-zero rows), `λ = 0`.
    pub(super) fn new(m: usize, rank: usize, alpha: f64, oja_c: f64) -> Self {
        let mut f = vec![0.0; m * m];
        for i in 0..rank {
            f[i * m + i] = 1.0;
        }
        SparseOjaCurvature {
            alpha,
            oja_c,
            m,
            trk: rank as f64,
            f,
            active: (0..m).map(|i| i < rank).collect(),
            lambda: vec![0.0; m],
            t: 0,
            y: Vec::new(),
            v: Vec::new(),
            run: Vec::new(),
            delta: Vec::new(),
        }
    }

    /// `κ_i = tλ_i/(α + tλ_i)`.
    #[inline]
    fn kappa(&self, i: usize) -> f64 {
        let tl = self.t as f64 * self.lambda[i];
        tl / (self.alpha + tl)
    }

    /// `F ← L⁻¹F` with `LLᵀ = I + βppᵀ` (p in `self.y`), `O(m²)`: the factor's rows from
    /// [`RankOneCholesky`] (shared with the dense sketch, derivation there).
    #[inline(always)]
    fn rank_one_orthonormalize(&mut self, beta: f64, m: usize) {
        let mut chol = RankOneCholesky::new(beta, DEPENDENT);
        self.run.iter_mut().for_each(|x| *x = 0.0);
        for i in 0..m {
            if !self.active[i] {
                continue;
            }
            let row = &mut self.f[i * m..(i + 1) * m];
            let Some(r) = chol.row(self.y[i]) else {
                row.iter_mut().for_each(|v| *v = 0.0);
                self.active[i] = false;
                continue;
            };
            for (f, run) in row[..=i].iter_mut().zip(&mut self.run[..=i]) {
                let yv = *f - r.x * *run;
                *run += r.coef * yv;
                *f = yv * r.inv;
            }
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
    fn maybe_rebase(&mut self, w: &mut SparseWeights, z: &mut [f64], force: bool) {
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
        w.rebase(Some(&mat));
    }
}

impl SparseCurvature for SparseOjaCurvature {
    fn size(&self) -> usize {
        self.m
    }

    fn alpha(&self) -> f64 {
        self.alpha
    }

    fn scratch(&mut self) {
        let m = self.m;
        self.y.resize(m, 0.0);
        self.v.resize(m, 0.0);
        self.run.resize(m, 0.0);
        self.delta.resize(m, 0.0);
    }

    /// `Σκ_i(Fz)_i²` (`Fz` in `self.y`).
    fn quad(&mut self, z: &[f64], m: usize) -> f64 {
        lower_mul(&self.f, m, z, &mut self.y);
        (0..m).map(|i| self.kappa(i) * self.y[i] * self.y[i]).sum()
    }

    /// `v = Fᵀdiag(κ)Fz` (in `self.v`): `A⁻¹x = (x − Zᵀv)/α`.
    #[inline(always)]
    fn step_direction(&mut self, coef: f64, z: &[f64], b: &[f64], m: usize) -> bool {
        let f = coef / self.alpha;
        self.solve(z, m);
        b[..m]
            .iter()
            .zip(&self.v[..m])
            .fold(true, |ok, (b, v)| ok & weight_ok(b - f * v))
    }

    #[inline(always)]
    fn apply_step(&mut self, f: f64, b: &mut [f64], m: usize) {
        for i in 0..m {
            b[i] -= f * self.v[i];
        }
    }

    /// `‖ĝ‖² = s²‖x‖²` within [`MAX_OJA_ROW_SQUARED_NORM`]: the dense learner's rule (its
    /// derivation there).
    fn check_row(&self, g: ToSketch<'_>) -> Result<(), LearnError> {
        Ok(check_row_norm(g.s * g.s * g.xx, MAX_OJA_ROW_SQUARED_NORM)?)
    }

    /// Oja update: `t`, `λ`, `tr(ZZᵀ)`, `z ← Z'x` and `F`; returns `Some(δᵀb)` (`δ` in
    /// `self.delta`): the columns still change by `Z ← Z + δĝᵀ`, `w̄ −= (δᵀb)ĝ` (keeps `w`);
    /// `None` when the sketch did not move. Transactional: a row above
    /// [`MAX_OJA_ROW_SQUARED_NORM`] is refused as the dense learner refuses it, and when any
    /// other quantity of the update would be non-finite (absurdly scaled data), nothing changes
    /// and the update is refused.
    #[inline(always)]
    fn prepare_update(
        &mut self,
        g: ToSketch<'_>,
        z: &mut [f64],
        w: &mut SparseWeights,
        m: usize,
    ) -> Result<Option<f64>, LearnError> {
        self.check_row(g)?;
        let ToSketch { s, xx, example, .. } = g;
        let t = self.t + 1;
        let gamma = (self.oja_c / t as f64).min(1.0);
        // u = Zĝ = s·z (in self.v), p = F u (in self.y).
        for (v, zi) in self.v[..m].iter_mut().zip(&z[..m]) {
            *v = s * zi;
        }
        lower_mul(&self.f, m, &self.v, &mut self.y);
        let refuse = || {
            Err(LearnError::Diverged(format!(
                "Oja update, example {example} (non-finite sketch)"
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
            db = dot(&self.delta, &w.b);
            beta = 2.0 * gamma + gamma * gamma * gg;
            let dmax = self.delta.iter().fold(0.0f64, |a, d| a.max(d.abs()));
            let sig: f64 = 1.0 + beta * dot(&self.y, &self.y);
            let trk =
                self.trk + 2.0 * dot(&self.delta, &self.v) + gg * dot(&self.delta, &self.delta);
            if !(gg.is_finite()
                && sig.is_finite()
                && trk.is_finite()
                && (dmax * gg.sqrt()).is_finite()
                && w.shifts_finite(&self.delta, gg.sqrt()))
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

    fn delta(&self) -> &[f64] {
        &self.delta
    }

    /// Not when the update left `b` or `F` non-finite, nor when a change of basis is due.
    #[inline(always)]
    fn fusable(&self, pending: bool, b: &[f64]) -> bool {
        self.check(b, 0).is_ok() && !(pending && self.rebase_due())
    }

    fn after_update(&mut self, w: &mut SparseWeights, z: &mut [f64]) {
        self.maybe_rebase(w, z, false);
    }

    /// The error of an update that left `b` or `F` non-finite.
    #[inline(always)]
    fn check(&self, b: &[f64], example: u64) -> Result<(), LearnError> {
        if !(all_finite(b) & all_finite(&self.f)) {
            return Err(LearnError::Diverged(format!(
                "Oja update, example {example}"
            )));
        }
        Ok(())
    }

    /// The change of basis `Z ← FZ`, `F ← I` with the transfer `w̄ ← w̄ + Zᵀb`, `b ← 0`.
    fn transfer(&mut self, w: &mut SparseWeights, z: &mut [f64]) {
        self.maybe_rebase(w, z, true);
    }
}

impl HeadsCurvature for SparseOjaCurvature {
    /// `v = Fᵀdiag(κ)Fz` (in `self.v`).
    #[inline(always)]
    fn solve(&mut self, z: &[f64], m: usize) {
        lower_mul(&self.f, m, z, &mut self.y);
        let (t, alpha) = (self.t as f64, self.alpha);
        for (y, &l) in self.y[..m].iter_mut().zip(&self.lambda[..m]) {
            let tl = t * l;
            *y *= tl / (alpha + tl);
        }
        lower_tmul(&self.f, m, &self.y, &mut self.v);
    }

    fn solved(&self) -> &[f64] {
        &self.v[..self.m]
    }

    fn check_heads(&self, _w: &SparseWeights, _heads: usize) -> Result<(), String> {
        super::validate::check_oja_curvature(self)
    }
}

stored_layout!(SparseOjaCurvature, "SparseOja", SparseOjaCurvature::new(0, 0, 1.0, 1.0), {
    params: NewtonParams = params,
    alpha: f64 = curv.alpha,
    oja_c: f64 = curv.oja_c,
    m: usize = curv.m,
    cols: LazyColumns = w.cols,
    f: Vec<f64> = curv.f,
    trk: f64 = curv.trk,
    active: Vec<bool> = curv.active,
    lambda: Vec<f64> = curv.lambda,
    b: Vec<f64> = w.b,
    t: u64 = curv.t,
    examples: u64 = examples,
    pscale: f64 = pscale,
});
