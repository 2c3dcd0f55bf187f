//! Quadratic interactions of VW namespaces (VW's `-q ab` / `--interactions ab`), hashed as VW
//! does: for every feature `f` of a namespace whose name starts with `a` and every feature `g`
//! of one starting with `b`, the feature with index
//!
//! ```text
//! ((h(f) · 16777619) XOR h(g)) mod 2^bits,   value v(f) · v(g)
//! ```
//!
//! where `h` is the feature's full hash before masking ([`hash_string`](super::hashing) of its
//! name seeded with its namespace's hash) and 16777619 is the 32-bit FNV prime (VW's
//! `interactions_predict.h`: `halfhash = FNV_prime * first.index(); index = halfhash ^
//! second.index()`). The default namespace (`| f`, no name) is the character `' '`, as in VW.
//! Within one namespace (`-q aa`) each unordered pair is crossed once, the feature with itself
//! included (VW's default, without `--leave_duplicate_interactions`: pairs `i ≤ j`).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The FNV prime VW multiplies the first feature's hash by.
pub const FNV_PRIME: u64 = 16_777_619;

/// One feature as the crosses need it: its namespace's first letter, its full hash, its value.
pub type NamespaceFeature = (u8, u64, f64);

/// What a parser crosses: the pairs, and the features of the line collected for them.
pub(crate) type Crossing<'a> = Option<(&'a Interactions, &'a mut Vec<NamespaceFeature>)>;

/// The most pairs a run may ask for.
pub const MAX_INTERACTIONS: usize = 16;

/// A set of namespace pairs to cross (`-q ab -q cd`); empty by default.
///
/// ```
/// use sketchlearn::data::Interactions;
/// let q: Interactions = "ab,ba".parse().unwrap();
/// assert_eq!(q.pairs(), &[*b"ab", *b"ba"]);
/// assert!("abc".parse::<Interactions>().is_err());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Interactions {
    pairs: [[u8; 2]; MAX_INTERACTIONS],
    len: u8,
}

impl Interactions {
    /// No interactions.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The pairs (first letters of the two namespaces).
    pub fn pairs(&self) -> &[[u8; 2]] {
        &self.pairs[..usize::from(self.len)]
    }

    /// Adds a pair (`ab`: two ASCII characters, `:` is refused as in VW's syntax for
    /// wildcards, which this build does not read).
    pub fn push(&mut self, pair: &str) -> Result<(), String> {
        let b = pair.as_bytes();
        if b.len() != 2
            || !b.iter().all(|c| c.is_ascii_graphic() || *c == b' ')
            || b.contains(&b':')
        {
            return Err(format!(
                "an interaction is two namespace letters, like -q ab (got '{pair}')"
            ));
        }
        if usize::from(self.len) == MAX_INTERACTIONS {
            return Err(format!("at most {MAX_INTERACTIONS} interactions"));
        }
        let pair = [b[0], b[1]];
        if !self.pairs().contains(&pair) {
            self.pairs[usize::from(self.len)] = pair;
            self.len += 1;
        }
        Ok(())
    }

    /// Appends the crossed features of `features` (`(namespace letter, full hash, value)` of one
    /// example, in input order) to `out` as `(index, value)` with `bits` hash bits.
    pub fn cross(&self, features: &[NamespaceFeature], bits: u32, out: &mut Vec<(u32, f64)>) {
        self.for_each_cross(
            features.len(),
            |k| (features[k].0, features[k].1),
            bits,
            |i, j, index| {
                out.push((index, features[i].2 * features[j].2));
            },
        );
    }

    /// Calls `f(i, j, index)` for each crossed pair of the `n` features whose namespace letter
    /// and full hash `feature(k)` gives, in the order [`Interactions::cross`] appends them.
    pub fn for_each_cross(
        &self,
        n: usize,
        feature: impl Fn(usize) -> (u8, u64),
        bits: u32,
        mut f: impl FnMut(usize, usize, u32),
    ) {
        let mask = if bits >= 32 {
            u64::from(u32::MAX)
        } else {
            (1u64 << bits) - 1
        };
        for &[a, b] in self.pairs() {
            for i in 0..n {
                let (na, ha) = feature(i);
                if na != a {
                    continue;
                }
                let half = ha.wrapping_mul(FNV_PRIME);
                // Within one namespace each unordered pair once (j ≥ i).
                let from = if a == b { i } else { 0 };
                for j in from..n {
                    let (nb, hb) = feature(j);
                    if nb == b {
                        f(i, j, ((half ^ hb) & mask) as u32);
                    }
                }
            }
        }
    }
}

impl FromStr for Interactions {
    type Err = String;
    /// Comma-separated pairs: `ab,cd`.
    fn from_str(s: &str) -> Result<Self, String> {
        let mut q = Interactions::default();
        for pair in s.split(',') {
            q.push(pair)?;
        }
        Ok(q)
    }
}

impl fmt::Display for Interactions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pairs: Vec<String> = self
            .pairs()
            .iter()
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect();
        f.write_str(&pairs.join(","))
    }
}
