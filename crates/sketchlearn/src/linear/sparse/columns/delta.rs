//! The column store in a model delta (`model/delta.rs`): of the stored columns, only those
//! whose slot is new or differs bitwise from the base's slot of the same column; everything
//! else ([`Stored`] without its slots: the epochs, their member lists, the stored columns'
//! order) goes in whole. A column's slot changes only when it is brought up to date (touched
//! while learning, or flushed), so a task's delta holds the columns of its block.

use super::stored::slot_in;
use super::Stored;
use crate::model::delta::{next_base, NOT_ITS_BASE};
use serde::{Deserialize, Serialize};

/// A store's stored columns and their slots (what the base records).
pub(super) struct Snapshot {
    stride: usize,
    touched: Vec<u32>,
    slots: Vec<f64>,
}

impl Snapshot {
    pub(super) fn new(stride: usize, st: Stored) -> Self {
        Snapshot {
            stride,
            touched: st.touched,
            slots: st.slots,
        }
    }

    /// The slot of column `j`, if stored (`index`: `(column, position)` sorted by column).
    fn slot(&self, index: &[(u32, u32)], j: u32) -> Option<&[f64]> {
        let k = index.binary_search_by_key(&j, |p| p.0).ok()?;
        let p = index[k].1 as usize * self.stride;
        Some(&self.slots[p..p + self.stride])
    }

    fn index(&self) -> Vec<(u32, u32)> {
        let mut index: Vec<(u32, u32)> = (0..).zip(&self.touched).map(|(k, &j)| (j, k)).collect();
        index.sort_unstable();
        index
    }
}

/// [`Stored`] with `slots` empty, the positions (in `touched`, increasing) of the columns
/// whose slot the delta holds, and those slots (what [`diff`] writes, from the store).
#[derive(Deserialize)]
pub(super) struct StoredDelta {
    head: Stored,
    changed: Vec<u32>,
    slots: Vec<f64>,
}

/// [`StoredDelta`]'s bytes, the changed slots read from the store's `data` as they are written
/// (no copy of every stored slot, then of the changed ones, first: two ~100 MB lists of fresh
/// pages for a `2^20`-feature store; docs/results/dask.md, delta58).
#[derive(Serialize)]
pub(super) struct StoredDeltaRef<'a> {
    head: Stored,
    changed: Vec<u32>,
    slots: ChangedSlots<'a>,
}

/// The slots of the changed columns, in order.
pub(super) struct ChangedSlots<'a> {
    data: &'a [f64],
    stride: usize,
    columns: Vec<u32>,
}

impl Serialize for ChangedSlots<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let st = self.stride;
        let mut seq = s.serialize_seq(Some(self.columns.len() * st))?;
        for &j in &self.columns {
            for x in slot_in(self.data, j, st) {
                seq.serialize_element(x)?;
            }
        }
        seq.end()
    }
}

fn same_bits(a: &[f64], b: &[f64]) -> bool {
    a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// `head` (a store's [`Stored`] without its slots; `data`: the store's slots by column, of
/// `stride` numbers each) against the next recorded base.
pub(super) fn diff(
    head: Stored,
    data: &[f64],
    stride: usize,
) -> Result<StoredDeltaRef<'_>, &'static str> {
    let base: Snapshot = next_base()?;
    if base.stride != stride {
        return Err(NOT_ITS_BASE);
    }
    let index = base.index();
    let (mut changed, mut columns) = (Vec::new(), Vec::new());
    for (k, &j) in (0..).zip(&head.touched) {
        let slot = slot_in(data, j, stride);
        if !base.slot(&index, j).is_some_and(|b| same_bits(b, slot)) {
            changed.push(k);
            columns.push(j);
        }
    }
    Ok(StoredDeltaRef {
        head,
        changed,
        slots: ChangedSlots {
            data,
            stride,
            columns,
        },
    })
}

/// The [`Stored`] of a delta, the slots it does not hold taken from the next recorded base.
pub(super) fn patch(d: StoredDelta) -> Result<Stored, &'static str> {
    let base: Snapshot = next_base()?;
    let s = base.stride;
    let mut head = d.head;
    if d.slots.len() != d.changed.len() * s || !head.slots.is_empty() {
        return Err(NOT_ITS_BASE);
    }
    let every = d.changed.len() == head.touched.len();
    if every && (0u32..).zip(&d.changed).all(|(k, &c)| c == k) {
        // Every stored column's slot is in the delta, in order (a task's delta against a
        // base that had none of its columns: a one-round fit's): the decoded slots are the
        // store's, with no second ~100 MB list (docs/results/dask.md, delta58).
        head.slots = d.slots;
        return Ok(head);
    }
    let index = base.index();
    let mut slots = Vec::with_capacity(head.touched.len() * s);
    let mut next = d.changed.iter().zip(d.slots.chunks_exact(s)).peekable();
    for (k, &j) in (0u32..).zip(&head.touched) {
        match next.next_if(|&(&c, _)| c == k) {
            Some((_, slot)) => slots.extend_from_slice(slot),
            None => slots.extend_from_slice(base.slot(&index, j).ok_or(NOT_ITS_BASE)?),
        }
    }
    if next.next().is_some() {
        return Err(NOT_ITS_BASE); // positions not increasing, or past the stored columns
    }
    head.slots = slots;
    Ok(head)
}
