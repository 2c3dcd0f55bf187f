//! Features brought to unit scale, and centred when they are measurements: every member of the
//! default classification mixture ([`LearnerConfig::auto_members`](super::LearnerConfig::auto_members))
//! is wrapped in it. No label is used (the example joins the statistics before the step, so
//! progressive validation stays honest).
//!
//! **Statistics.** Per feature `i`, over the examples where it was non-zero so far (the current
//! one included): the count `n_i`, mean `μ_i` and standard deviation `σ_i` (Welford's update; two
//! shards' moments combine by Chan, Golub & LeVeque's pairwise formula), the RMS
//! `r_i = √(σ_i² + μ_i²)` and the largest `|x_i|`, `M_i`; the number of examples `t`; and how
//! many of the non-zero entries seen were entries of measurements (defined below; each entry
//! classified when it arrives), `E_meas` of `E`.
//!
//! **The map.** The wrapped learner sees, for a non-zero `x_i` (a zero stays 0, so sparse rows
//! stay sparse and a dense row gives what its sparse form gives):
//!
//! | feature `i` | value seen |
//! |---|---|
//! | a *measurement* (`n_i ≥ t/2`, `σ_i ≥ 0.01·r_i`, `σ_i > 0`) above unit scale, `r_i > 1` | `(x_i − μ_i)/σ_i` |
//! | a measurement *scaled down*: `r_i ≤ 1`, `n_i ≥ 10`, `M_i < 1/4`, in a *table* (`E_meas ≥ E/2`) | `(x_i − μ_i)/σ_i` |
//! | any other feature above unit scale | `x_i / r_i` |
//! | any other feature at unit scale, `r_i ≤ 1` | `x_i` (unchanged) |
//!
//! A measurement is a column present in at least half of the rows whose values vary: an age, a
//! length in mm, a count. An absent value of it (a missing entry, or a 0 a LIBSVM file leaves
//! out) is seen as 0, which is the running mean: mean imputation. Indicators (non-zero values all
//! equal: `σ_i = 0`), rare features (words, hashed crosses: `n_i < t/2`) and near-constants (a year
//! column, `σ_i/r_i ≈ 4·10⁻⁴`) are only divided by their RMS: centring them would make the
//! absent value `−μ_i/σ_i` (every sparse row dense), or equate a present word of average count
//! with its absence, or blow a year's ±1 up to ±1000 at the first change.
//!
//! **Why.** The members' `α`, `α₀` and `η` count in the units of the features
//! ([`MEMBER_ALPHA0_SCALE`](super::MEMBER_ALPHA0_SCALE)) and were chosen on features at unit
//! scale (`[−1, 1]`, 0/1 dummies, tf-idf). On files as distributed a feature in the hundreds
//! (cholesterol in mg/dl beside a 0/1 sex column) fills SON's curvature
//! `A = αI + Σ c·g gᵀ` (Luo et al. 2016, Alg. 1) alone, and the unit-scale features keep a step
//! tuned for rows a thousand times smaller; AdaGrad's step `η` is scale-free per coordinate, so
//! a weight that must be `10⁻³` moves by `η` (Duchi et al. 2011). Dividing by `r_i` alone fixes
//! the scale but not the *offset*: penguins' flipper length, 200 ± 14 mm, becomes 1 ± 0.07,
//! nearly the intercept's constant, and the regularisation `αI` (a prior on the weights of
//! unit-scale features) swallows the ±0.07 that separates the species (the default's
//! one-against-all error went 0.0698 → 0.1657 with `x/r` alone; with the centring 0.0233).
//!
//! **Scaled down.** A measurement whose values are small is either *scaled down* (a column in
//! tonnes instead of kilograms; heart with a feature divided by `10^k`: the members' `α`
//! regularises its weight away, and the error goes 0.2000 → 0.2704 with per-feature `10^k`,
//! `k ∈ −4..4`) or small on purpose, relative to features it shares a scale with. The shared
//! sets show the second kind and what undoing it costs: standardising every measurement whatever
//! its scale cost spam 0.0798 → 0.1019 and r8 0.0184 → 0.0211 (`docs/results/raw_scales.md`).
//! Spam's measurements are the 7 of its 57 columns present in over half of the mails (three
//! word frequencies, one character frequency, the capital-run lengths), scaled to `[0, 1]` by
//! their maximum, with heavy tails (`M_i/r_i` up to 48): standardising only `char_freq_(` (index
//! 50) over the whole file costs 0.0798 → 0.0874, so the small scale is information the members
//! use. R8's are 9 near-stop-words whose tf-idf is 0.004–0.07 in rows of unit L2 norm. Two
//! statistics separate them from a scaled-down column, and the rule needs both:
//!
//! * *A table of measurements.* In spam and r8 most non-zero entries are words': the
//!   measurements' share is 0.41 and 0.09, against 0.78 to 1.00 on the tables of measurements
//!   here (australian_raw 0.78, heart_raw 0.83, heart 0.99, splice, magic04, diabetes 1.00). There the features
//!   share one scale by construction (frequencies, tf-idf, one `[0, 1]` scaling), and a small
//!   one is small relative to them. In a table each column has its own unit, and a column's
//!   scale says nothing. The share does not change under `x_i ↦ c_i·x_i` (presence and
//!   `σ_i/r_i` do not).
//! * *Values that never reach 1/4.* Files at unit scale put a column's largest value at 1
//!   (`svm-scale`'s `[−1, 1]`, `[0, 1]`), so `M_i < 1/4` after 10 values says the column was
//!   divided by more than 4 (heart's columns divided by 10 have `M_i = 0.1`). Alone this is not
//!   enough: a heavy-tailed column's running maximum lags (spam's longest capital run stays below
//!   1/4 for its first 3,600 rows, below 0.15 for 850). On the tables here every column reaches
//!   1/4 within its first 10 values but magic04's `fM3Trans` (its 15th: the only change, one
//!   mistake fewer).
//!
//! Standardising a scaled-down measurement is the map of a measurement above unit scale, so
//! heart with per-feature `10^k`, `k ∈ −4..4`, keeps its error within one standard error
//! (`tests/suite/default_scale_invariance.rs`), and the 12 shared sets, spam and r8 among them, are
//! learned bit for bit as before except magic04.shuf (0.2114 → 0.2113).
//!
//! **Predictions and weights on the original features.** Let `C` be the centred features and
//! `v` the wrapped learner's weights, `b` its intercept (every member has one). The score is
//!
//! ```text
//! Σ_i v_i z_i + b = Σ_i w_i x_i + (b − Σ_{i∈C, x_i≠0} w_i μ_i),   w_i = v_i / s_i,
//! ```
//!
//! with `s_i = σ_i` on `C`, `r_i` above unit scale elsewhere, 1 at unit scale. So the weights on
//! the original features are `w_i = v_i/s_i` ([`OnlineLearner::weights`] reports them), and the
//! centring moves into the intercept: `b − Σ_{i∈C} w_i μ_i` when every centred feature is present,
//! with the term of an absent one left out (its mean imputed). The intercept is what absorbs the
//! offsets, which is why the learner can be handed zero-mean features without losing anything.
//!
//! **Invariance.** Multiply feature `i` by `c > 0`: `μ_i, σ_i, r_i, M_i ↦ c·μ_i, c·σ_i, c·r_i,
//! c·M_i`, the tests `n_i ≥ t/2` and `σ_i ≥ 0.01·r_i` and the table share are unchanged
//! (ratios, counts), so as long as a measurement is off unit scale before and after (above it,
//! `r_i > 1`, or scaled down, `M_i < 1/4`) the learner sees
//! `(c·x_i − c·μ_i)/(c·σ_i) = (x_i − μ_i)/σ_i`; any other feature above unit scale before and
//! after `c·x_i/(c·r_i) = x_i/r_i`: the same stream, the same predictions up to rounding
//! (`tests/suite/default_scale_invariance.rs`; a scaled-down measurement's first 10 values excepted).
//! At unit scale features are left as they are: the scale of a unit-scale feature carries
//! information the defaults use, and outside a table of measurements so does that of a small
//! one (above). Standardising every measurement whatever its scale changes the 12 shared sets
//! (splice 0.2150 → 0.2230, ionosphere 0.1538 → 0.1652, breast-cancer 0.0322 → 0.0351, heart
//! 0.2000 → 0.1852, spam and r8 above), and dividing every feature by its RMS (Vowpal Wabbit's
//! `--normalized`, Ross, Mineiro & Langford, *Normalized Online Learning*, UAI 2013, with the
//! RMS instead of the maximum: [`FeatureScaling`](super::FeatureScaling)) cost splice
//! 0.2150 → 0.2340, spam.shuf 0.0798 → 0.0863 and r8 0.0184 → 0.0233 (more than one s.e. each;
//! `docs/results/raw_scales.md`).
//!
//! Like [`FeatureScaling`](super::FeatureScaling) (and unlike NAG) the weights are not corrected
//! when `μ_i` or `s_i` change: the wrapped learner may be a sketch, and on a stationary stream the
//! moments settle after a few examples. A feature can change rows of the table (a measurement
//! whose presence falls below half, say); the wrapped learner then sees a new scale for it.
//!
//! **Cost.** Only the touched coordinates are read and written: one look-up per non-zero and per
//! example (`observe_scaled`), once for all the members of the default mixture, which share one
//! state (`linear/shared_scaling.rs`). While `d ≤ 2^20` the moments live in a table indexed by
//! feature (`unit_scaling/moments.rs`: one line per look-up, allocated zeroed, so untouched pages
//! cost nothing); beyond, in a hash map of the features seen, so that a wide hashed model
//! (`d = 2^b`) grows with the data, not with `d`. A model file holds them sorted by index (the
//! same bytes whatever the form or the map's history).

