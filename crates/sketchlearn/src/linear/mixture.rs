//! An online mixture of learners by exponential weights: every member learns every example; the
//! mixture predicts with the members' predictions weighted by `π_k ∝ exp(−η_t·L_k)`, where `L_k`
//! is member `k`'s cumulative (importance-weighted) progressive loss under a [`MixRule`].
//!
//! The prediction averages the members' *probabilities* for the logistic loss,
//! `P(y = 1) = Σ_k π_k σ(p_k)` (returned as its log-odds), and their margins for the other losses.
//! The default classifier's mixture ([`MixRule::AdaHedgeCalibrated`], logistic loss) averages the
//! probabilities its rule grades, the *calibrated* `σ(s_k·p_k)` (`mixture_output.rs`: why this is
//! still the Hedge prediction of the bound cited below, and the measurements).
//!
//! * [`MixRule::AdaHedgeCalibrated`] (the default of [`Algorithm::Auto`](super::Algorithm::Auto)
//!   for classification since issue 27): [`MixRule::AdaHedgeBrier`] on each member's probability
//!   `σ(s_k·p_k)` with a scale `s_k ≥ 0` fitted online, so that an over-confident member with
//!   the better signs is not out-scored by one that knows nothing and says so (the derivation
//!   and the measurements are in `linear/calibration.rs`).
//! * [`MixRule::AdaHedgeBrier`] (the default for classification until issue 27): Hedge on each
//!   member's progressive *Brier score* `(1 − q_k(y))²`, with `q_k(y)` the member's probability of the observed label, and AdaHedge's parameter-free rate
//!   `η_t = ln K / Δ_{t−1}`, where `Δ` is the cumulative mixability gap (de Rooij, van Erven,
//!   Grünwald & Koolen, *Follow the Leader If You Can, Hedge If You Must*, JMLR 2014, §2: Alg. 1
//!   and its regret bound in terms of `L*`): its regret against the best member is at most
//!   `2√(L*(T − L*)/T · ln K) + 16/3·ln K + 2` for losses in `[0, 1]` — no rate to tune — and it
//!   follows the leader (constant regret) when one member is clearly better, which the
//!   worst-case anytime rate `√(8 ln K / t)` does not on a few hundred examples. The Brier score
//!   is bounded (unlike the log loss, one confident mistake cannot sink a member) and *proper*
//!   (unlike the absolute loss `1 − q`, it does not reward over-confidence), and it grades every
//!   prediction rather than only its sign, so on a few hundred examples it tells the members
//!   apart sooner than their mistakes do (heart, ionosphere in `docs/results/auto.md`).
//! * [`MixRule::AdaHedge`]: the same AdaHedge on progressive *mistakes* (the metric progressive
//!   validation reports; the default until the Brier rule was measured).
//! * [`MixRule::Absolute`]: Hedge on the absolute loss `1 − q_k(y)` of each member's probability
//!   `q_k(y) ∈ [0, 1]` of the observed label (the expected 0/1 loss of predicting at random with
//!   `q_k`), with the anytime rate `η_t = η·√(8 ln K / t)`. The loss is convex and bounded in
//!   `[0, 1]`, so the mixture's own absolute loss is at most the best member's plus
//!   `O(√(T ln K))` (Cesa-Bianchi & Lugosi, *Prediction, Learning, and Games*, Thm. 2.3 and §2.5
//!   for the anytime rate). It rewards confident members, which are not always the ones with the
//!   fewest mistakes (measured in `docs/results/auto.md`).
//! * [`MixRule::Bayes`]: weights `exp(−η·L_k)` under the learner's own loss. For the logistic
//!   loss with `η = 1` this is Vovk's aggregating algorithm / the Bayesian mixture, whose
//!   cumulative *log* loss is at most the best member's plus `ln K` (ibid. §3.5). It follows the
//!   member with the best log loss, which is not the one with the fewest mistakes on w8a and spam;
//!   the default uses it for the squared loss.
//! * [`MixRule::ZeroOne`]: Hedge on progressive mistakes, anytime `η_t` (weighted majority).
//! * [`MixRule::AdaHedgeScaled`] (the default for the squared loss): AdaHedge on each member's
//!   squared error divided by the running label variance, `ℓ_{k,t} = (y_t − p_{k,t})² / v_t` with
//!   `v_t = Σ_{s≤t} w_s (y_s − ȳ_{s−1})² / Σ_{s≤t} w_s` (the running mean's own progressive mean
//!   squared error, the current round included; `ȳ_{s−1}` the weighted mean of the labels before
//!   round `s`). Derivation: [`MixRule::Bayes`] with `η = 1` weighs by `exp(−½Σ(y − p)²)`, a
//!   Gaussian likelihood of variance 1; on labels of scale `10⁵` (cadata) one example's loss
//!   difference is `~10⁹` and the first round puts all the weight on one member, for good
//!   (measured: raw cpusmall, RMSE 7,593 against the running mean's 18.4). Exp-concavity gives
//!   Vovk's `ln K` regret only with `η ≤ 1/(8B²)` for labels and predictions in `[−B, B]`, and
//!   `B` is unknown and unbounded for a member that diverges. AdaHedge needs no bound: its regret
//!   against the best member is at most `2√(S·L*(T − L*)/T·ln K) + S(16/3·ln K + 2)` for losses in
//!   `[0, S]` (de Rooij et al. 2014, Thm. 8) with `S` learned, not given, and it is invariant to
//!   multiplying every loss by a constant (`Δ` scales with the losses, `η = ln K/Δ` inversely).
//!   Dividing round `t`'s losses by `v_t` makes them *unit-free* — the running-mean member's
//!   normalised loss averages ≈ 1 — so one early round on an unsettled scale (the first label of
//!   cadata, `1.5·10⁵` away from a prediction of 0) does not inflate `S` and `Δ` for the rest of
//!   the stream. The squared loss is convex in the prediction, so the mixture's prediction
//!   `Σπ_k p_k` has normalised loss at most the Hedge loss `Σπ_k ℓ_k` (Jensen, each round, for
//!   any `v_t > 0`), hence `Σ_t (y_t − ŷ_t)²/v_t ≤ min_k Σ_t ℓ_{k,t} + regret`. With the
//!   running mean among the members (`ℓ ≈ 1` per round) this bounds the mixture's normalised
//!   squared error by `T` plus `O(√(T ln K) + ln K)`: once `v_t` has settled, the mixture's
//!   progressive MSE is at most the running mean's plus `O(σ²√(ln K/T))`.
//!
//! **A row a member refuses changes nothing** but the count of refused steps: the members, the
//! shared unit scaling's moments, the weights and the losses stay as they were
//! ([`Mixture::learn_normalized`]: an undo copy for a row above [`SUSPECT_ROW`]; pinned by
//! `tests/suite/refused_rows.rs`). A member that refuses ordinary rows (its own divergence) is
//! counted and the others go on.
//!
//! Issue 7's "combining learners online": the cost per example is the sum of the members' costs,
//! so it stays linear in `d` (or in `nnz`) when every member's does. A member whose weight has
//! become negligible retires (it is no longer learned nor evaluated; `mixture_retirement.rs`
//! derives what that preserves), so the cost falls to the remaining members'.

