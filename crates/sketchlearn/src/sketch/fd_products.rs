//! The two small products of the dense FD shrink (RFD paper Alg. 2/4; see
//! [`FrequentDirections`](super::FrequentDirections)): the Gram matrix `BBᵀ` of the `ℓ` buffer
//! rows and the rotation `UᵀB` onto the kept eigenvectors, as plain loops on the row-major
//! buffer; and FD-SON's per-example product `Bᵀz` ([`add_rows_transposed`]).
//!
//! At the default `ℓ = 2m = 20`, `d ≈ 100` both are a few tens of thousands of flops; faer's
//! blocked GEMM (`linalg::gram_rows`/`rotate_rows`) packs its operands and dispatches to
//! 512-bit micro-kernels for them, which cost more than the arithmetic. Here each Gram entry is
//! one [`dot`] of two contiguous rows (four accumulators, vectorised), and each rotated row a
//! sum of `ℓ` scaled rows ([`axpy`]). The Gram matrix is exactly symmetric by construction (one
//! `dot` per pair), as `gram_rows` makes it. Rounding differs from faer's summation order, not
//! its size: every entry is a sum of `d` (Gram) or `ℓ` (rotation) products, as there.
//!
//! Both are compiled a second time for AVX2 and run that way when the CPU has it: the loops
//! are the same (no FMA), each of `dot`'s four accumulators becomes one lane of a 4-wide
//! register, so the results are the same bits (IEEE operations, no reassociation) in half the
//! instructions.

use crate::data::dot4::dot4_rows;
use crate::linalg::axpy;
#[cfg(doc)]
use crate::linalg::dot;
#[cfg(target_arch = "x86_64")]
use crate::linear::sparse::has_avx2;

