//! A streaming reader for the LIBSVM / SVMLight text format.
//!
//! One example per line:
//!
//! ```text
//! label [qid:N] index:value index:value ... [# comment]
//! ```
//!
//! Rules (see [`LibsvmReader`] for the details):
//! - whitespace is any run of spaces, tabs, `\r` (so `\r\n` line endings work), `\x0b` and `\x0c`;
//! - `#` starts a comment anywhere on a line; blank and comment-only lines are skipped;
//! - the label is any finite `f64` (`+1`, `-1`, `0`, `2.5`, `1e-3`, ...);
//! - `qid:...` tokens are ignored;
//! - indices are 1-based by default ([`LibsvmOptions::zero_based`] for 0-based files) and are
//!   converted to 0-based `u32`; unsorted indices are sorted, duplicates are an error;
//! - explicit zero values (`3:0`) are kept as written;
//! - NaN and infinite values or labels (including overflow such as `1e999`) are an error;
//! - the example weight is always 1 (the format has no weights).
//!
//! The line is parsed as bytes, so any input (including invalid UTF-8) gives either an example or
//! a [`ParseError`], never a panic.

use std::io::BufRead;

use super::decimal::{decimal_at, digits_at, is_space, parse_finite, FloatError};
use super::error::{ParseError, ParseErrorKind};
use super::example::Example;
use super::lines::LineReader;
use super::source::{open_input, source_name};

/// Options of [`LibsvmReader`].
///
/// ```
/// use sketchlearn::data::LibsvmOptions;
/// assert!(!LibsvmOptions::default().zero_based); // 1-based, as LIBSVM writes it
/// let zero = LibsvmOptions { zero_based: true };
/// assert!(zero.zero_based);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LibsvmOptions {
    /// `true` if the file's feature indices start at 0; `false` (the default, LIBSVM's convention)
    /// if they start at 1, in which case index 0 is an error.
    pub zero_based: bool,
}

/// Streaming LIBSVM / SVMLight reader over any [`BufRead`].
///
/// Memory is constant in the number of rows: one line buffer is reused, and
/// [`read_into`](Self::read_into) refills a caller-owned [`Example`] without allocating once its
/// vectors have grown to the longest row. The [`Iterator`] implementation yields owned examples.
///
/// ```
/// use sketchlearn::data::{LibsvmReader, ParseErrorKind};
/// let text = "+1 3:0.5 1:2 # unsorted, with a comment\n\n-1 qid:7 2:-1e-3\n0 0:4\n";
/// let mut reader = LibsvmReader::new(std::io::Cursor::new(text), "inline", Default::default());
///
/// let first = reader.next().unwrap().unwrap();
/// assert_eq!((first.label, first.weight), (1.0, 1.0));
/// assert_eq!(first.indices, vec![0, 2]); // 0-based and sorted
/// assert_eq!(first.values, vec![2.0, 0.5]);
///
/// let second = reader.next().unwrap().unwrap();
/// assert_eq!((second.label, second.indices, second.values), (-1.0, vec![1], vec![-1e-3]));
/// assert_eq!(reader.line(), 3);
///
/// let err = reader.next().unwrap().unwrap_err(); // index 0 in a 1-based file
/// assert_eq!((err.line, err.column), (4, 3));
/// assert_eq!(err.kind, ParseErrorKind::ZeroIndexInOneBased);
/// assert!(reader.next().is_none());
/// assert_eq!(reader.max_index_plus_one(), 3);
/// ```
#[derive(Debug)]
pub struct LibsvmReader<R> {
    lines: LineReader<R>,
    options: LibsvmOptions,
    scratch: Vec<(u32, f64)>,
    examples: u64,
    max_index_plus_one: usize,
    last_nnz: usize,
    /// Values are passed over on plain lines ([`LibsvmReader::skip_values`]).
    skip_values: bool,
}

impl LibsvmReader<Box<dyn BufRead + Send>> {
    /// Opens `path` with [`open_input`] (`-` is standard input, gzip is detected and decompressed)
    /// and reads it as LIBSVM; errors name the path (or `"<stdin>"`).
    pub fn open(path: &str, options: LibsvmOptions) -> Result<Self, ParseError> {
        let input = open_input(path)?;
        Ok(LibsvmReader::new(input, source_name(path), options))
    }
}

