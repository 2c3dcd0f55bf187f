//! All eigenvalues and only the **leading eigenvectors** of a small symmetric matrix: what the
//! dense FD shrink needs (`δ = λ_m` and `λ₁` from the values, the vectors of the `keep ≤ m − 1`
//! values above `δ`; Ghashami et al., *Frequent Directions*, Alg. 2), at a fraction of
//! [`tql2`](super)'s cost.
//!
//! # Why
//!
//! `tql2` applies every plane rotation of every QL step to all `n` eigenvectors, and each
//! rotation waits for one `sqrt` and one division of the previous one (a serial chain, ~50
//! cycles a rotation): on a9a the sweep was ~20 % of the default's CPU (`docs/results/speed.md`,
//! speedmix11). For `n = ℓ = 20` and `keep ≤ 9` most of that is spent on vectors the shrink
//! throws away.
//!
//! # Method
//!
//! 1. **Reduction** as in [`SmallSymEigen::compute`]: the reversed, power-of-two-scaled input
//!    `A = Q T Qᵀ` by `tred2`'s Householder steps, `Q` kept as its `n − 1` reflections instead
//!    of being accumulated (Golub & Van Loan §5.1.6: applying them to `k` vectors costs `n²k`).
//! 2. **Eigenvalues of `T` by the root-free QL** ([`rational_ql`], EISPACK's `tqlrat`:
//!    Reinsch, "A stable, rational QR algorithm for the computation of the eigenvalues of an
//!    Hermitian, tridiagonal matrix", *Math. Comp.* 25 (1971); the Pal–Walker–Kahan variant of
//!    the same idea; Golub & Van Loan, *Matrix Computations*, 4th ed., §8.3.5). The QL step
//!    works on the squares `e_i²` of the off-diagonal: with `γ_i = c_i² p_i`-type quantities
//!    the rotation's `c²`, `s²` are ratios (`s² = e_i²/r`, `r = p² + e_i²` formed without a
//!    root), so a rotation costs divisions and products but no `sqrt` (one root per QL step,
//!    for the shift). Backward stable for the eigenvalues (Reinsch 1971): each computed `λ̂_i`
//!    is within `O(ε‖T‖)` of an eigenvalue.
//! 3. **Vectors of the leading `k` by inverse iteration on `T`** ([`inverse_iteration_lanes`], as
//!    LAPACK's `dstein`; Golub & Van Loan §8.2.2 and §8.4.4): solve `(T − λ̂I)x⁽ʲ⁺¹⁾ = x⁽ʲ⁾`
//!    with the tridiagonal LU with partial pivoting (a zero pivot replaced by `ε‖T‖`), three
//!    solves from a fixed start. Since `|λ̂ − λ| = O(ε‖T‖)`, each solve multiplies the
//!    eigencomponent by `1/|λ̂ − λ|` against at most `1/gap` for the others: the residual
//!    `‖Tx − λ̂x‖` is `O(ε‖T‖)` after the first solve or two (Wilkinson's analysis, GVL
//!    §8.2.2). Vectors of **close** eigenvalues (`|λ̂_i − λ̂_j| ≤ 10⁻³‖T‖`, `dstein`'s
//!    `ortol`) are not made orthogonal by the solves themselves (their directions are only
//!    determined to `ε‖T‖/gap`), so each iterate is orthogonalised against the cluster's
//!    earlier vectors (modified Gram–Schmidt before every solve, as `dstein`), and a shift equal
//!    to the previous one is moved by `10ε|λ̂|` so that the factorisation differs. For separated
//!    eigenvalues orthogonality follows from the residuals: `|x_iᵀx_j| ≤ 2·res/gap ≤ O(ε)·10³`.
//! 4. **Back-transformation** `y = Q x` of the `k` vectors only, reflection by reflection
//!    (`≈ 2n²k` flops instead of `tred2`'s accumulation of `Q` and the `n` per rotation per
//!    vector of `tql2`).
//!
//! The result satisfies the same contract as the full solver for what the shrink reads:
//! eigenvalues to `O(ε‖A‖)`, the `k` vectors with residual `O(ε‖A‖)` and orthonormal to
//! `O(ε)` (the unit tests check `10⁻¹²` relative, on random, low-rank, repeated-eigenvalue and
//! bordered-diagonal matrices, the last the shape of `BBᵀ` after a shrink). It is not the
//! same to the bit as `tql2`'s: the learners' last bits changed when the dense shrink moved to
//! it (branch eigen12).

