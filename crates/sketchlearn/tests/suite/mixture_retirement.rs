//! Retiring a mixture's negligible members (`linear/mixture_retirement.rs`): retirement happens,
//! the mixture's probability moves by at most the retired weight at that moment, batches on two
//! threads give the bits of one example at a time, saved models continue and merge, and `ε = 0`
//! is the mixture of before the rule.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use sketchlearn::linear::{
    AnyLearner, LearnerConfig, LinearModel, MixRule, Mixture, OnlineLearner, DEFAULT_RETIREMENT,
};
use sketchlearn::loss::{sigmoid, Loss};
use sketchlearn::merge::MergeShare;
use sketchlearn::{Example, Row};

use crate::common;
use common::expert::Expert;

/// Rows in `[−1, 1]^d` labelled by the sign of `x₀ + x₁/2`, 10 % flipped; the first feature is
/// 1 (a bias).
fn rows(n: usize, d: usize, seed: u64) -> Vec<(Vec<f64>, f64)> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let mut x: Vec<f64> = (0..d).map(|_| rng.random_range(-1.0..1.0)).collect();
            x[0] = 1.0;
            let mut y = if x[1] + 0.5 * x[2] > 0.0 { 1.0 } else { -1.0 };
            if rng.random::<f64>() < 0.1 {
                y = -y;
            }
            (x, y)
        })
        .collect()
}

/// The probability of +1 of a logistic-loss mixture's score.
fn probability(mix: &Mixture<Expert>, x: &[f64]) -> f64 {
    sigmoid(mix.predict(Row::Dense(x)))
}

/// At the round a member retires, the mixture's probability differs from that of the same
/// mixture without retirement by at most the retired weight `ρ` (the module's bound), on every
/// row; the retired members weigh exactly 0 and no longer count.
#[test]
fn members_retire_and_the_probability_moves_by_at_most_their_weight() {
    let d = 3;
    let experts = [
        vec![0.0, 4.0, 2.0],  // the truth's direction
        vec![0.0, -4.0, 0.0], // wrong
        vec![1.0, 0.0, 0.0],  // always +1
        vec![0.0, 3.0, 2.5],  // close to the truth
    ];
    for rule in [
        MixRule::AdaHedgeCalibrated,
        MixRule::AdaHedgeBrier,
        MixRule::AdaHedge,
        MixRule::Bayes,
    ] {
        let members = experts.iter().cloned().map(Expert).collect();
        let mut mix = Mixture::new(members, Loss::Logistic, rule, 1.0).unwrap();
        assert_eq!(mix.retirement().epsilon(), DEFAULT_RETIREMENT);
        let data = rows(6000, d, 5);
        let probe = rows(200, d, 6);
        let mut retirements = 0;
        for (x, y) in &data {
            let mut without = mix.clone();
            without.set_retirement(0.0).unwrap();
            let before = mix.retirement().active_count();
            mix.learn(Row::Dense(x), *y, 1.0).unwrap();
            without.learn(Row::Dense(x), *y, 1.0).unwrap();
            if mix.retirement().active_count() == before {
                continue;
            }
            retirements += 1;
            let pi = without.member_weights();
            let retired: f64 = (0..pi.len())
                .filter(|&k| !mix.retirement().is_active(k))
                .filter(|&k| without.retirement().is_active(k))
                .map(|k| pi[k])
                .sum();
            assert!(
                retired < 4.0 * DEFAULT_RETIREMENT,
                "{rule:?}: ρ = {retired}"
            );
            for (k, w) in mix.member_weights().iter().enumerate() {
                if !mix.retirement().is_active(k) {
                    assert_eq!(*w, 0.0);
                }
            }
            for (z, _) in &probe {
                let gap = (probability(&mix, z) - probability(&without, z)).abs();
                assert!(
                    gap <= retired + 1e-15,
                    "{rule:?}: moved {gap} > ρ {retired}"
                );
            }
        }
        assert!(retirements > 0, "{rule:?}: nobody retired");
        assert!(mix.retirement().active_count() < experts.len());
        assert!(mix.retirement().is_active(0) || mix.retirement().is_active(3));
        // Nobody retires before the warm-up, and only at check points.
        for r in mix.retirement().retired_at().into_iter().flatten() {
            assert!(r >= 1024.0 && r % 256.0 == 0.0, "retired at {r}");
        }
    }
}

