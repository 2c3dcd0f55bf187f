//! Gram–Schmidt after an Oja step in `O(m)` per row: the Cholesky factor of `I + βppᵀ`.
//!
//! Oja's update (SON paper, Luo et al. 2016, §3, Eq. (4), Algorithm 3 line 4) is
//! `V' = V + γ·p·gᵀ` with `p = Vg`, followed by orthonormalising the rows of `V'`. When `V`
//! has orthonormal rows, the Gram matrix of the new rows is
//!
//! `G = V'V'ᵀ = VVᵀ + γ·Vg·pᵀ + γ·p·gᵀVᵀ + γ²‖g‖²·ppᵀ = I + β·ppᵀ`, `β = 2γ + γ²‖g‖²`.
//!
//! Gram–Schmidt of the rows of `V'` (top row first) writes `V' = L·Q` with `L` lower
//! triangular with a positive diagonal and `Q` with orthonormal rows, so `G = LLᵀ`: `L` is the
//! Cholesky factor of `G` and `Q = L⁻¹V'`. With `x = √β·p`, `σ_{−1} = 1` and
//! `σ_k = σ_{k−1} + x_k²` (so `σ_{m−1} = 1 + β‖p‖²`), elimination of `I + xxᵀ` column by column
//! leaves the Schur complement `I + (1/σ_k)·xxᵀ` on the remaining rows, which gives
//!
//! `L = L̃·D^{½}`, `D_k = σ_k/σ_{k−1}`, `L̃_ik = x_i·x_k/σ_k` (`i > k`), `L̃_kk = 1`.
//!
//! So `y = L̃⁻¹f` is `y_i = f_i − x_i·S_i` with the running sum `S_{i+1} = S_i + (x_i/σ_i)·y_i`,
//! and row `i` of `Q` is `D_i^{−½}·y_i`: each row of `Q` costs `O(d)` (a running `d`-vector `S`),
//! the whole orthonormalisation `O(md)` instead of Gram–Schmidt's `O(m²d)`. The same factor
//! applied to the `m × m` coefficient matrix `F` of `V = FZ` is the sparse-time learner's
//! `O(m²)` step (SON §4, replacing Alg. 5 line 4).
//!
//! **Dependent rows.** Gram–Schmidt drops a row whose norm after projection is below a relative
//! threshold of its norm before: here the norm before is `√G_kk = √(1 + x_k²)` and after
//! `√D_k`, so the row is dropped when `√(D_k/(1 + x_k²))` falls to the threshold (tested as
//! `D_k > t²·(1 + x_k²)`, no square root). A zero row of `V` (dropped earlier) has `p_k = 0`:
//! `σ` does not move, `D_k = 1` and it stays zero.
//!
//! **Rounding.** If `VVᵀ = I + E` instead of `I`, the Gram matrix is `I + βppᵀ + E` exactly
//! (`p = Vg` is what was computed) and after the step `QQᵀ = I + L⁻¹EL⁻ᵀ` with `‖L⁻¹‖ ≤ 1`: an
//! old error is not amplified, but each step adds its own rounding, which grows with the
//! condition number `σ_{m−1}` of `G` (the sums `f_i − x_i·S_i` cancel when `x` is large). The
//! dense sketch therefore takes this path only while `σ_{m−1}` is moderate, and does a full
//! Gram–Schmidt every few updates ([`OjaSketch`](super::OjaSketch)).

/// The factor's coefficients for one row: `y_i = f_i − x·S`, `S += coef·y_i`, row `← inv·y_i`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct RankOneRow {
    /// `x_i = √β·p_i`.
    pub x: f64,
    /// `x_i/σ_i`.
    pub coef: f64,
    /// `D_i^{−½}`.
    pub inv: f64,
}

/// The Cholesky factor of `I + βppᵀ`, one row at a time (see the [module](self) docs).
#[derive(Clone, Copy, Debug)]
pub(crate) struct RankOneCholesky {
    sb: f64,
    /// `t²` of the dependence test.
    dependent2: f64,
    sig_prev: f64,
    r_prev: f64,
}

impl RankOneCholesky {
    /// The factor of `I + βppᵀ`; a row whose relative norm after projection is at most
    /// `dependent` counts as dependent.
    #[inline(always)]
    pub(crate) fn new(beta: f64, dependent: f64) -> Self {
        RankOneCholesky {
            sb: beta.sqrt(),
            dependent2: dependent * dependent,
            sig_prev: 1.0,
            r_prev: 1.0,
        }
    }

