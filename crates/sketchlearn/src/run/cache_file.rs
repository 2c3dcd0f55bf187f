//! The layout of a binary example cache ([`super::cache`]) and its two ends: [`CacheWriter`]
//! copies the examples of a parser into a new cache as they are read, [`CacheReader`] reads them
//! back.
//!
//! ```text
//! "SKLCACHE"  version: u32 LE  key length: u32 LE  key (postcard)     header
//! record*                                                             one per example
//! 0u8  count: u64 LE  crc: u32 LE                                     trailer
//!
//! record = tag: u8 (bit 0 set; bit 1: a weight follows; bit 2: every value is 1, none stored;
//!                   bit 3: values stored as f32, each exactly the f64 parsed;
//!                   bit 4: the label is a name in a CSV column; bit 5: the label is a number
//!                   in a CSV column)
//!          line − previous line: varint
//!          label    = bit 4: column: varint  length: varint  name: UTF-8 bytes
//!                     else label: f64 LE, and with bit 5 column: varint
//!          [weight: f64 LE]   nnz: varint
//!          first index: varint, then index − previous index: varint (≥ 1)      nnz indices
//!          values: f64 LE or f32 LE                                            nnz or none
//! ```
//!
//! The CRC-32 covers every byte before it. The values are the parser's bits (an `f64` is stored
//! as `f32` only when converting back gives the same bits), so a run from the cache learns from
//! exactly the examples of the text, with the same lines for its messages — and, for CSV, the
//! same label fields ([`LabelField`]: the label as written and its column) for the run's label
//! map and its messages.
//!
//! Nothing in a cache is trusted further than it is checked: the whole file's CRC before its
//! first use in a run ([`verify`]), and while reading each record's bounds (the number of
//! features is bounded by the bytes left in the file, indices must increase and stay below the
//! dimension, numbers must be finite), so a damaged cache is an error that names it, never an
//! unbounded allocation or a wrong example.

use crate::data::mapped::Mapped;
use crate::data::{all_finite, Example, ExampleSource, LabelField, ParseError, ParseErrorKind};
use crate::labels::ClassLabel;
use crate::model::{sync_dir, temporary_beside, Registered};
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// The first bytes of every cache: a file without them is not one (and is never overwritten).
pub(crate) const MAGIC: [u8; 8] = *b"SKLCACHE";

/// The layout's version (a cache of another version is rebuilt).
pub(crate) const VERSION: u32 = 3;

/// The longest key a header may declare.
const MAX_KEY_LEN: u32 = 1 << 16;

/// The trailer: end tag, count, CRC.
const TRAILER_LEN: u64 = 1 + 8 + 4;

const HAS_WEIGHT: u8 = 2;
const ALL_ONES: u8 = 4;
const AS_F32: u8 = 8;
const NAMED_LABEL: u8 = 16;
const LABEL_COLUMN: u8 = 32;

/// The longest label name a record may hold.
const MAX_NAME_LEN: u64 = 1 << 16;

/// Bytes written to the file at a time.
const CHUNK: usize = 1 << 20;

/// Bytes read from the file at a time: small enough that the kernel's copy lands in the core's
/// L2 cache, where the CRC or the decoder reads it next (1 MiB chunks came back from memory).
const READ_CHUNK: usize = 1 << 17;

/// What is at a cache path.
pub(crate) enum Header {
    /// Nothing: a cache may be written there.
    Missing,
    /// A file that does not start with [`MAGIC`]: the user's, left alone.
    NotOurs,
    /// A cache of `version` with this `key` (postcard bytes).
    Ours { version: u32, key: Vec<u8> },
}

/// Reads the header at `path`.
pub(crate) fn read_header(path: &Path) -> io::Result<Header> {
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Header::Missing),
        Err(e) => return Err(e),
    };
    let mut head = [0u8; 16];
    let mut got = 0;
    while got < head.len() {
        match file.read(&mut head[got..])? {
            0 => break,
            n => got += n,
        }
    }
    if got < 8 || head[..8] != MAGIC {
        return Ok(Header::NotOurs);
    }
    if got < 16 {
        return Ok(Header::Ours {
            version: 0,
            key: Vec::new(),
        });
    }
    let version = u32::from_le_bytes(head[8..12].try_into().expect("4 bytes"));
    let len = u32::from_le_bytes(head[12..16].try_into().expect("4 bytes"));
    let mut key = Vec::new();
    if len <= MAX_KEY_LEN {
        file.take(u64::from(len)).read_to_end(&mut key)?;
    }
    Ok(Header::Ours { version, key })
}

