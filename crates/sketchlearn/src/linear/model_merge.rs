//! Merging learners chosen at run time ([`AnyLearner`]) and model files' states
//! ([`LinearModel`]): the dispatch to each learner's [`MergeShare`] (see [`crate::merge`] for
//! what is averaged, what is added and what is refused).

use super::{AnyLearner, LinearModel};
use crate::merge::{add_count, same, share_of, Merge, MergeError, MergeShare};

/// `base`'s variant, which must be the same as the merged states'.
macro_rules! base_of {
    ($base:expr, $variant:path) => {
        match $base {
            None => None,
            Some($variant(g)) => Some(g),
            Some(_) => {
                return Err(MergeError::Incompatible(
                    "the base is another learner".into(),
                ))
            }
        }
    };
}

impl MergeShare for AnyLearner {
    fn merge_share(
        &mut self,
        other: &Self,
        base: Option<&Self>,
        share: f64,
    ) -> Result<(), MergeError> {
        use AnyLearner::*;
        match (self, other) {
            (Ogd(a), Ogd(b)) => a.merge_share(b, base_of!(base, Ogd), share),
            (AdaGrad(a), AdaGrad(b)) => a.merge_share(b, base_of!(base, AdaGrad), share),
            (Newton(a), Newton(b)) => a.merge_share(b, base_of!(base, Newton), share),
            (Diagonal(a), Diagonal(b)) => a.merge_share(b, base_of!(base, Diagonal), share),
            (Intercept(a), Intercept(b)) => a.merge_share(b, base_of!(base, Intercept), share),
            (Mixture(a), Mixture(b)) => a.merge_share(b, base_of!(base, Mixture), share),
            (RunningMean(a), RunningMean(b)) => {
                a.merge_share(b, base_of!(base, RunningMean), share)
            }
            (TargetStandardization(a), TargetStandardization(b)) => {
                a.merge_share(b, base_of!(base, TargetStandardization), share)
            }
            (FeatureScaling(a), FeatureScaling(b)) => {
                a.merge_share(b, base_of!(base, FeatureScaling), share)
            }
            (RowScaling(a), RowScaling(b)) => a.merge_share(b, base_of!(base, RowScaling), share),
            (UnitScaling(a), UnitScaling(b)) => {
                a.merge_share(b, base_of!(base, UnitScaling), share)
            }
            (ScaledMixture(a), ScaledMixture(b)) => {
                a.merge_share(b, base_of!(base, ScaledMixture), share)
            }
            (Fixed(a), Fixed(b)) => {
                use super::OnlineLearner;
                same("fixed weights", a.weights(), b.weights())
            }
            (Sparse(a), Sparse(b)) => a.merge_share(b, base_of!(base, Sparse), share),
            (AdaFd(_), AdaFd(_)) | (Sketchy(_), Sketchy(_)) => Err(MergeError::Unsupported(
                "Ada-FD and Sketchy learners do not merge yet (their gradient sketches would \
                 need the FD merge over a common base)"
                    .into(),
            )),
            _ => Err(MergeError::Incompatible("different learners".into())),
        }
    }
}

impl Merge for LinearModel {
    /// The configurations must be equal; the learners are merged with `self`'s share of the
    /// examples learned since `base` ([`share_of`]) and the example counts add up.
    fn merge(&mut self, other: &Self, base: Option<&Self>) -> Result<(), MergeError> {
        same("configuration", &self.config, &other.config)?;
        if let Some(g) = base {
            same("configuration of the base", &self.config, &g.config)?;
        }
        let base_seen = base.map(|g| g.examples_seen);
        let share = share_of(
            self.examples_seen,
            other.examples_seen,
            base_seen.unwrap_or(0),
        );
        self.learner
            .merge_share(&other.learner, base.map(|g| &g.learner), share)?;
        self.examples_seen = add_count(self.examples_seen, other.examples_seen, base_seen);
        Ok(())
    }
}
