//! Synthetic data with a controlled spectrum, for experiments, tests and examples.
//!
//! [`ill_conditioned`] is the data of the SON paper's §5.1 (DESIGN.md §4 item 11): Gaussian rows
//! whose covariance has condition number `κ`, on which first-order learners degrade as `κ`
//! grows. [`orthonormalize_rows`] turns a matrix of Gaussian draws into a random orthonormal
//! basis (how `V` is drawn there), for generators that bring their own random numbers.
//!
//! ```
//! use sketchlearn::synthetic::{ill_conditioned, orthonormalize_rows};
//!
//! let data = ill_conditioned(200, 20, 100.0, 7);
//! assert_eq!(data.len(), 200);
//! assert!(data.iter().all(|ex| ex.values.len() == 20 && ex.label.abs() == 1.0));
//!
//! let mut v = vec![1.0, 1.0, 0.0, 1.0, 0.0, 0.0]; // 2 × 3
//! assert_eq!(orthonormalize_rows(&mut v, 2, 3), 2);
//! let dot: f64 = v[..3].iter().zip(&v[3..]).map(|(a, b)| a * b).sum();
//! assert!(dot.abs() < 1e-15);
//! ```

use crate::Example;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Orthonormalises the rows of the row-major `rows × cols` matrix `v` in place (classical
/// Gram–Schmidt with one re-orthogonalisation pass). A row that becomes numerically dependent on
/// the previous ones is replaced by zeros; returns the number of non-zero (orthonormal) rows.
/// Applied to i.i.d. Gaussian draws with `rows ≤ cols`, the result is a uniformly random set of
/// orthonormal rows.
pub fn orthonormalize_rows(v: &mut [f64], rows: usize, cols: usize) -> usize {
    crate::linalg::orthonormalize_rows(v, rows, cols)
}

/// Number of eigenvalues raised above 1 in [`ill_conditioned`]'s spectrum.
pub const RAISED: usize = 10;

/// The spectrum of [`ill_conditioned`]: `d − 10` ones, then the last 10 (or all, when
/// `d ≤ 10`) rising linearly to exactly `kappa`.
pub fn spectrum(d: usize, kappa: f64) -> Vec<f64> {
    let raised = RAISED.min(d);
    (0..d)
        .map(|i| match (i + raised).checked_sub(d) {
            Some(k) => 1.0 + (kappa - 1.0) * (k + 1) as f64 / raised as f64,
            None => 1.0,
        })
        .collect()
}

/// `n` dense examples of dimension `d` from the SON paper's §5.1: `X = Z·diag(λ)^½·Vᵀ` with `Z`
/// standard Gaussian `n × d`, `V` a random orthonormal `d × d` basis and `λ` = [`spectrum`]`(d,
/// kappa)` (so the covariance has condition number `kappa`), labels `y = sign(θᵀx)` (±1) for a
/// Gaussian `θ`. Seeded: the same arguments give the same bits.
pub fn ill_conditioned(n: usize, d: usize, kappa: f64, seed: u64) -> Vec<Example> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut gauss = move || -> f64 { StandardNormal.sample(&mut rng) };
    let mut v: Vec<f64> = (0..d * d).map(|_| gauss()).collect();
    orthonormalize_rows(&mut v, d, d);
    let scale: Vec<f64> = spectrum(d, kappa).iter().map(|l| l.sqrt()).collect();
    let theta: Vec<f64> = (0..d).map(|_| gauss()).collect();
    let mut z = vec![0.0; d];
    (0..n)
        .map(|_| {
            z.iter_mut()
                .zip(&scale)
                .for_each(|(zi, s)| *zi = s * gauss());
            // x = Vᵀ(λ^½ ∘ z): row i of V is the i-th direction.
            let mut x = vec![0.0; d];
            for (i, &zi) in z.iter().enumerate() {
                for (xj, vij) in x.iter_mut().zip(&v[i * d..(i + 1) * d]) {
                    *xj += zi * vij;
                }
            }
            sign_labelled(x, &theta)
        })
        .collect()
}

/// The dense example `x` (indices `0..x.len()`, weight 1) with the label `sign(θᵀx)` (+1 for a
/// positive product, else −1): the labels of [`ill_conditioned`] and the experiments' own
/// synthetic streams.
///
/// ```
/// let ex = sketchlearn::synthetic::sign_labelled(vec![1.0, -3.0], &[1.0, 1.0]);
/// assert_eq!((ex.label, ex.indices.clone(), ex.weight), (-1.0, vec![0, 1], 1.0));
/// ```
pub fn sign_labelled(x: Vec<f64>, theta: &[f64]) -> Example {
    let s: f64 = x.iter().zip(theta).map(|(a, b)| a * b).sum();
    Example {
        label: if s > 0.0 { 1.0 } else { -1.0 },
        weight: 1.0,
        indices: (0..x.len() as u32).collect(),
        values: x,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spectrum_ends_at_kappa() {
        let l = spectrum(100, 50.0);
        assert_eq!(l[..90], [1.0; 90]);
        assert_eq!(l[99], 50.0);
        assert!(l.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(spectrum(4, 9.0)[3], 9.0);
    }

    #[test]
    fn covariance_has_the_condition_number() {
        let (n, d, kappa) = (20_000, 12, 30.0);
        let data = ill_conditioned(n, d, kappa, 3);
        let mut cov = vec![0.0; d * d];
        for ex in &data {
            for i in 0..d {
                for j in 0..d {
                    cov[i * d + j] += ex.values[i] * ex.values[j] / n as f64;
                }
            }
        }
        let eig = crate::linalg::sym_eigenvalues(&cov, d).unwrap();
        let cond = eig[0] / eig[d - 1];
        assert!((cond / kappa - 1.0).abs() < 0.15, "condition number {cond}");
        assert_eq!(
            ill_conditioned(5, d, kappa, 3)[4].values,
            ill_conditioned(5, d, kappa, 3)[4].values
        );
    }
}
