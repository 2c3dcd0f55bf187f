//! Unit scaling's per-feature moments in a model delta (`model/delta.rs`): the features whose
//! moments are new or differ bitwise from the base's, streamed from the moments and onto the
//! base's ([`crate::model::keyed_delta`]). A feature's moments change only when it is seen, so
//! a task's delta holds its block's features.

use super::moments::SortedInto;
use super::Welford;
use crate::model::delta::next_base;
use crate::model::keyed_delta;
use serde::{Deserializer, Serializer};

/// The base's moments, sorted by feature (what it records).
pub(super) struct Snapshot(pub(super) Vec<(u64, Welford)>);

fn same_bits(a: &Welford, b: &Welford) -> bool {
    let bits = |w: &Welford| [w.n, w.mean, w.m2, w.max_abs].map(f64::to_bits);
    bits(a) == bits(b)
}

/// The moments `now()` gives (sorted by feature) against the next recorded base.
pub(super) fn diff<S, I>(now: impl Fn() -> I, s: S) -> Result<S::Ok, S::Error>
where
    S: Serializer,
    I: Iterator<Item = (u64, Welford)>,
{
    let Snapshot(base) = next_base().map_err(serde::ser::Error::custom)?;
    keyed_delta::diff(now, &base, same_bits, s)
}

/// The moments of a delta, the others taken from the next recorded base, given to `into`
/// increasing by feature.
pub(super) fn patch<'de, D: Deserializer<'de>>(
    d: D,
    into: &mut SortedInto,
) -> Result<(), D::Error> {
    let Snapshot(base) = next_base().map_err(serde::de::Error::custom)?;
    keyed_delta::patch(d, &base, into)
}

impl keyed_delta::Sink<Welford> for SortedInto {
    fn reserve(&mut self, n: usize) {
        SortedInto::reserve(self, n);
    }
    fn put(&mut self, key: u64, value: Welford) -> Result<(), &'static str> {
        let i = usize::try_from(key).map_err(|_| crate::model::delta::NOT_ITS_BASE)?;
        self.push(i, value);
        Ok(())
    }
}
