//! Features brought down to unit scale: the wrapped learner sees `x_i / s_i` with
//! `s_i = max(1, r_i)` and `r_i` the running root mean square of feature `i`'s non-zero values,
//! `r_i² = Σ_{s≤t, x_{s,i}≠0} x_{s,i}² / n_i` (`n_i` the number of examples where feature `i` was
//! non-zero so far, the current one included; no label is used, so progressive validation stays
//! honest). Every member of the default classification mixture
//! ([`LearnerConfig::auto_members`](super::LearnerConfig::auto_members)) is wrapped in it.
//!
//! **Why.** The members' `α`, `α₀` and `η` count in the units of the features
//! ([`MEMBER_ALPHA0_SCALE`](super::MEMBER_ALPHA0_SCALE)) and were chosen on features at unit scale
//! (`[−1, 1]`, 0/1 dummies, tf-idf). On files as distributed a feature in the hundreds
//! (cholesterol in mg/dl beside a 0/1 sex column) fills SON's curvature
//! `A = αI + Σ c·g gᵀ` (Luo et al. 2016, Alg. 1) alone and the unit-scale features keep the step
//! `g/α` that was tuned for them against rows a thousand times larger; AdaGrad's step `η` is
//! scale-free per coordinate, so a weight that must be `10⁻³` moves by `η` (Duchi et al. 2011).
//! Dividing such a feature by `r_i` puts it back at unit scale.
//!
//! **Invariance.** Let feature `i` be multiplied by `c > 0`. Then `r_i ↦ c·r_i`, and as long as
//! the feature is above unit scale before and after (`r_i ≥ 1` and `c·r_i ≥ 1`) the learner sees
//! `c·x_i / (c·r_i) = x_i / r_i`: the same stream, so the same predictions up to rounding
//! (`tests/default_scale_invariance.rs`). Features at or below unit scale are left as they are,
//! which is the limit of the invariance: a feature divided by `10⁴` is not scaled back up. This is
//! on purpose. Dividing *every* feature by its RMS (Vowpal Wabbit's `--normalized` idea, Ross,
//! Mineiro & Langford, *Normalized Online Learning*, UAI 2013, with the RMS instead of the
//! maximum: [`FeatureScaling`](super::FeatureScaling)) makes the default invariant in both
//! directions, but the scale of a unit-scale feature carries information the defaults use: on
//! the shared sets it cost splice 0.2150 → 0.2340, spam.shuf 0.0798 → 0.0863 and r8 0.0184 →
//! 0.0233 (one pass, progressive error; rare words' small tf-idf weights become as loud as
//! frequent ones'), more than one standard error each (measured while choosing this design
//! with a scratch harness that was not kept; the alternatives are listed in
//! `docs/results/raw_scales.md`). With `s_i = max(1, r_i)` every feature of
//! those sets keeps its values exactly (their non-zero values are at most 1 in absolute value),
//! so the default learns them bit for bit as before, while on the raw files it closes most of the
//! gap to their scaled twins (`docs/results/raw_scales.md`).
//!
//! Like [`FeatureScaling`](super::FeatureScaling) (and unlike NAG) the weights are not corrected
//! when `s_i` changes: the wrapped learner may be a sketch, and on a stationary stream `r_i`
//! settles after a few examples. Features are not centred (that would make every sparse row
//! dense); the intercept and the Newton members' curvature absorb offsets.
//!
//! **Cost.** Only the touched coordinates are read and written: two hash-map look-ups per non-zero
//! and per example. The moments are kept for the features seen, not for every index of the
//! dimension, so a hashed model (`d = 2^b`) grows with the data, not with `d`; a model file holds
//! them sorted by index (the same bytes whatever the map's history).