use super::rescaling::{
    largest_inverse_scale, per_feature_weights, rescaling_learner, with_values,
};
use super::{check_example, LearnError, OnlineLearner};
use crate::merge::{MergeResult, MergeShare};
use crate::Row;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::sync::Arc;

/// Per feature seen non-zero: its running moments (Welford: count, mean, sum of squared
/// deviations from the mean) and the largest absolute value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
struct Welford {
    n: f64,
    mean: f64,
    m2: f64,
    /// `max |x|` (`+∞` for a feature loaded from a format-7 file, which did not keep it: such a
    /// feature is never taken for a scaled-down one, as before).
    max_abs: f64,
}

impl Welford {
    fn push(&mut self, x: f64) {
        self.n += 1.0;
        let delta = x - self.mean;
        self.mean += delta / self.n;
        self.m2 += delta * (x - self.mean);
        self.max_abs = self.max_abs.max(x.abs());
    }

    /// The running variance `M₂/n` (population).
    fn variance(&self) -> f64 {
        (self.m2 / self.n).max(0.0)
    }

    /// `r² = Σx²/n = σ² + μ²`.
    fn mean_square(&self) -> f64 {
        self.variance() + self.mean * self.mean
    }

    /// Chan et al.'s pairwise combination: the moments of the union of two disjoint samples.
    fn combine(&self, o: &Welford) -> Welford {
        let n = self.n + o.n;
        if n == 0.0 {
            return Welford::default();
        }
        let delta = o.mean - self.mean;
        Welford {
            n,
            mean: self.mean + delta * o.n / n,
            m2: self.m2 + o.m2 + delta * delta * self.n * o.n / n,
            max_abs: self.max_abs.max(o.max_abs),
        }
    }