/// The stream as sparse examples (entries above −0.6 stored).
fn examples(n: usize, d: usize, seed: u64) -> Vec<Example> {
    rows(n, d, seed)
        .into_iter()
        .map(|(x, y)| {
            let indices: Vec<u32> = (0..d as u32).filter(|j| x[*j as usize] > -0.6).collect();
            let values = indices.iter().map(|&j| x[j as usize]).collect();
            Example {
                label: y,
                weight: 1.0,
                indices,
                values,
            }
        })
        .collect()
}

/// A mixture of four learners, two of which retire on [`examples`]: AdaGrad, Sketched Online
/// Newton, the running mean of the labels (it knows nothing of `x`) and OGD with a rate of 1e-7.
fn mixed(d: usize) -> AnyLearner {
    use sketchlearn::linear::{Algorithm, RunningMean};
    let build = |algorithm, learning_rate| {
        LearnerConfig {
            algorithm,
            learning_rate,
            ..LearnerConfig::default()
        }
        .build(d)
        .unwrap()
    };
    let rate = LearnerConfig::default().learning_rate;
    let members = vec![
        build(Algorithm::AdaGrad, rate),
        build(Algorithm::Newton, rate),
        AnyLearner::RunningMean(RunningMean::new(d)),
        build(Algorithm::Ogd, 1e-7),
    ];
    AnyLearner::Mixture(
        Mixture::new(members, Loss::Logistic, MixRule::AdaHedgeCalibrated, 1.0).unwrap(),
    )
}

fn bytes(l: &AnyLearner) -> Vec<u8> {
    postcard::to_allocvec(l).unwrap()
}

fn mixture(l: &AnyLearner) -> &Mixture {
    match l {
        AnyLearner::Mixture(m) => m,
        other => panic!("not a mixture: {other:?}"),
    }
}

/// Batches of any size, learned on two threads, give the same predictions and the same state
/// (model bytes) as one example at a time, with members retiring inside the batches.
#[test]
fn retirement_is_the_same_in_batches_on_two_threads_as_one_at_a_time() {
    let d = 20;
    let data = examples(5000, d, 7);
    let mut one = mixed(d);
    let seq: Vec<u64> = data
        .iter()
        .map(|ex| one.learn(ex.row(), ex.label, ex.weight).unwrap().to_bits())
        .collect();
    let retired = mixture(&one).retirement().active_count();
    assert!(retired < mixture(&one).members().len(), "nobody retired");
    // The weighting's rounds on either thread (`weighing_on`), not where the timing puts them.
    for (size, helper) in [(100, false), (100, true), (256, true), (333, false)] {
        let mut batched = mixed(d);
        let mut got = Vec::new();
        let mut out = Vec::new();
        sketchlearn::linear::weighing_on(helper, || {
            for chunk in data.chunks(size) {
                batched.learn_batch(chunk, &mut out).unwrap();
                got.extend(out.iter().map(|p| p.to_bits()));
            }
        });
        assert_eq!(got, seq, "batches of {size}: predictions differ");
        assert_eq!(
            bytes(&batched),
            bytes(&one),
            "batches of {size}: states differ"
        );
    }
}

/// A model with retired members saves, loads and continues as the uninterrupted run; `ε = 0`
/// everywhere (the nested `adagrad-grid` mixture too) saves the bytes of a model that never
/// heard of retirement (no appended values), which continues without retiring anyone.
#[test]
fn retired_models_save_load_and_continue() {
    let d = 20;
    let data = examples(6000, d, 8);
    let cfg = LearnerConfig::default();
    let (first, rest) = data.split_at(3000);
    let reload = |l: &AnyLearner| postcard::from_bytes::<AnyLearner>(&bytes(l)).unwrap();
    let learn = |l: &mut AnyLearner, part: &[Example]| {
        for ex in part {
            l.learn(ex.row(), ex.label, ex.weight).unwrap();
        }
    };
    let mut whole = mixed(d);
    learn(&mut whole, &data);
    let mut half = mixed(d);
    learn(&mut half, first);
    assert!(mixture(&half).retirement().active_count() < 4);
    let back = reload(&half);
    assert_eq!(bytes(&back), bytes(&half));
    let mut resumed = back;
    learn(&mut resumed, rest);
    assert_eq!(bytes(&resumed), bytes(&whole));

    let mut off = cfg.build(d).unwrap();
    assert!(off.set_retirement(0.0).unwrap());
    learn(&mut off, &data);
    assert_eq!(mixture(&off).retirement().active_count(), 4);
    let loaded = reload(&off);
    assert_eq!(mixture(&loaded).retirement().epsilon(), 0.0);
    assert_eq!(bytes(&loaded), bytes(&off));
    // A default model file (its mixtures at the default ε) loads through the model format.
    let model = LinearModel::new(cfg.clone(), cfg.build(d).unwrap());
    let back = LinearModel::from_bytes(&model.to_bytes().unwrap(), "default").unwrap();
    assert_eq!(
        mixture(&back.learner).retirement().epsilon(),
        DEFAULT_RETIREMENT
    );
    assert!(off.set_retirement(1.5).is_err());
}

