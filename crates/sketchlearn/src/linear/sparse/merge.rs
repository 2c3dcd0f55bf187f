//! Merging sparse-time learners ([`MergeShare`], iterative parameter mixing: see
//! [`crate::merge`] for the rounds, the base and what is averaged or added).
//!
//! # Sparse FD-/RFD-SON: materialise, merge, re-express
//!
//! A sparse learner keeps `w = w̄ + Zᵀb + Gᵀc` and its sketch as `B = [diag(σ)·F·Z_{:k}; G]`
//! over lazily updated columns (`columns.rs`: pending changes of basis and transfers applied
//! to a column when it is next touched), so two learners' states live in different bases and
//! cannot be combined field by field. The merge therefore goes through the explicit objects,
//! restricted to `T`, the columns touched by either learner or the base:
//!
//! 1. **Weights.** `w` of each side is materialised on `T` (every pending correction applied:
//!    `w_j = w̄_j + Z[:, j]ᵀb + (Gᵀc)_j`) and the two are averaged by the examples each learned
//!    since the base — `w = s·w_a + (1 − s)·w_b`, McDonald et al.'s mixing, as the dense
//!    learners. Off `T` the weights are zero: every step is `κA⁻¹x = (κ/α)(x − BᵀHBx)`, and the
//!    rows of `B` are combinations of past gradients, so `w` lies in the span of the touched
//!    columns (the lazy store holds there only rounding, of order `ε‖w‖`).
//! 2. **Sketch.** The rows `B_a`, `B_b` (and `B_G` of the base, with sign −1) are materialised on
//!    `T` (the rows of `B` are combinations of gradients too) and merged by the same signed FD
//!    merge as the dense sketches (`sketch::fd_rebase`: `M = B_aᵀB_a + B_bᵀB_b − B_GᵀB_G`,
//!    shrunk with FD's rule). The sparse basis holds at most `m` directions and a shrink keeps
//!    at most `m − 1`, so the merge is asked for a buffer of `m` rows: when the merged spectrum
//!    has `m` or more positive eigenvalues it is shrunk by its `m`-th, `δ = λ_m`, one more FD
//!    shrink. The total shrinkage adds up as for the dense sketch, `Σδ = Δ_a + Δ_b − Δ_G + δ`,
//!    so FD's bound `‖AᵀA − BᵀB‖₂ ≤ Σδ ≤ ‖A − A_j‖²_F/(m − j)` holds for the union (FD's
//!    mergeability, Ghashami, Liberty, Phillips & Woodruff, SICOMP 2016, §3.1: a shrink by the
//!    `m`-th eigenvalue removes at least `m·δ` of squared Frobenius mass, whichever rows it
//!    acts on), and RFD's `α = α₀ + Σδ/2` follows the same total.
//! 3. **Re-expression.** The merged rows are mutually orthogonal (eigenvectors of the stacked
//!    rows' signed Gram matrix); their norms are the new `σ` and their directions the new basis
//!    `V = Z` (`F = I` on the `k ≤ m − 1` active rows, the others inactive), stored explicitly
//!    on `T` in a fresh column store whose never-touched columns are zero ([`Init::Zero`]:
//!    the basis has nothing off `T`). `w̄ = w` on `T`, `b = 0`, no raw rows: the state of a
//!    learner that has just shrunk, from which learning continues as usual.
//!
//! Cost `O(m²·|T| + m³)`, memory `O(m·|T|)` for the stacked rows — proportional to the columns
//! touched, never to `d` beyond one scan of the column stamps. Merging with a learner that
//! learned nothing since the base returns the other state unchanged (the identity).
//!
//! # Refused
//!
//! Sparse RP- and Oja-SON, for the reasons their dense sketches are
//! ([`crate::sketch`]'s merge: shared Gaussian draws bias a sum of RP sketches; Oja's basis has
//! no combination with a guarantee).

