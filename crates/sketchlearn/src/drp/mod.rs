//! Dual random projection (Zhang, Mahdavi, Jin, Yang & Zhu, "Recovering the Optimal Solution by
//! Dual Random Projection", COLT 2013): solve an L2-regularised margin-loss problem in a random
//! `m`-dimensional subspace and recover the `d`-dimensional optimum from the *dual* solution.
//!
//! Conventions (DESIGN.md §4 items 16–17): examples are the columns `x_i` of `X ∈ ℝ^{d×n}`,
//! labels `y_i ∈ {±1}`, the objective is (1) `f(w) = λ/2‖w‖² + Σ_i ℓ(y_i x_iᵀw)` (no `1/n`),
//! `R ∈ ℝ^{d×m}` has `N(0, 1)` entries and `x̂ = Rᵀx/√m` (5).
//!
//! | piece | paper | here |
//! |---|---|---|
//! | problem (1), losses | §2 | [`Problem`], [`DrpLoss`] (ridge, logistic, smoothed hinge) |
//! | `R`, generated on the fly from a counter-based stream | (5) | [`GaussianProjection`] |
//! | low-dimensional problem (6) / (13) | §2, Alg. 2 | closed form (ridge) or trust-region Newton |
//! | naive solution `ŵ = Rz*/√m` | (10), Theorem 3 | [`DrpFit::naive`] |
//! | dual recovery `w̃ = −(1/λ)X D(y) α̂` | Alg. 1, (12) | [`DrpFit::alg1`] |
//! | iterative recovery | Alg. 2, Theorem 5 | [`DrpFit::iterates`], [`Alg2Status`] |
//! | exact optimum `w*` | Prop. 2.1 | [`ExactSolver`] (trust-region Newton–CG, as LIBLINEAR) |
//! | the recovered `w̃` as a model file | — | [`recovered_model`] |
//! | a whole run on files, its report | — | [`DrpJob`], [`DrpReport`] |
//!
//! ```
//! use sketchlearn::drp::{low_rank, relative_error, DrpLoss, DrpParams, ExactSolver, LowRankSpec, Problem};
//! let data = low_rank(&LowRankSpec { n: 200, d: 500, rank: 3, flip: 0.1, seed: 3 }).unwrap();
//! let problem = Problem::new(DrpLoss::Ridge, 1.0).unwrap();
//! let exact = ExactSolver::default().solve(&problem, &data).unwrap();
//! let fit = DrpParams::new(DrpLoss::Ridge, 1.0, 200).iterations(5).build().unwrap().fit(&data).unwrap();
//! // The naive solution is far from w* (Theorem 3: about √((d − r)/m) ≈ 1.6 relative error);
//! // the dual recovery is close (Theorem 2) and Algorithm 2 closes the gap (Theorem 5).
//! assert!(relative_error(&fit.naive, &exact.w) > 1.0);
//! assert!(relative_error(fit.alg1(), &exact.w) < 0.3);
//! assert!(relative_error(fit.last(), &exact.w) < 1e-3);
//! ```

mod data;
mod exact;
mod job;
mod low_dim;
mod problem;
mod projection;
mod recovered;
mod recovery;
mod report_text;
mod synthetic;
mod tron;

pub use data::Dataset;
pub use exact::{ExactSolution, ExactSolver};
pub use job::{DrpJob, DrpJobError, DrpReport, DrpRun, SolutionRow};
pub use low_dim::Projected;
pub use problem::{DrpLoss, Problem};
pub use projection::GaussianProjection;
pub use recovered::recovered_model;
pub use recovery::{
    relative_error, Alg2Status, Drp, DrpFit, DrpParams, IterationReport, OnDivergence,
};
pub use synthetic::{low_rank, LowRankSpec};

use crate::data::ParseError;
use crate::linalg::LinalgError;

/// What can go wrong in dual random projection.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DrpError {
    /// A hyper-parameter is out of its domain.
    #[error("invalid parameter: {0}")]
    InvalidParameter(String),
    /// An example's label is not ±1.
    #[error("example {index}: label {label} is not +1 or -1 (map two classes to ±1 first)")]
    Label {
        /// 0-based example index.
        index: usize,
        /// The label.
        label: f64,
    },
    /// A label read from a file is not ±1.
    #[error(
        "{source_name}:{line}: label {label} is not +1 or -1 (choose two classes, e.g. --classes 3,8; real-valued targets: --loss ridge --regression)"
    )]
    FileLabel {
        /// The input's name.
        source_name: String,
        /// 1-based line.
        line: u64,
        /// The label as read.
        label: f64,
    },
    /// A non-finite value in the input or in a solution.
    #[error("non-finite value: {0}")]
    NonFinite(String),
    /// Inconsistent shapes.
    #[error("dimension mismatch: {0}")]
    Dimension(String),
    /// There is no training example.
    #[error("the training set is empty")]
    Empty,
    /// A dense factorisation failed.
    #[error(transparent)]
    Linalg(#[from] LinalgError),
    /// The input could not be read.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// The caller's [`Cancel`](crate::cancel::Cancel) hook stopped the fit (see
    /// [`Drp::fit_cancellable`]); nothing was returned.
    #[error(transparent)]
    Cancelled(#[from] crate::cancel::Cancelled),
}
