//! Multiclass learners (issue 24, item 2): the softmax learner's sketched Kronecker-factored
//! step against an exact Newton reference and a hand-checked case, probabilities on extreme
//! inputs, learning on a Gaussian mixture against one-against-all AdaGrad, sparse = dense,
//! invariance to the unit of the features, model-file round trips that resume bit-exact, and progressive error on `dna.libsvm`.

use crate::common;

use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, StandardNormal};
use rand_xoshiro::Xoshiro256PlusPlus;
use sketchlearn::eval::multiclass::MulticlassMetrics;
use sketchlearn::linear::curvature::{AnyCurvature, FdCurvature};
use sketchlearn::linear::multiclass::{
    AnyMulticlass, MulticlassConfig, MulticlassLearner, Reduction, SoftmaxParams, SoftmaxSon,
};
use sketchlearn::linear::{Algorithm, LearnerConfig, Representation};
use sketchlearn::sketch::FdVariant;
use sketchlearn::{model, Example, LibsvmOptions, LibsvmReader, Row};
use std::path::{Path, PathBuf};

/// `(x, class, weight)` with a dense `x`.
type Stream = Vec<(Vec<f64>, usize, f64)>;

/// `A⁻¹ b` for a small dense symmetric positive definite `n × n` `A` (Cholesky, written in the
/// tests independently of the library).
fn spd_solution(a: &[f64], n: usize, b: &[f64]) -> Vec<f64> {
    let mut x = b.to_vec();
    common::spd_solve(a, n, &mut x);
    x
}

fn softmax(z: &[f64]) -> Vec<f64> {
    let max = z.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = z.iter().map(|v| (v - max).exp()).collect();
    let s: f64 = e.iter().sum();
    e.iter().map(|v| v / s).collect()
}

/// The exact Kronecker-factored Newton learner, from scratch: `Φ = α₀I + c Σ ω x̃x̃ᵀ` and
/// `Γ = Σ ω(diag p − ppᵀ)/Σ ω + λI` formed densely and inverted, `W ← W − Γ⁻¹ω(p − e_y)(Φ⁻¹x̃)ᵀ`.
struct Reference {
    k: usize,
    de: usize,
    w: Vec<f64>,
    phi: Vec<f64>,
    sigma_sum: Vec<f64>,
    weight_sum: f64,
    c: f64,
    ridge: f64,
}

impl Reference {
    fn new(k: usize, de: usize, alpha: f64, c: f64, ridge: f64) -> Self {
        let mut phi = vec![0.0; de * de];
        for i in 0..de {
            phi[i * de + i] = alpha;
        }
        Reference {
            k,
            de,
            w: vec![0.0; k * de],
            phi,
            sigma_sum: vec![0.0; k * k],
            weight_sum: 0.0,
            c,
            ridge,
        }
    }

    fn learn(&mut self, xt: &[f64], class: usize, omega: f64) -> Vec<f64> {
        let (k, de) = (self.k, self.de);
        let z: Vec<f64> = (0..k)
            .map(|r| (0..de).map(|j| self.w[r * de + j] * xt[j]).sum())
            .collect();
        let p = softmax(&z);
        for i in 0..k {
            for j in 0..k {
                let diag = if i == j { p[i] } else { 0.0 };
                self.sigma_sum[i * k + j] += omega * (diag - p[i] * p[j]);
            }
        }
        self.weight_sum += omega;
        for i in 0..de {
            for j in 0..de {
                self.phi[i * de + j] += self.c * omega * xt[i] * xt[j];
            }
        }
        let mut gamma: Vec<f64> = self.sigma_sum.iter().map(|s| s / self.weight_sum).collect();
        for i in 0..k {
            gamma[i * k + i] += self.ridge;
        }
        let r: Vec<f64> = (0..k)
            .map(|i| omega * (p[i] - (i == class) as u8 as f64))
            .collect();
        let u = spd_solution(&gamma, k, &r);
        let v = spd_solution(&self.phi, de, xt);
        for (row, ui) in self.w.chunks_exact_mut(de).zip(&u) {
            for (w, vj) in row.iter_mut().zip(&v) {
                *w -= ui * vj;
            }
        }
        p
    }
}

