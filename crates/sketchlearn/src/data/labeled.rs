//! Labels as the user wrote them, mapped to what a learner takes (issue 24, items 1 and 5).
//!
//! **One label map for every format.** A reader gives each example's label as written: a
//! number in [`Example::label`] (LIBSVM, VW), or — a CSV label column — the field itself, a
//! name or a number, with its column ([`LabelField`], [`ExampleSource::label_field`]);
//! [`with_written_label`] is where the two become one [`ClassLabel`]. The classes are scanned
//! from those labels ([`ClassScan`]), and one [`LabelMap`] over the user's labels maps them to
//! the learner's targets in [`Labeled`], for training, `test` and a resumed model alike; the
//! same [`Classes`] are stored in the model and print the predictions.
//!
//! * [`ClassScan`] / [`scan_classes`]: a cheap pass over a re-readable input that collects its
//!   distinct labels (each with the first line it appears on, at most
//!   [`MAX_CLASSES`](crate::labels::MAX_CLASSES)) and turns them into [`Classes`] — for a binary
//!   learner ([`ClassScan::binary`]: a third label is an error at its line naming
//!   `--multiclass`), for a multiclass one ([`ClassScan::classes`]), against a declared list
//!   ([`ClassScan::declared`], `--classes`) or VW's `--oaa K` ([`ClassScan::oaa`]).
//! * [`Labeled`]: an [`ExampleSource`] adapter that rewrites each example's label with a
//!   [`LabelMap`] — the binary target `±1`, a class index `0..K`, or the label unchanged for
//!   regression — and turns a label that does not fit into a [`ParseError`] of kind
//!   [`ParseErrorKind::Label`] at the example's line (column 1, where the label is).
//!
//! ```
//! use std::io::Cursor;
//! use sketchlearn::data::{scan_classes, ExampleSource, LabelMap, Labeled, LibsvmOptions, LibsvmReader};
//! use sketchlearn::Example;
//! let text = "4 1:0.5\n2 2:1\n4 3:1\n";
//! let open = || LibsvmReader::new(Cursor::new(text), "bc.libsvm", LibsvmOptions::default());
//! let classes = scan_classes(&mut open(), "bc.libsvm")?.binary()?;
//! assert_eq!(classes.to_list(), "2,4"); // 4, the later class, is positive
//! let mut source = Labeled::new(open(), LabelMap::Binary(classes), "bc.libsvm");
//! let mut ex = Example::default();
//! let mut targets = Vec::new();
//! while source.read_into(&mut ex)? {
//!     targets.push(ex.label);
//! }
//! assert_eq!(targets, [1.0, -1.0, 1.0]);
//!
//! // A third label with a binary learner: an error at its line that names --multiclass.
//! let three = "0 1:1\n1 1:2\n2 1:3\n";
//! let mut r = LibsvmReader::new(Cursor::new(three), "t.libsvm", LibsvmOptions::default());
//! let err = scan_classes(&mut r, "t.libsvm")?.binary().unwrap_err().to_string();
//! assert!(err.starts_with("t.libsvm:3:1: label 2") && err.contains("--multiclass"), "{err}");
//! # Ok::<(), sketchlearn::ParseError>(())
//! ```

use super::{Example, ExampleSource, ParseError, ParseErrorKind};
use crate::labels::{ClassLabel, Classes, ImplicitBinary, LabelError, MAX_CLASSES};
use std::collections::BTreeMap;

/// A label as a CSV reader found it: the label column's field (a name, or a number) and its
/// 1-based column on the line.
#[derive(Clone, Debug, PartialEq)]
pub struct LabelField {
    /// The label as written.
    pub label: ClassLabel,
    /// Its column (1-based character position of the field).
    pub column: usize,
}

