//! Eigendecomposition of small symmetric matrices (`n` up to a few dozen) without a library
//! call: Householder reduction to tridiagonal form and the implicit QL iteration with
//! Wilkinson-type shifts — EISPACK's `tred2` and `tql2` (Wilkinson & Reinsch, *Handbook for
//! Automatic Computation* II, contributions II/2 and II/3; the form of the public-domain JAMA
//! library).
//!
//! # Why not faer
//!
//! The sparse FD learner's shrink ([`fd_shrink`](crate::linear::sparse)) decomposes a matrix
//! `C` of size `m + r ≤ 3m` every `m + 1` examples (`m = 10`: `n ≈ 21`). At that size faer's
//! general solver is bound by its set-up (dispatch to SIMD kernels, blocked updates sized for
//! large matrices, copies in and out of its column-major types): measured at 24 % of sparse
//! RFD-SON's time on w8a (`perf record --call-graph dwarf`, `SymEigen::compute`). The two
//! classical loops below work in place on one `n × n` array; the rotations of the QL sweep
//! touch two contiguous rows (the eigenvectors are held transposed), the Householder steps run
//! along rows where EISPACK runs down columns (the same operations in the same order), and both
//! are compiled a second time for AVX2 (without FMA: the same bits), which the compiler
//! vectorises 4-wide. On w8a (sparse RFD-SON) the row-wise loops took the decomposition from
//! 21 % of the learner's time to 17 %.
//!
//! # Method
//!
//! 1. `tred2`: `A = Q T Qᵀ` with `T` tridiagonal (diagonal `d`, off-diagonal `e`) and `Q`
//!    orthogonal, accumulated explicitly (`n − 2` Householder reflections, `≈ 4n³/3` flops).
//! 2. `tql2`: implicit QL steps on `T` with the shift from the leading `2 × 2` block, each
//!    deflating when `|e_l| ≤ ε·max_{l' ≤ l}(|d_l'| + |e_l'|)`; every plane rotation is applied
//!    to `Q`. Converges cubically; at most [`MAX_SWEEPS`] steps per eigenvalue are allowed
//!    (non-finite input is refused before).
//!
//! Both are backward stable: the computed `Λ`, `U` are exact for `A + E` with
//! `‖E‖₂ = O(ε‖A‖₂)`, and `U` is orthogonal to `O(ε)` — the same guarantee as faer's solver,
//! so the two agree on eigenvalues to `O(ε‖A‖)` and on each eigenvector of a well-separated
//! eigenvalue to `O(ε‖A‖/gap)` (up to sign). Tested against faer's [`SymEigen`]
//! (`crate::linalg`) below.
//!
//! ```
//! use sketchlearn::small_sym_eigen::SmallSymEigen;
//! let a = [2.0, 1.0, 0.0, 1.0, 2.0, 0.0, 0.0, 0.0, 5.0];
//! let mut eig = SmallSymEigen::new(3);
//! eig.compute(&a).unwrap();
//! let lam = eig.values();
//! assert!((lam[0] - 5.0).abs() < 1e-14 && (lam[1] - 3.0).abs() < 1e-14);
//! assert!((lam[2] - 1.0).abs() < 1e-14);
//! // The eigenvector of 5 is ±e₃ (a column of the row-major `vectors()`).
//! assert!((eig.vectors()[2 * 3].abs() - 1.0).abs() < 1e-14);
//! ```

use crate::linalg::{LinalgError, SymEigen};

/// Most QL steps spent on one eigenvalue before giving up (EISPACK allows 30; two or three
/// are usual).
const MAX_SWEEPS: usize = 60;

/// Reusable workspace for symmetric eigendecompositions of one small size: eigenvalues in
/// descending order, eigenvectors as the columns of a row-major `n × n` matrix (the
/// conventions of `linalg::SymEigen`). Allocates nothing per call.
#[derive(Clone, Debug, Default)]
pub struct SmallSymEigen {
    n: usize,
    /// Row-major working array: `Q` during `tred2`, `Qᵀ` (row `i` = vector `i`) in `tql2`.
    q: Vec<f64>,
    d: Vec<f64>,
    e: Vec<f64>,
    /// Scratch of [`accumulate`] (`n`).
    g: Vec<f64>,
    order: Vec<usize>,
    values: Vec<f64>,
    vectors: Vec<f64>,
}

impl SmallSymEigen {
    /// A workspace for `n × n` problems.
    pub fn new(n: usize) -> Self {
        SmallSymEigen {
            n,
            q: vec![0.0; n * n],
            d: vec![0.0; n],
            e: vec![0.0; n],
            g: vec![0.0; n],
            order: (0..n).collect(),
            values: vec![0.0; n],
            vectors: vec![0.0; n * n],
        }
    }

    /// Problem size.
    pub fn size(&self) -> usize {
        self.n
    }