/// A model saved with retirement off (`--retire 0`) before the coverage keeps its feature views:
/// resumed with retirement on (`-i … --retire ε`), it judges no member before `3·d` views, so
/// it continues as the run with retirement on from the start (the same bytes). It loaded as
/// covered, and retired a member at its first check point.
#[test]
fn a_model_saved_with_retirement_off_keeps_its_coverage_count() {
    let d = 2000;
    let data: Vec<Example> = rows(6000, 3, 9)
        .into_iter()
        .map(|(values, label)| Example {
            label,
            weight: 1.0,
            indices: vec![0, 1, 2],
            values,
        })
        .collect();
    let learn = |l: &mut AnyLearner, part: &[Example]| {
        for ex in part {
            l.learn(ex.row(), ex.label, ex.weight).unwrap();
        }
    };
    // 1,500 rows of 3 entries: 4,500 views, below 3·d = 6,000.
    let (first, rest) = data.split_at(1500);
    let mut whole = mixed(d);
    assert!(whole.set_retirement(0.45).unwrap());
    learn(&mut whole, &data);
    assert!(
        mixture(&whole).retirement().active_count() < 4,
        "none retired"
    );
    let mut off = mixed(d);
    assert!(off.set_retirement(0.0).unwrap());
    learn(&mut off, first);
    let mut resumed = postcard::from_bytes::<AnyLearner>(&bytes(&off)).unwrap();
    assert!(resumed.set_retirement(0.45).unwrap());
    learn(&mut resumed, rest);
    assert_eq!(
        mixture(&resumed).retirement().retired_at(),
        mixture(&whole).retirement().retired_at()
    );
    assert_eq!(bytes(&resumed), bytes(&whole));
}

/// Merging: a member retired in one mixture and active in the other is active in the merge
/// (and learns again); retired in both, it stays retired; different thresholds do not merge.
#[test]
fn merge_keeps_a_member_retired_only_where_both_retired_it() {
    let d = 20;
    let train = |seed: u64, n: usize| {
        let mut l = mixed(d);
        for ex in examples(n, d, seed) {
            l.learn(ex.row(), ex.label, ex.weight).unwrap();
        }
        l
    };
    let a = train(9, 4000);
    let fresh = mixed(d);
    let retired_a: Vec<bool> = (0..4)
        .map(|k| !mixture(&a).retirement().is_active(k))
        .collect();
    assert!(retired_a.iter().any(|&r| r));
    // With a mixture that retired nobody (too few examples): the intersection is empty, and
    // only the merge's own check (its weights < ε on both shards' losses) retires a member
    // again — never one that `a` kept.
    let young = train(10, 500);
    let mut m = a.clone();
    m.merge_share(&young, None, 0.5).unwrap();
    let pi = mixture(&m).member_weights();
    assert!(pi.iter().all(|w| w.is_finite()));
    // The same merge without the check (ε = 0 on both sides): everyone is active again, and
    // those the check retired are exactly those whose merged weight is below ε.
    let (mut a0, mut y0) = (a.clone(), young.clone());
    a0.set_retirement(0.0).unwrap();
    y0.set_retirement(0.0).unwrap();
    a0.merge_share(&y0, None, 0.5).unwrap();
    assert_eq!(mixture(&a0).retirement().active_count(), 4);
    let pi0 = mixture(&a0).member_weights();
    for k in 0..4 {
        let retired = !mixture(&m).retirement().is_active(k);
        assert_eq!(
            retired,
            pi0[k] < DEFAULT_RETIREMENT,
            "member {k}: {}",
            pi0[k]
        );
        if retired {
            assert_eq!(pi[k], 0.0);
        }
    }
    let mut probe = m.clone();
    for ex in examples(300, d, 11) {
        probe.learn(ex.row(), ex.label, ex.weight).unwrap();
    }
    // With itself: the same members stay retired.
    let mut same = a.clone();
    same.merge_share(&a, Some(&fresh), 0.5).unwrap();
    for (k, r) in retired_a.iter().enumerate() {
        assert_eq!(!mixture(&same).retirement().is_active(k), *r, "member {k}");
    }
    // Different thresholds merge to the smaller (ε is a rule, not learned state): a model saved
    // before the rule (ε = 0) merges with one built now, and the merge retires nobody.
    let mut other = a.clone();
    other.set_retirement(0.0).unwrap();
    let mut merged = a.clone();
    merged.merge_share(&other, Some(&fresh), 0.5).unwrap();
    assert_eq!(mixture(&merged).retirement().epsilon(), 0.0);
}

