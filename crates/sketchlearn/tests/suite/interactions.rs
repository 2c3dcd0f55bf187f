//! VW's `-q ab` (data/interactions.rs): the crossed features of a parsed line are exactly the
//! ones written out from the definition — for each feature f of a namespace starting with `a`
//! and g of one starting with `b`, index `((h(f)·16777619) XOR h(g)) mod 2^bits`, value
//! `v(f)·v(g)` — added to the line's own features (colliding indices summed).

use proptest::prelude::*;
use sketchlearn::data::hashing::{hash_string, namespace_hash};
use sketchlearn::data::{Interactions, VwOptions, VwReader};
use sketchlearn::Example;
use std::collections::BTreeMap;
use std::io::Cursor;

fn parse(line: &str, bits: u32, q: &str) -> Example {
    let q: Interactions = q.parse().unwrap();
    let mut r = VwReader::new(Cursor::new(line.to_string()), "t.vw", VwOptions { bits })
        .unwrap()
        .with_interactions(q);
    let mut ex = Example::default();
    assert!(r.read_into(&mut ex).unwrap());
    ex
}

/// (namespace, feature name, value) of a generated line.
type Feature = (String, String, f64);

fn line(features: &[Feature]) -> String {
    let mut s = String::from("1");
    for (ns, name, v) in features {
        s.push_str(&format!(" |{ns} {name}:{v}"));
    }
    s
}

/// The features written out from the definition (pairs i ≤ j within one namespace letter).
fn explicit(features: &[Feature], bits: u32, pairs: &[[u8; 2]]) -> BTreeMap<u32, f64> {
    let mask = (1u64 << bits) - 1;
    let h = |(ns, name, _): &Feature| hash_string(name.as_bytes(), namespace_hash(ns.as_bytes()));
    let letter = |f: &Feature| f.0.as_bytes().first().copied().unwrap_or(b' ');
    let mut out = BTreeMap::new();
    for f in features {
        *out.entry((h(f) & mask) as u32).or_insert(0.0) += f.2;
    }
    for &[a, b] in pairs {
        for (i, f) in features.iter().enumerate() {
            for (j, g) in features.iter().enumerate() {
                if letter(f) == a && letter(g) == b && (a != b || j >= i) {
                    let index = ((h(f).wrapping_mul(16_777_619) ^ h(g)) & mask) as u32;
                    *out.entry(index).or_insert(0.0) += f.2 * g.2;
                }
            }
        }
    }
    out.retain(|_, v| *v != 0.0);
    out
}

fn features() -> impl Strategy<Value = Vec<Feature>> {
    prop::collection::vec(
        (
            prop::sample::select(vec!["a", "ab", "b", "c"]),
            "[a-z]{1,4}|[0-9]{1,3}",
            prop::sample::select(vec![0.5, 1.0, -2.0, 3.0]),
        )
            .prop_map(|(ns, name, v)| (ns.to_string(), name, v)),
        1..8,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn q_features_equal_the_explicitly_written_crosses(
        fs in features(),
        bits in prop::sample::select(vec![4u32, 10, 18]),
        q in prop::sample::select(vec!["ab", "aa", "ab,bc", "ca,cc"]),
    ) {
        let ex = parse(&line(&fs), bits, q);
        let pairs: Vec<[u8; 2]> = q.split(',').map(|p| [p.as_bytes()[0], p.as_bytes()[1]]).collect();
        let want = explicit(&fs, bits, &pairs);
        // Colliding features that cancel leave a stored 0 (as without -q): compare the non-zeros.
        let got: BTreeMap<u32, f64> = ex.indices.iter().copied().zip(ex.values.iter().copied())
            .filter(|(_, v)| *v != 0.0)
            .collect();
        prop_assert_eq!(got.keys().collect::<Vec<_>>(), want.keys().collect::<Vec<_>>(), "{:?} vs {:?}", got, want);
        for (k, v) in &want {
            prop_assert!((got[k] - v).abs() < 1e-12);
        }
    }
}

#[test]
fn no_interactions_change_nothing_and_bad_pairs_are_refused() {
    let text = "1 |a x:2 y |b z:0.5";
    let plain = {
        let mut r = VwReader::new(Cursor::new(text), "t.vw", VwOptions { bits: 18 }).unwrap();
        let mut ex = Example::default();
        r.read_into(&mut ex).unwrap();
        ex
    };
    let crossed = parse(text, 18, "ab");
    assert_eq!(plain.indices.len(), 3);
    assert_eq!(crossed.indices.len(), 5); // x·z and y·z
    assert!("a".parse::<Interactions>().is_err());
    assert!("a:".parse::<Interactions>().is_err());
}

/// Indices printed by Vowpal Wabbit 9.11.9 (`python -m vowpalwabbit -d q.vw --audit -q ab -q aa
/// -b 18` on the line below; the wheel of `/work/shared/peers/README.md`): the crosses hash as in
/// VW, so a VW user's `-q` model features mean the same here.
#[test]
fn q_indices_equal_vowpal_wabbit_audit() {
    let ex = parse("1 |a x:2 y |b z:0.5 7", 18, "ab,aa");
    let got: BTreeMap<u32, f64> = ex
        .indices
        .iter()
        .copied()
        .zip(ex.values.iter().copied())
        .collect();
    let vw = [
        (55432, 2.0),  // a^x
        (42847, 1.0),  // a^y
        (124687, 0.5), // b^z
        (163338, 1.0), // b^7
        (1680, 4.0),   // a^x*a^x
        (31047, 2.0),  // a^x*a^y
        (253394, 1.0), // a^y*a^y
        (80151, 1.0),  // a^x*b^z
        (172050, 2.0), // a^x*b^7
        (171394, 0.5), // a^y*b^z
        (66695, 1.0),  // a^y*b^7
    ];
    let want: BTreeMap<u32, f64> = vw.into_iter().collect();
    assert_eq!(got, want);
}
