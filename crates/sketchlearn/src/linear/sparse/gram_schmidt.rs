//! Gram–Schmidt in the inner product of a Gram matrix (SON paper Appendix G, Algorithm 13
//! "Decompose(P, K)").
//!
//! Given `P ∈ ℝ^{r×n}` and the Gram matrix `K = RRᵀ` of some `R ∈ ℝ^{n×d}` that is never formed,
//! orthonormalise the rows of `PR` working on `P` only: with `⟨a, b⟩ = aᵀKb`, run (modified)
//! Gram–Schmidt on the rows of `P`. The result `Q` has `QR` with orthonormal rows and a lower
//! triangular `L` with `LQR = PR` (Lemma 4). Cost `O(r·n² + r²·n)` instead of `O(r²d)`.
//!
//! As `linalg::orthonormalize_rows` (the dense learners' orthonormalisation), each row is
//! orthogonalised twice ("twice is enough") and a row whose remaining norm is at most `tol`
//! times its initial norm is numerically dependent: it becomes zero (and `L`'s diagonal entry 0).
//! Norms computed through a Gram matrix carry an absolute error of about `ε·S²` in the *squared*
//! norm, `S² = Σ_ab |p_a||K_ab||p_b|` the size of the terms, so an exactly dependent row (e.g. a
//! repeated example, or a row already in the span) shows a norm of about `√ε·S ≈ 1.5e-8·S`
//! instead of 0: a row is also dependent when its norm is at most `gram_tol·S` (callers pass
//! [`GRAM_DEPENDENT`]; 0 gives the plain rule of the explicit Gram–Schmidt).

use crate::linalg::dot;

/// Relative norm below which a row counts as dependent (same as `linalg::orthonormalize_rows`).
pub(crate) const DEPENDENT: f64 = 1e-10;

/// The dependency threshold relative to the size `S` of the terms of a Gram-matrix norm (see
/// the module docs).
pub(crate) const GRAM_DEPENDENT: f64 = 1e-6;

/// The scratch of [`decompose_with`] (kept by the caller between calls; every entry is written
/// before it is read).
#[derive(Clone, Debug, Default)]
pub(crate) struct GramSchmidtWork {
    /// `K q_j` of the finished rows.
    kq: Vec<f64>,
    kr: Vec<f64>,
    independent: Vec<bool>,
}

/// Algorithm 13 with a fresh workspace (see [`decompose_with`]).
#[cfg(test)]
pub(crate) fn decompose(
    p: &mut [f64],
    rows: usize,
    n: usize,
    k: &[f64],
    l: Option<&mut [f64]>,
    gram_tol: f64,
) -> Vec<bool> {
    let mut work = GramSchmidtWork::default();
    decompose_with(p, rows, n, k, l, gram_tol, &mut work).to_vec()
}

/// Algorithm 13. `p` (row-major `rows × n`) is replaced by `Q`; when `l` is given
/// (row-major `rows × rows`) it receives `L` (lower triangular, `L_ii = 0` for dependent rows).
/// Returns which rows are non-zero (independent); `work` is scratch. Inlined into its caller
/// (the FD shrink, compiled a second time for AVX2).
#[inline(always)]
pub(crate) fn decompose_with<'w>(
    p: &mut [f64],
    rows: usize,
    n: usize,
    k: &[f64],
    mut l: Option<&mut [f64]>,
    gram_tol: f64,
    work: &'w mut GramSchmidtWork,
) -> &'w [bool] {
    let GramSchmidtWork {
        kq,
        kr,
        independent,
    } = work;
    kq.clear();
    kq.resize(rows * n, 0.0);
    kr.clear();
    kr.resize(n, 0.0);
    independent.clear();
    independent.resize(rows, false);
    if let Some(l) = l.as_deref_mut() {
        l[..rows * rows].iter_mut().for_each(|x| *x = 0.0);
    }
    for i in 0..rows {
        let (done, rest) = p.split_at_mut(i * n);
        let row = &mut rest[..n];
        sym_mul(k, row, n, kr);
        let norm0 = dot(row, kr).max(0.0).sqrt();
        let scale = if gram_tol > 0.0 {
            term_size(k, row, n, kr)
        } else {
            0.0
        };
        for _pass in 0..2 {
            for j in 0..i {
                if !independent[j] {
                    continue;
                }
                let c = dot(&kq[j * n..(j + 1) * n], row);
                if c != 0.0 {
                    let q = &done[j * n..(j + 1) * n];
                    for (x, y) in row.iter_mut().zip(q) {
                        *x -= c * y;
                    }
                    if let Some(l) = l.as_deref_mut() {
                        l[i * rows + j] += c;
                    }
                }
            }
        }
        sym_mul(k, row, n, kr);
        let norm = dot(row, kr).max(0.0).sqrt();
        if norm > DEPENDENT * norm0 && norm > gram_tol * scale && norm > 0.0 && norm.is_finite() {
            row.iter_mut().for_each(|x| *x /= norm);
            kq[i * n..(i + 1) * n]
                .iter_mut()
                .zip(kr.iter())
                .for_each(|(o, v)| *o = v / norm);
            independent[i] = true;
            if let Some(l) = l.as_deref_mut() {
                l[i * rows + i] = norm;
            }
        } else {
            row.iter_mut().for_each(|x| *x = 0.0);
        }
    }
    independent
}