use super::calibration::Calibration;
use super::mixture_retirement::{Retirement, DEFAULT_EPSILON, PERIOD};
use super::mixture_wire::MixtureWire;
use super::shared_scaling::{link, member_step, merge_members, predict_each, ScaledRows};
use super::{check_example, AnyLearner, LearnError, OnlineLearner};
use crate::loss::{sigmoid, softplus_pair, Loss};
use crate::merge::{MergeResult, MergeShare};
use crate::Row;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// How a [`Mixture`] weighs its members (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MixRule {
    /// `π_k ∝ exp(−η·L_k)` with `L_k` the member's cumulative loss under the learner's loss.
    Bayes,
    /// Hedge on progressive 0/1 mistakes, anytime `η_t = η·√(8 ln K / t)`.
    ZeroOne,
    /// Hedge on the absolute loss `1 − q_k(y)` of the member's probability of the label,
    /// anytime `η_t = η·√(8 ln K / t)`.
    Absolute,
    /// AdaHedge on progressive mistakes: `η_t = η·ln K / Δ_{t−1}` with `Δ` the cumulative
    /// mixability gap (follow the leader while `Δ = 0`).
    AdaHedge,
    /// AdaHedge (as [`MixRule::AdaHedge`]) on the Brier score `(1 − q_k(y))²` of each member's
    /// probability `q_k(y)` of the observed label.
    AdaHedgeBrier,
    /// AdaHedge on squared errors divided by the running label variance (see the module
    /// documentation for the derivation): the squared-loss rule that does not depend on the
    /// label's scale.
    AdaHedgeScaled,
    /// AdaHedge (as [`MixRule::AdaHedge`]) on the Brier score `(1 − q_k(y))²` of each member's
    /// *calibrated* probability `q_k = σ(s_k·p_k)`, `s_k ≥ 0` fitted online to the labels
    /// ([`Calibration`]): the Brier score of the member's discrimination, whatever the scale of
    /// its scores (so the same rule for every classification loss).
    AdaHedgeCalibrated,
}