/// Calls `f` with the label of the example `ex` just read from `source`, as written, and its
/// column: the source's [`LabelField`] when it has one, else the number [`Example::label`] at
/// column 1 (where LIBSVM and VW write it).
///
/// ```
/// use sketchlearn::data::{with_written_label, LibsvmOptions, LibsvmReader};
/// use sketchlearn::Example;
/// let mut r = LibsvmReader::new(std::io::Cursor::new("4 1:1\n"), "f", LibsvmOptions::default());
/// let mut ex = Example::default();
/// r.read_into(&mut ex)?;
/// assert_eq!(with_written_label(&r, &ex, |l, column| (l.to_string(), column)), ("4".into(), 1));
/// # Ok::<(), sketchlearn::ParseError>(())
/// ```
pub fn with_written_label<S, R>(
    source: &S,
    ex: &Example,
    f: impl FnOnce(&ClassLabel, usize) -> R,
) -> R
where
    S: ExampleSource + ?Sized,
{
    match source.label_field() {
        Some(field) => f(&field.label, field.column),
        None => f(&ClassLabel::Number(ex.label), 1),
    }
}

/// The distinct labels of an input, each with the 1-based line and column it first appears at.
#[derive(Clone, Debug)]
pub struct ClassScan {
    source_name: String,
    first_seen: BTreeMap<ClassLabel, (u64, usize)>,
}

impl ClassScan {
    /// An empty scan of the source called `source_name` (in error messages).
    pub fn new(source_name: impl Into<String>) -> Self {
        ClassScan {
            source_name: source_name.into(),
            first_seen: BTreeMap::new(),
        }
    }

    /// Records the number `label`, read on `line` (at column 1, as LIBSVM and VW write it).
    pub fn add(&mut self, label: f64, line: u64) -> Result<(), ParseError> {
        self.add_label(&ClassLabel::Number(label), line, 1)
    }

    /// Records `label` as written, read on `line` at `column`. More than [`MAX_CLASSES`]
    /// distinct labels is an error at the one too many (a regression target or an ID column,
    /// most likely).
    pub fn add_label(
        &mut self,
        label: &ClassLabel,
        line: u64,
        column: usize,
    ) -> Result<(), ParseError> {
        if !self.first_seen.contains_key(label) {
            if self.first_seen.len() == MAX_CLASSES {
                let e = LabelError::TooMany(MAX_CLASSES + 1);
                return Err(self.error_at(line, column, e));
            }
            self.first_seen.insert(label.clone(), (line, column));
        }
        Ok(())
    }

    /// Records the label of the example `ex` just read from `source` ([`with_written_label`]).
    pub fn add_read<S>(&mut self, source: &S, ex: &Example) -> Result<(), ParseError>
    where
        S: ExampleSource + ?Sized,
    {
        let line = source.line();
        with_written_label(source, ex, |l, column| self.add_label(l, line, column))
    }

    /// The number of distinct labels so far.
    pub fn len(&self) -> usize {
        self.first_seen.len()
    }

    /// True before the first label.
    pub fn is_empty(&self) -> bool {
        self.first_seen.is_empty()
    }

    /// The distinct labels, sorted, each with its first line.
    pub fn labels(&self) -> impl Iterator<Item = (&ClassLabel, u64)> {
        self.first_seen.iter().map(|(l, &(n, _))| (l, n))
    }

    /// The first two names among the labels that differ only by case (`Yes` and `yes`,
    /// [`differ_only_by_case`](crate::labels::differ_only_by_case)), each with its first
    /// line, in the order they first appear: `None` when there are none. A run warns about
    /// them, since they become two classes.
    ///
    /// ```
    /// use sketchlearn::data::ClassScan;
    /// use sketchlearn::labels::ClassLabel;
    /// let mut scan = ClassScan::new("f.csv");
    /// for (line, l) in ["yes", "no", "Yes", "YES"].into_iter().enumerate() {
    ///     scan.add_label(&ClassLabel::Text(l.into()), line as u64 + 2, 1).unwrap();
    /// }
    /// let ((a, la), (b, lb)) = scan.case_twins().unwrap();
    /// assert_eq!((a.as_str(), la, b.as_str(), lb), ("yes", 2, "Yes", 4));
    /// ```
    pub fn case_twins(&self) -> Option<((String, u64), (String, u64))> {
        let texts = self
            .first_seen
            .iter()
            .filter_map(|(l, &(line, _))| match l {
                ClassLabel::Text(t) => Some((t.as_str(), line)),
                ClassLabel::Number(_) => None,
            });
        let ((a, la), (b, lb)) = crate::labels::first_case_twins(texts)?;
        Some(((a.to_owned(), la), (b.to_owned(), lb)))
    }

