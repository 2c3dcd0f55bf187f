//! Helpers shared by the integration tests (each test file that needs them says `mod common;`).

#[allow(dead_code)] // only the mixture tests use it
pub mod expert;
pub mod fixtures;
pub mod golden;
pub mod scratch;
pub mod sparse_rows;
#[allow(dead_code)] // only the sparse-time softmax tests use it
pub mod twins;

use proptest::prelude::*;

/// The progressive 0/1 error of `scores` (a score ≤ 0 predicts −1) on `data`'s labels.
#[allow(dead_code)]
pub fn progressive_error(data: &[sketchlearn::Example], scores: &[f64]) -> f64 {
    let wrong = data
        .iter()
        .zip(scores)
        .filter(|&(ex, &p)| (p > 0.0) != (ex.label > 0.0))
        .count();
    wrong as f64 / data.len() as f64
}

/// Knuth's MMIX linear congruential generator: a deterministic stream for tests whose data must
/// not depend on the algorithms of the `rand` crates.
#[allow(dead_code)] // not every test file that says `mod common;` draws from it
pub struct Lcg(pub u64);

#[allow(dead_code)]
impl Lcg {
    /// The next state.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0
    }

    /// Uniform in [0, 1) from the state's top 53 bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in [−1, 1).
    pub fn symmetric(&mut self) -> f64 {
        self.uniform() * 2.0 - 1.0
    }
}

/// Decimal texts of every shape the readers meet: an optional sign, up to 12 integer digits, an
/// optional fraction of up to 24 digits, an optional exponent in `exp` — around the limits of
/// the exact fast path (19 digits, 2^53, 22 fraction digits) and beyond (handed to the standard
/// parser), including texts that are not numbers (`""`, `"-"`, `"."`).
#[allow(dead_code)] // not every test file that says `mod common;` parses decimals
pub fn decimal_text(exp: std::ops::Range<i32>) -> impl Strategy<Value = String> {
    (
        prop_oneof![Just(""), Just("-"), Just("+")],
        "[0-9]{0,12}",
        proptest::option::of("[0-9]{0,24}"),
        proptest::option::of(exp),
    )
        .prop_map(|(sign, int, frac, exp)| {
            let mut v = format!("{sign}{int}");
            if let Some(f) = &frac {
                v.push('.');
                v.push_str(f);
            }
            if let Some(e) = exp {
                v.push_str(&format!("e{e}"));
            }
            v
        })
}

/// A random sparse row: `nnz` (at most `d`) distinct sorted indices below `d`, values uniform in
/// [−1, 1], or all 1 when `one_hot`.
#[allow(dead_code)] // not every test file that says `mod common;` draws rows
pub fn random_sparse_row(
    rng: &mut rand_xoshiro::Xoshiro256PlusPlus,
    d: usize,
    nnz: usize,
    one_hot: bool,
) -> (Vec<u32>, Vec<f64>) {
    use rand::Rng;
    let mut idx: Vec<u32> = Vec::new();
    while idx.len() < nnz.min(d) {
        let j = rng.random_range(0..d as u32);
        if !idx.contains(&j) {
            idx.push(j);
        }
    }
    idx.sort_unstable();
    let val = idx
        .iter()
        .map(|_| {
            if one_hot {
                1.0
            } else {
                rng.random_range(-1.0..1.0)
            }
        })
        .collect();
    (idx, val)
}

/// A random sparse row with about `density·d` non-zeros: each feature `j < d` in turn is kept with
/// probability `density` and given a standard Gaussian value times `scale`; a row that kept none
/// gets one uniform index with the value `fill`. Draws from `rng` in that order, so a test's data
/// are a function of its seed.
#[allow(dead_code)] // used by the sparse learners' equivalence tests only
pub fn gaussian_sparse_row(
    rng: &mut rand_xoshiro::Xoshiro256PlusPlus,
    d: usize,
    density: f64,
    scale: f64,
    fill: f64,
) -> (Vec<u32>, Vec<f64>) {
    use rand::Rng;
    use rand_distr::{Distribution, StandardNormal};
    let (mut idx, mut val) = (Vec::new(), Vec::new());
    for j in 0..d {
        if rng.random::<f64>() < density {
            idx.push(j as u32);
            let z: f64 = StandardNormal.sample(&mut *rng);
            val.push(scale * z);
        }
    }
    if idx.is_empty() {
        idx.push(rng.random_range(0..d as u32));
        val.push(fill);
    }
    (idx, val)
}

/// Rows of a multiclass stream: `(indices, values, class, importance weight)`.
#[allow(dead_code)]
pub type ClassRows = Vec<(Vec<u32>, Vec<f64>, usize, f64)>;