use super::columns::{Init, LazyColumns, W, Z};
use super::fd::SparseFdCurvature;
use super::newton::{SparseCurvature, SparseWeights};
use super::{SparseFd, SparseLearner};
use crate::linalg::{dot, shifted_gram_factor};
use crate::merge::{add_count, add_scalar, mix, same, MergeError, MergeResult, MergeShare};
use crate::sketch::{combine_signed, SignedRows, SketchError};

impl MergeShare for SparseLearner {
    fn merge_share(&mut self, other: &Self, base: Option<&Self>, share: f64) -> MergeResult {
        match (self, other) {
            (SparseLearner::Fd(a), SparseLearner::Fd(b)) => {
                let base = match base {
                    None => None,
                    Some(SparseLearner::Fd(g)) => Some(g),
                    Some(_) => {
                        return Err(MergeError::Incompatible(
                            "the base is another learner".into(),
                        ))
                    }
                };
                a.merge_share(b, base, share)
            }
            (SparseLearner::Rp(_), SparseLearner::Rp(_)) => Err(MergeError::Unsupported(
                "sparse RP-SON: random-projection sketches from the same seed share their \
                 Gaussian draws, so their sum is biased; use an FD or RFD curvature to merge"
                    .into(),
            )),
            (SparseLearner::Oja(_), SparseLearner::Oja(_)) => Err(MergeError::Unsupported(
                "sparse Oja-SON: Oja's sketch (an orthonormal basis learned by stochastic \
                 steps) has no merge with a guarantee; use an FD or RFD curvature to merge"
                    .into(),
            )),
            _ => Err(MergeError::Incompatible("different sparse learners".into())),
        }
    }
}

/// The configuration two sparse FD learners must share to be merged.
fn check_mergeable(a: &SparseFd, b: &SparseFd) -> MergeResult {
    same("dimension", a.w.cols.dim(), b.w.cols.dim())?;
    same("Newton parameters", a.params, b.params)?;
    same("sketch size", a.curv.m, b.curv.m)?;
    same("FD buffer rows", a.curv.cap(), b.curv.cap())?;
    same("regularized (RFD)", a.curv.regularized, b.curv.regularized)?;
    same(
        "alpha (RFD: alpha0)",
        a.curv.alpha.to_bits(),
        b.curv.alpha.to_bits(),
    )
}

impl MergeShare for SparseFd {
    /// See the [module](self) docs.
    ///
    /// ```
    /// use sketchlearn::linear::sparse::SparseFd;
    /// use sketchlearn::linear::{NewtonParams, OnlineLearner};
    /// use sketchlearn::merge::MergeShare;
    /// use sketchlearn::Row;
    /// let mut a = SparseFd::rfd(1 << 20, 4, 1.0, 3, NewtonParams::default()).unwrap();
    /// let mut b = a.clone();
    /// for i in 0..40u32 {
    ///     let x = [i % 7, 1000 + i % 5, 900_000];
    ///     let y = if i % 2 == 0 { 1.0 } else { -1.0 };
    ///     let row = Row::Sparse { indices: &x, values: &[y, 0.5, 1.0] };
    ///     if i < 20 { a.learn(row, y, 1.0) } else { b.learn(row, y, 1.0) }.unwrap();
    /// }
    /// a.merge_share(&b, None, 0.5).unwrap();
    /// assert_eq!(a.examples_seen(), 40);
    /// assert!(a.predict(Row::Sparse { indices: &[0], values: &[1.0] }) > 0.0);
    /// ```
    fn merge_share(&mut self, other: &Self, base: Option<&Self>, share: f64) -> MergeResult {
        check_mergeable(self, other)?;
        if let Some(g) = base {
            check_mergeable(self, g)?;
        }
        let base_seen = base.map_or(0, |g| g.examples);
        if other.examples <= base_seen {
            return Ok(()); // `other` learned nothing since the base: the identity
        }
        if self.examples <= base_seen {
            *self = other.clone();
            return Ok(());
        }
        let cols = touched_union(self, other, base);
        let t = cols.len();
        let mut w = weights_on(self, &cols);
        mix(&mut w, &weights_on(other, &cols), share);
        let (ra, rb) = (sketch_rows(self, &cols), sketch_rows(other, &cols));
        let rg = base.map(|g| sketch_rows(g, &cols));
        let mut parts = vec![signed(&ra, 1.0), signed(&rb, 1.0)];
        parts.extend(rg.as_ref().map(|r| signed(r, -1.0)));
        let m = self.curv.m;
        let merged = combine_signed(&parts, t, m, m)?;
        let (sigma, v) = orthonormal_rows(&merged.rows, merged.filled, t);
        let g = base.map(|g| &g.curv);
        let (a, b) = (&self.curv, &other.curv);
        let counts = Counts {
            shrink_total: add_scalar(a.shrink_total, b.shrink_total, g.map(|g| g.shrink_total))
                + merged.delta,
            shrinks: add_count(a.shrinks, b.shrinks, g.map(|g| g.shrinks))
                + u64::from(merged.delta > 0.0),
            rows_seen: add_count(a.rows_seen, b.rows_seen, g.map(|g| g.rows_seen)),
        };
        self.examples = add_count(self.examples, other.examples, base.map(|g| g.examples));
        self.pscale = share * self.pscale + (1.0 - share) * other.pscale;
        self.z.clear();
        self.w = explicit_weights(self.w.cols.dim(), m, &cols, &w, &v);
        self.curv.reset_to(&sigma, counts)?;
        Ok(())
    }
}

