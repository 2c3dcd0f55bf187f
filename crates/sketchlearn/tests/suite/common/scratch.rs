//! A scratch directory for tests that write files (model files, caches).
#![allow(dead_code)] // each test file uses a part

use std::path::PathBuf;

/// A fresh, empty directory unique to this process and `name`, removed on drop.
pub struct Scratch(pub PathBuf);

impl Scratch {
    /// `$TMPDIR/sketchlearn-test-<name>-<pid>`, emptied first.
    pub fn new(name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("sketchlearn-test-{name}-{}", std::process::id()));
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
