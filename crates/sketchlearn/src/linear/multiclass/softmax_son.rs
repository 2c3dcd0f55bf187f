//! Multinomial (softmax) logistic regression with a sketched, Kronecker-factored Newton step.
//!
//! # Model and loss
//! `K` classes, weights `W ∈ ℝ^{K×d̃}` (one row `w_k` per class), `x̃ = [x; b]` the features
//! with the intercept's constant `b` appended (`d̃ = d + 1`; `x̃ = x` without intercept).
//! Scores `z = W x̃`, probabilities `p = softmax(z)`, loss `ℓ(W) = −ln p_y = lse(z) − z_y`.
//! Gradient `G = ∇_W ℓ = (p − e_y) x̃ᵀ = r x̃ᵀ` (rank one), and with `vec(W)` stacking the rows,
//! the Hessian of one example is
//!
//! ```text
//! ∇²ℓ = (diag(p) − ppᵀ) ⊗ x̃x̃ᵀ  =:  Σ_p ⊗ x̃x̃ᵀ .
//! ```
//!
//! It does not depend on `y`, so it is also the Fisher information.
//!
//! # From SON to a Kronecker-factored step
//! SON (Luo, Agarwal, Cesa-Bianchi, Langford 2016, "Efficient Second Order Online Learning by
//! Sketching", Alg. 1; `son-*.txt`) steps `u_{t+1} = w_t − A_t⁻¹ g_t` with
//! `A_t = αI + Σ_{s≤t} c·ĝ_s ĝ_sᵀ`, the curvature of the examples seen so far (for a margin loss
//! `ĝĝᵀ = ℓ'²xxᵀ`, whose expectation under the model is the logistic Hessian `p(1−p)xxᵀ`).
//! For softmax with importance weights `ω_s` the same accumulation is
//! `A_t = αI + c Σ_s ω_s Σ_{p_s} ⊗ x̃_s x̃_sᵀ`, a `Kd̃ × Kd̃` matrix. K-FAC (Martens & Grosse
//! 2015, "Optimizing Neural Networks with Kronecker-factored Approximate Curvature", §3)
//! approximates a sum of Kronecker products by the Kronecker product of the sums, here
//!
//! ```text
//! Σ_s ω_s Σ_{p_s} ⊗ x̃_s x̃_sᵀ  ≈  Σ̄_t ⊗ F_t,   Σ̄_t = Σ_s ω_s Σ_{p_s} / Σ_s ω_s,   F_t = Σ_s ω_s x̃_s x̃_sᵀ
//! ```
//!
//! (exact when every `p_s` is the same, e.g. the first example). With damping on each factor
//! (K-FAC §6.3's factored Tikhonov damping) the curvature is
//!
//! ```text
//! A_t ≈ Γ_t ⊗ Φ_t,   Γ_t = Σ̄_t + λI  (K × K, [`ClassFactor`]),   Φ_t = αI + c·F_t  (d̃ × d̃).
//! ```
//!
//! Shampoo (Gupta, Koren, Singer 2018, "Shampoo: Preconditioned Stochastic Tensor
//! Optimization") preconditions a matrix parameter the same way, `L^{−1/4} G R^{−1/4}` from
//! gradient statistics; here the per-example Hessian *is* a Kronecker product, so the full
//! inverses are used (a Newton step, as in K-FAC). Because `(Γ ⊗ Φ)⁻¹ vec(G) = vec(Γ⁻¹ G Φ⁻¹)`
//! for symmetric factors and `G = ω r x̃ᵀ`, the step is a rank-one update:
//!
//! ```text
//! W ← W − Γ⁻¹ G Φ⁻¹ = W − (Γ⁻¹ ω r)(Φ⁻¹ x̃)ᵀ .
//! ```
//!
//! # The sketch (feature side)
//! `F_t` is sketched by FD or RFD (one sketch shared by the `K` classes): the rows
//! `√(c ω_s)·x̃_s` are inserted, so `c·F_t ≈ BᵀB` with `B` the `ℓ × d̃` sketch (`ℓ ≤ 2m`), and
//! `Φ = αI + BᵀB` is inverted with Woodbury,
//! `Φ⁻¹x̃ = (x̃ − Bᵀ(αI + BBᵀ)⁻¹Bx̃)/α` — exactly the [`Curvature`] of binary SON
//! ([`FdCurvature`](crate::linear::curvature::FdCurvature)). With RFD (Luo, Chen, Zhang, Zhang
//! 2019, "Robust Frequent Directions", Alg. 5/6; `rfd-*.txt`) `α = α₀ + Σδ/2` compensates the
//! shrinkage, as in RFD-SON. Any [`Curvature`] works (the full `d̃ × d̃` one gives the exact
//! Kronecker-factored Newton step the tests compare against).
//!
//! # Order of a round (SON Alg. 1)
//! 1. Project (optional, `C < ∞`): if some `|z_k| > C`, move the scores to the box
//!    `clip(z, −C, C)` by the smallest change in the `I ⊗ Φ_{t−1}` norm,
//!    `W ← W + (clip(z) − z)(Φ⁻¹x̃)ᵀ / (x̃ᵀΦ⁻¹x̃)` (SON Lemma 1 applied to each class row; the class
//!    factor does not enter because the target scores are fixed). Skipped when the denominator
//!    has cancelled.
//! 2. Predict `p = softmax(z)` (what `learn` returns).
//! 3. Curvature: `Γ` takes `ω Σ_p`, the sketch takes `√(cω)·x̃`.
//! 4. Step `W ← W − (Γ⁻¹ ω r)(Φ⁻¹x̃)ᵀ` with the updated factors.
//!
//! # Diagonal adaptation (optional, [`SoftmaxParams::diag`])
//! SON §5.2 applied to `x̃`: the learner sees `D^{−½}x̃` with `D = d₀I + Σ diag(ggᵀ)` over the
//! rows of the raw gradients, `D_jj = d₀ + Σ_s ω_s²‖r_s‖²x̃_{s,j}²`; the same scaled row is
//! used for prediction and update in a round, `D` is updated afterwards (`O(nnz)`). Off by
//! default: on dna it did not help (0.149 against 0.125 at the default `c`, `λ`).
//!
//! # K rows, no reference class
//! `W` has `K` rows rather than `K − 1` with a reference class: every class is treated alike
//! (no arbitrary class whose weights are pinned at 0, no change of the model with the order of
//! the classes), and nothing is lost: `Σ_p 1 = 0` and `rᵀ1 = 0`, so `1` is an eigenvector of
//! `Γ` (eigenvalue `λ`) and `Γ⁻¹r ⊥ 1` — the steps never move `W` along `1 ⊗ v`, the direction
//! that does not change `p`, and the ridge `λ` only damps weakly excited class directions. The
//! cost is one extra row of `d̃` weights. (The projection of step 1 can leave the sum-zero
//! subspace; that changes no probability.) For `K = 2` the step on `w₁ − w₂` is binary
//! Newton with the curvature `(Σ̄ + λ/2)(αI + cF)`, `Σ̄` the average `p(1 − p)`.
//!
//! # Guard
//! A step (projection or Newton) that would make a weight non-finite or larger than
//! [`MAX_WEIGHT`](crate::linear::MAX_WEIGHT) is refused, as by the binary learners: the weights
//! stay, [`LearnError::Diverged`] is returned and counted (the curvature factors keep the
//! example). Probabilities come from a max-shifted softmax and are finite for any scores.
//!
//! # Cost per example (honestly)
//! Scores `O(K·nnz)`; `Bx̃` `O(ℓ·nnz)`; the small solves `O(ℓ³)` (refactoring `αI + BBᵀ` after
//! an insert, as binary FD-SON) and `O(K³)` (Cholesky of `Γ`); `Φ⁻¹x̃` is a dense `d̃`-vector
//! (`Bᵀ(…)`: `O(ℓ·d̃)`); the rank-one step writes `K·d̃` weights (`O(K·d̃)`, twice: guard, then
//! apply); FD's doubling shrink is `O(m·d̃)` amortised. In all `O((m + K)·d̃ + m³ + K³)`: the
//! sparse input is accepted but the step is dense-time here. The sparse-time form over a
//! doubling FD/RFD, an RP or an Oja sketch is [`SparseSoftmax`](crate::linear::sparse::SparseSoftmax):
//! each row of `W` kept as `w̄_k + Zᵀb_k (+ Gᵀc_k)` over the shared lazily stored sketch (SON
//! App. G's `w = w̄ + Zᵀb` with `K` heads), `O(m² + ℓ² + (m + K)·nnz + K³)` per example; the
//! diagonal adaptation below is then the wrapper
//! [`DiagonalScaled`](crate::linear::multiclass::DiagonalScaled).

