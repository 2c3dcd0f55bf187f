//! CSV as people have it: a header, a named label column, numeric and string columns, missing
//! values. [`Schema`] maps the columns of a CSV file to feature indices (and back, for names):
//!
//! - the label column (by name or 0-based index, [`ColumnRef`]) gives the label; ignored columns
//!   give nothing;
//! - a column whose values are all numbers is **numeric**: one feature, the value; a column of
//!   numbers with a stray value that is not one (`n/a2`, `12,5`) is refused, one with more of
//!   them read as strings with a warning ([`mixed_column`](super::mixed_column));
//! - any other column is **categorical**: one-hot, one feature per distinct value
//!   (`island=Dream`), or — above [`CsvExampleOptions::max_categories`] distinct values —
//!   **hashed**: `column=value` hashed (MurmurHash3, as VW does) into `2^hash_bits` features of
//!   its own;
//! - an empty field, `NA`, `N/A`, `NaN`, `nan`, `null`, `NULL` or `?` is missing: the feature is
//!   absent from the example.
//!
//! The schema is found by one pass over the file ([`Schema::scan`]) and is serialisable, so a
//! model can store it and read later files — with or without the label column, with their
//! columns in any order when they have a header — into the same features. A category unseen at
//! scan time is absent (all its column's one-hot features are 0).
//!
//! ```
//! use sketchlearn::data::{ColumnRef, CsvExampleOptions, Schema};
//! let text = "species,island,mass\nAdelie,Dream,3750\nGentoo,Biscoe,NA\n";
//! let options = CsvExampleOptions { label_column: Some(ColumnRef::Name("species".into())), ..Default::default() };
//! let schema = Schema::scan(std::io::Cursor::new(text), "p.csv", &options)?;
//! assert_eq!(schema.dim(), 3); // mass, island=Biscoe, island=Dream
//! assert_eq!(schema.feature_name(0).as_deref(), Some("mass"));
//! assert_eq!(schema.feature_name(2).as_deref(), Some("island=Dream"));
//! assert_eq!(schema.classes().unwrap().to_list(), "Adelie,Gentoo");
//! assert_eq!(schema.rows(), 2);
//! # Ok::<(), sketchlearn::ParseError>(())
//! ```

use super::case_twins::{CaseTwins, FirstSeen};
use super::csv::{for_each_field, is_blank, trailing_separator, Separator};
use super::decimal::parse_f64;
use super::error::{ParseError, ParseErrorKind};
use super::hashing::murmur3_x86_32;
use super::lines::LineReader;
use super::mixed_column::{At, MixedColumn, ValueCounts};
use super::text_input::not_utf8_at;
use crate::labels::{ClassLabel, Classes, MAX_CLASSES};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::io::BufRead;
use std::str::FromStr;

/// A column named in an option: by header name, or by 0-based position (a plain number).
///
/// ```
/// use sketchlearn::data::ColumnRef;
/// assert_eq!("3".parse::<ColumnRef>().unwrap(), ColumnRef::Index(3));
/// assert_eq!("species".parse::<ColumnRef>().unwrap(), ColumnRef::Name("species".into()));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ColumnRef {
    /// The column whose header field is this name.
    Name(String),
    /// The column at this 0-based position.
    Index(usize),
}

impl FromStr for ColumnRef {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if s.is_empty() {
            return Err("empty column name".into());
        }
        Ok(match s.parse::<usize>() {
            Ok(i) => ColumnRef::Index(i),
            Err(_) => ColumnRef::Name(s.to_string()),
        })
    }
}

impl fmt::Display for ColumnRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ColumnRef::Name(n) => f.write_str(n),
            ColumnRef::Index(i) => write!(f, "{i}"),
        }
    }
}

/// How to read a CSV file as examples ([`Schema::scan`]).
///
/// ```
/// use sketchlearn::data::CsvExampleOptions;
/// let o = CsvExampleOptions::default();
/// assert_eq!((o.has_header, o.max_categories, o.hash_bits), (None, 64, 10));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CsvExampleOptions {
    /// `Some(true)`/`Some(false)`: the first line is / is not a header; `None`: detected (a
    /// header when no field of the first line is a number, or when a column is a number on the
    /// second line but not on the first).
    pub has_header: Option<bool>,
    /// The label column; `None`: the column named `label` if there is one, else no label (the
    /// rows are only to be scored).
    pub label_column: Option<ColumnRef>,
    /// Columns that give no feature (IDs, leaks).
    pub ignore_columns: Vec<ColumnRef>,
    /// A string column with more distinct values than this is hashed instead of one-hot.
    pub max_categories: usize,
    /// Hash bits of a hashed column (`2^hash_bits` features each).
    pub hash_bits: u32,
}

