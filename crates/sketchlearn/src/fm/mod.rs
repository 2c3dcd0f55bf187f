//! Online factorization machines: Sketched FTRL with Generalized Frequent Directions and the
//! baselines of the SFTRL paper (Luo et al., "Sketched Follow-The-Regularized-Leader for Online
//! Factorization Machine", KDD 2018).
//!
//! The convex learners work on the compact FM `z = âᵀΘâ`, `â = [x; 1]`, `Θ` symmetric
//! `(d+1) × (d+1)` (paper §2.2; `âᵀΘâ = w₀ + wᵀx + xᵀXx` with `Θ = [X, w/2; wᵀ/2, w₀]`), whose
//! per-example gradient is the rank-one `q_t â_t â_tᵀ`, `q_t = φ'_t(z_t)` (eq. 2).
//!
//! | learner | paper | state | per example |
//! |---|---|---|---|
//! | [`Sftrl`] per-row (`sftrl`) | Alg. 4 (GFD Alg. 2) | `O(m·d)` | see [`FactoredGfd`] |
//! | [`Sftrl`] doubling (`sftrl-fast`) | Alg. 5 (GFD Alg. 3) | `O(m·d)` | amortised, see [`FactoredGfd`] |
//! | [`SftrlSplit`] (`sftrl-split`) | Alg. 5 with the first-order part exact and a jointly truncated sketch of the pairwise part (this crate) | `O(m·d)` | see [`SftrlSplit`] |
//! | [`DenseConvexFm`] FTRL (`ftrl`) | Alg. 1, eq. 4 | `(d+1)²` | `O(nnz²)` (+ projection) |
//! | [`DenseConvexFm`] OGD (`ogd`) | §5.1 baseline, step `η/√t` | `(d+1)²` | `O(nnz²)` (+ projection) |
//! | [`Ocg`] (`ocg`) | §5.1 baseline (compact convexified FM) | sparse `Σ∇f` + atoms | power iterations |
//! | [`FmSgd`] (`fm-sgd`) | Rendle's non-convex FM (§6) | `(k+1)·d` | `O(k·nnz)` |
//!
//! Every learner implements [`OnlineLearner`]: [`learn`](OnlineLearner::learn) returns the
//! prediction made before the update, so [`eval::progressive`](crate::eval::progressive) and
//! [`eval::evaluate`](crate::eval::evaluate) score them like the linear learners. The constant of
//! `â` is added internally: inputs are the plain features `x` (indices `< dim`).
//!
//! **A refused row changes nothing.** A row that [`learn`](OnlineLearner::learn) answers with an
//! error leaves the learner as it was (its state, its count, the running label mean of
//! [`LabelCentred`]) and the next predictions identical: the input is validated first, and
//! every learner checks its step before it changes anything — the prediction and the gradient
//! scale finite and the size of the rank-one term at most `MAX_STEP_SIZE = 10¹⁵⁰` (SFTRL,
//! sftrl-split, and FTRL, OGD and OCG through `quadratic_step.rs`), every touched parameter
//! finite after the step (FM-SGD) — or refuses it with [`LearnError::Diverged`]. The bound
//! keeps the sketches' Gram matrices finite; a failure inside a sketch after it passed (its
//! eigen-solver meeting a non-finite matrix) would not be undone. `tests/suite/fm_refusal.rs`
//! pins the property for every algorithm, SFTRL backend and sftrl-split compression, with both
//! losses.
//!
//! [`FmConfig`] validates hyper-parameters and builds an [`AnyFm`]; [`FmModel`] stores one (with
//! the ratings encoder, when the data were ratings) in a versioned, checksummed model file of
//! kind [`FM_MODEL_KIND`].
//!
//! ```
//! use sketchlearn::fm::{FmAlgorithm, FmConfig};
//! use sketchlearn::linear::OnlineLearner;
//! use sketchlearn::Row;
//! let config = FmConfig::new(FmAlgorithm::SftrlFast);
//! let mut fm = config.build(5).unwrap();
//! let p = fm.learn(Row::Sparse { indices: &[0, 3], values: &[1.0, 1.0] }, 4.0, 1.0).unwrap();
//! assert_eq!(p, 0.0); // no label seen yet: the running label mean μ₁ = 0
//! let x = Row::Sparse { indices: &[1], values: &[1.0] };
//! assert!(fm.predict(x) > 3.9); // centred at μ₂ = 4 (label_mean.rs)
//! assert!(FmConfig { eta: -1.0, ..config }.build(5).is_err());
//! ```

mod convex;
mod factored;
mod fm_sgd;
mod label_mean;
mod ocg;
mod quadratic_step;
pub mod run;
mod sftrl;
mod sftrl_split;
mod side_trailer;
mod validate;

