//! Writing a model file without a second copy of the model, and without leaving a partial file
//! behind: the payload is serialised once, straight into the temporary file after a placeholder
//! header, counting its length and CRC-32 on the way; the header is then written over the
//! placeholder — so a model of N bytes needs O(1) memory more to be saved, not N, and is
//! encoded once. The temporary files of saves in progress
//! are registered, so that a signal handler can remove them ([`remove_temporary_files`]), and the
//! stale ones of a process that no longer runs (killed with `kill -9` during a save) are removed
//! by the next save to the same path.

use super::replacing_file::ReplacingFile;
use super::{io_error, ModelError, FORMAT_VERSION, MAGIC, MAX_KIND_LEN};
use serde::Serialize;
use std::fs::{self, File};
use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Distinguishes the temporary files of concurrent saves within one process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// The temporary files of the saves in progress.
static IN_PROGRESS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Removes the temporary files of every save in progress in this process (for a handler of
/// SIGINT/SIGTERM that then ends the process: the interrupted saves leave nothing behind, and
/// their targets keep their old content). Safe to call from any thread; not from a signal
/// handler itself (it takes a lock).
///
/// ```
/// sketchlearn::model::remove_temporary_files(); // nothing in progress: a no-op
/// ```
pub fn remove_temporary_files() {
    let files = IN_PROGRESS.lock().unwrap_or_else(|p| p.into_inner());
    for f in files.iter() {
        let _ = fs::remove_file(f);
    }
}

/// Counts and checksums the payload on its way to the file.
struct Measure {
    len: u64,
    crc: crc32fast::Hasher,
}

/// Forwards to a file while counting and checksumming ([`Measure`]), keeping the first I/O
/// error (postcard reports it only as "buffer full").
struct Tee<'a, W> {
    inner: &'a mut W,
    measure: Measure,
    failed: &'a mut Option<io::Error>,
}

impl<W: Write> Write for Tee<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.inner.write(buf) {
            Ok(n) => {
                self.measure.len += n as u64;
                self.measure.crc.update(&buf[..n]);
                Ok(n)
            }
            Err(e) => {
                let copy = io::Error::new(e.kind(), e.to_string());
                self.failed.get_or_insert(e);
                Err(copy)
            }
        }
    }
    /// postcard flushes at the end of the value: a write the buffer held until then fails
    /// here (a model smaller than the buffer), and is kept as the write's error too.
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush().map_err(|e| {
            let copy = io::Error::new(e.kind(), e.to_string());
            self.failed.get_or_insert(e);
            copy
        })
    }
}

/// Why [`write_image`] failed.
pub(super) enum WriteError {
    /// The value cannot be encoded.
    Encode(ModelError),
    /// Writing failed.
    Io(io::Error),
}

fn encode_error(e: impl std::fmt::Display) -> ModelError {
    ModelError::Encode(e.to_string())
}

/// The header (everything before the payload) for a payload of `len` bytes with CRC `crc`.
fn header(kind: &str, len: u64, payload_crc: &crc32fast::Hasher) -> Vec<u8> {
    let mut out = Vec::with_capacity(super::PREFIX_LEN + kind.len() + super::SUFFIX_LEN);
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&(kind.len() as u16).to_le_bytes());
    out.extend_from_slice(kind.as_bytes());
    out.extend_from_slice(&len.to_le_bytes());
    let mut crc = crc32fast::Hasher::new();
    crc.update(&out);
    crc.combine(payload_crc);
    out.extend_from_slice(&crc.finalize().to_le_bytes());
    out
}

/// An error unless `kind` is 1 to [`MAX_KIND_LEN`] bytes long.
fn check_kind_len(kind: &str) -> Result<(), ModelError> {
    if kind.is_empty() || kind.len() > MAX_KIND_LEN {
        return Err(ModelError::Encode(format!(
            "the kind tag must be 1 to {MAX_KIND_LEN} bytes long, {:?} has {}",
            kind,
            kind.len()
        )));
    }
    Ok(())
}

/// The whole file image of `value` in memory (the bytes [`write_image`] writes), serialised
/// once: the payload is encoded after a placeholder header, whose length and CRC are filled in
/// from the encoded bytes (one bulk CRC, not one per element written). A file needs the two
/// passes of [`write_image`] (no copy of the model in memory); bytes in memory need one.
pub(super) fn image<T: Serialize + ?Sized>(kind: &str, value: &T) -> Result<Vec<u8>, ModelError> {
    check_kind_len(kind)?;
    let h = header(kind, 0, &crc32fast::Hasher::new()).len();
    let mut out = postcard::to_extend(value, vec![0u8; h]).map_err(encode_error)?;
    let mut crc = crc32fast::Hasher::new();
    crc.update(&out[h..]);
    let head = header(kind, (out.len() - h) as u64, &crc);
    out[..h].copy_from_slice(&head);
    Ok(out)
}

