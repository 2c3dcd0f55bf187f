//! A binary cache of parsed examples (issue 27, VW's `-c`/`--cache_file`): the first read of an
//! input writes what its parser gives — labels as written, weights, feature indices and values
//! after VW's hashing and `-q` crosses, the line of each example — to a cache file
//! ([`cache_file`](super::cache_file) has the layout); later passes and later runs read the
//! cache instead of parsing the text.
//!
//! **What is cached and what is not.** Everything that decides the examples' bits is the
//! cache's *key*, stored in its header: the format, `--zero-based`, the hash bits, the VW
//! interactions, for CSV the schema the rows are read through (its columns, label column,
//! one-hot values and hashed columns: [`Schema`]), and a stamp of the input (a file: its size,
//! modification time and the CRC-32 of its first and last 64 KiB; bytes in memory: their length
//! and CRC). What a run does with the examples afterwards — the label map (classes), shuffling,
//! hold-out, the learner — is not in the cache, so one cache serves every learner and every
//! label convention: CSV labels are cached as written (a name or a number, and its column).
//!
//! **A CSV schema from the cache** ([`Cache::scanned_schema`]). A new model's CSV schema comes
//! from a scan of the whole text; a cache written by such a run also records the options of
//! that scan (header, label column, ignored columns, `max_categories`, hash bits). A later run
//! with the same options on an input with the same stamp takes the schema from the cache's
//! header instead of scanning the text again — the scan of the text the stamp vouches for
//! would give that schema — so a run with a valid cache reads nothing of the text beyond its
//! stamp (128 KiB). The scan options are not part of what must match: a cache written through
//! a model's schema (by `test`, no scan) serves a run whose scan gives that schema.
//!
//! **Stale or damaged caches are rebuilt, with a note** ([`Warning::CacheRebuilt`]): a key that
//! differs from the run's (the input or the read options changed), a cache of another layout
//! version, or one whose checksum fails (checked once per run, before its first use). A stream
//! read once (standard input, a pipe) cannot be compared with a cache without reading it, so its
//! cache is always written anew; within the run, passes after the first read it. A path that
//! holds anything other than a cache is never overwritten: the run stops with an error.
//!
//! [`Warning::CacheRebuilt`]: super::Warning::CacheRebuilt

use super::cache_file::{
    cache_error, not_ours_message, read_header, verify, CacheReader, CacheWriter, Header, VERSION,
};
use super::{Input, ReadOptions, RunError, Warning};
use crate::data::{
    CsvExampleOptions, Example, ExampleReader, ExampleSource, Format, Interactions, LabelField,
    ParseError, Schema,
};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Bytes hashed at each end of a file for its stamp.
const STAMP_BLOCK: u64 = 64 << 10;

/// Where the examples in a cache came from (see the [module](self) docs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Stamp {
    /// A regular file.
    File {
        len: u64,
        modified_secs: u64,
        modified_nanos: u32,
        head_crc: u32,
        tail_crc: u32,
    },
    /// Bytes in memory.
    Bytes { len: u64, crc: u32 },
    /// A stream read once: never equal to a cache from an earlier run.
    Stream,
}

impl Stamp {
    /// The stamp of the regular file at `path`.
    pub(crate) fn file(path: &Path) -> io::Result<Stamp> {
        let mut file = File::open(path)?;
        let meta = file.metadata()?;
        let len = meta.len();
        let since = meta
            .modified()?
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let mut block = |from: u64| -> io::Result<u32> {
            file.seek(SeekFrom::Start(from))?;
            let mut bytes = Vec::new();
            (&mut file).take(STAMP_BLOCK).read_to_end(&mut bytes)?;
            Ok(crc32fast::hash(&bytes))
        };
        Ok(Stamp::File {
            len,
            modified_secs: since.as_secs(),
            modified_nanos: since.subsec_nanos(),
            head_crc: block(0)?,
            tail_crc: block(len.saturating_sub(STAMP_BLOCK))?,
        })
    }

    /// The stamp of bytes in memory.
    pub(crate) fn bytes(bytes: &[u8]) -> Stamp {
        Stamp::Bytes {
            len: bytes.len() as u64,
            crc: crc32fast::hash(bytes),
        }
    }
}