/// `n` sparse rows over `d` features (about `density·d` non-zeros, at least one, `‖x‖ ≈ 1`),
/// classes from `K` random prototypes with 10% noise, importance weights in `{0, 0.5, 1, 2}`.
#[allow(dead_code)] // used by the sparse-time softmax tests only
pub fn class_rows(n: usize, d: usize, k: usize, density: f64, seed: u64) -> ClassRows {
    use rand::{Rng, SeedableRng};
    use rand_distr::{Distribution, StandardNormal};
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
    let protos: Vec<f64> = (0..k * d)
        .map(|_| StandardNormal.sample(&mut rng))
        .collect();
    let scale = 1.0 / (density * d as f64).sqrt();
    (0..n)
        .map(|_| {
            let (idx, val) = gaussian_sparse_row(&mut rng, d, density, scale, 1.0);
            let score = |c: usize| -> f64 {
                idx.iter()
                    .zip(&val)
                    .map(|(&j, v)| protos[c * d + j as usize] * v)
                    .sum()
            };
            let mut y = (0..k)
                .max_by(|&a, &b| score(a).total_cmp(&score(b)))
                .unwrap();
            if rng.random::<f64>() < 0.1 {
                y = rng.random_range(0..k);
            }
            let weight = [1.0, 1.0, 0.5, 2.0, 0.0][rng.random_range(0..5)];
            (idx, val, y, weight)
        })
        .collect()
}

/// Saves `m` (a four-class model) at `path` with its class list cut to three while its learner
/// keeps four heads, and returns the load's error: such a file must be refused. Then saves `m`
/// itself and checks that it loads (the check is not over-eager).
#[allow(dead_code)]
pub fn mismatched_classes_error(
    m: &sketchlearn::linear::multiclass::MulticlassModel,
    path: &std::path::Path,
) -> String {
    use sketchlearn::{labels::Classes, linear::multiclass::MulticlassModel};
    let mut bad = m.clone();
    bad.classes = Classes::parse_list("a,b,c").unwrap();
    bad.config.classes = 3;
    bad.save(path).unwrap();
    let err = MulticlassModel::load(path).unwrap_err().to_string();
    m.save(path).unwrap();
    MulticlassModel::load(path).unwrap();
    err
}

/// The number of cases of a proptest: `PROPTEST_CASES` when it is set (proptest's own
/// `with_cases` overrides that variable), else `default`.
#[allow(dead_code)]
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The largest magnitude in a vector: the scale of its rounding errors.
#[allow(dead_code)]
pub fn scale_of(v: &[f64]) -> f64 {
    v.iter().fold(0.0, |m: f64, s| m.max(s.abs()))
}

/// The largest entry-wise difference of two vectors.
#[allow(dead_code)]
pub fn spread(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .fold(0.0, |m: f64, (x, y)| m.max((x - y).abs()))
}

/// `val` with every value moved by one relative ulp (`x·(1 ± ε)`, signs from `rng`): the input
/// of a dense learner's rounding twin in the sparse-time equivalence tests.
#[allow(dead_code)]
pub fn one_ulp_off(rng: &mut rand_xoshiro::Xoshiro256PlusPlus, val: &[f64]) -> Vec<f64> {
    use rand::Rng;
    val.iter()
        .map(|v| {
            let sign = if rng.random::<bool>() { 1.0 } else { -1.0 };
            v * (1.0 + sign * f64::EPSILON)
        })
        .collect()
}

/// `max |BᵀB − B̃ᵀB̃| / max |BᵀB|` between a dense FD curvature's buffer and a sparse-time
/// softmax learner's sketch.
#[allow(dead_code)]
pub fn fd_sketch_gap(
    dense: &sketchlearn::linear::curvature::FdCurvature,
    sparse: &sketchlearn::linear::sparse::SparseSoftmax,
) -> f64 {
    use sketchlearn::Sketch;
    let sketch = dense.sketch();
    let de = sketch.dim();
    let mut cov = vec![0.0; de * de];
    for row in sketch.rows().chunks_exact(de).take(sketch.filled_rows()) {
        for (a, &ra) in row.iter().enumerate() {
            for (c, &rc) in row.iter().enumerate() {
                cov[a * de + c] += ra * rc;
            }
        }
    }
    spread(&cov, &sparse.covariance()) / scale_of(&cov).max(f64::MIN_POSITIVE)
}

/// The dense Oja curvature started from the sparse learners' initial directions
/// (`initial_directions(d, m, seed)`), where `OjaCurvature::new` draws Gaussian ones.
#[allow(dead_code)]
pub fn dense_oja(
    d: usize,
    m: usize,
    alpha: f64,
    oja_c: f64,
    seed: u64,
) -> sketchlearn::linear::curvature::OjaCurvature {
    use sketchlearn::linear::curvature::OjaCurvature;
    use sketchlearn::linear::sparse::initial_directions;
    let sketch = sketchlearn::sketch::OjaSketch::with_directions(
        d,
        m,
        alpha,
        oja_c,
        initial_directions(d, m, seed),
    )
    .unwrap();
    let mut value = serde_json::to_value(OjaCurvature::new(d, m, alpha, oja_c, seed).unwrap())
        .expect("serialisable");
    value["sketch"] = serde_json::to_value(sketch).unwrap();
    serde_json::from_value(value).expect("same layout")
}

