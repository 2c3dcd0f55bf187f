//! Small random sparse rows for the refusal tests (`refused_rows.rs`, `fm_refusal.rs`).

use sketchlearn::Row;

/// `n` rows over `d` features (about half the features each), values in `[-1, 1]`, from a
/// fixed linear congruential generator seeded by `seed`; each row's label is
/// `label(values, u)` with `u` a fresh uniform draw in `[0, 1)`.
pub fn rows(
    n: usize,
    d: usize,
    seed: u64,
    label: impl Fn(&[f64], f64) -> f64,
) -> Vec<(Vec<u32>, Vec<f64>, f64)> {
    let mut state = seed | 1;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    (0..n)
        .map(|_| {
            let (mut i, mut v) = (Vec::new(), Vec::new());
            for j in 0..d as u32 {
                if next() < 0.5 {
                    i.push(j);
                    v.push(2.0 * next() - 1.0);
                }
            }
            let y = label(&v, next());
            (i, v, y)
        })
        .collect()
}

/// The sparse row of `indices` and `values`.
pub fn row<'a>(indices: &'a [u32], values: &'a [f64]) -> Row<'a> {
    Row::Sparse { indices, values }
}

/// After a refused row: `l` (which refused it) serialises to `bytes`, the state saved before
/// it, and on the rows `after` it predicts and learns exactly as `kept`, a copy taken before it
/// (predictions bit for bit; learning results, values or errors, alike).
pub fn unchanged_by_the_refusal<L>(
    l: &mut L,
    kept: &mut L,
    bytes: &[u8],
    after: &[(Vec<u32>, Vec<f64>, f64)],
    what: &str,
) -> Result<(), proptest::test_runner::TestCaseError>
where
    L: sketchlearn::linear::OnlineLearner + serde::Serialize,
{
    proptest::prop_assert!(
        postcard::to_allocvec(&*l).unwrap() == bytes,
        "{what}: the refused row changed the state"
    );
    for (t, (i, v, y)) in after.iter().enumerate() {
        let x = row(i, v);
        let (a, b) = (l.predict(x), kept.predict(x));
        proptest::prop_assert_eq!(a.to_bits(), b.to_bits(), "{}: next example {}", what, t);
        let (a, b) = (l.learn(x, *y, 1.0), kept.learn(x, *y, 1.0));
        proptest::prop_assert_eq!(
            format!("{a:?}"),
            format!("{b:?}"),
            "{}: next example {}",
            what,
            t
        );
    }
    Ok(())
}
