//! CSV options of `train` (`--label-column`, `--ignore-columns`, ...) and the CSV file as
//! examples: the library's [`Schema`] (one scan) and [`CsvExampleReader`], handed to the run as
//! LIBSVM text (0-based indices) in memory.

use anyhow::{bail, Result};
use sketchlearn::data::{ColumnRef, CsvExampleOptions, CsvExampleReader, LabelValues, Schema};
use sketchlearn::labels::Classes;
use sketchlearn::Example;
use std::fmt::Write;

/// CSV input options.
#[derive(clap::Args, Debug, Default, Clone)]
pub struct CsvArgs {
    /// CSV: the label column, by header name or 0-based index (default: a column named
    /// `label`).
    #[arg(long, value_name = "NAME|INDEX")]
    pub label_column: Option<ColumnRef>,
    /// CSV: columns that give no feature, comma-separated names or indices.
    #[arg(long, value_delimiter = ',', value_name = "A,B")]
    pub ignore_columns: Vec<ColumnRef>,
    /// CSV: the first line is data, not a header (default: detected).
    #[arg(long)]
    pub no_header: bool,
    /// CSV: a string column with more distinct values is hashed instead of one-hot.
    #[arg(long, default_value_t = 64)]
    pub max_categories: usize,
}

impl CsvArgs {
    fn options(&self) -> CsvExampleOptions {
        CsvExampleOptions {
            has_header: self.no_header.then_some(false),
            label_column: self.label_column.clone(),
            ignore_columns: self.ignore_columns.clone(),
            max_categories: self.max_categories,
            ..Default::default()
        }
    }
}

/// A scanned CSV file as 0-based LIBSVM text, with its schema.
pub struct CsvExamples {
    pub schema: Schema,
    pub libsvm: Vec<u8>,
    #[allow(dead_code)]
    pub rows: u64,
}