pub use convex::{project_l1_ball, project_nuclear_ball, ConvexKind, DenseConvexFm, NuclearBall};
pub use factored::{Compression, FactoredFd, FactoredGfd};
pub use fm_sgd::{FmSgd, FmSgdParams};
pub use label_mean::{LabelCentred, RunningMean};
pub use ocg::{Ocg, OcgParams};
pub use sftrl::{Sftrl, SftrlBackend};
pub use sftrl_split::{FirstOrderStep, SftrlSplit};

use crate::data::ratings::RatingsEncoder;
use crate::dispatch::enum_dispatch;
use crate::linear::{LearnError, OnlineLearner, StepSchedule};
use crate::loss::Loss;
use crate::model::{self, ModelError};
use crate::sketch::FdVariant;
use crate::{Example, Row};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::fmt;
use std::path::Path;
use std::str::FromStr;

/// The kind tag of FM model files.
pub const FM_MODEL_KIND: &str = "fm-learner";

/// The initial intercept `μ` must be finite.
pub(crate) fn check_intercept(mu: f64) -> Result<(), LearnError> {
    if !mu.is_finite() {
        return Err(LearnError::InvalidParameter(format!(
            "intercept must be finite, got {mu}"
        )));
    }
    Ok(())
}

pub(crate) fn check_positive(name: &str, x: f64) -> Result<(), LearnError> {
    if !(x.is_finite() && x > 0.0) {
        return Err(LearnError::InvalidParameter(format!(
            "{name} must be finite and > 0, got {x}"
        )));
    }
    Ok(())
}

/// The largest sketch size `m` (SFTRL) and rank `k` (FM-SGD): the factored sketch holds
/// `O(m²)` coefficients and Gram entries per side and FM-SGD `k·d` factors, so that a larger
/// value (from a flag or a crafted model file) is refused before anything is allocated.
pub const MAX_FM_SIZE: usize = 4096;

/// `what` (a sketch size or a rank) is in `1..=`[`MAX_FM_SIZE`].
pub(crate) fn check_size(what: &str, n: usize) -> Result<(), LearnError> {
    if n == 0 {
        return Err(LearnError::InvalidParameter(format!(
            "{what} must be at least 1"
        )));
    }
    if n > MAX_FM_SIZE {
        return Err(LearnError::InvalidParameter(format!(
            "{what} must be at most {MAX_FM_SIZE}, got {n}"
        )));
    }
    Ok(())
}

/// The largest measure of a step's rank-one term `q·ââᵀ` (the learner's own: a largest entry,
/// a squared row norm) at which a step is still taken — far from f64 overflow, since its
/// square enters Gram matrices and quadratic forms.
pub(crate) const MAX_STEP_SIZE: f64 = 1e150;

/// The refused-step rule every FM learner applies before it changes its state: the step is
/// refused ([`LearnError::Diverged`]) when the prediction `z` or the gradient scale `q` is not
/// finite, or when `size`, the learner's measure of its rank-one term, passes
/// [`MAX_STEP_SIZE`].
pub(crate) fn check_step(z: f64, q: f64, size: f64) -> Result<(), LearnError> {
    if !z.is_finite() || !q.is_finite() || size > MAX_STEP_SIZE {
        Err(LearnError::Diverged(format!(
            "prediction {z}, gradient scale {q}"
        )))
    } else {
        Ok(())
    }
}

/// Writes `â = [x; 1]` as sparse indices/values: the non-zeros of `x` below `dim`, then
/// `(dim, 1)`.
pub(crate) fn augment(x: Row<'_>, dim: usize, idx: &mut Vec<u32>, val: &mut Vec<f64>) {
    idx.clear();
    val.clear();
    match x {
        Row::Dense(v) => {
            for (i, &a) in v.iter().enumerate().take(dim) {
                if a != 0.0 {
                    idx.push(i as u32);
                    val.push(a);
                }
            }
        }
        Row::Sparse { indices, values } => {
            for (&i, &a) in indices.iter().zip(values) {
                if (i as usize) < dim && a != 0.0 {
                    idx.push(i);
                    val.push(a);
                }
            }
        }
    }
    idx.push(dim as u32);
    val.push(1.0);
}

/// The augmented row `â` of `x` (see [`augment`]) in new buffers, for a prediction.
pub(crate) fn augmented(x: Row<'_>, dim: usize) -> (Vec<u32>, Vec<f64>) {
    let (mut idx, mut val) = (Vec::new(), Vec::new());
    augment(x, dim, &mut idx, &mut val);
    (idx, val)
}

/// The non-zeros of `x` below `dim`: `â` without its constant coordinate.
pub(crate) fn in_range(x: Row<'_>, dim: usize) -> (Vec<u32>, Vec<f64>) {
    let (mut idx, mut val) = augmented(x, dim);
    idx.pop();
    val.pop();
    (idx, val)
}