/// `pub(crate) fn $name(args) body` and its plain build `$generic`: `$name` runs the body
/// compiled a second time for AVX2 when the CPU has it (the same loops, so the same bits, see
/// the module documentation), and `$generic` otherwise.
macro_rules! with_avx2 {
    ($(#[$doc:meta])* $name:ident / $generic:ident($($arg:ident: $ty:ty),* $(,)?) $body:block) => {
        $(#[$doc])*
        pub(crate) fn $name($($arg: $ty),*) {
            #[cfg(target_arch = "x86_64")]
            if has_avx2() {
                #[target_feature(enable = "avx2")]
                unsafe fn avx2($($arg: $ty),*) {
                    $generic($($arg),*)
                }
                // SAFETY: the CPU supports AVX2 (checked above).
                return unsafe { avx2($($arg),*) };
            }
            $generic($($arg),*)
        }

        #[inline(always)]
        fn $generic($($arg: $ty),*) $body
    };
}

with_avx2! {
    /// `out[i·stride + j] = b_i · b_j` for the first `rows` rows of the row-major `b`
    /// (`rows × cols`): the Gram matrix `BBᵀ`, exactly symmetric, written with row stride
    /// `stride`.
    gram / gram_generic(b: &[f64], rows: usize, cols: usize, out: &mut [f64], stride: usize) {
        for i in 0..rows {
            // Row `i`'s entries `j ≤ i` in one call, eight rows at a time (`dot4_rows`: each
            // [`dot`]'s sum in its order — the tail starts from −0.0 there, from 0.0 in
            // `dot`; the chunk sum it is added to is never −0.0 — so the same bits as one
            // `dot` per entry), then mirrored above the diagonal.
            let bi = &b[i * cols..(i + 1) * cols];
            dot4_rows(b, cols, bi, &mut out[i * stride..i * stride + i + 1]);
            for j in 0..i {
                out[j * stride + i] = out[i * stride + j];
            }
        }
    }
}

with_avx2! {
    /// `out (k × cols) = U[:, ..k]ᵀ B`: row `q` of `out` is `Σ_j u_jq b_j`, for the `rows × rows`
    /// row-major `u` (eigenvectors as columns) and the `rows × cols` row-major `b`.
    rotate / rotate_generic(
        u: &[f64], rows: usize, k: usize, b: &[f64], cols: usize, out: &mut [f64]
    ) {
        // Row `q` of the result is `Σ_j u_jq·b_j` summed over `j` in order from 0.0 (as `rows`
        // `axpy`s into a zeroed row), a block of `ROTATE_BLOCK` columns of `ROTATE_ROWS` result
        // rows at a time held in registers across the `j` loop: the same operations on each
        // entry, in the same order, without storing and reloading the partial rows `rows`
        // times, and each block of `b` loaded once for `ROTATE_ROWS` result rows (one row at a
        // time, the loop waited on its loads and on one accumulator's additions per vector).
        let mut q = 0;
        while q + ROTATE_ROWS <= k {
            rotate_rows_block::<ROTATE_ROWS>(u, rows, q, b, cols, out);
            q += ROTATE_ROWS;
        }
        for q in q..k {
            rotate_rows_block::<1>(u, rows, q, b, cols, out);
        }
    }
}

/// Rows `q..q + Q` of [`rotate`]'s result: each entry `Σ_j u_{j,q'}·b_{j,c}` summed over `j`
/// in order from 0.0, `ROTATE_BLOCK` columns in registers at a time, the tail (fewer than
/// `ROTATE_BLOCK` columns) by `axpy`s into a zeroed row.
#[inline(always)]
fn rotate_rows_block<const Q: usize>(
    u: &[f64],
    rows: usize,
    q: usize,
    b: &[f64],
    cols: usize,
    out: &mut [f64],
) {
    let mut c0 = 0;
    while c0 + ROTATE_BLOCK <= cols {
        let mut acc = [[0.0f64; ROTATE_BLOCK]; Q];
        for j in 0..rows {
            let src = &b[j * cols + c0..j * cols + c0 + ROTATE_BLOCK];
            for (r, acc) in acc.iter_mut().enumerate() {
                let a = u[j * rows + q + r];
                for (t, &x) in acc.iter_mut().zip(src) {
                    *t += a * x;
                }
            }
        }
        for (r, acc) in acc.iter().enumerate() {
            let dst = (q + r) * cols + c0;
            out[dst..dst + ROTATE_BLOCK].copy_from_slice(acc);
        }
        c0 += ROTATE_BLOCK;
    }
    for r in q..q + Q {
        let tail = &mut out[r * cols + c0..(r + 1) * cols];
        tail.iter_mut().for_each(|x| *x = 0.0);
        for j in 0..rows {
            axpy(u[j * rows + r], &b[j * cols + c0..(j + 1) * cols], tail);
        }
    }
}

/// Result rows of [`rotate`] computed together (each block of `b` loaded once for them).
const ROTATE_ROWS: usize = 2;

/// Columns of [`rotate`]'s result accumulated in registers at once (four AVX2 vectors).
const ROTATE_BLOCK: usize = 16;

with_avx2! {
    /// `target += coef · Bᵀz` for the first `rows` rows of the row-major `b` (`rows × cols`):
    /// FD-SON's per-example solve (`A⁻¹x = (x − Bᵀ(αI + BBᵀ)⁻¹Bx)/α`). Four rows at a time, so
    /// that each entry of `target` is loaded and stored once per four rows
    /// (`linalg::add_rows_transposed`, faer's matrix–vector product, cost more in set-up than in
    /// arithmetic at `ℓ ≤ 20`, `d ≈ 124`: 7 % of the default's CPU on a9a).
    add_rows_transposed / add_rows_transposed_generic(
        b: &[f64], rows: usize, cols: usize, z: &[f64], coef: f64, target: &mut [f64]
    ) {
        rows_combination(b, rows, cols, |i| coef * z[i], &mut target[..cols]);
    }
}

/// `target += Σ_i c(i)·b_i` over the first `rows` rows of the row-major `b` (`rows × cols`,
/// `target` `cols` long), four rows at a time: each entry of `target` is loaded and stored
/// once per four rows, the four products summed pairwise.
#[inline(always)]
fn rows_combination(
    b: &[f64],
    rows: usize,
    cols: usize,
    c: impl Fn(usize) -> f64,
    target: &mut [f64],
) {
    let row = |i: usize| &b[i * cols..(i + 1) * cols];
    let mut i = 0;
    while i + 4 <= rows {
        let (c0, c1, c2, c3) = (c(i), c(i + 1), c(i + 2), c(i + 3));
        let (r0, r1, r2, r3) = (row(i), row(i + 1), row(i + 2), row(i + 3));
        for (j, t) in target.iter_mut().enumerate() {
            *t += (c0 * r0[j] + c1 * r1[j]) + (c2 * r2[j] + c3 * r3[j]);
        }
        i += 4;
    }
    for i in i..rows {
        axpy(c(i), row(i), target);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::{dot, gram_rows, rotate_rows};

    /// Both products agree with faer's GEMM to rounding, on odd sizes and a tail of `d mod 4`.
    /// The blocked `gram` (four dots at once) and `rotate` (a block of columns in registers)
    /// give the bits of one [`dot`] per entry and of `axpy`s into a zeroed row, on the AVX2 and
    /// plain paths, for sizes around the blocks (rows < 4, columns < 16 and not multiples of 4).
    #[test]
    fn blocked_products_equal_the_plain_loops_to_the_bit() {
        let mut next = crate::linalg::test_uniforms();
        let bits = |x: &[f64]| x.iter().map(|y| y.to_bits()).collect::<Vec<_>>();
        for (rows, cols) in [
            (1, 1),
            (3, 5),
            (4, 16),
            (7, 17),
            (20, 123),
            (21, 300),
            (9, 33),
        ] {
            let mut b: Vec<f64> = (0..rows * cols).map(|_| next()).collect();
            if rows == 9 {
                // Signed zeros: odd rows of −0.0 make products and tails of either sign of zero.
                for r in (1..rows).step_by(2) {
                    b[r * cols..(r + 1) * cols].fill(-0.0);
                }
            }
            let u: Vec<f64> = (0..rows * rows).map(|_| next()).collect();
            let stride = rows + 2;
            let mut want = vec![0.0; rows * stride];
            for i in 0..rows {
                for j in 0..=i {
                    let v = dot(&b[i * cols..(i + 1) * cols], &b[j * cols..(j + 1) * cols]);
                    want[i * stride + j] = v;
                    want[j * stride + i] = v;
                }
            }
            let (mut g0, mut g1) = (vec![0.0; rows * stride], vec![0.0; rows * stride]);
            gram(&b, rows, cols, &mut g0, stride);
            gram_generic(&b, rows, cols, &mut g1, stride);
            assert_eq!(bits(&g0), bits(&want), "gram {rows}x{cols}");
            assert_eq!(bits(&g1), bits(&want), "gram_generic {rows}x{cols}");
            for k in [1, rows.div_ceil(2), rows] {
                let mut want = vec![0.0; k * cols];
                for q in 0..k {
                    for j in 0..rows {
                        let row = &b[j * cols..(j + 1) * cols];
                        axpy(u[j * rows + q], row, &mut want[q * cols..(q + 1) * cols]);
                    }
                }
                let (mut r0, mut r1) = (vec![f64::NAN; k * cols], vec![f64::NAN; k * cols]);
                rotate(&u, rows, k, &b, cols, &mut r0);
                rotate_generic(&u, rows, k, &b, cols, &mut r1);
                assert_eq!(bits(&r0), bits(&want), "rotate {rows}x{cols} k={k}");
                assert_eq!(bits(&r1), bits(&want), "rotate_generic {rows}x{cols} k={k}");
            }
        }
    }

    #[test]
    fn products_equal_faer_gemm_to_rounding() {
        let (rows, cols, k) = (7, 13, 4);
        let mut s = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        let b: Vec<f64> = (0..rows * cols).map(|_| next()).collect();
        let u: Vec<f64> = (0..rows * rows).map(|_| next()).collect();
        let (mut g, mut h) = (vec![0.0; rows * rows], vec![0.0; rows * rows]);
        gram(&b, rows, cols, &mut g, rows);
        gram_rows(&b, rows, cols, &mut h);
        for (x, y) in g.iter().zip(&h) {
            assert!((x - y).abs() <= 1e-14, "{x} vs {y}");
        }
        for i in 0..rows {
            for j in 0..rows {
                assert_eq!(g[i * rows + j], g[j * rows + i]);
            }
        }
        // target += coef·Bᵀz, for row counts with and without a tail of rows mod 4.
        for r in [rows, 4, 3] {
            let z: Vec<f64> = (0..r).map(|_| next()).collect();
            let start: Vec<f64> = (0..cols).map(|_| next()).collect();
            let (mut x, mut y) = (start.clone(), start);
            add_rows_transposed(&b, r, cols, &z, -0.75, &mut x);
            crate::linalg::add_rows_transposed(&b, r, cols, &z, -0.75, &mut y);
            for (p, q) in x.iter().zip(&y) {
                assert!((p - q).abs() <= 1e-14, "{p} vs {q}");
            }
            // The dispatched copy (AVX2 where the CPU has it) equals the plain loop to the bit.
            let (mut g0, mut g1) = (x.clone(), x);
            add_rows_transposed_generic(&b, r, cols, &z, -0.75, &mut g0);
            add_rows_transposed(&b, r, cols, &z, -0.75, &mut g1);
            assert!(g0.iter().zip(&g1).all(|(p, q)| p.to_bits() == q.to_bits()));
        }
        let (mut r, mut t) = (vec![1.0; k * cols], vec![0.0; k * cols]);
        rotate(&u, rows, k, &b, cols, &mut r);
        rotate_rows(&u, rows, k, &b, cols, &mut t);
        for (x, y) in r.iter().zip(&t) {
            assert!((x - y).abs() <= 1e-14, "{x} vs {y}");
        }
        // The dispatched copies (AVX2 where the CPU has it) equal the plain loops to the bit.
        let (mut g2, mut r2) = (vec![0.0; rows * rows], vec![0.0; k * cols]);
        gram_generic(&b, rows, cols, &mut g2, rows);
        rotate_generic(&u, rows, k, &b, cols, &mut r2);
        assert!(g.iter().zip(&g2).all(|(x, y)| x.to_bits() == y.to_bits()));
        assert!(r.iter().zip(&r2).all(|(x, y)| x.to_bits() == y.to_bits()));
    }
}
