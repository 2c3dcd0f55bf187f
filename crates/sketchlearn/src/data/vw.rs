//! Streaming reader of Vowpal Wabbit's text format with VW-compatible feature hashing.
//!
//! A line is `label [importance] [tag] |ns[:scale] feature[:value] ... |ns2 ...`:
//! * the header (before the first `|`) holds the label, an optional importance weight (a finite
//!   number ≥ 0; 1 when absent; `inf`/`nan` are errors) and an optional tag (ignored; a tag
//!   that reads as a number needs VW's leading `'`);
//! * each `|` opens a namespace; a name directly after `|` names it (`|user`), a space after `|`
//!   is the default namespace; `|ns:2` scales every value in it by 2;
//! * a feature is `name` (value 1) or `name:value`, split at the first `:` as VW does
//!   (`hour:12:30` is not `hour:12` at 30); names are hashed with [`hashing`](super::hashing)
//!   into `2^bits` indices, exactly as VW does;
//! * a value that does not start like a number is VW's string value (VW 9): `url:http://a.b`
//!   is the feature `url^http://a.b` of value 1 (VW does not scale it by `|ns:2`), hashed as VW chains it (the value hashed
//!   with the name's hash as seed); a value that starts like a number but is not one
//!   (`x:12abc`, where VW reads 12) is an error;
//! * features that hash to the same index are added up (a linear model sees their sum, as in VW),
//!   zero values are dropped, indices come out sorted.
//!
//! Blank lines are skipped (VW uses them to separate multi-line examples). Errors name the file,
//! line and column: unparsable or non-finite label, value or weight, a negative weight, an empty
//! feature name, a line with features but no label. No constant feature is added: the learners'
//! intercept plays that role.

use super::decimal::{parse_finite, FloatError};
use super::error::{ParseError, ParseErrorKind};
use super::example::Example;
use super::feature_names::FeatureNames;
use super::hashing::{hash_string, namespace_hash};
use super::interactions::{Crossing, Interactions, NamespaceFeature};
use super::lines::LineReader;
use super::source::{open_input, source_name};
use std::io::BufRead;

/// Options of the VW reader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VwOptions {
    /// Number of hash bits `b` (1..=32): indices lie in `0..2^b`.
    pub bits: u32,
}

impl Default for VwOptions {
    /// 18 bits, VW's default.
    fn default() -> Self {
        VwOptions { bits: 18 }
    }
}

impl VwOptions {
    /// The hashed dimension `2^bits`.
    pub fn dim(&self) -> usize {
        1usize << self.bits.min(32)
    }
}

/// Streaming VW text reader (constant memory in the number of lines).
///
/// ```
/// use sketchlearn::data::{VwOptions, VwReader};
/// use sketchlearn::Example;
/// let text = "1 2.0 'tag |a price:2 3\n-1 |features word x_1:0.5\n";
/// let mut r = VwReader::new(std::io::Cursor::new(text), "inline", VwOptions { bits: 18 }).unwrap();
/// let mut ex = Example::default();
/// assert!(r.read_into(&mut ex).unwrap());
/// assert_eq!((ex.label, ex.weight), (1.0, 2.0));
/// // `vw --audit -b 18` prints a^price:29466:2 and a^3:92597:1.
/// assert_eq!(ex.indices, vec![29466, 92597]);
/// assert_eq!(ex.values, vec![2.0, 1.0]);
/// ```
#[derive(Debug)]
pub struct VwReader<R> {
    lines: LineReader<R>,
    options: VwOptions,
    pairs: Vec<(u32, f64)>,
    examples: u64,
    /// `-q` namespace pairs ([`Interactions`]) and the features they read.
    interactions: Interactions,
    crossed: Vec<NamespaceFeature>,
    /// Examples parsed in full; past them only the headers ([`VwReader::headers_after`]).
    full_rows: u64,
    /// The names of the features read, when kept ([`VwReader::with_names`]).
    names: Option<FeatureNames>,
}

impl VwReader<Box<dyn BufRead + Send>> {
    /// Opens `path` (`-` = standard input; gzip detected and decompressed).
    pub fn open(path: &str, options: VwOptions) -> Result<Self, ParseError> {
        let input = open_input(path)?;
        VwReader::new(input, source_name(path), options)
    }
}

type LineError = (usize, ParseErrorKind);

impl<R: BufRead> VwReader<R> {
    /// A reader over `reader`; fails when `bits` is outside 1..=32.
    pub fn new(
        reader: R,
        source_name: impl Into<String>,
        options: VwOptions,
    ) -> Result<Self, ParseError> {
        let source_name = source_name.into();
        if !(1..=32).contains(&options.bits) {
            return Err(ParseError::new(
                source_name,
                0,
                0,
                ParseErrorKind::Io(format!(
                    "hash bits must be between 1 and 32, got {}",
                    options.bits
                )),
            ));
        }
        Ok(VwReader {
            lines: LineReader::new(reader, source_name),
            options,
            pairs: Vec::new(),
            examples: 0,
            interactions: Interactions::default(),
            crossed: Vec::new(),
            full_rows: u64::MAX,
            names: None,
        })
    }

