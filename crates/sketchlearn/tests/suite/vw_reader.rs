//! VW text format: hashing identical to Vowpal Wabbit, errors with line and column, no panics.

use crate::common;

use proptest::prelude::*;
use sketchlearn::data::{ParseErrorKind, VwOptions, VwReader};
use sketchlearn::Example;
use std::io::Cursor;

fn read_all(text: &str, bits: u32) -> Vec<Result<Example, sketchlearn::ParseError>> {
    VwReader::new(Cursor::new(text.to_string()), "t.vw", VwOptions { bits })
        .unwrap()
        .collect()
}

/// (label, importance, (index, value) pairs) of one example.
type Expected = (f64, f64, Vec<(u32, f64)>);

/// Lines and the indices `vw -b 18 --audit` (9.11.9) printed for them (Constant left out).
#[test]
fn indices_match_vw_audit() {
    let text = "1 2.0 |a price:2 3\n-1 |features word x_1:0.5 |f hello\n1 | 17 word\n";
    let got = read_all(text, 18);
    let want: [Expected; 3] = [
        (1.0, 2.0, vec![(29466, 2.0), (92597, 1.0)]),
        (-1.0, 1.0, vec![(145607, 1.0), (159071, 1.0), (190778, 0.5)]),
        (1.0, 1.0, vec![(17, 1.0), (185504, 1.0)]),
    ];
    for (ex, (label, weight, feats)) in got.into_iter().zip(want) {
        let ex = ex.unwrap();
        assert_eq!((ex.label, ex.weight), (label, weight));
        let pairs: Vec<(u32, f64)> = ex.indices.into_iter().zip(ex.values).collect();
        assert_eq!(pairs, feats);
    }
}

/// Tokens with a `:` in the value: VW 9 splits at the first `:`, and a value that does not start
/// like a number is a string value, hashed by chain at value 1 (unscaled by `|ns:2`). The
/// indices are those `vw -b 18 --audit` (9.11.9) printed (`ns^c^d:4:68951:1`). Before, the
/// last `:` split `c:d:4` into `c:d` at 4, and `url:http://x.com` was an error.
#[test]
fn string_values_split_at_the_first_colon_as_vw() {
    let text =
        "1 2.0 'tag1|ns:2.0 a b:3 c:d:4\n-1 0.5 |f url:http://x.com\n1 |f a:b:3\n1 |f:2 x:abc\n";
    let got = read_all(text, 18);
    let want: [Expected; 4] = [
        (1.0, 2.0, vec![(50664, 6.0), (68951, 1.0), (180474, 2.0)]),
        (-1.0, 0.5, vec![(251896, 1.0)]),
        (1.0, 1.0, vec![(28970, 1.0)]),
        (1.0, 1.0, vec![(164061, 1.0)]),
    ];
    for (ex, (label, weight, feats)) in got.into_iter().zip(want) {
        let ex = ex.unwrap();
        assert_eq!((ex.label, ex.weight), (label, weight));
        let pairs: Vec<(u32, f64)> = ex.indices.into_iter().zip(ex.values).collect();
        assert_eq!(pairs, feats);
    }
}

#[test]
fn namespace_scale_collisions_tags_and_blank_lines() {
    // `|a:3` scales values; the same feature twice adds up; a tag is ignored; blank lines skip.
    let text = "\n1 'tag |a:3 price:2 price\n\n-1 0.5 'x | 5:2 5:1\n";
    let got: Vec<Example> = read_all(text, 18).into_iter().map(Result::unwrap).collect();
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].indices, vec![29466]);
    assert_eq!(got[0].values, vec![9.0]);
    assert_eq!((got[1].label, got[1].weight), (-1.0, 0.5));
    assert_eq!(got[1].indices, vec![5]);
    assert_eq!(got[1].values, vec![3.0]);
    // Fewer bits: the same features masked to 4 bits.
    let small: Vec<Example> = read_all("1 | 17 word\n", 4)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(small[0].indices, vec![0, 1]); // 185504 & 15 = 0, 17 & 15 = 1
}

