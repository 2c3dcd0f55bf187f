//! Per-feature arrays that know which features they hold (issue 26: saving a `-b 27` model read
//! all `d` entries of every first-order array, ≈ 1 s of CPU for a few hundred features seen).
//!
//! [`Touched`] keeps `N` arrays of `d` numbers (allocated zeroed, so untouched pages cost no
//! memory) together with the list of the features whose entries were ever set non-zero. Every
//! entry whose bits are not all zero is at a listed feature, so the file — the
//! [`super::sparse_vec`] encoding of each array, one after the other, the same bytes as `N`
//! fields `#[serde(with = "sparse_vec")]` in a row — is written from the list (sorted) without
//! reading the other `d − k` entries, and so is every walk of the state (the load check's NaN
//! search). A feature is listed when [`Touched::set`] gives it a non-zero entry while all its
//! entries were zero. Most arrays here only grow away from zero (squared-gradient sums, counts,
//! the step of a last update) or move with one that does (a weight), so a feature is listed
//! once; a plain OGD weight can return to exactly zero and be listed again, so the list is
//! compacted (sorted, each feature once, features back to all zeros dropped) whenever it has
//! doubled since the last compaction: at most twice the features held plus a constant, for
//! `O(1)` amortised per listing. A whole-array change ([`Touched::update_all`], a merge, `O(d)`
//! anyway) lists the non-zeros again. The arrays are of one [`Element`] type (`f64` unless
//! said: the proximal AdaGrad's update counts are `u64`).

use super::sparse_vec::{self, Element};
use crate::Row;
use serde::de::{self, Deserialize, Deserializer, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeTuple, Serializer};
use std::fmt;

/// `N` per-feature arrays of the same length and the features they hold (see the module
/// documentation).
#[derive(Clone, Debug)]
pub struct Touched<const N: usize, T: Element = f64> {
    arrays: [Vec<T>; N],
    /// Each feature with an entry whose bits are not all zero (in first-touch order since the
    /// last compaction; possibly also features whose entries went back to zero).
    listed: Vec<usize>,
    /// The list's length after its last compaction.
    compacted: usize,
}

/// Listings allowed before the first compaction.
const MIN_COMPACT: usize = 1024;

impl<const N: usize, T: Element> Touched<N, T> {
    /// `N` arrays of `d` zeros.
    pub fn new(d: usize) -> Self {
        Touched {
            arrays: std::array::from_fn(|_| vec![T::ZERO; d]),
            listed: Vec::new(),
            compacted: 0,
        }
    }

    /// `N` given arrays of one length, their non-zeros listed (an `O(d)` pass).
    #[cfg(test)]
    pub fn from_arrays(arrays: [Vec<T>; N]) -> Self {
        let mut t = Touched {
            arrays,
            listed: Vec::new(),
            compacted: 0,
        };
        t.update_all(|_| {});
        t
    }

    /// The length of each array.
    pub fn len(&self) -> usize {
        self.arrays[0].len()
    }

    /// Array `k`.
    #[inline]
    pub fn array(&self, k: usize) -> &[T] {
        &self.arrays[k]
    }

    /// The entries of feature `i` in the `N` arrays.
    #[inline]
    pub fn at(&self, i: usize) -> [T; N] {
        std::array::from_fn(|k| self.arrays[k][i])
    }

    /// Sets the entries of feature `i` (listing it if it had none).
    #[inline]
    pub fn set(&mut self, i: usize, values: [T; N]) {
        let zero = |v: &[T; N]| v.iter().all(|x| x.bits() == 0);
        let newly = zero(&self.at(i)) && !zero(&values);
        // The entries are written before a compaction reads them: a compaction drops the
        // features whose entries are all zero, which `i`'s still were.
        for (a, v) in self.arrays.iter_mut().zip(values) {
            a[i] = v;
        }
        if newly {
            self.listed.push(i);
            if self.listed.len() > 2 * self.compacted.max(MIN_COMPACT) {
                self.compact();
            }
        }
    }

    /// The list sorted, each feature once, without features whose entries are all zero.
    fn compact(&mut self) {
        self.listed = self.features();
        self.compacted = self.listed.len();
    }

    /// Changes the arrays as a whole (`f` may write any entry; the non-zeros are then listed
    /// again, an `O(d)` pass like the change itself).
    pub fn update_all(&mut self, f: impl FnOnce(&mut [Vec<T>; N])) {
        f(&mut self.arrays);
        let mut listed: Vec<usize> = self
            .arrays
            .iter()
            .flat_map(|a| sparse_vec::stored_positions(a))
            .collect();
        listed.sort_unstable();
        listed.dedup();
        self.compacted = listed.len();
        self.listed = listed;
    }

    /// The features with a non-zero entry in some array, increasing, each once (`O(k log k)`
    /// for `k` listed features: what a save and the load checks read).
    pub fn features(&self) -> Vec<usize> {
        let mut at = sorted_distinct(&self.listed, self.len());
        at.retain(|&i| self.at(i).iter().any(|x| x.bits() != 0));
        at
    }
}