/// Whether the mixture inside `l` (the default wraps none) has a single active member.
fn lone(l: &AnyLearner) -> bool {
    mixture(l).retirement().active_count() == 1
}

/// Issue 27: once a single member is left active, a batch learns it on the caller's thread
/// while the helper thread scales the rows and runs the weighting's rounds
/// (`linear/mixture_lone.rs`). Predictions, the error of an invalid example inside that
/// phase, and the state (model bytes) equal one example at a time — for members sharing one
/// unit scaling (the default `auto` mixture) and members that do not ([`mixed`]), in batches
/// that end inside a run of the hand-over (40, 333) and on its boundaries (256).
#[test]
fn a_lone_member_on_two_threads_is_bit_identical() {
    let d = 20;
    let mut data = examples(3000, d, 11);
    data[2500].label = f64::NAN;
    let builds: [fn(usize) -> AnyLearner; 2] =
        [mixed, |d| LearnerConfig::default().build(d).unwrap()];
    for (b, build) in builds.into_iter().enumerate() {
        let fresh = || {
            let mut l = build(d);
            // Every member but the leader retires at the first check point (1,024).
            assert!(l.set_retirement(0.5).unwrap());
            l
        };
        let mut one = fresh();
        let (mut seq, mut seq_err) = (Vec::new(), None);
        for ex in &data {
            match one.learn(ex.row(), ex.label, ex.weight) {
                Ok(p) => seq.push(p.to_bits()),
                Err(e) => {
                    seq_err = Some(e.to_string());
                    break;
                }
            }
        }
        assert_eq!(seq.len(), 2500, "mixture {b}");
        assert!(lone(&one), "mixture {b}: more than one member left");
        for size in [40, 256, 333] {
            let mut batched = fresh();
            let (mut got, mut out, mut err) = (Vec::new(), Vec::new(), None);
            for chunk in data.chunks(size) {
                let result = batched.learn_batch(chunk, &mut out);
                got.extend(out.iter().map(|p| p.to_bits()));
                if let Err(e) = result {
                    err = Some(e.to_string());
                    break;
                }
            }
            assert_eq!(
                got, seq,
                "mixture {b}, batches of {size}: predictions differ"
            );
            assert_eq!(err, seq_err, "mixture {b}, batches of {size}");
            assert_eq!(
                bytes(&batched),
                bytes(&one),
                "mixture {b}, batches of {size}: states differ"
            );
        }
    }
}

