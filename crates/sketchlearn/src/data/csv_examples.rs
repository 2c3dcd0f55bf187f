//! [`CsvExampleReader`]: the rows of a CSV file as [`Example`]s, through a [`Schema`].

use super::csv_schema::{
    distinct_names, field_count_error, is_missing, other_separator, CsvLines, Field, Schema,
};
use super::error::{ParseError, ParseErrorKind};
use super::labeled::LabelField;
use super::read_ahead::ExampleSource;
use super::source::{open_input, source_name};
use super::unseen_categories::{other_format_hint, sparse_text, UnseenTally};
use super::Example;
use crate::labels::ClassLabel;
use std::io::BufRead;

/// Streams the rows of a CSV file as [`Example`]s with the features of a [`Schema`].
///
/// The file may be the scanned one, or another with the same columns — with a header, in any
/// order and without the label column (rows to score); without a header, with all the
/// schema's columns or all but the label. The label of each row is kept as written, with its
/// column ([`last_label`](Self::last_label), [`ExampleSource::label_field`]): the reader maps
/// no label — a run's one label map does ([`LabelMap`](super::LabelMap) in
/// [`Labeled`](super::Labeled)), as for every format. [`Example::label`] is the label when it
/// is a number, NaN when it is a name; rows without a label column get label 0.
///
/// ```
/// use sketchlearn::data::{ColumnRef, CsvExampleOptions, CsvExampleReader, ExampleSource, Schema};
/// use sketchlearn::Example;
/// use std::io::Cursor;
/// let text = "Attrition,Age,Dept\nYes,41,Sales\nNo,NA,R&D\n";
/// let options = CsvExampleOptions { label_column: Some("Attrition".parse().unwrap()), ..Default::default() };
/// let schema = Schema::scan(Cursor::new(text), "a.csv", &options)?;
/// let mut reader = CsvExampleReader::new(Cursor::new(text), "a.csv", schema.clone());
/// let mut ex = Example::default();
/// assert!(reader.read_into(&mut ex)?);
/// assert_eq!((ex.indices.clone(), ex.values.clone()), (vec![0, 2], vec![41.0, 1.0]));
/// assert_eq!(reader.last_label().unwrap().to_string(), "Yes");
/// assert!(ex.label.is_nan()); // a name: the label map reads it from `last_label`
/// assert!(reader.read_into(&mut ex)?);
/// assert_eq!(ex.indices, [1]); // Age missing, Dept=R&D
/// assert_eq!(reader.label_field().unwrap().column, 1);
///
/// // Rows to score: no label column, other column order.
/// let mut unlabeled = CsvExampleReader::new(Cursor::new("Dept,Age\nSales,30\n"), "new.csv", schema);
/// assert!(unlabeled.read_into(&mut ex)?);
/// assert_eq!((ex.indices.clone(), ex.values.clone()), (vec![0, 2], vec![30.0, 1.0]));
/// assert!(unlabeled.last_label().is_none());
/// # Ok::<(), sketchlearn::ParseError>(())
/// ```
pub struct CsvExampleReader<R> {
    lines: CsvLines<R>,
    schema: Schema,
    fields: Vec<Field>,
    /// File column → schema column (`None` until the first line is read).
    map: Option<Vec<usize>>,
    label: Option<LabelField>,
    /// The row's features before sorting (reused from row to row).
    pairs: Vec<(u32, f64)>,
    /// The one-hot columns whose value was unseen in the last row (reused from row to row).
    unseen: Vec<usize>,
    /// The values unseen in training met so far ([`unseen_categories`](Self::unseen_categories)).
    tally: UnseenTally,
    /// Whether the file's first line was a row (not a header) that is yet to be read.
    first_line_is_row: bool,
}

impl CsvExampleReader<Box<dyn BufRead + Send>> {
    /// Opens `path` (`-` = standard input; gzip detected) for reading with `schema`.
    pub fn open(path: &str, schema: Schema) -> Result<Self, ParseError> {
        Ok(CsvExampleReader::new(
            open_input(path)?,
            source_name(path),
            schema,
        ))
    }
}

impl<R: BufRead> CsvExampleReader<R> {
    /// A reader of `reader` (`source_name` names it in errors).
    pub fn new(reader: R, source_name: impl Into<String>, schema: Schema) -> Self {
        let lines = CsvLines::new(reader, source_name);
        let tally = UnseenTally::new(lines.source_name(), model_columns(&schema));
        CsvExampleReader {
            lines,
            schema,
            fields: Vec::new(),
            map: None,
            label: None,
            pairs: Vec::new(),
            unseen: Vec::new(),
            tally,
            first_line_is_row: false,
        }
    }

