//! Sparse-time softmax SON: the multinomial learner [`SoftmaxSon`] over a doubling FD/RFD, a
//! random-projection (RP) or an Oja sketch, with a per-example cost independent of the
//! dimension `d` (issue 24, item 2).
//!
//! # The dense step
//! [`SoftmaxSon`] (its module documentation has the derivation) keeps `W ∈ ℝ^{K×d̃}` and steps
//! `W ← W + u (Φ⁻¹x̃)ᵀ` with `u = −Γ⁻¹ω(p − e_y)` (`K` numbers), `Φ = αI + BᵀB`, `B` the `ℓ × d̃`
//! FD buffer. By Woodbury, with `H = (αI + BBᵀ)⁻¹` (`ℓ × ℓ`) and `h = H·Bx̃`,
//!
//! ```text
//! Φ⁻¹x̃ = (x̃ − Bᵀh)/α .
//! ```
//!
//! Every row of the step is a multiple of the same vector: dense-time only because `Bᵀh` and
//! the `K` rows `w_k` are `d̃`-vectors.
//!
//! # The sparse-time form
//! The buffer is kept as in sparse FD-SON ([`fd`](super::fd)): `B = [diag(σ)·F·Z_{:k}; G]` with
//! `Z` the lazily stored `m × d̃` matrix of the column store, `F` small and `G` the `r` raw rows
//! stored sparsely, so that `Bᵀh = Zᵀv + Gᵀh_G` with `v = Fᵀ(σ∘h_top)` (`m` numbers). Row `k` of
//! `W` is kept in the same form as the binary learner's one weight vector,
//!
//! ```text
//! w_k = w̄_k + Zᵀb_k + Gᵀc_k ,
//! ```
//!
//! `K` vectors `w̄_k` stored in the columns' slots next to the shared `Z[:, j]` (the store's
//! "heads", `columns.rs`), `b_k ∈ ℝ^m`, `c_k ∈ ℝ^r`. Then the step `w_k += (u_k/α)(x̃ − Zᵀv −
//! Gᵀh_G)` is
//!
//! ```text
//! w̄_k += (u_k/α)·x̃   (the example's columns only),   b_k −= (u_k/α)·v,   c_k −= (u_k/α)·h_G ,
//! ```
//!
//! a rank-one change of the `K × (m + r)` coefficients and `K·nnz` writes. The scores are
//! `z_k = w̄_kᵀx̃ + b_kᵀ(Zx̃) + c_kᵀ(Gx̃)`: one gather of `Zx̃` shared by the classes (as SON's
//! `Sx`), `K` sums of `w̄` per column, and the raw rows' products `Gx̃` shared too.
//!
//! # Changes of the sketch keep `W`
//! Appending a raw row does not change `Z` (`c` gains a zero per class). A shrink or a change of
//! basis changes `Z`, `F` and `G` exactly as for the binary learner, and the weights are
//! corrected so that each `w_k` is unchanged — the binary corrections applied to every class,
//! since they are linear in `(b, c)`: fast path `Z += AG`, `w̄_k += Gᵀ(c_k − Aᵀb_k)`; direct
//! path and rebase `w̄_k += Zᵀb_k` (lazily, one transfer vector per class and epoch in the
//! column store), then `Z ← MZ`, `b_k ← 0`, and `w̄_k += Gᵀc_k` when `G` is emptied. The shrink
//! itself (Algorithms 11–13, `fd_shrink.rs`) does not look at the weights.
//!
//! # Cost per example
//! `O(m² + ℓ² + (m + K)·nnz + K·(m + ℓ) + K³)` amortised — the gather and step over the
//! example's columns, the small solves, the `K × K` Cholesky of `Γ` — against the dense
//! learner's `O((m + K)·d̃)`. A shrink costs `O(ℓ³ + (m + K)·Σnnz(G))` once per `m + 1` appends,
//! a stale column's catch-up `O(m² + K·m)`. Memory `d̃·(m + 1 + K)` numbers, allocated zeroed
//! and touched only where features occur.
//!
//! # Same learner
//! Projection (SON Lemma 1, [`SoftmaxSon`]'s step 1) moves the scores along the same `Φ⁻¹x̃`
//! with `u_k = (clip(z_k) − z_k)/x̃ᵀΦ⁻¹x̃`, `x̃ᵀΦ⁻¹x̃ = (‖x̃‖² − (Bx̃)ᵀH(Bx̃))/α`. The guard checks
//! the touched `w̄_kj`, every `b_k` and `c_k` (the dense learner checks all of `W`). When the
//! scores cancel (`|w̄ᵀx̃| + |rest| > 1000·|z|` for the class where it is largest), `Zᵀb_k` and
//! `Gᵀc_k` are moved into `w̄_k` (lazily) with a change of basis, as the binary learner does.
//! `tests/suite/sparse_softmax.rs` checks the predictions and weights against [`SoftmaxSon`] over
//! `FdCurvature` (doubling FD and RFD) through many shrinks — to 1e-9 plus a multiple of how far
//! the dense learner moves under one-ulp changes of its inputs (it amplifies rounding where its
//! steps overshoot the scores) — and save/load mid-stream.
//!
//! # RP and Oja
//! The same holds over any sparse-time curvature of the binary learners (`heads.rs`): with
//! `A⁻¹x̃ = (x̃ − Zᵀv)/α` — RP (SON App. G.1, Alg. 7): `Z = S`, `v = Hz`; Oja (Alg. 4, 5, App.
//! H): `V = F·Z`, `v = Fᵀdiag(κ)Fz` — the step is `w̄_k += (u_k/α)·x̃`, `b_k −= (u_k/α)·v`,
//! and the sketch update `Z ← Z + δĝᵀ` (touching the example's columns only) is compensated in
//! every head by `w̄_k −= (δᵀb_k)·ĝ`. Oja's change of basis when `V = FZ` cancels, and the
//! transfer `w̄_k += Zᵀb_k` when the scores cancel, act on all heads in the column store. The
//! RP learner draws the same Gaussian rows as the dense
//! [`RpCurvature`](crate::linear::curvature::RpCurvature) with the same seed; the Oja learner
//! starts from the structured orthonormal `Z₀` ([`initial_directions`](super::initial_directions)),
//! where the dense `OjaCurvature` draws Gaussian directions. `tests/sparse_softmax_rp_oja.rs`
//! checks both against [`SoftmaxSon`] over the dense curvature from the same start. Cost
//! `O(m² + (m + K)·nnz + K·m + K³)` per example (amortised: a stale column's catch-up
//! `O(m² + K·m)`).
//!
//! SON's diagonal adaptation (§5.2) is a wrapper here
//! ([`DiagonalScaled`](crate::linear::multiclass::DiagonalScaled)): it rescales the example's
//! `nnz` values and updates `D` on them, so the learner stays sparse-time.