    /// Decomposes the symmetric row-major `n × n` matrix `a` (only its lower triangle is read).
    pub fn compute(&mut self, a: &[f64]) -> Result<(), LinalgError> {
        let n = self.n;
        if a[..n * n].iter().any(|x| !x.is_finite()) {
            return Err(LinalgError::NonFinite);
        }
        if n == 0 {
            return Ok(());
        }
        // Indices reversed (`JAJ`, `J` the exchange matrix): `tred2` reduces from the last
        // row up, and the FD shrink's `C` has its large entries (the kept `σ²`) first; graded
        // downward, the small eigenvalues keep more relative accuracy (EISPACK's advice for
        // `tred2`). The eigenvectors are reversed back in `sorted_output`.
        // Scaled by a power of two (exact) so that the largest entry is near 1: the QL sweep's
        // intermediate quotients and squares stay far from overflow and underflow whatever
        // the scale of the input.
        let big = (0..n)
            .flat_map(|i| a[i * n..i * n + i + 1].iter())
            .fold(0.0f64, |acc, x| acc.max(x.abs()));
        let scale = if big > 0.0 {
            2f64.powi(big.log2().round() as i32)
        } else {
            1.0
        };
        // `x / 2ᵏ` and `x · 2⁻ᵏ` are the same number whenever `2⁻ᵏ` is one (both are the
        // correctly rounded `x·2⁻ᵏ`, subnormal results included), and a multiplication costs
        // a fraction of a division (`n(n+1)/2` of them a call). `scale` is `2ᵏ`, or `∞` when
        // `powi` overflows (then `1/∞ = 0` and `x·0 = x/∞ = ±0`, the same sign), or `0` or
        // a subnormal `2ᵏ` whose reciprocal overflows: there the division is kept.
        let inverse = 1.0 / scale;
        let exact = inverse.is_finite();
        for i in 0..n {
            for j in 0..=i {
                let x = a[i * n + j];
                let v = if exact { x * inverse } else { x / scale };
                self.q[(n - 1 - i) * n + (n - 1 - j)] = v;
                self.q[(n - 1 - j) * n + (n - 1 - i)] = v;
            }
        }
        tridiagonal_ql(self)?;
        self.d.iter_mut().for_each(|x| *x *= scale);
        self.sorted_output();
        if self.values.iter().any(|x| !x.is_finite()) {
            return Err(LinalgError::NonFinite);
        }
        Ok(())
    }

    /// Eigenvalues in descending order (valid after [`SmallSymEigen::compute`]).
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// Eigenvectors as the columns of a row-major `n × n` matrix, in the order of
    /// [`SmallSymEigen::values`].
    pub fn vectors(&self) -> &[f64] {
        &self.vectors
    }

    /// `values`/`vectors` from `d` and the rows of `Qᵀ`, by decreasing eigenvalue (ties keep
    /// `tql2`'s order: a stable sort).
    fn sorted_output(&mut self) {
        let n = self.n;
        descending_order(&self.d, &mut self.order);
        for (k, &src) in self.order.iter().enumerate() {
            self.values[k] = self.d[src];
            for i in 0..n {
                self.vectors[i * n + k] = self.q[src * n + (n - 1 - i)];
            }
        }
    }
}

/// `order` ← the indices of `d` by decreasing value (`total_cmp`), ties in index order: what a
/// stable sort gives, by insertion (`d` is a few dozen long: the library's sort cost more in
/// set-up than its comparisons, 1.6 % of a9a's RFD-SON member).
fn descending_order(d: &[f64], order: &mut Vec<usize>) {
    order.clear();
    for (k, x) in d.iter().enumerate() {
        let mut p = order.len();
        while p > 0 && x.total_cmp(&d[order[p - 1]]).is_gt() {
            p -= 1;
        }
        order.insert(p, k);
    }
}

