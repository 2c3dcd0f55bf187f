//! Values a model never saw, met when it scores a file: [`UnseenCategories`], the rows of a CSV
//! file read through a model's [`Schema`](super::Schema) whose string value in a one-hot column
//! was not among the values the schema was scanned with, and [`beyond_dimension`], a LIBSVM or VW
//! feature beyond the model's dimension.
//!
//! The policy is the same for both (and the same in `predict` and `test`): such a value counts as
//! missing — it sets no feature, as a feature the model never saw has weight 0 — and one warning
//! says so, naming the first line. A warning and not an error, because new data has new values (a
//! held-out split of text has words its training split never saw); a warning and not silence,
//! because a file in another format than the model's gives nothing *but* unseen values: a LIBSVM
//! line read as CSV through a label and one string column is one field, one unseen category, and
//! would be scored as the intercept alone. Such a line is named as that format
//! ([`other_format_hint`]); when it is a file's first line, the reader refuses it instead
//! ([`CsvExampleReader`](super::CsvExampleReader)).

use std::fmt;
use std::sync::{Arc, Mutex};

/// The first row that held an unseen value.
#[derive(Clone, Debug, PartialEq)]
pub struct FirstUnseen {
    /// Its 1-based line.
    pub line: u64,
    /// The column (the first of the row with an unseen value).
    pub column: String,
    /// The value, as written.
    pub value: String,
    /// `Some("LIBSVM")` or `Some("VW")` when the row was one field that reads as that format's
    /// text.
    pub looks_like: Option<&'static str>,
}

/// What a CSV reader met of values unseen in training (see the [module](self) documentation).
///
/// ```
/// use sketchlearn::data::{ColumnRef, CsvExampleOptions, CsvExampleReader, Schema};
/// use sketchlearn::Example;
/// use std::io::Cursor;
/// let options = CsvExampleOptions { label_column: Some(ColumnRef::Name("y".into())), ..Default::default() };
/// let schema = Schema::scan(Cursor::new("y,color\n1,red\n0,blue\n"), "t.csv", &options)?;
/// let rows = "color\nred\npurple\npink\n";
/// let mut reader = CsvExampleReader::new(Cursor::new(rows), "new.csv", schema);
/// let tally = reader.unseen_categories();
/// let mut ex = Example::default();
/// while reader.read_into(&mut ex)? {}
/// let unseen = tally.report(3).unwrap();
/// assert_eq!((unseen.rows, unseen.first.as_ref().unwrap().line), (2, 3));
/// assert_eq!(unseen.columns, [("color".to_string(), 2)]);
/// assert!(unseen.to_string().starts_with("new.csv: 2 of the 3 rows have a value unseen in training"));
/// # Ok::<(), sketchlearn::ParseError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UnseenCategories {
    /// The file's name in messages.
    pub source: String,
    /// The rows read (given by [`UnseenTally::report`]).
    pub examples: u64,
    /// The rows with at least one unseen value.
    pub rows: u64,
    /// Per column with unseen values, in the order first met: its name and its rows with one.
    pub columns: Vec<(String, u64)>,
    /// The first such row.
    pub first: Option<FirstUnseen>,
    /// The model's columns, comma separated (for [`other_format_hint`]).
    pub model_columns: String,
}

impl UnseenCategories {
    /// Counts a row whose values in `columns` (names) were unseen; `value` is the first one's.
    pub(crate) fn add_row(&mut self, line: u64, columns: &[&str], value: &str, one_field: bool) {
        self.rows += 1;
        for &name in columns {
            match self.columns.iter_mut().find(|(c, _)| c == name) {
                Some((_, n)) => *n += 1,
                None => self.columns.push((name.to_string(), 1)),
            }
        }
        if self.first.is_none() {
            self.first = Some(FirstUnseen {
                line,
                column: columns.first().map_or_else(String::new, |c| c.to_string()),
                value: value.to_string(),
                looks_like: one_field.then(|| sparse_text(value)).flatten(),
            });
        }
    }
}

impl fmt::Display for UnseenCategories {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (rows, examples) = (self.rows, self.examples);
        write!(
            f,
            "{}: {rows} of the {examples} rows have a value unseen in training in ",
            self.source
        )?;
        let columns: Vec<String> = match &self.columns[..] {
            [(name, _)] => vec![format!("column '{name}'")],
            many => many
                .iter()
                .map(|(c, n)| format!("'{c}' ({n} rows)"))
                .collect(),
        };
        if self.columns.len() > 1 {
            f.write_str("the columns ")?;
        }
        f.write_str(&columns.join(", "))?;
        if let Some(first) = &self.first {
            write!(f, " (the first at line {}: {:?})", first.line, first.value)?;
        }
        f.write_str(
            ": such a value counts as missing (it sets none of its column's one-hot features)",
        )?;
        if let Some(format) = self.first.as_ref().and_then(|first| first.looks_like) {
            write!(
                f,
                "; that line {}",
                other_format_hint(format, &self.model_columns)
            )?;
        }
        Ok(())
    }
}