use super::columns::{head, Init, LazyColumns, Z};
use super::fd::SparseFdCurvature;
use super::for_each_nz;
use super::heads::HeadsCurvature;
use super::newton::{cancels, SparseWeights, ToSketch};
use super::oja::SparseOjaCurvature;
use super::rp::SparseRpCurvature;
use crate::linalg::dot;
use crate::linear::multiclass::{
    check_multiclass, check_softmax_params, class_coefficients, clip_coefficients, normalize_log,
    ClassFactor, Extended, MulticlassLearner, SoftmaxParams,
};
use crate::linear::{weight_ok, LearnError};
use crate::Row;
use serde::{Deserialize, Serialize};

/// Sparse-time softmax regression with the sketched Kronecker-factored Newton step over a
/// doubling FD/RFD sketch (the default `C`), an RP or an Oja sketch (see the [module](self)
/// documentation); the same learner as [`SoftmaxSon`](crate::linear::multiclass::SoftmaxSon)
/// over `FdCurvature::{fd, rfd}(d + 1, m, FdVariant::Doubling, α)`, `RpCurvature` or
/// `OjaCurvature` (from the same initial directions).
///
/// ```
/// use sketchlearn::linear::multiclass::{MulticlassLearner, SoftmaxParams};
/// use sketchlearn::linear::sparse::{SparseSoftmax, SparseSoftmaxOja};
/// use sketchlearn::Row;
/// // 3 classes over 2^20 features, RFD m = 4, α₀ = 1; and Oja-SON, m = 4, α = 1.
/// let rfd = SparseSoftmax::rfd(3, 1 << 20, 4, 1.0, 7, SoftmaxParams::default()).unwrap();
/// let oja = SparseSoftmaxOja::oja(3, 1 << 20, 4, 1.0, 1.0, 7, SoftmaxParams::default()).unwrap();
/// let data = [([5u32, 900_000], 0), ([17, 900_000], 1), ([5, 17], 2)];
/// let learn = |son: &mut dyn MulticlassLearner| {
///     for _ in 0..30 {
///         for (x, y) in &data {
///             let p = son.learn(Row::Sparse { indices: x, values: &[1.0, 1.0] }, *y, 1.0).unwrap();
///             assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
///         }
///     }
///     for (x, y) in &data {
///         assert_eq!(son.predict_class(Row::Sparse { indices: x, values: &[1.0, 1.0] }), *y);
///     }
/// };
/// learn(&mut rfd.clone());
/// learn(&mut oja.clone());
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SparseSoftmax<C = SparseFdCurvature> {
    k: usize,
    /// Input dimension `d` (the store's is `d̃`).
    dim: usize,
    params: SoftmaxParams,
    /// `w̄_k` (the store's heads), `Z`, and the `b_k` one after the other.
    pub(super) w: SparseWeights,
    /// The curvature (FD: with the `c_k`, `c[q·K + k]`).
    pub(super) curv: C,
    gamma: ClassFactor,
    t: u64,
    refused: u64,
    /// Running scale of the scores for the cancellation test.
    pscale: f64,
    #[serde(skip)]
    ext: Extended,
    #[serde(skip)]
    z: Vec<f64>,
    #[serde(skip)]
    wx: Vec<f64>,
}