    /// All the labels as classes, sorted (for a multiclass learner). Fewer than two is an error.
    pub fn classes(&self) -> Result<Classes, ParseError> {
        Classes::from_observed(self.first_seen.keys().cloned()).map_err(|e| self.error(0, e))
    }

    /// The two classes of a binary learner (sorted: the later is positive). A third distinct
    /// label is an error at the line where it first appears, naming `--multiclass`.
    pub fn binary(&self) -> Result<Classes, ParseError> {
        self.binary_or(None)
    }

    /// [`binary`](Self::binary) for a command that learns two classes only and has no
    /// `--multiclass` or `--classes` (`sketchlearn fm`): a third label's error gives `hint` as
    /// what to do instead.
    pub fn binary_only(&self, hint: &str) -> Result<Classes, ParseError> {
        self.binary_or(Some(hint))
    }

    fn binary_or(&self, hint: Option<&str>) -> Result<Classes, ParseError> {
        if self.first_seen.len() > 2 {
            let mut by_line: Vec<(&ClassLabel, (u64, usize))> =
                self.first_seen.iter().map(|(l, &at)| (l, at)).collect();
            by_line.sort_by_key(|&(_, at)| at);
            let (third, (line, column)) = by_line[2];
            let two = Classes::from_observed([by_line[0].0.clone(), by_line[1].0.clone()])
                .map_err(|e| self.error(0, e))?;
            let mut e = two.index_of(third).expect_err("a third distinct label");
            if let (LabelError::Unknown { hint: h, .. }, Some(hint)) = (&mut e, hint) {
                *h = hint.to_owned();
            }
            return Err(self.error_at(line, column, e));
        }
        self.classes()
    }

    /// Checks the labels against a declared list (`--classes`): every label read must be one
    /// of them (else an error at its first line); the declared order is kept.
    pub fn declared(&self, declared: &Classes) -> Result<Classes, ParseError> {
        for (label, &(line, column)) in &self.first_seen {
            declared.index_of(label).map_err(|_| {
                self.error_at(
                    line,
                    column,
                    LabelError::Unknown {
                        label: label.to_string(),
                        classes: declared.to_list(),
                        hint: "the file disagrees with --classes".into(),
                    },
                )
            })?;
        }
        Ok(declared.clone())
    }

    /// VW's `--oaa K`: the classes are `1..K` (VW's labels) or, when every label read is in
    /// `0..K−1` and one is 0, `0..K−1` (mnist's digits). A label outside is an error at its
    /// first line.
    ///
    /// ```
    /// use sketchlearn::data::ClassScan;
    /// let mut scan = ClassScan::new("d.libsvm");
    /// for (line, y) in [(1, 1.0), (2, 3.0), (3, 7.0)] {
    ///     scan.add(y, line).unwrap();
    /// }
    /// let err = scan.oaa(3).unwrap_err().to_string();
    /// assert!(err.starts_with("d.libsvm:3:1: label 7 is not one of the classes 1,2,3"), "{err}");
    /// assert_eq!(scan.oaa(7).unwrap().len(), 7);
    /// ```
    pub fn oaa(&self, k: usize) -> Result<Classes, ParseError> {
        let range = |lo: usize| (lo..lo + k).map(|c| ClassLabel::Number(c as f64));
        let fits = |lo: usize| {
            self.first_seen.keys().all(|l| match l {
                ClassLabel::Number(x) => {
                    x.fract() == 0.0 && *x >= lo as f64 && *x < (lo + k) as f64
                }
                ClassLabel::Text(_) => false,
            })
        };
        if k > MAX_CLASSES {
            return Err(self.error(0, LabelError::TooMany(k)));
        }
        let lo = if self.first_seen.contains_key(&ClassLabel::Number(0.0)) && fits(0) {
            0
        } else {
            1
        };
        let classes = Classes::from_observed(range(lo)).map_err(|e| self.error(0, e))?;
        if !fits(lo) {
            let (label, &(line, column)) = self
                .first_seen
                .iter()
                .filter(|(l, _)| classes.index_of(l).is_err())
                .min_by_key(|&(_, at)| at)
                .expect("a label outside the range");
            let mut e = classes.index_of(label).expect_err("outside");
            if let LabelError::Unknown { hint, .. } = &mut e {
                *hint = format!(
                    "--oaa {k} takes the labels 1..{k} as VW does (or 0..{}); \
                     --multiclass takes the classes from the file",
                    k - 1
                );
            }
            return Err(self.error_at(line, column, e));
        }
        Ok(classes)
    }