    /// Adds the quadratic features of `interactions` (VW's `-q`) to every example.
    pub fn with_interactions(mut self, interactions: Interactions) -> Self {
        self.interactions = interactions;
        self
    }

    /// Records the name of every feature read (and crossed) into `names` (VW's
    /// `--invert_hash`); [`VwReader::take_names`] hands the table back.
    pub fn with_names(mut self, names: FeatureNames) -> Self {
        self.names = Some(names);
        self
    }

    /// The names recorded since [`VwReader::with_names`] (`None` without it).
    pub fn take_names(&mut self) -> Option<FeatureNames> {
        self.names.take()
    }

    /// Parses the first `rows` examples in full and, past them, only each line's header (the
    /// label and importance weight, with their errors): their features are not read, not
    /// hashed and not checked, and they come with no features. For the walk before a run
    /// (`run::prescan`), which needs every label but only the first rows' features; a bad
    /// feature on a later line is left to the pass, which reports it at the same line and
    /// column. Labels, weights and [`line`](Self::line) are the full parse's on every line.
    ///
    /// ```
    /// use sketchlearn::data::{VwOptions, VwReader};
    /// let text = "1 |f a b:2\n-1 |f c:12junk\n"; // a value that starts like a number
    /// let open = || VwReader::new(std::io::Cursor::new(text), "t.vw", VwOptions::default());
    /// let mut scan = open().unwrap();
    /// scan.headers_after(1);
    /// let read: Vec<_> = scan.map(|e| e.unwrap()).collect();
    /// assert_eq!((read[0].indices.len(), read[1].label, read[1].indices.len()), (2, -1.0, 0));
    /// let err = open().unwrap().nth(1).unwrap().unwrap_err(); // the full parse sees the value
    /// assert_eq!((err.line, err.column), (2, 9));
    /// ```
    pub fn headers_after(&mut self, rows: u64) {
        self.full_rows = rows;
    }

    /// The number of the last line read (1-based).
    pub fn line(&self) -> u64 {
        self.lines.line()
    }

    /// Examples returned so far.
    pub fn examples_read(&self) -> u64 {
        self.examples
    }

    /// The name used in error messages.
    pub fn source_name(&self) -> &str {
        self.lines.source_name()
    }

    /// The hashed dimension `2^bits`.
    pub fn dim(&self) -> usize {
        self.options.dim()
    }

    /// Reads the next example into `ex`; `Ok(false)` at the end. After a parse error the next
    /// call goes on with the following line; after an I/O error the reader is at its end.
    pub fn read_into(&mut self, ex: &mut Example) -> Result<bool, ParseError> {
        while self.lines.next_line()? {
            let line = trim_newline(self.lines.raw());
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            ex.clear();
            self.pairs.clear();
            self.crossed.clear();
            let parsed = if self.examples >= self.full_rows {
                parse_header(line, ex).map(|_| ())
            } else {
                let q = (!self.interactions.is_empty())
                    .then_some((&self.interactions, &mut self.crossed));
                parse_line(line, self.options.bits, ex, &mut self.pairs, q).and_then(
                    |()| match self.names.as_mut() {
                        Some(names) => {
                            record_names(line, self.options.bits, &self.interactions, names)
                        }
                        None => Ok(()),
                    },
                )
            };
            match parsed {
                Ok(()) => {
                    self.examples += 1;
                    return Ok(true);
                }
                Err((col, kind)) => {
                    // A token that does not parse because it is in another encoding says so.
                    let (col, kind) = match kind {
                        ParseErrorKind::UnparsableLabel(_) | ParseErrorKind::UnparsableValue(_) => {
                            super::text_input::in_other_encoding(line, (col, kind))
                        }
                        kind => (col, kind),
                    };
                    return Err(self.lines.error(col + 1, kind));
                }
            }
        }
        Ok(false)
    }
}

impl<R: BufRead> Iterator for VwReader<R> {
    type Item = Result<Example, ParseError>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut ex = Example::default();
        match self.read_into(&mut ex) {
            Ok(true) => Some(Ok(ex)),
            Ok(false) => None,
            Err(e) => Some(Err(e)),
        }
    }
}

fn trim_newline(mut s: &[u8]) -> &[u8] {
    while let [rest @ .., b'\n' | b'\r'] = s {
        s = rest;
    }
    s
}

fn lossy(b: &[u8]) -> String {
    let s = String::from_utf8_lossy(b);
    s.chars().take(64).collect()
}

