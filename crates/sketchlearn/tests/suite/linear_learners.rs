//! Equivalences and robustness of the online linear learners (SON paper Alg. 1; RFD paper Alg. 5/6).

use proptest::prelude::*;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};
use rand_xoshiro::Xoshiro256PlusPlus;
use sketchlearn::linear::curvature::{
    Curvature, FdCurvature, FullCurvature, OjaCurvature, RpCurvature,
};
use sketchlearn::linear::{
    Algorithm, CurvatureKind, LearnerConfig, Newton, NewtonParams, Ogd, OnlineLearner, StepSchedule,
};
use sketchlearn::loss::Loss;
use sketchlearn::sketch::FdVariant;
use sketchlearn::Row;

/// `n` examples in `d` dimensions with correlated features, labels ±1 from a random separator
/// with 10% label noise; about a fifth of the rows are sparse.
fn stream(n: usize, d: usize, seed: u64) -> Vec<(Vec<f64>, f64)> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut g = move || -> f64 { StandardNormal.sample(&mut rng) };
    let theta: Vec<f64> = (0..d).map(|_| g()).collect();
    (0..n)
        .map(|i| {
            let base = g();
            let x: Vec<f64> = (0..d)
                .map(|j| {
                    if i % 5 == 0 && j % 2 == 1 {
                        0.0
                    } else {
                        0.7 * base + g() * (1.0 + j as f64 / d as f64)
                    }
                })
                .collect();
            let s: f64 = x.iter().zip(&theta).map(|(a, b)| a * b).sum();
            let flip = g() > 1.28;
            let y = if (s > 0.0) ^ flip { 1.0 } else { -1.0 };
            (x, y)
        })
        .collect()
}

fn sparse(x: &[f64]) -> (Vec<u32>, Vec<f64>) {
    x.iter()
        .enumerate()
        .filter(|(_, v)| **v != 0.0)
        .map(|(i, v)| (i as u32, *v))
        .unzip()
}

/// Runs two learners side by side (the first on dense rows, the second on sparse rows) and
/// asserts equal predictions to a relative tolerance.
fn assert_same_predictions(
    a: &mut dyn OnlineLearner,
    b: &mut dyn OnlineLearner,
    data: &[(Vec<f64>, f64)],
    tol: f64,
) {
    for (t, (x, y)) in data.iter().enumerate() {
        let (idx, val) = sparse(x);
        let pa = a.learn(Row::Dense(x), *y, 1.0).unwrap();
        let pb = b
            .learn(
                Row::Sparse {
                    indices: &idx,
                    values: &val,
                },
                *y,
                1.0,
            )
            .unwrap();
        assert!(
            (pa - pb).abs() <= tol * (1.0 + pa.abs()),
            "example {t}: {pa} vs {pb}"
        );
    }
    let (wa, wb) = (a.weights(), b.weights());
    for (x, y) in wa.iter().zip(wb.iter()) {
        assert!((x - y).abs() <= tol * (1.0 + x.abs()), "weights {x} vs {y}");
    }
}

fn full_on(d: usize, alpha: f64, params: NewtonParams) -> Newton<FullCurvature> {
    Newton::new(FullCurvature::new(d, alpha).unwrap(), params).unwrap()
}

fn params(loss: Loss, clip: f64) -> NewtonParams {
    NewtonParams { loss, c: 1.0, clip }
}

#[test]
fn sketched_newton_with_m_above_d_is_full_on() {
    let d = 6;
    let data = stream(300, d, 1);
    for &(loss, clip) in &[
        (Loss::Logistic, f64::INFINITY),
        (Loss::Squared, 1.0),
        (Loss::SmoothHinge, 2.0),
    ] {
        for variant in [FdVariant::PerRow, FdVariant::Doubling] {
            let alpha = 0.7;
            for curvature in [
                // FD-SON with m = d + 1 > rank: the sketch never loses anything.
                FdCurvature::fd(d, d + 1, variant, alpha).unwrap(),
                // RFD-SON with m > d: α never grows past α0.
                FdCurvature::rfd(d, d + 2, variant, alpha).unwrap(),
            ] {
                let mut sketched = Newton::new(curvature, params(loss, clip)).unwrap();
                let mut full = full_on(d, alpha, params(loss, clip));
                assert_same_predictions(&mut full, &mut sketched, &data, 1e-9);
            }
        }
    }
}