impl Default for CsvExampleOptions {
    fn default() -> Self {
        CsvExampleOptions {
            has_header: None,
            label_column: None,
            ignore_columns: Vec::new(),
            max_categories: 64,
            hash_bits: 10,
        }
    }
}

/// What a column gives.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ColumnKind {
    /// The label.
    Label,
    /// Nothing (ignored, or never had a value).
    Ignored,
    /// One feature, the number.
    Numeric {
        /// The feature index.
        index: u32,
    },
    /// One-hot: value `values[k]` is feature `base + k` (values sorted).
    Categorical {
        /// The first feature index.
        base: u32,
        /// The values, sorted.
        values: Vec<String>,
    },
    /// `column=value` hashed into features `base .. base + 2^bits`.
    Hashed {
        /// The first feature index.
        base: u32,
        /// Hash bits.
        bits: u32,
    },
}

/// One column: its name (the header field, or `column N` without a header) and kind.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Column {
    /// The header name.
    pub name: String,
    /// What it gives.
    pub kind: ColumnKind,
}

/// The labels of the label column: numbers are passed on as they are; names (`Yes`/`No`,
/// `Adelie`) become [`Classes`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum LabelValues {
    /// No label column.
    None,
    /// Numbers (a regression target, or classes in a numeric convention).
    Numeric,
    /// Names: the classes, sorted (for two, the later one is positive).
    Classes(Classes),
}

/// The mapping from a CSV file's columns to features (see the [module](self) documentation).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Schema {
    columns: Vec<Column>,
    has_header: bool,
    dim: usize,
    labels: LabelValues,
    rows: u64,
}

/// Texts read as a missing value: pandas' default `na_values` (`read_csv`, pandas 2: R's `NA`,
/// Excel's `#N/A`, Python's `None`, C's `-1.#IND` …) and UCI's `?`. A text that is not here
/// and not a number makes its column a string column, so a numeric column holding one
/// spreadsheet `#N/A` would silently become categorical.
pub const MISSING: [&str; 20] = [
    "", "NA", "N/A", "n/a", "NaN", "-NaN", "nan", "-nan", "null", "NULL", "None", "<NA>", "#N/A",
    "#N/A N/A", "#NA", "-1.#IND", "1.#IND", "-1.#QNAN", "1.#QNAN", "?",
];

/// True when `text` means a missing value ([`MISSING`]).
///
/// Called on every field, so a number is told apart by its first bytes before the list is
/// searched (the list alone cost a numeric CSV ~15 % more CPU at 20 markers): the only markers
/// that start like a number are `1.#IND`, `1.#QNAN` and, after a `-`, those and `NaN`/`nan`,
/// all with `#` third (fourth after the `-`) or a letter second.
pub fn is_missing(text: &str) -> bool {
    let b = text.as_bytes();
    let may_be = match b.first() {
        None => return true,
        Some(b'0'..=b'9' | b'+' | b'.') => b.get(2) == Some(&b'#'),
        Some(b'-') => b.get(3) == Some(&b'#') || b.get(1).is_some_and(u8::is_ascii_alphabetic),
        Some(_) => true,
    };
    may_be && MISSING.contains(&text)
}

/// One field of a line: its 1-based byte column and its text (quotes removed, `""` unescaped).
#[derive(Clone, Debug)]
pub(crate) struct Field {
    pub column: usize,
    pub text: String,
}

/// The error for a row of `fields` where `expected` were due: its 1-based column and kind. One
/// field too many, empty and last, is a separator at the end of the line (`1,2,3,` under a
/// 3-column header, as some exporters write): said so, at that separator.
pub(crate) fn field_count_error(
    fields: &[Field],
    expected: usize,
    separator: Separator,
) -> (usize, ParseErrorKind) {
    let found = fields.len();
    match fields.last() {
        Some(last) if found == expected + 1 && last.text.trim().is_empty() => {
            let what = trailing_separator(found, expected, separator);
            (last.column.saturating_sub(1), what)
        }
        _ => (
            fields.get(expected).map_or(0, |f| f.column),
            ParseErrorKind::WrongFieldCount { expected, found },
        ),
    }
}

/// Lines of a CSV source split into fields (blank and `#` lines skipped, BOM removed).
pub(crate) struct CsvLines<R> {
    lines: LineReader<R>,
    /// Between fields: a tab for a `.tsv` source name, else a comma.
    pub separator: Separator,
    /// The texts of the last line's fields, kept for the next line's (no allocation per field).
    spare: Vec<String>,
}

impl<R: BufRead> CsvLines<R> {
    /// Lines of `reader`, separated as its name says ([`Separator::for_path`]).
    pub fn new(reader: R, source_name: impl Into<String>) -> Self {
        let lines = LineReader::new(reader, source_name);
        CsvLines {
            separator: Separator::for_path(lines.source_name()),
            lines,
            spare: Vec::new(),
        }
    }

