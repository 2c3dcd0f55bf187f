//! The *deferred* flush of the column store: an epoch flushed for the cap of live epochs keeps
//! its arithmetic in a small record, and its columns are brought up to date only when they are
//! next read, with exactly the operations the eager flush would have applied (the same bits).
//!
//! **Why.** At most `MAX_EPOCHS` epochs are live; beyond, the one owning the fewest columns is
//! flushed. On a very sparse, wide stream (`2²⁰` features, 20 a row: a column comes back every
//! ~52,000 rows, far more rows than 1,024 epochs of FD's shrinks span) almost every stamped
//! column is flushed, many of them several times without being touched in between (sparse
//! FD-SON on 157,440 rows: ~6.2 M flushed columns against ~3.1 M touches). The eager flush
//! reads and writes each member's slot, a cache miss into a `d·(m + 2)` store.
//!
//! **What a flush does now.** The bookkeeping is the eager one, exactly: every column still
//! stamped with the flushed epoch `E` is re-stamped with the current epoch `F` and appended to
//! `F`'s member list, in member order, and `F` counts it. The stamps it reads and writes are
//! the store's *eager stamps* (`LazyColumns::stamps`, one `u32` a column: a 4 MB array for
//! `2²⁰` columns, against 100 MB of slots). What is deferred is the arithmetic: `E`'s transform
//! and transfer and those of its closed group, as they are at the flush, are frozen into a
//! [`Flushed`] record (`O(m²)` numbers, which no later rebase composes into), and the slots are
//! not read. A slot's own `STAMP` keeps the epoch its numbers are in; when it differs from the
//! column's eager stamp, the column is *pending*: its numbers are brought to the eager stamp's
//! coordinates by the records of the chain `STAMP → target → …` (each record's `target` is the
//! epoch current at its flush, itself possibly flushed later), oldest first — the same
//! `Epoch::apply` calls, in the same order, on the same numbers as the eager flushes made.
//!
//! **When.** A pending column is caught up when it is touched (`LazyColumns::refresh`, the
//! batched gather, `LazyColumns::slot`), read without being updated (`peek`, so the Gram sums,
//! the merges and `score`), or stored (model files, deltas and merges read the eager slot,
//! [`LazyColumns::eager_slot_into`]: a file holds the same bytes as with eager flushes, and a
//! loaded store has no records). A never-touched column of a flushed epoch costs nothing.
//! At most `MAX_FLUSHED` records are kept (each a few KB): beyond, the oldest record's pending
//! columns are caught up then (this is the old eager flush, now the fallback: only for columns
//! not touched in the meantime).

use super::{bring_up, prefetch_slot, Epoch, LazyColumns, STAMP};
use std::collections::{HashMap, VecDeque};

/// Most flushed records kept before the oldest one's pending columns are caught up.
pub(super) const MAX_FLUSHED: usize = 8192;

/// How many members ahead the fallback catch-up hints the slot it will read.
const AHEAD: usize = 16;

/// One deferred flush: the flushed epoch's own transform and transfer (and its member list) and
/// its closed group's, frozen at the flush; the epoch its columns were re-stamped with; the
/// columns whose catch-up still passes through it.
#[derive(Clone, Debug)]
pub(super) struct Flushed {
    own: Epoch,
    group: Option<Epoch>,
    target: u32,
    count: u64,
}

/// The live records by the flushed epoch's id, and their ids in the order of their flushes.
#[derive(Clone, Debug, Default)]
pub(super) struct FlushedEpochs {
    by_id: HashMap<u32, Flushed>,
    order: VecDeque<u32>,
}

impl FlushedEpochs {
    /// Live records.
    pub(super) fn len(&self) -> usize {
        self.by_id.len()
    }

    /// Brings `slot` (a copy, or a pending column's stored slot), whose numbers are in the
    /// coordinates of the flushed epoch `from`, to those of epoch `to` through the chain of
    /// records; with `settle`, each record passed counts one column fewer (dropped at zero).
    fn walk(&mut self, from: u32, to: u32, slot: &mut [f64], tmp: &mut [f64], m: usize) {
        let mut id = from;
        while id != to {
            let r = self.by_id.get_mut(&id).expect("pending column of a live record");
            bring_up(&r.own, r.group.as_ref(), slot, tmp, m);
            r.count -= 1;
            let next = r.target;
            if r.count == 0 {
                self.by_id.remove(&id);
            }
            id = next;
        }
    }

