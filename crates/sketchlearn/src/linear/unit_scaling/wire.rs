//! A unit scaling's model-file form: the wrapped learner, the example count, the moments
//! sorted by index, the table share (the layout of format 8, when the fields were
//! `UnitScaling`'s own). In a model delta (`model/delta.rs`) the moments are the entries that
//! differ from the base's, and a rebuilt state's moments are decoded straight into the table
//! its learner's dimension gives (no sorted list of them in between: ~40 MB of fresh pages at
//! `2^20` features; docs/results/dask.md, delta58).

use super::moments::{Moments, SortedInto};
use super::{OnlineLearner, TableShare, UnitScale, UnitScaling};
use serde::de::{self, DeserializeSeed, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

/// A unit scaling as a file holds it.
#[derive(Serialize)]
pub(super) struct WireRef<'a, L> {
    pub(super) inner: &'a L,
    pub(super) examples: f64,
    #[serde(with = "sorted")]
    pub(super) moments: &'a Moments,
    #[serde(with = "table_share")]
    pub(super) table: TableShare,
}

impl<L: Serialize> Serialize for UnitScaling<L> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        WireRef {
            inner: &self.inner,
            examples: self.scale.examples,
            moments: &self.scale.moments,
            table: self.scale.table,
        }
        .serialize(s)
    }
}

/// A state rebuilt from a model delta (`model/delta.rs`) is merged or learned from next, so its
/// moments go straight into the table its learner's dimension gives (`moments::SortedInto`:
/// what `Moments::from_sorted` makes of them); one loaded from a file starts as a map (it may only
/// predict; learning makes the table).
impl<'de, L: Deserialize<'de> + OnlineLearner> Deserialize<'de> for UnitScaling<L> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        const FIELDS: &[&str] = &["inner", "examples", "moments", "table"];
        d.deserialize_struct("Wire", FIELDS, WireVisitor(PhantomData))
    }
}

struct WireVisitor<L>(PhantomData<L>);

impl<'de, L: Deserialize<'de> + OnlineLearner> Visitor<'de> for WireVisitor<L> {
    type Value = UnitScaling<L>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a unit scaling (learner, examples, moments, table share)")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<UnitScaling<L>, A::Error> {
        use crate::model::delta::{self, Mode};
        let inner: L = seq
            .next_element()?
            .ok_or_else(|| de::Error::invalid_length(0, &self))?;
        let examples: f64 = seq
            .next_element()?
            .ok_or_else(|| de::Error::invalid_length(1, &self))?;
        let moments = if delta::mode() == Mode::Patch {
            seq.next_element_seed(PatchedMoments(inner.dim()))?
        } else {
            seq.next_element_seed(SortedMoments)?
        };
        let moments = moments.ok_or_else(|| de::Error::invalid_length(2, &self))?;
        let table = seq
            .next_element_seed(TableShareSeed)?
            .ok_or_else(|| de::Error::invalid_length(3, &self))?;
        Ok(UnitScaling {
            inner,
            scale: Arc::new(UnitScale {
                examples,
                moments,
                table,
                kept: Vec::new(),
            }),
            scaled: Vec::new(),
        })
    }
}

/// The moments of a file (a map: [`Moments::from_sorted`] without a dimension).
struct SortedMoments;

impl<'de> DeserializeSeed<'de> for SortedMoments {
    type Value = Moments;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Moments, D::Error> {
        sorted::deserialize(d).map(|v| Moments::from_sorted(v, None))
    }
}

/// The moments of a model delta, patched onto the base's, for a learner of dimension `.0`.
struct PatchedMoments(usize);

impl<'de> DeserializeSeed<'de> for PatchedMoments {
    type Value = Moments;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Moments, D::Error> {
        let mut into = SortedInto::new(Some(self.0));
        super::moments_delta::patch(d, &mut into)?;
        Ok(into.finish())
    }
}

struct TableShareSeed;

impl<'de> DeserializeSeed<'de> for TableShareSeed {
    type Value = TableShare;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<TableShare, D::Error> {
        table_share::deserialize(d)
    }
}

/// The moments in a file: `(index, moments)` sorted by index.
mod sorted {
    use super::super::{Moments, Welford};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    /// In a model delta (`model/delta.rs`): the base's snapshot, or the entries that differ
    /// from it (`unit_scaling/moments_delta.rs`).
    pub fn serialize<S: Serializer>(m: &&Moments, s: S) -> Result<S::Ok, S::Error> {
        // A table's entries are in index order already: streamed from it, with no sorted copy
        // (~40 MB of fresh pages at 2^20 features; docs/results/dask.md, delta58).
        match m.in_order() {
            Some(table) => in_order(|| table.present(), s),
            None => {
                let mut v: Vec<(usize, Welford)> = m.iter().collect();
                v.sort_unstable_by_key(|&(i, _)| i);
                in_order(|| v.iter().copied(), s)
            }
        }
    }

    /// The moments given by `entries()` (increasing by index, each time it is called) as a
    /// file holds them (`Vec<(usize, Welford)>`'s bytes), or in a model delta the base's
    /// snapshot or the entries that differ from it (`unit_scaling/moments_delta.rs`).
    fn in_order<S, I>(entries: impl Fn() -> I, s: S) -> Result<S::Ok, S::Error>
    where
        S: Serializer,
        I: Iterator<Item = (usize, Welford)>,
    {
        use crate::model::delta::{self, Mode};
        use serde::ser::SerializeSeq;
        match delta::mode() {
            Mode::Whole | Mode::Patch => {
                let mut seq = s.serialize_seq(Some(entries().count()))?;
                for e in entries() {
                    seq.serialize_element(&e)?;
                }
                seq.end()
            }
            Mode::Record => {
                let v: Vec<(u64, Welford)> = entries().map(|(i, w)| (i as u64, w)).collect();
                let words = v.iter().flat_map(|(j, w)| {
                    [*j].into_iter()
                        .chain([w.n, w.mean, w.m2, w.max_abs].map(f64::to_bits))
                });
                let digest = delta::digest(words);
                delta::record(super::super::moments_delta::Snapshot(v), digest);
                ().serialize(s)
            }
            Mode::Diff => {
                super::super::moments_delta::diff(|| entries().map(|(i, w)| (i as u64, w)), s)
            }
        }
    }

    /// The moments as a file stores them, `(index, moments)` ([`Moments::from_sorted`] makes
    /// the store; a model delta's are read by [`super::PatchedMoments`]). Format 7 kept no
    /// maximum: read as `+∞` (see [`Welford::max_abs`]).
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(usize, Welford)>, D::Error> {
        if crate::model::decoding_version() < super::super::MAX_ABS_SINCE {
            let v = Vec::<(usize, (f64, f64, f64))>::deserialize(d)?;
            let old = |(n, mean, m2)| Welford {
                n,
                mean,
                m2,
                max_abs: f64::INFINITY,
            };
            return Ok(v.into_iter().map(|(i, m)| (i, old(m))).collect());
        }
        Vec::<(usize, Welford)>::deserialize(d)
    }
}

/// The table share in a file: absent from format 7 (read as empty, without consuming bytes).
mod table_share {
    use super::super::TableShare;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(t: &TableShare, s: S) -> Result<S::Ok, S::Error> {
        t.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<TableShare, D::Error> {
        if crate::model::decoding_version() < super::super::MAX_ABS_SINCE {
            return Ok(TableShare::default());
        }
        TableShare::deserialize(d)
    }
}
