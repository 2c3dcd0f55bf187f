//! MovieLens-style rating files → one-hot user + item examples for factorization machines
//! (SFTRL paper §5.2, DESIGN.md §4 item 15).
//!
//! # Input
//!
//! One rating per line, `user item rating [timestamp]`:
//!
//! * [`RatingsFormat::Tsv`]: fields separated by runs of tabs/spaces (MovieLens-100K `u.data`);
//! * [`RatingsFormat::Csv`]: comma-separated (MovieLens `ratings.csv`: `userId,movieId,rating,
//!   timestamp`; no quoting — a field with a quote is read as it is);
//! * [`RatingsFormat::Dat`]: `::`-separated (MovieLens-1M/10M `ratings.dat`);
//! * [`RatingsFormat::Auto`]: `.csv` → CSV, `.dat` → DAT, otherwise by the first non-empty line
//!   (`::`, then `,`, else whitespace).
//!
//! Ids are arbitrary non-empty tokens (compared as strings). Rules, all documented behaviour
//! rather than panics:
//!
//! * blank lines (also `\r\n` endings) are skipped and counted ([`ReadStats::empty_lines`]);
//! * a header is recognised on the **first** non-empty line only, when its rating field is not a
//!   number (`userId,movieId,rating,timestamp`), and skipped;
//! * a malformed row — fewer than 3 fields, an empty id, a rating that is not a number or is
//!   NaN/∞, a timestamp that is not an integer, invalid UTF-8 — is a [`RatingsError::Parse`]
//!   naming the file, line and column ([`Malformed::Error`], the default), or is skipped and
//!   counted ([`Malformed::Skip`]);
//! * a rating outside the declared scale ([`RatingsOptions::scale`], none by default) is an
//!   error ([`OutOfScale::Error`], the default), skipped ([`OutOfScale::Skip`]) or clamped into
//!   the scale ([`OutOfScale::Clamp`]); every case is counted.
//!
//! The whole file is read into a [`RatingsTable`] (about 24 bytes per rating plus the distinct
//! ids), which keeps the file order: the experiments split it 80/20 in file order.
//!
//! # Encoding ([`RatingsEncoder`])
//!
//! The encoder is *fitted* on the training part: users and items get dense indices in order of
//! first appearance, users first (`0..n_users`), then items (`n_users..n_users + n_items`), then
//! the optional side features ([`SideFeatures`]: `u.user` and `u.item` of MovieLens-100K). Each
//! rating becomes an [`Example`] with value 1 at its user and its item (and its side features),
//! label = the raw rating. The learners add the constant of `â = [x; 1]` themselves.
//!
//! **Unseen ids at test time**: a user or item that was not in the training part has no index.
//! With [`Unseen::Drop`] (the default) its one-hot feature is left out, so the model predicts
//! from what it knows — the other id, the side features and the bias (the "cold start"
//! prediction); [`EncodeOutcome`] says what was dropped so that callers can count it.
//! [`Unseen::Error`] makes it a [`RatingsError::UnseenId`] instead.
//!
//! ```
//! use sketchlearn::data::ratings::{parse_ratings, RatingsEncoder, RatingsOptions};
//! use sketchlearn::Example;
//! let text = "userId,movieId,rating,timestamp\n1,10,4.0,964982703\n\n2,10,3.5,964981247\n3,11,5,1\n";
//! let table = parse_ratings(text.as_bytes(), "ratings.csv", &RatingsOptions::default()).unwrap();
//! assert_eq!(table.len(), 3);
//! assert!(table.stats.header);
//! assert_eq!(table.stats.empty_lines, 1);
//!
//! // Fit on the first two ratings: users {1, 2}, items {10}.
//! let enc = RatingsEncoder::fit(&table, 0..2, None);
//! assert_eq!(enc.dim(), 3);
//! let map = enc.map_table(&table);
//! let mut ex = Example::default();
//! let seen = enc.encode(&table, &map, 1, &mut ex);
//! assert_eq!((ex.label, ex.indices.clone()), (3.5, vec![1, 2]));
//! assert!(!seen.unseen_user && !seen.unseen_item);
//! // User 3 and item 11 are new: both one-hot features are dropped.
//! let cold = enc.encode(&table, &map, 2, &mut ex);
//! assert!(cold.unseen_user && cold.unseen_item && ex.indices.is_empty());
//! ```

use std::collections::HashMap;
use std::io::BufRead;
use std::ops::Range;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::error::{ParseError, ParseErrorKind};
use super::example::Example;
use super::lines::LineReader;
use super::side_columns::{SideColumns, SideTable, SideValueError};
use super::source::open_input;

mod feature_names;
mod side_features;

pub use side_features::{SideBlock, SideFeatures};