use super::{householder, pythag, reflect, SmallSymEigen, MAX_SWEEPS};
use crate::linalg::LinalgError;

/// Inverse-iteration solves per vector (`dstein` stops after two more once the growth test
/// passes; from an `O(ε)`-accurate shift the first solve already passes it).
const SOLVES: usize = 3;

/// Independent vectors computed together, one per lane (an AVX2 register of `f64`).
const LANES: usize = 4;

/// Eigenvalues closer than this fraction of `‖T‖` form a cluster whose vectors are
/// orthogonalised explicitly (`dstein`'s `ortol`).
const CLUSTER: f64 = 1e-3;

impl SmallSymEigen {
    /// Decomposes the symmetric row-major `n × n` matrix `a` (lower triangle read) as far as
    /// the eigenvalues: [`SmallSymEigen::values`] is valid afterwards, the vectors are formed
    /// on demand by [`SmallSymEigen::leading_vectors`].
    pub fn compute_values(&mut self, a: &[f64]) -> Result<(), LinalgError> {
        let n = self.n;
        self.load(a)?;
        if n == 0 {
            return Ok(());
        }
        reduce(self);
        // Keep T (scaled) for the inverse iteration; the QL works on copies.
        self.td.copy_from_slice(&self.d);
        self.te.copy_from_slice(&self.e);
        for (e2, &e) in self.g.iter_mut().zip(&self.e) {
            *e2 = e * e;
        }
        rational_ql(&mut self.d, &mut self.g, n)?;
        // Ascending on return: the values descending, scaled back (exactly: a power of two).
        for k in 0..n {
            self.values[k] = self.d[n - 1 - k] * self.scale;
        }
        if self.values.iter().any(|x| !x.is_finite()) {
            return Err(LinalgError::NonFinite);
        }
        Ok(())
    }

    /// After [`SmallSymEigen::compute_values`], forms the eigenvectors of the `k` largest
    /// eigenvalues as columns `0..k` of [`SmallSymEigen::vectors`] (the other columns are
    /// left as they were).
    pub fn leading_vectors(&mut self, k: usize) {
        let n = self.n;
        let k = k.min(n);
        if k == 0 {
            return;
        }
        #[cfg(target_arch = "x86_64")]
        if crate::linear::sparse::has_avx2() {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { leading_vectors_avx2(self, k) };
        }
        leading_vectors_plain(self, k)
    }
}

