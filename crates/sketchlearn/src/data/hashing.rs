//! Feature hashing as Vowpal Wabbit does it, so that the same VW text file hashes to the same
//! indices: MurmurHash3 (x86, 32-bit) of the feature name seeded with the namespace's hash,
//! masked to `bits` bits.
//!
//! * A namespace's hash is `hashstring(name, 0)`; the default namespace (`| f`, no name) has
//!   hash 0.
//! * `hashstring(s, seed)` is `s + seed` when `s` is all ASCII digits (VW's "integer feature
//!   names keep their value"), else `murmur3_x86_32(s, seed)`.
//! * The index is `hashstring(feature, namespace_hash) & (2^bits − 1)`.
//!
//! Known values measured with `vowpalwabbit` 9.11.9 (`Workspace.hash_space`/`hash_feature`, `--audit`)
//! are in the tests.

use murmur3::murmur3_32;

/// MurmurHash3_x86_32 of `bytes` with `seed`.
///
/// ```
/// use sketchlearn::data::hashing::murmur3_x86_32;
/// assert_eq!(murmur3_x86_32(b"", 0), 0);
/// assert_eq!(murmur3_x86_32(b"a", 0), 1009084850); // VW's hash of namespace "a"
/// ```
pub fn murmur3_x86_32(bytes: &[u8], seed: u32) -> u32 {
    let mut src = bytes;
    // Reading from a byte slice cannot fail.
    murmur3_32(&mut src, seed).unwrap_or(0)
}

/// VW's `hashstring`: integers keep their value (plus the seed), other names are hashed.
/// Returned as 64 bits (VW adds in `size_t`); callers mask.
pub fn hash_string(s: &[u8], seed: u32) -> u64 {
    if !s.is_empty() && s.len() <= 19 && s.iter().all(u8::is_ascii_digit) {
        let v = s
            .iter()
            .fold(0u64, |acc, &c| acc * 10 + u64::from(c - b'0'));
        v.wrapping_add(u64::from(seed))
    } else {
        u64::from(murmur3_x86_32(s, seed))
    }
}

/// The hash of a namespace name (0 for the default namespace, written `| f` with no name).
pub fn namespace_hash(name: &[u8]) -> u32 {
    if name.is_empty() {
        0
    } else {
        hash_string(name, 0) as u32
    }
}

/// Hashed index of `feature` in the namespace with hash `ns_hash`, with `bits` bits (1..=32).
///
/// ```
/// use sketchlearn::data::hashing::{feature_index, namespace_hash};
/// // `vw --audit -b 18` shows `a^price:29466`.
/// assert_eq!(feature_index(b"price", namespace_hash(b"a"), 18), 29466);
/// ```
pub fn feature_index(feature: &[u8], ns_hash: u32, bits: u32) -> u32 {
    let mask = if bits >= 32 {
        u64::from(u32::MAX)
    } else {
        (1u64 << bits) - 1
    };
    (hash_string(feature, ns_hash) & mask) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values printed by vowpalwabbit 9.11.9: `Workspace("-b 18").hash_space(ns)` and
    /// `hash_feature(name, ns_hash)`, and `--audit` lines.
    #[test]
    fn matches_vowpal_wabbit() {
        assert_eq!(namespace_hash(b"ns"), 3567900184);
        assert_eq!(namespace_hash(b"a"), 1009084850);
        assert_eq!(namespace_hash(b"features"), 2493003127);
        assert_eq!(namespace_hash(b"f"), 728008763);
        assert_eq!(namespace_hash(b""), 0);
        let cases: [(&[u8], &[u8], u32); 16] = [
            (b"", b"price", 229902),
            (b"", b"3", 3),
            (b"", b"17", 17),
            (b"", b"word", 185504),
            (b"", b"x_1", 22492),
            (b"", b"hello", 260679),
            (b"a", b"price", 29466),
            (b"a", b"3", 92597),
            (b"a", b"17", 92611),
            (b"a", b"word", 6861),
            (b"features", b"price", 102639),
            (b"features", b"word", 159071),
            (b"features", b"x_1", 190778),
            (b"features", b"hello", 26543),
            (b"f", b"3", 34878),
            (b"f", b"hello", 145607),
        ];
        for (ns, name, want) in cases {
            assert_eq!(
                feature_index(name, namespace_hash(ns), 18),
                want,
                "{}^{}",
                String::from_utf8_lossy(ns),
                String::from_utf8_lossy(name)
            );
        }
    }
}