/// `S = √(Σ_a |v_a| Σ_b |K_ab v_b|)`, the size of the terms of `vᵀKv` (`inner`: scratch of
/// `n`). The inner sums run from `−0.0` in the order of `b` (as `Iterator::sum`), all `a` at
/// once along row `b` of `K` (`K_ba = K_ab`: `K` is exactly symmetric), so the same bits as
/// summing row `a` alone, without a chain of `n` dependent additions per `a`.
#[inline(always)]
fn term_size(k: &[f64], v: &[f64], n: usize, inner: &mut [f64]) -> f64 {
    let inner = &mut inner[..n];
    inner.fill(-0.0);
    for (&vb, kb) in v.iter().zip(k.chunks_exact(n)) {
        for (s, &kba) in inner.iter_mut().zip(kb) {
            *s += (kba * vb).abs();
        }
    }
    let mut s2 = 0.0;
    for (&va, &sa) in v.iter().zip(inner.iter()) {
        if va != 0.0 {
            s2 += va.abs() * sa;
        }
    }
    s2.sqrt()
}

/// `out = K v` for the symmetric row-major `n × n` `K`.
#[inline(always)]
fn sym_mul(k: &[f64], v: &[f64], n: usize, out: &mut [f64]) {
    for i in 0..n {
        out[i] = dot(&k[i * n..(i + 1) * n], v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decompose(P, RRᵀ) equals Gram–Schmidt of PR done explicitly.
    #[test]
    fn matches_explicit_gram_schmidt() {
        let (r, n, d) = (3, 4, 6);
        let rr: Vec<f64> = (0..n * d)
            .map(|i| ((i * 7 + 3) % 11) as f64 - 5.0 + 0.1 * i as f64)
            .collect();
        let p0: Vec<f64> = (0..r * n).map(|i| ((i * 5 + 1) % 7) as f64 - 3.0).collect();
        let mut k = vec![0.0; n * n];
        for a in 0..n {
            for b in 0..n {
                k[a * n + b] = dot(&rr[a * d..(a + 1) * d], &rr[b * d..(b + 1) * d]);
            }
        }
        let mut q = p0.clone();
        let mut l = vec![0.0; r * r];
        let ind = decompose(&mut q, r, n, &k, Some(&mut l), 0.0);
        assert!(ind.iter().all(|&x| x));
        // Explicit: rows of PR.
        let mut pr = vec![0.0; r * d];
        for i in 0..r {
            for c in 0..d {
                pr[i * d + c] = (0..n).map(|a| p0[i * n + a] * rr[a * d + c]).sum();
            }
        }
        let mut explicit = pr.clone();
        crate::linalg::orthonormalize_rows(&mut explicit, r, d);
        let mut qr = vec![0.0; r * d];
        for i in 0..r {
            for c in 0..d {
                qr[i * d + c] = (0..n).map(|a| q[i * n + a] * rr[a * d + c]).sum();
            }
        }
        for (a, b) in qr.iter().zip(&explicit) {
            assert!((a - b).abs() < 1e-10, "{a} vs {b}");
        }
        // L Q R = P R.
        for i in 0..r {
            for c in 0..d {
                let lqr: f64 = (0..r).map(|j| l[i * r + j] * qr[j * d + c]).sum();
                assert!((lqr - pr[i * d + c]).abs() < 1e-9);
            }
        }
    }

    #[test]
    fn dependent_rows_become_zero() {
        // R = I₂, P has a repeated row.
        let k = [1.0, 0.0, 0.0, 1.0];
        let mut p = vec![1.0, 1.0, 2.0, 2.0, 0.0, 1.0];
        let ind = decompose(&mut p, 3, 2, &k, None, GRAM_DEPENDENT);
        assert_eq!(ind, vec![true, false, true]);
        assert_eq!(&p[2..4], &[0.0, 0.0]);
    }
}
