//! What the learners of a full quadratic model share ([`DenseConvexFm`](super::DenseConvexFm),
//! [`Ocg`](super::Ocg)): the score `z = âᵀΘâ` over the augmented row `â = [x; 1]` (Blondel et
//! al. 2015, eq. 3: a convex FM is a symmetric matrix `Θ` on `â`), the gradient
//! `∇_Θ ℓ = q·ââᵀ` with `q = ℓ'(z, y)` scaled by the example's weight, and the one divergence
//! policy: a non-finite score or a gradient whose largest entry `|q|·max_i â_i²` is beyond
//! [`MAX_STEP_SIZE`](super::MAX_STEP_SIZE) is refused ([`check_step`](super::check_step)) and
//! the model left as it was. How `Θ` moves with the gradient is each learner's own
//! ([`QuadraticFm::apply`]).

use crate::linear::LearnError;
use crate::loss::Loss;
use crate::Row;

/// A learner of a full quadratic model on `â` (see the module documentation).
pub(super) trait QuadraticFm {
    /// The number of features `d` (`â` has `d + 1` coordinates).
    fn features(&self) -> usize;
    /// The loss whose derivative scales the gradient.
    fn loss(&self) -> Loss;
    /// `âᵀΘâ` for the sparse `â` (`idx` increasing, the constant coordinate last).
    fn score(&self, idx: &[u32], val: &[f64]) -> f64;
    /// The reused buffers for `â`.
    fn buffers(&mut self) -> (&mut Vec<u32>, &mut Vec<f64>);
    /// Moves `Θ` with the gradient `q·ââᵀ` of an example scored `z` (the checks passed);
    /// returns the prediction.
    fn apply(&mut self, idx: &[u32], val: &[f64], z: f64, q: f64) -> Result<f64, LearnError>;
}

/// The accessors of [`QuadraticFm`] (`features`, `loss`, `buffers`) for a learner whose fields
/// are named `dim`, `loss`, `idx` and `val`.
macro_rules! quadratic_fm_fields {
    () => {
        fn features(&self) -> usize {
            self.dim
        }

        fn loss(&self) -> Loss {
            self.loss
        }

        fn buffers(&mut self) -> (&mut Vec<u32>, &mut Vec<f64>) {
            (&mut self.idx, &mut self.val)
        }
    };
}
pub(super) use quadratic_fm_fields;

/// `dim`, `predict` and `learn` of [`OnlineLearner`](crate::linear::OnlineLearner) for a
/// [`QuadraticFm`] with a field `dim` (the learner writes its own `weights`).
macro_rules! quadratic_fm_online {
    () => {
        fn dim(&self) -> usize {
            self.dim
        }

        fn predict(&self, x: Row<'_>) -> f64 {
            quadratic_step::predict(self, x)
        }

        fn learn(&mut self, x: Row<'_>, y: f64, weight: f64) -> Result<f64, LearnError> {
            quadratic_step::learn(self, x, y, weight)
        }
    };
}
pub(super) use quadratic_fm_online;

/// `âᵀΘâ` for the row `x` (features at or beyond `d` dropped).
pub(super) fn predict(l: &impl QuadraticFm, x: Row<'_>) -> f64 {
    let (idx, val) = super::augmented(x, l.features());
    l.score(&idx, &val)
}

/// One step: the example checked, `â` built in the reused buffers, scored, the gradient checked
/// and, when it passes, [`QuadraticFm::apply`]; the buffers are handed back either way.
pub(super) fn learn(
    l: &mut impl QuadraticFm,
    x: Row<'_>,
    y: f64,
    weight: f64,
) -> Result<f64, LearnError> {
    let d = l.features();
    let (idx, val) = {
        let (idx, val) = l.buffers();
        super::step_row(x, y, weight, d, idx, val)?
    };
    let z = l.score(&idx, &val);
    let q = weight * l.loss().derivative(z, y);
    let vmax = val.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    let result =
        super::check_step(z, q, q.abs() * vmax * vmax).and_then(|()| l.apply(&idx, &val, z, q));
    let buffers = l.buffers();
    (*buffers.0, *buffers.1) = (idx, val);
    result
}