/// Sparse-time softmax SON over the Gaussian sketch (SON App. G.1).
pub type SparseSoftmaxRp = SparseSoftmax<SparseRpCurvature>;

/// Sparse-time softmax SON over Oja's sketch (SON §4, App. H).
pub type SparseSoftmaxOja = SparseSoftmax<SparseOjaCurvature>;

impl SparseSoftmax<SparseFdCurvature> {
    /// FD: `Φ = αI + BᵀB`, sketch size `m ≥ 1`, `α` finite and `> 0`, over input dimension `dim`
    /// (`d̃ = dim + 1` with an intercept, `d̃ ≥ 2m`); `seed` of the initial basis.
    pub fn fd(
        classes: usize,
        dim: usize,
        m: usize,
        alpha: f64,
        seed: u64,
        params: SoftmaxParams,
    ) -> Result<Self, LearnError> {
        Self::build_fd(classes, dim, m, alpha, false, seed, params)
    }

    /// RFD: `α = α₀ + Σδ/2` (Luo et al. 2019), otherwise as [`SparseSoftmax::fd`].
    pub fn rfd(
        classes: usize,
        dim: usize,
        m: usize,
        alpha0: f64,
        seed: u64,
        params: SoftmaxParams,
    ) -> Result<Self, LearnError> {
        Self::build_fd(classes, dim, m, alpha0, true, seed, params)
    }

    fn build_fd(
        classes: usize,
        dim: usize,
        m: usize,
        alpha: f64,
        regularized: bool,
        seed: u64,
        params: SoftmaxParams,
    ) -> Result<Self, LearnError> {
        let de = checked_dim(dim, m, alpha, &params)?;
        if de < 2 * m {
            return Err(LearnError::InvalidParameter(format!(
                "the sparse-time softmax learner over FD needs 2m ≤ d (+1 with an intercept): \
                 m = {m}, d = {de}; for such a small d use the dense representation"
            )));
        }
        let rank = super::columns::initial_rank(de, m);
        let curv = SparseFdCurvature::new(m, rank, alpha, regularized);
        Self::from_parts(classes, dim, params, Init::Structured { seed }, curv)
    }

    /// The sketch's `BᵀB` as a dense `d̃ × d̃` matrix (`O(d̃²)`, for tests: the dense learner's
    /// is its curvature's FD buffer).
    pub fn covariance(&self) -> Vec<f64> {
        self.curv.covariance(&self.w.cols)
    }

