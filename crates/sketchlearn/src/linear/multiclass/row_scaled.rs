//! The softmax learner on rows divided by their running RMS norm: `α` (and RFD's `α₀`) counted
//! in units of the mean squared row norm, as for a single binary Newton learner
//! ([`RowScaling`](crate::linear::RowScaling)).
//!
//! # What the scaling does to the Newton step
//! The wrapped learner sees `x/r` (`r² = (1/t)Σ_s‖x_s‖²`, [`RowScale`]) with its intercept's
//! constant `b` appended unscaled, i.e. `x̃' = S⁻¹x̃` with `S = diag(r·I_d, 1)` and `x̃ = [x; b]`.
//! Write its weights as `W' = W·S` (so that the scores `W'x̃' = Wx̃` and hence `p` and `Γ` are
//! those of `W` on the original rows). Its feature-side factor is
//! `Φ' = αI + cΣ_s x̃'_s x̃'_sᵀ = S⁻¹(αS² + cF)S⁻¹`, `F = Σ_s x̃_s x̃_sᵀ`, and its step
//! ([`SoftmaxSon`](super::SoftmaxSon), `W' ← W' + u(Φ'⁻¹x̃')ᵀ`) is, on `W = W'S⁻¹`,
//!
//! ```text
//! ΔW = u (S(αS² + cF)⁻¹S·S⁻¹x̃)ᵀ S⁻¹ = u ((αS² + cF)⁻¹ x̃)ᵀ :
//! ```
//!
//! the softmax Newton step of SON Alg. 1 with the Kronecker-factored curvature
//! `Γ ⊗ (αS² + cF)` — the same learner whose regulariser on the feature block is `α·r²`, the
//! intercept's `α`. (With RFD `α = α₀ + Σδ/2` grows by the shrinkage of the scaled rows, so the
//! same holds with `α` the current one; the sketch approximates `cF` in the scaled coordinates.)
//!
//! # Why `α` in units of `‖x‖²` is the right invariance
//! `Φ = αI + cF` adds two things in different units: `F` is quadratic in the features, `α` is a
//! number. Multiplying every feature by `s` multiplies `F`'s feature block by `s²`, so an
//! absolute `α` means a different learner on each scale — along the `d̃ − m` directions the
//! sketch has not seen the step is `Φ⁻¹x̃ = x̃/α`, which moves the scores by `u·‖x̃_⊥‖²/α`: a
//! `23×` larger step on dna (`‖x‖² ≈ 45`) than on R8 (`‖x‖² = 1`) for the same `α`. With
//! `α·r²` both terms scale alike: on `s·x`, `r` becomes `s·r`, `αS² + cF` becomes
//! `T(αS² + cF)T` with `T = diag(s·I_d, 1)`, the step on `W` becomes `ΔW·T⁻¹`, and the scores
//! `W T⁻¹ (T x̃)` are unchanged — the learner's predictions do not depend on the unit of the
//! features (exactly, whatever the intercept's constant; tested). `α = 1` then means "one mean
//! row's worth of curvature", the size of the first example's own `cF`-term up to `c`: a step
//! that neither vanishes nor overshoots whatever the data's scale, which is what makes one
//! default `α₀` serve R8's unit rows and dna's 45 ones.
//!
//! `r_t` changes with `t`; the weights are not corrected when it does (as in `RowScaling`): on a
//! stationary stream `r_t` settles after a few rows. The scale costs `O(nnz)` per example (the
//! row's stored values), so the sparse-time learner stays sparse-time.

use super::{check_multiclass, LearnError, MulticlassLearner};
use crate::linear::rescaling::with_values;
use crate::linear::RowScale;
use crate::Row;
use serde::{Deserialize, Serialize};

