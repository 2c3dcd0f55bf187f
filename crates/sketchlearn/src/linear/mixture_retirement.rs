//! Retiring a [`Mixture`](super::Mixture)'s members whose weight has become negligible (issue
//! 27: "is every member worth its cost on sparse data?"). On a9a the default's final weights
//! are `4e-23, 2e-76, 5e-67, 1.0`: three of its four members — each about a quarter of the
//! learning time — no longer change a single bit of the mixture's probability, yet learn every
//! example to the end of the pass.
//!
//! # The rule
//! At the *check points* — the rounds `t` on which the importance weight seen, `W_t`, passes a
//! multiple of [`PERIOD`], once `W_t ≥` [`WARM_UP`] and while the rate `η_t` is finite (AdaHedge
//! follows the leader with `η = ∞` until its first mixability gap, and then gives every other
//! member a weight of exactly 0 for reasons that are not yet evidence), once the stream has shown
//! [`COVERAGE`] views per dimension (below) — every member `k` still
//! active whose normalised weight is `π_k < ε` and not the largest retires: it is no longer
//! learned nor evaluated, its weight is exactly 0 from then on, and its loss no longer enters
//! AdaHedge's bookkeeping (its cumulative loss `L_k` is frozen, and it takes no part in the
//! leader's `min_j L_j` nor in the mixability gap). `ε = 0` retires nobody: the mixture is bit
//! for bit the one before this rule.
//!
//! # The coverage condition (no member is judged before the stream has shown its features)
//! A member's state on a feature the stream has not yet shown is its prior, so on sparse input
//! with many features a mixture's early weights compare the members' *priors* on most of the
//! space, not what they learned: a second-order member that starts slowly (FD-SON, whose sketch
//! needs each direction seen before its steps are good) can fall far behind and then lead. The
//! condition: no member retires before the feature views seen, `V_t = Σ_{s ≤ t} nnz(x_s)`,
//! reach `c·d` (`c` = [`COVERAGE`], `d` the dimension). *Derivation of `c`*: with rows of `nnz̄`
//! non-zeros spread over `d` features, a feature is missing from `t` rows with probability
//! `(1 − nnz̄/d)^t ≤ e^{−t·nnz̄/d} = e^{−V_t/d}`, so at `V_t = c·d` the expected share of
//! features never seen is at most `e^{−c}`; `c = 3` asks that at least 95 % of them have been
//! seen before a member is judged (`e^{−3} ≈ 0.0498`). It is not fitted to a stream: retire17's
//! held-out streams (`docs/results/speed.md`) show that no constant count makes a larger `ε`
//! safe, and this condition is not that — it only keeps the default `ε` from judging a member
//! before its features exist. It never retires a member earlier than `ε` alone: a check point
//! retires a member only if `ε` alone would retire it there (`π_k < ε`, not the largest), so
//! up to the first retirement the two runs are the same, and the first retirement of the
//! condition's run is no earlier than that of `ε` alone (property-tested). On dense or
//! low-dimensional input (the shared binary sets: `d/nnz̄ ≤ 26`) `V_t ≥ 3d` long before
//! the warm-up's 1,024 examples, and nothing changes (r8, `d/nnz̄ ≈ 404`, is covered at about
//! 1,212 examples: its binary outputs are the same, r8_multiclass's model file keeps one member a
//! little longer). The derivation assumes features used about uniformly: a long tail of rare
//! features reaches `3d` later than it says, and **hashed input** (VW format) takes `d` as the
//! whole hash space (`2^b`, `3·2^18` entries at `-b 18`), so on short VW streams retirement is
//! in effect off (safe, slower; `-b` smaller brings it back); on the generated stream with `d = 2^20`,
//! `nnz = 20` (`d/nnz̄ = 52,429`, where `ε = 10⁻²⁰` alone retired the eventual leader at
//! 7,680–11,008 examples) no member is judged before 157,000 examples. `ε = 0` ignores it.
//!
//! The check points depend only on the importance weights of the examples, not on how the
//! examples are batched nor on which thread learns which member, so a batch learned on two
//! threads (`mixture_batch.rs`, which ends each part of a batch at a check point) gives the same
//! bits as one example at a time.
//!
//! # What it preserves (derivation)
//! *The prediction.* Let `R` be the members retiring at a check point and `ρ = Σ_{k∈R} π_k <
//! |R|·ε`. The mixture's probability `P = Σ_k π_k q_k` (logistic loss: `q_k = σ(p_k)`; the
//! other losses mix margins) becomes `P' = Σ_{k∉R} π_k q_k / (1 − ρ)`, so `P' − P = ρ/(1 − ρ) ·
//! Σ_{k∉R} π_k q_k − Σ_{k∈R} π_k q_k`, whose first term lies in `[0, ρ]` and second in `[0, ρ]`
//! (`q ∈ [0, 1]`): `|P' − P| ≤ ρ < |R|·ε`. For a mixture of margins the same algebra bounds the
//! change by `ρ·max_{j,k}|p_j − p_k|`, i.e. `ε·(range)` per retired member
//! (`tests/suite/mixture_retirement.rs` checks the probability bound at every retirement, four rules).
//!
//! *The regret.* AdaHedge's mix loss telescopes: with a fixed rate, `m_t = −(1/η) ln(Φ_{t+1} /
//! Φ_t)` for the potential `Φ_t = Σ_{k active} e^{−η L_k(t−1)}/K`, so `M_T ≤ L_j(T) + ln K / η`
//! for any member `j` (de Rooij, van Erven, Grünwald & Koolen, *Follow the Leader If You Can,
//! Hedge If You Must*, JMLR 2014, Lemma 1 and the proof of Thm. 6, where the rate decreases and
//! `Φ` only grows when it does). Dropping the retiring members' terms from `Φ` divides it by
//! `1 − ρ`, which adds `−ln(1 − ρ)/η_t ≤ ρ/((1 − ρ) η_t)` to the mix loss — the only change to the
//! proof. So against every member that never retires, AdaHedge's regret bound (ibid. Thm. 8, the
//! mixture module's `2√(S·L*(T − L*)/T·ln K) + S(16/3·ln K + 2)`) holds with `L*` the best
//! *remaining* member's loss and at most `Σ_{retirements} ρ/((1 − ρ)η_t) < (K − 1)·ε·Δ_t/((1 −
//! ε) ln K)` added, where `Δ_t` is the mixability gap at the retirement (`η_t = ln K / Δ_t`; `K`
//! stays the number of members built, so the rate is the one the mixture had before): with the
//! default `ε = 10⁻²⁰` and `Δ` of the order of the regret, a negligible fraction of it.
//!
//! *What is given up.* A retired member cannot come back: the regret is against the members that
//! remain, so a member that would have overtaken the leader later in the stream (a drift, or a
//! slow starter such as a second-order learner on a badly conditioned stream) is lost. The warm-
//! up and a small `ε` make that unlikely: a member with `π_k < ε` is `ln(1/ε)/η_t` of cumulative
//! loss behind the leader (`≈ 46/η_t` for the default `ε = 10⁻²⁰`), where `1/η_t` is of the
//! order of the regret — but `η_t` falls as the pass goes on, so a fixed gap weighs less later
//! (see [`DEFAULT_EPSILON`]). The value of `ε`, the warm-up and when members retire on the measured streams are in
//! `docs/results/speed.md` ("Retiring negligible members").
//!
//! # Saved models and merges
//! A retired member's state (as it was when it retired) stays in the model file, so the mixture
//! loads, continues (`-i`) and merges as before (`mixture_wire.rs` appends `ε` and each member's
//! retirement point to the saved losses when `ε > 0`, and the views `V_t` while they are below
//! `c·d` — with `ε = 0` too, so that a model saved with retirement off and resumed with it on
//! judges no member before the coverage: a model past the coverage is byte for byte the earlier
//! format, one saved with `ε = 0` past it too; a file without `V_t` loads as covered — files written before the condition continue
//! with today's rule). In a merge, a member retires only if it retired in *both* mixtures: each
//! shard's retirement is evidence from that shard alone, and a member retired on one shard may
//! be the leader on the other. Its loss on the shard where it retired is frozen at that point (the
//! losses it would have had afterwards are not known), so the merged weights favour it; the merge
//! ends with a check (past the warm-up) that retires it again if its merged weight is still `< ε`.
//!
//! **A member retired in every shard need not be merged, nor sent** ([`Mixture::forget_retired`]).
//! Such a member stays retired in the merge (the rule above), and a retired member is never
//! learned nor evaluated again (retirement is permanent, [`Retirement::merge`] included): its
//! state changes no prediction of the merged mixture, nor any later step. So a distributed fit
//! (`sketchlearn.dask`) may put back the round's base learner for it in each shard before the
//! shards' deltas are made (they then hold nothing of it: ~half of a `2^20`-feature default's
//! delta is the FD-SON member retired at ~157,000 rows) and merged (base with base: nothing to
//! do). What differs is only that member's saved state — the base's, or the merge of the
//! bases, where it was its shards' merge — and what reads it alone (`inspect`'s sketch error
//! bound of that member); the predictions, the weights, the losses and what the mixture
//! learns next are the same bits (`tests/suite/mixture_retirement.rs`).
//!
//! *In rounds* (a fit that merges, broadcasts the merge and learns on from it): a member
//! retired in every shard of round `r` is retired in every merge of the round's tree (each
//! merge keeps it retired, both sides having it retired), so in the round's result `G_r`;
//! every state of round `r + 1` grows from `G_r`, where it is retired, and retirement is
//! permanent, so it is never learned nor evaluated again in any later round either. Putting
//! the base's learner back for it in each shard of round `r` changes `G_r` only in its state,
//! which nothing reads: round `r + 1` starts from the same weights, losses, retirements and
//! other members (its warm start predicts and learns the same bits), and from then on the
//! member is retired in the base itself, so its state in every later shard is the base's
//! already and there is nothing more to leave out. A member retired in *some* shards only is
//! not left out: the merge makes it active again (its state is then read), unless the merge's
//! own check retires it again.
//!
//! *Class by class* ([`OneVsAll::forget_retired`](super::OneVsAll::forget_retired)): a
//! one-against-all model's classes are separate learners (class `c`'s mixture learns `x` with
//! label `±1`, its margin alone is read for class `c`, and the merge merges class `c` with
//! class `c`), so the argument holds for each class's mixture: a member retired for class `c`
//! in every shard may be put back to the base's for that class, whatever the other classes
//! retired. The probabilities are a function of the classes' margins, so they are the same
//! bits. A softmax model holds no mixture.

