//! Where a run reads its examples: an [`Input`] (a file, standard input, bytes in memory or any
//! reader) read as a [`Format`] with the [`ReadOptions`].

use super::cache::{Cache, CacheKey, Opened, Stamp};
use super::csv::CsvRows;
use super::spool::{Sample, Spool, DEFAULT_SPOOL_LIMIT};
use super::{RunError, Warning};
use crate::data::parallel_parse::BLOCK;
use crate::data::source::{source_name, wrap};
use crate::data::{
    CsvExampleOptions, ExampleReader, ExampleSource, Format, Interactions, ParallelParse,
    ParseError, ReadAhead, Schema, UnseenTally, VwOptions,
};
use std::io::{BufRead, Cursor};
use std::sync::Arc;

/// A source of examples. A regular file and bytes in memory can be read several times (passes,
/// the dimension pre-scan); standard input, a pipe, a FIFO, a process substitution
/// (`/dev/fd/N`) and a reader are opened and read exactly once. A run that needs to read such a
/// stream again (several passes, or the dimension of LIBSVM input not given) first copies it to
/// an anonymous temporary file (a spool, at most [`Input::spool_limit`] bytes, removed however
/// the process ends), so that it trains with the same options and gives the same bits as the
/// file. Gzip is detected from the content.
///
/// ```
/// use sketchlearn::run::Input;
/// let file = Input::path("data/heart.libsvm");
/// assert!(file.rereadable());
/// let bytes = Input::bytes("memory.libsvm", b"1 1:0.5\n-1 2:1\n".to_vec());
/// assert_eq!(bytes.name(), "memory.libsvm");
/// assert!(!Input::path("-").rereadable()); // standard input
/// ```
pub struct Input {
    name: String,
    kind: Kind,
    spool_limit: u64,
    /// How many readers were opened on it (see [`Input::opens`]).
    opens: u32,
    /// The binary cache of its examples ([`Input::cache`]).
    cache: Option<Cache>,
    /// The values unseen in training of the last CSV reader opened through a model's schema,
    /// and whether they were reported ([`Input::unseen_categories`]).
    unseen: (Option<UnseenTally>, bool),
    /// The warnings of its CSV scan, not yet given ([`Input::notes`]).
    scan_notes: Vec<Warning>,
}

enum Kind {
    Path(String),
    Bytes(Arc<[u8]>),
    Reader(Option<Box<dyn BufRead + Send>>),
    Spooled(Spool),
}

/// Whether `path` names something that can be opened and read again from its start: a regular
/// file (or a path that does not exist: opening it is the error). Standard input, pipes, FIFOs,
/// character devices and sockets are streams.
fn is_rereadable_path(path: &str) -> bool {
    path != "-" && std::fs::metadata(path).map_or(true, |m| m.is_file())
}

impl Input {
    /// A file (`-` = standard input).
    pub fn path(path: impl Into<String>) -> Self {
        let path = path.into();
        Input {
            name: source_name(&path).to_owned(),
            kind: Kind::Path(path),
            spool_limit: DEFAULT_SPOOL_LIMIT,
            opens: 0,
            cache: None,
            unseen: (None, false),
            scan_notes: Vec::new(),
        }
    }

    /// Bytes in memory (e.g. a block handed over by Python or a cluster worker), named `name`
    /// in messages and for the format's detection (`.vw` → VW, …).
    pub fn bytes(name: impl Into<String>, data: impl Into<Arc<[u8]>>) -> Self {
        Input {
            name: name.into(),
            kind: Kind::Bytes(data.into()),
            spool_limit: DEFAULT_SPOOL_LIMIT,
            opens: 0,
            cache: None,
            unseen: (None, false),
            scan_notes: Vec::new(),
        }
    }

    /// Any reader, read once, named `name` in messages and for the format's detection.
    pub fn reader(name: impl Into<String>, reader: Box<dyn BufRead + Send>) -> Self {
        Input {
            name: name.into(),
            kind: Kind::Reader(Some(reader)),
            spool_limit: DEFAULT_SPOOL_LIMIT,
            opens: 0,
            cache: None,
            unseen: (None, false),
            scan_notes: Vec::new(),
        }
    }

