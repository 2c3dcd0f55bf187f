//! The default learner and per-feature scales (issue 28, item 2): every member of the default
//! classification mixture learns features brought to unit scale (`linear/unit_scaling.rs`:
//! above unit scale, a measurement is standardised, `(x_i − μ_i)/σ_i`, any other feature divided
//! by its running RMS `r_i`; below it, a measurement of a table of measurements whose values
//! never reach 1/4 is standardised too).
//!
//! * Features already at unit scale are learned bit for bit as without the wrapper (so the 12
//!   shared sets, whose values are all within `[−1, 1]`, keep their results).
//! * Features above unit scale: their scale does not matter, `(c·x_i − c·μ_i)/(c·σ_i)` and
//!   `c·x_i/(c·r_i)` are what the unscaled feature gives (same predictions up to rounding,
//!   property test over the per-feature scales).
//! * The property on `data/heart.libsvm`: every feature multiplied by `10^k_i`,
//!   `k_i ∈ −4..4` drawn with a fixed seed, gives the same progressive error within one binomial
//!   standard error or better (0.2000 unscaled; 0.2000, 0.1926, 0.1926, 0.1889, 0.1926, 0.1741 for
//!   seeds 0–5, the last 1.06 s.e. better; before scaled-down measurements were standardised 0.2704, 0.2000, 0.2630, 0.2333,
//!   0.2111, 0.1778), and so do `k_i ∈ −4..−1` (0.2000, 0.2037, 0.2000, 0.1926, 0.2037, 0.2000;
//!   before, 0.2852 to 0.3074) and `k_i ∈ 0..4`. Not exact: a feature moved off unit scale is
//!   standardised while the original was not, and a scaled-down one is learned as it is for its
//!   first ten values.

use crate::common;

use common::progressive_error;
use proptest::prelude::*;
use sketchlearn::linear::{AnyLearner, LearnerConfig, Mixture, OnlineLearner};
use sketchlearn::{Example, LibsvmOptions, LibsvmReader, Row};

const D: usize = 13;

fn heart() -> Vec<Example> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/heart.libsvm");
    let mut r = LibsvmReader::open(path, LibsvmOptions::default()).unwrap();
    let mut ex = Example::default();
    let mut out = Vec::new();
    while r.read_into(&mut ex).unwrap() {
        out.push(ex.clone());
    }
    out
}

/// One progressive pass of `learner` with feature `i` multiplied by `scale[i]`: the scores.
fn scores(mut learner: AnyLearner, data: &[Example], scale: &[f64]) -> Vec<f64> {
    data.iter()
        .map(|ex| {
            let values: Vec<f64> = ex
                .indices
                .iter()
                .zip(&ex.values)
                .map(|(&i, v)| v * scale[i as usize])
                .collect();
            let x = Row::Sparse {
                indices: &ex.indices,
                values: &values,
            };
            learner.learn(x, ex.label, 1.0).unwrap()
        })
        .collect()
}

fn default_scores(data: &[Example], scale: &[f64]) -> Vec<f64> {
    scores(LearnerConfig::default().build(D).unwrap(), data, scale)
}

/// Per-feature powers of ten `10^k`, `k` uniform in `lo..=hi`, from a fixed 64-bit LCG.
fn powers_of_ten(seed: u64, lo: i32, hi: i32) -> Vec<f64> {
    let mut s = seed;
    (0..D)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let k = lo + ((s >> 33) % (hi - lo + 1) as u64) as i32;
            10f64.powi(k)
        })
        .collect()
}

/// The default's members without the unit-scaling wrapper, mixed as the default mixes them.
fn unwrapped_default() -> AnyLearner {
    let config = LearnerConfig::default();
    let members = config
        .auto_members()
        .iter()
        .map(|m| m.check().unwrap().build_unscaled(D).unwrap())
        .collect();
    let mut mixture = Mixture::new(members, config.loss, config.mix_rule(), 1.0).unwrap();
    mixture.set_calibrated_output(true); // as the default's (`linear/mixture_output.rs`)
    AnyLearner::Mixture(mixture)
}

#[test]
fn unit_scale_features_are_learned_bit_for_bit_as_without_the_wrapper() {
    let data = heart();
    assert!(data.iter().all(|e| e.values.iter().all(|v| v.abs() <= 1.0)));
    let plain = unwrapped_default();
    let ones = vec![1.0; D];
    let (a, b) = (default_scores(&data, &ones), scores(plain, &data, &ones));
    assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()));
    assert_eq!(progressive_error(&data, &a), 0.2); // README's number
}

#[test]
fn the_progressive_error_is_within_one_standard_error_under_per_feature_powers_of_ten() {
    let data = heart();
    let base = progressive_error(&data, &default_scores(&data, &[1.0; D]));
    let se = (base * (1.0 - base) / data.len() as f64).sqrt();
    // Two-sided, except that with k in −4..4 seed 5 is 1.06 s.e. *better* (0.1741): 12 of its 13
    // features are moved off unit scale and standardised, and heart with every feature
    // standardised gives 0.1852; there only "not worse" is asserted.
    for (lo, hi, better) in [(-4, 4, f64::INFINITY), (-4, -1, se), (0, 4, se)] {
        for seed in 0..6 {
            let scale = powers_of_ten(seed, lo, hi);
            let e = progressive_error(&data, &default_scores(&data, &scale));
            assert!(
                e - base <= se && base - e <= better,
                "seed {seed}: error {e} vs {base} (s.e. {se}) with scales {scale:?}"
            );
        }
    }
    // Without the wrapper the same rescalings cost far more than one standard error (the
    // property is not vacuous): every feature multiplied by 10^k, k in 1..4, or in −4..−1 —
    // with the raw mixture output: the calibrated one absorbs part of the damage (k in 1..4:
    // 0.2074 against 0.2, within one s.e.), though the members learn the same bits.
    for (lo, hi) in [(1, 4), (-4, -1)] {
        let mut plain = unwrapped_default();
        plain.set_calibrated_output(false);
        let e = progressive_error(&data, &scores(plain, &data, &powers_of_ten(1, lo, hi)));
        assert!(e > base + se, "unwrapped, k in {lo}..{hi}: {e} vs {base}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

    /// Above unit scale a feature's scale does not matter: heart's features (non-zero RMS at
    /// least 0.01) multiplied by `10^k`, `k ∈ 2..4` per feature, give the same scores up to
    /// rounding whatever the `k`s.
    #[test]
    fn scales_above_unit_scale_do_not_change_the_scores(
        k in proptest::collection::vec(2i32..=4, D),
    ) {
        let data = heart();
        let scale: Vec<f64> = k.iter().map(|&k| 10f64.powi(k)).collect();
        let a = default_scores(&data, &scale);
        let b = default_scores(&data, &[100.0; D]);
        for (t, (x, y)) in a.iter().zip(&b).enumerate() {
            prop_assert!((x - y).abs() <= 1e-8 * (1.0 + y.abs()), "example {t}: {x} vs {y}");
        }
    }
}
