//! Class labels as users have them: `-1/+1`, `0/1`, `2/4`, `"Yes"/"No"`, `1..8`, `"Adelie"`…
//!
//! The learners work on a fixed internal encoding — a binary learner on `y ∈ {−1, +1}`, a
//! multiclass learner on class indices `0..K` — and [`Classes`] maps between that and the
//! user's labels, in both directions, so that predictions are printed in the user's own
//! convention. The convention is scikit-learn's: the classes are sorted (numbers numerically,
//! names lexicographically) and, for a binary problem, the **larger / later-sorted class is the
//! positive one** (`+1`). An explicit list (`--classes NEG,POS`, or `A,B,C` for multiclass) is
//! taken in the order given instead.
//!
//! For a one-shot stream whose classes cannot be scanned beforehand, [`ImplicitBinary`] accepts
//! the two conventions that need no declaration — `−1/+1` and `0/1` — and rejects anything else
//! with a message naming `--classes`.
//!
//! ```
//! use sketchlearn::labels::{ClassLabel, Classes};
//! let classes = Classes::from_observed([2.0, 4.0, 4.0, 2.0].map(ClassLabel::Number)).unwrap();
//! assert_eq!(classes.binary_target(&ClassLabel::Number(4.0)).unwrap(), 1.0);
//! assert_eq!(classes.binary_target(&ClassLabel::Number(2.0)).unwrap(), -1.0);
//! assert_eq!(classes.binary_label(0.3).to_string(), "4"); // a positive score predicts 4
//! ```

use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::fmt;

/// The most classes a model may hold (an input with more distinct labels is almost certainly a
/// regression target or an ID column, and each class costs a learner or a row of weights).
pub const MAX_CLASSES: usize = 4096;

/// One class label as written in the input: a number (LIBSVM, VW, numeric CSV columns) or a
/// name (string CSV columns).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum ClassLabel {
    /// A finite number.
    Number(f64),
    /// A name.
    Text(String),
}

impl ClassLabel {
    /// Parses a label token: a finite number if it reads as one, else a name. Empty text is
    /// `None`.
    ///
    /// ```
    /// use sketchlearn::labels::ClassLabel;
    /// assert_eq!(ClassLabel::parse("+1"), Some(ClassLabel::Number(1.0)));
    /// assert_eq!(ClassLabel::parse(" Yes "), Some(ClassLabel::Text("Yes".into())));
    /// assert_eq!(ClassLabel::parse(""), None);
    /// ```
    pub fn parse(text: &str) -> Option<ClassLabel> {
        let t = text.trim();
        if t.is_empty() {
            return None;
        }
        match t.parse::<f64>() {
            Ok(x) if x.is_finite() => Some(ClassLabel::Number(x)),
            _ => Some(ClassLabel::Text(t.to_string())),
        }
    }
}

impl PartialEq for ClassLabel {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for ClassLabel {}

impl PartialOrd for ClassLabel {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ClassLabel {
    /// Numbers before names; numbers by value (`-0` equals `0`; labels are finite), names by
    /// their text.
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (ClassLabel::Number(a), ClassLabel::Number(b)) => {
                a.partial_cmp(b).unwrap_or_else(|| a.total_cmp(b))
            }
            (ClassLabel::Number(_), ClassLabel::Text(_)) => Ordering::Less,
            (ClassLabel::Text(_), ClassLabel::Number(_)) => Ordering::Greater,
            (ClassLabel::Text(a), ClassLabel::Text(b)) => a.cmp(b),
        }
    }
}

impl fmt::Display for ClassLabel {
    /// Numbers as the shortest text that reads back to the same value (`1`, `-1`, `2.5`), names
    /// as they are.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClassLabel::Number(x) if *x == 0.0 => f.write_str("0"),
            ClassLabel::Number(x) => write!(f, "{x}"),
            ClassLabel::Text(s) => f.write_str(s),
        }
    }
}

