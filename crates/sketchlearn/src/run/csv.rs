//! CSV as a run's input: a new model's [`Schema`] is found by one scan of the input (header,
//! label column, numeric / one-hot / hashed columns, see [`crate::data::csv_schema`]) and kept
//! in the model ([`InputSpec::schema`](crate::data::InputSpec)); every pass, and any later
//! evaluation or resumed training, reads the rows through that schema, so the features mean the
//! same thing in every file and `inspect` can name them.
//!
//! A stream read once (standard input, a pipe) is first copied to a spool ([`Input`]'s spool: an
//! unlinked temporary file within the input's spool limit) and scanned there: a schema inferred
//! from the first rows could not know the string values that come later (they would have to be
//! hashed, and the one-hot columns would depend on where the stream was cut), so a pipe gives
//! the same schema, model and progressive error as the file.

use super::{Input, RunError, TrainOptions};
use crate::data::{CsvExampleOptions, CsvExampleReader, LabelValues, Schema};
use crate::labels::Classes;
use std::io::BufRead;

/// A CSV reader of `input` through `schema`.
pub(crate) type CsvRows = CsvExampleReader<Box<dyn BufRead + Send>>;

/// The model's `schema` for reading `input` (`None`: the model was not trained on CSV, an
/// error naming the fix).
pub(crate) fn model_schema<'a>(
    input: &Input,
    schema: Option<&'a Schema>,
) -> Result<&'a Schema, RunError> {
    schema.ok_or_else(|| {
        RunError::options(format!(
            "{}: the model was not trained on CSV, so it has no columns to read this file with \
             (give the data in the model's format, or --format libsvm / vw)",
            input.name()
        ))
    })
}

/// Opens `input`'s rows through `schema`.
pub(crate) fn reader(input: &mut Input, schema: &Schema) -> Result<CsvRows, RunError> {
    let name = input.name().to_owned();
    Ok(CsvExampleReader::new(
        input.open_text()?,
        name,
        schema.clone(),
    ))
}

/// A new model's schema from `input` (see [`scan`]); its dimension comes from the columns, so
/// `options.dim` must be unset.
pub(crate) fn scan_new(input: &mut Input, options: &TrainOptions) -> Result<Schema, RunError> {
    if options.dim.is_some() {
        return Err(RunError::options(
            "CSV input: the dimension comes from the columns (no --dim)",
        ));
    }
    scan(input, &options.read.csv)
}

/// Scans `input` for a new model's schema and checks that it has a label column (its labels
/// are the run's to map, as any format's: [`super::labels`]).
pub(crate) fn scan(input: &mut Input, options: &CsvExampleOptions) -> Result<Schema, RunError> {
    // The schema needs every string column's values (and the rows, for the one-hot/hashed
    // choice) before the first example is learned: a stream read once is spooled first.
    input.spool()?;
    let name = input.name().to_owned();
    let schema = Schema::scan(input.open_text()?, &name, options)?;
    let columns = || {
        let names: Vec<&str> = schema.columns().iter().map(|c| c.name.as_str()).collect();
        names.join(", ")
    };
    match schema.labels() {
        LabelValues::None => Err(RunError::options(format!(
            "{name}: no label column: give --label-column NAME|INDEX (columns: {})",
            columns()
        ))),
        _ => Ok(schema),
    }
}

/// One line about a schema for reports: rows, dimension, column kinds, and the run's classes
/// when they are a CSV column's names (which one is positive unless `multiclass`).
///
/// ```
/// use sketchlearn::data::{CsvExampleOptions, Schema};
/// use sketchlearn::labels::Classes;
/// let text = "y,city,x\nYes,Oslo,1\nNo,Lima,2\n";
/// let options = CsvExampleOptions { label_column: Some("y".parse().unwrap()), ..Default::default() };
/// let schema = Schema::scan(std::io::Cursor::new(text), "a.csv", &options)?;
/// let classes = Classes::parse_list("No,Yes").unwrap();
/// assert_eq!(
///     sketchlearn::run::describe_schema(&schema, Some(&classes), false),
///     "csv: 2 rows, d = 3 (1 numeric, 1 one-hot and 0 hashed columns), classes No,Yes (the second positive)"
/// );
/// assert!(sketchlearn::run::describe_schema(&schema, Some(&classes), true).ends_with("classes No,Yes"));
/// # Ok::<(), sketchlearn::ParseError>(())
/// ```
pub fn describe_schema(schema: &Schema, classes: Option<&Classes>, multiclass: bool) -> String {
    let (numeric, onehot, hashed) = schema.kind_counts();
    let named = classes.filter(|_| schema.classes().is_some());
    let labels = match named {
        Some(c) if multiclass => format!(", classes {}", c.to_list()),
        Some(c) => format!(", classes {} (the second positive)", c.to_list()),
        None => String::new(),
    };
    format!(
        "csv: {} rows, d = {} ({numeric} numeric, {onehot} one-hot and {hashed} hashed columns){labels}",
        schema.rows(),
        schema.dim()
    )
}
