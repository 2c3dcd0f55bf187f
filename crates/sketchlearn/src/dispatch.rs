//! The forwarding pattern of the crate's enums of learners ([`AnyLearner`](crate::linear::AnyLearner),
//! [`SparseLearner`](crate::linear::sparse::SparseLearner), [`AnyCurvature`](crate::linear::curvature::AnyCurvature),
//! [`AnyMulticlass`](crate::linear::multiclass::AnyMulticlass), [`AnyFm`](crate::fm::AnyFm)):
//! every variant holds one value, and a method of the enum calls the same method of that value.

/// Defines, in the calling module, a macro `$name!(value, x => expr)` that matches `value` (an
/// `$enum`) on every listed variant and evaluates `expr` with `x` bound to the variant's value.
/// `$d` is a `$` token passed by the caller (`enum_dispatch!($ dispatch, E { A, B })`), so
/// that the generated macro can declare its own metavariables.
macro_rules! enum_dispatch {
    ($d:tt $name:ident, $enum:ident { $($variant:ident),+ $(,)? }) => {
        macro_rules! $name {
            ($d value:expr, $d x:ident => $d e:expr) => {
                match $d value {
                    $( $enum::$variant($d x) => $d e, )+
                }
            };
        }
    };
}
pub(crate) use enum_dispatch;

/// Implements `OnlineLearner` for an enum of learners by forwarding `dim`, `predict`, `learn`,
/// `weights` and `prefetch` to the variant through the module's `$dispatch!` macro (made by
/// [`enum_dispatch`]); the methods in braces are added as written.
macro_rules! forward_online_learner {
    ($t:ty, $dispatch:ident { $($extra:tt)* }) => {
        impl OnlineLearner for $t {
            fn dim(&self) -> usize {
                $dispatch!(self, l => l.dim())
            }
            fn predict(&self, x: Row<'_>) -> f64 {
                $dispatch!(self, l => l.predict(x))
            }
            fn learn(&mut self, x: Row<'_>, y: f64, weight: f64) -> Result<f64, LearnError> {
                $dispatch!(self, l => l.learn(x, y, weight))
            }
            fn weights(&self) -> Cow<'_, [f64]> {
                $dispatch!(self, l => l.weights())
            }
            #[inline]
            fn prefetch(&self, x: Row<'_>) {
                $dispatch!(self, l => l.prefetch(x))
            }
            $($extra)*
        }
    };
}
pub(crate) use forward_online_learner;
