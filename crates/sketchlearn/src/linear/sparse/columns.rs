//! The per-feature column store of the sparse-time learners, with *lazy* initialisation and
//! *lazy* change of basis.
//!
//! Feature `j` owns one contiguous slot of `m + 2` numbers: `[w̄_j, stamp_j, Z_{0j}, …, Z_{m−1,j}]`
//! (the stamp is stored as an exactly representable `f64`), so that a feature costs one or two
//! cache lines per access. The slots live in one `Vec<f64>` of `d·(m + 2)` zeros, allocated with
//! `vec![0.0; n]` (a zeroed allocation: the pages cost nothing until touched), and nothing ever
//! loops over all `d` features while learning.
//!
//! **Several weight vectors ("heads").** The sparse-time softmax learner keeps `K` weight vectors
//! `w_h = w̄_h + Zᵀb_h` over one shared `Z` ([`LazyColumns::with_heads`]): the slot is then
//! `[w̄_{0j}, stamp_j, Z_{0j}, …, Z_{m−1,j}, w̄_{1j}, …, w̄_{K−1,j}]` (`m + 1 + K` numbers; the
//! binary learners' layout is the case `K = 1`), a rebase transfers `w̄_h += Zᵀb_h` for every
//! head, and an epoch's transfer `a` holds the `K` vectors `a_h` one after the other.
//!
//! **Lazy initialisation.** A column that was never touched has stamp 0 and holds zeros in
//! memory; its true value is the initial column `Z₀[:, j]`, generated on demand from a formula
//! ([`Init`]). For Oja and FD the initial `Z₀` has exactly orthonormal rows with a known Gram
//! matrix: row `i` is supported on the features `j ≡ i (mod m)` with hashed random signs,
//! `Z₀[i, j] = σ(seed, j)/√n_i` with `n_i = ⌈(d − i)/m⌉` (see [`initial_value`]).
//!
//! **Lazy change of basis and transfer ("rebase").** The learners keep `w = w̄ + Zᵀb` and (Oja,
//! FD) `V = F·Z` with small `m × m` matrices. Two things can go wrong numerically over a long run:
//! `F` becomes badly scaled (Oja: `Z` grows like `t^{cλ}` while `F` shrinks), and `w̄` and `Zᵀb`
//! grow large while cancelling (each change of the sketch moves `Zᵀb`, and `w̄` is corrected to
//! keep `w`). A *rebase* fixes both: `Z ← M·Z` (`F ← F·M⁻¹`) and `w̄ ← w̄ + Zᵀb`, `b ← 0`.
//! Doing that on all `d` columns would be `O(m²d)`, so it is deferred: a rebase starts a new
//! *epoch*; a column keeps the id of the epoch in which it was last brought up to date, and the
//! store keeps, for every live past epoch `e`, the transform `T_e` from epoch-`e` coordinates to
//! the current ones and the accumulated transfer `a_e` (so that `w̄_j += z_jᵀa_e` in epoch-`e`
//! coordinates), and the same for never-touched columns. A stale column is brought up to date, in
//! `O(m²)` (`O(m)` when every transform since was the identity, and for a never-touched column,
//! whose one non-zero picks a column of `T`), the first time it is touched again. The transforms
//! are held transposed, so that this catch-up is one `axpy` per column of `T_e`, vectorised over
//! the `m` coordinates. Every epoch counts the columns still stamped with it and is dropped when
//! the count reaches zero. The gather brings an example's stale columns up to date four at a time
//! (`columns/batch.rs`: the same values, with the additions of four columns overlapping).
//!
//! **Groups of epochs.** Keeping every live epoch's transform current would cost `O(E·m³)` per
//! rebase for `E` live epochs — the dominant cost when rebases are frequent (FD changes its basis
//! at most shrinks on high-dimensional data, where the new directions come from the new rows).
//! So epochs are closed in groups of `GROUP` (32): once a group is closed, its epochs' transforms
//! are frozen (they map to the coordinates of the moment the group closed) and the group keeps
//! one transform and transfer from then to now. A rebase then composes only the open group's
//! epochs and one transform per closed group, `O((GROUP + E/GROUP)·m³)`, and a stale column costs
//! two `O(m²)` applications instead of one. Old epochs keep a few columns each for a long time,
//! so at most `MAX_EPOCHS` (1024) are kept: beyond that, the epoch owning the fewest columns is
//! flushed (its columns, listed when they were stamped, are brought up to date). The work is
//! proportional to the columns touched, never to `d`. A *deferred* flush (the flushed epoch's
//! arithmetic frozen in a record and applied when a column is next read: the same bits) was
//! measured at stop 58 and rejected: the slot is then hot but the record's matrices are cold,
//! and user CPU rose 50–90 % on `2²⁰` features (docs/results/speed.md, "Stop 58").
//!
//! **Model files** store the touched columns only, found from the epochs' member lists (so a
//! save also costs the columns touched, not `d`: a scan of `2²⁷` empty slots took about a
//! minute), in the order in which they were first touched while there are few of them: that
//! order is the order of the sums of [`LazyColumns::exact_gram`], so a loaded store learns on
//! bit for bit as the one that was saved.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::VecDeque;

/// Most past epochs kept before the one owning the fewest columns is flushed.
const MAX_EPOCHS: usize = 1024;

/// Epochs per closed group (see the module documentation).
const GROUP: usize = 32;

/// How many members ahead a flush hints the slot it will read (see [`prefetch_slot`]).
const FLUSH_AHEAD: usize = 16;

