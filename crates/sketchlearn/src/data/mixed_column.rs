//! A CSV column of numbers with other values among them ([`MixedColumn`]), and what the scan
//! ([`Schema::scan`](super::Schema::scan)) does about it.
//!
//! A column is numeric when every value (missing ones aside) is a number, as pandas'
//! `read_csv` infers a dtype; one other text makes it a string column (one-hot or hashed), in
//! which every distinct number is a category of its own. For a column that is numbers but for
//! a stray cell (`n/a2`, `unknown`, a number written `12,5` or `1,234`), that is a model that
//! learns nothing of the numbers' size from the column, and nothing says so (pandas says it
//! only by the column's dtype, `object`). So, on each column's values once the whole input is
//! scanned (missing values aside), with the numbers counted as in the list below:
//!
//! - **an error** when at least [`STRAY_SHARE`] (99 %) of them are numbers, at the first value
//!   that is not: the column is numeric and that value a stray. This is what a pandas or
//!   scikit-learn user meets one step later: scikit-learn's estimators refuse the column
//!   (`check_array`: "could not convert string to float: 'n/a2'"), as pandas'
//!   `to_numeric` does by default (`errors='raise'`); VW guesses no column types at all (the
//!   writer of each line makes a feature a number or a string), so nobody expects a silent
//!   guess here. The error comes from the scan, before anything is learned, names the cell and
//!   the fixes (write a missing value as empty or `NA`, correct the number, or
//!   `--ignore-columns`). Its cost: there is no option to give a column's type (pandas'
//!   `dtype=`), so a column of codes that are almost all numbers (ZIP codes and one foreign
//!   postal code) must be edited or dropped where it was read as strings before; such codes are
//!   rare next to the stray cells of numeric columns, and are numeric already when they are all
//!   numbers;
//! - **a warning** when at least half of them are numbers: such a column may be codes (sizes
//!   `1`, `2`, `XL`) as well as numbers whose missing values are a word of their own (`unknown`
//!   in a third of the rows), and only the user knows which, so it is read as strings, as
//!   pandas reads it, and the warning names the column, its counts, its first other value and
//!   how to make it numeric;
//! - nothing below half: a column of words with a few numbers is a string column.
//!
//! A value counts as a number for this rule when it reads as one ([`parse_f64`], finite), or
//! is one written for people ([`Written::ForPeople`]: a thousands separator `1,234`, a
//! currency sign `$12`, a percent sign `12%`), or has a decimal comma (`12,5`) in a column that
//! holds numbers of the other kinds too (alone, `1,2` may as well be a pair). Those written
//! forms are never read as values: they only decide the error or the warning, whose message
//! says how they are written plainly.
//!
//! ```
//! use sketchlearn::data::{ColumnRef, CsvExampleOptions, Schema};
//! let mut text = String::from("y,amount\n");
//! for k in 0..200 {
//!     text.push_str(&format!("{},{}\n", k % 2, if k == 150 { "n/a2".into() } else { k.to_string() }));
//! }
//! let options = CsvExampleOptions { label_column: Some(ColumnRef::Name("y".into())), ..Default::default() };
//! let e = Schema::scan(std::io::Cursor::new(&text), "t.csv", &options).unwrap_err().to_string();
//! assert!(e.starts_with("t.csv:152:3: column 'amount': 199 of its 200 values are numbers and 1 is not, the first \"n/a2\" here"), "{e}");
//! let mut sizes = String::from("y,size\n");
//! for k in 0..20 {
//!     sizes.push_str(&format!("{},{}\n", k % 2, if k == 4 { "XL".into() } else { k.to_string() }));
//! }
//! let (schema, warnings) = Schema::scan_with_warnings(std::io::Cursor::new(&sizes), "t.csv", &options)?;
//! assert_eq!(schema.kind_counts(), (0, 1, 0)); // read as strings, as before
//! assert!(warnings[0].to_string().contains("19 of its 20 values are numbers"), "{}", warnings[0]);
//! # Ok::<(), sketchlearn::ParseError>(())
//! ```

use super::decimal::parse_f64;
use super::error::{location, ParseError, ParseErrorKind};
use std::fmt;

/// The share of numbers from which a column with other values is refused (see the
/// [module](self) documentation).
pub const STRAY_SHARE: f64 = 0.99;

/// How a value that is not a number is written.
///
/// ```
/// use sketchlearn::data::mixed_column::{written, Written};
/// assert_eq!(written("1,234"), Written::ForPeople);
/// assert_eq!(written("-$1,234.50"), Written::ForPeople);
/// assert_eq!(written("12%"), Written::ForPeople);
/// assert_eq!(written("12,5"), Written::DecimalComma);
/// assert_eq!(written("12,34,5"), Written::Text);
/// assert_eq!(written("n/a2"), Written::Text);
/// assert_eq!(written("$"), Written::Text);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Written {
    /// A number written for people: thousands separators (groups of three digits), a currency
    /// sign before it or a percent sign after it.
    ForPeople,
    /// Digits, one comma, digits (not a group of three): a decimal comma, or a pair.
    DecimalComma,
    /// Anything else.
    Text,
}

