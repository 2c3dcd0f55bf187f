//! The ids of the column store's live epochs (or of its closed groups), increasing, with the
//! position of an id found in `O(1)`.
//!
//! A stale column is caught up from the epoch it is stamped with, and that epoch's group: two
//! look-ups per stale column, on the generated sparse stream (2^18 features, 50 non-zeros per
//! row, several hundred live epochs) about a hundred per example. A binary search over the ids
//! is ten dependent loads and compares each; here a table indexed by `id − base` holds each live
//! id's position, so a look-up is one load. Epochs are created with increasing ids and die in
//! any order: a removal shifts the positions of the later ids down by one (`O(E)` for `E` live
//! ids, as the removal from the list itself).
//!
//! **Bounded.** An old epoch can keep a few columns for millions of rebases, so the span of the
//! live ids is not bounded by their number. The table covers the ids from `base` on, chosen as
//! the oldest id from which the span is at most twice the ids it holds plus [`SLACK`]; the few
//! older ids are found by binary search. It is rebuilt when it outgrows four times the ids plus
//! [`SLACK`] (amortised `O(1)` per push or removal), so its size is `O(E)` whatever the length of
//! the stream.

/// No live id at this offset.
const NONE: u32 = u32::MAX;

/// Table entries allowed beyond twice the ids it covers.
const SLACK: usize = 1024;

/// Increasing ids with `O(1)` positions (see the module documentation).
#[derive(Clone, Debug, Default)]
pub(super) struct IdIndex {
    ids: Vec<u32>,
    /// The id at offset 0 of `pos` (ids below it are searched for).
    base: u32,
    /// The number of ids below `base`.
    below: usize,
    /// `pos[id − base]`: the position of `id` in `ids`, or [`NONE`].
    pos: Vec<u32>,
}

impl IdIndex {
    /// The index of increasing `ids`.
    pub(super) fn new(ids: impl IntoIterator<Item = u32>) -> Self {
        let mut index = IdIndex::default();
        for id in ids {
            index.push(id);
        }
        index
    }

    /// Appends `id`, larger than every id held.
    pub(super) fn push(&mut self, id: u32) {
        debug_assert!(self.ids.last().is_none_or(|&l| l < id));
        if self.ids.len() == self.below {
            // No id in the table: start it here.
            (self.base, self.pos) = (id, Vec::new());
        }
        let off = (id - self.base) as usize;
        if self.pos.len() <= off {
            self.pos.resize(off + 1, NONE);
        }
        self.pos[off] = self.ids.len() as u32;
        self.ids.push(id);
        self.tidy();
    }

    /// Removes the id at position `k`.
    pub(super) fn remove(&mut self, k: usize) {
        let id = self.ids.remove(k);
        if k < self.below {
            self.below -= 1;
        } else {
            self.pos[(id - self.base) as usize] = NONE;
        }
        for &later in &self.ids[k.max(self.below)..] {
            self.pos[(later - self.base) as usize] -= 1;
        }
        self.tidy();
    }

    /// Rebuilds the table when it outgrew its bound (see the module documentation).
    fn tidy(&mut self) {
        if self.pos.len() <= 4 * self.ids.len() + SLACK {
            return;
        }
        if self.ids.is_empty() {
            (self.below, self.pos) = (0, Vec::new());
            return;
        }
        let (n, last) = (self.ids.len(), self.ids[self.ids.len() - 1]);
        let fits = |k: usize| ((last - self.ids[k]) as usize) < 2 * (n - k) + SLACK;
        let from = (0..n).find(|&k| fits(k)).unwrap_or(n - 1);
        self.base = self.ids[from];
        self.below = from;
        self.pos = vec![NONE; (last - self.base) as usize + 1];
        for (k, &id) in self.ids.iter().enumerate().skip(from) {
            self.pos[(id - self.base) as usize] = k as u32;
        }
    }

    /// The position of `id`, if held.
    #[inline]
    pub(super) fn position(&self, id: u32) -> Option<usize> {
        let Some(off) = id.checked_sub(self.base) else {
            return self.ids[..self.below].binary_search(&id).ok();
        };
        match self.pos.get(off as usize) {
            Some(&p) if p != NONE => Some(p as usize),
            _ => None,
        }
    }
}

impl std::ops::Deref for IdIndex {
    type Target = [u32];
    fn deref(&self) -> &[u32] {
        &self.ids
    }
}

#[cfg(test)]
mod tests {
    use super::IdIndex;

    /// Positions agree with a search of the ids through pushes and removals anywhere (front,
    /// middle, back, down to empty and up again), across rebuilds of the table, and the table
    /// stays within its bound while the oldest ids live on.
    #[test]
    fn positions_match_a_search_through_pushes_and_removals() {
        let mut index = IdIndex::default();
        let mut plain: Vec<u32> = Vec::new();
        let mut next = 1u32;
        let (mut state, mut searched, mut emptied) = (7u64, false, false);
        for step in 0..20_000 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let r = (state >> 33) as usize;
            // From step 5,000 to 12,000 the three oldest ids live on (the span grows).
            let keep = if (5_000..12_000).contains(&step) {
                3
            } else {
                0
            };
            // A walk around 40 live ids, then down to none.
            let push = match step {
                0..15_000 if plain.len() < 40 => 6,
                0..15_000 => 4,
                _ => 3,
            };
            if plain.len() <= keep || r % 10 < push {
                next += 1 + (r % 3) as u32;
                index.push(next);
                plain.push(next);
            } else {
                let k = if r % 4 == 0 {
                    keep
                } else {
                    keep + r % (plain.len() - keep)
                };
                index.remove(k);
                plain.remove(k);
            }
            assert_eq!(&*index, &plain[..]);
            for &id in plain.iter().step_by(7) {
                assert_eq!(index.position(id), plain.binary_search(&id).ok());
            }
            for probe in [0, 1, next.saturating_sub(1), next, next + 1] {
                assert_eq!(
                    index.position(probe),
                    plain.binary_search(&probe).ok(),
                    "{probe}"
                );
            }
            assert!(index.pos.len() <= 4 * plain.len() + super::SLACK);
            searched |= index.below > 0;
            emptied |= plain.is_empty() && step > 15_000;
        }
        assert!(searched, "the old ids were searched for");
        assert!(emptied, "the ids went down to none");
    }
}