/// The coverage condition (`COVERAGE`): the same experts and stream, once in 3 dense features
/// and once as 3 non-zeros among 2,000 features (the same scores, losses and weights), retire
/// the same members — the sparse mixture not before the stream has shown `3·d` feature views
/// (example 2,000; its first check point after that is 2,048), and never earlier than the dense
/// one, whose coverage is reached at once (ε alone).
#[test]
fn no_member_retires_before_the_stream_has_shown_its_features() {
    use sketchlearn::linear::RETIREMENT_COVERAGE;
    let (narrow, wide) = (3, 2000);
    let experts = [
        vec![0.0, 4.0, 2.0],
        vec![0.0, -4.0, 0.0],
        vec![1.0, 0.0, 0.0],
        vec![0.0, 3.0, 2.5],
    ];
    let padded = |e: &Vec<f64>, d: usize| {
        let mut v = e.clone();
        v.resize(d, 0.0);
        Expert(v)
    };
    let build = |d: usize| {
        let members = experts.iter().map(|e| padded(e, d)).collect();
        Mixture::new(members, Loss::Logistic, MixRule::AdaHedgeBrier, 1.0).unwrap()
    };
    let (mut dense, mut sparse) = (build(narrow), build(wide));
    let indices: Vec<u32> = (0..narrow as u32).collect();
    let mut views = 0;
    for (t, (x, y)) in rows(6000, narrow, 5).iter().enumerate() {
        let a = dense.learn(Row::Dense(x), *y, 1.0).unwrap();
        let row = Row::Sparse {
            indices: &indices,
            values: x,
        };
        let b = sparse.learn(row, *y, 1.0).unwrap();
        views += narrow;
        if (views as f64) < RETIREMENT_COVERAGE * wide as f64 {
            assert_eq!(
                sparse.retirement().active_count(),
                experts.len(),
                "retired at example {} with {views} views",
                t + 1
            );
        }
        if dense.retirement().active_count() == experts.len() {
            assert_eq!(a.to_bits(), b.to_bits(), "example {}", t + 1);
        }
    }
    let (first, late) = (
        dense.retirement().retired_at(),
        sparse.retirement().retired_at(),
    );
    assert!(
        late.iter().any(Option::is_some),
        "the sparse mixture retired nobody"
    );
    for (k, (f, l)) in first.iter().zip(&late).enumerate() {
        if let Some(l) = l {
            let f = f.unwrap_or_else(|| panic!("member {k}: retired at {l}, never by ε alone"));
            assert!(*l >= f, "member {k}: retired at {l}, ε alone at {f}");
            assert!(*l >= 2048.0, "member {k}: retired at {l}");
        }
    }
    assert!(
        first.iter().flatten().any(|f| *f < 2048.0),
        "the dense mixture retires before the sparse one's coverage"
    );
}