    /// An error about the whole input (no line).
    fn error(&self, line: u64, e: LabelError) -> ParseError {
        self.error_at(line, usize::from(line > 0), e)
    }

    fn error_at(&self, line: u64, column: usize, e: LabelError) -> ParseError {
        ParseError::new(
            self.source_name.clone(),
            line,
            column,
            ParseErrorKind::Label(e),
        )
    }
}

/// Reads `source` to its end and collects its labels (a parse error stops the scan and is
/// returned as it is).
pub fn scan_classes<S>(source: &mut S, source_name: &str) -> Result<ClassScan, ParseError>
where
    S: ExampleSource<Error = ParseError> + ?Sized,
{
    let mut scan = ClassScan::new(source_name);
    let mut ex = Example::default();
    while source.read_into(&mut ex)? {
        scan.add_read(source, &ex)?;
    }
    Ok(scan)
}

/// How a label becomes a learner's target.
#[derive(Clone, Debug, PartialEq)]
pub enum LabelMap {
    /// Regression: the label is the target, unchanged.
    Real,
    /// A binary learner on known classes: `−1` for the first, `+1` for the second.
    Binary(Classes),
    /// A binary learner on a stream read once: `−1/+1` or `0/1` ([`ImplicitBinary`]).
    Implicit(ImplicitBinary),
    /// A multiclass learner: the class's index `0..K` (as an `f64`).
    Multiclass(Classes),
}

impl LabelMap {
    /// The target of the label as written: the number itself (regression), `−1/+1` (binary)
    /// or the class index `0..K` (multiclass). The one place a user's label becomes a
    /// learner's target.
    ///
    /// ```
    /// use sketchlearn::data::LabelMap;
    /// use sketchlearn::labels::{ClassLabel, Classes};
    /// let num = ClassLabel::Number;
    /// let mut m = LabelMap::Multiclass(Classes::parse_list("3,1,2").unwrap());
    /// assert_eq!(m.target(&num(1.0)).unwrap(), 1.0); // "1" is the second class listed
    /// assert!(m.target(&num(7.0)).is_err());
    /// let mut yes_no = LabelMap::Binary(Classes::parse_list("No,Yes").unwrap());
    /// assert_eq!(yes_no.target(&ClassLabel::Text("Yes".into())).unwrap(), 1.0);
    /// assert_eq!(LabelMap::Real.target(&num(2.5)).unwrap(), 2.5);
    /// assert!(LabelMap::Real.target(&ClassLabel::Text("Yes".into())).is_err());
    /// ```
    pub fn target(&mut self, label: &ClassLabel) -> Result<f64, LabelError> {
        match (self, label) {
            (LabelMap::Real, ClassLabel::Number(y)) => Ok(*y),
            (LabelMap::Real, ClassLabel::Text(s)) => Err(LabelError::NotANumber(s.clone())),
            (LabelMap::Binary(c), l) => c.binary_target(l),
            (LabelMap::Implicit(i), l) => i.target_of(l),
            (LabelMap::Multiclass(c), l) => Ok(c.index_of(l)? as f64),
        }
    }