/// Checks the whole file at `path` against its CRC: the number of examples it holds, or why
/// it is damaged.
pub(crate) fn verify(path: &Path) -> io::Result<Result<u64, String>> {
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    if len < 16 + TRAILER_LEN {
        return Ok(Err(format!("it is truncated ({len} bytes)")));
    }
    if let Some(map) = Mapped::open(&file).filter(|m| m.len() as u64 == len) {
        let (body, stored) = map.split_at(map.len() - 4);
        return Ok(checked(
            crc32fast::hash(body),
            stored,
            &body[body.len() - 9..],
        ));
    }
    let mut crc = crc32fast::Hasher::new();
    let mut left = len - 4;
    let mut buf = vec![0u8; READ_CHUNK];
    let mut last = Vec::with_capacity(9);
    while left > 0 {
        let n = file.read(&mut buf[..READ_CHUNK.min(left as usize)])?;
        if n == 0 {
            return Ok(Err("it ended while being read".into()));
        }
        crc.update(&buf[..n]);
        left -= n as u64;
        // Keep the last 9 bytes hashed: the end tag and the count.
        last.extend_from_slice(&buf[n.saturating_sub(9)..n]);
        let cut = last.len().saturating_sub(9);
        last.drain(..cut);
    }
    let mut stored = [0u8; 4];
    file.read_exact(&mut stored)?;
    Ok(checked(crc.finalize(), &stored, &last))
}

/// The count of a cache whose records and trailer (ending in `last`, the end tag and the
/// count) have the checksum `crc`, if `stored` holds it, else why it is damaged.
fn checked(crc: u32, stored: &[u8], last: &[u8]) -> Result<u64, String> {
    if stored != crc.to_le_bytes() {
        return Err("its checksum does not match its content".into());
    }
    if last.first() != Some(&0) {
        return Err("it has no end mark".into());
    }
    Ok(u64::from_le_bytes(last[1..9].try_into().expect("8 bytes")))
}

fn put_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

/// Appends the record of `ex` (read on `line` with the label field `field`, the previous
/// example on `prev_line`) to `buf`.
fn encode(ex: &Example, field: Option<&LabelField>, line: u64, prev_line: u64, buf: &mut Vec<u8>) {
    let mut tag = 1u8;
    tag |= match field.map(|f| &f.label) {
        Some(ClassLabel::Text(_)) => NAMED_LABEL,
        Some(ClassLabel::Number(_)) => LABEL_COLUMN,
        None => 0,
    };
    if ex.weight.to_bits() != 1f64.to_bits() {
        tag |= HAS_WEIGHT;
    }
    let one = 1f64.to_bits();
    if ex.values.iter().all(|v| v.to_bits() == one) {
        tag |= ALL_ONES;
    } else if ex
        .values
        .iter()
        .all(|&v| f64::from(v as f32).to_bits() == v.to_bits())
    {
        tag |= AS_F32;
    }
    buf.push(tag);
    put_varint(buf, line.wrapping_sub(prev_line));
    match field {
        Some(LabelField {
            label: ClassLabel::Text(name),
            column,
        }) => {
            put_varint(buf, *column as u64);
            put_varint(buf, name.len() as u64);
            buf.extend_from_slice(name.as_bytes());
        }
        Some(LabelField { column, .. }) => {
            buf.extend_from_slice(&ex.label.to_le_bytes());
            put_varint(buf, *column as u64);
        }
        None => buf.extend_from_slice(&ex.label.to_le_bytes()),
    }
    if tag & HAS_WEIGHT != 0 {
        buf.extend_from_slice(&ex.weight.to_le_bytes());
    }
    put_varint(buf, ex.indices.len() as u64);
    let mut prev = 0u32;
    for (k, &i) in ex.indices.iter().enumerate() {
        put_varint(buf, u64::from(if k == 0 { i } else { i - prev }));
        prev = i;
    }
    if tag & ALL_ONES == 0 {
        for &v in &ex.values {
            if tag & AS_F32 != 0 {
                buf.extend_from_slice(&(v as f32).to_le_bytes());
            } else {
                buf.extend_from_slice(&v.to_le_bytes());
            }
        }
    }
}

/// An error about the cache at `path` (not about the input's text).
pub(crate) fn cache_error(path: &Path, what: impl std::fmt::Display) -> ParseError {
    ParseError::new(
        format!("cache {}", path.display()),
        0,
        0,
        ParseErrorKind::Io(what.to_string()),
    )
}

/// A parser whose examples are also written to a new cache: into a temporary file beside the
/// target, renamed over it once the parser reached its end (an error or an early drop leaves
/// the target as it was and removes the temporary file).
pub(crate) struct CacheWriter<S> {
    source: S,
    out: Option<BufWriter<File>>,
    temp: Registered,
    dir: PathBuf,
    target: PathBuf,
    crc: crc32fast::Hasher,
    record: Vec<u8>,
    prev_line: u64,
    count: u64,
    /// Called once the cache is in place.
    done: Option<Box<dyn FnOnce() + Send>>,
}