/// What is wrong with a label.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LabelError {
    /// A label that is not one of the model's classes. The message names a class that
    /// differs from it only by case (`Yes` where the classes are `no,yes`: a file written by
    /// another tool, or by hand), since the two look alike at a glance and labels are compared
    /// exactly.
    ///
    /// ```
    /// use sketchlearn::labels::{ClassLabel, Classes};
    /// let classes = Classes::parse_list("no,yes").unwrap();
    /// let e = classes.index_of(&ClassLabel::Text("Yes".into())).unwrap_err().to_string();
    /// assert!(e.starts_with("label Yes is not one of the classes no,yes: Yes and yes differ only by case"), "{e}");
    /// let e = classes.index_of(&ClassLabel::Text("maybe".into())).unwrap_err().to_string();
    /// assert!(e.starts_with("label maybe is not one of the classes no,yes ("), "{e}");
    /// ```
    #[error("label {label} is not one of the classes {classes}{} ({hint})", case_note(.label, .classes))]
    Unknown {
        /// The label as written.
        label: String,
        /// The known classes, comma-separated.
        classes: String,
        /// What to do about it.
        hint: String,
    },
    /// Fewer than two classes (the one found, or none).
    #[error("{}", too_few(.0))]
    TooFew(String),
    /// Too many classes.
    #[error("{0} distinct labels: more than the {MAX_CLASSES} classes a model may hold (is the label column a regression target or an ID? use --loss squared for regression)")]
    TooMany(usize),
    /// A class listed twice in an explicit list.
    #[error("class {0} is listed twice")]
    Duplicate(String),
    /// A name where a regression learns numbers.
    #[error("label {0} is not a number: --loss squared learns numeric labels (class names need a classifier: the default loss, or --multiclass)")]
    NotANumber(String),
}

/// What [`LabelError::Unknown`] says of a class (in `classes`, comma-separated) that differs
/// from `label` only by case: nothing when none does. Public for front ends that word the
/// rest of the error in their own terms (the Python package's `partial_fit`).
///
/// ```
/// use sketchlearn::labels::case_note;
/// assert_eq!(case_note("Yes", "no,yes"), ": Yes and yes differ only by case, and labels are compared exactly");
/// assert_eq!(case_note("maybe", "no,yes"), "");
/// ```
pub fn case_note(label: &str, classes: &str) -> String {
    let twin = classes.split(',').find(|c| differ_only_by_case(label, c));
    twin.map_or_else(String::new, |twin| {
        format!(": {label} and {twin} differ only by case, and labels are compared exactly")
    })
}

/// True when two labels are different texts that are equal ignoring case (`Yes` and `yes`):
/// the one rule behind [`LabelError::Unknown`]'s note and the run's warning about classes that
/// differ only by case.
///
/// ```
/// use sketchlearn::labels::differ_only_by_case;
/// assert!(differ_only_by_case("Yes", "yes"));
/// assert!(!differ_only_by_case("yes", "yes"));
/// assert!(!differ_only_by_case("yes", "no"));
/// ```
pub fn differ_only_by_case(a: &str, b: &str) -> bool {
    a != b && a.to_lowercase() == b.to_lowercase()
}

/// The first two of `labels` that differ only by case ([`differ_only_by_case`]), in the
/// order they first appear: each label is given with where it first appears (`at`: a line, or
/// a file's index and line; smaller is earlier), and the pair is the first label whose
/// lower case was seen before, with that earlier one. `None` when there are none. The one rule
/// behind a run's warning ([`ClassScan::case_twins`](crate::data::ClassScan::case_twins)) and
/// a CSV scan's ([`CaseTwins`](crate::data::CaseTwins)).
///
/// ```
/// use sketchlearn::labels::first_case_twins;
/// let labels = [("yes", 2), ("no", 3), ("Yes", 9), ("YES", 5)];
/// assert_eq!(first_case_twins(labels), Some((("yes", 2), ("YES", 5))));
/// assert_eq!(first_case_twins([("a", 1), ("b", 2)]), None);
/// ```
#[allow(clippy::type_complexity)]
pub fn first_case_twins<'a, K: Ord + Copy>(
    labels: impl IntoIterator<Item = (&'a str, K)>,
) -> Option<((&'a str, K), (&'a str, K))> {
    let mut by_place: Vec<(&str, K)> = labels.into_iter().collect();
    by_place.sort_by_key(|&(_, at)| at);
    let mut seen: std::collections::HashMap<String, (&str, K)> = Default::default();
    for (text, at) in by_place {
        let key = text.to_lowercase();
        if let Some(&first) = seen.get(&key) {
            return Some((first, (text, at)));
        }
        seen.insert(key, (text, at));
    }
    None
}

