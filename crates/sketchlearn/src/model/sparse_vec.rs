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

use serde::de::{self, Deserialize, Deserializer, SeqAccess, Visitor};
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
struct Entries<'a, T>(&'a [T], &'a [usize]);

impl<T: Element> Serialize for Entries<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.1.len()))?;
        let mut next = 0u64;
        for &j in self.1 {
            seq.serialize_element(&(j as u64 - next, self.0[j]))?;
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
    use super::delta::{self, Mode};
    match delta::mode() {
        Mode::Whole | Mode::Patch => {}
        Mode::Record => {
            let listed = entries(v, at);
            let words = listed.iter().flat_map(|(j, x)| [*j, x.bits()]);
            let digest = delta::digest(std::iter::once(v.len() as u64).chain(words));
            delta::record(Snapshot::<T>(v.len(), listed), digest);
            return ().serialize(s);
        }
        Mode::Diff => {
            let Snapshot(_, base) =
                delta::next_base::<Snapshot<T>>().map_err(serde::ser::Error::custom)?;
            let same = |a: &T, b: &T| a.bits() == b.bits();
            let d = delta::diff_sorted(&entries(v, at), &base, same);
            return (v.len() as u64, d).serialize(s);
        }
    }
    let mut t = s.serialize_tuple(2)?;
    t.serialize_element(&(v.len() as u64))?;
    t.serialize_element(&Entries(v, at))?;
    t.end()
}

/// Reads what [`serialize`] wrote (or, for a payload of format version 6 or older, a plain
/// sequence).
#[cfg_attr(not(test), allow(dead_code))]
pub fn deserialize<'de, T: Element, D: Deserializer<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    if DECODING.with(Cell::get) < SPARSE_SINCE {
        return Vec::<T>::deserialize(d);
    }
    d.deserialize_tuple(2, SparseVisitor(PhantomData))
        .map(|(v, _)| v)
}

/// An array in a model delta (`model/delta.rs`): its length and its entries, `(index, value)`
/// increasing, that the base records; the delta holds the entries new or changed since.
struct Snapshot<T>(usize, Vec<(u64, T)>);

fn entries<T: Element>(v: &[T], at: &[usize]) -> Vec<(u64, T)> {
    at.iter().map(|&j| (j as u64, v[j])).collect()
}

/// The array of a delta, its other entries taken from the next recorded base.
fn patched<'de, T: Element, D: Deserializer<'de>>(d: D) -> Result<(Vec<T>, Vec<usize>), D::Error> {
    use super::delta::{self, Keyed};
    let (len, keyed) = <(u64, Keyed<u64, T>)>::deserialize(d)?;
    let Snapshot(base_len, base) = delta::next_base::<Snapshot<T>>().map_err(de::Error::custom)?;
    let all = delta::patch_sorted(&base, &keyed).map_err(de::Error::custom)?;
    if len != base_len as u64 || all.last().is_some_and(|e| e.0 >= len) {
        return Err(de::Error::custom(delta::NOT_ITS_BASE));
    }
    let mut v = vec![T::ZERO; len as usize];
    let mut at = Vec::with_capacity(all.len());
    for (j, x) in all {
        v[j as usize] = x;
        at.push(j as usize);
    }
    Ok((v, at))
}

/// [`deserialize`] with the positions of the entries read (increasing; for a payload of format
/// version 6 or older, a plain sequence, the positions of its non-zeros).
pub(crate) fn deserialize_listed<'de, T: Element, D: Deserializer<'de>>(
    d: D,
) -> Result<(Vec<T>, Vec<usize>), D::Error> {
    if super::delta::mode() == super::delta::Mode::Patch {
        return patched(d);
    }
    if DECODING.with(Cell::get) < SPARSE_SINCE {
        let v = Vec::<T>::deserialize(d)?;
        let at = stored_positions(&v);
        return Ok((v, at));
    }
    d.deserialize_tuple(2, SparseVisitor(PhantomData))
}

struct SparseVisitor<T>(PhantomData<T>);

impl<'de, T: Element> Visitor<'de> for SparseVisitor<T> {
    type Value = (Vec<T>, Vec<usize>);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sparse array (length, non-zero entries)")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let missing = || de::Error::custom("a sparse array ends early");
        let len: u64 = seq.next_element()?.ok_or_else(missing)?;
        if len > crate::run::MAX_DIM as u64 {
            return Err(de::Error::custom(format!(
                "a sparse array of length {len} (at most 2^32)"
            )));
        }
        let entries: Vec<(u64, T)> = seq.next_element()?.ok_or_else(missing)?;
        let mut v = vec![T::ZERO; len as usize];
        let mut at = Vec::with_capacity(entries.len());
        let mut next = 0u64;
        for (gap, x) in entries {
            let j = next
                .checked_add(gap)
                .filter(|&j| j < len)
                .ok_or_else(|| de::Error::custom("a sparse array's index is beyond its length"))?;
            v[j as usize] = x;
            at.push(j as usize);
            next = j + 1;
        }
        Ok((v, at))
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