/// Everything that decides the cached examples' bits.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct CacheKey {
    pub format: Format,
    pub zero_based: bool,
    pub bits: u32,
    pub interactions: Interactions,
    /// CSV: the schema's postcard bytes (empty for LIBSVM and VW).
    pub schema: Vec<u8>,
    /// CSV: the options whose scan of this input gave `schema` (`None`: a model's schema, or
    /// not CSV). Not compared ([`CacheKey::serves`]): what it records is implied by `schema`
    /// and `source`.
    pub scan: Option<CsvExampleOptions>,
    pub source: Stamp,
}

impl CacheKey {
    fn bytes(&self) -> Vec<u8> {
        postcard::to_allocvec(self).expect("a key serialises")
    }

    /// The key of CSV rows read through `schema` (found by a scan with `scan`, if it was) from
    /// an input with stamp `source`.
    pub(crate) fn csv(
        schema: &Schema,
        scan: Option<&CsvExampleOptions>,
        format: Format,
        source: Stamp,
    ) -> CacheKey {
        CacheKey {
            // CSV or TSV: the separator decides the rows as much as the schema does.
            format: format.csv_format(),
            zero_based: false,
            bits: 0,
            interactions: Interactions::default(),
            schema: postcard::to_allocvec(schema).expect("a schema serialises"),
            scan: scan.cloned(),
            source,
        }
    }

    /// Whether a cache written with `old` holds the examples of a run with `self`: every field
    /// but the scan options equal.
    fn serves(&self, old: &CacheKey) -> bool {
        let bare = |k: &CacheKey| CacheKey {
            scan: None,
            ..k.clone()
        };
        bare(self) == bare(old)
    }

    /// The bound of the indices: `2^bits` for hashed (VW) input, else any `u32`.
    fn index_limit(&self) -> u64 {
        match self.format {
            Format::Vw => 1u64 << self.bits,
            _ => 1u64 << 32,
        }
    }

    /// Why a cache written with `old` does not serve a run with `self`.
    fn difference(&self, old: &CacheKey) -> &'static str {
        if self.source != old.source {
            "the input changed since it was written (size, time or content)"
        } else {
            "it was written with other read options (format, --zero-based, -b or -q, or the CSV \
             columns)"
        }
    }
}

/// An input's cache: its path, and what this run knows of it.
pub(crate) struct Cache {
    path: PathBuf,
    /// The key of a cache known good in this run (written, or verified), and its header's
    /// length.
    ready: Arc<Mutex<Option<(CacheKey, u64)>>>,
    /// The schema this run's CSV scan gave (postcard bytes) and the scan's options, recorded in
    /// a cache written through that schema.
    scanned: Option<(Vec<u8>, CsvExampleOptions)>,
    /// Notes made, and how many were taken.
    notes: Vec<String>,
    taken: usize,
}

/// What [`Cache::open`] gives: the text's parser `S`, the parser writing a new cache, or the
/// cache's reader.
pub(crate) enum Opened<S = ExampleReader> {
    /// No cache asked for.
    Text(S),
    /// A new cache is written while the text is parsed.
    Writing(Box<CacheWriter<S>>),
    /// The examples come from the cache.
    Cached(Box<CacheReader>),
}

impl Opened {
    /// One past the largest index read so far (LIBSVM's dimension).
    pub(crate) fn max_index_plus_one(&self) -> usize {
        match self {
            Opened::Text(r) => r.max_index_plus_one(),
            Opened::Writing(w) => w.source().max_index_plus_one(),
            Opened::Cached(c) => c.max_index_plus_one(),
        }
    }
}

impl<S: ExampleSource<Error = ParseError>> ExampleSource for Opened<S> {
    type Error = ParseError;
    fn read_into(&mut self, ex: &mut Example) -> Result<bool, ParseError> {
        match self {
            Opened::Text(r) => r.read_into(ex),
            Opened::Writing(w) => w.read_into(ex),
            Opened::Cached(c) => c.read_into(ex),
        }
    }
    fn line(&self) -> u64 {
        match self {
            Opened::Text(r) => r.line(),
            Opened::Writing(w) => w.line(),
            Opened::Cached(c) => c.line(),
        }
    }
    fn label_field(&self) -> Option<&LabelField> {
        match self {
            Opened::Text(r) => r.label_field(),
            Opened::Writing(w) => w.label_field(),
            Opened::Cached(c) => c.label_field(),
        }
    }
}

