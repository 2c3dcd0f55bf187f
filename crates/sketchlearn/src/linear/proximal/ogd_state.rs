//! How [`ProximalOgd`](super::ProximalOgd) keeps and writes its per-feature state: the stored
//! weight `w_i` and the `(D, C)` of the coordinate's last update (module docs of
//! [`super`]), in one [`Touched`] of three arrays.
//!
//! ```text
//! w: the sparse_vec encoding (length, non-zero entries)      as before
//! (D, C) pairs: count: varint, then count × (D: f64, C: f64)
//! ```
//!
//! The pairs are those of the features with a stored (non-zero) weight, in index order: a pair
//! matters only there (a zero weight is read as zero whatever its pair, and its next update sets
//! the pair). Files written before stop 37 (model format ≤ 8) hold a pair for every one of the
//! `d` features — `(1, 0)` where never updated — which is the same layout when every weight is
//! stored; such a file is read by taking the pairs of its stored weights. So a save writes, and
//! a load reads, in proportion to the features touched (a `-b 27` model wrote 2 GiB of pairs).
//!
//! The shorter layout came in under format 8 too, so a version-8 file may hold either; format
//! 9 ([`PAIRS_OF_STORED_SINCE`]) marks it, and a file of version 9 or later with a pair for
//! every feature but not every weight stored is refused.

use crate::model::sparse_vec;
use crate::model::touched::Touched;
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::ser::{SerializeSeq, SerializeTuple, Serializer};
use serde::{Deserialize, Serialize};
use std::fmt;

/// The first model format version whose `(D, C)` pairs are those of the stored weights only.
pub(crate) const PAIRS_OF_STORED_SINCE: u32 = 9;

/// Per feature `[w, D, C]` (see the [module](self) documentation).
#[derive(Clone, Debug)]
pub(crate) struct OgdState(pub(crate) Touched<3>);

impl OgdState {
    /// The features whose weight is stored (non-zero bits), increasing.
    fn stored(&self) -> Vec<usize> {
        let w = self.0.array(0);
        let mut at = self.0.features();
        at.retain(|&i| w[i].to_bits() != 0);
        at
    }
}

/// The weights at the listed positions, in the sparse_vec encoding.
struct Weights<'a>(&'a [f64], &'a [usize]);

impl Serialize for Weights<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        sparse_vec::serialize_at(self.0, self.1, s)
    }
}

/// The `(D, C)` pairs of the listed features.
struct Pairs<'a>(&'a Touched<3>, &'a [usize]);

impl Serialize for Pairs<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.1.len()))?;
        for &i in self.1 {
            let [_, d, c] = self.0.at(i);
            seq.serialize_element(&(d, c))?;
        }
        seq.end()
    }
}

impl Serialize for OgdState {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let at = self.stored();
        let mut t = s.serialize_tuple(2)?;
        t.serialize_element(&Weights(self.0.array(0), &at))?;
        t.serialize_element(&Pairs(&self.0, &at))?;
        t.end()
    }
}

/// A sparse array read with the positions of its entries.
struct Listed(Vec<f64>, Vec<usize>);

impl<'de> Deserialize<'de> for Listed {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (v, at) = sparse_vec::deserialize_listed(d)?;
        Ok(Listed(v, at))
    }
}

impl<'de> Deserialize<'de> for OgdState {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_tuple(2, StateVisitor)
    }
}

struct StateVisitor;

impl<'de> Visitor<'de> for StateVisitor {
    type Value = OgdState;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("OGD weights and their (D, C) pairs")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<OgdState, A::Error> {
        let missing = || de::Error::custom("the OGD state ends early");
        let Listed(w, stored) = seq.next_element()?.ok_or_else(missing)?;
        let pairs: Vec<(f64, f64)> = seq.next_element()?.ok_or_else(missing)?;
        let old_layout = crate::model::decoding_version() < PAIRS_OF_STORED_SINCE;
        let every_feature = old_layout && pairs.len() == w.len();
        if !every_feature && pairs.len() != stored.len() {
            return Err(de::Error::custom(format!(
                "{} (D, C) pairs for {} stored OGD weights of {}",
                pairs.len(),
                stored.len(),
                w.len()
            )));
        }
        let mut state = Touched::new(w.len());
        for (k, &i) in stored.iter().enumerate() {
            let (d, c) = pairs[if every_feature { i } else { k }];
            state.set(i, [w[i], d, c]);
        }
        Ok(OgdState(state))
    }
}