impl<S: ExampleSource<Error = ParseError>> CacheWriter<S> {
    /// Starts a cache at `target` with the header of `key` (postcard bytes) in front of
    /// `source`'s examples; `done` runs when it is complete.
    pub(crate) fn create(
        target: &Path,
        key: &[u8],
        source: S,
        done: Box<dyn FnOnce() + Send>,
    ) -> Result<Self, ParseError> {
        let (dir, temp) = temporary_beside(target)
            .ok_or_else(|| cache_error(target, "the path does not name a file"))?;
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp.path)
            .map_err(|e| cache_error(target, format!("cannot create it: {e}")))?;
        let mut writer = CacheWriter {
            source,
            out: Some(BufWriter::with_capacity(CHUNK, file)),
            temp,
            dir,
            target: target.to_path_buf(),
            crc: crc32fast::Hasher::new(),
            record: Vec::with_capacity(4096),
            prev_line: 0,
            count: 0,
            done: Some(done),
        };
        let mut header = MAGIC.to_vec();
        header.extend_from_slice(&VERSION.to_le_bytes());
        header.extend_from_slice(&(key.len() as u32).to_le_bytes());
        header.extend_from_slice(key);
        writer.write(&header)?;
        Ok(writer)
    }

    /// The parser inside.
    pub(crate) fn source(&self) -> &S {
        &self.source
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), ParseError> {
        self.crc.update(bytes);
        let out = self.out.as_mut().expect("written only before the end");
        out.write_all(bytes)
            .map_err(|e| cache_error(&self.target, format!("cannot write it: {e}")))
    }

    /// Writes the trailer and puts the cache in place (refusing to replace a file that became
    /// something other than a cache meanwhile).
    fn finish(&mut self) -> Result<(), ParseError> {
        let mut trailer = vec![0u8];
        trailer.extend_from_slice(&self.count.to_le_bytes());
        self.write(&trailer)?;
        let crc = std::mem::take(&mut self.crc).finalize();
        let mut out = self.out.take().expect("finished once");
        let target = self.target.clone();
        let io = |e: io::Error| cache_error(&target, format!("cannot write it: {e}"));
        out.write_all(&crc.to_le_bytes()).map_err(io)?;
        out.flush().map_err(io)?;
        drop(out);
        if let Header::NotOurs = read_header(&self.target).map_err(io)? {
            return Err(cache_error(&self.target, not_ours_message()));
        }
        fs::rename(&self.temp.path, &self.target).map_err(io)?;
        self.temp.keep = true;
        sync_dir(&self.dir);
        if let Some(done) = self.done.take() {
            done();
        }
        Ok(())
    }
}

/// Why a path is refused as a cache.
pub(crate) fn not_ours_message() -> &'static str {
    "the file exists and is not a sketchlearn cache (it does not start with one's header): it \
     is left alone; give --cache a new path, or remove the file"
}

impl<S: ExampleSource<Error = ParseError>> ExampleSource for CacheWriter<S> {
    type Error = ParseError;

    fn read_into(&mut self, ex: &mut Example) -> Result<bool, ParseError> {
        if self.out.is_none() {
            return Ok(false);
        }
        if !self.source.read_into(ex)? {
            self.finish()?;
            return Ok(false);
        }
        let line = self.source.line();
        let mut record = std::mem::take(&mut self.record);
        record.clear();
        encode(
            ex,
            self.source.label_field(),
            line,
            self.prev_line,
            &mut record,
        );
        let written = self.write(&record);
        self.record = record;
        written?;
        self.prev_line = line;
        self.count += 1;
        Ok(true)
    }

    fn line(&self) -> u64 {
        self.source.line()
    }

    fn label_field(&self) -> Option<&LabelField> {
        self.source.label_field()
    }
}

/// The examples of a complete cache, read back.
pub(crate) struct CacheReader {
    file: File,
    path: PathBuf,
    buf: Buffer,
    pos: usize,
    end: usize,
    /// File bytes not yet in `buf`.
    unread: u64,
    line: u64,
    count: u64,
    max_index_plus_one: usize,
    /// Indices must be below this (`2^bits` for hashed input).
    index_limit: u64,
    finished: bool,
    /// The label field of the last record (CSV).
    label: Option<LabelField>,
    /// Records decoded in full; past them only headers ([`CacheReader::headers_after`]).
    full_rows: u64,
    /// The number of stored features of the last record.
    last_nnz: usize,
}

/// Where a [`CacheReader`]'s bytes are: the whole file mapped ([`Mapped`]: `pos` starts
/// past the header, nothing is left unread), or chunks read into a buffer.
enum Buffer {
    Mapped(Mapped),
    Read(Vec<u8>),
}

impl std::ops::Deref for Buffer {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Buffer::Mapped(m) => m,
            Buffer::Read(v) => v,
        }
    }
}

/// A record that does not decode: the cache is damaged.
struct Damaged;