    /// The next row's coefficients, `None` when the row is dependent (then the factor does not
    /// advance: the row is left out, as Gram–Schmidt leaves it out of later projections).
    ///
    /// Per row one division and one square root: with `r_k = 1/σ_k`, `D_k = σ_k·r_{k−1}`,
    /// `D_k^{−½} = √(σ_{k−1}·r_k)` and `x_k/σ_k = x_k·r_k`.
    #[inline(always)]
    pub(crate) fn row(&mut self, p: f64) -> Option<RankOneRow> {
        let x = self.sb * p;
        let sig = self.sig_prev + x * x;
        let di = sig * self.r_prev;
        if !(di > self.dependent2 * (1.0 + x * x) && di.is_finite()) {
            return None;
        }
        let r = 1.0 / sig;
        let row = RankOneRow {
            x,
            coef: x * r,
            inv: (self.sig_prev * r).sqrt(),
        };
        (self.sig_prev, self.r_prev) = (sig, r);
        Some(row)
    }

    /// `σ` of the rows so far: `1 + β·Σp_k²` over the rows taken, the condition number of
    /// their Gram matrix `I + βppᵀ`.
    pub(crate) fn sigma(&self) -> f64 {
        self.sig_prev
    }
}

/// `V ← D^{−½}L̃⁻¹V` for the row-major `m × d` matrix `v` with the rows' coefficients `rows`
/// (`O(md)`); `run` is the running sum's `d`-vector (any contents, overwritten).
pub(crate) fn apply_rows(rows: &[RankOneRow], v: &mut [f64], d: usize, run: &mut Vec<f64>) {
    run.clear();
    run.resize(d, 0.0);
    for (i, r) in rows.iter().enumerate() {
        let row = &mut v[i * d..(i + 1) * d];
        for (f, s) in row.iter_mut().zip(run.iter_mut()) {
            let y = *f - r.x * *s;
            *s += r.coef * y;
            *f = y * r.inv;
        }
    }
}

/// [`apply_rows`] on `V + γpgᵀ` (row `i` first gets `(γp_i)·g`, in the same loop: the same
/// operations as an axpy followed by [`apply_rows`]) for a contiguous `g` of length `d`, and,
/// when `x` is given, `vx_i = (new row i)·x` in the same pass: one visit of `V` for Oja's step,
/// the orthonormalisation and the projection `V'x` that Oja-SON's step needs next.
///
/// With AVX2 (detected at run time, [`has_avx2`](crate::linear::sparse::has_avx2)) each row runs
/// four entries per instruction: the same multiplications and additions, separately rounded (no
/// FMA), in the same order — the same bits as the plain loop (unit test
/// `avx2_rows_equal_the_plain_loop_to_the_bit`).
pub(crate) fn update_apply_rows(
    rows: &[RankOneRow],
    (gamma, p): (f64, &[f64]),
    v: &mut [f64],
    g: &[f64],
    x: Option<&[f64]>,
    vx: &mut [f64],
    run: &mut Vec<f64>,
) {
    let d = g.len();
    run.clear();
    run.resize(d, 0.0);
    for (i, r) in rows.iter().enumerate() {
        let (row, ai) = (&mut v[i * d..(i + 1) * d], gamma * p[i]);
        if let Some(vxi) = update_row(row, ai, r, g, run, x) {
            vx[i] = vxi;
        }
    }
}

/// One row of [`update_apply_rows`]: `f ← ((f + a·g) − x_r·s)·inv` with
/// `s += coef·((f + a·g) − x_r·s)` entry by entry, and, when `x` is given, `Some(f'·x)` (four
/// accumulators, lane `k` summing entries `4c + k`, then `(a₀ + a₁) + (a₂ + a₃)` plus the tail in
/// order). `row`, `g`, `run` (and `x`) have the same length. With AVX2 ([`avx2::update_row`]),
/// the same bits four entries per instruction.
#[inline]
fn update_row(
    row: &mut [f64],
    a: f64,
    r: &RankOneRow,
    g: &[f64],
    run: &mut [f64],
    x: Option<&[f64]>,
) -> Option<f64> {
    #[cfg(target_arch = "x86_64")]
    if crate::linear::sparse::has_avx2() {
        // SAFETY: the CPU supports AVX2 (checked just above).
        return unsafe { avx2::update_row(row, a, r, g, run, x) };
    }
    update_row_plain(row, a, r, g, run, x)
}

