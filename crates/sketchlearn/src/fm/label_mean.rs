//! The default intercept of a squared-loss FM: the running mean of the labels learned so far.
//!
//! **Why.** FTRL's regulariser `R(Θ) = ½‖Θ − Θ₁‖²_F` (SFTRL paper, eq. 4) is centred at
//! `Θ₁ = μ·e eᵀ`, `e` the constant coordinate of `â = [x; 1]`. With `μ = 0` (the paper's Alg. 4/5)
//! the mean rating must be learned, and the first-order part spreads it over every block that is
//! on in every row — the constant, the user and item ids, and any complete one-hot side column.
//! A test row missing such a block (an `NA` side value, an unseen id) then loses its share of the
//! mean (`docs/results/fm_README.md`). Centring at the label mean removes that.
//!
//! **The running mean, without look-ahead.** On a stream the mean of all labels is not known
//! when the first rows are predicted, and using it would let progressive validation see labels
//! of rows not yet learned. Round `t` (importance weights `w_s`) uses the weighted mean of the
//! labels *before* it,
//!
//! ```text
//! μ_t = Σ_{s<t} w_s y_s / Σ_{s<t} w_s      (μ_1 = 0: no label seen),
//! ```
//!
//! so the prediction `ŷ_t` made before the update depends on `y_1 … y_{t−1}` only: a proper
//! progressive (prequential) estimate. After the step, `μ_{t+1} = μ_t + (w_t / W_{t+1})(y_t − μ_t)`
//! with `W_{t+1} = W_t + w_t` (West's weighted update, no sum that can overflow).
//!
//! **The learner it wraps.** The squared loss is translation invariant:
//! `φ(z; y) = ½(z − y)² = φ(z − c; y − c)` for any `c`. [`LabelCentred`] predicts
//! `ŷ_t = μ_t + f_t(x_t)` (`f` an FM centred at 0; `ŷ_t` uses `y_1 … y_{t−1}` only), then adds
//! `y_t` to the mean and lets `f` learn the residual `y_t − μ_{t+1}`. That is the step of the FM
//! `μ_{t+1} + f(x)` on `y_t`: its gradient scale is
//! `q_t = φ'(μ_{t+1} + f_t(x_t); y_t) = f_t(x_t) − (y_t − μ_{t+1})`. For the convex learners
//! (`f_t(x) = âᵀΘ_t â`, FTRL centred at 0) the model is FTRL with a moving centre,
//! `Θ_{t+1} = μ_{t+1}·e eᵀ − η Σ_{s≤t} q_s â_s â_sᵀ`, i.e. eq. 4 with `Θ₁` replaced by the
//! current `μ_{t+1}·e eᵀ` (`âᵀ(μ e eᵀ)â = μ` since `â`'s last coordinate is 1); for FM-SGD it is
//! `w₀` learned around the mean. The update may use `y_t` — it comes after the prediction, as in
//! any online step — and using the updated centre `μ_{t+1}` rather than `μ_t` in it matters:
//! with `μ_t`, the first step (`μ_1 = 0`) would teach `f` the whole first label as an intercept,
//! on top of the mean that takes it too, and learners with large or decaying steps (OGD's
//! `η/√t`) would take many rows to unlearn it. Once the mean has settled (`μ_t → μ`) the learner
//! is the fixed-`μ` one of `--intercept μ`. The wrapper is one place, whatever the algorithm; a
//! fixed `μ` (an explicit intercept) keeps the learners' own centring (`with_intercept`).
//!
//! ```
//! use sketchlearn::fm::{AnyFm, FmAlgorithm, FmConfig};
//! use sketchlearn::linear::OnlineLearner;
//! use sketchlearn::Row;
//! // The squared-loss default (intercept None) centres at the running label mean.
//! let mut fm = FmConfig::new(FmAlgorithm::SftrlSplit).build(4).unwrap();
//! let x = Row::Sparse { indices: &[0], values: &[1.0] };
//! assert_eq!(fm.learn(x, 4.0, 1.0).unwrap(), 0.0); // no label seen yet: μ₁ = 0
//! let AnyFm::LabelCentred(c) = &fm else { panic!() };
//! assert_eq!(c.mean(), 4.0);
//! ```

use super::AnyFm;
use crate::linear::{LearnError, OnlineLearner};
use crate::Row;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// The weighted running mean `μ_t` of the labels learned so far and their total weight `W_t`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunningMean {
    /// `W_t = Σ_{s<t} w_s`.
    pub weight: f64,
    /// `μ_t` (0 while `W_t = 0`).
    pub mean: f64,
}

impl RunningMean {
    /// Adds label `y` with importance weight `w ≥ 0` (West's update).
    ///
    /// ```
    /// use sketchlearn::fm::RunningMean;
    /// let mut m = RunningMean::default();
    /// m.add(1.0, 1.0);
    /// m.add(4.0, 2.0);
    /// assert_eq!(m.mean, 3.0);
    /// assert_eq!(m.weight, 3.0);
    /// ```
    pub fn add(&mut self, y: f64, w: f64) {
        if w > 0.0 {
            self.weight += w;
            self.mean += (w / self.weight) * (y - self.mean);
        }
    }
}

/// An FM centred at the running label mean: predicts `μ_t + f_t(x)` and teaches `f` the
/// residual `y − μ_t` (module docs).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LabelCentred {
    /// The labels' running mean.
    pub labels: RunningMean,
    /// The FM `f` (centred at 0, never itself a `LabelCentred`).
    pub inner: AnyFm,
}

impl LabelCentred {
    /// `inner` (built with intercept 0), no label seen yet.
    pub fn new(inner: AnyFm) -> Self {
        LabelCentred {
            labels: RunningMean::default(),
            inner,
        }
    }

    /// The current centre `μ_t`.
    pub fn mean(&self) -> f64 {
        self.labels.mean
    }

    /// Bytes of the state: the inner FM's and the mean's.
    pub fn state_bytes(&self) -> usize {
        self.inner.state_bytes() + std::mem::size_of::<RunningMean>()
    }

    /// The pairwise part of the prediction: the inner FM's (the centre is a constant).
    pub fn pairwise(&self, x: Row<'_>) -> f64 {
        self.inner.pairwise(x)
    }
}

impl OnlineLearner for LabelCentred {
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn predict(&self, x: Row<'_>) -> f64 {
        self.labels.mean + self.inner.predict(x)
    }
    /// One step: the prediction `μ_t + f_t(x)` (before the update, from earlier labels only:
    /// `f`'s own prediction does not depend on the label it is given), then the mean takes `y`
    /// and `f` learns `y − μ_{t+1}` (module docs). A refused or invalid step changes neither.
    fn learn(&mut self, x: Row<'_>, y: f64, weight: f64) -> Result<f64, LearnError> {
        let mu = self.labels.mean;
        let mut next = self.labels;
        next.add(y, weight);
        let p = self.inner.learn(x, y - next.mean, weight)?;
        self.labels = next;
        Ok(mu + p)
    }
    fn weights(&self) -> Cow<'_, [f64]> {
        self.inner.weights()
    }
}
