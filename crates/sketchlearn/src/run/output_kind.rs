//! What an existing file at an output path holds: a run replaces a file only when it holds what
//! the run writes there (a model, predictions), so a data set or notes given to `-f`/`-p` by
//! mistake are left alone (the CLI's `--overwrite` replaces any file but an input). Judged from
//! the file's first [`HEAD`] bytes.

use std::io::Read;
use std::path::Path;

/// The bytes of an existing output file read to tell what it holds.
pub const HEAD: u64 = 64 * 1024;

/// What a run writes at an output path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Written {
    /// A model file (it starts with [`crate::model::MAGIC`]).
    Model,
    /// The linear learners' predictions: a label, value or margin, then numbers, split by spaces.
    Lines,
    /// One number per line (the factorization machines' predictions).
    Values,
}

/// Whether the file at `path` holds what `written` describes: `None` when there is nothing to
/// judge (no such file, an unreadable one — writing it will say why — or an empty one).
///
/// ```
/// use sketchlearn::run::{file_holds, Written};
/// let dir = std::env::temp_dir().join(format!("sl-output-kind-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let ratings = dir.join("ratings.txt");
/// std::fs::write(&ratings, "196 242 3 881250949\n").unwrap();
/// assert_eq!(file_holds(&ratings, Written::Values).unwrap(), Some(false));
/// std::fs::write(&ratings, "3.52\n4.1\n").unwrap();
/// assert_eq!(file_holds(&ratings, Written::Values).unwrap(), Some(true));
/// assert_eq!(file_holds(&dir.join("absent"), Written::Lines).unwrap(), None);
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn file_holds(path: &Path, written: Written) -> std::io::Result<Option<bool>> {
    let Ok(file) = std::fs::File::open(path) else {
        return Ok(None);
    };
    let mut head = Vec::new();
    file.take(HEAD).read_to_end(&mut head)?;
    Ok((!head.is_empty()).then(|| holds(&head, written)))
}

/// Whether `head`, a file's first bytes, is what `written` describes.
fn holds(head: &[u8], written: Written) -> bool {
    match written {
        Written::Model => head.starts_with(&crate::model::MAGIC),
        Written::Values => judged_lines(head, |l| !l.contains(' ') && l.parse::<f64>().is_ok()),
        Written::Lines => {
            let text = String::from_utf8_lossy(head);
            let whole = whole_lines(head, &text);
            let spaced = spaced_labels(&whole);
            // Class names repeat: a predictions file names fewer classes than half its lines.
            let classes_repeat = 2 * spaced.len() <= whole.len();
            !whole.is_empty()
                && whole.iter().all(|l| {
                    let label = prediction_label(l);
                    !label.contains([':', '|', ',', '\t', '\u{fffd}'])
                        && (!label.contains(' ')
                            || (classes_repeat
                                && spaced.get(label).is_some_and(|&n| n > 1)
                                && probabilities(&l[label.len()..])))
                })
        }
    }
}

/// Whether `rest`, what follows a spaced class name on a line, is what we write there: nothing,
/// or the probabilities (`--probabilities`), each in [0, 1] — not counts or amounts.
fn probabilities(rest: &str) -> bool {
    rest.split_whitespace()
        .all(|t| t.parse::<f64>().is_ok_and(|v| (0.0..=1.0).contains(&v)))
}

/// A prediction line's label: the line without its trailing numbers, but the first word (a
/// label, or the value itself). A class name may hold spaces (`New York 0.7 0.3`).
fn prediction_label(line: &str) -> &str {
    let mut end = line.len();
    while let Some((rest, last)) = line[..end].rsplit_once(' ') {
        if last.parse::<f64>().is_err() {
            break;
        }
        end = rest.len();
    }
    &line[..end]
}

/// How many of the `lines` have each label that holds a space. Such a label is taken for a
/// class name only when it stands on two lines or more — a class predicted again — so that
/// prose (notes) is not taken for predictions.
fn spaced_labels<'a>(lines: &[&'a str]) -> std::collections::HashMap<&'a str, usize> {
    let mut count = std::collections::HashMap::new();
    for label in lines.iter().map(|l| prediction_label(l)) {
        if label.contains(' ') {
            *count.entry(label).or_insert(0) += 1;
        }
    }
    count
}

/// The whole lines of `head` (read as `text`): the last line is left out when the read may
/// have cut it.
fn whole_lines<'a>(head: &[u8], text: &'a str) -> Vec<&'a str> {
    let cut = usize::from(head.len() as u64 == HEAD);
    let n = text.lines().count().saturating_sub(cut);
    text.lines().take(n).collect()
}

/// Whether every whole line of `head` passes `line` — false when there is no whole line: 64 KiB
/// without a line end (a CR-only CSV, minified JSON) holds nothing to judge by.
fn judged_lines(head: &[u8], line: impl Fn(&str) -> bool) -> bool {
    let text = String::from_utf8_lossy(head);
    let whole = whole_lines(head, &text);
    !whole.is_empty() && whole.into_iter().all(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_files_are_not_predictions_and_predictions_are() {
        let lines = |s: &str| holds(s.as_bytes(), Written::Lines);
        let values = |s: &str| holds(s.as_bytes(), Written::Values);
        assert!(lines("1 0.73\n-1 0.12\n") && lines("setosa 0.9 0.05 0.05\n") && lines("0.5\n"));
        assert!(!lines("1 3:0.5 7:1\n") && !lines("a,b\n1,2\n") && !lines("1 |f a b\n"));
        // Our own multiclass predictions with a class name that holds a space (a class predicted
        // on two lines or more), with and without the probabilities; not prose.
        assert!(lines(
            "New York 0.7 0.3\nBoston 0.2 0.8\nNew York 0.6 0.4\n"
        ));
        assert!(lines("New York\nBoston\nNew York\n") && lines("0.5 0.25\n"));
        assert!(!lines("my notes for today\nand more notes\n") && !lines("New York\n"));
        // A user's table with text and amounts, or a list of names, is not predictions.
        assert!(!lines(
            "red apple 3\ngreen pear 5\nred apple 2\ngreen pear 1\n"
        ));
        assert!(
            !lines("John Smith\nJane Doe\nJohn Smith\n") && !lines("New York inf\nNew York 1\n")
        );
        assert!(values("3.52\n4.1\n") && !values("196 242 3 881250949\n") && !values("1 2\n"));
        assert!(!values("price\n3.5\n") && holds(b"SKLMODEL....", Written::Model));
        let no_line = vec![b'a'; HEAD as usize];
        assert!(!lines(std::str::from_utf8(&no_line).unwrap()));
        let mut cut = b"0.5\n".repeat(HEAD as usize / 4);
        cut.truncate(HEAD as usize - 1);
        cut.push(b'9'); // the last line cut by the read is not judged
        assert!(holds(&cut, Written::Values));
    }
}