/// The start of a learning step: checks the example ([`crate::linear::check_example`]) and
/// writes its augmented row `â` into the learner's scratch buffers, taken from `idx` and `val`
/// (the step puts them back when it ends, so that steps do not allocate).
pub(crate) fn step_row(
    x: Row<'_>,
    y: f64,
    weight: f64,
    dim: usize,
    idx: &mut Vec<u32>,
    val: &mut Vec<f64>,
) -> Result<(Vec<u32>, Vec<f64>), LearnError> {
    crate::linear::check_example(&x, y, weight, dim)?;
    let (mut idx, mut val) = (std::mem::take(idx), std::mem::take(val));
    augment(x, dim, &mut idx, &mut val);
    Ok((idx, val))
}

/// The pairwise part `Σ_{j≠k} Θ_jk x_j x_k` of a compact model `z = âᵀΘâ` from its quadratic form
/// `quad(idx, val) = vᵀΘv` on sparse `v`: `quad(x) − Σ_j x_j²·quad(e_j)` over the non-zeros of `x`
/// below `dim` (the constant coordinate of `â` left out). `O(nnz)` quadratic forms.
pub(crate) fn pairwise_from_quad(
    x: Row<'_>,
    dim: usize,
    quad: impl Fn(&[u32], &[f64]) -> f64,
) -> f64 {
    let (idx, val) = in_range(x, dim);
    let diagonal: f64 = idx
        .iter()
        .zip(&val)
        .map(|(&j, &v)| v * v * quad(&[j], &[1.0]))
        .sum();
    quad(&idx, &val) - diagonal
}

/// Scales the features of `ex` to unit Euclidean norm (a zero row is left as it is): the
/// per-row normalisation of the binary-classification experiments.
///
/// ```
/// use sketchlearn::Example;
/// let mut ex = Example { label: 1.0, weight: 1.0, indices: vec![0, 1], values: vec![3.0, 4.0] };
/// sketchlearn::fm::l2_normalize(&mut ex);
/// assert_eq!(ex.values, vec![0.6, 0.8]);
/// ```
pub fn l2_normalize(ex: &mut Example) {
    let n: f64 = ex.values.iter().map(|v| v * v).sum::<f64>().sqrt();
    if n > 0.0 && n.is_finite() {
        ex.values.iter_mut().for_each(|v| *v /= n);
    }
}

/// The FM algorithms, by their command-line names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum FmAlgorithm {
    /// SFTRL, per-row GFD (Alg. 4).
    Sftrl,
    /// SFTRL with doubling space (Alg. 5).
    SftrlFast,
    /// SFTRL with an exact first-order part and a jointly truncated sketch of the pairwise part
    /// ([`SftrlSplit`], doubling buffer).
    SftrlSplit,
    /// Full-matrix FTRL (Alg. 1).
    Ftrl,
    /// Full-matrix OGD, step `η/√t`.
    Ogd,
    /// Online conditional gradient on the nuclear-norm ball.
    Ocg,
    /// Rendle's non-convex FM by SGD.
    FmSgd,
}

impl FmAlgorithm {
    /// Every algorithm, in a fixed order.
    pub const ALL: [FmAlgorithm; 7] = [
        FmAlgorithm::Sftrl,
        FmAlgorithm::SftrlFast,
        FmAlgorithm::SftrlSplit,
        FmAlgorithm::Ftrl,
        FmAlgorithm::Ogd,
        FmAlgorithm::Ocg,
        FmAlgorithm::FmSgd,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            FmAlgorithm::Sftrl => "sftrl",
            FmAlgorithm::SftrlFast => "sftrl-fast",
            FmAlgorithm::SftrlSplit => "sftrl-split",
            FmAlgorithm::Ftrl => "ftrl",
            FmAlgorithm::Ogd => "ogd",
            FmAlgorithm::Ocg => "ocg",
            FmAlgorithm::FmSgd => "fm-sgd",
        }
    }
}

impl fmt::Display for FmAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for FmAlgorithm {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        FmAlgorithm::ALL
            .into_iter()
            .find(|a| a.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown FM algorithm '{s}' (expected one of: {})",
                    FmAlgorithm::ALL.map(|a| a.name()).join(", ")
                )
            })
    }
}

