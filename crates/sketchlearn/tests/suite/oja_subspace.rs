//! Oja's sketch converges to the top-k eigen-subspace (issue 26, item 7), checked against a
//! subspace known by construction, not computed by the library: rows `x = Q·(σ ∘ z)` with `Q` an
//! orthogonal Householder matrix, `σ = (4, 2.5, 0.5, 0.5, 0.5, 0.5)` and `z` of unit variance, so
//! the covariance `Q diag(σ²) Qᵀ` has its top-2 eigenvectors `Q e₁`, `Q e₂` (Oja 1982; SON §3.3
//! uses Oja's rule with step `c/t`, Luo et al. 2016).

use crate::common;

use sketchlearn::sketch::{OjaSketch, Sketch};
use sketchlearn::Row;

const D: usize = 6;

/// Column `k` of the Householder matrix `I − 2uuᵀ/‖u‖²` for a fixed `u`.
fn q_column(k: usize) -> [f64; D] {
    let u = [1.0, -2.0, 0.5, 3.0, -1.0, 2.0];
    let uu: f64 = u.iter().map(|a| a * a).sum();
    let mut col = [0.0; D];
    for (i, c) in col.iter_mut().enumerate() {
        *c = f64::from(u8::from(i == k)) - 2.0 * u[i] * u[k] / uu;
    }
    col
}

#[test]
fn oja_finds_the_top_two_eigenvectors_of_a_known_covariance() {
    let sigma = [4.0, 2.5, 0.5, 0.5, 0.5, 0.5];
    let q: Vec<[f64; D]> = (0..D).map(q_column).collect();
    let mut oja = OjaSketch::new(D, 2, 1.0, 1.0, 7).unwrap();
    let mut lcg = common::Lcg(99);
    let mut uniform = || lcg.uniform();
    for _ in 0..20_000 {
        // z uniform on [−√3, √3]: unit variance.
        let z: Vec<f64> = (0..D)
            .map(|_| (uniform() * 2.0 - 1.0) * 3f64.sqrt())
            .collect();
        let mut x = [0.0; D];
        for k in 0..D {
            for (i, xi) in x.iter_mut().enumerate() {
                *xi += q[k][i] * sigma[k] * z[k];
            }
        }
        oja.insert(Row::Dense(&x)).unwrap();
    }
    let v = oja.eigenvectors();
    for r in 0..2 {
        let row = &v[r * D..(r + 1) * D];
        // The squared norm of the row's projection onto span(Q e₁, Q e₂).
        let inside: f64 = (0..2)
            .map(|k| {
                row.iter()
                    .zip(&q[k])
                    .map(|(a, b)| a * b)
                    .sum::<f64>()
                    .powi(2)
            })
            .sum();
        assert!(
            inside > 0.95,
            "row {r}: only {inside:.3} of it lies in the top-2 subspace"
        );
    }
}
