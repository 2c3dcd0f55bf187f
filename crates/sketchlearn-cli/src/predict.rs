//! `sketchlearn predict`: score rows without labels with a saved model, a line in, a line out
//! (flushed, so it can sit in a pipe), and the prediction lines `-p` writes.

use crate::paths::{check_learning_outputs, Written};
use crate::prediction_output::PredictionFormat;
use crate::prediction_sink::PredictionSink;
use crate::saved_model::{check_input, AnyModel};
use anyhow::{bail, Context, Result};
use sketchlearn::data::{
    open_input, text_input, unseen_categories, CsvExampleReader, Format, Interactions,
    LibsvmOptions, LibsvmReader, VwOptions, VwReader,
};
use sketchlearn::labels::Classes;
use sketchlearn::linear::multiclass::MulticlassLearner;
use sketchlearn::linear::OnlineLearner;
use sketchlearn::{Example, ParseError, Row};
use std::io::{BufRead, Cursor, Write};

/// Arguments of `sketchlearn predict`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Rows need no label: a LIBSVM row may start with a feature (`3:1 7:0.5`), a VW row with `|`. A \
row that has a label is scored the same (the label is ignored). Output, one line per row: the \
predicted label and the probability of the positive class (logistic loss), the label (hinge \
losses), the value (squared loss), or the margin with --raw; a multiclass \
model prints the label (--probabilities: then one probability per class).\n\nExample:\n  tail -f rows.libsvm \
| sketchlearn predict -i model.skl -")]
pub struct PredictArgs {
    /// `--quiet`: nothing on stderr but warnings and errors (this command writes no notes).
    #[command(flatten)]
    pub quiet: crate::quiet::Quiet,
    #[command(flatten)]
    pub score: crate::score_args::ScoreArgs,
    /// The class names NEG,POS of a binary model (default: the model's; files of format 4 and
    /// 5: -1,1).
    #[arg(long)]
    pub classes: Option<String>,
    /// Input format: auto (`.vw`/`.vw.gz` → vw, else libsvm; a CSV model: csv) | libsvm | vw |
    /// csv | tsv (CSV separated by tabs).
    #[arg(long, default_value_t = Format::Auto)]
    pub format: Format,
    /// LIBSVM indices start at 0.
    #[arg(long)]
    pub zero_based: bool,
    /// VW input: hash bits (default: those of the model's dimension).
    #[arg(short = 'b', long)]
    pub bits: Option<u32>,
    /// Rows to score (`-` = standard input; `.gz` decompressed). Features unseen in training count
    /// as 0 (one warning)
    pub file: String,
}

/// Parses one row that may lack its label (a label `0` is put in front when it does).
pub(crate) struct RowParser {
    pub format: Format,
    pub zero_based: bool,
    pub bits: u32,
    pub name: String,
    /// The model's `-q` interactions (VW).
    pub interactions: Interactions,
}

