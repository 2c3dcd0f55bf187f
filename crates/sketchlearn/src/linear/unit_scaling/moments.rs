//! Where [`UnitScale`](super::UnitScale) keeps each feature's moments: a table indexed by the
//! feature while the dimension is at most [`DIRECT_FEATURES`], a hash map beyond.
//!
//! On a wide sparse stream every non-zero looks its feature up. In a hash map that is a hash, a
//! probe of the control bytes and a compare before the entry (two cache lines at random), and a
//! map that grows to every feature of the stream is rebuilt at each doubling: on issue 27's
//! generated stream (2^18 features, all of them seen) the map was 14.8 % of the default's CPU
//! and 46 % of its page faults (21 MB of buckets at the end, 42 MB allocated and touched on the
//! way). A direct table is `d` entries of 32 bytes, one random line per look-up (half a line,
//! aligned), allocated zeroed (untouched pages cost nothing) and never moved, and its entries
//! can be prefetched an example ahead ([`Moments::prefetch`]).
//!
//! **The same values.** A feature is present when its count is not zero (a stored entry always
//! has `n ≥ 1`: [`Welford::is_valid`]); every read returns what the map returned for the same
//! feature (absent → `None`), every write writes what it wrote, and nothing in the unit scaling
//! depends on the order in which the features are visited (the file sorts them, the merge and
//! the checks are per feature, the largest scale is a maximum). So both forms give the same
//! bits, and the same file bytes.
//!
//! **When.** A state starts as an empty map (a new state, or one loaded from a file, is not
//! given `d`) and
//! becomes a table the first time an example with `d ≤` [`DIRECT_FEATURES`] joins it
//! ([`Moments::for_dimension`]). A hashed model of more features keeps the map: its table would
//! cost `32·d` bytes however few features the data has (with random hashed indices every page
//! of it would be touched). A state rebuilt from a model delta (`model/delta.rs`: a Dask task's
//! result, merged or learned from next) knows `d` from its learner and is decoded straight into
//! the table ([`Moments::from_sorted`]), with no map in between: at `2^20` features the map's
//! inserts and the merge's look-ups in it were a large share of the client's rebuild and merge
//! (docs/results/dask.md, dask16).

use super::Welford;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Largest dimension whose moments are kept in a direct table (32 MiB of moments).
pub(super) const DIRECT_FEATURES: usize = 1 << 20;

/// A multiplicative hash of a feature index (Fibonacci hashing, as rustc's FxHash): no random
/// state, so runs are reproducible, and a few cycles per look-up.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct IndexHasher(u64);

impl Hasher for IndexHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_usize(&mut self, i: usize) {
        self.0 = (self.0.rotate_left(5) ^ i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

type Map = HashMap<usize, Welford, BuildHasherDefault<IndexHasher>>;

/// One table entry: a [`Welford`]'s `[n, mean, m2, max_abs]`, 32-byte aligned so that it never
/// straddles two cache lines (all-zero bytes are an empty entry; see [`Table`] for how the
/// table is allocated).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C, align(32))]
pub(super) struct Entry([f64; 4]);

impl Entry {
    #[inline(always)]
    fn get(self) -> Welford {
        let [n, mean, m2, max_abs] = self.0;
        Welford {
            n,
            mean,
            m2,
            max_abs,
        }
    }

    #[inline(always)]
    fn put(w: Welford) -> Entry {
        Entry([w.n, w.mean, w.m2, w.max_abs])
    }
}

/// Each feature's moments (see the [module](self) docs).
#[derive(Clone, Debug)]
pub(super) enum Moments {
    /// Feature `i` at `[i]`, absent when its count is 0; `len`: the features present.
    Direct { table: Table, len: usize },
    /// The features present.
    Map(Map),
}

impl Default for Moments {
    fn default() -> Self {
        Moments::Map(Map::default())
    }
}

/// Equal when the same features are present with the same moments (whatever the form).
impl PartialEq for Moments {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().all(|(i, m)| other.get(i) == Some(m))
    }
}

impl FromIterator<(usize, Welford)> for Moments {
    fn from_iter<I: IntoIterator<Item = (usize, Welford)>>(iter: I) -> Self {
        Moments::Map(iter.into_iter().collect())
    }
}

impl Moments {
    /// Makes this a direct table of at least `d` entries when `d ≤` [`DIRECT_FEATURES`] (once;
    /// `O(d)`), so that features `< d` are looked up directly.
    #[inline]
    pub(super) fn for_dimension(&mut self, d: usize) {
        match self {
            Moments::Direct { table, .. } if table.entries().len() >= d => {}
            _ if d > DIRECT_FEATURES => {}
            _ => self.make_direct(d),
        }
    }

