//! The column store's model-file form ([`Stored`]) and the checks a loaded file must pass before
//! it becomes a [`LazyColumns`]: whole stamps of live epochs, distinct stored columns, member
//! counts that match the slots, and closed groups that count their epochs (a file that failed
//! one of them would make a later refresh index out of range).

use super::*;

/// The group of each epoch of a closed group (the index in `groups` of the first group whose
/// last epoch is not older), in order; `None` unless every such epoch has its group and every
/// group counts its live epochs (a model file that does not would make a later refresh index
/// out of range).
fn closed_epoch_groups(epochs: &[Epoch], groups: &[Epoch], closed: u32) -> Option<Vec<usize>> {
    let mut counts = vec![0u64; groups.len()];
    let mut group_of = Vec::new();
    for e in epochs.iter().filter(|e| e.id <= closed) {
        let g = groups.partition_point(|g| g.id < e.id);
        *counts.get_mut(g)? += 1;
        group_of.push(g);
    }
    let consistent = counts
        .iter()
        .zip(groups)
        .all(|(c, g)| *c == g.count && *c > 0)
        && groups.last().is_none_or(|g| g.id <= closed);
    consistent.then_some(group_of)
}

/// What a model file stores: only the touched columns, in the order of
/// [`LazyColumns::stored_columns`] (files written before kept them increasing; either loads).
#[derive(Serialize, Deserialize)]
pub(super) struct Stored {
    pub(super) dim: u64,
    pub(super) m: u64,
    pub(super) init: Init,
    pub(super) cur: u32,
    pub(super) pristine: Epoch,
    pub(super) epochs: Vec<Epoch>,
    pub(super) groups: Vec<Epoch>,
    pub(super) closed: u32,
    pub(super) cur_count: u64,
    pub(super) cur_members: Vec<u32>,
    pub(super) rebases: u64,
    pub(super) touched: Vec<u32>,
    pub(super) slots: Vec<f64>,
}

impl Serialize for LazyColumns {
    /// The [`Stored`] columns, or in a model delta (`model/delta.rs`) the base's snapshot or
    /// the columns that differ from it (`columns/delta.rs`).
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use crate::model::delta::{self, Mode};
        match delta::mode() {
            Mode::Whole | Mode::Patch => self.stored().serialize(serializer),
            Mode::Record => {
                let stored = self.stored();
                let words = stored.touched.iter().map(|&j| u64::from(j));
                let digest = delta::digest(words.chain(stored.slots.iter().map(|x| x.to_bits())));
                delta::record(self::delta::Snapshot::new(self.stride(), stored), digest);
                ().serialize(serializer)
            }
            Mode::Diff => self::delta::diff(self.head(), &self.data, self.stride())
                .map_err(serde::ser::Error::custom)?
                .serialize(serializer),
        }
    }
}

impl LazyColumns {
    /// What a model file stores.
    fn stored(&self) -> Stored {
        let s = self.stride();
        let mut stored = self.head();
        let mut slots = Vec::with_capacity(stored.touched.len() * s);
        for &j in &stored.touched {
            slots.extend_from_slice(slot_in(&self.data, j, s));
        }
        stored.slots = slots;
        stored
    }

    /// [`Self::stored`] without the slots (a delta writes those that changed, from the store:
    /// no copy of them all first; docs/results/dask.md, delta58).
    fn head(&self) -> Stored {
        let touched = self.stored_columns();
        Stored {
            dim: self.dim as u64,
            m: self.m as u64,
            init: self.init,
            cur: self.cur,
            pristine: self.pristine.clone(),
            epochs: self.epochs.iter().cloned().collect(),
            groups: self.groups.clone(),
            closed: self.closed,
            cur_count: self.cur_count,
            cur_members: self.cur_members.clone(),
            rebases: self.rebases,
            touched,
            slots: Vec::new(),
        }
    }
}

/// Whether a stored stamp is an exact epoch id (a whole number in `1..=u32::MAX`).
fn whole_id(stamp: f64) -> Option<u32> {
    (stamp.fract() == 0.0 && (1.0..=f64::from(u32::MAX)).contains(&stamp)).then_some(stamp as u32)
}

/// Every stored slot's stamp is the current epoch or a live one (a loaded store must not send a
/// column to an epoch it does not have, and only touched columns are stored: a slot stamped 0
/// would be one that [`LazyColumns::stored_columns`] does not know of). The epochs' ids
/// increase (checked before), so each stamp is one binary search: `O(|T| log E)`.
fn stamps_live(slots: &[f64], stride: usize, cur: u32, epochs: &[Epoch]) -> bool {
    slots.chunks_exact(stride).all(|slot| {
        let stamp = slot[STAMP];
        stamp == f64::from(cur)
            || whole_id(stamp).is_some_and(|id| epochs.binary_search_by_key(&id, |e| e.id).is_ok())
    })
}

/// No column is stored twice (the stored order is the order of first touch, not increasing).
fn distinct(cols: &[u32]) -> bool {
    let mut sorted = cols.to_vec();
    sorted.sort_unstable();
    sorted.windows(2).all(|w| w[0] != w[1])
}

