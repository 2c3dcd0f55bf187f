//! What [`FeatureScaling`](super::FeatureScaling) and [`RowScaling`](super::RowScaling) share:
//! the wrapped learner sees the example's values rescaled (same indices), the scale observes the
//! example (no label involved) before the step, and the weights are mapped back to the original
//! features. Only how the scale is kept differs (per feature or per row), so the
//! [`OnlineLearner`](super::OnlineLearner) impl is written once, by [`rescaling_learner`].

use crate::Row;

/// `x` with its values replaced by `values` (same indices; `values.len()` = the stored count).
pub(crate) fn with_values<'a>(x: Row<'a>, values: &'a [f64]) -> Row<'a> {
    match x {
        Row::Dense(_) => Row::Dense(values),
        Row::Sparse { indices, .. } => Row::Sparse { indices, values },
    }
}

/// The weights on the original features of a per-feature rescaling: the wrapped learner's
/// weight `i` times `inverse_scale(i)` (the scale the wrapped learner's feature `i` was divided
/// by).
pub(super) fn per_feature_weights(inner: &[f64], inverse_scale: impl Fn(usize) -> f64) -> Vec<f64> {
    inner
        .iter()
        .enumerate()
        .map(|(i, w)| w * inverse_scale(i))
        .collect()
}

/// The largest of `|1/s_i|` over the features seen and 1 (every other feature's factor), `+∞`
/// if one is NaN: the factor a per-feature rescaling multiplies a weight bound by.
pub(super) fn largest_inverse_scale(seen: impl Iterator<Item = f64>) -> f64 {
    seen.map(f64::abs).fold(
        1.0,
        |a, s| if s.is_nan() { f64::INFINITY } else { a.max(s) },
    )
}

/// Implements `OnlineLearner` for a rescaling wrapper `$t<L>` with fields `inner: L` and
/// `scaled: Vec<f64>` (a reused buffer) and inherent methods `observe(x)` (the example joins the
/// scale), `scaled_values(x, out)` (the rescaled values of `x`) and
/// `original_weights(&[f64]) -> Vec<f64>` (the wrapped learner's weights on the original
/// features). `rescaling_learner!($t, observe_scaled)` calls instead an inherent
/// `observe_scaled(x, out)` that does both at once (the same values as `observe` then
/// `scaled_values`).
macro_rules! rescaling_learner {
    ($t:ident) => {
        rescaling_learner!($t, observe_then_scale);

        impl<L: OnlineLearner> $t<L> {
            /// [`Self::observe`], then [`Self::scaled_values`] into `out`.
            fn observe_then_scale(&mut self, x: Row<'_>, out: &mut Vec<f64>) {
                self.observe(x);
                self.scaled_values(x, out);
            }
        }
    };
    ($t:ident, $observe_scaled:ident) => {
        impl<L: OnlineLearner> OnlineLearner for $t<L> {
            fn dim(&self) -> usize {
                self.inner.dim()
            }

            fn predict(&self, x: Row<'_>) -> f64 {
                let mut v = Vec::new();
                self.scaled_values(x, &mut v);
                self.inner.predict(with_values(x, &v))
            }

            fn learn(&mut self, x: Row<'_>, y: f64, weight: f64) -> Result<f64, LearnError> {
                // Validated first, so that an invalid example changes nothing; a step the
                // wrapped learner refuses (it keeps its state) still leaves the example in the
                // scale.
                check_example(&x, y, weight, self.dim())?;
                // The current example joins the scale first (no label involved).
                let mut v = std::mem::take(&mut self.scaled);
                self.$observe_scaled(x, &mut v);
                let result = self.inner.learn(with_values(x, &v), y, weight);
                self.scaled = v;
                result
            }

            #[inline]
            fn prefetch(&self, x: Row<'_>) {
                self.inner.prefetch(x);
            }

            /// The weights on the original features (see `original_weights`).
            fn weights(&self) -> Cow<'_, [f64]> {
                Cow::Owned(self.original_weights(&self.inner.weights()))
            }
        }
    };
}
pub(super) use rescaling_learner;
