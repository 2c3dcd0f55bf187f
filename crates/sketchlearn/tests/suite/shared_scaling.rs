//! The default mixture's members share one unit scaling (`linear/shared_scaling.rs`, issue 27):
//! the same bits as members that each keep their own, one example at a time and in batches on
//! two threads, in predictions, scores and weights; a model file holds the same bytes, and a
//! saved model continues as the run that was not interrupted.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use sketchlearn::linear::{
    AnyLearner, CurvatureKind, LearnError, LearnerConfig, LinearModel, Mixture, OnlineLearner,
    Representation, UnitScaling,
};
use sketchlearn::{Example, Row};
use std::borrow::Cow;

const D: usize = 300;

/// A member that keeps its own unit scaling: it does not say it is one
/// ([`OnlineLearner::as_unit_scaling`] is `None`), so the mixture cannot share it. The same
/// bytes as the member in a file.
#[derive(Clone, serde::Serialize)]
#[serde(transparent)]
struct Own(AnyLearner);

impl OnlineLearner for Own {
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn predict(&self, x: Row<'_>) -> f64 {
        self.0.predict(x)
    }
    fn learn(&mut self, x: Row<'_>, y: f64, weight: f64) -> Result<f64, LearnError> {
        self.0.learn(x, y, weight)
    }
    fn weights(&self) -> Cow<'_, [f64]> {
        self.0.weights()
    }
    fn prefetch(&self, x: Row<'_>) {
        self.0.prefetch(x)
    }
}

/// A sparse stream whose features the scaling maps every way: measurements above unit scale
/// (features 0–2, in every row, around 100, 5 and −40), a scaled-down one (3, ±0.01), words at
/// unit scale and rare features in the tens (the rest).
fn stream(n: usize, seed: u64) -> Vec<Example> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let mut ex = Example::default();
            let mut push = |i: u32, v: f64| {
                ex.indices.push(i);
                ex.values.push(v);
            };
            push(0, 100.0 + 15.0 * rng.random::<f64>());
            push(1, 5.0 * rng.random::<f64>());
            push(2, -40.0 + rng.random::<f64>());
            push(3, 0.01 * (rng.random::<f64>() - 0.5));
            let mut words: Vec<u32> = (0..8).map(|_| rng.random_range(4..D as u32)).collect();
            words.sort_unstable();
            words.dedup();
            for j in words {
                push(j, if j % 7 == 0 { 30.0 } else { 1.0 });
            }
            let s = ex.values[0] - 107.5 + 3.0 * ex.values[1] - 7.5;
            ex.label = if s + 4.0 * (rng.random::<f64>() - 0.5) > 0.0 {
                1.0
            } else {
                -1.0
            };
            ex.weight = 1.0;
            ex
        })
        .collect()
}

/// The default, dense and with sparse-time members.
fn configs() -> Vec<LearnerConfig> {
    vec![
        LearnerConfig {
            size: 5,
            ..LearnerConfig::default()
        },
        LearnerConfig {
            size: 5,
            curvature: CurvatureKind::RfdFast,
            representation: Representation::Sparse,
            ..LearnerConfig::default()
        },
    ]
}

