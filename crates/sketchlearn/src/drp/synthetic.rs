//! Synthetic low-rank classification data for the recovery experiments and tests: the setting
//! of the DRP paper's Theorems 1–5 (`X` of rank `r ≪ min(d, n)`).

use super::data::Dataset;
use super::DrpError;
use crate::Row;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, StandardNormal};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Parameters of [`low_rank`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LowRankSpec {
    /// Number of examples.
    pub n: usize,
    /// Dimension `d`.
    pub d: usize,
    /// Rank `r` of `X` (`1 ≤ r ≤ min(n, d)`).
    pub rank: usize,
    /// Probability of flipping each label (`[0, 0.5]`), so the classes overlap.
    pub flip: f64,
    /// Seed of every draw.
    pub seed: u64,
}

/// Rank-`r` data: `x_i = (1/√r) Σ_k a_ik u_k` with `u_k ∈ ℝ^d` i.i.d. `N(0, I/d)` (nearly
/// orthonormal for `d ≫ r`, so `‖x_i‖ ≈ 1`), `a_ik ~ N(0, 1)`; `y_i = sign(Σ_k a_ik c_k)` with a
/// fixed `c ~ N(0, I_r)`, each label flipped with probability `flip`. Dense rows (every
/// coordinate non-zero). Split the result with [`Dataset::split_at`] for a test set from the
/// same distribution.
///
/// ```
/// use sketchlearn::drp::{low_rank, LowRankSpec};
/// let spec = LowRankSpec { n: 30, d: 100, rank: 3, flip: 0.05, seed: 1 };
/// let data = low_rank(&spec).unwrap();
/// assert_eq!((data.len(), data.dim(), data.nnz()), (30, 100, 3000));
/// assert_eq!(data, low_rank(&spec).unwrap()); // same seed, same data
/// assert!(low_rank(&LowRankSpec { rank: 0, ..spec }).is_err());
/// ```
pub fn low_rank(spec: &LowRankSpec) -> Result<Dataset, DrpError> {
    let LowRankSpec {
        n,
        d,
        rank: r,
        flip,
        seed,
    } = *spec;
    if n == 0 || d == 0 {
        return Err(DrpError::InvalidParameter(format!(
            "n and d must be positive, got n = {n}, d = {d}"
        )));
    }
    if r == 0 || r > n.min(d) {
        return Err(DrpError::InvalidParameter(format!(
            "rank must be in 1..=min(n, d) = {}, got {r}",
            n.min(d)
        )));
    }
    if !(0.0..=0.5).contains(&flip) {
        return Err(DrpError::InvalidParameter(format!(
            "flip probability must be in [0, 0.5], got {flip}"
        )));
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut normal = || -> f64 { StandardNormal.sample(&mut rng) };
    let scale_u = 1.0 / (d as f64).sqrt();
    let u: Vec<f64> = (0..r * d).map(|_| normal() * scale_u).collect();
    let c: Vec<f64> = (0..r).map(|_| normal()).collect();
    let mut coeffs = vec![0.0; n * r];
    coeffs.iter_mut().for_each(|a| *a = normal());
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x5EED);
    let mut data = Dataset::new(d);
    let mut x = vec![0.0; d];
    let scale_a = 1.0 / (r as f64).sqrt();
    for i in 0..n {
        x.iter_mut().for_each(|v| *v = 0.0);
        let a = &coeffs[i * r..(i + 1) * r];
        for k in 0..r {
            crate::linalg::axpy(a[k] * scale_a, &u[k * d..(k + 1) * d], &mut x);
        }
        let score: f64 = a.iter().zip(&c).map(|(p, q)| p * q).sum();
        let mut label = if score > 0.0 { 1.0 } else { -1.0 };
        if rng.random::<f64>() < flip {
            label = -label;
        }
        data.push(Row::Dense(&x), label)?;
    }
    Ok(data)
}
