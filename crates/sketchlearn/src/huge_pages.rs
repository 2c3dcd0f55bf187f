//! Transparent huge pages for a large table read at random (a hint to the kernel; no value
//! changes).
//!
//! The sparse-time learners' column store (`linear/sparse/columns.rs`) is `d·(m + 2)` numbers
//! read at the example's features: 25 MB at `d = 2^18`, `m = 10`, touched at random, so with
//! 4 KiB pages almost every column costs a TLB miss (a page walk) besides its cache misses, and
//! its first touch a page fault (6,400 of them at 25 MB). With 2 MiB pages the whole store is
//! covered by a dozen TLB entries. Linux gives them to a mapping advised `MADV_HUGEPAGE` when its
//! transparent-huge-page mode is `madvise` (the common default) or `always`; elsewhere, or on a
//! kernel without them, the advice fails and nothing changes.
//!
//! The advice must come before the first touch (a fresh `calloc`ed mapping), and it covers only
//! the 2 MiB-aligned part of the table. A huge page is materialised whole at its first touch, so
//! a table of which few entries are ever touched (a wide hashed space, `-b 24`, on small data)
//! would cost up to its whole size in memory instead of the pages it touches: the advice is
//! given only to tables of at most [`MAX_BYTES`], where that worst case stays modest, and not to
//! tables smaller than one huge page ([`MIN_BYTES`]). AdaGrad's weight pairs
//! (`model/interleaved.rs`, 4 MiB at `d = 2^18`) are advised the same way.

/// Size of a transparent huge page on x86-64 and most arm64 kernels.
const HUGE: usize = 2 << 20;

/// Smallest table advised: one huge page (a learner's tables add up: the FD member's column
/// store, AdaGrad's pairs of 4 MiB at `d = 2^18`, the diagonal's, the other members'; a second
/// level TLB of 2,048 4 KiB entries covers 8 MiB in all).
pub(crate) const MIN_BYTES: usize = HUGE;

/// Largest table advised (its memory can grow to this size however few entries are touched).
pub(crate) const MAX_BYTES: usize = 128 << 20;

#[cfg(target_os = "linux")]
mod sys {
    use std::ffi::{c_int, c_void};

    /// `MADV_HUGEPAGE` of `<sys/mman.h>` (Linux, every architecture).
    pub(super) const MADV_HUGEPAGE: c_int = 14;

    unsafe extern "C" {
        /// `madvise(2)` of the C library that `std` links on Linux.
        pub(super) fn madvise(addr: *mut c_void, len: usize, advice: c_int) -> c_int;
    }
}

/// The 2 MiB-aligned part `[lo, hi)` of the addresses `[start, start + bytes)`, if any.
fn aligned_part(start: usize, bytes: usize) -> Option<(usize, usize)> {
    let lo = start.checked_next_multiple_of(HUGE)?;
    let hi = (start + bytes) / HUGE * HUGE;
    (hi > lo).then_some((lo, hi))
}

/// Asks the kernel to back the table `v` (freshly allocated, not yet touched) with huge pages
/// when its size is within [`MIN_BYTES`]`..=`[`MAX_BYTES`]. Returns whether the advice was taken
/// (`false` off Linux, outside the sizes, or when the kernel refuses it).
pub(crate) fn advise<T>(v: &mut [T]) -> bool {
    let bytes = std::mem::size_of_val(v);
    if !(MIN_BYTES..=MAX_BYTES).contains(&bytes) {
        return false;
    }
    let Some((lo, hi)) = aligned_part(v.as_mut_ptr() as usize, bytes) else {
        return false;
    };
    #[cfg(target_os = "linux")]
    {
        // SAFETY: `[lo, hi)` lies inside `v`'s allocation, which this call borrows mutably;
        // `MADV_HUGEPAGE` changes how the kernel backs the pages, never their contents (the
        // zeros of a fresh mapping stay zeros), and a failure only leaves the pages as they were.
        unsafe { sys::madvise(lo as *mut std::ffi::c_void, hi - lo, sys::MADV_HUGEPAGE) == 0 }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (lo, hi);
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_aligned_part_lies_inside_and_on_huge_page_boundaries() {
        assert_eq!(aligned_part(HUGE, 3 * HUGE), Some((HUGE, 4 * HUGE)));
        assert_eq!(
            aligned_part(HUGE + 16, 3 * HUGE),
            Some((2 * HUGE, 4 * HUGE))
        );
        assert_eq!(aligned_part(16, HUGE), None);
        assert_eq!(aligned_part(HUGE - 8, HUGE), None);
        assert_eq!(aligned_part(HUGE - 8, HUGE + 8), Some((HUGE, 2 * HUGE)));
    }

    #[test]
    fn advice_keeps_the_values_and_skips_small_and_huge_tables() {
        let mut small = vec![0.0; 1024];
        assert!(!advise(&mut small));
        let mut v = vec![0.0f64; MIN_BYTES / 8 + 1000];
        let _ = advise(&mut v); // taken or not, depending on the kernel
        assert!(v.iter().all(|&x| x == 0.0));
        v[12345] = 1.5;
        assert_eq!(v.iter().sum::<f64>(), 1.5);
    }
}