    /// The same lines separated by `separator` (a `--format` given), whatever the name says.
    pub fn separated_by(mut self, separator: Option<Separator>) -> Self {
        if let Some(separator) = separator {
            self.separator = separator;
        }
        self
    }

    /// An error at `column` (1-based; 0 for none) of the current line.
    pub fn error(&self, column: usize, kind: ParseErrorKind) -> ParseError {
        self.lines.error(column, kind)
    }

    /// The number of the last line read (1-based; 0 before the first read).
    pub fn line(&self) -> u64 {
        self.lines.line()
    }

    /// The name used in error messages.
    pub fn source_name(&self) -> &str {
        self.lines.source_name()
    }

    /// The next line with content, split into `fields`; `Ok(false)` at the end (also after an
    /// I/O error).
    pub fn next_fields(&mut self, fields: &mut Vec<Field>) -> Result<bool, ParseError> {
        while self.lines.next_line()? {
            let (offset, line) = self.lines.text();
            match line.iter().position(|&b| !is_blank(b)) {
                None => continue,
                Some(k) if line[k] == b'#' => continue,
                Some(_) => {}
            }
            self.spare.extend(fields.drain(..).map(|f| f.text));
            let spare = &mut self.spare;
            let result = for_each_field(line, self.separator.byte(), |pos, bytes, quoted| {
                let text = std::str::from_utf8(bytes).map_err(|e| {
                    let (k, kind) = not_utf8_at(bytes, e);
                    (pos + k, kind)
                })?;
                let mut owned = spare.pop().unwrap_or_default();
                owned.clear();
                if quoted {
                    // `""` inside quotes is one quote.
                    let mut parts = text.split("\"\"");
                    owned.push_str(parts.next().unwrap_or(""));
                    for part in parts {
                        owned.push('"');
                        owned.push_str(part);
                    }
                } else {
                    owned.push_str(text);
                }
                fields.push(Field {
                    column: pos + offset + 1,
                    text: owned,
                });
                Ok(())
            });
            return match result {
                Ok(_) => Ok(true),
                Err((pos, kind)) => Err(self.error(pos + offset + 1, kind)),
            };
        }
        Ok(false)
    }
}

/// A header's names (trimmed) made distinct as pandas' and R's `read_csv` do: a name already
/// taken gets `.1`, `.2`, … (the first free one), so `x,x` reads as `x,x.1`. Columns are matched
/// by name (a later file's, a model's), so two columns of one name would both map to the first.
pub(crate) fn distinct_names<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut taken = std::collections::HashSet::new();
    let mut out = Vec::new();
    for name in names {
        let name = name.trim();
        let mut candidate = name.to_string();
        let mut k = 0;
        while taken.contains(&candidate) {
            k += 1;
            candidate = format!("{name}.{k}");
        }
        taken.insert(candidate.clone());
        out.push(candidate);
    }
    out
}

/// The error for a first line that is one field holding `;`, a tab or a comma (another
/// separator than the one read): a file separated by them (Excel and R's `write.csv2` in
/// comma-decimal locales write `;`; `.tsv` has tabs) reads as one column, which only failed
/// later ("no label column", "expected 1 fields"). The fix names the command line's flag and
/// the Python package's `sep=` (pandas' name), whose files are read by these rules too.
pub(crate) fn other_separator(first: &[Field], read: Separator) -> Option<String> {
    let [only] = first else { return None };
    let has = |c: char| only.text.contains(c);
    let read_as = match read {
        Separator::TAB => {
            "this input is read separated by tabs (a .tsv name, --format tsv or sep='\\t')"
        }
        _ => "CSV is read separated by commas",
    };
    let (holding, name, fix) = if has(';') {
        (
            "';'",
            "semicolons",
            "convert it, e.g. with pandas: read_csv(path, sep=';').to_csv(new_path, \
             index=False), with decimal=',' when its numbers are written 1,5"
                .to_string(),
        )
    } else if has('\t') && read != Separator::TAB {
        (
            "a tab",
            "tabs",
            "give --format tsv (in Python: sep='\\t'), or name it .tsv (or .tsv.gz), to read \
             it separated by tabs"
                .into(),
        )
    } else if has(',') && read == Separator::TAB {
        (
            "','",
            "commas",
            "give --format csv (in Python: sep=','), or name it .csv, to read it separated by \
             commas"
                .into(),
        )
    } else {
        return None;
    };
    Some(format!(
        "the first line is one field holding {holding}: the file looks separated by {name}, \
         and {read_as}; {fix}"
    ))
}

fn is_number(text: &str) -> bool {
    parse_f64(text.as_bytes()).is_some_and(f64::is_finite)
}