fn random_stream(n: usize, d: usize, k: usize, seed: u64) -> Stream {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let x: Vec<f64> = (0..d).map(|_| rng.random_range(-2.0..2.0)).collect();
            let class = rng.random_range(0..k);
            (x, class, rng.random_range(0.5..2.0))
        })
        .collect()
}

#[test]
fn sketched_step_equals_the_exact_kronecker_newton_step() {
    let (d, k, alpha0, c, ridge) = (4, 3, 1.0, 0.7, 0.3);
    for bias in [None, Some(1.5)] {
        let de = d + bias.is_some() as usize;
        // m = 8 > d̃: the RFD sketch (doubling buffer of 16 rows) holds every direction, its
        // shrinks (after 16, 24, ... rows) subtract σ_m² = 0 and leave α = α₀.
        let curvature = FdCurvature::rfd(de, 8, FdVariant::Doubling, alpha0).unwrap();
        let params = SoftmaxParams {
            c,
            ridge,
            clip: f64::INFINITY,
            bias,
            diag: None,
        };
        let mut son = SoftmaxSon::new(k, curvature, params).unwrap();
        let mut reference = Reference::new(k, de, alpha0, c, ridge);
        for (t, (x, class, omega)) in random_stream(60, d, k, 7).into_iter().enumerate() {
            let mut xt = x.clone();
            if let Some(b) = bias {
                xt.push(b);
            }
            let p = son.learn(Row::Dense(&x), class, omega).unwrap();
            let p_ref = reference.learn(&xt, class, omega);
            for (a, b) in p.iter().zip(&p_ref) {
                assert!((a - b).abs() < 1e-9, "example {t}: p {p:?} vs {p_ref:?}");
            }
            for (a, b) in son.weights().iter().zip(&reference.w) {
                assert!(
                    (a - b).abs() < 1e-9 * (1.0 + b.abs()),
                    "example {t}, bias {bias:?}: W {:?} vs {:?}",
                    son.weights(),
                    reference.w
                );
            }
        }
        assert!(son.curvature().sketch().shrinks() >= 3);
    }
}

/// K = 2, d = 1, no intercept, α = 1 (FD), c = 1, λ = ½.
/// 1. x = 1, class 0: p = (½, ½); Γ = [[¼, −¼], [−¼, ¼]] + ½I; r = (−½, ½) is Γ's eigenvector
///    of eigenvalue 1, so Γ⁻¹r = r; Φ = 1 + 1² = 2, Φ⁻¹x = ½: W = −r·½ = (¼, −¼).
/// 2. x = 2, class 1: z = (½, −½), p = (σ(1), σ(−1)) = (0.7310585786, 0.2689414214); Σ̄'s
///    eigenvalue on (1, −1) is the mean of 2·¼ and 2σ(1)σ(−1) = 0.3932238665, i.e.
///    0.4466119332, plus λ: 0.9466119332; r = (σ(1), −σ(1)), Γ⁻¹r = ±0.7722896289;
///    Φ = 1 + 1 + 2² = 6, Φ⁻¹x = ⅓: W = (¼ − 0.7722896289/3, …) = (−0.0074298763, 0.0074298763).
#[test]
fn two_steps_by_hand() {
    let curvature = FdCurvature::fd(1, 2, FdVariant::Doubling, 1.0).unwrap();
    let params = SoftmaxParams {
        c: 1.0,
        ridge: 0.5,
        clip: f64::INFINITY,
        bias: None,
        diag: None,
    };
    let mut son = SoftmaxSon::new(2, curvature, params).unwrap();
    assert_eq!(
        son.learn(Row::Dense(&[1.0]), 0, 1.0).unwrap(),
        vec![0.5, 0.5]
    );
    assert!((son.weights()[0] - 0.25).abs() < 1e-15);
    assert!((son.weights()[1] + 0.25).abs() < 1e-15);
    let p = son.learn(Row::Dense(&[2.0]), 1, 1.0).unwrap();
    assert!((p[0] - 0.7310585786300049).abs() < 1e-15);
    assert!((son.weights()[0] + 0.007429876298108817).abs() < 1e-14);
    assert!((son.weights()[1] - 0.007429876298108817).abs() < 1e-14);
}