use super::{argmax, check_multiclass, normalize_log, ClassFactor, MulticlassLearner};
use crate::linear::curvature::{AnyCurvature, Curvature};
use crate::linear::{weight_ok, LearnError};
use crate::Row;
use serde::{Deserialize, Serialize};

/// The hyper-parameters of [`SoftmaxSon`] (the feature-side `α`/`α₀` and `m` live in its
/// curvature).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SoftmaxParams {
    /// `c > 0`: the sketch receives `√(c·ω)·x̃` (larger `c`, smaller steps), as SON's `σ + η`.
    pub c: f64,
    /// `λ > 0`: the class-side ridge of `Γ = Σ̄ + λI`.
    pub ridge: f64,
    /// Projection bound `C` on every score (`∞` = no projection).
    pub clip: f64,
    /// The intercept's constant feature (appended at index `d`), or `None`.
    pub bias: Option<f64>,
    /// SON's diagonal adaptation (§5.2) with this `d₀ > 0`, or `None`: the learner sees
    /// `D^{−½}x̃` with `D = d₀I + Σ diag(g gᵀ)` summed over the raw gradients' rows
    /// (`D_jj = d₀ + Σ_s ω_s²‖r_s‖² x̃_{s,j}²`), updated after each round.
    pub diag: Option<f64>,
}

