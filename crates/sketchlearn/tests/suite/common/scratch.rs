//! A scratch directory for tests that write files (model files, caches).
#![allow(dead_code)] // each test file uses a part

use std::path::PathBuf;

/// A fresh, empty directory unique to this process and call, removed on drop.
pub struct Scratch(pub PathBuf);

impl Scratch {
    /// `$TMPDIR/sketchlearn-test-<name>-<pid>-<n>`, emptied first: `n` counts this process's
    /// scratch folders, so two test files (one process, `tests/suite`) may use the same `name`.
    pub fn new(name: &str) -> Self {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static MADE: AtomicUsize = AtomicUsize::new(0);
        let n = MADE.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!(
            "sketchlearn-test-{name}-{}-{n}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    /// The path of `name` inside the directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// The names of all entries in the directory, sorted (temporary files left behind would
    /// show here).
    pub fn entries(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
