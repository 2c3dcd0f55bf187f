//! The lazy proximal learners (`linear/proximal.rs`) against their definitions:
//!
//! - with `λ₁ = λ₂ = 0` they are OGD and AdaGrad, bit for bit;
//! - the lazy sparse-time update equals the dense eager one (every coordinate shrunk at every
//!   example, update (1) of the module documentation, written out here) to 1e-9;
//! - a strong L1 penalty gives exact zeros, and the penalty shrinks the weights.

use proptest::prelude::*;
use sketchlearn::linear::{
    AdaGrad, Ogd, OnlineLearner, ProximalAdaGrad, ProximalOgd, Regularization, StepSchedule,
};
use sketchlearn::loss::Loss;
use sketchlearn::Row;

/// A sparse example: increasing indices below `dim`, values, label ±1.
type Sparse = (Vec<u32>, Vec<f64>, f64);

fn examples(dim: u32, n: usize) -> impl Strategy<Value = Vec<Sparse>> {
    prop::collection::vec(
        (
            prop::collection::btree_set(0..dim, 1..4),
            prop::collection::vec(-2.0f64..2.0, 4),
            prop::bool::ANY,
        )
            .prop_map(|(idx, vals, y)| {
                let idx: Vec<u32> = idx.into_iter().collect();
                let vals = vals[..idx.len()].to_vec();
                (idx, vals, if y { 1.0 } else { -1.0 })
            }),
        1..n,
    )
}

/// The eager elastic-net proximal step (1) for step `s`.
fn prox(u: f64, s: f64, r: Regularization) -> f64 {
    u.signum() * (u.abs() - s * r.l1).max(0.0) / (1.0 + s * r.l2)
}

/// Dense eager AdaGrad with the penalty: every coordinate with `G_i > 0` shrunk every example.
fn eager_adagrad(data: &[Sparse], dim: usize, eta: f64, r: Regularization, loss: Loss) -> Vec<f64> {
    let (mut w, mut g2) = (vec![0.0; dim], vec![0.0; dim]);
    for (idx, vals, y) in data {
        let p: f64 = idx.iter().zip(vals).map(|(&i, x)| w[i as usize] * x).sum();
        let dl = loss.derivative(p, *y);
        let mut u = w.clone();
        for (&i, &x) in idx.iter().zip(vals) {
            let i = i as usize;
            g2[i] += (dl * x).powi(2);
            if g2[i] > 0.0 {
                u[i] -= eta * dl * x / g2[i].sqrt();
            }
        }
        for i in 0..dim {
            if g2[i] > 0.0 {
                w[i] = prox(u[i], eta / g2[i].sqrt(), r);
            }
        }
    }
    w
}

/// Dense eager OGD (step `η/√t`) with the penalty.
fn eager_ogd(data: &[Sparse], dim: usize, eta: f64, r: Regularization, loss: Loss) -> Vec<f64> {
    let mut w = vec![0.0; dim];
    for (t, (idx, vals, y)) in data.iter().enumerate() {
        let p: f64 = idx.iter().zip(vals).map(|(&i, x)| w[i as usize] * x).sum();
        let s = eta / ((t + 1) as f64).sqrt();
        let dl = loss.derivative(p, *y);
        for (&i, &x) in idx.iter().zip(vals) {
            w[i as usize] -= s * dl * x;
        }
        for wi in &mut w {
            *wi = prox(*wi, s, r);
        }
    }
    w
}

fn learn_all(learner: &mut dyn OnlineLearner, data: &[Sparse]) -> Vec<f64> {
    data.iter()
        .map(|(idx, vals, y)| {
            learner
                .learn(
                    Row::Sparse {
                        indices: idx,
                        values: vals,
                    },
                    *y,
                    1.0,
                )
                .unwrap()
        })
        .collect()
}

fn close(a: &[f64], b: &[f64], tol: f64) -> bool {
    a.iter()
        .zip(b)
        .all(|(x, y)| (x - y).abs() <= tol * (1.0 + y.abs()))
}

/// Learns `data` with the lazy proximal learner; its weights equal `eager`'s to 1e-9.
fn lazy_equals_eager(
    lazy: &mut dyn OnlineLearner,
    data: &[Sparse],
    eager: &[f64],
) -> Result<(), TestCaseError> {
    learn_all(lazy, data);
    let w = lazy.weights();
    prop_assert!(close(&w, eager, 1e-9), "{:?} vs {:?}", w, eager);
    Ok(())
}