/// Hints the CPU to load the slot at `base` (`s` numbers: its first and last cache lines) of a
/// store too large for the core's caches; no effect on any value. An epoch's flush reads its
/// members' slots in the order they were stamped, one random access into a `d·s` store each:
/// on a stream whose columns come back rarely (`2²⁰` features, 20 a row: a column returns
/// every ~52,000 rows, and 1,024 epochs of FD's shrinks span far fewer) almost every stamped
/// column is flushed, and without the hint each waits for its cache miss in turn.
/// [`LazyColumns::prefetch`] hints an example's slots with it too. Callers skip it for a store
/// of fewer than [`CACHED_ENTRIES`](crate::linear::prefetch::CACHED_ENTRIES) numbers (checked
/// once, not per slot); a slot beyond the store is skipped.
#[inline(always)]
fn prefetch_slot(data: &[f64], base: usize, s: usize) {
    if base + s > data.len() {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = data[base..].as_ptr() as *const i8;
        // SAFETY: prefetching is a hint; both addresses lie inside the slot.
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(p);
            _mm_prefetch::<_MM_HINT_T0>(p.add(8 * (s - 1)));
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (data, base, s);
}

/// Most touched columns listed for [`LazyColumns::exact_gram`] (beyond that the list is dropped).
const FEW: usize = 1024;

/// Slot offsets inside a column.
pub(crate) const W: usize = 0;
pub(crate) const STAMP: usize = 1;
pub(crate) const Z: usize = 2;

/// Offset of head `h`'s `w̄` in a slot with `m` sketch coordinates (head 0 at [`W`], the others
/// after `Z`).
#[inline(always)]
pub(crate) fn head(m: usize, h: usize) -> usize {
    if h == 0 {
        W
    } else {
        Z + m + h - 1
    }
}

/// The value of a never-touched column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Init {
    /// `Z₀ = 0` (random projection: `S₀ = 0`).
    Zero,
    /// The structured orthonormal `Z₀` of [`initial_value`] with hashed signs from `seed`.
    Structured {
        /// Seed of the signs.
        seed: u64,
    },
}

/// SplitMix64 finaliser (a counter-based hash).
#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The one non-zero entry of the initial column `j`: `(row, value)` with `row = j mod m` and
/// `value = ±1/√n_row`, `n_row = ⌈(d − row)/m⌉` the number of features of that row, the sign
/// from a counter-based hash of `(seed, j)`. The rows are exactly orthonormal (disjoint supports,
/// unit norms), every feature belongs to exactly one row, and rows `i ≥ d` (only when `m > d`)
/// are zero.
#[inline]
pub fn initial_value(dim: usize, m: usize, seed: u64, j: usize) -> (usize, f64) {
    let row = j % m;
    let n = (dim - row).div_ceil(m);
    let h = mix(seed ^ mix((j as u64).wrapping_add(0x9E37_79B9_7F4A_7C15)));
    let sign = if h & 1 == 0 { 1.0 } else { -1.0 };
    (row, sign / (n as f64).sqrt())
}

/// The initial directions `Z₀` of the sparse Oja and FD learners as a dense row-major `m × d`
/// matrix (for the dense reference learners in tests: build `OjaSketch::with_directions` with
/// it to get the exact same start as the sparse learner). `O(md)`: for tests and small `d` only.
///
/// ```
/// let v = sketchlearn::linear::sparse::initial_directions(5, 2, 7);
/// // Rows are orthonormal.
/// let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
/// assert!((dot(&v[..5], &v[..5]) - 1.0).abs() < 1e-15);
/// assert_eq!(dot(&v[..5], &v[5..]), 0.0);
/// ```
pub fn initial_directions(dim: usize, m: usize, seed: u64) -> Vec<f64> {
    let mut v = vec![0.0; m * dim];
    if m == 0 {
        return v;
    }
    for j in 0..dim {
        let (r, x) = initial_value(dim, m, seed, j);
        v[r * dim + j] = x;
    }
    v
}

