//! SON's diagonal adaptation (§5.2) around a sparse-time softmax learner: the wrapped learner
//! sees `D^{−½}x̃`, `x̃ = [x; b]` with the intercept's constant appended, and
//! `D = d₀I + Σ_s diag(g_s g_sᵀ)` summed over the rows of the raw gradients
//! `G_s = ω_s(p_s − e_{y_s})x̃_sᵀ`, i.e. `D_jj = d₀ + Σ_s ω_s²‖p_s − e_{y_s}‖² x̃_{s,j}²`. The
//! same scaled row is used for prediction and update in a round; `D` is updated afterwards —
//! [`SoftmaxSon`](super::SoftmaxSon)'s own diagonal adaptation ([`SoftmaxParams::diag`]) step
//! for step, with the same arithmetic (`x_j/√(d₀ + g_j)`, tested to a tight tolerance in
//! `tests/sparse_softmax_rp_oja.rs`).
//!
//! Why a wrapper: scaling reads and writes `D` on the example's `nnz` coordinates only, so it
//! keeps the wrapped learner sparse-time (`O(nnz)` more per example); `D` is a
//! [`Touched`] array, saved and checked in proportion to the features seen. The wrapped learner
//! is built over `d̃` inputs without an intercept of its own (the wrapper appends it, so that
//! the intercept's coordinate is scaled too, as in the dense learner).
//!
//! [`SoftmaxParams::diag`]: super::SoftmaxParams::diag

use super::{check_multiclass, Extended, LearnError, MulticlassLearner};
use crate::linear::diagonal::restrict;
use crate::model::touched::Touched;
use crate::Row;
use serde::{Deserialize, Serialize};

/// A multiclass learner fed `D^{−½}x̃` (see the [module](self) documentation); what
/// [`MulticlassConfig`](super::MulticlassConfig) builds for a sparse-time softmax learner with
/// `diag`.
///
/// ```
/// use sketchlearn::linear::multiclass::{DiagonalScaled, MulticlassLearner, SoftmaxParams};
/// use sketchlearn::linear::sparse::SparseSoftmax;
/// use sketchlearn::Row;
/// // 3 classes over 1000 features and an intercept: the wrapped learner has 1001 inputs.
/// let inner = SoftmaxParams { bias: None, ..SoftmaxParams::default() };
/// let son = SparseSoftmax::rfd(3, 1001, 4, 1.0, 7, inner).unwrap();
/// let mut l = DiagonalScaled::new(son, Some(1.0), 0.1).unwrap();
/// assert_eq!(l.dim(), 1000);
/// for t in 0..30u32 {
///     let x = Row::Sparse { indices: &[t % 3, 900], values: &[1.0, 1e-3] };
///     l.learn(x, (t % 3) as usize, 1.0).unwrap();
/// }
/// assert_eq!(l.predict_class(Row::Sparse { indices: &[2], values: &[1.0] }), 2);
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DiagonalScaled<L> {
    inner: L,
    /// The input dimension `d` (the wrapped learner's is `d̃`).
    dim: usize,
    /// The intercept's constant, appended at index `d`.
    bias: Option<f64>,
    d0: f64,
    /// `D_jj − d₀` over the `d̃` coordinates.
    g2: Touched<1>,
    #[serde(skip)]
    ext: Extended,
    #[serde(skip)]
    scaled: Vec<f64>,
}

impl<L: MulticlassLearner> DiagonalScaled<L> {
    /// Wraps `inner` (over `d̃` inputs, without an intercept of its own), appending the
    /// intercept's constant `bias` (finite, `> 0`) when given; `d₀` finite and `> 0`.
    pub fn new(inner: L, bias: Option<f64>, d0: f64) -> Result<Self, LearnError> {
        if !(d0.is_finite() && d0 > 0.0) {
            return Err(LearnError::InvalidParameter(format!(
                "diagonal initialisation d0 must be finite and > 0, got {d0}"
            )));
        }
        if let Some(b) = bias.filter(|b| !(b.is_finite() && *b > 0.0)) {
            return Err(LearnError::InvalidParameter(format!(
                "the intercept's constant feature must be finite and > 0, got {b}"
            )));
        }
        let de = inner.dim();
        let dim = de.checked_sub(bias.is_some() as usize).ok_or_else(|| {
            LearnError::InvalidParameter("with an intercept the learner needs d + 1 ≥ 1".into())
        })?;
        Ok(DiagonalScaled {
            inner,
            dim,
            bias,
            d0,
            g2: Touched::new(de),
            ext: Extended::default(),
            scaled: Vec::new(),
        })
    }

