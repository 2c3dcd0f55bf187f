//! `sketchlearn predict`: score rows without labels with a saved model, a line in, a line out
//! (flushed, so it can sit in a pipe), and the prediction lines `-p` writes.

use crate::paths::check_output;
use anyhow::{bail, Context, Result};
use sketchlearn::data::{
    open_input, Format, Interactions, LibsvmOptions, LibsvmReader, VwOptions, VwReader,
};
use sketchlearn::labels::Classes;
use sketchlearn::linear::{LinearModel, OnlineLearner};
use sketchlearn::loss::{sigmoid, Loss};
use sketchlearn::{Example, ParseError};
use std::fs::File;
use std::io::{BufRead, BufWriter, Cursor, Write};

/// How a margin is printed: the label in the user's convention and the probability of the
/// positive class (logistic), the label (hinge losses), the value (regression), or the raw
/// margin.
#[derive(Clone, Debug)]
pub enum PredictionFormat {
    /// The raw margin `wᵀx`.
    Raw,
    /// A regression value.
    Value,
    /// A binary label; with the probability of the positive class when `probability`.
    Binary {
        /// The classes (index 1 is positive).
        classes: Classes,
        /// Print `σ(margin)` after the label (logistic loss).
        probability: bool,
    },
}

impl PredictionFormat {
    /// The format for a model with `loss`, its classes if it stores them (else `-1,1`).
    pub fn new(loss: Loss, classes: Option<Classes>, raw: bool) -> Self {
        if raw {
            PredictionFormat::Raw
        } else if !loss.is_classification() {
            PredictionFormat::Value
        } else {
            PredictionFormat::Binary {
                classes: classes.unwrap_or_else(Classes::plus_minus_one),
                probability: loss == Loss::Logistic,
            }
        }
    }

    /// One output line (without the newline).
    pub fn line(&self, margin: f64) -> String {
        match self {
            PredictionFormat::Raw | PredictionFormat::Value => format!("{margin}"),
            PredictionFormat::Binary {
                classes,
                probability: true,
            } => format!("{} {:.6}", classes.binary_label(margin), sigmoid(margin)),
            PredictionFormat::Binary { classes, .. } => classes.binary_label(margin).to_string(),
        }
    }
}

/// Arguments of `sketchlearn predict`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Rows need no label: a LIBSVM row may start with a feature (`3:1 7:0.5`), a VW row with `|`. A \
row that has a label is scored the same (the label is ignored). Output, one line per row: the \
predicted label and the probability of the positive class (logistic loss), the label (hinge \
losses), the value (squared loss), or the margin with --raw.\n\nExample:\n  tail -f rows.libsvm \
| sketchlearn predict -i model.skl -")]
pub struct PredictArgs {
    /// `--quiet`: nothing on stderr but warnings and errors (this command writes no notes).
    #[command(flatten)]
    pub quiet: crate::quiet::Quiet,
    /// The model (written by `train -f`).
    #[arg(short = 'i', long = "initial-model")]
    pub initial_model: String,
    /// Write the predictions to this file (default: standard output).
    #[arg(short = 'p', long = "predictions")]
    pub predictions: Option<String>,
    /// Print raw margins wᵀx instead of labels and probabilities.
    #[arg(long)]
    pub raw: bool,
    /// The class names NEG,POS of a binary model (default: the model's, else -1,1).
    #[arg(long)]
    pub classes: Option<String>,
    /// Input format: auto (`.vw`/`.vw.gz` → vw, else libsvm) | libsvm | vw.
    #[arg(long, default_value_t = Format::Auto)]
    pub format: Format,
    /// LIBSVM indices start at 0.
    #[arg(long)]
    pub zero_based: bool,
    /// VW input: hash bits (default: those of the model's dimension).
    #[arg(short = 'b', long)]
    pub bits: Option<u32>,
    /// Rows to score (`-` = standard input; `.gz` decompressed).
    pub file: String,
}

/// Parses one row that may lack its label (a label `0` is put in front when it does).
struct RowParser {
    format: Format,
    zero_based: bool,
    bits: u32,
    name: String,
    /// The model's `-q` interactions (VW).
    interactions: Interactions,
}