/// A multiclass learner that sees rows divided by their running RMS norm (see the module
/// documentation); the softmax learners built by
/// [`MulticlassConfig`](super::MulticlassConfig) are wrapped in it.
///
/// ```
/// use sketchlearn::linear::curvature::FdCurvature;
/// use sketchlearn::linear::multiclass::{MulticlassLearner, RowScaled, SoftmaxParams, SoftmaxSon};
/// use sketchlearn::sketch::FdVariant;
/// use sketchlearn::Row;
/// // The same stream in two units gives the same probabilities.
/// let run = |unit: f64| {
///     let curvature = FdCurvature::rfd(3, 2, FdVariant::Doubling, 1.0).unwrap();
///     let son = SoftmaxSon::new(3, curvature, SoftmaxParams::default()).unwrap();
///     let mut l = RowScaled::new(son);
///     let mut p = Vec::new();
///     for t in 0..60 {
///         let x = [unit * ((t % 5) as f64 - 2.0), unit * ((t % 3) as f64 - 1.0)];
///         p = l.learn(Row::Dense(&x), t % 3, 1.0).unwrap();
///     }
///     p
/// };
/// let (a, b) = (run(1.0), run(1e4));
/// assert!(a.iter().zip(&b).all(|(x, y)| (x - y).abs() < 1e-9));
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RowScaled<L> {
    inner: L,
    scale: RowScale,
    #[serde(skip)]
    scaled: Vec<f64>,
}

impl<L: MulticlassLearner> RowScaled<L> {
    /// Wraps `inner` (same classes and dimension); no row seen yet.
    pub fn new(inner: L) -> Self {
        RowScaled {
            inner,
            scale: RowScale::default(),
            scaled: Vec::new(),
        }
    }

    /// The wrapped learner (which sees scaled rows).
    pub fn inner(&self) -> &L {
        &self.inner
    }

    /// The running row scale.
    pub fn scale(&self) -> &RowScale {
        &self.scale
    }

    /// Each class's weights on the original features, from the wrapped learner's (`K` rows of
    /// `d` feature weights then, when there is one, the intercept's): `W = W'S⁻¹`, the feature
    /// weights times `1/r`, the intercept's unchanged.
    pub fn original_weights(&self, inner: Vec<Vec<f64>>) -> Vec<Vec<f64>> {
        let (s, d) = (self.scale.inverse_scale(), self.inner.dim());
        inner
            .into_iter()
            .map(|row| {
                let (features, rest) = row.split_at(d.min(row.len()));
                features
                    .iter()
                    .map(|w| w * s)
                    .chain(rest.iter().copied())
                    .collect()
            })
            .collect()
    }

    /// `f` on `x` as the wrapped learner sees it (values times `1/r`, same indices).
    fn with_scaled<T>(&self, x: Row<'_>, f: impl FnOnce(Row<'_>) -> T) -> T {
        let mut v = Vec::new();
        self.scale.scaled_values(x, &mut v);
        f(with_values(x, &v))
    }
}

impl<L: MulticlassLearner> MulticlassLearner for RowScaled<L> {
    fn classes(&self) -> usize {
        self.inner.classes()
    }

    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn scores(&self, x: Row<'_>) -> Vec<f64> {
        self.with_scaled(x, |x| self.inner.scores(x))
    }

    fn predict_proba(&self, x: Row<'_>) -> Vec<f64> {
        self.with_scaled(x, |x| self.inner.predict_proba(x))
    }

    fn predict_class(&self, x: Row<'_>) -> usize {
        self.with_scaled(x, |x| self.inner.predict_class(x))
    }

    /// Validated first (an invalid example changes nothing, not even the scale); then the row
    /// joins the scale (the current row included, no label involved) and the wrapped learner
    /// learns the scaled row. A step it refuses leaves the row in the scale.
    fn learn(&mut self, x: Row<'_>, class: usize, weight: f64) -> Result<Vec<f64>, LearnError> {
        check_multiclass(&x, class, weight, self.dim(), self.classes())?;
        self.scale.observe(x);
        let mut v = std::mem::take(&mut self.scaled);
        self.scale.scaled_values(x, &mut v);
        let r = self.inner.learn(with_values(x, &v), class, weight);
        self.scaled = v;
        r
    }

    fn refused(&self) -> u64 {
        self.inner.refused()
    }

    fn examples_seen(&self) -> u64 {
        self.inner.examples_seen()
    }
}