    /// Number of FD shrinks so far.
    pub fn shrinks(&self) -> u64 {
        self.curv.shrinks
    }

    /// `Σ_t δ_t`, the total shrinkage of the shared feature-side sketch: FD's bound
    /// `‖GᵀG − BᵀB‖₂ ≤ Σδ` (Liberty 2013; Ghashami et al. 2016, Thm. 1.1) for the rows
    /// `G = [√(c·ω_s)·x̃_s]` the sketch received, as the binary sparse FD learner's
    /// [`total_shrinkage`](crate::linear::sparse::SparseFd::total_shrinkage).
    pub fn total_shrinkage(&self) -> f64 {
        self.curv.shrink_total
    }
}

impl SparseSoftmax<SparseRpCurvature> {
    /// RP: `Φ = αI + SᵀS` with the Gaussian sketch `S` (rows `r ~ N(0, I/m)` drawn as the dense
    /// `RpCurvature::new(d̃, m, α, seed)` draws them), sketch size `m ≥ 1`, `α` finite and `> 0`.
    pub fn rp(
        classes: usize,
        dim: usize,
        m: usize,
        alpha: f64,
        seed: u64,
        params: SoftmaxParams,
    ) -> Result<Self, LearnError> {
        checked_dim(dim, m, alpha, &params)?;
        let curv = SparseRpCurvature::new(m, alpha, seed);
        Self::from_parts(classes, dim, params, Init::Zero, curv)
    }
}

impl SparseSoftmax<SparseOjaCurvature> {
    /// Oja: `Φ⁻¹x̃ = (x̃ − Vᵀdiag(κ)Vx̃)/α`, sketch size `m ≥ 1`, `α` finite and `> 0`, Oja's
    /// learning-rate constant `c > 0` of `γ_t = min(c/t, 1)`, `seed` of the initial directions
    /// ([`initial_directions`](super::initial_directions)`(d̃, m, seed)`).
    pub fn oja(
        classes: usize,
        dim: usize,
        m: usize,
        alpha: f64,
        oja_c: f64,
        seed: u64,
        params: SoftmaxParams,
    ) -> Result<Self, LearnError> {
        let de = checked_dim(dim, m, alpha, &params)?;
        if !(oja_c.is_finite() && oja_c > 0.0) {
            return Err(LearnError::InvalidParameter(format!(
                "oja learning-rate constant c must be finite and > 0, got {oja_c}"
            )));
        }
        let rank = super::columns::initial_rank(de, m);
        let curv = SparseOjaCurvature::new(m, rank, alpha, oja_c);
        Self::from_parts(classes, dim, params, Init::Structured { seed }, curv)
    }

    /// Oja's estimated eigenvalues `λ`.
    pub fn eigenvalues(&self) -> &[f64] {
        &self.curv.lambda
    }
}

/// Checks what every sparse-time softmax learner needs (`m ≥ 1`, `α` finite and `> 0`, no
/// diagonal adaptation, valid softmax parameters); returns `d̃`.
fn checked_dim(
    dim: usize,
    m: usize,
    alpha: f64,
    params: &SoftmaxParams,
) -> Result<usize, LearnError> {
    let de = dim + check_softmax_params(params)?;
    if params.diag.is_some() {
        return Err(LearnError::InvalidParameter(
            "the sparse-time softmax learner takes diagonal adaptation as a wrapper \
             (DiagonalScaled), not in its parameters"
                .into(),
        ));
    }
    if !(alpha.is_finite() && alpha > 0.0) {
        return Err(LearnError::InvalidParameter(format!(
            "alpha must be finite and > 0, got {alpha}"
        )));
    }
    if m == 0 {
        return Err(LearnError::InvalidParameter(
            "the sparse-time softmax learner needs a sketch size m ≥ 1".into(),
        ));
    }
    Ok(de)
}

