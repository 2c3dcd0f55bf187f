//! A one-shot stream made re-readable: [`Spool`] copies it once to an anonymous temporary file
//! (created in [`std::env::temp_dir`], unlinked at once where the platform allows, so nothing is
//! left behind even after `kill -9`), bounded by a byte limit; [`Sample`] records the first
//! examples of a stream in memory and replays them in front of the rest.
//!
//! Both keep the bytes a reader sees exactly those of the stream, so a run over a spooled or
//! sampled pipe gives the same bits as the same run over the file.

use crate::data::source::INPUT_BUFFER_SIZE;
use crate::data::{ParseError, ParseErrorKind};
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Cursor, Read, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The default bound of a [`Spool`]: 64 GiB of (decompressed) text.
pub const DEFAULT_SPOOL_LIMIT: u64 = 64 << 30;

/// The most bytes [`Sample`] keeps in memory before the stream is spooled instead: 64 MiB.
pub(crate) const SAMPLE_LIMIT: usize = 64 << 20;

static SPOOL_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A stream copied to a temporary file; each [`Spool::reader`] reads it from the start.
pub(crate) struct Spool {
    file: Arc<File>,
    len: u64,
    /// The path, where it could not be unlinked while open (removed on drop).
    path: Option<PathBuf>,
}

impl Spool {
    /// Copies `from` (named `name` in errors) to a new temporary file; more than `limit` bytes
    /// is an error that says what to change.
    pub(crate) fn copy(mut from: impl Read, name: &str, limit: u64) -> Result<Spool, ParseError> {
        let io_err = |what: &str, e: io::Error| {
            ParseError::new(name, 0, 0, ParseErrorKind::Io(format!("{what}: {e}")))
        };
        let path = std::env::temp_dir().join(format!(
            "sketchlearn-spool-{}-{}",
            std::process::id(),
            SPOOL_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| {
                io_err(
                    &format!("cannot create the spool file {}", path.display()),
                    e,
                )
            })?;
        // Unlinked while open: the data lives until the handle closes, whatever ends the process.
        let path = fs::remove_file(&path).err().map(|_| path);
        let mut spool = Spool {
            file: Arc::new(file),
            len: 0,
            path,
        };
        let mut writer = io::BufWriter::with_capacity(INPUT_BUFFER_SIZE, &*spool.file);
        let copied = io::copy(&mut (&mut from).take(limit.saturating_add(1)), &mut writer)
            .and_then(|n| writer.flush().map(|()| n))
            .map_err(|e| io_err("cannot spool the stream to a temporary file", e))?;
        drop(writer);
        if copied > limit {
            return Err(ParseError::new(
                name,
                0,
                0,
                ParseErrorKind::Io(format!(
                    "the stream is longer than the spool limit of {limit} bytes (a stream read \
                     several times, LIBSVM without --dim, or CSV, whose columns are scanned \
                     first, is copied to {} first): give a file, or LIBSVM/VW with --dim and \
                     one pass",
                    std::env::temp_dir().display()
                )),
            ));
        }
        spool.len = copied;
        Ok(spool)
    }

    /// A reader of the whole spooled text, from its start.
    pub(crate) fn reader(&self) -> Box<dyn BufRead + Send> {
        Box::new(BufReader::with_capacity(
            INPUT_BUFFER_SIZE,
            SpoolReader {
                file: Arc::clone(&self.file),
                pos: 0,
                len: self.len,
            },
        ))
    }
}

impl Drop for Spool {
    fn drop(&mut self) {
        if let Some(p) = &self.path {
            let _ = fs::remove_file(p);
        }
    }
}

/// Reads a spool file at its own offset (positioned reads: several readers never share one).
struct SpoolReader {
    file: Arc<File>,
    pos: u64,
    len: u64,
}

impl Read for SpoolReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = (self.len - self.pos).min(buf.len() as u64) as usize;
        if left == 0 {
            return Ok(0);
        }
        let n = read_at(&self.file, &mut buf[..left], self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, offset)
}

#[cfg(windows)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, offset)
}

/// What a [`Sample`] has pulled from its stream so far, and the stream.
struct Recorded {
    inner: Box<dyn BufRead + Send>,
    seen: Vec<u8>,
    overflow: bool,
}

/// A reader that records every byte it pulls from a stream (at most [`SAMPLE_LIMIT`]; past it,
/// reads fail and [`Sample::finish`] says so), so that the stream can be replayed whole.
pub(crate) struct Sample {
    state: Arc<Mutex<Recorded>>,
}

impl Sample {
    /// Starts recording `inner`; the second value is the reader to parse the sample from.
    pub(crate) fn start(inner: Box<dyn BufRead + Send>) -> (Sample, Box<dyn BufRead + Send>) {
        let state = Arc::new(Mutex::new(Recorded {
            inner,
            seen: Vec::new(),
            overflow: false,
        }));
        let tap = Tap {
            state: Arc::clone(&state),
        };
        (
            Sample { state },
            Box::new(BufReader::with_capacity(INPUT_BUFFER_SIZE, tap)),
        )
    }

    /// The whole stream again (the recorded bytes, then the rest), and whether the sample
    /// outgrew [`SAMPLE_LIMIT`] (then what was parsed from it is incomplete). The reader given
    /// by [`Sample::start`] must have been dropped.
    pub(crate) fn finish(self) -> (Box<dyn BufRead + Send>, bool) {
        let state = match Arc::try_unwrap(self.state) {
            Ok(m) => m.into_inner().unwrap_or_else(|p| p.into_inner()),
            Err(_) => unreachable!("the sampling reader outlived its sample"),
        };
        (
            Box::new(Cursor::new(state.seen).chain(state.inner)),
            state.overflow,
        )
    }
}

/// The recording side of a [`Sample`].
struct Tap {
    state: Arc<Mutex<Recorded>>,
}

impl Read for Tap {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if s.seen.len() >= SAMPLE_LIMIT {
            s.overflow = true;
            return Err(io::Error::other("sample limit reached"));
        }
        let n = s.inner.read(buf)?;
        s.seen.extend_from_slice(&buf[..n]);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spool_reads_back_whole_and_twice() {
        let text = b"1 1:0.5\n-1 2:1\n".repeat(1000);
        let spool = Spool::copy(&text[..], "t", u64::MAX).unwrap();
        for _ in 0..2 {
            let mut back = Vec::new();
            spool.reader().read_to_end(&mut back).unwrap();
            assert_eq!(back, text);
        }
    }

    #[test]
    fn spool_limit_is_an_error() {
        let err = Spool::copy(&[b'x'; 100][..], "big", 99).err().unwrap();
        assert!(err.to_string().contains("spool limit of 99 bytes"), "{err}");
        assert!(Spool::copy(&[b'x'; 100][..], "ok", 100).is_ok());
    }

    #[test]
    fn sample_replays_everything() {
        let text = b"1 1:0.5\n".repeat(100_000);
        let (sample, mut tap) = Sample::start(Box::new(Cursor::new(text.clone())));
        let mut first = String::new();
        tap.read_line(&mut first).unwrap();
        drop(tap);
        let (mut all, overflow) = sample.finish();
        assert!(!overflow);
        let mut back = Vec::new();
        all.read_to_end(&mut back).unwrap();
        assert_eq!(back, text);
    }
}