/// Every hyper-parameter of an FM learner; [`FmConfig::build`] validates them.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct FmConfig {
    /// The algorithm.
    pub algorithm: FmAlgorithm,
    /// Sketch size `m` (SFTRL).
    pub size: usize,
    /// Step size `η` (SFTRL, FTRL, OGD's `η` of `η/√t`, OCG's `η` of `F_t`, FM-SGD's rate;
    /// sftrl-split: the first-order part's step).
    pub eta: f64,
    /// sftrl-split: step `η_p` of the pairwise part.
    pub eta_pairwise: f64,
    /// sftrl-split: how the pairwise sketch is compressed.
    pub compression: Compression,
    /// sftrl-split: the first-order part's step.
    pub first_order: FirstOrderStep,
    /// The loss `φ` (square loss for ratings, logistic for ±1 labels).
    pub loss: Loss,
    /// Rank `k` (FM-SGD).
    pub rank: usize,
    /// Seed (FM-SGD initial factors, OCG's initial vector).
    pub seed: u64,
    /// GFD implementation of SFTRL.
    pub backend: SftrlBackend,
    /// Nuclear-norm radius `τ` (OCG: required; FTRL/OGD: `∞` = unconstrained).
    pub radius: f64,
    /// FTRL/OGD: project every this many steps (1 = exact).
    pub project_every: u64,
    /// OCG: examples per linear minimisation.
    pub ocg_block: u64,
    /// OCG: `c` of `γ_t = min(1, c/√t)`.
    pub ocg_gamma: f64,
    /// OCG: maximum power iterations per step.
    pub power_iters: usize,
    /// FM-SGD: step schedule.
    pub schedule: StepSchedule,
    /// FM-SGD: learning rate of the linear weights (default `eta`).
    pub eta_linear: Option<f64>,
    /// FM-SGD: learning rate of the intercept (default `eta`).
    pub eta_intercept: Option<f64>,
    /// FM-SGD: L2 penalty of the linear weights.
    pub reg_w: f64,
    /// FM-SGD: L2 penalty of the factors.
    pub reg_v: f64,
    /// FM-SGD: standard deviation of the initial factors.
    pub init_std: f64,
    /// Initial intercept `μ`: the convex learners start from (and FTRL/OCG regularise towards)
    /// `Θ₁ = μ·e eᵀ` (`e` the constant coordinate of `â`), FM-SGD starts with `w₀ = μ`. The paper
    /// uses 0; River's MovieLens tutorial uses 3. `None` (the default): the running mean of the
    /// labels learned so far for the squared loss ([`LabelCentred`], `label_mean.rs`), 0 for the
    /// classification losses. In a model file `None` is written as a NaN `f64`, which a fixed
    /// intercept never is, so the layout is the one of format versions 4 to 8.
    #[serde(with = "intercept_in_file")]
    pub intercept: Option<f64>,
    /// FTRL/OGD: the largest `(d+1)²` allowed for the dense matrix.
    pub max_dense_entries: usize,
}

impl FmConfig {
    /// The defaults for `algorithm` with the square loss: [`FmConfig::for_loss`].
    pub fn new(algorithm: FmAlgorithm) -> Self {
        Self::for_loss(algorithm, Loss::Squared)
    }

    /// The defaults for `algorithm` and `loss`: `m = 10`, rank 10, no constraint for FTRL/OGD,
    /// the intercept `None` (the running label mean for the squared loss, 0 otherwise), and step sizes measured on the shared data (`docs/results/fm_movielens.md`
    /// for the square loss on one-hot ratings, `docs/results/fm_binary.md` for the other losses
    /// on unit-norm rows):
    ///
    /// | algorithm | square loss | logistic (and other) loss |
    /// |---|---|---|
    /// | sftrl, sftrl-fast | η = 0.015 | η = 0.3 |
    /// | sftrl-split (AdaGrad first-order part, β = 5) | η = 0.2, η_p = 0.5 | η = 1, η_p = 0.3 |
    /// | ftrl | η = 0.015 | η = 0.1 |
    /// | ogd (η/√t) | η = 1 | η = 4 |
    /// | ocg | η = 0.01, τ = 10, γ_t = 0.2/√t | η = 1, τ = 10, γ_t = 0.2/√t |
    /// | fm-sgd | η = 0.1 (factors), 0.05 (linear), 0.02 (intercept) | η = 0.05 |
    ///
    /// The fm-sgd square-loss rates are River's MovieLens tutorial rates (0.05, 0.025, 0.01)
    /// doubled, because River's squared loss `(p − y)²` has twice the gradient of `½(p − y)²`.
    ///
    /// ```
    /// use sketchlearn::fm::{FmAlgorithm, FmConfig};
    /// use sketchlearn::loss::Loss;
    /// assert_eq!(FmConfig::for_loss(FmAlgorithm::SftrlFast, Loss::Logistic).eta, 0.3);
    /// assert_eq!(FmConfig::new(FmAlgorithm::Ftrl).eta, 0.015);
    /// ```
    pub fn for_loss(algorithm: FmAlgorithm, loss: Loss) -> Self {
        let square = loss == Loss::Squared;
        let eta = match (algorithm, square) {
            (FmAlgorithm::Sftrl | FmAlgorithm::SftrlFast, true) => 0.015,
            (FmAlgorithm::Sftrl | FmAlgorithm::SftrlFast, false) => 0.3,
            (FmAlgorithm::SftrlSplit, true) => 0.2,
            (FmAlgorithm::SftrlSplit, false) => 1.0,
            (FmAlgorithm::Ftrl, true) => 0.015,
            (FmAlgorithm::Ftrl, false) => 0.1,
            (FmAlgorithm::Ogd, true) => 1.0,
            (FmAlgorithm::Ogd, false) => 4.0,
            (FmAlgorithm::Ocg, true) => 0.01,
            (FmAlgorithm::Ocg, false) => 1.0,
            (FmAlgorithm::FmSgd, true) => 0.1,
            (FmAlgorithm::FmSgd, false) => 0.05,
        };
        let (eta_linear, eta_intercept) = if algorithm == FmAlgorithm::FmSgd && square {
            (Some(0.05), Some(0.02))
        } else {
            (None, None)
        };
        FmConfig {
            algorithm,
            size: 10,
            eta,
            eta_pairwise: if square { 0.5 } else { 0.3 },
            compression: Compression::Truncate,
            first_order: FirstOrderStep::AdaGrad { beta: 5.0 },
            loss,
            rank: 10,
            seed: 0,
            backend: SftrlBackend::Factored,
            radius: if algorithm == FmAlgorithm::Ocg {
                10.0
            } else {
                f64::INFINITY
            },
            project_every: 1,
            ocg_block: 1,
            ocg_gamma: 0.2,
            power_iters: 20,
            schedule: StepSchedule::Constant,
            eta_linear,
            eta_intercept,
            reg_w: 0.0,
            reg_v: 0.0,
            init_std: 0.1,
            intercept: None,
            max_dense_entries: 1 << 27,
        }
    }

