//! Choosing a learner at run time: the [`LearnerConfig`] (algorithm, [`CurvatureKind`],
//! [`Representation`] and every hyper-parameter), validated by [`LearnerConfig::check`] into
//! the [`ValidLearnerConfig`] that builds an [`AnyLearner`] (used by the CLI, model files,
//! experiments and bindings).

use super::MixRule;
#[cfg(doc)]
use super::{
    AnyLearner, ConfigError, FeatureScaling, Intercept, Mixture, RowScaling, RunningMean,
    ScaledMixture, TargetStandardization, UnitScaling, ValidLearnerConfig,
};
use crate::loss::Loss;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The mixture's members learn raw rows, where `α₀` counts in absolute units, while a single
/// Newton learner learns rows divided by their running RMS norm ([`RowScaling`]), where `α₀`
/// counts in mean rows: the members take `MEMBER_ALPHA0_SCALE · α₀`, which with the default
/// `α₀ = 0.2` is the `α₀ = 1` chosen for them by `scripts/defaults_sweep.py`.
pub const MEMBER_ALPHA0_SCALE: f64 = 5.0;

/// The step of a single Ada-FD or Sketchy learner is `ADA_FD_STEP_SCALE · η` or
/// `SKETCHY_STEP_SCALE · η`: `-l η` counts in diagonal AdaGrad's units. A full-matrix AdaGrad
/// step divides the gradient by the root of its history as a whole (`G^{-1/2}g`, or `g/δ`
/// outside the sketch), where diagonal AdaGrad divides each coordinate by its own history, so at
/// the same `η` it moves about `1/√d_eff` as far. Measured (one pass, `sketchlearn train --algo
/// A -l η`): on the dense d = 1000, κ = 100 stream Ada-FD at `η = 0.5 / 2` 0.1743 / 0.1231,
/// Sketchy at `η = 0.5 / 2 / 4 / 8` 0.2098 / 0.1709 / 0.1431 / 0.1226 (VW OjaNewton 0.1160, the
/// issue-28 bar 0.1660); on heart, ionosphere, splice, magic04.shuf, mushrooms and w8a.shuf
/// `η = 2` beat `η = 0.5` on every set for both (mushrooms 0.0297 → 0.0090 and 0.0261 → 0.0060).
pub const ADA_FD_STEP_SCALE: f64 = 4.0;
/// See [`ADA_FD_STEP_SCALE`].
pub const SKETCHY_STEP_SCALE: f64 = 8.0;

/// The learning algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Algorithm {
    /// Online gradient descent, step `η/√t`.
    Ogd,
    /// Diagonal AdaGrad.
    AdaGrad,
    /// (Sketched) Online Newton, SON Alg. 1, over a [`CurvatureKind`].
    Newton,
    /// The default: an online [`Mixture`] of sketched Newton learners (one diagonally adapted)
    /// and an AdaGrad grid (the members: [`LearnerConfig::auto_members`]).
    Auto,
    /// AdaGrad at two step sizes, `η` and `8η` (the latter with a slower intercept), mixed
    /// online like [`Algorithm::Auto`] ([`LearnerConfig::adagrad_grid_members`]): a first-order
    /// learner that needs no learning-rate tuning over that range.
    AdaGradGrid,
    /// The running mean of the labels ([`RunningMean`]): the regression baseline, and a member
    /// of [`Algorithm::Auto`] for the squared loss.
    RunningMean,
    /// Ada-FD ([`AdaFd`](super::AdaFd), Wan, Wei & Zhang, IJCAI 2018): full-matrix AdaGrad
    /// `(δI + (BᵀB)^{1/2})⁻¹` on an FD sketch of `size` rows; `δ` is [`LearnerConfig::alpha`],
    /// the step [`ADA_FD_STEP_SCALE`]` · ` [`LearnerConfig::learning_rate`]. Learns row-scaled
    /// data ([`RowScaling`]).
    AdaFd,
    /// Sketchy AdaGrad ([`Sketchy`](super::Sketchy), Feinberg et al., NeurIPS 2023):
    /// `(δI + ρ_{1:t}I + BᵀB)^{-1/2}` with the FD sketch's escaped mass `ρ_{1:t}`; `δ` is
    /// [`LearnerConfig::alpha0`], the step [`SKETCHY_STEP_SCALE`]` · `
    /// [`LearnerConfig::learning_rate`]. Learns row-scaled data ([`RowScaling`]).
    Sketchy,
    /// The default's composition for sparse data ([`LearnerConfig::sparse_data_members`]:
    /// [`Algorithm::Auto`]'s members 2 and 3), mixed like `auto`. A classifier's `auto` becomes
    /// it when the input's first rows are sparse ([`super::sparse_data`]); it may also be asked
    /// for by name. "Sparse" here is the data's, not the [`Representation`].
    AutoSparse,
    /// The default's composition for *very* sparse data
    /// ([`LearnerConfig::very_sparse_data_members`]: [`Algorithm::Auto`]'s member 3, the AdaGrad
    /// grid, on unit-scaled features, with the default's calibrated output): a classifier's
    /// `auto` becomes it when the input's first rows barely share a feature
    /// ([`SparsitySample::is_very_sparse`](super::SparsitySample::is_very_sparse)); it may
    /// also be asked for by name.
    AutoVerySparse,
}

