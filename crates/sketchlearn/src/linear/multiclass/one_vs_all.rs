//! One-against-all: `K` binary learners, member `k` learning class `k` (label `+1`) against the
//! rest (`−1`). All members see every example with the same importance weight, so their margins
//! are on the same scale and the class with the largest margin is predicted (VW's `--oaa`).
//!
//! Probabilities: for the logistic loss each member's `σ(s_k)` (its probability that the
//! class is `k`), normalised to sum 1 (computed from `ln σ(s_k)` so that nothing underflows).
//!
//! **Why normalise, and what it guarantees.** Member `k` learns "class `k` or not" apart from
//! the others, so `q_k = σ(s_k)` estimates `P(y = k | x)`; the `K` estimates need not sum to 1,
//! the probabilities they estimate do. Among distributions `p`, the closest to `q` in the
//! generalised Kullback–Leibler divergence `Σ_k p_k ln(p_k/q_k) − p_k + q_k` has, by its
//! Lagrange condition `ln(p_k/q_k) + λ = 0`, `p_k = q_k·e^{−λ}`: the normalisation
//! `p_k = q_k / Σ_j q_j`. Hence (tested below): estimates that already sum to 1 come back
//! unchanged; the classes keep their order, so the most probable class is the class of the
//! largest margin, the predicted one ([`MulticlassLearner::predict_class`]); and, with
//! `ln x ≤ x − 1`, the log loss is tied to the members' own binary outputs,
//! `−ln p_y = −ln q_y + ln Σ_j q_j ≤ −ln q_y − (1 − q_y) + Σ_{j≠y} q_j`: the true class's
//! binary log loss, less its "not y", plus the "yes" the other classes' members give.
//!
//! **Class learners predict raw** ([`OneVsAll::of_class_learners`]). A default (`auto`) class
//! learner could give the rule its calibrated probability `Q_k = Σ_i π_ki σ(a_ki·p_ki)`
//! (`linear/mixture_output.rs`) in place of `σ(s_k)`: the bound above then holds with `Q` for
//! `q`. Measured on the shared multiclass sets (stop 57, `docs/results/calibration.md`), it
//! lowers the log loss on dna, r8 and penguins but raises it on mnist_test10k (0.4470 → 0.4569,
//! 9 paired s.e.; the four sets' sum rises), so it was not adopted: the scales, fitted
//! class by class on unbalanced "k or not" problems, pull ten classes' small `Q_j` up towards ½
//! and the `Σ_{j≠y} Q_j` term grows. Conditioning `K` independent binary beliefs on "exactly one
//! class is true" gives the other classical rule, `p_k ∝ q_k/(1 − q_k)` (a softmax of the
//! margins); measured too, it raised r8's log loss and was not adopted either.
//! For the other losses (squared, hinge, smoothed hinge on ±1 labels) a margin is not a
//! log-odds; the member's margin clamped to `[−1, 1]` is mapped to `q_k = (1 + s_k)/2` (the
//! least-squares estimate of `P(k | x)` for the squared loss, the same mapping
//! [`Mixture`](crate::linear::Mixture) uses) and normalised; when every `q_k` is 0 the mass goes
//! to the classes of the largest margin, so that the most probable class is always the
//! predicted one.

use super::{check_multiclass, normalize_log, MulticlassLearner};
use crate::linear::{AnyLearner, LearnError, OnlineLearner};
use crate::loss::{softplus, Loss};
use crate::Row;
use serde::{Deserialize, Serialize};

/// `K` binary learners, class `k` against the rest.
///
/// ```
/// use sketchlearn::linear::multiclass::{MulticlassLearner, OneVsAll};
/// use sketchlearn::linear::LearnerConfig;
/// use sketchlearn::loss::Loss;
/// use sketchlearn::Row;
/// let members = (0..3).map(|_| LearnerConfig::default().build(2).unwrap()).collect();
/// let mut oaa = OneVsAll::new(members, Loss::Logistic).unwrap();
/// let data = [([1.0, 0.0], 0), ([0.0, 1.0], 1), ([-1.0, -1.0], 2)];
/// for _ in 0..20 {
///     for (x, y) in &data {
///         oaa.learn(Row::Dense(x), *y, 1.0).unwrap();
///     }
/// }
/// for (x, y) in &data {
///     assert_eq!(oaa.predict_class(Row::Dense(x)), *y);
///     let p = oaa.predict_proba(Row::Dense(x));
///     assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
/// }
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OneVsAll<L = AnyLearner> {
    members: Vec<L>,
    loss: Loss,
    t: u64,
    refused: u64,
}

