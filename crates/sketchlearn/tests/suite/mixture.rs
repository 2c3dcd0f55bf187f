//! The online mixture (`linear/mixture.rs`) and the `auto` default built on it: Hedge's and
//! AdaHedge's regret bounds on fixed experts, the Bayesian mixture's log-loss bound, following
//! the better member, and the default's wiring.

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use sketchlearn::linear::{Algorithm, AnyLearner, LearnerConfig, MixRule, Mixture, OnlineLearner};
use sketchlearn::loss::{sigmoid, Loss};
use sketchlearn::Row;

use crate::common;
use common::expert::Expert;

fn fixed(w: Vec<f64>) -> Expert {
    Expert(w)
}

/// A logistic-loss mixture of fixed experts with `rule` (η = 1).
fn fixed_mixture(experts: &[Vec<f64>], rule: MixRule) -> Mixture<Expert> {
    Mixture::new(
        experts.iter().cloned().map(fixed).collect(),
        Loss::Logistic,
        rule,
        1.0,
    )
    .unwrap()
}

/// A noisy linear stream labelled by `truth`.
fn stream(n: usize, d: usize, truth: &[f64], flip: f64, seed: u64) -> Vec<(Vec<f64>, f64)> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let x: Vec<f64> = (0..d).map(|_| rng.random_range(-1.0..1.0)).collect();
            let s: f64 = x.iter().zip(truth).map(|(a, b)| a * b).sum();
            let mut y = if s > 0.0 { 1.0 } else { -1.0 };
            if rng.random::<f64>() < flip {
                y = -y;
            }
            (x, y)
        })
        .collect()
}

/// An expert's loss with score `s` on label `y` under an AdaHedge rule, computed independently
/// of the mixture's code: its mistake, or its Brier score `(1 − σ(±s))²`.
fn expert_loss(rule: MixRule, s: f64, y: f64) -> f64 {
    match rule {
        MixRule::AdaHedgeBrier => {
            let q = sigmoid(if y > 0.0 { s } else { -s });
            (1.0 - q) * (1.0 - q)
        }
        _ => ((s > 0.0) != (y > 0.0)) as u8 as f64,
    }
}

/// AdaHedge's regret bound for losses in [0, 1] (de Rooij et al. 2014, §2, in terms of L*):
/// `L* + 2√(L*(T − L*)/T · ln K) + 16/3·ln K + 2`.
fn adahedge_bound(best: f64, t: f64, k: usize) -> f64 {
    let lnk = (k as f64).ln();
    best + 2.0 * (best * (t - best) / t * lnk).sqrt() + 16.0 / 3.0 * lnk + 2.0
}

/// The Hedge loss Σ_t π_t·ℓ_t (π_t = the weights *before* example t, ℓ_t = the experts' losses
/// on it) of an AdaHedge mixture of `k` fixed experts stays within [`adahedge_bound`] on a noisy
/// stream of `n` examples. Adversarial-ish experts: some are the truth's sign-flipped or noisy
/// copies, so the leader changes early and the rate must adapt.
fn adahedge_regret_within_bound(
    rule: MixRule,
    seed: u64,
    k: usize,
    n: usize,
    flip: f64,
) -> Result<(), TestCaseError> {
    let d = 4;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let truth: Vec<f64> = (0..d).map(|_| rng.random_range(-2.0..2.0)).collect();
    let experts: Vec<Vec<f64>> = (0..k)
        .map(|_| {
            let s = rng.random_range(-2.0..2.0);
            truth
                .iter()
                .map(|t| s * t + rng.random_range(-1.5..1.5))
                .collect()
        })
        .collect();
    let data = stream(n, d, &truth, flip, seed ^ 3);
    let mut mix = fixed_mixture(&experts, rule);
    let mut hedge = 0.0;
    let mut theirs = vec![0.0; k];
    for (x, y) in &data {
        let pi = mix.member_weights();
        prop_assert!(pi.iter().all(|p| p.is_finite() && *p >= 0.0));
        for ((l, w), p) in theirs.iter_mut().zip(&experts).zip(&pi) {
            let s: f64 = x.iter().zip(w).map(|(a, b)| a * b).sum();
            let loss = expert_loss(rule, s, *y);
            *l += loss;
            hedge += p * loss;
        }
        mix.learn(Row::Dense(x), *y, 1.0).unwrap();
    }
    let best = theirs.iter().cloned().fold(f64::INFINITY, f64::min);
    let bound = adahedge_bound(best, n as f64, k);
    prop_assert!(
        hedge <= bound + 1e-9,
        "{rule:?}: Hedge loss {hedge} > bound {bound} (best {best})"
    );
    Ok(())
}