/// Every epoch (and the current one) counts exactly the stored columns stamped with it, and
/// lists each of them among its members; every member is a column (`< dim`). A model file that
/// does not would drop an epoch while columns still point to it, or flush a column that does
/// not exist — a panic in a later refresh. One pass over the stored columns (each stamp found
/// by binary search among the increasing ids, the current epoch last): `O(|T| log E)` plus the
/// sorting of the member lists, so a large store with many live epochs loads in linear time.
fn counts_match(st: &Stored, dim: usize, stride: usize) -> bool {
    let mut lists: Vec<(u32, u64, Vec<u32>)> = st
        .epochs
        .iter()
        .map(|e| (e.id, e.count, e.members.clone()))
        .chain(std::iter::once((
            st.cur,
            st.cur_count,
            st.cur_members.clone(),
        )))
        .collect();
    if lists.windows(2).any(|w| w[0].0 >= w[1].0) {
        return false; // ids not increasing (the current epoch is the newest)
    }
    for (_, _, members) in &mut lists {
        if members.iter().any(|&j| j as usize >= dim) {
            return false;
        }
        members.sort_unstable();
    }
    let mut seen = vec![0u64; lists.len()];
    for (&j, slot) in st.touched.iter().zip(st.slots.chunks_exact(stride)) {
        if slot[STAMP] == 0.0 {
            continue;
        }
        let Some(k) =
            whole_id(slot[STAMP]).and_then(|id| lists.binary_search_by_key(&id, |l| l.0).ok())
        else {
            return false; // stamped with no listed epoch
        };
        if lists[k].2.binary_search(&j).is_err() {
            return false;
        }
        seen[k] += 1;
    }
    lists.iter().zip(&seen).all(|(l, &n)| l.1 == n) && st.cur < u32::MAX && st.closed < st.cur
}

impl<'de> Deserialize<'de> for LazyColumns {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use crate::model::delta::{self, Mode};
        use serde::de::Error;
        let st = match delta::mode() {
            Mode::Patch => self::delta::patch(self::delta::StoredDelta::deserialize(deserializer)?)
                .map_err(D::Error::custom)?,
            _ => Stored::deserialize(deserializer)?,
        };
        let (dim, m) = (st.dim as usize, st.m as usize);
        // The number of heads is the length of the transfers (no field of its own, so that the
        // binary learners' files are unchanged).
        let heads = st.pristine.a.len().checked_div(m).unwrap_or(1);
        let s = m + 1 + heads;
        let bad_epoch =
            |e: &Epoch| e.a.len() != m * heads || e.tt.as_ref().is_some_and(|t| t.len() != m * m);
        let inconsistent = || D::Error::custom("inconsistent sparse column store");
        let Some(group_of) = closed_epoch_groups(&st.epochs, &st.groups, st.closed) else {
            return Err(inconsistent());
        };
        if heads == 0
            || st.slots.len() != st.touched.len() * s
            || st.touched.iter().any(|&j| j as usize >= dim)
            || !distinct(&st.touched)
            || bad_epoch(&st.pristine)
            || st.epochs.iter().any(bad_epoch)
            || st.groups.iter().any(bad_epoch)
            || st
                .epochs
                .iter()
                .zip(st.epochs.iter().skip(1))
                .any(|(a, b)| a.id >= b.id)
            || st.epochs.last().is_some_and(|e| e.id >= st.cur)
            || dim.checked_mul(s).is_none()
            || !stamps_live(&st.slots, s, st.cur, &st.epochs)
            || !counts_match(&st, dim, s)
        {
            return Err(inconsistent());
        }
        let mut epochs = st.epochs;
        let closed = epochs.iter_mut().filter(|e| e.id <= st.closed);
        // Each closed epoch's group, found by the check above.
        for (e, g) in closed.zip(group_of) {
            e.group = st.groups[g].id;
        }
        let mut data = Aligned::zeroed(dim * s);
        for (k, &j) in st.touched.iter().enumerate() {
            data[j as usize * s..(j as usize + 1) * s]
                .copy_from_slice(&st.slots[k * s..(k + 1) * s]);
        }
        Ok(LazyColumns {
            dim,
            m,
            heads,
            data,
            init: st.init,
            cur: st.cur,
            pristine: st.pristine,
            ids: IdIndex::new(epochs.iter().map(|e| e.id)),
            epochs: epochs.into(),
            group_ids: IdIndex::new(st.groups.iter().map(|g| g.id)),
            groups: st.groups,
            closed: st.closed,
            cur_count: st.cur_count,
            cur_members: st.cur_members,
            rebases: st.rebases,
            tmp: vec![0.0; m],
            touched: (st.touched.len() <= FEW).then_some(st.touched),
        })
    }
}

/// Column `j`'s slot in a store's `data` (slots of `stride` numbers, by column): what a model
/// file stores of it, and what a delta compares and writes.
pub(super) fn slot_in(data: &[f64], j: u32, stride: usize) -> &[f64] {
    let at = j as usize * stride;
    &data[at..at + stride]
}
