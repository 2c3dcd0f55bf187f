//! Whether the *data* are sparse, and so which members the default classifier mixes
//! ([`Algorithm::Auto`] or its composition for sparse data, [`Algorithm::AutoSparse`]): one
//! rule ([`sparse_data`]) on the first rows of the input ([`SparsitySample`], counted by a
//! [`SparsityProbe`]), applied by [`ValidLearnerConfig::resolve`] for every front end (the
//! `train` run's pre-scan, the library's runs, the Python binding) and recorded in the model's
//! configuration (its algorithm), so that a reloaded model keeps its members.
//!
//! # The rule
//!
//! Let the sample be the first `n₀ = min(n, `[`SPARSITY_SAMPLE`]`)` examples of the input in
//! its order, `ā` their mean number of stored features and `D` the number of distinct features
//! they use. The data are sparse when `D > 0` and
//!
//! ```text
//! ā < D / 10.
//! ```
//!
//! Derivation and reasons:
//!
//! * **`D`, not `d`.** The representation rule ([`auto_sparse`](super::auto_sparse)) compares
//!   `ā` with the learner's dimension `d`, which belongs to the representation: `2^b` for
//!   hashed VW text (every VW file is "sparse" there: splice's 60 features in `2^18`), `--dim`
//!   when given, one past the largest index otherwise. `D` belongs to the data: the same rows
//!   give the same `D` as LIBSVM and as VW text (hash collisions can only lower `D`, so
//!   hashing never makes data look sparser). `ā/D` is the fraction of the features seen that a
//!   row uses; below a tenth, the rows are combinations of few of many features — where the
//!   members kept are leaders (below).
//! * **The first rows.** They are the only part of the input that every run reads before
//!   learning and that is the same for a file, a pipe (sampled in memory or spooled) and a
//!   cache, with or without `--dim`, whether or not the classes are scanned: so the choice is
//!   identical for all of them, and deterministic. `D ≤ n₀·ā`, so `ā/D ≥ 1/n₀`: an input of
//!   fewer than 10 examples is never called sparse, and 1000 rows resolve ratios down to
//!   `10⁻³`.
//! * **The threshold 1/10**, the representation rule's, separates the shared data sets with a
//!   margin on both sides (ratios over the first 1000 rows): the sparse streams w8a.shuf
//!   0.046, r8_earn_vs_rest 0.007 and the generated `2^18`-feature stream 0.001; the dense
//!   sets a9a 0.128 (one-hot categories: 13.9 of 108 seen), spam 0.227, mushrooms 0.338 and
//!   the eight others ≥ 0.87. On exactly those three streams the two RFD-SON members of
//!   [`LearnerConfig::auto_members`] cost half of the mixture's time and are never its leader,
//!   while every dense set needs one of them ([`LearnerConfig::sparse_data_members`]).
//!
//! # Very sparse data
//!
//! The data are *very* sparse when the sample is full (`n₀ =` [`SPARSITY_SAMPLE`]: at least
//! 1000 rows) and its features were seen fewer than twice each on average,
//!
//! ```text
//! n₀·ā < 2·D,
//! ```
//!
//! and a classifier's `auto` then mixes the AdaGrad grid alone ([`Algorithm::AutoVerySparse`],
//! [`LearnerConfig::very_sparse_data_members`]). Reasons:
//!
//! * **What the ratio says.** `n₀·ā/D` is the mean number of the sample's rows a feature seen
//!   in it appears in. Near 1 the rows hardly share a feature: for ids drawn uniformly from
//!   `d`, `n₀·ā/D = λ/(1 − e^{−λ})` with `λ = n₀·ā/d`, so `< 2` means `λ < 1.59`, a feature
//!   space over `n₀·ā/1.59` wide. The gradients' covariance over an FD buffer's worth of rows
//!   (`2m = 20`) is then close to diagonal, what AdaGrad keeps, and the sparse-time FD-SON
//!   member pays its shrinks and catch-ups over every touched column for little: measured
//!   5–7 times the grid's time (`train` wall, FD-SON + diag alone 1.08–1.09 s, the grid
//!   alone 0.15–0.20 s), for 0.4105 against 0.4173 progressive error on the
//!   generated `2^18`-feature stream (issue 27's, 1.10 views a feature) and nothing on issue
//!   30's `2^20`-feature stream (1.13; there it retires by 157,000 rows without leading).
//! * **The threshold 2** lies between those streams and the sparsest shared data set, r8 (7.14
//!   views a feature; w8a.shuf 46, a9a 128): on every shared file the default is unchanged.
//! * **A full sample**: an input of fewer than 1000 rows is short enough for FD-SON's cost not
//!   to matter, and `n₀·ā/D` is near 1 on any few rows; it keeps `auto-sparse` when sparse.
//!
//! The rule applies to a classifier's `auto` (the squared loss keeps its members), and only
//! when the sample was measured: a stream whose rows are not known before learning (dense
//! arrays in Python; VW text with `-q` interactions, whose crossed rows the pre-scan does not
//! build) keeps every member. The Python River classifier (`sketchlearn.river.Classifier`,
//! one dict per call, no rows ahead) does not apply the rule: its default names
//! [`Algorithm::AutoSparse`] outright, for speed in River's loop (issue 29; its module docs
//! give the errors), and `algo="auto"` there keeps every member.