/// Field layout of a ratings file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum RatingsFormat {
    /// Decide from the extension, then from the first non-empty line.
    #[default]
    Auto,
    /// Whitespace-separated (tabs or spaces), as MovieLens-100K `u.data`.
    Tsv,
    /// Comma-separated, as MovieLens `ratings.csv`.
    Csv,
    /// `::`-separated, as MovieLens-1M `ratings.dat`.
    Dat,
}

/// What to do with a rating outside [`RatingsOptions::scale`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum OutOfScale {
    /// Stop with [`RatingsError::OutOfScale`].
    #[default]
    Error,
    /// Leave the row out (counted in [`ReadStats::out_of_scale`]).
    Skip,
    /// Clamp into the scale (counted in [`ReadStats::out_of_scale`]).
    Clamp,
}

/// What to do with a malformed row.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Malformed {
    /// Stop with [`RatingsError::Parse`] (file, line, column).
    #[default]
    Error,
    /// Leave the row out (counted in [`ReadStats::malformed`]).
    Skip,
}

/// What the encoder does with an id it was not fitted on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Unseen {
    /// Leave its one-hot feature out (cold-start prediction from the other features and the bias).
    #[default]
    Drop,
    /// Make it an error ([`RatingsError::UnseenId`]).
    Error,
}

/// Options of [`read_ratings`] / [`parse_ratings`].
///
/// ```
/// use sketchlearn::data::ratings::{OutOfScale, RatingsOptions};
/// let o = RatingsOptions { scale: Some((1.0, 5.0)), out_of_scale: OutOfScale::Clamp, ..Default::default() };
/// assert_eq!(o.scale, Some((1.0, 5.0)));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RatingsOptions {
    /// Field layout.
    pub format: RatingsFormat,
    /// Declared rating scale `[min, max]` (none: any finite rating).
    pub scale: Option<(f64, f64)>,
    /// Ratings outside the scale.
    pub out_of_scale: OutOfScale,
    /// Malformed rows.
    pub malformed: Malformed,
    /// Which fields hold the user, item, rating and timestamp (default: the first four, in
    /// that order).
    pub columns: RatingColumns,
}

/// The 0-based fields of a ratings line that hold the user, the item, the rating and (optional)
/// the timestamp; other fields are ignored. Build it from header names or 1-based positions
/// with [`RatingColumns::resolve`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RatingColumns {
    /// Field of the user id.
    pub user: usize,
    /// Field of the item id.
    pub item: usize,
    /// Field of the rating.
    pub rating: usize,
    /// Field of the timestamp, if any (an empty or missing field is no timestamp).
    pub timestamp: Option<usize>,
}

impl Default for RatingColumns {
    /// `user item rating [timestamp]`.
    fn default() -> Self {
        RatingColumns {
            user: 0,
            item: 1,
            rating: 2,
            timestamp: Some(3),
        }
    }
}

impl RatingColumns {
    /// The columns named by `spec` — `user,item,rating`, each a header name (exact, as in
    /// `header`) or a 1-based position — without a timestamp. An unknown name is an error that
    /// names the header's columns.
    ///
    /// ```
    /// use sketchlearn::data::ratings::RatingColumns;
    /// let header = ["movie", "stars", "who"].map(String::from);
    /// let c = RatingColumns::resolve(&["who", "movie", "stars"], Some(&header), "r.csv").unwrap();
    /// assert_eq!((c.user, c.item, c.rating, c.timestamp), (2, 0, 1, None));
    /// let c = RatingColumns::resolve(&["3", "1", "2"], None, "r.csv").unwrap();
    /// assert_eq!((c.user, c.item, c.rating), (2, 0, 1));
    /// let err = RatingColumns::resolve(&["user", "movie", "stars"], Some(&header), "r.csv");
    /// assert_eq!(
    ///     err.unwrap_err().to_string(),
    ///     "invalid ratings option: r.csv has no column named \"user\" (its header: movie, stars, \
    ///      who); --columns takes header names or 1-based positions"
    /// );
    /// ```
    pub fn resolve(
        spec: &[&str],
        header: Option<&[String]>,
        source_name: &str,
    ) -> Result<Self, RatingsError> {
        if spec.len() != 3 {
            return Err(RatingsError::InvalidOption(format!(
                "--columns needs user,item,rating (3 columns), got {}",
                spec.len()
            )));
        }
        let one = |name: &str| Self::field(name, header, source_name);
        let c = RatingColumns {
            user: one(spec[0])?,
            item: one(spec[1])?,
            rating: one(spec[2])?,
            timestamp: None,
        };
        if c.user == c.item || c.user == c.rating || c.item == c.rating {
            return Err(RatingsError::InvalidOption(format!(
                "--columns names one column twice: {}",
                spec.join(",")
            )));
        }
        Ok(c)
    }