impl<C: HeadsCurvature> SparseSoftmax<C> {
    /// `W = 0` over a column store of `d̃` columns with `K` heads, started at `init`.
    fn from_parts(
        classes: usize,
        dim: usize,
        params: SoftmaxParams,
        init: Init,
        curv: C,
    ) -> Result<Self, LearnError> {
        let gamma = ClassFactor::new(classes, params.ridge)?;
        let de = dim + check_softmax_params(&params)?;
        let m = curv.size();
        let cols = LazyColumns::with_heads(de, m, classes, init);
        Ok(SparseSoftmax {
            k: classes,
            dim,
            params,
            w: SparseWeights {
                cols,
                b: vec![0.0; classes * m],
            },
            curv,
            gamma,
            t: 0,
            refused: 0,
            pscale: 0.0,
            ext: Extended::default(),
            z: Vec::new(),
            wx: Vec::new(),
        })
    }

    /// The hyper-parameters.
    pub fn params(&self) -> &SoftmaxParams {
        &self.params
    }

    /// The class-side factor `Γ = Σ̄ + λI`.
    pub fn class_factor(&self) -> &ClassFactor {
        &self.gamma
    }

    /// The sketch size `m`.
    pub fn size(&self) -> usize {
        self.curv.size()
    }

    /// The `α` in use (`α₀ + Σδ/2` for RFD).
    pub fn alpha(&self) -> f64 {
        self.curv.alpha()
    }

    /// Number of lazy rebases (changes of basis / transfers of `Zᵀb_k` into `w̄_k`) so far.
    pub fn rebases(&self) -> u64 {
        self.w.cols.rebases()
    }

    /// `W`, row-major `K × d̃` (the intercept's weight last in each row), as
    /// [`SoftmaxSon::weights`](crate::linear::multiclass::SoftmaxSon::weights): `O(d̃·(m² + K·m))`,
    /// for inspection and tests.
    pub fn weights(&self) -> Vec<f64> {
        let (k, m, de) = (self.k, self.curv.size(), self.w.cols.dim());
        let mut w = vec![0.0; k * de];
        for j in 0..de {
            let slot = self.w.cols.peek_slot(j);
            let z = &slot[Z..Z + m];
            for h in 0..k {
                w[h * de + j] = slot[head(m, h)] + dot(z, &self.w.b[h * m..(h + 1) * m]);
            }
        }
        self.curv.add_head_weights(&mut w, k);
        w
    }

    /// `Zx̃` into `z` and `w̄_kᵀx̃` into `wx`, bringing the example's columns up to date; returns
    /// `‖x̃‖²`.
    fn gather(&mut self, xt: Row<'_>, z: &mut [f64], wx: &mut [f64]) -> f64 {
        let m = z.len();
        z.iter_mut().for_each(|v| *v = 0.0);
        wx.iter_mut().for_each(|v| *v = 0.0);
        let mut xx = 0.0;
        let cols = &mut self.w.cols;
        for_each_nz(xt, |j, v| {
            let slot = cols.current(j);
            for (h, acc) in wx.iter_mut().enumerate() {
                *acc += slot[head(m, h)] * v;
            }
            xx += v * v;
            super::axpy::axpy(z, &slot[Z..Z + m], v);
        });
        xx
    }

    /// The scores `z_k = w̄_kᵀx̃ + b_kᵀ(Zx̃) (+ c_kᵀ(Gx̃))` of the gathered example (after
    /// `begin`), and whether they cancel (see the module documentation).
    fn gathered_scores(&mut self, z: &[f64], wx: &[f64]) -> (Vec<f64>, bool) {
        let (k, m) = (self.k, self.curv.size());
        let mut worst = (0.0, 0.0, -1.0);
        let s = (0..k)
            .map(|h| {
                let rest = dot(&self.w.b[h * m..(h + 1) * m], z) + self.curv.own_score(h, k);
                let size = wx[h].abs() + rest.abs();
                if size > worst.2 {
                    worst = (wx[h], rest, size);
                }
                wx[h] + rest
            })
            .collect();
        (s, cancels(worst.0, worst.1, &mut self.pscale))
    }

