//! The sparse FD/RFD merge over a base, in time proportional to the columns learned on in the
//! round: the columns neither learner touched since the base are merged *lazily*, as one
//! rebase of the base's column store.
//!
//! # Why it is exact
//!
//! In a round of distributed training (`crate::merge`) both learners start from the same base
//! `G` and each learns a block, touching a fraction of the columns. Take a column `j` that
//! neither learner touched: its stored slot is the base's, and a learner's rebases since the
//! base act on it lazily. A rebase is linear in the slot (`w̄ ← w̄ + zᵀt`, `z ← Mz`,
//! `columns.rs`), so learner `s ∈ {a, b}` holds on `j` the value
//! `w̄_{s,j} = w̄_{G,j} + z_{G,j}ᵀt_s`, `z_{s,j} = M_s·z_{G,j}` with `(M_s, t_s)` all of its
//! rebases since the base composed. A store made by a merge has zero never-touched columns
//! ([`Init::Zero`]) and its pristine epoch reset to the identity
//! ([`LazyColumns::reset_pristine`]); every rebase composes into the pristine epoch, so a
//! learner grown from such a base carries exactly `(M_s, t_s)` there
//! ([`LazyColumns::pristine_transform`]).
//!
//! Everything the materialised merge (`merge.rs`) computes on `j` is then linear in the base's
//! `z_{G,j}` (and, for the weight, `w̄_{G,j}`):
//!
//! * the stacked rows `R[:, j] = Q·z_{G,j}` with `Q = [diag(σ_a)F_a·M_a; diag(σ_b)F_b·M_b;
//!   diag(σ_G)F_G; 0]` (`j` is in no raw row: raw rows' columns count as learned on);
//! * so `Σ_{j untouched} R[:, j]R[:, j]ᵀ = Q·K·Qᵀ` with `K = Σ_{j untouched} z_{G,j}z_{G,j}ᵀ`
//!   (`m × m`, one pass over the base's columns, `O(m²)` each), added to the Gram matrix of the
//!   learned-on columns to give the same `RRᵀ`, hence the same coefficients `C`;
//! * the merged rows `C·R[:, j] = CQ·z_{G,j}`, whose Gram matrix over these columns is
//!   `CQ·K·(CQ)ᵀ`, so the re-orthonormalisation map `P` is the same, and the new directions are
//!   `Λ·z_{G,j}` with `Λ = P·C·Q` (`m × m`, rows past the kept ones zero);
//! * the mixed weight `s·w_{a,j} + (1 − s)·w_{b,j}` with `w_{s,j} = w̄_{s,j} + z_{s,j}ᵀb_s`
//!   is `w̄_{G,j} + z_{G,j}ᵀβ`, `β = s·(t_a + M_aᵀb_a) + (1 − s)·(t_b + M_bᵀb_b)`.
//!
//! That is one rebase `(Λ, β)` of the base's store, which [`LazyColumns::rebase`] applies
//! lazily. The learned-on columns are computed explicitly as in the materialised merge and
//! written over it. The result equals the materialised merge up to rounding (the sums are
//! grouped differently; `tests` below: 1e-9), and it is again a store with an identity
//! pristine epoch, so the next round merges lazily too.
//!
//! # Which columns were learned on
//!
//! A column whose stored slot (numbers and stamp) differs bit for bit from the base's, in
//! either learner, plus every column of a raw row of either learner or the base. A slot the
//! learner did not write keeps the base's bits; a column brought up to date or flushed gets
//! new bits and is then merely computed explicitly (still exact). Only columns stamped with
//! the base's current epoch or a later one can differ ([`LazyColumns::stamped_since`]).
//!
//! # Cost
//!
//! The slots compared are those of the columns the learners stamped since the base (the members
//! of their epochs since, [`LazyColumns::stamped_since`]); `K` costs `O(m²)` per untouched base
//! column (the one pass over all of them); the result reuses `self`'s slot array, restored to
//! the base's on the learned-on columns ([`LazyColumns::restore`]) instead of copying `d`
//! slots; and the learned-on columns cost what the materialised merge costs per column,
//! `O(m² + r²)` — which it spends on every column the three states ever touched.