/// The distinct values of `list`, increasing: a sort, or for a list long against `d` (every
/// value below `d`) a walk of a bitmap of `d` bits — the same result, without the sort's
/// `O(k log k)` (sorting a `2^20`-feature state's list was 7 % of a Dask delta's encode and
/// rebuild; docs/results/dask.md, delta58).
pub(crate) fn sorted_distinct(list: &[usize], d: usize) -> Vec<usize> {
    // The bitmap costs d/64 words to clear and walk; a sort ~log k steps a value.
    if list.len() < 64 || list.len() < d / 64 || list.iter().any(|&i| i >= d) {
        let mut at = list.to_vec();
        at.sort_unstable();
        at.dedup();
        return at;
    }
    let mut bits = vec![0u64; d.div_ceil(64)];
    for &i in list {
        bits[i / 64] |= 1 << (i % 64);
    }
    let mut at = Vec::with_capacity(list.len());
    for (w, &word) in bits.iter().enumerate() {
        let mut word = word;
        while word != 0 {
            at.push(w * 64 + word.trailing_zeros() as usize);
            word &= word - 1;
        }
    }
    at
}

impl Touched<1> {
    /// `w += scale · x` on the one array, entry by entry as [`Row::axpy_into`] does it (the same
    /// products and sums, entries beyond the array skipped), listing the features it makes
    /// non-zero.
    pub fn axpy(&mut self, scale: f64, x: Row<'_>) {
        let len = self.len();
        x.for_each_entry(|i, xi| {
            if i < len {
                let [w] = self.at(i);
                self.set(i, [w + scale * xi]);
            }
        });
    }
}

#[cfg(test)]
impl<const N: usize, T: Element> Touched<N, T> {
    /// Writes `junk` into every entry of the features not listed (what no learner may read
    /// when it saves or is checked).
    pub(crate) fn fill_untouched(&mut self, junk: T) {
        let listed: std::collections::HashSet<usize> = self.listed.iter().copied().collect();
        for a in &mut self.arrays {
            for (i, x) in a.iter_mut().enumerate() {
                if !listed.contains(&i) {
                    *x = junk;
                }
            }
        }
    }
}

#[cfg(test)]
impl<const N: usize> Touched<N> {
    /// Writes NaN into every entry of the features not listed.
    pub(crate) fn poison_untouched(&mut self) {
        self.fill_untouched(f64::NAN);
    }
}

/// The arrays, one after the other, each in the [`sparse_vec`] encoding.
impl<const N: usize, T: Element> Serialize for Touched<N, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let features = self.features();
        let mut t = s.serialize_tuple(N)?;
        for a in &self.arrays {
            t.serialize_element(&Listed {
                len: a.len(),
                features: &features,
                get: |i: usize| a[i],
            })?;
        }
        t.end()
    }
}

/// One array written from the positions of its non-zeros (`features` filtered: an entry of
/// a listed feature may be zero in this array), entry `i` being `get(i)`.
pub(crate) struct Listed<'a, G> {
    pub(crate) len: usize,
    pub(crate) features: &'a [usize],
    pub(crate) get: G,
}

impl<T: Element, G: Fn(usize) -> T + Copy> Serialize for Listed<'_, G> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let get = self.get;
        let at = self
            .features
            .iter()
            .copied()
            .filter(move |&i| get(i).bits() != 0);
        sparse_vec::serialize_listed(self.len, at, get, s)
    }
}

/// One array read with the positions of its entries.
struct Read<T>(Vec<T>, Vec<usize>);

impl<'de, T: Element> Deserialize<'de> for Read<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (v, at) = sparse_vec::deserialize_listed(d)?;
        Ok(Read(v, at))
    }
}

impl<'de, const N: usize, T: Element> Deserialize<'de> for Touched<N, T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_tuple(N, TouchedVisitor::<N, T>(std::marker::PhantomData))
    }
}