/// The merged sketch's counters.
struct Counts {
    shrink_total: f64,
    shrinks: u64,
    rows_seen: u64,
}

impl SparseFdCurvature {
    /// The state right after a shrink to the orthonormal directions `V = Z` (stored by the
    /// caller) with singular values `sigma`: `F = I` on the `k = sigma.len()` active rows,
    /// no raw rows, `BBᵀ = diag(σ²)` and its factor.
    fn reset_to(&mut self, sigma: &[f64], counts: Counts) -> MergeResult {
        let (m, cap, k) = (self.m, self.cap(), sigma.len());
        self.f.iter_mut().for_each(|x| *x = 0.0);
        self.sigma.iter_mut().for_each(|x| *x = 0.0);
        self.gram.iter_mut().for_each(|x| *x = 0.0);
        for i in 0..k {
            self.f[i * m + i] = 1.0;
            self.sigma[i] = sigma[i];
            self.gram[i * cap + i] = sigma[i] * sigma[i];
        }
        for (i, a) in self.active.iter_mut().enumerate() {
            *a = i < k;
        }
        self.trk = k as f64;
        self.k = k;
        self.g.clear();
        self.c.clear();
        self.gx.clear();
        self.index.clear();
        self.shrink_total = counts.shrink_total;
        self.shrinks = counts.shrinks;
        self.rows_seen = counts.rows_seen;
        if !self.shrink_total.is_finite() {
            return Err(SketchError::NonFinite("merged FD shrinkage".into()).into());
        }
        let (cap, a) = (self.cap(), self.alpha());
        self.explicit = shifted_gram_factor(&self.gram, k, cap, a, &mut self.chol)
            .map_err(SketchError::from)?;
        Ok(())
    }
}

/// The columns touched by `a`, `b` or the base (stored columns and raw rows' indices), sorted.
fn touched_union(a: &SparseFd, b: &SparseFd, base: Option<&SparseFd>) -> Vec<u32> {
    let mut cols = Vec::new();
    for l in [Some(a), Some(b), base].into_iter().flatten() {
        cols.extend(l.w.cols.touched_columns());
        for row in &l.curv.g {
            cols.extend_from_slice(&row.indices);
        }
    }
    cols.sort_unstable();
    cols.dedup();
    cols
}