    /// The 0-based field of one `--columns` entry: a 1-based position, or a name looked up in
    /// `header` (an error naming the header's columns when it is not there).
    pub fn field(
        name: &str,
        header: Option<&[String]>,
        source_name: &str,
    ) -> Result<usize, RatingsError> {
        if let Ok(k) = name.parse::<usize>() {
            return k
                .checked_sub(1)
                .ok_or_else(|| RatingsError::InvalidOption("column positions start at 1".into()));
        }
        let Some(header) = header else {
            return Err(RatingsError::InvalidOption(format!(
                "{source_name} has no header to find a column named {name:?} in; --columns \
                 takes 1-based positions then"
            )));
        };
        header.iter().position(|h| h == name).ok_or_else(|| {
            RatingsError::InvalidOption(format!(
                "{source_name} has no column named {name:?} (its header: {}); --columns takes \
                 header names or 1-based positions",
                header.join(", ")
            ))
        })
    }

    /// Fields a line needs: one past the largest of user, item and rating.
    fn needed(&self) -> usize {
        self.user.max(self.item).max(self.rating) + 1
    }
}

/// The header of a ratings file: the fields of its first non-empty line when that line's
/// rating field (by `options.columns`) is not a number, as [`parse_ratings`] decides; `None`
/// when the file has no header. Reads one line (`-` is refused: standard input is read once).
pub fn read_header(
    path: &str,
    options: &RatingsOptions,
) -> Result<Option<Vec<String>>, RatingsError> {
    if path == "-" {
        return Err(RatingsError::InvalidOption(
            "column names need a file (standard input is read once): give --columns as \
             1-based positions"
                .into(),
        ));
    }
    let mut input = open_input(path)?;
    let mut bytes = Vec::new();
    let mut line_no = 0;
    loop {
        bytes.clear();
        line_no += 1;
        let n = input
            .read_until(b'\n', &mut bytes)
            .map_err(|e| ParseError::io(path, line_no, &e))?;
        if n == 0 {
            return Ok(None);
        }
        let line = super::text_input::utf8_line(&bytes, path, line_no)?;
        let text = line
            .trim_start_matches('\u{feff}')
            .trim_end_matches(['\n', '\r']);
        if text.trim().is_empty() {
            continue;
        }
        let format = match (
            options.format,
            Path::new(path.strip_suffix(".gz").unwrap_or(path))
                .extension()
                .and_then(|e| e.to_str()),
        ) {
            (RatingsFormat::Auto, Some("csv")) => RatingsFormat::Csv,
            (RatingsFormat::Auto, Some("dat")) => RatingsFormat::Dat,
            (RatingsFormat::Auto, _) => sniff(text),
            (f, _) => f,
        };
        let fields: Vec<String> = split_fields(text, format)
            .into_iter()
            .map(|(_, f)| f.to_string())
            .collect();
        let rating = fields.get(options.columns.rating);
        return Ok(rating
            .is_some_and(|r| r.parse::<f64>().is_err())
            .then_some(fields));
    }
}

/// Counts of what [`parse_ratings`] met besides good rows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadStats {
    /// Lines read (including blank and header lines).
    pub lines: u64,
    /// Blank lines skipped.
    pub empty_lines: u64,
    /// Whether a header line was skipped.
    pub header: bool,
    /// Malformed rows skipped ([`Malformed::Skip`]).
    pub malformed: u64,
    /// Ratings outside the scale, skipped or clamped.
    pub out_of_scale: u64,
}

/// One rating: user and item as indices into [`RatingsTable::users`] / [`RatingsTable::items`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rating {
    /// Index of the raw user id in the table.
    pub user: u32,
    /// Index of the raw item id in the table.
    pub item: u32,
    /// The rating (clamped if so configured).
    pub rating: f64,
    /// The timestamp when present.
    pub timestamp: Option<i64>,
    /// 1-based line number in the file.
    pub line: u64,
}

/// All ratings of a file, in file order, with the distinct raw ids.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RatingsTable {
    /// Name of the source (path or `<stdin>`).
    pub source_name: String,
    /// Ratings in file order.
    pub ratings: Vec<Rating>,
    /// Distinct raw user ids, in order of first appearance.
    pub users: Vec<String>,
    /// Distinct raw item ids, in order of first appearance.
    pub items: Vec<String>,
    /// What was skipped, clamped or counted.
    pub stats: ReadStats,
    /// The texts of the side-feature columns, one row per rating (none unless asked for:
    /// [`parse_ratings_with_side`]).
    pub side: SideTable,
    /// The fields the user, item, rating and timestamp were read from (for error messages).
    #[serde(default)]
    pub columns: RatingColumns,
    /// The header's field names, when the file has a header.
    #[serde(default)]
    pub header: Option<Vec<String>>,
}

impl RatingsTable {
    /// Number of ratings.
    pub fn len(&self) -> usize {
        self.ratings.len()
    }

    /// True when there is no rating.
    pub fn is_empty(&self) -> bool {
        self.ratings.is_empty()
    }

    /// Number of ratings in the first `fraction` of the file (`⌊n·fraction⌋`, fraction in
    /// `[0, 1]`).
    pub fn split_point(&self, fraction: f64) -> usize {
        split_point(self.len(), fraction)
    }

