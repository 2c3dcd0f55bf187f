//! The data path: examples, streaming parsers and input sources.

pub mod case_twins;
pub mod csv;
pub mod csv_examples;
pub mod csv_schema;
mod decimal;
pub(crate) mod dot4;
pub mod error;
pub mod example;
pub mod feature_names;
pub mod format;
pub mod hashing;
pub mod input_spec;
pub mod interactions;
pub mod labeled;
pub mod libsvm;
mod lines;
pub(crate) mod mapped;
pub mod mixed_column;
mod newline;
pub mod packed;
pub mod parallel_parse;
mod parsed_batch;
pub mod ratings;
pub mod read_ahead;
pub mod rows;
pub mod side_columns;
pub mod source;
pub mod text_input;
pub mod unseen_categories;
pub mod vw;

pub use case_twins::CaseTwins;
pub use csv::{CsvOptions, CsvReader, Separator};
pub use csv_examples::CsvExampleReader;
pub use csv_schema::{
    Column, ColumnKind, ColumnRef, CsvExampleOptions, FilesScan, LabelValues, Schema,
};
pub use decimal::parse_f64;
pub use error::{ParseError, ParseErrorKind};
pub(crate) use example::all_finite;
pub use example::{Example, Row};
pub use feature_names::FeatureNames;
pub use format::{ExampleReader, Format};
pub use input_spec::InputSpec;
pub use interactions::Interactions;
pub use labeled::{
    scan_classes, with_written_label, ClassScan, ClassSpec, LabelField, LabelMap, Labeled, Task,
};
pub use libsvm::{LibsvmOptions, LibsvmReader};
pub use mixed_column::MixedColumn;
pub use packed::{ExampleRef, PackedExamples, PackedExamplesIter};
pub use parallel_parse::ParallelParse;
pub use ratings::{read_ratings, RatingsEncoder, RatingsError, RatingsOptions, RatingsTable};
pub use read_ahead::{ExampleSource, ReadAhead};
pub use rows::{for_each_row, load_rows, RowsError};
pub use source::open_input;
pub use unseen_categories::{UnseenCategories, UnseenTally};
pub use vw::{VwOptions, VwReader};