impl Algorithm {
    /// Whether a single learner of this algorithm learns rows divided by their running RMS
    /// norm ([`RowScaling`], [`ValidLearnerConfig::build`]): Newton and the sketched AdaGrads,
    /// whose `α`/`δ` are otherwise in the units of `‖x‖²` (or `‖x‖`).
    pub fn row_scaled(self) -> bool {
        matches!(
            self,
            Algorithm::Newton | Algorithm::AdaFd | Algorithm::Sketchy
        )
    }

    /// Whether it is one of the default's compositions ([`Algorithm::Auto`],
    /// [`Algorithm::AutoSparse`], [`Algorithm::AutoVerySparse`]): members on unit-scaled
    /// features, a calibrated output.
    pub fn is_auto(self) -> bool {
        matches!(
            self,
            Algorithm::Auto | Algorithm::AutoSparse | Algorithm::AutoVerySparse
        )
    }

    /// Whether it learns a sketched Newton learner, alone or as a member — what the choice of
    /// a [`Representation`] applies to.
    pub fn has_newton(self) -> bool {
        matches!(
            self,
            Algorithm::Newton | Algorithm::Auto | Algorithm::AutoSparse
        )
    }

    /// Whether it is a full-matrix AdaGrad on an FD sketch of the gradients (Ada-FD, Sketchy).
    pub fn is_sketched_adagrad(self) -> bool {
        matches!(self, Algorithm::AdaFd | Algorithm::Sketchy)
    }
}

/// The curvature model of the Newton learner (SON Alg. 1): which approximation of the Hessian
/// `A_t = αI + SᵀS` it keeps. Whether its state is dense (`O(md)` per example) or kept in
/// sparse time (`O(m² + m·nnz)`, SON §4) is the separate [`Representation`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CurvatureKind {
    /// `αI` (projected OGD with step `1/α`).
    Identity,
    /// Full `d × d` (FULL-ON).
    Full,
    /// FD sketch, per-row (FD-SON). Its sparse-time learner uses the doubling buffer.
    Fd,
    /// FD sketch, doubling space.
    FdFast,
    /// RFD sketch, per-row (RFD-SON). Its sparse-time learner uses the doubling buffer.
    Rfd,
    /// RFD sketch, doubling space (RFD paper Alg. 6).
    RfdFast,
    /// Gaussian random projection (RP-SON).
    Rp,
    /// Oja's sketch (Oja-SON).
    Oja,
}

impl CurvatureKind {
    /// Whether the curvature has a sparse-time learner ([`Representation::Sparse`]): Oja, RP,
    /// FD and RFD do (FD and RFD with the doubling buffer); identity and full do not.
    pub fn has_sparse_learner(self) -> bool {
        !matches!(self, CurvatureKind::Identity | CurvatureKind::Full)
    }

    /// Whether it is an FD-family sketch (FD, RFD; per-row or doubling).
    pub fn is_fd(self) -> bool {
        matches!(
            self,
            CurvatureKind::Fd | CurvatureKind::FdFast | CurvatureKind::Rfd | CurvatureKind::RfdFast
        )
    }

