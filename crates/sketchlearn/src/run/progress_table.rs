//! The progress table a front end prints while a run learns (VW's layout: average loss, loss
//! since the last row, example counter and weight, then the last example's label, prediction
//! and feature count). A binary classifier's label and prediction are shown in the user's
//! classes (`Yes`/`No`, `0`/`1`, …: the label the prediction gives, as `predict` prints it),
//! not as the internal `−1/+1` and margin; a regression run shows the numbers.

use crate::eval::ProgressRow;
use crate::labels::Classes;

/// The table's two header lines (column names), each without its newline.
///
/// ```
/// let [top, bottom] = sketchlearn::run::progress_header();
/// assert!(top.starts_with("average") && bottom.starts_with("loss"));
/// ```
pub fn progress_header() -> [String; 2] {
    let line = |names: [&str; 7]| {
        let [a, b, c, d, e, f, g] = names;
        format!("{a:<12} {b:<12} {c:>12} {d:>12} {e:>9} {f:>9} {g:>9}")
    };
    [
        line([
            "average", "since", "example", "example", "current", "current", "current",
        ]),
        line([
            "loss", "last", "counter", "weight", "label", "predict", "features",
        ]),
    ]
}

/// One row of the table, without its newline: with `classes` (a binary classifier's, index 1
/// positive), the label and the predicted label (from the margin's sign,
/// [`Classes::binary_label`]) in those classes; without (regression, or a raw table), the label
/// and the prediction as numbers.
///
/// ```
/// use sketchlearn::eval::ProgressRow;
/// use sketchlearn::labels::Classes;
/// use sketchlearn::run::progress_row;
///
/// let row = ProgressRow {
///     examples: 4,
///     weighted_examples: 4.0,
///     average_loss: 0.5,
///     since_last_loss: 0.25,
///     label: -1.0,
///     prediction: 0.7,
///     features: 3,
/// };
/// let classes = Classes::parse_list("No,Yes").unwrap();
/// let shown = progress_row(&row, Some(&classes));
/// assert!(shown.ends_with("       No       Yes         3"), "{shown}");
/// assert!(progress_row(&row, None).ends_with("  -1.0000    0.7000         3"));
/// ```
pub fn progress_row(r: &ProgressRow, classes: Option<&Classes>) -> String {
    let head = format!(
        "{:<12.6} {:<12.6} {:>12} {:>12.1}",
        r.average_loss, r.since_last_loss, r.examples, r.weighted_examples
    );
    match classes {
        Some(c) => format!(
            "{head} {:>9} {:>9} {:>9}",
            c.binary_label(r.label).to_string(),
            c.binary_label(r.prediction).to_string(),
            r.features
        ),
        None => format!(
            "{head} {:>9.4} {:>9.4} {:>9}",
            r.label, r.prediction, r.features
        ),
    }
}