/// Scans `path` and converts its rows (errors name the CSV file, line and column).
pub fn read(path: &str, args: &CsvArgs, multiclass: bool) -> Result<CsvExamples> {
    if path == "-" {
        bail!("CSV input is scanned once for its columns before learning: give a file, not -");
    }
    let schema = Schema::scan(sketchlearn::open_input(path)?, path, &args.options())?;
    match schema.labels() {
        LabelValues::None => bail!(
            "{path}: no label column: give --label-column NAME|INDEX (columns: {})",
            schema
                .columns()
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        LabelValues::Classes(c) if !c.is_binary() && !multiclass => bail!(
            "{path}: {} classes ({}) for a binary learner: use --multiclass",
            c.len(),
            c.to_list()
        ),
        _ => {}
    }
    let (libsvm, rows) = libsvm_text(CsvExampleReader::open(path, schema.clone())?)?;
    Ok(CsvExamples {
        schema,
        libsvm,
        rows,
    })
}

/// The rows of a CSV reader as 0-based LIBSVM text (labels as the reader maps them: the
/// number, `±1` for two named classes, the class index for more).
fn libsvm_text<R: std::io::BufRead>(mut reader: CsvExampleReader<R>) -> Result<(Vec<u8>, u64)> {
    let (mut ex, mut text, mut rows) = (Example::default(), String::new(), 0u64);
    while reader.read_into(&mut ex)? {
        let _ = write!(text, "{}", ex.label);
        for (i, v) in ex.indices.iter().zip(&ex.values) {
            let _ = write!(text, " {i}:{v}");
        }
        text.push('\n');
        rows += 1;
    }
    Ok((text.into_bytes(), rows))
}

/// The classes a CSV file's named labels become in its LIBSVM conversion: `-1,1` for two,
/// `0,1,...,K-1` for more (in the order of the names).
pub fn index_classes(k: usize) -> Classes {
    let list = if k == 2 {
        "-1,1".to_string()
    } else {
        (0..k).map(|i| i.to_string()).collect::<Vec<_>>().join(",")
    };
    Classes::parse_list(&list).expect("two or more distinct indices")
}

/// A CSV file converted to 0-based LIBSVM in a temporary file, removed when dropped.
pub struct TempLibsvm {
    path: std::path::PathBuf,
    path_text: String,
}

impl TempLibsvm {
    fn write(text: &[u8]) -> Result<Self> {
        static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let path = std::env::temp_dir().join(format!(
            "sketchlearn-csv-{}-{}.libsvm",
            std::process::id(),
            COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        std::fs::write(&path, text)?;
        Ok(TempLibsvm {
            path_text: path.to_string_lossy().into_owned(),
            path,
        })
    }

    /// Converts the CSV file `path` (with or without its label column) through `schema`; a
    /// class the schema does not know is an error at its line and column.
    pub fn convert(path: &str, schema: &Schema) -> Result<Self> {
        let (text, _) = libsvm_text(CsvExampleReader::open(path, schema.clone())?)?;
        Self::write(&text)
    }

    /// Where the LIBSVM text is.
    pub fn path(&self) -> &str {
        &self.path_text
    }
}

impl Drop for TempLibsvm {
    fn drop(&mut self) {
        std::fs::remove_file(&self.path).ok();
    }
}

/// One line about the schema for the progress output.
pub fn describe(schema: &Schema) -> String {
    let (numeric, onehot, hashed) = schema.kind_counts();
    let labels = match schema.classes() {
        Some(c) => format!(", classes {} (the second positive)", c.to_list()),
        None => String::new(),
    };
    format!(
        "csv: {} rows, d = {} ({numeric} numeric, {onehot} one-hot and {hashed} hashed columns){labels}",
        schema.rows(),
        schema.dim()
    )
}

/// `sketchlearn train` with the CSV options.
#[derive(clap::Args, Debug)]
pub struct TrainCommand {
    #[command(flatten)]
    pub train: crate::train::TrainArgs,
    #[command(flatten)]
    pub csv: CsvArgs,
}

/// Trains on a CSV file: scans it, hands its rows to `train` as 0-based LIBSVM (a temporary
/// file, removed afterwards) with the schema's dimension. Other formats go straight through.
pub fn train(cmd: &mut TrainCommand) -> Result<()> {
    let args = &mut cmd.train;
    if args.format.resolve(&args.file) != sketchlearn::data::Format::Csv {
        if cmd.csv.label_column.is_some() || !cmd.csv.ignore_columns.is_empty() {
            bail!("--label-column and --ignore-columns apply to CSV input (a .csv file or --format csv)");
        }
        return crate::train::train(args);
    }
    if args.dim.is_some() || args.bits.is_some() || args.zero_based {
        bail!("CSV input: the dimension comes from the columns (no --dim, --bits or --zero-based)");
    }
    let (temp, schema) = match &args.initial_model {
        // Resuming: the rows through the model's columns and categories.
        Some(model) => {
            let m = crate::saved_model::AnyModel::load(model)?;
            let Some(schema) = m.schema().cloned() else {
                bail!(
                    "{model}: this model was not trained on CSV; it cannot read {}",
                    args.file
                );
            };
            (TempLibsvm::convert(&args.file, &schema)?, schema)
        }
        None => {
            let csv = read(&args.file, &cmd.csv, args.class.is_multiclass())?;
            if !args.quiet {
                eprintln!("{}", describe(&csv.schema));
            }
            (TempLibsvm::write(&csv.libsvm)?, csv.schema)
        }
    };
    if schema.classes().is_some() && args.class.classes.is_some() {
        bail!("{}: the classes of a CSV label column are its names, sorted: --classes applies to numeric labels", args.file);
    }
    args.file = temp.path().to_owned();
    args.format = sketchlearn::data::Format::Libsvm;
    args.zero_based = true;
    args.dim = args.initial_model.is_none().then(|| schema.dim());
    args.csv_schema = Some(schema);
    crate::train::train(args)
}
