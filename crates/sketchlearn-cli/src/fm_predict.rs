//! `sketchlearn fm predict`: a saved FM model (`fm -f`, trained on ratings) scores new
//! `(user, item)` pairs — a line in, a line out, flushed, so it can sit in a pipe.
//!
//! Unseen ids: a user or item the model was not trained on has no one-hot feature, so its
//! prediction comes from what the model knows — the other id's terms, the side features and the
//! bias (intercept); for a pair of two unseen ids that is the bias alone, the model's global
//! prediction. `--unseen-error` makes an unseen id an error instead.

use crate::prediction_sink::PredictionSink;
use anyhow::{bail, Context, Result};
use sketchlearn::data::ratings::{line_fields, sniff, RatingColumns, RatingsError, RatingsFormat};
use sketchlearn::data::side_columns::SideColumns;
use sketchlearn::fm::{l2_normalize, FmModel};
use sketchlearn::linear::OnlineLearner;
use sketchlearn::Example;
use std::io::{BufRead, Write};

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

/// Scores LIBSVM rows (with or without their label) with a model trained on LIBSVM rows: its
/// raw prediction, as `fm -p` writes it, a line per row, flushed.
fn score_libsvm(args: &FmPredictArgs, model: &FmModel, clip: Option<(f64, f64)>) -> Result<()> {
    if args.columns.is_some() || args.unseen_error {
        bail!("--columns and --unseen-error are for models trained on ratings; {} was trained on LIBSVM rows", args.model);
    }
    let parser = crate::predict::RowParser {
        format: sketchlearn::data::Format::Libsvm,
        zero_based: args.zero_based,
        bits: 0,
        name: sketchlearn::data::source::source_name(&args.file).to_string(),
        interactions: Default::default(),
    };
    let dim = model.learner.dim();
    let mut out = output(args)?;
    let (mut ex, mut rows) = (Example::default(), 0u64);
    let input = sketchlearn::open_input(&args.file)?;
    for (k, line) in input.lines().enumerate() {
        let number = k as u64 + 1;
        let line = line.with_context(|| format!("{}:{number}: reading", parser.name))?;
        if line.trim().is_empty() || !parser.parse(&line, number, &mut ex)? {
            continue;
        }
        if let Some(&j) = ex.indices.iter().find(|&&j| j as usize >= dim) {
            bail!(
                "{}:{number}: feature index {} is beyond the model's dimension {dim}{}",
                parser.name,
                j as usize + usize::from(!args.zero_based),
                if args.zero_based {
                    ""
                } else {
                    " (1-based; --zero-based if the model was trained so)"
                }
            );
        }
        if model.normalize {
            l2_normalize(&mut ex);
        }
        let p = model.learner.predict(ex.row());
        writeln!(out, "{}", clip.map_or(p, |(lo, hi)| p.clamp(lo, hi)))?;
        if args.predictions.is_none() {
            out.flush()?;
        }
        rows += 1;
    }
    finish(out, rows, &parser.name)
}

/// Where the predictions go: `-p` (in place when the run ends well), else standard output.
fn output(args: &FmPredictArgs) -> Result<PredictionSink> {
    PredictionSink::create_or_stdout(args.predictions.as_deref())
}

/// Where the user, the item and the side columns are on a line; names are resolved against the
/// first non-empty line (the header), so a header works on standard input too. The field
/// separator is decided once, as the ratings reader decides it: `.csv`/`.dat` by the extension,
/// otherwise from the first non-empty line.
struct PairReader {
    spec: Vec<String>,
    /// 0-based fields (user, item, side columns…), once known.
    fields: Option<Vec<usize>>,
    /// The header's field names, when the columns were given by name.
    header: Option<Vec<String>>,
    format: RatingsFormat,
}

impl PairReader {
    /// The columns: `--columns` (user, item, then the model's side columns), else the model's
    /// `--columns` list without its rating when it has side columns, else `1,2`.
    fn new(args: &FmPredictArgs, side: Option<&SideColumns>) -> Result<Self> {
        let n_side = side.map_or(0, |c| c.columns.len());
        let spec = match (&args.columns, side) {
            (Some(spec), _) => spec.clone(),
            (None, Some(c)) => [&c.spec[..2], &c.spec[3..]].concat(),
            (None, None) => vec!["1".into(), "2".into()],
        };
        if spec.len() != 2 + n_side {
            let names: Vec<&str> = side.map_or(Vec::new(), |c| c.names().collect());
            bail!(
                "--columns needs user,item{} ({} columns: the model's side columns after the \
                 user and item), got {}",
                names.iter().map(|n| format!(",{n}")).collect::<String>(),
                2 + n_side,
                spec.len()
            );
        }
        let by_position = spec.iter().all(|c| c.parse::<usize>().is_ok());
        let fields = if by_position {
            let f = |c: &String| RatingColumns::field(c, None, "");
            Some(spec.iter().map(f).collect::<Result<Vec<_>, _>>()?)
        } else {
            None
        };
        let path = args.file.strip_suffix(".gz").unwrap_or(&args.file);
        let format = match std::path::Path::new(path).extension() {
            Some(e) if e == "csv" => RatingsFormat::Csv,
            Some(e) if e == "dat" => RatingsFormat::Dat,
            _ => RatingsFormat::Auto,
        };
        Ok(PairReader {
            spec,
            fields,
            header: None,
            format,
        })
    }

