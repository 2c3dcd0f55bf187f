//! A streaming reader for dense numeric CSV matrices (one row per line, no label column).
//!
//! - fields are separated by `,` (a tab for a `.tsv` file, see [`Separator`]); blanks (spaces,
//!   tabs that do not separate, `\r`) around a field are ignored, so
//!   `\r\n` line endings work; a field may be wrapped in double quotes (`""` escapes a quote);
//! - every field must be a finite number (anything `f64::from_str` accepts; NaN and infinities
//!   are an error), and empty fields are an error;
//! - every row must have as many fields as the first row (or the header);
//! - blank lines and lines whose first non-blank character is `#` are skipped;
//! - an optional header line is detected when the first line has a non-empty field that is not
//!   a number (or forced on or off with [`CsvOptions::has_header`]).

use std::io::BufRead;

use super::decimal::{parse_finite, FloatError};
use super::error::{ParseError, ParseErrorKind};
use super::libsvm::token_text;
use super::lines::LineReader;
use super::source::{open_input, source_name};

/// Options of [`CsvReader`].
///
/// ```
/// use sketchlearn::data::CsvOptions;
/// assert_eq!(CsvOptions::default().has_header, None); // auto-detect
/// let no_header = CsvOptions { has_header: Some(false), ..Default::default() };
/// # let _ = no_header;
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CsvOptions {
    /// The byte between fields (a comma by default; [`Separator::for_path`] picks a tab for
    /// `.tsv`).
    pub separator: Separator,
    /// `Some(true)`: the first line is a header; `Some(false)`: it is data; `None` (the default):
    /// it is a header exactly when one of its non-empty fields does not parse as a number (so
    /// `x,y` and `,a,b` are headers, `1,2` is data and `1,,2` is a data row with an empty field).
    pub has_header: Option<bool>,
}

/// The byte between the fields of a line: a comma (CSV), a tab (TSV), or any other ASCII
/// byte but a quote, a newline or `#`.
///
/// ```
/// use sketchlearn::data::Separator;
/// assert_eq!(Separator::for_path("x.tsv.gz"), Separator::TAB);
/// assert_eq!(Separator::for_path("x.csv"), Separator::COMMA);
/// assert_eq!("semicolon".parse::<Separator>().unwrap().byte(), b';');
/// assert_eq!("|".parse::<Separator>().unwrap().byte(), b'|');
/// assert!("\"".parse::<Separator>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Separator(u8);

impl Separator {
    /// `,`
    pub const COMMA: Separator = Separator(b',');
    /// A tab.
    pub const TAB: Separator = Separator(b'\t');

    /// A tab for a `.tsv` name (a `.gz` suffix looked through), else a comma: the separator of
    /// the format the name resolves to ([`Format::separator`](super::Format::separator)).
    pub fn for_path(path: &str) -> Separator {
        super::Format::Auto.resolve(path).separator()
    }

    /// The byte.
    pub fn byte(self) -> u8 {
        self.0
    }

    /// Its name in messages: `comma`, `tab`, `semicolon` or the quoted character.
    pub fn name(self) -> String {
        match self.0 {
            b',' => "comma".into(),
            b'\t' => "tab".into(),
            b';' => "semicolon".into(),
            b => format!("'{}'", b as char),
        }
    }
}

impl Default for Separator {
    fn default() -> Self {
        Separator::COMMA
    }
}

impl std::str::FromStr for Separator {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let byte = match s {
            "comma" => b',',
            "tab" | "\\t" => b'\t',
            "semicolon" => b';',
            "pipe" => b'|',
            _ if s.len() == 1 => s.as_bytes()[0],
            _ => 0,
        };
        if byte == 0 || !byte.is_ascii() || matches!(byte, b'"' | b'\n' | b'\r' | b'#' | b' ') {
            return Err(format!(
                "bad separator '{s}' (expected tab, comma, semicolon, pipe or one ASCII \
                 character other than a quote, a space or '#')"
            ));
        }
        Ok(Separator(byte))
    }
}

/// Streaming reader of a dense numeric CSV matrix over any [`BufRead`].
///
/// Memory is constant in the number of rows (one reused line buffer);
/// [`read_into`](Self::read_into) refills a caller-owned vector, and the [`Iterator`]
/// implementation yields owned rows.
///
/// ```
/// use sketchlearn::data::{CsvReader, ParseErrorKind};
/// let text = "x,y,z\n1,2,3\n# a comment\n\n4.5, -1e3 ,0\n7,8\n";
/// let mut reader = CsvReader::new(std::io::Cursor::new(text), "inline", Default::default());
/// assert_eq!(reader.next().unwrap().unwrap(), vec![1.0, 2.0, 3.0]);
/// assert_eq!(reader.header().unwrap(), ["x", "y", "z"]);
/// assert_eq!(reader.next().unwrap().unwrap(), vec![4.5, -1000.0, 0.0]);
/// let err = reader.next().unwrap().unwrap_err();
/// assert_eq!(err.kind, ParseErrorKind::WrongFieldCount { expected: 3, found: 2 });
/// assert_eq!(err.line, 6);
/// assert!(reader.next().is_none());
/// ```
#[derive(Debug)]
pub struct CsvReader<R> {
    lines: LineReader<R>,
    layout: Layout,
    rows: u64,
}

