//! Scoring new data with a saved FM model (`sketchlearn fm predict`): [`score_pairs`] reads
//! `(user, item[, side…])` lines for a model trained on ratings, [`score_rows`] LIBSVM rows for
//! one trained on LIBSVM rows; each prediction goes to a callback as soon as it is made, so the
//! scorer can sit in a pipe.
//!
//! Unseen ids: a user or item the model was not trained on has no one-hot feature, so its
//! prediction comes from what the model knows — the other id's terms, the side features and the
//! bias (intercept); for a pair of two unseen ids that is the bias alone, the model's global
//! prediction. [`ScoreOptions::unseen_error`] makes an unseen id an error instead.

use super::pairs::PairReader;
use super::FmRunError;
use crate::data::ratings::RatingsError;
use crate::data::source::source_name;
use crate::data::ParseError;
use crate::fm::{l2_normalize, FmModel};
use crate::linear::OnlineLearner;
use crate::Example;
use std::io::{self, BufRead};

/// How to score.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ScoreOptions {
    /// Pairs: the user and item columns, then the model's side columns (header names or
    /// 1-based positions; default: the model's `--columns` list without its rating when it has
    /// side columns, else `1,2`).
    pub columns: Option<Vec<String>>,
    /// Clip the predictions into `[min, max]`.
    pub clip: Option<(f64, f64)>,
    /// Pairs: an unseen user or item is an error.
    pub unseen_error: bool,
    /// LIBSVM rows: indices start at 0.
    pub zero_based: bool,
}

/// A prediction, clipped, to `out`.
fn emit(
    p: f64,
    clip: Option<(f64, f64)>,
    out: &mut dyn FnMut(f64) -> io::Result<()>,
) -> io::Result<()> {
    out(super::passes::clip(p, clip))
}

/// The lines of `file` (without their `\n` or `\r\n`), each with its 1-based number, or the
/// read error naming it; a line that is not UTF-8 is the error that names its byte and the
/// `iconv` fix ([`utf8_line`](crate::data::text_input::utf8_line)).
fn numbered_lines(
    file: &str,
) -> Result<impl Iterator<Item = Result<(u64, String), FmRunError>> + use<>, FmRunError> {
    let name = source_name(file).to_string();
    let input = crate::open_input(file)?;
    Ok(input.split(b'\n').enumerate().map(move |(k, line)| {
        let line_no = k as u64 + 1;
        let bytes = line.map_err(|error| FmRunError::Read {
            source_name: name.clone(),
            line: line_no,
            error,
        })?;
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(&bytes);
        let text = crate::data::text_input::utf8_line(bytes, &name, line_no)?;
        Ok((line_no, text.to_owned()))
    }))
}