#[cfg(doc)]
use super::LearnerConfig;
use super::{Algorithm, InputProfile, ValidLearnerConfig, SPARSITY_SAMPLE};
use rustc_hash::FxHashSet;

/// What the rule of [`sparse_data`] knows of the input's first rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SparsitySample {
    /// Examples read (at most [`SPARSITY_SAMPLE`]).
    pub rows: u64,
    /// Stored features over those examples.
    pub nnz: u64,
    /// Distinct features over those examples.
    pub distinct: u64,
}

impl SparsitySample {
    /// Whether these rows are sparse: `nnz/rows < distinct/10` (see the [module](self) docs).
    ///
    /// ```
    /// use sketchlearn::linear::SparsitySample;
    /// let rows = |rows, nnz, distinct| SparsitySample { rows, nnz, distinct };
    /// assert!(rows(1000, 11_600, 250).is_sparse()); // w8a: 11.6 of 250 features a row
    /// assert!(!rows(1000, 13_860, 108).is_sparse()); // a9a: 13.9 of 108
    /// assert!(!rows(5, 5, 5).is_sparse()); // fewer than 10 rows: never
    /// assert!(!rows(3, 0, 0).is_sparse());
    /// ```
    pub fn is_sparse(&self) -> bool {
        // ā < D/10 ⇔ 10·nnz < rows·D, in integers (no rounding at the threshold).
        self.distinct > 0
            && u128::from(self.nnz) * 10 < u128::from(self.rows) * u128::from(self.distinct)
    }

    /// Whether these rows are *very* sparse: a full sample ([`SPARSITY_SAMPLE`] rows) whose
    /// features were seen fewer than twice each on average, `nnz < 2·D` (see the
    /// [module](self) docs). Very sparse rows are sparse ([`Self::is_sparse`]).
    ///
    /// ```
    /// use sketchlearn::linear::SparsitySample;
    /// let rows = |rows, nnz, distinct| SparsitySample { rows, nnz, distinct };
    /// assert!(rows(1000, 50_000, 45_594).is_very_sparse()); // 50 of 2^18 a row: 1.10 views
    /// assert!(rows(1000, 19_997, 17_748).is_very_sparse()); // issue 30: 1.13 views
    /// assert!(!rows(1000, 56_521, 7_920).is_very_sparse()); // r8: 7.14 views a feature
    /// assert!(!rows(999, 50_000, 45_594).is_very_sparse()); // a short input: not judged
    /// ```
    pub fn is_very_sparse(&self) -> bool {
        self.rows >= SPARSITY_SAMPLE && self.nnz < 2 * self.distinct
    }
}

/// Counts the [`SparsitySample`] of a stream: feed it every example's feature indices in
/// order; it keeps the first [`SPARSITY_SAMPLE`] (its memory is at most their stored
/// features).
///
/// ```
/// use sketchlearn::linear::SparsityProbe;
/// let mut probe = SparsityProbe::default();
/// probe.observe(&[0, 3]);
/// probe.observe(&[3, 7, 9]);
/// let s = probe.sample().unwrap();
/// assert_eq!((s.rows, s.nnz, s.distinct), (2, 5, 4));
/// ```
#[derive(Clone, Debug, Default)]
pub struct SparsityProbe {
    rows: u64,
    nnz: u64,
    /// The distinct features seen: a bit per index below [`BITSET_INDICES`] (grown to the
    /// largest seen), a hash set for the others — the same count as one set of all, without
    /// hashing the indices of dense rows (a million look-ups for 1000 rows of d = 1000).
    bits: Vec<u64>,
    /// Bits set in `bits`.
    in_bits: u64,
    others: FxHashSet<u32>,
}

/// Indices below this are counted in the probe's bit set (at most 128 KiB).
const BITSET_INDICES: u32 = 1 << 20;