/// The message of [`LabelError::TooFew`]: the one label found (or none) and the two ways out.
fn too_few(found: &str) -> String {
    let found = if found.is_empty() {
        "none".to_string()
    } else {
        format!("only the label {found}")
    };
    format!(
        "a classifier needs at least two distinct labels, found {found} (name both classes \
         with --classes NEG,POS; a numeric target is learned with --loss squared)"
    )
}

/// The classes of a classifier, in their internal order (index `k` is class `k`; for a binary
/// problem index 0 is the negative class, index 1 the positive one).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Classes {
    labels: Vec<ClassLabel>,
}

impl Classes {
    /// The classes found in a scan of the input, sorted (scikit-learn's convention: for two
    /// classes the later-sorted one is positive).
    pub fn from_observed(labels: impl IntoIterator<Item = ClassLabel>) -> Result<Self, LabelError> {
        let mut set = std::collections::BTreeSet::new();
        for l in labels {
            set.insert(l);
            if set.len() > MAX_CLASSES {
                return Err(LabelError::TooMany(set.len()));
            }
        }
        let labels: Vec<ClassLabel> = set.into_iter().collect();
        if labels.len() < 2 {
            return Err(LabelError::TooFew(joined(&labels)));
        }
        Ok(Classes { labels })
    }

    /// An explicit list (`--classes NEG,POS` or `A,B,C`), kept in the order given.
    ///
    /// ```
    /// use sketchlearn::labels::Classes;
    /// let c = Classes::parse_list("Yes,No").unwrap();
    /// assert_eq!(c.binary_label(1.0).to_string(), "No"); // the second is positive
    /// assert!(Classes::parse_list("1").is_err());
    /// assert!(Classes::parse_list("a,b,a").is_err());
    /// ```
    pub fn parse_list(list: &str) -> Result<Self, LabelError> {
        Self::declared(list.split(',').filter_map(ClassLabel::parse).collect())
    }

    /// Labels declared in this order (the first is negative for a binary learner): at least
    /// two, distinct, at most [`MAX_CLASSES`] — what `--classes` and the Python estimators'
    /// `classes_` give.
    ///
    /// ```
    /// use sketchlearn::labels::{ClassLabel, Classes};
    /// let c = Classes::declared(vec![ClassLabel::Number(1.0), ClassLabel::Number(0.0)]).unwrap();
    /// assert_eq!(c.binary_target(&ClassLabel::Number(0.0)).unwrap(), 1.0);
    /// ```
    pub fn declared(labels: Vec<ClassLabel>) -> Result<Self, LabelError> {
        if labels.len() < 2 {
            return Err(LabelError::TooFew(joined(&labels)));
        }
        if labels.len() > MAX_CLASSES {
            return Err(LabelError::TooMany(labels.len()));
        }
        for (i, l) in labels.iter().enumerate() {
            if labels[..i].contains(l) {
                return Err(LabelError::Duplicate(l.to_string()));
            }
        }
        Ok(Classes { labels })
    }

    /// `−1/+1`: the convention every binary learner uses internally.
    pub fn plus_minus_one() -> Self {
        Classes {
            labels: vec![ClassLabel::Number(-1.0), ClassLabel::Number(1.0)],
        }
    }

    /// The number of classes `K`.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Never true (a [`Classes`] holds at least two labels); for the `len`/`is_empty` pair.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// True for exactly two classes.
    pub fn is_binary(&self) -> bool {
        self.labels.len() == 2
    }