fn default_softmax(k: usize, d: usize) -> AnyMulticlass {
    MulticlassConfig {
        reduction: Reduction::Softmax,
        classes: k,
        ..MulticlassConfig::default()
    }
    .build(d)
    .unwrap()
}

fn ova(k: usize, d: usize, member: LearnerConfig) -> AnyMulticlass {
    MulticlassConfig {
        reduction: Reduction::OneVsAll,
        classes: k,
        member,
        ..MulticlassConfig::default()
    }
    .build(d)
    .unwrap()
}

fn adagrad() -> LearnerConfig {
    LearnerConfig {
        algorithm: Algorithm::AdaGrad,
        ..LearnerConfig::default()
    }
}

fn assert_distribution(p: &[f64], what: &str) {
    assert!(
        p.iter().all(|v| v.is_finite() && (0.0..=1.0).contains(v)),
        "{what}: {p:?}"
    );
    assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12, "{what}: {p:?}");
}

#[test]
fn probabilities_stay_distributions_on_extreme_inputs() {
    let (d, k) = (5, 4);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    let learners = [
        ("softmax", default_softmax(k, d)),
        ("oaa-auto", ova(k, d, LearnerConfig::default())),
        ("oaa-adagrad", ova(k, d, adagrad())),
    ];
    for (name, mut l) in learners {
        for t in 0..200 {
            let x: Vec<f64> = (0..d)
                .map(|j| {
                    let scale = if (t + j) % 3 == 0 { 1e8 } else { 1.0 };
                    scale * rng.random_range(-1.0..1.0)
                })
                .collect();
            let class = rng.random_range(0..k);
            match l.learn(Row::Dense(&x), class, 1.0) {
                Ok(p) => assert_distribution(&p, name),
                Err(e) => assert!(
                    matches!(e, sketchlearn::linear::LearnError::Diverged(_)),
                    "{name}: {e}"
                ),
            }
            assert_distribution(&l.predict_proba(Row::Dense(&x)), name);
            assert!(
                l.scores(Row::Dense(&x)).iter().all(|s| !s.is_nan()),
                "{name}"
            );
        }
    }
}

/// Three Gaussian classes in d = 20 sharing a covariance with a few large directions
/// (condition number 400) along which the means differ little.
fn gaussian_mixture(n: usize, seed: u64) -> Stream {
    let (d, k) = (20, 3);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut normal = || -> f64 { StandardNormal.sample(&mut rng) };
    let means: Vec<Vec<f64>> = (0..k)
        .map(|_| (0..d).map(|_| 0.6 * normal()).collect())
        .collect();
    let scales: Vec<f64> = (0..d).map(|j| if j < 3 { 20.0 } else { 1.0 }).collect();
    (0..n)
        .map(|t| {
            let class = t % k;
            let x = (0..d)
                .map(|j| means[class][j] + scales[j] * normal())
                .collect();
            (x, class, 1.0)
        })
        .collect()
}

fn progressive_error(l: &mut AnyMulticlass, data: &Stream) -> f64 {
    let mut mistakes = 0usize;
    for (x, class, w) in data {
        let p = match l.learn(Row::Dense(x), *class, *w) {
            Ok(p) => p,
            Err(_) => l.predict_proba(Row::Dense(x)),
        };
        let guess = (0..p.len()).fold(0, |b, j| if p[j] > p[b] { j } else { b });
        mistakes += (guess != *class) as usize;
    }
    mistakes as f64 / data.len() as f64
}

/// The default learns the ill-conditioned mixture (chance is 2/3). Its row norm is dominated by
/// the three large directions (`‖x‖² ≈ 1217`, 17 of it in the informative small ones), so the
/// default `α₀ = 1.5` mean squared rows damps the small directions the sketch leaves out: with
/// `α₀ = 0.05` (the residual's share of the row) the learner beats one-against-all AdaGrad.
#[test]
fn softmax_learns_a_gaussian_mixture() {
    let data = gaussian_mixture(3000, 11);
    let soft = progressive_error(&mut default_softmax(3, 20), &data);
    let small = MulticlassConfig {
        reduction: Reduction::Softmax,
        classes: 3,
        alpha0: 0.05,
        ..MulticlassConfig::default()
    };
    let tuned = progressive_error(&mut small.build(20).unwrap(), &data);
    let ada = progressive_error(&mut ova(3, 20, adagrad()), &data);
    eprintln!(
        "gaussian mixture, progressive error: softmax SON {soft:.4} (alpha0 0.05: {tuned:.4}), \
         OvA AdaGrad {ada:.4}"
    );
    assert!(soft < 0.25, "softmax SON error {soft}");
    assert!(tuned < 0.2, "softmax SON (alpha0 0.05) error {tuned}");
    assert!(
        tuned < ada,
        "softmax SON (alpha0 0.05) {tuned} against OvA AdaGrad {ada}"
    );
}

