//! An inverted index of a few sparse rows by column, so that the products of an example with
//! all of them cost `O(nnz(x) + matches)` instead of one sorted merge per row.
//!
//! The sparse FD learner (SON paper Appendix G.2, Algorithm 10: `Gx` in the prediction and the
//! Newton step) keeps the up to `2m` raw gradient rows `G` of its buffer; on text each has as
//! many non-zeros as an example, so `Gx` by merges costs `O(2m·nnz)` branchy steps per example
//! (12 % of sparse FD-SON's time on r8_earn_vs_rest, by `perf`). With the index it is one hash
//! lookup per feature of `x`.

use crate::Row;
use rustc_hash::FxHashMap;

/// No further entry for this column.
const END: u32 = u32::MAX;

/// Column → the rows holding it (a linked list in one flat vector).
#[derive(Clone, Debug, Default)]
pub(crate) struct RowIndex {
    /// Number of rows indexed (rows `0..rows`).
    rows: usize,
    /// First entry of each column present in some row.
    head: FxHashMap<u32, u32>,
    /// `(row, next entry, value)`.
    entries: Vec<(u32, u32, f64)>,
}

impl RowIndex {
    /// Number of rows indexed.
    pub(crate) fn rows(&self) -> usize {
        self.rows
    }

    /// Forgets every row (keeps the allocations).
    pub(crate) fn clear(&mut self) {
        self.rows = 0;
        self.head.clear();
        self.entries.clear();
    }

    /// Adds the next row (`indices` distinct).
    pub(crate) fn push(&mut self, indices: &[u32], values: &[f64]) {
        let q = self.rows as u32;
        for (&j, &v) in indices.iter().zip(values) {
            let at = self.entries.len() as u32;
            let next = self.head.insert(j, at).unwrap_or(END);
            self.entries.push((q, next, v));
        }
        self.rows += 1;
    }

    /// `out[q] = rowᵀx` for every indexed row `q` (`out` has `rows` entries). For each row
    /// the products are added in increasing column order of a sparse `x`, as a sorted merge
    /// adds them, so the sums are the same to the bit.
    pub(crate) fn products(&self, indices: &[u32], values: &[f64], out: &mut [f64]) {
        out.iter_mut().for_each(|v| *v = 0.0);
        if self.entries.is_empty() {
            return;
        }
        for (&j, &xj) in indices.iter().zip(values) {
            let mut at = match self.head.get(&j) {
                Some(&at) => at,
                None => continue,
            };
            while at != END {
                let (q, next, v) = self.entries[at as usize];
                out[q as usize] += v * xj;
                at = next;
            }
        }
    }
}

/// `ĝᵀx` for a stored sparse row and any row `x` (sorted merge for sparse `x`).
pub(crate) fn sparse_dot(indices: &[u32], values: &[f64], x: Row<'_>) -> f64 {
    match x {
        Row::Dense(v) => indices
            .iter()
            .zip(values)
            .filter_map(|(&j, a)| v.get(j as usize).map(|b| a * b))
            .sum(),
        Row::Sparse {
            indices: xi,
            values: xv,
        } => {
            let (mut a, mut b, mut s) = (0, 0, 0.0);
            while a < indices.len() && b < xi.len() {
                match indices[a].cmp(&xi[b]) {
                    std::cmp::Ordering::Less => a += 1,
                    std::cmp::Ordering::Greater => b += 1,
                    std::cmp::Ordering::Equal => {
                        s += values[a] * xv[b];
                        a += 1;
                        b += 1;
                    }
                }
            }
            s
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn products_equal_sorted_merges_to_the_bit() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(12345);
        let mut rows = Vec::new();
        let mut index = RowIndex::default();
        for _ in 0..3 {
            index.clear();
            rows.clear();
            for _ in 0..20 {
                let mut idx: Vec<u32> = (0..40).map(|_| rng.random_range(0..300)).collect();
                idx.sort_unstable();
                idx.dedup();
                let val: Vec<f64> = idx.iter().map(|_| rng.random_range(-13.0..14.0)).collect();
                index.push(&idx, &val);
                rows.push((idx, val));
            }
            assert_eq!(index.rows(), 20);
            let mut xi: Vec<u32> = (0..60).map(|_| rng.random_range(0..300)).collect();
            xi.sort_unstable();
            xi.dedup();
            let xv: Vec<f64> = xi.iter().map(|_| rng.random_range(0.0..8.5)).collect();
            let mut out = vec![f64::NAN; 20];
            index.products(&xi, &xv, &mut out);
            for (q, (idx, val)) in rows.iter().enumerate() {
                let want = sparse_dot(
                    idx,
                    val,
                    Row::Sparse {
                        indices: &xi,
                        values: &xv,
                    },
                );
                assert_eq!(out[q].to_bits(), want.to_bits(), "row {q}");
            }
        }
    }

    #[test]
    fn empty_index_gives_zeros() {
        let index = RowIndex::default();
        let mut out = vec![];
        index.products(&[1, 2], &[1.0, 2.0], &mut out);
        assert!(out.is_empty());
    }
}
