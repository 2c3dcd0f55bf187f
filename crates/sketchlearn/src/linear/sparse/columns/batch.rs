//! The catch-up of an example's stale columns four at a time ([`LazyColumns::refresh_stale`]).
//!
//! A stale column's catch-up (`Epoch::apply`: the transfer `w̄ += zᵀa`, then `z ← Tz`, once
//! for its epoch and once more for a closed group) is two chains of `m` dependent additions
//! each, so one column at a time it is bound by the latency of the additions, not by their
//! number (on the generated sparse stream, 2^18 features and 50 non-zeros per row, the
//! catch-up was 25 % of sparse RFD-SON's time). Here the numeric work of up to four columns runs
//! in one loop whose four chains are independent, so they overlap. Each column's sums are the
//! same additions in the same order as `Epoch::apply`'s (from `−0.0`, as `Iterator::sum`),
//! so the values are the same to the bit; the bookkeeping (epoch counts, dropped epochs, stamps,
//! the current epoch's member list) is then done column by column in the example's order, as
//! `LazyColumns::refresh` does it, so the stored state is the same too.
//!
//! **The stamps are scanned first.** Each batch's look-up and catch-up run hundreds of
//! instructions, more than the core's reorder window, so in a single loop the stamps of the
//! next batch were loaded only once the previous batch was done: on a store in RAM (the
//! generated stream's 25 MB) one memory latency per batch of four, 78 % of this loop's samples
//! on the stamp's compare. [`LazyColumns::scan_stale`] first loads the stamps of up to
//! [`SCAN`] columns in a loop of a few instructions each, so their misses overlap, and keeps the
//! stale ones; the batching loop then runs over those (a column current at the scan stays
//! current: nothing here rebases), in the same order, with the same batches.

use super::{LazyColumns, STAMP, W, Z};
use crate::data::packed::prefetch_slice;

/// Columns caught up together.
const LANES: usize = 4;

/// Columns whose stamps are scanned together before their catch-up
/// ([`LazyColumns::scan_stale`]).
const SCAN: usize = 64;

/// Zeros standing in for the transform and transfer of a lane with nothing to do (`m ≤ 20`).
static ZEROS: [f64; 400] = [0.0; 400];

/// One lane's step: a transfer `a` and a transform `Tᵀ` (`None`: identity, no step for `z`).
type Step<'a> = Option<(&'a [f64], Option<&'a [f64]>)>;

impl LazyColumns {
    /// [`refresh_stale`](Self::refresh_stale) for the store's own sketch size (the common sizes
    /// batched, others one column at a time): the same values and state as
    /// [`LazyColumns::current`] on each of `indices` in order.
    pub(crate) fn refresh_all(&mut self, indices: &[u32]) {
        match self.m {
            10 => self.refresh_stale::<10>(indices),
            5 => self.refresh_stale::<5>(indices),
            20 => self.refresh_stale::<20>(indices),
            _ => {
                for &j in indices {
                    self.current(j as usize);
                }
            }
        }
    }

    /// Brings every stale column of `indices` up to date (the same values and state as
    /// [`LazyColumns::current`] on each in order); `M` is the sketch size. Stores with several
    /// heads take the columns one at a time.
    ///
    /// The batches are formed in the example's order as they fill; each one's epochs are looked
    /// up, and their transforms start loading ([`LazyColumns::look_up`]), one batch before it is
    /// caught up, so that those loads overlap the previous batch's arithmetic (an epoch's `Tᵀ`
    /// is `M²` numbers, and the columns of a wide stream come from hundreds of different
    /// epochs). The batches, and the order in which they are caught up, are those of one batch
    /// at a time: no column's staleness depends on another column's catch-up.
    pub(crate) fn refresh_stale<const M: usize>(&mut self, indices: &[u32]) {
        if self.heads != 1 || self.m != M || M * M > ZEROS.len() {
            for &j in indices {
                self.current(j as usize);
            }
            return;
        }
        let s = self.stride();
        let cur = self.cur as f64;
        // `ready`: looked up, waiting to be caught up; `next`: filling.
        let (mut ready, mut ready_at, mut nr) = ([0usize; LANES], [usize::MAX; LANES], 0);
        let (mut next, mut nn) = ([0usize; LANES], 0);
        let mut stale = [0u32; SCAN];
        for part in indices.chunks(SCAN) {
            let found = self.scan_stale(part, &mut stale);
            for &j in &stale[..found] {
                let j = j as usize;
                if self.data[j * s + STAMP] != cur
                    && !next[..nn].contains(&j)
                    && !ready[..nr].contains(&j)
                {
                    next[nn] = j;
                    nn += 1;
                    if nn == LANES {
                        let at = self.look_up::<M>(&next);
                        if nr > 0 {
                            self.refresh_batch::<M>(&ready[..nr], &ready_at[..nr]);
                        }
                        (ready, ready_at, nr, nn) = (next, at, LANES, 0);
                    }
                }
            }
        }
        if nr > 0 {
            self.refresh_batch::<M>(&ready[..nr], &ready_at[..nr]);
        }
        if nn > 0 {
            let at = self.look_up::<M>(&next[..nn]);
            self.refresh_batch::<M>(&next[..nn], &at[..nn]);
        }
    }

