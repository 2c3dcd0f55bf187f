//! The readers' number parsing (`data/decimal.rs`: Clinger's fast path in place, `fast-float2`
//! for the rest) against `str::parse::<f64>`: the same text accepted, the same bits, on random
//! decimal text with signs, points, exponents, `inf`/`infinity`/`nan` in any case, and junk;
//! and through the LIBSVM, VW and CSV readers, the same value or the same kind of error.

use proptest::prelude::*;
use sketchlearn::data::{parse_f64, CsvReader, LibsvmReader, ParseErrorKind, VwOptions, VwReader};
use sketchlearn::Example;
use std::io::Cursor;

fn std_parse(text: &str) -> Option<f64> {
    text.parse::<f64>().ok()
}

fn same(a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (Some(x), Some(y)) => x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
        (None, None) => true,
        _ => false,
    }
}

/// Decimal-looking text: sign, digits, point, digits, exponent — each part optional, so
/// `"."`, `"-e5"`, `"1e"` and `"+.5E-0"` all come up.
fn decimal_text() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec!["", "-", "+", "--", "+-"]),
        "[0-9]{0,25}",
        prop::option::of(Just(".")),
        "[0-9]{0,25}",
        prop::option::of((
            prop::sample::select(vec!["e", "E"]),
            prop::sample::select(vec!["", "-", "+"]),
            "[0-9]{0,4}",
        )),
    )
        .prop_map(|(sign, int, dot, frac, exp)| {
            let mut s = format!("{sign}{int}{}{frac}", dot.unwrap_or(""));
            if let Some((e, es, ed)) = exp {
                s.push_str(&format!("{e}{es}{ed}"));
            }
            s
        })
}

/// `inf`, `infinity` and `nan` in random case, with a sign and sometimes a tail.
fn special_text() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec!["", "-", "+"]),
        prop::sample::select(vec!["inf", "infinity", "nan", "infin", "na", "nan(1)"]),
        prop::collection::vec(any::<bool>(), 8),
        prop::sample::select(vec!["", "x", "0", " "]),
    )
        .prop_map(|(sign, word, upper, tail)| {
            let word: String = word
                .chars()
                .zip(upper.iter().cycle())
                .map(|(c, &u)| if u { c.to_ascii_uppercase() } else { c })
                .collect();
            format!("{sign}{word}{tail}")
        })
}

/// VW 9's rule for a feature's value that is not a number (`data/vw.rs`): it is a string value
/// when it neither starts like a number (a digit, sign or point) nor is made of a number's
/// characters only (`e5` is a mistyped number, an error).
fn vw_string_value(text: &str) -> bool {
    let number_like = |c: char| c.is_ascii_digit() || "+-.eE".contains(c);
    !text.starts_with(|c: char| c.is_ascii_digit() || "+-.".contains(c))
        && !text.chars().all(number_like)
}

fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![
        decimal_text(),
        special_text(),
        "[0-9.eE+\\-infatyINFATY_x ]{0,14}",
        any::<f64>().prop_map(|x| format!("{x}")),
        any::<f64>().prop_map(|x| format!("{x:e}")),
        (any::<f32>(), 0usize..9).prop_map(|(x, p)| format!("{x:.p$}")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    /// The parse equals `str::parse::<f64>`: accepted or not, and the same bits.
    #[test]
    fn parse_equals_the_standard_parse(text in any_text()) {
        let ours = parse_f64(text.as_bytes());
        prop_assert!(same(ours, std_parse(&text)), "{text:?}: {ours:?} vs {:?}", std_parse(&text));
    }

    /// Through each reader: a finite number is read with the standard parse's bits, `inf`,
    /// `nan` and overflow are a non-finite error, anything else an unparsable one — except in
    /// VW text, where a value that does not start like a number is VW 9's string value.
    #[test]
    fn readers_read_what_the_standard_parse_reads(text in any_text()) {
        prop_assume!(!text.is_empty() && !text.contains([' ', ':', '|', ',', '#']));
        let want = std_parse(&text);
        let check = |got: Result<f64, ParseErrorKind>| -> Result<(), TestCaseError> {
            match (want, got) {
                (Some(x), Ok(v)) if x.is_finite() => prop_assert_eq!(v.to_bits(), x.to_bits()),
                (Some(_), Err(ParseErrorKind::NonFiniteValue(_))) => {}
                (None, Err(ParseErrorKind::UnparsableValue(_))) => {}
                (w, g) => prop_assert!(false, "{text:?}: standard {w:?}, reader {g:?}"),
            }
            Ok(())
        };
        let line = format!("1 3:{text}\n");
        let mut r = LibsvmReader::new(Cursor::new(line), "t", Default::default());
        let mut ex = Example::default();
        check(r.read_into(&mut ex).map(|_| ex.values[0]).map_err(|e| e.kind))?;
        let line = format!("1 |f a:{text}\n");
        let mut r = VwReader::new(Cursor::new(line), "t", VwOptions::default()).unwrap();
        let got = r.read_into(&mut ex).map(|_| ex.values.first().copied().unwrap_or(0.0)).map_err(|e| e.kind);
        if want.is_none() && vw_string_value(&text) {
            // VW 9: text that does not start like a number is a string value (`a^infx`) of value 1.
            prop_assert!(matches!(got, Ok(v) if v == 1.0), "{text:?}: VW string value, reader {got:?}");
        } else {
            check(got).or_else(|e| if want == Some(0.0) { Ok(()) } else { Err(e) })?; // VW drops zeros
        }
        let csv = format!("1,{text}\n");
        let mut r = CsvReader::new(Cursor::new(csv), "t", sketchlearn::data::CsvOptions { has_header: Some(false), ..Default::default() });
        let mut row = Vec::new();
        check(r.read_into(&mut row).map(|_| row[1]).map_err(|e| e.kind))?;
    }

    /// A dense LIBSVM row of plain decimals (the fast path) reads the standard parse's bits,
    /// as written with any number of digits.
    #[test]
    fn plain_rows_read_the_standard_bits(
        values in prop::collection::vec((any::<f64>(), 0usize..20), 1..40),
        label in -3i32..3,
    ) {
        let texts: Vec<String> = values.iter().map(|(x, p)| format!("{:.p$}", x.clamp(-1e6, 1e6))).collect();
        let mut line = format!("{label}");
        for (j, t) in texts.iter().enumerate() {
            line.push_str(&format!(" {}:{t}", j + 1));
        }
        line.push('\n');
        let mut r = LibsvmReader::new(Cursor::new(line), "t", Default::default());
        let mut ex = Example::default();
        prop_assert!(r.read_into(&mut ex).unwrap());
        prop_assert_eq!(ex.label, f64::from(label));
        for (v, t) in ex.values.iter().zip(&texts) {
            prop_assert_eq!(v.to_bits(), t.parse::<f64>().unwrap().to_bits(), "{}", t);
        }
    }
}