    /// [`walk`](Self::walk) on a copy, changing no count.
    fn walk_copy(&self, from: u32, to: u32, slot: &mut [f64], tmp: &mut [f64], m: usize) {
        let mut id = from;
        while id != to {
            let r = &self.by_id[&id];
            bring_up(&r.own, r.group.as_ref(), slot, tmp, m);
            id = r.target;
        }
    }
}

impl LazyColumns {
    /// Flushes the live epoch at position `k` (see the module documentation): its columns are
    /// re-stamped with the current epoch (the eager stamps, counts and member lists), its
    /// arithmetic is frozen into a record, and it is dropped.
    pub(super) fn defer_flush(&mut self, k: usize) {
        let (id, count) = (self.ids[k], self.epochs[k].count);
        let members = std::mem::take(&mut self.epochs[k].members);
        let mut left = count;
        // The members are distinct and `count` of them still carry the stamp.
        for (i, &j) in members.iter().enumerate() {
            if left == 0 {
                break;
            }
            if let Some(&ahead) = members.get(i + AHEAD) {
                crate::data::packed::prefetch_slice(&self.stamps[ahead as usize..][..1]);
            }
            let stamp = &mut self.stamps[j as usize];
            if *stamp == id {
                left -= 1;
                *stamp = self.cur;
                self.cur_count += 1;
                self.cur_members.push(j);
            }
        }
        let group = self.group_of(&self.epochs[k]).cloned();
        let e = &mut self.epochs[k];
        let own = Epoch {
            id,
            tt: e.tt.take(),
            a: std::mem::take(&mut e.a),
            count: 0,
            members,
            group: 0,
        };
        let record = Flushed {
            own,
            group,
            target: self.cur,
            count,
        };
        self.flushed.by_id.insert(id, record);
        self.flushed.order.push_back(id);
        self.drop_epoch(k);
        while self.flushed.len() > self.max_flushed {
            self.catch_up_oldest();
        }
    }

    /// Catches up every pending column of the oldest record (its columns are the members
    /// still holding its id in their slot: a chain through it that starts earlier would start
    /// at an older live record) and drops it.
    fn catch_up_oldest(&mut self) {
        let Some(id) = self.flushed.order.pop_front() else {
            return;
        };
        let Some(r) = self.flushed.by_id.get_mut(&id) else {
            return; // dropped at count zero
        };
        let members = std::mem::take(&mut r.own.members);
        let s = self.stride();
        let hint = self.data.len() >= crate::linear::prefetch::CACHED_ENTRIES;
        for (i, &j) in members.iter().enumerate() {
            if !self.flushed.by_id.contains_key(&id) {
                break;
            }
            if let Some(&ahead) = members.get(i + AHEAD).filter(|_| hint) {
                prefetch_slot(&self.data, ahead as usize * s, s);
            }
            if self.data[j as usize * s + STAMP] == f64::from(id) {
                self.catch_up_flushed(j as usize);
            }
        }
        // A store restored over its base may keep a count for a column caught up since.
        self.flushed.by_id.remove(&id);
    }

    /// Whether column `j`'s stored numbers are behind its eager stamp (a deferred flush).
    #[inline(always)]
    pub(super) fn pending(&self, j: usize) -> bool {
        self.data[j * self.stride() + STAMP] != f64::from(self.stamps[j])
    }

    /// Brings a pending column's stored numbers to its eager stamp (records passed count one
    /// column fewer); no other bookkeeping.
    #[cold]
    #[inline(never)]
    pub(super) fn catch_up_flushed(&mut self, j: usize) {
        let s = self.stride();
        let slot = &mut self.data[j * s..(j + 1) * s];
        let (from, to) = (slot[STAMP] as u32, self.stamps[j]);
        self.tmp.resize(self.m, 0.0);
        self.flushed.walk(from, to, slot, &mut self.tmp, self.m);
        slot[STAMP] = f64::from(to);
    }

    /// Column `j`'s slot as the eager store holds it (its numbers in the coordinates of its
    /// eager stamp, and that stamp), into `out` (`tmp`: scratch); changes nothing.
    pub(crate) fn eager_slot_into(&self, j: usize, out: &mut Vec<f64>, tmp: &mut Vec<f64>) {
        let s = self.stride();
        out.clear();
        out.extend_from_slice(&self.data[j * s..(j + 1) * s]);
        let (from, to) = (out[STAMP] as u32, self.stamps[j]);
        if from != to {
            tmp.resize(self.m, 0.0);
            self.flushed.walk_copy(from, to, out, tmp, self.m);
            out[STAMP] = f64::from(to);
        }
    }

    /// Live flushed records (for tests).
    #[cfg(test)]
    pub(crate) fn flushed_records(&self) -> usize {
        self.flushed.len()
    }
}
