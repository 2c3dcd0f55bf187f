//! Two per-feature arrays stored side by side: feature `i`'s pair `[a_i, b_i]` is 16 contiguous
//! bytes, one cache line, where two [`Touched`](super::touched::Touched) arrays put `a_i` and
//! `b_i` `8·d` bytes apart (two lines). For a learner that reads and writes both entries of
//! every feature of a row — AdaGrad's weight `w_i` and squared-gradient sum `G_i` — on a wide
//! sparse stream each entry is a cache miss, so the layout halves the lines a non-zero touches
//! (issue 27; `docs/results/speed.md`, branch `adagrad10`).
//!
//! Everything else is [`Touched<2>`](super::touched::Touched)'s: allocated zeroed (untouched
//! pages cost no memory), the features with a non-zero entry listed (compacted when the list
//! doubles), and the **same file bytes** — the two arrays of a [`Touched<2>`] one after the
//! other, written from the listed features and read straight into the pairs (`O(k)` work for
//! `k` listed features, the rest of the zeroed pairs never touched), so models saved before
//! and after the change load into each other.
//!
//! [`Touched<2>`]: super::touched::Touched

use super::sparse_vec::{ArraySink, IntoSink};
#[cfg(test)]
use super::touched::Touched;
use super::touched::{merged, Listed};
use crate::Row;
use serde::de::{self, SeqAccess, Visitor};
use serde::ser::SerializeTuple;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Feature `i`'s two entries side by side (see the [module](self) docs).
#[derive(Clone, Debug)]
pub struct Interleaved {
    pairs: Vec<[f64; 2]>,
    /// Each feature with an entry whose bits are not all zero (as [`Touched`](super::touched::Touched)'s list).
    listed: Vec<usize>,
    /// The list's length after its last compaction.
    compacted: usize,
}

/// Listings allowed before the first compaction (as [`Touched`](super::touched::Touched)).
const MIN_COMPACT: usize = 1024;

fn is_zero(v: &[f64; 2]) -> bool {
    v.iter().all(|x| x.to_bits() == 0)
}

impl Interleaved {
    /// `d` pairs of zeros (`vec!` of an all-zero array allocates zeroed memory), advised to huge
    /// pages when large (`huge_pages.rs`: read at random, same values).
    pub fn new(d: usize) -> Self {
        let mut pairs = vec![[0.0; 2]; d];
        crate::huge_pages::advise(pairs.as_flattened_mut());
        Interleaved {
            pairs,
            listed: Vec::new(),
            compacted: 0,
        }
    }

    /// The number of features.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// The pairs, feature by feature.
    #[inline]
    pub fn pairs(&self) -> &[[f64; 2]] {
        &self.pairs
    }

    /// Feature `i`'s pair.
    #[inline]
    pub fn at(&self, i: usize) -> [f64; 2] {
        self.pairs[i]
    }

    /// Sets feature `i`'s pair (listing it if it was all zeros).
    #[inline]
    pub fn set(&mut self, i: usize, values: [f64; 2]) {
        let newly = is_zero(&self.pairs[i]) && !is_zero(&values);
        self.pairs[i] = values;
        if newly {
            self.listed.push(i);
            if self.listed.len() > 2 * self.compacted.max(MIN_COMPACT) {
                self.listed = self.features();
                self.compacted = self.listed.len();
            }
        }
    }

    /// The features with a non-zero entry, increasing, each once (`O(k log k)`).
    pub fn features(&self) -> Vec<usize> {
        let mut at = super::touched::sorted_distinct(&self.listed, self.len());
        at.retain(|&i| !is_zero(&self.pairs[i]));
        at
    }

    /// Entry `k` of every feature (an `O(d)` copy: reports, not the learning path).
    pub fn column(&self, k: usize) -> Vec<f64> {
        self.pairs.iter().map(|p| p[k]).collect()
    }

    /// `Σ_j a_j x_j` over `x`'s entries (the first entries of the pairs): the same sums in the
    /// same order as [`Row::dot`] of the array of first entries, so the same bits.
    #[inline]
    pub fn dot_first(&self, x: Row<'_>) -> f64 {
        let w = &self.pairs;
        match x {
            Row::Dense(v) => v.iter().zip(w).map(|(a, b)| a * b[0]).sum(),
            Row::Sparse { indices, values } => {
                // Row::dot's sums (its contiguous path for a leading block `0..n` adds the
                // same products in the same order).
                crate::data::example::gather_dot(indices, values, w.len(), |i| w[i][0])
            }
        }
    }

    /// Changes every pair in place from the same feature's pairs of `other` and `base` (an
    /// `O(d)` pass with no `d`-sized temporary: a merge of two states over their base), then
    /// lists the features left non-zero — the listing [`Touched::update_all`](super::touched::Touched::update_all) makes, so the
    /// same bytes as changing two [`Touched`](super::touched::Touched) arrays entry by entry.
    pub fn update_with(
        &mut self,
        other: &Interleaved,
        base: Option<&Interleaved>,
        f: impl Fn(&mut [f64; 2], [f64; 2], Option<[f64; 2]>),
    ) {
        assert_eq!(self.len(), other.len(), "pairs of different lengths");
        match base {
            Some(b) => {
                assert_eq!(self.len(), b.len(), "pairs of different lengths");
                for ((p, o), g) in self.pairs.iter_mut().zip(&other.pairs).zip(&b.pairs) {
                    f(p, *o, Some(*g));
                }
            }
            None => {
                for (p, o) in self.pairs.iter_mut().zip(&other.pairs) {
                    f(p, *o, None);
                }
            }
        }
        self.listed = (0..self.pairs.len())
            .filter(|&i| !is_zero(&self.pairs[i]))
            .collect();
        self.compacted = self.listed.len();
    }
}