/// Position of column `j` in the sorted `cols`.
fn position(cols: &[u32], j: u32) -> usize {
    cols.binary_search(&j)
        .unwrap_or_else(|_| unreachable!("column {j} is in the touched union"))
}

/// `w = w̄ + Zᵀb + Gᵀc` on the columns `cols`, every lazy correction applied.
fn weights_on(l: &SparseFd, cols: &[u32]) -> Vec<f64> {
    let mut z = vec![0.0; l.curv.m];
    let mut w: Vec<f64> = cols
        .iter()
        .map(|&j| l.w.cols.peek(j as usize, &mut z) + dot(&z, &l.w.b))
        .collect();
    for (row, c) in l.curv.g.iter().zip(&l.curv.c) {
        for (&j, &v) in row.indices.iter().zip(&row.values) {
            w[position(cols, j)] += c * v;
        }
    }
    w
}

/// The sketch's rows `B = [diag(σ)·F·Z_{:k}; G]` on the columns `cols` (row-major, `ℓ × |T|`)
/// and their number `ℓ`.
fn sketch_rows(l: &SparseFd, cols: &[u32]) -> (Vec<f64>, usize) {
    let c = &l.curv;
    let (m, k, t) = (c.m, c.k, cols.len());
    let rows = k + c.g.len();
    let mut out = vec![0.0; rows * t];
    let mut z = vec![0.0; m];
    for (p, &j) in cols.iter().enumerate() {
        l.w.cols.peek(j as usize, &mut z);
        for i in 0..k {
            out[i * t + p] = c.sigma[i] * dot(&c.f[i * m..(i + 1) * m], &z);
        }
    }
    for (r, row) in c.g.iter().enumerate() {
        for (&j, &v) in row.indices.iter().zip(&row.values) {
            out[(k + r) * t + position(cols, j)] = v;
        }
    }
    (out, rows)
}

fn signed(rows: &(Vec<f64>, usize), sign: f64) -> SignedRows<'_> {
    SignedRows {
        rows: &rows.0,
        count: rows.1,
        sign,
    }
}

/// The norms `σ_i` of the `n` merged rows (orthogonal by construction) and their directions,
/// re-orthonormalised by modified Gram–Schmidt against rounding (rows of norm zero dropped).
fn orthonormal_rows(rows: &[f64], n: usize, t: usize) -> (Vec<f64>, Vec<f64>) {
    let mut sigma = Vec::with_capacity(n);
    let mut v: Vec<f64> = Vec::with_capacity(n * t);
    for row in rows.chunks_exact(t.max(1)).take(n) {
        let norm = dot(row, row).sqrt();
        if norm == 0.0 || t == 0 {
            continue;
        }
        let mut u = row.to_vec();
        for prev in v.chunks_exact(t) {
            let p = dot(prev, &u);
            u.iter_mut().zip(prev).for_each(|(x, q)| *x -= p * q);
        }
        let un = dot(&u, &u).sqrt();
        if un <= 1e-8 * norm {
            continue; // dependent on the rows before it (rounding only)
        }
        u.iter_mut().for_each(|x| *x /= un);
        sigma.push(norm);
        v.extend_from_slice(&u);
    }
    (sigma, v)
}

/// The weights `w̄ = w` (on `cols`), `b = 0`, over a fresh store whose columns `cols` hold the
/// directions `v` (row-major `k × |T|`) as their first `k` sketch coordinates and whose other
/// columns are zero.
fn explicit_weights(dim: usize, m: usize, cols: &[u32], w: &[f64], v: &[f64]) -> SparseWeights {
    let t = cols.len();
    let k = v.len().checked_div(t).unwrap_or(0);
    let mut store = LazyColumns::new(dim, m, Init::Zero);
    for (p, &j) in cols.iter().enumerate() {
        let slot = store.current(j as usize);
        slot[W] = w[p];
        for i in 0..k {
            slot[Z + i] = v[i * t + p];
        }
    }
    SparseWeights::new(store, m)
}