impl RowParser {
    pub fn parse(&self, line: &str, number: u64, ex: &mut Example) -> Result<bool, ParseError> {
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

/// A model's predictions, formatted.
enum Scorer {
    Linear(sketchlearn::linear::LinearModel, PredictionFormat),
    Multiclass(
        sketchlearn::linear::multiclass::MulticlassModel,
        PredictionFormat,
    ),
}

impl Scorer {
    fn new(model: AnyModel, args: &PredictArgs) -> Result<Self> {
        let classes = args
            .classes
            .as_deref()
            .map(Classes::parse_list)
            .transpose()?;
        Ok(match model {
            AnyModel::Linear(m) => {
                if args.score.probabilities {
                    bail!("--probabilities is for multiclass models (a binary model prints the positive class's probability)");
                }
                if classes.as_ref().is_some_and(|c| !c.is_binary()) {
                    bail!("--classes takes two classes NEG,POS for a binary model");
                }
                let shape = PredictionFormat::binary(
                    m.config.loss,
                    classes.or_else(|| m.classes.clone()),
                    args.score.raw,
                );
                Scorer::Linear(m, shape)
            }
            AnyModel::Multiclass(m) => {
                if classes.is_some() {
                    bail!("--classes: a multiclass model names its own classes");
                }
                let shape = PredictionFormat::multiclass(
                    m.classes.clone(),
                    args.score.raw,
                    args.score.probabilities,
                );
                Scorer::Multiclass(m, shape)
            }
        })
    }

    fn dim(&self) -> usize {
        match self {
            Scorer::Linear(m, _) => m.learner.dim(),
            Scorer::Multiclass(m, _) => m.learner.dim(),
        }
    }

    fn line(&self, x: Row<'_>) -> String {
        match self {
            Scorer::Linear(m, f) => f.line(m.learner.predict(x)),
            Scorer::Multiclass(m, f) => f.multiclass_line(&m.learner.predict_proba(x)),
        }
    }
}

/// Scores the rows of a CSV file (or standard input) through the model's schema.
fn run_csv(
    args: &PredictArgs,
    scorer: &Scorer,
    (schema, format): (&sketchlearn::data::Schema, Format),
    out: &mut dyn Write,
) -> Result<()> {
    let name = sketchlearn::data::source::source_name(&args.file).to_string();
    let mut reader = CsvExampleReader::new(open_input(&args.file)?, name.clone(), schema.clone())
        .separated_by(Some(format.separator()));
    let (mut ex, mut rows, unseen) = (Example::default(), 0u64, reader.unseen_categories());
    while reader.read_into(&mut ex)? {
        writeln!(out, "{}", scorer.line(ex.row()))?;
        out.flush()?;
        rows += 1;
    }
    if rows == 0 {
        bail!("no examples in {name}");
    }
    if let Some(w) = unseen.report(rows) {
        eprintln!("warning: {w}");
    }
    Ok(())
}

pub fn run(args: &PredictArgs) -> Result<()> {
    let (model, p) = (&args.score.initial_model, args.score.predictions.as_deref());
    check_learning_outputs(&[&args.file], Some(model), None, p, Written::Lines)?;
    let model = AnyModel::load(&args.score.initial_model)?;
    let format = check_input(&model, &args.file, args.format, args.zero_based, args.bits)?;
    let schema = model.schema().cloned();
    if format.is_csv() && schema.is_none() {
        bail!("predict reads LIBSVM or VW rows; CSV needs a model trained on CSV (it keeps the columns)");
    }
    let interactions = match &model {
        AnyModel::Linear(m) => m.extras.interactions,
        AnyModel::Multiclass(m) => m.extras.interactions,
    };
    let scorer = Scorer::new(model, args)?;
    let dim = scorer.dim();
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
    let mut out = PredictionSink::create_or_stdout(args.score.predictions.as_deref())?;
    if let Some(schema) = &schema {
        run_csv(args, &scorer, (schema, format), &mut out)?;
        return out.finish().context("writing predictions");
    }
    let parser = RowParser {
        format,
        zero_based: args.zero_based,
        bits,
        name: sketchlearn::data::source::source_name(&args.file).to_string(),
        interactions,
    };
    let mut input = open_input(&args.file)?;
    let (mut bytes, mut number, mut ex) = (Vec::new(), 0u64, Example::default());
    let (mut rows, mut warned) = (0u64, false);
    loop {
        bytes.clear();
        if input
            .read_until(b'\n', &mut bytes)
            .context("reading the rows")?
            == 0
        {
            break;
        }
        number += 1;
        let line = text_input::utf8_line(&bytes, &parser.name, number)?;
        if !parser.parse(line, number, &mut ex)? {
            continue; // blank or comment line
        }
        if let Some(&last) = ex.indices.last().filter(|&&i| !warned && i as usize >= dim) {
            let name = &parser.name;
            let w = unseen_categories::beyond_dimension(name, number, last, args.zero_based, dim);
            eprintln!("warning: {w}");
            warned = true;
        }
        writeln!(out, "{}", scorer.line(ex.row_within(dim)))?;
        out.flush()?;
        rows += 1;
    }
    if rows == 0 {
        bail!("no examples in {}", parser.name);
    }
    out.finish().context("writing predictions")
}