    #[cold]
    fn make_direct(&mut self, d: usize) {
        let present: Vec<(usize, Welford)> = self.iter().collect();
        if let Some(direct) = Self::direct(&present, d) {
            *self = direct;
        }
    }

    /// The moments `present` (each feature once) as a direct table of at least `d` entries;
    /// `None` when a feature is beyond [`DIRECT_FEATURES`] or an entry has no examples (a state
    /// that fails `check`, e.g. damaged delta bytes: it stays a map, where `check` reports it).
    fn direct(present: &[(usize, Welford)], d: usize) -> Option<Moments> {
        let size = present.iter().try_fold(d, |size, &(i, m)| {
            (m.n != 0.0).then_some(size.max(i.checked_add(1)?))
        })?;
        if size > DIRECT_FEATURES {
            return None;
        }
        let mut table = Table::zeroed(size);
        let entries = table.entries_mut();
        for &(i, m) in present {
            entries[i] = Entry::put(m);
        }
        Some(Moments::Direct {
            table,
            len: present.len(),
        })
    }

    /// The moments `present` (sorted by feature, each once, as a file holds them): a direct
    /// table when `d` is known and at most [`DIRECT_FEATURES`] (what [`for_dimension`] would
    /// make of the map at the first example), else a map.
    ///
    /// [`for_dimension`]: Moments::for_dimension
    pub(super) fn from_sorted(present: Vec<(usize, Welford)>, d: Option<usize>) -> Moments {
        d.filter(|&d| d <= DIRECT_FEATURES)
            .and_then(|d| Self::direct(&present, d))
            .unwrap_or_else(|| present.into_iter().collect())
    }

    /// Feature `i`'s moments (`None`: not present).
    #[inline(always)]
    pub(super) fn get(&self, i: usize) -> Option<Welford> {
        match self {
            Moments::Direct { table, .. } => {
                let m = table.entries().get(i)?.get();
                (m.n != 0.0).then_some(m)
            }
            Moments::Map(map) => map.get(&i).copied(),
        }
    }

    /// Sets feature `i`'s moments (`m.n ≠ 0`: a present feature).
    #[inline(always)]
    pub(super) fn insert(&mut self, i: usize, m: Welford) {
        debug_assert!(m.n != 0.0);
        match self {
            Moments::Direct { table, len } => {
                if i >= table.entries().len() {
                    *table = table.grown(i + 1);
                }
                let e = &mut table.entries_mut()[i];
                *len += usize::from(e.0[0] == 0.0);
                *e = Entry::put(m);
            }
            Moments::Map(map) => {
                map.insert(i, m);
            }
        }
    }

    /// Removes feature `i` (if present).
    #[cfg(test)]
    pub(super) fn remove(&mut self, i: usize) {
        match self {
            Moments::Direct { table, len } => {
                if let Some(e) = table.entries_mut().get_mut(i) {
                    *len -= usize::from(e.0[0] != 0.0);
                    *e = Entry::default();
                }
            }
            Moments::Map(map) => {
                map.remove(&i);
            }
        }
    }

    /// The number of features present.
    pub(super) fn len(&self) -> usize {
        match self {
            Moments::Direct { len, .. } => *len,
            Moments::Map(map) => map.len(),
        }
    }