    /// The columns of `part` (at most [`SCAN`]) that are stale when it is called, in order,
    /// into `stale`; returns how many. Only loads: the loop is a handful of instructions per
    /// column, so the stamps' cache misses (one per column on a large store) are all in flight
    /// together, where the catch-up's own loop, whose every batch runs hundreds of instructions,
    /// would wait for each batch's stamps in turn. The slot's last line is asked for as well (a
    /// hint: the catch-up reads the whole slot).
    #[inline(always)]
    fn scan_stale(&self, part: &[u32], stale: &mut [u32; SCAN]) -> usize {
        let s = self.stride();
        let cur = self.cur as f64;
        let mut n = 0;
        for &j in part {
            let base = j as usize * s;
            let slot = &self.data[base..base + s];
            if slot[STAMP] != cur {
                prefetch_slice(&slot[s - 1..]);
                stale[n] = j;
                n += 1;
            }
        }
        n
    }

    /// The positions of the epochs of the columns `cols` (`usize::MAX` for a never-touched
    /// column), whose transfers and transforms are asked into the cache (a hint).
    fn look_up<const M: usize>(&self, cols: &[usize]) -> [usize; LANES] {
        let s = self.stride();
        let mut at = [usize::MAX; LANES];
        for (c, &j) in cols.iter().enumerate() {
            let stamp = self.data[j * s + STAMP] as u32;
            if stamp != 0 {
                at[c] = self.epoch_index(stamp);
                let e = &self.epochs[at[c]];
                prefetch_slice(&e.a[..M]);
                if let Some(tt) = &e.tt {
                    prefetch_slice(&tt[..M * M]);
                }
            }
        }
        at
    }

    /// Catches up the distinct stale columns `cols` (at most [`LANES`]); `at`: their epochs'
    /// positions from [`look_up`](Self::look_up) (checked: a drop since may have moved them).
    fn refresh_batch<const M: usize>(&mut self, cols: &[usize], at: &[usize]) {
        if cols.len() == 1 {
            self.refresh(cols[0]);
            return;
        }
        let s = self.stride();
        let mut w = [0.0f64; LANES];
        let mut z = [[0.0f64; M]; LANES];
        let mut own: [Step<'_>; LANES] = [None; LANES];
        let mut group: [Step<'_>; LANES] = [None; LANES];
        let mut found = [usize::MAX; LANES];
        for (c, &j) in cols.iter().enumerate() {
            let base = j * s;
            let stamp = self.data[base + STAMP] as u32;
            if stamp == 0 {
                continue; // O(m), in the bookkeeping below
            }
            found[c] = self.epoch_index_at(stamp, at[c]);
            let e = &self.epochs[found[c]];
            w[c] = self.data[base + W];
            z[c].copy_from_slice(&self.data[base + Z..base + Z + M]);
            own[c] = Some((&e.a[..M], e.tt.as_deref()));
            if let Some(g) = self.group_of(e) {
                group[c] = Some((&g.a[..M], g.tt.as_deref()));
            }
        }
        // A pass in which no lane has a step changes nothing: skipped (the catch-up of columns
        // touched a few examples ago, as the FD shrink's, has no closed group's step).
        for lanes in [&own, &group] {
            if lanes.iter().any(Option::is_some) {
                steps_dispatch::<M>(lanes, &mut w, &mut z);
            }
        }
        for (c, &j) in cols.iter().enumerate() {
            if own[c].is_some() {
                let base = j * s;
                self.data[base + W] = w[c];
                self.data[base + Z..base + Z + M].copy_from_slice(&z[c]);
            }
        }
        for (&j, &k) in cols.iter().zip(&found) {
            self.settle(j, k);
        }
    }
}

/// [`steps`] compiled for AVX2 when the CPU has it.
#[inline(always)]
fn steps_dispatch<const M: usize>(
    lanes: &[Step<'_>; LANES],
    w: &mut [f64; LANES],
    z: &mut [[f64; M]; LANES],
) {
    #[cfg(target_arch = "x86_64")]
    if super::super::axpy::has_avx2() {
        // SAFETY: the CPU supports AVX2 (checked just above).
        return unsafe { steps_avx2::<M>(lanes, w, z) };
    }
    steps::<M>(lanes, w, z)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn steps_avx2<const M: usize>(
    lanes: &[Step<'_>; LANES],
    w: &mut [f64; LANES],
    z: &mut [[f64; M]; LANES],
) {
    steps::<M>(lanes, w, z)
}

/// `Epoch::apply` on every lane that has a step: `w += Σ_i z_i a_i` (from `−0.0`, `i`
/// increasing), then, with a transform, `z ← Σ_k T[:, k] z_k` (from `−0.0`, `k` increasing).
#[inline(always)]
fn steps<const M: usize>(
    lanes: &[Step<'_>; LANES],
    w: &mut [f64; LANES],
    z: &mut [[f64; M]; LANES],
) {
    let zeros: &[f64] = &ZEROS[..M * M];
    let a: [&[f64]; LANES] = std::array::from_fn(|c| lanes[c].map_or(&zeros[..M], |l| l.0));
    let tt: [&[f64]; LANES] = std::array::from_fn(|c| lanes[c].and_then(|l| l.1).unwrap_or(zeros));
    let mut dot = [-0.0f64; LANES];
    for i in 0..M {
        for c in 0..LANES {
            dot[c] += z[c][i] * a[c][i];
        }
    }
    let mut acc = [[-0.0f64; M]; LANES];
    for k in 0..M {
        for c in 0..LANES {
            let zk = z[c][k];
            let col = &tt[c][k * M..(k + 1) * M];
            for i in 0..M {
                acc[c][i] += col[i] * zk;
            }
        }
    }
    for c in 0..LANES {
        if let Some((_, t)) = lanes[c] {
            w[c] += dot[c];
            if t.is_some() {
                z[c] = acc[c];
            }
        }
    }
}