    /// The smallest and largest rating (`None` when empty).
    pub fn rating_range(&self) -> Option<(f64, f64)> {
        self.rating_range_in(0..self.len())
    }

    /// The smallest and largest rating of rows `rows` (`None` when empty).
    pub fn rating_range_in(&self, rows: std::ops::Range<usize>) -> Option<(f64, f64)> {
        self.ratings[rows].iter().fold(None, |acc, r| match acc {
            None => Some((r.rating, r.rating)),
            Some((lo, hi)) => Some((lo.min(r.rating), hi.max(r.rating))),
        })
    }
}

/// The number of rows in the first `fraction` of `n` (`⌊n·fraction⌋`, fraction in `[0, 1]`):
/// the learning part of a run that learns the first part of its file.
pub(crate) fn split_point(n: usize, fraction: f64) -> usize {
    ((n as f64) * fraction.clamp(0.0, 1.0)).floor() as usize
}

/// Why ratings could not be read or encoded.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RatingsError {
    /// I/O or a malformed row (file, line, column).
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// A rating outside the declared scale with [`OutOfScale::Error`].
    #[error("{source_name}:{line}: rating {value} is outside the declared scale [{min}, {max}]")]
    OutOfScale {
        /// The file.
        source_name: String,
        /// 1-based line.
        line: u64,
        /// The rating.
        value: f64,
        /// Scale minimum.
        min: f64,
        /// Scale maximum.
        max: f64,
    },
    /// An invalid option (e.g. a scale with `min > max`).
    #[error("invalid ratings option: {0}")]
    InvalidOption(String),
    /// A text that is not a number in a side column that is numeric in the training part
    /// ([`SideColumns`]).
    #[error(
        "{source_name}:{line}: side column {column:?} is numeric in the training part, found \
         {text:?} (missing values are written as empty, NA or NaN)"
    )]
    SideValue {
        /// The file.
        source_name: String,
        /// 1-based line.
        line: u64,
        /// The column's name.
        column: String,
        /// The text found.
        text: String,
    },
    /// An id unseen in training with [`Unseen::Error`], where it is: file, line, byte column
    /// when known, and the field (its header name when the file has a header).
    #[error(
        "{}: {what} id {id:?} in {} was not seen in training (without --unseen-error it is \
         predicted without its own one-hot feature: from the other id's terms, the side \
         features and the bias)",
        super::error::location(.source_name, *.line, *.column),
        field_label(*.field, .field_name.as_deref())
    )]
    UnseenId {
        /// The file.
        source_name: String,
        /// 1-based line.
        line: u64,
        /// 1-based byte column of the id; 0 when not known (a table keeps no columns).
        column: usize,
        /// `"user"` or `"item"`.
        what: &'static str,
        /// The raw id.
        id: String,
        /// 1-based field of the id on its line.
        field: usize,
        /// The field's header name, when the file has a header.
        field_name: Option<String>,
    },
}

/// `field 2 ("movieId")`, or `field 2` without a header.
fn field_label(field: usize, name: Option<&str>) -> String {
    match name {
        Some(name) => format!("field {field} ({name:?})"),
        None => format!("field {field}"),
    }
}

/// Reads a ratings file (`-` = standard input, `.gz` decompressed) with [`parse_ratings`].
pub fn read_ratings(path: &str, options: &RatingsOptions) -> Result<RatingsTable, RatingsError> {
    read_ratings_with_side(path, options, SideTable::default())
}

/// [`read_ratings`] keeping the texts of the side columns of `side` (made with
/// [`SideTable::new`]) for every rating ([`parse_ratings_with_side`]).
pub fn read_ratings_with_side(
    path: &str,
    options: &RatingsOptions,
    side: SideTable,
) -> Result<RatingsTable, RatingsError> {
    let input = open_input(path)?;
    let name = if path == "-" { "<stdin>" } else { path };
    let mut opts = *options;
    if opts.format == RatingsFormat::Auto {
        let p = path.strip_suffix(".gz").unwrap_or(path);
        opts.format = match Path::new(p).extension().and_then(|e| e.to_str()) {
            Some("csv") => RatingsFormat::Csv,
            Some("dat") => RatingsFormat::Dat,
            _ => RatingsFormat::Auto,
        };
    }
    parse_ratings_with_side(input, name, &opts, side)
}

/// The layout of a line: `::`-separated, else comma-separated, else whitespace.
pub fn sniff(line: &str) -> RatingsFormat {
    if line.contains("::") {
        RatingsFormat::Dat
    } else if line.contains(',') {
        RatingsFormat::Csv
    } else {
        RatingsFormat::Tsv
    }
}