/// A member retired in both shards of a merge stays retired and is never learned nor evaluated
/// again, so putting the base's learner back for it in each shard (`forget_retired`, what
/// `sketchlearn.dask` does before the shards' deltas are made) leaves the merge's predictions,
/// weights, saved-and-loaded predictions and later learning the same bits as merging its
/// states; only that member's state differs. An active member is refused, with nothing changed.
#[test]
fn a_member_retired_in_both_shards_need_not_be_merged() {
    let d = 20;
    // The default's members share one unit scaling (only the learner inside is put back); a
    // larger ε retires them on these short shards.
    let default = |d| {
        let mut l = LearnerConfig::default().build(d).unwrap();
        l.set_retirement(1e-3).unwrap();
        l
    };
    let builds: [(&str, &dyn Fn(usize) -> AnyLearner); 2] =
        [("mixed", &mixed), ("default", &default)];
    for (name, build) in builds {
        let learn = |l: &mut AnyLearner, seed: u64, n: usize| {
            examples(n, d, seed)
                .into_iter()
                .map(|ex| l.learn(ex.row(), ex.label, ex.weight).unwrap().to_bits())
                .collect::<Vec<u64>>()
        };
        let mut base = build(d);
        learn(&mut base, 20, 300);
        let (mut a, mut b) = (base.clone(), base.clone());
        learn(&mut a, 21, 5000);
        learn(&mut b, 22, 5000);
        let both: Vec<usize> = (0..mixture_of(&a).members().len())
            .filter(|&k| {
                !mixture_of(&a).retirement().is_active(k)
                    && !mixture_of(&b).retirement().is_active(k)
            })
            .collect();
        assert!(!both.is_empty(), "{name}: no member retired in both shards");
        let mut full = a.clone();
        full.merge_share(&b, Some(&base), 0.5).unwrap();
        let (mut a2, mut b2) = (a.clone(), b.clone());
        a2.forget_retired(&base, &both).unwrap();
        b2.forget_retired(&base, &both).unwrap();
        assert_ne!(
            bytes(&a2),
            bytes(&a),
            "{name}: the retired states were not put back"
        );
        let mut lean = a2.clone();
        lean.merge_share(&b2, Some(&base), 0.5).unwrap();
        for k in &both {
            assert!(
                !mixture_of(&lean).retirement().is_active(*k),
                "{name}: member {k}"
            );
        }
        let pi = |l: &AnyLearner| -> Vec<u64> {
            mixture_of(l)
                .member_weights()
                .iter()
                .map(|w| w.to_bits())
                .collect()
        };
        assert_eq!(pi(&lean), pi(&full), "{name}: weights differ");
        let held_out = examples(400, d, 23);
        let predict = |l: &AnyLearner| -> Vec<u64> {
            held_out
                .iter()
                .map(|ex| l.predict(ex.row()).to_bits())
                .collect()
        };
        assert_eq!(predict(&lean), predict(&full), "{name}: predictions differ");
        let loaded: AnyLearner = postcard::from_bytes(&bytes(&lean)).unwrap();
        assert_eq!(
            predict(&loaded),
            predict(&full),
            "{name}: loaded predictions differ"
        );
        // Learning on, and merging again: the same bits as the full merge's.
        let (mut lean_on, mut full_on) = (loaded, full.clone());
        assert_eq!(
            learn(&mut lean_on, 24, 600),
            learn(&mut full_on, 24, 600),
            "{name}"
        );
        let (mut c_lean, mut c_full) = (lean.clone(), full.clone());
        learn(&mut c_lean, 25, 300);
        learn(&mut c_full, 25, 300);
        lean_on.merge_share(&c_lean, Some(&lean), 0.5).unwrap();
        full_on.merge_share(&c_full, Some(&full), 0.5).unwrap();
        assert_eq!(
            predict(&lean_on),
            predict(&full_on),
            "{name}: second merge differs"
        );
        // An active member is refused, with nothing changed.
        let active = (0..mixture_of(&a).members().len())
            .find(|&k| mixture_of(&a).retirement().is_active(k))
            .unwrap();
        let mut refused = a.clone();
        assert!(refused.forget_retired(&base, &[active]).is_err());
        assert!(refused.forget_retired(&base, &[99]).is_err());
        assert_eq!(
            bytes(&refused),
            bytes(&a),
            "{name}: a refusal changed the state"
        );
    }
}

/// The mixture in `l`, scaled (`auto` on dense rows) or not.
fn mixture_of(l: &AnyLearner) -> &Mixture {
    match l {
        AnyLearner::ScaledMixture(m) => m.mixture(),
        other => mixture(other),
    }
}

/// Rows of [`rows`] with one of three classes: the sign of `x₁ + x₂/2` (10 % flipped), split
/// by the sign of `x₃` on the positive side.
fn class_rows(n: usize, d: usize, seed: u64) -> Vec<(Vec<f64>, usize)> {
    let class = |x: &[f64], y: f64| match (y > 0.0, x[3] > 0.0) {
        (true, true) => 0,
        (true, false) => 1,
        (false, _) => 2,
    };
    rows(n, d, seed)
        .into_iter()
        .map(|(x, y)| {
            let c = class(&x, y);
            (x, c)
        })
        .collect()
}