/// Whether the first line is a header, from it and the second line.
fn detect_header(first: &[Field], second: Option<&[Field]>) -> bool {
    if first.iter().all(|f| !is_number(&f.text)) {
        return true;
    }
    second.is_some_and(|second| {
        first
            .iter()
            .zip(second)
            .any(|(a, b)| !is_number(&a.text) && !is_missing(&a.text) && is_number(&b.text))
    })
}

/// What the scan learns about one column.
#[derive(Default)]
struct ColumnStats {
    numeric: bool,
    seen: bool,
    values: BTreeSet<String>,
    too_many: bool,
    counts: ValueCounts,
}

/// The state of a scan over one or more files ([`Schema::scan_files`]).
struct Scan {
    names: Vec<String>,
    has_header: bool,
    label: Option<usize>,
    ignored: Vec<bool>,
    stats: Vec<ColumnStats>,
    /// The distinct labels (at most [`MAX_CLASSES`] + 1), each with where it first appears.
    label_first: BTreeMap<ClassLabel, FirstSeen>,
    label_numeric: bool,
    rows: u64,
    max_categories: usize,
    /// The files' names in scan order (the first for a later file's header mismatch).
    sources: Vec<String>,
}

impl Scan {
    /// Reads the first file: its header (given or detected), the label and ignored columns,
    /// and its rows.
    fn start<R: BufRead>(
        mut lines: CsvLines<R>,
        options: &CsvExampleOptions,
    ) -> Result<Scan, ParseError> {
        let source_name = lines.source_name().to_string();
        let mut first = Vec::new();
        if !lines.next_fields(&mut first)? {
            return Err(lines.error(
                0,
                ParseErrorKind::Column("no rows: the CSV input is empty".into()),
            ));
        }
        let first_line = lines.line();
        if let Some(what) = other_separator(&first, lines.separator) {
            return Err(lines.error(first[0].column, ParseErrorKind::Column(what)));
        }
        let mut second = Vec::new();
        let has_second = lines.next_fields(&mut second)?;
        let has_header = options
            .has_header
            .unwrap_or_else(|| detect_header(&first, has_second.then_some(second.as_slice())));
        let names: Vec<String> = if has_header {
            distinct_names(first.iter().map(|f| f.text.as_str()))
        } else {
            (0..first.len()).map(|k| format!("column {k}")).collect()
        };
        let resolve = |r: &ColumnRef, what: &str| -> Result<usize, ParseError> {
            let found = match r {
                ColumnRef::Index(i) => (*i < names.len()).then_some(*i),
                ColumnRef::Name(n) => names.iter().position(|c| c == n),
            };
            found.ok_or_else(|| {
                ParseError::new(
                    &source_name,
                    first_line,
                    0,
                    ParseErrorKind::Column(format!(
                        "{what} column '{r}' is not one of the {} columns: {}",
                        names.len(),
                        names.join(", ")
                    )),
                )
            })
        };
        let label = match &options.label_column {
            Some(r) => Some(resolve(r, "label")?),
            None => names.iter().position(|n| n == "label"),
        };
        let mut ignored = vec![false; names.len()];
        for r in &options.ignore_columns {
            ignored[resolve(r, "ignored")?] = true;
        }
        let stats = (0..names.len())
            .map(|_| ColumnStats {
                numeric: true,
                ..Default::default()
            })
            .collect();
        let mut scan = Scan {
            names,
            has_header,
            label,
            ignored,
            stats,
            label_first: BTreeMap::new(),
            label_numeric: true,
            rows: 0,
            max_categories: options.max_categories,
            sources: vec![source_name],
        };
        // The lines read ahead for the header detection, then the rest of the file.
        let mut queue = std::collections::VecDeque::new();
        if !has_header {
            queue.push_back((first_line, first));
        }
        if has_second {
            queue.push_back((lines.line(), second));
        }
        scan.rows_of(&mut lines, queue)?;
        Ok(scan)
    }

    /// Reads a later file: its header must be the first file's; then its rows.
    fn next_file<R: BufRead>(&mut self, mut lines: CsvLines<R>) -> Result<(), ParseError> {
        self.sources.push(lines.source_name().to_string());
        let mut first = Vec::new();
        if !lines.next_fields(&mut first)? {
            return Ok(());
        }
        // One field holding another separator, where the columns are several: an error
        // anyway (header or field count), said as the first file's would be.
        if let Some(what) =
            other_separator(&first, lines.separator).filter(|_| self.names.len() > 1)
        {
            return Err(lines.error(first[0].column, ParseErrorKind::Column(what)));
        }
        let mut queue = std::collections::VecDeque::new();
        if self.has_header {
            let found = distinct_names(first.iter().map(|f| f.text.as_str()));
            if found != self.names {
                let what = format!(
                    "the header differs from that of {} (files read as one input share their \
                     columns): expected {}, found {}",
                    self.sources[0],
                    self.names.join(","),
                    found.join(",")
                );
                return Err(lines.error(1, ParseErrorKind::Column(what)));
            }
        } else {
            queue.push_back((lines.line(), first));
        }
        self.rows_of(&mut lines, queue)
    }