fn to_sparse(x: &[f64]) -> (Vec<u32>, Vec<f64>) {
    x.iter()
        .enumerate()
        .filter(|&(_, &v)| v != 0.0)
        .map(|(j, &v)| (j as u32, v))
        .unzip()
}

#[test]
fn sparse_and_dense_rows_give_the_same_model() {
    let mut data = gaussian_mixture(400, 5);
    for (t, (x, _, _)) in data.iter_mut().enumerate() {
        for (j, v) in x.iter_mut().enumerate() {
            if (t + j) % 3 != 0 {
                *v = 0.0; // a third of the entries non-zero
            }
        }
    }
    for (reduction, diag) in [
        (Reduction::Softmax, false),
        (Reduction::Softmax, true),
        (Reduction::OneVsAll, false),
    ] {
        let config = MulticlassConfig {
            reduction,
            diag,
            ..MulticlassConfig::default()
        };
        let mut dense = config.build(20).unwrap();
        let mut sparse = config.build(20).unwrap();
        for (x, class, w) in &data {
            let (idx, val) = to_sparse(x);
            let row = Row::Sparse {
                indices: &idx,
                values: &val,
            };
            let pd = dense.learn(Row::Dense(x), *class, *w).unwrap();
            let ps = sparse.learn(row, *class, *w).unwrap();
            for (a, b) in pd.iter().zip(&ps) {
                assert!((a - b).abs() < 1e-9, "{reduction}: {pd:?} vs {ps:?}");
            }
        }
        let (x, _, _) = &data[0];
        let (idx, val) = to_sparse(x);
        let row = Row::Sparse {
            indices: &idx,
            values: &val,
        };
        let (sd, ss) = (dense.scores(Row::Dense(x)), sparse.scores(row));
        for (a, b) in sd.iter().zip(&ss) {
            assert!(
                (a - b).abs() < 1e-8 * (1.0 + a.abs()),
                "{reduction}: {sd:?} vs {ss:?}"
            );
        }
    }
}

/// `α`/`α₀` count in units of the mean squared row (`multiclass/row_scaled.rs`): the softmax
/// learner, dense-time and sparse-time, gives the same probabilities when every feature is
/// multiplied by one constant; the learner without the row scale (the same `α₀`, absolute)
/// does not — the control that the test can fail.
#[test]
fn softmax_is_invariant_to_the_unit_of_the_features() {
    let data = gaussian_mixture(300, 11);
    let run = |mut l: AnyMulticlass, unit: f64| -> Vec<Vec<f64>> {
        let mut out = Vec::new();
        for (x, class, w) in &data {
            let x: Vec<f64> = x.iter().map(|v| v * unit).collect();
            let (idx, val) = to_sparse(&x);
            let row = Row::Sparse {
                indices: &idx,
                values: &val,
            };
            out.push(l.learn(row, *class, *w).unwrap());
        }
        out
    };
    let gap = |a: &[Vec<f64>], b: &[Vec<f64>]| -> f64 {
        a.iter()
            .flatten()
            .zip(b.iter().flatten())
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max)
    };
    for representation in [Representation::Dense, Representation::Sparse] {
        let mut config = MulticlassConfig {
            reduction: Reduction::Softmax,
            classes: 3,
            // The sparse-time doubling sketch needs 2m ≤ d̃ = 21.
            size: 10,
            ..MulticlassConfig::default()
        };
        config.member.representation = representation;
        let base = run(config.build(20).unwrap(), 1.0);
        for unit in [1e-3, 0.1, 7.0, 1e3] {
            let other = run(config.build(20).unwrap(), unit);
            let g = gap(&base, &other);
            assert!(g < 1e-9, "{representation:?}, unit {unit}: {g:e}");
        }
    }
    let unscaled = |unit| {
        let curvature = FdCurvature::rfd(21, 10, FdVariant::Doubling, 1.5).unwrap();
        let son = SoftmaxSon::new(3, AnyCurvature::Fd(curvature), SoftmaxParams::default());
        let son = son.unwrap();
        run(AnyMulticlass::Softmax(son), unit)
    };
    let g = gap(&unscaled(1.0), &unscaled(1e3));
    assert!(g > 0.1, "without the row scale: {g:e}");
}

