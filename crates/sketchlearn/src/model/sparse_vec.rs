//! Per-feature arrays stored as their non-zero entries (format version 7; issue 26).
//!
//! A learner over hashed features (`-b 27`: `d = 2²⁷`) holds arrays of `d` numbers of which only
//! the entries of the features it has seen are non-zero (they are allocated zeroed and written
//! lazily, so they cost memory only where touched). Written as plain sequences they made the
//! model file `8·d` bytes per array whatever the data (5.4 GB for heart at `-b 27`). With
//! `#[serde(with = "crate::model::sparse_vec")]` such an array is written as
//!
//! ```text
//! len: varint,  nnz: varint,  nnz × (gap: varint, value)
//! ```
//!
//! where `gap` is the distance from the previous stored index plus one (the first: its index),
//! so the file grows with the number of distinct features, not with `d`. An entry is stored
//! when its bit pattern is not all zeros (`−0.0` is kept: loading is bit-exact). Writing needs
//! no copy of the array: one pass lists the positions of the non-zeros (a vector the size of
//! the stored entries, not of the array), looking at blocks of [`BLOCK`] entries at once (the
//! untouched pages of a zeroed array all read as zeros), and the entries are streamed from it.
//! Reading a payload of format version 6 or older (as [`super::from_bytes_with`] tells this
//! thread, see [`VersionScope`]) reads the plain sequence those versions wrote.
//!
//! The array is rebuilt zeroed (`vec![0; len]`: pages untouched until written) with `len` at most
//! [`MAX_DIM`](crate::run::MAX_DIM); an index at or beyond `len` is a decoding error.

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeSeq, SerializeTuple, Serializer};
use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;

/// The first format version whose per-feature arrays are sparse.
pub const SPARSE_SINCE: u32 = 7;

thread_local! {
    /// The format version of the payload this thread is decoding (the current one otherwise).
    static DECODING: Cell<u32> = const { Cell::new(super::FORMAT_VERSION) };
}

/// The format version of the payload being decoded on this thread (the current one outside a
/// decode), for types whose layout changed with a version.
pub(crate) fn decoding_version() -> u32 {
    DECODING.with(Cell::get)
}

/// While alive, payloads decoded on this thread are read as format `version`.
pub(crate) struct VersionScope(u32);

impl VersionScope {
    pub(crate) fn new(version: u32) -> Self {
        VersionScope(DECODING.with(|v| v.replace(version)))
    }
}

impl Drop for VersionScope {
    fn drop(&mut self) {
        DECODING.with(|v| v.set(self.0));
    }
}

/// Entries looked at together when searching for the non-zeros (one OR of their bits).
const BLOCK: usize = 64;

/// An element of a sparse array: zero is the all-zero bit pattern.
pub trait Element: Copy + Serialize + for<'de> Deserialize<'de> + 'static {
    /// The zero of the array.
    const ZERO: Self;
    /// The element's bit pattern (stored when not all zeros).
    fn bits(&self) -> u64;
}

impl Element for f64 {
    const ZERO: f64 = 0.0;
    fn bits(&self) -> u64 {
        self.to_bits()
    }
}

impl Element for u64 {
    const ZERO: u64 = 0;
    fn bits(&self) -> u64 {
        *self
    }
}

/// The positions of the stored (not all-zero) entries of `v`, increasing. A block of [`BLOCK`]
/// entries is skipped after one branch-free OR of its bits (vectorised), so the pass over a
/// mostly-zero array runs at memory speed.
pub(crate) fn stored_positions<T: Element>(v: &[T]) -> Vec<usize> {
    let mut out = Vec::new();
    for (b, block) in v.chunks(BLOCK).enumerate() {
        if block.iter().fold(0, |acc, x| acc | x.bits()) != 0 {
            let first = b * BLOCK;
            let stored = block.iter().enumerate().filter(|(_, x)| x.bits() != 0);
            out.extend(stored.map(|(k, _)| first + k));
        }
    }
    out
}

/// The non-zero entries `(gap, value)` of an array at the listed positions, streamed.
struct Entries<I, G> {
    at: I,
    get: G,
}

