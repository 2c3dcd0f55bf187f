//! Two labels of a CSV scan's label column that differ only by case ([`CaseTwins`]): `yes`
//! and `Yes` are two classes, since labels are compared exactly, so a scan that finds them
//! says where each first appears — across all the files scanned as one input
//! ([`Schema::scan_files_separated`](super::Schema::scan_files_separated), what the Python
//! package's `partial_fit_file` and `sketchlearn.dask` scan) — and how to make them one.
//!
//! ```
//! use sketchlearn::data::{ColumnRef, CsvExampleOptions, Schema};
//! use std::io::Cursor;
//! let options = CsvExampleOptions { label_column: Some(ColumnRef::Name("y".into())), ..Default::default() };
//! let a = "x,y\n1,yes\n2,no\n";
//! let b = "x,y\n3,no\n4,Yes\n";
//! let files = [a, b].into_iter().zip(["a.csv", "b.csv"]).map(|(t, n)| Ok((Cursor::new(t), n.to_string())));
//! let found = Schema::scan_files_separated(files, None, &options)?;
//! let told = found.case_twins.unwrap().to_string();
//! assert!(told.starts_with("b.csv:3:3: the labels yes (first at a.csv:2:3) and Yes (first at b.csv:3:3) in column 'y' differ only by case"), "{told}");
//! # Ok::<(), sketchlearn::ParseError>(())
//! ```

use super::mixed_column::At;
use crate::labels::{first_case_twins, ClassLabel};
use std::collections::BTreeMap;
use std::fmt;

/// Where a label first appears in a scan of several files: the file's index in the scan's
/// order, the 1-based line and column (ordered as they are read).
pub(crate) type FirstSeen = (usize, u64, usize);

/// The first two labels of a label column that differ only by case (the library's rule,
/// [`first_case_twins`]), each with where it first appears (see the [module](self)
/// documentation).
#[derive(Clone, Debug, PartialEq)]
pub struct CaseTwins {
    /// The label column's name.
    pub column: String,
    /// The spelling seen first, and where.
    pub first: (String, At),
    /// The other spelling, and where it first appears (the warning's place).
    pub second: (String, At),
}

impl CaseTwins {
    /// The twins among the labels of `column`, each first seen at `first_seen` in the files
    /// named `sources` (in scan order); `None` when there are none.
    pub(crate) fn find(
        column: &str,
        first_seen: &BTreeMap<ClassLabel, FirstSeen>,
        sources: &[String],
    ) -> Option<CaseTwins> {
        let texts = first_seen.iter().filter_map(|(l, &at)| match l {
            ClassLabel::Text(t) => Some((t.as_str(), at)),
            ClassLabel::Number(_) => None,
        });
        let ((a, at_a), (b, at_b)) = first_case_twins(texts)?;
        let place = |(file, line, column): FirstSeen| At {
            source: sources[file].clone(),
            line,
            column,
        };
        Some(CaseTwins {
            column: column.to_string(),
            first: (a.to_string(), place(at_a)),
            second: (b.to_string(), place(at_b)),
        })
    }
}

impl fmt::Display for CaseTwins {
    /// The warning: at the second spelling's first place, both spellings with theirs, and the
    /// fix.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = |a: &At| super::error::location(&a.source, a.line, a.column);
        let ((a, at_a), (b, at_b)) = (&self.first, &self.second);
        write!(
            f,
            "{}: the labels {a} (first at {}) and {b} (first at {}) in column '{}' differ only \
             by case: they are learned as two classes, since labels are compared exactly (if \
             they name one class, make their case uniform in the files)",
            at(at_b),
            at(at_a),
            at(at_b),
            self.column
        )
    }
}