impl MixRule {
    /// True for the rules with AdaHedge's adaptive rate.
    fn is_adahedge(self) -> bool {
        matches!(
            self,
            MixRule::AdaHedge
                | MixRule::AdaHedgeBrier
                | MixRule::AdaHedgeScaled
                | MixRule::AdaHedgeCalibrated
        )
    }
}

/// A member's probability of the positive label: `σ(p)` for the logistic loss, else the margin
/// clamped to `[−1, 1]` and mapped to `[0, 1]`.
fn probability(loss: Loss, p: f64) -> f64 {
    match loss {
        Loss::Logistic => sigmoid(p),
        _ => 0.5 * (1.0 + p.clamp(-1.0, 1.0)),
    }
}

/// `1 − q(y)`: a member's probability of the label it did not observe (`q(y)` its probability of
/// the observed label `y = ±1`).
fn miss_probability(loss: Loss, p: f64, y: f64) -> f64 {
    let q = probability(loss, p);
    if y > 0.0 {
        1.0 - q
    } else {
        q
    }
}

/// Exponentially weighted mixture of learners (by default [`AnyLearner`]s; any
/// [`OnlineLearner`] works).
///
/// ```
/// use sketchlearn::linear::{Algorithm, LearnerConfig, MixRule, Mixture, OnlineLearner};
/// use sketchlearn::loss::Loss;
/// use sketchlearn::Row;
/// let ada = LearnerConfig { algorithm: Algorithm::AdaGrad, ..LearnerConfig::default() };
/// let son = LearnerConfig { algorithm: Algorithm::Newton, ..LearnerConfig::default() };
/// let members = vec![ada.build(2).unwrap(), son.build(2).unwrap()];
/// let mut mix = Mixture::new(members, Loss::Logistic, MixRule::Absolute, 1.0).unwrap();
/// for _ in 0..20 {
///     mix.learn(Row::Dense(&[1.0, 0.5]), 1.0, 1.0).unwrap();
///     mix.learn(Row::Dense(&[-1.0, 0.2]), -1.0, 1.0).unwrap();
/// }
/// assert!(mix.predict(Row::Dense(&[1.0, 0.5])) > 0.0);
/// let pi = mix.member_weights();
/// assert!((pi.iter().sum::<f64>() - 1.0).abs() < 1e-12);
/// ```
#[derive(Clone, Debug, Deserialize)]
#[serde(
    try_from = "MixtureWire<L>",
    bound(deserialize = "L: Deserialize<'de> + OnlineLearner")
)]
pub struct Mixture<L = AnyLearner> {
    pub(super) members: Vec<L>,
    /// `−η_t·(L_k − min_j L_j)`: the best member's is 0 (recomputed after every example).
    pub(super) log_weight: Vec<f64>,
    /// `L_k`: each member's cumulative (importance-weighted) loss under [`Mixture::rule`].
    pub(super) cum_loss: Vec<f64>,
    /// Σ importance weights seen.
    pub(super) seen: f64,
    pub(super) loss: Loss,
    pub(super) eta: f64,
    pub(super) rule: MixRule,
    /// Member steps refused (they would have made the member's weights non-finite).
    pub(super) refused: u64,
    /// AdaHedge's cumulative mixability gap `Δ = Σ_t (h_t − m_t) ≥ 0` (Hedge loss minus mix loss).
    pub(super) gap: f64,
    /// Each member's score calibration ([`MixRule::AdaHedgeCalibrated`]; unused by the other
    /// rules). Saved inside `cum_loss`'s sequence (`mixture_wire.rs`).
    pub(super) calibration: Vec<Calibration>,
    /// Whether the prediction mixes the calibrated probabilities `σ(s_k·p_k)` rather than the
    /// raw `σ(p_k)` ([`Mixture::set_calibrated_output`]; `AdaHedgeCalibrated` with the logistic
    /// loss only). Saved from format version 10 (`mixture_wire.rs`).
    pub(super) calibrated_output: bool,
    pub(super) scratch: Vec<f64>,
    pub(super) losses: Vec<f64>,
    pub(super) pi: Vec<f64>,
    /// The members' shared unit scaling's values of the examples being learned
    /// (`shared_scaling.rs`; scratch).
    pub(super) shared: ScaledRows,
    /// Which members have retired, and the threshold `ε` (`mixture_retirement.rs`).
    pub(super) retirement: Retirement,
    /// Which thread runs the weighting of a batch on two threads (`mixture_batch.rs`; scratch).
    pub(super) weigh_on: super::mixture_batch::WeighOn,
}