impl<T: Element, I: Iterator<Item = usize> + Clone, G: Fn(usize) -> T> Serialize for Entries<I, G> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.at.clone().count()))?;
        let mut next = 0u64;
        for j in self.at.clone() {
            seq.serialize_element(&(j as u64 - next, (self.get)(j)))?;
            next = j as u64 + 1;
        }
        seq.end()
    }
}

/// Writes `v` as its length, its number of non-zeros and the non-zeros. (This and
/// [`deserialize`] are the `#[serde(with)]` pair; every array of the library now goes through
/// [`super::touched`], which writes the same bytes from its list — the tests compare with them.)
#[cfg_attr(not(test), allow(dead_code))]
pub fn serialize<T: Element, S: Serializer>(v: &[T], s: S) -> Result<S::Ok, S::Error> {
    serialize_at(v, &stored_positions(v), s)
}

/// [`serialize`] when the caller knows the positions of the non-zeros (`at`, increasing, every
/// entry of `v` whose bits are not all zero and no other): the same bytes without looking at
/// the rest of `v` ([`super::touched`]).
pub(crate) fn serialize_at<T: Element, S: Serializer>(
    v: &[T],
    at: &[usize],
    s: S,
) -> Result<S::Ok, S::Error> {
    serialize_listed(v.len(), at.iter().copied(), |j| v[j], s)
}

/// [`serialize_at`] of an array of `len` entries read through `get` (entry `j` is `get(j)`:
/// an array stored interleaved with another, `super::interleaved`), its non-zeros at the
/// positions `at` gives (increasing; walked twice, to count and to write).
pub(crate) fn serialize_listed<T, S, I, G>(
    len: usize,
    at: I,
    get: G,
    s: S,
) -> Result<S::Ok, S::Error>
where
    T: Element,
    S: Serializer,
    I: Iterator<Item = usize> + Clone,
    G: Fn(usize) -> T + Copy,
{
    use super::delta::{self, Mode};
    let entries = || at.clone().map(move |j| (j as u64, get(j)));
    match delta::mode() {
        Mode::Whole | Mode::Patch => {}
        Mode::Record => {
            let listed: Vec<(u64, T)> = entries().collect();
            let words = listed.iter().flat_map(|(j, x)| [*j, x.bits()]);
            let digest = delta::digest(std::iter::once(len as u64).chain(words));
            delta::record(Snapshot::<T>(len, listed), digest);
            return ().serialize(s);
        }
        Mode::Diff => {
            let Snapshot(_, base) =
                delta::next_base::<Snapshot<T>>().map_err(serde::ser::Error::custom)?;
            let same = |a: &T, b: &T| a.bits() == b.bits();
            let mut t = s.serialize_tuple(2)?;
            t.serialize_element(&(len as u64))?;
            t.serialize_element(&Diff(entries, &base, same))?;
            return t.end();
        }
    }
    let mut t = s.serialize_tuple(2)?;
    t.serialize_element(&(len as u64))?;
    t.serialize_element(&Entries { at, get })?;
    t.end()
}

/// An array's entries against its base's, in a delta ([`super::keyed_delta`]).
struct Diff<'a, F, T, C>(F, &'a [(u64, T)], C);

impl<F, I, T, C> Serialize for Diff<'_, F, T, C>
where
    F: Fn() -> I,
    I: Iterator<Item = (u64, T)>,
    T: Element,
    C: Fn(&T, &T) -> bool + Copy,
{
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        super::keyed_delta::diff(&self.0, self.1, self.2, s)
    }
}

/// Reads what [`serialize`] wrote (or, for a payload of format version 6 or older, a plain
/// sequence).
#[cfg_attr(not(test), allow(dead_code))]
pub fn deserialize<'de, T: Element, D: Deserializer<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    if DECODING.with(Cell::get) < SPARSE_SINCE {
        return Vec::<T>::deserialize(d);
    }
    deserialize_listed(d).map(|(v, _)| v)
}

/// An array in a model delta (`model/delta.rs`): its length and its entries, `(index, value)`
/// increasing, that the base records; the delta holds the entries new or changed since.
struct Snapshot<T>(usize, Vec<(u64, T)>);

