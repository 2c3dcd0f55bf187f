//! Where a run reads its examples: an [`Input`] (a file, standard input, bytes in memory or any
//! reader) read as a [`Format`] with the [`ReadOptions`].

use super::RunError;
use crate::data::source::{source_name, wrap};
use crate::data::{
    CsvExampleOptions, ExampleReader, ExampleSource, Format, Interactions, ParseError, ReadAhead,
    VwOptions,
};
use crate::linear::ModelExtras;
use std::io::{BufRead, Cursor};
use std::sync::Arc;

/// A source of examples. A file and bytes in memory can be read several times (passes, the
/// dimension pre-scan); standard input and a reader are read once. Gzip is detected from the
/// content.
///
/// ```
/// use sketchlearn::run::Input;
/// let file = Input::path("data/heart.libsvm");
/// assert!(file.rereadable());
/// let bytes = Input::bytes("memory.libsvm", b"1 1:0.5\n-1 2:1\n".to_vec());
/// assert_eq!(bytes.name(), "memory.libsvm");
/// assert!(!Input::path("-").rereadable()); // standard input
/// ```
pub struct Input {
    name: String,
    kind: Kind,
}

enum Kind {
    Path(String),
    Bytes(Arc<[u8]>),
    Reader(Option<Box<dyn BufRead + Send>>),
}

impl Input {
    /// A file (`-` = standard input).
    pub fn path(path: impl Into<String>) -> Self {
        let path = path.into();
        Input {
            name: source_name(&path).to_owned(),
            kind: Kind::Path(path),
        }
    }

    /// Bytes in memory (e.g. a block handed over by Python or a cluster worker), named `name`
    /// in messages and for the format's detection (`.vw` → VW, …).
    pub fn bytes(name: impl Into<String>, data: impl Into<Arc<[u8]>>) -> Self {
        Input {
            name: name.into(),
            kind: Kind::Bytes(data.into()),
        }
    }

    /// Any reader, read once, named `name` in messages and for the format's detection.
    pub fn reader(name: impl Into<String>, reader: Box<dyn BufRead + Send>) -> Self {
        Input {
            name: name.into(),
            kind: Kind::Reader(Some(reader)),
        }
    }

    /// The name errors use (`<stdin>` for standard input).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the input can be read more than once.
    pub fn rereadable(&self) -> bool {
        match &self.kind {
            Kind::Path(p) => p != "-",
            Kind::Bytes(_) => true,
            Kind::Reader(_) => false,
        }
    }

    /// The format: `format`, or detected from the name when `Auto`.
    pub fn format(&self, format: Format) -> Format {
        match &self.kind {
            Kind::Path(p) => format.resolve(p),
            _ => format.resolve(&self.name),
        }
    }

    /// A fresh reader of the raw (decompressed) text; a one-shot input only once.
    pub(crate) fn open_text(&mut self) -> Result<Box<dyn BufRead + Send>, RunError> {
        match &mut self.kind {
            Kind::Path(p) => Ok(crate::data::open_input(p)?),
            Kind::Bytes(b) => Ok(wrap(Cursor::new(Arc::clone(b)), &self.name)?),
            Kind::Reader(r) => r.take().ok_or_else(|| {
                RunError::options(format!("{}: this input can be read only once", self.name))
            }),
        }
    }

    /// A fresh example reader (see [`ReadOptions`]; `bits` as resolved).
    pub(crate) fn open(
        &mut self,
        options: &ReadOptions,
        bits: u32,
    ) -> Result<ExampleReader, RunError> {
        let format = self.format(options.format);
        let text = self.open_text()?;
        let reader =
            ExampleReader::from_reader(text, &self.name, format, options.zero_based, bits)?;
        Ok(match reader {
            ExampleReader::Vw(r) => ExampleReader::Vw(r.with_interactions(options.interactions)),
            other => other,
        })
    }
}

/// How to read an [`Input`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadOptions {
    /// The format (default: detected from the name: `.vw` VW, `.csv` CSV, else LIBSVM).
    pub format: Format,
    /// LIBSVM indices start at 0.
    pub zero_based: bool,
    /// VW: hash bits (default: those of the model's dimension, else 18). An error for LIBSVM.
    pub bits: Option<u32>,
    /// Parse on a second thread while learning ([`ReadAhead`]; same results).
    pub read_ahead: bool,
    /// CSV: the header, the label column, the ignored columns, when a string column is hashed
    /// (a new model's schema; a trained model reads CSV with its own, [`super::csv`]).
    pub csv: CsvExampleOptions,
    /// VW: namespace pairs crossed into quadratic features (`-q ab`) for a new model (a
    /// trained model crosses its own).
    pub interactions: Interactions,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            format: Format::Auto,
            zero_based: false,
            bits: None,
            read_ahead: true,
            csv: CsvExampleOptions::default(),
            interactions: Interactions::default(),
        }
    }
}

impl ReadOptions {
    /// The hash bits for `format`: `bits`, else those of the model's dimension (a power of two),
    /// else VW's default 18; for LIBSVM, `bits` is refused and 18 returned (unused).
    pub(crate) fn bits(&self, format: Format, model_dim: Option<usize>) -> Result<u32, RunError> {
        if format != Format::Vw {
            if self.bits.is_some() {
                return Err(RunError::options(
                    "--bits applies to VW input (feature hashing); LIBSVM indices are used as \
                     they are",
                ));
            }
            return Ok(VwOptions::default().bits);
        }
        if let Some(b) = self.bits {
            if !(1..=32).contains(&b) {
                return Err(RunError::options(format!(
                    "--bits must be between 1 and 32, got {b}"
                )));
            }
            if let Some(d) = model_dim.filter(|&d| d != 1usize << b) {
                return Err(RunError::options(format!(
                    "--bits {b} does not match the model's dimension {d}"
                )));
            }
            return Ok(b);
        }
        match model_dim {
            Some(d) if d.is_power_of_two() => Ok(d.trailing_zeros()),
            Some(d) => Err(RunError::options(format!(
                "the model's dimension {d} is not a power of two: give --bits"
            ))),
            None => Ok(VwOptions::default().bits),
        }
    }
}

/// A reader of examples, parsed on a second thread or not.
pub(crate) type Examples = Box<dyn ExampleSource<Error = ParseError>>;

/// Opens `input` for one pass with what the model keeps of its input (`extras`: CSV rows
/// through its schema, VW rows with its interactions).
pub(crate) fn examples(
    input: &mut Input,
    options: &ReadOptions,
    bits: u32,
    extras: &ModelExtras,
) -> Result<Examples, RunError> {
    if input.format(options.format) == Format::Csv {
        let reader = super::csv::reader(input, extras.csv.as_ref())?;
        return Ok(boxed(reader, options.read_ahead));
    }
    let options = ReadOptions {
        interactions: extras.interactions,
        ..options.clone()
    };
    Ok(boxed(input.open(&options, bits)?, options.read_ahead))
}

/// `reader`, parsed on a second thread when `read_ahead`.
fn boxed<S>(reader: S, read_ahead: bool) -> Examples
where
    S: ExampleSource<Error = ParseError> + Send + 'static,
{
    if read_ahead {
        Box::new(ReadAhead::new(reader))
    } else {
        Box::new(reader)
    }
}