#[test]
fn small_sketch_differs_from_full_on() {
    // The equivalence above is not vacuous: with m = 2 < d the predictions differ.
    let d = 6;
    let data = stream(200, d, 2);
    let p = params(Loss::Logistic, f64::INFINITY);
    let mut full = full_on(d, 0.5, p);
    let mut fd = Newton::new(FdCurvature::fd(d, 2, FdVariant::PerRow, 0.5).unwrap(), p).unwrap();
    let mut max_diff: f64 = 0.0;
    for (x, y) in &data {
        let a = full.learn(Row::Dense(x), *y, 1.0).unwrap();
        let b = fd.learn(Row::Dense(x), *y, 1.0).unwrap();
        max_diff = max_diff.max((a - b).abs());
    }
    assert!(max_diff > 1e-3, "{max_diff}");
}

#[test]
fn oja_with_no_directions_is_projected_ogd() {
    let d = 5;
    let data = stream(300, d, 3);
    for clip in [f64::INFINITY, 0.8] {
        let alpha = 2.0;
        let mut oja = Newton::new(
            OjaCurvature::new(d, 0, alpha, 1.0, 9).unwrap(),
            params(Loss::Logistic, clip),
        )
        .unwrap();
        let mut ogd =
            Ogd::new(d, Loss::Logistic, 1.0 / alpha, StepSchedule::Constant, clip).unwrap();
        assert_same_predictions(&mut ogd, &mut oja, &data, 1e-12);
    }
}

/// Dense `A = αI + SᵀS` from an explicit `S` (row-major `rows × d`), inverted by Gauss–Jordan.
fn dense_inverse(s: &[f64], rows: usize, d: usize, alpha: f64) -> Vec<f64> {
    let mut a = vec![0.0; d * d];
    for r in 0..rows {
        for i in 0..d {
            for j in 0..d {
                a[i * d + j] += s[r * d + i] * s[r * d + j];
            }
        }
    }
    for i in 0..d {
        a[i * d + i] += alpha;
    }
    let mut inv = vec![0.0; d * d];
    for i in 0..d {
        inv[i * d + i] = 1.0;
    }
    for c in 0..d {
        let p = a[c * d + c];
        for j in 0..d {
            a[c * d + j] /= p;
            inv[c * d + j] /= p;
        }
        for r in 0..d {
            if r != c {
                let f = a[r * d + c];
                for j in 0..d {
                    a[r * d + j] -= f * a[c * d + j];
                    inv[r * d + j] -= f * inv[c * d + j];
                }
            }
        }
    }
    inv
}

fn check_woodbury(cur: &mut dyn Curvature, s: &[f64], rows: usize, x: &[f64]) {
    let d = x.len();
    let inv = dense_inverse(s, rows, d, cur.alpha());
    let dense_solve: Vec<f64> = (0..d)
        .map(|i| (0..d).map(|j| inv[i * d + j] * x[j]).sum())
        .collect();
    let dense_quad: f64 = x.iter().zip(&dense_solve).map(|(a, b)| a * b).sum();
    let mut woodbury = vec![0.0; d];
    cur.add_solve(Row::Dense(x), 1.0, &mut woodbury);
    for (a, b) in woodbury.iter().zip(&dense_solve) {
        assert!((a - b).abs() <= 1e-9 * (1.0 + b.abs()), "solve {a} vs {b}");
    }
    let q = cur.inv_quad(Row::Dense(x));
    assert!(
        (q - dense_quad).abs() <= 1e-9 * (1.0 + dense_quad),
        "quad {q} vs {dense_quad}"
    );
    // The projection built from them equals the dense projection.
    let u: Vec<f64> = (0..d).map(|i| (i as f64 - 1.5) * 0.9).collect();
    let ux: f64 = u.iter().zip(x).map(|(a, b)| a * b).sum();
    let c = 0.3;
    let tau = ux.signum() * (ux.abs() - c).max(0.0);
    let mut w_wood = u.clone();
    cur.add_solve(Row::Dense(x), -tau / q, &mut w_wood);
    let w_dense: Vec<f64> = (0..d)
        .map(|i| u[i] - tau / dense_quad * dense_solve[i])
        .collect();
    for (a, b) in w_wood.iter().zip(&w_dense) {
        assert!(
            (a - b).abs() <= 1e-9 * (1.0 + b.abs()),
            "projection {a} vs {b}"
        );
    }
    let wx: f64 = w_wood.iter().zip(x).map(|(a, b)| a * b).sum();
    assert!(wx.abs() <= c + 1e-9, "projected prediction {wx}");
}