impl<L: OnlineLearner> OneVsAll<L> {
    /// One member per class (`K ≥ 2`, all of the same dimension), learning with `loss` (which
    /// decides how margins become probabilities; the members' own loss should be the same).
    pub fn new(members: Vec<L>, loss: Loss) -> Result<Self, LearnError> {
        if members.len() < 2 {
            return Err(LearnError::InvalidParameter(format!(
                "a multiclass model needs at least 2 classes, got {}",
                members.len()
            )));
        }
        let d = members[0].dim();
        if members.iter().any(|m| m.dim() != d) {
            return Err(LearnError::InvalidParameter(
                "one-against-all members must have the same dimension".into(),
            ));
        }
        Ok(OneVsAll {
            members,
            loss,
            t: 0,
            refused: 0,
        })
    }

    /// The members, member `k` for class `k`.
    pub fn members(&self) -> &[L] {
        &self.members
    }

    /// The loss that maps margins to probabilities.
    pub fn loss(&self) -> Loss {
        self.loss
    }

    /// Probabilities from the members' margins (module documentation).
    pub fn probabilities(&self, scores: &[f64]) -> Vec<f64> {
        match self.loss {
            Loss::Logistic => {
                let log_sigma: Vec<f64> = scores.iter().map(|&s| -softplus(-s)).collect();
                normalize_log(&log_sigma)
            }
            _ => {
                let q: Vec<f64> = scores
                    .iter()
                    .map(|&s| {
                        if s.is_nan() {
                            0.0
                        } else {
                            0.5 * (1.0 + s.clamp(-1.0, 1.0))
                        }
                    })
                    .collect();
                let sum: f64 = q.iter().sum();
                if sum > 0.0 {
                    q.iter().map(|v| v / sum).collect()
                } else {
                    // Every margin ≤ −1: the largest margins share the mass.
                    let top = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    let l: Vec<f64> = scores
                        .iter()
                        .map(|&s| if s == top { 0.0 } else { f64::NEG_INFINITY })
                        .collect();
                    normalize_log(&l)
                }
            }
        }
    }
}

impl<L: OnlineLearner + Clone> MulticlassLearner for OneVsAll<L> {
    fn classes(&self) -> usize {
        self.members.len()
    }

    fn dim(&self) -> usize {
        self.members[0].dim()
    }

    /// The members' raw margins.
    fn scores(&self, x: Row<'_>) -> Vec<f64> {
        self.members.iter().map(|m| m.predict(x)).collect()
    }

    fn predict_proba(&self, x: Row<'_>) -> Vec<f64> {
        self.probabilities(&self.scores(x))
    }

    /// Every member learns `(x, ±1)`; a member refusing a step ([`LearnError::Diverged`], or its
    /// sketch failing) keeps its state, is counted in [`MulticlassLearner::refused`], and its
    /// margin is then read with `predict` — the others go on and the call succeeds (as in
    /// [`Mixture`](crate::linear::Mixture)).
    ///
    /// **A row a member refuses changes nothing** but the count, as in the mixture: a row above
    /// the mixture's size test (`suspect_row`) is learned from an undo copy, put back when a
    /// member (or a mixture inside one) refused it, so that no class learns it.
    fn learn(&mut self, x: Row<'_>, class: usize, weight: f64) -> Result<Vec<f64>, LearnError> {
        check_multiclass(&x, class, weight, self.dim(), self.classes())?;
        if !crate::linear::mixture::suspect_row(x, 1.0, weight) {
            return self.learn_members(x, class, weight);
        }
        let step = |o: &mut Self| o.learn_members(x, class, weight);
        match crate::linear::undo::learn_or_undo(self, step)? {
            Some(p) => Ok(p),
            None => Ok(self.predict_proba(x)),
        }
    }

    /// Refusals seen by the reduction (a member that absorbs its own refusals, such as a
    /// [`Mixture`](crate::linear::Mixture), counts them itself).
    fn refused(&self) -> u64 {
        self.refused
    }

    fn examples_seen(&self) -> u64 {
        self.t
    }
}

impl<L: OnlineLearner + Clone> crate::linear::undo::Undo for OneVsAll<L> {
    /// The refusals of the reduction and inside its members.
    fn refusals(&self) -> u64 {
        let inner = self.members.iter().map(L::nested_refusals);
        inner.fold(self.refused, u64::saturating_add)
    }