    /// The features present with their moments, in no particular order (a table's by index).
    pub(super) fn iter(&self) -> impl Iterator<Item = (usize, Welford)> + '_ {
        let (direct, map) = match self {
            Moments::Direct { table, .. } => (Some(table), None),
            Moments::Map(map) => (None, Some(map)),
        };
        let direct = direct.into_iter().flat_map(Table::present);
        direct.chain(
            map.into_iter()
                .flat_map(|m| m.iter().map(|(&i, &w)| (i, w))),
        )
    }

    /// The table, whose present entries ([`Table::present`]) come in index order (`None` for
    /// a map, which has no order).
    pub(super) fn in_order(&self) -> Option<&Table> {
        match self {
            Moments::Direct { table, .. } => Some(table),
            Moments::Map(_) => None,
        }
    }

    /// Starts loading the entries of `x`'s features before they are updated one after the
    /// other (reads only, no value changes): a table's are prefetched; a map's are looked up once
    /// first, since these look-ups do not depend on each other, so their cache misses overlap
    /// (in the update each one waits behind the previous entry's arithmetic).
    #[inline]
    pub(super) fn start_loading(&self, x: crate::Row<'_>) {
        match (self, x) {
            (Moments::Direct { .. }, _) => self.prefetch(x),
            (Moments::Map(map), crate::Row::Sparse { indices, .. }) => {
                let seen = indices
                    .iter()
                    .filter(|&&i| map.contains_key(&(i as usize)))
                    .count();
                std::hint::black_box(seen);
            }
            (Moments::Map(_), crate::Row::Dense(_)) => {}
        }
    }

    /// A hint that the entries of `x`'s features are read soon (a table's only; no value
    /// changes): one example ahead, their cache misses overlap the learning of the one before.
    #[inline]
    pub(super) fn prefetch(&self, x: crate::Row<'_>) {
        if let Moments::Direct { table, .. } = self {
            crate::linear::prefetch::prefetch_entries(table.entries(), x);
        }
    }
}

/// Moments rebuilt from their entries given in increasing feature order (a model delta's,
/// `unit_scaling/wire.rs`): what [`Moments::from_sorted`] makes of the list of them, written
/// straight into the direct table of the dimension while every entry fits it (a present entry
/// below the dimension), with no list in between; an entry that does not fit (a feature beyond
/// the dimension, an entry with no examples: damaged bytes) turns what was written into the
/// list, and the list goes through [`Moments::from_sorted`].
pub(super) struct SortedInto {
    d: Option<usize>,
    /// The table and its present entries while every entry fits it.
    table: Option<(Table, usize)>,
    list: Vec<(usize, Welford)>,
}

impl SortedInto {
    /// For a learner of dimension `d` (`None`: unknown, a map).
    pub(super) fn new(d: Option<usize>) -> SortedInto {
        let fits = d.filter(|&d| d > 0 && d <= DIRECT_FEATURES);
        SortedInto {
            d,
            table: fits.map(|d| (Table::zeroed(d), 0)),
            list: Vec::new(),
        }
    }

    /// The next entry (features increasing).
    pub(super) fn push(&mut self, i: usize, m: Welford) {
        if let Some((table, len)) = &mut self.table {
            if let Some(e) = table.entries_mut().get_mut(i).filter(|_| m.n != 0.0) {
                *e = Entry::put(m);
                *len += 1;
                return;
            }
            self.list = table.present().collect();
            self.table = None;
        }
        self.list.push((i, m));
    }

    /// A hint: `n` entries at most are coming.
    pub(super) fn reserve(&mut self, n: usize) {
        if self.table.is_none() {
            self.list.reserve(n);
        }
    }

    /// The moments.
    pub(super) fn finish(self) -> Moments {
        match self.table {
            Some((table, len)) => Moments::Direct { table, len },
            None => Moments::from_sorted(self.list, self.d),
        }
    }
}