use super::columns::{Init, LazyColumns, W, Z};
use super::merge::{gram_schmidt_map, Stack};
use super::SparseFd;
use crate::linalg::dot;
use crate::merge::MergeResult;
use crate::sketch::signed_coefficients;

/// The columns learned on since the base `g` (increasing), or `None` when the lazy merge does
/// not apply: `g`'s store is not zero-initialised with an identity pristine epoch (the base
/// was not made by a merge), or a learner has fewer rebases than the base (it did not grow from
/// it).
pub(super) fn round_columns(a: &SparseFd, b: &SparseFd, g: &SparseFd) -> Option<Vec<u32>> {
    let gc = &g.w.cols;
    if gc.init() != Init::Zero || !gc.pristine_is_identity() {
        return None;
    }
    if a.w.cols.rebases() < gc.rebases() || b.w.cols.rebases() < gc.rebases() {
        return None;
    }
    let mut cols = Vec::new();
    let since = gc.current_epoch();
    for l in [a, b] {
        let lc = &l.w.cols;
        let differs = |&j: &u32| {
            let (x, y) = (lc.stored_slot(j as usize), gc.stored_slot(j as usize));
            x.iter().zip(y).any(|(p, q)| p.to_bits() != q.to_bits())
        };
        cols.extend(lc.stamped_since(since).into_iter().filter(differs));
    }
    for l in [a, b, g] {
        for row in &l.curv.g {
            cols.extend_from_slice(&row.indices);
        }
    }
    cols.sort_unstable();
    cols.dedup();
    Some(cols)
}

/// `K = Σ z_{G,j}z_{G,j}ᵀ` (`m × m`) over the base's touched columns not in `round`.
fn untouched_gram(g: &SparseFd, round: &[u32]) -> Vec<f64> {
    let mut learned = vec![0u64; g.w.cols.dim().div_ceil(64)];
    for &j in round {
        learned[j as usize / 64] |= 1 << (j % 64);
    }
    let untouched = |&j: &u32| learned[j as usize / 64] >> (j % 64) & 1 == 0;
    let cols = g.w.cols.touched_columns();
    g.w.cols.columns_gram(cols.into_iter().filter(untouched))
}

/// `Tᵀ` of a learner's rebases since the base (identity when `None`) applied: `(F·T)[i, :]`
/// for the sketch row `f` (`Σ_c f_c T[c, l] = f·Tᵀ[l, :]`), or `Tᵀb`: the same product.
fn times_t(tt: Option<&[f64]>, v: &[f64], m: usize) -> Vec<f64> {
    match tt {
        None => v.to_vec(),
        Some(tt) => (0..m).map(|l| dot(&tt[l * m..(l + 1) * m], v)).collect(),
    }
}

/// `Q` (`r × m`, row-major): the stacked rows on an untouched column as a map of the base's
/// `z_{G,j}` (module docs; raw rows are zero there).
fn untouched_rows(stack: &Stack<'_>, m: usize) -> Vec<f64> {
    let r = stack.signs.len();
    let mut q = vec![0.0; r * m];
    for (s, &(l, off)) in stack.sides.iter().enumerate() {
        let tt = if s < 2 {
            l.w.cols.pristine_transform().0
        } else {
            None
        };
        let c = &l.curv;
        for i in 0..c.k {
            let row = times_t(tt, &c.f[i * m..(i + 1) * m], m);
            for (x, y) in q[(off + i) * m..(off + i + 1) * m].iter_mut().zip(&row) {
                *x = c.sigma[i] * y;
            }
        }
    }
    q
}

/// `a·b` for row-major `a` (`n × k`) and `b` (`k × p`).
fn product(a: &[f64], b: &[f64], n: usize, k: usize, p: usize) -> Vec<f64> {
    let mut out = vec![0.0; n * p];
    for i in 0..n {
        for c in 0..k {
            let x = a[i * k + c];
            if x != 0.0 {
                for (o, y) in out[i * p..(i + 1) * p]
                    .iter_mut()
                    .zip(&b[c * p..(c + 1) * p])
                {
                    *o += x * y;
                }
            }
        }
    }
    out
}