/// The fields of a line in `format` (`Auto`: by [`sniff`]), as the ratings reader splits them.
///
/// ```
/// use sketchlearn::data::ratings::{line_fields, RatingsFormat};
/// assert_eq!(line_fields("1::10::4", RatingsFormat::Auto), ["1", "10", "4"]);
/// assert_eq!(line_fields("a, b", RatingsFormat::Csv), ["a", "b"]);
/// ```
pub fn line_fields(line: &str, format: RatingsFormat) -> Vec<&str> {
    let format = match format {
        RatingsFormat::Auto => sniff(line),
        f => f,
    };
    split_fields(line, format)
        .into_iter()
        .map(|(_, f)| f)
        .collect()
}

/// `(byte offset, field)` pairs of a line.
fn split_fields(line: &str, format: RatingsFormat) -> Vec<(usize, &str)> {
    let base = line.as_ptr() as usize;
    let off = |f: &str| f.as_ptr() as usize - base;
    match format {
        RatingsFormat::Csv => line.split(',').map(|f| (off(f), f.trim())).collect(),
        RatingsFormat::Dat => line.split("::").map(|f| (off(f), f.trim())).collect(),
        _ => line.split_ascii_whitespace().map(|f| (off(f), f)).collect(),
    }
}

fn intern(map: &mut HashMap<String, u32>, names: &mut Vec<String>, id: &str) -> u32 {
    if let Some(&i) = map.get(id) {
        return i;
    }
    let i = names.len() as u32;
    names.push(id.to_owned());
    map.insert(id.to_owned(), i);
    i
}

/// Parses ratings from any reader; `source_name` is used in error messages. See the module
/// documentation for the rules. Never panics, whatever the bytes.
///
/// ```
/// use sketchlearn::data::ratings::{parse_ratings, Malformed, OutOfScale, RatingsError, RatingsOptions};
/// let text = "1\t10\t4\t881250949\n1\t11\tx\t1\n2\t10\t9\t1\n";
/// // Default: the malformed second row is an error naming line and column.
/// let err = parse_ratings(text.as_bytes(), "u.data", &RatingsOptions::default()).unwrap_err();
/// assert_eq!(err.to_string(), r#"u.data:2:6: cannot parse value "x""#);
/// // Skipping malformed rows and clamping to the 1–5 scale.
/// let opts = RatingsOptions {
///     scale: Some((1.0, 5.0)),
///     out_of_scale: OutOfScale::Clamp,
///     malformed: Malformed::Skip,
///     ..Default::default()
/// };
/// let t = parse_ratings(text.as_bytes(), "u.data", &opts).unwrap();
/// assert_eq!(t.len(), 2);
/// assert_eq!(t.ratings[1].rating, 5.0);
/// assert_eq!((t.stats.malformed, t.stats.out_of_scale), (1, 1));
/// ```
pub fn parse_ratings(
    reader: impl BufRead,
    source_name: &str,
    options: &RatingsOptions,
) -> Result<RatingsTable, RatingsError> {
    parse_ratings_with_side(reader, source_name, options, SideTable::default())
}

