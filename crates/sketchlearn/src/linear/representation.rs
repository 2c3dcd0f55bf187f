//! The library's choice between a dense learner and its sparse-time twin (SON §4): the
//! sparse-time learners cost `O(m² + m·nnz)` per example instead of `O(md)`, and compute the
//! same predictions (`tests/suite/sparse_equivalence.rs`). [`ValidLearnerConfig::resolve`] turns
//! [`Representation::Auto`] into `Dense` or `Sparse` from what is known of the input
//! ([`InputProfile`]) and says why ([`RepresentationChoice`]).
//!
//! # When the sparse-time FD/RFD learner pays (a measured cost rule)
//!
//! Per example the dense FD-SON learner costs `O(ℓd)` (`Bx`, `Bᵀz`, the row copied in, and
//! the shrink's `O(ℓ·m·d)` rotation every `ℓ − m + 1` examples), `ℓ = 2m`, plus the
//! `O(ℓ³)` eigendecomposition of the shrink, which the sparse-time learner pays too. The
//! sparse-time learner (SON §4) costs `O(m·nnz + m²)` plus, after every basis change, an
//! `O(m²)` catch-up for each column an example touches: about `m²·nnz` against `m·d`, so it
//! pays when `m·nnz` is a small fraction of `d`. Measured (branch a9a10, 2026-11-26,
//! `perf stat -e task-clock sketchlearn train --quiet --representation dense|sparse FILE`,
//! `m = 10`, the default's members): a9a (`d = 123`, 13.9 non-zeros) sparse 1.8× the dense
//! CPU; w8a (`d = 300`, 11.7) 1.3×; FD-SON + diag alone on w8a 1.5×; r8_earn_vs_rest
//! (`d = 23 585`, 58.3) 0.11×. On a log scale between w8a and r8 the ratio crosses 1 near
//! `nnz/d ≈ 0.026` at `m = 10`, so [`auto_sparse`] takes the sparse-time FD/RFD learner when
//! `m·nnz < d/4` ([`FD_SPARSE_FRACTION`]; `nnz < d/40` at `m = 10`: r8 and the generated
//! `2^18`-feature stream are sparse-time, w8a and a9a dense; only `m = 10` was measured). The
//! other sparse-time learners (Oja, RP: no shrink) keep the rule `nnz < d/10`
//! ([`InputProfile::is_sparse`]), as does the softmax learner's sketch.

use super::{LearnerConfig, Representation, SparsitySample, ValidLearnerConfig};
use std::fmt;

/// The FD/RFD learner is sparse-time when `m·nnz < d·FD_SPARSE_FRACTION` (see the
/// `linear/representation.rs` module docs for the measurements).
pub const FD_SPARSE_FRACTION: f64 = 0.25;

/// Examples read for the automatic sparse/dense choice when the dimension is not taken from a
/// full pass over the input.
pub const SPARSITY_SAMPLE: u64 = 1000;

/// What the automatic representation choice knows of the input.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InputProfile {
    /// The learner's dimension (without the intercept).
    pub dim: usize,
    /// Hashed input (VW text, `d = 2^bits`).
    pub hashed: bool,
    /// Average number of stored features per example, when measured.
    pub avg_nnz: Option<f64>,
    /// The first rows, when measured: whether the *data* are sparse, which decides the
    /// default's members ([`sparse_data`](super::sparse_data)).
    pub sample: Option<SparsitySample>,
}

/// How a configuration's representation was settled by [`ValidLearnerConfig::resolve`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RepresentationChoice {
    /// Given by the configuration (`Dense` or `Sparse`), or not applicable (OGD, AdaGrad,
    /// identity and full curvatures).
    Given,
    /// `Auto` chose the dense learner.
    Dense,
    /// `Auto` chose the sparse-time learner (named, e.g. `rfd-sparse`) for hashed input.
    SparseForHashedInput(&'static str),
    /// `Auto` chose the sparse-time learner for sparse input (`avg_nnz < d/10`; FD/RFD:
    /// `m·avg_nnz < d/4`).
    SparseForSparseInput(&'static str, f64),
}

impl fmt::Display for RepresentationChoice {
    /// The note reports print after the learner, e.g. `rfd-sparse: chosen for sparse input,
    /// 6.0 non-zeros/example` (empty when nothing was chosen sparse).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RepresentationChoice::Given | RepresentationChoice::Dense => Ok(()),
            RepresentationChoice::SparseForHashedInput(kind) => {
                write!(f, "{kind}: chosen for hashed VW input")
            }
            RepresentationChoice::SparseForSparseInput(kind, a) => write!(
                f,
                "{kind}: chosen for sparse input, {a:.1} non-zeros/example"
            ),
        }
    }
}

