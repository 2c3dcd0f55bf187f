//! `y ← y + a·x` on the `m` sketch coordinates of one column: the inner loop of every
//! per-column pass of the sparse learners (the gather `z = Zx` and the fused write of
//! [`fused_write`](super::fused_write)), run `nnz` times per example.
//!
//! For a run-time length LLVM emits a scalar loop below about 14 elements (its vector loop
//! needs two full iterations plus a remainder), so at the papers' and VW's usual `m = 10` each
//! coordinate cost a load, a multiply, an add, a store and the loop's own three instructions.
//! The common sketch sizes are dispatched to copies with the length known at compile time,
//! which LLVM unrolls and vectorises completely; other sizes take the generic loop. The result
//! is the same to the bit (the same products and sums per coordinate, in the same order).

/// `y[i] += a·x[i]` for `i < y.len()` (`x` at least as long as `y`).
#[inline(always)]
pub(crate) fn axpy(y: &mut [f64], x: &[f64], a: f64) {
    match y.len() {
        5 => fixed::<5>(y, x, a),
        10 => fixed::<10>(y, x, a),
        20 => fixed::<20>(y, x, a),
        _ => {
            for (yi, xi) in y.iter_mut().zip(x) {
                *yi += a * xi;
            }
        }
    }
}

#[inline(always)]
fn fixed<const N: usize>(y: &mut [f64], x: &[f64], a: f64) {
    let (Some(y), Some(x)) = (y.first_chunk_mut::<N>(), x.first_chunk::<N>()) else {
        return;
    };
    for i in 0..N {
        y[i] += a * x[i];
    }
}

/// Whether the size-specialised column passes may run their AVX2 copies (x86-64 with AVX2;
/// detected once, then a cached load). AVX2 only, not FMA: multiplications and additions stay
/// separately rounded (Rust never fuses them on its own), so the results are the same to the bit
/// on every machine; the 4-wide registers halve the instructions per column.
#[inline(always)]
pub(crate) fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::axpy;

    #[test]
    fn every_length_matches_the_plain_loop_to_the_bit() {
        for n in 0..25 {
            let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
            let mut y: Vec<f64> = (0..n).map(|i| (i as f64 * 1.3).cos()).collect();
            let mut want = y.clone();
            for (w, xi) in want.iter_mut().zip(&x) {
                *w += 0.71 * xi;
            }
            axpy(&mut y, &x, 0.71);
            assert_eq!(y, want, "n = {n}");
        }
    }
}