impl<R: BufRead> LibsvmReader<R> {
    /// A reader over `reader`; `source_name` (a path, `"<stdin>"`, ...) is used in error messages.
    pub fn new(reader: R, source_name: impl Into<String>, options: LibsvmOptions) -> Self {
        LibsvmReader {
            lines: LineReader::new(reader, source_name),
            options,
            scratch: Vec::new(),
            examples: 0,
            max_index_plus_one: 0,
            last_nnz: 0,
            skip_values: false,
        }
    }

    /// Reads the next example into `ex` (reusing its allocations); `Ok(false)` at the end of input.
    ///
    /// Blank and comment-only lines are skipped. On a parse error `ex` holds unspecified content
    /// and the error names the line and column; the next call goes on with the following line, so
    /// a caller may skip bad lines. After an I/O error the reader is at its end (`Ok(false)`).
    pub fn read_into(&mut self, ex: &mut Example) -> Result<bool, ParseError> {
        while self.lines.next_line()? {
            let (offset, line) = self.lines.text();
            let zero_based = self.options.zero_based;
            let parsed = match self.skip_values && index_line(line, zero_based, ex).is_some() {
                true => Ok(true),
                false => parse_line(line, zero_based, ex, &mut self.scratch),
            };
            match parsed {
                Ok(true) => {
                    self.examples += 1;
                    self.last_nnz = ex.indices.len();
                    if let Some(&last) = ex.indices.last() {
                        self.max_index_plus_one = self.max_index_plus_one.max(last as usize + 1);
                    }
                    return Ok(true);
                }
                Ok(false) => continue,
                Err(e) => {
                    let (position, kind) = super::text_input::in_other_encoding(line, e);
                    return Err(self.lines.error(offset + position + 1, kind));
                }
            }
        }
        Ok(false)
    }

    /// The reader of a block of whole lines that continues a source after its first line
    /// ([`ParallelParse`](super::ParallelParse)): a byte-order mark is not taken off its first
    /// line (it is text there, as on any later line of the source).
    pub(crate) fn continuing(mut self) -> Self {
        self.lines = self.lines.continuing();
        self
    }

    /// Whether the next line is longer than `bytes` (as far as the input's buffer shows;
    /// nothing is consumed): the choice of [`ParallelParse`](super::ParallelParse) for inputs
    /// whose lines cost more to parse than to learn.
    pub(crate) fn next_line_longer_than(&mut self, bytes: usize) -> bool {
        self.lines.next_line_longer_than(bytes)
    }

    /// From now on, reads only the labels and indices of plain lines (the dimension scan of a
    /// run, `run::prescan`): a line of plain decimals and increasing indices gives its label
    /// and indices with every value 0, and its values are not checked beyond being non-empty
    /// tokens; any other line is parsed in full (its values, and its errors, as usual). Labels,
    /// indices, [`line`](Self::line) and [`max_index_plus_one`](Self::max_index_plus_one) are
    /// those of the full parse on every line it accepts; a bad value on a plain line is left to
    /// a later full read.
    ///
    /// ```
    /// use sketchlearn::data::LibsvmReader;
    /// let text = "1 2:0.5 7:1e-3\n-1 3:junk\n";
    /// let mut scan = LibsvmReader::new(std::io::Cursor::new(text), "t", Default::default());
    /// scan.skip_values();
    /// assert_eq!(scan.by_ref().map(|e| e.unwrap().label).collect::<Vec<_>>(), [1.0, -1.0]);
    /// assert_eq!(scan.max_index_plus_one(), 7);
    /// let mut full = LibsvmReader::new(std::io::Cursor::new(text), "t", Default::default());
    /// let err = full.nth(1).unwrap().unwrap_err(); // the full parse sees the bad value
    /// assert_eq!((err.line, err.column), (2, 6));
    /// ```
    pub fn skip_values(&mut self) {
        self.skip_values = true;
    }

