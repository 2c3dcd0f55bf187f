//! An output file that replaces its target only when complete: written to a registered
//! temporary file beside the target and renamed over it by [`ReplacingFile::commit`]. A run
//! that fails half-way (bad input met while learning, a signal, a full disk) leaves the target
//! as it was and no temporary file behind — the policy of model saves ([`super::save`]), for
//! the other files a run writes (predictions).

use super::write::{sync_dir, temporary_beside, Registered};
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// A buffered writer whose bytes reach `target` only at [`commit`](Self::commit); dropped
/// without a commit, it removes its temporary file and leaves `target` untouched.
///
/// ```
/// use sketchlearn::model::ReplacingFile;
/// use std::io::Write;
/// let dir = std::env::temp_dir().join(format!("replacing-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let target = dir.join("p.txt");
/// std::fs::write(&target, "mine\n").unwrap();
/// let mut out = ReplacingFile::create(&target).unwrap();
/// writeln!(out, "0.5").unwrap();
/// drop(out); // a failed run: the target keeps its content
/// assert_eq!(std::fs::read_to_string(&target).unwrap(), "mine\n");
/// let mut out = ReplacingFile::create(&target).unwrap();
/// writeln!(out, "0.7").unwrap();
/// out.commit().unwrap();
/// assert_eq!(std::fs::read_to_string(&target).unwrap(), "0.7\n");
/// assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1); // no temporary file left
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub struct ReplacingFile {
    out: BufWriter<File>,
    temp: Registered,
    dir: PathBuf,
    target: PathBuf,
}

impl ReplacingFile {
    /// Creates the temporary file beside `target` (removing stale ones of dead processes).
    pub fn create(target: &Path) -> io::Result<Self> {
        let (dir, temp) = temporary_beside(target).ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "the path does not name a file")
        })?;
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp.path)?;
        Ok(ReplacingFile {
            out: BufWriter::with_capacity(1 << 20, file),
            temp,
            dir,
            target: target.to_path_buf(),
        })
    }

    /// Flushes, syncs and renames the temporary file over the target (the error says which
    /// step failed).
    pub fn commit(mut self) -> io::Result<()> {
        let step = |what: &str, e: io::Error| io::Error::new(e.kind(), format!("{what}: {e}"));
        self.out.flush().map_err(|e| step("cannot write it", e))?;
        (self.out.get_ref().sync_all()).map_err(|e| step("cannot sync it to disk", e))?;
        fs::rename(&self.temp.path, &self.target).map_err(|e| {
            let temp = self.temp.path.display();
            step(&format!("cannot rename {temp} over the target"), e)
        })?;
        self.temp.keep = true;
        sync_dir(&self.dir);
        Ok(())
    }
}

impl Write for ReplacingFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.out.write(buf)
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.out.write_all(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// The temporary file is this process's own, so a writer may go back into what it wrote (a
/// model save fills in its header after the payload).
impl io::Seek for ReplacingFile {
    fn seek(&mut self, pos: io::SeekFrom) -> io::Result<u64> {
        self.out.seek(pos)
    }
}