/// [`parse_ratings`] that also keeps, for every rating, the texts of the fields of `side`'s
/// columns (a field the line does not have is `""`, a missing value) in
/// [`RatingsTable::side`]. A side column at the timestamp's field is a side column only.
///
/// ```
/// use sketchlearn::data::ratings::{parse_ratings_with_side, RatingsOptions};
/// use sketchlearn::data::side_columns::SideTable;
/// let text = "1,10,4,33,Drama\n2,10,3,NA\n";
/// let side = SideTable::new(vec![("age".into(), 3), ("genre".into(), 4)]);
/// let t = parse_ratings_with_side(text.as_bytes(), "r.csv", &RatingsOptions::default(), side).unwrap();
/// assert_eq!((t.side.text(0, 0), t.side.text(0, 1)), ("33", "Drama"));
/// assert_eq!((t.side.text(1, 0), t.side.text(1, 1)), ("NA", ""));
/// ```
pub fn parse_ratings_with_side(
    reader: impl BufRead,
    source_name: &str,
    options: &RatingsOptions,
    side: SideTable,
) -> Result<RatingsTable, RatingsError> {
    if let Some((lo, hi)) = options.scale {
        if !(lo.is_finite() && hi.is_finite() && lo <= hi) {
            return Err(RatingsError::InvalidOption(format!(
                "rating scale [{lo}, {hi}] must be finite with min <= max"
            )));
        }
    }
    let mut table = RatingsTable {
        source_name: source_name.to_owned(),
        side,
        columns: options.columns,
        ..Default::default()
    };
    let (mut user_map, mut item_map) = (HashMap::new(), HashMap::new());
    let mut format = options.format;
    let mut first = true;
    let mut lines = LineReader::new(reader, source_name);
    while lines.next_line()? {
        let line_no = lines.line();
        table.stats.lines += 1;
        // Columns count from after the byte-order mark.
        let (_, bytes) = lines.text();
        let err = |column: usize, kind: ParseErrorKind| lines.error(column, kind);
        let line = match std::str::from_utf8(bytes) {
            Ok(s) => s.trim_end_matches(['\n', '\r']),
            Err(e) => {
                if options.malformed == Malformed::Skip {
                    table.stats.malformed += 1;
                    continue;
                }
                let (k, kind) = super::text_input::not_utf8_at(bytes, e);
                return Err(err(k + 1, kind).into());
            }
        };
        if line.trim().is_empty() {
            table.stats.empty_lines += 1;
            continue;
        }
        if format == RatingsFormat::Auto {
            format = sniff(line);
        }
        let fields = split_fields(line, format);
        let was_first = std::mem::replace(&mut first, false);
        let mut cols = options.columns;
        if cols
            .timestamp
            .is_some_and(|t| table.side.fields.contains(&t))
        {
            cols.timestamp = None; // a side column, not a timestamp
        }
        if was_first
            && fields.len() >= cols.needed()
            && fields[cols.rating].1.parse::<f64>().is_err()
        {
            table.stats.header = true;
            table.header = Some(fields.iter().map(|(_, f)| f.to_string()).collect());
            continue;
        }
        let parsed = (|| -> Result<(f64, Option<i64>), ParseError> {
            if fields.len() < cols.needed() {
                return Err(err(
                    0,
                    ParseErrorKind::WrongFieldCount {
                        expected: cols.needed(),
                        found: fields.len(),
                    },
                ));
            }
            for &(off, f) in [fields[cols.user], fields[cols.item]].iter() {
                if f.is_empty() {
                    return Err(err(off + 1, ParseErrorKind::EmptyField));
                }
            }
            let (off, f) = fields[cols.rating];
            let rating: f64 = f
                .parse()
                .map_err(|_| err(off + 1, ParseErrorKind::UnparsableValue(f.to_owned())))?;
            if !rating.is_finite() {
                return Err(err(off + 1, ParseErrorKind::NonFiniteValue(f.to_owned())));
            }
            let timestamp = match cols.timestamp.and_then(|t| fields.get(t)) {
                Some(&(off, f)) if !f.is_empty() => Some(
                    f.parse::<i64>()
                        .map_err(|_| err(off + 1, ParseErrorKind::UnparsableValue(f.to_owned())))?,
                ),
                _ => None,
            };
            Ok((rating, timestamp))
        })();
        let (mut rating, timestamp) = match parsed {
            Ok(v) => v,
            Err(e) if options.malformed == Malformed::Skip => {
                let _ = e;
                table.stats.malformed += 1;
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        if let Some((lo, hi)) = options.scale {
            if !(lo..=hi).contains(&rating) {
                match options.out_of_scale {
                    OutOfScale::Error => {
                        return Err(RatingsError::OutOfScale {
                            source_name: source_name.to_owned(),
                            line: line_no,
                            value: rating,
                            min: lo,
                            max: hi,
                        })
                    }
                    OutOfScale::Skip => {
                        table.stats.out_of_scale += 1;
                        continue;
                    }
                    OutOfScale::Clamp => {
                        table.stats.out_of_scale += 1;
                        rating = rating.clamp(lo, hi);
                    }
                }
            }
        }
        let user = intern(&mut user_map, &mut table.users, fields[cols.user].1);
        let item = intern(&mut item_map, &mut table.items, fields[cols.item].1);
        table.ratings.push(Rating {
            user,
            item,
            rating,
            timestamp,
            line: line_no,
        });
        if table.side.columns() > 0 {
            let texts: Vec<&str> = (table.side.fields.iter())
                .map(|&f| fields.get(f).map_or("", |&(_, t)| t))
                .collect();
            table.side.push_row(&texts);
        }
    }
    Ok(table)
}

/// What [`RatingsEncoder::encode`] left out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EncodeOutcome {
    /// The user was not seen in training (its one-hot feature is absent).
    pub unseen_user: bool,
    /// The item was not seen in training.
    pub unseen_item: bool,
    /// A side column (index in [`SideColumns::columns`]) whose text is not a number although
    /// the column is numeric: its feature is absent ([`RatingsEncoder::encode_checked`] makes
    /// it an error).
    pub bad_side_column: Option<usize>,
}

/// Per-table lookup built by [`RatingsEncoder::map_table`]: table user/item index → feature
/// index (or `None` for unseen ids).
#[derive(Clone, Debug, Default)]
pub struct TableMap {
    users: Vec<Option<u32>>,
    items: Vec<Option<u32>>,
    /// Side columns: per column, per distinct text of the table, its features (indices from
    /// the side columns' base), or `None` for a text that is not a number in a numeric column.
    side: Vec<Vec<SideCell>>,
}

/// The features of one side text (indices from the side columns' base), or `None` for a text
/// that is not a number in a numeric column.
type SideCell = Option<Vec<(u32, f64)>>;

/// One-hot user + item encoder with dense id remapping fitted on the training part (see the
/// module documentation).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RatingsEncoder {
    #[serde(serialize_with = "crate::sorted_map::serialize")]
    users: HashMap<String, u32>,
    #[serde(serialize_with = "crate::sorted_map::serialize")]
    items: HashMap<String, u32>,
    n_users: usize,
    n_items: usize,
    side: Option<SideFeatures>,
    /// Unseen-id policy.
    pub unseen: Unseen,
    /// Side-feature columns of the ratings file (features after all others). Not part of the
    /// serialized encoder: [`FmModel`](crate::fm::FmModel) files keep them in an optional
    /// trailer, so files without side columns keep their layout.
    #[serde(skip)]
    side_columns: Option<SideColumns>,
}