impl Default for SoftmaxParams {
    /// `c = 0.05`, `λ = 0.05`, no projection, intercept constant 1 (chosen in stop 37 with RFD,
    /// `m = 10`, `α₀ = 1.5` on row-scaled input; the untuned default of
    /// [`MulticlassConfig`](super::MulticlassConfig), with its sketch chosen from the input, now
    /// takes `c = 0.2`, `λ = 0.1`: its documentation has the evidence).
    fn default() -> Self {
        SoftmaxParams {
            c: 0.05,
            ridge: 0.05,
            clip: f64::INFINITY,
            bias: Some(1.0),
            diag: None,
        }
    }
}

/// Buffers for the row with the intercept's constant appended.
#[derive(Clone, Debug, Default)]
pub(crate) struct Extended {
    indices: Vec<u32>,
    values: Vec<f64>,
    dense: Vec<f64>,
}

/// `D^{−½}x̃` for an extended row `xt` (same pattern), `D = d₀ + g2`, values written to `out`
/// (shared with the sparse-time learners' [`DiagonalScaled`](super::DiagonalScaled)).
pub(crate) fn scale_row<'a>(xt: Row<'a>, d0: f64, g2: &[f64], out: &'a mut Vec<f64>) -> Row<'a> {
    out.clear();
    match xt {
        Row::Dense(v) => {
            out.extend(v.iter().zip(g2).map(|(x, g)| x / (d0 + g).sqrt()));
            Row::Dense(out)
        }
        Row::Sparse { indices, values } => {
            out.extend(
                indices
                    .iter()
                    .zip(values)
                    .map(|(&i, x)| x / (d0 + g2[i as usize]).sqrt()),
            );
            Row::Sparse {
                indices,
                values: out,
            }
        }
    }
}

