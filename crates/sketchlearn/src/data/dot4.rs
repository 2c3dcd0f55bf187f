//! The four-accumulator dot product of [`Row::dot`](super::example::Row::dot) on contiguous
//! values, for one vector ([`dot4`]) and for several rows of a matrix against the same vector
//! ([`dot4_rows`]).
//!
//! The sum is fixed: lane `k` of four accumulators adds `w_{4c+k}·x_{4c+k}` for `c = 0, 1, …` in
//! order, then `(a₀ + a₁) + (a₂ + a₃)` plus the tail (the last `n mod 4` products, summed in
//! order). Every path here computes exactly those roundings in that order, so every path gives
//! the same bits:
//!
//! * the plain loop (any CPU);
//! * with AVX2 (detected at run time, [`has_avx2`](crate::linear::sparse::has_avx2)), the four
//!   accumulators are the four lanes of one register — multiplications and additions separately
//!   rounded, no FMA;
//! * [`dot4_rows`] runs up to eight rows' accumulators side by side: each row's sum is the one
//!   above, but the rows' additions no longer wait for each other (one row is bound by the
//!   latency of its accumulator, eight rows by the throughput of the adder).
//!
//! It is also [`linalg::dot`](crate::linalg::dot)'s sum, to the bit: there the tail starts from
//! `0.0`, here (`f64`'s `sum`) from `−0.0`, which can change only the sign of a zero tail; the
//! four-lane part it is added to is never `−0.0` (the lanes start at `+0.0`, and a rounded sum
//! is `−0.0` only when both terms are), so either zero leaves it unchanged. The dense FD's Gram
//! matrix (`sketch::fd_products::gram`) takes four entries at a time from [`dot4_rows`] and the
//! rest from `dot`, with the same bits (its test checks them, signed zeros included).

/// `w · x` over `n = min(|w|, |x|)` entries, with the fixed sum of the [module](self) docs.
#[inline]
pub(crate) fn dot4(w: &[f64], x: &[f64]) -> f64 {
    let n = w.len().min(x.len());
    let (w, x) = (&w[..n], &x[..n]);
    #[cfg(target_arch = "x86_64")]
    if crate::linear::sparse::has_avx2() {
        // SAFETY: the CPU supports AVX2 (checked just above).
        return unsafe { avx2::dot4(w, x) };
    }
    dot4_plain(w, x)
}

/// `out[i] = dot4(&v[i·stride..i·stride + x.len()], x)` for `i < out.len()`: the same bits as
/// that loop, several rows at a time with AVX2. `v` holds `out.len()` rows of `stride ≥ x.len()`
/// entries.
pub(crate) fn dot4_rows(v: &[f64], stride: usize, x: &[f64], out: &mut [f64]) {
    let n = x.len();
    assert!(out.is_empty() || (n <= stride && v.len() >= (out.len() - 1) * stride + n));
    #[cfg(target_arch = "x86_64")]
    if crate::linear::sparse::has_avx2() {
        // SAFETY: the CPU supports AVX2 (checked just above); the rows are in bounds (asserted).
        return unsafe { avx2::dot4_rows(v, stride, x, out) };
    }
    for (i, o) in out.iter_mut().enumerate() {
        *o = dot4_plain(&v[i * stride..i * stride + n], x);
    }
}