/// `out += A·K·Aᵀ` (`A`: `n × m`, `K`: `m × m`, `out`: `n × n`, all row-major).
fn add_congruence(out: &mut [f64], a: &[f64], k: &[f64], n: usize, m: usize) {
    let ak = product(a, k, n, m, m);
    for i in 0..n {
        for j in 0..n {
            out[i * n + j] += dot(&ak[i * m..(i + 1) * m], &a[j * m..(j + 1) * m]);
        }
    }
}

/// `β = s·(t_a + M_aᵀb_a) + (1 − s)·(t_b + M_bᵀb_b)` (module docs).
fn transfer(a: &SparseFd, b: &SparseFd, share: f64) -> Vec<f64> {
    let m = a.curv.m;
    let part = |l: &SparseFd| {
        let (tt, t) = l.w.cols.pristine_transform();
        let mut v = times_t(tt, &l.w.b, m);
        v.iter_mut().zip(t).for_each(|(x, y)| *x += y);
        v
    };
    let (pa, pb) = (part(a), part(b));
    pa.iter()
        .zip(&pb)
        .map(|(x, y)| share * x + (1.0 - share) * y)
        .collect()
}

impl SparseFd {
    /// The merge of `self` and `other` over their base `g` with the columns learned on in the
    /// round, `round` ([`round_columns`]), explicit and the others one lazy rebase of `g`'s
    /// store (module docs).
    pub(super) fn merge_over_base(
        &mut self,
        other: &Self,
        g: &Self,
        share: f64,
        round: &[u32],
    ) -> MergeResult {
        let m = self.curv.m;
        let stack = Stack::new(self, other, Some(g));
        let r = stack.signs.len();
        let q = untouched_rows(&stack, m);
        let k = untouched_gram(g, round);
        let (mut gram, kept) = stack.gram(round);
        add_congruence(&mut gram, &q, &k, r, m);
        let merged = signed_coefficients(&gram, &stack.signs, m, m)?;
        let keep = merged.keep;
        // The learned-on columns' merged rows and weights, and their Gram matrix.
        let mut values = Vec::with_capacity(round.len() * (keep + 1));
        let mut h = vec![0.0; keep * keep];
        stack.merged_columns((round, &kept), &merged.coef, keep, share, |_, w, u| {
            values.push(w);
            values.extend_from_slice(u);
            for a in 0..keep {
                for (hab, ub) in h[a * keep..(a + 1) * keep].iter_mut().zip(u) {
                    *hab += u[a] * ub;
                }
            }
        })?;
        drop(kept);
        let cq = product(&merged.coef, &q, keep, r, m);
        add_congruence(&mut h, &cq, &k, keep, m);
        let (sigma, p) = gram_schmidt_map(&h, keep);
        let mut lambda = vec![0.0; m * m];
        lambda[..sigma.len() * m].copy_from_slice(&product(&p, &cq, sigma.len(), keep, m));
        let beta = transfer(self, other, share);
        // The base's store, from this learner's own slots: they differ from the base's on
        // `round` alone.
        let mut store = std::mem::replace(&mut self.w.cols, LazyColumns::new(0, m, Init::Zero));
        store.restore(&g.w.cols, round);
        store.rebase(Some(&lambda), &beta);
        for (&j, v) in round.iter().zip(values.chunks_exact(keep + 1)) {
            let slot = store.current(j as usize);
            slot[W] = v[0];
            for (i, zi) in slot[Z..Z + m].iter_mut().enumerate() {
                *zi = if i < sigma.len() {
                    dot(&p[i * keep..(i + 1) * keep], &v[1..])
                } else {
                    0.0
                };
            }
        }
        store.reset_pristine();
        self.finish_merge(other, Some(g), share, store, &sigma, merged.delta)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linear::{NewtonParams, OnlineLearner};
    use crate::merge::{share_of, MergeShare};
    use crate::Row;
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// Sparse rows over `d` columns, `nnz ≤ 5` each, half of them from a small hot set (so
    /// that blocks share columns), labels from the first value.
    fn block(n: usize, d: u32, seed: u64) -> Vec<(Vec<u32>, Vec<f64>, f64)> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        (0..n)
            .map(|_| {
                let nnz = rng.random_range(1..6);
                let mut idx: Vec<u32> = (0..nnz)
                    .map(|i| {
                        if i % 2 == 0 {
                            rng.random_range(0..8)
                        } else {
                            rng.random_range(0..d)
                        }
                    })
                    .collect();
                idx.sort_unstable();
                idx.dedup();
                let val: Vec<f64> = idx.iter().map(|_| rng.random_range(-1.0..1.0)).collect();
                let y = if val[0] > 0.0 { 1.0 } else { -1.0 };
                (idx, val, y)
            })
            .collect()
    }

