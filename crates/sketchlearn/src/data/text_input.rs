//! Whether a data file given to a command holds example text: checked before a run starts, so
//! an empty file, a model or cache given as the data, a binary file or text in another encoding
//! gets an error that names it and the fix, not "stream did not contain valid UTF-8".

use std::io::{BufRead, Read};

use super::error::{ParseError, ParseErrorKind};
use super::source::open_input;

/// Checks that the file at `path` has a line with content (not blank, not a `#` comment) and
/// that the first such line is UTF-8 text. Standard input (`-`) and anything that is not a
/// regular file (a pipe, a FIFO, a process substitution) is read once, by the run, so it is not
/// looked into here.
///
/// Errors: an empty file (only blank or `#` lines), a sketchlearn model or cache (by their magic
/// numbers: a model is given with `-i`), a binary file (a NUL or control byte), text that is not
/// UTF-8 (a Latin-1 / Windows-1252 export), with the line and column of the first bad byte.
///
/// ```
/// let dir = std::env::temp_dir().join(format!("sketchlearn-text-input-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let file = |name: &str, bytes: &[u8]| {
///     let p = dir.join(name);
///     std::fs::write(&p, bytes).unwrap();
///     p.to_str().unwrap().to_string()
/// };
/// use sketchlearn::data::text_input::check_has_examples;
/// assert!(check_has_examples(&file("ok.libsvm", b"# c\n\n1 1:2\n")).is_ok());
/// let err = check_has_examples(&file("e.csv", b"\n# only\n")).unwrap_err().to_string();
/// assert!(err.starts_with("no examples in ") && err.ends_with("e.csv: the file is empty (or holds only blank and # lines)"), "{err}");
/// let err = check_has_examples(&file("l1.csv", b"label,gr\xf6\xdfe\n1,2\n")).unwrap_err().to_string();
/// assert!(err.contains("l1.csv:1:9: not UTF-8 text") && err.contains("iconv"), "{err}");
/// let err = check_has_examples(&file("i.png", b"\x89PNG\r\n\x1a\n\0\0")).unwrap_err().to_string();
/// assert!(err.contains("i.png: a binary file, not text"), "{err}");
/// let err = check_has_examples(&file("m.model", b"SKLMODEL\t\0\0")).unwrap_err().to_string();
/// assert!(err.contains("m.model:1:1: this is a sketchlearn model"), "{err}");
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn check_has_examples(path: &str) -> Result<(), ParseError> {
    if path == "-" || !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return Ok(());
    }
    let mut input = open_input(path)?;
    let io = |e: std::io::Error| ParseError::new(path, 0, 0, ParseErrorKind::Io(e.to_string()));
    let mut head = Vec::new();
    (&mut input).take(1024).read_to_end(&mut head).map_err(io)?;
    if sketchlearn_file(&head).is_none() && head.contains(&0) {
        let what = "a binary file, not text (a NUL byte in its first bytes): LIBSVM, VW and CSV \
                    files are text";
        return Err(ParseError::new(
            path,
            0,
            0,
            ParseErrorKind::Column(what.into()),
        ));
    }
    let mut input = std::io::Cursor::new(head).chain(input);
    let mut line = Vec::new();
    for number in 1u64.. {
        line.clear();
        let read = input
            .read_until(b'\n', &mut line)
            .map_err(|e| ParseError::new(path, number, 0, ParseErrorKind::Io(e.to_string())))?;
        if read == 0 {
            // Every command's wording for an input without examples: "no examples in FILE".
            let what = "the file is empty (or holds only blank and # lines)";
            let source = format!("no examples in {path}");
            return Err(ParseError::new(
                source,
                0,
                0,
                ParseErrorKind::Column(what.into()),
            ));
        }
        if number == 1 {
            if let Some(what) = sketchlearn_file(&line) {
                let kind = ParseErrorKind::Column(format!("this is {what}, not data"));
                return Err(ParseError::new(path, 1, 1, kind));
            }
        }
        let text = line.trim_ascii();
        if text.is_empty() || text.starts_with(b"#") {
            continue;
        }
        if let Some((column, what)) = binary_byte(&line) {
            return Err(ParseError::new(
                path,
                number,
                column,
                ParseErrorKind::Column(what),
            ));
        }
        return utf8_line(&line, path, number).map(|_| ());
    }
    Ok(())
}