#[test]
fn woodbury_equals_dense_linear_algebra() {
    let d = 7;
    let data = stream(60, d, 4);
    let mut fd = FdCurvature::rfd(d, 3, FdVariant::Doubling, 0.4).unwrap();
    let mut fd_row = FdCurvature::fd(d, 3, FdVariant::PerRow, 0.4).unwrap();
    let mut rp = RpCurvature::new(d, 3, 0.4, 5).unwrap();
    let mut oja = OjaCurvature::new(d, 3, 0.4, 1.0, 6).unwrap();
    for (t, (x, _)) in data.iter().enumerate() {
        for cur in [
            &mut fd as &mut dyn Curvature,
            &mut fd_row,
            &mut rp,
            &mut oja,
        ] {
            cur.update(Row::Dense(x), 0.5).unwrap();
        }
        if t % 7 != 0 {
            continue;
        }
        let probe = &data[(t + 1) % data.len()].0;
        let (s, rows) = (fd.sketch().rows().to_vec(), fd.sketch().filled_rows());
        check_woodbury(&mut fd, &s, rows, probe);
        let (s, rows) = (
            fd_row.sketch().rows().to_vec(),
            fd_row.sketch().filled_rows(),
        );
        check_woodbury(&mut fd_row, &s, rows, probe);
        let s = rp.sketch().s().to_vec();
        check_woodbury(&mut rp, &s, 3, probe);
        use sketchlearn::sketch::Sketch;
        let s = oja.sketch().matrix().b.to_vec();
        check_woodbury(&mut oja, &s, 3, probe);
    }
}

fn all_configs() -> Vec<LearnerConfig> {
    let mut out = Vec::new();
    for algorithm in [Algorithm::Ogd, Algorithm::AdaGrad, Algorithm::AdaGradGrid] {
        out.push(LearnerConfig {
            algorithm,
            ..LearnerConfig::default()
        });
    }
    for curvature in CurvatureKind::ALL {
        for (diag, clip) in [(false, f64::INFINITY), (true, 1.0)] {
            out.push(LearnerConfig {
                algorithm: Algorithm::Newton,
                curvature,
                size: 3,
                diag,
                clip,
                ..LearnerConfig::default()
            });
        }
    }
    // The default (the auto mixture), as shipped and with a small sketch.
    out.push(LearnerConfig::default());
    out.push(LearnerConfig {
        size: 3,
        ..LearnerConfig::default()
    });
    out
}

/// Examples that break naive implementations: condition number 1e6, values 1e8 and 1e-8, zero
/// rows, constant labels.
fn extreme_stream(d: usize) -> Vec<(Vec<f64>, f64)> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(77);
    let mut out = Vec::new();
    for i in 0..400 {
        let mut x: Vec<f64> = (0..d)
            .map(|j| {
                let z: f64 = StandardNormal.sample(&mut rng);
                // Column scales spanning 1e-3..1e3: condition number of the covariance 1e6+.
                z * 10f64.powf(-3.0 + 6.0 * j as f64 / (d - 1) as f64)
            })
            .collect();
        match i % 10 {
            0 => x.iter_mut().for_each(|v| *v = 0.0),
            1 => x[0] = 1e8,
            2 => x.iter_mut().for_each(|v| *v *= 1e-8),
            3 => x[d - 1] = -1e8,
            _ => {}
        }
        // Constant labels for the first half, alternating afterwards.
        let y = if i < 200 || i % 2 == 0 { 1.0 } else { -1.0 };
        out.push((x, y));
    }
    out
}

