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
//! # Streamed over the columns
//!
//! The stacked rows `R` (`r ≤ 3·(m + buffer)` rows over `|T|` columns) need not be stored: only
//! their Gram matrix `RRᵀ` and the merge's coefficients are, since the combination needs no
//! more (`sketch::fd_rebase`: the merged rows are `C·R` with `C` a function of `RRᵀ` and the
//! signs). Two passes over `T` walk the columns `R[:, j]` of the lazy stores (`O(m²)` per side):
//! the first accumulates `RRᵀ`, the second writes `C·R[:, j]` and the mixed `w_j` straight
//! into the new store. The merged rows are orthogonal by construction; a last pass over the
//! new store re-orthonormalises them against rounding (modified Gram–Schmidt in the metric of
//! their `k × k` Gram matrix, after each row is normalised by its own norm, which keeps it
//! accurate: that Gram matrix is the identity up to rounding; rows whose remainder falls
//! below `10⁻⁸` of their norm are dropped as dependent). The raw rows `G` are sparse and enter
//! `R` through their entries only.
//!
//! The first pass keeps the columns of `R` it computed (their dense part and the two weights),
//! up to 256 MiB of them ([`KEPT_NUMBERS`]), and the second reads those instead of computing
//! them again: the same numbers, and a column's computation from the lazy stores — each side's
//! pending changes of basis applied — was more than half of a merge's time at `2^20` touched
//! columns (docs/results/dask.md, dask20).
//!
//! Cost `O((m² + r²)·|T| + r³)`; memory: the result's store (`m + 2` numbers per column of
//! `T`), the sorted list `T`, `O(r² + Σnnz(G))` and the kept columns of `R` (at most 256 MiB,
//! freed before the last pass), and nothing proportional to `d` beyond one scan of the column
//! stamps. Merging with a learner that
//! learned nothing since the base returns the other state unchanged (the identity).
//!
//! Over a base made by a merge (every round of distributed training after the first), the
//! columns neither learner touched in the round are not visited: `merge_lazy.rs` computes the
//! learned-on columns as here and expresses the others as one lazy rebase of the base's store.
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
use crate::sketch::{signed_coefficients, SketchError};

