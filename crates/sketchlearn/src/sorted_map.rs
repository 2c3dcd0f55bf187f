//! Writing a `HashMap` in key order, so that a model file's bytes depend only on the model: a
//! `HashMap`'s iteration order changes from run to run (its hasher is seeded per process), and a
//! model saved twice from the same state must be the same file (resume checks compare files).
//! The map reads back as any serde map does, so files written before load unchanged.

use serde::{Serialize, Serializer};
use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;

/// `serialize_with` for a `HashMap` field: its entries in ascending key order.
pub(crate) fn serialize<K, V, S>(map: &HashMap<K, V>, s: S) -> Result<S::Ok, S::Error>
where
    K: Serialize + Ord + Hash,
    V: Serialize,
    S: Serializer,
{
    s.collect_map(map.iter().collect::<BTreeMap<_, _>>())
}