/// What the lines read so far say of the matrix's shape: the options, the header's names and the
/// number of columns.
#[derive(Debug)]
struct Layout {
    options: CsvOptions,
    header: Option<Vec<String>>,
    columns: Option<usize>,
}

impl CsvReader<Box<dyn BufRead + Send>> {
    /// Opens `path` with [`open_input`] (`-` is standard input, gzip is detected and decompressed)
    /// and reads it as CSV; errors name the path (or `"<stdin>"`).
    pub fn open(path: &str, options: CsvOptions) -> Result<Self, ParseError> {
        let input = open_input(path)?;
        Ok(CsvReader::new(input, source_name(path), options))
    }
}

impl<R: BufRead> CsvReader<R> {
    /// A reader over `reader`; `source_name` (a path, `"<stdin>"`, ...) is used in error messages.
    pub fn new(reader: R, source_name: impl Into<String>, options: CsvOptions) -> Self {
        CsvReader {
            lines: LineReader::new(reader, source_name),
            layout: Layout {
                options,
                header: None,
                columns: None,
            },
            rows: 0,
        }
    }

    /// Reads the next row into `row` (cleared first); `Ok(false)` at the end of input.
    ///
    /// On a parse error `row` holds unspecified content; the next call goes on with the following
    /// line. After an I/O error the reader is at its end.
    pub fn read_into(&mut self, row: &mut Vec<f64>) -> Result<bool, ParseError> {
        while self.lines.next_line()? {
            let (offset, line) = self.lines.text();
            match self.layout.parse(line, offset, row) {
                Ok(true) => {
                    self.rows += 1;
                    return Ok(true);
                }
                Ok(false) => continue,
                Err((position, kind)) => {
                    let column = if matches!(kind, ParseErrorKind::WrongFieldCount { .. })
                        && position == usize::MAX
                    {
                        0
                    } else {
                        position + 1
                    };
                    return Err(self.lines.error(column, kind));
                }
            }
        }
        Ok(false)
    }

    /// The header's field names, once the header has been read (`None` if there is none).
    pub fn header(&self) -> Option<&[String]> {
        self.layout.header.as_deref()
    }

    /// The number of columns, once the header or the first row has been read.
    pub fn num_columns(&self) -> Option<usize> {
        self.layout.columns
    }

    /// The number of the last line read (1-based; 0 before the first read).
    pub fn line(&self) -> u64 {
        self.lines.line()
    }

    /// The number of data rows returned so far.
    pub fn rows_read(&self) -> u64 {
        self.rows
    }

    /// The name used in error messages.
    pub fn source_name(&self) -> &str {
        self.lines.source_name()
    }

    /// Gives back the underlying reader.
    pub fn into_inner(self) -> R {
        self.lines.into_inner()
    }
}

impl Layout {
    /// Parses `line`, the text of a line after its first `offset` bytes: `Ok(true)` for a data
    /// row, `Ok(false)` for a skipped line (blank, comment, header). Error positions are 0-based
    /// from the line start; `usize::MAX` means no column.
    fn parse(&mut self, line: &[u8], offset: usize, row: &mut Vec<f64>) -> Result<bool, LineError> {
        let first = line.iter().position(|&b| !is_blank(b));
        match first {
            None => return Ok(false),
            Some(k) if line[k] == b'#' => return Ok(false),
            Some(_) => {}
        }
        let shift = |(p, k): LineError| (p.saturating_add(offset), k);
        let sep = self.options.separator.byte();

        if self.columns.is_none() {
            let header = match self.options.has_header {
                Some(h) => h,
                None => {
                    // Empty fields are neither: `1,,3` is a bad data row, `,a,b` a header.
                    let mut has_name = false;
                    for_each_field(line, sep, |_, field, _| {
                        let numeric = std::str::from_utf8(field)
                            .ok()
                            .and_then(|t| t.parse::<f64>().ok())
                            .is_some();
                        has_name |= !field.is_empty() && !numeric;
                        Ok(())
                    })
                    .map_err(shift)?;
                    has_name
                }
            };
            if header {
                let mut names = Vec::new();
                let count = for_each_field(line, sep, |pos, field, quoted| {
                    let text = std::str::from_utf8(field).map_err(|e| {
                        let (k, kind) = super::text_input::not_utf8_at(field, e);
                        (pos + k, kind)
                    })?;
                    names.push(if quoted {
                        text.replace("\"\"", "\"")
                    } else {
                        text.to_owned()
                    });
                    Ok(())
                })
                .map_err(shift)?;
                self.columns = Some(count);
                self.header = Some(names);
                return Ok(false);
            }
        }

        row.clear();
        let (expected, separator) = (self.columns, self.options.separator);
        let mut extra_at = None;
        let count = for_each_field(line, sep, |pos, field, _| {
            if expected == Some(row.len()) && extra_at.is_none() {
                extra_at = Some(pos);
            }
            if field.is_empty() {
                // The last field, one past the expected count: a separator ends the row.
                let last = line[pos..].iter().all(|&b| is_blank(b));
                if let Some(expected) = expected.filter(|&e| last && e == row.len() && e > 0) {
                    let kind = trailing_separator(expected + 1, expected, separator);
                    let at = line[..pos].iter().rposition(|&b| b == separator.byte());
                    return Err((at.unwrap_or(pos), kind));
                }
                return Err((pos, ParseErrorKind::EmptyField));
            }
            match parse_finite(field) {
                Ok(x) => {
                    row.push(x);
                    Ok(())
                }
                Err(FloatError::Unparsable) => {
                    Err((pos, ParseErrorKind::UnparsableValue(token_text(field))))
                }
                Err(FloatError::NonFinite) => {
                    Err((pos, ParseErrorKind::NonFiniteValue(token_text(field))))
                }
            }
        })
        .map_err(shift)?;
        match expected {
            None => self.columns = Some(count),
            Some(expected) if expected != count => {
                return Err((
                    extra_at.map_or(usize::MAX, |p| p + offset),
                    ParseErrorKind::WrongFieldCount {
                        expected,
                        found: count,
                    },
                ))
            }
            Some(_) => {}
        }
        Ok(true)
    }
}

