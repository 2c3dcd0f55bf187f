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
//! member a weight of exactly 0 for reasons that are not yet evidence) — every member `k` still
//! active whose normalised weight is `π_k < ε` and not the largest retires: it is no longer
//! learned nor evaluated, its weight is exactly 0 from then on, and its loss no longer enters
//! AdaHedge's bookkeeping (its cumulative loss `L_k` is frozen, and it takes no part in the
//! leader's `min_j L_j` nor in the mixability gap). `ε = 0` retires nobody: the mixture is bit
//! for bit the one before this rule.
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
//! (`tests/mixture_retirement.rs` checks the probability bound at every retirement, four rules).
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
//! retirement point to the saved losses when `ε > 0`; a model saved with `ε = 0` is byte for byte
//! the earlier format). In a merge, a member retires only if it retired in *both* mixtures: each
//! shard's retirement is evidence from that shard alone, and a member retired on one shard may
//! be the leader on the other. Its loss on the shard where it retired is frozen at that point (the
//! losses it would have had afterwards are not known), so the merged weights favour it; the merge
//! ends with a check (past the warm-up) that retires it again if its merged weight is still `< ε`.

use serde::{Deserialize, Serialize};

/// Importance weight between check points. The command line learns batches of 256 examples
/// from the start of the file, so with unit weights every check point ends a batch and the
/// two-thread path splits no batch for it.
pub const PERIOD: f64 = 256.0;

/// Importance weight seen before the first check point.
pub const WARM_UP: f64 = 1024.0;

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
/// retires it and the error is 2.3 and 3.3 standard errors worse than with no retirement.
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
}

impl Retirement {
    /// No member retired yet, threshold `epsilon` (validated by [`Retirement::check_epsilon`]).
    pub fn new(members: usize, epsilon: f64) -> Self {
        Retirement {
            epsilon: epsilon.abs(), // −0 is 0
            retired_at: vec![0.0; members],
        }
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

    /// Retires every active member whose weight `pi[k] < ε` and is not the largest, at `seen`;
    /// true if one did.
    pub fn retire_negligible(&mut self, pi: &[f64], seen: f64) -> bool {
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
    /// now and the merge retires nobody).
    pub fn merge(&mut self, other: &Self) {
        self.epsilon = self.epsilon.min(other.epsilon);
        for (a, &b) in self.retired_at.iter_mut().zip(&other.retired_at) {
            *a = if *a > 0.0 && b > 0.0 { a.max(b) } else { 0.0 };
        }
    }

    /// The values a model file holds after the losses when `ε > 0`: `[ε, r_1 … r_K]`
    /// (`mixture_wire.rs`); nothing when `ε = 0` and no member retired.
    pub fn to_saved(&self) -> Vec<f64> {
        if self.epsilon == 0.0 && self.active_count() == self.retired_at.len() {
            return Vec::new();
        }
        let mut v = Vec::with_capacity(1 + self.retired_at.len());
        v.push(self.epsilon);
        v.extend(&self.retired_at);
        v
    }

    /// Reads [`Retirement::to_saved`]'s values for `k` members (`saved` empty: `ε = 0`, none
    /// retired — every file written before this rule).
    pub fn from_saved(k: usize, saved: &[f64]) -> Result<Self, String> {
        let Some((&epsilon, retired_at)) = saved.split_first() else {
            return Ok(Retirement::new(k, 0.0));
        };
        Self::check_epsilon(epsilon).map_err(|e| format!("mixture: {e}"))?;
        if retired_at.len() != k {
            return Err(format!(
                "mixture of {k} members: {} saved retirement points",
                retired_at.len()
            ));
        }
        // `+∞` is a point learning reaches: importance weights near `f64::MAX` take the weight
        // seen there (a file must hold every state the mixture can be in).
        if retired_at.iter().any(|r| r.is_nan() || *r < 0.0) {
            return Err("mixture: a saved retirement point is not a number ≥ 0".into());
        }
        let out = Retirement {
            epsilon,
            retired_at: retired_at.to_vec(),
        };
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
        let mut r = Retirement::new(3, 1e-9);
        assert!(!r.due(0.0, 1.0));
        assert!(!r.due(255.0, 256.0), "before the warm-up");
        assert!(r.due(1023.0, 1024.0));
        assert!(!r.due(1024.0, 1025.0));
        assert!(r.due(1279.5, 1280.5));
        assert!(!Retirement::new(3, 0.0).due(1023.0, 1024.0));
        assert!(r.retire_negligible(&[1e-10, 0.5, 0.5 - 1e-10], 1024.0));
        assert_eq!(r.retired_at(), vec![Some(1024.0), None, None]);
        assert!(!r.retire_negligible(&[0.0, 1e-12, 1.0], 1280.0) || !r.is_active(1));
        // The largest weight never retires, even under a large ε.
        let mut big = Retirement::new(2, 0.9);
        big.retire_negligible(&[0.5, 0.5], 2048.0);
        assert_eq!(big.active_count(), 2);

        let mut a = Retirement::new(3, 1e-9);
        a.retired_at = vec![2048.0, 1024.0, 0.0];
        let mut b = Retirement::new(3, 1e-9);
        b.retired_at = vec![4096.0, 0.0, 0.0];
        a.merge(&b);
        assert_eq!(a.retired_at(), vec![Some(4096.0), None, None]);
        // Thresholds that differ merge to the smaller one (a model saved before the rule: 0).
        let mut c = a.clone();
        c.merge(&Retirement::new(3, 1e-6));
        assert_eq!((c.epsilon(), c.retired_at()), (1e-9, vec![None; 3]));
        a.merge(&Retirement::new(3, 0.0));
        assert_eq!(a.epsilon(), 0.0);

        assert!(Retirement::new(3, 0.0).to_saved().is_empty());
        let back = Retirement::from_saved(3, &a.to_saved()).unwrap();
        assert_eq!(back, a);
        assert_eq!(
            Retirement::from_saved(3, &[]).unwrap(),
            Retirement::new(3, 0.0)
        );
        assert!(Retirement::from_saved(2, &[1e-9, 5.0, 5.0]).is_err());
        assert!(Retirement::from_saved(2, &[1e-9, 5.0]).is_err());
        assert!(Retirement::from_saved(2, &[2.0, 0.0, 0.0]).is_err());
        assert!(Retirement::from_saved(2, &[1e-9, f64::NAN, 0.0]).is_err());
        assert!(Retirement::from_saved(2, &[1e-9, -1.0, 0.0]).is_err());
        let far = Retirement::from_saved(2, &[1e-9, f64::INFINITY, 0.0]).unwrap();
        assert_eq!(far.retired_at(), vec![Some(f64::INFINITY), None]);
    }
}
