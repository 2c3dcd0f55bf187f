//! A hint that a sparse row's entries of a per-feature table are read soon: one prefetch per
//! non-zero, so that the loads of a row's features (random accesses into a `d`-long table, in
//! RAM or the last-level cache when `d` is large) overlap instead of each waiting behind the
//! arithmetic of the previous one. No effect on any value; dense rows need no hint (they are
//! read in order).

use crate::Row;

/// Tables of fewer entries than this (256 KiB of `f64`, 1 MiB of the unit scaling's 32-byte
/// moments) stay in the core's own caches while a stream is learned: hints for them would cost
/// instructions and save nothing (w8a's 300 features, measured: the hints were 2 % of its time).
pub(crate) const CACHED_ENTRIES: usize = 1 << 15;

/// Starts loading `table[j]` (the cache line holding its start) for every index `j` of a sparse
/// `x` (indices beyond the table are skipped: the caller reports them); nothing for a table of fewer than [`CACHED_ENTRIES`].
#[inline]
pub(crate) fn prefetch_entries<T>(table: &[T], x: Row<'_>) {
    if table.len() < CACHED_ENTRIES {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if let Row::Sparse { indices, .. } = x {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        for &j in indices {
            if let Some(e) = table.get(j as usize) {
                // SAFETY: prefetching is a hint; the address is that of an element.
                unsafe { _mm_prefetch::<_MM_HINT_T0>(e as *const T as *const i8) };
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (table, x);
}