    /// The moments of the values in `self` but not in its sub-sample `base` (the inverse of
    /// [`combine`](Self::combine); the maximum is `self`'s, an upper bound).
    fn since(&self, base: &Welford) -> Welford {
        let n = self.n - base.n;
        if n <= 0.0 {
            return Welford::default();
        }
        let mean = (self.n * self.mean - base.n * base.mean) / n;
        let delta = mean - base.mean;
        let m2 = self.m2 - base.m2 - delta * delta * base.n * n / self.n;
        Welford {
            n,
            mean,
            m2: m2.max(0.0),
            max_abs: self.max_abs,
        }
    }

    fn is_valid(&self) -> bool {
        self.n.is_finite()
            && self.n >= 1.0
            && self.mean.is_finite()
            && self.m2.is_finite()
            && self.m2 >= 0.0
            && self.mean_square().is_finite()
            && self.max_abs >= 0.0
    }

    /// A *measurement* among `examples` rows: present in at least half of them, its values
    /// varying (`σ ≥ 0.01·r`, `σ > 0`).
    #[inline]
    fn is_measurement(&self, examples: f64) -> bool {
        // Presence first: on a sparse stream almost every feature is rare, and the test then
        // needs neither square root.
        self.n >= MEASUREMENT_PRESENCE * examples && {
            let sd = self.variance().sqrt();
            sd > 0.0 && sd >= MEASUREMENT_VARIATION * self.mean_square().sqrt()
        }
    }
}

mod moments;
mod moments_delta;
mod wire;

use moments::Moments;
#[cfg(test)]
use wire::WireRef;

/// The first format version whose unit scaling keeps each feature's maximum and the
/// [`TableShare`].
const MAX_ABS_SINCE: u32 = 8;

/// How many of the non-zero entries seen were entries of measurements (each entry classified
/// when it arrives): the test of a *table of measurements*.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
struct TableShare {
    entries: f64,
    measurement_entries: f64,
}

impl TableShare {
    /// Most entries are measurements' (an empty share counts as a table).
    fn is_table(&self) -> bool {
        self.measurement_entries >= TABLE_SHARE * self.entries
    }

    fn is_valid(&self) -> bool {
        self.entries.is_finite()
            && self.measurement_entries >= 0.0
            && self.measurement_entries <= self.entries
    }
}

/// How one feature's non-zero value is mapped: `z = (x − shift)·inverse`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FeatureMap {
    /// Subtracted first: the running mean for a centred feature, else 0.
    pub shift: f64,
    /// Then multiplied by: `1/s_i`.
    pub inverse: f64,
}

impl FeatureMap {
    const IDENTITY: FeatureMap = FeatureMap {
        shift: 0.0,
        inverse: 1.0,
    };
}

/// A feature above unit scale is centred when present in at least this fraction of the
/// examples (a measurement with the odd missing value, not a sparse indicator or word).
const MEASUREMENT_PRESENCE: f64 = 0.5;

/// … and when its non-zero values vary by at least this fraction of their RMS (not an indicator,
/// whose `σ = 0`, nor a near-constant such as a year, `σ/r ≈ 4·10⁻⁴`).
const MEASUREMENT_VARIATION: f64 = 0.01;

/// Unit scale: a feature whose RMS is at most this is left as it is. (A little above 1, so that
/// a feature of ±1 values, whose RMS rounds to `1 + ε` in Welford's moments, counts as unit
/// scale.)
const UNIT_SCALE: f64 = 1.0 + 1e-9;

/// A measurement at unit scale by its RMS is *scaled down* when none of its values reached this
/// in absolute value (files at unit scale put each column's largest value at 1: `svm-scale`'s
/// `[−1, 1]` and `[0, 1]`) …
const SCALED_DOWN_MAX: f64 = 0.25;

/// … after at least this many values (the running maximum of the first few says little) …
const SCALED_DOWN_MIN_COUNT: f64 = 10.0;

/// … in a table of measurements: at least this fraction of the non-zero entries seen were
/// measurements' (see [`TableShare`]).
const TABLE_SHARE: f64 = 0.5;

/// Wraps a learner so that features above unit scale are brought to unit scale: measurements
/// standardised, other features divided by their running RMS (see the module documentation).
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
/// // Feature 0 above unit scale (and centred: present in every row, varying): its scale does
/// // not matter.
/// assert!((run(10.0) - run(1e6)).abs() < 1e-9);
/// ```
#[derive(Clone, Debug)]
pub struct UnitScaling<L> {
    inner: L,
    /// The statistics: the members of a [`Mixture`](super::Mixture) that are all unit
    /// scalings of the same examples share one (`linear/shared_scaling.rs`); a change copies it
    /// first if another learner still holds it (`Arc::make_mut`), so each learner behaves as if
    /// it had its own.
    scale: Arc<UnitScale>,
    scaled: Vec<f64>,
}

/// The statistics of a [`UnitScaling`]: the example count, each feature's moments and the
/// table share (no label involved, so the same for every learner that saw the same examples).
#[derive(Clone, Debug, Default)]
pub(crate) struct UnitScale {
    /// Examples seen (`t`).
    examples: f64,
    /// Per feature seen non-zero: its moments.
    moments: Moments,
    /// The share of entries that were measurements'.
    table: TableShare,
    /// Each observed entry's moments, for [`UnitScale::observe_scaled`] (scratch).
    kept: Vec<Option<Welford>>,
}

