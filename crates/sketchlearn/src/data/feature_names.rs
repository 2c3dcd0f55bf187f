//! [`FeatureNames`]: the original names of hashed VW features (like VW's `--invert_hash`), kept
//! in a model when `train --keep-names` is given so that `inspect` can name its top weights.
//!
//! # Bounded memory
//!
//! The table grows with the input, so it is capped: at most [`MAX_NAMES`] names in all, at
//! most [`MAX_NAMES_PER_INDEX`] per hashed index (a collision keeps the first few, shown
//! joined with ` | `, as VW lists every name of a bucket), and each name is cut to
//! [`MAX_NAME_BYTES`] bytes (at a character boundary). Worst case ≈ 1,000,000 × (128 + ~70
//! bytes of string, vector and tree-node overhead) ≈ 200 MB; a table that reaches the cap stops
//! taking new names and says so ([`FeatureNames::is_full`]). A loaded table is checked against
//! the same caps (and indices strictly increasing) before it is used.
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The most names a table keeps.
pub const MAX_NAMES: usize = 1_000_000;
/// The most names kept for one hashed index (collisions).
pub const MAX_NAMES_PER_INDEX: usize = 4;
/// The longest name kept, in bytes (longer names are cut).
pub const MAX_NAME_BYTES: usize = 128;

/// Hashed index → the names that hashed to it (see the [module](self) documentation).
///
/// ```
/// use sketchlearn::data::FeatureNames;
/// let mut names = FeatureNames::default();
/// names.record(7, "a^x");
/// names.record(7, "b^y");
/// names.record(7, "a^x");
/// assert_eq!(names.name(7).as_deref(), Some("a^x | b^y"));
/// assert_eq!(names.name(8), None);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "Vec<(u32, Vec<String>)>", into = "Vec<(u32, Vec<String>)>")]
pub struct FeatureNames {
    by_index: BTreeMap<u32, Vec<String>>,
    count: usize,
    full: bool,
}

impl FeatureNames {
    /// No names.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The number of names kept.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether the table reached [`MAX_NAMES`] and stopped taking new names.
    pub fn is_full(&self) -> bool {
        self.full || self.count >= MAX_NAMES
    }

    /// Records that `name` hashed to `index` (ignored when already known, when the index has
    /// [`MAX_NAMES_PER_INDEX`] names, or when the table is full).
    pub fn record(&mut self, index: u32, name: &str) {
        let name = cut(name);
        if let Some(known) = self.by_index.get(&index) {
            if known.len() >= MAX_NAMES_PER_INDEX || known.iter().any(|n| n == name) {
                return;
            }
        }
        if self.count >= MAX_NAMES {
            self.full = true;
            return;
        }
        self.by_index
            .entry(index)
            .or_default()
            .push(name.to_owned());
        self.count += 1;
    }

    /// The names of `index`, joined with ` | ` (VW names cannot hold `|`), if any.
    pub fn name(&self, index: usize) -> Option<String> {
        let index = u32::try_from(index).ok()?;
        self.by_index.get(&index).map(|n| n.join(" | "))
    }

    /// Whether every index is below `dim` (a loaded model's table must fit its dimension).
    pub fn fits(&self, dim: usize) -> bool {
        self.by_index
            .keys()
            .next_back()
            .is_none_or(|&i| (i as usize) < dim)
    }
}

/// `name` cut to at most [`MAX_NAME_BYTES`] bytes at a character boundary.
fn cut(name: &str) -> &str {
    if name.len() <= MAX_NAME_BYTES {
        return name;
    }
    let mut end = MAX_NAME_BYTES;
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    &name[..end]
}

impl From<FeatureNames> for Vec<(u32, Vec<String>)> {
    fn from(names: FeatureNames) -> Self {
        names.by_index.into_iter().collect()
    }
}

impl TryFrom<Vec<(u32, Vec<String>)>> for FeatureNames {
    type Error = String;

    /// Checks a table read from a file against the caps, and its indices strictly increasing.
    fn try_from(entries: Vec<(u32, Vec<String>)>) -> Result<Self, String> {
        let mut count = 0usize;
        let mut previous: Option<u32> = None;
        for (index, names) in &entries {
            if previous.is_some_and(|p| p >= *index) {
                return Err(format!("feature names: index {index} out of order"));
            }
            previous = Some(*index);
            if names.is_empty() || names.len() > MAX_NAMES_PER_INDEX {
                return Err(format!(
                    "feature names: index {index} has {} names (1 to {MAX_NAMES_PER_INDEX})",
                    names.len()
                ));
            }
            if names.iter().any(|n| n.len() > MAX_NAME_BYTES) {
                return Err(format!(
                    "feature names: a name of index {index} is longer than {MAX_NAME_BYTES} bytes"
                ));
            }
            count += names.len();
            if count > MAX_NAMES {
                return Err(format!("feature names: more than {MAX_NAMES} names"));
            }
        }
        Ok(FeatureNames {
            by_index: entries.into_iter().collect(),
            count,
            full: false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_per_index_and_name_length() {
        let mut names = FeatureNames::default();
        for k in 0..10 {
            names.record(1, &format!("n{k}"));
        }
        assert_eq!(names.len(), MAX_NAMES_PER_INDEX);
        let long = "é".repeat(100);
        names.record(2, &long);
        assert!(names.name(2).unwrap().len() <= MAX_NAME_BYTES);
    }

    #[test]
    fn refuses_hostile_tables() {
        assert!(
            FeatureNames::try_from(vec![(2, vec!["a".into()]), (1, vec!["b".into()])]).is_err()
        );
        assert!(FeatureNames::try_from(vec![(1, vec![])]).is_err());
        assert!(FeatureNames::try_from(vec![(1, vec!["x".repeat(200)])]).is_err());
        assert!(FeatureNames::try_from(vec![(1, vec!["a".into(); 5])]).is_err());
        let ok = FeatureNames::try_from(vec![(1, vec!["a".into()])]).unwrap();
        assert!(ok.fits(2) && !ok.fits(1));
    }
}
