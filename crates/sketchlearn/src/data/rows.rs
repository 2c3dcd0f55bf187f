//! Rows of a matrix from a file, for sketching: every row of a LIBSVM, VW or CSV source with its
//! label (CSV rows, which carry none, have label 1), streamed through a callback or collected
//! into a [`RowMatrix`].

use super::{
    CsvOptions, CsvReader, Example, ExampleReader, ExampleSource, Format, ParseError, Row,
};
use crate::sketch::RowMatrix;

/// What can go wrong while reading rows: the input, or the callback on a given line.
#[derive(Debug, thiserror::Error)]
pub enum RowsError<E: std::error::Error + 'static> {
    /// The input could not be read or parsed.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// The callback failed on a row.
    #[error("{source_name}:{line}: {error}")]
    Row {
        /// The input's name.
        source_name: String,
        /// The row's line number.
        line: u64,
        /// The callback's error.
        #[source]
        error: E,
    },
}

/// Streams the rows of `path` (`-` = standard input; `format` resolved from the name when
/// `Auto`; VW hashed into 2^18 weights), calling `f(row, label)` for each. Returns the number of
/// rows and one past the largest feature index seen.
///
/// ```
/// use sketchlearn::data::{for_each_row, Format};
/// let path = std::env::temp_dir().join(format!("rows-doc-{}.libsvm", std::process::id()));
/// std::fs::write(&path, "1 1:2 3:1\n-1 2:5\n").unwrap();
/// let mut labels = vec![];
/// let (n, dim) = for_each_row(path.to_str().unwrap(), Format::Auto, false, |_, y| {
///     labels.push(y);
///     Ok::<(), std::convert::Infallible>(())
/// })
/// .unwrap();
/// assert_eq!((n, dim, labels), (2, 3, vec![1.0, -1.0]));
/// # std::fs::remove_file(&path).ok();
/// ```
pub fn for_each_row<E: std::error::Error + 'static>(
    path: &str,
    format: Format,
    zero_based: bool,
    mut f: impl FnMut(Row<'_>, f64) -> Result<(), E>,
) -> Result<(u64, usize), RowsError<E>> {
    let at = |source_name: &str, line: u64, error: E| RowsError::Row {
        source_name: source_name.to_string(),
        line,
        error,
    };
    let format = format.resolve(path);
    if format.is_csv() {
        if zero_based {
            return Err(ParseError::new(
                super::source::source_name(path),
                0,
                0,
                super::ParseErrorKind::Unsupported(
                    "--zero-based applies to LIBSVM input only".into(),
                ),
            )
            .into());
        }
        let mut reader = CsvReader::open(
            path,
            CsvOptions {
                separator: format.separator(),
                ..CsvOptions::default()
            },
        )?;
        let mut row = Vec::new();
        let (mut n, mut dim) = (0u64, 0usize);
        while reader.read_into(&mut row)? {
            dim = dim.max(row.len());
            f(Row::Dense(&row), 1.0).map_err(|e| at(reader.source_name(), reader.line(), e))?;
            n += 1;
        }
        return Ok((n, dim));
    }
    let bits = super::VwOptions::default().bits;
    let mut reader = ExampleReader::open(path, format, zero_based, bits)?;
    let mut ex = Example::default();
    let mut n = 0;
    while reader.read_into(&mut ex)? {
        f(ex.row(), ex.label).map_err(|e| at(reader.source_name(), reader.line(), e))?;
        n += 1;
    }
    Ok((n, reader.max_index_plus_one()))
}

/// Reads every row of `path` (as [`for_each_row`]) into memory, each row's weight given by
/// `weight(label)`.
pub fn load_rows(
    path: &str,
    format: Format,
    zero_based: bool,
    weight: impl Fn(f64) -> f64,
) -> Result<RowMatrix, ParseError> {
    let mut rows = RowMatrix::new(0);
    let pushed = for_each_row(path, format, zero_based, |row, label| {
        rows.push(row, weight(label));
        Ok::<(), std::convert::Infallible>(())
    });
    let (_, dim) = pushed.map_err(|e| match e {
        RowsError::Parse(p) => p,
        RowsError::Row { error, .. } => match error {},
    })?;
    rows.set_dim(dim);
    Ok(rows)
}