    /// The most bytes of (decompressed) text a one-shot stream may spool to a temporary file
    /// when a run must read it again (default [`DEFAULT_SPOOL_LIMIT`], 64 GiB); beyond it the
    /// run stops with an error that says what to change.
    ///
    /// ```
    /// use sketchlearn::linear::LearnerConfig;
    /// use sketchlearn::run::{self, Input, Silent, Start, TrainOptions};
    /// let text = "1 1:1\n-1 2:1\n".repeat(10);
    /// let stream = Input::reader("pipe", Box::new(std::io::Cursor::new(text.clone())));
    /// let twice = TrainOptions { passes: 2, ..TrainOptions::default() };
    /// let fitted = run::train(stream, Start::New(LearnerConfig::default()), &twice, &mut Silent)?;
    /// assert_eq!(fitted.examples, 40); // spooled, then read twice
    /// let small = Input::reader("pipe", Box::new(std::io::Cursor::new(text))).spool_limit(10);
    /// let err = run::train(small, Start::New(LearnerConfig::default()), &twice, &mut Silent);
    /// assert!(err.unwrap_err().to_string().contains("spool limit of 10 bytes"));
    /// # Ok::<(), sketchlearn::run::RunError>(())
    /// ```
    pub fn spool_limit(mut self, bytes: u64) -> Self {
        self.spool_limit = bytes;
        self
    }

