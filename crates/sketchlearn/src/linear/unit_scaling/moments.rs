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
//! **When.** A state starts as an empty map (a new or loaded state does not know `d`) and
//! becomes a table the first time an example with `d ≤` [`DIRECT_FEATURES`] joins it
//! ([`Moments::for_dimension`]). A hashed model of more features keeps the map: its table would
//! cost `32·d` bytes however few features the data has (with random hashed indices every page
//! of it would be touched).

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

/// One table entry: a [`Welford`]'s `[n, mean, m2, max_abs]` (an array of `f64`, so that the
/// table is allocated zeroed: `vec![[0.0; 4]; d]`), 32-byte aligned so that it never straddles
/// two cache lines.
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
    Direct { table: Vec<Entry>, len: usize },
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
            Moments::Direct { table, .. } if table.len() >= d => {}
            _ if d > DIRECT_FEATURES => {}
            _ => self.make_direct(d),
        }
    }

    #[cold]
    fn make_direct(&mut self, d: usize) {
        let present: Vec<(usize, Welford)> = self.iter().collect();
        let size = present.iter().map(|&(i, _)| i + 1).fold(d, usize::max);
        if size > DIRECT_FEATURES {
            // A feature beyond the dimension (a state that failed `check`, never learned from):
            // left as a map.
            return;
        }
        let mut table = zeroed(size);
        for &(i, m) in &present {
            table[i] = Entry::put(m);
        }
        *self = Moments::Direct {
            table,
            len: present.len(),
        };
    }

    /// Feature `i`'s moments (`None`: not present).
    #[inline(always)]
    pub(super) fn get(&self, i: usize) -> Option<Welford> {
        match self {
            Moments::Direct { table, .. } => {
                let m = table.get(i)?.get();
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
                if i >= table.len() {
                    grow(table, i + 1);
                }
                *len += usize::from(table[i].0[0] == 0.0);
                table[i] = Entry::put(m);
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
                if let Some(e) = table.get_mut(i) {
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
        let direct = direct.into_iter().flat_map(|t| {
            t.iter()
                .enumerate()
                .filter(|(_, e)| e.0[0] != 0.0)
                .map(|(i, e)| (i, e.get()))
        });
        direct.chain(
            map.into_iter()
                .flat_map(|m| m.iter().map(|(&i, &w)| (i, w))),
        )
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
            crate::linear::prefetch::prefetch_entries(table, x);
        }
    }
}

/// `n` zero entries, allocated zeroed (`calloc`: pages cost nothing until touched) and, when
/// large, advised to huge pages (`huge_pages.rs`), as the sparse column store.
fn zeroed(n: usize) -> Vec<Entry> {
    let layout = std::alloc::Layout::array::<Entry>(n).expect("a table of at most 2^20 entries");
    if layout.size() == 0 {
        return Vec::new();
    }
    // SAFETY: the layout has a non-zero size; the memory is zeroed, and all-zero bytes are a
    // valid `Entry` (four `0.0`); `Vec` frees it with `Layout::array::<Entry>(n)`, the layout
    // it was allocated with, by the global allocator.
    let mut table = unsafe {
        let p = std::alloc::alloc_zeroed(layout).cast::<Entry>();
        if p.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Vec::from_raw_parts(p, n, n)
    };
    crate::huge_pages::advise(&mut table);
    table
}

/// Grows `table` to `n` zero entries (a feature beyond the dimension the table was made for:
/// only a state merged or loaded with a larger one).
#[cold]
fn grow(table: &mut Vec<Entry>, n: usize) {
    table.resize(n, Entry::default());
}