    /// Checks every hyper-parameter without building anything (the command line's check before
    /// it reads data, and the check of a loaded model's configuration): what
    /// [`FmConfig::build`] refuses for any dimension.
    ///
    /// ```
    /// use sketchlearn::fm::{FmAlgorithm, FmConfig, MAX_FM_SIZE};
    /// let config = FmConfig::new(FmAlgorithm::Sftrl);
    /// assert!(config.check().is_ok());
    /// assert!(FmConfig { size: MAX_FM_SIZE + 1, ..config }.check().is_err());
    /// assert!(FmConfig { eta: f64::NAN, ..config }.check().is_err());
    /// ```
    pub fn check(&self) -> Result<(), LearnError> {
        check_positive("eta", self.eta)?;
        if self.radius.is_nan() || self.radius <= 0.0 {
            return Err(LearnError::InvalidParameter(format!(
                "nuclear-norm radius must be > 0 (inf = unconstrained), got {}",
                self.radius
            )));
        }
        if let Some(mu) = self.intercept {
            check_intercept(mu)?;
        }
        match self.algorithm {
            FmAlgorithm::Sftrl | FmAlgorithm::SftrlFast => {
                Sftrl::check_params(self.size, self.sftrl_variant(), self.eta)
            }
            FmAlgorithm::SftrlSplit => SftrlSplit::check_params(
                self.size,
                FdVariant::Doubling,
                self.eta,
                self.eta_pairwise,
                self.first_order,
            ),
            FmAlgorithm::Ftrl | FmAlgorithm::Ogd => {
                DenseConvexFm::check_params(self.eta, self.ball())
            }
            FmAlgorithm::Ocg => {
                if !self.radius.is_finite() {
                    return Err(LearnError::InvalidParameter(
                        "OCG needs a finite nuclear-norm radius".into(),
                    ));
                }
                Ocg::check_params(&self.ocg_params())
            }
            FmAlgorithm::FmSgd => FmSgd::check_params(&self.fm_sgd_params()),
        }
    }

    /// The FD buffer of SFTRL: per row (`sftrl`) or doubling (`sftrl-fast`).
    fn sftrl_variant(&self) -> FdVariant {
        if self.algorithm == FmAlgorithm::Sftrl {
            FdVariant::PerRow
        } else {
            FdVariant::Doubling
        }
    }

    /// The learner is centred at the running label mean: no intercept given, squared loss.
    pub fn centres_at_label_mean(&self) -> bool {
        self.intercept.is_none() && self.loss == Loss::Squared
    }

    /// The fixed intercept the learner itself is centred at (0 when none is given).
    fn fixed_intercept(&self) -> f64 {
        self.intercept.unwrap_or(0.0)
    }

    /// FTRL/OGD's constraint: none for an infinite radius.
    fn ball(&self) -> Option<NuclearBall> {
        self.radius.is_finite().then_some(NuclearBall {
            radius: self.radius,
            every: self.project_every,
        })
    }

    fn ocg_params(&self) -> OcgParams {
        OcgParams {
            eta: self.eta,
            radius: self.radius,
            gamma: self.ocg_gamma,
            block: self.ocg_block,
            power_iters: self.power_iters,
            seed: self.seed,
            intercept: self.fixed_intercept(),
        }
    }