    /// Reads the examples through a binary cache at `path` (VW's `--cache_file`): the first
    /// read parses the text and writes the cache, later passes and later runs with the same
    /// input and read options read the cache instead. A cache that no longer fits (the input or
    /// the options changed, or it is damaged) is rebuilt with a [`Warning::CacheRebuilt`]; a
    /// path holding anything but a cache is never overwritten (an error).
    /// CSV rows are cached as read through their schema (the schema is part of the cache's
    /// key). See `run/cache.rs` for what the cache holds.
    ///
    /// ```
    /// use sketchlearn::linear::LearnerConfig;
    /// use sketchlearn::run::{self, Input, Silent, Start, TrainOptions};
    /// let dir = std::env::temp_dir().join(format!("sketchlearn-cache-doc-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let text = "1 1:0.5 3:1\n-1 2:1\n".repeat(50).into_bytes();
    /// let cached = || Input::bytes("toy.libsvm", text.clone()).cache(dir.join("toy.cache"));
    /// let options = TrainOptions { passes: 2, ..TrainOptions::default() };
    /// let new = || Start::New(LearnerConfig::default());
    /// let first = run::train(cached(), new(), &options, &mut Silent)?; // parses, writes the cache
    /// let again = run::train(cached(), new(), &options, &mut Silent)?; // reads the cache only
    /// let plain = run::train(Input::bytes("toy.libsvm", text.clone()), new(), &options, &mut Silent)?;
    /// assert_eq!(first.model.to_bytes()?, plain.model.to_bytes()?);
    /// assert_eq!(again.model.to_bytes()?, plain.model.to_bytes()?);
    /// std::fs::remove_dir_all(&dir).unwrap();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cache(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.cache = Some(Cache::new(path.into()));
        self
    }

    /// The path of a re-readable file read without a cache (`None` for any other input).
    pub(crate) fn plain_path(&self) -> Option<&str> {
        match &self.kind {
            Kind::Path(p) if self.cache.is_none() && is_rereadable_path(p) => Some(p),
            _ => None,
        }
    }

    /// Whether the examples are read through a cache.
    pub(crate) fn has_cache(&self) -> bool {
        self.cache.is_some()
    }

    /// Keeps the tally of a CSV reader opened on this input ([`Input::unseen_categories`]).
    pub(crate) fn watch_unseen(&mut self, tally: UnseenTally) {
        self.unseen.0 = Some(tally);
    }

    /// The warning about values unseen in training that the last CSV reader met in `examples`
    /// rows ([`Warning::UnseenCategories`]): once per input, however many passes read it.
    pub(crate) fn unseen_categories(&mut self, examples: u64) -> Option<Warning> {
        let found = self
            .unseen
            .0
            .take()?
            .report(examples)
            .filter(|_| !self.unseen.1)?;
        self.unseen.1 = true;
        Some(Warning::UnseenCategories(found))
    }

    /// The warnings about the input since the last call: its CSV scan's (columns of numbers
    /// read as strings) and its cache's (a stale or damaged cache rebuilt).
    pub(crate) fn notes(&mut self) -> Vec<Warning> {
        let mut notes = std::mem::take(&mut self.scan_notes);
        let Some(cache) = self.cache.as_mut() else {
            return notes;
        };
        let path = cache.path().display().to_string();
        notes.extend(
            cache
                .take_notes()
                .into_iter()
                .map(|reason| Warning::CacheRebuilt {
                    path: path.clone(),
                    reason,
                }),
        );
        notes
    }

    /// Keeps the warnings of a CSV scan of this input for [`Input::notes`].
    pub(crate) fn note_scan(&mut self, warnings: impl IntoIterator<Item = Warning>) {
        self.scan_notes.extend(warnings);
    }

    /// The stamp a cache of this input records.
    fn stamp(&self) -> Result<Stamp, RunError> {
        Ok(match &self.kind {
            Kind::Path(p) if is_rereadable_path(p) => Stamp::file(std::path::Path::new(p))
                .map_err(|e| crate::data::ParseError::io(&self.name, 0, &e))?,
            Kind::Bytes(b) => Stamp::bytes(b),
            _ => Stamp::Stream,
        })
    }

    /// The name errors use (`<stdin>` for standard input).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How many times the input was opened for reading so far (a spool's copy counts as one:
    /// it reads the stream); a test of how often a run reads its input.
    pub fn opens(&self) -> u32 {
        self.opens
    }

    /// Whether the input can be read more than once.
    pub fn rereadable(&self) -> bool {
        match &self.kind {
            Kind::Path(p) => is_rereadable_path(p),
            Kind::Bytes(_) | Kind::Spooled(_) => true,
            Kind::Reader(_) => false,
        }
    }

    /// The format: `format`, or detected from the name when `Auto`; TSV is CSV
    /// ([`Format::kind`]: the same schema and models, [`Input::csv_format`] tells the
    /// separator).
    pub fn format(&self, format: Format) -> Format {
        self.resolved(format).kind()
    }

    /// `format` resolved from the name, TSV kept apart from CSV: which separator CSV rows
    /// are read with ([`Format::separator`]).
    pub(crate) fn csv_format(&self, format: Format) -> Format {
        self.resolved(format)
    }

    fn resolved(&self, format: Format) -> Format {
        match &self.kind {
            Kind::Path(p) => format.resolve(p),
            _ => format.resolve(&self.name),
        }
    }

    /// A fresh reader of the raw (decompressed) text; a one-shot input only once.
    pub(crate) fn open_text(&mut self) -> Result<Box<dyn BufRead + Send>, RunError> {
        self.opens += 1;
        match &mut self.kind {
            Kind::Path(p) => Ok(crate::data::open_input(p)?),
            Kind::Bytes(b) => Ok(wrap(Cursor::new(Arc::clone(b)), &self.name)?),
            Kind::Reader(r) => r.take().ok_or_else(|| {
                RunError::options(format!("{}: this input can be read only once", self.name))
            }),
            Kind::Spooled(s) => Ok(s.reader()),
        }
    }

    /// Makes a one-shot stream re-readable by copying it to a spool (a no-op for a file or
    /// bytes): the stream is opened and read once, here.
    pub(crate) fn spool(&mut self) -> Result<(), RunError> {
        if self.rereadable() {
            return Ok(());
        }
        let text = self.open_text()?;
        self.kind = Kind::Spooled(Spool::copy(text, &self.name, self.spool_limit)?);
        Ok(())
    }

    /// Runs `parse` on a reader of the start of a one-shot stream, then puts the stream back
    /// whole (what `parse` read is replayed first). When `parse` reads more than
    /// [`SAMPLE_LIMIT`](super::spool::SAMPLE_LIMIT) bytes, the stream is spooled instead and
    /// `parse` runs again on the spool.
    pub(crate) fn sample<T>(
        &mut self,
        mut parse: impl FnMut(Box<dyn BufRead + Send>, &str) -> Result<T, RunError>,
    ) -> Result<T, RunError> {
        let (sample, tap) = Sample::start(self.open_text()?);
        let result = parse(tap, &self.name);
        let (whole, overflow) = sample.finish();
        if overflow {
            self.kind = Kind::Spooled(Spool::copy(whole, &self.name, self.spool_limit)?);
            let text = self.open_text()?;
            return parse(text, &self.name);
        }
        self.kind = Kind::Reader(Some(whole));
        result
    }

    /// A fresh example reader (see [`ReadOptions`]; `bits` as resolved), through the cache
    /// when there is one.
    pub(crate) fn open(&mut self, options: &ReadOptions, bits: u32) -> Result<Opened, RunError> {
        let format = self.format(options.format);
        let interactions = match format {
            Format::Vw => options.interactions,
            _ => Interactions::default(),
        };
        let key = |source| CacheKey {
            format,
            zero_based: options.zero_based,
            bits: if format == Format::Vw { bits } else { 0 },
            interactions,
            schema: Vec::new(),
            scan: None,
            source,
        };
        self.cached(
            |_, source| key(source),
            |input| input.parser(options, format, bits),
        )
    }

    /// CSV rows read through `schema` with the separator of `format` (CSV or TSV), through
    /// the cache when there is one (a cache written here records the options of this run's
    /// scan when `schema` came from one).
    pub(crate) fn open_csv(
        &mut self,
        schema: &Schema,
        format: Format,
    ) -> Result<Opened<CsvRows>, RunError> {
        self.cached(
            |cache, source| CacheKey::csv(schema, cache.scan_of(schema), format, source),
            |input| super::csv::reader(input, schema, format),
        )
    }

    /// The CSV schema a scan with `options` of the rows read as `format` (CSV or TSV) would
    /// give, when a valid cache of this input records it (then the text is not read:
    /// [`Cache::scanned_schema`]).
    pub(crate) fn cached_schema(
        &mut self,
        options: &CsvExampleOptions,
        format: Format,
    ) -> Result<Option<Schema>, RunError> {
        let Some(mut cache) = self.cache.take() else {
            return Ok(None);
        };
        let found = self
            .stamp()
            .and_then(|source| cache.scanned_schema(&source, options, format));
        self.cache = Some(cache);
        found
    }

    /// Records that a scan of the text with `options` gave `schema` (kept in a cache written
    /// through it, for [`Input::cached_schema`]).
    pub(crate) fn record_scan(&mut self, schema: &Schema, options: &CsvExampleOptions) {
        if let Some(cache) = self.cache.as_mut() {
            cache.record_scan(schema, options);
        }
    }

    /// `text(self)`, or through the cache with the key `key` gives for this input's stamp.
    fn cached<S: ExampleSource<Error = ParseError>>(
        &mut self,
        key: impl FnOnce(&Cache, Stamp) -> CacheKey,
        text: impl FnOnce(&mut Self) -> Result<S, RunError>,
    ) -> Result<Opened<S>, RunError> {
        let Some(mut cache) = self.cache.take() else {
            return Ok(Opened::Text(text(self)?));
        };
        let opened = self
            .stamp()
            .map(|source| key(&cache, source))
            .and_then(|key| cache.open(key, || text(self)));
        self.cache = Some(cache);
        opened
    }

    /// The text's parser.
    fn parser(
        &mut self,
        options: &ReadOptions,
        format: Format,
        bits: u32,
    ) -> Result<ExampleReader, RunError> {
        let text = self.open_text()?;
        let reader =
            ExampleReader::from_reader(text, &self.name, format, options.zero_based, bits)?;
        Ok(match reader {
            ExampleReader::Vw(r) => ExampleReader::Vw(r.with_interactions(options.interactions)),
            other => other,
        })
    }
}