impl SparsityProbe {
    /// Counts one example (its stored features' indices) if the sample is not yet full.
    pub fn observe(&mut self, indices: &[u32]) {
        if self.rows >= SPARSITY_SAMPLE {
            return;
        }
        self.rows += 1;
        self.nnz += indices.len() as u64;
        for &i in indices {
            if i >= BITSET_INDICES {
                self.others.insert(i);
                continue;
            }
            let word = (i / 64) as usize;
            if word >= self.bits.len() {
                self.bits.resize(word + 1, 0);
            }
            let bit = 1u64 << (i % 64);
            self.in_bits += u64::from(self.bits[word] & bit == 0);
            self.bits[word] |= bit;
        }
    }

    /// The sample counted so far (`None` before any example).
    pub fn sample(&self) -> Option<SparsitySample> {
        (self.rows > 0).then_some(SparsitySample {
            rows: self.rows,
            nnz: self.nnz,
            distinct: self.in_bits + self.others.len() as u64,
        })
    }
}

/// Whether the default classifier takes its composition for sparse data on this input: its
/// first rows were measured and are sparse ([`SparsitySample::is_sparse`]).
pub fn sparse_data(input: &InputProfile) -> bool {
    input.sample.is_some_and(|s| s.is_sparse())
}

/// Whether the default classifier takes its composition for very sparse data on this input:
/// its first rows were measured and are very sparse ([`SparsitySample::is_very_sparse`]).
pub fn very_sparse_data(input: &InputProfile) -> bool {
    input.sample.is_some_and(|s| s.is_very_sparse())
}

impl ValidLearnerConfig {
    /// The members for this input: a classifier's [`Algorithm::Auto`] becomes
    /// [`Algorithm::AutoVerySparse`] when [`very_sparse_data`] says so, else
    /// [`Algorithm::AutoSparse`] when [`sparse_data`] says so; anything else is kept (a
    /// configuration that names its algorithm, regression, a resumed model's configuration).
    /// Called by [`ValidLearnerConfig::resolve`].
    ///
    /// ```
    /// use sketchlearn::linear::{Algorithm, InputProfile, LearnerConfig, SparsitySample};
    /// let valid = LearnerConfig::default().check().unwrap();
    /// let sample = SparsitySample { rows: 1000, nnz: 50_000, distinct: 45_594 };
    /// let input = InputProfile { dim: 1 << 18, hashed: false, avg_nnz: Some(50.0), sample: Some(sample) };
    /// assert_eq!(valid.choose_members(&input).config().algorithm, Algorithm::AutoVerySparse);
    /// let r8 = SparsitySample { rows: 1000, nnz: 56_521, distinct: 7_920 };
    /// let input = InputProfile { sample: Some(r8), ..input };
    /// assert_eq!(valid.choose_members(&input).config().algorithm, Algorithm::AutoSparse);
    /// let dense = InputProfile { sample: None, ..input };
    /// assert_eq!(valid.choose_members(&dense).config().algorithm, Algorithm::Auto);
    /// ```
    pub fn choose_members(&self, input: &InputProfile) -> ValidLearnerConfig {
        let config = self.config();
        if config.algorithm != Algorithm::Auto
            || !config.loss.is_classification()
            || !sparse_data(input)
        {
            return self.clone();
        }
        let mut config = config.clone();
        config.algorithm = if very_sparse_data(input) {
            Algorithm::AutoVerySparse
        } else {
            Algorithm::AutoSparse
        };
        config
            .check()
            .expect("auto-sparse and auto-very-sparse are valid wherever auto is, for a classifier")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashSet;

    proptest! {
        /// The probe's count of distinct features is a set's, for indices below and above the
        /// bit set's range, repeated within and across rows, past the sample's end.
        #[test]
        fn distinct_features_are_a_sets_count(
            rows in proptest::collection::vec(
                proptest::collection::vec(
                    prop_oneof![0u32..200, (BITSET_INDICES - 70)..(BITSET_INDICES + 70), any::<u32>()],
                    0..40,
                ),
                0..1100,
            )
        ) {
            let mut probe = SparsityProbe::default();
            let mut seen = HashSet::new();
            let (mut n, mut nnz) = (0u64, 0u64);
            for row in &rows {
                probe.observe(row);
                if n < SPARSITY_SAMPLE {
                    n += 1;
                    nnz += row.len() as u64;
                    seen.extend(row.iter().copied());
                }
            }
            let expected = (n > 0).then_some(SparsitySample { rows: n, nnz, distinct: seen.len() as u64 });
            prop_assert_eq!(probe.sample(), expected);
        }
    }
}