    /// The wrapped learner (which sees scaled rows).
    pub fn inner(&self) -> &L {
        &self.inner
    }

    /// Each class's weights on `x̃` from the wrapped learner's (on `D^{−½}x̃`): `w_j/√D_jj`.
    pub fn original_weights(&self, inner: Vec<Vec<f64>>) -> Vec<Vec<f64>> {
        let g2 = self.g2.array(0);
        inner
            .into_iter()
            .map(|row| {
                row.iter()
                    .zip(g2)
                    .map(|(w, g)| w / (self.d0 + g).sqrt())
                    .collect()
            })
            .collect()
    }

    /// Checks a loaded wrapper (issue 26): `d₀` and the intercept valid, `D` over the wrapped
    /// learner's `d̃` coordinates, finite and non-negative; the wrapped learner is checked by
    /// the caller.
    pub(crate) fn check_loaded(&self) -> Result<(), String> {
        let extra = self.bias.is_some() as usize;
        let valid = |v: f64| v.is_finite() && v > 0.0;
        if !valid(self.d0) || self.bias.is_some_and(|b| !valid(b)) {
            return Err(format!(
                "diagonal adaptation with d0 = {} and intercept {:?}",
                self.d0, self.bias
            ));
        }
        if self.g2.len() != self.inner.dim() || self.dim + extra != self.g2.len() {
            return Err(format!(
                "diagonal statistics of {} entries for dimension {} (+{extra}) and a learner of \
                 dimension {}",
                self.g2.len(),
                self.dim,
                self.inner.dim()
            ));
        }
        let g2 = self.g2.array(0);
        match self
            .g2
            .features()
            .into_iter()
            .find(|&j| !(g2[j] >= 0.0 && g2[j].is_finite()))
        {
            Some(j) => Err(format!("diagonal statistic {j} is {}", g2[j])),
            None => Ok(()),
        }
    }
}

impl<L: MulticlassLearner> MulticlassLearner for DiagonalScaled<L> {
    fn classes(&self) -> usize {
        self.inner.classes()
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn scores(&self, x: Row<'_>) -> Vec<f64> {
        let (mut ext, mut scaled) = (Extended::default(), Vec::new());
        let xt = ext.row(restrict(x, self.dim), self.dim, self.bias);
        let xs = super::softmax_son::scale_row(xt, self.d0, self.g2.array(0), &mut scaled);
        self.inner.scores(xs)
    }

    fn predict_proba(&self, x: Row<'_>) -> Vec<f64> {
        super::normalize_log(&self.scores(x))
    }

    /// Validated first (an invalid example changes nothing); the wrapped learner learns the
    /// scaled row, then `D` takes the raw gradient's rows (not after a refused step, as the
    /// dense learner).
    fn learn(&mut self, x: Row<'_>, class: usize, weight: f64) -> Result<Vec<f64>, LearnError> {
        check_multiclass(&x, class, weight, self.dim, self.classes())?;
        let (mut ext, mut scaled) = (
            std::mem::take(&mut self.ext),
            std::mem::take(&mut self.scaled),
        );
        let xt = ext.row(x, self.dim, self.bias);
        let xs = super::softmax_son::scale_row(xt, self.d0, self.g2.array(0), &mut scaled);
        let r = self.inner.learn(xs, class, weight);
        if let Ok(p) = &r {
            let f = super::softmax_son::gradient_rows_factor(p, class, weight);
            crate::linear::sparse::for_each_nz(xt, |j, v| {
                let next = self.g2.at(j)[0] + f * v * v;
                self.g2.set(j, [next]);
            });
        }
        (self.ext, self.scaled) = (ext, scaled);
        r
    }

    fn refused(&self) -> u64 {
        self.inner.refused()
    }

    fn examples_seen(&self) -> u64 {
        self.inner.examples_seen()
    }
}
