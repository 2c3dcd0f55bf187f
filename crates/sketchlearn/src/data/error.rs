//! Errors of the streaming parsers: where (source, line, column) and what went wrong.

use std::fmt;

/// An error met while reading or parsing an input stream.
///
/// It names the source (a file path or `"<stdin>"`), the 1-based line and the 1-based byte
/// column of the offending token, so that a message points straight at the problem:
///
/// ```
/// use sketchlearn::data::{ParseError, ParseErrorKind};
/// let err = ParseError {
///     source_name: "train.libsvm".into(),
///     line: 3,
///     column: 4,
///     kind: ParseErrorKind::UnparsableIndex("x".into()),
/// };
/// assert_eq!(err.to_string(), r#"train.libsvm:3:4: cannot parse feature index "x""#);
/// ```
///
/// The display form is `{source}:{line}:{column}: {message}`; a column of 0 (not applicable) is
/// left out (`{source}:{line}: {message}`), and so is a line of 0 (the error is not tied to a line,
/// e.g. the file could not be opened: `{source}: {message}`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct ParseError {
    /// The file path, or `"<stdin>"`, or any name the caller gave the stream.
    pub source_name: String,
    /// 1-based line number; 0 when the error is not tied to a line (e.g. opening the file).
    pub line: u64,
    /// 1-based byte column of the offending token within its line; 0 when not applicable.
    pub column: usize,
    /// What went wrong.
    pub kind: ParseErrorKind,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = location(&self.source_name, self.line, self.column);
        write!(f, "{at}: {}", self.kind)
    }
}

/// Where an input error is, as every reader writes it: `{source}:{line}:{column}`, the column
/// left out when 0 (not known or not applicable), the line too when 0.
///
/// ```
/// use sketchlearn::data::error::location;
/// assert_eq!(location("r.csv", 3, 7), "r.csv:3:7");
/// assert_eq!(location("r.csv", 3, 0), "r.csv:3");
/// assert_eq!(location("r.csv", 0, 0), "r.csv");
/// ```
pub fn location(source_name: &str, line: u64, column: usize) -> String {
    match (line, column) {
        (0, _) => source_name.to_owned(),
        (line, 0) => format!("{source_name}:{line}"),
        (line, column) => format!("{source_name}:{line}:{column}"),
    }
}

impl ParseError {
    /// Builds an error from its parts.
    pub fn new(
        source_name: impl Into<String>,
        line: u64,
        column: usize,
        kind: ParseErrorKind,
    ) -> Self {
        ParseError {
            source_name: source_name.into(),
            line,
            column,
            kind,
        }
    }

    /// Wraps an I/O error met on `line` (0 if none) of `source_name`.
    pub fn io(source_name: impl Into<String>, line: u64, err: &std::io::Error) -> Self {
        ParseError::new(source_name, line, 0, ParseErrorKind::Io(err.to_string()))
    }
}

/// What went wrong while parsing (see [`ParseError`] for where).
///
/// Tokens are quoted in the messages exactly as written (bytes that are not UTF-8 are shown as
/// U+FFFD). More kinds may be added in later versions.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// Opening or reading the stream failed (the message of the underlying I/O error).
    #[error("I/O error: {0}")]
    Io(String),
    /// The text is not valid UTF-8 where text was required (e.g. a CSV header).
    #[error("invalid UTF-8")]
    InvalidUtf8,
    /// The label token is not a number.
    #[error(
        "cannot parse label {0:?} (LIBSVM and VW labels are numbers: write the classes as numbers, \
         e.g. 0/1, or give a CSV file with a label column, whose labels may be names)"
    )]
    UnparsableLabel(String),
    /// The line has features but no label (its first token is `index:value`).
    #[error("missing label: the line starts with a feature")]
    MissingLabel,
    /// A feature index is not a non-negative decimal integer.
    #[error("cannot parse feature index {0:?}")]
    UnparsableIndex(String),
    /// A feature value (or CSV field) is not a number.
    #[error("cannot parse value {0:?}")]
    UnparsableValue(String),
    /// A feature token has no `:` between index and value.
    #[error("expected index:value, found {0:?} (missing ':')")]
    MissingColon(String),
    /// A value, label or weight is NaN or infinite (including decimal overflow such as `1e999`).
    #[error("non-finite number {0:?} (NaN and infinities are not allowed)")]
    NonFiniteValue(String),
    /// Index 0 in a 1-based file (use the zero-based option if the file is 0-based).
    #[error(
        "feature index 0 in a 1-based file (indices start at 1; a 0-based file needs --zero-based, \
         zero_based=True in Python)"
    )]
    ZeroIndexInOneBased,
    /// A feature index does not fit the `u32` index space after conversion to 0-based.
    #[error("feature index {0} is too large (the 0-based index must be below 4294967295)")]
    IndexTooLarge(String),
    /// The same feature index occurs twice in one line (the index as written in the file).
    #[error("duplicate feature index {0}")]
    DuplicateIndex(u32),
    /// A CSV row has a different number of fields than the first row (or the header).
    #[error("expected {expected} fields, found {found}")]
    WrongFieldCount {
        /// The number of fields of the header or of the first data row.
        expected: usize,
        /// The number of fields on this line.
        found: usize,
    },
    /// A CSV field is empty.
    #[error("empty field")]
    EmptyField,
    /// A CSV quoted field is not closed before the end of the line. CSV (RFC 4180) lets a
    /// quoted field hold a line break, so that a record spans lines, as pandas and Python's
    /// `csv` module write a text with a newline; the readers here take one record per line (so
    /// that a file can be split at any newline and parsed in parallel), so the message says so
    /// and how to rewrite the file. The error is at the line where the record starts, the
    /// column of its opening quote.
    #[error(
        "unterminated quoted field: its quote is not closed on this line; CSV lets a quoted \
         field span lines (a line break inside the quotes), but records are read one per line \
         here: replace the line breaks inside fields (pandas: read_csv(path).replace(r'[\\r\\n]+', \
         ' ', regex=True).to_csv(new_path, index=False)), or close the quote"
    )]
    UnterminatedQuote,
    /// A CSV field does not fit its column (a word in a numeric column, a missing label, a
    /// column the model does not know); the message names the column.
    #[error("{0}")]
    Column(String),
    /// A VW feature token has an empty name (e.g. `:2`).
    #[error("empty feature name in {0:?}")]
    EmptyFeatureName(String),
    /// An importance weight is negative.
    #[error("negative importance weight {0:?}")]
    NegativeWeight(String),
    /// The source cannot be read with the options given (the message says which option).
    #[error("{0}")]
    Unsupported(String),
    /// A label that is not one of the classes (a third class with a binary learner, a class
    /// unseen in training, a label outside `--oaa K`), or too many or too few classes.
    #[error("{0}")]
    Label(crate::labels::LabelError),
}