    /// The name of its sparse-time learner (`oja-sparse`, `rp-sparse`, `fd-sparse`,
    /// `rfd-sparse`), as reports print it; `None` for identity and full.
    pub fn sparse_name(self) -> Option<&'static str> {
        use CurvatureKind::*;
        match self {
            Oja => Some("oja-sparse"),
            Rp => Some("rp-sparse"),
            Fd | FdFast => Some("fd-sparse"),
            Rfd | RfdFast => Some("rfd-sparse"),
            Identity | Full => None,
        }
    }
}

/// How a Newton learner keeps its state: dense (`O(md)` per example) or in sparse time
/// (`O(m² + m·nnz)` per example, SON §4; the same predictions up to rounding,
/// `tests/suite/sparse_equivalence.rs`). `Auto` lets the library choose from the input
/// ([`ValidLearnerConfig::resolve`]): sparse for hashed input or when the average number of
/// non-zeros per example is below `d/10` (FD/RFD: below `d/(4m)`, [`auto_sparse`]).
///
/// [`auto_sparse`]: super::auto_sparse
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Representation {
    /// Chosen from the input when the learner is built for it (a configuration built without
    /// input information, [`ValidLearnerConfig::build`], is dense).
    #[default]
    Auto,
    /// Dense state.
    Dense,
    /// Sparse-time state (Newton and `auto` with curvature oja, rp, fd or rfd).
    Sparse,
}

macro_rules! named_enum {
    ($t:ty, $( $v:path => $n:literal ),+ $(,)?) => {
        impl $t {
            /// Every value, in the order of their command-line names (one list for the names,
            /// the parser and the loops over every value).
            pub const ALL: [$t; [$( $n ),+].len()] = [$( $v ),+];

            /// The command-line name.
            pub fn name(self) -> &'static str {
                match self { $( $v => $n ),+ }
            }
        }
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }
        impl FromStr for $t {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                match s {
                    $( $n => Ok($v), )+
                    _ => Err(format!(
                        "unknown {} '{s}' (expected one of: {})",
                        stringify!($t),
                        [$( $n ),+].join(", ")
                    )),
                }
            }
        }
    };
}

named_enum!(Algorithm, Algorithm::Ogd => "ogd", Algorithm::AdaGrad => "adagrad", Algorithm::Newton => "newton", Algorithm::Auto => "auto", Algorithm::AdaGradGrid => "adagrad-grid", Algorithm::RunningMean => "running-mean", Algorithm::AdaFd => "ada-fd", Algorithm::Sketchy => "sketchy", Algorithm::AutoSparse => "auto-sparse", Algorithm::AutoVerySparse => "auto-very-sparse");
named_enum!(
    CurvatureKind,
    CurvatureKind::Identity => "identity",
    CurvatureKind::Full => "full",
    CurvatureKind::Fd => "fd",
    CurvatureKind::FdFast => "fd-fast",
    CurvatureKind::Rfd => "rfd",
    CurvatureKind::RfdFast => "rfd-fast",
    CurvatureKind::Rp => "rp",
    CurvatureKind::Oja => "oja",
);
named_enum!(
    Representation,
    Representation::Auto => "auto",
    Representation::Dense => "dense",
    Representation::Sparse => "sparse",
);