    /// The labels in internal order.
    pub fn labels(&self) -> &[ClassLabel] {
        &self.labels
    }

    /// The internal index of `label`.
    pub fn index_of(&self, label: &ClassLabel) -> Result<usize, LabelError> {
        self.labels
            .iter()
            .position(|l| l == label)
            .ok_or_else(|| LabelError::Unknown {
                label: label.to_string(),
                classes: joined(&self.labels),
                hint: if self.is_binary() {
                    "a third class needs --multiclass; or give the classes with --classes".into()
                } else {
                    "give every class with --classes".into()
                },
            })
    }

    /// The binary learner's target for `label`: `−1` for the negative class, `+1` for the
    /// positive one. Only for two classes.
    pub fn binary_target(&self, label: &ClassLabel) -> Result<f64, LabelError> {
        debug_assert!(self.is_binary());
        Ok(if self.index_of(label)? == 1 {
            1.0
        } else {
            -1.0
        })
    }

    /// The user's label that a binary score predicts: the positive class when `score > 0`.
    pub fn binary_label(&self, score: f64) -> &ClassLabel {
        &self.labels[usize::from(score > 0.0)]
    }

    /// The labels as text, in internal order (what reports print).
    ///
    /// ```
    /// use sketchlearn::labels::Classes;
    /// assert_eq!(Classes::parse_list("0,1").unwrap().names(), ["0", "1"]);
    /// ```
    pub fn names(&self) -> Vec<String> {
        self.labels.iter().map(|l| l.to_string()).collect()
    }

    /// The labels as `a,b,c` (the form `--classes` takes).
    pub fn to_list(&self) -> String {
        joined(&self.labels)
    }
}

