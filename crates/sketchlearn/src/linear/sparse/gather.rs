//! The gather of the sparse learners: `z = Zx`, `w̄ᵀx`, `‖x‖²` and the maxima the fused step's
//! guard needs ([`fused_step_ok`](super::fused_step_ok)), in one pass over the example's columns,
//! each brought up to date on the way ([`LazyColumns::current`]).
//!
//! It is the hottest loop of every sparse learner (`nnz` columns of `m + 1` values per example).
//! For the common sketch sizes the `m` partial sums live in registers for the whole pass (the
//! length known at compile time, see [`axpy`](super::axpy)), compiled twice: for x86-64's
//! baseline and, chosen at run time, for AVX2 (4-wide registers; no FMA, see
//! [`has_avx2`](super::axpy::has_avx2)). The sums are the same, in the same order, as the plain
//! loop's, so the result is the same to the bit for every `m` and on every CPU.

use super::columns::{LazyColumns, W, Z};
use super::finite_max;
use crate::Row;

/// What the gather returns besides `z`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Gathered {
    /// `w̄ᵀx`.
    pub wx: f64,
    /// `‖x‖²`.
    pub xx: f64,
    /// `max_j |w̄_j|` over the example's columns.
    pub wmax: f64,
    /// `max_j |x_j|`.
    pub xmax: f64,
}

/// `z ← Zx` (`z.len() = m`) and the [`Gathered`] sums; brings every touched column up to date.
#[inline]
pub(crate) fn gather(cols: &mut LazyColumns, x: Row<'_>, z: &mut [f64]) -> Gathered {
    match (x, z.len()) {
        (Row::Sparse { indices, values }, 10) => fixed_dispatch::<10>(cols, indices, values, z),
        (Row::Sparse { indices, values }, 5) => fixed_dispatch::<5>(cols, indices, values, z),
        (Row::Sparse { indices, values }, 20) => fixed_dispatch::<20>(cols, indices, values, z),
        _ => generic(cols, x, z),
    }
}

pub(crate) fn generic(cols: &mut LazyColumns, x: Row<'_>, z: &mut [f64]) -> Gathered {
    let m = z.len();
    let mut g = Gathered::default();
    z.iter_mut().for_each(|v| *v = 0.0);
    super::for_each_nz(x, |j, v| {
        let slot = cols.current(j);
        g.wx += slot[W] * v;
        g.xx += v * v;
        g.wmax = finite_max(g.wmax, slot[W].abs());
        g.xmax = finite_max(g.xmax, v.abs());
        super::axpy::axpy(z, &slot[Z..Z + m], v);
    });
    g
}

/// [`generic`] without updating any column (each read through [`LazyColumns::peek_reusing`]):
/// the sums a gather would give, for the driver's check of a row it may refuse before it
/// changes anything (`newton.rs`, `SparseNewton::learn`). Not on the hot path.
pub(crate) fn peek(cols: &LazyColumns, x: Row<'_>, z: &mut [f64]) -> Gathered {
    let m = z.len();
    let mut g = Gathered::default();
    let (mut col, mut scratch) = (vec![0.0; m], Default::default());
    z.iter_mut().for_each(|v| *v = 0.0);
    super::for_each_nz(x, |j, v| {
        let w = cols.peek_reusing(j, &mut col, &mut scratch);
        g.wx += w * v;
        g.xx += v * v;
        g.wmax = finite_max(g.wmax, w.abs());
        g.xmax = finite_max(g.xmax, v.abs());
        super::axpy::axpy(z, &col, v);
    });
    g
}