/// A bounds-checked cursor over the buffered bytes.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn byte(&mut self) -> Result<u8, Damaged> {
        let b = *self.bytes.get(self.at).ok_or(Damaged)?;
        self.at += 1;
        Ok(b)
    }

    fn varint(&mut self) -> Result<u64, Damaged> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err(Damaged)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], Damaged> {
        let s = self.bytes.get(self.at..self.at + N).ok_or(Damaged)?;
        self.at += N;
        Ok(s.try_into().expect("N bytes"))
    }

    fn finite(&mut self) -> Result<f64, Damaged> {
        Some(f64::from_le_bytes(self.array()?))
            .filter(|v| v.is_finite())
            .ok_or(Damaged)
    }
}

/// The most bytes a record's fixed part takes (tag, line, label, weight, nnz).
const HEAD_MAX: usize = 1 + 10 + 8 + 8 + 10;

impl CacheReader {
    /// Opens the cache at `path` (checked beforehand) for its records; `header_len` bytes are
    /// skipped, indices must be below `index_limit`.
    pub(crate) fn open(path: &Path, header_len: u64, index_limit: u64) -> Result<Self, ParseError> {
        let err = |e: io::Error| cache_error(path, format!("cannot read it: {e}"));
        let mut file = File::open(path).map_err(err)?;
        let len = file.metadata().map_err(err)?.len();
        let mapped = Mapped::open(&file).filter(|m| m.len() as u64 == len && len >= header_len);
        let (buf, pos, end, unread) = match mapped {
            Some(map) => {
                let end = map.len();
                (Buffer::Mapped(map), header_len as usize, end, 0)
            }
            None => {
                io::copy(&mut (&mut file).take(header_len), &mut io::sink()).map_err(err)?;
                let unread = len.saturating_sub(header_len);
                (Buffer::Read(vec![0; READ_CHUNK]), 0, 0, unread)
            }
        };
        Ok(CacheReader {
            file,
            path: path.to_path_buf(),
            buf,
            pos,
            end,
            unread,
            line: 0,
            count: 0,
            max_index_plus_one: 0,
            index_limit,
            finished: false,
            label: None,
            full_rows: u64::MAX,
            last_nnz: 0,
        })
    }

    /// Past the first `rows` records, reads only each record's head (line, label, weight,
    /// number of features) and its largest index: the example comes with no features (its
    /// count is [`last_nnz`](Self::last_nnz)) and its values are passed over, not checked (the
    /// pre-scan of a run, `run::prescan`, which needs the labels, the counts and the
    /// dimension; the learning pass reads every record in full, with every check). Lines,
    /// labels, label fields, counts and [`max_index_plus_one`](Self::max_index_plus_one) are
    /// those of the full read on an undamaged cache (its CRC is verified before a run reads
    /// it).
    pub(crate) fn headers_after(&mut self, rows: u64) {
        self.full_rows = rows;
    }

    /// The number of stored features of the last record read (with or without its features).
    pub(crate) fn last_nnz(&self) -> usize {
        self.last_nnz
    }

    /// One past the largest index read so far.
    pub(crate) fn max_index_plus_one(&self) -> usize {
        self.max_index_plus_one
    }

    /// Makes at least `n` bytes available from `pos` (fewer only at the end of the file).
    fn fill(&mut self, n: usize) -> io::Result<()> {
        if self.end - self.pos >= n || self.unread == 0 {
            return Ok(());
        }
        let Buffer::Read(buf) = &mut self.buf else {
            unreachable!("a mapped file has no unread bytes")
        };
        buf.copy_within(self.pos..self.end, 0);
        self.end -= self.pos;
        self.pos = 0;
        if buf.len() < n {
            buf.resize(n, 0);
        }
        while self.end < n.max(READ_CHUNK.min(buf.len())) && self.unread > 0 {
            let room = (buf.len() - self.end).min(self.unread as usize);
            if room == 0 {
                break;
            }
            let got = self.file.read(&mut buf[self.end..self.end + room])?;
            if got == 0 {
                self.unread = 0;
                break;
            }
            self.end += got;
            self.unread -= got as u64;
        }
        Ok(())
    }

    fn damaged(&self) -> ParseError {
        cache_error(
            &self.path,
            format!(
                "it is damaged after example {} (line {}): remove it (the next run with \
                 --cache rebuilds it)",
                self.count, self.line
            ),
        )
    }

