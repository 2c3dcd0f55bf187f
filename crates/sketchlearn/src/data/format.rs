//! Input formats and the one reader that opens any of them: [`Format`] (detected from the file
//! name or given) and [`ExampleReader`] (LIBSVM or VW text as a stream of [`Example`]s).

use super::{
    Example, ExampleSource, LibsvmOptions, LibsvmReader, ParseError, ParseErrorKind, VwOptions,
    VwReader,
};
use std::fmt;
use std::io::BufRead;
use std::str::FromStr;

/// The text formats the library reads.
///
/// ```
/// use sketchlearn::data::Format;
/// assert_eq!(Format::Auto.resolve("train.vw.gz"), Format::Vw);
/// assert_eq!(Format::Auto.resolve("rows.csv"), Format::Csv);
/// assert_eq!(Format::Auto.resolve("rows.tsv.gz"), Format::Tsv); // CSV separated by tabs
/// assert_eq!("tsv".parse::<Format>().unwrap().separator(), sketchlearn::data::Separator::TAB);
/// assert!(Format::Tsv.is_csv() && Format::Csv.is_csv() && !Format::Vw.is_csv());
/// assert_eq!(Format::Auto.resolve("a9a"), Format::Libsvm);
/// assert_eq!("vw".parse::<Format>().unwrap(), Format::Vw);
/// ```
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
pub enum Format {
    /// From the file name: `.vw` → VW, `.csv` → CSV, `.tsv` → TSV (CSV separated by tabs), anything
    /// else LIBSVM (a `.gz` suffix is looked through).
    #[default]
    Auto,
    /// LIBSVM / SVMLight: `label idx:val ...`.
    Libsvm,
    /// Vowpal Wabbit text: `label [importance] [tag] |ns feature[:value] ...`, hashed as VW does.
    Vw,
    /// Comma-separated values.
    Csv,
    /// CSV separated by tabs (`--format tsv`, or a `.tsv` name): the same columns, schema and
    /// models as [`Format::Csv`] (a model trained on one reads the other), only the separator
    /// differs.
    Tsv,
}

impl Format {
    /// Every format, in a fixed order.
    pub const ALL: [Format; 5] = [
        Format::Auto,
        Format::Libsvm,
        Format::Vw,
        Format::Csv,
        Format::Tsv,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Format::Auto => "auto",
            Format::Libsvm => "libsvm",
            Format::Vw => "vw",
            Format::Csv => "csv",
            Format::Tsv => "tsv",
        }
    }

    /// Whether rows are read as separated fields through a schema: CSV or TSV.
    pub fn is_csv(self) -> bool {
        matches!(self, Format::Csv | Format::Tsv)
    }

    /// The byte between the fields of a CSV format: a tab for TSV, else a comma.
    pub fn separator(self) -> super::Separator {
        match self {
            Format::Tsv => super::Separator::TAB,
            _ => super::Separator::COMMA,
        }
    }

    /// TSV for TSV, else CSV: the key of rows read through a schema (a cache's).
    pub(crate) fn csv_format(self) -> Format {
        match self {
            Format::Tsv => Format::Tsv,
            _ => Format::Csv,
        }
    }

    /// What a model keeps of the format (TSV is CSV: the schema does not depend on the
    /// separator, so a model trained on either reads both).
    pub fn kind(self) -> Format {
        match self {
            Format::Tsv => Format::Csv,
            f => f,
        }
    }

    /// Resolves `Auto` from the path (`-`, standard input, is LIBSVM).
    pub fn resolve(self, path: &str) -> Format {
        match self {
            Format::Auto => {
                let p = path.strip_suffix(".gz").unwrap_or(path);
                if p.ends_with(".vw") {
                    Format::Vw
                } else if p.ends_with(".csv") {
                    Format::Csv
                } else if p.ends_with(".tsv") {
                    Format::Tsv
                } else {
                    Format::Libsvm
                }
            }
            f => f,
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Format::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown format '{s}' (expected one of: {})",
                    Format::ALL.map(|f| f.name()).join(", ")
                )
            })
    }
}

/// A LIBSVM or VW example reader chosen at run time.
pub enum ExampleReader {
    /// LIBSVM / SVMLight.
    Libsvm(LibsvmReader<Box<dyn BufRead + Send>>),
    /// VW text, hashed into `2^bits` weights.
    Vw(VwReader<Box<dyn BufRead + Send>>),
}

impl ExampleReader {
    /// Opens `path` (`-` = standard input, gzip detected) as `format` (resolved from the name
    /// when `Auto`), with `bits` hash bits for VW. CSV is not an example format here (its rows
    /// carry no label column): asking for it is an error of kind `Unsupported`.
    pub fn open(
        path: &str,
        format: Format,
        zero_based: bool,
        bits: u32,
    ) -> Result<Self, ParseError> {
        let source = super::source::source_name(path);
        let format = Self::check_format(source, format.resolve(path), zero_based)?;
        Self::from_reader(super::open_input(path)?, source, format, zero_based, bits)
    }

    /// Reads `input` (already decompressed, see [`wrap`](super::source::wrap)) as `format`
    /// (resolved from `source_name` when `Auto`); `source_name` names it in errors. The same
    /// formats as [`ExampleReader::open`].
    pub fn from_reader(
        input: Box<dyn BufRead + Send>,
        source_name: &str,
        format: Format,
        zero_based: bool,
        bits: u32,
    ) -> Result<Self, ParseError> {
        match Self::check_format(source_name, format.resolve(source_name), zero_based)? {
            Format::Vw => Ok(ExampleReader::Vw(VwReader::new(
                input,
                source_name,
                VwOptions { bits },
            )?)),
            _ => Ok(ExampleReader::Libsvm(LibsvmReader::new(
                input,
                source_name,
                LibsvmOptions { zero_based },
            ))),
        }
    }

    /// Refuses what the example readers cannot read (CSV; zero-based VW).
    fn check_format(source: &str, format: Format, zero_based: bool) -> Result<Format, ParseError> {
        let unsupported = |what: &str| {
            Err(ParseError::new(
                source,
                0,
                0,
                ParseErrorKind::Unsupported(what.to_string()),
            ))
        };
        match format {
            Format::Vw if zero_based => unsupported("--zero-based applies to LIBSVM input only"),
            Format::Csv | Format::Tsv => {
                unsupported("CSV input has no label column here: give a LIBSVM or VW file")
            }
            f => Ok(f),
        }
    }

    /// One past the largest feature index read so far.
    pub fn max_index_plus_one(&self) -> usize {
        match self {
            ExampleReader::Libsvm(r) => r.max_index_plus_one(),
            ExampleReader::Vw(r) => r.dim(),
        }
    }

    /// The source's name in error messages.
    pub fn source_name(&self) -> &str {
        match self {
            ExampleReader::Libsvm(r) => r.source_name(),
            ExampleReader::Vw(r) => r.source_name(),
        }
    }
}

impl ExampleSource for ExampleReader {
    type Error = ParseError;
    fn read_into(&mut self, ex: &mut Example) -> Result<bool, ParseError> {
        match self {
            ExampleReader::Libsvm(r) => r.read_into(ex),
            ExampleReader::Vw(r) => r.read_into(ex),
        }
    }
    fn line(&self) -> u64 {
        match self {
            ExampleReader::Libsvm(r) => r.line(),
            ExampleReader::Vw(r) => r.line(),
        }
    }
}