impl<R: BufRead> Iterator for CsvReader<R> {
    type Item = Result<Vec<f64>, ParseError>;

    /// The next row, owned. Error and resumption semantics as in
    /// [`read_into`](CsvReader::read_into).
    fn next(&mut self) -> Option<Self::Item> {
        let mut row = Vec::with_capacity(self.layout.columns.unwrap_or(0));
        match self.read_into(&mut row) {
            Ok(true) => Some(Ok(row)),
            Ok(false) => None,
            Err(e) => Some(Err(e)),
        }
    }
}

/// The error for a row of `found` fields, the last one empty, where `expected` (= `found - 1`)
/// are due: a separator at the end of the line (`1,2,3,` under a 3-column header, as some
/// exporters write), said so with the fix. Both CSV readers give it ([`CsvReader`], and
/// the schema's reader at that separator).
pub(crate) fn trailing_separator(
    found: usize,
    expected: usize,
    separator: Separator,
) -> ParseErrorKind {
    let (sep, pattern) = match separator.byte() {
        b'\t' => ("tab".to_string(), "\\t".to_string()),
        b => (format!("'{}'", b as char), (b as char).to_string()),
    };
    ParseErrorKind::Column(format!(
        "a trailing {sep} ends this row: {found} fields, the last one empty, where {expected} \
         are expected; remove the separator at the end of each row (e.g. sed 's/{pattern}$//' \
         FILE)"
    ))
}

/// An error inside a line: 0-based byte position and kind.
pub(crate) type LineError = (usize, ParseErrorKind);

/// CSV blanks: the LIBSVM whitespace (space, tab, `\r`, `\n`, `\x0b`, `\x0c`).
pub(crate) use super::decimal::is_space as is_blank;

/// Calls `f(position, content, quoted)` for each field of `line` (fields separated by `sep`),
/// returns the number of fields.
/// The content of a quoted field excludes the quotes (and still holds `""` escapes).
pub(crate) fn for_each_field(
    line: &[u8],
    sep: u8,
    mut f: impl FnMut(usize, &[u8], bool) -> Result<(), LineError>,
) -> Result<usize, LineError> {
    let mut pos = 0;
    let mut count = 0;
    loop {
        while pos < line.len() && is_blank(line[pos]) && line[pos] != b'\n' && line[pos] != sep {
            pos += 1;
        }
        if pos < line.len() && line[pos] == b'"' {
            let open = pos;
            let start = pos + 1;
            let mut close = start;
            loop {
                match line[close..].iter().position(|&b| b == b'"') {
                    None => return Err((open, ParseErrorKind::UnterminatedQuote)),
                    Some(k) => {
                        close += k;
                        if line.get(close + 1) == Some(&b'"') {
                            close += 2;
                        } else {
                            break;
                        }
                    }
                }
            }
            pos = close + 1;
            while pos < line.len() && is_blank(line[pos]) && line[pos] != sep {
                pos += 1;
            }
            if pos < line.len() && line[pos] != sep {
                let end = line[pos..]
                    .iter()
                    .position(|&b| b == sep)
                    .map_or(line.len(), |k| pos + k);
                return Err((
                    open,
                    ParseErrorKind::UnparsableValue(token_text(&line[open..end])),
                ));
            }
            f(start, &line[start..close], true)?;
        } else {
            let start = pos;
            let end = line[pos..]
                .iter()
                .position(|&b| b == sep)
                .map_or(line.len(), |k| pos + k);
            let mut trimmed = end;
            while trimmed > start && is_blank(line[trimmed - 1]) {
                trimmed -= 1;
            }
            pos = end;
            f(start, &line[start..trimmed], false)?;
        }
        count += 1;
        if pos < line.len() {
            pos += 1; // the separator
        } else {
            return Ok(count);
        }
    }
}