impl Extended {
    /// `x̃ = [x; b]` (features at or beyond `d` dropped), or `x` itself without intercept.
    pub(crate) fn row<'a>(&'a mut self, x: Row<'a>, d: usize, bias: Option<f64>) -> Row<'a> {
        let Some(b) = bias else { return x };
        match x {
            Row::Dense(v) => {
                self.dense.clear();
                self.dense.extend(v.iter().take(d));
                self.dense.resize(d, 0.0);
                self.dense.push(b);
                Row::Dense(&self.dense)
            }
            Row::Sparse { indices, values } => {
                self.indices.clear();
                self.values.clear();
                for (&i, &v) in indices.iter().zip(values) {
                    if (i as usize) < d {
                        self.indices.push(i);
                        self.values.push(v);
                    }
                }
                self.indices.push(d as u32);
                self.values.push(b);
                Row::Sparse {
                    indices: &self.indices,
                    values: &self.values,
                }
            }
        }
    }
}

/// Softmax regression with the sketched Kronecker-factored Newton step (see the module
/// documentation for the derivation).
///
/// ```
/// use sketchlearn::linear::curvature::FdCurvature;
/// use sketchlearn::linear::multiclass::{MulticlassLearner, SoftmaxParams, SoftmaxSon};
/// use sketchlearn::sketch::FdVariant;
/// use sketchlearn::Row;
/// // 3 classes, 2 features + intercept: the curvature has dimension 3.
/// let curvature = FdCurvature::rfd(3, 2, FdVariant::Doubling, 1.0).unwrap();
/// let mut son = SoftmaxSon::new(3, curvature, SoftmaxParams::default()).unwrap();
/// let data = [([1.0, 0.0], 0), ([0.0, 1.0], 1), ([-1.0, -1.0], 2)];
/// for _ in 0..20 {
///     for (x, y) in &data {
///         let p = son.learn(Row::Dense(x), *y, 1.0).unwrap();
///         assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
///     }
/// }
/// for (x, y) in &data {
///     assert_eq!(son.predict_class(Row::Dense(x)), *y);
/// }
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SoftmaxSon<C = AnyCurvature> {
    k: usize,
    /// Input dimension `d` (the curvature's is `d̃`).
    dim: usize,
    /// `W`, row-major `K × d̃`.
    w: Vec<f64>,
    curvature: C,
    gamma: ClassFactor,
    params: SoftmaxParams,
    /// Diagonal adaptation's accumulated squared gradients `D − d₀I` (empty without it).
    g2: Vec<f64>,
    t: u64,
    refused: u64,
    #[serde(skip)]
    ext: Extended,
    #[serde(skip)]
    scaled: Vec<f64>,
    #[serde(skip)]
    solved: Vec<f64>,
}

/// The class side of a round (module doc, steps 3–4): `Γ` takes `ω Σ_p`, and the step's class
/// coefficients `u = −Γ⁻¹ω(p − e_y)` (`W ← W + u (Φ⁻¹x̃)ᵀ`).
pub(crate) fn class_coefficients(
    gamma: &mut ClassFactor,
    p: &[f64],
    class: usize,
    weight: f64,
) -> Result<Vec<f64>, LearnError> {
    gamma.add(p, weight);
    let mut u: Vec<f64> = p
        .iter()
        .enumerate()
        .map(|(j, &pj)| weight * (pj - (j == class) as u8 as f64))
        .collect();
    gamma.solve(&mut u)?;
    u.iter_mut().for_each(|a| *a = -*a);
    Ok(u)
}

/// Checks SON's softmax hyper-parameters (`c`, `λ` finite and `> 0`; `C > 0`, ∞ allowed; the
/// intercept constant and `d₀` finite and `> 0`); returns the number of extra coordinates (1
/// with an intercept).
pub(crate) fn check_params(params: &SoftmaxParams) -> Result<usize, LearnError> {
    if !(params.c.is_finite() && params.c > 0.0) {
        return Err(LearnError::InvalidParameter(format!(
            "c must be finite and > 0, got {}",
            params.c
        )));
    }
    if params.clip.is_nan() || params.clip <= 0.0 {
        return Err(LearnError::InvalidParameter(format!(
            "projection bound C must be > 0 (inf = none), got {}",
            params.clip
        )));
    }
    let extra = match params.bias {
        Some(b) if !(b.is_finite() && b > 0.0) => {
            return Err(LearnError::InvalidParameter(format!(
                "the intercept's constant feature must be finite and > 0, got {b}"
            )))
        }
        Some(_) => 1,
        None => 0,
    };
    if let Some(d0) = params.diag {
        if !(d0.is_finite() && d0 > 0.0) {
            return Err(LearnError::InvalidParameter(format!(
                "diagonal initialisation d0 must be finite and > 0, got {d0}"
            )));
        }
    }
    Ok(extra)
}