#[test]
fn weights_and_predictions_stay_finite_on_extreme_input() {
    let d = 6;
    let data = extreme_stream(d);
    for loss in Loss::ALL {
        for cfg in all_configs() {
            let cfg = LearnerConfig { loss, ..cfg };
            let mut learner = cfg.build(d).unwrap();
            for (t, (x, y)) in data.iter().enumerate() {
                let y = if loss == Loss::Squared { y * 3.0 } else { *y };
                match learner.learn(Row::Dense(x), y, 1.0) {
                    Ok(p) => assert!(p.is_finite(), "{}: prediction {p} at {t}", cfg.describe()),
                    // A refused step is allowed (and reported); the weights must stay finite.
                    Err(sketchlearn::linear::LearnError::Diverged(_)) => {}
                    Err(e) => panic!("{}: example {t}: {e}", cfg.describe()),
                }
                assert!(
                    learner.weights().iter().all(|w| w.is_finite()),
                    "{}: non-finite weight after example {t}",
                    cfg.describe()
                );
                let p = learner.predict(Row::Dense(x));
                assert!(
                    p.is_finite(),
                    "{}: predict {p} after example {t}",
                    cfg.describe()
                );
            }
        }
    }
}

#[test]
fn constant_labels_and_all_zero_rows() {
    let d = 4;
    for cfg in all_configs() {
        let mut learner = cfg.build(d).unwrap();
        for t in 0..200 {
            let x = if t % 3 == 0 {
                [0.0; 4]
            } else {
                [1.0, 2.0, -1.0, 0.5]
            };
            let p = learner.learn(Row::Dense(&x), 1.0, 1.0).unwrap();
            assert!(p.is_finite());
        }
        assert!(learner.weights().iter().all(|w| w.is_finite()));
        assert!(
            learner.predict(Row::Dense(&[1.0, 2.0, -1.0, 0.5])) > 0.0,
            "{} did not learn a constant label",
            cfg.describe()
        );
    }
}

#[test]
fn adagrad_ignores_underflowing_gradients() {
    // A saturated logistic derivative (~e^-400) squares to 0: the step must be skipped, not NaN.
    let mut ada = sketchlearn::linear::AdaGrad::new(1, Loss::Logistic, 1.0).unwrap();
    let x = [1e-170];
    let p = ada.learn(Row::Dense(&x), 1.0, 1.0).unwrap();
    assert_eq!(p, 0.0);
    assert!(ada.weights()[0].is_finite());
    let r = ada.learn(Row::Dense(&[1e-170]), 1.0, 1.0);
    assert!(r.is_ok(), "{r:?}");
}

#[test]
fn invalid_hyper_parameters_are_rejected() {
    let base = LearnerConfig::default();
    let cases = [
        LearnerConfig {
            alpha: -1.0,
            curvature: CurvatureKind::FdFast,
            ..base.clone()
        },
        LearnerConfig {
            alpha: f64::NAN,
            ..base.clone()
        },
        LearnerConfig {
            alpha0: 0.0,
            ..base.clone()
        }, // RFD-SON needs α0 > 0
        LearnerConfig {
            alpha0: -2.0,
            ..base.clone()
        },
        LearnerConfig {
            size: 0,
            curvature: CurvatureKind::Fd,
            ..base.clone()
        },
        LearnerConfig {
            c: 0.0,
            ..base.clone()
        },
        LearnerConfig {
            clip: 0.0,
            ..base.clone()
        },
        LearnerConfig {
            clip: f64::NAN,
            ..base.clone()
        },
        LearnerConfig {
            learning_rate: -0.1,
            algorithm: Algorithm::AdaGrad,
            ..base.clone()
        },
        LearnerConfig {
            diag: true,
            diag_d0: 0.0,
            ..base.clone()
        },
        LearnerConfig {
            oja_c: f64::INFINITY,
            curvature: CurvatureKind::Oja,
            ..base.clone()
        },
        LearnerConfig {
            bias_value: 0.0,
            ..base.clone()
        },
        LearnerConfig {
            bias_value: f64::INFINITY,
            algorithm: Algorithm::AdaGrad,
            ..base.clone()
        },
        LearnerConfig {
            bias_value: -1.0,
            algorithm: Algorithm::AdaGradGrid,
            ..base.clone()
        },
    ];
    for cfg in cases {
        let err = cfg
            .build(5)
            .expect_err(&format!("{cfg:?} should be rejected"));
        assert!(!err.to_string().is_empty());
    }
    // Oja and RP allow m = 0.
    for curvature in [CurvatureKind::Oja, CurvatureKind::Rp] {
        assert!(LearnerConfig {
            size: 0,
            curvature,
            ..base.clone()
        }
        .build(5)
        .is_ok());
    }
}