impl UnitScale {
    /// The same statistics (the scratch aside).
    fn same_as(&self, o: &UnitScale) -> bool {
        self.examples.to_bits() == o.examples.to_bits()
            && self.table == o.table
            && self.moments == o.moments
    }
}

impl<L: OnlineLearner> UnitScaling<L> {
    /// Wraps `inner` (same dimension).
    pub fn new(inner: L) -> Self {
        UnitScaling {
            inner,
            scale: Arc::default(),
            scaled: Vec::new(),
        }
    }

    /// The wrapped learner (which sees scaled features).
    pub fn inner(&self) -> &L {
        &self.inner
    }

    /// The wrapped learner, to learn a row already scaled by a shared state
    /// (`shared_scaling.rs`).
    pub(super) fn inner_mut(&mut self) -> &mut L {
        &mut self.inner
    }

    /// How feature `i`'s non-zero values are mapped now (the identity for a feature never seen
    /// non-zero).
    pub fn feature_map(&self, i: usize) -> FeatureMap {
        self.scale.feature_map(i)
    }

    /// `1/s_i`, the factor feature `i`'s weight is mapped back by (1 for a feature never seen
    /// non-zero).
    pub fn inverse_scale(&self, i: usize) -> f64 {
        self.feature_map(i).inverse
    }

    /// The largest `|1/s_i|` over all features (1 for those never seen non-zero), from the
    /// entries kept: `O(features seen)` for a map, `O(d)` for a direct table (a scan of its
    /// `32·d` bytes: saves, checks and deltas, not the learning path).
    pub(crate) fn largest_inverse_scale(&self) -> f64 {
        largest_inverse_scale(
            self.scale
                .moments
                .iter()
                .map(|(i, _)| self.inverse_scale(i)),
        )
    }

    /// How many features have been seen non-zero (the entries kept).
    pub fn features_seen(&self) -> usize {
        self.scale.moments.len()
    }

    /// Checks a loaded state: every index below the dimension, finite moments, every count
    /// between 1 and the number of examples.
    pub fn check_state(&self) -> Result<(), String> {
        self.scale.check(self.inner.dim())
    }

    /// The scaled values of `x` under the statistics now.
    pub(super) fn scaled_values(&self, x: Row<'_>, out: &mut Vec<f64>) {
        self.scale.scaled_values(x, out);
    }

    /// See [`UnitScale::observe_scaled`].
    fn observe_scaled(&mut self, x: Row<'_>, out: &mut Vec<f64>) {
        let d = self.inner.dim();
        Arc::make_mut(&mut self.scale).observe_scaled(d, x, out);
    }

    /// The weights on the original features: the wrapped learner's times `1/s_i` (an
    /// intercept added inside sits at index `d`, never seen, and is not divided).
    fn original_weights(&self, inner: &[f64]) -> Vec<f64> {
        per_feature_weights(inner, |i| self.inverse_scale(i))
    }

    /// Whether `self` and `other` hold the same statistics object (shared, not copies).
    pub(super) fn shares_scale_with<M>(&self, other: &UnitScaling<M>) -> bool {
        Arc::ptr_eq(&self.scale, &other.scale)
    }

    /// Whether `self` and `other` have equal statistics (bit for bit; shared ones without
    /// comparing them).
    pub(super) fn same_scale_as<M>(&self, other: &UnitScaling<M>) -> bool {
        self.shares_scale_with(other) || self.scale.same_as(&other.scale)
    }

    /// From now on `self` shares `other`'s statistics (equal ones: see
    /// [`same_scale_as`](Self::same_scale_as)).
    pub(super) fn share_scale_of<M>(&mut self, other: &UnitScaling<M>) {
        self.scale = Arc::clone(&other.scale);
    }

    /// The shared statistics, taken out (an empty one left in their place) so that the one
    /// holder can change them without a copy; [`share_scale_of`](Self::share_scale_of) or
    /// [`put_scale`](Self::put_scale) puts them back.
    pub(super) fn take_scale(&mut self) -> Arc<UnitScale> {
        std::mem::replace(&mut self.scale, UnitScale::empty())
    }

    /// Puts back statistics taken by [`take_scale`](Self::take_scale).
    pub(super) fn put_scale(&mut self, scale: Arc<UnitScale>) {
        self.scale = scale;
    }
}

impl UnitScale {
    /// A shared empty state (a placeholder while the real one is changed: no allocation).
    fn empty() -> Arc<UnitScale> {
        static EMPTY: std::sync::OnceLock<Arc<UnitScale>> = std::sync::OnceLock::new();
        Arc::clone(EMPTY.get_or_init(Arc::default))
    }

    /// A hint that `x` joins the statistics soon: with a direct table of moments, its
    /// features' entries start loading (no value changes; an example ahead, their cache misses
    /// overlap the scaling of the one before: `mixture_batch.rs` `scale_rows`).
    #[inline]
    pub(super) fn prefetch(&self, x: Row<'_>) {
        self.moments.prefetch(x);
    }

    /// How feature `i`'s non-zero values are mapped now.
    fn feature_map(&self, i: usize) -> FeatureMap {
        self.map_of(self.moments.get(i).as_ref())
    }

    /// The map of a feature with moments `m` (`None`: never seen non-zero, the identity) under
    /// the current example count and table share.
    #[inline]
    fn map_of(&self, m: Option<&Welford>) -> FeatureMap {
        let Some(m) = m else {
            return FeatureMap::IDENTITY;
        };
        // Each quantity is computed only on the branch that needs it (the same values).
        let standardised = || FeatureMap {
            shift: m.mean,
            inverse: m.variance().sqrt().recip(),
        };
        let r2 = m.mean_square();
        if r2 <= UNIT_SCALE * UNIT_SCALE {
            let scaled_down = m.max_abs < SCALED_DOWN_MAX && m.n >= SCALED_DOWN_MIN_COUNT;
            return if scaled_down && self.table.is_table() && m.is_measurement(self.examples) {
                standardised()
            } else {
                FeatureMap::IDENTITY
            };
        }
        let r = r2.sqrt();
        if m.is_measurement(self.examples) {
            standardised()
        } else {
            FeatureMap {
                shift: 0.0,
                inverse: r.recip(),
            }
        }
    }