/// Number of non-zero (orthonormal) rows of the structured `Z₀`: `min(m, d)`.
pub(crate) fn initial_rank(dim: usize, m: usize) -> usize {
    m.min(dim)
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Epoch {
    id: u32,
    /// The `m × m` transform `T` from this epoch's coordinates to the current ones (`None` =
    /// identity), held as `Tᵀ` row-major so that [`apply`] runs as one `axpy` per column of `T`
    /// (vectorised over the rows); model files store `T` row-major (module `transposed`).
    #[serde(rename = "t", with = "transposed")]
    tt: Option<Vec<f64>>,
    /// Transfer `w̄_{hj} += z_jᵀa_h` with `z_j` in this epoch's coordinates, the heads' `a_h`
    /// one after the other (`K·m` numbers).
    a: Vec<f64>,
    /// Columns still stamped with this id.
    count: u64,
    /// Columns stamped with this id when it was current (some re-stamped since).
    members: Vec<u32>,
    /// The id of the closed group holding this epoch (0 while its group is open): found again
    /// from the ids when a file is loaded, so not stored.
    #[serde(skip)]
    group: u32,
}

impl Epoch {
    /// Brings a stored slot `[w̄, stamp, z…]` of this epoch up to date (for an epoch of a closed
    /// group: to the group's closing time); `m` sketch coordinates.
    #[inline]
    fn apply(&self, slot: &mut [f64], tmp: &mut [f64], m: usize) {
        let z = &slot[Z..Z + m];
        slot[W] += match m {
            10 => transfer_dot::<10>(z, &self.a),
            _ => ordered_dot(z, &self.a),
        };
        if self.a.len() <= m {
            // One head (the binary learners).
            if let Some(tt) = &self.tt {
                apply(tt, m, &mut slot[Z..Z + m], tmp);
            }
            return;
        }
        for (h, a) in self.a.chunks_exact(m.max(1)).enumerate().skip(1) {
            let v = slot[Z..Z + m]
                .iter()
                .zip(a)
                .map(|(x, y)| x * y)
                .sum::<f64>();
            slot[head(m, h)] += v;
        }
        if let Some(tt) = &self.tt {
            apply(tt, m, &mut slot[Z..Z + m], tmp);
        }
    }

    /// [`Epoch::apply`] to a slot holding only `z_r = v` (a never-touched column): `w̄ += v·a_r`,
    /// `z = v·T[:, r]` in `O(m)` (the same values: the other terms are zeros).
    #[inline]
    fn apply_initial(&self, r: usize, v: f64, slot: &mut [f64], m: usize) {
        slot[W] += v * self.a[r];
        for h in 1..self.a.len() / m {
            slot[head(m, h)] += v * self.a[h * m + r];
        }
        if let Some(tt) = &self.tt {
            for (zi, ti) in slot[Z..Z + m].iter_mut().zip(&tt[r * m..(r + 1) * m]) {
                *zi = v * ti;
            }
        } else {
            slot[Z + r] = v;
        }
    }

    /// A rebase `(M, b)` seen from this epoch, with `mt = Mᵀ` (row-major): `a_h += Tᵀb_h` for
    /// every head, then `T ← M·T`, i.e. `Tᵀ ← Tᵀ·Mᵀ` (`scratch`: `m²`).
    fn compose(&mut self, mt: Option<&[f64]>, b: &[f64], scratch: &mut Vec<f64>, m: usize) {
        match &self.tt {
            None => self.a.iter_mut().zip(b).for_each(|(a, bi)| *a += bi),
            Some(tt) => {
                let heads = self
                    .a
                    .chunks_exact_mut(m.max(1))
                    .zip(b.chunks_exact(m.max(1)));
                for (ah, bh) in heads {
                    for (a, row) in ah.iter_mut().zip(tt.chunks_exact(m)) {
                        *a += row.iter().zip(bh).map(|(t, bi)| t * bi).sum::<f64>();
                    }
                }
            }
        }
        if let Some(mt) = mt {
            match &mut self.tt {
                None => self.tt = Some(mt.to_vec()),
                Some(tt) => {
                    scratch.clear();
                    scratch.resize(m * m, 0.0);
                    matmul_into(tt, mt, m, scratch);
                    std::mem::swap(tt, scratch);
                }
            }
        }
    }
}

/// Zero-initialised `f64` storage whose first element is 64-byte aligned, so that a slot of
/// `m + 2 = 12` numbers (96 bytes) always spans exactly two cache lines (with the allocator's
/// 16-byte alignment it spans three half of the time). Allocated with `vec![0.0; n]` (calloc:
/// nothing is touched at start-up), advised to huge pages when large (`huge_pages.rs`).
#[derive(Debug, Default)]
struct Aligned {
    v: Vec<f64>,
    off: usize,
    len: usize,
}

impl Aligned {
    fn zeroed(len: usize) -> Self {
        let mut v = vec![0.0; len + 8];
        // Before the first touch: a large store read at random is backed by huge pages where the
        // kernel allows (`huge_pages.rs`; same values, fewer TLB misses and page faults).
        crate::huge_pages::advise(&mut v);
        let off = (64 - (v.as_ptr() as usize % 64)) % 64 / 8;
        Aligned { v, off, len }
    }
}

/// Numbers per page of [`Aligned`]'s clone (4 KiB).
const PAGE: usize = 512;

impl Clone for Aligned {
    /// The same bits, written page by page, skipping the source's pages whose numbers are all
    /// `+0.0` bits: the new store's pages read zero until written, so cloning a store few columns
    /// have touched — a Dask task's base, cloned to put a retired member back
    /// (`Mixture::forget_retired`) — no longer faults in and copies all `d·s` numbers (100 MB at
    /// `2²⁰` features), and a fully touched store costs one more read of each page.
    fn clone(&self) -> Self {
        let mut c = Aligned::zeroed(self.len);
        for (to, from) in c.chunks_mut(PAGE).zip(self.chunks(PAGE)) {
            if from.iter().fold(0u64, |acc, x| acc | x.to_bits()) != 0 {
                to.copy_from_slice(from);
            }
        }
        c
    }
}

impl std::ops::Deref for Aligned {
    type Target = [f64];
    fn deref(&self) -> &[f64] {
        &self.v[self.off..self.off + self.len]
    }
}

impl std::ops::DerefMut for Aligned {
    fn deref_mut(&mut self) -> &mut [f64] {
        &mut self.v[self.off..self.off + self.len]
    }
}

/// The column store (see the module documentation).
#[derive(Clone, Debug)]
pub(crate) struct LazyColumns {
    dim: usize,
    m: usize,
    /// Weight vectors `K` over the shared `Z` (1 for the binary learners).
    heads: usize,
    data: Aligned,
    init: Init,
    /// Current epoch id (≥ 1). Never-touched columns have stamp 0.
    cur: u32,
    /// Transform and transfer of the never-touched columns (id 0, never dropped).
    pristine: Epoch,
    /// Past epochs that still own columns, by increasing id. A ring buffer: an epoch dropped
    /// from anywhere (a flush, or its last column re-stamped) moves the shorter side of the
    /// list, not every later one — with 1,024 epochs of 88 bytes a `Vec`'s removal moved up to
    /// 90 KB, and flushes take old epochs (sparse FD-SON on `2²⁰` features, 157,440 rows:
    /// 4.3 % of the instructions in `memcpy` from `drop_epoch`, `valgrind --tool=callgrind`).
    epochs: VecDeque<Epoch>,
    /// Their ids, in the same order, with each one's position in `O(1)` (every refresh looks
    /// one up).
    ids: IdIndex,
    /// Closed groups that still own epochs, by increasing id: a group's `id` is the id of its
    /// last epoch, its `t`/`a` take coordinates at its closing time to the current ones, its
    /// `count` is the number of its epochs still alive. Epochs with ids `≤ closed` belong to a
    /// closed group (their own `t`/`a` are frozen).
    groups: Vec<Epoch>,
    /// The groups' ids, in the same order (positions in `O(1)`, as `ids`).
    group_ids: IdIndex,
    /// Id of the last epoch of the newest closed group (0: none).
    closed: u32,
    /// Columns stamped `cur`.
    cur_count: u64,
    cur_members: Vec<u32>,
    rebases: u64,
    tmp: Vec<f64>,
    /// The columns ever touched, while there are at most [`FEW`] (`None` beyond).
    touched: Option<Vec<u32>>,
}

impl LazyColumns {
    /// `dim` columns of `m` sketch coordinates, never-touched ones worth `init`.
    pub(crate) fn new(dim: usize, m: usize, init: Init) -> Self {
        Self::with_heads(dim, m, 1, init)
    }

    /// [`LazyColumns::new`] with `heads ≥ 1` weight vectors over the shared `Z` (see the module
    /// documentation).
    pub(crate) fn with_heads(dim: usize, m: usize, heads: usize, init: Init) -> Self {
        LazyColumns {
            dim,
            m,
            heads,
            data: Aligned::zeroed(dim * (m + 1 + heads)),
            init,
            cur: 1,
            pristine: Epoch {
                id: 0,
                tt: None,
                a: vec![0.0; m * heads],
                count: 0,
                members: Vec::new(),
                group: 0,
            },
            epochs: VecDeque::new(),
            ids: IdIndex::default(),
            groups: Vec::new(),
            group_ids: IdIndex::default(),
            closed: 0,
            cur_count: 0,
            cur_members: Vec::new(),
            rebases: 0,
            tmp: vec![0.0; m],
            touched: Some(Vec::new()),
        }
    }

    #[inline]
    pub(crate) fn stride(&self) -> usize {
        self.m + 1 + self.heads
    }

    /// The number of weight vectors `K` (1 for the binary learners).
    pub(crate) fn heads(&self) -> usize {
        self.heads
    }

    /// The number of sketch coordinates `m`.
    pub(crate) fn size(&self) -> usize {
        self.m
    }

    pub(crate) fn dim(&self) -> usize {
        self.dim
    }

    /// Number of rebases so far.
    pub(crate) fn rebases(&self) -> u64 {
        self.rebases
    }

    /// Hints the CPU to load the slots of the example's columns (the gather that follows is
    /// bound by memory latency: the slots of a large `d` live in RAM or the last-level cache;
    /// issuing every load first lets them overlap).
    #[inline]
    pub(crate) fn prefetch(&self, x: crate::Row<'_>) {
        if self.data.len() < crate::linear::prefetch::CACHED_ENTRIES {
            return;
        }
        if let crate::Row::Sparse { indices, .. } = x {
            let s = self.stride();
            for &j in indices {
                prefetch_slot(&self.data, j as usize * s, s);
            }
        }
    }

    /// Brings column `j` up to date and returns its slot `[w̄, stamp, z…]`.
    #[inline(always)]
    pub(crate) fn current(&mut self, j: usize) -> &mut [f64] {
        let s = self.stride();
        let base = j * s;
        if self.data[base + STAMP] != self.cur as f64 {
            self.refresh(j);
        }
        &mut self.data[base..base + s]
    }

    /// Slot of column `j` as stored: its `Z` part is current only if [`LazyColumns::current`]
    /// was called for `j` since the last rebase.
    #[inline]
    pub(crate) fn slot(&mut self, j: usize) -> &mut [f64] {
        let s = self.stride();
        &mut self.data[j * s..(j + 1) * s]
    }

    /// Writes the initial column `j` (in epoch-1 coordinates) into `slot` (zeros before).
    #[inline]
    fn write_initial(&self, j: usize, slot: &mut [f64]) {
        if let Init::Structured { seed } = self.init {
            if self.m > 0 {
                let (r, v) = initial_value(self.dim, self.m, seed, j);
                slot[Z + r] = v;
            }
        }
    }

    #[cold]
    #[inline(never)]
    fn refresh(&mut self, j: usize) {
        let s = self.stride();
        let base = j * s;
        let stamp = self.data[base + STAMP] as u32;
        let mut k = usize::MAX;
        if stamp != 0 {
            k = self.epoch_index(stamp);
            let e = &self.epochs[k];
            bring_up(
                e,
                closed_group(e, self.closed, &self.groups, &self.group_ids),
                &mut self.data[base..base + s],
                &mut self.tmp,
                self.m,
            );
        }
        self.settle(j, k);
    }

    /// The rest of column `j`'s catch-up once its stored numbers are brought up to date (a
    /// never-touched column's value, `O(m)`, is written here): its old epoch's count (dropped
    /// at zero), its stamp, the current epoch's count and members. `hint`: where its epoch was
    /// found just before (checked, see [`epoch_index_at`](Self::epoch_index_at)).
    fn settle(&mut self, j: usize, hint: usize) {
        let s = self.stride();
        let base = j * s;
        let stamp = self.data[base + STAMP] as u32;
        if stamp == 0 {
            // The current value of a never-touched column, in O(m).
            if let Init::Structured { seed } = self.init {
                if self.m > 0 {
                    let (r, v) = initial_value(self.dim, self.m, seed, j);
                    self.pristine
                        .apply_initial(r, v, &mut self.data[base..base + s], self.m);
                }
            }
            if let Some(list) = &mut self.touched {
                if list.len() < FEW {
                    list.push(j as u32);
                } else {
                    self.touched = None;
                }
            }
        } else {
            let k = self.epoch_index_at(stamp, hint);
            self.epochs[k].count -= 1;
            if self.epochs[k].count == 0 {
                self.drop_epoch(k);
            }
        }
        self.data[base + STAMP] = self.cur as f64;
        self.cur_count += 1;
        self.cur_members.push(j as u32);
    }

    /// The closed group holding epoch `e` (`None` while `e`'s group is open).
    #[inline]
    fn group_of(&self, e: &Epoch) -> Option<&Epoch> {
        closed_group(e, self.closed, &self.groups, &self.group_ids)
    }

    /// Position of the closed group `id` (its last epoch's id).
    #[inline]
    fn group_index(&self, id: u32) -> usize {
        group_index(&self.group_ids, id)
    }

    /// Removes the epoch at position `k` (no column is stamped with it any more, or all were
    /// just flushed) and, with its last epoch, its group.
    fn drop_epoch(&mut self, k: usize) {
        let (id, group) = (self.ids[k], self.epochs[k].group);
        self.epochs.remove(k);
        self.ids.remove(k);
        if id <= self.closed {
            let g = self.group_index(group);
            self.groups[g].count -= 1;
            if self.groups[g].count == 0 {
                self.groups.remove(g);
                self.group_ids.remove(g);
            }
        }
    }

    /// Position of the open group's first epoch in `epochs` (those after it have ids
    /// `> closed`).
    fn open_from(&self) -> usize {
        self.ids.partition_point(|&id| id <= self.closed)
    }

    /// [`epoch_index`](Self::epoch_index) when `hint` may hold it: the position found by an
    /// earlier look-up, taken if the epoch is still there (a drop since may have moved it).
    /// Saves the binary search that dominated the bookkeeping of a stale column.
    #[inline]
    fn epoch_index_at(&self, id: u32, hint: usize) -> usize {
        match self.ids.get(hint) {
            Some(&at) if at == id => hint,
            _ => self.epoch_index(id),
        }
    }

    /// Position of the live epoch `id` (`O(1)`, `columns/id_index.rs`).
    #[inline]
    fn epoch_index(&self, id: u32) -> usize {
        self.ids
            .position(id)
            .unwrap_or_else(|| unreachable!("stamp {id} of no live epoch"))
    }

    /// The current value of column `j` without updating the store: returns `w̄_j` and writes
    /// `Z[:, j]` into `z` (`O(m²)` for a stale column).
    pub(crate) fn peek(&self, j: usize, z: &mut [f64]) -> f64 {
        self.peek_reusing(j, z, &mut Default::default())
    }

    /// [`peek`](Self::peek) with `scratch` for a column not up to date (the slot and its
    /// temporary, reused: no allocation per column when a merge walks every column; the same
    /// values).
    pub(crate) fn peek_reusing(
        &self,
        j: usize,
        z: &mut [f64],
        scratch: &mut (Vec<f64>, Vec<f64>),
    ) -> f64 {
        let s = self.stride();
        let base = j * s;
        let stored = &self.data[base..base + s];
        let stamp = stored[STAMP] as u32;
        if stamp == self.cur {
            z.copy_from_slice(&stored[Z..Z + self.m]);
            return stored[W];
        }
        let (slot, tmp) = scratch;
        self.peek_into(j, slot, tmp);
        z.copy_from_slice(&slot[Z..Z + self.m]);
        slot[W]
    }

    /// The current slot of column `j` (a copy), without updating the store.
    pub(crate) fn peek_slot(&self, j: usize) -> Vec<f64> {
        let (mut slot, mut tmp) = (Vec::new(), Vec::new());
        self.peek_into(j, &mut slot, &mut tmp);
        slot
    }

    /// [`peek_slot`](Self::peek_slot) into `slot` (`tmp`: scratch), reusing their allocations.
    fn peek_into(&self, j: usize, slot: &mut Vec<f64>, tmp: &mut Vec<f64>) {
        let s = self.stride();
        let base = j * s;
        slot.clear();
        slot.extend_from_slice(&self.data[base..base + s]);
        let stamp = slot[STAMP] as u32;
        if stamp == self.cur {
            return;
        }
        tmp.clear();
        tmp.resize(self.m, 0.0);
        if stamp == 0 {
            self.write_initial(j, slot);
            self.pristine.apply(slot, tmp, self.m);
        } else {
            let e = &self.epochs[self.epoch_index(stamp)];
            bring_up(e, self.group_of(e), slot, tmp, self.m);
        }
    }

    /// Rebase: `w̄_h ← w̄_h + Zᵀb_h` (with `Z` before the change; `b` holds the heads' `b_h` one
    /// after the other) and `Z ← M·Z` (`mat` row-major `m × m`; `None` = identity), both lazily.
    /// The caller sets `b ← 0`.
    pub(crate) fn rebase(&mut self, mat: Option<&[f64]>, b: &[f64]) {
        // Transfer and compose: the open group's epochs, every closed group, the pristine.
        let mut scratch = Vec::new();
        let mt = mat.map(|mm| transpose(mm, self.m));
        let mt = mt.as_deref();
        let open_from = self.open_from();
        for e in self
            .epochs
            .range_mut(open_from..)
            .chain(self.groups.iter_mut())
            .chain(std::iter::once(&mut self.pristine))
        {
            e.compose(mt, b, &mut scratch, self.m);
        }
        let members = std::mem::take(&mut self.cur_members);
        if self.cur_count > 0 {
            self.ids.push(self.cur);
            self.epochs.push_back(Epoch {
                id: self.cur,
                tt: mt.map(|x| x.to_vec()),
                a: b.to_vec(),
                count: self.cur_count,
                members,
                group: 0,
            });
        }
        self.cur_count = 0;
        self.cur += 1;
        self.rebases += 1;
        let open = self.epochs.len() - self.open_from();
        if open >= GROUP {
            // Close the open group: its epochs' transforms now end at the current coordinates.
            let from = self.open_from();
            self.closed = self.cur - 1;
            self.epochs
                .range_mut(from..)
                .for_each(|e| e.group = self.closed);
            self.groups.push(Epoch {
                id: self.closed,
                tt: None,
                a: vec![0.0; self.m * self.heads],
                count: open as u64,
                members: Vec::new(),
                group: 0,
            });
            self.group_ids.push(self.closed);
        }
        while self.epochs.len() > MAX_EPOCHS {
            let k = (0..self.epochs.len())
                .min_by_key(|&k| self.epochs[k].count)
                .expect("non-empty");
            let s = self.stride();
            let mut tmp = std::mem::take(&mut self.tmp);
            let mut data = std::mem::take(&mut self.data);
            let (id, mut left) = (self.epochs[k].id, self.epochs[k].count);
            // The members are distinct and `count` of them still carry the stamp: the scan
            // (a cache miss per member on a large store) stops at the last of them. The slot
            // `FLUSH_AHEAD` members on is hinted, so that those misses overlap.
            let members = &self.epochs[k].members;
            let hint = data.len() >= crate::linear::prefetch::CACHED_ENTRIES;
            for (i, &j) in members.iter().enumerate() {
                if left == 0 {
                    break;
                }
                if let Some(&ahead) = members.get(i + FLUSH_AHEAD).filter(|_| hint) {
                    prefetch_slot(&data, ahead as usize * s, s);
                }
                let base = j as usize * s;
                if data[base + STAMP] as u32 == id {
                    left -= 1;
                    let e = &self.epochs[k];
                    bring_up(
                        e,
                        closed_group(e, self.closed, &self.groups, &self.group_ids),
                        &mut data[base..base + s],
                        &mut tmp,
                        self.m,
                    );
                    data[base + STAMP] = self.cur as f64;
                    self.cur_count += 1;
                    self.cur_members.push(j);
                }
            }
            self.data = data;
            self.tmp = tmp;
            self.drop_epoch(k);
        }
    }

    /// `K = ZZᵀ` over all `d` columns, exactly as stored, when at most `limit` (≤ [`FEW`])
    /// columns were ever touched (`None` otherwise): the touched columns' current values, plus
    /// the never-touched ones in closed form — their value is `T·Z₀[:, j]` with `T` the
    /// never-touched columns' transform, and `Z₀` has orthonormal rows with one non-zero per
    /// column, so they add `T(D₀ − Σ_{touched} Z₀[:, j]Z₀[:, j]ᵀ)Tᵀ`, `D₀ = Z₀Z₀ᵀ` (the identity
    /// on its `min(m, d)` rows). `O(m²)` per touched column and `O(m³)`.
    pub(crate) fn exact_gram(&self, limit: usize) -> Option<Vec<f64>> {
        let list = self.touched.as_ref().filter(|l| l.len() <= limit)?;
        let m = self.m;
        // D₀ − Σ_touched z₀z₀ᵀ: diagonal.
        let mut d0 = vec![0.0; m];
        if let Init::Structured { seed } = self.init {
            if m > 0 {
                for v in d0.iter_mut().take(initial_rank(self.dim, m)) {
                    *v = 1.0;
                }
                for &j in list {
                    let (r, v) = initial_value(self.dim, m, seed, j as usize);
                    d0[r] -= v * v;
                }
            }
        }
        let mut k = self.columns_gram(list.iter().copied());
        // The never-touched columns: T·diag(d0)·Tᵀ (T = I when none was ever applied).
        match &self.pristine.tt {
            None => (0..m).for_each(|a| k[a * m + a] += d0[a]),
            Some(tt) => {
                for a in 0..m {
                    for b in 0..m {
                        k[a * m + b] += (0..m)
                            .map(|c| tt[c * m + a] * d0[c] * tt[c * m + b])
                            .sum::<f64>();
                    }
                }
            }
        }
        Some(k)
    }

    /// The slot of column `j` as stored (not brought up to date; stamp 0: never touched).
    pub(crate) fn stored_slot(&self, j: usize) -> &[f64] {
        let s = self.stride();
        &self.data[j * s..(j + 1) * s]
    }

    /// The value of the never-touched columns.
    pub(crate) fn init(&self) -> Init {
        self.init
    }

    /// `Σ_j Z[:, j]Z[:, j]ᵀ` (`m × m`, row-major) over `cols`, in their order, with the
    /// columns' current values: summed on the lower triangle, then mirrored (the same sums to
    /// the bit as the full square, `z_a·z_b = z_b·z_a` exactly, in half the work).
    pub(crate) fn columns_gram(&self, cols: impl Iterator<Item = u32>) -> Vec<f64> {
        let m = self.m;
        let mut k = vec![0.0; m * m];
        let (mut slot, mut tmp) = (Vec::new(), Vec::new());
        for j in cols {
            self.peek_into(j as usize, &mut slot, &mut tmp);
            let z = &slot[Z..Z + m];
            for a in 0..m {
                let za = z[a];
                for (kab, zb) in k[a * m..=a * m + a].iter_mut().zip(z) {
                    *kab += za * zb;
                }
            }
        }
        for a in 0..m {
            for b in 0..a {
                k[b * m + a] = k[a * m + b];
            }
        }
        k
    }

    /// Past epochs that still own columns.
    #[cfg(test)]
    pub(crate) fn live_epochs(&self) -> usize {
        self.epochs.len()
    }

    /// The columns ever brought up to date (stamp ≠ 0), increasing, read from the epochs'
    /// member lists ([`LazyColumns::stamped_columns`]): `O(T log T)` for the `T` members, never
    /// `O(d)` (for a merge, [`super::merge`]).
    pub(crate) fn touched_columns(&self) -> Vec<u32> {
        let mut cols = self.stamped_columns();
        cols.sort_unstable();
        cols.dedup();
        cols
    }

    /// Every column stamped with a live epoch or the current one, each once (in no particular
    /// order). A column is stamped only by [`LazyColumns::refresh`] or a flush, and both list it
    /// among the members of the epoch it is stamped with; a member re-stamped since is skipped,
    /// so this costs the members of the live epochs (at most one entry per column and epoch,
    /// which is work already done), not `d`.
    fn stamped_columns(&self) -> Vec<u32> {
        let s = self.stride();
        let lists = self
            .epochs
            .iter()
            .map(|e| (e.id, &e.members))
            .chain(std::iter::once((self.cur, &self.cur_members)));
        let mut cols = Vec::with_capacity(self.cur_count as usize);
        for (id, members) in lists {
            let own = |&&j: &&u32| self.data[j as usize * s + STAMP] == f64::from(id);
            cols.extend(members.iter().filter(own));
        }
        cols
    }

    /// The columns a model file stores, in the order it stores them: while at most [`FEW`]
    /// columns were touched, the list [`LazyColumns::exact_gram`] sums over, in the order they
    /// were first touched, so that a loaded store sums in the same order and learning goes on
    /// bit for bit as if it had not stopped; beyond, increasing ([`touched_columns`]).
    ///
    /// [`touched_columns`]: LazyColumns::touched_columns
    pub(crate) fn stored_columns(&self) -> Vec<u32> {
        match &self.touched {
            Some(list) => list.clone(),
            None => self.touched_columns(),
        }
    }

    /// For each row `r < min(m, d)`, one column `j ≡ r (mod m)` not in `stored` (increasing),
    /// if there is one: together with the stored columns, the columns whose weights bound every
    /// weight of the store (the load check of `linear/validate.rs` looks at these only).
    ///
    /// Why: a column not stored (stamp 0) is, when read, its initial slot brought through the
    /// pristine epoch ([`LazyColumns::peek_into`]); the initial slot is zero (`Init::Zero`) or
    /// holds only `z_r = ±1/√n_r` with `r = j mod m` ([`initial_value`]: the row and `n_r`
    /// depend on `r` only, the sign on a hash of `j`), and an epoch's transform is linear in
    /// the slot (`w̄ += aᵀz`, `z ← Tz`, [`Epoch::apply`]). So the weight `w̄_j + z_jᵀb` of such
    /// a column is `±v_r` (`0` for `Init::Zero`), `v_r` a function of the stored finite state
    /// and `r` alone: the same magnitude for every unstored column of row `r`. Checking one of
    /// them per row checks them all (`weight_ok` depends on `|w|` only). `O(|stored| + m)`.
    pub(crate) fn unstored_representatives(&self, stored: &[u32]) -> Vec<u32> {
        let m = self.m.max(1);
        let mut out = Vec::new();
        for r in 0..m.min(self.dim) {
            let mut j = r;
            while j < self.dim && stored.binary_search(&(j as u32)).is_ok() {
                j += m;
            }
            if j < self.dim {
                out.push(j as u32);
            }
        }
        out
    }

    /// Every column's current `(w̄_j, Z[:, j])`, for inspection (`O(m²d)`).
    pub(crate) fn for_each_column(&self, mut f: impl FnMut(usize, f64, &[f64])) {
        let mut z = vec![0.0; self.m];
        for j in 0..self.dim {
            let w = self.peek(j, &mut z);
            f(j, w, &z);
        }
    }

    /// `wᵀx` with `w = w̄ + Zᵀb`, without updating any column (features at or beyond `d` are
    /// ignored): the prediction of every sparse learner before its own extra terms.
    pub(crate) fn score(&self, x: crate::Row<'_>, b: &[f64]) -> f64 {
        let mut z = vec![0.0; self.m];
        let mut col = vec![0.0; self.m];
        let mut wx = 0.0;
        super::for_each_nz(x, |j, v| {
            if j < self.dim {
                wx += self.peek(j, &mut col) * v;
                for (zi, c) in z.iter_mut().zip(&col) {
                    *zi += c * v;
                }
            }
        });
        wx + crate::linalg::dot(b, &z)
    }

    /// The full weight vector `w = w̄ + Zᵀb` (`O(m²d)`, for inspection).
    pub(crate) fn weights(&self, b: &[f64]) -> Vec<f64> {
        let mut w = vec![0.0; self.dim];
        self.for_each_column(|j, wb, z| w[j] = wb + crate::linalg::dot(z, b));
        w
    }
}

/// `out = A·B` for row-major `m × m` matrices (`out` zeroed by the caller): the composition of
/// every live epoch's transform at a rebase. The common sizes run a copy with the length known
/// at compile time, for AVX2 when the CPU has it (the same sums in the same order: same bits).
fn matmul_into(a: &[f64], b: &[f64], m: usize, out: &mut [f64]) {
    match m {
        10 => matmul_dispatch::<10>(a, b, out),
        5 => matmul_dispatch::<5>(a, b, out),
        20 => matmul_dispatch::<20>(a, b, out),
        _ => matmul_fixed_rows(a, b, m, out),
    }
}

#[inline(always)]
fn matmul_dispatch<const M: usize>(a: &[f64], b: &[f64], out: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    if super::axpy::has_avx2() {
        // SAFETY: the CPU supports AVX2 (checked just above).
        return unsafe { matmul_avx2::<M>(a, b, out) };
    }
    matmul_fixed_rows(a, b, M, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn matmul_avx2<const M: usize>(a: &[f64], b: &[f64], out: &mut [f64]) {
    matmul_fixed_rows(a, b, M, out)
}

/// The loop of [`matmul_into`] (`m` a constant in the size-specialised copies).
#[inline(always)]
fn matmul_fixed_rows(a: &[f64], b: &[f64], m: usize, out: &mut [f64]) {
    for (arow, orow) in a.chunks_exact(m).zip(out.chunks_exact_mut(m)) {
        for (&aik, brow) in arow.iter().zip(b.chunks_exact(m)) {
            if aik != 0.0 {
                super::axpy::axpy(orow, brow, aik);
            }
        }
    }
}

/// Position of the live closed group `id` (its last epoch's id) among `group_ids`.
#[inline]
fn group_index(group_ids: &IdIndex, id: u32) -> usize {
    group_ids
        .position(id)
        .unwrap_or_else(|| unreachable!("group {id} not live"))
}

/// The closed group holding the live epoch `e` (`None` while `e`'s group is open; `closed`: the
/// id of the last epoch of the newest closed group).
#[inline]
fn closed_group<'a>(
    e: &Epoch,
    closed: u32,
    groups: &'a [Epoch],
    group_ids: &IdIndex,
) -> Option<&'a Epoch> {
    (e.id <= closed).then(|| &groups[group_index(group_ids, e.group)])
}

/// Brings a stored slot of the live epoch `e` up to date: the epoch's own transform, then (for
/// an epoch of a closed group) the group's, `group`.
#[inline]
fn bring_up(e: &Epoch, group: Option<&Epoch>, slot: &mut [f64], tmp: &mut [f64], m: usize) {
    e.apply(slot, tmp, m);
    if let Some(g) = group {
        g.apply(slot, tmp, m);
    }
}

/// The transpose of a row-major `m × m` matrix.
fn transpose(a: &[f64], m: usize) -> Vec<f64> {
    let mut t = vec![0.0; a.len()];
    for (i, row) in a.chunks_exact(m.max(1)).enumerate() {
        for (k, &v) in row.iter().enumerate() {
            t[k * m + i] = v;
        }
    }
    t
}

/// Model files store an epoch's `T` row-major; memory holds `Tᵀ` (a square matrix of any size:
/// its size is checked against the store's `m` after loading).
mod transposed {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    fn side(len: usize) -> Option<usize> {
        let m = (len as f64).sqrt().round() as usize;
        (m * m == len).then_some(m)
    }

    /// Transposes a square matrix; any other length is passed through (and then refused by the
    /// size check).
    fn flip(a: Vec<f64>) -> Vec<f64> {
        match side(a.len()) {
            Some(m) if m > 0 => super::transpose(&a, m),
            _ => a,
        }
    }

    pub(super) fn serialize<S: Serializer>(tt: &Option<Vec<f64>>, s: S) -> Result<S::Ok, S::Error> {
        tt.clone().map(flip).serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Vec<f64>>, D::Error> {
        Ok(Option::<Vec<f64>>::deserialize(d)?.map(flip))
    }
}

/// `zᵀa` over the first `M` numbers of each (the transfer of [`Epoch::apply`]) with `M` known:
/// unrolled, the same products summed in the same order from `−0.0` as `Iterator::sum`, so the
/// same bits. A flush brings millions of columns up to date through it (sparse FD-SON on `2²⁰`
/// features, 157,440 rows: 12.3 million calls of `Epoch::apply`, whose generic loop ran about 76
/// instructions a call outside the transform, `valgrind --tool=callgrind`).
/// `zᵀa` over the shorter of the two, summed in order from `−0.0` (`Iterator::sum`): the
/// order the store's values were always made in (`linalg::dot`'s four accumulators sum in
/// another order, so other bits).
#[inline(always)]
fn ordered_dot(z: &[f64], a: &[f64]) -> f64 {
    z.iter().zip(a).map(|(x, y)| x * y).sum::<f64>()
}

#[inline(always)]
fn transfer_dot<const M: usize>(z: &[f64], a: &[f64]) -> f64 {
    let (Some(z), Some(a)) = (z.first_chunk::<M>(), a.first_chunk::<M>()) else {
        return ordered_dot(z, a);
    };
    let mut sum = -0.0;
    for i in 0..M {
        sum += z[i] * a[i];
    }
    sum
}

/// `z ← T z` with `tt = Tᵀ` row-major: `z' = Σ_k T[:, k]·z_k`, one `axpy` per column of `T`.
/// Each `z'_i` is still the sum `Σ_k T_ik z_k` in the order of `k` (from `−0.0`, as `Iterator::sum`),
/// so the result is the same to the bit as the row-by-row dot products; the common sizes are
/// compiled apart (length known: unrolled and vectorised, AVX2 when the CPU has it).
#[inline]
fn apply(tt: &[f64], m: usize, z: &mut [f64], tmp: &mut [f64]) {
    match m {
        10 => apply_dispatch::<10>(tt, z),
        5 => apply_dispatch::<5>(tt, z),
        20 => apply_dispatch::<20>(tt, z),
        _ => {
            let tmp = &mut tmp[..m];
            tmp.fill(-0.0);
            for (col, &zk) in tt.chunks_exact(m).zip(z.iter()) {
                for (t, c) in tmp.iter_mut().zip(col) {
                    *t += c * zk;
                }
            }
            z[..m].copy_from_slice(tmp);
        }
    }
}

#[inline(always)]
fn apply_dispatch<const M: usize>(tt: &[f64], z: &mut [f64]) {
    if super::axpy::has_avx2() {
        // SAFETY: the CPU supports AVX2 (checked just above).
        return unsafe { apply_avx2::<M>(tt, z) };
    }
    apply_fixed::<M>(tt, z)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn apply_avx2<const M: usize>(tt: &[f64], z: &mut [f64]) {
    apply_fixed::<M>(tt, z)
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn apply_avx2<const M: usize>(tt: &[f64], z: &mut [f64]) {
    apply_fixed::<M>(tt, z)
}

#[inline(always)]
fn apply_fixed<const M: usize>(tt: &[f64], z: &mut [f64]) {
    let Some(z) = z.first_chunk_mut::<M>() else {
        return;
    };
    let mut acc = [-0.0f64; M];
    for (col, &zk) in tt.chunks_exact(M).zip(z.iter()) {
        let Some(col) = col.first_chunk::<M>() else {
            return;
        };
        for i in 0..M {
            acc[i] += col[i] * zk;
        }
    }
    *z = acc;
}

mod base;
mod batch;
mod delta;
mod id_index;
mod stored;

use id_index::IdIndex;
use stored::Stored;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod file_tests;