impl<L: OnlineLearner> Mixture<L> {
    /// A mixture of `members` (at least one, all of the same dimension) under `loss`, weighted
    /// by `rule` with learning rate `η > 0` (1: the Bayesian mixture for `Bayes` with the
    /// logistic loss; the theory's `√(8 ln K / t)` schedule for the Hedge rules). Members whose
    /// weight falls below [`DEFAULT_EPSILON`] retire ([`Mixture::set_retirement`] changes it;
    /// 0 turns retirement off).
    pub fn new(members: Vec<L>, loss: Loss, rule: MixRule, eta: f64) -> Result<Self, LearnError> {
        if members.is_empty() {
            return Err(LearnError::InvalidParameter(
                "a mixture needs at least one member".into(),
            ));
        }
        let d = members[0].dim();
        if let Some(m) = members.iter().find(|m| m.dim() != d) {
            return Err(LearnError::InvalidParameter(format!(
                "mixture members differ in dimension ({} and {})",
                d,
                m.dim()
            )));
        }
        if !(eta.is_finite() && eta > 0.0) {
            return Err(LearnError::InvalidParameter(format!(
                "mixture learning rate must be finite and > 0, got {eta}"
            )));
        }
        let k = members.len();
        let mut members = members;
        link(&mut members);
        Ok(Mixture {
            members,
            log_weight: vec![0.0; k],
            cum_loss: vec![0.0; k],
            seen: 0.0,
            loss,
            eta,
            rule,
            refused: 0,
            gap: 0.0,
            calibration: vec![Calibration::default(); k],
            calibrated_output: false,
            scratch: Vec::new(),
            losses: Vec::new(),
            pi: Vec::new(),
            shared: ScaledRows::default(),
            retirement: Retirement::new(k, DEFAULT_EPSILON, d),
            weigh_on: Default::default(),
        })
    }

    /// Sets the retirement threshold `ε ∈ [0, 1)` for the check points to come
    /// (`mixture_retirement.rs`; 0: no member retires, the mixture of before the rule bit for
    /// bit). Members retired so far stay retired.
    pub fn set_retirement(&mut self, epsilon: f64) -> Result<(), LearnError> {
        self.retirement
            .set_epsilon(epsilon)
            .map_err(LearnError::InvalidParameter)
    }

    /// The members, to change their settings (not their number or order).
    pub(super) fn members_mut(&mut self) -> &mut [L] {
        &mut self.members
    }

    /// The retirement threshold and which members have retired.
    pub fn retirement(&self) -> &Retirement {
        &self.retirement
    }

    /// The members, in construction order.
    pub fn members(&self) -> &[L] {
        &self.members
    }

    /// The current mixture weights `π_k` (they sum to 1).
    pub fn member_weights(&self) -> Vec<f64> {
        let mut pi = Vec::new();
        self.weights_into(&mut pi);
        pi
    }

    /// Writes `π` into `pi` (no allocation once `pi` has grown).
    fn weights_into(&self, pi: &mut Vec<f64>) {
        pi.clear();
        pi.extend(self.log_weight.iter().map(|l| l.exp()));
        let z: f64 = pi.iter().sum();
        pi.iter_mut().for_each(|p| *p /= z);
    }

    /// The weighting rule.
    pub fn rule(&self) -> MixRule {
        self.rule
    }

    /// Member steps refused so far because they would have made a member's weights non-finite
    /// (the member keeps its previous state; the mixture goes on).
    pub fn refused_steps(&self) -> u64 {
        self.refused
    }