    /// The classes (for [`LabelMap::Implicit`], the convention seen so far); `None` for
    /// regression.
    pub fn classes(&self) -> Option<Classes> {
        match self {
            LabelMap::Real => None,
            LabelMap::Binary(c) | LabelMap::Multiclass(c) => Some(c.clone()),
            LabelMap::Implicit(i) => Some(i.classes()),
        }
    }
}

/// How the classes of a run are given.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum ClassSpec {
    /// From a scan of the input when it can be re-read; on a stream read once, `−1/+1` or
    /// `0/1` for a binary learner ([`ImplicitBinary`]); a multiclass learner then needs one of
    /// the others.
    #[default]
    FromInput,
    /// Declared (`--classes`), in this order (for a binary learner: negative, positive).
    Declared(Classes),
    /// VW's `--oaa K` ([`ClassScan::oaa`]; `1..K` on a stream read once).
    Oaa(usize),
}

/// What a run learns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Task {
    /// Real-valued labels (`--loss squared`): no classes.
    Regression,
    /// Two classes, one binary learner.
    Binary,
    /// `K ≥ 2` classes, a multiclass learner.
    Multiclass,
}

impl LabelMap {
    /// The map of a run: `spec` settled for `task` with the `scan` of the input (`None` for a
    /// stream read once). Errors name the input (`source_name`) and, where a label is at
    /// fault, its first line.
    ///
    /// ```
    /// use sketchlearn::data::{ClassScan, ClassSpec, LabelMap, Task};
    /// use sketchlearn::labels::Classes;
    /// let mut scan = ClassScan::new("f");
    /// scan.add(0.0, 1).unwrap();
    /// scan.add(1.0, 2).unwrap();
    /// let m = LabelMap::settle(&ClassSpec::FromInput, Task::Binary, Some(&scan), "f").unwrap();
    /// assert_eq!(m.classes().unwrap().to_list(), "0,1");
    /// let bad = ClassSpec::Declared(Classes::parse_list("1,2").unwrap());
    /// assert!(LabelMap::settle(&bad, Task::Binary, Some(&scan), "f").is_err());
    /// assert!(LabelMap::settle(&ClassSpec::FromInput, Task::Multiclass, None, "f").is_err());
    /// assert_eq!(LabelMap::settle(&ClassSpec::FromInput, Task::Regression, None, "f").unwrap(), LabelMap::Real);
    /// ```
    pub fn settle(
        spec: &ClassSpec,
        task: Task,
        scan: Option<&ClassScan>,
        source_name: &str,
    ) -> Result<LabelMap, ParseError> {
        let fail = |e: LabelError| ParseError::new(source_name, 0, 0, ParseErrorKind::Label(e));
        let unsupported =
            |m: String| ParseError::new(source_name, 0, 0, ParseErrorKind::Unsupported(m));
        let classes = match (task, spec, scan) {
            (Task::Regression, ClassSpec::FromInput, _) => return Ok(LabelMap::Real),
            (Task::Regression, _, _) => {
                return Err(unsupported(
                    "--classes and --oaa are for classification, not --loss squared".into(),
                ))
            }
            (_, ClassSpec::Declared(c), Some(scan)) => scan.declared(c)?,
            (_, ClassSpec::Declared(c), None) => c.clone(),
            (_, ClassSpec::Oaa(k), Some(scan)) => scan.oaa(*k)?,
            (_, ClassSpec::Oaa(k), None) => {
                Classes::from_observed((1..=*k).map(|c| ClassLabel::Number(c as f64)))
                    .map_err(fail)?
            }
            (Task::Binary, ClassSpec::FromInput, Some(scan)) => scan.binary()?,
            (Task::Binary, ClassSpec::FromInput, None) => {
                return Ok(LabelMap::Implicit(ImplicitBinary::default()))
            }
            (Task::Multiclass, ClassSpec::FromInput, Some(scan)) => scan.classes()?,
            (Task::Multiclass, ClassSpec::FromInput, None) => {
                return Err(unsupported(
                    "multiclass on a stream read once needs its classes: give --classes A,B,C \
                     or --oaa K"
                        .into(),
                ))
            }
        };
        match task {
            Task::Binary if !classes.is_binary() => Err(unsupported(format!(
                "{} classes ({}) for a binary learner: use --multiclass",
                classes.len(),
                classes.to_list()
            ))),
            Task::Binary => Ok(LabelMap::Binary(classes)),
            _ => Ok(LabelMap::Multiclass(classes)),
        }
    }
}