/// The plain loop of [`dot4`] (equal lengths).
#[inline(always)]
fn dot4_plain(w: &[f64], x: &[f64]) -> f64 {
    let mut acc = [0.0f64; 4];
    let mut chunks = w.chunks_exact(4).zip(x.chunks_exact(4));
    for (wc, xc) in &mut chunks {
        for k in 0..4 {
            acc[k] += wc[k] * xc[k];
        }
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail(w, x)
}

/// The products past the last whole chunk of four, summed in order.
#[inline(always)]
fn tail(w: &[f64], x: &[f64]) -> f64 {
    let t = x.len() / 4 * 4;
    w[t..].iter().zip(&x[t..]).map(|(a, b)| a * b).sum()
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2 {
    use std::arch::x86_64::{
        __m256d, _mm256_add_pd, _mm256_loadu_pd, _mm256_mul_pd, _mm256_setzero_pd, _mm256_storeu_pd,
    };

    /// The four lanes of `acc` as `(a₀ + a₁) + (a₂ + a₃)`.
    #[target_feature(enable = "avx2")]
    pub(crate) fn lanes_sum(acc: __m256d) -> f64 {
        let mut a = [0.0f64; 4];
        // SAFETY: `a` has four entries.
        unsafe { _mm256_storeu_pd(a.as_mut_ptr(), acc) };
        (a[0] + a[1]) + (a[2] + a[3])
    }

    /// [`super::dot4`] on equal lengths.
    #[target_feature(enable = "avx2")]
    pub(super) fn dot4(w: &[f64], x: &[f64]) -> f64 {
        let mut acc = _mm256_setzero_pd();
        for (wc, xc) in w.chunks_exact(4).zip(x.chunks_exact(4)) {
            // SAFETY: both chunks have four entries.
            let (a, b) = unsafe { (_mm256_loadu_pd(wc.as_ptr()), _mm256_loadu_pd(xc.as_ptr())) };
            acc = _mm256_add_pd(acc, _mm256_mul_pd(a, b));
        }
        lanes_sum(acc) + super::tail(w, x)
    }

    /// [`super::dot4_rows`]: blocks of eight, four, two and one rows.
    ///
    /// # Safety
    /// `v` holds `out.len()` rows of `stride ≥ x.len()` entries.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn dot4_rows(v: &[f64], stride: usize, x: &[f64], out: &mut [f64]) {
        let mut i = 0;
        while i < out.len() {
            let (rows, out) = (&v[i * stride..], &mut out[i..]);
            // SAFETY (each call): `rows` starts at row `i` and holds the `out.len() − i` rows
            // left (caller's contract), at least the block's.
            i += unsafe {
                match out.len() {
                    8.. => block::<8>(rows, stride, x, out),
                    4..=7 => block::<4>(rows, stride, x, out),
                    2..=3 => block::<2>(rows, stride, x, out),
                    _ => block::<1>(rows, stride, x, out),
                }
            };
        }
    }

    /// `out[r] = dot4(row r of rows, x)` for `r < R`, the rows' accumulators side by side;
    /// returns `R`.
    ///
    /// # Safety
    /// `rows` holds `R` rows of `stride ≥ x.len()` entries (the last may end at `x.len()`), and
    /// `out.len() ≥ R`.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn block<const R: usize>(
        rows: &[f64],
        stride: usize,
        x: &[f64],
        out: &mut [f64],
    ) -> usize {
        let n = x.len();
        debug_assert!(R == 0 || rows.len() >= (R - 1) * stride + n);
        let mut acc = [_mm256_setzero_pd(); R];
        let base = rows.as_ptr();
        for (c, xc) in x.chunks_exact(4).enumerate() {
            // SAFETY: `xc` has four entries; entries `4c..4c + 4 ≤ n` of row `r < R` are in
            // `rows` (contract).
            let b = unsafe { _mm256_loadu_pd(xc.as_ptr()) };
            for (r, a) in acc.iter_mut().enumerate() {
                let w = unsafe { _mm256_loadu_pd(base.add(r * stride + 4 * c)) };
                *a = _mm256_add_pd(*a, _mm256_mul_pd(w, b));
            }
        }
        for (r, a) in acc.iter().enumerate() {
            let w = &rows[r * stride..r * stride + n];
            out[r] = lanes_sum(*a) + super::tail(w, x);
        }
        R
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vector(n: usize, seed: f64) -> Vec<f64> {
        (0..n)
            .map(|i| ((i as f64 + seed) * 0.731).sin() * 1e3f64.powf((i % 7) as f64 / 3.0 - 1.0))
            .collect()
    }

    #[test]
    fn every_length_equals_the_plain_loop_to_the_bit() {
        for n in 0..40 {
            let (w, x) = (vector(n, 0.3), vector(n, 1.7));
            assert_eq!(
                dot4(&w, &x).to_bits(),
                dot4_plain(&w, &x).to_bits(),
                "n = {n}"
            );
        }
    }

    #[test]
    fn rows_equal_one_dot_each_to_the_bit() {
        for rows in 0..20 {
            for (n, stride) in [(0, 0), (3, 5), (17, 17), (1000, 1003)] {
                let v = vector(rows * stride, 2.9);
                let x = vector(n, 0.1);
                let mut out = vec![f64::NAN; rows];
                dot4_rows(&v, stride, &x, &mut out);
                for (i, o) in out.iter().enumerate() {
                    let want = dot4_plain(&v[i * stride..i * stride + n], &x);
                    assert_eq!(o.to_bits(), want.to_bits(), "rows {rows}, n {n}, row {i}");
                }
            }
        }
    }
}
