use super::*;
use proptest::prelude::*;
use std::collections::BTreeMap;

/// A store and its delta's wire bytes, written with [`diff`].
struct Written<'a> {
    now: &'a [(u64, f64)],
    base: &'a [(u64, f64)],
}

fn same(a: &f64, b: &f64) -> bool {
    a.to_bits() == b.to_bits()
}

impl Serialize for Written<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        diff(|| self.now.iter().copied(), self.base, same, s)
    }
}

/// The store rebuilt from `bytes` against `base`.
fn patched(bytes: &[u8], base: &[(u64, f64)]) -> Result<Vec<(u64, f64)>, postcard::Error> {
    struct Seed<'a>(&'a [(u64, f64)]);
    impl<'de> DeserializeSeed<'de> for Seed<'_> {
        type Value = Vec<(u64, f64)>;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            let mut out = Vec::new();
            patch(d, self.0, &mut out)?;
            Ok(out)
        }
    }
    let mut de = postcard::Deserializer::from_bytes(bytes);
    let out = Seed(base).deserialize(&mut de)?;
    if !de.finalize()?.is_empty() {
        return Err(postcard::Error::SerdeDeCustom);
    }
    Ok(out)
}

fn bits(v: &[(u64, f64)]) -> Vec<(u64, u64)> {
    v.iter().map(|&(k, x)| (k, x.to_bits())).collect()
}

/// A sorted store from a map of keys (values as bit patterns, so `−0.0` and NaNs too).
fn store(m: &BTreeMap<u64, u64>) -> Vec<(u64, f64)> {
    m.iter().map(|(&k, &b)| (k, f64::from_bits(b))).collect()
}

/// A store and a base.
type Pair = (Vec<(u64, f64)>, Vec<(u64, f64)>);

fn stores() -> impl Strategy<Value = Pair> {
    let keys = prop_oneof![
        0u64..64,
        0u64..4,
        Just(u64::MAX),
        Just(u64::MAX - 1),
        1u64 << 40..(1u64 << 40) + 8
    ];
    let value = prop_oneof![Just(0u64), Just(1u64 << 63), any::<u64>(), 0u64..3];
    let map = prop::collection::btree_map(keys, value, 0..40);
    (map.clone(), map).prop_map(|(a, b)| (store(&a), store(&b)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Any store comes back bit for bit from its delta against any base (keys up to `u64::MAX`,
    /// entries equal, changed, new and removed), and the delta holds only what differs.
    #[test]
    fn a_store_is_rebuilt_exactly_from_its_delta((now, base) in stores()) {
        let bytes = postcard::to_allocvec(&Written { now: &now, base: &base }).unwrap();
        prop_assert_eq!(bits(&patched(&bytes, &base).unwrap()), bits(&now));
        let same_again = postcard::to_allocvec(&Written { now: &now, base: &now }).unwrap();
        prop_assert_eq!(same_again, vec![0u8, 0]); // nothing removed, nothing changed
    }

    /// A truncated delta, or one with a byte changed, is an error or (if still well formed)
    /// some store — never a panic.
    #[test]
    fn damaged_deltas_are_errors_not_panics((now, base) in stores(), at in any::<prop::sample::Index>(), byte in any::<u8>()) {
        let bytes = postcard::to_allocvec(&Written { now: &now, base: &base }).unwrap();
        let cut = at.index(bytes.len());
        prop_assert!(patched(&bytes[..cut], &base).is_err());
        let mut bad = bytes.clone();
        bad[cut] = byte;
        let _ = patched(&bad, &base);
    }
}

/// The wire form: removed keys, then `(gap, value)` with gaps from the previous key plus one.
#[test]
fn changed_keys_are_gap_coded() {
    let base = [(3, 1.0), (5, 2.0), (9, 3.0)];
    let now = [(2, 7.0), (3, 1.0), (4, 8.0), (9, -3.0), (1000, 0.5)];
    let bytes = postcard::to_allocvec(&Written {
        now: &now,
        base: &base,
    })
    .unwrap();
    let want = postcard::to_allocvec(&(
        vec![5u64],
        vec![(2u64, 7.0f64), (1, 8.0), (4, -3.0), (990, 0.5)],
    ))
    .unwrap();
    assert_eq!(bytes, want);
    assert_eq!(bits(&patched(&bytes, &base).unwrap()), bits(&now));
}

/// A delta that does not fit its base: a removed key the base lacks (below, between and above
/// its keys), removed keys not increasing, a key past `u64::MAX`.
#[test]
fn a_delta_for_another_base_is_refused() {
    let base = [(3u64, 1.0f64), (5, 2.0)];
    let wire = |removed: Vec<u64>, changed: Vec<(u64, f64)>| {
        postcard::to_allocvec(&(removed, changed)).unwrap()
    };
    for bad in [
        wire(vec![1], vec![]),
        wire(vec![4], vec![(0, 1.0)]),
        wire(vec![4], vec![(6, 1.0)]),
        wire(vec![7], vec![]),
        wire(vec![5, 3], vec![]),
        wire(vec![], vec![(u64::MAX, 1.0), (0, 2.0)]),
    ] {
        let err = patched(&bad, &base).unwrap_err();
        assert!(matches!(err, postcard::Error::SerdeDeCustom), "{err:?}");
    }
    // A key removed and changed at once (never written): the changed entry stands.
    let both = patched(&wire(vec![3], vec![(3, 9.0)]), &base).unwrap();
    assert_eq!(bits(&both), bits(&[(3, 9.0), (5, 2.0)]));
}

/// A store whose keys do not increase is an encoding error, not a wrong delta.
#[test]
fn keys_not_increasing_are_an_encoding_error() {
    let now = [(4u64, 1.0f64), (2, 2.0)];
    assert!(postcard::to_allocvec(&Written {
        now: &now,
        base: &[]
    })
    .is_err());
}