impl Cache {
    pub(crate) fn new(path: PathBuf) -> Self {
        Cache {
            path,
            ready: Arc::new(Mutex::new(None)),
            scanned: None,
            notes: Vec::new(),
            taken: 0,
        }
    }

    /// The cache's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The notes not taken yet (a cache rebuilt, and why).
    pub(crate) fn take_notes(&mut self) -> Vec<String> {
        let new = self.notes[self.taken..].to_vec();
        self.taken = self.notes.len();
        new
    }

    fn note(&mut self, reason: String) {
        if !self.notes.contains(&reason) {
            self.notes.push(reason);
        }
    }

    fn known(&self) -> Option<(CacheKey, u64)> {
        self.ready.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn set_known(&self, key: CacheKey, header_len: u64) {
        *self.ready.lock().unwrap_or_else(|p| p.into_inner()) = Some((key, header_len));
    }

    /// The CSV schema a scan with `options` of the input with stamp `source` gives, when the
    /// cache on disk records it (see the [module](self) docs; its checksum is then verified
    /// here, once for the run); `None` when the text must be scanned.
    pub(crate) fn scanned_schema(
        &mut self,
        source: &Stamp,
        options: &CsvExampleOptions,
        format: Format,
    ) -> Result<Option<Schema>, RunError> {
        if *source == Stamp::Stream {
            return Ok(None);
        }
        let io = |e: io::Error| cache_error(&self.path, format!("cannot read it: {e}"));
        let Header::Ours { version, key } = read_header(&self.path).map_err(io)? else {
            return Ok(None);
        };
        let header_len = 16 + key.len() as u64;
        let Some(old) = postcard::from_bytes::<CacheKey>(&key)
            .ok()
            .filter(|old| version == VERSION && old.format == format.csv_format())
            .filter(|old| old.source == *source && old.scan.as_ref() == Some(options))
        else {
            return Ok(None);
        };
        let Some(schema) = postcard::from_bytes::<Schema>(&old.schema)
            .ok()
            .filter(|s| s.check().is_ok())
        else {
            return Ok(None);
        };
        if verify(&self.path).map_err(io)?.is_err() {
            return Ok(None);
        }
        self.scanned = Some((old.schema.clone(), options.clone()));
        self.set_known(old, header_len);
        Ok(Some(schema))
    }

    /// Records that this run's scan with `options` gave `schema`.
    pub(crate) fn record_scan(&mut self, schema: &Schema, options: &CsvExampleOptions) {
        let bytes = postcard::to_allocvec(schema).expect("a schema serialises");
        self.scanned = Some((bytes, options.clone()));
    }

    /// The scan options that gave `schema` in this run, if it was scanned.
    pub(crate) fn scan_of(&self, schema: &Schema) -> Option<&CsvExampleOptions> {
        let (bytes, options) = self.scanned.as_ref()?;
        let same = *bytes == postcard::to_allocvec(schema).expect("a schema serialises");
        same.then_some(options)
    }

    /// The examples of an input with `key`: from the cache when it holds them, else from
    /// `text()` while a new cache is written.
    pub(crate) fn open<S: ExampleSource<Error = ParseError>>(
        &mut self,
        key: CacheKey,
        text: impl FnOnce() -> Result<S, RunError>,
    ) -> Result<Opened<S>, RunError> {
        let io = |e: io::Error| cache_error(&self.path, format!("cannot read it: {e}"));
        if let Some((known, header_len)) = self.known().filter(|(k, _)| key.serves(k)) {
            return self.reader(&known, header_len);
        }
        match read_header(&self.path).map_err(io)? {
            Header::Missing => {}
            Header::NotOurs => return Err(cache_error(&self.path, not_ours_message()).into()),
            Header::Ours { version, key: old } => match self.stale(version, &old, &key)? {
                Err(reason) => self.note(reason.to_owned()),
                Ok(old_key) => {
                    let header_len = 16 + old.len() as u64;
                    self.set_known(old_key.clone(), header_len);
                    return self.reader(&old_key, header_len);
                }
            },
        }
        let ready = Arc::clone(&self.ready);
        let bytes = key.bytes();
        let written = (key, 16 + bytes.len() as u64);
        let done = Box::new(move || {
            *ready.lock().unwrap_or_else(|p| p.into_inner()) = Some(written);
        });
        let writer = CacheWriter::create(&self.path, &bytes, text()?, done)?;
        Ok(Opened::Writing(Box::new(writer)))
    }

    /// The key of the cache on disk (of `version`, key bytes `old`) when it serves `key` (its
    /// checksum verified), else why not.
    fn stale(
        &self,
        version: u32,
        old: &[u8],
        key: &CacheKey,
    ) -> Result<Result<CacheKey, &'static str>, RunError> {
        if key.source == Stamp::Stream {
            return Ok(Err(
                "the input is a stream, which cannot be compared with a cache without reading it",
            ));
        }
        if version != VERSION {
            return Ok(Err("it was written by another version of sketchlearn"));
        }
        let Ok(old) = postcard::from_bytes::<CacheKey>(old) else {
            return Ok(Err("its header is damaged"));
        };
        if !key.serves(&old) {
            return Ok(Err(key.difference(&old)));
        }
        let checked = verify(&self.path)
            .map_err(|e| cache_error(&self.path, format!("cannot read it: {e}")))?;
        Ok(match checked {
            Ok(_) => Ok(old),
            Err(_) => Err("it is damaged (its checksum does not match)"),
        })
    }