    /// Decodes the label of a record with `tag` at `at` (bytes from `pos`), keeping its label
    /// field: the label and where the record goes on. A name's bytes are made available first
    /// (at most the bytes left in the file, and [`MAX_NAME_LEN`]).
    fn decode_label(&mut self, tag: u8, at: usize) -> Result<(f64, usize), Damaged> {
        let mut c = Cursor {
            bytes: &self.buf[self.pos..self.end],
            at,
        };
        if tag & NAMED_LABEL == 0 {
            let label = c.finite()?;
            self.label = match tag & LABEL_COLUMN {
                0 => None,
                _ => Some(LabelField {
                    label: ClassLabel::Number(label),
                    column: usize::try_from(c.varint()?).map_err(|_| Damaged)?,
                }),
            };
            return Ok((label, c.at));
        }
        let column = usize::try_from(c.varint()?).map_err(|_| Damaged)?;
        let len = c.varint()?;
        let left = (self.end - self.pos - c.at) as u64 + self.unread;
        if len > left.min(MAX_NAME_LEN) {
            return Err(Damaged);
        }
        let (head, len) = (c.at, len as usize);
        self.fill(head + len + HEAD_MAX).map_err(|_| Damaged)?;
        let bytes = self.buf[self.pos..self.end]
            .get(head..head + len)
            .ok_or(Damaged)?;
        let name = std::str::from_utf8(bytes).map_err(|_| Damaged)?;
        match ClassLabel::parse(name) {
            Some(label @ ClassLabel::Text(_)) if matches!(&label, ClassLabel::Text(t) if t == name) =>
            {
                self.label = Some(LabelField { label, column });
            }
            _ => return Err(Damaged),
        }
        Ok((f64::NAN, head + len))
    }

    /// Reads `nnz` indices (the first, then the steps between them, each at least 1) at the
    /// cursor into `indices`. Steps that all fit in one byte (a dense row's
    /// steps are 1) are read as bytes; any other record varint by varint. Every index must be
    /// below the limit.
    fn decode_indices(
        &self,
        c: &mut Cursor<'_>,
        nnz: usize,
        indices: &mut Vec<u32>,
    ) -> Result<(), Damaged> {
        let short = c.bytes.get(c.at..c.at + nnz);
        if let Some(steps) = short.filter(|b| b.iter().fold(0, |m, &s| m | s) < 0x80) {
            if steps.iter().skip(1).any(|&s| s == 0) {
                return Err(Damaged);
            }
            // Steps below 128 each: the last index is the largest and below 128·nnz.
            let mut index = 0u64;
            indices.extend(steps.iter().map(|&s| {
                index += u64::from(s);
                index as u32
            }));
            if index >= self.index_limit {
                return Err(Damaged);
            }
            c.at += nnz;
            return Ok(());
        }
        self.varint_indices(c, nnz, |i| indices.push(i))?;
        Ok(())
    }

    /// The indices of the record at the cursor read varint by varint (each step at least 1 after
    /// the first, each index below the limit), given to `each` in order; the last (largest), or 0
    /// when `nnz` is 0.
    fn varint_indices(
        &self,
        c: &mut Cursor<'_>,
        nnz: usize,
        mut each: impl FnMut(u32),
    ) -> Result<u64, Damaged> {
        let mut index = 0u64;
        for k in 0..nnz {
            let step = c.varint()?;
            if k > 0 && step == 0 {
                return Err(Damaged);
            }
            index += step;
            if index >= self.index_limit {
                return Err(Damaged);
            }
            each(index as u32);
        }
        Ok(index)
    }

    /// Passes over `nnz` indices at the cursor with [`decode_indices`](Self::decode_indices)'s
    /// checks, keeping only the last (the largest): `None` when `nnz` is 0.
    fn skip_indices(&self, c: &mut Cursor<'_>, nnz: usize) -> Result<Option<u32>, Damaged> {
        let short = c.bytes.get(c.at..c.at + nnz);
        if let Some(steps) = short.filter(|b| b.iter().fold(0, |m, &s| m | s) < 0x80) {
            if steps.iter().skip(1).fold(u8::MAX, |m, &s| m.min(s)) == 0 {
                return Err(Damaged);
            }
            let index: u64 = steps.iter().map(|&s| u64::from(s)).sum();
            if index >= self.index_limit {
                return Err(Damaged);
            }
            c.at += nnz;
            return Ok((nnz > 0).then_some(index as u32));
        }
        let index = self.varint_indices(c, nnz, |_| {})?;
        Ok((nnz > 0).then_some(index as u32))
    }