    /// The same reader with the fields separated by `separator` (`None`: as the name says,
    /// [`Separator::for_path`](super::Separator::for_path)): a stream, or a file whose name does
    /// not tell (`--format tsv`). A schema found in a CSV file reads a TSV file and back.
    pub fn separated_by(mut self, separator: Option<super::Separator>) -> Self {
        self.lines = self.lines.separated_by(separator);
        self
    }

    /// The values unseen in training this reader meets, shared (read it once the rows are read:
    /// [`UnseenTally::report`]; see [`UnseenCategories`](super::UnseenCategories)).
    pub fn unseen_categories(&self) -> UnseenTally {
        self.tally.clone()
    }

    /// The schema.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// The label of the last row read, as written (`None` when the file has no label column).
    pub fn last_label(&self) -> Option<&ClassLabel> {
        self.label.as_ref().map(|f| &f.label)
    }

    /// The source's name in error messages.
    pub fn source_name(&self) -> &str {
        self.lines.source_name()
    }

    /// Maps the file's columns from its first line; `Ok(true)` when that line is a header.
    ///
    /// A first line that cannot be mapped and reads as one field of LIBSVM or VW text gets an
    /// error that says so (a CSV model reads any file as CSV), and one field holding another
    /// separator the error that names the option reading it ([`other_separator`], as the
    /// scan's): only in place of an error, so no valid CSV line is refused for its looks.
    fn map_columns(&mut self) -> Result<bool, ParseError> {
        let mapped = self.match_columns();
        let (Err(_), [only]) = (&mapped, &self.fields[..]) else {
            return mapped;
        };
        if let Some(format) = sparse_text(&only.text) {
            return Err(self.other_format(only.column, format));
        }
        match other_separator(&self.fields, self.lines.separator) {
            Some(what) => Err(self.lines.error(only.column, ParseErrorKind::Column(what))),
            None => mapped,
        }
    }

    /// The error at `column` of the current line, which reads as `format` text.
    fn other_format(&self, column: usize, format: &str) -> ParseError {
        let hint = other_format_hint(format, &model_columns(&self.schema));
        let what = format!("this line {hint}");
        self.lines.error(column, ParseErrorKind::Column(what))
    }

    /// [`map_columns`](Self::map_columns) without the LIBSVM/VW diagnosis.
    fn match_columns(&mut self) -> Result<bool, ParseError> {
        let columns = self.schema.columns();
        let names: Vec<Option<usize>> = distinct_names(self.fields.iter().map(|f| f.text.as_str()))
            .iter()
            .map(|name| self.schema.position(name))
            .collect();
        let header = self.schema.has_header() && names.iter().all(Option::is_some);
        if header {
            self.map = Some(names.into_iter().map(|k| k.expect("checked")).collect());
            return Ok(true);
        }
        if self.schema.has_header() && self.fields.iter().all(|f| f.text.parse::<f64>().is_err()) {
            let unknown = self
                .fields
                .iter()
                .zip(&names)
                .find(|(_, k)| k.is_none())
                .map(|(f, _)| f);
            if let Some(f) = unknown {
                return Err(self.lines.error(
                    f.column,
                    ParseErrorKind::Column(format!(
                        "column '{}' is not in the model's schema: the model was trained on a \
                         CSV with a header, so a first line of text only is read as the file's \
                         header, and it must be a header naming the model's columns ({}); a \
                         file without a header needs that header added as its first line",
                        f.text.trim(),
                        a_few_columns(&self.schema)
                    )),
                ));
            }
        }
        let all: Vec<usize> = (0..columns.len()).collect();
        let label = self.schema.label_column();
        let map = if self.fields.len() == columns.len() {
            all
        } else if label.is_some() && self.fields.len() + 1 == columns.len() {
            all.into_iter().filter(|&k| Some(k) != label).collect()
        } else {
            return Err(self.lines.error(
                0,
                ParseErrorKind::WrongFieldCount {
                    expected: columns.len() - usize::from(label.is_some()),
                    found: self.fields.len(),
                },
            ));
        };
        self.map = Some(map);
        Ok(false)
    }

    /// Reads the next row into `ex`; `Ok(false)` at the end.
    pub fn read_into(&mut self, ex: &mut Example) -> Result<bool, ParseError> {
        loop {
            if !self.lines.next_fields(&mut self.fields)? {
                return Ok(false);
            }
            if self.map.is_none() {
                if self.map_columns()? {
                    continue;
                }
                self.first_line_is_row = true;
            }
            let filled = self.fill(ex);
            let first_line = std::mem::take(&mut self.first_line_is_row);
            if first_line || filled.is_err() {
                self.refuse_other_format(filled.is_err(), first_line)?;
            }
            filled?;
            self.count_unseen();
            return Ok(true);
        }
    }