/// Every hyper-parameter of a linear learner. [`LearnerConfig::check`] validates every value and
/// every combination and returns the [`ValidLearnerConfig`] that builds learners (linfa's
/// parameters → validated-parameters pattern): an impossible request is one [`ConfigError`]
/// with one message, whichever front end made it. [`LearnerConfig::build`] is `check` then
/// build.
///
/// ```
/// use sketchlearn::linear::{
///     ConfigError, CurvatureKind, LearnerConfig, OnlineLearner, Representation,
/// };
/// let valid = LearnerConfig::default().check().unwrap();
/// let learner = valid.build(10).unwrap();
/// assert_eq!(learner.dim(), 10);
///
/// let bad = LearnerConfig { alpha: -1.0, ..LearnerConfig::default() };
/// assert!(matches!(bad.check(), Err(ConfigError::OutOfDomain { name: "alpha", .. })));
/// let full_sparse = LearnerConfig {
///     curvature: CurvatureKind::Full,
///     representation: Representation::Sparse,
///     ..LearnerConfig::default()
/// };
/// assert!(full_sparse.check().unwrap_err().to_string().contains("no sparse-time learner"));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LearnerConfig {
    /// Learning algorithm.
    pub algorithm: Algorithm,
    /// Curvature model (Newton only).
    pub curvature: CurvatureKind,
    /// Sketch size `m` (sketched curvatures).
    pub size: usize,
    /// The loss.
    pub loss: Loss,
    /// Newton: `α` of `A = αI + SᵀS` (`1/α` acts as the step size). A single Newton learner
    /// counts it in units of the mean squared row norm ([`RowScaling`]); the mixture's members
    /// in absolute units.
    pub alpha: f64,
    /// RFD-SON: the initial `α₀` of the RFD sketch (units as `alpha`; the mixture's members
    /// take [`MEMBER_ALPHA0_SCALE`]` · α₀`).
    pub alpha0: f64,
    /// Newton: `c = σ + η` (to-sketch vector `√c·g`).
    pub c: f64,
    /// Projection bound `C` (∞ = no projection); Newton and OGD.
    pub clip: f64,
    /// Wrap the learner in SON's diagonal adaptation.
    pub diag: bool,
    /// Diagonal adaptation's initial `d₀`.
    pub diag_d0: f64,
    /// OGD / AdaGrad learning rate `η`.
    pub learning_rate: f64,
    /// Seed of every random draw (RP, Oja's initial directions).
    pub seed: u64,
    /// Oja's learning-rate constant `c` of `γ_t = min(c/t, 1)`.
    pub oja_c: f64,
    /// Add an intercept: a constant feature at index `d` (like VW's constant feature).
    pub bias: bool,
    /// The intercept's constant feature value (default 1; see [`Intercept`]: below 1 the
    /// bias of a scale-free learner such as AdaGrad moves more slowly than the weights).
    pub bias_value: f64,
    /// Dense or sparse-time state of the Newton learners (and of `auto`'s sketched members);
    /// `Auto` (the default) is resolved from the input by [`ValidLearnerConfig::resolve`], and a
    /// trained model records the choice made.
    pub representation: Representation,
}

impl Default for LearnerConfig {
    /// [`Algorithm::Auto`] (the mixture of [`LearnerConfig::auto_members`]) with `m = 10`,
    /// logistic loss, intercept; its members' parameters: RFD-SON with doubling space, `α₀ = 1`
    /// ([`MEMBER_ALPHA0_SCALE`] times the default `α₀ = 0.2` of a single, row-scaled learner),
    /// `c = 0.1` (the to-sketch vector is `√0.1·g`); FD-SON with diagonal adaptation, `α = α/4
    /// = 0.25`, `d₀ = 0.1`; the AdaGrad grid with learning rates 0.5 and 4 (intercept constant
    /// 1 and 1/32); RFD-SON with `α₀ = 3`, `c = 0.2`.
    /// Mixed by [`MixRule::AdaHedgeCalibrated`] (classification) or [`MixRule::Bayes`] (squared loss).
    ///
    /// Evidence (`docs/results/auto.md`, `cargo run --release -p sketchlearn-repro -- auto`): the mixture is within one
    /// binomial standard error of the best untuned peer (VW, River) on all 12 shared datasets,
    /// and its "why this rule" table compares the other rules and the mixture without member 4.
    /// The members' RFD-SON parameters (`c = 0.1, α₀ = 1`) were chosen by
    /// `scripts/defaults_sweep.py` (`docs/results/defaults.md`): 9 of 11 sets alone. A single
    /// Newton learner learns row-scaled data ([`RowScaling`]), where `α = 1, α₀ = 0.2` keep
    /// every curvature within VW OjaNewton's error + 0.05 on the dense d = 1000, κ = 100 stream
    /// (`scripts/bench_single_learners.py`; with `α₀ = 1`, RFD-SON missed by 0.0005).
    fn default() -> Self {
        LearnerConfig {
            algorithm: Algorithm::Auto,
            curvature: CurvatureKind::RfdFast,
            size: 10,
            loss: Loss::Logistic,
            alpha: 1.0,
            alpha0: 0.2,
            c: 0.1,
            clip: f64::INFINITY,
            diag: false,
            diag_d0: 0.1,
            learning_rate: 0.5,
            seed: 0,
            oja_c: 1.0,
            bias: true,
            bias_value: 1.0,
            representation: Representation::Auto,
        }
    }
}