fn joined(labels: &[ClassLabel]) -> String {
    labels
        .iter()
        .map(|l| l.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// Binary labels on a stream that cannot be scanned first: `+1` is positive; `−1` or `0` is
/// negative, whichever the stream uses (both in one stream is a third class). Anything else is
/// an error that names `--classes`. [`ImplicitBinary::classes`] reports the convention seen, so
/// that the model prints predictions in it.
///
/// ```
/// use sketchlearn::labels::ImplicitBinary;
/// let mut conv = ImplicitBinary::default();
/// assert_eq!(conv.target(0.0).unwrap(), -1.0);
/// assert_eq!(conv.target(1.0).unwrap(), 1.0);
/// assert!(conv.target(-1.0).is_err()); // 0 and -1 in one stream: three classes
/// assert!(ImplicitBinary::default().target(2.0).is_err());
/// assert_eq!(conv.classes().to_list(), "0,1");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImplicitBinary {
    /// The negative label seen so far: `None`, `Some(0)` or `Some(-1)`.
    negative: Option<i8>,
}

impl ImplicitBinary {
    /// The binary target of the label `y`.
    pub fn target(&mut self, y: f64) -> Result<f64, LabelError> {
        let neg = if y == 1.0 {
            return Ok(1.0);
        } else if y == 0.0 {
            0
        } else if y == -1.0 {
            -1
        } else {
            return Err(Self::undeclared(&ClassLabel::Number(y)));
        };
        match self.negative {
            Some(n) if n != neg => Err(LabelError::Unknown {
                label: ClassLabel::Number(y).to_string(),
                classes: format!("{n},1"),
                hint: "the stream has three distinct labels: use --multiclass".into(),
            }),
            _ => {
                self.negative = Some(neg);
                Ok(-1.0)
            }
        }
    }

    /// The binary target of a label as written: a name is never `−1/+1` or `0/1`.
    ///
    /// ```
    /// use sketchlearn::labels::{ClassLabel, ImplicitBinary};
    /// let mut conv = ImplicitBinary::default();
    /// assert_eq!(conv.target_of(&ClassLabel::Number(1.0)).unwrap(), 1.0);
    /// let e = conv.target_of(&ClassLabel::Text("Yes".into())).unwrap_err().to_string();
    /// assert!(e.starts_with("label Yes is not one of the classes -1,1 or 0,1") && e.contains("--classes"), "{e}");
    /// ```
    pub fn target_of(&mut self, label: &ClassLabel) -> Result<f64, LabelError> {
        match label {
            ClassLabel::Number(y) => self.target(*y),
            ClassLabel::Text(_) => Err(Self::undeclared(label)),
        }
    }

    /// A label outside both conventions.
    fn undeclared(label: &ClassLabel) -> LabelError {
        LabelError::Unknown {
            label: label.to_string(),
            classes: "-1,1 or 0,1".into(),
            hint: "on a stream that is read once, labels other than -1/+1 and 0/1 need \
                   --classes NEG,POS (or --multiclass with --classes for more classes)"
                .into(),
        }
    }

    /// The classes seen: `0,1` if a `0` was seen, else `-1,1`.
    pub fn classes(&self) -> Classes {
        Classes {
            labels: vec![
                ClassLabel::Number(f64::from(self.negative.unwrap_or(-1))),
                ClassLabel::Number(1.0),
            ],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn num(x: f64) -> ClassLabel {
        ClassLabel::Number(x)
    }

    #[test]
    fn zero_one_and_plus_minus_one_and_two_four_agree() {
        for (neg, pos) in [(0.0, 1.0), (-1.0, 1.0), (2.0, 4.0)] {
            let c = Classes::from_observed([num(pos), num(neg)]).unwrap();
            assert_eq!(c.binary_target(&num(neg)).unwrap(), -1.0);
            assert_eq!(c.binary_target(&num(pos)).unwrap(), 1.0);
            assert_eq!(c.binary_label(-0.5), &num(neg));
            assert_eq!(c.binary_label(0.0), &num(neg));
            assert_eq!(c.binary_label(2.0), &num(pos));
        }
    }

    #[test]
    fn a_third_label_names_multiclass() {
        let c = Classes::from_observed([num(0.0), num(1.0)]).unwrap();
        let e = c.binary_target(&num(2.0)).unwrap_err().to_string();
        assert!(e.contains("--multiclass") && e.contains("0,1"), "{e}");
    }

    #[test]
    fn names_sort_and_the_later_is_positive() {
        let c = Classes::from_observed(["Yes", "No", "Yes"].map(|s| ClassLabel::Text(s.into())))
            .unwrap();
        assert_eq!(c.to_list(), "No,Yes");
        assert_eq!(c.binary_label(1.0).to_string(), "Yes");
    }

    #[test]
    fn one_class_or_too_many_is_an_error() {
        assert!(matches!(
            Classes::from_observed([num(1.0), num(1.0)]),
            Err(LabelError::TooFew(_))
        ));
        let many = (0..=MAX_CLASSES).map(|k| num(k as f64));
        assert!(matches!(
            Classes::from_observed(many),
            Err(LabelError::TooMany(_))
        ));
    }

    #[test]
    fn numbers_print_as_written() {
        assert_eq!(num(-0.0).to_string(), "0");
        assert_eq!(num(4.0).to_string(), "4");
        assert_eq!(num(2.5).to_string(), "2.5");
        assert_eq!(num(-1.0).to_string(), "-1");
    }

    proptest! {
        /// Sorting is by value: the binary target is +1 exactly for the larger label, and a
        /// label prints to text that parses back to the same class.
        #[test]
        fn larger_label_is_positive(a in -1e6f64..1e6, b in -1e6f64..1e6) {
            prop_assume!(a != b);
            let c = Classes::from_observed([num(a), num(b)]).unwrap();
            let big = a.max(b);
            prop_assert_eq!(c.binary_target(&num(big)).unwrap(), 1.0);
            prop_assert_eq!(c.binary_target(&num(a.min(b))).unwrap(), -1.0);
            for l in c.labels() {
                prop_assert_eq!(&ClassLabel::parse(&l.to_string()).unwrap(), l);
            }
        }
    }
}