#[test]
fn bad_examples_are_errors_not_panics() {
    let mut learner = LearnerConfig::default().build(3).unwrap();
    assert!(learner
        .learn(Row::Dense(&[f64::NAN, 0.0, 0.0]), 1.0, 1.0)
        .is_err());
    assert!(learner
        .learn(Row::Dense(&[1.0, 0.0, 0.0]), f64::INFINITY, 1.0)
        .is_err());
    assert!(learner
        .learn(Row::Dense(&[1.0, 0.0, 0.0]), 1.0, -1.0)
        .is_err());
    assert!(learner
        .learn(
            Row::Sparse {
                indices: &[3],
                values: &[1.0]
            },
            1.0,
            1.0
        )
        .is_err());
    assert!(learner.weights().iter().all(|w| *w == 0.0));
    // Prediction ignores features beyond the model's dimension.
    assert_eq!(
        learner.predict(Row::Sparse {
            indices: &[7],
            values: &[1.0]
        }),
        0.0
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::common::cases(24), .. ProptestConfig::default() })]

    #[test]
    fn sparse_and_dense_rows_learn_the_same(seed in any::<u64>(), which in 0usize..20) {
        let cfg = all_configs()[which].clone();
        let data = stream(80, 5, seed);
        let mut a = cfg.build(5).unwrap();
        let mut b = cfg.build(5).unwrap();
        assert_same_predictions(&mut a, &mut b, &data, 1e-9);
    }
}

/// A sketched curvature refuses a row above `MAX_ROW_SQUARED_NORM` (±1e300 values, a scale that
/// overflows, or a step's row of ±1e150) before its sketch changes: later rows give the same
/// solve, bit for bit, as without the refused ones. Before the guard FD's row left ±∞ in its
/// Gram matrix and NaN in its factor; RP added it to `S` and failed after (a mixture with
/// `--curvature rp` on rows of ±1e300 saved a model that did not load).
fn refuses_an_overflowing_row_and_stays_as_it_was<C: Curvature + Clone>(mut a: C) {
    let d = a.dim();
    let rows = stream(9, d, 3);
    for (x, _) in &rows[..4] {
        a.update(Row::Dense(x), 1.0).unwrap();
    }
    let kept = a.clone();
    let huge = [1e300, -7e299, 3e299, 0.0, 1e299];
    assert!(a.update(Row::Dense(&huge), 1.0).is_err());
    assert!(a.update(Row::Dense(&rows[0].0), 1e160).is_err()); // the scale overflows
    let mut t = vec![0.0; d];
    let big = [1e150, -1e150, 1e150, 1e150, -1e150];
    assert!(a
        .update_and_solve(Row::Dense(&big), 1.0, 1.0, &mut t)
        .is_err());
    let mut b = kept;
    for (x, _) in &rows[4..] {
        a.update(Row::Dense(x), 1.0).unwrap();
        b.update(Row::Dense(x), 1.0).unwrap();
    }
    let (mut ta, mut tb) = (vec![0.0; d], vec![0.0; d]);
    a.add_solve(Row::Dense(&rows[1].0), 1.0, &mut ta);
    b.add_solve(Row::Dense(&rows[1].0), 1.0, &mut tb);
    assert!(ta.iter().all(|v| v.is_finite()));
    assert_eq!(ta, tb);
}

