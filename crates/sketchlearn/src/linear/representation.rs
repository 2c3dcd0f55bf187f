//! The automatic choice between a dense learner and its sparse-time twin (SON §4): the
//! sparse-time learners cost `O(m² + m·nnz)` per example instead of `O(md)`, and compute the
//! same predictions (`tests/sparse_equivalence.rs`).

use super::{Algorithm, CurvatureKind, LearnerConfig};

/// Examples read for the automatic sparse/dense choice when the dimension is not taken from a
/// full pass over the input.
pub const SPARSITY_SAMPLE: u64 = 1000;

/// Whether a learner built from `config` for dimension `dim` should be the sparse-time one:
/// for a Newton learner (or `auto`) whose curvature has a sparse variant, yes when the input is
/// hashed (`hashed`: VW text, `d = 2^b`) or when the average number of non-zeros per example
/// (`avg_nnz`) is below `d/10`. FD/RFD additionally need `d ≥ 2m` (with the intercept).
///
/// ```
/// use sketchlearn::linear::{auto_sparse, LearnerConfig};
/// let auto = LearnerConfig::default();
/// assert!(auto_sparse(&auto, 10_000, false, Some(20.0)));
/// assert!(!auto_sparse(&auto, 100, false, Some(50.0)));
/// assert!(auto_sparse(&auto, 1 << 18, true, None));
/// ```
pub fn auto_sparse(config: &LearnerConfig, dim: usize, hashed: bool, avg_nnz: Option<f64>) -> bool {
    let Some(kind) = config.curvature.sparse_variant() else {
        return false;
    };
    if !matches!(config.algorithm, Algorithm::Newton | Algorithm::Auto)
        || config.curvature.is_sparse()
    {
        return false;
    }
    let fd = matches!(kind, CurvatureKind::FdSparse | CurvatureKind::RfdSparse);
    if fd && dim + usize::from(config.bias) < 2 * config.size {
        return false;
    }
    hashed || avg_nnz.is_some_and(|a| a < dim as f64 / 10.0)
}