/// How `text` (not a number) is written ([`Written`]).
pub fn written(text: &str) -> Written {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    let bare = unsigned.trim_start_matches(['$', '€', '£', '¥']);
    let signed_for_people = bare.len() < unsigned.len();
    if !bare.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return Written::Text; // a word: the scan's common case, told by its first byte
    }
    let (bare, percent) = match bare.strip_suffix('%') {
        Some(b) => (b, true),
        None => (bare, false),
    };
    if !bare.contains(',') {
        let plain = parse_f64(bare.as_bytes()).is_some_and(f64::is_finite);
        return match plain && (signed_for_people || percent) {
            true => Written::ForPeople,
            false => Written::Text,
        };
    }
    let (whole, fraction) = match bare.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (bare, None),
    };
    let groups: Vec<&str> = whole.split(',').collect();
    let thousands = groups[0].len() <= 3
        && groups.iter().all(|g| digits(g))
        && groups[1..].iter().all(|g| g.len() == 3)
        && fraction.is_none_or(|f| f.is_empty() || digits(f));
    if thousands {
        Written::ForPeople
    } else if fraction.is_none() && groups.len() == 2 && groups.iter().all(|g| digits(g)) {
        Written::DecimalComma
    } else {
        Written::Text
    }
}

/// Where a value is: its file, 1-based line and byte column.
#[derive(Clone, Debug, PartialEq)]
pub struct At {
    /// The file's name in messages.
    pub source: String,
    /// The 1-based line.
    pub line: u64,
    /// The 1-based byte column.
    pub column: usize,
}

/// What the scan counts of one column's values (missing ones aside): numbers and the others,
/// by how they are written, and the first that is not a number.
#[derive(Clone, Debug, Default)]
pub(crate) struct ValueCounts {
    numbers: u64,
    for_people: u64,
    decimal_commas: u64,
    texts: u64,
    first: Option<(String, At)>,
}

impl ValueCounts {
    /// Counts `text`, which is a number when `number`; `at` is where it is (asked only for the
    /// first value that is not a number).
    pub fn add(&mut self, text: &str, number: bool, at: impl FnOnce() -> At) {
        if number {
            self.numbers += 1;
            return;
        }
        match written(text) {
            Written::ForPeople => self.for_people += 1,
            Written::DecimalComma => self.decimal_commas += 1,
            Written::Text => self.texts += 1,
        }
        if self.first.is_none() {
            self.first = Some((text.to_string(), at()));
        }
    }

    /// The values that count as numbers for the rule (see the [module](self) documentation).
    fn number_like(&self) -> u64 {
        let commas = match self.numbers + self.for_people {
            0 => 0,
            _ => self.decimal_commas,
        };
        self.numbers + self.for_people + commas
    }

    /// The column `name`'s numbers among other values, when it holds some that are not numbers
    /// and at least half that count as numbers; `hashed`: it is read as a hashed column (else
    /// one-hot).
    pub fn mixed(&self, name: &str, hashed: bool) -> Option<MixedColumn> {
        let (value, at) = self.first.clone()?;
        let values = self.numbers + self.for_people + self.decimal_commas + self.texts;
        let number_like = self.number_like();
        (2 * number_like >= values).then(|| MixedColumn {
            column: name.to_string(),
            values,
            numbers: self.numbers,
            number_like,
            first: value,
            at,
            hashed,
        })
    }
}

/// A CSV column that holds numbers and other values, at least half of them numbers (see the
/// [module](self) documentation): an error ([`MixedColumn::is_refused`],
/// [`MixedColumn::error`]) or a warning (its [`Display`](fmt::Display)).
#[derive(Clone, Debug, PartialEq)]
pub struct MixedColumn {
    /// The column's name.
    pub column: String,
    /// Its values (missing ones aside).
    pub values: u64,
    /// Those that are numbers written plainly.
    pub numbers: u64,
    /// Those that count as numbers for the rule (plainly or for people).
    pub number_like: u64,
    /// The first value that is not a number written plainly, as written.
    pub first: String,
    /// Where it is.
    pub at: At,
    /// Whether the column is read as hashed (else one-hot).
    pub hashed: bool,
}

impl MixedColumn {
    /// True when at least [`STRAY_SHARE`] of the values count as numbers: the scan refuses the
    /// column ([`error`](Self::error)).
    pub fn is_refused(&self) -> bool {
        self.number_like as f64 >= STRAY_SHARE * self.values as f64
    }