/// A table of [`Entry`]s, zero until written: `n` entries at the first 32-byte-aligned address
/// of a `Vec<f64>` of `4n + 3` zeros.
///
/// Why not a `Vec<Entry>`: Rust's system allocator takes `calloc` (fresh pages, zero until
/// touched: a table of 2^20 entries costs nothing for the features a stream never has) only
/// for alignments of at most 16; for `Entry`'s 32 it allocates and then writes every byte, so
/// every model with `d ≤ 2^20` would touch `32·d` bytes at its first example (stop 44's review:
/// 9,164 minor page faults for a 2-row file at `-b 20`, 1,018 with the map). A `Vec<f64>` of
/// zeros is allocated by `calloc` (`vec![0.0; n]`), and an offset of 0–3 `f64`s aligns its
/// entries.
#[derive(Debug, Default)]
pub(super) struct Table {
    buf: Vec<f64>,
    /// `buf[off..off + 4n]` are the entries (`buf.as_ptr() + off` is 32-byte aligned).
    off: usize,
    n: usize,
}

impl Table {
    /// `n` zero entries, advised to huge pages when large (`huge_pages.rs`), as the sparse
    /// column store.
    fn zeroed(n: usize) -> Table {
        if n == 0 {
            return Table::default();
        }
        let mut buf = vec![0.0f64; 4 * n + 3];
        // The vector's address is a multiple of 8: 0–3 more `f64`s reach a multiple of 32.
        let off = (32 - buf.as_ptr() as usize % 32) % 32 / 8;
        crate::huge_pages::advise(&mut buf);
        Table { buf, off, n }
    }

    /// The entries.
    #[inline(always)]
    pub(super) fn entries(&self) -> &[Entry] {
        if self.n == 0 {
            // An empty `Vec`'s dangling pointer is aligned for `f64` only.
            return &[];
        }
        debug_assert!(self.off + 4 * self.n <= self.buf.len());
        // SAFETY: `buf[off..off + 4n]` is in bounds (`zeroed` made `4n + 3` values and `off ≤
        // 3`), starts at a 32-byte-aligned address (`off`), and
        // `Entry` is `repr(C)` `[f64; 4]`: 32 bytes, any bit pattern valid. The borrow of
        // `self` covers the slice's lifetime.
        unsafe {
            let p = self.buf.as_ptr().add(self.off).cast::<Entry>();
            std::slice::from_raw_parts(p, self.n)
        }
    }

    /// The present entries (count not zero) with their features, increasing.
    pub(super) fn present(&self) -> impl Iterator<Item = (usize, Welford)> + '_ {
        let entries = self.entries().iter().enumerate();
        entries
            .filter(|(_, e)| e.0[0] != 0.0)
            .map(|(i, e)| (i, e.get()))
    }

    /// The entries, to write.
    #[inline(always)]
    pub(super) fn entries_mut(&mut self) -> &mut [Entry] {
        if self.n == 0 {
            return &mut [];
        }
        debug_assert!(self.off + 4 * self.n <= self.buf.len());
        // SAFETY: as in `entries`, with `self` borrowed mutably for the slice's lifetime.
        unsafe {
            let p = self.buf.as_mut_ptr().add(self.off).cast::<Entry>();
            std::slice::from_raw_parts_mut(p, self.n)
        }
    }

    /// A table of `n ≥ self.n` entries holding these (a feature beyond the dimension the table
    /// was made for: only a state merged or loaded with a larger one).
    #[cold]
    fn grown(&self, n: usize) -> Table {
        let mut t = Table::zeroed(n.max(self.n));
        t.copy_present(self);
        t
    }

    /// Writes `from`'s present entries into `self` (at least as long), leaving the absent ones'
    /// pages untouched.
    fn copy_present(&mut self, from: &Table) {
        for (to, e) in self.entries_mut().iter_mut().zip(from.entries()) {
            if e.0[0] != 0.0 {
                *to = *e;
            }
        }
    }
}