/// The default's members, each in a unit scaling of its own, mixed as the default mixes them.
fn own_scalings(config: &LearnerConfig) -> Mixture<Own> {
    let members = config
        .mixture_members()
        .unwrap()
        .iter()
        .map(|m| {
            let built = m.check().unwrap().build_unscaled(D).unwrap();
            Own(AnyLearner::UnitScaling(Box::new(UnitScaling::new(built))))
        })
        .collect();
    let mut mixture = Mixture::new(members, config.loss, config.mix_rule(), 1.0).unwrap();
    mixture.set_calibrated_output(true); // as the default's (`linear/mixture_output.rs`)
    mixture
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Every example learned, one at a time (`batch` 1) or in batches of `batch` (two threads
/// where the machine has two cores): the progressive predictions.
fn learn<L: OnlineLearner>(learner: &mut L, data: &[Example], batch: usize) -> Vec<f64> {
    let (mut all, mut out) = (Vec::new(), Vec::new());
    for part in data.chunks(batch) {
        if batch == 1 {
            let ex = &part[0];
            all.push(learner.learn(ex.row(), ex.label, ex.weight).unwrap());
        } else {
            learner.learn_batch(part, &mut out).unwrap();
            all.extend_from_slice(&out);
        }
    }
    all
}

#[test]
fn shared_scaling_gives_the_bits_of_members_with_their_own() {
    let data = stream(600, 3);
    let probe = stream(40, 4);
    for config in configs() {
        for batch in [1, 64] {
            let mut shared = config.build(D).unwrap();
            assert!(matches!(&shared, AnyLearner::Mixture(m)
                if m.members().iter().all(|u| u.as_unit_scaling().is_some())));
            let mut own = own_scalings(&config);
            let (a, b) = (
                learn(&mut shared, &data, batch),
                learn(&mut own, &data, batch),
            );
            let what = format!("{} batch {batch}", config.describe());
            assert_eq!(bits(&a), bits(&b), "{what}: progressive predictions");
            let scores = |l: &dyn OnlineLearner| {
                probe
                    .iter()
                    .map(|ex| l.predict(ex.row()))
                    .collect::<Vec<_>>()
            };
            assert_eq!(bits(&scores(&shared)), bits(&scores(&own)), "{what}");
            assert_eq!(bits(&shared.weights()), bits(&own.weights()), "{what}");
            // The file holds one copy per member, as before: the same bytes.
            let AnyLearner::Mixture(mix) = &shared else {
                unreachable!()
            };
            assert_eq!(
                postcard::to_allocvec(mix).unwrap(),
                postcard::to_allocvec(&own).unwrap(),
                "{what}: file bytes"
            );
            // And the test can fail: the scaling changed the members' view of the stream.
            let first = &mix.members()[0];
            let inner = first.as_unit_scaling().unwrap().inner();
            assert_ne!(bits(&inner.weights()), bits(&first.weights()), "{what}");
        }
    }
}

#[test]
fn a_saved_shared_model_loads_and_continues_bit_for_bit() {
    let data = stream(500, 5);
    let dir = std::env::temp_dir().join(format!("sketchlearn-shared-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (n, config) in configs().into_iter().enumerate() {
        let mut straight = config.build(D).unwrap();
        let all = learn(&mut straight, &data, 1);
        let mut first = LinearModel::new(config.clone(), config.build(D).unwrap());
        let k = 233;
        let mut resumed_preds = learn(&mut first.learner, &data[..k], 1);
        let path = dir.join(format!("m{n}.model"));
        first.save(&path).unwrap();
        let mut resumed = LinearModel::load(&path).unwrap();
        // A clone of the loaded model shares its statistics until one of them learns: it is
        // copied then, and the clone keeps what it had.
        let before = resumed.learner.clone();
        let before_scores: Vec<f64> = data[k..].iter().map(|e| before.predict(e.row())).collect();
        resumed_preds.extend(learn(&mut resumed.learner, &data[k..], 16));
        assert_eq!(bits(&all), bits(&resumed_preds), "{}", config.describe());
        assert_eq!(bits(&straight.weights()), bits(&resumed.learner.weights()));
        let again: Vec<f64> = data[k..].iter().map(|e| before.predict(e.row())).collect();
        assert_eq!(bits(&before_scores), bits(&again));
        // The loaded model is saved with the bytes of the one that did not stop.
        let (p, q) = (dir.join("p.model"), dir.join("q.model"));
        resumed.save(&p).unwrap();
        LinearModel::new(config.clone(), straight.clone())
            .save(&q)
            .unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), std::fs::read(&q).unwrap());
    }
    std::fs::remove_dir_all(&dir).ok();
}