    fn fill(&mut self, ex: &mut Example) -> Result<(), ParseError> {
        let map = self.map.as_ref().expect("mapped");
        if self.fields.len() != map.len() {
            let (column, kind) = field_count_error(&self.fields, map.len(), self.lines.separator);
            return Err(self.lines.error(column, kind));
        }
        ex.clear();
        self.label = None;
        self.unseen.clear();
        let label_column = self.schema.label_column();
        let pairs = &mut self.pairs;
        pairs.clear();
        for (f, &k) in self.fields.iter().zip(map) {
            let text = f.text.trim();
            if Some(k) == label_column {
                let at = |m: String| self.lines.error(f.column, ParseErrorKind::Column(m));
                let name = &self.schema.columns()[k].name;
                let Some(l) = ClassLabel::parse(text).filter(|_| !is_missing(text)) else {
                    return Err(at(format!(
                        "missing label in column '{name}' (rows to learn from need one: drop this \
                         row, or give another --label-column)"
                    )));
                };
                ex.label = match l {
                    ClassLabel::Number(x) => x,
                    ClassLabel::Text(_) => f64::NAN,
                };
                self.label = Some(LabelField {
                    label: l,
                    column: f.column,
                });
                continue;
            }
            match self.schema.feature(k, text) {
                Ok(Some(p)) => pairs.push(p),
                Ok(None) if self.schema.is_unseen(k, text) => self.unseen.push(k),
                Ok(None) => {}
                Err(m) => return Err(self.lines.error(f.column, ParseErrorKind::Column(m))),
            }
        }
        pairs.sort_unstable_by_key(|p| p.0);
        for &(i, x) in pairs.iter() {
            if ex.indices.last() == Some(&i) {
                // Two hashed values in one bucket: add them.
                *ex.values.last_mut().expect("same length") += x;
            } else {
                ex.indices.push(i);
                ex.values.push(x);
            }
        }
        Ok(())
    }
}

impl<R: BufRead> CsvExampleReader<R> {
    /// A row that is one field reading as LIBSVM or VW text is refused as that format's text
    /// when it could not be read (`failed`: the error names the format in place of the field's,
    /// e.g. "column 'x' is numeric", on any line), or when it is the file's first line
    /// (`first_line`, no header before it) and holds a value unseen in training: a file in
    /// another format, whose every row would be scored as the intercept alone. A known value is
    /// read, whatever its looks, and so is an unseen one after the first line.
    fn refuse_other_format(&self, failed: bool, first_line: bool) -> Result<(), ParseError> {
        let [only] = &self.fields[..] else {
            return Ok(());
        };
        match sparse_text(&only.text) {
            Some(format) if failed || (first_line && !self.unseen.is_empty()) => {
                Err(self.other_format(only.column, format))
            }
            _ => Ok(()),
        }
    }

    /// Adds the last row's unseen values to the tally.
    fn count_unseen(&self) {
        let Some(&k) = self.unseen.first() else {
            return;
        };
        let columns = self.schema.columns();
        let names: Vec<&str> = self
            .unseen
            .iter()
            .map(|&c| columns[c].name.as_str())
            .collect();
        let map = self.map.as_ref().expect("mapped");
        let value = map
            .iter()
            .position(|&c| c == k)
            .map_or("", |f| self.fields[f].text.trim());
        let line = self.lines.line();
        let one_field = self.fields.len() == 1;
        self.tally
            .update(|t| t.add_row(line, &names, value, one_field));
    }
}

/// The schema's column names, comma separated (for messages).
/// The model's first few column names, and how many there are when that is not all of them.
fn a_few_columns(schema: &Schema) -> String {
    const FEW: usize = 5;
    let columns = schema.columns();
    let names: Vec<&str> = columns.iter().take(FEW).map(|c| c.name.as_str()).collect();
    match columns.len() {
        n if n > FEW => format!("{}, … {n} in all", names.join(", ")),
        _ => names.join(", "),
    }
}

fn model_columns(schema: &Schema) -> String {
    let names: Vec<&str> = schema.columns().iter().map(|c| c.name.as_str()).collect();
    names.join(", ")
}

impl<R: BufRead> ExampleSource for CsvExampleReader<R> {
    type Error = ParseError;
    fn read_into(&mut self, ex: &mut Example) -> Result<bool, ParseError> {
        CsvExampleReader::read_into(self, ex)
    }
    fn line(&self) -> u64 {
        self.lines.line()
    }
    fn label_field(&self) -> Option<&LabelField> {
        self.label.as_ref()
    }
}