    /// What the first other value is, after its text: a number written for people or with a
    /// decimal comma, or nothing.
    fn what_first_is(&self) -> &'static str {
        match written(&self.first) {
            Written::ForPeople => {
                ", a number written for people (a thousands separator, a currency or percent sign)"
            }
            Written::DecimalComma => ", a number written with a decimal comma",
            Written::Text => "",
        }
    }

    /// How to make the column numeric.
    fn fix(&self) -> String {
        let c = &self.column;
        match written(&self.first) {
            Written::Text => format!(
                "write a missing value as empty or NA (pandas: df['{c}'] = \
                 pd.to_numeric(df['{c}'], errors='coerce')) or correct the value"
            ),
            _ => "write the numbers plainly, as 1234.5 (pandas: read_csv(path, thousands=',') \
                  or decimal=',', then .to_csv(new_path, index=False))"
                .into(),
        }
    }

    /// `N of its M values are numbers and K are not, the first "v"`.
    fn counts(&self) -> String {
        let others = self.values - self.numbers;
        format!(
            "{} of its {} values are numbers and {others} {} not, the first {:?}",
            self.numbers,
            self.values,
            if others == 1 { "is" } else { "are" },
            self.first
        )
    }

    /// The scan's error, at the first other value.
    pub fn error(&self) -> ParseError {
        let what = format!(
            "column '{}': {} here{}; as strings, every distinct number would be a category of \
             its own, so a column of at least {:.0} % numbers is refused: {}, or drop the \
             column with --ignore-columns {}",
            self.column,
            self.counts(),
            self.what_first_is(),
            STRAY_SHARE * 100.0,
            self.fix(),
            self.column
        );
        let At {
            source,
            line,
            column,
        } = &self.at;
        ParseError::new(source, *line, *column, ParseErrorKind::Column(what))
    }
}

impl fmt::Display for MixedColumn {
    /// The warning for a column that is not refused.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: column '{}' is read as strings ({}), every distinct number a category of its \
             own: {} at {}{}; if the column is numeric, {}",
            self.at.source,
            self.column,
            if self.hashed { "hashed" } else { "one-hot" },
            self.counts(),
            location(&self.at.source, self.at.line, self.at.column),
            self.what_first_is(),
            self.fix()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(values: &[&str]) -> ValueCounts {
        let mut c = ValueCounts::default();
        for (k, v) in values.iter().enumerate() {
            let number = parse_f64(v.as_bytes()).is_some_and(f64::is_finite);
            let at = || At {
                source: "t.csv".into(),
                line: k as u64 + 2,
                column: 3,
            };
            c.add(v, number, at);
        }
        c
    }

    /// The rule: all numbers, nothing; at least 99 % numbers, refused at the first other value;
    /// at least half, a warning; fewer, nothing. Numbers written for people count as numbers,
    /// a decimal comma only beside other numbers.
    #[test]
    fn a_column_of_numbers_with_strays_is_refused_and_a_mixed_one_warned_about() {
        let numbers: Vec<String> = (0..99).map(|k| format!("{}.5", k)).collect();
        let mut values: Vec<&str> = numbers.iter().map(String::as_str).collect();
        assert_eq!(counts(&values).mixed("x", false), None);
        values.insert(40, "n/a2");
        let m = counts(&values).mixed("x", false).unwrap();
        assert!(m.is_refused());
        assert_eq!((m.values, m.numbers, m.first.as_str()), (100, 99, "n/a2"));
        assert_eq!((m.at.line, m.at.column), (42, 3));
        let e = m.error().to_string();
        assert!(e.starts_with("t.csv:42:3: column 'x': 99 of its 100 values are numbers and 1"));
        assert!(e.contains("NA") && e.contains("--ignore-columns x"), "{e}");
        values.insert(10, "unknown");
        let m = counts(&values).mixed("x", true).unwrap();
        assert!(!m.is_refused() && m.first == "unknown" && m.at.line == 12);
        let w = m.to_string();
        assert!(
            w.starts_with("t.csv: column 'x' is read as strings (hashed)"),
            "{w}"
        );
        assert!(
            w.contains("99 of its 101 values are numbers and 2 are not"),
            "{w}"
        );
        assert!(w.contains("first \"unknown\" at t.csv:12:3"), "{w}");
        let mostly_words = ["a", "b", "c", "1"];
        assert_eq!(counts(&mostly_words).mixed("x", false), None);
        let half = ["a", "b", "1", "2"];
        assert!(!counts(&half).mixed("x", false).unwrap().is_refused());
        let thousands = ["1,234", "12,345.5", "2,000"];
        let m = counts(&thousands).mixed("x", false).unwrap();
        assert!(m.is_refused() && m.numbers == 0, "{m:?}");
        assert!(m.error().to_string().contains("thousands separator"));
        let pairs = ["1,2", "3,4", "5,6"];
        assert_eq!(counts(&pairs).mixed("x", false), None);
        let mut decimal_commas = values[..90].to_vec();
        decimal_commas.retain(|v| *v != "unknown" && *v != "n/a2");
        decimal_commas.push("12,5");
        let m = counts(&decimal_commas).mixed("x", false).unwrap();
        assert!(m.is_refused() && m.first == "12,5");
        assert!(m.error().to_string().contains("decimal comma"), "{m:?}");
    }
}