    fn fm_sgd_params(&self) -> FmSgdParams {
        FmSgdParams {
            rank: self.rank,
            eta: self.eta,
            eta_linear: self.eta_linear,
            eta_intercept: self.eta_intercept,
            schedule: self.schedule,
            reg_w: self.reg_w,
            reg_v: self.reg_v,
            init_std: self.init_std,
            intercept: self.fixed_intercept(),
            seed: self.seed,
        }
    }

    /// Validates the hyper-parameters ([`FmConfig::check`]) and builds the learner for `dim`
    /// features: centred at the running label mean ([`LabelCentred`]) when
    /// [`FmConfig::centres_at_label_mean`].
    pub fn build(&self, dim: usize) -> Result<AnyFm, LearnError> {
        self.check()?;
        let fm = self.build_fixed(dim)?;
        Ok(if self.centres_at_label_mean() {
            AnyFm::LabelCentred(Box::new(LabelCentred::new(fm)))
        } else {
            fm
        })
    }

    /// The learner centred at [`FmConfig::fixed_intercept`].
    fn build_fixed(&self, dim: usize) -> Result<AnyFm, LearnError> {
        Ok(match self.algorithm {
            FmAlgorithm::Sftrl | FmAlgorithm::SftrlFast => AnyFm::Sftrl(
                Sftrl::new(
                    dim,
                    self.size,
                    self.sftrl_variant(),
                    self.eta,
                    self.loss,
                    self.backend,
                )?
                .with_intercept(self.fixed_intercept())?,
            ),
            FmAlgorithm::SftrlSplit => AnyFm::SftrlSplit(
                SftrlSplit::new(
                    dim,
                    self.size,
                    FdVariant::Doubling,
                    self.eta,
                    self.eta_pairwise,
                    self.loss,
                )?
                .with_compression(self.compression)?
                .with_first_order_step(self.first_order)?
                .with_intercept(self.fixed_intercept())?,
            ),
            FmAlgorithm::Ftrl | FmAlgorithm::Ogd => {
                let kind = if self.algorithm == FmAlgorithm::Ftrl {
                    ConvexKind::Ftrl
                } else {
                    ConvexKind::Ogd(StepSchedule::InverseSqrt)
                };
                AnyFm::Dense(
                    DenseConvexFm::new(
                        dim,
                        kind,
                        self.eta,
                        self.loss,
                        self.ball(),
                        self.max_dense_entries,
                    )?
                    .with_intercept(self.fixed_intercept())?,
                )
            }
            FmAlgorithm::Ocg => AnyFm::Ocg(Ocg::new(dim, self.loss, self.ocg_params())?),
            FmAlgorithm::FmSgd => AnyFm::FmSgd(FmSgd::new(dim, self.loss, self.fm_sgd_params())?),
        })
    }

    /// A short description, e.g. `sftrl-fast m=10 eta=0.01 squared`.
    pub fn describe(&self) -> String {
        let mut s = match self.algorithm {
            FmAlgorithm::Sftrl | FmAlgorithm::SftrlFast => {
                let mut s = format!("{} m={} eta={}", self.algorithm, self.size, self.eta);
                if self.backend == SftrlBackend::Reference {
                    s.push_str(" backend=reference");
                }
                s
            }
            FmAlgorithm::SftrlSplit => {
                let mut s = format!(
                    "sftrl-split m={} eta={} eta_pairwise={}",
                    self.size, self.eta, self.eta_pairwise
                );
                if self.compression == Compression::Shrink {
                    s.push_str(" compression=shrink");
                }
                match self.first_order {
                    FirstOrderStep::Constant => s.push_str(" first_order=constant"),
                    FirstOrderStep::AdaGrad { beta } => {
                        s.push_str(&format!(" first_order=adagrad beta={beta}"))
                    }
                }
                s
            }
            FmAlgorithm::Ftrl | FmAlgorithm::Ogd => {
                let mut s = format!("{} eta={}", self.algorithm, self.eta);
                if self.radius.is_finite() {
                    s.push_str(&format!(
                        " radius={} every={}",
                        self.radius, self.project_every
                    ));
                }
                s
            }
            FmAlgorithm::Ocg => format!(
                "ocg eta={} radius={} block={} gamma={}",
                self.eta, self.radius, self.ocg_block, self.ocg_gamma
            ),
            FmAlgorithm::FmSgd => {
                let mut s = format!("fm-sgd k={} eta={}", self.rank, self.eta);
                if let Some(e) = self.eta_linear {
                    s.push_str(&format!(" eta_linear={e}"));
                }
                if let Some(e) = self.eta_intercept {
                    s.push_str(&format!(" eta_intercept={e}"));
                }
                s.push_str(&format!(
                    " reg_w={} reg_v={} init_std={}",
                    self.reg_w, self.reg_v, self.init_std
                ));
                s
            }
        };
        match self.intercept {
            Some(mu) if mu != 0.0 => s.push_str(&format!(" intercept={mu}")),
            None if self.centres_at_label_mean() => s.push_str(" intercept=mean"),
            _ => {}
        }
        s.push_str(&format!(" {}", self.loss));
        s
    }
}

