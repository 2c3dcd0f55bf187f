//! Reading rows from LIBSVM or CSV files for the commands.

use anyhow::{bail, Context, Result};
use sketchlearn::sketch::RowMatrix;
use sketchlearn::{CsvOptions, CsvReader, Example, LibsvmOptions, LibsvmReader, Row};

/// Input file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// By extension: `.csv` (optionally `.gz`) is CSV, anything else LIBSVM.
    Auto,
    /// LIBSVM / SVMLight: `label idx:val ...`.
    Libsvm,
    /// Dense comma-separated numbers, no label column.
    Csv,
}

impl Format {
    /// Resolves `Auto` from the path.
    pub fn resolve(self, path: &str) -> Format {
        match self {
            Format::Auto => {
                let p = path.strip_suffix(".gz").unwrap_or(path);
                if p.ends_with(".csv") {
                    Format::Csv
                } else {
                    Format::Libsvm
                }
            }
            f => f,
        }
    }
}

/// Streams the rows of `path`, calling `f(row, label)` for each (CSV rows have label 1).
/// Returns the number of rows and one past the largest feature index seen.
pub fn for_each_row(
    path: &str,
    format: Format,
    zero_based: bool,
    mut f: impl FnMut(Row<'_>, f64) -> Result<()>,
) -> Result<(u64, usize)> {
    match format.resolve(path) {
        Format::Libsvm | Format::Auto => {
            let mut reader = LibsvmReader::open(path, LibsvmOptions { zero_based })?;
            let mut ex = Example::default();
            let mut n = 0;
            while reader.read_into(&mut ex)? {
                f(ex.row(), ex.label)
                    .with_context(|| format!("{}:{}", reader.source_name(), reader.line()))?;
                n += 1;
            }
            Ok((n, reader.max_index_plus_one()))
        }
        Format::Csv => {
            if zero_based {
                bail!("--zero-based applies to LIBSVM input only");
            }
            let mut reader = CsvReader::open(path, CsvOptions::default())?;
            let mut row = Vec::new();
            let (mut n, mut dim) = (0u64, 0usize);
            while reader.read_into(&mut row)? {
                dim = dim.max(row.len());
                f(Row::Dense(&row), 1.0)
                    .with_context(|| format!("{}:{}", reader.source_name(), reader.line()))?;
                n += 1;
            }
            Ok((n, dim))
        }
    }
}

/// Reads every row of `path` into memory, with each row's weight given by `weight(label)`.
pub fn load_rows(
    path: &str,
    format: Format,
    zero_based: bool,
    weight: impl Fn(f64) -> f64,
) -> Result<RowMatrix> {
    let mut rows = RowMatrix::new(0);
    let (_, dim) = for_each_row(path, format, zero_based, |row, label| {
        rows.push(row, weight(label));
        Ok(())
    })?;
    rows.set_dim(dim);
    Ok(rows)
}