    /// The mixture's score from the members' scores `preds`.
    fn combine(&self, preds: &[f64]) -> f64 {
        match self.loss {
            Loss::Logistic => {
                // log P(+1) − log P(−1) with P(±1) = Σ π_k σ(±p_k), by log-sum-exp, with
                // log σ(±p) = −softplus(∓p) (`softplus_pair`: one exp and one log1p for both).
                let mut stack = [(0.0, 0.0); 16];
                let mut heap = Vec::new();
                let pair: &mut [(f64, f64)] = match stack.get_mut(..preds.len()) {
                    Some(s) => s,
                    None => {
                        heap.resize(preds.len(), (0.0, 0.0));
                        &mut heap
                    }
                };
                let calibrated = self.calibrates_output();
                for ((s, &p), c) in pair.iter_mut().zip(preds).zip(&self.calibration) {
                    *s = softplus_pair(if calibrated { c.scaled(p) } else { p });
                }
                let pair = &*pair;
                let lse = |side: fn(&(f64, f64)) -> f64| {
                    let terms = || self.log_weight.iter().zip(pair).map(|(lw, s)| lw - side(s));
                    let top = terms().fold(f64::NEG_INFINITY, f64::max);
                    top + terms().map(|t| (t - top).exp()).sum::<f64>().ln()
                };
                let score = lse(|s| s.1) - lse(|s| s.0);
                if score.is_finite() {
                    score
                } else {
                    // Every member saturated the same way: fall back to the weighted margin.
                    self.weighted_margin(preds)
                }
            }
            _ => self.weighted_margin(preds),
        }
    }

    fn weighted_margin(&self, preds: &[f64]) -> f64 {
        let mut num = 0.0;
        let mut den = 0.0;
        for (lw, p) in self.log_weight.iter().zip(preds) {
            let w = lw.exp();
            num += w * p;
            den += w;
        }
        num / den
    }

    /// AdaHedge's rate `η·ln K / Δ` for the next prediction; `∞` (follow the leader) while
    /// `Δ = 0`.
    fn adahedge_eta(&self) -> f64 {
        if self.gap > 0.0 {
            // `K`, the members built (also while `mixture_lone.rs` has taken them out).
            self.eta * (self.cum_loss.len() as f64).ln() / self.gap
        } else {
            f64::INFINITY
        }
    }

    /// AdaHedge's mixability gap of one round, `h − m ≥ 0`: the Hedge loss `h = Σ π_k ℓ_k` minus
    /// the mix loss `m = −(1/η) ln Σ π_k e^{−η ℓ_k}` under the current weights and rate (with
    /// `η = ∞`, `m` is the smallest loss among the leaders).
    fn mixability_gap(&mut self, losses: &[f64]) -> f64 {
        let mut pi = std::mem::take(&mut self.pi);
        self.weights_into(&mut pi);
        let hedge: f64 = pi.iter().zip(losses).map(|(p, l)| p * l).sum();
        let lowest = pi
            .iter()
            .zip(losses)
            .filter(|(p, _)| **p > 0.0)
            .map(|(_, l)| *l)
            .fold(f64::INFINITY, f64::min);
        let eta = self.adahedge_eta();
        let mix = if eta.is_finite() {
            // Shifted by the lowest loss for stability:
            // m = ℓ_min − (1/η) ln Σ π_k e^{−η(ℓ_k − ℓ_min)}.
            let sum: f64 = pi
                .iter()
                .zip(losses)
                .filter(|(p, _)| **p > 0.0)
                .map(|(p, l)| p * (-eta * (l - lowest)).exp())
                .sum();
            lowest - sum.ln() / eta
        } else {
            lowest
        };
        self.pi = pi;
        // m ≤ h always (Jensen); clamp rounding.
        (hedge - mix).max(0.0)
    }
}

/// The size `weight²·max(y², 1)·‖x‖²` of an example above which a mixture learns it from an
/// undo copy ([`Mixture::learn_normalized`]): rows with values above about `10³⁰`. Below it no
/// member refuses a row for its size: the members' sketches refuse `‖ĝ‖² > 10²⁰⁰` (and the
/// Newton learners copy themselves from `10¹⁰⁰`, `newton.rs`), `ĝ = √c·ℓ'·weight·x` with
/// `|ℓ'| ≤ max(|y|, 1)` for the classification losses, and the shared unit scaling maps a value
/// `x_i` to at most `√n_i` in size (its own square is in the moments it divides by) as long as
/// `x_i²` does not overflow (`|x_i| < 10¹⁵⁴`).
const SUSPECT_ROW: f64 = 1e60;