use serde::{Deserialize, Serialize};

impl<L: super::OnlineLearner + Clone> super::Mixture<L> {
    /// Puts `base`'s learner back for each member of `members`, all retired in this mixture:
    /// for a member that is a unit scaling, its inner learner alone (the scaling's statistics,
    /// shared by the members, stay this mixture's); otherwise the whole member. The mixture's
    /// weights, losses and retirement are untouched, so its predictions and what it learns next
    /// are the same bits (a retired member is neither evaluated nor learned). For members
    /// retired in every shard of a merge (see the [module](self) docs, "Saved models and
    /// merges"); `base` is the mixture the shards grew from. Refused, with nothing changed, for
    /// a member that is active here, a member index out of range, or a `base` of another
    /// number of members.
    pub fn forget_retired(
        &mut self,
        base: &Self,
        members: &[usize],
    ) -> Result<(), super::LearnError> {
        self.check_forget(base, members)?;
        for &j in members {
            let from = &base.members[j];
            match (
                self.members[j].as_unit_scaling_mut(),
                from.as_unit_scaling(),
            ) {
                (Some(u), Some(b)) => *u.inner_mut() = b.inner().clone(),
                _ => self.members[j] = from.clone(),
            }
        }
        Ok(())
    }

    /// `Ok` when [`forget_retired`](Self::forget_retired) with these arguments refuses
    /// nothing, else its error; nothing is changed (a one-against-all model checks every
    /// class before it changes one).
    pub fn check_forget(&self, base: &Self, members: &[usize]) -> Result<(), super::LearnError> {
        let k = self.members.len();
        if base.members.len() != k {
            return Err(super::LearnError::InvalidParameter(format!(
                "the base mixture has {} members, this one {k}",
                base.members.len()
            )));
        }
        if let Some(&j) = members
            .iter()
            .find(|&&j| j >= k || self.retirement.is_active(j))
        {
            return Err(super::LearnError::InvalidParameter(format!(
                "member {j} of a mixture of {k} has not retired: only a retired member's state \
                 can be put back to the base's"
            )));
        }
        Ok(())
    }
}