impl RatingsEncoder {
    /// Fits the id maps on the ratings `range` of `table` (in order of first appearance, users
    /// then items) with optional side features, and the side columns' schema when the table
    /// has side columns ([`SideColumns::fit`], with the table's [`SideTable::spec`]).
    pub fn fit(table: &RatingsTable, range: Range<usize>, side: Option<SideFeatures>) -> Self {
        let mut enc = RatingsEncoder {
            side,
            side_columns: (table.side.columns() > 0)
                .then(|| SideColumns::fit(&table.side, range.clone(), table.side.spec.clone())),
            ..Default::default()
        };
        for r in &table.ratings[range] {
            let u = &table.users[r.user as usize];
            if !enc.users.contains_key(u) {
                enc.users.insert(u.clone(), enc.n_users as u32);
                enc.n_users += 1;
            }
            let i = &table.items[r.item as usize];
            if !enc.items.contains_key(i) {
                enc.items.insert(i.clone(), enc.n_items as u32);
                enc.n_items += 1;
            }
        }
        enc
    }

    /// Users known to the encoder.
    pub fn n_users(&self) -> usize {
        self.n_users
    }

    /// Items known to the encoder.
    pub fn n_items(&self) -> usize {
        self.n_items
    }

    /// The side features, if any.
    pub fn side(&self) -> Option<&SideFeatures> {
        self.side.as_ref()
    }

    /// The side-feature columns, if any.
    pub fn side_columns(&self) -> Option<&SideColumns> {
        self.side_columns.as_ref()
    }

    /// Sets the side-feature columns (a model file's trailer).
    pub fn set_side_columns(&mut self, columns: Option<SideColumns>) {
        self.side_columns = columns;
    }

    /// Index of the first side-column feature: after the ids and the MovieLens side features.
    fn side_columns_base(&self) -> usize {
        self.n_users
            + self.n_items
            + self
                .side
                .as_ref()
                .map_or(0, |s| s.users.len() + s.items.len())
    }

    /// The feature dimension: users + items + side features + side columns.
    pub fn dim(&self) -> usize {
        self.side_columns_base() + self.side_columns.as_ref().map_or(0, SideColumns::dim)
    }

    /// Looks up every raw id of `table` once.
    pub fn map_table(&self, table: &RatingsTable) -> TableMap {
        TableMap {
            users: table
                .users
                .iter()
                .map(|u| self.users.get(u).copied())
                .collect(),
            items: table
                .items
                .iter()
                .map(|i| self.items.get(i).copied())
                .collect(),
            side: self.map_side_texts(&table.side),
        }
    }

    /// Every distinct side text of `side`, encoded once by the fitted side columns.
    fn map_side_texts(&self, side: &SideTable) -> Vec<Vec<SideCell>> {
        let Some(columns) = &self.side_columns else {
            return Vec::new();
        };
        (0..side.columns().min(columns.columns.len()))
            .map(|c| {
                side.texts[c]
                    .iter()
                    .map(|t| {
                        let mut out = Vec::new();
                        columns.encode_column(c, t, &mut out).ok().map(|()| out)
                    })
                    .collect()
            })
            .collect()
    }

    /// Encodes rating `k` of `table` into `ex` (label = rating, weight 1), dropping the
    /// one-hot features of unseen ids (see [`Unseen`]; with [`Unseen::Error`] use
    /// [`RatingsEncoder::encode_checked`]).
    pub fn encode(
        &self,
        table: &RatingsTable,
        map: &TableMap,
        k: usize,
        ex: &mut Example,
    ) -> EncodeOutcome {
        let r = &table.ratings[k];
        let u = map.users.get(r.user as usize).copied().flatten();
        let i = map.items.get(r.item as usize).copied().flatten();
        let (user, item) = (&table.users[r.user as usize], &table.items[r.item as usize]);
        self.encode_known(u, i, user, item, ex);
        ex.label = r.rating;
        let base = self.side_columns_base();
        let mut bad_side_column = None;
        for (c, texts) in map.side.iter().enumerate() {
            match &texts[table.side.cells[k * table.side.columns() + c] as usize] {
                Some(f) => f.iter().for_each(|&(j, x)| {
                    ex.indices.push((base + j as usize) as u32);
                    ex.values.push(x);
                }),
                None => bad_side_column = bad_side_column.or(Some(c)),
            }
        }
        EncodeOutcome {
            unseen_user: u.is_none(),
            unseen_item: i.is_none(),
            bad_side_column,
        }
    }

