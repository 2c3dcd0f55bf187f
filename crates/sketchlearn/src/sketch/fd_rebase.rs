//! Merging two FD sketches grown from a common base: the rows `B` of a sketch of
//! `M = B_aᵀB_a + B_bᵀB_b − B_GᵀB_G`, for the round-based merge of [`crate::merge`].
//!
//! # Derivation
//!
//! Stack the rows `R = [B_a; B_b; B_G]` (`r × d`) with signs `D = diag(1, …, 1, −1, …, −1)`, so
//! `M = RᵀDR`. With the eigendecomposition of the small Gram matrix `RRᵀ = UΣUᵀ` (the `q`
//! eigenvalues above rounding kept), `Q = Σ^{−½}UᵀR` has orthonormal rows spanning the rows of
//! `R`, and `M = QᵀTQ` with `T = Σ^{½}UᵀDUΣ^{½}` (`q × q`; use `RRᵀU = UΣ`). With `T = VΛVᵀ`
//! the new rows are `√(λ_j − δ)·v_jᵀQ = √(λ_j − δ)·(UΣ^{−½}v_j)ᵀR`: all positive directions
//! when fewer than the buffer's capacity (exact, `δ = 0`), else FD's shrink by `δ = λ_m`
//! keeping at most `m − 1` rows — an `O(r²d + r³)` computation, like one FD shrink.
//!
//! # What it preserves
//!
//! `B_xᵀB_x` is an FD sketch of `[rows of G; rows of shard x]`, so
//! `B_xᵀB_x − B_GᵀB_G ∈ [A_xᵀA_x − Δ_x I, A_xᵀA_x]` with `Δ_x` the shrinkage the shard added
//! in the round. Hence `‖AᵀA − M‖₂ ≤ Δ_G + Δ_a + Δ_b` for the whole stream `A`, and dropping
//! `δ` (and clamping the negative `λ`, which are at least `−(Δ_G + Δ_a + Δ_b)`) keeps the total
//! within the sketch's accounted shrinkage `Δ_G + Δ_a + Δ_b + δ` — FD's mergeability (Ghashami
//! et al. 2016, §3.1) with the base counted once. The one-sided `BᵀB ⪯ AᵀA` of a single
//! stream becomes two-sided.

use super::frequent_directions::shrink_rule;
use super::SketchError;
use crate::linalg::{gram_rows, matmul_into, SymEigen};

/// The rows of one sketch and the sign it enters with.
pub(crate) struct SignedRows<'a> {
    pub rows: &'a [f64],
    pub count: usize,
    pub sign: f64,
}

/// The merged rows: row-major `filled × dim`, and the shrink `δ` applied (0 when exact).
pub(crate) struct Combined {
    pub rows: Vec<f64>,
    pub filled: usize,
    pub delta: f64,
}