/// An FM learner chosen at run time.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[allow(clippy::large_enum_variant)]
pub enum AnyFm {
    /// SFTRL (either variant).
    Sftrl(Sftrl),
    /// Split SFTRL.
    SftrlSplit(SftrlSplit),
    /// Full-matrix FTRL or OGD.
    Dense(DenseConvexFm),
    /// Online conditional gradient.
    Ocg(Ocg),
    /// Rendle's FM by SGD.
    FmSgd(FmSgd),
    /// One of the others centred at the running label mean (the squared loss's default).
    LabelCentred(Box<LabelCentred>),
}

enum_dispatch!($ dispatch, AnyFm { Sftrl, SftrlSplit, Dense, Ocg, FmSgd, LabelCentred });

impl AnyFm {
    /// Bytes held by the model state (what grows with `d` and `m`).
    pub fn state_bytes(&self) -> usize {
        dispatch!(self, l => l.state_bytes())
    }

    /// The part of the prediction for `x` that a linear model cannot express: the pairwise
    /// interactions `Σ_{j≠k} Θ_jk x_j x_k` of the compact convex models (SFTRL, FTRL, OGD, OCG;
    /// SFTRL's sketched `Θ`) or `Σ_{j<k} ⟨v_j, v_k⟩ x_j x_k` of Rendle's FM. The rest of the
    /// prediction is the intercept, the linear terms and (compact models) the diagonal
    /// `Θ_jj x_j²`. Features at or beyond `dim()` are ignored, as in `predict`.
    ///
    /// ```
    /// use sketchlearn::fm::{FmAlgorithm, FmConfig};
    /// use sketchlearn::linear::OnlineLearner;
    /// use sketchlearn::Row;
    /// let mut fm = FmConfig::new(FmAlgorithm::FmSgd).build(3).unwrap();
    /// for _ in 0..100 {
    ///     fm.learn(Row::Sparse { indices: &[0, 1], values: &[1.0, 1.0] }, 4.0, 1.0).unwrap();
    /// }
    /// // A single feature has no pairs.
    /// assert_eq!(fm.pairwise(Row::Sparse { indices: &[1], values: &[1.0] }), 0.0);
    /// let both = Row::Sparse { indices: &[0, 1], values: &[1.0, 1.0] };
    /// assert!(fm.pairwise(both).abs() > 0.0);
    /// ```
    pub fn pairwise(&self, x: Row<'_>) -> f64 {
        finite_prediction(dispatch!(self, l => l.pairwise(x)))
    }

    /// Prepares for fast predictions once learning is over (SFTRL's factored sketch empties its
    /// sparse buffers); predictions do not change. Learning may go on afterwards, but not to the
    /// bit as it would have without the compaction (the sketch's arithmetic changes): save a
    /// model before compacting it to resume it exactly (`sketchlearn fm -f` does).
    pub fn compact(&mut self) -> Result<(), LearnError> {
        match self {
            AnyFm::Sftrl(s) => s.compact(),
            AnyFm::SftrlSplit(s) => s.compact(),
            AnyFm::LabelCentred(c) => c.inner.compact(),
            _ => Ok(()),
        }
    }
}

/// How [`FmConfig::intercept`] is stored: `Some(μ)` as `μ` (always finite), `None` as NaN.
mod intercept_in_file {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(mu: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(mu.unwrap_or(f64::NAN))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
        let mu = f64::deserialize(d)?;
        Ok((!mu.is_nan()).then_some(mu))
    }
}

/// The largest prediction magnitude an FM reports: [`MAX_WEIGHT`](crate::linear::MAX_WEIGHT),
/// the linear learners' bound on a weight.
pub const MAX_PREDICTION: f64 = crate::linear::MAX_WEIGHT;

/// Keeps a reported prediction finite. The learners refuse a step that would make their state
/// non-finite, but a finite state can still be large enough (extreme steps such as `η = 10³⁰⁸`,
/// or huge feature values) that the quadratic form `âᵀΘâ` overflows: `±∞` is reported as
/// `±MAX_PREDICTION`, and `NaN` (`∞ − ∞` between the two sides of a signed sketch) as 0, the
/// prediction of a model that knows nothing. Finite predictions within the bound are unchanged.
///
/// ```
/// use sketchlearn::fm::{finite_prediction, MAX_PREDICTION};
/// assert_eq!(finite_prediction(3.5), 3.5);
/// assert_eq!(finite_prediction(f64::INFINITY), MAX_PREDICTION);
/// assert_eq!(finite_prediction(-1e300), -MAX_PREDICTION);
/// assert_eq!(finite_prediction(f64::NAN), 0.0);
/// ```
pub fn finite_prediction(p: f64) -> f64 {
    if p.is_nan() {
        0.0
    } else {
        p.clamp(-MAX_PREDICTION, MAX_PREDICTION)
    }
}