/// Writes the whole file image of `value` to `out` (see the byte layout in [`super`]), which
/// must be at its start: a placeholder header, the payload (encoded once), then the header over
/// the placeholder, leaving `out` at its end.
pub(super) fn write_image<T: Serialize + ?Sized, W: Write + Seek>(
    kind: &str,
    value: &T,
    out: &mut W,
) -> Result<(), WriteError> {
    check_kind_len(kind).map_err(WriteError::Encode)?;
    let placeholder = header(kind, 0, &crc32fast::Hasher::new());
    out.write_all(&placeholder).map_err(WriteError::Io)?;
    let mut failed = None;
    let tee = Tee {
        inner: out,
        measure: Measure {
            len: 0,
            crc: crc32fast::Hasher::new(),
        },
        failed: &mut failed,
    };
    let payload = match postcard::to_io(value, tee) {
        Ok(tee) => tee.measure,
        Err(e) => {
            return Err(match failed {
                Some(io) => WriteError::Io(io),
                None => WriteError::Encode(encode_error(e)),
            })
        }
    };
    let head = header(kind, payload.len, &payload.crc);
    debug_assert_eq!(head.len(), placeholder.len());
    (|| {
        out.seek(SeekFrom::Start(0))?;
        out.write_all(&head)?;
        out.seek(SeekFrom::End(0)).map(|_| ())
    })()
    .map_err(WriteError::Io)
}

/// The temporary file name of a save to `file_name` (`.{name}.tmp.{pid}.{counter}`).
fn temp_name(file_name: &std::ffi::OsStr) -> std::ffi::OsString {
    let mut name = std::ffi::OsString::from(".");
    name.push(file_name);
    name.push(format!(
        ".tmp.{}.{}",
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    name
}

/// Removes the temporary files of saves to `file_name` in `dir` left by processes that no
/// longer run (a save killed with `kill -9`). Where liveness cannot be told (not Linux), none.
fn remove_stale(dir: &Path, file_name: &std::ffi::OsStr) {
    let prefix = format!(".{}.tmp.", file_name.to_string_lossy());
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(&prefix)) else {
            continue;
        };
        let pid = rest.split('.').next().and_then(|p| p.parse::<u32>().ok());
        if pid.is_some_and(|p| p != std::process::id() && !process_alive(p)) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

#[cfg(target_os = "linux")]
fn process_alive(pid: u32) -> bool {
    Path::new("/proc").join(pid.to_string()).exists()
}

#[cfg(not(target_os = "linux"))]
fn process_alive(_pid: u32) -> bool {
    true
}

/// A registered temporary file, unregistered (and removed unless kept) when dropped.
pub(crate) struct Registered {
    pub(crate) path: PathBuf,
    pub(crate) keep: bool,
}

impl Registered {
    fn new(path: PathBuf) -> Self {
        IN_PROGRESS
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(path.clone());
        Registered { path, keep: false }
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        if !self.keep {
            let _ = fs::remove_file(&self.path);
        }
        let mut files = IN_PROGRESS.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(i) = files.iter().position(|f| *f == self.path) {
            files.swap_remove(i);
        }
    }
}

/// A registered temporary file name beside `path` (its directory, so that a rename replaces
/// `path` at once) and that directory; the stale temporary files of dead processes are removed
/// first. `None` when `path` names no file.
pub(crate) fn temporary_beside(path: &Path) -> Option<(PathBuf, Registered)> {
    let file_name = path.file_name()?;
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    remove_stale(&dir, file_name);
    let temp = Registered::new(dir.join(temp_name(file_name)));
    Some((dir, temp))
}

/// [`super::save`]: the image is streamed into a [`ReplacingFile`] (a registered temporary
/// file in the target's directory), synced, and renamed over `path`.
pub(super) fn save<T: Serialize + ?Sized>(
    path: &Path,
    kind: &str,
    value: &T,
) -> Result<(), ModelError> {
    let mut out = ReplacingFile::create(path)
        .map_err(|e| io_error(path, "cannot create the temporary file beside it", &e))?;
    write_image(kind, value, &mut out).map_err(|e| match e {
        WriteError::Encode(e) => e,
        WriteError::Io(e) => io_error(path, "cannot write the temporary file", &e),
    })?;
    out.flush()
        .map_err(|e| io_error(path, "cannot write the temporary file", &e))?;
    out.commit()
        .map_err(|e| io_error(path, "cannot put the temporary file in place", &e))
}

/// Makes the rename durable where the platform allows it; failures are ignored (the data itself
/// is already synced and the rename already visible).
pub(crate) fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}