/// The unseen values a reader met, shared with whoever reports them (the reader may run on
/// another thread: [`ReadAhead`](super::ReadAhead)). It is touched only on a row with an unseen
/// value, so reading known values costs nothing more.
#[derive(Clone, Debug, Default)]
pub struct UnseenTally(Arc<Mutex<UnseenCategories>>);

impl UnseenTally {
    /// A tally for `source`, read through a schema of `model_columns`.
    pub(crate) fn new(source: &str, model_columns: String) -> Self {
        UnseenTally(Arc::new(Mutex::new(UnseenCategories {
            source: source.to_string(),
            model_columns,
            ..UnseenCategories::default()
        })))
    }

    /// Runs `change` on the tally.
    pub(crate) fn update(&self, change: impl FnOnce(&mut UnseenCategories)) {
        change(&mut self.0.lock().unwrap_or_else(|e| e.into_inner()));
    }

    /// What was met, once `examples` rows were read: `None` when every value was known.
    pub fn report(&self, examples: u64) -> Option<UnseenCategories> {
        let tally = self.0.lock().unwrap_or_else(|e| e.into_inner());
        (tally.rows > 0).then(|| UnseenCategories {
            examples,
            ..tally.clone()
        })
    }
}

/// What to say of a line that reads as `format` (LIBSVM, VW) text given to a model trained on
/// CSV with `model_columns` (comma separated): the CSV reader's error on such a first line, and
/// the end of [`UnseenCategories`]' warning.
///
/// ```
/// let hint = sketchlearn::data::unseen_categories::other_format_hint("LIBSVM", "y, x");
/// assert!(hint.starts_with("looks like LIBSVM text, but the model was trained on CSV with the columns y, x"));
/// ```
pub fn other_format_hint(format: &str, model_columns: &str) -> String {
    format!(
        "looks like {format} text, but the model was trained on CSV with the columns \
         {model_columns}: give the data as CSV with these columns (a model reads the format it \
         was trained on)"
    )
}

/// `Some("LIBSVM")` or `Some("VW")` when a CSV line read as one field is that text instead: a
/// label, then `index:value` pairs, or a `|` namespace.
///
/// ```
/// use sketchlearn::data::unseen_categories::sparse_text;
/// assert_eq!(sparse_text("+1 1:0.7 13:-1"), Some("LIBSVM"));
/// assert_eq!(sparse_text("1 |a x:1 y"), Some("VW"));
/// assert_eq!(sparse_text("Dream"), None);
/// assert_eq!(sparse_text("New York"), None);
/// ```
pub fn sparse_text(line: &str) -> Option<&'static str> {
    let mut words = line.split_whitespace();
    let first = words.next()?;
    let rest: Vec<&str> = words.collect();
    if rest.is_empty() {
        return None;
    }
    if first.starts_with('|') || rest.iter().any(|w| w.starts_with('|')) {
        return Some("VW");
    }
    let pair = |w: &&str| {
        w.split_once(':')
            .is_some_and(|(i, v)| i.parse::<u64>().is_ok() && v.parse::<f64>().is_ok())
    };
    rest.iter().all(pair).then_some("LIBSVM")
}

/// The one warning of a run that scores LIBSVM or VW rows holding a feature index beyond the
/// model's `dim` (the first at `line` of `source`; `index` as read, 0-based): such features count
/// as zero, and the warning names the likely cause when the rows are in another format than the
/// model's.
///
/// ```
/// let w = sketchlearn::data::unseen_categories::beyond_dimension("t.libsvm", 3, 9, false, 5);
/// assert!(w.starts_with("t.libsvm:3: feature index 10 is beyond the model's dimension 5"));
/// ```
pub fn beyond_dimension(
    source: &str,
    line: u64,
    index: u32,
    zero_based: bool,
    dim: usize,
) -> String {
    format!(
        "{source}:{line}: feature index {} is beyond the model's dimension {dim}: features the \
         model never saw count as zero (as `test` scores them); if the rows are in another \
         format than the model's, a VW model needs --format vw, a 0-based file --zero-based",
        u64::from(index) + u64::from(!zero_based)
    )
}