/// A random truth in [−2, 2]^d and `k` random experts in [−spread, spread]^d, seeded by `seed`.
fn random_experts(seed: u64, d: usize, k: usize, spread: f64) -> (Vec<f64>, Vec<Vec<f64>>) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let truth: Vec<f64> = (0..d).map(|_| rng.random_range(-2.0..2.0)).collect();
    let experts = (0..k)
        .map(|_| (0..d).map(|_| rng.random_range(-spread..spread)).collect())
        .collect();
    (truth, experts)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Hedge with the anytime rate η_t = √(8 ln K / t) on losses in [0, 1] (Cesa-Bianchi &
    /// Lugosi, Thm. 2.3 with §2.5): the mixture's cumulative absolute loss is at most the best
    /// expert's plus 2√(T ln K / 2) + √(ln K / 8). The experts are fixed (non-learning) linear
    /// scorers, so this is exactly the experts setting; the mixture's probability is the
    /// π-weighted average of the experts', so its absolute loss is the π-average of theirs.
    #[test]
    fn hedge_absolute_loss_regret_bound(
        seed in any::<u64>(),
        k in 2usize..6,
        n in 20usize..400,
        flip in 0.0f64..0.4,
    ) {
        let d = 4;
        let (truth, experts) = random_experts(seed, d, k, 3.0);
        let data = stream(n, d, &truth, flip, seed ^ 1);
        let mut mix = fixed_mixture(&experts, MixRule::Absolute);
        let abs = |p: f64, y: f64| if y > 0.0 { 1.0 - sigmoid(p) } else { sigmoid(p) };
        let mut ours = 0.0;
        let mut theirs = vec![0.0; k];
        for (x, y) in &data {
            let p = mix.learn(Row::Dense(x), *y, 1.0).unwrap();
            ours += abs(p, *y);
            for (l, w) in theirs.iter_mut().zip(&experts) {
                let s: f64 = x.iter().zip(w).map(|(a, b)| a * b).sum();
                *l += abs(s, *y);
            }
        }
        let best = theirs.iter().cloned().fold(f64::INFINITY, f64::min);
        let lnk = (k as f64).ln();
        let bound = best + 2.0 * (n as f64 * lnk / 2.0).sqrt() + (lnk / 8.0).sqrt();
        prop_assert!(ours <= bound + 1e-9, "mixture {ours} > bound {bound} (best {best})");
        let pi = mix.member_weights();
        prop_assert!((pi.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }

    /// AdaHedge on mistakes and on the Brier score (the default rule), losses in [0, 1]
    /// (de Rooij et al. 2014, §2, the regret bound in terms of L*): see
    /// [`adahedge_regret_within_bound`].
    #[test]
    fn adahedge_regret_bound(
        rule in prop_oneof![Just(MixRule::AdaHedge), Just(MixRule::AdaHedgeBrier)],
        seed in any::<u64>(),
        k in 2usize..7,
        n in 1usize..500,
        flip in 0.0f64..0.5,
    ) {
        adahedge_regret_within_bound(rule, seed, k, n, flip)?;
    }

    /// The Bayesian mixture (η = 1, logistic loss): cumulative log loss ≤ best expert's + ln K.
    #[test]
    fn bayes_log_loss_regret_bound(seed in any::<u64>(), k in 2usize..6, n in 1usize..300) {
        let d = 3;
        let (truth, experts) = random_experts(seed, d, k, 4.0);
        let data = stream(n, d, &truth, 0.1, seed ^ 2);
        let mut mix = fixed_mixture(&experts, MixRule::Bayes);
        let mut ours = 0.0;
        let mut theirs = vec![0.0; k];
        for (x, y) in &data {
            let p = mix.learn(Row::Dense(x), *y, 1.0).unwrap();
            ours += Loss::Logistic.value(p, *y);
            for (l, w) in theirs.iter_mut().zip(&experts) {
                let s: f64 = x.iter().zip(w).map(|(a, b)| a * b).sum();
                *l += Loss::Logistic.value(s, *y);
            }
        }
        let best = theirs.iter().cloned().fold(f64::INFINITY, f64::min);
        prop_assert!(ours <= best + (k as f64).ln() + 1e-9, "{ours} > {best} + ln {k}");
    }
}

#[test]
fn the_mixture_follows_the_better_member() {
    let d = 3;
    let truth = vec![1.0, -2.0, 0.5];
    let data = stream(600, d, &truth, 0.05, 11);
    for rule in [
        MixRule::Absolute,
        MixRule::ZeroOne,
        MixRule::Bayes,
        MixRule::AdaHedge,
        MixRule::AdaHedgeBrier,
    ] {
        let anti: Vec<f64> = truth.iter().map(|t| -t).collect();
        let mut mix = Mixture::new(
            vec![fixed(anti), fixed(vec![0.0; d]), fixed(truth.clone())],
            Loss::Logistic,
            rule,
            1.0,
        )
        .unwrap();
        let mut late_errors = 0;
        for (t, (x, y)) in data.iter().enumerate() {
            let p = mix.learn(Row::Dense(x), *y, 1.0).unwrap();
            if t >= 300 && (p > 0.0) != (*y > 0.0) {
                late_errors += 1;
            }
        }
        let pi = mix.member_weights();
        assert!(pi[2] > 0.99, "{rule:?}: {pi:?}");
        // The good expert errs only on the ~5 % flipped labels.
        assert!(late_errors < 30, "{rule:?}: {late_errors} late errors");
        // Weights of a mixture of fixed experts: the π-average of theirs.
        let w = mix.weights();
        for i in 0..d {
            let expect = pi[0] * -truth[i] + pi[2] * truth[i];
            assert!((w[i] - expect).abs() < 1e-12);
        }
    }
}

/// AdaHedge (de Rooij et al. 2014, Alg. 1), written out independently: the weights after the
/// rounds `losses[t][k]`.
fn adahedge_reference(losses: &[Vec<f64>]) -> Vec<f64> {
    let k = losses[0].len();
    let weights = |cum: &[f64], eta: f64| -> Vec<f64> {
        let best = cum.iter().cloned().fold(f64::INFINITY, f64::min);
        let w: Vec<f64> = if eta.is_finite() {
            cum.iter().map(|l| (-eta * (l - best)).exp()).collect()
        } else {
            cum.iter()
                .map(|l| if *l == best { 1.0 } else { 0.0 })
                .collect()
        };
        let z: f64 = w.iter().sum();
        w.iter().map(|x| x / z).collect()
    };
    let (mut cum, mut gap) = (vec![0.0; k], 0.0);
    let rate = |gap: f64| {
        if gap > 0.0 {
            (k as f64).ln() / gap
        } else {
            f64::INFINITY
        }
    };
    for l in losses {
        let eta = rate(gap);
        let pi = weights(&cum, eta);
        let h: f64 = pi.iter().zip(l).map(|(p, x)| p * x).sum();
        let m = if eta.is_finite() {
            -(pi.iter()
                .zip(l)
                .map(|(p, x)| p * (-eta * x).exp())
                .sum::<f64>())
            .ln()
                / eta
        } else {
            pi.iter()
                .zip(l)
                .filter(|(p, _)| **p > 0.0)
                .map(|(_, x)| *x)
                .fold(f64::INFINITY, f64::min)
        };
        gap += h - m;
        for (c, x) in cum.iter_mut().zip(l) {
            *c += x;
        }
    }
    weights(&cum, rate(gap))
}

/// The default rule by hand: AdaHedge's weights on the members' Brier scores `(1 − q(y))²` and,
/// for `AdaHedge`, on their mistakes, equal an independent implementation round by round.
#[test]
fn adahedge_weights_match_a_reference_on_brier_and_mistake_losses() {
    let d = 3;
    let truth = vec![1.0, -2.0, 0.5];
    let data = stream(60, d, &truth, 0.2, 8);
    let experts = [
        vec![0.5, -1.0, 0.0],
        vec![-0.2, 0.3, 1.0],
        vec![2.0, -3.0, 1.5],
    ];
    for rule in [MixRule::AdaHedgeBrier, MixRule::AdaHedge] {
        let mut mix = fixed_mixture(&experts, rule);
        let mut rounds = Vec::new();
        for (x, y) in &data {
            mix.learn(Row::Dense(x), *y, 1.0).unwrap();
            rounds.push(
                experts
                    .iter()
                    .map(|w| {
                        let s: f64 = x.iter().zip(w).map(|(a, b)| a * b).sum();
                        expert_loss(rule, s, *y)
                    })
                    .collect::<Vec<f64>>(),
            );
            let expect = adahedge_reference(&rounds);
            let got = mix.member_weights();
            for (a, b) in got.iter().zip(&expect) {
                assert!(
                    (a - b).abs() < 1e-9,
                    "{rule:?} round {}: {got:?} vs {expect:?}",
                    rounds.len()
                );
            }
        }
    }
}

/// "Follow the leader if you can": when one expert never errs, AdaHedge's mixability gap stays
/// 0, it puts all its weight on the perfect expert(s) and makes no mistake once every worse
/// expert has erred once — constant regret, where the anytime Hedge rate keeps paying √T.
#[test]
fn adahedge_follows_a_perfect_leader_with_constant_regret() {
    let d = 3;
    let truth = vec![1.0, -2.0, 0.5];
    let data = stream(2000, d, &truth, 0.0, 21);
    let experts = vec![
        fixed(vec![0.0; d]),
        fixed(truth.iter().map(|t| -t).collect()),
        fixed(truth.clone()),
        fixed(vec![1.0, 0.0, 0.0]),
    ];
    let mut mix = Mixture::new(experts, Loss::Logistic, MixRule::AdaHedge, 1.0).unwrap();
    let mut mistakes = 0;
    for (x, y) in &data {
        let p = mix.learn(Row::Dense(x), *y, 1.0).unwrap();
        if (p > 0.0) != (*y > 0.0) {
            mistakes += 1;
        }
    }
    let pi = mix.member_weights();
    assert_eq!(pi[2], 1.0, "{pi:?}");
    // Only the first few examples, before the other experts have erred, can be mistakes.
    assert!(mistakes <= 5, "{mistakes} mistakes");
}

/// The sequence that defeats follow-the-leader: two constant experts (always +1, always −1) and
/// labels chosen against the current leader. FTL's Hedge loss grows like 3T/4 against the best
/// expert's T/2; AdaHedge must stay within its bound (and so within O(√T) of the best).
#[test]
fn adahedge_survives_the_follow_the_leader_adversary() {
    for t in [10usize, 100, 1000, 5000] {
        let mut mix = Mixture::new(
            vec![fixed(vec![1.0]), fixed(vec![-1.0])],
            Loss::Logistic,
            MixRule::AdaHedge,
            1.0,
        )
        .unwrap();
        let (mut hedge, mut theirs) = (0.0, [0.0f64; 2]);
        for _ in 0..t {
            let pi = mix.member_weights();
            // Against the leader: the label the heavier expert gets wrong.
            let y = if pi[0] >= pi[1] { -1.0 } else { 1.0 };
            let wrong = [(y < 0.0) as u8 as f64, (y > 0.0) as u8 as f64];
            hedge += pi[0] * wrong[0] + pi[1] * wrong[1];
            theirs[0] += wrong[0];
            theirs[1] += wrong[1];
            mix.learn(Row::Dense(&[1.0]), y, 1.0).unwrap();
        }
        let best = theirs[0].min(theirs[1]);
        let bound = adahedge_bound(best, t as f64, 2);
        assert!(
            hedge <= bound,
            "T = {t}: Hedge loss {hedge} > bound {bound} (best {best})"
        );
    }
}

#[test]
fn one_member_mixture_predicts_like_the_member() {
    let d = 5;
    let data = stream(200, d, &[1.0, 0.5, -1.0, 0.0, 2.0], 0.1, 3);
    for loss in [Loss::Logistic, Loss::Squared, Loss::Hinge] {
        for rule in [
            MixRule::Absolute,
            MixRule::Bayes,
            MixRule::AdaHedge,
            MixRule::AdaHedgeBrier,
        ] {
            let cfg = LearnerConfig {
                algorithm: Algorithm::Newton,
                loss,
                size: 3,
                ..LearnerConfig::default()
            };
            let mut alone = cfg.build(d).unwrap();
            let mut mix = Mixture::new(vec![cfg.build(d).unwrap()], loss, rule, 1.0).unwrap();
            for (x, y) in &data {
                let a = alone.learn(Row::Dense(x), *y, 1.0).unwrap();
                let b = mix.learn(Row::Dense(x), *y, 1.0).unwrap();
                assert!(
                    (a - b).abs() <= 1e-9 * (1.0 + a.abs()),
                    "{loss} {rule:?}: {a} vs {b}"
                );
            }
        }
    }
}

#[test]
fn invalid_mixtures_are_rejected() {
    assert!(Mixture::<Expert>::new(vec![], Loss::Logistic, MixRule::Absolute, 1.0).is_err());
    assert!(Mixture::new(
        vec![fixed(vec![0.0; 2]), fixed(vec![0.0; 3])],
        Loss::Logistic,
        MixRule::Absolute,
        1.0
    )
    .is_err());
    for eta in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(Mixture::new(
            vec![fixed(vec![0.0; 2])],
            Loss::Logistic,
            MixRule::Bayes,
            eta
        )
        .is_err());
    }
    // diag applies to one learner, not to the auto mixture.
    let cfg = LearnerConfig {
        diag: true,
        ..LearnerConfig::default()
    };
    assert!(cfg.build(3).is_err());
    // Bad member parameters surface from the mixture.
    let cfg = LearnerConfig {
        alpha0: f64::NAN,
        ..LearnerConfig::default()
    };
    assert!(cfg.build(3).is_err());
}

#[test]
fn default_is_the_auto_mixture_of_its_members() {
    let cfg = LearnerConfig::default();
    assert_eq!(cfg.algorithm, Algorithm::Auto);
    let learner = cfg.build(7).unwrap();
    let AnyLearner::Mixture(mix) = &learner else {
        panic!("default is not a mixture: {}", cfg.describe());
    };
    assert_eq!(mix.rule(), MixRule::AdaHedgeCalibrated);
    assert_eq!(mix.members().len(), 4);
    assert_eq!(learner.dim(), 7);
    // Squared loss (regression) mixes with AdaHedge on variance-normalised squared errors, the
    // running mean first among its members.
    let sq = LearnerConfig {
        loss: Loss::Squared,
        ..LearnerConfig::default()
    }
    .build(7)
    .unwrap();
    let AnyLearner::ScaledMixture(mix) = &sq else {
        panic!()
    };
    assert_eq!(mix.mixture().rule(), MixRule::AdaHedgeScaled);
    assert!(matches!(
        mix.mixture().members()[0],
        AnyLearner::RunningMean(_)
    ));
    // Members learn exactly as when run alone: the mixture adds no coupling.
    let data = stream(300, 7, &[1.0, 0.0, -1.0, 2.0, 0.3, 0.0, -0.5], 0.1, 5);
    let mut mix_l = LearnerConfig::default().build(7).unwrap();
    let mut alone: Vec<_> = LearnerConfig::default()
        .auto_members()
        .iter()
        .map(|c| c.check().unwrap().build_unscaled(7).unwrap())
        .collect();
    members_learn_as_alone(&mut mix_l, &mut alone, &data);
}

/// Learns `data` with the mixture `mix` and with each of `alone`; asserts that every member of
/// the mixture ends with the weights of its lone twin (the mixture adds no coupling).
fn members_learn_as_alone(
    mix: &mut AnyLearner,
    alone: &mut [AnyLearner],
    data: &[(Vec<f64>, f64)],
) {
    for (x, y) in data {
        mix.learn(Row::Dense(x), *y, 1.0).unwrap();
        for a in alone.iter_mut() {
            a.learn(Row::Dense(x), *y, 1.0).unwrap();
        }
    }
    let AnyLearner::Mixture(mix) = mix else {
        panic!("not a mixture")
    };
    for (m, a) in mix.members().iter().zip(alone.iter()) {
        assert_eq!(m.weights().as_ref(), a.weights().as_ref());
    }
}

#[test]
fn adagrad_grid_mixes_two_adagrads_and_is_the_defaults_third_member() {
    let cfg = LearnerConfig {
        algorithm: Algorithm::AdaGradGrid,
        ..LearnerConfig::default()
    };
    let learner = cfg.build(7).unwrap();
    let AnyLearner::Mixture(mix) = &learner else {
        panic!("adagrad-grid is not a mixture: {}", cfg.describe());
    };
    assert_eq!(mix.rule(), MixRule::AdaHedgeCalibrated);
    assert_eq!(mix.members().len(), 2);
    // Alone it predicts the calibrated probabilities it grades (`mixture_output.rs`).
    assert!(mix.calibrates_output());
    let [a, b] = cfg.adagrad_grid_members();
    assert_eq!(
        (a.algorithm, b.algorithm),
        (Algorithm::AdaGrad, Algorithm::AdaGrad)
    );
    assert_eq!(b.learning_rate, 8.0 * a.learning_rate);
    assert_eq!(b.bias_value, a.bias_value / 32.0);
    // Members learn exactly as when run alone; the mixture weights follow the better one.
    let data = stream(400, 7, &[1.0, 0.0, -1.0, 2.0, 0.3, 0.0, -0.5], 0.1, 9);
    let mut grid = learner;
    let mut alone = [a.build(7).unwrap(), b.build(7).unwrap()];
    members_learn_as_alone(&mut grid, &mut alone, &data);
    assert_ne!(alone[0].weights(), alone[1].weights());
    // The default's third member is this grid (a mixture inside the mixture), learning
    // features brought down to unit scale like every member of the default.
    let default = LearnerConfig::default().build(7).unwrap();
    let AnyLearner::Mixture(outer) = &default else {
        panic!()
    };
    let AnyLearner::UnitScaling(member) = &outer.members()[2] else {
        panic!("the default's member 3 does not learn unit-scaled features")
    };
    let AnyLearner::Mixture(inner) = member.inner() else {
        panic!("the default's member 3 is not the AdaGrad grid")
    };
    assert_eq!(inner.members().len(), 2);
    // Nested, it keeps the raw score the default calibrates and grades.
    assert!(!inner.calibrates_output());
}

/// Progressive mistakes of a mixture of fixed experts over `data`, and its final weights.
fn mixture_mistakes(
    experts: &[Vec<f64>],
    rule: MixRule,
    data: &[(Vec<f64>, f64)],
) -> (usize, Vec<f64>) {
    let mut mix = fixed_mixture(experts, rule);
    let mistakes = data
        .iter()
        .filter(|(x, y)| {
            let p = mix.learn(Row::Dense(x), *y, 1.0).unwrap();
            (p > 0.0) != (*y > 0.0)
        })
        .count();
    (mistakes, mix.member_weights())
}

/// Issue 27's failure: a member that knows nothing and says so (scores near 0, Brier ≈ ¼ every
/// round) against one whose signs are right 70 % of the time but whose probabilities are far
/// too confident (Brier ≈ 0.3). The raw Brier score follows the first (a coin toss); the
/// calibrated Brier score of `linear/calibration.rs` grades the second's signs and follows it.
#[test]
fn calibrated_brier_follows_the_informative_overconfident_member() {
    // Labels: the sign of x₀ flipped 30 % of the time; member 0 scores 1e-3·x₁ (independent
    // of the label), member 1 scores 50·x₀.
    let data = stream(6000, 2, &[1.0, 0.0], 0.3, 27);
    let experts = [vec![0.0, 1e-3], vec![50.0, 0.0]];
    let (raw, raw_pi) = mixture_mistakes(&experts, MixRule::AdaHedgeBrier, &data);
    let (cal, cal_pi) = mixture_mistakes(&experts, MixRule::AdaHedgeCalibrated, &data);
    let informed = data
        .iter()
        .filter(|(x, y)| (x[0] > 0.0) != (*y > 0.0))
        .count();
    assert!(raw_pi[0] > 0.99, "raw Brier weights {raw_pi:?}");
    assert!(cal_pi[1] > 0.99, "calibrated Brier weights {cal_pi:?}");
    assert!(
        raw as f64 > 0.45 * data.len() as f64,
        "raw Brier: {raw} mistakes"
    );
    // AdaHedge's constant regret once the leader is clear, plus the prior's first rounds.
    assert!(
        cal <= informed + 150,
        "calibrated: {cal} mistakes, member 1: {informed}"
    );
}

/// The calibrated rule is invariant to the scale of the members' scores once the scales are
/// fitted: an anti-informative member (signs mostly wrong) is not rescued by flipping them
/// (`s ≥ 0`), whatever the loss the scores come from.
#[test]
fn calibration_never_flips_a_wrong_member() {
    let data = stream(6000, 2, &[1.0, 0.0], 0.2, 3);
    let experts = [vec![-5.0, 0.0], vec![0.0, 1e-3]];
    for loss in [Loss::Logistic, Loss::Hinge, Loss::SmoothHinge] {
        let mut mix = Mixture::new(
            experts.iter().cloned().map(fixed).collect(),
            loss,
            MixRule::AdaHedgeCalibrated,
            1.0,
        )
        .unwrap();
        for (x, y) in &data {
            mix.learn(Row::Dense(x), *y, 1.0).unwrap();
        }
        let pi = mix.member_weights();
        assert!(pi[1] > 0.99, "{loss:?}: weights {pi:?}");
    }
}

/// Issue 27, item 3: the default mixture learning batches (its members on two threads when
/// the machine has two cores) gives the bits of learning one example at a time — predictions,
/// final weights and member weights — dense and sparse-time members alike; an invalid example
/// ends its batch with the same error, the examples before it learned.
#[test]
fn batches_on_two_threads_are_bit_identical_to_one_example_at_a_time() {
    use sketchlearn::linear::{CurvatureKind, Representation};
    use sketchlearn::Example;
    let d = 64;
    let truth: Vec<f64> = (0..d).map(|j| ((j * 7) % 5) as f64 - 2.0).collect();
    let mut examples: Vec<Example> = stream(700, d, &truth, 0.1, 11)
        .into_iter()
        .map(|(x, y)| {
            // Sparse rows: every third coordinate.
            let indices: Vec<u32> = (0..d as u32).filter(|j| (j + y as u32) % 3 == 0).collect();
            let values = indices.iter().map(|&j| x[j as usize]).collect();
            Example {
                label: y,
                weight: 1.0,
                indices,
                values,
            }
        })
        .collect();
    examples[650].label = f64::NAN;
    // The weighting's rounds on either thread (`weighing_on`), not where the timing puts them.
    let cases = [Representation::Dense, Representation::Sparse]
        .into_iter()
        .flat_map(|r| [(r, false), (r, true)]);
    for (representation, helper) in cases {
        let cfg = LearnerConfig {
            curvature: CurvatureKind::RfdFast,
            size: 4,
            representation,
            ..LearnerConfig::default()
        };
        let mut one = cfg.build(d).unwrap();
        let mut batched = cfg.build(d).unwrap();
        let mut seq = Vec::new();
        let mut seq_err = None;
        for ex in &examples {
            match one.learn(ex.row(), ex.label, ex.weight) {
                Ok(p) => seq.push(p.to_bits()),
                Err(e) => {
                    seq_err = Some(e.to_string());
                    break;
                }
            }
        }
        let (mut bat, mut out) = (Vec::new(), Vec::new());
        let mut bat_err = None;
        sketchlearn::linear::weighing_on(helper, || {
            for chunk in examples.chunks(128) {
                let result = batched.learn_batch(chunk, &mut out);
                bat.extend(out.iter().map(|p| p.to_bits()));
                if let Err(e) = result {
                    bat_err = Some(e.to_string());
                    break;
                }
            }
        });
        assert_eq!(seq.len(), 650, "{representation:?}");
        assert_eq!(seq, bat, "{representation:?}: predictions differ");
        assert_eq!(seq_err, bat_err);
        let bits = |l: &AnyLearner| l.weights().iter().map(|w| w.to_bits()).collect::<Vec<_>>();
        assert_eq!(
            bits(&one),
            bits(&batched),
            "{representation:?}: weights differ"
        );
        let (AnyLearner::Mixture(a), AnyLearner::Mixture(b)) = (&one, &batched) else {
            panic!("the default is a mixture")
        };
        assert_eq!(a.member_weights(), b.member_weights());
    }
}