#[test]
fn model_bytes_resume_bit_exact() {
    let data = gaussian_mixture(300, 9);
    for reduction in [Reduction::Softmax, Reduction::OneVsAll] {
        let config = MulticlassConfig {
            reduction,
            ..MulticlassConfig::default()
        };
        let mut a = config.build(20).unwrap();
        for (x, class, w) in &data[..150] {
            a.learn(Row::Dense(x), *class, *w).unwrap();
        }
        let bytes = model::to_bytes("multiclass", &a).unwrap();
        let mut b: AnyMulticlass = model::from_bytes(&bytes, "multiclass", "memory").unwrap();
        assert_eq!(b.examples_seen(), 150);
        for (x, class, w) in &data[150..] {
            let pa = a.learn(Row::Dense(x), *class, *w).unwrap();
            let pb = b.learn(Row::Dense(x), *class, *w).unwrap();
            let bits = |p: &[f64]| p.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&pa), bits(&pb), "{reduction}");
        }
        assert_eq!(
            model::to_bytes("multiclass", &a).unwrap(),
            model::to_bytes("multiclass", &b).unwrap(),
            "{reduction}"
        );
    }
}

/// `../shared/data` next to the workspace, or `$SKETCHLEARN_SHARED_DATA` (for a worktree
/// elsewhere).
fn shared_data() -> Option<PathBuf> {
    let dir = std::env::var_os("SKETCHLEARN_SHARED_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"));
    if dir.join("dna.libsvm").exists() {
        Some(dir)
    } else if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("../shared/data is missing under CI=true: the dna.libsvm test cannot run");
    } else {
        eprintln!("../shared/data is missing: dna.libsvm test skipped");
        None
    }
}

/// A LIBSVM file with its labels mapped to `0..K` in sorted order; `(examples, d, K)`.
fn read_multiclass(path: &Path) -> (Vec<(Example, usize)>, usize, usize) {
    let mut r = LibsvmReader::open(path.to_str().unwrap(), LibsvmOptions::default()).unwrap();
    let mut examples = Vec::new();
    let mut ex = Example::default();
    while r.read_into(&mut ex).unwrap() {
        examples.push(ex.clone());
    }
    let mut labels: Vec<f64> = examples.iter().map(|e| e.label).collect();
    labels.sort_by(f64::total_cmp);
    labels.dedup();
    let data = examples
        .into_iter()
        .map(|e| {
            let class = labels.iter().position(|&l| l == e.label).unwrap();
            (e, class)
        })
        .collect();
    (data, r.max_index_plus_one(), labels.len())
}

#[test]
fn dna_progressive_error() {
    let Some(dir) = shared_data() else { return };
    let (data, d, k) = read_multiclass(&dir.join("dna.libsvm"));
    assert_eq!((k, data.len()), (3, 3186));
    let learners = [
        ("OvA(auto)", ova(k, d, LearnerConfig::default())),
        ("OvA(adagrad)", ova(k, d, adagrad())),
        ("softmax SON", default_softmax(k, d)),
    ];
    for (name, mut l) in learners {
        let mut metrics = MulticlassMetrics::new(k);
        for (ex, class) in &data {
            let p = l
                .learn(ex.row(), *class, ex.weight)
                .unwrap_or_else(|_| l.predict_proba(ex.row()));
            metrics.add(&p, *class, ex.weight);
        }
        let err = metrics.error_rate().unwrap();
        eprintln!("dna.libsvm one pass, progressive error {name}: {err:.4}");
        assert!(err < 0.2, "{name}: {err}");
    }
}