/// [`fixed`] compiled for AVX2 when the CPU has it ([`has_avx2`](super::axpy::has_avx2)).
#[inline(always)]
fn fixed_dispatch<const M: usize>(
    cols: &mut LazyColumns,
    indices: &[u32],
    values: &[f64],
    z: &mut [f64],
) -> Gathered {
    #[cfg(target_arch = "x86_64")]
    if super::axpy::has_avx2() {
        // SAFETY: the CPU supports AVX2 (checked just above).
        return unsafe { fixed_avx2::<M>(cols, indices, values, z) };
    }
    fixed::<M>(cols, indices, values, z)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn fixed_avx2<const M: usize>(
    cols: &mut LazyColumns,
    indices: &[u32],
    values: &[f64],
    z: &mut [f64],
) -> Gathered {
    fixed::<M>(cols, indices, values, z)
}

#[inline(always)]
fn fixed<const M: usize>(
    cols: &mut LazyColumns,
    indices: &[u32],
    values: &[f64],
    z: &mut [f64],
) -> Gathered {
    cols.refresh_stale::<M>(indices);
    let mut acc = [0.0f64; M];
    let (mut wx, mut xx, mut wmax, mut xmax) = (0.0, 0.0, 0.0f64, 0.0f64);
    for (&j, &v) in indices.iter().zip(values) {
        let slot = cols.current(j as usize);
        let w = slot[W];
        wx += w * v;
        xx += v * v;
        wmax = finite_max(wmax, w.abs());
        xmax = finite_max(xmax, v.abs());
        if let Some(col) = slot[Z..].first_chunk::<M>() {
            for i in 0..M {
                acc[i] += col[i] * v;
            }
        }
    }
    z[..M].copy_from_slice(&acc);
    Gathered { wx, xx, wmax, xmax }
}

#[cfg(test)]
mod tests {
    use super::super::columns::{Init, LazyColumns, W, Z};
    use super::super::{fused_generic, fused_write};
    use super::{gather, generic};
    use crate::Row;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// Columns with random `w̄` and `Z` (structured start, then overwritten on some columns).
    fn columns(dim: usize, m: usize, rng: &mut Xoshiro256PlusPlus) -> LazyColumns {
        let mut cols = LazyColumns::new(dim, m, Init::Structured { seed: 5 });
        for j in (0..dim).step_by(2) {
            let slot = cols.current(j);
            slot[W] = rng.random_range(-3.0..3.0);
            for z in &mut slot[Z..] {
                *z = rng.random_range(-1.0..1.0);
            }
        }
        cols
    }

    /// The size-specialised passes (m = 5, 10, 20) against the generic loops, and the sizes
    /// next to them, to the bit.
    #[test]
    fn specialised_sizes_give_the_generic_results_to_the_bit() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
        for m in [4, 5, 6, 9, 10, 11, 19, 20, 21] {
            let dim = 300;
            let mut a = columns(dim, m, &mut rng);
            let mut b = a.clone();
            let mut indices: Vec<u32> = (0..dim as u32).filter(|_| rng.random_bool(0.2)).collect();
            indices.dedup();
            let values: Vec<f64> = indices
                .iter()
                .map(|_| rng.random_range(-2.0..2.0))
                .collect();
            let x = Row::Sparse {
                indices: &indices,
                values: &values,
            };
            let (mut za, mut zb) = (vec![7.0; m], vec![-7.0; m]);
            let ga = gather(&mut a, x, &mut za);
            let gb = generic(&mut b, x, &mut zb);
            assert_eq!(za, zb, "z, m = {m}");
            // The baseline (SSE2) copy too, whichever one `gather` ran on this CPU.
            if let Row::Sparse { indices, values } = x {
                let mut zc = vec![3.0; m];
                let mut c = b.clone();
                let gc = match m {
                    5 => Some(super::fixed::<5>(&mut c, indices, values, &mut zc)),
                    10 => Some(super::fixed::<10>(&mut c, indices, values, &mut zc)),
                    20 => Some(super::fixed::<20>(&mut c, indices, values, &mut zc)),
                    _ => None,
                };
                if let Some(gc) = gc {
                    assert_eq!(zc, zb, "baseline z, m = {m}");
                    assert_eq!(gc.wx, gb.wx, "baseline w̄ᵀx, m = {m}");
                }
            }
            assert_eq!(
                (ga.wx, ga.xx, ga.wmax, ga.xmax),
                (gb.wx, gb.xx, gb.wmax, gb.xmax),
                "sums, m = {m}"
            );
            let delta: Vec<f64> = (0..m).map(|_| rng.random_range(-1.0..1.0)).collect();
            let mut c = b.clone();
            fused_write(&mut a, x, 0.3, Some((&delta, -1.7)));
            fused_generic(&mut b, x, 0.3, &delta, -1.7);
            // The baseline (SSE2) copy of the specialised write, whichever one ran above.
            let pass = super::super::FusedPass {
                indices: &indices,
                values: &values,
                a: 0.3,
                delta: &delta,
                s: -1.7,
            };
            match m {
                5 => super::super::fused_fixed::<5>(&mut c, pass),
                10 => super::super::fused_fixed::<10>(&mut c, pass),
                20 => super::super::fused_fixed::<20>(&mut c, pass),
                _ => fused_generic(&mut c, x, 0.3, &delta, -1.7),
            }
            for &j in &indices {
                assert_eq!(c.slot(j as usize), b.slot(j as usize), "baseline, m = {m}");
            }
            for &j in &indices {
                assert_eq!(
                    a.slot(j as usize),
                    b.slot(j as usize),
                    "column {j}, m = {m}"
                );
            }
        }
    }
}