    fn reader<S>(&self, key: &CacheKey, header_len: u64) -> Result<Opened<S>, RunError> {
        let reader = CacheReader::open(&self.path, header_len, key.index_limit())?;
        Ok(Opened::Cached(Box::new(reader)))
    }
}

/// What [`write_cache`] did.
#[derive(Clone, Debug, PartialEq)]
pub struct CacheOutcome {
    /// Examples in the cache.
    pub examples: u64,
    /// The cache was already up to date (nothing parsed or written).
    pub fresh: bool,
    /// Why an existing cache was written anew ([`Warning::CacheRebuilt`]).
    pub warnings: Vec<Warning>,
}

/// Reads `input` once through its cache ([`Input::cache`]) with `options`, so that later runs
/// with the same input and options read the cache (`sketchlearn cache`); an up-to-date cache is
/// only checked. VW's hash bits are `options.bits` (default 18): a run with another `-b` (or a
/// model's dimension) rebuilds it. CSV rows are cached through the schema a new model would
/// scan with `options.csv` (the same columns and label column as `train`).
///
/// ```
/// use sketchlearn::run::{self, Input, ReadOptions};
/// let path = std::env::temp_dir().join(format!("sketchlearn-write-cache-{}", std::process::id()));
/// let input = || Input::bytes("t.libsvm", b"1 1:1\n-1 2:1\n".to_vec()).cache(&path);
/// let first = run::write_cache(input(), &ReadOptions::default())?;
/// assert_eq!((first.examples, first.fresh), (2, false));
/// let again = run::write_cache(input(), &ReadOptions::default())?;
/// assert_eq!((again.examples, again.fresh), (2, true));
/// std::fs::remove_file(&path).unwrap();
/// # Ok::<(), sketchlearn::run::RunError>(())
/// ```
pub fn write_cache(mut input: Input, options: &ReadOptions) -> Result<CacheOutcome, RunError> {
    if !input.has_cache() {
        return Err(RunError::options("no cache path given (--cache FILE)"));
    }
    let format = input.format(options.format);
    let (examples, fresh) = if format == Format::Csv {
        let format = input.csv_format(options.format);
        let schema = super::csv::scan(&mut input, &options.csv, format)?;
        read_all(input.open_csv(&schema, format)?)?
    } else {
        let bits = options.bits(format, None)?;
        read_all(input.open(options, bits)?)?
    };
    Ok(CacheOutcome {
        examples,
        fresh,
        warnings: input.notes(),
    })
}

/// Reads every example of `opened`: how many, and whether they came from a cache already made.
fn read_all<S: ExampleSource<Error = ParseError>>(
    mut opened: Opened<S>,
) -> Result<(u64, bool), RunError> {
    let fresh = matches!(opened, Opened::Cached(_));
    let mut ex = Example::default();
    let mut examples = 0;
    while opened.read_into(&mut ex)? {
        examples += 1;
    }
    Ok((examples, fresh))
}