    fn learned(l: &SparseFd, rows: &[(Vec<u32>, Vec<f64>, f64)]) -> SparseFd {
        let mut l = l.clone();
        for (idx, val, y) in rows {
            let x = Row::Sparse {
                indices: idx,
                values: val,
            };
            l.learn(x, *y, 1.0).unwrap();
        }
        l
    }

    /// Weights on every column and the example count.
    fn outputs(l: &SparseFd) -> Vec<f64> {
        let mut out = l.weights().into_owned();
        out.push(l.examples_seen() as f64);
        out
    }

    fn close(a: &[f64], b: &[f64]) -> Result<(), TestCaseError> {
        let scale = a.iter().fold(1.0f64, |s, x| s.max(x.abs()));
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            prop_assert!((x - y).abs() <= 1e-9 * scale, "entry {i}: {x} vs {y}");
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        /// Rounds of two learners merged over their base: the lazy merge (from the second
        /// round on, when the base is a merge) gives the materialised merge's weights, sketch
        /// and predictions to 1e-9, and a predict-learn continuation from it stays close.
        #[test]
        fn lazy_merge_equals_the_materialised_merge(
            seed in 0u64..1_000,
            m in 1usize..6,
            rfd in any::<bool>(),
            // More rows than a sketch of m ≤ 5 buffers (2m), so every block shrinks at least
            // once and the lazy path has a change of basis to carry (not a vacuous case).
            n in 12usize..40,
        ) {
            let d = 200u32;
            let params = NewtonParams::default();
            let fresh = if rfd {
                SparseFd::rfd(d as usize, m, 0.5, 7, params).unwrap()
            } else {
                SparseFd::fd(d as usize, m, 0.5, 7, params).unwrap()
            };
            let mut base = fresh;
            let (mut lazy_rounds, mut untouched, mut rebased) = (0, 0, 0);
            for round in 0..4u64 {
                let a = learned(&base, &block(n, d, seed * 10 + 2 * round));
                let b = learned(&base, &block(n + 3, d, seed * 10 + 2 * round + 1));
                let share = share_of(a.examples, b.examples, base.examples);
                if let Some(cols) = round_columns(&a, &b, &base) {
                    lazy_rounds += 1;
                    // Not a vacuous case: base columns left to the lazy rebase, and learners
                    // that changed their basis since the base.
                    untouched += base.w.cols.touched_columns().len().saturating_sub(cols.len());
                    rebased += usize::from(!a.w.cols.pristine_is_identity());
                }
                let mut fast = a.clone();
                fast.merge_share(&b, Some(&base), share).unwrap();
                let mut slow = a.clone();
                slow.merge_materialised(&b, Some(&base), share).unwrap();
                close(&outputs(&slow), &outputs(&fast))?;
                close(&slow.covariance(), &fast.covariance())?;
                close(&[slow.curv.shrink_total], &[fast.curv.shrink_total])?;
                base = fast;
            }
            prop_assert_eq!(lazy_rounds, 3, "every round after the first merges lazily");
            prop_assert!(untouched > 0 && rebased > 0);
        }
    }
}