/// Where an array being read goes: told its length first, then given its stored entries,
/// increasing by index (each below the length).
pub(crate) trait ArraySink<T> {
    /// The array's length (before any entry); an error message if it does not fit.
    fn start(&mut self, len: usize) -> Result<(), &'static str>;
    /// Entry `j` (`j <` the length).
    fn put(&mut self, j: usize, x: T);
}

/// Reads one array (in the form this thread's decode is in: a file of format version 6 or
/// older, one of 7 or later, or a model delta patched onto the next recorded base) into a
/// sink, without a list of its entries in between.
pub(crate) struct IntoSink<'k, K, T>(&'k mut K, PhantomData<T>);

impl<'k, K, T> IntoSink<'k, K, T> {
    pub(crate) fn new(sink: &'k mut K) -> Self {
        IntoSink(sink, PhantomData)
    }
}

impl<'de, T: Element, K: ArraySink<T>> DeserializeSeed<'de> for IntoSink<'_, K, T> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        use super::delta::{self, Mode};
        if delta::mode() == Mode::Patch {
            return d.deserialize_tuple(2, PatchVisitor(self.0, PhantomData));
        }
        if DECODING.with(Cell::get) < SPARSE_SINCE {
            let v = Vec::<T>::deserialize(d)?;
            self.0.start(v.len()).map_err(de::Error::custom)?;
            for j in stored_positions(&v) {
                self.0.put(j, v[j]);
            }
            return Ok(());
        }
        d.deserialize_tuple(2, SparseVisitor(self.0, PhantomData))
    }
}

/// [`deserialize`] with the positions of the entries read (increasing; for a payload of format
/// version 6 or older, a plain sequence, the positions of its non-zeros).
pub(crate) fn deserialize_listed<'de, T: Element, D: Deserializer<'de>>(
    d: D,
) -> Result<(Vec<T>, Vec<usize>), D::Error> {
    let mut sink = Listed {
        v: Vec::new(),
        at: Vec::new(),
    };
    IntoSink::new(&mut sink).deserialize(d)?;
    Ok((sink.v, sink.at))
}

/// An array rebuilt zeroed, its entries written and their positions listed.
struct Listed<T> {
    v: Vec<T>,
    at: Vec<usize>,
}

impl<T: Element> ArraySink<T> for Listed<T> {
    fn start(&mut self, len: usize) -> Result<(), &'static str> {
        self.v = vec![T::ZERO; len];
        Ok(())
    }
    fn put(&mut self, j: usize, x: T) {
        self.v[j] = x;
        self.at.push(j);
    }
}

/// The array of a delta: its length (the base's), then its entries patched onto the base's.
struct PatchVisitor<'k, K, T>(&'k mut K, PhantomData<T>);

impl<'de, T: Element, K: ArraySink<T>> Visitor<'de> for PatchVisitor<'_, K, T> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sparse array's delta (length, changes)")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        use super::delta;
        let missing = || de::Error::custom("a sparse array's delta ends early");
        let len: u64 = seq.next_element()?.ok_or_else(missing)?;
        let Snapshot(base_len, base) =
            delta::next_base::<Snapshot<T>>().map_err(de::Error::custom)?;
        if len != base_len as u64 {
            return Err(de::Error::custom(delta::NOT_ITS_BASE));
        }
        self.0.start(base_len).map_err(de::Error::custom)?;
        let mut sink = Bounded(self.0, base_len);
        seq.next_element_seed(PatchSeed(&base, &mut sink))?
            .ok_or_else(missing)
    }
}

/// Entries checked against the array's length on their way to the sink.
struct Bounded<'k, K>(&'k mut K, usize);

impl<T, K: ArraySink<T>> super::keyed_delta::Sink<T> for Bounded<'_, K> {
    fn put(&mut self, key: u64, value: T) -> Result<(), &'static str> {
        if key >= self.1 as u64 {
            return Err(super::delta::NOT_ITS_BASE);
        }
        self.0.put(key as usize, value);
        Ok(())
    }
}

struct PatchSeed<'a, 's, T, K>(&'a [(u64, T)], &'s mut K);

impl<'de, T: Element, K: super::keyed_delta::Sink<T>> DeserializeSeed<'de>
    for PatchSeed<'_, '_, T, K>
{
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        super::keyed_delta::patch(d, self.0, self.1)
    }
}

