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
use std::io::BufRead;

/// A CSV reader of `input` through `schema`.
pub(crate) type CsvRows = CsvExampleReader<Box<dyn BufRead + Send>>;

/// Opens `input`'s rows through `schema` (the model's; `None`: the model was not trained on
/// CSV, an error naming the fix).
pub(crate) fn reader(input: &mut Input, schema: Option<&Schema>) -> Result<CsvRows, RunError> {
    let Some(schema) = schema else {
        return Err(RunError::options(format!(
            "{}: the model was not trained on CSV, so it has no columns to read this file with \
             (give the data in the model's format, or --format libsvm / vw)",
            input.name()
        )));
    };
    let name = input.name().to_owned();
    Ok(CsvExampleReader::new(
        input.open_text()?,
        name,
        schema.clone(),
    ))
}

/// A new model's schema from `input` (see [`scan`]); its dimension comes from the columns, so
/// `options.dim` must be unset.
pub(crate) fn scan_new(
    input: &mut Input,
    options: &TrainOptions,
    multiclass: bool,
) -> Result<Schema, RunError> {
    if options.dim.is_some() {
        return Err(RunError::options(
            "CSV input: the dimension comes from the columns (no --dim)",
        ));
    }
    scan(input, &options.read.csv, multiclass)
}

/// Scans `input` for a new model's schema and checks that it has a label column with labels a
/// binary or regression learner (or, `multiclass`, a multiclass learner) can take.
pub(crate) fn scan(
    input: &mut Input,
    options: &CsvExampleOptions,
    multiclass: bool,
) -> Result<Schema, RunError> {
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
        LabelValues::Classes(c) if !c.is_binary() && !multiclass => {
            Err(RunError::options(format!(
                "{name}: {} classes ({}): a linear learner here is binary or regression; \
             several classes need the multiclass learner (--multiclass)",
                c.len(),
                c.to_list()
            )))
        }
        _ => Ok(schema),
    }
}

/// One line about a schema for reports: rows, dimension, column kinds, classes (which one is
/// positive unless `multiclass`).
///
/// ```
/// use sketchlearn::data::{CsvExampleOptions, Schema};
/// let text = "y,city,x\nYes,Oslo,1\nNo,Lima,2\n";
/// let options = CsvExampleOptions { label_column: Some("y".parse().unwrap()), ..Default::default() };
/// let schema = Schema::scan(std::io::Cursor::new(text), "a.csv", &options)?;
/// assert_eq!(
///     sketchlearn::run::describe_schema(&schema, false),
///     "csv: 2 rows, d = 3 (1 numeric, 1 one-hot and 0 hashed columns), classes No,Yes (the second positive)"
/// );
/// assert!(sketchlearn::run::describe_schema(&schema, true).ends_with("classes No,Yes"));
/// # Ok::<(), sketchlearn::ParseError>(())
/// ```
pub fn describe_schema(schema: &Schema, multiclass: bool) -> String {
    let (numeric, onehot, hashed) = schema.kind_counts();
    let labels = match schema.classes() {
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