#[test]
fn fd_curvature_refuses_an_overflowing_row_and_stays_as_it_was() {
    refuses_an_overflowing_row_and_stays_as_it_was(
        FdCurvature::fd(5, 3, FdVariant::Doubling, 0.5).unwrap(),
    );
}

#[test]
fn rp_and_oja_curvatures_refuse_an_overflowing_row_and_stay_as_they_were() {
    refuses_an_overflowing_row_and_stays_as_it_was(RpCurvature::new(5, 3, 0.5, 7).unwrap());
    refuses_an_overflowing_row_and_stays_as_it_was(OjaCurvature::new(5, 3, 0.5, 0.1, 7).unwrap());
}

/// The default with `--curvature rp` (and `oja`) on rows all of scale 1e300, or 1e155, saves a
/// model that loads again (rp's used to hold NaN).
#[test]
fn rp_and_oja_mixtures_on_huge_rows_save_a_model_that_loads() {
    for (curvature, s) in [CurvatureKind::Rp, CurvatureKind::Oja]
        .into_iter()
        .flat_map(|c| [(c, 1e300), (c, 1e155)])
    {
        let config = LearnerConfig {
            loss: Loss::Logistic,
            curvature,
            ..LearnerConfig::default()
        };
        // Every row huge (the first ones set the members' feature scales).
        let rows = stream(200, 5, 4)
            .into_iter()
            .map(|(x, y)| (x.iter().map(|v| v * s).collect(), y));
        assert!(learned_model_loads(config, rows), "{curvature:?} {s:e}");
    }
}

/// Learns `rows` with `config`'s learner (refused steps ignored), saves the model, loads it
/// back: whether the loaded model's prediction on a fixed row is finite (a load error fails).
fn learned_model_loads(config: LearnerConfig, rows: impl Iterator<Item = (Vec<f64>, f64)>) -> bool {
    use sketchlearn::linear::LinearModel;
    let mut model = LinearModel::new(config.clone(), config.build(5).unwrap());
    for (x, y) in rows {
        let _ = model.learner.learn(Row::Dense(&x), y, 1.0);
    }
    let bytes = model.to_bytes().unwrap();
    let back = LinearModel::from_bytes(&bytes, "memory").unwrap();
    back.learner
        .predict(Row::Dense(&[0.5, -1.0, 0.25, 0.0, 2.0]))
        .is_finite()
}

/// The default learner on rows of ±1e300 keeps a finite state: its model file loads again
/// (it used to hold NaN in its FD members' Cholesky factors: "a number in the learner's
/// state is NaN" on `train -i`, `test`, `predict` and `inspect`).
#[test]
fn the_default_on_huge_rows_saves_a_model_that_loads() {
    let config = LearnerConfig {
        loss: Loss::Logistic,
        ..LearnerConfig::default()
    };
    let rows = stream(300, 5, 4)
        .into_iter()
        .enumerate()
        .map(|(i, (x, y))| {
            let x = if i % 3 == 0 {
                x.iter().map(|v| v.signum() * 1e300).collect()
            } else {
                x
            };
            (x, y)
        });
    assert!(learned_model_loads(config, rows));
}

/// A run of the default (and of the squared-loss default) on rows whose features are
/// `±1e300·u` counts the steps its members refused: every member refuses them and the mixture
/// goes on, so the run reported 0 refused steps and the CLI said only that the learner "has not
/// learned; the features may not predict the labels" — though the sign of the first feature is
/// the label. `--algo adagrad` on the same rows reported its 400 refusals.
#[test]
fn a_run_of_the_default_counts_the_steps_its_members_refused() {
    use sketchlearn::run::{self, Input, Silent, Start, TrainOptions};
    // LIBSVM text of the rows scaled by `scale`, labelled by the sign of the first feature.
    let text = |scale: f64| -> Vec<u8> {
        let rows = stream(400, 5, 9).into_iter().map(|(x, _)| {
            let label = if x[0] > 0.0 { 1 } else { -1 };
            let features: Vec<String> = (x.iter().enumerate())
                .map(|(j, v)| format!("{}:{:e}", j + 1, v * scale))
                .collect();
            format!("{label} {}\n", features.join(" "))
        });
        rows.collect::<String>().into_bytes()
    };
    let train = |scale: f64, loss: Loss| {
        let config = LearnerConfig {
            loss,
            ..LearnerConfig::default()
        };
        let options = TrainOptions::default();
        let input = Input::bytes("rows.libsvm", text(scale));
        run::train(input, Start::New(config), &options, &mut Silent).unwrap()
    };
    for loss in [Loss::Logistic, Loss::Squared] {
        let fitted = train(1e300, loss);
        assert!(
            fitted.refused_steps >= 400,
            "{loss:?}: {}",
            fitted.refused_steps
        );
        let held = fitted.model.learner.member_refused_steps();
        assert_eq!(fitted.refused_steps, held, "{loss:?}");
        // Ordinary rows: no member refuses.
        assert_eq!(train(1.0, loss).refused_steps, 0, "{loss:?}");
    }
}

