//! Oja's sketch with the `O(md)` closed-form orthonormalisation (`sketch/oja_rank_one.rs`: the
//! Cholesky factor of the Gram matrix `I + (2γ + γ²‖g‖²)ppᵀ` of `V + γpgᵀ`, SON paper §3,
//! Algorithm 3) equals the paper's update with an explicit Gram–Schmidt after every step,
//! written out here from the public pieces, over random streams: the same rows (not only the
//! same subspace: Oja-SON's `H` weights each row by its own eigenvalue), the same eigenvalues,
//! and rows orthonormal to 1e-10 after every step.

use proptest::prelude::*;
use sketchlearn::sketch::{OjaSketch, Sketch};
use sketchlearn::synthetic::orthonormalize_rows;
use sketchlearn::Row;

/// Oja's update with an explicit Gram–Schmidt every step (the reference).
struct Reference {
    d: usize,
    m: usize,
    c: f64,
    t: u64,
    v: Vec<f64>,
    lambda: Vec<f64>,
}

impl Reference {
    fn new(d: usize, m: usize, c: f64, mut v: Vec<f64>) -> Self {
        orthonormalize_rows(&mut v, m, d);
        Reference {
            d,
            m,
            c,
            t: 0,
            v,
            lambda: vec![0.0; m],
        }
    }

    fn insert(&mut self, g: &[f64]) {
        let (d, m) = (self.d, self.m);
        self.t += 1;
        let gamma = (self.c / self.t as f64).min(1.0);
        let p: Vec<f64> = (0..m)
            .map(|i| Row::Dense(g).dot(&self.v[i * d..(i + 1) * d]))
            .collect();
        for (i, (l, &pi)) in self.lambda.iter_mut().zip(&p).enumerate() {
            *l = (1.0 - gamma) * *l + gamma * pi * pi;
            Row::Dense(g).axpy_into(gamma * pi, &mut self.v[i * d..(i + 1) * d]);
        }
        if p.iter().any(|&x| x != 0.0) {
            orthonormalize_rows(&mut self.v, m, d);
        }
    }
}

/// Largest entry of `|VVᵀ − I|` over the non-zero rows (zero rows: dropped as dependent).
fn orthonormality_error(v: &[f64], m: usize, d: usize) -> f64 {
    let row = |i: usize| &v[i * d..(i + 1) * d];
    let live: Vec<usize> = (0..m)
        .filter(|&i| row(i).iter().any(|&x| x != 0.0))
        .collect();
    let mut worst = 0.0f64;
    for &i in &live {
        for &j in &live {
            let g: f64 = row(i).iter().zip(row(j)).map(|(a, b)| a * b).sum();
            worst = worst.max((g - f64::from(u8::from(i == j))).abs());
        }
    }
    worst
}

fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).fold(0.0, |w, (x, y)| w.max((x - y).abs()))
}

/// A stream of `n` rows in `d` dimensions with a decaying spectrum (column `j` scaled by
/// `scale/(1 + j)`), from a small LCG.
fn stream(n: usize, d: usize, scale: f64, seed: u64) -> Vec<Vec<f64>> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = move || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    };
    (0..n)
        .map(|_| (0..d).map(|j| scale * next() / (1.0 + j as f64)).collect())
        .collect()
}