    /// The number of the last line read (1-based; 0 before the first read).
    pub fn line(&self) -> u64 {
        self.lines.line()
    }

    /// The number of examples returned so far.
    pub fn examples_read(&self) -> u64 {
        self.examples
    }

    /// One past the largest 0-based feature index of the examples returned so far (the smallest
    /// dimension that holds them all); 0 before any feature was seen.
    pub fn max_index_plus_one(&self) -> usize {
        self.max_index_plus_one
    }

    /// The name used in error messages.
    pub fn source_name(&self) -> &str {
        self.lines.source_name()
    }

    /// The options this reader was built with.
    pub fn options(&self) -> LibsvmOptions {
        self.options
    }

    /// Gives back the underlying reader.
    pub fn into_inner(self) -> R {
        self.lines.into_inner()
    }
}

impl<R: BufRead> Iterator for LibsvmReader<R> {
    type Item = Result<Example, ParseError>;

    /// The next example, owned. Error and resumption semantics as in
    /// [`read_into`](LibsvmReader::read_into).
    fn next(&mut self) -> Option<Self::Item> {
        let mut ex = Example {
            label: 0.0,
            weight: 1.0,
            indices: Vec::with_capacity(self.last_nnz),
            values: Vec::with_capacity(self.last_nnz),
        };
        match self.read_into(&mut ex) {
            Ok(true) => Some(Ok(ex)),
            Ok(false) => None,
            Err(e) => Some(Err(e)),
        }
    }
}

/// Longest token quoted in an error message (in bytes); longer ones are cut and marked with `...`.
const MAX_TOKEN_IN_MESSAGE: usize = 64;

/// An error inside a line: 0-based byte position and kind.
type LineError = (usize, ParseErrorKind);

/// The token as text for an error message.
pub(crate) fn token_text(token: &[u8]) -> String {
    if token.len() <= MAX_TOKEN_IN_MESSAGE {
        String::from_utf8_lossy(token).into_owned()
    } else {
        let mut s = String::from_utf8_lossy(&token[..MAX_TOKEN_IN_MESSAGE]).into_owned();
        s.push_str("...");
        s
    }
}

/// Whitespace-separated tokens of `line` (already cut at the comment) with their byte positions.
fn tokens(line: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    let mut pos = 0;
    std::iter::from_fn(move || {
        while pos < line.len() && is_space(line[pos]) {
            pos += 1;
        }
        if pos >= line.len() {
            return None;
        }
        let start = pos;
        while pos < line.len() && !is_space(line[pos]) {
            pos += 1;
        }
        Some((start, &line[start..pos]))
    })
}

/// Parses a written index (decimal digits only) and converts it to 0-based.
fn parse_index(token: &[u8], zero_based: bool) -> Result<u32, ParseErrorKind> {
    if token.is_empty() {
        return Err(ParseErrorKind::UnparsableIndex(token_text(token)));
    }
    let mut written: u64 = 0;
    for &d in token {
        if !d.is_ascii_digit() {
            return Err(ParseErrorKind::UnparsableIndex(token_text(token)));
        }
        written = match written
            .checked_mul(10)
            .and_then(|w| w.checked_add(u64::from(d - b'0')))
        {
            Some(w) => w,
            None if token.iter().all(u8::is_ascii_digit) => {
                return Err(ParseErrorKind::IndexTooLarge(token_text(token)))
            }
            None => return Err(ParseErrorKind::UnparsableIndex(token_text(token))),
        };
    }
    let zero = if zero_based {
        written
    } else if written == 0 {
        return Err(ParseErrorKind::ZeroIndexInOneBased);
    } else {
        written - 1
    };
    // The 0-based index must leave room for `index + 1` (the dimension) in a u32.
    if zero >= u64::from(u32::MAX) {
        return Err(ParseErrorKind::IndexTooLarge(token_text(token)));
    }
    Ok(zero as u32)
}