/// The directions of an Oja sketch that are not zero (a direction Gram–Schmidt dropped as
/// dependent is a zero row of `V`, and stays zero).
fn oja_rank(c: &OjaCurvature) -> usize {
    let d = c.dim();
    let v = c.sketch().eigenvectors();
    v.chunks(d)
        .filter(|row| row.iter().any(|x| *x != 0.0))
        .count()
}

/// Oja's step `V + γpĝᵀ` has the Gram matrix `I + βppᵀ`, `β = 2γ + γ²‖ĝ‖²`: quartic in the row.
/// A row of ~1e90 values (`‖ĝ‖² ≈ 1e180`, far below FD's bound 1e200) made it overflow, and
/// Gram–Schmidt then zeroed every direction for good while `λ` stayed finite: a finite state
/// whose sketch had silently lost its rank. It is refused now, before anything changes (the
/// stored state is byte-identical); a row just below Oja's bound is taken and keeps `ĝ`'s
/// direction.
#[test]
fn oja_refuses_a_row_whose_step_would_overflow_and_stays_as_it_was() {
    use sketchlearn::linear::curvature::MAX_OJA_ROW_SQUARED_NORM;
    let rows = stream(9, 5, 3);
    let mut a = OjaCurvature::new(5, 3, 0.5, 0.1, 7).unwrap();
    for (x, _) in &rows[..4] {
        a.update(Row::Dense(x), 1.0).unwrap();
    }
    assert_eq!(oja_rank(&a), 3);
    let before = postcard::to_allocvec(&a).unwrap();
    let huge: Vec<f64> = rows[4].0.iter().map(|v| v * 1e90).collect();
    assert!(a.update(Row::Dense(&huge), 1.0).is_err());
    let mut t = vec![0.0; 5];
    assert!(a
        .update_and_solve(Row::Dense(&huge), 1.0, 1.0, &mut t)
        .is_err());
    assert!(a.update(Row::Dense(&rows[4].0), 1e90).is_err()); // the scale makes it huge
    assert_eq!(postcard::to_allocvec(&a).unwrap(), before);
    assert_eq!(oja_rank(&a), 3);
    // Just below the bound: taken, finite, and ĝ's direction is one of the sketch's.
    let n2: f64 = rows[4].0.iter().map(|v| v * v).sum();
    let s = (0.99 * MAX_OJA_ROW_SQUARED_NORM / n2).sqrt();
    for m in [1, 3] {
        let mut b = OjaCurvature::new(5, m, 0.5, 0.1, 7).unwrap();
        for (x, _) in &rows[..4] {
            b.update(Row::Dense(x), 1.0).unwrap();
        }
        b.update(Row::Dense(&rows[4].0), s).unwrap();
        let v = b.sketch().eigenvectors();
        assert!(v
            .iter()
            .chain(b.sketch().eigenvalues())
            .all(|x| x.is_finite()));
        assert!(oja_rank(&b) >= 1, "m = {m}");
        let cos = (0..5).map(|j| v[j] * rows[4].0[j]).sum::<f64>() / n2.sqrt();
        assert!((cos.abs() - 1.0).abs() < 1e-9, "m = {m}: cos {cos}");
    }
}