impl RowParser {
    fn parse(&self, line: &str, number: u64, ex: &mut Example) -> Result<bool, ParseError> {
        let t = line.trim_start();
        let unlabeled = match self.format {
            Format::Vw => t.starts_with('|'),
            _ => t
                .split_whitespace()
                .next()
                .is_some_and(|tok| tok.contains(':')),
        };
        let text = if unlabeled {
            format!("0 {line}")
        } else {
            line.to_string()
        };
        let shift = if unlabeled { 2 } else { 0 };
        let result = match self.format {
            Format::Vw => {
                VwReader::new(Cursor::new(text), &self.name, VwOptions { bits: self.bits })
                    .map(|r| r.with_interactions(self.interactions))
                    .and_then(|mut r| r.read_into(ex))
            }
            _ => LibsvmReader::new(
                Cursor::new(text),
                &self.name,
                LibsvmOptions {
                    zero_based: self.zero_based,
                },
            )
            .read_into(ex),
        };
        result.map_err(|mut e| {
            e.line = number;
            e.column = e
                .column
                .saturating_sub(shift)
                .max(usize::from(e.column > 0));
            e
        })
    }
}

pub fn run(args: &PredictArgs) -> Result<()> {
    if let Some(p) = &args.predictions {
        check_output(p, "predictions file", &[&args.file, &args.initial_model])?;
    }
    let model = LinearModel::load(&args.initial_model)?;
    let format = args.format.resolve(&args.file);
    if format == Format::Csv {
        bail!("predict reads LIBSVM or VW rows; CSV needs a model that keeps its CSV schema");
    }
    let dim = model.learner.dim();
    let bits = if format == Format::Vw {
        let b = match args.bits {
            Some(b) => b,
            None if dim.is_power_of_two() => dim.trailing_zeros(),
            None => bail!(
                "the model's dimension {dim} is not 2^bits: it was not trained on VW input \
                 (give LIBSVM rows, or --bits if it was)"
            ),
        };
        if 1usize << b != dim {
            bail!("--bits {b} does not match the model's dimension {dim}");
        }
        b
    } else if args.bits.is_some() {
        bail!("--bits applies to VW input (feature hashing)");
    } else {
        18
    };
    let classes = args
        .classes
        .as_deref()
        .map(Classes::parse_list)
        .transpose()?;
    if classes.as_ref().is_some_and(|c| !c.is_binary()) {
        bail!("--classes takes two classes NEG,POS for a binary model");
    }
    let shape = PredictionFormat::new(model.config.loss, classes, args.raw);
    let mut out: Box<dyn Write> = match args.predictions.as_deref() {
        None | Some("-") => Box::new(std::io::stdout().lock()),
        Some(p) => {
            Box::new(BufWriter::new(File::create(p).with_context(|| {
                format!("cannot create predictions file {p}")
            })?))
        }
    };
    let parser = RowParser {
        format,
        zero_based: args.zero_based,
        bits,
        name: sketchlearn::data::source::source_name(&args.file).to_string(),
        interactions: model.extras.interactions,
    };
    let mut input = open_input(&args.file)?;
    let (mut line, mut number, mut ex) = (String::new(), 0u64, Example::default());
    let mut rows = 0u64;
    loop {
        line.clear();
        if input.read_line(&mut line).context("reading the rows")? == 0 {
            break;
        }
        number += 1;
        if !parser.parse(&line, number, &mut ex)? {
            continue; // blank or comment line
        }
        if let Some(&last) = ex.indices.last().filter(|&&i| i as usize >= dim) {
            bail!(
                "{}:{number}: feature index {} is beyond the model's dimension {dim}: these rows \
                 are not in the format the model was trained on (a VW model needs --format vw, \
                 a 0-based file --zero-based)",
                parser.name,
                u64::from(last) + u64::from(!args.zero_based)
            );
        }
        let margin = model.learner.predict(ex.row());
        writeln!(out, "{}", shape.line(margin))?;
        out.flush()?;
        rows += 1;
    }
    if rows == 0 {
        bail!("no examples in {}", parser.name);
    }
    Ok(())
}
