//! Helpers shared by the integration tests (each test file that needs them says `mod common;`).

use proptest::prelude::*;

/// Decimal texts of every shape the readers meet: an optional sign, up to 12 integer digits, an
/// optional fraction of up to 24 digits, an optional exponent in `exp` — around the limits of
/// the exact fast path (19 digits, 2^53, 22 fraction digits) and beyond (handed to the standard
/// parser), including texts that are not numbers (`""`, `"-"`, `"."`).
#[allow(dead_code)] // not every test file that says `mod common;` parses decimals
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

/// A random sparse row: `nnz` (at most `d`) distinct sorted indices below `d`, values uniform in
/// [−1, 1], or all 1 when `one_hot`.
#[allow(dead_code)] // not every test file that says `mod common;` draws rows
pub fn random_sparse_row(
    rng: &mut rand_xoshiro::Xoshiro256PlusPlus,
    d: usize,
    nnz: usize,
    one_hot: bool,
) -> (Vec<u32>, Vec<f64>) {
    use rand::Rng;
    let mut idx: Vec<u32> = Vec::new();
    while idx.len() < nnz.min(d) {
        let j = rng.random_range(0..d as u32);
        if !idx.contains(&j) {
            idx.push(j);
        }
    }
    idx.sort_unstable();
    let val = idx
        .iter()
        .map(|_| {
            if one_hot {
                1.0
            } else {
                rng.random_range(-1.0..1.0)
            }
        })
        .collect();
    (idx, val)
}
