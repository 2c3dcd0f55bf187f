//! A sorted keyed store in a model delta (`model/delta.rs`), streamed both ways: the entries
//! that are new or differ from the base's and the keys the base has that are gone, written
//! straight from the store and read straight into the rebuilt one, with no full-size list of
//! the store's entries, of the changes or of the patched result in between (a `2^20`-feature
//! state's delta is ~100 MB: each such list was ~40 MB of fresh pages to fault in and unmap,
//! about half of the encode's and the rebuild's CPU; docs/results/dask.md, delta58).
//!
//! # Wire form
//!
//! ```text
//! removed: seq of key (increasing),  changed: seq of (gap, value)
//! ```
//!
//! The first changed entry's `gap` is its key; each next key is the previous one plus one plus
//! its `gap` (so the keys increase by construction, and a key near the last costs one byte, not
//! its full varint). Deltas are not model files (one process hands them to another that runs
//! the same build), so this form has no format version of its own.
//!
//! # Two passes
//!
//! postcard writes a sequence's length first, so [`diff`] walks the merge of the store with the
//! base twice: once to count the changed entries (and list the removed keys, few), once to write
//! them. The store is given as a function returning a fresh iterator of its entries, increasing
//! by key.

use super::delta::NOT_ITS_BASE;
use serde::de::{self, DeserializeSeed, Deserializer, SeqAccess, Visitor};
use serde::ser::{self as ser, SerializeSeq, SerializeTuple, Serializer};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::iter::Peekable;

/// One step of the merge of a store with its base.
enum Step<V> {
    /// A key of the base that the store no longer has.
    Removed(u64),
    /// An entry new or differing from the base's.
    Changed(u64, V),
}

/// The merge of `now` (increasing by key) with `base` (increasing by key): the removed keys
/// and the changed entries, in key order; equal entries (`same`) are skipped.
struct Merge<'a, I: Iterator, V, F> {
    now: Peekable<I>,
    base: &'a [(u64, V)],
    same: F,
}

impl<I, V, F> Iterator for Merge<'_, I, V, F>
where
    I: Iterator<Item = (u64, V)>,
    V: Copy,
    F: Fn(&V, &V) -> bool,
{
    type Item = Step<V>;

    fn next(&mut self) -> Option<Step<V>> {
        loop {
            let (now, base) = (self.now.peek().copied(), self.base.first().copied());
            match (now, base) {
                (None, None) => return None,
                (Some((k, v)), None) => {
                    self.now.next();
                    return Some(Step::Changed(k, v));
                }
                (None, Some((b, _))) => {
                    self.base = &self.base[1..];
                    return Some(Step::Removed(b));
                }
                (Some((k, v)), Some((b, w))) => {
                    if k > b {
                        self.base = &self.base[1..];
                        return Some(Step::Removed(b));
                    }
                    self.now.next();
                    if k < b {
                        return Some(Step::Changed(k, v));
                    }
                    self.base = &self.base[1..];
                    if !(self.same)(&v, &w) {
                        return Some(Step::Changed(k, v));
                    }
                }
            }
        }
    }
}

fn merge<I, V, F>(now: I, base: &[(u64, V)], same: F) -> Merge<'_, I, V, F>
where
    I: Iterator<Item = (u64, V)>,
{
    Merge {
        now: now.peekable(),
        base,
        same,
    }
}

/// Serialises the delta of a store against `base` (its recorded snapshot; see the
/// [module](self) docs): `now()` gives the store's entries, increasing by key, each time it is
/// called; `same` compares values bitwise. An error (not a panic) if `now()`'s keys do not
/// increase.
pub(crate) fn diff<S, I, V>(
    now: impl Fn() -> I,
    base: &[(u64, V)],
    same: impl Fn(&V, &V) -> bool + Copy,
    s: S,
) -> Result<S::Ok, S::Error>
where
    S: Serializer,
    I: Iterator<Item = (u64, V)>,
    V: Serialize + Copy,
{
    let mut removed = Vec::new();
    let mut changed = 0usize;
    for step in merge(now(), base, same) {
        match step {
            Step::Removed(k) => removed.push(k),
            Step::Changed(..) => changed += 1,
        }
    }
    let mut t = s.serialize_tuple(2)?;
    t.serialize_element(&removed)?;
    t.serialize_element(&Changed {
        steps: || merge(now(), base, same),
        count: changed,
    })?;
    t.end()
}

/// The changed entries of a merge, gap-coded (written from a second walk of the merge).
struct Changed<F> {
    steps: F,
    count: usize,
}

impl<F, I, V> Serialize for Changed<F>
where
    F: Fn() -> I,
    I: Iterator<Item = Step<V>>,
    V: Serialize,
{
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.count))?;
        // The smallest key the next entry may have (`None` after `u64::MAX`).
        let (mut next, mut written) = (Some(0u64), 0usize);
        for step in (self.steps)() {
            if let Step::Changed(k, v) = step {
                let gap = next
                    .and_then(|n| k.checked_sub(n))
                    .ok_or_else(|| ser::Error::custom("a store's keys do not increase"))?;
                seq.serialize_element(&(gap, v))?;
                next = k.checked_add(1);
                written += 1;
            }
        }
        if written != self.count {
            return Err(ser::Error::custom("a store changed while it was written"));
        }
        seq.end()
    }
}