/// The first bytes of a cache file (`run/cache_file.rs`).
const CACHE_MAGIC: &[u8] = b"SKLCACHE";

/// What a file that starts with `head` is, when sketchlearn wrote it.
fn sketchlearn_file(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(&crate::model::MAGIC) {
        Some("a sketchlearn model (give a model with -i MODEL, and the data as FILE)")
    } else if head.starts_with(CACHE_MAGIC) {
        Some("a sketchlearn cache (give a cache with -c CACHE, and the data as FILE)")
    } else {
        None
    }
}

/// The 1-based column of the first control byte of `line` (a binary file), and what is wrong.
fn binary_byte(line: &[u8]) -> Option<(usize, String)> {
    let control = |&b: &u8| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0b | 0x0c);
    let k = line.iter().position(control)?;
    let what = format!(
        "a binary file, not text (byte 0x{:02x}): LIBSVM, VW and CSV files are text",
        line[k]
    );
    Some((k + 1, what))
}

/// Line `number` of `source` as text, or the error at its first byte that is not UTF-8 (with
/// the likely cause and an `iconv` line): the one message for text in another encoding, whether
/// a run's check ([`check_has_examples`]) or `predict`'s row loop meets it.
///
/// ```
/// use sketchlearn::data::text_input::utf8_line;
/// assert_eq!(utf8_line(b"1 1:2\n", "rows.libsvm", 3).unwrap(), "1 1:2\n");
/// let err = utf8_line(b"1 a\xe9:2\n", "rows.libsvm", 3).unwrap_err().to_string();
/// assert!(err.starts_with("rows.libsvm:3:4: not UTF-8 text (byte 0xe9)") && err.contains("iconv"));
/// ```
pub fn utf8_line<'a>(line: &'a [u8], source: &str, number: u64) -> Result<&'a str, ParseError> {
    std::str::from_utf8(line).map_err(|e| {
        let (k, kind) = not_utf8_at(line, e);
        ParseError::new(source, number, k + 1, kind)
    })
}

/// The 0-based position of the first byte of `text` that is not UTF-8 and the error kind that
/// says so, with the likely cause and the `iconv` fix (`None` for UTF-8 text). For the readers'
/// error paths: a Latin-1 byte in a LIBSVM value or a CSV field is named as such, not as a value
/// that does not parse.
pub(crate) fn not_utf8(text: &[u8]) -> Option<(usize, ParseErrorKind)> {
    std::str::from_utf8(text)
        .err()
        .map(|e| not_utf8_at(text, e))
}

/// [`not_utf8`] from the error of `std::str::from_utf8(text)`.
pub(crate) fn not_utf8_at(text: &[u8], e: std::str::Utf8Error) -> (usize, ParseErrorKind) {
    let k = e.valid_up_to();
    let what = format!(
        "not UTF-8 text (byte 0x{:02x}): a spreadsheet's Latin-1 / Windows-1252 export? \
         convert it, e.g. iconv -f latin1 -t utf-8 FILE > new_file (-f cp1252 for a Windows \
         export)",
        text[k]
    );
    (k, ParseErrorKind::Column(what))
}

/// `error` (a 0-based position in `line` and its kind), or, when the whitespace-separated token
/// it points into holds a byte that is not UTF-8 (a Latin-1 export), the error that says so at
/// that byte ([`not_utf8`]) rather than "cannot parse value": the one rule of the LIBSVM and VW
/// readers' error paths.
pub(crate) fn in_other_encoding(
    line: &[u8],
    error: (usize, ParseErrorKind),
) -> (usize, ParseErrorKind) {
    let start = error.0.min(line.len());
    let end = line[start..]
        .iter()
        .position(|&b| super::decimal::is_space(b))
        .map_or(line.len(), |k| start + k);
    match not_utf8(&line[start..end]) {
        Some((k, kind)) => (start + k, kind),
        None => error,
    }
}