/// The plain loop of [`update_row`].
fn update_row_plain(
    row: &mut [f64],
    ai: f64,
    r: &RankOneRow,
    g: &[f64],
    run: &mut [f64],
    x: Option<&[f64]>,
) -> Option<f64> {
    let d = row.len();
    let step = |f: &mut f64, gk: f64, s: &mut f64| {
        let y = (*f + ai * gk) - r.x * *s;
        *s += r.coef * y;
        *f = y * r.inv;
        *f
    };
    match x {
        None => {
            for ((f, &gk), s) in row.iter_mut().zip(g).zip(run.iter_mut()) {
                step(f, gk, s);
            }
            None
        }
        Some(x) => {
            // Four accumulators (lane k sums entries 4c + k), then the tail.
            let mut acc = [0.0f64; 4];
            let tail = d / 4 * 4;
            let chunks = row[..tail]
                .chunks_exact_mut(4)
                .zip(g.chunks_exact(4))
                .zip(run[..tail].chunks_exact_mut(4))
                .zip(x.chunks_exact(4));
            for (((fc, gc), sc), xc) in chunks {
                for k in 0..4 {
                    acc[k] += step(&mut fc[k], gc[k], &mut sc[k]) * xc[k];
                }
            }
            let mut rest = 0.0;
            for k in tail..d {
                rest += step(&mut row[k], g[k], &mut run[k]) * x[k];
            }
            Some((acc[0] + acc[1]) + (acc[2] + acc[3]) + rest)
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::RankOneRow;
    use std::arch::x86_64::{
        _mm256_add_pd, _mm256_loadu_pd, _mm256_mul_pd, _mm256_set1_pd, _mm256_setzero_pd,
        _mm256_storeu_pd, _mm256_sub_pd,
    };

    /// [`update_row`](super::update_row) four entries at a time: lane `k` of each register holds
    /// entry `4c + k`, so the projection's lanes are the plain loop's four accumulators.
    #[target_feature(enable = "avx2")]
    pub(super) fn update_row(
        row: &mut [f64],
        a: f64,
        r: &RankOneRow,
        g: &[f64],
        run: &mut [f64],
        x: Option<&[f64]>,
    ) -> Option<f64> {
        let d = row.len();
        assert!(g.len() == d && run.len() == d && x.is_none_or(|x| x.len() == d));
        let (av, rx, coef, inv) = (
            _mm256_set1_pd(a),
            _mm256_set1_pd(r.x),
            _mm256_set1_pd(r.coef),
            _mm256_set1_pd(r.inv),
        );
        let mut acc = _mm256_setzero_pd();
        let whole = d / 4 * 4;
        let (f, gp, sp) = (row.as_mut_ptr(), g.as_ptr(), run.as_mut_ptr());
        for k in (0..whole).step_by(4) {
            // SAFETY: `k + 4 ≤ d`, the length of every slice (asserted).
            unsafe {
                let t = _mm256_add_pd(
                    _mm256_loadu_pd(f.add(k)),
                    _mm256_mul_pd(av, _mm256_loadu_pd(gp.add(k))),
                );
                let s = _mm256_loadu_pd(sp.add(k));
                let y = _mm256_sub_pd(t, _mm256_mul_pd(rx, s));
                _mm256_storeu_pd(sp.add(k), _mm256_add_pd(s, _mm256_mul_pd(coef, y)));
                let fy = _mm256_mul_pd(y, inv);
                _mm256_storeu_pd(f.add(k), fy);
                if let Some(x) = x {
                    acc = _mm256_add_pd(acc, _mm256_mul_pd(fy, _mm256_loadu_pd(x.as_ptr().add(k))));
                }
            }
        }
        let mut rest = 0.0;
        for k in whole..d {
            let y = (row[k] + a * g[k]) - r.x * run[k];
            run[k] += r.coef * y;
            row[k] = y * r.inv;
            if let Some(x) = x {
                rest += row[k] * x[k];
            }
        }
        x.map(|_| crate::data::dot4::avx2::lanes_sum(acc) + rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vector(n: usize, seed: f64) -> Vec<f64> {
        (0..n)
            .map(|i| ((i as f64 + seed) * 0.917).sin() * 10f64.powi((i % 5) as i32 - 2))
            .collect()
    }

    #[test]
    fn avx2_rows_equal_the_plain_loop_to_the_bit() {
        let r = RankOneCholesky::new(0.37, 1e-10).row(0.8).unwrap();
        for d in (0..26).chain([999, 1000]) {
            let g = vector(d, 0.2);
            let xs = vector(d, 3.1);
            for x in [None, Some(&xs[..])] {
                let (mut a, mut b) = (vector(d, 1.3), vector(d, 1.3));
                let (mut sa, mut sb) = (vector(d, 7.7), vector(d, 7.7));
                let got = update_row(&mut a, -0.6, &r, &g, &mut sa, x);
                let want = update_row_plain(&mut b, -0.6, &r, &g, &mut sb, x);
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(got.map(f64::to_bits), want.map(f64::to_bits), "d = {d}");
                assert_eq!((bits(&a), bits(&sa)), (bits(&b), bits(&sb)), "d = {d}");
            }
        }
    }
}