/// Scores the `(user, item[, side…])` lines of `file` (`-`: standard input) with a model trained
/// on ratings, a prediction a line to `out`, in order; the number of lines scored (an input with
/// none is an error).
///
/// ```
/// use sketchlearn::fm::run::{self, FmRunOptions, ScoreOptions};
/// use sketchlearn::run::Silent;
/// let dir = std::env::temp_dir();
/// let (train, pairs) = (dir.join("fm_score_doc.tsv"), dir.join("fm_score_doc_pairs.tsv"));
/// std::fs::write(&train, "1 10 5\n2 10 4\n1 20 3\n2 20 2\n".repeat(20))?;
/// std::fs::write(&pairs, "1\t10\n3\t10\n")?; // user 3 is unseen: a cold-start prediction
/// let fitted = run::train_and_test(&FmRunOptions::new(train.to_str().unwrap()), &mut Silent)?;
/// let mut scores = Vec::new();
/// let options = ScoreOptions { clip: Some((1.0, 5.0)), ..ScoreOptions::default() };
/// let n = run::score_pairs(&fitted.model, pairs.to_str().unwrap(), &options, &mut |p| {
///     scores.push(p);
///     Ok(())
/// })?;
/// assert_eq!((n, scores.len()), (2, 2));
/// std::fs::write(&pairs, b"1\t10\n3\t1\xe9\n")?; // Latin-1: named, with the fix
/// let err = run::score_pairs(&fitted.model, pairs.to_str().unwrap(), &options, &mut |_| Ok(()));
/// let err = err.unwrap_err().to_string();
/// assert!(err.contains("_pairs.tsv:2:4: not UTF-8 text (byte 0xe9)") && err.contains("iconv"), "{err}");
/// assert!(scores[0] > scores[1]); // user 1 rates item 10 highest
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn score_pairs(
    model: &FmModel,
    file: &str,
    options: &ScoreOptions,
    out: &mut dyn FnMut(f64) -> io::Result<()>,
) -> Result<u64, FmRunError> {
    let Some(encoder) = &model.encoder else {
        return Err(FmRunError::options(
            "this model was trained on LIBSVM rows; it scores rows, not (user, item) pairs",
        ));
    };
    if options.zero_based {
        return Err(FmRunError::options(
            "--zero-based is for models trained on LIBSVM rows; this one scores (user, item) pairs",
        ));
    }
    let mut pairs = PairReader::new(file, options.columns.as_deref(), encoder.side_columns())?;
    let source = source_name(file);
    let (mut ex, mut rows) = (Example::default(), 0u64);
    for line in numbered_lines(file)? {
        let (line_no, line) = line?;
        let Some(texts) = pairs.pair(&line, source, line_no)? else {
            continue;
        };
        let seen = encoder
            .encode_pair_with_side(texts[0], texts[1], &texts[2..], &mut ex)
            .map_err(|e| RatingsError::SideValue {
                source_name: source.to_owned(),
                line: line_no,
                column: e.column,
                text: e.text,
            })?;
        if options.unseen_error && (seen.unseen_user || seen.unseen_item) {
            return Err(pairs
                .unseen(&line, &texts, seen.unseen_user, source, line_no)
                .into());
        }
        if model.normalize {
            l2_normalize(&mut ex);
        }
        emit(model.learner.predict(ex.row()), options.clip, out)?;
        rows += 1;
    }
    scored(rows, source)
}

/// Scores the LIBSVM rows of `file` (with or without their label; `parse` reads a line into an
/// example, `false` for none) with a model trained on LIBSVM rows: its raw prediction, as
/// `sketchlearn fm -p` writes it, a row at a time to `out`; the number of rows scored.
pub fn score_rows(
    model: &FmModel,
    file: &str,
    options: &ScoreOptions,
    parse: &mut dyn FnMut(&str, u64, &mut Example) -> Result<bool, ParseError>,
    out: &mut dyn FnMut(f64) -> io::Result<()>,
) -> Result<u64, FmRunError> {
    let name = source_name(file);
    let dim = model.learner.dim();
    let (mut ex, mut rows) = (Example::default(), 0u64);
    for line in numbered_lines(file)? {
        let (number, line) = line?;
        if line.trim().is_empty() || !parse(&line, number, &mut ex)? {
            continue;
        }
        if let Some(&j) = ex.indices.iter().find(|&&j| j as usize >= dim) {
            return Err(FmRunError::options(format!(
                "{name}:{number}: feature index {} is beyond the model's dimension {dim}{}",
                j as usize + usize::from(!options.zero_based),
                if options.zero_based {
                    ""
                } else {
                    " (1-based; --zero-based if the model was trained so)"
                }
            )));
        }
        if model.normalize {
            l2_normalize(&mut ex);
        }
        emit(model.learner.predict(ex.row()), options.clip, out)?;
        rows += 1;
    }
    scored(rows, name)
}

/// The rows scored; none (an empty input, a header alone) is an error that says so.
fn scored(rows: u64, source: &str) -> Result<u64, FmRunError> {
    if rows == 0 {
        return Err(FmRunError::options(format!("no examples in {source}")));
    }
    Ok(rows)
}