/// The FD sketch (size `m`, buffer `capacity`) of `Σ sign_i B_iᵀB_i` (see module docs).
pub(crate) fn combine_signed(
    parts: &[SignedRows<'_>],
    dim: usize,
    m: usize,
    capacity: usize,
) -> Result<Combined, SketchError> {
    let r: usize = parts.iter().map(|p| p.count).sum();
    let mut stacked = Vec::with_capacity(r * dim);
    let mut signs = Vec::with_capacity(r);
    for p in parts {
        stacked.extend_from_slice(&p.rows[..p.count * dim]);
        signs.extend(std::iter::repeat_n(p.sign, p.count));
    }
    let mut gram = vec![0.0; r * r];
    if r > 0 {
        gram_rows(&stacked, r, dim, &mut gram);
    }
    let c = signed_coefficients(&gram, &signs, m, capacity)?;
    let mut rows = vec![0.0; c.keep * dim];
    if c.keep > 0 {
        matmul_into(&c.coef, &stacked, c.keep, r, dim, &mut rows);
    }
    if rows.iter().any(|x| !x.is_finite()) {
        return Err(SketchError::NonFinite("merged FD rows".into()));
    }
    Ok(Combined {
        rows,
        filled: c.keep,
        delta: c.delta,
    })
}

/// The merged rows as combinations of the stacked rows `R`: row `j` is `coef[j]·R`.
pub(crate) struct Coefficients {
    /// Row-major `keep × r`.
    pub coef: Vec<f64>,
    pub keep: usize,
    /// The shrink `δ` applied (0 when exact).
    pub delta: f64,
}

/// The coefficients `C` of the merged rows `C·R` from the Gram matrix `RRᵀ` (`r × r`,
/// row-major) of the stacked rows and their signs alone (see module docs): what
/// [`combine_signed`] computes for explicit rows, and what a caller that cannot hold `R` (the
/// sparse-time merge, streaming `R` over columns) applies column by column. `O(r³)`.
pub(crate) fn signed_coefficients(
    gram: &[f64],
    signs: &[f64],
    m: usize,
    capacity: usize,
) -> Result<Coefficients, SketchError> {
    let r = signs.len();
    if r == 0 {
        return Ok(Coefficients {
            coef: Vec::new(),
            keep: 0,
            delta: 0.0,
        });
    }
    let mut eig = SymEigen::new(r);
    eig.compute(gram)?;
    let (sigma, u) = (eig.values(), eig.vectors());
    let tol = sigma[0].max(0.0) * r as f64 * 8.0 * f64::EPSILON;
    let q = sigma.iter().take_while(|&&s| s > tol).count();
    // T = Σ^{½}UᵀDUΣ^{½} restricted to the q kept directions.
    let mut t = vec![0.0; q * q];
    for i in 0..q {
        for j in 0..=i {
            let s: f64 = (0..r).map(|k| u[k * r + i] * signs[k] * u[k * r + j]).sum();
            let v = s * (sigma[i] * sigma[j]).sqrt();
            t[i * q + j] = v;
            t[j * q + i] = v;
        }
    }
    let mut teig = SymEigen::new(q);
    teig.compute(&t)?;
    let (lambda, v) = (teig.values(), teig.vectors());
    let positive = lambda.iter().take_while(|&&l| l > tol).count();
    let (delta, keep) = if positive < capacity {
        (0.0, positive)
    } else {
        shrink_rule(lambda, m)
    };
    // Coefficients C (keep × r): row j = √(λ_j − δ)·(UΣ^{−½}v_j)ᵀ; the new rows are C·R.
    let mut coef = vec![0.0; keep * r];
    for j in 0..keep {
        let scale = (lambda[j] - delta).max(0.0).sqrt();
        for k in 0..r {
            let c: f64 = (0..q)
                .map(|i| u[k * r + i] * v[i * q + j] / sigma[i].sqrt())
                .sum();
            coef[j * r + k] = scale * c;
        }
    }
    if coef.iter().any(|x| !x.is_finite()) {
        return Err(SketchError::NonFinite("merged FD rows".into()));
    }
    Ok(Coefficients { coef, keep, delta })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gram_of(rows: &[f64], n: usize, d: usize) -> Vec<f64> {
        let mut g = vec![0.0; d * d];
        for r in 0..n {
            for i in 0..d {
                for j in 0..d {
                    g[i * d + j] += rows[r * d + i] * rows[r * d + j];
                }
            }
        }
        g
    }

    #[test]
    fn exact_when_the_result_fits_the_buffer() {
        // a = base + e1·2, b = base + e2·3, base = (1, 1, 0): M = base + 4e1e1ᵀ + 9e2e2ᵀ.
        let d = 3;
        let base = [1.0, 1.0, 0.0];
        let a = [1.0, 1.0, 0.0, 2.0, 0.0, 0.0];
        let b = [1.0, 1.0, 0.0, 0.0, 3.0, 0.0];
        let parts = [
            SignedRows {
                rows: &a,
                count: 2,
                sign: 1.0,
            },
            SignedRows {
                rows: &b,
                count: 2,
                sign: 1.0,
            },
            SignedRows {
                rows: &base,
                count: 1,
                sign: -1.0,
            },
        ];
        let c = combine_signed(&parts, d, 3, 6).unwrap();
        assert_eq!(c.delta, 0.0);
        let got = gram_of(&c.rows, c.filled, d);
        let mut want = gram_of(&base, 1, d);
        want[0] += 4.0;
        want[4] += 9.0;
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() < 1e-10, "{got:?} vs {want:?}");
        }
    }
}