/// Whether the example `(x, y, weight)` is above [`SUSPECT_ROW`] (or NaN): one pass over its
/// values.
#[inline]
pub(crate) fn suspect_row(x: Row<'_>, y: f64, weight: f64) -> bool {
    let values = match x {
        Row::Dense(v) => v,
        Row::Sparse { values, .. } => values,
    };
    let norm2 = crate::data::dot4::dot4(values, values);
    if norm2 == 0.0 {
        // An empty row moves no member whatever its weight (`∞ · 0` would read as NaN).
        return false;
    }
    let size = weight * weight * (y * y).max(1.0) * norm2;
    size.is_nan() || size > SUSPECT_ROW
}

impl<L: OnlineLearner + Clone> Mixture<L> {
    /// [`OnlineLearner::learn`] with [`MixRule::AdaHedgeScaled`]'s losses divided by
    /// `variance > 0` (the other rules ignore it): [`super::ScaledMixture`] passes the running
    /// label variance `v_t`.
    ///
    /// **A row a member refuses changes nothing** but the count of refused steps
    /// ([`refused_steps`](Self::refused_steps)): the members that learned it before, the shared
    /// unit scaling's moments, the weights and the losses stay as they were (the members that
    /// refuse keep their state themselves), and the prediction returned is the mixture's before
    /// the row. So does a member's error that stops the mixture (a scaled value that overflowed:
    /// not counted, returned). The other members going on with the row would leave the mixture a different
    /// learner for one hostile row. A row above [`SUSPECT_ROW`] is learned from an undo copy of
    /// the mixture, put back when a member refused (any row below it that a member refuses is
    /// a member's own divergence, which the mixture outweighs and, in time, retires: counted,
    /// and the others go on, as before).
    pub(crate) fn learn_normalized(
        &mut self,
        x: Row<'_>,
        y: f64,
        weight: f64,
        variance: f64,
    ) -> Result<f64, LearnError> {
        self.learn_or_skip(x, y, weight, variance).map(|(p, _)| p)
    }

    /// [`learn_normalized`](Self::learn_normalized), with whether the row was learned (`false`:
    /// skipped, a member refused it), for [`super::ScaledMixture`], whose label statistics
    /// must skip it too.
    pub(super) fn learn_or_skip(
        &mut self,
        x: Row<'_>,
        y: f64,
        weight: f64,
        variance: f64,
    ) -> Result<(f64, bool), LearnError> {
        check_example(&x, y, weight, self.dim())?;
        if suspect_row(x, y, weight) {
            let step = |m: &mut Self| m.learn_members(x, y, weight, variance);
            return Ok(match super::undo::learn_or_undo(self, step)? {
                Some(p) => (p, true),
                None => (self.predict(x), false),
            });
        }
        self.learn_members(x, y, weight, variance)
            .map(|p| (p, true))
    }
}

impl<L: OnlineLearner + Clone> super::undo::Undo for Mixture<L> {
    /// The steps refused by the members (counted here) and inside them (a member that is a
    /// mixture, or holds one).
    fn refusals(&self) -> u64 {
        let inner = self.members.iter().map(L::nested_refusals);
        inner.fold(self.refused, u64::saturating_add)
    }

    fn count_refused(&mut self, n: u64) {
        self.refused = self.refused.saturating_add(n);
    }
}

impl<L: OnlineLearner> Mixture<L> {
    /// [`OnlineLearner::prefetch`] of the active members.
    #[inline]
    fn prefetch_active(&self, x: Row<'_>) {
        for (k, m) in self.members.iter().enumerate() {
            if self.retirement.is_active(k) {
                m.prefetch(x);
            }
        }
    }