/// One pass over a line of the plain form `label idx:value idx:value …` with plain decimal
/// numbers (see [`decimal_at`]) and strictly increasing indices — what nearly every LIBSVM
/// file holds. Each number is read in place, once, with no token boundaries found first.
/// Anything else (comments, `qid:`, exponents, unsorted or duplicate indices, errors, blank
/// lines) returns `None`, and [`parse_line`]'s general path parses the line from scratch, so
/// the result and every error message are the general path's.
#[inline]
fn fast_line(line: &[u8], zero_based: bool, ex: &mut Example) -> Option<()> {
    plain_line(line, zero_based, ex, decimal_at)
}

/// [`fast_line`] without the values (the dimension scan, [`LibsvmReader::skip_values`]): the
/// label and the indices of a plain line, each value token only passed over (one or more bytes
/// up to whitespace; a `#` in it returns `None`, since the general path would cut the line
/// there). Every value is given as 0. On a line the full parse accepts, the label and indices
/// are the full parse's: a line read here is plain up to its values, which the general path
/// splits at the same whitespace and reads at the same `:`. A bad value on such a line is not
/// seen here (the learning pass's full parse reports it, at the same line and column).
#[inline]
fn index_line(line: &[u8], zero_based: bool, ex: &mut Example) -> Option<()> {
    plain_line(line, zero_based, ex, |line, start| {
        let end = token_end(line, start);
        let stop = line.get(end).copied();
        (end > start && stop.is_none_or(is_space)).then_some((0.0, end))
    })
}

/// `0x01` in every byte of a word.
const ONES: u64 = u64::from_ne_bytes([1; 8]);

/// Where the token at `start` of `line` may end: the first byte at or after `start` that is at
/// most `0x20` (every whitespace byte is) or `#`, else the end of the line. Eight bytes at a
/// time: in a word `x`, `(x − 0x21·ONES) & !x & 0x80·ONES` flags the bytes below `0x21` and
/// `(y − ONES) & !y & 0x80·ONES` with `y = x ^ 0x23·ONES` the bytes equal to `#`; the lowest
/// flag of each is exact (a borrow only spreads upwards, past a flagged byte), so the lowest
/// flag of their union, read little-endian, is the first such byte.
#[inline(always)]
fn token_end(line: &[u8], start: usize) -> usize {
    let high = 0x80 * ONES;
    let mut p = start;
    while let Some(word) = line.get(p..p + 8) {
        let x = u64::from_le_bytes(word.try_into().expect("8 bytes"));
        let low = x.wrapping_sub(0x21 * ONES) & !x & high;
        let y = x ^ (0x23 * ONES);
        let hash = y.wrapping_sub(ONES) & !y & high;
        let flags = low | hash;
        if flags != 0 {
            return p + (flags.trailing_zeros() / 8) as usize;
        }
        p += 8;
    }
    while line.get(p).is_some_and(|&b| b > 0x20 && b != b'#') {
        p += 1;
    }
    p
}

/// The plain-line walk of [`fast_line`] and [`index_line`], with `value` reading the value that
/// starts at a position (its number and where it ends; `None`: not plain).
#[inline(always)]
fn plain_line(
    line: &[u8],
    zero_based: bool,
    ex: &mut Example,
    value: impl Fn(&[u8], usize) -> Option<(f64, usize)>,
) -> Option<()> {
    let n = line.len();
    let mut p = 0;
    while p < n && is_space(line[p]) {
        p += 1;
    }
    let (label, end) = decimal_at(line, p)?;
    p = end;
    ex.clear();
    ex.label = label;
    ex.weight = 1.0;
    let first = u64::from(!zero_based); // the smallest index written
    let mut next_min = 0u64; // indices must strictly increase
    loop {
        while p < n && is_space(line[p]) {
            p += 1;
        }
        if p == n {
            return Some(());
        }
        // At most 10 digits: no overflow of u64.
        let (written, colon) = digits_at(line, p, 0);
        if colon == p || colon - p > 10 || line.get(colon) != Some(&b':') {
            return None;
        }
        let (value, end) = value(line, colon + 1)?;
        p = end;
        let index = written.checked_sub(first)?;
        if index >= u64::from(u32::MAX) || index < next_min {
            return None;
        }
        next_min = index + 1;
        ex.indices.push(index as u32);
        ex.values.push(value);
    }
}