/// Runs both over the stream; returns (largest row difference, largest eigenvalue relative
/// difference, largest orthonormality error seen after any step).
fn compare(d: usize, m: usize, c: f64, rows: &[Vec<f64>], seed: u64) -> (f64, f64, f64) {
    let init = stream(m, d, 1.0, seed ^ 0x5eed);
    let v0: Vec<f64> = init.concat();
    let mut fast = OjaSketch::with_directions(d, m, 1.0, c, v0.clone()).unwrap();
    let mut reference = Reference::new(d, m, c, v0);
    let mut ortho = 0.0f64;
    for g in rows {
        fast.insert(Row::Dense(g)).unwrap();
        reference.insert(g);
        ortho = ortho.max(orthonormality_error(fast.eigenvectors(), m, d));
    }
    let rows_diff = max_abs_diff(fast.eigenvectors(), &reference.v);
    let lambda_diff = fast
        .eigenvalues()
        .iter()
        .zip(&reference.lambda)
        .fold(0.0f64, |w, (a, b)| {
            w.max((a - b).abs() / b.abs().max(1e-300))
        });
    (rows_diff, lambda_diff, ortho)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Random sizes, scales and learning-rate constants: the closed form follows the explicit
    /// Gram–Schmidt to 1e-9 and stays orthonormal to 1e-10.
    #[test]
    fn closed_form_equals_gram_schmidt(
        d in 4usize..40,
        m in 1usize..8,
        n in 50usize..400,
        scale in prop_oneof![Just(0.1), Just(1.0), Just(5.0)],
        c in prop_oneof![Just(1.0), Just(2.0)],
        seed in 0u64..1_000,
    ) {
        let m = m.min(d);
        let rows = stream(n, d, scale, seed);
        let (rows_diff, lambda_diff, ortho) = compare(d, m, c, &rows, seed);
        prop_assert!(rows_diff <= 1e-9, "rows differ by {rows_diff:e}");
        prop_assert!(lambda_diff <= 1e-9, "eigenvalues differ by {lambda_diff:e}");
        prop_assert!(ortho <= 1e-10, "orthonormality error {ortho:e}");
    }
}

/// A long stream of the benchmark's size class (d = 300, m = 10, 5,000 rows): still the same
/// rows as the explicit Gram–Schmidt, and orthonormal to 1e-10 after every step (so the
/// rounding of the 255 closed-form steps between two explicit ones does not build up).
#[test]
fn long_stream_stays_orthonormal_and_equal() {
    let rows = stream(5_000, 300, 1.0, 11);
    let (rows_diff, lambda_diff, ortho) = compare(300, 10, 2.0, &rows, 11);
    println!("rows {rows_diff:e} eigenvalues {lambda_diff:e} orthonormality {ortho:e}");
    assert!(rows_diff <= 1e-9, "rows differ by {rows_diff:e}");
    assert!(lambda_diff <= 1e-9, "eigenvalues differ by {lambda_diff:e}");
    assert!(ortho <= 1e-10, "orthonormality error {ortho:e}");
    // The closed form did run: its rounding differs from Gram–Schmidt's.
    assert!(
        rows_diff > 0.0,
        "the rows are bit-identical: the closed form never ran"
    );
}

/// More directions than dimensions (m > d): Gram–Schmidt leaves the extra rows zero, and the
/// closed form keeps them zero.
#[test]
fn dependent_rows_stay_zero() {
    let rows = stream(300, 4, 1.0, 5);
    let (rows_diff, _, ortho) = compare(4, 6, 1.0, &rows, 5);
    assert!(rows_diff <= 1e-9, "rows differ by {rows_diff:e}");
    assert!(ortho <= 1e-10, "orthonormality error {ortho:e}");
}

/// `insert_projecting` gives `V'x` from its pass over `V`: equal to the product with the
/// updated rows, on most steps (the explicit Gram–Schmidt steps leave it to the caller).
#[test]
fn projection_in_the_update_pass_equals_the_product() {
    let (d, m) = (50, 6);
    let rows = stream(1_000, d, 1.0, 3);
    let xs = stream(1_000, d, 1.0, 4);
    let mut oja = OjaSketch::new(d, m, 1.0, 2.0, 9).unwrap();
    let mut vx = vec![0.0; m];
    let mut projected = 0;
    for (g, x) in rows.iter().zip(&xs) {
        if !oja
            .insert_projecting(Row::Dense(g), Some(x), &mut vx)
            .unwrap()
        {
            continue;
        }
        projected += 1;
        let v = oja.eigenvectors();
        for i in 0..m {
            let direct = Row::Dense(x).dot(&v[i * d..(i + 1) * d]);
            assert!(
                (vx[i] - direct).abs() <= 1e-12,
                "row {i}: {} vs {direct}",
                vx[i]
            );
        }
    }
    assert!(projected > 900, "projected on {projected} of 1000 steps");
}