impl<C: Curvature> SoftmaxSon<C> {
    /// Checks a loaded learner's state (issue 26): valid parameters, `W` of `K × d̃` with
    /// finite entries within [`MAX_WEIGHT`](crate::linear::MAX_WEIGHT), the
    /// diagonal adaptation's `d̃` entries, `d̃ = d + [intercept]`, `K ≥ 2`.
    pub(crate) fn check_loaded(&self) -> Result<(), String> {
        let extra = check_params(&self.params).map_err(|e| e.to_string())?;
        let de = self.curvature.dim();
        if self.k < 2 || self.dim + extra != de || self.w.len() != self.k * de {
            return Err(format!(
                "softmax state of {} classes, dimension {} and {} weights does not match its \
                 curvature of dimension {de}",
                self.k,
                self.dim,
                self.w.len()
            ));
        }
        if self.g2.len() != if self.params.diag.is_some() { de } else { 0 } {
            return Err(format!(
                "{} diagonal statistics for dimension {de}",
                self.g2.len()
            ));
        }
        if let Some(j) = self.w.iter().position(|w| !crate::linear::weight_ok(*w)) {
            return Err(format!(
                "weight {j} is {:e} (beyond any a step may produce, {:e})",
                self.w[j],
                crate::linear::MAX_WEIGHT
            ));
        }
        self.gamma.check_loaded(self.k).map_err(|e| e.to_string())
    }
}

impl<C: Curvature> SoftmaxSon<C> {
    /// `K ≥ 2` classes, `W = 0`; the curvature's dimension is `d + 1` with an intercept, `d`
    /// without. `c`, `λ` finite and `> 0`; `C > 0` (∞ allowed); the intercept constant finite
    /// and `> 0`.
    pub fn new(classes: usize, curvature: C, params: SoftmaxParams) -> Result<Self, LearnError> {
        let gamma = ClassFactor::new(classes, params.ridge)?;
        let extra = check_params(&params)?;
        let de = curvature.dim();
        if de < extra {
            return Err(LearnError::InvalidParameter(
                "with an intercept the curvature needs dimension d + 1 ≥ 1".into(),
            ));
        }
        Ok(SoftmaxSon {
            k: classes,
            dim: de - extra,
            w: vec![0.0; classes * de],
            curvature,
            gamma,
            params,
            g2: if params.diag.is_some() {
                vec![0.0; de]
            } else {
                Vec::new()
            },
            t: 0,
            refused: 0,
            ext: Extended::default(),
            scaled: Vec::new(),
            solved: Vec::new(),
        })
    }

    /// `W`, row-major `K × d̃` (the intercept's weight last in each row).
    pub fn weights(&self) -> &[f64] {
        &self.w
    }

    /// `W` on the rows as given, `K × d̃`: [`weights`](Self::weights) with diagonal adaptation's
    /// scale applied (`w_kj/√D_jj`, the weights of `x̃` rather than of `D^{−½}x̃`).
    pub fn input_weights(&self) -> Vec<f64> {
        let Some(d0) = self.params.diag else {
            return self.w.clone();
        };
        let de = self.g2.len();
        self.w
            .iter()
            .enumerate()
            .map(|(i, w)| w / (d0 + self.g2[i % de]).sqrt())
            .collect()
    }

    /// The feature-side curvature `Φ = αI + BᵀB`.
    pub fn curvature(&self) -> &C {
        &self.curvature
    }

    /// The class-side factor `Γ = Σ̄ + λI`.
    pub fn class_factor(&self) -> &ClassFactor {
        &self.gamma
    }

    /// The hyper-parameters.
    pub fn params(&self) -> &SoftmaxParams {
        &self.params
    }

    /// `z = W x̃` for an already extended row.
    fn scores_extended(&self, xt: Row<'_>) -> Vec<f64> {
        let de = self.w.len() / self.k;
        self.w.chunks_exact(de).map(|wk| xt.dot(wk)).collect()
    }