    /// Adds the rows of `queue` (lines already read), then the rest of `lines`.
    fn rows_of<R: BufRead>(
        &mut self,
        lines: &mut CsvLines<R>,
        mut queue: std::collections::VecDeque<(u64, Vec<Field>)>,
    ) -> Result<(), ParseError> {
        let source_name = lines.source_name().to_string();
        let names = &self.names;
        let mut fields = Vec::new();
        loop {
            let line = match queue.pop_front() {
                Some((line, f)) => {
                    fields = f;
                    line
                }
                None if lines.next_fields(&mut fields)? => lines.line(),
                None => break,
            };
            let at = |column: usize, kind| ParseError::new(&source_name, line, column, kind);
            if fields.len() != names.len() {
                let (column, kind) = field_count_error(&fields, names.len(), lines.separator);
                return Err(at(column, kind));
            }
            for (k, f) in fields.iter().enumerate() {
                let text = f.text.trim();
                if Some(k) == self.label {
                    let Some(l) = ClassLabel::parse(text).filter(|_| !is_missing(text)) else {
                        let what = format!(
                            "missing label in column '{}' (rows to learn from need one: drop \
                             this row, or give another --label-column)",
                            names[k]
                        );
                        return Err(at(f.column, ParseErrorKind::Column(what)));
                    };
                    self.label_numeric &= matches!(l, ClassLabel::Number(_));
                    if self.label_first.len() <= MAX_CLASSES {
                        let file = self.sources.len() - 1;
                        self.label_first.entry(l).or_insert((file, line, f.column));
                    }
                    continue;
                }
                if self.ignored[k] || is_missing(text) {
                    continue;
                }
                check_finite(text).map_err(|kind| at(f.column, kind))?;
                let s = &mut self.stats[k];
                s.seen = true;
                let number = is_number(text);
                s.numeric &= number;
                s.counts.add(text, number, || At {
                    source: source_name.clone(),
                    line,
                    column: f.column,
                });
                if !s.too_many {
                    s.values.insert(text.to_string());
                    if s.values.len() > self.max_categories {
                        s.too_many = true;
                        s.values.clear();
                    }
                }
            }
            self.rows += 1;
        }
        Ok(())
    }

    /// The columns of numbers with other values among them, in file order: the first one
    /// refused as an error, else those to warn about ([`super::mixed_column`]).
    fn mixed_columns(&self) -> Result<Vec<MixedColumn>, ParseError> {
        let mut warnings = Vec::new();
        for (name, s) in self.names.iter().zip(&self.stats) {
            match s.counts.mixed(name, s.too_many) {
                Some(m) if m.is_refused() => return Err(m.error()),
                Some(m) => warnings.push(m),
                None => {}
            }
        }
        Ok(warnings)
    }

    /// The schema, the distinct labels and the columns to warn about; an error for a column
    /// of numbers with strays.
    fn finish(self, options: &CsvExampleOptions) -> Result<FilesScan, ParseError> {
        let mixed = self.mixed_columns()?;
        let labels: Vec<ClassLabel> = self.label_first.keys().cloned().collect();
        let case_twins = self
            .label
            .and_then(|k| CaseTwins::find(&self.names[k], &self.label_first, &self.sources));
        let schema = Schema::build(
            self.names,
            self.has_header,
            self.label,
            &self.ignored,
            self.stats,
            labels.iter().cloned().collect(),
            self.label_numeric,
            options,
            self.rows,
        );
        Ok(FilesScan {
            schema,
            labels,
            mixed,
            case_twins,
        })
    }
}

/// What a scan of one or more CSV files gives ([`Schema::scan_files_separated`]).
#[derive(Clone, Debug)]
pub struct FilesScan {
    /// The files' schema.
    pub schema: Schema,
    /// The distinct labels found (at most [`MAX_CLASSES`] + 1, in increasing order; none
    /// without a label column).
    pub labels: Vec<ClassLabel>,
    /// The columns of numbers read as strings, to warn about ([`MixedColumn`]).
    pub mixed: Vec<MixedColumn>,
    /// The first two labels that differ only by case, each where it first appears
    /// ([`CaseTwins`]), to warn about when the classes are the labels found.
    pub case_twins: Option<CaseTwins>,
}