impl OnlineLearner for AnyFm {
    fn dim(&self) -> usize {
        dispatch!(self, l => l.dim())
    }
    fn predict(&self, x: Row<'_>) -> f64 {
        finite_prediction(dispatch!(self, l => l.predict(x)))
    }
    fn learn(&mut self, x: Row<'_>, y: f64, weight: f64) -> Result<f64, LearnError> {
        dispatch!(self, l => l.learn(x, y, weight)).map(finite_prediction)
    }
    fn weights(&self) -> Cow<'_, [f64]> {
        dispatch!(self, l => l.weights())
    }
}

/// A trained FM with what is needed to use it again: the configuration, the learner's full
/// state, the ratings encoder (id maps and side features) when the data were ratings, and
/// whether rows were L2-normalised.
///
/// ```
/// use sketchlearn::fm::{FmAlgorithm, FmConfig, FmModel};
/// use sketchlearn::linear::OnlineLearner;
/// use sketchlearn::Row;
/// let config = FmConfig::new(FmAlgorithm::Sftrl);
/// let mut model = FmModel::new(config, config.build(4).unwrap());
/// model.learner.learn(Row::Sparse { indices: &[1, 2], values: &[1.0, 1.0] }, 3.0, 1.0).unwrap();
/// let path = std::env::temp_dir().join(format!("doc-fm-{}.skl", std::process::id()));
/// model.save(&path).unwrap();
/// let back = FmModel::load(&path).unwrap();
/// let x = Row::Sparse { indices: &[1, 2], values: &[1.0, 1.0] };
/// assert_eq!(back.learner.predict(x), model.learner.predict(x));
/// # std::fs::remove_file(&path).ok();
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FmModel {
    /// Hyper-parameters.
    pub config: FmConfig,
    /// The learner's state.
    pub learner: AnyFm,
    /// The ratings encoder (none for LIBSVM input).
    pub encoder: Option<RatingsEncoder>,
    /// Rows were scaled to unit norm before learning.
    pub normalize: bool,
    /// Examples learned so far.
    pub examples_seen: u64,
}

impl FmModel {
    /// A model that has learned nothing yet (no encoder, no normalisation).
    pub fn new(config: FmConfig, learner: AnyFm) -> Self {
        FmModel {
            config,
            learner,
            encoder: None,
            normalize: false,
            examples_seen: 0,
        }
    }

    /// Writes the model atomically (kind [`FM_MODEL_KIND`]); the ratings encoder's side
    /// columns, when there are any, follow the model in the payload as an optional trailer
    /// ([`side_trailer`]), so files without them keep their layout.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), ModelError> {
        match self.encoder.as_ref().and_then(RatingsEncoder::side_columns) {
            None => model::save(path, FM_MODEL_KIND, self),
            Some(columns) => model::save(path, FM_MODEL_KIND, &(self, columns)),
        }
    }

    /// Reads a model written by [`FmModel::save`]; a corrupted or foreign file, or one whose
    /// state is not one training produces (a configuration that fails [`FmConfig::check`], sizes
    /// that disagree, an index out of range, a number that is not finite: `fm/validate.rs`), is
    /// an error.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, ModelError> {
        model::load_with(path, FM_MODEL_KIND, decode)
    }

    /// [`FmModel::load`] from a model file image (`source_name` names it in errors).
    ///
    /// ```
    /// use sketchlearn::fm::{FmAlgorithm, FmConfig, FmModel, FM_MODEL_KIND};
    /// let config = FmConfig::new(FmAlgorithm::FmSgd);
    /// let image = sketchlearn::model::to_bytes(FM_MODEL_KIND, &FmModel::new(config, config.build(3).unwrap())).unwrap();
    /// assert!(FmModel::from_bytes(&image, "memory").is_ok());
    /// ```
    pub fn from_bytes(bytes: &[u8], source_name: &str) -> Result<Self, ModelError> {
        model::from_bytes_with(bytes, FM_MODEL_KIND, source_name, decode)
    }
}

/// Decodes an FM payload (the layout is the same in format versions 4 to 7; the side columns'
/// trailer, [`side_trailer::decode`]) and checks it.
fn decode(version: u32, payload: &[u8], source_name: &str) -> Result<FmModel, ModelError> {
    let model = side_trailer::decode(version, payload, source_name)?;
    validate::check(&model).map_err(|reason| ModelError::Invalid {
        path: source_name.to_owned(),
        reason,
    })?;
    Ok(model)
}