#[cfg(test)]
impl Interleaved {
    /// Writes NaN into both entries of every feature not listed.
    pub(crate) fn poison_untouched(&mut self) {
        let listed: std::collections::HashSet<usize> = self.listed.iter().copied().collect();
        for (i, p) in self.pairs.iter_mut().enumerate() {
            if !listed.contains(&i) {
                *p = [f64::NAN; 2];
            }
        }
    }
}

/// The bytes of [`Touched<2>`](super::touched::Touched): the first entries' sparse array, then the second's, written
/// from the pairs (no [`Touched<2>`](super::touched::Touched) in between: two `8·d`-byte arrays of fresh pages, the
/// list sorted three times; docs/results/dask.md, delta58).
impl Serialize for Interleaved {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let features = self.features();
        let pairs = &self.pairs;
        let mut t = s.serialize_tuple(2)?;
        for k in 0..2 {
            t.serialize_element(&Listed {
                len: pairs.len(),
                features: &features,
                get: move |i: usize| pairs[i][k],
            })?;
        }
        t.end()
    }
}

/// Reads the bytes of [`Touched<2>`](super::touched::Touched) straight into the pairs.
impl<'de> Deserialize<'de> for Interleaved {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_tuple(2, PairsVisitor)
    }
}

struct PairsVisitor;

impl<'de> Visitor<'de> for PairsVisitor {
    type Value = Interleaved;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("2 per-feature arrays")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Interleaved, A::Error> {
        let mut column = Column {
            pairs: None,
            k: 0,
            at: [Vec::new(), Vec::new()],
        };
        for k in 0..2 {
            column.k = k;
            seq.next_element_seed(IntoSink::new(&mut column))?
                .ok_or_else(|| de::Error::custom("per-feature arrays end early"))?;
        }
        let Column {
            pairs: Some(mut out),
            at: [a, b],
            ..
        } = column
        else {
            return Err(de::Error::custom("per-feature arrays end early"));
        };
        let mut listed = merged(&a, &b);
        listed.retain(|&i| !is_zero(&out.pairs[i]));
        out.compacted = listed.len();
        out.listed = listed;
        Ok(out)
    }
}

/// One of the two arrays being read into the pairs (`k`: which entry of each pair), the
/// positions read listed.
struct Column {
    pairs: Option<Interleaved>,
    k: usize,
    at: [Vec<usize>; 2],
}

impl ArraySink<f64> for Column {
    fn start(&mut self, len: usize) -> Result<(), &'static str> {
        match &self.pairs {
            None => self.pairs = Some(Interleaved::new(len)),
            Some(p) if p.len() != len => return Err("per-feature arrays of different lengths"),
            Some(_) => {}
        }
        Ok(())
    }
    fn put(&mut self, j: usize, x: f64) {
        if let Some(p) = &mut self.pairs {
            p.pairs[j][self.k] = x;
            self.at[self.k].push(j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(state: &mut u64) -> u64 {
        *state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *state >> 33
    }

    /// The same sets on pairs and on two [`Touched`](super::touched::Touched) arrays: the same file bytes (both ways),
    /// the same features, and `dot_first` equal to [`Row::dot`] of the first array to the bit on
    /// sparse rows (in range, out of range, a leading block) and dense rows.
    #[test]
    fn pairs_write_the_bytes_of_two_touched_arrays_and_dot_to_the_bit() {
        let d = 5000;
        let (mut p, mut t) = (Interleaved::new(d), Touched::<2>::new(d));
        let mut s = 7u64;
        for k in 0..20_000u64 {
            let i = lcg(&mut s) as usize % d;
            let v = [(lcg(&mut s) % 1000) as f64 / 7.0 - 70.0, (k % 5) as f64];
            p.set(i, v);
            t.set(i, v);
        }
        let bytes = postcard::to_allocvec(&t).unwrap();
        assert_eq!(postcard::to_allocvec(&p).unwrap(), bytes);
        assert_eq!(p.features(), t.features());
        let back: Interleaved = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(postcard::to_allocvec(&back).unwrap(), bytes);
        let w = t.array(0);
        let bits = |x: f64| x.to_bits();
        for n in [0usize, 1, 3, 4, 7, 50, 201] {
            let mut indices: Vec<u32> = (0..n).map(|_| (lcg(&mut s) % d as u64) as u32).collect();
            indices.sort_unstable();
            indices.dedup();
            let values: Vec<f64> = indices.iter().map(|&i| 0.3 * i as f64 - 11.0).collect();
            let block: Vec<u32> = (0..n as u32).collect();
            let mut beyond = indices.clone();
            beyond.push(d as u32 + 3);
            let mut bv = values.clone();
            bv.push(2.0);
            for (ix, vs) in [(&indices, &values), (&block, &values), (&beyond, &bv)] {
                let vs = &vs[..ix.len().min(vs.len())];
                let ix = &ix[..vs.len()];
                let x = Row::Sparse {
                    indices: ix,
                    values: vs,
                };
                assert_eq!(bits(p.dot_first(x)), bits(x.dot(w)), "n = {n}");
            }
            let dense: Vec<f64> = (0..n).map(|j| j as f64 * 0.01 - 0.4).collect();
            let x = Row::Dense(&dense);
            assert_eq!(bits(p.dot_first(x)), bits(x.dot(w)));
        }
    }
}
