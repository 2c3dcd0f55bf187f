//! Merging learners chosen at run time ([`AnyLearner`]) and model files' states
//! ([`LinearModel`]): the dispatch to each learner's [`MergeShare`] (see [`crate::merge`] for
//! what is averaged, what is added and what is refused).

use super::{AnyLearner, LinearModel};
use crate::merge::{
    add_count, same, share_of, with_base, Merge, MergeError, MergeResult, MergeShare,
};

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

/// `$call` on the two learners `$a`, `$b` of the same variant, with `$g` the base's learner
/// (an error when the base is another variant); `$otherwise` for any other pair (the variants
/// not listed here are [`AnyLearner::Fixed`], Ada-FD and Sketchy).
macro_rules! per_variant {
    ($self:expr, $other:expr, $base:expr, |$a:ident, $b:ident, $g:ident| $call:expr, $otherwise:expr) => {
        per_variant!(@arms ($self, $other, $base, $a, $b, $g, $call, $otherwise)
            Ogd AdaGrad Newton Diagonal Intercept Mixture RunningMean TargetStandardization
            FeatureScaling RowScaling UnitScaling ScaledMixture Sparse)
    };
    (@arms ($self:expr, $other:expr, $base:expr, $a:ident, $b:ident, $g:ident, $call:expr,
            $otherwise:expr) $($v:ident)*) => {{
        use AnyLearner::*;
        match ($self, $other) {
            $(($v($a), $v($b)) => {
                let $g = unbox(base_of!($base, $v));
                $call
            })*
            _ => $otherwise,
        }
    }};
}

/// A boxed variant's base as the learner itself (the variants hold some learners boxed).
fn unbox<T, B: std::borrow::Borrow<T>>(base: Option<&B>) -> Option<&T> {
    base.map(B::borrow)
}

impl MergeShare for AnyLearner {
    /// Learners of the same kind, and a base of that kind: that learner's rules. Fixed
    /// weights merge only with the same weights; Ada-FD and Sketchy are refused.
    fn check_merge(&self, other: &Self, base: Option<&Self>) -> MergeResult {
        per_variant!(self, other, base, |a, b, g| a.check_merge(b, g), {
            match (self, other) {
                (Fixed(a), Fixed(b)) => {
                    use super::OnlineLearner;
                    base_of!(base, Fixed);
                    same("fixed weights", a.weights(), b.weights())
                }
                (AdaFd(_), AdaFd(_)) | (Sketchy(_), Sketchy(_)) => Err(MergeError::Unsupported(
                    "Ada-FD and Sketchy learners do not merge yet (their gradient sketches \
                     would need the FD merge over a common base)"
                        .into(),
                )),
                _ => Err(MergeError::Incompatible("different learners".into())),
            }
        })
    }

    fn merge_share(&mut self, other: &Self, base: Option<&Self>, share: f64) -> MergeResult {
        self.check_merge(other, base)?;
        // Fixed weights (equal, checked) need nothing; the others are refused by the check.
        per_variant!(
            self,
            other,
            base,
            |a, b, g| a.merge_share(b, g, share),
            Ok(())
        )
    }
}

impl Merge for LinearModel {
    /// The configurations must be equal; the learners are merged with `self`'s share of the
    /// examples learned since `base` ([`share_of`]) and the example counts add up.
    fn check_merge(&self, other: &Self, base: Option<&Self>) -> MergeResult {
        with_base(self, other, base, |a, b| {
            same("configuration", &a.config, &b.config)
        })?;
        self.learner
            .check_merge(&other.learner, base.map(|g| &g.learner))
    }

    fn merge(&mut self, other: &Self, base: Option<&Self>) -> Result<(), MergeError> {
        self.check_merge(other, base)?;
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