    /// [`learn_normalized`](Self::learn_normalized) of a checked example without the undo
    /// copy.
    fn learn_members(
        &mut self,
        x: Row<'_>,
        y: f64,
        weight: f64,
        variance: f64,
    ) -> Result<f64, LearnError> {
        self.prefetch_active(x);
        let mut preds = std::mem::take(&mut self.scratch);
        preds.clear();
        let mut rows = std::mem::take(&mut self.shared);
        let shared = rows.observe(&mut self.members, std::iter::once(x));
        let scaled = shared.then(|| rows.get(0));
        for (k, m) in self.members.iter_mut().enumerate() {
            if !self.retirement.is_active(k) {
                preds.push(0.0);
                continue;
            }
            match member_step(m, x, scaled, (y, weight), &mut self.refused) {
                Ok(p) => preds.push(p),
                Err(e) => {
                    self.scratch = preds;
                    self.shared = rows;
                    return Err(e);
                }
            }
        }
        self.shared = rows;
        let p = self.mix_round(&preds, (y, weight, x.stored_len()), variance);
        self.scratch = preds;
        Ok(p)
    }

    /// One round of the weighting, given the members' predictions `preds` of the example
    /// `(y, weight, stored)` (made before they learned it; `stored`: its row's stored entries,
    /// which the retirement's coverage counts): the mixture's prediction, then each member's
    /// loss under the rule, AdaHedge's gap and the new weights.
    pub(super) fn mix_round(
        &mut self,
        preds: &[f64],
        (y, weight, stored): (f64, f64, usize),
        variance: f64,
    ) -> f64 {
        let p = self.combine(preds);
        let mut losses = std::mem::take(&mut self.losses);
        losses.clear();
        for (k, &pk) in preds.iter().enumerate() {
            if !self.retirement.is_active(k) {
                // Retired: weight 0, no loss (its cumulative loss stays frozen).
                losses.push(0.0);
                continue;
            }
            let l = match self.rule {
                MixRule::Bayes => self.loss.value(pk, y),
                MixRule::ZeroOne | MixRule::AdaHedge => ((pk > 0.0) != (y > 0.0)) as u8 as f64,
                MixRule::Absolute => miss_probability(self.loss, pk, y),
                MixRule::AdaHedgeBrier => {
                    let miss = miss_probability(self.loss, pk, y);
                    miss * miss
                }
                MixRule::AdaHedgeScaled => (y - pk) * (y - pk) / variance,
                MixRule::AdaHedgeCalibrated => {
                    let q = self.calibration[k].probability(pk);
                    let miss = if y > 0.0 { 1.0 - q } else { q };
                    self.calibration[k].learn(pk, q, y, weight);
                    miss * miss
                }
            };
            // A non-finite loss (an overflowing squared loss) counts as a very large one.
            losses.push(weight * if l.is_finite() { l.min(1e150) } else { 1e150 });
        }
        if self.rule.is_adahedge() {
            self.gap += self.mixability_gap(&losses);
        }
        for (cl, l) in self.cum_loss.iter_mut().zip(&losses) {
            *cl += l;
        }
        let before = self.seen;
        self.seen += weight;
        self.retirement.observe(stored);
        self.reweight();
        if self.retirement.due(before, self.seen) {
            self.retire_negligible();
        }
        self.losses = losses;
        p
    }

    /// Retires the members whose weight is below `ε` (`mixture_retirement.rs`) while the rate is
    /// finite, and reweighs if one did.
    pub(super) fn retire_negligible(&mut self) {
        let finite = !self.rule.is_adahedge() || self.gap > 0.0;
        let mut pi = std::mem::take(&mut self.pi);
        self.weights_into(&mut pi);
        if finite && self.retirement.retire_negligible(&pi, self.seen) {
            self.reweight();
        }
        self.pi = pi;
    }

    /// Recomputes `log π` from the cumulative losses with the rate for the next prediction.
    fn reweight(&mut self) {
        let k = self.cum_loss.len() as f64;
        let eta = match self.rule {
            MixRule::Bayes => self.eta,
            MixRule::AdaHedge
            | MixRule::AdaHedgeBrier
            | MixRule::AdaHedgeScaled
            | MixRule::AdaHedgeCalibrated => self.adahedge_eta(),
            // The rate for the *next* prediction, t + 1 (Cesa-Bianchi & Lugosi, §2.5).
            _ => self.eta * (8.0 * k.ln() / (self.seen + 1.0)).sqrt(),
        };
        let active = |k: &usize| self.retirement.is_active(*k);
        let best = (0..self.cum_loss.len())
            .filter(active)
            .fold(f64::INFINITY, |a, k| a.min(self.cum_loss[k]));
        for (k, (lw, cl)) in self.log_weight.iter_mut().zip(&self.cum_loss).enumerate() {
            let behind = cl - best;
            // 0 for the leaders; −∞·0 would be NaN when η = ∞. A retired member weighs 0.
            *lw = if !self.retirement.is_active(k) {
                f64::NEG_INFINITY
            } else if behind > 0.0 {
                -eta * behind
            } else {
                0.0
            };
        }
    }
}