/// Importance weight between check points. The command line learns batches of 256 examples
/// from the start of the file, so with unit weights every check point ends a batch and the
/// two-thread path splits no batch for it.
pub const PERIOD: f64 = 256.0;

/// Importance weight seen before the first check point.
pub const WARM_UP: f64 = 1024.0;

/// Feature views per dimension, `c`, before a member can retire: no member retires while the
/// stream's non-zeros seen are below `c·d` (see the [module](self) docs' derivation: at least
/// `1 − e^{−c} ≈ 95 %` of the features seen).
pub const COVERAGE: f64 = 3.0;

/// The default `ε` of the `auto` mixtures (the measurements are in `docs/results/speed.md`).
///
/// Why so small: a member's weight relative to the leader is `exp(−η_t·gap)`, and a slow starter's
/// gap can grow for thousands of examples before it shrinks. On the generated sparse stream (2^18
/// features) the FD-SON member's cumulative Brier loss is 25.5 behind AdaGrad's at example 6,144,
/// where its weight is at its minimum, `1.4e-17` (AdaHedge's rate stays 1.525 from example 1,024
/// to ≈ 30,000: the weight comes back because the gap shrinks), and it leads from ≈ 30,000 on; any
/// `ε` above that minimum retires it (`1e-9`: at 2,304, progressive error 0.4103 → 0.4172). On
/// `cadata_scale.libsvm` in file order (`--loss squared`, a sorted file) the AdaGrad grid, the
/// leader from 3,072 on, weighs `1.8e-20` at the first check point: `1e-20` keeps it by a factor
/// 1.8, and any `ε` above retires it (RMSE 52,354 → 59,598). `ε = 1e-20` keeps every shared file's
/// error while a9a's three losing members still retire (CPU 0.36 → 0.22 s against 0.16 s at `1e-9`).
/// It is not safe in general: on held-out streams of the same generator with 2^20 features and 20
/// non-zeros per row the FD-SON member bottoms at `3.9e-22` and `1.2e-25` (two seeds), `1e-20`
/// retires it and the error is 2.3 and 3.3 standard errors worse than with no retirement: the
/// [`COVERAGE`] condition keeps it there (no member is judged before `3·d` feature views).
/// `docs/results/speed.md` ("The retirement threshold ε on every shared file") has every file at
/// `ε` = 1e-20 … 1e-6, a warm-up tied to `d/nnz̄` that would allow `1e-9` on the shared files, and
/// the held-out streams on which that warm-up fails (measured, not adopted). `--retire` chooses
/// another value.
pub const DEFAULT_EPSILON: f64 = 1e-20;