use super::rescaling::{per_feature_weights, rescaling_learner, with_values};
use super::{check_example, LearnError, OnlineLearner};
use crate::merge::{MergeResult, MergeShare};
use crate::Row;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A multiplicative hash of a feature index (Fibonacci hashing, as rustc's FxHash): no random
/// state, so runs are reproducible, and a few cycles per look-up.
#[derive(Clone, Copy, Debug, Default)]
struct IndexHasher(u64);

impl Hasher for IndexHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_usize(&mut self, i: usize) {
        self.0 = (self.0.rotate_left(5) ^ i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// Per feature seen non-zero: `[Σ x_i², n_i]`.
type Moments = HashMap<usize, [f64; 2], BuildHasherDefault<IndexHasher>>;

/// The moments in a file: `(index, [Σ x², n])` sorted by index.
mod sorted {
    use super::Moments;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(m: &Moments, s: S) -> Result<S::Ok, S::Error> {
        let mut v: Vec<(usize, [f64; 2])> = m.iter().map(|(&i, &x)| (i, x)).collect();
        v.sort_unstable_by_key(|&(i, _)| i);
        v.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Moments, D::Error> {
        let v = Vec::<(usize, [f64; 2])>::deserialize(d)?;
        Ok(v.into_iter().collect())
    }
}

/// Wraps a learner so that features above unit scale are divided by their running RMS (see the
/// module documentation).
///
/// ```
/// use sketchlearn::linear::{AdaGrad, Intercept, OnlineLearner, UnitScaling};
/// use sketchlearn::loss::Loss;
/// use sketchlearn::Row;
/// let run = |c: f64| {
///     let mut m = UnitScaling::new(Intercept::new(AdaGrad::new(3, Loss::Logistic, 0.5).unwrap()));
///     let mut out = 0.0;
///     for t in 0..50 {
///         let x = [c * (1 + t % 5) as f64, (t % 3) as f64 / 2.0];
///         let y = if x[0] > 3.0 * c { 1.0 } else { -1.0 };
///         out = m.learn(Row::Dense(&x), y, 1.0).unwrap();
///     }
///     out
/// };
/// // Feature 0 above unit scale: its scale does not matter.
/// assert!((run(10.0) - run(1e6)).abs() < 1e-9);
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct UnitScaling<L> {
    inner: L,
    /// Per feature seen non-zero: `[Σ x_i², n_i]`.
    #[serde(with = "sorted")]
    moments: Moments,
    #[serde(skip)]
    scaled: Vec<f64>,
}

impl<L: OnlineLearner> UnitScaling<L> {
    /// Wraps `inner` (same dimension).
    pub fn new(inner: L) -> Self {
        UnitScaling {
            inner,
            moments: Moments::default(),
            scaled: Vec::new(),
        }
    }

    /// The wrapped learner (which sees scaled features).
    pub fn inner(&self) -> &L {
        &self.inner
    }

    /// `1/s_i = 1/max(1, r_i)` (1 for a feature never seen non-zero).
    pub fn inverse_scale(&self, i: usize) -> f64 {
        match self.moments.get(&i) {
            Some(&[s, n]) if s > n => (n / s).sqrt(),
            _ => 1.0,
        }
    }

    /// How many features have been seen non-zero (the entries kept).
    pub fn features_seen(&self) -> usize {
        self.moments.len()
    }

    /// Checks a loaded state: every index below the dimension, every sum finite and ≥ 0, every
    /// count ≥ 1 and finite.
    pub fn check_state(&self) -> Result<(), String> {
        let d = self.inner.dim();
        for (&i, &[s, n]) in &self.moments {
            if i >= d {
                return Err(format!(
                    "unit scaling: feature index {i} is not below the dimension {d}"
                ));
            }
            if !(s.is_finite() && s >= 0.0 && n.is_finite() && n >= 1.0) {
                return Err(format!(
                    "unit scaling: feature {i} has moments ({s}, {n}): expected a finite sum of \
                     squares ≥ 0 and a count ≥ 1"
                ));
            }
        }
        Ok(())
    }

    fn scaled_values(&self, x: Row<'_>, out: &mut Vec<f64>) {
        out.clear();
        let scale = |i: usize, xi: f64| {
            if xi == 0.0 {
                xi
            } else {
                xi * self.inverse_scale(i)
            }
        };
        match x {
            Row::Dense(v) => out.extend(v.iter().enumerate().map(|(i, &xi)| scale(i, xi))),
            Row::Sparse { indices, values } => out.extend(
                indices
                    .iter()
                    .zip(values)
                    .map(|(&i, &xi)| scale(i as usize, xi)),
            ),
        }
    }

    fn observe(&mut self, x: Row<'_>) {
        let d = self.inner.dim();
        x.for_each_entry(|i, xi| {
            if xi != 0.0 && xi.is_finite() && i < d {
                let m = self.moments.entry(i).or_insert([0.0, 0.0]);
                let next = m[0] + xi * xi;
                if next.is_finite() {
                    *m = [next, m[1] + 1.0];
                } else if m[1] == 0.0 {
                    self.moments.remove(&i);
                }
            }
        });
    }

    /// The weights on the original features: the wrapped learner's divided by `s_i` (an
    /// intercept added inside sits at index `d`, never seen, and is not divided).
    fn original_weights(&self, inner: &[f64]) -> Vec<f64> {
        per_feature_weights(inner, |i| self.inverse_scale(i))
    }
}

rescaling_learner!(UnitScaling);

/// The wrapped learners merged; the per-feature sums of squares and counts added (since the
/// base).
impl<L: MergeShare> MergeShare for UnitScaling<L> {
    fn merge_share(&mut self, other: &Self, base: Option<&Self>, share: f64) -> MergeResult {
        self.inner
            .merge_share(&other.inner, base.map(|b| &b.inner), share)?;
        for (&i, &[s, n]) in &other.moments {
            let [s0, n0] = base
                .and_then(|b| b.moments.get(&i).copied())
                .unwrap_or([0.0, 0.0]);
            if n > n0 {
                let m = self.moments.entry(i).or_insert([0.0, 0.0]);
                *m = [m[0] + (s - s0), m[1] + (n - n0)];
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linear::AdaGrad;
    use crate::loss::Loss;

    fn trained(rows: &[[f64; 3]]) -> UnitScaling<AdaGrad> {
        let mut l = UnitScaling::new(AdaGrad::new(3, Loss::Logistic, 0.5).unwrap());
        for (t, x) in rows.iter().enumerate() {
            let y = if t % 2 == 0 { 1.0 } else { -1.0 };
            l.learn(Row::Dense(x), y, 1.0).unwrap();
        }
        l
    }

    #[test]
    fn only_features_above_unit_scale_are_divided() {
        let l = trained(&[[300.0, 0.5, 0.0], [400.0, -0.25, 0.0]]);
        assert_eq!(l.features_seen(), 2); // feature 2 never non-zero
        assert_eq!(l.inverse_scale(0), (2.0f64 / 250_000.0).sqrt());
        assert_eq!(l.inverse_scale(1), 1.0);
        assert_eq!(l.inverse_scale(2), 1.0);
    }

    #[test]
    fn a_file_holds_the_moments_sorted_and_a_reload_saves_the_same_bytes() {
        let rows: Vec<[f64; 3]> = (0..40)
            .map(|t| [(t % 7) as f64 * 3.0, 2.0 - (t % 3) as f64, (t % 5) as f64])
            .collect();
        let l = trained(&rows);
        let bytes = postcard::to_allocvec(&l).unwrap();
        let back: UnitScaling<AdaGrad> = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(postcard::to_allocvec(&back).unwrap(), bytes);
        assert!(back.check_state().is_ok());
        for i in 0..3 {
            assert_eq!(back.inverse_scale(i), l.inverse_scale(i));
        }
    }

    #[test]
    fn a_loaded_state_with_an_index_outside_the_dimension_is_refused() {
        let mut l = trained(&[[3.0, 1.0, 1.0]]);
        l.moments.insert(7, [4.0, 1.0]);
        assert!(l.check_state().unwrap_err().contains("index 7"));
        l.moments.remove(&7);
        l.moments.insert(1, [-1.0, 1.0]);
        assert!(l.check_state().unwrap_err().contains("feature 1"));
    }

    #[test]
    fn merging_adds_the_moments_learned_since_the_base() {
        let base = trained(&[[2.0, 0.0, 0.0]]);
        let (mut a, mut b) = (base.clone(), base.clone());
        a.learn(Row::Dense(&[4.0, 0.0, 0.0]), 1.0, 1.0).unwrap();
        b.learn(Row::Dense(&[6.0, 3.0, 0.0]), -1.0, 1.0).unwrap();
        a.merge_share(&b, Some(&base), 0.5).unwrap();
        assert_eq!(a.moments[&0], [4.0 + 16.0 + 36.0, 3.0]);
        assert_eq!(a.moments[&1], [9.0, 1.0]);
    }
}