    /// Encodes one `(user, item)` pair given by raw ids, as [`encode`](Self::encode) encodes a
    /// rating (label 0): an id the encoder was not fitted on loses its one-hot feature (the
    /// [`Unseen::Drop`] policy, whatever [`RatingsEncoder::unseen`] says), so a model predicts
    /// an unseen user or item from the other id, the side features and its bias.
    ///
    /// ```
    /// use sketchlearn::data::ratings::{parse_ratings, RatingsEncoder, RatingsOptions};
    /// use sketchlearn::Example;
    /// let table = parse_ratings("1 10 4\n2 11 3\n".as_bytes(), "r", &RatingsOptions::default()).unwrap();
    /// let enc = RatingsEncoder::fit(&table, 0..2, None);
    /// let mut ex = Example::default();
    /// let out = enc.encode_pair("2", "10", &mut ex);
    /// assert_eq!(ex.indices, vec![1, 2]);
    /// assert!(!out.unseen_user && !out.unseen_item);
    /// let out = enc.encode_pair("7", "10", &mut ex);
    /// assert_eq!(ex.indices, vec![2]);
    /// assert!(out.unseen_user && !out.unseen_item);
    /// ```
    pub fn encode_pair(&self, user: &str, item: &str, ex: &mut Example) -> EncodeOutcome {
        let u = self.users.get(user).copied();
        let i = self.items.get(item).copied();
        self.encode_known(u, i, user, item, ex);
        EncodeOutcome {
            unseen_user: u.is_none(),
            unseen_item: i.is_none(),
            bad_side_column: None,
        }
    }

    /// [`encode_pair`](Self::encode_pair) with the texts of the side columns (one per column of
    /// [`side_columns`](Self::side_columns), in order). Err: a text that is not a number in a
    /// numeric column.
    pub fn encode_pair_with_side(
        &self,
        user: &str,
        item: &str,
        side_texts: &[&str],
        ex: &mut Example,
    ) -> Result<EncodeOutcome, SideValueError> {
        let out = self.encode_pair(user, item, ex);
        if let Some(columns) = &self.side_columns {
            let mut f = Vec::new();
            columns.encode_texts(side_texts, self.side_columns_base(), &mut f)?;
            for (j, x) in f {
                ex.indices.push(j);
                ex.values.push(x);
            }
        }
        Ok(out)
    }

    /// `ex` = the one-hot features of the known indices `u`, `i` and the side features of the
    /// raw ids (label 0).
    fn encode_known(
        &self,
        u: Option<u32>,
        i: Option<u32>,
        user: &str,
        item: &str,
        ex: &mut Example,
    ) {
        ex.clear();
        let mut push = |j: usize| {
            ex.indices.push(j as u32);
            ex.values.push(1.0);
        };
        if let Some(u) = u {
            push(u as usize);
        }
        if let Some(i) = i {
            push(self.n_users + i as usize);
        }
        if let Some(side) = &self.side {
            let base_u = self.n_users + self.n_items;
            if let Some(f) = side.users.features.get(user) {
                f.iter().for_each(|&j| push(base_u + j as usize));
            }
            let base_i = base_u + side.users.len();
            if let Some(f) = side.items.features.get(item) {
                f.iter().for_each(|&j| push(base_i + j as usize));
            }
        }
    }

    /// [`encode`](Self::encode), honouring [`RatingsEncoder::unseen`]: with [`Unseen::Error`]
    /// an unseen user or item is a [`RatingsError::UnseenId`].
    pub fn encode_checked(
        &self,
        table: &RatingsTable,
        map: &TableMap,
        k: usize,
        ex: &mut Example,
    ) -> Result<EncodeOutcome, RatingsError> {
        let out = self.encode(table, map, k, ex);
        let r = &table.ratings[k];
        if let (Some(c), Some(columns)) = (out.bad_side_column, &self.side_columns) {
            let column = columns.columns[c].name.clone();
            let text = table.side.text(k, c).trim().to_owned();
            return Err(RatingsError::SideValue {
                source_name: table.source_name.clone(),
                line: r.line,
                column,
                text,
            });
        }
        if self.unseen == Unseen::Error && (out.unseen_user || out.unseen_item) {
            let (what, id, field) = if out.unseen_user {
                ("user", &table.users[r.user as usize], table.columns.user)
            } else {
                ("item", &table.items[r.item as usize], table.columns.item)
            };
            return Err(RatingsError::UnseenId {
                source_name: table.source_name.clone(),
                line: r.line,
                column: 0,
                what,
                id: id.clone(),
                field: field + 1,
                field_name: table.header.as_ref().and_then(|h| h.get(field)).cloned(),
            });
        }
        Ok(out)
    }
}