impl LearnerConfig {
    /// The members of [`Algorithm::Auto`]'s mixture (whatever `self.algorithm` is), in order:
    ///
    /// 1. Newton with `self.curvature` (default RFD-SON, doubling space) and every other
    ///    parameter of `self`: the learner that captures correlated curvature (splice,
    ///    ionosphere, magic04 in `docs/results/son_table3.md`);
    /// 2. the same with diagonal adaptation (SON §5.2) and `α/4`, an RFD curvature replaced by
    ///    FD (RFD's α grows with the sketch, which under the diagonal scaling stalls the steps):
    ///    scale-invariant, it wins on features of very different scales (spam) and on sparse
    ///    binary data (w8a, r8);
    /// 3. the AdaGrad grid ([`Algorithm::AdaGradGrid`]: AdaGrad at `self.learning_rate` and at
    ///    8× it with a slower intercept, mixed): the first-order safety net (heart, australian
    ///    at `η`; spam at `8η`, where tuned AdaGrad beats every sketched member — 0.0800
    ///    against FD-SON + diag's 0.0854). Nested rather than a fifth member: as a fifth
    ///    member it cost ionosphere one mistake (0.1538 → 0.1567, AdaHedge's rate `ln K/Δ`
    ///    and the first predictions change with `K`), nested it changes nothing where
    ///    AdaGrad is not the leader;
    /// 4. member 1 with three times the regularisation (`3α₀`, `3α`) and twice the curvature
    ///    weight (`2c`): smaller, better-conditioned Newton steps, which win on the small dense
    ///    sets where curvature pays (splice, heart) — a second point on the step-size grid, as
    ///    MetaGrad runs several. With the sparse-time curvatures too: every VW-format file
    ///    takes them (hashing makes `d = 2^b`), and a small dense set must get the same learner
    ///    in VW format as in LIBSVM (without member 4, splice in VW format: 0.2320 against
    ///    0.2150; heart 0.2185 against 0.2000). On w8a and r8 it is not the leader and costs a
    ///    quarter of the mixture's time: on sparse data (the rule of
    ///    [`super::sparse_data`], on the data and not on the representation) a classifier's
    ///    `auto` mixes members 2 and 3 only ([`LearnerConfig::sparse_data_members`]).
    ///
    /// Every member learns features brought to unit scale ([`UnitScaling`]: a feature whose
    /// running RMS `r_i` exceeds 1 is standardised if it is a measurement — present in at least
    /// half the rows, varying — and divided by `r_i` otherwise), added by
    /// [`LearnerConfig::build`] (the configurations listed here are the wrapped learners'): on
    /// data within `[−1, 1]` (the 12 shared sets) nothing changes, while on files as distributed
    /// the members' `α`, `α₀`, `η` meet features at the scale they were chosen for
    /// (`docs/results/raw_scales.md`: diabetes_raw 0.3242 → 0.2487, heart_raw 0.2222 → 0.1963,
    /// australian_raw 0.1652 → 0.1522; penguins multiclass 0.0698 → 0.0233).
    ///
    /// ```
    /// use sketchlearn::linear::{Algorithm, CurvatureKind, LearnerConfig};
    /// let m = LearnerConfig::default().auto_members();
    /// assert_eq!(m.len(), 4);
    /// assert_eq!(m[0].curvature, CurvatureKind::RfdFast);
    /// assert!(m[1].diag && m[1].curvature == CurvatureKind::FdFast);
    /// assert_eq!(m[2].algorithm, Algorithm::AdaGradGrid);
    /// assert_eq!((m[3].alpha0, m[3].c), (3.0, 0.2));
    /// ```
    pub fn auto_members(&self) -> Vec<LearnerConfig> {
        if !self.loss.is_classification() {
            return self.regression_members();
        }
        use CurvatureKind::*;
        let newton = self.member_newton();
        let diag = LearnerConfig {
            curvature: match self.curvature {
                Rfd => Fd,
                RfdFast => FdFast,
                other => other,
            },
            alpha: self.alpha / 4.0,
            diag: true,
            ..newton.clone()
        };
        let adagrad = member_adagrad(&newton);
        let cautious = self.member_cautious(&newton);
        vec![newton, diag, adagrad, cautious]
    }