    fn count_refused(&mut self, n: u64) {
        self.refused = self.refused.saturating_add(n);
    }
}

impl<L: OnlineLearner + Clone> OneVsAll<L> {
    /// [`MulticlassLearner::learn`] of a checked example, without the undo copy.
    fn learn_members(
        &mut self,
        x: Row<'_>,
        class: usize,
        weight: f64,
    ) -> Result<Vec<f64>, LearnError> {
        self.t += 1;
        for m in &self.members {
            m.prefetch(x);
        }
        let mut scores = Vec::with_capacity(self.members.len());
        for (k, m) in self.members.iter_mut().enumerate() {
            let y = if k == class { 1.0 } else { -1.0 };
            let s = match m.learn(x, y, weight) {
                Ok(s) => s,
                Err(LearnError::Diverged(_) | LearnError::Sketch(_)) => {
                    self.refused += 1;
                    m.predict(x)
                }
                // The example was validated above: not reached with the crate's learners.
                Err(e) => return Err(e),
            };
            scores.push(s);
        }
        Ok(self.probabilities(&scores))
    }
}

impl OneVsAll<AnyLearner> {
    /// [`OneVsAll::new`] over the class learners `members`, each predicting its raw score
    /// ([`AnyLearner::set_calibrated_output`] off): one-against-all compares and normalises the
    /// classes' raw scores, so a default (`auto`) class learner, built with the calibrated
    /// output on, predicts raw here. The one place a one-against-all model's class learners
    /// are made so (calibrated class learners were measured and not adopted: module
    /// documentation).
    pub fn of_class_learners(mut members: Vec<AnyLearner>, loss: Loss) -> Result<Self, LearnError> {
        for m in &mut members {
            m.set_calibrated_output(false);
        }
        Self::new(members, loss)
    }

    /// For each `(class, member)` of `members`, `base`'s learner put back for that member of
    /// the class's mixture ([`AnyLearner::forget_retired`]), retired there: what a distributed
    /// fit does for the members retired for a class in every shard of a round. The classes
    /// are learned, merged and predicted independently (each class's mixture sees the same
    /// rows and is merged with the same class of the other shard), so the derivation of the
    /// binary case holds class by class (`mixture_retirement.rs`, "Saved models and merges"):
    /// the probabilities and what it learns next are the same bits. All or nothing: refused,
    /// with nothing changed, for a class out of range, a `base` of another number of classes,
    /// or a member that is active (or a class without a mixture).
    pub fn forget_retired(
        &mut self,
        base: &Self,
        members: &[(usize, usize)],
    ) -> Result<(), LearnError> {
        let k = self.members.len();
        if base.members.len() != k {
            return Err(LearnError::InvalidParameter(format!(
                "the base model has {} classes, this one {k}",
                base.members.len()
            )));
        }
        if let Some(&(c, _)) = members.iter().find(|(c, _)| *c >= k) {
            return Err(LearnError::InvalidParameter(format!(
                "class {c} of a model of {k} classes does not exist"
            )));
        }
        let by_class: Vec<Vec<usize>> = (0..k)
            .map(|c| members.iter().filter(|m| m.0 == c).map(|m| m.1).collect())
            .collect();
        for (c, ms) in by_class.iter().enumerate() {
            self.members[c].check_forget_retired(&base.members[c], ms)?;
        }
        for (c, ms) in by_class.iter().enumerate() {
            self.members[c].forget_retired(&base.members[c], ms)?;
        }
        Ok(())
    }
}

/// Per class: member `k` merged with member `k` ([`crate::merge`]), with `self`'s share of the
/// examples learned since `base`; the counts add up.
impl<L: crate::merge::MergeShare> crate::merge::Merge for OneVsAll<L> {
    /// Classes and loss, then every class's member, so that no class is merged when a later
    /// one is refused.
    fn check_merge(&self, other: &Self, base: Option<&Self>) -> crate::merge::MergeResult {
        use crate::merge::same;
        crate::merge::with_base(self, other, base, |a, b| {
            same("classes", a.members.len(), b.members.len())?;
            same("loss", a.loss, b.loss)
        })?;
        for (k, (m, o)) in self.members.iter().zip(&other.members).enumerate() {
            m.check_merge(o, base.map(|b| &b.members[k]))?;
        }
        Ok(())
    }