impl<L: OnlineLearner + Clone> OnlineLearner for Mixture<L> {
    fn dim(&self) -> usize {
        self.members[0].dim()
    }

    fn predict(&self, x: Row<'_>) -> f64 {
        let mut preds = Vec::new();
        predict_each(&self.members, x, &mut preds, |k| {
            self.retirement.is_active(k)
        });
        self.combine(&preds)
    }

    fn learn(&mut self, x: Row<'_>, y: f64, weight: f64) -> Result<f64, LearnError> {
        self.learn_normalized(x, y, weight, 1.0)
    }

    #[inline]
    fn prefetch(&self, x: Row<'_>) {
        self.prefetch_active(x);
    }

    fn weights(&self) -> Cow<'_, [f64]> {
        let pi = self.member_weights();
        let mut w = vec![0.0; self.dim()];
        for (m, p) in self.members.iter().zip(pi).filter(|(_, p)| *p > 0.0) {
            for (a, b) in w.iter_mut().zip(m.weights().iter()) {
                *a += p * b;
            }
        }
        Cow::Owned(w)
    }
}

/// Members merged pairwise (member `k` with member `k`; their shared unit scaling once:
/// [`merge_members`]); the mixture's statistics — cumulative
/// losses `L_k`, importance weights seen, AdaHedge's mixability gap `Δ`, refused steps — are
/// sums over the examples, so they are added (the base's counted once) and `π` is recomputed
/// from them: the weights are those the mixture would have after seeing both shards' losses.
/// (The losses are each member's *on its own shard*: the merged members' losses on the other
/// shard are not known.) Each member's score calibration is merged by [`Calibration::merge`].
/// A member stays retired only if it retired in both, and the merge ends with a retirement check
/// (`mixture_retirement.rs`). The output ([`Mixture::set_calibrated_output`]) stays this
/// mixture's: it is not learned state.
impl<L: OnlineLearner + MergeShare> MergeShare for Mixture<L> {
    /// The mixtures' own rules (members, rule, loss, rate), then every member's, so that no
    /// member is merged when a later one is refused.
    fn check_merge(&self, other: &Self, base: Option<&Self>) -> MergeResult {
        use crate::merge::same;
        crate::merge::with_base(self, other, base, |a, b| {
            same("mixture members", a.members.len(), b.members.len())?;
            same("mixture rule", a.rule, b.rule)?;
            same("mixture loss", a.loss, b.loss)?;
            same("mixture rate", a.eta.to_bits(), b.eta.to_bits())
        })?;
        for (k, (m, o)) in self.members.iter().zip(&other.members).enumerate() {
            m.check_merge(o, base.map(|b| &b.members[k]))?;
        }
        Ok(())
    }

    fn merge_share(&mut self, other: &Self, base: Option<&Self>, share: f64) -> MergeResult {
        use crate::merge::{add_count, add_scalar, add_since};
        self.check_merge(other, base)?;
        merge_members(
            &mut self.members,
            &other.members,
            base.map(|b| &b.members[..]),
            share,
        )?;
        self.retirement
            .merge(&other.retirement, base.map(|b| &b.retirement));
        add_since(
            &mut self.cum_loss,
            &other.cum_loss,
            base.map(|b| &b.cum_loss[..]),
        );
        self.seen = add_scalar(self.seen, other.seen, base.map(|b| b.seen));
        self.gap = add_scalar(self.gap, other.gap, base.map(|b| b.gap)).max(0.0);
        self.refused = add_count(self.refused, other.refused, base.map(|b| b.refused));
        for (k, (c, o)) in self
            .calibration
            .iter_mut()
            .zip(&other.calibration)
            .enumerate()
        {
            c.merge(o, base.map(|b| &b.calibration[k]));
        }
        // Members merged one by one (they did not all share a scaling) whose statistics came
        // out equal share them again; those merged with one scaling already do.
        link(&mut self.members);
        self.reweight();
        if self.retirement.due(0.0, self.seen.max(PERIOD)) {
            self.retire_negligible();
        }
        Ok(())
    }
}