    /// The members of [`Algorithm::AutoSparse`], the default's composition for a classifier on
    /// sparse data ([`super::sparse_data`]): [`auto_members`](Self::auto_members) 2 (FD-SON with
    /// diagonal adaptation) and 3 (the AdaGrad grid), mixed by the same rule.
    ///
    /// Evidence (`cargo run --release -p sketchlearn-repro -- auto-members`,
    /// `docs/results/auto_members.md`): on the sparse streams members 1 and 4 (the two
    /// RFD-SONs) cost about half of the mixture's time and are never its leader — without both,
    /// w8a.shuf 0.0168 → 0.0163, r8_earn_vs_rest 0.0184 → 0.0182, the generated 2^18-feature
    /// stream 0.4133 → 0.4105 (AdaGrad alone 0.4173) — while on the dense sets each is needed
    /// somewhere (mushrooms needs member 1, splice member 4, a9a and magic04 one of them).
    ///
    /// ```
    /// use sketchlearn::linear::{Algorithm, LearnerConfig};
    /// let all = LearnerConfig::default().auto_members();
    /// let sparse = LearnerConfig::default().sparse_data_members();
    /// assert_eq!(sparse, all[1..3].to_vec());
    /// assert_eq!(sparse[1].algorithm, Algorithm::AdaGradGrid);
    /// ```
    pub fn sparse_data_members(&self) -> Vec<LearnerConfig> {
        self.auto_members()[1..3].to_vec()
    }

    /// The members of [`Algorithm::AutoVerySparse`], the default's composition for a classifier
    /// on very sparse data ([`super::SparsitySample::is_very_sparse`]): member 3 of
    /// [`auto_members`](Self::auto_members), the AdaGrad grid, alone — on unit-scaled features
    /// and with the default's calibrated output, as in every composition of the default.
    ///
    /// Why FD-SON is left out there (issue 27: "consider whether every member is worth its cost
    /// on sparse data, measured"): when the first rows barely share a feature, the sparse-time
    /// FD-SON member costs 5–7 times the AdaGrad grid (its shrinks and catch-ups run over
    /// every touched column; whole `train` runs on the generated `2^18`-feature stream, 50
    /// features a row: FD-SON + diag alone 1.08–1.09 s, the grid alone 0.15–0.20 s), and what
    /// it buys is small or nothing: on that stream it leads the mixture with progressive error
    /// 0.4105 against the grid's 0.4173 (VW's default 0.4279), and on issue 30's
    /// `2^20`-feature stream (20 a row) it retires by 157,000 rows without ever leading
    /// (held-out errors the same to six digits without it). `--algo auto-sparse` keeps it.
    ///
    /// ```
    /// use sketchlearn::linear::{Algorithm, LearnerConfig};
    /// let all = LearnerConfig::default().auto_members();
    /// let very = LearnerConfig::default().very_sparse_data_members();
    /// assert_eq!(very, all[2..3].to_vec());
    /// assert_eq!(very[0].algorithm, Algorithm::AdaGradGrid);
    /// ```
    pub fn very_sparse_data_members(&self) -> Vec<LearnerConfig> {
        self.auto_members()[2..3].to_vec()
    }

