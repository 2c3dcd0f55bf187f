//! `sketchlearn fm predict`: a saved FM model (`fm -f`) scores new `(user, item)` pairs, or
//! LIBSVM rows for a model trained on them — a line in, a line out, flushed, so it can sit in a
//! pipe (the library's [`score_pairs`] and [`score_rows`]; unseen ids: see there).

use crate::prediction_sink::PredictionSink;
use anyhow::{bail, Context, Result};
use sketchlearn::fm::run::{score_pairs, score_rows, ScoreOptions};
use sketchlearn::fm::FmModel;
use std::io::Write;

/// Arguments of `sketchlearn fm predict`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Input: one pair a line, `user item` (more fields are ignored: a ratings file works as it is), \
separated by tabs/spaces, commas or `::` (`.csv`/`.dat` by the extension, otherwise decided \
from the first line). With --columns the user and item (then a model's side columns) are taken \
by header name (the first line is then the header) or 1-based position; a model trained with \
side columns reads its own --columns list by default. Output: one prediction a line (the \
model's scale: raw ratings for a ratings model).\n\n\
A model trained on LIBSVM rows scores LIBSVM rows (a label in front is ignored), its raw \
prediction as `fm -p` writes it (--zero-based as in training).\n\n\
Unseen users and items: their one-hot feature is left out, so the prediction comes from the \
other id, the side features and the bias; a pair of two unseen ids gets the bias alone (the \
global prediction). --unseen-error refuses them instead.\n\n\
Example:\n  sketchlearn fm --scale 1,5 -f ml.model u.data\n  \
printf '196\\t242\\n1\\t99999\\n' | sketchlearn fm predict -i ml.model --clip 1,5 -")]
pub struct FmPredictArgs {
    /// The model (written by `fm -f` on a ratings file).
    #[arg(short = 'i', long = "initial-model")]
    pub model: String,
    /// Write the predictions here (default: standard output).
    #[arg(short = 'p', long = "predictions")]
    pub predictions: Option<String>,
    /// The user and item columns, then the model's side columns, each a header name or a
    /// 1-based position [default: 1,2; for a model with side columns its --columns list
    /// without the rating].
    #[arg(
        long,
        value_delimiter = ',',
        num_args = 1,
        value_name = "USER,ITEM[,SIDE..]"
    )]
    pub columns: Option<Vec<String>>,
    /// Clip predictions into MIN,MAX (e.g. the rating scale 1,5).
    #[arg(long, value_delimiter = ',', num_args = 1, value_name = "MIN,MAX")]
    pub clip: Option<Vec<f64>>,
    /// An unseen user or item is an error instead of a prediction without its feature.
    #[arg(long)]
    pub unseen_error: bool,
    /// LIBSVM rows (a model trained on LIBSVM): indices start at 0.
    #[arg(long)]
    pub zero_based: bool,
    /// `--quiet`: nothing on stderr but warnings and errors (this command writes no notes).
    #[command(flatten)]
    pub quiet: crate::quiet::Quiet,
    /// Pairs to score, or LIBSVM rows for a model trained on LIBSVM (`-` = standard input;
    /// `.gz` decompressed).
    pub file: String,
}

pub fn run(args: &FmPredictArgs) -> Result<()> {
    crate::paths::check_learning_outputs(
        &[&args.file],
        Some(&args.model),
        None,
        args.predictions.as_deref(),
        crate::paths::Written::Values,
    )?;
    let clip = match args.clip.as_deref() {
        None => None,
        Some(&[lo, hi]) if lo <= hi => Some((lo, hi)),
        Some(v) => bail!("--clip needs MIN,MAX with MIN <= MAX, got {v:?}"),
    };
    let model = FmModel::load(&args.model)?;
    let libsvm = model.encoder.is_none();
    if libsvm && (args.columns.is_some() || args.unseen_error) {
        bail!("--columns and --unseen-error are for models trained on ratings; {} was trained on LIBSVM rows", args.model);
    }
    let options = ScoreOptions {
        columns: args.columns.clone(),
        clip,
        unseen_error: args.unseen_error,
        zero_based: args.zero_based,
    };
    let mut out = PredictionSink::create_or_stdout(args.predictions.as_deref())?;
    let flush = args.predictions.is_none();
    let mut write = |p: f64| {
        writeln!(out, "{p}")?;
        if flush {
            out.flush()?;
        }
        Ok(())
    };
    if libsvm {
        let parser = crate::predict::RowParser {
            format: sketchlearn::data::Format::Libsvm,
            zero_based: args.zero_based,
            bits: 0,
            name: sketchlearn::data::source::source_name(&args.file).to_string(),
            interactions: Default::default(),
        };
        let mut parse = |line: &str, number, ex: &mut _| parser.parse(line, number, ex);
        score_rows(&model, &args.file, &options, &mut parse, &mut write)?;
    } else {
        score_pairs(&model, &args.file, &options, &mut write)?;
    }
    out.finish().context("writing predictions")
}
