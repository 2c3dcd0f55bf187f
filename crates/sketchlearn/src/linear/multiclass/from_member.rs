//! A multiclass configuration from the binary learner's flags: the one mapping the CLI
//! (`--multiclass --reduction …`) and the Python estimators (`reduction=…`) share.

use super::{MulticlassConfig, Reduction};
use crate::linear::{Algorithm, CurvatureKind, LearnError, LearnerConfig};

/// The parameters whose softmax default differs from the binary learner's, as the user gave
/// them (`None`: the softmax default, [`MulticlassConfig::default`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SoftmaxGiven {
    /// `α₀` (CLI `--alpha0`, Python `alpha0`).
    pub alpha0: Option<f64>,
    /// `c` (CLI `--c`, Python `c`).
    pub c: Option<f64>,
    /// The curvature (CLI `--curvature`, Python `curvature`); `None`: chosen from the input
    /// ([`MulticlassConfig::sketch_from_input`]).
    pub curvature: Option<CurvatureKind>,
    /// The sketch size `m` (CLI `--size`, Python `size`); `None`:
    /// [`SOFTMAX_DEFAULT_SIZE`](super::SOFTMAX_DEFAULT_SIZE).
    pub size: Option<usize>,
}

impl MulticlassConfig {
    /// The multiclass configuration over the binary learner `member`.
    ///
    /// One-against-all trains `member` per class. Softmax is one sketched Newton learner that
    /// takes its sketch from `member` (`α`, clip, diagonal adaptation, intercept, seed, Oja's
    /// `c`) and the curvature, size, `α₀`, `c` from `given` when given; a curvature not given is
    /// chosen from the input by [`MulticlassConfig::for_input`]. A loss that is not for
    /// classification, or a first-order algorithm with softmax, is refused rather than
    /// silently ignored.
    ///
    /// ```
    /// use sketchlearn::linear::multiclass::{MulticlassConfig, Reduction, SoftmaxGiven};
    /// use sketchlearn::linear::{Algorithm, LearnerConfig};
    /// let member = LearnerConfig::default();
    /// let given = SoftmaxGiven { c: Some(0.5), size: Some(30), ..SoftmaxGiven::default() };
    /// let softmax = MulticlassConfig::from_member(Reduction::Softmax, member.clone(), given).unwrap();
    /// assert_eq!((softmax.size, softmax.c), (30, 0.5));
    /// assert_eq!(softmax.alpha0, MulticlassConfig::default().alpha0);
    /// assert!(softmax.sketch_from_input);
    /// let adagrad = LearnerConfig { algorithm: Algorithm::AdaGrad, ..member };
    /// assert!(MulticlassConfig::from_member(Reduction::Softmax, adagrad, given).is_err());
    /// ```
    pub fn from_member(
        reduction: Reduction,
        member: LearnerConfig,
        given: SoftmaxGiven,
    ) -> Result<Self, LearnError> {
        if !member.loss.is_classification() {
            return Err(LearnError::InvalidParameter(format!(
                "a multiclass model needs a classification loss, not {}",
                member.loss.name()
            )));
        }
        let d = MulticlassConfig::default();
        if reduction == Reduction::OneVsAll {
            return Ok(MulticlassConfig {
                reduction,
                member,
                ..d
            });
        }
        if !(member.algorithm.is_auto() || member.algorithm == Algorithm::Newton) {
            return Err(LearnError::InvalidParameter(format!(
                "the softmax reduction is one sketched Newton learner (SON); algorithm {} \
                 applies to one-against-all (oaa)",
                member.algorithm.name()
            )));
        }
        Ok(MulticlassConfig {
            reduction,
            curvature: given.curvature.unwrap_or(d.curvature),
            size: given.size.unwrap_or(d.size),
            sketch_from_input: given.curvature.is_none(),
            alpha: member.alpha,
            alpha0: given.alpha0.unwrap_or(d.alpha0),
            c: given.c.unwrap_or(d.c),
            clip: member.clip,
            bias: member.bias,
            bias_value: member.bias_value,
            seed: member.seed,
            diag: member.diag,
            diag_d0: member.diag_d0,
            member,
            ..d
        })
    }
}
