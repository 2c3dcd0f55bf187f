//! Helpers shared by the integration tests (each test file that needs them says `mod common;`).

use proptest::prelude::*;

/// Decimal texts of every shape the readers meet: an optional sign, up to 12 integer digits, an
/// optional fraction of up to 24 digits, an optional exponent in `exp` — around the limits of
/// the exact fast path (19 digits, 2^53, 22 fraction digits) and beyond (handed to the standard
/// parser), including texts that are not numbers (`""`, `"-"`, `"."`).
pub fn decimal_text(exp: std::ops::Range<i32>) -> impl Strategy<Value = String> {
    (
        prop_oneof![Just(""), Just("-"), Just("+")],
        "[0-9]{0,12}",
        proptest::option::of("[0-9]{0,24}"),
        proptest::option::of(exp),
    )
        .prop_map(|(sign, int, frac, exp)| {
            let mut v = format!("{sign}{int}");
            if let Some(f) = &frac {
                v.push('.');
                v.push_str(f);
            }
            if let Some(e) = exp {
                v.push_str(&format!("e{e}"));
            }
            v
        })
}