    /// Diagonal adaptation: `D_jj += ω²‖p − e_y‖² x̃_j²` (the raw gradient's row norms).
    fn accumulate_gradient(&mut self, xt: Row<'_>, p: &[f64], class: usize, weight: f64) {
        let f = gradient_rows_factor(p, class, weight);
        match xt {
            Row::Dense(v) => {
                for (g, x) in self.g2.iter_mut().zip(v) {
                    *g += f * x * x;
                }
            }
            Row::Sparse { indices, values } => {
                for (&i, x) in indices.iter().zip(values) {
                    self.g2[i as usize] += f * x * x;
                }
            }
        }
    }

    /// `W += a bᵀ` unless a weight would become non-finite or exceed `MAX_WEIGHT`.
    fn guarded_rank_one(&mut self, a: &[f64], b: &[f64], what: &str) -> Result<(), LearnError> {
        let de = b.len();
        let ok =
            self.w.chunks_exact(de).zip(a).all(|(wk, &ak)| {
                ak == 0.0 || wk.iter().zip(b).all(|(&w, &bj)| weight_ok(w + ak * bj))
            });
        if !ok {
            self.refused += 1;
            return Err(LearnError::Diverged(format!(
                "{what} step, example {}",
                self.t
            )));
        }
        for (wk, &ak) in self.w.chunks_exact_mut(de).zip(a) {
            if ak != 0.0 {
                for (w, &bj) in wk.iter_mut().zip(b) {
                    *w += ak * bj;
                }
            }
        }
        Ok(())
    }

    /// SON's projection onto `{|z_k| ≤ C}` in the `I ⊗ Φ` norm (module doc, step 1); clamps `z`.
    fn project(&mut self, xt: Row<'_>, z: &mut [f64]) -> Result<(), LearnError> {
        let clip = self.params.clip;
        let q = self.curvature.inv_quad(xt);
        let floor = 1e-12 * xt.squared_norm() / self.curvature.alpha().max(1e-300);
        if !(q.is_finite() && q > floor) {
            return Ok(());
        }
        let mut v = std::mem::take(&mut self.solved);
        v.clear();
        v.resize(self.curvature.dim(), 0.0);
        self.curvature.add_solve(xt, 1.0, &mut v);
        let a = clip_coefficients(z, clip, q);
        let r = self.guarded_rank_one(&a, &v, "projection");
        self.solved = v;
        r?;
        z.iter_mut().for_each(|s| *s = s.clamp(-clip, clip));
        Ok(())
    }

    /// One round on an extended, validated row (module doc, steps 1–4).
    fn learn_extended(
        &mut self,
        xt: Row<'_>,
        class: usize,
        weight: f64,
    ) -> Result<Vec<f64>, LearnError> {
        let mut z = self.scores_extended(xt);
        if z.iter().any(|s| s.abs() > self.params.clip) {
            self.project(xt, &mut z)?;
        }
        let p = normalize_log(&z);
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
        let mut v = std::mem::take(&mut self.solved);
        v.clear();
        v.resize(self.curvature.dim(), 0.0);
        let scale = (self.params.c * weight).sqrt();
        let r = match self.curvature.update_and_solve(xt, scale, 1.0, &mut v) {
            Ok(()) => self.guarded_rank_one(&u, &v, "Newton"),
            Err(e) => {
                // The sketch rolled back its insert; nothing changed.
                self.refused += 1;
                Err(e.into())
            }
        };
        self.solved = v;
        r.map(|()| p)
    }
}

impl<C: Curvature> MulticlassLearner for SoftmaxSon<C> {
    fn classes(&self) -> usize {
        self.k
    }

    fn dim(&self) -> usize {
        self.dim
    }

    /// `clip(W x̃, −C, C)`.
    fn scores(&self, x: Row<'_>) -> Vec<f64> {
        let clip = self.params.clip;
        let (mut ext, mut scaled) = (Extended::default(), Vec::new());
        let mut xt = ext.row(x, self.dim, self.params.bias);
        if let Some(d0) = self.params.diag {
            xt = scale_row(xt, d0, &self.g2, &mut scaled);
        }
        let mut z = self.scores_extended(xt);
        z.iter_mut().for_each(|s| *s = s.clamp(-clip, clip));
        z
    }