fn parse_number(
    tok: &[u8],
    col: usize,
    bad: fn(String) -> ParseErrorKind,
) -> Result<f64, LineError> {
    parse_finite(tok).map_err(|e| match e {
        FloatError::Unparsable => (col, bad(lossy(tok))),
        FloatError::NonFinite => (col, ParseErrorKind::NonFiniteValue(lossy(tok))),
    })
}

/// Splits `s` (starting at byte `base` of the line) into whitespace-separated tokens with their
/// columns.
fn tokens(s: &[u8], base: usize) -> impl Iterator<Item = (usize, &[u8])> {
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < s.len() && s[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= s.len() {
            return None;
        }
        let start = i;
        while i < s.len() && !s[i].is_ascii_whitespace() {
            i += 1;
        }
        Some((base + start, &s[start..i]))
    })
}

/// The importance weight in the header token `tok` (at column `col`), or `None` when the token
/// is a tag. VW's input format: "a non-negative real number indicating the relative importance
/// of this example over the others" — so `0` is accepted (the example is predicted, not
/// learned from), a negative number is an error, and so is `inf`, `nan` or an overflow such as
/// `1e999` (VW's `strtof` would read them as a weight, and one infinite weight makes every
/// weight of the model NaN). A tag spelled like a number takes VW's leading `'` (`'nan`).
fn importance(tok: &[u8], col: usize) -> Result<Option<f64>, LineError> {
    match parse_finite(tok) {
        Ok(w) if w < 0.0 => Err((col, ParseErrorKind::NegativeWeight(lossy(tok)))),
        Ok(w) => Ok(Some(w)),
        Err(FloatError::NonFinite) => Err((col, ParseErrorKind::NonFiniteValue(lossy(tok)))),
        // Looks like a mistyped number rather than a tag.
        Err(FloatError::Unparsable)
            if tok.iter().any(|c| c.is_ascii_digit()) && tok.contains(&b'.') =>
        {
            Err((col, ParseErrorKind::UnparsableValue(lossy(tok))))
        }
        Err(FloatError::Unparsable) => Ok(None),
    }
}

/// The header of `line` (before its first `|`): the label and the importance weight, into
/// `ex`; returns where the header ends (the first `|`, or the end of the line).
fn parse_header(line: &[u8], ex: &mut Example) -> Result<usize, LineError> {
    let bar = line.iter().position(|&c| c == b'|').unwrap_or(line.len());
    let mut header = tokens(&line[..bar], 0);
    match header.next() {
        None => return Err((0, ParseErrorKind::MissingLabel)),
        Some((col, tok)) => ex.label = parse_number(tok, col, ParseErrorKind::UnparsableLabel)?,
    }
    ex.weight = 1.0;
    if let Some((col, tok)) = header.next() {
        // A second header token is the importance weight when it is a number, else a tag.
        if !tok.starts_with(b"'") {
            ex.weight = importance(tok, col)?.unwrap_or(1.0);
        }
    }
    Ok(bar)
}

fn parse_line(
    line: &[u8],
    bits: u32,
    ex: &mut Example,
    pairs: &mut Vec<(u32, f64)>,
    mut q: Crossing<'_>,
) -> Result<(), LineError> {
    let bar = parse_header(line, ex)?;
    for_each_feature(line, bar, |ns_name, ns_hash, name, text, v| {
        let hash = feature_hash(name, text, ns_hash);
        pairs.push((mask_hash(hash, bits), v));
        if let Some((_, crossed)) = q.as_mut() {
            let letter = ns_name.first().copied().unwrap_or(b' ');
            crossed.push((letter, hash, v));
        }
    })?;
    if let Some((interactions, crossed)) = q {
        interactions.cross(crossed, bits, pairs);
    }
    pairs.sort_unstable_by_key(|p| p.0);
    for &(i, v) in pairs.iter() {
        if ex.indices.last() == Some(&i) {
            let last = ex.values.len() - 1;
            ex.values[last] += v;
        } else {
            ex.indices.push(i);
            ex.values.push(v);
        }
    }
    // Collisions may cancel to zero, or add up to ∞.
    if ex.values.iter().any(|v| !v.is_finite()) {
        return Err((
            bar,
            ParseErrorKind::NonFiniteValue("sum of colliding features".into()),
        ));
    }
    Ok(())
}