/// Whether [`Representation::Auto`] in `config` becomes `Sparse` for this input: for a Newton
/// learner (or `auto`) whose curvature has a sparse-time learner, yes when the input is hashed
/// or when the average number of non-zeros per example is below `d/10`; for FD/RFD below
/// `d/(4m)` (the measured cost rule in `linear/representation.rs`), and only when `d ≥ 2m`
/// (with the intercept). A representation given explicitly is not changed.
///
/// ```
/// use sketchlearn::linear::{auto_sparse, InputProfile, LearnerConfig};
/// let auto = LearnerConfig::default(); // RFD-SON, m = 10
/// let profile = |dim, hashed, avg_nnz| InputProfile { dim, hashed, avg_nnz, sample: None };
/// assert!(auto_sparse(&auto, &profile(10_000, false, Some(20.0))));
/// assert!(!auto_sparse(&auto, &profile(100, false, Some(50.0))));
/// assert!(!auto_sparse(&auto, &profile(300, false, Some(11.7)))); // w8a: dense is cheaper
/// assert!(auto_sparse(&auto, &profile(23_585, false, Some(58.3)))); // r8
/// assert!(auto_sparse(&auto, &profile(1 << 18, true, None)));
/// ```
pub fn auto_sparse(config: &LearnerConfig, input: &InputProfile) -> bool {
    if config.representation != Representation::Auto
        || !config.curvature.has_sparse_learner()
        || !config.algorithm.has_newton()
    {
        return false;
    }
    if !config.curvature.is_fd() {
        return input.is_sparse();
    }
    if !fd_sketch_fits(input.dim, config.bias, config.size) {
        return false;
    }
    input.hashed
        || input
            .avg_nnz
            .is_some_and(|a| config.size as f64 * a < input.dim as f64 * FD_SPARSE_FRACTION)
}

/// Whether a sparse-time FD/RFD learner of sketch size `m` can hold input of dimension `dim`
/// (with the intercept when `bias`): its buffer needs `d ≥ 2m` columns.
pub(crate) fn fd_sketch_fits(dim: usize, bias: bool, m: usize) -> bool {
    dim + usize::from(bias) >= 2 * m
}

impl InputProfile {
    /// Whether the input is sparse by the representation rule: hashed, or fewer than `d/10`
    /// non-zeros per example on average (what [`auto_sparse`] asks of the data, whatever the
    /// learner; the softmax learner's sketch is chosen by it too,
    /// [`MulticlassConfig::for_input`](crate::linear::multiclass::MulticlassConfig::for_input)).
    ///
    /// ```
    /// use sketchlearn::linear::InputProfile;
    /// let profile = |dim, hashed, avg_nnz| InputProfile { dim, hashed, avg_nnz, sample: None };
    /// assert!(profile(23_585, false, Some(60.0)).is_sparse());
    /// assert!(!profile(180, false, Some(45.0)).is_sparse());
    /// assert!(!profile(180, false, None).is_sparse());
    /// assert!(profile(1 << 18, true, None).is_sparse());
    /// ```
    pub fn is_sparse(&self) -> bool {
        self.hashed || self.avg_nnz.is_some_and(|a| a < self.dim as f64 / 10.0)
    }
}

impl ValidLearnerConfig {
    /// Settles [`Representation::Auto`] for an input ([`auto_sparse`]): the returned
    /// configuration says `Dense` or `Sparse` where the choice applies (Newton and `auto`
    /// with a curvature that has a sparse-time learner), so that a model built from it records
    /// what was chosen; the choice says why. The default's members are settled here too
    /// ([`choose_members`](Self::choose_members): `auto` becomes `auto-sparse` on sparse data).
    ///
    /// ```
    /// use sketchlearn::linear::{InputProfile, LearnerConfig, Representation};
    /// let valid = LearnerConfig::default().check().unwrap();
    /// let input = InputProfile { dim: 5000, hashed: false, avg_nnz: Some(12.0), sample: None };
    /// let (resolved, choice) = valid.resolve(&input);
    /// assert_eq!(resolved.representation, Representation::Sparse);
    /// assert_eq!(
    ///     choice.to_string(),
    ///     "rfd-sparse: chosen for sparse input, 12.0 non-zeros/example"
    /// );
    /// ```
    pub fn resolve(&self, input: &InputProfile) -> (ValidLearnerConfig, RepresentationChoice) {
        let members = self.choose_members(input);
        let mut config = members.config().clone();
        let applies = config.algorithm.has_newton() && config.curvature.has_sparse_learner();
        if config.representation != Representation::Auto || !applies {
            return (members, RepresentationChoice::Given);
        }
        let choice = if auto_sparse(&config, input) {
            let kind = config.curvature.sparse_name().unwrap_or("sparse");
            match input.avg_nnz {
                Some(a) if !input.hashed => RepresentationChoice::SparseForSparseInput(kind, a),
                _ => RepresentationChoice::SparseForHashedInput(kind),
            }
        } else {
            RepresentationChoice::Dense
        };
        config.representation = match choice {
            RepresentationChoice::Dense => Representation::Dense,
            _ => Representation::Sparse,
        };
        let resolved = config
            .check()
            .expect("a resolved representation keeps a valid configuration valid");
        (resolved, choice)
    }
}