fn penalty() -> impl Strategy<Value = Regularization> {
    (0.0f64..0.3, 0.0f64..0.3).prop_map(|(l1, l2)| Regularization { l1, l2 })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn no_penalty_is_plain_adagrad_bit_for_bit(data in examples(12, 60), eta in 0.05f64..2.0) {
        let none = Regularization::default();
        let mut prox = ProximalAdaGrad::new(12, Loss::Logistic, eta, none).unwrap();
        let mut plain = AdaGrad::new(12, Loss::Logistic, eta).unwrap();
        let (a, b) = (learn_all(&mut prox, &data), learn_all(&mut plain, &data));
        prop_assert_eq!(a.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            b.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
        prop_assert_eq!(prox.weights().to_vec(), plain.weights().to_vec());
    }

    #[test]
    fn no_penalty_is_plain_ogd_bit_for_bit(data in examples(12, 60), eta in 0.05f64..2.0) {
        let none = Regularization::default();
        let mut prox = ProximalOgd::new(12, Loss::Logistic, eta, none).unwrap();
        let mut plain =
            Ogd::new(12, Loss::Logistic, eta, StepSchedule::InverseSqrt, f64::INFINITY).unwrap();
        let (a, b) = (learn_all(&mut prox, &data), learn_all(&mut plain, &data));
        prop_assert_eq!(a.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            b.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
        prop_assert_eq!(prox.weights().to_vec(), plain.weights().to_vec());
    }

    #[test]
    fn lazy_adagrad_equals_the_eager_update(
        data in examples(12, 80), eta in 0.05f64..2.0, r in penalty(),
    ) {
        let mut lazy = ProximalAdaGrad::new(12, Loss::Logistic, eta, r).unwrap();
        lazy_equals_eager(&mut lazy, &data, &eager_adagrad(&data, 12, eta, r, Loss::Logistic))?;
    }

    #[test]
    fn lazy_ogd_equals_the_eager_update(
        data in examples(12, 80), eta in 0.05f64..2.0, r in penalty(),
    ) {
        let mut lazy = ProximalOgd::new(12, Loss::Squared, eta, r).unwrap();
        lazy_equals_eager(&mut lazy, &data, &eager_ogd(&data, 12, eta, r, Loss::Squared))?;
    }
}

#[test]
fn a_strong_l1_penalty_gives_exact_zeros_and_fewer_nonzeros() {
    // 50 features, only the first two carry the label (the second is the first halved).
    let data: Vec<Sparse> = (0..400u32)
        .map(|t| {
            let y = if (t * 7919) % 11 < 5 { 1.0 } else { -1.0 };
            let noise = 2 + (t * 31) % 48;
            (vec![0, 1, noise], vec![y, 0.5 * y, 1.0], y)
        })
        .collect();
    let count = |r: Regularization| {
        let mut l = ProximalAdaGrad::new(50, Loss::Logistic, 0.5, r).unwrap();
        learn_all(&mut l, &data);
        let w = l.weights().to_vec();
        (w.iter().filter(|&&x| x != 0.0).count(), w)
    };
    let (dense, _) = count(Regularization::default());
    let (sparse, w) = count(Regularization { l1: 0.05, l2: 0.0 });
    assert_eq!(dense, 50);
    assert!(sparse <= 5, "{sparse} non-zeros: {w:?}");
    // The informative feature is kept (its copy at half scale is redundant: L1 keeps one).
    assert!(w[0] > 0.5, "{w:?}");
}

/// A long run with a large L2 penalty: the lazy OGD's running product `D` passes 1e100 and is
/// rescaled (several times); the weights stay those of the eager update.
#[test]
fn lazy_ogd_survives_the_rescale_of_its_running_products() {
    let data: Vec<Sparse> = (0..60_000u32)
        .map(|t| {
            let y = if (t * 7919) % 13 < 6 { 1.0 } else { -1.0 };
            let j = (t * 17) % 6;
            (vec![j, 6 + t % 2], vec![0.5 * y + 0.1, 1.0], y)
        })
        .collect();
    let r = Regularization { l1: 0.01, l2: 0.5 };
    let mut lazy = ProximalOgd::new(8, Loss::Logistic, 2.0, r).unwrap();
    learn_all(&mut lazy, &data);
    let eager = eager_ogd(&data, 8, 2.0, r, Loss::Logistic);
    assert!(
        close(&lazy.weights(), &eager, 1e-9),
        "{:?} vs {:?}",
        lazy.weights(),
        eager
    );
    assert!(eager.iter().all(|w| w.is_finite()));
}