/// How to read an [`Input`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadOptions {
    /// The format (default: detected from the name: `.vw` VW, `.csv` CSV, `.tsv` TSV, else
    /// LIBSVM; a stream or another name is read as TSV with `Format::Tsv`).
    pub format: Format,
    /// LIBSVM indices start at 0.
    pub zero_based: bool,
    /// VW: hash bits (default: those of the model's dimension, else 18). An error for LIBSVM.
    pub bits: Option<u32>,
    /// Parse on a second thread while learning ([`ReadAhead`]; same results).
    pub read_ahead: bool,
    /// CSV: the header, the label column, the ignored columns, when a string column is hashed
    /// (a new model's schema; a trained model reads CSV with its own, [`super::csv`]).
    pub csv: CsvExampleOptions,
    /// VW: namespace pairs crossed into quadratic features (`-q ab`) for a new model (a
    /// trained model crosses its own).
    pub interactions: Interactions,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            format: Format::Auto,
            zero_based: false,
            bits: None,
            read_ahead: true,
            csv: CsvExampleOptions::default(),
            interactions: Interactions::default(),
        }
    }
}

impl ReadOptions {
    /// The hash bits for `format`: `bits`, else those of the model's dimension (a power of two),
    /// else VW's default 18; for LIBSVM, `bits` is refused and 18 returned (unused).
    pub(crate) fn bits(&self, format: Format, model_dim: Option<usize>) -> Result<u32, RunError> {
        if format != Format::Vw {
            if self.bits.is_some() {
                return Err(RunError::options(
                    "--bits applies to VW input (feature hashing); LIBSVM indices are used as \
                     they are",
                ));
            }
            return Ok(VwOptions::default().bits);
        }
        if let Some(b) = self.bits {
            if !(1..=32).contains(&b) {
                return Err(RunError::options(format!(
                    "--bits must be between 1 and 32, got {b}"
                )));
            }
            if let Some(d) = model_dim.filter(|&d| d != 1usize << b) {
                return Err(RunError::options(format!(
                    "--bits {b} does not match the model's dimension {d}"
                )));
            }
            return Ok(b);
        }
        match model_dim {
            Some(d) if d.is_power_of_two() => Ok(d.trailing_zeros()),
            Some(d) => Err(RunError::options(format!(
                "the model's dimension {d} is not a power of two: give --bits"
            ))),
            None => Ok(VwOptions::default().bits),
        }
    }
}

