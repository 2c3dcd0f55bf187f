//! What a mixture outputs: under [`MixRule::AdaHedgeCalibrated`] with the logistic loss, the
//! default classifier predicts with its members' *calibrated* probabilities `σ(s_k·p_k)` — the
//! probabilities its rule grades — rather than their raw `σ(p_k)`
//! ([`Mixture::set_calibrated_output`], which derives why this is the Hedge prediction of the
//! regret bound the rule's docs cite). Output only: nothing the mixture learns depends on it.
//!
//! Measured (`python3 scripts/calibrated_output.py BEFORE AFTER /tmp/s56/gen.libsvm`,
//! `docs/results/calibration.md`): on the generated sparse stream of issue 27 the default's
//! progressive log loss falls from 0.8777 (worse than predicting ½, `ln 2 = 0.6931`) to 0.6662
//! (AdaGrad alone 0.6817), its error 0.4103 → 0.4105 (+0.12 binomial SE); on the 12 shared
//! binary sets of `docs/results/auto.md` every error is within 0.1 SE (10 equal) and the log
//! loss moves by at most 0.011 (splice 0.5035 → 0.4925; w8a.shuf 0.0638 → 0.0650).
//!
//! Stop 57: `--algo adagrad-grid` used alone predicts calibrated too (on the same 13 files its
//! log loss falls on 11, by up to 0.132 on splice, 0.6682 → 0.5358, and rises by at most
//! 0.0005, within 1 paired s.e.; one error moves, r8_earn_vs_rest +1 mistake, +0.08 SE:
//! `scripts/calibrated_output.py … --case grid`). One-against-all's class learners stay raw
//! (`linear/multiclass/one_vs_all.rs`: measured, not adopted).
//!
//! Saved from model format version 10 (`mixture_wire.rs`); a file of an earlier version loads
//! with the raw output it was written with, and so does a grid saved before stop 57 (its flag
//! saved off).

use super::{MixRule, Mixture, OnlineLearner};
use crate::loss::Loss;

impl<L: OnlineLearner> Mixture<L> {
    /// Makes the prediction mix the members' *calibrated* probabilities,
    /// `P(y = 1) = Σ_k π_k σ(s_k·p_k)` (returned as its log-odds), instead of the raw
    /// `Σ_k π_k σ(p_k)` — under [`MixRule::AdaHedgeCalibrated`] with the logistic loss; any other
    /// rule or loss ignores it. Output only: the members, their calibrations, the losses and
    /// the weights evolve bit for bit as without it (the prediction of a round is formed before
    /// and apart from its weighting, [`Mixture::mix_round`]). The default classifier's mixture
    /// ([`Algorithm::Auto`](super::Algorithm::Auto) and `AutoSparse` with the logistic loss)
    /// turns it on, and so does an AdaGrad grid used alone (stop 57); a mixture nested as a
    /// member (the default's AdaGrad grid) keeps the raw prediction, which is the score its
    /// parent calibrates and grades, and so do one-against-all's class learners (measured,
    /// not adopted). The builder decides it in one place (`linear/check.rs`,
    /// `calibrated_output`).
    ///
    /// **Why it is still the Hedge prediction of the cited bound.** The rule grades member `k`
    /// on round `t` by the Brier score `(1 − q_k(y))²` of `q_k = σ(s_k·p_k)`, with `s_k` the
    /// scale *before* the round's label is learned ([`Calibration`]: the prediction is formed
    /// before the calibrations step, so it stays out of sample). The calibrated prediction
    /// `Q = Σ_k π_k q_k` mixes exactly the graded probabilities with the Hedge weights, and the
    /// Brier score is convex in the probability, so each round (Jensen)
    /// `(1 − Q(y))² ≤ Σ_k π_k (1 − q_k(y))² = h_t`, the Hedge loss that AdaHedge's regret bound
    /// is stated for (de Rooij et al. 2014, Thm. 8: `Σ_t h_t ≤ L* + 2√(L*(T − L*)/T·ln K) +
    /// 16/3·ln K + 2` with `L*` the best member's cumulative graded loss). The mixture's own
    /// Brier score is therefore at most the best calibrated member's plus that regret. The raw
    /// prediction mixes `σ(p_k)`, which are not the graded probabilities: no bound links its
    /// Brier score (or log loss) to the members' grades, and an over-confident leader's
    /// `σ(p_k)` is what it returns (measured in `docs/results/calibration.md`). A member with
    /// `s_k = 0` contributes `σ(0) = ½`, "no information", exactly what was graded (a score
    /// that is infinite then counts as 0, not `0·∞`).
    pub fn set_calibrated_output(&mut self, on: bool) {
        self.calibrated_output = on;
    }