/// [`tred2`], then [`tql2`] on the transposed `Q`: compiled a second time for AVX2 and run that
/// way when the CPU has it (4-wide rotations instead of 2-wide). AVX2 only, not FMA: the same
/// products and sums, each rounded once, in the same order, so the same bits on every machine.
fn tridiagonal_ql(w: &mut SmallSymEigen) -> Result<(), LinalgError> {
    #[cfg(target_arch = "x86_64")]
    if crate::linear::sparse::has_avx2() {
        // SAFETY: the CPU supports AVX2 (checked just above).
        return unsafe { tridiagonal_ql_avx2(w) };
    }
    tridiagonal_ql_with::<Plain>(w)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn tridiagonal_ql_avx2(w: &mut SmallSymEigen) -> Result<(), LinalgError> {
    tridiagonal_ql_with::<Avx2>(w)
}

/// The two innermost loops of the decomposition, written twice: plain ([`Plain`]), and with
/// explicit 4-wide AVX2 operations ([`Avx2`], used only on the AVX2 path). Both give the
/// same bits: every entry gets the same products and sums, each rounded once, in the same
/// order (no FMA); only how many entries one instruction handles differs.
trait Lanes {
    /// Rows `i`, `i + 1` of `qt` ← the plane rotation `(c, s)` of a QL step.
    fn rotate(qt: &mut [f64], n: usize, i: usize, c: f64, s: f64);
    /// `row_j −= d_j·ek + e_j·dk` for `j < row.len()` (a [`reflect`] update).
    fn sub_two_products(row: &mut [f64], d: &[f64], e: &[f64], ek: f64, dk: f64);
}

/// The plain loops (what the compiler vectorises by itself).
struct Plain;

impl Lanes for Plain {
    #[inline(always)]
    fn rotate(qt: &mut [f64], n: usize, i: usize, c: f64, s: f64) {
        rotate(qt, n, i, c, s)
    }

    #[inline(always)]
    fn sub_two_products(row: &mut [f64], d: &[f64], e: &[f64], ek: f64, dk: f64) {
        sub_two_products(row, d, e, ek, dk)
    }
}

/// The loops of [`avx2`]; only [`tridiagonal_ql_avx2`] uses them, after the CPU check.
#[cfg(target_arch = "x86_64")]
struct Avx2;

#[cfg(target_arch = "x86_64")]
impl Lanes for Avx2 {
    #[inline(always)]
    fn rotate(qt: &mut [f64], n: usize, i: usize, c: f64, s: f64) {
        // SAFETY: used only by `tridiagonal_ql_avx2`, run when the CPU has AVX2.
        unsafe { avx2::rotate(qt, n, i, c, s) }
    }

    #[inline(always)]
    fn sub_two_products(row: &mut [f64], d: &[f64], e: &[f64], ek: f64, dk: f64) {
        // SAFETY: as above.
        unsafe { avx2::sub_two_products(row, d, e, ek, dk) }
    }
}

/// The decomposition with the loops of `L` ([`Plain`], or [`Avx2`]: the same bits).
#[inline(always)]
fn tridiagonal_ql_with<L: Lanes>(w: &mut SmallSymEigen) -> Result<(), LinalgError> {
    let n = w.n;
    tred2::<L>(&mut w.q, &mut w.d, &mut w.e, &mut w.g, n);
    transpose_square(&mut w.q, n);
    tql2::<L>(&mut w.q, &mut w.d, &mut w.e, n)
}

/// In-place transpose of a row-major `n × n` matrix.
#[inline(always)]
fn transpose_square(a: &mut [f64], n: usize) {
    for i in 0..n {
        for j in 0..i {
            a.swap(i * n + j, j * n + i);
        }
    }
}

/// Householder reduction of the symmetric `v` (row-major, both triangles) to tridiagonal form:
/// on return `d` is the diagonal, `e[1..]` the sub-diagonal (`e[0] = 0`) and `v` the orthogonal
/// `Q` with `A = Q T Qᵀ` (EISPACK `tred2`).
#[inline(always)]
#[allow(clippy::redundant_closure)] // the closure carries `inline(always)`; the fn item did not inline
fn tred2<L: Lanes>(v: &mut [f64], d: &mut [f64], e: &mut [f64], g: &mut [f64], n: usize) {
    // Closures marked `inline(always)`: passed as `impl Fn`, `reflect` and `transform_rows`
    // were left out of line (as `Fn::call` and `tred2::{{closure}}`), compiled without AVX2
    // even on the AVX2 path (8 % of a9a's default CPU, scalar).
    householder(
        v,
        d,
        e,
        n,
        #[inline(always)]
        |v, d, e, n, i, h| reflect::<L>(v, d, e, n, i, h),
    );
    accumulate(
        v,
        d,
        n,
        #[inline(always)]
        |v, d, i| transform_rows(v, d, g, n, i),
    );
    e[0] = 0.0;
}

/// The reduction of [`tred2`], with `step` applying the reflection of step `i` (vector in
/// `d[..i]`, `h` half its squared norm) to the leading block.
#[inline(always)]
fn householder(
    v: &mut [f64],
    d: &mut [f64],
    e: &mut [f64],
    n: usize,
    step: impl Fn(&mut [f64], &mut [f64], &mut [f64], usize, usize, f64),
) {
    d.copy_from_slice(&v[(n - 1) * n..n * n]);
    for i in (1..n).rev() {
        let scale: f64 = d[..i].iter().map(|x| x.abs()).sum();
        let mut h = 0.0;
        if scale == 0.0 {
            e[i] = d[i - 1];
            for j in 0..i {
                d[j] = v[(i - 1) * n + j];
                v[i * n + j] = 0.0;
                v[j * n + i] = 0.0;
            }
        } else {
            for x in d[..i].iter_mut() {
                *x /= scale;
                h += *x * *x;
            }
            let f = d[i - 1];
            let g = if f > 0.0 { -h.sqrt() } else { h.sqrt() };
            e[i] = scale * g;
            h -= f * g;
            d[i - 1] = f - g;
            e[..i].iter_mut().for_each(|x| *x = 0.0);
            step(v, d, e, n, i, h);
        }
        d[i] = h;
    }
}

/// Applies the Householder reflection of step `i` of [`tred2`] (vector in `d[..i]`, `h` half
/// its squared norm) to the leading `i × i` block of `v`, storing the vector in column `i`.
#[inline(always)]
///
/// The loops run along the rows of `v` (contiguous) where EISPACK runs down its columns: every
/// entry receives the same terms in the same order (`e_j` gets row `j`'s terms `v_jj'·d_j'`,
/// `j' < j`, in order, then `v_jj·d_j`, then `v_kj·d_k` for `k > j` in order; every `v_kj` is
/// updated once from the same numbers), so the result is the same to the bit.
fn reflect<L: Lanes>(v: &mut [f64], d: &mut [f64], e: &mut [f64], n: usize, i: usize, h: f64) {
    for j in 0..i {
        v[j * n + i] = d[j];
    }
    // e = (lower triangle of v, mirrored)·d; e[..i] is zero on entry. Entry `k` is row `k`'s
    // terms `v_kj·d_j`, `j ≤ k`, summed in order from `e_k` (which no row before `k` touches),
    // then the terms `v_k'k·d_k'` of the rows `k' > k` added in order of `k'`. The row sums do
    // not depend on each other ([`row_sums`], four at a time); the column terms follow, each
    // row's added along `e` (contiguous): the same operations in the same order for every
    // entry as one loop over the rows doing both (which waited on each row sum's additions).
    row_sums(v, d, e, n, i);
    for k in 1..i {
        let dk = d[k];
        for (ej, &vkj) in e[..k].iter_mut().zip(&v[k * n..k * n + k]) {
            *ej += vkj * dk;
        }
    }
    reflection_shift(d, e, i, h);
    for k in 0..i {
        let (ek, dk) = (e[k], d[k]);
        L::sub_two_products(&mut v[k * n..k * n + k + 1], d, e, ek, dk);
    }
    for j in 0..i {
        d[j] = v[(i - 1) * n + j];
        v[i * n + j] = 0.0;
    }
}

/// `e_k ← e_k + Σ_{j ≤ k} v_kj·d_j` (summed in order of `j`) for `k < i`, four rows at a time:
/// their sums are independent chains of additions, interleaved.
#[inline(always)]
fn row_sums(v: &[f64], d: &[f64], e: &mut [f64], n: usize, i: usize) {
    let mut k = 0;
    while k + 4 <= i {
        let r = |q: usize| &v[(k + q) * n..(k + q) * n + k + q + 1];
        let (r0, r1, r2, r3) = (r(0), r(1), r(2), r(3));
        let (mut a0, mut a1, mut a2, mut a3) = (e[k], e[k + 1], e[k + 2], e[k + 3]);
        for (j, &dj) in d[..k].iter().enumerate() {
            a0 += r0[j] * dj;
            a1 += r1[j] * dj;
            a2 += r2[j] * dj;
            a3 += r3[j] * dj;
        }
        a0 += r0[k] * d[k];
        for (j, &dj) in d[k..k + 2].iter().enumerate() {
            a1 += r1[k + j] * dj;
        }
        for (j, &dj) in d[k..k + 3].iter().enumerate() {
            a2 += r2[k + j] * dj;
        }
        for (j, &dj) in d[k..k + 4].iter().enumerate() {
            a3 += r3[k + j] * dj;
        }
        e[k..k + 4].copy_from_slice(&[a0, a1, a2, a3]);
        k += 4;
    }
    for k in k..i {
        let mut acc = e[k];
        for (&vkj, &dj) in v[k * n..k * n + k + 1].iter().zip(&d[..=k]) {
            acc += vkj * dj;
        }
        e[k] = acc;
    }
}

/// The middle of a [`reflect`] step: `e ← p − (uᵀp/2h)·u` with `p = e/h`, `u = d[..i]`.
#[inline(always)]
fn reflection_shift(d: &[f64], e: &mut [f64], i: usize, h: f64) {
    let mut f = 0.0;
    for j in 0..i {
        e[j] /= h;
        f += e[j] * d[j];
    }
    let hh = f / (h + h);
    for j in 0..i {
        e[j] -= hh * d[j];
    }
}

/// The last part of [`tred2`]: forms `Q` from the stored reflections, `apply(v, d, i)`
/// applying reflection `i` (vector `v[..=i][i + 1]`, divided by `h` in `d[..=i]`) to the
/// leading columns.
#[inline(always)]
fn accumulate(
    v: &mut [f64],
    d: &mut [f64],
    n: usize,
    mut apply: impl FnMut(&mut [f64], &[f64], usize),
) {
    for i in 0..n - 1 {
        v[(n - 1) * n + i] = v[i * n + i];
        v[i * n + i] = 1.0;
        let h = d[i + 1];
        if h != 0.0 {
            for k in 0..=i {
                d[k] = v[k * n + i + 1] / h;
            }
            apply(v, d, i);
        }
        for k in 0..=i {
            v[k * n + i + 1] = 0.0;
        }
    }
    for j in 0..n {
        d[j] = v[(n - 1) * n + j];
        v[(n - 1) * n + j] = 0.0;
    }
    v[(n - 1) * n + n - 1] = 1.0;
}

/// Step `i` of [`accumulate`] row by row (contiguous; `g`: scratch): column `j`'s
/// `g_j = Σ_k v_{k,i+1}·v_kj`, in the order of `k` from −0.0 as `Iterator::sum`, then
/// `v_kj −= g_j·d_k` — the same numbers as EISPACK's column loop (`g_j` reads columns `j` and
/// `i + 1`, which no earlier update touches).
#[inline(always)]
fn transform_rows(v: &mut [f64], d: &[f64], g: &mut [f64], n: usize, i: usize) {
    let g = &mut g[..=i];
    g.fill(-0.0);
    for k in 0..=i {
        let row = &v[k * n..k * n + i + 2];
        let vk = row[i + 1];
        for (gj, &vkj) in g.iter_mut().zip(&row[..=i]) {
            *gj += vk * vkj;
        }
    }
    for k in 0..=i {
        let dk = d[k];
        for (vkj, &gj) in v[k * n..k * n + i + 1].iter_mut().zip(g.iter()) {
            *vkj -= gj * dk;
        }
    }
}

/// Implicit QL on the tridiagonal `(d, e)` from [`tred2`], rotating the rows of `qt = Qᵀ`:
/// on return `d` holds the eigenvalues and row `i` of `qt` the eigenvector of `d[i]`
/// (EISPACK `tql2`).
#[inline(always)]
fn tql2<L: Lanes>(
    qt: &mut [f64],
    d: &mut [f64],
    e: &mut [f64],
    n: usize,
) -> Result<(), LinalgError> {
    for i in 1..n {
        e[i - 1] = e[i];
    }
    e[n - 1] = 0.0;
    let mut f = 0.0;
    let mut tst1: f64 = 0.0;
    let eps = f64::EPSILON;
    for l in 0..n {
        tst1 = tst1.max(d[l].abs() + e[l].abs());
        // e[n − 1] = 0, so the search stops at n − 1 at the latest.
        let mut m = l;
        while m < n - 1 && e[m].abs() > eps * tst1 {
            m += 1;
        }
        if m > l {
            let mut sweeps = 0;
            loop {
                sweeps += 1;
                if sweeps > MAX_SWEEPS {
                    return Err(LinalgError::NoConvergence);
                }
                f += ql_step::<L>(qt, d, e, n, l, m);
                if e[l].abs() <= eps * tst1 {
                    break;
                }
            }
        }
        d[l] += f;
        e[l] = 0.0;
    }
    Ok(())
}

/// One implicit QL step on the unreduced block `l..=m` of [`tql2`]; returns the shift applied
/// to `d[l..]` (accumulated by the caller).
#[inline(always)]
fn ql_step<L: Lanes>(
    qt: &mut [f64],
    d: &mut [f64],
    e: &mut [f64],
    n: usize,
    l: usize,
    m: usize,
) -> f64 {
    let g = d[l];
    let mut p = (d[l + 1] - g) / (2.0 * e[l]);
    let mut r = pythag(p, 1.0);
    if p < 0.0 {
        r = -r;
    }
    d[l] = e[l] / (p + r);
    d[l + 1] = e[l] * (p + r);
    let dl1 = d[l + 1];
    let shift = g - d[l];
    for x in d[l + 2..n].iter_mut() {
        *x -= shift;
    }
    p = d[m];
    let (mut c, mut c2, mut c3) = (1.0, 1.0, 1.0);
    let el1 = e[l + 1];
    let (mut s, mut s2) = (0.0, 0.0);
    for i in (l..m).rev() {
        c3 = c2;
        c2 = c;
        s2 = s;
        let g = c * e[i];
        let h = c * p;
        r = pythag(p, e[i]);
        e[i + 1] = s * r;
        s = e[i] / r;
        c = p / r;
        p = c * d[i] - s * g;
        d[i + 1] = h + s * (c * g + s * d[i]);
        L::rotate(qt, n, i, c, s);
    }
    p = -s * s2 * c3 * el1 * e[l] / dl1;
    e[l] = s * p;
    d[l] = c * p;
    shift
}

/// `√(a² + b²)`: the plain formula while the squares cannot overflow or underflow (what the
/// sums of squared gradients in `C` give), `hypot` (slower: a libm call) otherwise.
#[inline]
fn pythag(a: f64, b: f64) -> f64 {
    let big = a.abs().max(b.abs());
    if big < 1e150 && big > 1e-150 {
        (a * a + b * b).sqrt()
    } else {
        a.hypot(b)
    }
}

/// Rows `i`, `i + 1` of `qt` ← the plane rotation `(c, s)` of a QL step.
#[inline]
fn rotate(qt: &mut [f64], n: usize, i: usize, c: f64, s: f64) {
    let (lo, hi) = qt[i * n..(i + 2) * n].split_at_mut(n);
    for (a, b) in lo.iter_mut().zip(hi.iter_mut()) {
        let h = *b;
        *b = s * *a + c * h;
        *a = c * *a - s * h;
    }
}

/// `row_j −= d_j·ek + e_j·dk` for `j < row.len()`: one step of [`reflect`]'s rank-two update.
#[inline(always)]
fn sub_two_products(row: &mut [f64], d: &[f64], e: &[f64], ek: f64, dk: f64) {
    for (j, vkj) in row.iter_mut().enumerate() {
        *vkj -= d[j] * ek + e[j] * dk;
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::{_mm256_add_pd, _mm256_loadu_pd, _mm256_mul_pd, _mm256_set1_pd};
    use std::arch::x86_64::{_mm256_storeu_pd as store, _mm256_sub_pd as sub};

    /// [`rotate`](super::rotate) four columns at a time, one AVX2 register each, then the
    /// last `n mod 4` one by one: every entry gets the same two products and one sum or
    /// difference, each rounded once, so the same bits. (The plain loop, compiled for AVX2,
    /// was vectorised eight columns at a time with a scalar tail: at the FD shrink's `n = 20`
    /// two vector steps and four scalar ones, about twice the instructions; the rotations are
    /// a fifth of the decomposition's.)
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) fn rotate(qt: &mut [f64], n: usize, i: usize, c: f64, s: f64) {
        let (lo, hi) = qt[i * n..(i + 2) * n].split_at_mut(n);
        let (cv, sv) = (_mm256_set1_pd(c), _mm256_set1_pd(s));
        let whole = n / 4 * 4;
        let (a, b) = (lo.as_mut_ptr(), hi.as_mut_ptr());
        for k in (0..whole).step_by(4) {
            // SAFETY: `k + 4 ≤ n`, the length of both rows.
            unsafe {
                let x = _mm256_loadu_pd(a.add(k));
                let h = _mm256_loadu_pd(b.add(k));
                let nb = _mm256_add_pd(_mm256_mul_pd(sv, x), _mm256_mul_pd(cv, h));
                let na = sub(_mm256_mul_pd(cv, x), _mm256_mul_pd(sv, h));
                store(b.add(k), nb);
                store(a.add(k), na);
            }
        }
        for (x, y) in lo[whole..].iter_mut().zip(hi[whole..].iter_mut()) {
            let h = *y;
            *y = s * *x + c * h;
            *x = c * *x - s * h;
        }
    }

    /// [`sub_two_products`](super::sub_two_products) four entries at a time, then the last
    /// `len mod 4` one by one (the rows of [`reflect`](super::reflect)'s update are 1 to `n`
    /// long, so the compiler's eight-wide loop ran mostly its scalar tail): the same bits.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) fn sub_two_products(row: &mut [f64], d: &[f64], e: &[f64], ek: f64, dk: f64) {
        let len = row.len();
        let (d, e) = (&d[..len], &e[..len]);
        let (ekv, dkv) = (_mm256_set1_pd(ek), _mm256_set1_pd(dk));
        let whole = len / 4 * 4;
        let (r, dp, ep) = (row.as_mut_ptr(), d.as_ptr(), e.as_ptr());
        for j in (0..whole).step_by(4) {
            // SAFETY: `j + 4 ≤ len`, the length of the three slices.
            unsafe {
                let t = _mm256_add_pd(
                    _mm256_mul_pd(_mm256_loadu_pd(dp.add(j)), ekv),
                    _mm256_mul_pd(_mm256_loadu_pd(ep.add(j)), dkv),
                );
                store(r.add(j), sub(_mm256_loadu_pd(r.add(j)), t));
            }
        }
        for j in whole..len {
            row[j] -= d[j] * ek + e[j] * dk;
        }
    }
}