    /// The `--unseen-error` error for the pair `texts` of `line` (the user's when
    /// `user_unseen`, else the item's): file, line, byte column, field and its header name.
    fn unseen(
        &self,
        line: &str,
        texts: &[&str],
        user_unseen: bool,
        source: &str,
        line_no: u64,
    ) -> RatingsError {
        let k = usize::from(!user_unseen);
        let field = self.fields.as_ref().map_or(k, |f| f[k]);
        // The id is a slice of `line` (fields are trimmed sub-slices): its byte offset.
        let column = texts[k].as_ptr() as usize - line.as_ptr() as usize + 1;
        RatingsError::UnseenId {
            source_name: source.to_owned(),
            line: line_no,
            column,
            what: if user_unseen { "user" } else { "item" },
            id: texts[k].to_owned(),
            field: field + 1,
            field_name: self.header.as_ref().and_then(|h| h.get(field)).cloned(),
        }
    }

    /// The user, item and side texts of a line (a missing side field is `""`); `None` for a
    /// blank line or the header.
    fn pair<'a>(
        &mut self,
        line: &'a str,
        source: &str,
        line_no: u64,
    ) -> Result<Option<Vec<&'a str>>> {
        let line = line.trim_end_matches(['\n', '\r']);
        if line.trim().is_empty() {
            return Ok(None);
        }
        if self.format == RatingsFormat::Auto {
            self.format = sniff(line);
        }
        let fields = line_fields(line, self.format);
        let Some(at) = &self.fields else {
            let header: Vec<String> = fields.iter().map(|f| f.to_string()).collect();
            let f = |c: &String| RatingColumns::field(c, Some(&header), source);
            self.fields = Some(self.spec.iter().map(f).collect::<Result<Vec<_>, _>>()?);
            self.header = Some(header);
            return Ok(None);
        };
        match (fields.get(at[0]), fields.get(at[1])) {
            (Some(u), Some(i)) if !u.is_empty() && !i.is_empty() => {
                let side = at[2..]
                    .iter()
                    .map(|&f| fields.get(f).copied().unwrap_or(""));
                Ok(Some([*u, *i].into_iter().chain(side).collect()))
            }
            _ => bail!(
                "{source}:{line_no}: expected a user in field {} and an item in field {} \
                 (--columns), found {} fields",
                at[0] + 1,
                at[1] + 1,
                fields.len()
            ),
        }
    }
}

pub fn run(args: &FmPredictArgs) -> Result<()> {
    crate::paths::check_learning_outputs(
        &[&args.file],
        Some(&args.model),
        None,
        args.predictions.as_deref(),
    )?;
    let clip = match args.clip.as_deref() {
        None => None,
        Some(&[lo, hi]) if lo <= hi => Some((lo, hi)),
        Some(v) => bail!("--clip needs MIN,MAX with MIN <= MAX, got {v:?}"),
    };
    let model = FmModel::load(&args.model)?;
    let Some(encoder) = &model.encoder else {
        return score_libsvm(args, &model, clip);
    };
    if args.zero_based {
        bail!(
            "--zero-based is for models trained on LIBSVM rows; this one scores (user, item) pairs"
        );
    }
    let mut pairs = PairReader::new(args, encoder.side_columns())?;
    let source = if args.file == "-" {
        "<stdin>"
    } else {
        &args.file
    };
    let input = sketchlearn::open_input(&args.file)?;
    let mut out = output(args)?;
    let (mut ex, mut rows) = (Example::default(), 0u64);
    for (k, line) in input.lines().enumerate() {
        let line_no = k as u64 + 1;
        let line = line.with_context(|| format!("{source}:{line_no}: reading"))?;
        let Some(texts) = pairs.pair(&line, source, line_no)? else {
            continue;
        };
        let (user, item) = (texts[0], texts[1]);
        let seen = encoder
            .encode_pair_with_side(user, item, &texts[2..], &mut ex)
            .map_err(|e| RatingsError::SideValue {
                source_name: source.to_owned(),
                line: line_no,
                column: e.column,
                text: e.text,
            })?;
        if args.unseen_error && (seen.unseen_user || seen.unseen_item) {
            return Err(pairs
                .unseen(&line, &texts, seen.unseen_user, source, line_no)
                .into());
        }
        if model.normalize {
            l2_normalize(&mut ex);
        }
        let mut p = model.learner.predict(ex.row());
        if let Some((lo, hi)) = clip {
            p = p.clamp(lo, hi);
        }
        writeln!(out, "{p}")?;
        if args.predictions.is_none() {
            out.flush()?;
        }
        rows += 1;
    }
    finish(out, rows, source)
}

/// Puts the predictions in place, or — when no line was scored (an empty input, a header
/// alone) — says "no examples" as `predict` does, leaving any existing `-p` file as it was.
fn finish(out: PredictionSink, rows: u64, source: &str) -> Result<()> {
    if rows == 0 {
        bail!("no examples in {source}");
    }
    out.finish().context("writing predictions")
}