impl Schema {
    /// Reads the whole input once and returns its schema (see the [module](self) documentation).
    ///
    /// Errors (with `file:line:column`): rows with a different number of fields, an unterminated
    /// quote, text that is not UTF-8, a label column or ignored column that does not exist, a
    /// missing label, infinite numbers, a column of numbers with a stray value that is not one
    /// ([`MixedColumn::is_refused`]).
    pub fn scan<R: BufRead>(
        reader: R,
        source_name: &str,
        options: &CsvExampleOptions,
    ) -> Result<Schema, ParseError> {
        Self::scan_with_warnings(reader, source_name, options).map(|(schema, _)| schema)
    }

    /// [`scan`](Self::scan), and the columns of numbers read as strings because some of their
    /// values are not numbers, to warn about ([`MixedColumn`]: a run gives them to its
    /// observer).
    pub fn scan_with_warnings<R: BufRead>(
        reader: R,
        source_name: &str,
        options: &CsvExampleOptions,
    ) -> Result<(Schema, Vec<MixedColumn>), ParseError> {
        Self::scan_separated(reader, source_name, None, options)
    }

    /// [`scan_with_warnings`](Self::scan_with_warnings) with the fields separated by
    /// `separator` (`None`: as the name says, [`Separator::for_path`]): a stream or a file
    /// whose name does not tell (`--format tsv`).
    pub fn scan_separated<R: BufRead>(
        reader: R,
        source_name: &str,
        separator: Option<Separator>,
        options: &CsvExampleOptions,
    ) -> Result<(Schema, Vec<MixedColumn>), ParseError> {
        let once = std::iter::once(Ok((reader, source_name.to_string())));
        Self::scan_all(once, separator, options).map(|found| (found.schema, found.mixed))
    }

    /// The schema of several CSV files read as one input, in order (the shards of a data set,
    /// each read by its own worker: `sketchlearn.dask`), and the distinct labels found (at
    /// most [`MAX_CLASSES`] + 1, in increasing order; none without a label column). Every file
    /// is scanned whole, so a category seen in any file is one-hot in all of them and a
    /// column is numeric only if it is numeric in every file — the schema of the files
    /// concatenated, each file read as its own lines. The first file decides the header (as
    /// [`scan`](Self::scan)); when it has one, every later file must start with the same
    /// header (an error at that file's first line otherwise); without one, every line of
    /// every file is a row. An empty later file gives no rows; an empty first file is an
    /// error. A column of numbers with strays is an error as in [`scan`](Self::scan).
    pub fn scan_files<R: BufRead>(
        sources: impl IntoIterator<Item = Result<(R, String), ParseError>>,
        options: &CsvExampleOptions,
    ) -> Result<(Schema, Vec<ClassLabel>), ParseError> {
        Self::scan_all(sources, None, options).map(|found| (found.schema, found.labels))
    }

    /// [`scan_files`](Self::scan_files) with every file's fields separated by `separator`
    /// (`None`: each as its name says, [`Separator::for_path`]), and what to warn about, once
    /// for all the files ([`FilesScan`]): the columns of numbers read as strings because some of
    /// their values are not numbers ([`MixedColumn`], as
    /// [`scan_with_warnings`](Self::scan_with_warnings)), and the labels that differ only by
    /// case with where each first appears.
    pub fn scan_files_separated<R: BufRead>(
        sources: impl IntoIterator<Item = Result<(R, String), ParseError>>,
        separator: Option<Separator>,
        options: &CsvExampleOptions,
    ) -> Result<FilesScan, ParseError> {
        Self::scan_all(sources, separator, options)
    }

    fn scan_all<R: BufRead>(
        sources: impl IntoIterator<Item = Result<(R, String), ParseError>>,
        separator: Option<Separator>,
        options: &CsvExampleOptions,
    ) -> Result<FilesScan, ParseError> {
        let mut sources = sources.into_iter();
        let Some(first) = sources.next() else {
            let kind = ParseErrorKind::Column("no CSV files to scan".into());
            return Err(ParseError::new("CSV input", 0, 0, kind));
        };
        let (reader, name) = first?;
        let lines = |reader, name: &str| CsvLines::new(reader, name).separated_by(separator);
        let mut scan = Scan::start(lines(reader, name.as_str()), options)?;
        for source in sources {
            let (reader, name) = source?;
            scan.next_file(lines(reader, name.as_str()))?;
        }
        scan.finish(options)
    }