    fn merge(&mut self, other: &Self, base: Option<&Self>) -> Result<(), crate::merge::MergeError> {
        use crate::merge::{add_count, share_of};
        crate::merge::Merge::check_merge(self, other, base)?;
        let share = share_of(self.t, other.t, base.map_or(0, |b| b.t));
        for (k, (m, o)) in self.members.iter_mut().zip(&other.members).enumerate() {
            m.merge_share(o, base.map(|b| &b.members[k]), share)?;
        }
        self.t = add_count(self.t, other.t, base.map(|b| b.t));
        self.refused = add_count(self.refused, other.refused, base.map(|b| b.refused));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linear::{AdaGrad, Ogd, StepSchedule};

    fn ova(loss: Loss) -> OneVsAll<AdaGrad> {
        let members = (0..3)
            .map(|_| AdaGrad::new(2, loss, 0.5).unwrap())
            .collect();
        OneVsAll::new(members, loss).unwrap()
    }

    #[test]
    fn probabilities_are_distributions_for_every_loss() {
        for loss in Loss::ALL {
            let o = ova(loss);
            for s in [
                vec![0.0, 0.0, 0.0],
                vec![-5.0, -3.0, -2.0],
                vec![1e300, -1e300, 1e300],
                vec![f64::NAN, 0.5, -0.5],
                vec![-800.0, -900.0, -1000.0],
            ] {
                let p = o.probabilities(&s);
                assert!(p.iter().all(|v| v.is_finite() && (0.0..=1.0).contains(v)));
                assert!(
                    (p.iter().sum::<f64>() - 1.0).abs() < 1e-12,
                    "{loss} {s:?} {p:?}"
                );
            }
            let p = o.probabilities(&[-5.0, -3.0, -2.0]);
            assert_eq!(super::super::argmax(&p), 2, "{loss}");
        }
    }

    #[test]
    fn logistic_probabilities_normalise_the_sigmoids() {
        let o = ova(Loss::Logistic);
        let s = [0.3, -1.2, 2.0];
        let sig: Vec<f64> = s.iter().map(|&v| crate::loss::sigmoid(v)).collect();
        let total: f64 = sig.iter().sum();
        let p = o.probabilities(&s);
        for k in 0..3 {
            assert!((p[k] - sig[k] / total).abs() < 1e-15);
        }
    }

    /// The properties the module documentation derives for the logistic rule, over margins
    /// from a fixed generator: a distribution; a fixed point on estimates that sum to 1; the
    /// predicted class (largest margin) is the most probable; and the log-loss bound
    /// `−ln p_y ≤ −ln q_y − (1 − q_y) + Σ_{j≠y} q_j` for every class `y`.
    #[test]
    fn logistic_normalisation_keeps_order_fixed_points_and_the_log_loss_bound() {
        use crate::loss::sigmoid;
        let o = ova(Loss::Logistic);
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut draw = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 16.0
        };
        for _ in 0..2000 {
            let s = [draw(), draw(), draw()];
            let q: Vec<f64> = s.iter().map(|&v| sigmoid(v)).collect();
            let p = o.probabilities(&s);
            assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            assert_eq!(super::super::argmax(&p), super::super::argmax(&s), "{s:?}");
            for y in 0..3 {
                let others: f64 = (0..3).filter(|&j| j != y).map(|j| q[j]).sum();
                let bound = -q[y].ln() - (1.0 - q[y]) + others;
                assert!(-p[y].ln() <= bound + 1e-12, "{s:?} class {y}");
            }
        }
        // Margins whose sigmoids sum to 1: ½, ¼, ¼ come back unchanged.
        let third = -(3.0f64).ln();
        let p = o.probabilities(&[0.0, third, third]);
        for (a, b) in p.iter().zip([0.5, 0.25, 0.25]) {
            assert!((a - b).abs() < 1e-15, "{p:?}");
        }
    }

    #[test]
    fn a_diverging_member_is_counted_and_kept() {
        // Constant-step OGD on squared loss with huge features diverges quickly.
        let members = (0..2)
            .map(|_| {
                Ogd::new(1, Loss::Squared, 1.0, StepSchedule::Constant, f64::INFINITY).unwrap()
            })
            .collect();
        let mut o = OneVsAll::new(members, Loss::Squared).unwrap();
        for t in 0..200 {
            let p = o.learn(Row::Dense(&[1e30]), t % 2, 1.0).unwrap();
            assert!(p.iter().all(|v| v.is_finite()));
        }
        assert!(o.refused() > 0);
        assert!(o
            .members()
            .iter()
            .all(|m| m.weights().iter().all(|w| w.is_finite())));
    }
}