/// Records the names of a parsed line's features into `names`: `namespace^feature` (the bare
/// feature in the default namespace, as VW's `--invert_hash`), and `a^x*b^y` for a crossed pair.
fn record_names(
    line: &[u8],
    bits: u32,
    interactions: &Interactions,
    names: &mut FeatureNames,
) -> Result<(), LineError> {
    let mut ex = Example::default();
    let bar = parse_header(line, &mut ex)?;
    let mut read: Vec<(u8, u64, String)> = Vec::new();
    for_each_feature(line, bar, |ns_name, ns_hash, name, text, _| {
        let mut full = if ns_name.is_empty() {
            lossy(name)
        } else {
            format!("{}^{}", lossy(ns_name), lossy(name))
        };
        if let Some(text) = text {
            full = format!("{full}^{}", lossy(text));
        }
        let hash = feature_hash(name, text, ns_hash);
        names.record(mask_hash(hash, bits), &full);
        if !interactions.is_empty() {
            let letter = ns_name.first().copied().unwrap_or(b' ');
            read.push((letter, hash, full));
        }
    })?;
    interactions.for_each_cross(
        read.len(),
        |k| (read[k].0, read[k].1),
        bits,
        |i, j, index| {
            names.record(index, &format!("{}*{}", read[i].2, read[j].2));
        },
    );
    Ok(())
}

/// The hash of a feature: its name's (VW's `hashstring`), or for a string value VW 9's chain,
/// the value hashed with the name's hash as seed (`vw --audit` shows `ns^url^http://a.b`).
fn feature_hash(name: &[u8], text: Option<&[u8]>, ns_hash: u32) -> u64 {
    let hash = hash_string(name, ns_hash);
    match text {
        None => hash,
        Some(text) => hash_string(text, hash as u32),
    }
}

/// The index of a feature hash with `bits` bits, as [`feature_index`](super::hashing::feature_index).
fn mask_hash(hash: u64, bits: u32) -> u32 {
    (hash & (u64::MAX >> (64 - bits.min(32)))) as u32
}

/// The value of the token `tok` after its first `:` (at column `col`): a number, or `None` for
/// VW's string value: text that does not start like a number (a digit, sign or point) and is
/// not made of a number's characters only (`e5` is a mistyped number).
fn feature_value(tok: &[u8], col: usize) -> Result<Option<f64>, LineError> {
    let number_like = |c: &u8| matches!(c, b'0'..=b'9' | b'+' | b'-' | b'.' | b'e' | b'E');
    match parse_finite(tok) {
        Ok(v) => Ok(Some(v)),
        Err(FloatError::Unparsable)
            if !tok.is_empty()
                && !matches!(tok[0], b'0'..=b'9' | b'+' | b'-' | b'.')
                && !tok.iter().all(number_like) =>
        {
            Ok(None)
        }
        Err(_) => parse_number(tok, col, ParseErrorKind::UnparsableValue).map(Some),
    }
}

/// Calls `f(namespace, namespace hash, feature name, string value, value × namespace scale)`
/// for each feature of non-zero value of `line`, whose namespaces start at `bar`.
fn for_each_feature(
    line: &[u8],
    bar: usize,
    mut f: impl FnMut(&[u8], u32, &[u8], Option<&[u8]>, f64),
) -> Result<(), LineError> {
    let mut pos = bar;
    while pos < line.len() {
        // line[pos] == b'|'
        let start = pos + 1;
        let end = line[start..]
            .iter()
            .position(|&c| c == b'|')
            .map_or(line.len(), |p| start + p);
        let segment = &line[start..end];
        let (ns_name, ns_scale, body, body_base) =
            if segment.first().is_none_or(|c| c.is_ascii_whitespace()) {
                (&b""[..], 1.0, segment, start)
            } else {
                let name_end = segment
                    .iter()
                    .position(|c| c.is_ascii_whitespace())
                    .unwrap_or(segment.len());
                let spec = &segment[..name_end];
                let (name, scale) = match spec.iter().position(|&c| c == b':') {
                    Some(p) => (
                        &spec[..p],
                        parse_number(
                            &spec[p + 1..],
                            start + p + 1,
                            ParseErrorKind::UnparsableValue,
                        )?,
                    ),
                    None => (spec, 1.0),
                };
                (name, scale, &segment[name_end..], start + name_end)
            };
        let ns_hash = namespace_hash(ns_name);
        for (col, tok) in tokens(body, body_base) {
            let (name, text, value) = match tok.iter().position(|&c| c == b':') {
                Some(p) => match feature_value(&tok[p + 1..], col + p + 1)? {
                    Some(v) => (&tok[..p], None, v),
                    None => (&tok[..p], Some(&tok[p + 1..]), 1.0),
                },
                None => (tok, None, 1.0),
            };
            if name.is_empty() {
                return Err((col, ParseErrorKind::EmptyFeatureName(lossy(tok))));
            }
            // VW 9 gives a string value 1, unscaled by the namespace (`vw --audit`).
            let v = if text.is_some() {
                1.0
            } else {
                value * ns_scale
            };
            if !v.is_finite() {
                return Err((col, ParseErrorKind::NonFiniteValue(lossy(tok))));
            }
            if v != 0.0 {
                f(ns_name, ns_hash, name, text, v);
            }
        }
        pos = end;
    }
    Ok(())
}