/// Where [`patch`] puts the rebuilt store's entries, in increasing key order.
pub(crate) trait Sink<V> {
    /// `n` entries at most are coming (a hint, for a list's capacity).
    fn reserve(&mut self, _n: usize) {}
    /// The entry at `key`; an error message if the key does not fit the store.
    fn put(&mut self, key: u64, value: V) -> Result<(), &'static str>;
}

/// Reads a delta written by [`diff`] against the same `base` and gives every entry of the
/// rebuilt store to `sink`, increasing by key: the base's entries not removed nor changed, and
/// the changed ones. A delta that does not fit `base` (a removed key it does not have, keys
/// not increasing, a gap past `u64`) is an error.
pub(crate) fn patch<'de, D, V, K>(d: D, base: &[(u64, V)], sink: &mut K) -> Result<(), D::Error>
where
    D: Deserializer<'de>,
    V: Deserialize<'de> + Copy,
    K: Sink<V>,
{
    d.deserialize_tuple(2, PatchVisitor { base, sink })
}

struct PatchVisitor<'a, 'k, V, K> {
    base: &'a [(u64, V)],
    sink: &'k mut K,
}

impl<'de, V: Deserialize<'de> + Copy, K: Sink<V>> Visitor<'de> for PatchVisitor<'_, '_, V, K> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a store's delta (removed keys, changed entries)")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let missing = || de::Error::custom("a store's delta ends early");
        let removed: Vec<u64> = seq.next_element()?.ok_or_else(missing)?;
        if removed.windows(2).any(|w| w[0] >= w[1]) {
            return Err(de::Error::custom(NOT_ITS_BASE));
        }
        let mut rest = Rest {
            base: self.base,
            removed: &removed,
            sink: self.sink,
        };
        seq.next_element_seed(ChangedSeed(&mut rest))?
            .ok_or_else(missing)?;
        rest.flush(u64::MAX, true).map_err(de::Error::custom)?;
        if rest.removed.is_empty() {
            Ok(())
        } else {
            Err(de::Error::custom(NOT_ITS_BASE)) // a removed key the base does not have
        }
    }
}

/// The base's entries not yet given to the sink, and the removed keys not yet met.
struct Rest<'a, 'k, V, K> {
    base: &'a [(u64, V)],
    removed: &'a [u64],
    sink: &'k mut K,
}

impl<V: Copy, K: Sink<V>> Rest<'_, '_, V, K> {
    /// Gives the sink the base's entries below `key` (and at `key` too when `inclusive`),
    /// skipping the removed ones; a base entry at `key` itself is dropped otherwise (the
    /// changed entry replaces it).
    fn flush(&mut self, key: u64, inclusive: bool) -> Result<(), &'static str> {
        while let Some(&(b, w)) = self.base.first() {
            if b > key || (b == key && !inclusive) {
                break;
            }
            self.base = &self.base[1..];
            if let Some((&r, more)) = self.removed.split_first() {
                if r < b {
                    return Err(NOT_ITS_BASE); // a removed key the base does not have
                }
                if r == b {
                    self.removed = more;
                    continue;
                }
            }
            self.sink.put(b, w)?;
        }
        if !inclusive && self.base.first().is_some_and(|&(b, _)| b == key) {
            self.base = &self.base[1..];
            if self.removed.first() == Some(&key) {
                self.removed = &self.removed[1..];
            }
        }
        Ok(())
    }
}

struct ChangedSeed<'r, 'a, 'k, V, K>(&'r mut Rest<'a, 'k, V, K>);

impl<'de, V: Deserialize<'de> + Copy, K: Sink<V>> DeserializeSeed<'de>
    for ChangedSeed<'_, '_, '_, V, K>
{
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, V: Deserialize<'de> + Copy, K: Sink<V>> Visitor<'de> for ChangedSeed<'_, '_, '_, V, K> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a store's changed entries")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let rest = self.0;
        // The declared count is read from the input: trusted up to 2^20 entries (no hostile
        // allocation); a longer list grows as it is read.
        let hint = seq.size_hint().unwrap_or(0).min(1 << 20);
        rest.sink.reserve(hint.saturating_add(rest.base.len()));
        // The smallest key the next entry may have (`None` after `u64::MAX`).
        let mut next = Some(0u64);
        while let Some((gap, v)) = seq.next_element::<(u64, V)>()? {
            let key = next
                .and_then(|n| n.checked_add(gap))
                .ok_or_else(|| de::Error::custom(NOT_ITS_BASE))?;
            rest.flush(key, false).map_err(de::Error::custom)?;
            rest.sink.put(key, v).map_err(de::Error::custom)?;
            next = key.checked_add(1);
        }
        Ok(())
    }
}

/// A sink collecting the entries (a store rebuilt as its sorted list).
impl<V> Sink<V> for Vec<(u64, V)> {
    fn reserve(&mut self, n: usize) {
        Vec::reserve(self, n);
    }
    fn put(&mut self, key: u64, value: V) -> Result<(), &'static str> {
        self.push((key, value));
        Ok(())
    }
}

#[cfg(test)]
mod tests;