impl MergeShare for SparseLearner {
    fn check_merge(&self, other: &Self, base: Option<&Self>) -> MergeResult {
        match (self, other) {
            (SparseLearner::Fd(a), SparseLearner::Fd(b)) => a.check_merge(b, fd_base(base)?),
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

    fn merge_share(&mut self, other: &Self, base: Option<&Self>, share: f64) -> MergeResult {
        self.check_merge(other, base)?;
        match (self, other) {
            (SparseLearner::Fd(a), SparseLearner::Fd(b)) => a.merge_share(b, fd_base(base)?, share),
            _ => Ok(()), // refused by the check
        }
    }
}

/// The sparse FD learner of a merge's base, an error when the base is another learner.
fn fd_base(base: Option<&SparseLearner>) -> Result<Option<&SparseFd>, MergeError> {
    match base {
        None => Ok(None),
        Some(SparseLearner::Fd(g)) => Ok(Some(g)),
        Some(_) => Err(MergeError::Incompatible(
            "the base is another learner".into(),
        )),
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
    fn check_merge(&self, other: &Self, base: Option<&Self>) -> MergeResult {
        crate::merge::with_base(self, other, base, check_mergeable)
    }

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
        self.check_merge(other, base)?;
        let base_seen = base.map_or(0, |g| g.examples);
        if other.examples <= base_seen {
            return Ok(()); // `other` learned nothing since the base: the identity
        }
        if self.examples <= base_seen {
            *self = other.clone();
            return Ok(());
        }
        if let Some(g) = base {
            if let Some(round) = super::merge_lazy::round_columns(self, other, g) {
                return self.merge_over_base(other, g, share, &round);
            }
        }
        self.merge_materialised(other, base, share)
    }
}

impl SparseFd {
    /// The merge through the explicit objects on every touched column (module docs).
    pub(super) fn merge_materialised(
        &mut self,
        other: &Self,
        base: Option<&Self>,
        share: f64,
    ) -> MergeResult {
        self.merge_keeping(other, base, share, KEPT_NUMBERS)
    }

    /// [`merge_materialised`](Self::merge_materialised), keeping at most `limit` numbers of
    /// `R`'s columns between its two passes (the tests' way to choose between kept and
    /// recomputed columns: the same bits either way).
    fn merge_keeping(
        &mut self,
        other: &Self,
        base: Option<&Self>,
        share: f64,
        limit: usize,
    ) -> MergeResult {
        let cols = touched_union(self, other, base);
        let m = self.curv.m;
        let stack = Stack::new(self, other, base);
        let (gram, kept) = stack.gram_keeping(&cols, limit);
        let merged = signed_coefficients(&gram, &stack.signs, m, m)?;
        let mut store = stack.write((&cols, &kept), &merged.coef, merged.keep, share)?;
        drop(kept);
        let sigma = orthonormalise(&mut store, &cols, merged.keep);
        self.finish_merge(other, base, share, store, &sigma, merged.delta)
    }

    /// The merged learner from its store (weights `w̄ = w`, orthonormal directions in the
    /// first sketch coordinates), the merged rows' norms `sigma` and the merge's shrink
    /// `delta`: counters added over the base, `b = 0`, the curvature reset to `F = I`.
    pub(super) fn finish_merge(
        &mut self,
        other: &Self,
        base: Option<&Self>,
        share: f64,
        store: LazyColumns,
        sigma: &[f64],
        delta: f64,
    ) -> MergeResult {
        let m = self.curv.m;
        let g = base.map(|g| &g.curv);
        let (a, b) = (&self.curv, &other.curv);
        let counts = Counts {
            shrink_total: add_scalar(a.shrink_total, b.shrink_total, g.map(|g| g.shrink_total))
                + delta,
            shrinks: add_count(a.shrinks, b.shrinks, g.map(|g| g.shrinks)) + u64::from(delta > 0.0),
            rows_seen: add_count(a.rows_seen, b.rows_seen, g.map(|g| g.rows_seen)),
        };
        self.examples = add_count(self.examples, other.examples, base.map(|g| g.examples));
        self.pscale = share * self.pscale + (1.0 - share) * other.pscale;
        self.z.clear();
        self.w = SparseWeights::new(store, m);
        self.curv.reset_to(sigma, counts)?;
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

/// One entry of a raw row `G_q` of the stack: `R[row, col] = value`, and the entry's term
/// `c_q·value` of that side's weights `Gᵀc` (0 for the base, whose weights are not needed).
pub(super) struct RawEntry {
    col: u32,
    row: usize,
    side: usize,
    weight: f64,
    value: f64,
}

/// The most numbers of `R`'s columns (32 Mi numbers: 256 MiB) that [`Stack::gram`] keeps for
/// the second pass over the columns ([`Stack::merged_columns`]), which computes the others
/// again (module docs). The unit tests keep a few columns only, so that their merges walk both
/// the kept columns and those computed again (the integration tests keep every column);
/// `kept_and_recomputed_columns_merge_to_the_same_bits` compares the limits directly.
#[cfg(not(test))]
const KEPT_NUMBERS: usize = 32 << 20;
#[cfg(test)]
const KEPT_NUMBERS: usize = 100;

/// The stacked rows `R` of the merge (see the module docs), never stored whole: first the active
/// sketch rows `diag(σ)·F·Z_{:k}` of each side (dense on `T`, computed column by column from
/// the lazy stores), then the raw rows `G` of each side (through their entries), with the
/// sign each enters with (`+1` the two learners, `−1` the base).
pub(super) struct Stack<'a> {
    /// Each side and the position of its first sketch row in `R`.
    pub(super) sides: Vec<(&'a SparseFd, usize)>,
    /// Number of sketch rows (the dense part of `R`).
    pub(super) dense: usize,
    pub(super) signs: Vec<f64>,
    /// The raw rows' entries, by increasing column.
    raw: Vec<RawEntry>,
}

impl<'a> Stack<'a> {
    pub(super) fn new(a: &'a SparseFd, b: &'a SparseFd, base: Option<&'a SparseFd>) -> Self {
        let parts: Vec<(&SparseFd, f64)> = [(a, 1.0), (b, 1.0)]
            .into_iter()
            .chain(base.map(|g| (g, -1.0)))
            .collect();
        let mut sides = Vec::with_capacity(parts.len());
        let mut signs = Vec::new();
        for &(l, sign) in &parts {
            sides.push((l, signs.len()));
            signs.extend(std::iter::repeat_n(sign, l.curv.k));
        }
        let dense = signs.len();
        let mut raw = Vec::new();
        for (side, &(l, sign)) in parts.iter().enumerate() {
            for (row, c) in l.curv.g.iter().zip(&l.curv.c) {
                let q = signs.len();
                signs.push(sign);
                for (&col, &value) in row.indices.iter().zip(&row.values) {
                    let weight = if side < 2 { c * value } else { 0.0 };
                    raw.push(RawEntry {
                        col,
                        row: q,
                        side,
                        weight,
                        value,
                    });
                }
            }
        }
        raw.sort_by_key(|e| e.col);
        Stack {
            sides,
            dense,
            signs,
            raw,
        }
    }

    /// The dense part of `R[:, j]` into `x` (`z`: scratch of `m`; `scratch`: a lazy column's
    /// slot, [`LazyColumns::peek_reusing`]), and `w̄_j + Z[:, j]ᵀb` of the two learners (their
    /// weights but for the raw rows' `Gᵀc`).
    fn column(
        &self,
        j: u32,
        x: &mut [f64],
        z: &mut [f64],
        scratch: &mut (Vec<f64>, Vec<f64>),
    ) -> [f64; 2] {
        let mut w = [0.0; 2];
        for (s, &(l, off)) in self.sides.iter().enumerate() {
            let wbar = l.w.cols.peek_reusing(j as usize, z, scratch);
            let c = &l.curv;
            let m = c.m;
            for i in 0..c.k {
                x[off + i] = c.sigma[i] * dot(&c.f[i * m..(i + 1) * m], z);
            }
            if s < 2 {
                w[s] = wbar + dot(z, &l.w.b);
            }
        }
        w
    }

    /// Walks `cols` (increasing) with the dense part of each column of `R`, its weights and
    /// its raw entries. The first `kept.len() / (dense + 2)` columns are read from `kept` (each
    /// column's dense part, then its two weights, as an earlier walk computed them: the same
    /// values); with `keep`, the columns computed here are appended to it while they fit in
    /// the capacity its owner reserved (at most [`KEPT_NUMBERS`] numbers).
    fn for_each_column(
        &self,
        cols: &[u32],
        (kept, mut keep): (&[f64], Option<&mut Vec<f64>>),
        mut f: impl FnMut(u32, &[f64], [f64; 2], &[RawEntry]),
    ) {
        let (m, nd) = (self.sides[0].0.curv.m, self.dense);
        let (mut x, mut z) = (vec![0.0; nd], vec![0.0; m]);
        let mut scratch = Default::default();
        let mut read = kept.chunks_exact(nd + 2);
        let mut at = 0;
        for &j in cols {
            let end = at + self.raw[at..].partition_point(|e| e.col == j);
            if let Some(v) = read.next() {
                f(j, &v[..nd], [v[nd], v[nd + 1]], &self.raw[at..end]);
            } else {
                let w = self.column(j, &mut x, &mut z, &mut scratch);
                // Only into the room reserved beforehand: never a reallocation, never more
                // than [`KEPT_NUMBERS`].
                let room = |o: &&mut Vec<f64>| o.len() + nd + 2 <= o.capacity();
                if let Some(out) = keep.as_deref_mut().filter(room) {
                    out.extend_from_slice(&x);
                    out.extend_from_slice(&w);
                }
                f(j, &x, w, &self.raw[at..end]);
            }
            at = end;
        }
    }

    /// `RRᵀ` (`r × r`, row-major), accumulated column by column, and the columns of `R` it
    /// computed, as many as [`KEPT_NUMBERS`] allows (for [`merged_columns`](Self::
    /// merged_columns) on the same `cols`, which then reads them instead of computing them
    /// again from the lazy stores: more than half of a merge's time at `2^20` touched columns,
    /// docs/results/dask.md, dask20).
    pub(super) fn gram(&self, cols: &[u32]) -> (Vec<f64>, Vec<f64>) {
        self.gram_keeping(cols, KEPT_NUMBERS)
    }

    /// [`gram`](Self::gram), keeping at most `limit` numbers of the columns.
    fn gram_keeping(&self, cols: &[u32], limit: usize) -> (Vec<f64>, Vec<f64>) {
        let r = self.signs.len();
        let mut g = vec![0.0; r * r];
        // Its whole size at once (no doubling); if the memory is not there, nothing is kept
        // and the second pass computes every column again, as before dask20.
        let stride = self.dense + 2;
        let mut kept = Vec::new();
        let _ = kept.try_reserve_exact((cols.len() * stride).min(limit));
        self.for_each_column(cols, (&[], Some(&mut kept)), |_, x, _, entries| {
            for (a, &xa) in x.iter().enumerate() {
                let row = &mut g[a * r..a * r + a + 1];
                row.iter_mut().zip(x).for_each(|(s, &xb)| *s += xa * xb);
            }
            // Raw rows come after the dense ones: their cross terms are in the lower triangle.
            for e in entries {
                let row = &mut g[e.row * r..(e.row + 1) * r];
                row.iter_mut()
                    .zip(x)
                    .for_each(|(s, &xb)| *s += e.value * xb);
                for f in entries.iter().filter(|f| f.row <= e.row) {
                    row[f.row] += e.value * f.value;
                }
            }
        });
        for a in 0..r {
            for b in 0..a {
                g[b * r + a] = g[a * r + b];
            }
        }
        (g, kept)
    }

    /// A fresh store (never-touched columns zero, [`Init::Zero`]: the merged basis has nothing
    /// off `T`) holding on each column of `cols` the mixed weight `w_j` and the `keep` merged
    /// rows `C·R[:, j]` (`coef`: row-major `keep × r`) as its first sketch coordinates.
    fn write(
        &self,
        (cols, kept): (&[u32], &[f64]),
        coef: &[f64],
        keep: usize,
        share: f64,
    ) -> Result<LazyColumns, MergeError> {
        let first = self.sides[0].0;
        let (dim, m) = (first.w.cols.dim(), first.curv.m);
        let mut store = LazyColumns::new(dim, m, Init::Zero);
        self.merged_columns((cols, kept), coef, keep, share, |j, w, u| {
            let slot = store.current(j as usize);
            slot[W] = w;
            slot[Z..Z + keep].copy_from_slice(u);
        })?;
        Ok(store)
    }

    /// Walks `cols` with the mixed weight `w_j` and the `keep` merged rows `C·R[:, j]`
    /// (`coef`: row-major `keep × r`) of each column; an error if any is not finite. `kept`:
    /// the columns [`gram`](Self::gram) kept of the same `cols`.
    pub(super) fn merged_columns(
        &self,
        (cols, kept): (&[u32], &[f64]),
        coef: &[f64],
        keep: usize,
        share: f64,
        mut f: impl FnMut(u32, f64, &[f64]),
    ) -> MergeResult {
        let (r, nd) = (self.signs.len(), self.dense);
        let mut u = vec![0.0; keep];
        let mut finite = true;
        self.for_each_column(cols, (kept, None), |j, x, mut w, entries| {
            for (i, ui) in u.iter_mut().enumerate() {
                *ui = dot(&coef[i * r..i * r + nd], x);
            }
            for e in entries {
                for (i, ui) in u.iter_mut().enumerate() {
                    *ui += coef[i * r + e.row] * e.value;
                }
                if e.side < 2 {
                    w[e.side] += e.weight;
                }
            }
            let (wa, wb) = w.split_at_mut(1);
            mix(wa, wb, share);
            finite &= w[0].is_finite() && u.iter().all(|v| v.is_finite());
            f(j, w[0], &u);
        });
        if !finite {
            return Err(SketchError::NonFinite("merged sparse FD rows or weights".into()).into());
        }
        Ok(())
    }
}

/// Replaces the `k` rows held in the first sketch coordinates of `cols` in `store` (mutually
/// orthogonal up to rounding) by orthonormal directions and returns their norms `σ_i` — rows
/// of norm zero, and rows dependent on the rows before them up to rounding, dropped (see the
/// module docs). Three passes over `cols`, `O(k²·|T| + k⁴)`.
fn orthonormalise(store: &mut LazyColumns, cols: &[u32], k: usize) -> Vec<f64> {
    let mut h = vec![0.0; k * k];
    for &j in cols {
        let z = &store.current(j as usize)[Z..Z + k];
        for a in 0..k {
            for b in 0..k {
                h[a * k + b] += z[a] * z[b];
            }
        }
    }
    let (sigma, p) = gram_schmidt_map(&h, k);
    let kept = sigma.len();
    let mut old = vec![0.0; k];
    for &j in cols {
        let z = &mut store.current(j as usize)[Z..Z + k];
        old.copy_from_slice(z);
        for (i, zi) in z.iter_mut().enumerate() {
            *zi = if i < kept {
                dot(&p[i * k..(i + 1) * k], &old)
            } else {
                0.0
            };
        }
    }
    sigma
}

/// Modified Gram–Schmidt of `k` vectors given by their Gram matrix `h` (`k × k`): the norms
/// `σ_i` of the vectors kept and the map `P` (row-major, one row of `k` per kept vector) whose
/// rows combine the vectors into orthonormal ones. Each vector is normalised first (its norm
/// `√h_ii`) so that the remainders are measured relative to 1; vectors of norm zero or with a
/// remainder at most `10⁻⁸` are dropped.
pub(super) fn gram_schmidt_map(h: &[f64], k: usize) -> (Vec<f64>, Vec<f64>) {
    let inner = |x: &[f64], y: &[f64]| -> f64 {
        (0..k).map(|a| x[a] * dot(&h[a * k..(a + 1) * k], y)).sum()
    };
    let mut sigma = Vec::with_capacity(k);
    let mut p: Vec<f64> = Vec::with_capacity(k * k);
    for i in 0..k {
        let norm = h[i * k + i].max(0.0).sqrt();
        if norm == 0.0 {
            continue;
        }
        let mut u = vec![0.0; k];
        u[i] = 1.0 / norm;
        for prev in p.chunks_exact(k) {
            let proj = inner(prev, &u);
            u.iter_mut().zip(prev).for_each(|(x, q)| *x -= proj * q);
        }
        let un = inner(&u, &u).max(0.0).sqrt();
        if un <= 1e-8 {
            continue; // dependent on the rows before it (rounding only)
        }
        u.iter_mut().for_each(|x| *x /= un);
        sigma.push(norm);
        p.extend_from_slice(&u);
    }
    (sigma, p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linear::{NewtonParams, OnlineLearner};
    use crate::Row;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// An FD (or, with `rfd`, RFD) learner after `n` sparse rows drawn from `seed` (a few hot columns, the
    /// rest spread over `d`).
    fn learned(rfd: bool, d: u32, n: usize, seed: u64) -> SparseFd {
        let params = NewtonParams::default();
        let mut l = match rfd {
            true => SparseFd::rfd(d as usize, 3, 0.5, 7, params),
            false => SparseFd::fd(d as usize, 3, 0.5, 7, params),
        }
        .unwrap();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        for _ in 0..n {
            let mut idx: Vec<u32> = (0..rng.random_range(1..6))
                .map(|i| match i % 2 {
                    0 => rng.random_range(0..8),
                    _ => rng.random_range(0..d),
                })
                .collect();
            idx.sort_unstable();
            idx.dedup();
            let val: Vec<f64> = idx.iter().map(|_| rng.random_range(-1.0..1.0)).collect();
            let y = if rng.random_bool(0.5) { 1.0 } else { -1.0 };
            let x = Row::Sparse {
                indices: &idx,
                values: &val,
            };
            l.learn(x, y, 1.0).unwrap();
        }
        l
    }

    /// The merge keeps the first pass's columns of `R` up to a limit and computes the rest
    /// again: with every column kept, some (a limit that holds 5 of them), or none, the merged
    /// state is the same to the bit (its stored form, what a model file holds: the `Debug` text
    /// would also show the column store's alignment offset, which depends on the allocator).
    #[test]
    fn kept_and_recomputed_columns_merge_to_the_same_bits() {
        for rfd in [false, true] {
            // 19 and 23 rows: each side has shrunk (m = 3, a buffer of 6) and holds raw rows.
            let a = learned(rfd, 300, 19, 1);
            let b = learned(rfd, 300, 23, 2);
            let cols = touched_union(&a, &b, None);
            let stride = Stack::new(&a, &b, None).dense + 2;
            assert!(cols.len() > 20, "{} columns", cols.len());
            let merged = |limit: usize| {
                let mut m = a.clone();
                m.merge_keeping(&b, None, 0.4, limit).unwrap();
                postcard::to_allocvec(&m).unwrap()
            };
            let all = merged(usize::MAX);
            // The limits' kept counts: all, 5 (part), none.
            let (_, kept) = Stack::new(&a, &b, None).gram_keeping(&cols, usize::MAX);
            assert_eq!(kept.len(), cols.len() * stride);
            let (_, kept) = Stack::new(&a, &b, None).gram_keeping(&cols, 5 * stride + 1);
            assert_eq!(kept.len(), 5 * stride);
            assert_eq!(merged(5 * stride + 1), all, "rfd {rfd}: 5 columns kept");
            assert_eq!(merged(0), all, "rfd {rfd}: none kept");
            assert_eq!(
                merged(KEPT_NUMBERS),
                all,
                "rfd {rfd}: the unit tests' limit"
            );
        }
    }
}