/// The retirement state of a mixture of `K` members.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Retirement {
    /// `ε`: a member whose weight is below it at a check point retires (0: never).
    epsilon: f64,
    /// Per member: the importance weight the mixture had seen when it retired (`> 0`), or 0
    /// while it is active.
    retired_at: Vec<f64>,
    /// `V_t`: the feature views seen (the rows' stored entries, summed).
    views: f64,
    /// `c·d`: the views before which no member retires.
    needed: f64,
}

impl Retirement {
    /// No member retired yet, threshold `epsilon` (validated by [`Retirement::check_epsilon`]),
    /// for a mixture of dimension `dim` (no feature seen yet: see [`COVERAGE`]).
    pub fn new(members: usize, epsilon: f64, dim: usize) -> Self {
        Retirement {
            epsilon: epsilon.abs(), // −0 is 0
            retired_at: vec![0.0; members],
            views: 0.0,
            needed: COVERAGE * dim as f64,
        }
    }

    /// Counts the `stored` entries of a row learned (the views `V_t` of the [`COVERAGE`]
    /// condition).
    #[inline]
    pub fn observe(&mut self, stored: usize) {
        self.views += stored as f64;
    }

    /// Whether the stream has shown enough features for a member to be judged:
    /// `V_t ≥ c·d` ([`COVERAGE`]).
    pub fn covered(&self) -> bool {
        self.views >= self.needed
    }