/// A copy writes only the present entries: a clone of a state that saw few of its `d` features
/// (a Python `clone`, a Dask task's copy) commits as few pages as the original.
impl Clone for Table {
    fn clone(&self) -> Table {
        self.grown(self.n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every table's entries start at a 32-byte boundary (the offset is right whatever address
    /// the allocator gave), and a clone or a grown table has the same entries.
    #[test]
    fn tables_are_aligned_and_copies_keep_their_entries() {
        for n in [1, 2, 3, 5, 1000, 70_000] {
            let mut t = Table::zeroed(n);
            assert_eq!(t.entries().as_ptr() as usize % 32, 0, "n = {n}");
            assert_eq!(t.entries().len(), n);
            assert!(t.entries().iter().all(|e| *e == Entry::default()));
            t.entries_mut()[n - 1] = Entry([1.0, 2.0, 3.0, 4.0]);
            t.entries_mut()[0] = Entry([5.0, -0.0, 0.0, 1.0]);
            let c = t.clone();
            assert_eq!(c.entries().as_ptr() as usize % 32, 0);
            assert_eq!(c.entries(), t.entries());
            let g = t.grown(n + 3);
            assert_eq!(g.entries().as_ptr() as usize % 32, 0);
            assert_eq!(&g.entries()[..n], t.entries());
            assert!(g.entries()[n..].iter().all(|e| *e == Entry::default()));
        }
        assert!(Table::zeroed(0).entries().is_empty());
        assert!(Table::default().clone().entries().is_empty());
    }

    /// Entries pushed one by one make what [`Moments::from_sorted`] makes of their list: the
    /// same form (a table of the same length, or a map), the same entries and count — when
    /// every entry fits the dimension, and when one does not (beyond it, first or after
    /// others; no examples; past the direct limit; no dimension).
    #[test]
    fn sorted_into_makes_what_from_sorted_makes() {
        let m = |n: f64| Welford {
            n,
            mean: -0.5,
            m2: 0.25,
            max_abs: 2.0,
        };
        let big = DIRECT_FEATURES + 5;
        type Case = (Vec<(usize, Welford)>, Option<usize>);
        let cases: Vec<Case> = vec![
            (vec![(0, m(1.0)), (3, m(2.0)), (7, m(1.0))], Some(8)),
            (vec![], Some(8)),
            (vec![(0, m(1.0)), (9, m(1.0))], Some(8)),
            (vec![(12, m(1.0))], Some(8)),
            (vec![(1, m(3.0)), (5, m(0.0)), (6, m(1.0))], Some(8)),
            (vec![(1, m(3.0)), (big, m(1.0))], Some(8)),
            (vec![(1, m(3.0))], Some(big)),
            (vec![(1, m(3.0)), (4, m(1.0))], None),
            (vec![(2, m(1.0))], Some(0)),
        ];
        for (list, d) in cases {
            let want = Moments::from_sorted(list.clone(), d);
            let mut into = SortedInto::new(d);
            into.reserve(list.len());
            for &(i, w) in &list {
                into.push(i, w);
            }
            let got = into.finish();
            let form = |x: &Moments| match x {
                Moments::Direct { table, len } => (Some(table.entries().len()), *len),
                Moments::Map(map) => (None, map.len()),
            };
            assert_eq!(form(&got), form(&want), "{list:?}, {d:?}");
            assert_eq!(got, want, "{list:?}, {d:?}");
            assert_eq!(
                got.iter().collect::<Vec<_>>(),
                want.iter().collect::<Vec<_>>()
            );
        }
    }

    /// Damaged delta bytes (an entry with no examples, an index at `usize::MAX`) rebuild as a
    /// map, where `check` reports them, never a table that miscounts or an overflow.
    #[test]
    fn damaged_sorted_moments_stay_a_map() {
        let m = |n: f64| Welford {
            n,
            mean: 0.5,
            m2: 0.25,
            max_abs: 1.0,
        };
        let good = Moments::from_sorted(vec![(0, m(2.0)), (5, m(1.0))], Some(8));
        assert!(matches!(good, Moments::Direct { len: 2, .. }));
        let empty_entry = Moments::from_sorted(vec![(0, m(2.0)), (5, m(0.0))], Some(8));
        assert!(matches!(empty_entry, Moments::Map(_)));
        let huge = Moments::from_sorted(vec![(0, m(2.0)), (usize::MAX, m(1.0))], Some(8));
        assert!(matches!(huge, Moments::Map(_)));
    }
}