    /// `W += u (Φ⁻¹x̃)ᵀ` (module documentation) unless a touched `w̄_kj`, a `b_k` or a `c_k`
    /// would become non-finite or too large; `z = Zx̃` with the current sketch.
    fn step(&mut self, xt: Row<'_>, u: &[f64], z: &[f64], what: &str) -> Result<(), LearnError> {
        let (k, m) = (self.k, self.curv.size());
        self.curv.solve(z, m);
        let alpha = self.curv.alpha();
        let f: Vec<f64> = u.iter().map(|a| a / alpha).collect();
        let v = self.curv.solved();
        let mut ok = (0..k).all(|h| {
            let bh = &self.w.b[h * m..(h + 1) * m];
            bh.iter().zip(v).all(|(b, vi)| weight_ok(b - f[h] * vi))
        }) && self.curv.own_step_ok(&f);
        let cols = &mut self.w.cols;
        for_each_nz(xt, |j, xj| {
            let slot = cols.slot(j);
            ok &= (0..k).all(|h| weight_ok(slot[head(m, h)] + f[h] * xj));
        });
        if !ok {
            self.refused += 1;
            return Err(LearnError::Diverged(format!(
                "{what} step, example {}",
                self.t
            )));
        }
        let v = self.curv.solved();
        for (h, fh) in f.iter().enumerate() {
            let bh = &mut self.w.b[h * m..(h + 1) * m];
            bh.iter_mut().zip(v).for_each(|(b, vi)| *b -= fh * vi);
        }
        self.curv.own_step(&f);
        let cols = &mut self.w.cols;
        for_each_nz(xt, |j, xj| {
            let slot = cols.slot(j);
            for (h, fh) in f.iter().enumerate() {
                slot[head(m, h)] += fh * xj;
            }
        });
        Ok(())
    }

    /// SON's projection onto `{|z_k| ≤ C}` in the `I ⊗ Φ` norm; clamps `s`.
    fn project(
        &mut self,
        xt: Row<'_>,
        xx: f64,
        z: &[f64],
        s: &mut [f64],
    ) -> Result<(), LearnError> {
        let (clip, m) = (self.params.clip, self.curv.size());
        let alpha = self.curv.alpha();
        let q = (xx - self.curv.quad(z, m)) / alpha;
        let floor = 1e-12 * xx / alpha.max(1e-300);
        if !(q.is_finite() && q > floor) {
            return Ok(());
        }
        let a = clip_coefficients(s, clip, q);
        self.step(xt, &a, z, "projection")?;
        s.iter_mut().for_each(|v| *v = v.clamp(-clip, clip));
        Ok(())
    }

    /// The sketch update with `ĝ = √(cω)·x̃` and, where the sketch's columns change (RP, Oja),
    /// the heads' compensation ([`SparseWeights::write_update`]) and the model's follow-up
    /// (Oja: a change of basis when `V = FZ` cancels); `z ← Z'x̃`.
    fn update_sketch(&mut self, g: ToSketch<'_>, z: &mut [f64]) -> Result<(), LearnError> {
        let m = self.curv.size();
        if self.curv.prepare_update(g, z, &mut self.w, m)?.is_some() {
            self.w.write_update(g.x, self.curv.delta(), g.s);
            self.curv.after_update(&mut self.w, z);
        }
        self.curv.check(&self.w.b, self.t)
    }

    /// One round on an extended, validated row ([`SoftmaxSon`]'s steps 1–4 in this
    /// representation).
    ///
    /// [`SoftmaxSon`]: crate::linear::multiclass::SoftmaxSon
    fn learn_extended(
        &mut self,
        xt: Row<'_>,
        class: usize,
        weight: f64,
        z: &mut [f64],
        wx: &mut [f64],
    ) -> Result<Vec<f64>, LearnError> {
        let xx = self.gather(xt, z, wx);
        self.curv.scratch();
        self.curv.begin(xt);
        let (mut s, flush) = self.gathered_scores(z, wx);
        if s.iter().any(|v| v.abs() > self.params.clip) {
            self.project(xt, xx, z, &mut s)?;
        }
        let p = normalize_log(&s);
        if weight == 0.0 {
            return Ok(p);
        }
        let u = match class_coefficients(&mut self.gamma, &p, class, weight) {
            Ok(u) => u,
            Err(e) => {
                self.refused += 1;
                return Err(e);
            }
        };
        let g = ToSketch {
            x: xt,
            s: (self.params.c * weight).sqrt(),
            xx,
            example: self.t,
        };
        if let Err(e) = self.update_sketch(g, z) {
            self.refused += 1;
            return Err(e);
        }
        self.step(xt, &u, z, "Newton")?;
        if flush {
            self.curv.transfer(&mut self.w, z);
        }
        Ok(p)
    }

