//! A read-only memory map of a file (the `memmap2` crate, used here and nowhere else): the
//! bytes of a file in the page cache without the kernel's copy into a buffer that every
//! `read` makes. A binary cache ([`crate::run`]'s `cache_file`) is read three times in a run
//! from it (its checksum, the pre-scan, the pass): through `read`, the copies were 10 % of
//! the process's CPU time on the dense stream (`docs/results/speed.md`, branch `dense10`).
//!
//! A map is only made of a file that sketchlearn itself writes as a whole and then only
//! renames into place (a cache: written to a temporary file beside it, renamed over it), so
//! the mapped file is never written while it is mapped by sketchlearn. Another process that
//! shrinks the file meanwhile would make reading past its new end a fault (`SIGBUS`); that is
//! the one risk a map has over `read`, and the reason text inputs (which their owners may
//! edit) are read, not mapped.

use std::fs::File;
use std::ops::Deref;

/// The bytes of a file, mapped read-only.
pub(crate) struct Mapped(memmap2::Mmap);

impl Mapped {
    /// Maps all of `file` (opened for reading); `None` when it is empty or cannot be mapped
    /// (the caller reads it instead).
    pub(crate) fn open(file: &File) -> Option<Self> {
        let len = file.metadata().ok()?.len();
        if len == 0 || usize::try_from(len).is_err() {
            return None;
        }
        // SAFETY: the map is read-only and the files mapped are only ever replaced by a
        // rename, never written in place (see the module docs); a `&[u8]` over it stays valid
        // for as long as the map lives.
        let map = unsafe { memmap2::MmapOptions::new().map(file) }.ok()?;
        let _ = map.advise(memmap2::Advice::Sequential);
        Some(Mapped(map))
    }
}

impl Deref for Mapped {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_map_holds_the_files_bytes_and_an_empty_file_is_not_mapped() {
        let path = std::env::temp_dir().join(format!("sketchlearn-mapped-{}", std::process::id()));
        let bytes: Vec<u8> = (0..70_000u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let map = Mapped::open(&File::open(&path).unwrap()).unwrap();
        assert_eq!(&*map, &bytes[..]);
        std::fs::write(&path, b"").unwrap();
        assert!(Mapped::open(&File::open(&path).unwrap()).is_none());
        std::fs::remove_file(&path).unwrap();
    }
}