    /// `Err` unless `0 ≤ ε < 1`.
    pub fn check_epsilon(epsilon: f64) -> Result<(), String> {
        if (0.0..1.0).contains(&epsilon) {
            Ok(())
        } else {
            Err(format!(
                "the retirement threshold must be in [0, 1), got {epsilon}"
            ))
        }
    }

    /// The threshold `ε`.
    pub fn epsilon(&self) -> f64 {
        self.epsilon
    }

    /// Sets `ε` for the check points to come (members retired so far stay retired).
    pub fn set_epsilon(&mut self, epsilon: f64) -> Result<(), String> {
        Self::check_epsilon(epsilon)?;
        self.epsilon = epsilon.abs(); // −0 is 0
        Ok(())
    }

    /// Whether member `k` still learns and predicts.
    #[inline]
    pub fn is_active(&self, k: usize) -> bool {
        self.retired_at[k] == 0.0
    }

    /// Members still active.
    pub fn active_count(&self) -> usize {
        self.retired_at.iter().filter(|&&r| r == 0.0).count()
    }

    /// Per member: the importance weight seen when it retired, `None` while active.
    pub fn retired_at(&self) -> Vec<Option<f64>> {
        self.retired_at
            .iter()
            .map(|&r| (r > 0.0).then_some(r))
            .collect()
    }

    /// Whether the round that took the weight seen from `before` to `after` is a check point
    /// (see the [module](self) docs); never with `ε = 0` or a single member left.
    #[inline]
    pub fn due(&self, before: f64, after: f64) -> bool {
        self.epsilon > 0.0
            && after >= WARM_UP
            && (after / PERIOD).floor() > (before / PERIOD).floor()
            && self.active_count() > 1
    }

    /// Retires every active member whose weight `pi[k] < ε` and is not the largest, at `seen`,
    /// once [`covered`](Self::covered); true if one did.
    pub fn retire_negligible(&mut self, pi: &[f64], seen: f64) -> bool {
        if !self.covered() {
            return false;
        }
        let top = pi.iter().copied().fold(0.0, f64::max);
        let mut any = false;
        for (r, &p) in self.retired_at.iter_mut().zip(pi) {
            if *r == 0.0 && p < self.epsilon && p < top {
                *r = seen.max(f64::MIN_POSITIVE);
                any = true;
            }
        }
        any
    }

    /// The merge's retirement (see the [module](self) docs): retired where both are, at the
    /// later point. The merged threshold is the smaller `ε` (`ε` is a rule for the check points
    /// to come, not learned state: a model saved before the rule, `ε = 0`, merges with one built
    /// now and the merge retires nobody). The views are a sum over the examples: added, the
    /// `base`'s counted once, as the mixture's weight seen is.
    pub fn merge(&mut self, other: &Self, base: Option<&Self>) {
        // A base that is not the shards' ancestor (only its configuration is checked) could
        // make the sum negative, a count no file can hold: a count is never below zero.
        self.views =
            crate::merge::add_scalar(self.views, other.views, base.map(|b| b.views)).max(0.0);
        self.epsilon = self.epsilon.min(other.epsilon);
        for (a, &b) in self.retired_at.iter_mut().zip(&other.retired_at) {
            *a = if *a > 0.0 && b > 0.0 { a.max(b) } else { 0.0 };
        }
    }

    /// The values a model file holds after the losses: `[ε, r_1 … r_K]`, then `V_t` while not
    /// [`covered`](Self::covered) (`mixture_wire.rs`); nothing when `ε = 0`, no member retired
    /// and the coverage is reached. Below the coverage `ε = 0` keeps `V_t` too, so that a model
    /// trained with `--retire 0` and resumed with retirement on judges no member before `c·d`
    /// views, as one run with it would.
    pub fn to_saved(&self) -> Vec<f64> {
        let none_retired = self.active_count() == self.retired_at.len();
        if self.epsilon == 0.0 && none_retired && self.covered() {
            return Vec::new();
        }
        let mut v = Vec::with_capacity(2 + self.retired_at.len());
        v.push(self.epsilon);
        v.extend(&self.retired_at);
        if !self.covered() {
            v.push(self.views);
        }
        v
    }