    /// The scores of an extended row without changing anything (stale columns are brought up
    /// to date in a copy).
    fn scores_extended(&self, xt: Row<'_>) -> Vec<f64> {
        let (k, m, de) = (self.k, self.curv.size(), self.w.cols.dim());
        let (mut z, mut wx) = (vec![0.0; m], vec![0.0; k]);
        for_each_nz(xt, |j, v| {
            if j < de {
                let slot = self.w.cols.peek_slot(j);
                for (h, acc) in wx.iter_mut().enumerate() {
                    *acc += slot[head(m, h)] * v;
                }
                super::axpy::axpy(&mut z, &slot[Z..Z + m], v);
            }
        });
        let mut s: Vec<f64> = (0..k)
            .map(|h| wx[h] + dot(&self.w.b[h * m..(h + 1) * m], &z))
            .collect();
        self.curv.add_own_scores(xt, &mut s);
        s
    }

    /// Checks a loaded learner's state (issue 26), see `validate.rs`.
    pub(crate) fn check_loaded(&self) -> Result<(), String> {
        let extra = check_softmax_params(&self.params).map_err(|e| e.to_string())?;
        if self.params.diag.is_some() {
            return Err("a sparse-time softmax learner with diagonal adaptation".into());
        }
        let cols = &self.w.cols;
        if self.k < 2 || cols.heads() != self.k || self.dim + extra != cols.dim() {
            return Err(format!(
                "{} classes over dimension {} in a column store of {} heads and dimension {}",
                self.k,
                self.dim,
                cols.heads(),
                cols.dim()
            ));
        }
        super::validate::check_softmax(self)?;
        if !self.pscale.is_finite() {
            return Err(format!("the score scale is {}", self.pscale));
        }
        // Every weight of W as the dense learner checks its own (`O(d̃·(m² + K·m))`, as a binary
        // sparse learner's check): a column, transform or transfer the file made non-finite or
        // huge shows here.
        let w = self.weights();
        if let Some(j) = w.iter().position(|v| !weight_ok(*v)) {
            return Err(format!(
                "weight {j} is {:e} (beyond any a step may produce, {:e})",
                w[j],
                crate::linear::MAX_WEIGHT
            ));
        }
        self.gamma.check_loaded(self.k).map_err(|e| e.to_string())
    }

    /// The number of classes (for the checks).
    pub(super) fn heads(&self) -> usize {
        self.k
    }
}

impl<C: HeadsCurvature> MulticlassLearner for SparseSoftmax<C> {
    fn classes(&self) -> usize {
        self.k
    }

    fn dim(&self) -> usize {
        self.dim
    }

    /// `clip(W x̃, −C, C)`.
    fn scores(&self, x: Row<'_>) -> Vec<f64> {
        let clip = self.params.clip;
        let mut ext = Extended::default();
        let xt = ext.row(x, self.dim, self.params.bias);
        let mut z = self.scores_extended(xt);
        z.iter_mut().for_each(|s| *s = s.clamp(-clip, clip));
        z
    }

    fn predict_proba(&self, x: Row<'_>) -> Vec<f64> {
        normalize_log(&self.scores(x))
    }

    fn learn(&mut self, x: Row<'_>, class: usize, weight: f64) -> Result<Vec<f64>, LearnError> {
        check_multiclass(&x, class, weight, self.dim, self.k)?;
        self.w.cols.prefetch(x);
        self.t += 1;
        let mut ext = std::mem::take(&mut self.ext);
        let (mut z, mut wx) = (std::mem::take(&mut self.z), std::mem::take(&mut self.wx));
        z.resize(self.curv.size(), 0.0);
        wx.resize(self.k, 0.0);
        let xt = ext.row(x, self.dim, self.params.bias);
        let r = self.learn_extended(xt, class, weight, &mut z, &mut wx);
        (self.ext, self.z, self.wx) = (ext, z, wx);
        r
    }

    fn refused(&self) -> u64 {
        self.refused
    }

    fn examples_seen(&self) -> u64 {
        self.t
    }
}