/// Largest size decomposed by [`SmallSymEigen`] in the sparse FD shrink ([`FdEigen`]); beyond
/// it faer's blocked solver is used (the scalar `O(n³)` loops lose to it on large matrices).
pub const SMALL_MAX: usize = 64;

/// The eigen-workspace of the FD shrinks, sparse-time (`fd_shrink`) and dense
/// (`sketch::FrequentDirections`): [`SmallSymEigen`] up to [`SMALL_MAX`], faer's `SymEigen`
/// beyond — the one place that choice is made. (Since the reversed, power-of-two-scaled input of
/// [`SmallSymEigen::compute`], `sparse_equivalence` passes at 1e-9 with both learners on it; on
/// a9a the dense default's CPU fell by about 11 %, branch a9a9.)
#[derive(Debug)]
pub(crate) enum FdEigen {
    Small(SmallSymEigen),
    Large(SymEigen),
}

impl FdEigen {
    /// A workspace for `n × n` problems.
    pub(crate) fn new(n: usize) -> Self {
        if n <= SMALL_MAX {
            FdEigen::Small(SmallSymEigen::new(n))
        } else {
            FdEigen::Large(SymEigen::new(n))
        }
    }

    pub(crate) fn size(&self) -> usize {
        match self {
            FdEigen::Small(e) => e.size(),
            FdEigen::Large(e) => e.size(),
        }
    }