    #[allow(clippy::too_many_arguments)]
    fn build(
        names: Vec<String>,
        has_header: bool,
        label: Option<usize>,
        ignored: &[bool],
        stats: Vec<ColumnStats>,
        label_set: BTreeSet<ClassLabel>,
        label_numeric: bool,
        options: &CsvExampleOptions,
        rows: u64,
    ) -> Schema {
        let mut next = stats
            .iter()
            .enumerate()
            .filter(|(k, s)| Some(*k) != label && !ignored[*k] && s.seen && s.numeric)
            .count() as u32;
        let mut numeric_index = 0u32;
        let mut columns = Vec::with_capacity(names.len());
        for (k, (name, s)) in names.into_iter().zip(stats).enumerate() {
            let kind = if Some(k) == label {
                ColumnKind::Label
            } else if ignored[k] || !s.seen {
                ColumnKind::Ignored
            } else if s.numeric {
                numeric_index += 1;
                ColumnKind::Numeric {
                    index: numeric_index - 1,
                }
            } else if s.too_many {
                let base = next;
                next += 1 << options.hash_bits;
                ColumnKind::Hashed {
                    base,
                    bits: options.hash_bits,
                }
            } else {
                let base = next;
                next += s.values.len() as u32;
                ColumnKind::Categorical {
                    base,
                    values: s.values.into_iter().collect(),
                }
            };
            columns.push(Column { name, kind });
        }
        let labels = match label {
            None => LabelValues::None,
            Some(_) if label_numeric => LabelValues::Numeric,
            Some(_) => match Classes::from_observed(label_set) {
                Ok(c) => LabelValues::Classes(c),
                Err(_) => LabelValues::Numeric,
            },
        };
        Schema {
            columns,
            has_header,
            dim: next as usize,
            labels,
            rows,
        }
    }

    /// The number of features (the learner's dimension, before any intercept).
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The columns, in file order.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// Whether the scanned file had a header.
    pub fn has_header(&self) -> bool {
        self.has_header
    }

    /// The position of the label column, if any.
    pub fn label_column(&self) -> Option<usize> {
        self.columns
            .iter()
            .position(|c| c.kind == ColumnKind::Label)
    }

    /// The label values found by the scan.
    pub fn labels(&self) -> &LabelValues {
        &self.labels
    }

    /// The classes when the labels are names (`Yes`/`No`), else `None`.
    pub fn classes(&self) -> Option<&Classes> {
        match &self.labels {
            LabelValues::Classes(c) => Some(c),
            _ => None,
        }
    }

    /// The number of data rows of the scanned file.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// The name of feature `index`: `column` (numeric), `column=value` (one-hot), `column=#h`
    /// (hashed bucket `h`); `None` beyond the dimension.
    pub fn feature_name(&self, index: usize) -> Option<String> {
        let i = u32::try_from(index).ok()?;
        self.columns.iter().find_map(|c| match &c.kind {
            ColumnKind::Numeric { index } if *index == i => Some(c.name.clone()),
            ColumnKind::Categorical { base, values }
                if i >= *base && ((i - base) as usize) < values.len() =>
            {
                Some(format!("{}={}", c.name, values[(i - base) as usize]))
            }
            ColumnKind::Hashed { base, bits }
                if i >= *base && u64::from(i - base) < 1u64 << bits =>
            {
                Some(format!("{}=#{}", c.name, i - base))
            }
            _ => None,
        })
    }

    /// The feature of `text` in column `column` (`None`: missing, or a category not in the
    /// schema); `Err` with a message when a numeric column holds text.
    pub(crate) fn feature(&self, column: usize, text: &str) -> Result<Option<(u32, f64)>, String> {
        if is_missing(text) {
            return Ok(None);
        }
        let c = &self.columns[column];
        Ok(match &c.kind {
            ColumnKind::Label | ColumnKind::Ignored => None,
            ColumnKind::Numeric { index } => match parse_f64(text.as_bytes()) {
                Some(x) if x.is_finite() => Some((*index, x)),
                _ => {
                    return Err(format!(
                        "column '{}' is numeric, found {text:?} (missing values are written as empty, NA or NaN)",
                        c.name
                    ))
                }
            },
            ColumnKind::Categorical { base, values } => values
                .binary_search_by(|v| v.as_str().cmp(text))
                .ok()
                .map(|k| (base + k as u32, 1.0)),
            ColumnKind::Hashed { base, bits } => {
                let h = murmur3_x86_32(format!("{}={text}", c.name).as_bytes(), 0);
                let mask = if *bits >= 32 { u32::MAX } else { (1u32 << bits) - 1 };
                Some((base + (h & mask), 1.0))
            }
        })
    }

    /// Whether `text` in column `column` is a value of a one-hot column that the scan never saw
    /// (it gives no feature: [`feature`](Self::feature)).
    pub(crate) fn is_unseen(&self, column: usize, text: &str) -> bool {
        match &self.columns[column].kind {
            ColumnKind::Categorical { values, .. } => {
                !is_missing(text) && values.binary_search_by(|v| v.as_str().cmp(text)).is_err()
            }
            _ => false,
        }
    }

    /// The column named `name`.
    pub(crate) fn position(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }

    /// Checks a schema that was not made by [`Schema::scan`] here (a cache's header): every
    /// column's features lie below the dimension (which fits a `u32` index), one-hot values are
    /// sorted and distinct, and there is a label column exactly when there are label values.
    /// What was read through it is then as bounded as from a scan.
    pub(crate) fn check(&self) -> Result<(), String> {
        let dim = u64::try_from(self.dim).unwrap_or(u64::MAX);
        if dim > u64::from(u32::MAX) {
            return Err(format!("dimension {dim} beyond a 32-bit feature index"));
        }
        let labels = self
            .columns
            .iter()
            .filter(|c| c.kind == ColumnKind::Label)
            .count();
        if labels > 1 || (labels == 1) == (self.labels == LabelValues::None) {
            return Err("its label column does not agree with its labels".into());
        }
        for c in &self.columns {
            let end = match &c.kind {
                ColumnKind::Label | ColumnKind::Ignored => 0,
                ColumnKind::Numeric { index } => u64::from(*index) + 1,
                ColumnKind::Categorical { base, values } => {
                    if values.windows(2).any(|w| w[0] >= w[1]) {
                        return Err(format!("column '{}': its values are not sorted", c.name));
                    }
                    u64::from(*base) + values.len() as u64
                }
                ColumnKind::Hashed { base, bits } => u64::from(*base) + (1u64 << (*bits).min(32)),
            };
            if end > dim {
                return Err(format!(
                    "column '{}' has features beyond the dimension {dim}",
                    c.name
                ));
            }
        }
        Ok(())
    }

    /// Feature counts per kind, for summaries: (numeric, one-hot columns, hashed columns).
    pub fn kind_counts(&self) -> (usize, usize, usize) {
        let mut counts = BTreeMap::new();
        for c in &self.columns {
            let k = match c.kind {
                ColumnKind::Numeric { .. } => 0,
                ColumnKind::Categorical { .. } => 1,
                ColumnKind::Hashed { .. } => 2,
                _ => 3,
            };
            *counts.entry(k).or_insert(0usize) += 1;
        }
        let get = |k| counts.get(&k).copied().unwrap_or(0);
        (get(0), get(1), get(2))
    }
}

/// Infinite numbers (`inf`, `1e999`) are an error, not a category.
fn check_finite(text: &str) -> Result<(), ParseErrorKind> {
    match parse_f64(text.as_bytes()) {
        Some(x) if !x.is_finite() => Err(ParseErrorKind::NonFiniteValue(text.to_string())),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast path of [`is_missing`] keeps every marker of [`MISSING`], and takes no number
    /// (nor a text that only starts like a marker) for one.
    #[test]
    fn every_missing_marker_is_missing_and_no_number_is() {
        for marker in MISSING {
            assert!(is_missing(marker), "{marker:?}");
        }
        for text in [
            "0", "1", "-1", "+5", ".5", "-.5", "1e-3", "-1.5", "12.#", "1.#INDX", "-1.#I", "-n",
            "-Inf", "None1", "NA ", "inf", "-2.0#",
        ] {
            assert!(!is_missing(text), "{text:?}");
        }
    }

    /// A scanned schema passes [`Schema::check`]; one whose features reach past its dimension,
    /// whose one-hot values are out of order, or whose label column disagrees with its labels
    /// does not.
    #[test]
    fn check_refuses_inconsistent_schemas() {
        let text = "y,c,x,h\nYes,a,1,p\nNo,b,2,q\nYes,a,,r\n";
        let options = CsvExampleOptions {
            label_column: Some("y".parse().unwrap()),
            max_categories: 2,
            hash_bits: 3,
            ..CsvExampleOptions::default()
        };
        let good = Schema::scan(std::io::Cursor::new(text), "t.csv", &options).unwrap();
        assert_eq!(good.check(), Ok(()));
        assert!(matches!(good.columns[3].kind, ColumnKind::Hashed { .. }));
        let broken = |change: &dyn Fn(&mut Schema)| {
            let mut s = good.clone();
            change(&mut s);
            s.check().unwrap_err()
        };
        let e = broken(&|s| s.dim -= 1);
        assert!(e.contains("beyond the dimension"), "{e}");
        let e = broken(&|s| s.dim = usize::MAX);
        assert!(e.contains("32-bit"), "{e}");
        let e = broken(&|s| s.columns[3].kind = ColumnKind::Hashed { base: 3, bits: 40 });
        assert!(e.contains("beyond the dimension"), "{e}");
        let e = broken(&|s| {
            if let ColumnKind::Categorical { values, .. } = &mut s.columns[1].kind {
                values.reverse();
            }
        });
        assert!(e.contains("not sorted"), "{e}");
        let e = broken(&|s| s.labels = LabelValues::None);
        assert!(e.contains("label column"), "{e}");
    }
}
