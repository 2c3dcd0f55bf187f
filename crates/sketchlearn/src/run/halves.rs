//! A plain LIBSVM file as two halves, for the walk before a run on two threads
//! ([`prescan`](super::prescan)): the first half ends, and the second begins, at the first line
//! break past the middle byte, so each line is read whole by exactly one of them. The walk is
//! one-thread work otherwise (the learner cannot start before it knows the dimension), and on
//! the dense benchmark stream it is a quarter of the run's CPU.
//!
//! Declined (`None`: read the file whole, as before) unless the input is a plain file of at
//! least `min_bytes` that is neither gzip (its bytes are not the text) nor has a line starting
//! with the UTF-8 byte-order mark at the cut (a reader strips the mark from its own first line
//! only, and the file's first line is the first half's).

use crate::data::{LibsvmOptions, LibsvmReader};
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Take};

use crate::data::source::INPUT_BUFFER_SIZE;

/// The readers of the two halves. The first half ends with a line break, so once read to its
/// end its [`line`](LibsvmReader::line) is the number of lines before the second half: add it
/// to a line number of the second to get the file's.
pub(crate) struct Halves {
    pub first: LibsvmReader<BufReader<Take<File>>>,
    pub second: LibsvmReader<BufReader<File>>,
}

/// `path` split in two (see the [module](self) docs); `name` names it in errors.
pub(crate) fn split(
    path: &str,
    name: &str,
    options: LibsvmOptions,
    min_bytes: u64,
) -> Option<Halves> {
    let mut file = File::open(path).ok()?;
    let size = file.metadata().ok().filter(|m| m.is_file())?.len();
    let mut magic = [0u8; 2];
    if size < min_bytes.max(2) || file.read_exact(&mut magic).is_err() || magic == [0x1f, 0x8b] {
        return None;
    }
    let cut = line_start_after(&mut file, size / 2)?;
    let mut second = File::open(path).ok()?;
    second.seek(SeekFrom::Start(cut)).ok()?;
    let mut second = BufReader::with_capacity(INPUT_BUFFER_SIZE, second);
    if second.fill_buf().ok()?.starts_with(b"\xEF\xBB\xBF") || cut >= size {
        return None;
    }
    file.seek(SeekFrom::Start(0)).ok()?;
    let first = BufReader::with_capacity(INPUT_BUFFER_SIZE, file.take(cut));
    Some(Halves {
        first: LibsvmReader::new(first, name, options),
        second: LibsvmReader::new(second, name, options),
    })
}

/// The offset just past the first `\n` at or after `from`, or the file's size when there is
/// none (which [`split`] declines). The bytes skipped are not kept: a line of any length costs
/// the 64 KiB buffer only.
fn line_start_after(file: &mut File, from: u64) -> Option<u64> {
    file.seek(SeekFrom::Start(from)).ok()?;
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let n = reader.skip_until(b'\n').ok()?;
    Some(from + n as u64)
}