    /// `softmax(scores)`.
    fn predict_proba(&self, x: Row<'_>) -> Vec<f64> {
        normalize_log(&self.scores(x))
    }

    fn predict_class(&self, x: Row<'_>) -> usize {
        argmax(&self.scores(x))
    }

    fn learn(&mut self, x: Row<'_>, class: usize, weight: f64) -> Result<Vec<f64>, LearnError> {
        check_multiclass(&x, class, weight, self.dim, self.k)?;
        self.t += 1;
        let mut ext = std::mem::take(&mut self.ext);
        let xt = ext.row(x, self.dim, self.params.bias);
        let r = match self.params.diag {
            None => self.learn_extended(xt, class, weight),
            Some(d0) => {
                let mut scaled = std::mem::take(&mut self.scaled);
                let xs = scale_row(xt, d0, &self.g2, &mut scaled);
                let r = self.learn_extended(xs, class, weight);
                if let Ok(p) = &r {
                    self.accumulate_gradient(xt, p, class, weight);
                }
                self.scaled = scaled;
                r
            }
        };
        self.ext = ext;
        r
    }

    fn refused(&self) -> u64 {
        self.refused
    }

    fn examples_seen(&self) -> u64 {
        self.t
    }
}

/// Diagonal adaptation's `ω²‖p − e_y‖²`: the raw gradient `ω(p − e_y)x̃ᵀ`'s row `j` has the
/// squared norm `ω²‖p − e_y‖²x̃_j²`, what `D_jj` accumulates.
pub(crate) fn gradient_rows_factor(p: &[f64], class: usize, weight: f64) -> f64 {
    let r2: f64 = p
        .iter()
        .enumerate()
        .map(|(j, &pj)| (pj - (j == class) as u8 as f64).powi(2))
        .sum();
    weight * weight * r2
}