impl<L: MulticlassLearner> RowScaled<L> {
    /// Checks a loaded wrapper's scale (finite, non-negative sums); the wrapped learner is
    /// checked by its own caller.
    pub(crate) fn check_scale(&self) -> Result<(), String> {
        if self.scale.is_valid() {
            Ok(())
        } else {
            Err(format!(
                "row scale {:?} is not one training makes",
                self.scale
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linear::curvature::FullCurvature;
    use crate::linear::multiclass::{SoftmaxParams, SoftmaxSon};

    fn son(d: usize, alpha: f64) -> SoftmaxSon<FullCurvature> {
        let p = SoftmaxParams {
            c: 0.5,
            ..SoftmaxParams::default()
        };
        SoftmaxSon::new(3, FullCurvature::new(d + 1, alpha).unwrap(), p).unwrap()
    }

    /// The module's derivation, step by step: with every row of norm 5 (`r = 5` from the first
    /// row on) the wrapped learner over the full curvature `αI + cΣx̃'x̃'ᵀ` takes, on the original
    /// weights, the steps `W ← W + u((αS² + cF)⁻¹x̃)ᵀ` with `S = diag(5, 5, 1)`, computed here
    /// directly on the original rows.
    #[test]
    fn the_step_is_newtons_with_alpha_r_squared_on_the_features() {
        use crate::linalg::SpdFactor;
        use crate::linear::multiclass::{normalize_log, ClassFactor};
        let (alpha, c, r) = (0.7, 0.5, 5.0);
        let rows = [
            [3.0, 4.0],
            [4.0, -3.0],
            [0.0, 5.0],
            [-5.0, 0.0],
            [3.0, -4.0],
        ];
        let mut l = RowScaled::new(son(2, alpha));
        let mut w = [[0.0; 3]; 3];
        let mut phi = [
            alpha * r * r,
            0.0,
            0.0,
            0.0,
            alpha * r * r,
            0.0,
            0.0,
            0.0,
            alpha,
        ];
        let mut gamma = ClassFactor::new(3, SoftmaxParams::default().ridge).unwrap();
        for (t, x) in rows.iter().cycle().take(40).enumerate() {
            let (y, xt) = (t % 3, [x[0], x[1], 1.0]);
            let z: Vec<f64> = w.iter().map(|wk| crate::linalg::dot(wk, &xt)).collect();
            let p = normalize_log(&z);
            let got = l.learn(Row::Dense(x), y, 1.0).unwrap();
            assert!(
                p.iter().zip(&got).all(|(a, b)| (a - b).abs() < 1e-10),
                "{p:?} {got:?}"
            );
            gamma.add(&p, 1.0);
            let mut u: Vec<f64> = (0..3).map(|k| p[k] - (k == y) as u8 as f64).collect();
            gamma.solve(&mut u).unwrap();
            for i in 0..3 {
                for j in 0..3 {
                    phi[i * 3 + j] += c * xt[i] * xt[j];
                }
            }
            let mut v = xt;
            SpdFactor::new(&phi, 3).unwrap().solve_in_place(&mut v);
            for (wk, uk) in w.iter_mut().zip(&u) {
                wk.iter_mut().zip(&v).for_each(|(wj, vj)| *wj -= uk * vj);
            }
        }
        let inner = l.inner().weights().chunks(3).map(<[f64]>::to_vec).collect();
        for (o, e) in l.original_weights(inner).iter().zip(&w) {
            assert!(
                o.iter().zip(e).all(|(a, b)| (a - b).abs() < 1e-10),
                "{o:?} {e:?}"
            );
        }
        assert_eq!(l.scale().inverse_scale(), 1.0 / r);
    }

    #[test]
    fn invalid_examples_change_nothing() {
        let mut l = RowScaled::new(son(2, 1.0));
        assert!(l.learn(Row::Dense(&[f64::NAN, 1.0]), 0, 1.0).is_err());
        assert!(l.learn(Row::Dense(&[1.0, 1.0]), 3, 1.0).is_err());
        assert_eq!(l.scale(), &RowScale::default());
        assert_eq!(l.examples_seen(), 0);
    }

    #[test]
    fn original_weights_divide_the_features_only() {
        let mut l = RowScaled::new(son(2, 1.0));
        l.learn(Row::Dense(&[3.0, 4.0]), 1, 1.0).unwrap();
        let w = l.inner().weights().to_vec();
        let rows: Vec<Vec<f64>> = w.chunks(3).map(<[f64]>::to_vec).collect();
        let orig = l.original_weights(rows.clone());
        for (o, r) in orig.iter().zip(&rows) {
            assert!((o[0] - r[0] / 5.0).abs() < 1e-15);
            assert!((o[1] - r[1] / 5.0).abs() < 1e-15);
            assert_eq!(o[2], r[2]);
        }
        // The original weights score the original row as the wrapped learner scores the scaled.
        let z = l.scores(Row::Dense(&[3.0, 4.0]));
        for (k, o) in orig.iter().enumerate() {
            assert!((o[0] * 3.0 + o[1] * 4.0 + o[2] - z[k]).abs() < 1e-12);
        }
    }
}