    /// Decodes the record at `pos` into `ex`: `Ok(false)` at the trailer.
    fn decode(&mut self, ex: &mut Example) -> Result<bool, Damaged> {
        let mut c = Cursor {
            bytes: &self.buf[self.pos..self.end],
            at: 0,
        };
        let tag = c.byte()?;
        if tag == 0 {
            let count = u64::from_le_bytes(c.array()?);
            return if count == self.count {
                Ok(false)
            } else {
                Err(Damaged)
            };
        }
        if tag & !(1 | HAS_WEIGHT | ALL_ONES | AS_F32 | NAMED_LABEL | LABEL_COLUMN) != 0
            || tag & (NAMED_LABEL | LABEL_COLUMN) == NAMED_LABEL | LABEL_COLUMN
        {
            return Err(Damaged);
        }
        let line = self.line.checked_add(c.varint()?).ok_or(Damaged)?;
        let at = c.at;
        let (label, at) = self.decode_label(tag, at)?;
        let mut c = Cursor {
            bytes: &self.buf[self.pos..self.end],
            at,
        };
        let weight = if tag & HAS_WEIGHT != 0 {
            Some(c.finite()?).filter(|w| *w >= 0.0).ok_or(Damaged)?
        } else {
            1.0
        };
        let nnz = c.varint()?;
        // Each feature takes at least one byte: more than the bytes left is damage.
        let left = (self.end - self.pos - c.at) as u64 + self.unread;
        if nnz > left {
            return Err(Damaged);
        }
        let nnz = nnz as usize;
        let value_bytes = match tag & (ALL_ONES | AS_F32) {
            0 => 8,
            ALL_ONES => 0,
            AS_F32 => 4,
            _ => return Err(Damaged),
        };
        let head = c.at;
        // At most the bytes left: a damaged count allocates no more than the file holds.
        let want = (head + nnz.saturating_mul(10 + value_bytes)).min(head + left as usize);
        self.fill(want).map_err(|_| Damaged)?;
        let mut c = Cursor {
            bytes: &self.buf[self.pos..self.end],
            at: head,
        };
        ex.label = label;
        ex.weight = weight;
        ex.indices.clear();
        ex.values.clear();
        let last = if self.count < self.full_rows {
            self.decode_indices(&mut c, nnz, &mut ex.indices)?;
            decode_values(&mut c, nnz, value_bytes, &mut ex.values)?;
            ex.indices.last().copied()
        } else {
            let last = self.skip_indices(&mut c, nnz)?;
            let values = nnz * value_bytes;
            c.bytes.get(c.at..c.at + values).ok_or(Damaged)?;
            c.at += values;
            last
        };
        self.pos += c.at;
        self.line = line;
        self.count += 1;
        self.last_nnz = nnz;
        if let Some(last) = last {
            self.max_index_plus_one = self.max_index_plus_one.max(last as usize + 1);
        }
        Ok(true)
    }
}

/// Reads `nnz` values of `value_bytes` bytes each (0: every value is 1) into `values`; a
/// value that is not finite is damage. The values are copied in one pass and checked after
/// with [`all_finite`] (a damaged record leaves `values` unspecified).
fn decode_values(
    c: &mut Cursor<'_>,
    nnz: usize,
    value_bytes: usize,
    values: &mut Vec<f64>,
) -> Result<(), Damaged> {
    let bytes = c.bytes.get(c.at..c.at + nnz * value_bytes).ok_or(Damaged)?;
    c.at += bytes.len();
    match value_bytes {
        0 => values.resize(nnz, 1.0),
        4 => values.extend(
            bytes
                .chunks_exact(4)
                .map(|b| f64::from(f32::from_le_bytes(b.try_into().expect("4 bytes")))),
        ),
        _ => values.extend(
            bytes
                .chunks_exact(8)
                .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes"))),
        ),
    }
    if all_finite(values) {
        Ok(())
    } else {
        Err(Damaged)
    }
}

impl ExampleSource for CacheReader {
    type Error = ParseError;

    fn read_into(&mut self, ex: &mut Example) -> Result<bool, ParseError> {
        if self.finished {
            return Ok(false);
        }
        self.fill(HEAD_MAX)
            .map_err(|e| cache_error(&self.path, format!("cannot read it: {e}")))?;
        match self.decode(ex) {
            Ok(true) => Ok(true),
            Ok(false) => {
                self.finished = true;
                Ok(false)
            }
            Err(Damaged) => Err(self.damaged()),
        }
    }

    fn line(&self) -> u64 {
        self.line
    }

    fn label_field(&self) -> Option<&LabelField> {
        self.label.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{LibsvmOptions, LibsvmReader};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    fn scratch(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!(
            "sketchlearn-cache-unit-{name}-{}",
            std::process::id()
        ))
    }

    fn read_all(path: &Path, header_len: u64, limit: u64) -> Result<Vec<(Example, u64)>, String> {
        let mut r = CacheReader::open(path, header_len, limit).map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        let mut ex = Example::default();
        while r.read_into(&mut ex).map_err(|e| e.to_string())? {
            out.push((ex.clone(), r.line()));
        }
        Ok(out)
    }