/// The projection's rank-one coefficients `a_k = (clip(s_k) − s_k) / q`: the step along the
/// row's solved direction (`q = xᵀΦ⁻¹x`) that brings every score `s_k` back into `[−clip, clip]`
/// (module doc, the score projection); shared by the dense and the sparse-time softmax.
pub(crate) fn clip_coefficients(scores: &[f64], clip: f64, q: f64) -> Vec<f64> {
    scores
        .iter()
        .map(|&s| (s.clamp(-clip, clip) - s) / q)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linear::curvature::{FdCurvature, FullCurvature};
    use crate::sketch::FdVariant;

    fn params(bias: Option<f64>) -> SoftmaxParams {
        SoftmaxParams {
            c: 1.0,
            ridge: 0.5,
            clip: f64::INFINITY,
            bias,
            diag: None,
        }
    }

    /// The hand-checked case of the integration tests, on the full curvature: K = 2, d = 1,
    /// α = 1, c = 1, λ = ½, x = 1 of class 0. p = (½, ½), Γ = [[¾, −¼], [−¼, ¾]],
    /// r = (−½, ½) is Γ's eigenvector of eigenvalue 1, Φ = 1 + 1 = 2: W = −r·½ = (¼, −¼).
    #[test]
    fn first_step_by_hand() {
        let mut son =
            SoftmaxSon::new(2, FullCurvature::new(1, 1.0).unwrap(), params(None)).unwrap();
        let p = son.learn(Row::Dense(&[1.0]), 0, 1.0).unwrap();
        assert_eq!(p, vec![0.5, 0.5]);
        assert!((son.weights()[0] - 0.25).abs() < 1e-15);
        assert!((son.weights()[1] + 0.25).abs() < 1e-15);
    }

    #[test]
    fn the_steps_stay_in_the_sum_zero_subspace() {
        let curvature = FdCurvature::rfd(4, 2, FdVariant::Doubling, 1.0).unwrap();
        let mut son = SoftmaxSon::new(3, curvature, params(Some(1.0))).unwrap();
        for t in 0..50 {
            let x = [(t as f64).sin(), (t as f64 * 0.7).cos(), 0.3];
            let _ = son.learn(Row::Dense(&x), t % 3, 1.0).unwrap();
        }
        let w = son.weights();
        for j in 0..4 {
            let s: f64 = (0..3).map(|k| w[k * 4 + j]).sum();
            assert!(s.abs() < 1e-12, "column {j} sums to {s}");
        }
    }

    #[test]
    fn invalid_examples_change_nothing() {
        let curvature = FdCurvature::fd(3, 2, FdVariant::Doubling, 1.0).unwrap();
        let mut son = SoftmaxSon::new(3, curvature, params(Some(1.0))).unwrap();
        assert!(son.learn(Row::Dense(&[1.0, 0.0]), 3, 1.0).is_err());
        assert!(son.learn(Row::Dense(&[f64::NAN, 0.0]), 0, 1.0).is_err());
        assert!(son.learn(Row::Dense(&[1.0, 0.0, 1.0]), 0, 1.0).is_err());
        assert!(son.learn(Row::Dense(&[1.0, 0.0]), 0, -1.0).is_err());
        assert!(son.weights().iter().all(|&w| w == 0.0));
        assert_eq!(son.examples_seen(), 0);
    }

    #[test]
    fn a_zero_weight_predicts_without_learning() {
        let curvature = FdCurvature::fd(3, 2, FdVariant::Doubling, 1.0).unwrap();
        let mut son = SoftmaxSon::new(3, curvature, params(Some(1.0))).unwrap();
        let p = son.learn(Row::Dense(&[1.0, 2.0]), 1, 0.0).unwrap();
        assert_eq!(p, vec![1.0 / 3.0; 3]);
        assert!(son.weights().iter().all(|&w| w == 0.0));
    }

    #[test]
    fn projection_clamps_the_scores() {
        let curvature = FullCurvature::new(2, 1.0).unwrap();
        let p = SoftmaxParams {
            clip: 0.5,
            ..params(None)
        };
        let mut son = SoftmaxSon::new(3, curvature, p).unwrap();
        for _ in 0..30 {
            let _ = son.learn(Row::Dense(&[3.0, 1.0]), 0, 1.0).unwrap();
        }
        let s = son.scores(Row::Dense(&[3.0, 1.0]));
        assert!(s.iter().all(|v| v.abs() <= 0.5 + 1e-12), "{s:?}");
        assert_eq!(son.predict_class(Row::Dense(&[3.0, 1.0])), 0);
    }

    #[test]
    fn diagonal_adaptation_learns_badly_scaled_features() {
        let p = SoftmaxParams {
            // d₀ below the tiny feature's squared gradients, so that D rescales it.
            diag: Some(1e-8),
            ..params(Some(1.0))
        };
        let curvature = FdCurvature::fd(3, 2, FdVariant::Doubling, 0.25).unwrap();
        let mut son = SoftmaxSon::new(3, curvature, p).unwrap();
        let data = [
            ([1000.0, 0.0], 0),
            ([0.0, 0.001], 1),
            ([-1000.0, -0.001], 2),
        ];
        for _ in 0..50 {
            for (x, y) in &data {
                let q = son.learn(Row::Dense(x), *y, 1.0).unwrap();
                assert!((q.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            }
        }
        for (x, y) in &data {
            assert_eq!(son.predict_class(Row::Dense(x)), *y);
        }
    }

    #[test]
    fn rejects_bad_parameters() {
        let cur = || FullCurvature::new(2, 1.0).unwrap();
        assert!(SoftmaxSon::new(1, cur(), params(None)).is_err());
        for bad in [
            SoftmaxParams {
                c: 0.0,
                ..params(None)
            },
            SoftmaxParams {
                ridge: -1.0,
                ..params(None)
            },
            SoftmaxParams {
                clip: 0.0,
                ..params(None)
            },
            SoftmaxParams {
                bias: Some(f64::NAN),
                ..params(None)
            },
            SoftmaxParams {
                diag: Some(0.0),
                ..params(None)
            },
        ] {
            assert!(SoftmaxSon::new(3, cur(), bad).is_err(), "{bad:?}");
        }
    }
}