/// A reader of examples, parsed on a second thread or not.
pub(crate) type Examples = Box<dyn ExampleSource<Error = ParseError>>;

/// Opens `input` for one pass with what the model keeps of its input: CSV rows through its
/// `schema` ([`InputSpec`](crate::data::InputSpec)), VW rows with its `interactions`
/// ([`ModelExtras`](crate::linear::ModelExtras)).
pub(crate) fn examples(
    input: &mut Input,
    options: &ReadOptions,
    bits: u32,
    schema: Option<&Schema>,
    interactions: Interactions,
) -> Result<Examples, RunError> {
    if input.format(options.format) == Format::Csv {
        let schema = super::csv::model_schema(input, schema)?;
        let format = input.csv_format(options.format);
        return Ok(boxed(input.open_csv(schema, format)?, options.read_ahead));
    }
    let options = ReadOptions {
        interactions,
        ..options.clone()
    };
    match input.open(&options, bits)? {
        // LIBSVM text of long lines on several threads (it costs more to parse than to learn).
        Opened::Text(ExampleReader::Libsvm(mut text)) if options.read_ahead => {
            if ParallelParse::pays(&mut text) {
                let workers = ParallelParse::default_workers();
                return Ok(Box::new(ParallelParse::new(text, workers, BLOCK)));
            }
            Ok(boxed(Opened::Text(ExampleReader::Libsvm(text)), true))
        }
        opened => Ok(boxed(opened, options.read_ahead)),
    }
}

/// `reader`, parsed on a second thread when `read_ahead`.
fn boxed<S>(reader: S, read_ahead: bool) -> Examples
where
    S: ExampleSource<Error = ParseError> + Send + 'static,
{
    if read_ahead {
        Box::new(ReadAhead::new(reader))
    } else {
        Box::new(reader)
    }
}