    pub(crate) fn compute(&mut self, a: &[f64]) -> Result<(), LinalgError> {
        match self {
            FdEigen::Small(e) => e.compute(a),
            FdEigen::Large(e) => e.compute(a),
        }
    }

    pub(crate) fn values(&self) -> &[f64] {
        match self {
            FdEigen::Small(e) => e.values(),
            FdEigen::Large(e) => e.values(),
        }
    }

    pub(crate) fn vectors(&self) -> &[f64] {
        match self {
            FdEigen::Small(e) => e.vectors(),
            FdEigen::Large(e) => e.vectors(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `max |AU − UΛ|` and `max |UᵀU − I|`.
    fn residuals(a: &[f64], n: usize, lam: &[f64], u: &[f64]) -> (f64, f64) {
        let (mut res, mut orth): (f64, f64) = (0.0, 0.0);
        for i in 0..n {
            for k in 0..n {
                let au: f64 = (0..n).map(|j| a[i * n + j] * u[j * n + k]).sum();
                res = res.max((au - lam[k] * u[i * n + k]).abs());
                let g: f64 = (0..n).map(|j| u[j * n + i] * u[j * n + k]).sum();
                orth = orth.max((g - if i == k { 1.0 } else { 0.0 }).abs());
            }
        }
        (res, orth)
    }

    fn symmetric(n: usize, vals: &[f64]) -> Vec<f64> {
        let mut a = vec![0.0; n * n];
        let mut t = 0;
        for i in 0..n {
            for j in 0..=i {
                a[i * n + j] = vals[t % vals.len()];
                a[j * n + i] = a[i * n + j];
                t += 1;
            }
        }
        a
    }

    /// EISPACK's `tred2` as published: its two column loops, the reference of the row-wise
    /// [`reflect`] and [`transform_rows`].
    fn tred2_by_columns(v: &mut [f64], d: &mut [f64], e: &mut [f64], n: usize) {
        householder(v, d, e, n, |v, d, e, n, i, h| {
            for j in 0..i {
                let f = d[j];
                v[j * n + i] = f;
                let mut g = e[j] + v[j * n + j] * f;
                for k in j + 1..i {
                    g += v[k * n + j] * d[k];
                    e[k] += v[k * n + j] * f;
                }
                e[j] = g;
            }
            reflection_shift(d, e, i, h);
            for j in 0..i {
                let (f, g) = (d[j], e[j]);
                for k in j..i {
                    v[k * n + j] -= f * e[k] + g * d[k];
                }
                d[j] = v[(i - 1) * n + j];
                v[i * n + j] = 0.0;
            }
        });
        accumulate(v, d, n, |v, d, i| {
            for j in 0..=i {
                let g: f64 = (0..=i).map(|k| v[k * n + i + 1] * v[k * n + j]).sum();
                for k in 0..=i {
                    v[k * n + j] -= g * d[k];
                }
            }
        });
        e[0] = 0.0;
    }

    proptest! {
        /// The row-wise Householder loops give EISPACK's column loops' `Q`, `d`, `e` to the
        /// bit (same operations in the same order), on random symmetric matrices with zero
        /// rows and exact zeros among them (the `scale == 0` and `h == 0` branches).
        #[test]
        fn row_loops_equal_eispack_to_the_bit(
            n in 1usize..26,
            vals in proptest::collection::vec(-3i32..4, 1..64),
            div in 1u32..1000,
        ) {
            let a = symmetric(n, &vals.iter().map(|&x| x as f64 / div as f64).collect::<Vec<_>>());
            let (mut v1, mut d1, mut e1, mut g) = (a.clone(), vec![0.0; n], vec![0.0; n], vec![0.0; n]);
            tred2::<Plain>(&mut v1, &mut d1, &mut e1, &mut g, n);
            let (mut v2, mut d2, mut e2) = (a, vec![0.0; n], vec![0.0; n]);
            tred2_by_columns(&mut v2, &mut d2, &mut e2, n);
            let bits = |x: &[f64]| x.iter().map(|y| y.to_bits()).collect::<Vec<_>>();
            prop_assert_eq!(bits(&v1), bits(&v2));
            prop_assert_eq!(bits(&d1), bits(&d2));
            prop_assert_eq!(bits(&e1), bits(&e2));
        }

        /// Backward stability: `AU = UΛ` and `UᵀU = I` to `O(nε‖A‖)`, eigenvalues equal to
        /// faer's to the same order, on random symmetric matrices (of low rank too, as the
        /// FD shrink's `C`).
        #[test]
        fn agrees_with_faer(n in 1usize..34, rank in 1usize..34, seed in any::<u64>()) {
            let mut s = seed | 1;
            let mut next = || {
                s ^= s << 13; s ^= s >> 7; s ^= s << 17;
                (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
            };
            let r = rank.min(n);
            let y: Vec<f64> = (0..r * n).map(|_| next()).collect();
            let mut a = vec![0.0; n * n];
            for i in 0..n {
                for j in 0..n {
                    a[i * n + j] = (0..r).map(|q| y[q * n + i] * y[q * n + j]).sum();
                }
            }
            let mut small = SmallSymEigen::new(n);
            small.compute(&a).unwrap();
            let mut big = SymEigen::new(n);
            big.compute(&a).unwrap();
            let norm = big.values()[0].abs().max(1e-300);
            let (res, orth) = residuals(&a, n, small.values(), small.vectors());
            prop_assert!(res <= 1e-13 * norm * n as f64, "residual {res}");
            prop_assert!(orth <= 1e-13 * n as f64, "orthogonality {orth}");
            for (x, y) in small.values().iter().zip(big.values()) {
                prop_assert!((x - y).abs() <= 1e-13 * norm * n as f64, "{x} vs {y}");
            }
            prop_assert!(small.values().windows(2).all(|w| w[0] >= w[1]));
        }
    }

    proptest! {
        /// The AVX2 build (its 4-wide loops, [`Avx2`]) gives the plain build's `Qᵀ` and
        /// eigenvalues to the bit, for sizes around the vector width (tails of 0–3 columns).
        #[cfg(target_arch = "x86_64")]
        #[test]
        fn avx2_build_equals_the_plain_build_to_the_bit(
            n in 1usize..26,
            vals in proptest::collection::vec(-1000i32..1000, 1..64),
            div in 1u32..1000,
        ) {
            if !crate::linear::sparse::has_avx2() {
                return Ok(());
            }
            let a = symmetric(n, &vals.iter().map(|&x| x as f64 / div as f64).collect::<Vec<_>>());
            let mut plain = SmallSymEigen::new(n);
            plain.q.copy_from_slice(&a);
            let mut wide = plain.clone();
            tridiagonal_ql_with::<Plain>(&mut plain).unwrap();
            // SAFETY: the CPU supports AVX2 (checked above).
            unsafe { tridiagonal_ql_avx2(&mut wide) }.unwrap();
            let bits = |x: &[f64]| x.iter().map(|y| y.to_bits()).collect::<Vec<_>>();
            prop_assert_eq!(bits(&plain.q), bits(&wide.q));
            prop_assert_eq!(bits(&plain.d), bits(&wide.d));
        }
    }

    proptest! {
        /// What [`SmallSymEigen::compute`]'s input scaling relies on: dividing by the scale
        /// `2ᵏ = 2f64.powi(k)` is multiplying by `1/2ᵏ` whenever that reciprocal is finite,
        /// for every `k` the scale can take and entries of any size, subnormal ones included.
        #[test]
        fn scaling_by_the_reciprocal_is_the_division(
            k in -1080i32..1030,
            mantissa in any::<u64>(),
            exp in -1080i32..1030,
        ) {
            let scale = 2f64.powi(k);
            let inverse = 1.0 / scale;
            prop_assume!(inverse.is_finite());
            let x = (1.0 + (mantissa >> 12) as f64 / (1u64 << 52) as f64)
                * 2f64.powi(exp.clamp(-1022, 1023))
                * if exp < -1022 { 2f64.powi(exp + 1022) } else { 1.0 };
            for x in [x, -x] {
                prop_assert_eq!((x * inverse).to_bits(), (x / scale).to_bits(), "{} {}", x, k);
            }
        }
    }

    proptest! {
        /// The insertion order of [`descending_order`] is the stable sort's, with ties, signed
        /// zeros and infinities among the values.
        #[test]
        fn descending_order_is_the_stable_sort(vals in proptest::collection::vec(0usize..7, 0..40)) {
            let pool = [1.5, -0.0, 0.0, -2.0, f64::INFINITY, 1.5, f64::NEG_INFINITY];
            let d: Vec<f64> = vals.iter().map(|&v| pool[v]).collect();
            let mut want: Vec<usize> = (0..d.len()).collect();
            want.sort_by(|&x, &y| d[y].total_cmp(&d[x]));
            let mut got = Vec::new();
            descending_order(&d, &mut got);
            prop_assert_eq!(got, want);
        }
    }

    /// `Q·diag(λ)·Qᵀ` with `Q` a product of three random reflections (exact multiplicities
    /// of `λ` stay multiplicities up to rounding).
    fn with_spectrum(lam: &[f64], next: &mut impl FnMut() -> f64) -> Vec<f64> {
        let n = lam.len();
        let mut q: Vec<f64> = (0..n * n)
            .map(|t| if t % (n + 1) == 0 { 1.0 } else { 0.0 })
            .collect();
        for _ in 0..3 {
            let v: Vec<f64> = (0..n).map(|_| next()).collect();
            let vv: f64 = v.iter().map(|x| x * x).sum();
            if vv == 0.0 {
                continue;
            }
            for c in 0..n {
                let dot: f64 = (0..n).map(|r| v[r] * q[r * n + c]).sum();
                for r in 0..n {
                    q[r * n + c] -= 2.0 * dot / vv * v[r];
                }
            }
        }
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                a[i * n + j] = (0..n).map(|t| q[i * n + t] * lam[t] * q[j * n + t]).sum();
            }
        }
        a
    }

    proptest! {
        /// Clustered and repeated eigenvalues, exact zeros (rank-deficient), a zero row and
        /// column, scales from 1e-200 to 1e200 (what the FD shrinks' Gram matrices can be):
        /// residual `O(nε‖A‖)`, orthonormal vectors, sorted finite values.
        #[test]
        fn clusters_zeros_and_scales(
            n in 2usize..26,
            distinct in 1usize..5,
            zeros in 0usize..26,
            zero_row in any::<bool>(),
            exp in -200i32..201,
            seed in any::<u64>(),
        ) {
            let mut s = seed | 1;
            let mut next = || {
                s ^= s << 13; s ^= s >> 7; s ^= s << 17;
                (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
            };
            // `distinct` values (some within 1e-12 of each other), the last `zeros` exactly 0.
            let pool: Vec<f64> = (0..distinct)
                .map(|t| if t % 2 == 1 { 1.0 + 1e-12 * t as f64 } else { 1.0 + t as f64 })
                .collect();
            let lam: Vec<f64> = (0..n)
                .map(|t| if t + zeros >= n { 0.0 } else { pool[t % distinct] })
                .collect();
            let mut a = with_spectrum(&lam, &mut next);
            if zero_row {
                for j in 0..n {
                    a[j] = 0.0;
                    a[j * n] = 0.0;
                }
            }
            let scale = 10f64.powi(exp);
            a.iter_mut().for_each(|x| *x *= scale);
            let mut e = SmallSymEigen::new(n);
            e.compute(&a).unwrap();
            let norm = a.iter().map(|x| x.abs()).fold(0.0, f64::max) * n as f64;
            let (res, orth) = residuals(&a, n, e.values(), e.vectors());
            prop_assert!(e.values().iter().chain(e.vectors()).all(|x| x.is_finite()));
            prop_assert!(res <= 1e-13 * norm.max(f64::MIN_POSITIVE), "residual {res} vs {norm}");
            prop_assert!(orth <= 1e-13 * n as f64, "orthogonality {orth}");
            prop_assert!(e.values().windows(2).all(|w| w[0] >= w[1]));
        }
    }

    #[test]
    fn special_matrices() {
        for n in [1, 2, 5] {
            // Zero, identity, diagonal with repeated values.
            for a in [
                vec![0.0; n * n],
                symmetric(n, &[0.0]),
                (0..n * n)
                    .map(|t| {
                        if t % (n + 1) == 0 {
                            (t % 3) as f64
                        } else {
                            0.0
                        }
                    })
                    .collect(),
            ] {
                let mut e = SmallSymEigen::new(n);
                e.compute(&a).unwrap();
                let (res, orth) = residuals(&a, n, e.values(), e.vectors());
                assert!(res < 1e-14 && orth < 1e-14, "n = {n}");
            }
        }
        let mut e = SmallSymEigen::new(2);
        assert_eq!(
            e.compute(&[1.0, f64::NAN, f64::NAN, 1.0]),
            Err(LinalgError::NonFinite)
        );
        let mut e0 = SmallSymEigen::new(0);
        assert!(e0.compute(&[]).is_ok() && e0.values().is_empty());
    }
}
