//! Unit scaling's per-feature moments in a model delta (`model/delta.rs`): the features whose
//! moments are new or differ bitwise from the base's ([`crate::model::delta::diff_sorted`]). A
//! feature's moments change only when it is seen, so a task's delta holds its block's
//! features.

use super::Welford;
use crate::model::delta::{diff_sorted, next_base, patch_sorted, Keyed};

/// The base's moments, sorted by feature (what it records).
pub(super) struct Snapshot(pub(super) Vec<(usize, Welford)>);

pub(super) type MomentsDelta = Keyed<usize, Welford>;

fn same_bits(a: &Welford, b: &Welford) -> bool {
    let bits = |w: &Welford| [w.n, w.mean, w.m2, w.max_abs].map(f64::to_bits);
    bits(a) == bits(b)
}

/// `now` (sorted by feature) against the next recorded base.
pub(super) fn diff(now: &[(usize, Welford)]) -> Result<MomentsDelta, &'static str> {
    let Snapshot(base) = next_base()?;
    Ok(diff_sorted(now, &base, same_bits))
}

/// The moments of a delta (sorted by feature), the others taken from the next recorded base.
pub(super) fn patch(d: &MomentsDelta) -> Result<Vec<(usize, Welford)>, &'static str> {
    let Snapshot(base) = next_base()?;
    patch_sorted(&base, d)
}
