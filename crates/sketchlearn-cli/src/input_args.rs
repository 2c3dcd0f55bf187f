//! The input flags of `sketchlearn train` (format, dimension, hashing, CSV columns), mapped onto
//! the library's [`ReadOptions`]; the library reads every format, CSV included.

use sketchlearn::data::{ColumnRef, CsvExampleOptions, Format, Interactions};
use sketchlearn::run::{Input, ReadOptions};
use std::path::PathBuf;

/// Where the examples come from and how to read them.
#[derive(clap::Args, Debug)]
#[command(next_help_heading = "Input")]
pub struct InputArgs {
    /// auto (name; stdin+CSV flag: csv)|libsvm|vw|csv|tsv
    #[arg(long, value_name = "F", default_value_t = Format::Auto)]
    pub format: Format,
    /// Dimension d [default: from the file]
    #[arg(long, value_name = "D")]
    pub dim: Option<usize>,
    /// VW: hash into 2^B weights [default: 18, or the model's]
    #[arg(short = 'b', long, value_name = "B")]
    pub bits: Option<u32>,
    /// VW: cross namespaces a and b into quadratic features (repeatable)
    #[arg(short = 'q', long = "interactions", value_name = "AB")]
    pub interactions: Vec<String>,
    /// LIBSVM indices start at 0 (help: under FILE)
    #[arg(long, hide = true)]
    pub zero_based: bool,
    /// Parse on the learner's thread (same results; a rare flag: in the guide)
    #[arg(long, hide = true)]
    pub no_read_ahead: bool,
    /// CSV: label column, by name or 0-based index [default: label]
    #[arg(long, value_name = "COL")]
    pub label_column: Option<ColumnRef>,
    /// CSV: columns that give no feature (names or indices)
    #[arg(long, value_delimiter = ',', value_name = "A,B")]
    pub ignore_columns: Vec<ColumnRef>,
    /// CSV: first line is a header (--no-header: data) [default: detected]
    #[arg(long, conflicts_with = "no_header")]
    pub header: bool,
    /// CSV: the first line is data (help: under --header)
    #[arg(long, hide = true)]
    pub no_header: bool,
    /// CSV: more distinct strings: hashed (2^--hash-bits, 10) [default: 64]
    #[arg(long, value_name = "N", default_value_t = CsvExampleOptions::default().max_categories, hide_default_value = true)]
    pub max_categories: usize,
    /// CSV: a hashed column takes 2^B features (help: under --max-categories)
    #[arg(long, value_name = "B", default_value_t = CsvExampleOptions::default().hash_bits, hide = true)]
    pub hash_bits: u32,
    /// Parse once into this binary cache; later passes/runs read it (VW -c)
    #[arg(short = 'c', long, value_name = "FILE")]
    pub cache: Option<PathBuf>,
    /// LIBSVM (--zero-based: from 0), VW or CSV file (- = stdin; .gz read)
    pub file: String,
}

impl InputArgs {
    /// The library's read options (an error for a malformed `-q`).
    pub fn read_options(&self) -> anyhow::Result<ReadOptions> {
        let mut interactions = Interactions::default();
        for q in &self.interactions {
            interactions.push(q).map_err(anyhow::Error::msg)?;
        }
        Ok(ReadOptions {
            format: Some(self.format())
                .filter(|f| f.is_csv())
                .unwrap_or(self.format),
            zero_based: self.zero_based,
            bits: self.bits,
            read_ahead: !self.no_read_ahead,
            csv: CsvExampleOptions {
                has_header: match (self.header, self.no_header) {
                    (true, _) => Some(true),
                    (_, true) => Some(false),
                    _ => None,
                },
                label_column: self.label_column.clone(),
                ignore_columns: self.ignore_columns.clone(),
                max_categories: self.max_categories,
                hash_bits: self.hash_bits,
            },
            interactions,
        })
    }

    /// The input file, through its `--cache` when given.
    pub fn input(&self) -> Input {
        with_cache(Input::path(&self.file), self.cache.as_ref())
    }

    /// Whether a CSV-only flag is given.
    fn csv_flags(&self) -> bool {
        self.label_column.is_some()
            || !self.ignore_columns.is_empty()
            || self.header
            || self.no_header
    }

    /// The format to read: `--format`, else CSV for standard input with a CSV flag (a pipe has
    /// no name to detect it from), else detected from the file's name.
    pub fn format(&self) -> Format {
        if self.format == Format::Auto && self.file == "-" && self.csv_flags() {
            return Format::Csv;
        }
        self.format.resolve(&self.file)
    }

    /// CSV flags given for another format: an error naming them.
    pub fn check(&self) -> anyhow::Result<()> {
        if self.csv_flags() && !self.format().is_csv() {
            anyhow::bail!(
                "--label-column, --ignore-columns, --header and --no-header apply to CSV input \
                 (a .csv or .tsv file, or --format csv / tsv)"
            );
        }
        if !(1..=24).contains(&self.hash_bits) {
            anyhow::bail!(
                "--hash-bits must be between 1 and 24, got {}",
                self.hash_bits
            );
        }
        Ok(())
    }
}

/// `input` read through the binary cache at `cache`, if given.
pub fn with_cache(input: Input, cache: Option<&PathBuf>) -> Input {
    match cache {
        Some(path) => input.cache(path),
        None => input,
    }
}