/// The same as [`a_member_retired_in_both_shards_need_not_be_merged`], class by class, for a
/// one-against-all model of default members: a member retired for a class in both shards is
/// put back to the base's (`OneVsAll::forget_retired`) and the merge's probabilities, saved
/// and loaded, learned on and merged again, are the same bits. Refusals (an active member, a
/// class out of range, a softmax model) change nothing, even after a valid class.
#[test]
fn a_member_retired_for_a_class_in_both_shards_need_not_be_merged() {
    use sketchlearn::linear::{AnyMulticlass, MulticlassConfig, MulticlassLearner, OneVsAll};
    use sketchlearn::merge::Merge;
    let d = 20;
    let member = || {
        let mut l = LearnerConfig::default().build(d).unwrap();
        l.set_retirement(1e-3).unwrap();
        l
    };
    let learn = |m: &mut OneVsAll, seed: u64, n: usize| -> Vec<u64> {
        let rows = class_rows(n, d, seed);
        let p = rows
            .iter()
            .map(|(x, c)| m.learn(Row::Dense(x), *c, 1.0).unwrap());
        p.flatten().map(f64::to_bits).collect()
    };
    let retired = |m: &OneVsAll| -> Vec<(usize, usize)> {
        let mixtures = m.members().iter().map(|l| l.mixture().unwrap());
        let pairs = mixtures.enumerate().flat_map(|(c, mix)| {
            let n = mix.members().len();
            (0..n)
                .filter(move |&k| !mix.retirement().is_active(k))
                .map(move |k| (c, k))
        });
        pairs.collect()
    };
    let mut base = OneVsAll::new((0..3).map(|_| member()).collect(), Loss::Logistic).unwrap();
    learn(&mut base, 30, 300);
    let (mut a, mut b) = (base.clone(), base.clone());
    learn(&mut a, 31, 6000);
    learn(&mut b, 32, 6000);
    let (in_a, in_b) = (retired(&a), retired(&b));
    let both: Vec<(usize, usize)> = in_a.iter().filter(|p| in_b.contains(p)).copied().collect();
    assert!(!both.is_empty(), "no member retired in both shards");
    let mut full = a.clone();
    full.merge(&b, Some(&base)).unwrap();
    let (mut a2, mut b2) = (a.clone(), b.clone());
    a2.forget_retired(&base, &both).unwrap();
    b2.forget_retired(&base, &both).unwrap();
    let bytes = |m: &OneVsAll| postcard::to_allocvec(m).unwrap();
    assert_ne!(
        bytes(&a2),
        bytes(&a),
        "the retired states were not put back"
    );
    let mut lean = a2.clone();
    lean.merge(&b2, Some(&base)).unwrap();
    for p in &both {
        assert!(retired(&lean).contains(p), "{p:?} active after the merge");
    }
    assert_eq!(retired(&lean), retired(&full));
    assert_ne!(bytes(&lean), bytes(&full));
    let held_out = class_rows(400, d, 33);
    let predict = |m: &OneVsAll| -> Vec<u64> {
        let p = held_out.iter().map(|(x, _)| m.predict_proba(Row::Dense(x)));
        p.flatten().map(f64::to_bits).collect()
    };
    assert_eq!(predict(&lean), predict(&full), "probabilities differ");
    let loaded: OneVsAll = postcard::from_bytes(&bytes(&lean)).unwrap();
    assert_eq!(
        predict(&loaded),
        predict(&full),
        "loaded probabilities differ"
    );
    let (mut lean_on, mut full_on) = (loaded, full.clone());
    assert_eq!(learn(&mut lean_on, 34, 600), learn(&mut full_on, 34, 600));
    let (mut c_lean, mut c_full) = (lean.clone(), full.clone());
    learn(&mut c_lean, 35, 300);
    learn(&mut c_full, 35, 300);
    lean_on.merge(&c_lean, Some(&lean)).unwrap();
    full_on.merge(&c_full, Some(&full)).unwrap();
    assert_eq!(predict(&lean_on), predict(&full_on), "second merge differs");
    // All or nothing: a valid class first, then an active member, or a class out of range.
    let active = (0..3)
        .flat_map(|c| (0..4).map(move |k| (c, k)))
        .find(|p| !in_a.contains(p))
        .unwrap();
    let mut refused = a.clone();
    for bad in [vec![both[0], active], vec![both[0], (3, 0)]] {
        assert!(refused.forget_retired(&base, &bad).is_err(), "{bad:?}");
        assert_eq!(bytes(&refused), bytes(&a), "a refusal changed the state");
    }
    // Through `AnyMulticlass`: the same for one-against-all; a softmax model holds no mixture.
    let (mut any, any_base) = (
        AnyMulticlass::OneVsAll(a.clone()),
        AnyMulticlass::OneVsAll(base),
    );
    any.forget_retired(&any_base, &both).unwrap();
    assert_eq!(any.class_mixtures().len(), 3);
    let softmax = MulticlassConfig {
        reduction: sketchlearn::linear::Reduction::Softmax,
        classes: 3,
        ..Default::default()
    };
    let mut s = softmax.build(d).unwrap();
    let s_base = s.clone();
    assert!(s.class_mixtures().is_empty());
    assert!(s.forget_retired(&s_base, &[]).is_ok());
    assert!(s.forget_retired(&s_base, &[(0, 0)]).is_err());
}