    /// The members of [`Algorithm::Auto`] for the squared loss, in order:
    ///
    /// 0. the running mean of the labels ([`Algorithm::RunningMean`]): with it among the members
    ///    the mixture's progressive squared error is at most the running mean's plus the mixing
    ///    regret ([`MixRule::AdaHedgeScaled`]), whatever the other members do;
    /// 1. – 3. the classification members 1, 4 and 3 (RFD-SON, RFD-SON with three times the
    ///    regularisation, the AdaGrad grid), each learning *standardised labels*
    ///    ([`TargetStandardization`]) on *features divided by their running RMS*
    ///    ([`FeatureScaling`]) — the wrapping is done by [`LearnerConfig::build`], the
    ///    configurations listed here are the wrapped learners'. The labels' offset and scale are
    ///    then learned at once rather than by thousands of steps (cadata's labels are `~10⁵`),
    ///    and the features' scales (`10⁻¹` to `10⁸` side by side on raw space_ga) no longer set
    ///    the step sizes: on each file a Newton step on unit-scale data.
    ///    FD-SON with diagonal adaptation (classification member 2) is left out: on
    ///    standardised data it duplicates the RFD-SONs.
    ///
    /// ```
    /// use sketchlearn::linear::{Algorithm, LearnerConfig};
    /// use sketchlearn::loss::Loss;
    /// let m = LearnerConfig { loss: Loss::Squared, ..LearnerConfig::default() }.auto_members();
    /// assert_eq!(m[0].algorithm, Algorithm::RunningMean);
    /// assert_eq!(m.len(), 4);
    /// ```
    pub fn regression_members(&self) -> Vec<LearnerConfig> {
        let newton = self.member_newton();
        // `O(nnz)` in any representation, like the AdaGrad grid (`member_adagrad`): dense, a
        // configuration `check` accepts (it refuses a sparse running mean).
        let mean = LearnerConfig {
            algorithm: Algorithm::RunningMean,
            representation: Representation::Dense,
            ..newton.clone()
        };
        let cautious = self.member_cautious(&newton);
        let adagrad = member_adagrad(&newton);
        vec![mean, newton, cautious, adagrad]
    }

    /// The Newton member of a mixture: `self` as a Newton learner without diagonal adaptation,
    /// `α₀` in the members' absolute units ([`MEMBER_ALPHA0_SCALE`]).
    fn member_newton(&self) -> LearnerConfig {
        LearnerConfig {
            algorithm: Algorithm::Newton,
            diag: false,
            alpha0: MEMBER_ALPHA0_SCALE * self.alpha0,
            ..self.clone()
        }
    }

    /// The cautious Newton member: `newton` (see [`member_newton`](Self::member_newton)) with
    /// three times the regularisation (`α₀`, `α`) and twice `c`.
    fn member_cautious(&self, newton: &LearnerConfig) -> LearnerConfig {
        LearnerConfig {
            alpha0: 3.0 * newton.alpha0,
            alpha: 3.0 * self.alpha,
            c: 2.0 * self.c,
            ..newton.clone()
        }
    }

    /// The two members of [`Algorithm::AdaGradGrid`] (whatever `self.algorithm` is): AdaGrad
    /// with `self.learning_rate` (`η`), and AdaGrad with `8η` whose intercept constant is
    /// `self.bias_value / 32`, so that its bias moves at `η/4` per step while its weights move
    /// at `8η` (AdaGrad's step is scale-free per coordinate, see [`Intercept`]).
    ///
    /// ```
    /// use sketchlearn::linear::{Algorithm, LearnerConfig};
    /// let [a, b] = LearnerConfig::default().adagrad_grid_members();
    /// assert_eq!((a.algorithm, a.learning_rate, a.bias_value), (Algorithm::AdaGrad, 0.5, 1.0));
    /// assert_eq!((b.learning_rate, b.bias_value), (4.0, 1.0 / 32.0));
    /// ```
    pub fn adagrad_grid_members(&self) -> [LearnerConfig; 2] {
        let base = LearnerConfig {
            algorithm: Algorithm::AdaGrad,
            ..self.clone()
        };
        let bold = LearnerConfig {
            learning_rate: 8.0 * self.learning_rate,
            bias_value: self.bias_value / 32.0,
            ..base.clone()
        };
        [base, bold]
    }

    /// How [`Algorithm::Auto`] and [`Algorithm::AdaGradGrid`] mix their members:
    /// [`MixRule::AdaHedgeCalibrated`] for classification, [`MixRule::AdaHedgeScaled`] (AdaHedge on
    /// squared errors divided by the running label variance, in a [`ScaledMixture`]) for the
    /// squared loss.
    pub fn mix_rule(&self) -> MixRule {
        if self.loss.is_classification() {
            MixRule::AdaHedgeCalibrated
        } else {
            MixRule::AdaHedgeScaled
        }
    }