    /// Written and read back: the same examples, lines and weights, every value kind (ones,
    /// f32-exact, full f64); then every single-byte change of the records with the checksum
    /// made to fit again decodes to an error or to checked examples, never a panic.
    #[test]
    fn round_trip_and_damage_with_a_matching_checksum() {
        let text = "1 1:1 5:1\n\n-1 2:0.5 70000:2.25 4000000000:1e-300\n3 3:0.1\n\
                    # c\n1 7:-0.0\n-1\n";
        let path = scratch("rt");
        let done = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&done);
        let source = LibsvmReader::new(std::io::Cursor::new(text), "t", LibsvmOptions::default());
        let mut w = CacheWriter::create(
            &path,
            b"key",
            source,
            Box::new(move || flag.store(true, Ordering::SeqCst)),
        )
        .unwrap();
        let mut want = Vec::new();
        let mut ex = Example::default();
        while w.read_into(&mut ex).unwrap() {
            want.push((ex.clone(), w.line()));
        }
        assert!(done.load(Ordering::SeqCst));
        let header_len = 16 + 3;
        let got = read_all(&path, header_len, 1 << 32).unwrap();
        assert_eq!(got.len(), 5);
        for ((a, la), (b, lb)) in got.iter().zip(&want) {
            assert_eq!(
                (la, a.label.to_bits(), a.weight),
                (lb, b.label.to_bits(), b.weight)
            );
            assert_eq!(a.indices, b.indices);
            let bits = |e: &Example| e.values.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(a), bits(b));
        }
        assert_eq!(verify(&path).unwrap(), Ok(5));
        // Indices beyond a hashed dimension are damage.
        assert!(read_all(&path, header_len, 1 << 20)
            .unwrap_err()
            .contains("damaged"));
        flip_bits(&path, header_len);
        std::fs::remove_file(&path).unwrap();
    }

    /// Every single-bit change of the records of the cache at `path`, with the checksum made to
    /// fit again, decodes to an error or to checked examples (a name's label is NaN, any other
    /// label finite), never a panic.
    fn flip_bits(path: &Path, header_len: u64) {
        let good = std::fs::read(path).unwrap();
        let records = header_len as usize..good.len() - 4;
        let mut state = 12345u64;
        for _ in 0..800 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            let mut bad = good.clone();
            let at = records.start + (state >> 33) as usize % records.len();
            bad[at] ^= 1 << ((state >> 20) % 8);
            let n = bad.len();
            let crc = crc32fast::hash(&bad[..n - 4]);
            bad[n - 4..].copy_from_slice(&crc.to_le_bytes());
            std::fs::write(path, &bad).unwrap();
            let mut r = CacheReader::open(path, header_len, 1 << 32).unwrap();
            let mut e = Example::default();
            while let Ok(true) = r.read_into(&mut e) {
                assert!(e.indices.windows(2).all(|p| p[0] < p[1]));
                assert!(e.values.iter().chain([&e.weight]).all(|v| v.is_finite()));
                match r.label_field() {
                    Some(LabelField {
                        label: ClassLabel::Text(_),
                        ..
                    }) => assert!(e.label.is_nan()),
                    _ => assert!(e.label.is_finite()),
                }
            }
        }
    }

    /// LIBSVM text: a row of 150 features with f64 values, `middle`, then the same row with
    /// integer-looking values (f32 in the cache).
    fn around_dense_rows(middle: &str) -> String {
        let dense: String = (1..=150)
            .map(|j| format!(" {j}:{}", j as f64 * 0.1))
            .collect();
        format!("1{dense}\n{middle}1{}\n", dense.replace(".", ""))
    }

    /// Dense rows (every step one byte, read as bytes) beside rows with long steps (read varint
    /// by varint) and f32, f64 and all-one values: the same examples back; an index past the
    /// limit is damage on either path; flipped bits never panic.
    #[test]
    fn one_byte_steps_and_long_steps_read_alike() {
        let text = around_dense_rows("-1 1:0.5 300:2 90000:0.25\n");
        let path = scratch("steps");
        let source = LibsvmReader::new(
            std::io::Cursor::new(text.clone()),
            "t",
            LibsvmOptions::default(),
        );
        let mut w = CacheWriter::create(&path, b"k", source, Box::new(|| {})).unwrap();
        let mut want = Vec::new();
        let mut ex = Example::default();
        while w.read_into(&mut ex).unwrap() {
            want.push(ex.clone());
        }
        let got = read_all(&path, 16 + 1, 1 << 32).unwrap();
        let got: Vec<Example> = got.into_iter().map(|(e, _)| e).collect();
        assert_eq!(got, want);
        assert_eq!(got[0].indices.len(), 150);
        for limit in [100, 1000] {
            assert!(read_all(&path, 16 + 1, limit)
                .unwrap_err()
                .contains("damaged"));
        }
        flip_bits(&path, 16 + 1);
        std::fs::remove_file(&path).unwrap();
    }

    /// Read with [`CacheReader::headers_after`]`(full)`: each record's line, label, weight and
    /// number of features, the first `full` with their features, and the reader's dimension.
    #[allow(clippy::type_complexity)]
    fn read_headers(
        path: &Path,
        header_len: u64,
        limit: u64,
        full: u64,
    ) -> Result<(Vec<(Example, u64, usize)>, usize), String> {
        let mut r = CacheReader::open(path, header_len, limit).map_err(|e| e.to_string())?;
        r.headers_after(full);
        let mut out = Vec::new();
        let mut ex = Example::default();
        while r.read_into(&mut ex).map_err(|e| e.to_string())? {
            out.push((ex.clone(), r.line(), r.last_nnz()));
        }
        Ok((out, r.max_index_plus_one()))
    }

    /// The pre-scan's read of a cache (features only of the first rows): lines, labels,
    /// weights, counts of features and the dimension are the full read's, for every number of
    /// full rows; an index past the limit is damage in either part; flipped bits never panic.
    #[test]
    fn headers_read_like_the_full_read() {
        let text = around_dense_rows("\n-1 1:0.5 300:2 90000:0.25\n# c\n3 7:1 9:1\n-1\n");
        let path = scratch("headers");
        let source = LibsvmReader::new(std::io::Cursor::new(text), "t", LibsvmOptions::default());
        let mut w = CacheWriter::create(&path, b"k", source, Box::new(|| {})).unwrap();
        let mut ex = Example::default();
        while w.read_into(&mut ex).unwrap() {}
        let mut r = CacheReader::open(&path, 16 + 1, 1 << 32).unwrap();
        let mut want = Vec::new();
        while r.read_into(&mut ex).unwrap() {
            want.push((ex.clone(), r.line()));
        }
        let dim = r.max_index_plus_one();
        assert_eq!((want.len(), dim), (5, 90000));
        for full in 0..=6 {
            let (got, got_dim) = read_headers(&path, 16 + 1, 1 << 32, full).unwrap();
            assert_eq!(got_dim, dim, "full {full}");
            assert_eq!(got.len(), want.len());
            for (k, ((a, la, nnz), (b, lb))) in got.iter().zip(&want).enumerate() {
                assert_eq!(
                    (la, a.label.to_bits(), a.weight),
                    (lb, b.label.to_bits(), b.weight)
                );
                assert_eq!(*nnz, b.indices.len());
                if (k as u64) < full {
                    assert_eq!(a, b);
                } else {
                    assert!(a.indices.is_empty() && a.values.is_empty());
                }
            }
        }
        for (limit, full) in [(100, 0), (100, 3), (1000, 0), (1000, 1)] {
            let err = read_headers(&path, 16 + 1, limit, full).unwrap_err();
            assert!(err.contains("damaged"), "{err}");
        }
        let good = std::fs::read(&path).unwrap();
        let mut state = 99u64;
        for _ in 0..800 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            let mut bad = good.clone();
            let at = 17 + (state >> 33) as usize % (good.len() - 21);
            bad[at] ^= 1 << ((state >> 20) % 8);
            std::fs::write(&path, &bad).unwrap();
            let _ = read_headers(&path, 16 + 1, 1 << 32, (state >> 40) % 3);
        }
        std::fs::remove_file(&path).unwrap();
    }

    /// CSV rows: each record's label field (a name, or a number, and its column) reads back as
    /// the CSV reader gave it; damaged records never panic.
    #[test]
    fn csv_label_fields_round_trip() {
        use crate::data::{CsvExampleOptions, CsvExampleReader, Schema};
        let text = "y,x,c\nYes,1,a\nNo,2.5,b\nYes,,a\n";
        let options = CsvExampleOptions {
            label_column: Some("y".parse().unwrap()),
            ..CsvExampleOptions::default()
        };
        let schema = Schema::scan(std::io::Cursor::new(text), "t.csv", &options).unwrap();
        let path = scratch("csv");
        for text in [
            text.to_string(),
            text.replace("Yes", "1").replace("No", "-1"),
        ] {
            let source = CsvExampleReader::new(std::io::Cursor::new(text), "t.csv", schema.clone());
            let mut w = CacheWriter::create(&path, b"k", source, Box::new(|| {})).unwrap();
            let mut want = Vec::new();
            let mut ex = Example::default();
            while w.read_into(&mut ex).unwrap() {
                want.push((ex.clone(), w.label_field().cloned()));
            }
            let mut r = CacheReader::open(&path, 16 + 1, 1 << 32).unwrap();
            for (e, field) in &want {
                assert!(r.read_into(&mut ex).unwrap());
                assert_eq!(ex.label.to_bits(), e.label.to_bits());
                assert_eq!((&ex.indices, &ex.values), (&e.indices, &e.values));
                assert_eq!(r.label_field(), field.as_ref());
                assert!(field.is_some());
            }
            assert!(!r.read_into(&mut ex).unwrap());
            flip_bits(&path, 16 + 1);
        }
        std::fs::remove_file(&path).unwrap();
    }
}