/// An [`ExampleSource`] whose labels go through a [`LabelMap`] (module documentation).
pub struct Labeled<S> {
    inner: S,
    map: LabelMap,
    source_name: String,
}

impl<S> Labeled<S> {
    /// Wraps `inner`, called `source_name` in error messages.
    pub fn new(inner: S, map: LabelMap, source_name: impl Into<String>) -> Self {
        Labeled {
            inner,
            map,
            source_name: source_name.into(),
        }
    }

    /// The label map (with the convention an [`LabelMap::Implicit`] map has seen).
    pub fn map(&self) -> &LabelMap {
        &self.map
    }

    /// The wrapped source and the map.
    pub fn into_parts(self) -> (S, LabelMap) {
        (self.inner, self.map)
    }
}

/// A boxed source is a source (what [`Labeled`] wraps in a run: a reader, or one parsing on a
/// second thread).
impl<S: ExampleSource + ?Sized> ExampleSource for Box<S> {
    type Error = S::Error;
    fn read_into(&mut self, ex: &mut Example) -> Result<bool, S::Error> {
        (**self).read_into(ex)
    }
    fn line(&self) -> u64 {
        (**self).line()
    }
    fn label_field(&self) -> Option<&LabelField> {
        (**self).label_field()
    }
}

impl<S: ExampleSource<Error = ParseError>> ExampleSource for Labeled<S> {
    type Error = ParseError;

    fn read_into(&mut self, ex: &mut Example) -> Result<bool, ParseError> {
        if !self.inner.read_into(ex)? {
            return Ok(false);
        }
        let map = &mut self.map;
        let target = with_written_label(&self.inner, ex, |label, column| {
            map.target(label).map_err(|e| (e, column))
        });
        ex.label = target.map_err(|(e, column)| {
            ParseError::new(
                self.source_name.clone(),
                self.inner.line(),
                column,
                ParseErrorKind::Label(e),
            )
        })?;
        Ok(true)
    }

    fn line(&self) -> u64 {
        self.inner.line()
    }

    fn label_field(&self) -> Option<&LabelField> {
        self.inner.label_field()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{LibsvmOptions, LibsvmReader};
    use std::io::Cursor;

    fn reader(text: &str) -> LibsvmReader<Cursor<String>> {
        LibsvmReader::new(
            Cursor::new(text.to_string()),
            "f.libsvm",
            LibsvmOptions::default(),
        )
    }

    fn targets(text: &str, map: LabelMap) -> Result<Vec<f64>, ParseError> {
        let mut s = Labeled::new(reader(text), map, "f.libsvm");
        let mut ex = Example::default();
        let mut out = Vec::new();
        while s.read_into(&mut ex)? {
            out.push(ex.label);
        }
        Ok(out)
    }

    #[test]
    fn zero_one_two_four_and_pm_one_give_the_same_targets() {
        for (neg, pos) in [("-1", "+1"), ("0", "1"), ("2", "4")] {
            let text = format!("{pos} 1:1\n{neg} 2:1\n{pos} 1:2\n");
            let c = scan_classes(&mut reader(&text), "f.libsvm")
                .unwrap()
                .binary()
                .unwrap();
            assert_eq!(
                targets(&text, LabelMap::Binary(c)).unwrap(),
                [1.0, -1.0, 1.0]
            );
        }
    }

    #[test]
    fn implicit_stream_errors_name_the_line() {
        let e = targets(
            "1 1:1\n0 1:1\n-1 1:1\n",
            LabelMap::Implicit(Default::default()),
        )
        .unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.to_string().contains("--multiclass"), "{e}");
        let e = targets("1 1:1\n2 1:1\n", LabelMap::Implicit(Default::default())).unwrap_err();
        assert!(e.to_string().starts_with("f.libsvm:2:1:") && e.to_string().contains("--classes"));
    }

