//! What the merge over a base (`merge_lazy.rs`) reads from and does to a column store: the
//! never-touched columns' composed transform since a merge, the columns stamped since an
//! epoch, and restoring a grown store to its base in `O(changed columns)`.

use super::{Init, LazyColumns, STAMP};

impl LazyColumns {
    /// The never-touched columns' transform and transfer `(Tᵀ` row-major or `None` for the
    /// identity, `a)`: every rebase since the store was made, composed (each rebase composes
    /// into it, [`LazyColumns::rebase`]). From a store whose pristine epoch was the identity
    /// ([`LazyColumns::pristine_is_identity`]) this is the change of basis and transfer since
    /// then, which the merge over a base reads (`merge_lazy.rs`).
    pub(crate) fn pristine_transform(&self) -> (Option<&[f64]>, &[f64]) {
        (self.pristine.tt.as_deref(), &self.pristine.a)
    }

    /// Whether the never-touched columns' transform is the identity with no transfer.
    pub(crate) fn pristine_is_identity(&self) -> bool {
        self.pristine.tt.is_none() && self.pristine.a.iter().all(|&x| x == 0.0)
    }

    /// Resets the never-touched columns' transform to the identity. Only for [`Init::Zero`]
    /// stores, whose never-touched columns are zero under any linear transform, so that no
    /// value changes: the store then records the rebases from now on (see
    /// [`LazyColumns::pristine_transform`]).
    pub(crate) fn reset_pristine(&mut self) {
        assert_eq!(self.init, Init::Zero, "only a zero-initialised store");
        self.pristine.tt = None;
        self.pristine.a.iter_mut().for_each(|x| *x = 0.0);
    }

    /// The current epoch's id.
    pub(crate) fn current_epoch(&self) -> u32 {
        self.cur
    }

    /// Every column stamped with epoch `since` or a later one (each once, in no particular
    /// order): the only columns whose stored slots can differ from those of this store's
    /// ancestor whose current epoch was `since` (a column's slot is written only while it is
    /// stamped with the current epoch, and a re-stamped column is listed among the members of
    /// its new epoch). `O(members of those epochs)`.
    pub(crate) fn stamped_since(&self, since: u32) -> Vec<u32> {
        let s = self.stride();
        let from = self.ids.partition_point(|&id| id < since);
        let lists = self
            .epochs
            .range(from..)
            .map(|e| (e.id, &e.members))
            .chain(std::iter::once((self.cur, &self.cur_members)));
        let mut cols = Vec::new();
        for (id, members) in lists {
            let own = |&&j: &&u32| self.data[j as usize * s + STAMP] == f64::from(id);
            cols.extend(members.iter().filter(own));
        }
        cols
    }

    /// Makes this store equal to `base`, reusing its own slot array: the slots of `cols` are
    /// copied from `base` and every other field is `base`'s. Only for a store grown from `base`
    /// whose slots differ from `base`'s on `cols` alone (the merge over a base, `merge_lazy.rs`):
    /// `O(|cols|)` plus the epochs' lists, instead of a copy of `d` slots.
    pub(crate) fn restore(&mut self, base: &LazyColumns, cols: &[u32]) {
        assert_eq!(
            (self.dim, self.m, self.heads),
            (base.dim, base.m, base.heads)
        );
        let s = self.stride();
        for &j in cols {
            let j = j as usize;
            self.data[j * s..(j + 1) * s].copy_from_slice(base.stored_slot(j));
        }
        self.init = base.init;
        self.cur = base.cur;
        self.pristine = base.pristine.clone();
        self.epochs = base.epochs.clone();
        self.ids = base.ids.clone();
        self.groups = base.groups.clone();
        self.group_ids = base.group_ids.clone();
        self.closed = base.closed;
        self.cur_count = base.cur_count;
        self.cur_members = base.cur_members.clone();
        self.rebases = base.rebases;
        self.touched = base.touched.clone();
    }
}