#[test]
fn malformed_lines_name_line_and_column() {
    let cases: [(&str, ParseErrorKind, usize); 11] = [
        ("| a b", ParseErrorKind::MissingLabel, 1),
        ("x | a", ParseErrorKind::UnparsableLabel("x".into()), 1),
        ("nan | a", ParseErrorKind::NonFiniteValue("nan".into()), 1),
        (
            "1 | a:12abc",
            ParseErrorKind::UnparsableValue("12abc".into()),
            7,
        ),
        ("1 | a:inf", ParseErrorKind::NonFiniteValue("inf".into()), 7),
        ("1 -2 | a", ParseErrorKind::NegativeWeight("-2".into()), 3),
        // An importance weight of inf/nan was read as a tag (weight 1) before.
        (
            "1 inf |a x",
            ParseErrorKind::NonFiniteValue("inf".into()),
            3,
        ),
        (
            "1  nan |a x",
            ParseErrorKind::NonFiniteValue("nan".into()),
            4,
        ),
        (
            "-1 1e999 'tag |a x",
            ParseErrorKind::NonFiniteValue("1e999".into()),
            4,
        ),
        (
            "1 -inf |a x",
            ParseErrorKind::NonFiniteValue("-inf".into()),
            3,
        ),
        ("1 | :3", ParseErrorKind::EmptyFeatureName(":3".into()), 5),
    ];
    for (line, kind, col) in cases {
        let text = format!("1 | ok\n\n{line}\n-1 | fine\n");
        let got = read_all(&text, 18);
        assert!(got[0].is_ok());
        let err = got[1].as_ref().unwrap_err();
        assert_eq!(err.kind, kind, "{line}");
        assert_eq!(err.line, 3, "{line}");
        assert_eq!(err.column, col, "{line}");
        assert!(got[2].is_ok(), "reading goes on after an error");
    }
    // Weight 0 (VW: predict, do not learn) and a quoted tag spelled like a number are fine.
    let ok = read_all("1 0 |a x\n1 'nan |a x\n1 -0 |a x\n", 18);
    let weights: Vec<f64> = ok.iter().map(|e| e.as_ref().unwrap().weight).collect();
    assert_eq!(weights, [0.0, 1.0, 0.0]);
    assert!(VwReader::new(Cursor::new(""), "x", VwOptions { bits: 0 }).is_err());
    assert!(VwReader::new(Cursor::new(""), "x", VwOptions { bits: 33 }).is_err());
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300), bits in 1u32..=32) {
        let mut r = VwReader::new(Cursor::new(bytes), "fuzz", VwOptions { bits }).unwrap();
        let mut ex = Example::default();
        for _ in 0..100 {
            match r.read_into(&mut ex) {
                Ok(true) => {
                    prop_assert!(ex.indices.windows(2).all(|w| w[0] < w[1]));
                    prop_assert!(ex.values.iter().all(|v| v.is_finite()));
                    prop_assert!(ex.indices.iter().all(|&i| bits == 32 || (i as u64) < (1u64 << bits)));
                }
                Ok(false) => break,
                Err(_) => {}
            }
        }
    }

    #[test]
    fn integer_names_in_default_namespace_are_their_value(feats in proptest::collection::btree_map(0u32..100_000, -5.0f64..5.0, 0..20)) {
        let body: Vec<String> = feats.iter().filter(|(_, v)| **v != 0.0).map(|(i, v)| format!("{i}:{v}")).collect();
        let text = format!("1 | {}\n", body.join(" "));
        let ex = read_all(&text, 18).remove(0).unwrap();
        let want: Vec<u32> = feats.iter().filter(|(_, v)| **v != 0.0).map(|(i, _)| *i).collect();
        prop_assert_eq!(ex.indices, want);
    }
}

proptest! {
    /// VW values, labels and importance weights go through the same decimal parser as LIBSVM
    /// (Clinger's fast path, else the standard library): the very double `f64::from_str`
    /// returns, non-finite values rejected.
    #[test]
    fn decimal_values_parse_like_the_standard_library(v in common::decimal_text(-30..320)) {
        let want = v.parse::<f64>().ok();
        let ok = matches!(want, Some(x) if x.is_finite());
        // As a feature value (an integer name in the default namespace is its own index).
        let got = read_all(&format!("1 | 3:{v}\n"), 18);
        match (&got[..], want) {
            ([Ok(e)], Some(x)) if ok => {
                if x == 0.0 {
                    prop_assert!(e.values.is_empty(), "{}", v);
                } else {
                    prop_assert_eq!(e.values[0].to_bits(), x.to_bits(), "{}", v);
                }
            }
            _ => prop_assert!(!ok && got.iter().any(Result::is_err), "{} ({:?})", v, got),
        }
        // As the label and the importance weight (an empty one would just be absent).
        if v.is_empty() {
            return Ok(());
        }
        let got = read_all(&format!("{v} 2 | a\n1 {v} | a\n"), 18);
        if ok {
            let x = want.unwrap();
            let label = got[0].as_ref().map(|e| e.label.to_bits());
            prop_assert_eq!(label.ok(), Some(x.to_bits()), "{}", v);
            if x >= 0.0 {
                let w = got[1].as_ref().map(|e| e.weight.to_bits());
                prop_assert_eq!(w.ok(), Some(x.to_bits()), "{}", v);
            }
        } else {
            prop_assert!(got[0].is_err(), "{} as a label", v);
        }
    }
}

/// Gives one line, then fails on every read.
struct FailsAfterOneLine(bool);

impl std::io::Read for FailsAfterOneLine {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if std::mem::replace(&mut self.0, true) {
            return Err(std::io::Error::other("disk on fire"));
        }
        out[..7].copy_from_slice(b"1 |a x\n");
        Ok(7)
    }
}

#[test]
fn an_io_error_ends_the_stream() {
    let input = std::io::BufReader::new(FailsAfterOneLine(false));
    let got: Vec<_> = VwReader::new(input, "t.vw", VwOptions::default())
        .unwrap()
        .collect();
    assert_eq!(got.len(), 2, "{got:?}");
    let err = got[1].as_ref().unwrap_err();
    assert!(matches!(err.kind, ParseErrorKind::Io(_)), "{err}");
}