struct SparseVisitor<'k, K, T>(&'k mut K, PhantomData<T>);

impl<'de, T: Element, K: ArraySink<T>> Visitor<'de> for SparseVisitor<'_, K, T> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sparse array (length, non-zero entries)")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let missing = || de::Error::custom("a sparse array ends early");
        let len: u64 = seq.next_element()?.ok_or_else(missing)?;
        if len > crate::run::MAX_DIM as u64 {
            return Err(de::Error::custom(format!(
                "a sparse array of length {len} (at most 2^32)"
            )));
        }
        self.0.start(len as usize).map_err(de::Error::custom)?;
        let entries = EntriesSeed(self.0, len, PhantomData);
        seq.next_element_seed(entries)?.ok_or_else(missing)
    }
}

/// A sparse array's entries `(gap, value)`, each put in the sink as it is read.
struct EntriesSeed<'k, K, T>(&'k mut K, u64, PhantomData<T>);

impl<'de, T: Element, K: ArraySink<T>> DeserializeSeed<'de> for EntriesSeed<'_, K, T> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, T: Element, K: ArraySink<T>> Visitor<'de> for EntriesSeed<'_, K, T> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sparse array's entries")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let len = self.1;
        let mut next = 0u64;
        while let Some((gap, x)) = seq.next_element::<(u64, T)>()? {
            let j = next
                .checked_add(gap)
                .filter(|&j| j < len)
                .ok_or_else(|| de::Error::custom("a sparse array's index is beyond its length"))?;
            self.0.put(j as usize, x);
            next = j + 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
    struct Holder {
        #[serde(with = "super")]
        w: Vec<f64>,
        #[serde(with = "super")]
        n: Vec<u64>,
    }

    #[test]
    fn round_trips_bit_for_bit_and_is_sized_to_the_non_zeros() {
        let mut w = vec![0.0; 1 << 20];
        w[3] = -0.0;
        w[17] = 2.5;
        w[(1 << 20) - 1] = f64::MIN_POSITIVE;
        let mut n = vec![0u64; 10];
        n[0] = 7;
        let h = Holder { w, n };
        let bytes = postcard::to_allocvec(&h).unwrap();
        assert!(bytes.len() < 64, "{} bytes", bytes.len());
        let back: Holder = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(back, h);
        assert_eq!(back.w[3].to_bits(), (-0.0f64).to_bits());
    }

    /// The block search finds every stored entry (including `−0.0` and the tiniest subnormal)
    /// at block edges, in a partial last block and among zeros, and nothing else.
    #[test]
    fn stored_positions_are_every_non_zero_bit_pattern() {
        let n = 5 * BLOCK + 7;
        let want = [0, BLOCK - 1, BLOCK, 3 * BLOCK + 5, n - 1];
        let mut v = vec![0.0f64; n];
        for (k, &j) in want.iter().enumerate() {
            v[j] = [-0.0, 1.0, f64::from_bits(1), -2.5, f64::NAN][k];
        }
        assert_eq!(stored_positions(&v), want);
        assert!(stored_positions(&vec![0.0f64; n]).is_empty());
        assert!(stored_positions::<u64>(&[]).is_empty());
    }

    #[test]
    fn an_older_payload_is_a_plain_sequence() {
        let plain = postcard::to_allocvec(&(vec![1.0f64, 0.0, 3.0], vec![0u64, 5])).unwrap();
        let _scope = VersionScope::new(6);
        let back: Holder = postcard::from_bytes(&plain).unwrap();
        assert_eq!((back.w, back.n), (vec![1.0, 0.0, 3.0], vec![0, 5]));
    }

    #[test]
    fn hostile_lengths_and_indices_are_errors() {
        // length 2^40; then an index beyond the length (gap 5 in an array of 3).
        let huge = postcard::to_allocvec(&(1u64 << 40, Vec::<(u64, f64)>::new())).unwrap();
        let beyond = postcard::to_allocvec(&(3u64, vec![(5u64, 1.0f64)])).unwrap();
        for bytes in [huge, beyond] {
            let r: Result<Holder, _> = postcard::from_bytes(&bytes);
            assert!(r.is_err());
        }
    }
}