/// A random sparse example: a [`random_sparse_row`] and a label, uniform in 1..=5 or (`binary`)
/// ±1 with equal odds.
#[allow(dead_code)] // used by the FM tests only
pub fn random_example(
    rng: &mut rand_xoshiro::Xoshiro256PlusPlus,
    d: usize,
    nnz: usize,
    one_hot: bool,
    binary: bool,
) -> (Vec<u32>, Vec<f64>, f64) {
    use rand::Rng;
    let (idx, val) = random_sparse_row(rng, d, nnz, one_hot);
    let y = if binary {
        if rng.random_bool(0.5) {
            1.0
        } else {
            -1.0
        }
    } else {
        rng.random_range(1..=5) as f64
    };
    (idx, val, y)
}

/// Solves `A x = b` in place for a symmetric positive definite row-major `n × n` `A` by a plain
/// Cholesky factorisation `A = LLᵀ` — a reference written independently of the library's
/// linear algebra. Panics when a pivot is not positive.
#[allow(dead_code)] // used by the DRP tests only
pub fn spd_solve(a: &[f64], n: usize, b: &mut [f64]) {
    let mut l = vec![0.0; n * n];
    for j in 0..n {
        let mut d = a[j * n + j];
        for k in 0..j {
            d -= l[j * n + k] * l[j * n + k];
        }
        assert!(d > 0.0, "matrix is not positive definite (pivot {j}: {d})");
        let d = d.sqrt();
        l[j * n + j] = d;
        for i in j + 1..n {
            let mut s = a[i * n + j];
            for k in 0..j {
                s -= l[i * n + k] * l[j * n + k];
            }
            l[i * n + j] = s / d;
        }
    }
    for i in 0..n {
        let s: f64 = (0..i).map(|k| l[i * n + k] * b[k]).sum();
        b[i] = (b[i] - s) / l[i * n + i];
    }
    for i in (0..n).rev() {
        let s: f64 = (i + 1..n).map(|k| l[k * n + i] * b[k]).sum();
        b[i] = (b[i] - s) / l[i * n + i];
    }
}

/// The closed-form ridge solution in dual form, `w = Xᵀβ` with `(K + λI) β = y` and `K` the Gram
/// matrix of the rows of `features` (row-major `n × k`: the data itself, or its projection), the
/// combination taken over the rows of `data` (DRP paper, equations (14) and (15)).
#[allow(dead_code)] // used by the DRP tests only
pub fn dual_ridge(
    features: &[f64],
    k: usize,
    lambda: f64,
    data: &sketchlearn::drp::Dataset,
) -> Vec<f64> {
    let n = data.len();
    let mut gram = vec![0.0; n * n];
    sketchlearn::spectral::gram_rows(features, n, k, &mut gram);
    for i in 0..n {
        gram[i * n + i] += lambda;
    }
    let mut beta = data.labels().to_vec();
    spd_solve(&gram, n, &mut beta);
    let mut w = vec![0.0; data.dim()];
    data.add_combination(&beta, &mut w);
    w
}

/// Learns the sparse example `(idx, val, y)` with weight 1; its progressive prediction.
#[allow(dead_code)] // not every test file that says `mod common;` learns rows
pub fn learn_sparse<L: sketchlearn::linear::OnlineLearner + ?Sized>(
    learner: &mut L,
    idx: &[u32],
    val: &[f64],
    y: f64,
) -> f64 {
    let x = sketchlearn::Row::Sparse {
        indices: idx,
        values: val,
    };
    learner.learn(x, y, 1.0).unwrap()
}

/// Asserts `|got − want| ≤ tol·max(1, |want|)` (absolute near zero, relative beyond), naming
/// `what` — the check of the hand-computed reference tests.
#[allow(dead_code)] // not every test file that says `mod common;` compares to a reference
pub fn assert_close(what: &str, got: f64, want: f64, tol: f64) {
    assert!(
        (got - want).abs() <= tol * want.abs().max(1.0),
        "{what}: got {got}, hand-computed {want} (tolerance {tol:e})"
    );
}

/// `min_k ‖A − A_k‖²_F/(m − k)` for the row-major `n × d` matrix `a`: Frequent Directions'
/// error bound for sketch size `m` (Ghashami et al. 2016, Thm 3.1).
#[allow(dead_code)] // used by the merge tests only
pub fn fd_bound(a: &[f64], d: usize, m: usize) -> f64 {
    let s = sketchlearn::spectral::singular_values(a, a.len() / d, d).unwrap();
    (0..m)
        .map(|k| s.iter().skip(k).map(|x| x * x).sum::<f64>() / (m - k) as f64)
        .fold(f64::INFINITY, f64::min)
}
