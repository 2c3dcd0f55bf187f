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

use super::{Input, RunError, TrainOptions, Warning};
use crate::data::{CsvExampleOptions, CsvExampleReader, Format, LabelValues, Schema};
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

/// Opens `input`'s rows through `schema`, separated as `format` (CSV or TSV) says (the values
/// unseen in training it meets are kept for [`Input::unseen_categories`]).
pub(crate) fn reader(
    input: &mut Input,
    schema: &Schema,
    format: Format,
) -> Result<CsvRows, RunError> {
    let name = input.name().to_owned();
    let reader = CsvExampleReader::new(input.open_text()?, name, schema.clone())
        .separated_by(Some(format.separator()));
    input.watch_unseen(reader.unseen_categories());
    Ok(reader)
}

/// A new model's schema from `input` (see [`scan`]); its dimension comes from the columns, so
/// `options.dim` must be unset.
pub(crate) fn scan_new(input: &mut Input, options: &TrainOptions) -> Result<Schema, RunError> {
    if options.dim.is_some() {
        return Err(RunError::options(
            "CSV input: the dimension comes from the columns (no --dim)",
        ));
    }
    let format = input.csv_format(options.read.format);
    scan(input, &options.read.csv, format)
}

/// Scans `input` for a new model's schema and checks that it has a label column (its labels
/// are the run's to map, as any format's: [`super::labels`]); its rows are separated as
/// `format` (CSV or TSV) says. With a valid cache that records this scan, the schema comes from
/// the cache and the text is not read ([`Input::cached_schema`]).
pub(crate) fn scan(
    input: &mut Input,
    options: &CsvExampleOptions,
    format: Format,
) -> Result<Schema, RunError> {
    let name = input.name().to_owned();
    let schema = match input.cached_schema(options, format)? {
        Some(schema) => schema,
        None => {
            // The schema needs every string column's values (and the rows, for the
            // one-hot/hashed choice) before the first example is learned: a stream read once
            // is spooled first.
            input.spool()?;
            let separator = Some(format.separator());
            let (schema, mixed) =
                Schema::scan_separated(input.open_text()?, &name, separator, options)?;
            input.note_scan(mixed.into_iter().map(Warning::MixedColumn));
            input.record_scan(&schema, options);
            schema
        }
    };
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{Example, ExampleSource};
    use crate::run::cache::Opened;

    fn options(label: &str) -> CsvExampleOptions {
        CsvExampleOptions {
            label_column: Some(label.parse().unwrap()),
            ..CsvExampleOptions::default()
        }
    }

    /// Reads every example of `opened` (writing its cache when it is being written); whether
    /// they came from a cache.
    fn drain<S: ExampleSource<Error = crate::data::ParseError>>(mut opened: Opened<S>) -> bool {
        let cached = matches!(opened, Opened::Cached(_));
        let mut ex = Example::default();
        while opened.read_into(&mut ex).unwrap() {}
        cached
    }

    /// With a valid cache that records the scan, a new model's schema comes from the cache and
    /// the text is never opened (the scan and the rows both skipped); other scan options, or a
    /// cache written through a model's schema, scan the text again.
    #[test]
    fn a_valid_cache_spares_the_text_its_schema_scan() {
        let cache =
            std::env::temp_dir().join(format!("sketchlearn-csv-scan-cache-{}", std::process::id()));
        let _ = std::fs::remove_file(&cache);
        let text = b"y,c,x\nYes,a,1\nNo,b,2\nYes,a,\n".to_vec();
        let input = || Input::bytes("t.csv", text.clone()).cache(&cache);
        let mut first = input();
        let schema = scan(&mut first, &options("y"), Format::Csv).unwrap();
        assert!(!drain(first.open_csv(&schema, Format::Csv).unwrap()));
        assert_eq!(
            first.opens(),
            2,
            "the scan, then the rows written to the cache"
        );

        let mut again = input();
        assert_eq!(
            scan(&mut again, &options("y"), Format::Csv).unwrap(),
            schema
        );
        assert!(drain(again.open_csv(&schema, Format::Csv).unwrap()));
        assert_eq!(again.opens(), 0, "neither scanned nor parsed");

        // Read as TSV, the cache of the comma-separated rows does not serve: the text is
        // scanned, as one column holding commas (refused, with the fix).
        let mut tsv = input();
        let err = scan(&mut tsv, &options("y"), Format::Tsv)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("separated by commas") && err.contains("--format csv"),
            "{err}"
        );
        assert_eq!(tsv.opens(), 1);

        // Other scan options: the text is scanned (the schema differs, the cache is rebuilt).
        let mut other = input();
        let ignored = CsvExampleOptions {
            ignore_columns: vec!["c".parse().unwrap()],
            ..options("y")
        };
        let narrower = scan(&mut other, &ignored, Format::Csv).unwrap();
        assert_ne!(narrower, schema);
        assert!(!drain(other.open_csv(&narrower, Format::Csv).unwrap()));
        assert_eq!(other.opens(), 2);

        // A cache written through a model's schema (`test`: no scan) records no scan options:
        // a later scan reads the text, and its schema — the same — is served by that cache.
        std::fs::remove_file(&cache).unwrap();
        let mut evaluated = input();
        assert!(!drain(evaluated.open_csv(&schema, Format::Csv).unwrap()));
        let mut trained = input();
        assert_eq!(
            scan(&mut trained, &options("y"), Format::Csv).unwrap(),
            schema
        );
        assert!(drain(trained.open_csv(&schema, Format::Csv).unwrap()));
        assert_eq!(trained.opens(), 1, "scanned once, the rows from the cache");
        std::fs::remove_file(&cache).unwrap();
    }
}