/// `tred2` on the loaded matrix, compiled a second time for AVX2 (as the full solver's).
fn reduce(w: &mut SmallSymEigen) {
    #[cfg(target_arch = "x86_64")]
    if crate::linear::sparse::has_avx2() {
        // SAFETY: the CPU supports AVX2 (checked just above).
        return unsafe { reduce_avx2(w) };
    }
    reduce_plain(w)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn reduce_avx2(w: &mut SmallSymEigen) {
    reduce_plain(w)
}

/// `tred2`'s reduction without its accumulation of `Q` (`≈ 4n³/3` of its flops): `d`, `e` as
/// `tred2`'s; the reflections kept for [`back_transform`]: `P_i = I − u_i u_iᵀ/h_i` acting on
/// coordinates `0..i` (`i = 1..n`, `h_i = ‖u_i‖²/2`, `h_i = 0` for no reflection), `u_i` in row
/// `i` of `q` (columns `0..i`), `h_i` in `h[i]`; `A = Q T Qᵀ` with `Q = P_{n−1}⋯P₁` (the
/// reduction runs from the last row up: `T = P₁⋯P_{n−1} A P_{n−1}⋯P₁`).
#[inline(always)]
#[allow(clippy::redundant_closure)] // the closure carries `inline(always)` (see `tred2`)
fn reduce_plain(w: &mut SmallSymEigen) {
    let n = w.n;
    let (v, d, e) = (&mut w.q, &mut w.d, &mut w.e);
    householder(
        v,
        d,
        e,
        n,
        #[inline(always)]
        |v, d, e, n, i, h| reflect(v, d, e, n, i, h),
    );
    // After `householder`: h_i in d[i] (i ≥ 1), T's diagonal on v's, u_i in column i above
    // the diagonal, the strict lower triangle zero (each step clears its row): u_i moves to
    // row i (contiguous).
    w.h.copy_from_slice(d);
    for i in 0..n {
        d[i] = v[i * n + i];
        for j in 0..i {
            v[i * n + j] = v[j * n + i];
        }
    }
    e[0] = 0.0;
}

/// `y ← Q y = P_{n−1}(⋯(P₁ y))` with the reflections of [`reduce_plain`].
#[inline(always)]
fn back_transform(q: &[f64], h: &[f64], n: usize, y: &mut [f64]) {
    for i in 1..n {
        if h[i] != 0.0 {
            let u = &q[i * n..i * n + i];
            let t = u.iter().zip(&y[..i]).map(|(a, b)| a * b).sum::<f64>() / h[i];
            y[..i].iter_mut().zip(u).for_each(|(yj, uj)| *yj -= t * uj);
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn leading_vectors_avx2(w: &mut SmallSymEigen, k: usize) {
    leading_vectors_plain(w, k)
}

/// Steps 3 and 4 of the module docs for the `k` largest values, [`LANES`] consecutive vectors
/// at a time, one per lane ([`inverse_iteration_lanes`]: their serial chains of divisions and
/// multiply–subtracts overlap).
#[inline(always)]
fn leading_vectors_plain(w: &mut SmallSymEigen, k: usize) {
    let n = w.n;
    let tnorm = (0..n)
        .map(|i| w.td[i].abs() + w.te[i].abs() + w.te.get(i + 1).map_or(0.0, |x| x.abs()))
        .fold(0.0f64, f64::max);
    // T = 0 (A = 0): every vector is an eigenvector; a unit norm keeps the pivots finite.
    let tnorm = if tnorm > 0.0 { tnorm } else { 1.0 };
    let mut prev_shift = f64::NAN;
    let mut cluster_start = 0;
    let (mut batch, mut shifts, mut firsts, mut nb) =
        ([0usize; LANES], [0.0f64; LANES], [0usize; LANES], 0);
    for c in 0..k {
        // Scaled eigenvalue of T (descending order), moved off the previous shift if equal.
        let lam = w.values[c] / w.scale;
        let mut shift = lam;
        if c > 0 && (prev_shift - shift).abs() <= 10.0 * f64::EPSILON * shift.abs() {
            shift = prev_shift - 10.0 * f64::EPSILON * shift.abs().max(tnorm * f64::EPSILON);
        }
        if c == 0 || (w.values[c - 1] / w.scale - lam) > CLUSTER * tnorm {
            cluster_start = c;
        }
        prev_shift = shift;
        (batch[nb], shifts[nb], firsts[nb]) = (c, shift, cluster_start);
        nb += 1;
        if nb == LANES || c + 1 == k {
            lanes_batch(w, &batch[..nb], shifts, &firsts[..nb], tnorm);
            nb = 0;
        }
    }
}

/// Vectors `cs` (consecutive, at most [`LANES`]) with their `shifts`, one per lane, into `z`
/// and then `vectors`; `firsts[q]`: the first vector of lane `q`'s cluster (`≤ cs[q]`).
#[inline(always)]
fn lanes_batch(
    w: &mut SmallSymEigen,
    cs: &[usize],
    mut shifts: [f64; LANES],
    firsts: &[usize],
    tnorm: f64,
) {
    let n = w.n;
    let mut starts = [cs[0]; LANES];
    starts[..cs.len()].copy_from_slice(cs);
    for q in cs.len()..LANES {
        shifts[q] = shifts[0];
    }
    let c0 = cs[0];
    let done = &w.z[..c0 * n];
    inverse_iteration_lanes(
        &w.td,
        &w.te,
        shifts,
        tnorm,
        starts,
        c0,
        firsts,
        done,
        &mut w.lanes,
    );
    for (q, &c) in cs.iter().enumerate() {
        let x = &w.lanes[5 * n..6 * n];
        for (zi, xi) in w.z[c * n..(c + 1) * n].iter_mut().zip(x) {
            *zi = xi[q];
        }
        emit(w, c);
    }
}

/// Lane `q` of `x` made orthogonal to its cluster's earlier vectors: the finished rows
/// `firsts[q]..c0` of `done` (unit) and the lanes `q' < q` with `c0 + q' ≥ firsts[q]`
/// (modified Gram–Schmidt in the order of the vectors).
#[inline(always)]
fn orthogonalise_lanes(x: &mut [[f64; LANES]], q: usize, c0: usize, first: usize, done: &[f64]) {
    let n = x.len();
    for v in done[first.min(c0) * n..].chunks_exact(n) {
        let p: f64 = v.iter().zip(x.iter()).map(|(a, b)| a * b[q]).sum();
        x.iter_mut().zip(v).for_each(|(xi, vi)| xi[q] -= p * vi);
    }
    for q2 in first.max(c0) - c0..q {
        let (p, vv) = x.iter().fold((0.0, 0.0), |(p, vv), xi| {
            (p + xi[q2] * xi[q], vv + xi[q2] * xi[q2])
        });
        if vv > 0.0 {
            let t = p / vv;
            x.iter_mut().for_each(|xi| xi[q] -= t * xi[q2]);
        }
    }
}

/// Column `c` of `vectors` from row `c` of `z`: `y = Q z_c`, un-reversed.
#[inline(always)]
fn emit(w: &mut SmallSymEigen, c: usize) {
    let n = w.n;
    let y = &mut w.g;
    y.copy_from_slice(&w.z[c * n..(c + 1) * n]);
    back_transform(&w.q, &w.h, n, y);
    for (r, &yr) in y.iter().enumerate() {
        w.vectors[(n - 1 - r) * n + c] = yr;
    }
}

/// The pseudo-random start of vector number `start` (the same in both inverse iterations).
#[inline(always)]
fn start_vector(start: usize, mut put: impl FnMut(usize, f64), n: usize) {
    let mut state = 0x9e37_79b9_7f4a_7c15u64 ^ (start as u64).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    for i in 0..n {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        put(i, 0.5 + (state >> 11) as f64 / (1u64 << 53) as f64);
    }
}

/// [`inverse_iteration_lanes`] for [`LANES`] consecutive vectors `c0..` at once, lane `q` of every
/// array belonging to `shift[q]` (the pivot choice made lane by lane: LU with partial pivoting of `T − shift·I`, LAPACK
/// `dgttrf`'s scheme, pivots below `ε‖T‖` replaced by `±ε‖T‖`, reciprocals stored so that the
/// solves multiply); before each solve and at the end each lane is
/// orthogonalised against its cluster's earlier vectors, finished or in lower lanes
/// ([`orthogonalise_lanes`]: simultaneous inverse iteration on the cluster, Golub & Van Loan
/// §8.2.4). Lanes beyond `firsts.len()` are padding. `lanes`: scratch of `6n`, the unit vectors returned in
/// its last `n`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn inverse_iteration_lanes(
    td: &[f64],
    te: &[f64],
    shift: [f64; LANES],
    tnorm: f64,
    start: [usize; LANES],
    c0: usize,
    firsts: &[usize],
    done: &[f64],
    lanes: &mut [[f64; LANES]],
) {
    let n = td.len();
    let tiny = f64::EPSILON * tnorm;
    let (u0, rest) = lanes.split_at_mut(n);
    let (u1, rest) = rest.split_at_mut(n);
    let (u2, rest) = rest.split_at_mut(n);
    let (lm, rest) = rest.split_at_mut(n);
    let (sw, x) = rest.split_at_mut(n);
    let guard = |p: f64| if p.abs() < tiny { tiny.copysign(p) } else { p };
    let mut dcur = shift.map(|s| td[0] - s);
    let mut ucur = [if n > 1 { te[1] } else { 0.0 }; LANES];
    for i in 0..n - 1 {
        let sub = te[i + 1];
        let unext = if i + 2 < n { te[i + 2] } else { 0.0 };
        for q in 0..LANES {
            let dnext = td[i + 1] - shift[q];
            let keep = dcur[q].abs() >= sub.abs();
            let rpiv = 1.0 / guard(if keep { dcur[q] } else { sub });
            let l = if keep { sub } else { dcur[q] } * rpiv;
            u0[i][q] = rpiv;
            u1[i][q] = if keep { ucur[q] } else { dnext };
            u2[i][q] = if keep { 0.0 } else { unext };
            lm[i][q] = l;
            sw[i][q] = if keep { 0.0 } else { 1.0 };
            dcur[q] = if keep {
                dnext - l * ucur[q]
            } else {
                ucur[q] - l * dnext
            };
            ucur[q] = if keep { unext } else { -l * unext };
        }
    }
    u0[n - 1] = dcur.map(|d| 1.0 / guard(d));
    (u1[n - 1], u2[n - 1]) = ([0.0; LANES], [0.0; LANES]);
    for (q, &st) in start.iter().enumerate() {
        start_vector(st, |i, v| x[i][q] = v, n);
    }
    for _ in 0..SOLVES {
        for (q, &first) in firsts.iter().enumerate() {
            orthogonalise_lanes(x, q, c0, first, done);
        }
        for i in 0..n - 1 {
            for q in 0..LANES {
                let (a, b, l) = (x[i][q], x[i + 1][q], lm[i][q]);
                let swapped = sw[i][q] != 0.0;
                x[i][q] = if swapped { b } else { a };
                x[i + 1][q] = if swapped { a - l * b } else { b - l * a };
            }
        }
        for q in 0..LANES {
            x[n - 1][q] *= u0[n - 1][q];
        }
        if n > 1 {
            for q in 0..LANES {
                x[n - 2][q] = (x[n - 2][q] - u1[n - 2][q] * x[n - 1][q]) * u0[n - 2][q];
            }
        }
        for i in (0..n.saturating_sub(2)).rev() {
            for q in 0..LANES {
                x[i][q] = (x[i][q] - u1[i][q] * x[i + 1][q] - u2[i][q] * x[i + 2][q]) * u0[i][q];
            }
        }
        let mut big = [0.0f64; LANES];
        for xi in x.iter() {
            for q in 0..LANES {
                big[q] = big[q].max(xi[q].abs());
            }
        }
        let inv = big.map(|b| if b > 0.0 { 1.0 / b } else { 1.0 });
        for xi in x.iter_mut() {
            for q in 0..LANES {
                xi[q] *= inv[q];
            }
        }
    }
    // Lane by lane in order: orthogonal to the cluster's earlier (final) vectors, unit length.
    for q in 0..LANES {
        if let Some(&first) = firsts.get(q) {
            orthogonalise_lanes(x, q, c0, first, done);
        }
        let norm = x.iter().map(|xi| xi[q] * xi[q]).sum::<f64>().sqrt();
        let inv = if norm > 0.0 { 1.0 / norm } else { 0.0 };
        x.iter_mut().for_each(|xi| xi[q] *= inv);
    }
}

/// Eigenvalues of the symmetric tridiagonal `T` (diagonal `d`, squared off-diagonal `e2[i] =
/// e_i²` coupling `i − 1` and `i`, `e2[0]` ignored) by the root-free QL of Reinsch (EISPACK
/// `tqlrat`); `d` returns them ascending, `e2` is destroyed.
///
/// Each QL step is the implicit step of `tql2` with the shift from the leading `2 × 2` block,
/// written in `p = γ²/c²`-type quantities so that only squares of the rotation's sine appear
/// (`s² = e_i²/r`, `r = p + e_i²`), Reinsch 1971. Deflation when `e_l² ≤ (ε·t)²`,
/// `t = max_{l' ≤ l}(|d_l'| + |e_l'|)` (the same test as `tql2`'s, squared).
pub(super) fn rational_ql(d: &mut [f64], e2: &mut [f64], n: usize) -> Result<(), LinalgError> {
    for i in 1..n {
        e2[i - 1] = e2[i];
    }
    e2[n - 1] = 0.0;
    let (mut f, mut t, mut b, mut c) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    for l in 0..n {
        let h = d[l].abs() + e2[l].sqrt();
        if t <= h {
            t = h;
            b = f64::EPSILON * t;
            c = b * b;
        }
        // e2[n − 1] = 0 ≤ c: the search stops at n − 1 at the latest.
        let mut m = l;
        while e2[m] > c {
            m += 1;
        }
        if m != l {
            let mut sweeps = 0;
            loop {
                sweeps += 1;
                if sweeps > MAX_SWEEPS {
                    return Err(LinalgError::NoConvergence);
                }
                f += rational_ql_step(d, e2, n, l, m, b);
                let h = d[l];
                if h == 0.0 || e2[l].abs() <= (c / h).abs() {
                    break;
                }
                e2[l] *= h;
                if e2[l] == 0.0 {
                    break;
                }
            }
        }
        // Insert d[l] + f among the converged d[..l] (ascending).
        let p = d[l] + f;
        let mut i = l;
        while i > 0 && p < d[i - 1] {
            d[i] = d[i - 1];
            i -= 1;
        }
        d[i] = p;
    }
    Ok(())
}

/// One rational QL step on the block `l..=m` of [`rational_ql`] (`b = ε·t` replaces a zero
/// pivot); returns the shift subtracted from `d[l + 1..]`. On return `e2[l]` holds `s²g` and
/// `d[l]` the `h` of the convergence test (the caller finishes `e2[l] = h·s²g`).
#[inline(always)]
fn rational_ql_step(d: &mut [f64], e2: &mut [f64], n: usize, l: usize, m: usize, b: f64) -> f64 {
    let s = e2[l].sqrt();
    let g = d[l];
    let p = (d[l + 1] - g) / (2.0 * s);
    let r = pythag(p, 1.0);
    d[l] = s / (p + if p >= 0.0 { r } else { -r });
    let shift = g - d[l];
    for x in d[l + 1..n].iter_mut() {
        *x -= shift;
    }
    let mut g = d[m];
    if g == 0.0 {
        g = b;
    }
    let mut h = g;
    let mut s = 0.0;
    for i in (l..m).rev() {
        let p = g * h;
        let r = p + e2[i];
        e2[i + 1] = s * r;
        s = e2[i] / r;
        d[i + 1] = h + s * (h + d[i]);
        g = d[i] - e2[i] / g;
        if g == 0.0 {
            g = b;
        }
        h = g * p / r;
    }
    e2[l] = s * g;
    d[l] = h;
    shift
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `max_c |Au_c − λ_c u_c|` over the first `k` columns and `max |UₖᵀUₖ − I|`.
    fn leading_residuals(a: &[f64], n: usize, k: usize, lam: &[f64], u: &[f64]) -> (f64, f64) {
        let (mut res, mut orth): (f64, f64) = (0.0, 0.0);
        for c in 0..k {
            for i in 0..n {
                let au: f64 = (0..n).map(|j| a[i * n + j] * u[j * n + c]).sum();
                res = res.max((au - lam[c] * u[i * n + c]).abs());
            }
            for c2 in 0..k {
                let g: f64 = (0..n).map(|j| u[j * n + c] * u[j * n + c2]).sum();
                orth = orth.max((g - if c == c2 { 1.0 } else { 0.0 }).abs());
            }
        }
        (res, orth)
    }

    fn xorshift(seed: u64) -> impl FnMut() -> f64 {
        let mut s = seed | 1;
        move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        }
    }

    /// `Y Yᵀ`-type Gram matrix of `r` random rows of length `n` (rank `min(r, n)`).
    fn low_rank(n: usize, r: usize, next: &mut impl FnMut() -> f64) -> Vec<f64> {
        let y: Vec<f64> = (0..r * n).map(|_| next()).collect();
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                a[i * n + j] = (0..r).map(|q| y[q * n + i] * y[q * n + j]).sum();
            }
        }
        a
    }

    /// `V diag(lam) Vᵀ` with `V` a product of random Householder reflections (exactly the
    /// prescribed, possibly repeated or zero, eigenvalues up to rounding).
    fn with_spectrum(lam: &[f64], next: &mut impl FnMut() -> f64) -> Vec<f64> {
        let n = lam.len();
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            a[i * n + i] = lam[i];
        }
        for _ in 0..3 {
            let v: Vec<f64> = (0..n).map(|_| next()).collect();
            let vv: f64 = v.iter().map(|x| x * x).sum();
            if vv == 0.0 {
                continue;
            }
            // A ← H A H, H = I − 2vvᵀ/vᵀv.
            let av: Vec<f64> = (0..n)
                .map(|i| (0..n).map(|j| a[i * n + j] * v[j]).sum())
                .collect();
            let vav: f64 = v.iter().zip(&av).map(|(x, y)| x * y).sum();
            for i in 0..n {
                for j in 0..n {
                    a[i * n + j] += -2.0 / vv * (v[i] * av[j] + av[i] * v[j])
                        + 4.0 * vav / (vv * vv) * v[i] * v[j];
                }
            }
        }
        for i in 0..n {
            for j in 0..i {
                let s = 0.5 * (a[i * n + j] + a[j * n + i]);
                a[i * n + j] = s;
                a[j * n + i] = s;
            }
        }
        a
    }

    /// The shape of `BBᵀ` at a dense FD shrink: the kept rows `Σ̃Vᵀ` are orthogonal, so the
    /// leading `m × m` block is diagonal; the new rows add a dense border.
    fn bordered_diagonal(n: usize, m: usize, next: &mut impl FnMut() -> f64) -> Vec<f64> {
        let mut a = low_rank(n, n + 3, next);
        for i in 0..m.min(n) {
            for j in 0..m.min(n) {
                if i != j {
                    a[i * n + j] = 0.0;
                }
            }
            a[i * n + i] = 10.0 * next().abs() + 1.0;
        }
        a
    }

    /// Checks `compute_values` + `leading_vectors(k)` against the full solver: the same
    /// eigenvalues to `10⁻¹²‖A‖`, residuals and orthogonality of the `k` vectors to `10⁻¹²`
    /// relative.
    fn check(a: &[f64], n: usize, k: usize) -> Result<(), TestCaseError> {
        let mut full = SmallSymEigen::new(n);
        full.compute(a).unwrap();
        let mut part = SmallSymEigen::new(n);
        part.compute_values(a).unwrap();
        part.leading_vectors(k);
        let norm = full.values().iter().fold(0.0f64, |x, y| x.max(y.abs()));
        let tol = 1e-12 * norm.max(f64::MIN_POSITIVE);
        for (x, y) in part.values().iter().zip(full.values()) {
            prop_assert!((x - y).abs() <= tol, "value {} vs {}", x, y);
        }
        prop_assert!(part.values().windows(2).all(|w| w[0] >= w[1]));
        let (res, orth) = leading_residuals(a, n, k, part.values(), part.vectors());
        prop_assert!(res <= tol, "residual {} (‖A‖ {})", res, norm);
        prop_assert!(orth <= 1e-12, "orthogonality {}", orth);
        Ok(())
    }

    proptest! {
        #[test]
        fn leading_pairs_of_random_matrices(n in 1usize..34, rank in 1usize..40, k in 0usize..34, seed in any::<u64>()) {
            let mut next = xorshift(seed);
            let a = low_rank(n, rank, &mut next);
            check(&a, n, k.min(n))?;
        }

        /// Repeated and zero eigenvalues (multiplicities up to `n`), at several scales.
        #[test]
        fn leading_pairs_with_repeated_values(
            lam in proptest::collection::vec(0usize..4, 1..26),
            k in 0usize..26,
            scale in -40i32..40,
            seed in any::<u64>(),
        ) {
            let mut next = xorshift(seed);
            let n = lam.len();
            let vals: Vec<f64> = lam.iter().map(|&x| x as f64 * 2f64.powi(scale)).collect();
            let a = with_spectrum(&vals, &mut next);
            check(&a, n, k.min(n))?;
        }

        /// The dense FD shrink's `BBᵀ`: a diagonal leading block with a border.
        #[test]
        fn leading_pairs_of_bordered_diagonal(n in 2usize..30, m in 1usize..20, k in 0usize..20, seed in any::<u64>()) {
            let mut next = xorshift(seed);
            let a = bordered_diagonal(n, m.min(n), &mut next);
            check(&a, n, k.min(n))?;
        }
    }

    #[test]
    fn special_matrices() {
        for n in [1usize, 2, 3, 7, 20] {
            let zero = vec![0.0; n * n];
            let ident: Vec<f64> = (0..n * n)
                .map(|t| if t % (n + 1) == 0 { 1.0 } else { 0.0 })
                .collect();
            let repeated_diag: Vec<f64> = (0..n * n)
                .map(|t| {
                    if t % (n + 1) == 0 {
                        (t % 3) as f64
                    } else {
                        0.0
                    }
                })
                .collect();
            for (name, a) in [
                ("zero", zero),
                ("identity", ident),
                ("diagonal", repeated_diag),
            ] {
                check(&a, n, n).unwrap_or_else(|e| panic!("{name}, n = {n}: {e}"));
            }
        }
        let mut e = SmallSymEigen::new(2);
        assert_eq!(
            e.compute_values(&[1.0, f64::NAN, f64::NAN, 1.0]),
            Err(LinalgError::NonFinite)
        );
        let mut e0 = SmallSymEigen::new(0);
        assert!(e0.compute_values(&[]).is_ok() && e0.values().is_empty());
        e0.leading_vectors(3);
    }
}
