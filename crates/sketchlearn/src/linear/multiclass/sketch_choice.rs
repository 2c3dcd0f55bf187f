//! The untuned softmax learner's sketch, chosen from the input (issue 24): the doubling FD
//! sketch with a fixed `α` on sparse input, the doubling RFD sketch (`α` grows with the energy
//! the sketch drops) on dense input.
//!
//! # Why the two sketches suit the two kinds of input
//! The step of [`SoftmaxSon`](super::SoftmaxSon) is `W ← W + u(Φ⁻¹x̃)ᵀ` with the feature-side
//! factor `Φ = αI + BᵀB` (SON Alg. 1 with the Kronecker-factored curvature, `softmax_son.rs`).
//! Along a direction `v` the sketch does not hold, the step is `vᵀx̃/α`: `α` stands in for the
//! curvature `vᵀ(cF − BᵀB)v` the sketch has dropped there (`F = Σ_s x̃_s x̃_sᵀ`).
//!
//! RFD (Luo et al., *Robust Frequent Directions with Application in Online Learning*,
//! Alg. 3–4) grows `α` by `σ_m²/2` at every shrink, and its Theorem 1–2 say why: among
//! `BᵀB + αI` with `m − 1` rows, `α = (σ_{k+1} + σ_d)/2` — the middle of the dropped
//! spectrum — is the best approximation of the previous `αI + BᵀB` in spectral norm. That
//! is the right `α` for a new row when the dropped energy is spread over the directions new
//! rows use:
//!
//! * **dense rows** (dna: 45 of 180 features on, mnist: 150 of 784): every row lies largely in
//!   the `d − m` dropped directions, each of which has been seen about as often as the others;
//!   their curvature is close to the middle of the dropped spectrum, and FD's fixed `α`
//!   (which ignores it) overshoots along them. Measured, `m = 20`, `c = 0.2`, `λ = 0.1`,
//!   `α = α₀ = 1` mean squared rows: dna 0.0734 (RFD) against 0.0829 (FD), mnist 0.1072
//!   against 0.1091.
//! * **sparse rows** (R8: 60 of 23,585 words per document): after `t` rows the dropped energy
//!   lies in a few thousand word directions, most of which a new row does not touch, and the
//!   words it does use have mostly been seen a few times (`σ_d = 0`: most directions never).
//!   Their dropped curvature is far below the middle of the dropped spectrum, which grows
//!   with `t`: RFD's `α` then damps every rare word's step like a step size decaying as
//!   `1/t`, which is what a text learner must not do. FD's `α` stays the prior curvature
//!   (one mean squared row), the step AdaGrad-like learners give a new feature. Measured, same
//!   parameters: R8 0.0387 (FD) against 0.0597 (RFD).
//!
//! "Sparse" is the representation rule's ([`InputProfile::is_sparse`]: hashed input, or fewer
//! than `d/10` non-zeros per example), the same that makes the Oja and RP learners sparse-time
//! (FD/RFD-SON are sparse-time below `d/(4m)`, [`auto_sparse`](crate::linear::auto_sparse)); the
//! sketch size `m = 20` is the same for both (m = 10: dna 0.0744, mnist 0.1142 with RFD;
//! R8 0.0390 with FD). The numbers and the commands are in `docs/results/multiclass.md`.
//!
//! The choice is made once, before the model is built, and only for a softmax learner whose
//! curvature and size the user did not give ([`MulticlassConfig::from_member`]); the model
//! records the curvature chosen, so a resumed model keeps it.

use super::MulticlassConfig;
use crate::linear::{CurvatureKind, InputProfile};

/// The softmax sketch size of the untuned default, both kinds of input.
pub const SOFTMAX_DEFAULT_SIZE: usize = 20;

/// The untuned softmax learner's curvature for this input (see the module documentation):
/// fd-fast on sparse input, rfd-fast on dense input.
///
/// ```
/// use sketchlearn::linear::multiclass::softmax_curvature_for;
/// use sketchlearn::linear::{CurvatureKind, InputProfile};
/// let profile = |dim, avg_nnz| InputProfile { dim, hashed: false, avg_nnz, sample: None };
/// assert_eq!(softmax_curvature_for(&profile(23_585, Some(60.0))), CurvatureKind::FdFast);
/// assert_eq!(softmax_curvature_for(&profile(180, Some(45.0))), CurvatureKind::RfdFast);
/// ```
pub fn softmax_curvature_for(input: &InputProfile) -> CurvatureKind {
    if input.is_sparse() {
        CurvatureKind::FdFast
    } else {
        CurvatureKind::RfdFast
    }
}

impl MulticlassConfig {
    /// This configuration with the softmax sketch settled for `input` when it is the untuned
    /// default's to choose ([`MulticlassConfig::sketch_from_input`]); otherwise unchanged.
    /// Afterwards `sketch_from_input` is false: the choice is made.
    pub(crate) fn with_sketch_for(mut self, input: &InputProfile) -> MulticlassConfig {
        if std::mem::take(&mut self.sketch_from_input) {
            self.curvature = softmax_curvature_for(input);
        }
        self
    }
}