    /// Reads [`Retirement::to_saved`]'s values for `k` members of dimension `dim` (`saved`
    /// empty: `ε = 0`, none retired — every file written before this rule; without `V_t`: past
    /// the coverage, or written before it — both continue with `ε` alone).
    pub fn from_saved(k: usize, saved: &[f64], dim: usize) -> Result<Self, String> {
        let mut out = Retirement::new(k, 0.0, dim);
        out.views = out.needed;
        let Some((&epsilon, rest)) = saved.split_first() else {
            return Ok(out);
        };
        Self::check_epsilon(epsilon).map_err(|e| format!("mixture: {e}"))?;
        let retired_at = match rest.len() {
            n if n == k => rest,
            n if n == k + 1 => {
                let views = rest[k];
                if !(views.is_finite() && views >= 0.0) {
                    return Err("mixture: the saved feature views are not a number ≥ 0".into());
                }
                out.views = views;
                &rest[..k]
            }
            n => {
                return Err(format!(
                    "mixture of {k} members: {n} saved retirement points"
                ));
            }
        };
        // `+∞` is a point learning reaches: importance weights near `f64::MAX` take the weight
        // seen there (a file must hold every state the mixture can be in).
        if retired_at.iter().any(|r| r.is_nan() || *r < 0.0) {
            return Err("mixture: a saved retirement point is not a number ≥ 0".into());
        }
        out.epsilon = epsilon;
        out.retired_at = retired_at.to_vec();
        if out.active_count() == 0 {
            return Err("mixture: every member is saved as retired".into());
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_points_merge_and_saved_values() {
        let mut r = Retirement::new(3, 1e-9, 0);
        assert!(!r.due(0.0, 1.0));
        assert!(!r.due(255.0, 256.0), "before the warm-up");
        assert!(r.due(1023.0, 1024.0));
        assert!(!r.due(1024.0, 1025.0));
        assert!(r.due(1279.5, 1280.5));
        assert!(!Retirement::new(3, 0.0, 0).due(1023.0, 1024.0));
        assert!(r.retire_negligible(&[1e-10, 0.5, 0.5 - 1e-10], 1024.0));
        assert_eq!(r.retired_at(), vec![Some(1024.0), None, None]);
        assert!(!r.retire_negligible(&[0.0, 1e-12, 1.0], 1280.0) || !r.is_active(1));
        // The largest weight never retires, even under a large ε.
        let mut big = Retirement::new(2, 0.9, 0);
        big.retire_negligible(&[0.5, 0.5], 2048.0);
        assert_eq!(big.active_count(), 2);

        let mut a = Retirement::new(3, 1e-9, 0);
        a.retired_at = vec![2048.0, 1024.0, 0.0];
        let mut b = Retirement::new(3, 1e-9, 0);
        b.retired_at = vec![4096.0, 0.0, 0.0];
        a.merge(&b, None);
        assert_eq!(a.retired_at(), vec![Some(4096.0), None, None]);
        // Thresholds that differ merge to the smaller one (a model saved before the rule: 0).
        let mut c = a.clone();
        c.merge(&Retirement::new(3, 1e-6, 0), None);
        assert_eq!((c.epsilon(), c.retired_at()), (1e-9, vec![None; 3]));
        a.merge(&Retirement::new(3, 0.0, 0), None);
        assert_eq!(a.epsilon(), 0.0);

        assert!(Retirement::new(3, 0.0, 0).to_saved().is_empty());
        // `ε = 0` below the coverage keeps the views (a resume with retirement on is exact).
        let mut off = Retirement::new(3, 0.0, 100);
        off.observe(120);
        assert_eq!(off.to_saved(), vec![0.0, 0.0, 0.0, 0.0, 120.0]);
        let mut back = Retirement::from_saved(3, &off.to_saved(), 100).unwrap();
        assert_eq!(back, off);
        back.set_epsilon(1e-20).unwrap();
        assert!(!back.covered());
        off.observe(180);
        assert!(off.covered() && off.to_saved().is_empty());
        let back = Retirement::from_saved(3, &a.to_saved(), 0).unwrap();
        assert_eq!(back, a);
        assert_eq!(
            Retirement::from_saved(3, &[], 0).unwrap(),
            Retirement::new(3, 0.0, 0)
        );
        assert!(Retirement::from_saved(2, &[1e-9, 5.0, 5.0], 0).is_err());
        assert!(Retirement::from_saved(2, &[1e-9, 5.0], 0).is_err());
        assert!(Retirement::from_saved(2, &[2.0, 0.0, 0.0], 0).is_err());
        assert!(Retirement::from_saved(2, &[1e-9, f64::NAN, 0.0], 0).is_err());
        assert!(Retirement::from_saved(2, &[1e-9, -1.0, 0.0], 0).is_err());
        let far = Retirement::from_saved(2, &[1e-9, f64::INFINITY, 0.0], 0).unwrap();
        assert_eq!(far.retired_at(), vec![Some(f64::INFINITY), None]);
    }

    /// No member retires before the stream has shown `c·d` feature views, whatever its weight;
    /// then `ε` alone decides. Saved while below `c·d` (and read back), not after.
    #[test]
    fn no_member_retires_before_the_coverage() {
        let d = 1000;
        let mut r = Retirement::new(3, 1e-20, d);
        let pi = [1e-30, 1e-25, 1.0];
        let mut views = 0;
        while views + 20 < 3 * d {
            r.observe(20);
            views += 20;
            assert!(!r.covered());
            assert!(
                !r.retire_negligible(&pi, 2048.0),
                "retired at {views} views"
            );
            assert_eq!(r.active_count(), 3);
        }
        let saved = r.to_saved();
        assert_eq!(saved.len(), 5, "V_t is saved below the coverage");
        assert_eq!(Retirement::from_saved(3, &saved, d).unwrap(), r);
        r.observe(20);
        assert!(r.covered());
        assert!(r.retire_negligible(&pi, 2304.0));
        assert_eq!(r.retired_at(), vec![Some(2304.0), Some(2304.0), None]);
        assert_eq!(
            r.to_saved().len(),
            4,
            "past the coverage: the earlier layout"
        );
        // A file without V_t (past the coverage, or written before it) loads as covered.
        assert!(Retirement::from_saved(3, &[1e-20, 0.0, 0.0, 0.0], d)
            .unwrap()
            .covered());
        assert!(Retirement::from_saved(3, &[1e-20, 0.0, 0.0, 0.0, f64::NAN], d).is_err());
        assert!(Retirement::from_saved(3, &[1e-20, 0.0, 0.0, 0.0, -1.0], d).is_err());
        // Merged views are summed, the base's counted once.
        let mut a = Retirement::new(3, 1e-20, d);
        a.observe(1000);
        let mut b = a.clone();
        b.observe(1500);
        a.observe(600);
        let base = Retirement {
            views: 1000.0,
            ..Retirement::new(3, 1e-20, d)
        };
        a.merge(&b, Some(&base));
        assert_eq!(a.views, 3100.0);
        assert!(a.covered());
    }

    proptest::proptest! {
        /// The coverage never makes a member retire earlier than `ε` alone: fed the same
        /// weights at the same check points, the members it retires are, at every point, among
        /// those `ε` alone has retired (so a run with it is the run of `ε` alone up to the
        /// latter's first retirement, and retires nothing before it).
        #[test]
        fn the_coverage_never_retires_earlier_than_epsilon_alone(
            log_eps in -30.0f64..-1.0,
            dim in 0usize..5000,
            rounds in proptest::collection::vec(
                (proptest::collection::vec(-40.0f64..0.0, 4), 0usize..400),
                1..60,
            ),
        ) {
            let eps = 10f64.powf(log_eps);
            let mut plain = Retirement::new(4, eps, 0);
            let mut rule = Retirement::new(4, eps, dim);
            for (t, (log_w, nnz)) in rounds.iter().enumerate() {
                plain.observe(*nnz);
                rule.observe(*nnz);
                let total: f64 = log_w.iter().map(|l| 10f64.powf(*l)).sum();
                let pi: Vec<f64> = log_w.iter().map(|l| 10f64.powf(*l) / total).collect();
                let seen = 1024.0 + 256.0 * t as f64;
                plain.retire_negligible(&pi, seen);
                rule.retire_negligible(&pi, seen);
                for k in 0..4 {
                    if !rule.is_active(k) {
                        proptest::prop_assert!(!plain.is_active(k));
                        proptest::prop_assert!(rule.retired_at[k] >= plain.retired_at[k]);
                    }
                }
            }
        }
    }
}