/// The union of two increasing lists, increasing (each value once).
pub(crate) fn merged(a: &[usize], b: &[usize]) -> Vec<usize> {
    let mut out = Vec::with_capacity(a.len().max(b.len()));
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let x = a[i].min(b[j]);
        out.push(x);
        i += usize::from(a[i] == x);
        j += usize::from(b[j] == x);
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

struct TouchedVisitor<const N: usize, T>(std::marker::PhantomData<T>);

impl<'de, const N: usize, T: Element> Visitor<'de> for TouchedVisitor<N, T> {
    type Value = Touched<N, T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{N} per-feature arrays")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Touched<N, T>, A::Error> {
        let mut arrays: [Vec<T>; N] = std::array::from_fn(|_| Vec::new());
        let mut listed = Vec::new();
        for k in 0..N {
            let Read(v, at) = seq
                .next_element()?
                .ok_or_else(|| de::Error::custom("per-feature arrays end early"))?;
            if k > 0 && v.len() != arrays[0].len() {
                return Err(de::Error::custom(format!(
                    "per-feature arrays of lengths {} and {}",
                    arrays[0].len(),
                    v.len()
                )));
            }
            arrays[k] = v;
            listed = if k == 0 { at } else { merged(&listed, &at) };
        }
        let compacted = listed.len();
        Ok(Touched {
            arrays,
            listed,
            compacted,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fields a learner held before: the same bytes must come out.
    #[derive(serde::Serialize)]
    struct TwoFields {
        #[serde(with = "crate::model::sparse_vec")]
        a: Vec<f64>,
        #[serde(with = "crate::model::sparse_vec")]
        b: Vec<f64>,
    }

    fn filled() -> Touched<2> {
        let mut t = Touched::<2>::new(1000);
        for (i, v) in [(7, 1.5), (3, -0.0), (999, 2.0), (7, 3.0), (64, 0.0)] {
            t.set(i, [v, 1.0]);
        }
        t.set(500, [0.0, 0.0]); // never non-zero: not listed
        t
    }

    #[test]
    fn the_bytes_are_those_of_the_plain_fields_and_untouched_entries_are_not_read() {
        let t = filled();
        let [a, b] = t.arrays.clone();
        let plain = postcard::to_allocvec(&TwoFields { a, b }).unwrap();
        assert_eq!(postcard::to_allocvec(&t).unwrap(), plain);
        assert_eq!(t.features(), [3, 7, 64, 999]);
        // A NaN in an untouched slot is never looked at (no scan of the d entries).
        let mut poisoned = t.clone();
        poisoned.arrays[0][500] = f64::NAN;
        poisoned.arrays[1][10] = f64::NAN;
        assert_eq!(postcard::to_allocvec(&poisoned).unwrap(), plain);
        // Read back: the same arrays, bit for bit, and the same bytes again.
        let back: Touched<2> = postcard::from_bytes(&plain).unwrap();
        for k in 0..2 {
            let (x, y) = (back.array(k), t.array(k));
            assert!(x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits()));
        }
        assert_eq!(back.features(), t.features());
        assert_eq!(postcard::to_allocvec(&back).unwrap(), plain);
    }

    #[test]
    fn a_whole_array_change_lists_the_non_zeros_again() {
        let mut t = filled();
        t.update_all(|[a, b]| {
            a[20] = 4.0;
            b.iter_mut().for_each(|x| *x = 0.0);
            a[999] = 0.0;
        });
        assert_eq!(t.features(), [3, 7, 20]); // −0.0 at 3 is kept (bit-exact)
    }

    /// A feature whose entry goes back to zero and away again, many times, keeps the list
    /// bounded (compacted when it doubles) and is listed once; `u64` arrays too.
    #[test]
    fn a_feature_toggled_many_times_keeps_the_list_bounded() {
        let mut t = Touched::<1>::new(100);
        t.set(9, [2.0]);
        for k in 0..10_000 {
            t.set(5, [if k % 2 == 0 { 1.0 } else { 0.0 }]);
            assert!(t.listed.len() <= 2 * MIN_COMPACT + 1, "{}", t.listed.len());
        }
        assert_eq!(t.features(), [9]);
        t.set(5, [1.0]);
        assert_eq!(t.features(), [5, 9]);
        let mut n = Touched::<1, u64>::new(100);
        n.set(40, [3]);
        n.set(2, [0]);
        assert_eq!(n.features(), [40]);
        let bytes = postcard::to_allocvec(&n).unwrap();
        #[derive(serde::Serialize)]
        struct Counts(#[serde(with = "crate::model::sparse_vec")] Vec<u64>);
        assert_eq!(
            bytes,
            postcard::to_allocvec(&Counts(n.array(0).to_vec())).unwrap()
        );
    }

    /// Every non-zero entry stays listed through the compactions, including the feature whose
    /// listing triggers one (a compaction once ran before that feature's entry was written and
    /// dropped it: one weight lost from the file per compaction).
    #[test]
    fn every_non_zero_survives_compactions_and_a_round_trip() {
        let d = 20_000;
        let mut t = Touched::<1>::new(d);
        let mut state = 12345u64;
        for k in 0..30_000u64 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let i = (state >> 33) as usize % d;
            t.set(i, [if k % 7 == 0 { 0.0 } else { (k + 1) as f64 }]);
        }
        let non_zero: Vec<usize> = (0..d).filter(|&i| t.array(0)[i] != 0.0).collect();
        assert!(non_zero.len() > 4 * MIN_COMPACT, "{}", non_zero.len());
        let listed = t.features();
        let lost: Vec<&usize> = non_zero.iter().filter(|i| !listed.contains(i)).collect();
        assert!(lost.is_empty(), "non-zero features not listed: {lost:?}");
        assert_eq!(listed, non_zero);
        let back: Touched<1> = postcard::from_bytes(&postcard::to_allocvec(&t).unwrap()).unwrap();
        assert_eq!(back.array(0), t.array(0));
    }

    #[test]
    fn arrays_of_different_lengths_are_refused() {
        let (a, b) = (vec![0.0, 1.0], vec![1.0]);
        let bytes = postcard::to_allocvec(&TwoFields { a, b }).unwrap();
        let err = postcard::from_bytes::<Touched<2>>(&bytes).unwrap_err();
        assert!(matches!(err, postcard::Error::SerdeDeCustom), "{err:?}");
    }
}