    #[test]
    fn unseen_class_and_declared_lists() {
        let c = Classes::parse_list("1,2,3").unwrap();
        let e = targets("1 1:1\n5 1:1\n", LabelMap::Multiclass(c.clone())).unwrap_err();
        assert_eq!((e.line, e.column), (2, 1));
        let scan = scan_classes(&mut reader("1 1:1\n2 1:1\n4 1:1\n"), "f.libsvm").unwrap();
        let e = scan.declared(&c).unwrap_err();
        assert!(e.to_string().starts_with("f.libsvm:3:1: label 4"), "{e}");
        assert_eq!(
            scan.declared(&Classes::parse_list("4,2,1").unwrap())
                .unwrap()
                .to_list(),
            "4,2,1"
        );
    }

    #[test]
    fn oaa_takes_vw_or_zero_based_ranges() {
        let scan = scan_classes(&mut reader("0 1:1\n9 1:1\n3 1:1\n"), "f.libsvm").unwrap();
        assert_eq!(scan.oaa(10).unwrap().labels()[0], ClassLabel::Number(0.0));
        let scan = scan_classes(&mut reader("1 1:1\n3 1:1\n"), "f.libsvm").unwrap();
        assert_eq!(scan.oaa(3).unwrap().to_list(), "1,2,3");
        let scan = scan_classes(&mut reader("1 1:1\n2.5 1:1\n"), "f.libsvm").unwrap();
        assert_eq!(scan.oaa(3).unwrap_err().line, 2);
    }

    #[test]
    fn settle_every_spec() {
        let scan = scan_classes(&mut reader("1 1:1\n2 1:1\n3 1:1\n"), "f.libsvm").unwrap();
        let settle = |spec: &ClassSpec, task, scan| LabelMap::settle(spec, task, scan, "f.libsvm");
        let e = settle(&ClassSpec::FromInput, Task::Binary, Some(&scan)).unwrap_err();
        assert!(
            e.to_string().starts_with("f.libsvm:3:1:") && e.to_string().contains("--multiclass")
        );
        let three = ClassSpec::Declared(Classes::parse_list("3,2,1").unwrap());
        assert!(settle(&three, Task::Binary, None).is_err());
        assert_eq!(
            settle(&three, Task::Multiclass, Some(&scan))
                .unwrap()
                .classes()
                .unwrap()
                .to_list(),
            "3,2,1"
        );
        let oaa = settle(&ClassSpec::Oaa(4), Task::Multiclass, None).unwrap();
        assert_eq!(oaa.classes().unwrap().to_list(), "1,2,3,4");
        assert!(settle(&ClassSpec::Oaa(2), Task::Multiclass, Some(&scan)).is_err());
        assert!(settle(&three, Task::Regression, None).is_err());
    }

    #[test]
    fn too_many_labels_stop_at_the_line() {
        let text: String = (0..=MAX_CLASSES).map(|i| format!("{i} 1:1\n")).collect();
        let e = scan_classes(&mut reader(&text), "f.libsvm").unwrap_err();
        assert_eq!(e.line, MAX_CLASSES as u64 + 1);
        let one = scan_classes(&mut reader("1 1:1\n1 1:2\n"), "f.libsvm").unwrap();
        assert!(one.binary().is_err() && one.classes().is_err());
    }
}