/// Parses one line into `ex`; `Ok(false)` for a blank or comment-only line.
fn parse_line(
    line: &[u8],
    zero_based: bool,
    ex: &mut Example,
    scratch: &mut Vec<(u32, f64)>,
) -> Result<bool, LineError> {
    if fast_line(line, zero_based, ex).is_some() {
        return Ok(true);
    }
    let line = match line.iter().position(|&b| b == b'#') {
        Some(hash) => &line[..hash],
        None => line,
    };
    let mut toks = tokens(line);
    let Some((label_pos, label_tok)) = toks.next() else {
        return Ok(false);
    };
    if label_tok.contains(&b':') {
        return Err((label_pos, ParseErrorKind::MissingLabel));
    }
    let label = parse_finite(label_tok).map_err(|e| {
        let text = token_text(label_tok);
        match e {
            FloatError::Unparsable => (label_pos, ParseErrorKind::UnparsableLabel(text)),
            FloatError::NonFinite => (label_pos, ParseErrorKind::NonFiniteValue(text)),
        }
    })?;
    ex.clear();
    ex.label = label;
    ex.weight = 1.0;

    let mut sorted = true;
    let mut last: Option<u32> = None;
    for (pos, tok) in toks {
        if tok.starts_with(b"qid:") {
            continue;
        }
        let Some(colon) = tok.iter().position(|&b| b == b':') else {
            return Err((pos, ParseErrorKind::MissingColon(token_text(tok))));
        };
        let index = parse_index(&tok[..colon], zero_based).map_err(|k| (pos, k))?;
        let value_tok = &tok[colon + 1..];
        let value_pos = pos + colon + 1;
        let value = parse_finite(value_tok).map_err(|e| {
            let text = token_text(value_tok);
            match e {
                FloatError::Unparsable => (value_pos, ParseErrorKind::UnparsableValue(text)),
                FloatError::NonFinite => (value_pos, ParseErrorKind::NonFiniteValue(text)),
            }
        })?;
        if let Some(prev) = last {
            if index == prev {
                return Err((
                    pos,
                    ParseErrorKind::DuplicateIndex(written(index, zero_based)),
                ));
            }
            if index < prev {
                sorted = false;
            }
        }
        last = Some(index);
        ex.indices.push(index);
        ex.values.push(value);
    }

    if !sorted {
        // Keys are distinct unless there is a duplicate (an error), so an unstable sort gives the
        // same order as a stable one and needs no allocation.
        scratch.clear();
        scratch.extend(ex.indices.iter().copied().zip(ex.values.iter().copied()));
        scratch.sort_unstable_by_key(|&(i, _)| i);
        if let Some(w) = scratch.windows(2).find(|w| w[0].0 == w[1].0) {
            let dup = w[0].0;
            let pos = second_occurrence(line, label_pos + label_tok.len(), zero_based, dup);
            return Err((
                pos,
                ParseErrorKind::DuplicateIndex(written(dup, zero_based)),
            ));
        }
        ex.indices.clear();
        ex.values.clear();
        for &(i, v) in scratch.iter() {
            ex.indices.push(i);
            ex.values.push(v);
        }
    }
    Ok(true)
}

/// The index as written in the file.
fn written(index: u32, zero_based: bool) -> u32 {
    if zero_based {
        index
    } else {
        index + 1 // index < u32::MAX by construction
    }
}

/// Position of the second feature token with 0-based index `dup` (the features parsed already).
fn second_occurrence(line: &[u8], features_start: usize, zero_based: bool, dup: u32) -> usize {
    let mut seen = false;
    for (pos, tok) in tokens(&line[features_start..]) {
        if tok.starts_with(b"qid:") {
            continue;
        }
        let Some(colon) = tok.iter().position(|&b| b == b':') else {
            continue;
        };
        if parse_index(&tok[..colon], zero_based) == Ok(dup) {
            if seen {
                return features_start + pos;
            }
            seen = true;
        }
    }
    0
}