    /// Whether the prediction mixes calibrated probabilities ([`Mixture::set_calibrated_output`]
    /// was turned on, the rule is `AdaHedgeCalibrated` and the loss logistic).
    pub fn calibrates_output(&self) -> bool {
        self.calibrated_output
            && self.rule == MixRule::AdaHedgeCalibrated
            && self.loss == Loss::Logistic
    }

    /// The members' scales `s_k`, in the members' order, when the prediction mixes calibrated
    /// probabilities ([`Mixture::calibrates_output`]); `None` when it mixes raw ones. What
    /// `sketchlearn inspect` shows beside the mixture's weights.
    pub fn output_scales(&self) -> Option<Vec<f64>> {
        self.calibrates_output()
            .then(|| self.calibration.iter().map(|c| c.to_pair()[0]).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linear::calibration::Calibration;
    use crate::linear::FixedLinear;
    use crate::Row;

    /// Two fixed members scoring `p = (2, −4)` with weights `π = (¼, ¾)` and scales
    /// `s = (½, 0)`: `P(+1) = ¼·σ(1) + ¾·σ(0) = 0.182764644657… + 0.375 = 0.557764644657…`,
    /// log-odds `0.232094871125…`; the raw output `¼·σ(2) + ¾·σ(−4) = 0.233688926966…`.
    #[test]
    fn the_calibrated_output_is_the_weighted_calibrated_probability() {
        let members = vec![
            FixedLinear::new(vec![2.0], "a").unwrap(),
            FixedLinear::new(vec![-4.0], "b").unwrap(),
        ];
        let mut mix =
            Mixture::new(members, Loss::Logistic, MixRule::AdaHedgeCalibrated, 1.0).unwrap();
        mix.log_weight = vec![(1.0f64 / 3.0).ln(), 0.0];
        mix.calibration = vec![
            Calibration::from_pair(0.5, 300.0).unwrap(),
            Calibration::from_pair(0.0, 300.0).unwrap(),
        ];
        let x = Row::Dense(&[1.0]);
        let odds = |q: f64| (q / (1.0 - q)).ln();
        let raw = mix.predict(x);
        assert!(
            (raw - odds(0.233_688_926_966_039_24)).abs() < 1e-12,
            "{raw}"
        );
        assert!(!mix.calibrates_output());
        assert_eq!(mix.output_scales(), None);
        mix.set_calibrated_output(true);
        assert!(mix.calibrates_output());
        assert_eq!(mix.output_scales(), Some(vec![0.5, 0.0]));
        let p = mix.predict(x);
        assert!((p - 0.232_094_871_125_636_15).abs() < 1e-12, "{p}");
        assert!((odds(0.557_764_644_657_501_2) - p).abs() < 1e-12);
        // A member of scale 0 says ½ even for an infinite score (not σ(0·∞) = NaN).
        assert_eq!(mix.calibration[1].scaled(f64::INFINITY), 0.0);
        // Other rules and losses ignore the switch.
        mix.rule = MixRule::AdaHedgeBrier;
        assert!(!mix.calibrates_output());
        assert_eq!(mix.predict(x).to_bits(), raw.to_bits());
        mix.rule = MixRule::AdaHedgeCalibrated;
        mix.loss = Loss::Hinge;
        assert!(!mix.calibrates_output());
    }
}