    /// The members of a mixture algorithm, in the mixture's order: [`LearnerConfig::auto_members`]
    /// for [`Algorithm::Auto`], [`LearnerConfig::sparse_data_members`] for
    /// [`Algorithm::AutoSparse`], [`LearnerConfig::adagrad_grid_members`] for
    /// [`Algorithm::AdaGradGrid`], `None` for a single learner. Exhaustive (no wildcard), like
    /// `run::memory_bound::upper_bytes`: a new algorithm must say here whether it mixes.
    pub fn mixture_members(&self) -> Option<Vec<LearnerConfig>> {
        match self.algorithm {
            Algorithm::Auto => Some(self.auto_members()),
            Algorithm::AutoSparse => Some(self.sparse_data_members()),
            Algorithm::AutoVerySparse => Some(self.very_sparse_data_members()),
            Algorithm::AdaGradGrid => Some(self.adagrad_grid_members().to_vec()),
            Algorithm::Ogd
            | Algorithm::AdaGrad
            | Algorithm::Newton
            | Algorithm::RunningMean
            | Algorithm::AdaFd
            | Algorithm::Sketchy => None,
        }
    }

    /// The curvature as reports name it: its sparse-time learner's name (`rfd-sparse`, …) with
    /// [`Representation::Sparse`], else the curvature's own (`rfd-fast`, …).
    pub fn curvature_name(&self) -> &'static str {
        match self.representation {
            Representation::Sparse => self
                .curvature
                .sparse_name()
                .unwrap_or(self.curvature.name()),
            _ => self.curvature.name(),
        }
    }

    /// A short human-readable description, e.g. `newton/rfd-fast m=10 logistic alpha0=1`.
    pub fn describe(&self) -> String {
        let mut s = match self.algorithm {
            Algorithm::Newton => {
                let name = self.curvature_name();
                match self.curvature {
                    CurvatureKind::Identity | CurvatureKind::Full => {
                        format!("newton/{name} alpha={} c={}", self.alpha, self.c)
                    }
                    CurvatureKind::Rfd | CurvatureKind::RfdFast => format!(
                        "newton/{name} m={} alpha0={} c={}",
                        self.size, self.alpha0, self.c
                    ),
                    _ => format!(
                        "newton/{name} m={} alpha={} c={}",
                        self.size, self.alpha, self.c
                    ),
                }
            }
            Algorithm::Auto | Algorithm::AutoSparse | Algorithm::AutoVerySparse => {
                let m = self.mixture_members().unwrap_or_default();
                let parts: Vec<String> = m
                    .iter()
                    .map(|c| c.describe().replace(&format!(" {}", self.loss), ""))
                    .collect();
                if self.loss.is_classification() {
                    format!("{}[{}]", self.algorithm, parts.join(" + "))
                } else {
                    format!(
                        "auto[{}; standardised labels, RMS-scaled features]",
                        parts.join(" + ")
                    )
                }
            }
            Algorithm::RunningMean => "running-mean".to_string(),
            Algorithm::AdaFd => format!(
                "ada-fd m={} delta={} lr={}",
                self.size, self.alpha, self.learning_rate
            ),
            Algorithm::Sketchy => format!(
                "sketchy m={} delta={} lr={}",
                self.size, self.alpha0, self.learning_rate
            ),
            a => format!("{a} lr={}", self.learning_rate),
        };
        s.push_str(&format!(" {}", self.loss));
        describe_options(
            &mut s,
            self.clip,
            self.diag,
            self.bias.then_some(self.bias_value),
        );
        s
    }
}

/// The options a learner's description ends with: ` clip=C` when `C` is finite, ` diag`, then
/// ` no-bias` without an intercept (`bias` is `None`) or ` bias=B` when its constant `B` is not 1.
pub(crate) fn describe_options(s: &mut String, clip: f64, diag: bool, bias: Option<f64>) {
    if clip.is_finite() {
        s.push_str(&format!(" clip={clip}"));
    }
    if diag {
        s.push_str(" diag");
    }
    match bias {
        None => s.push_str(" no-bias"),
        Some(b) if b != 1.0 => s.push_str(&format!(" bias={b}")),
        Some(_) => {}
    }
}

/// The AdaGrad-grid member of a mixture, with `newton`'s other settings. AdaGrad is `O(nnz)` in
/// any representation: it has no sparse-time twin, so it is always dense.
fn member_adagrad(newton: &LearnerConfig) -> LearnerConfig {
    LearnerConfig {
        algorithm: Algorithm::AdaGradGrid,
        representation: Representation::Dense,
        ..newton.clone()
    }
}