    /// See [`UnitScaling::check_state`]; `d` the dimension.
    fn check(&self, d: usize) -> Result<(), String> {
        if !(self.examples.is_finite() && self.examples >= 0.0 && self.table.is_valid()) {
            return Err(format!(
                "unit scaling: the example count {} or the entry counts {:?} are not finite \
                 counts",
                self.examples, self.table
            ));
        }
        for (i, m) in self.moments.iter() {
            if i >= d {
                return Err(format!(
                    "unit scaling: feature index {i} is not below the dimension {d}"
                ));
            }
            if !(m.is_valid() && m.n <= self.examples) {
                return Err(format!(
                    "unit scaling: feature {i} has moments (n {}, mean {}, M2 {}, max {}): \
                     expected finite numbers, M2 ≥ 0, max ≥ 0 and 1 ≤ n ≤ {} examples",
                    m.n, m.mean, m.m2, m.max_abs, self.examples
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
                let f = self.feature_map(i);
                (xi - f.shift) * f.inverse
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

    /// The example joins the statistics; `seen(i, m)` is told each non-zero entry's moments
    /// right after it joined (`None`: not kept).
    #[inline(always)]
    fn observe_each(&mut self, d: usize, x: Row<'_>, mut seen: impl FnMut(usize, Option<Welford>)) {
        self.moments.for_dimension(d);
        self.examples += 1.0;
        let (t, table) = (self.examples, &mut self.table);
        x.for_each_entry(|i, xi| {
            if xi != 0.0 && xi.is_finite() && i < d {
                // An absent feature's moments are the default (`n = 0`); an invalid first value
                // leaves it absent.
                let m = self.moments.get(i).unwrap_or_default();
                let mut next = m;
                next.push(xi);
                if next.is_valid() {
                    self.moments.insert(i, next);
                    table.entries += 1.0;
                    if next.is_measurement(t) {
                        table.measurement_entries += 1.0;
                    }
                    seen(i, Some(next));
                } else if m.n == 0.0 {
                    seen(i, None);
                } else {
                    seen(i, Some(m));
                }
            }
        });
    }

    /// The example joins the statistics ([`observe_each`](Self::observe_each)), then the
    /// scaled values of `x` go into `out` (what `scaled_values` gives then) without looking each feature up a second time:
    /// the moments each entry left are kept on the way, and the maps are taken from them once
    /// the whole example has joined (a map depends on the example count and the table share
    /// after the example). A row whose indices do not increase (a feature twice) is looked up
    /// again, so that every entry gets its feature's final moments.
    pub(super) fn observe_scaled(&mut self, d: usize, x: Row<'_>, out: &mut Vec<f64>) {
        // Every entry's moments are looked up once first: these look-ups do not depend on each
        // other, so their cache misses overlap (in the update below each one waits behind the
        // previous entry's arithmetic); on sparse rows over many features the misses are most
        // of the cost. Reads only: no value changes.
        self.moments.start_loading(x);
        let mut kept = std::mem::take(&mut self.kept);
        kept.clear();
        let mut increasing = true;
        let mut last = None;
        self.observe_each(d, x, |i, m| {
            increasing &= last.is_none_or(|l| l < i);
            last = Some(i);
            kept.push(m);
        });
        if !increasing {
            self.kept = kept;
            return self.scaled_values(x, out);
        }
        out.clear();
        let mut next = kept.iter();
        let mut scale = |xi: f64| {
            if xi == 0.0 {
                return xi;
            }
            // Non-zero and finite: the entry was observed (inputs are checked finite, and `i`
            // is below the dimension), so its moments are next in `kept`.
            let f = self.map_of(next.next().and_then(Option::as_ref));
            (xi - f.shift) * f.inverse
        };
        match x {
            Row::Dense(v) => out.extend(v.iter().map(|&xi| scale(xi))),
            Row::Sparse { values, .. } => out.extend(values.iter().map(|&xi| scale(xi))),
        }
        self.kept = kept;
    }
}

rescaling_learner!(UnitScaling, observe_scaled);

/// The wrapped learners merged; the example counts and the per-feature moments learned since
/// the base added (Chan et al.'s pairwise combination).
impl<L: MergeShare> MergeShare for UnitScaling<L> {
    fn check_merge(&self, other: &Self, base: Option<&Self>) -> MergeResult {
        self.inner.check_merge(&other.inner, base.map(|b| &b.inner))
    }

    fn merge_share(&mut self, other: &Self, base: Option<&Self>, share: f64) -> MergeResult {
        self.check_merge(other, base)?;
        self.inner
            .merge_share(&other.inner, base.map(|b| &b.inner), share)?;
        let s = Arc::make_mut(&mut self.scale);
        let (other, base) = (&other.scale, base.map(|b| &*b.scale));
        s.examples += other.examples - base.map_or(0.0, |b| b.examples);
        let base_table = base.map_or(TableShare::default(), |b| b.table);
        s.table.entries += other.table.entries - base_table.entries;
        s.table.measurement_entries +=
            other.table.measurement_entries - base_table.measurement_entries;
        for (i, m) in other.moments.iter() {
            let b = base.and_then(|b| b.moments.get(i)).unwrap_or_default();
            let new = m.since(&b);
            if new.n > 0.0 {
                let e = s.moments.get(i).unwrap_or_default();
                s.moments.insert(i, e.combine(&new));
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

    /// The fused observe-and-scale of `learn` gives what `observe` then `scaled_values` give,
    /// to the bit and with the same state, on sparse rows (one with a feature twice, explicit
    /// zeros, values above and below unit scale) and dense rows.
    #[test]
    fn observe_scaled_equals_observe_then_scaled_values() {
        let rows: Vec<(Vec<u32>, Vec<f64>)> = (0..300u32)
            .map(|t| {
                let mut idx: Vec<u32> = (0..6).map(|k| (t * 7 + k * 13) % 40).collect();
                idx.sort_unstable();
                idx.dedup();
                if t % 50 == 7 {
                    idx.push(idx[0]); // a feature twice: looked up again
                }
                let vals = idx
                    .iter()
                    .enumerate()
                    .map(|(k, &j)| match (t as usize + k) % 5 {
                        0 => 0.0,
                        1 => 300.0 + f64::from(j),
                        2 => 0.01 * f64::from(t % 9),
                        _ => f64::from(j % 3) - 1.0,
                    })
                    .collect();
                (idx, vals)
            })
            .collect();
        let mut fused = UnitScaling::new(AdaGrad::new(40, Loss::Logistic, 0.5).unwrap());
        let mut plain = fused.clone();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for (t, (indices, values)) in rows.iter().enumerate() {
            let dense: Vec<f64> = (0..40).map(|j| f64::from(j as u8 % 4) * t as f64).collect();
            let sparse = Row::Sparse { indices, values };
            for x in [sparse, Row::Dense(&dense)] {
                fused.observe_scaled(x, &mut a);
                Arc::make_mut(&mut plain.scale).observe_each(40, x, |_, _| {});
                plain.scaled_values(x, &mut b);
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&a), bits(&b), "row {t}");
            }
        }
        assert_eq!(fused.scale.moments, plain.scale.moments);
        assert_eq!(fused.scale.table, plain.scale.table);
    }

    /// The direct table of moments (`d ≤ DIRECT_FEATURES`) and the hash map (beyond) give the
    /// same scaled values to the bit, the same moments, and the same file bytes for them, on
    /// sparse rows with rare, repeated, invalid (a value whose square overflows) and
    /// measurement-like features; a map loaded from a file becomes a table with the same
    /// moments; an entry that leaves and comes back counts once.
    #[test]
    fn the_direct_table_and_the_map_give_the_same_bits() {
        use super::moments::DIRECT_FEATURES;
        let wide = DIRECT_FEATURES + 1;
        let learner = |d: usize| UnitScaling::new(AdaGrad::new(d, Loss::Logistic, 0.5).unwrap());
        let (mut table, mut map) = (learner(64), learner(wide));
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for t in 0..400u32 {
            let mut idx: Vec<u32> = (0..5).map(|k| (t * 11 + k * 17) % 60).collect();
            idx.push(63); // present in every row: a measurement
            idx.sort_unstable();
            idx.dedup();
            let vals: Vec<f64> = idx
                .iter()
                .map(|&j| match (t + j) % 7 {
                    0 => 1e200, // its square overflows: the entry is refused
                    1 => 250.0 + f64::from(j),
                    _ => f64::from(t % 5) - 2.5 + f64::from(j) / 64.0,
                })
                .collect();
            let x = Row::Sparse {
                indices: &idx,
                values: &vals,
            };
            table.observe_scaled(x, &mut a);
            map.observe_scaled(x, &mut b);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&a), bits(&b), "row {t}");
        }
        assert!(matches!(table.scale.moments, Moments::Direct { .. }));
        assert!(matches!(map.scale.moments, Moments::Map(_)));
        assert_eq!(table.scale.moments, map.scale.moments);
        assert_eq!(table.features_seen(), map.features_seen());
        let file = |l: &UnitScaling<AdaGrad>| {
            postcard::to_allocvec(&WireRef {
                inner: &(),
                examples: l.scale.examples,
                moments: &l.scale.moments,
                table: l.scale.table,
            })
            .unwrap()
        };
        assert_eq!(file(&table), file(&map));
        // A loaded state holds a map; the first example makes it a table with the same moments.
        let mut loaded: UnitScaling<AdaGrad> =
            postcard::from_bytes(&postcard::to_allocvec(&table).unwrap()).unwrap();
        assert!(matches!(loaded.scale.moments, Moments::Map(_)));
        let empty = Row::Sparse {
            indices: &[],
            values: &[],
        };
        loaded.observe_scaled(empty, &mut a);
        table.observe_scaled(empty, &mut b);
        assert!(matches!(loaded.scale.moments, Moments::Direct { .. }));
        assert_eq!(loaded.scale.moments, table.scale.moments);
        assert_eq!(file(&loaded), file(&table));
        let m = table.scale.moments.get(63).unwrap();
        let direct = &mut Arc::make_mut(&mut table.scale).moments;
        direct.remove(63);
        assert_eq!(
            (direct.get(63), direct.len()),
            (None, map.features_seen() - 1)
        );
        direct.insert(63, m);
        assert_eq!(direct.len(), map.features_seen());
    }

    /// A state rebuilt from a model delta (a Dask task's result) holds its moments in the table
    /// its dimension gives, decoded straight into it (`Moments::from_sorted`, no map in
    /// between), with the moments and file bytes of the state the delta was made of; beyond
    /// `DIRECT_FEATURES` it holds a map. Merging the rebuild gives the bytes of merging the
    /// learned state.
    #[test]
    fn a_state_rebuilt_from_a_delta_holds_the_table_of_its_dimension() {
        use super::moments::DIRECT_FEATURES;
        use crate::model::{delta_bytes, from_delta_bytes};
        for d in [64, DIRECT_FEATURES + 1] {
            let base = UnitScaling::new(AdaGrad::new(d, Loss::Logistic, 0.5).unwrap());
            let (mut a, mut b) = (base.clone(), base.clone());
            for t in 0..300u32 {
                let mut idx: Vec<u32> = (0..4).map(|k| (t * 13 + k * 7) % 60).collect();
                idx.push(63);
                idx.sort_unstable();
                idx.dedup();
                let vals: Vec<f64> = idx.iter().map(|&j| f64::from((t + j) % 9) - 3.5).collect();
                let x = Row::Sparse {
                    indices: &idx,
                    values: &vals,
                };
                let y = if t % 3 == 0 { 1.0 } else { -1.0 };
                let l = if t % 2 == 0 { &mut a } else { &mut b };
                l.learn(x, y, 1.0).unwrap();
            }
            let delta = delta_bytes("unit-scaling-delta", &a, &base).unwrap();
            let back: UnitScaling<AdaGrad> =
                from_delta_bytes(&delta, "unit-scaling-delta", &base, "memory").unwrap();
            let direct = matches!(back.scale.moments, Moments::Direct { .. });
            assert_eq!(direct, d <= DIRECT_FEATURES, "d = {d}");
            assert_eq!(back.scale.moments, a.scale.moments);
            let bytes = |l: &UnitScaling<AdaGrad>| postcard::to_allocvec(l).unwrap();
            assert_eq!(bytes(&back), bytes(&a));
            let (mut learned, mut rebuilt) = (a.clone(), back);
            learned.merge_share(&b, Some(&base), 0.5).unwrap();
            rebuilt.merge_share(&b, Some(&base), 0.5).unwrap();
            assert_eq!(bytes(&rebuilt), bytes(&learned), "d = {d}");
        }
    }

    fn trained(rows: &[[f64; 3]]) -> UnitScaling<AdaGrad> {
        let mut l = UnitScaling::new(AdaGrad::new(3, Loss::Logistic, 0.5).unwrap());
        for (t, x) in rows.iter().enumerate() {
            let y = if t % 2 == 0 { 1.0 } else { -1.0 };
            l.learn(Row::Dense(x), y, 1.0).unwrap();
        }
        l
    }

    #[test]
    fn only_features_above_unit_scale_are_mapped() {
        let l = trained(&[[300.0, 0.5, 0.0], [400.0, -0.25, 0.0]]);
        assert_eq!(l.features_seen(), 2); // feature 2 never non-zero
                                          // Feature 0: present in every row, σ = 50 against r = √125000: standardised.
        let f = l.feature_map(0);
        assert!((f.shift - 350.0).abs() < 1e-12 && (f.inverse - 0.02).abs() < 1e-15);
        assert_eq!(l.feature_map(1), FeatureMap::IDENTITY);
        assert_eq!(l.feature_map(2), FeatureMap::IDENTITY);
    }

    #[test]
    fn indicators_rare_features_and_near_constants_are_only_divided_by_their_rms() {
        // Feature 0: always 2 (an indicator, σ = 0); feature 1: in 1 row of 4 (rare);
        // feature 2: a year, 2008 ± 1 (σ/r ≈ 4·10⁻⁴); feature 3: a measurement.
        let rows = [
            [2.0, 5.0, 2007.0, 150.0],
            [2.0, 0.0, 2008.0, 210.0],
            [2.0, 0.0, 2009.0, 180.0],
            [2.0, 0.0, 2008.0, 0.0], // a missing measurement: still present in 3 of 4
        ];
        let mut l = UnitScaling::new(AdaGrad::new(4, Loss::Logistic, 0.5).unwrap());
        for x in &rows {
            l.learn(Row::Dense(x), 1.0, 1.0).unwrap();
        }
        assert_eq!(l.feature_map(0).shift, 0.0);
        assert_eq!(l.feature_map(0).inverse, 0.5);
        assert_eq!(l.feature_map(1).shift, 0.0);
        assert!((l.feature_map(1).inverse - 0.2).abs() < 1e-15);
        assert_eq!(l.feature_map(2).shift, 0.0);
        let f = l.feature_map(3);
        assert!((f.shift - 180.0).abs() < 1e-9);
        assert!((f.inverse - (600f64).sqrt().recip()).abs() < 1e-12);
        // A zero stays zero: the absent measurement is its running mean.
        let mut v = Vec::new();
        l.scaled_values(Row::Dense(&[0.0, 0.0, 0.0, 0.0]), &mut v);
        assert_eq!(v, [0.0; 4]);
    }

    #[test]
    fn welford_moments_combine_and_split_as_the_pooled_sample() {
        let (xs, ys) = ([3.0, -1.0, 7.5, 2.0], [10.0, 11.0, 0.5]);
        let (mut a, mut b, mut all) = (Welford::default(), Welford::default(), Welford::default());
        xs.iter().for_each(|&x| a.push(x));
        ys.iter().for_each(|&y| b.push(y));
        xs.iter().chain(&ys).for_each(|&x| all.push(x));
        let c = a.combine(&b);
        let back = c.since(&a);
        for (p, q) in [(c.n, all.n), (c.mean, all.mean), (c.m2, all.m2)] {
            assert!((p - q).abs() <= 1e-12 * (1.0 + q.abs()), "{p} vs {q}");
        }
        for (p, q) in [(back.n, b.n), (back.mean, b.mean), (back.m2, b.m2)] {
            assert!((p - q).abs() <= 1e-12 * (1.0 + q.abs()), "{p} vs {q}");
        }
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

    fn moments(l: &mut UnitScaling<AdaGrad>) -> &mut Moments {
        &mut Arc::make_mut(&mut l.scale).moments
    }

    #[test]
    fn a_loaded_state_with_an_index_outside_the_dimension_or_bad_moments_is_refused() {
        let mut l = trained(&[[3.0, 1.0, 1.0]]);
        let one = l.scale.moments.get(0).unwrap();
        moments(&mut l).insert(7, one);
        assert!(l.check_state().unwrap_err().contains("index 7"));
        moments(&mut l).remove(7);
        moments(&mut l).insert(1, Welford { m2: -1.0, ..one });
        assert!(l.check_state().unwrap_err().contains("feature 1"));
        moments(&mut l).insert(1, Welford { n: 2.0, ..one }); // seen more often than the examples
        assert!(l.check_state().unwrap_err().contains("feature 1"));
    }

    #[test]
    fn merging_adds_the_moments_learned_since_the_base() {
        let base = trained(&[[2.0, 0.0, 0.0]]);
        let (mut a, mut b) = (base.clone(), base.clone());
        a.learn(Row::Dense(&[4.0, 0.0, 0.0]), 1.0, 1.0).unwrap();
        b.learn(Row::Dense(&[6.0, 3.0, 0.0]), -1.0, 1.0).unwrap();
        a.merge_share(&b, Some(&base), 0.5).unwrap();
        assert_eq!(a.scale.examples, 3.0);
        let m = a.scale.moments.get(0).unwrap();
        assert_eq!((m.n, m.mean), (3.0, 4.0));
        assert!((m.m2 - 8.0).abs() < 1e-12);
        assert_eq!(a.scale.moments.get(1).unwrap().n, 1.0);
        assert_eq!(a.scale.moments.get(1).unwrap().mean, 3.0);
    }

    /// Dense rows of a table: feature 0 a measurement scaled by `c`, feature 1 a measurement
    /// at unit scale; `rows` of them.
    fn table(c: f64, rows: usize) -> UnitScaling<AdaGrad> {
        let mut l = UnitScaling::new(AdaGrad::new(2, Loss::Logistic, 0.5).unwrap());
        for t in 0..rows {
            let x = [c * (0.2 + 0.1 * (t % 7) as f64), 1.0 - 0.5 * (t % 3) as f64];
            l.learn(Row::Dense(&x), if t % 2 == 0 { 1.0 } else { -1.0 }, 1.0)
                .unwrap();
        }
        l
    }

    #[test]
    fn a_scaled_down_measurement_of_a_table_is_standardised_after_ten_values() {
        // Values 0.2..0.8 reach 1/4: at unit scale, left as they are.
        assert_eq!(table(1.0, 40).feature_map(0), FeatureMap::IDENTITY);
        // Divided by 10: they never reach 1/4, but nine values say too little.
        assert_eq!(table(0.1, 9).feature_map(0), FeatureMap::IDENTITY);
        let (a, b) = (table(0.1, 40), table(1e-4, 40));
        let (fa, fb) = (a.feature_map(0), b.feature_map(0));
        assert!(fa != FeatureMap::IDENTITY);
        // Standardised: the same values seen whatever the scale.
        for v in [0.2, 0.5, 0.8] {
            let (za, zb) = (
                (0.1 * v - fa.shift) * fa.inverse,
                (1e-4 * v - fb.shift) * fb.inverse,
            );
            assert!((za - zb).abs() < 1e-9, "{za} vs {zb}");
        }
        assert_eq!(a.feature_map(1), FeatureMap::IDENTITY);
    }

    #[test]
    fn outside_a_table_of_measurements_small_values_are_left_as_they_are() {
        // Feature 0 is a small measurement (in every row, < 1/4) but most entries are rare
        // words (a new index every row), as in spam or tf-idf text: not a table.
        let mut l = UnitScaling::new(AdaGrad::new(200, Loss::Logistic, 0.5).unwrap());
        for t in 0..60u32 {
            let indices = [0, 1 + 3 * t, 2 + 3 * t, 3 + 3 * t];
            let values = [0.01 * (1 + t % 5) as f64, 0.3, 0.2, 0.1];
            let x = Row::Sparse {
                indices: &indices,
                values: &values,
            };
            l.learn(x, 1.0, 1.0).unwrap();
        }
        assert!(!l.scale.table.is_table());
        assert_eq!(l.feature_map(0), FeatureMap::IDENTITY);
    }

    #[test]
    fn a_format_7_state_loads_with_its_maximum_unknown_and_the_same_maps() {
        // The layout format 7 wrote: inner, examples, (index, (n, mean, M2)) sorted.
        let l = table(1e-3, 40);
        let mut old: Vec<(usize, (f64, f64, f64))> = l
            .scale
            .moments
            .iter()
            .map(|(i, m)| (i, (m.n, m.mean, m.m2)))
            .collect();
        old.sort_unstable_by_key(|&(i, _)| i);
        let bytes = postcard::to_allocvec(&(&l.inner, l.scale.examples, old)).unwrap();
        let back: UnitScaling<AdaGrad> = {
            let _v7 = crate::model::sparse_vec::VersionScope::new(7);
            postcard::from_bytes(&bytes).unwrap()
        };
        assert!(back.check_state().is_ok());
        assert_eq!(back.scale.table, TableShare::default());
        assert_eq!(back.scale.moments.get(0).unwrap().max_abs, f64::INFINITY);
        // Format 7 left a measurement below unit scale as it was: so does the loaded state.
        assert!(l.feature_map(0) != FeatureMap::IDENTITY);
        assert_eq!(back.feature_map(0), FeatureMap::IDENTITY);
        assert_eq!(back.feature_map(1), l.feature_map(1));
    }
}
