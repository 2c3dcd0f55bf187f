//! Diagonal adaptation (SON paper §5.2): any learner is fed `D_t^{−½}x_t` with
//! `D_t = d₀I + Σ_{s<t} diag(g_s g_sᵀ)` built from the raw gradients `g_s = ℓ'(p_s)x_s`
//! (`d₀ = 0.1` in the paper). The same scaled example is used for prediction and update in round
//! `t`; `D` is updated afterwards (DESIGN.md §4 item 10). Per example `O(nnz)` on top of the
//! wrapped learner.

use super::rescaling::{largest_inverse_scale, with_values};
use super::{LearnError, OnlineLearner};
use crate::loss::Loss;
use crate::merge::{MergeResult, MergeShare};
use crate::model::touched::Touched;
use crate::Row;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// Wraps a learner with SON's diagonal adaptation.
///
/// ```
/// use sketchlearn::linear::{AdaGrad, DiagonalAdaptation, OnlineLearner};
/// use sketchlearn::loss::Loss;
/// use sketchlearn::Row;
/// let inner = AdaGrad::new(2, Loss::Logistic, 0.5).unwrap();
/// let mut diag = DiagonalAdaptation::new(inner, Loss::Logistic, 0.1).unwrap();
/// diag.learn(Row::Dense(&[1000.0, 0.001]), 1.0, 1.0).unwrap();
/// assert!(diag.predict(Row::Dense(&[1000.0, 0.001])) > 0.0);
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DiagonalAdaptation<L> {
    inner: L,
    loss: Loss,
    d0: f64,
    /// `D_ii − d₀` (the accumulated squared gradients; saved and checked in proportion to the
    /// features touched).
    g2: Touched<1>,
    #[serde(skip)]
    scaled: Vec<f64>,
}

impl<L: OnlineLearner> DiagonalAdaptation<L> {
    /// Wraps `inner`; `loss` computes the raw gradients; `d₀ > 0` (paper: 0.1).
    pub fn new(inner: L, loss: Loss, d0: f64) -> Result<Self, LearnError> {
        if !(d0.is_finite() && d0 > 0.0) {
            return Err(LearnError::InvalidParameter(format!(
                "diagonal initialisation d0 must be finite and > 0, got {d0}"
            )));
        }
        let d = inner.dim();
        Ok(DiagonalAdaptation {
            inner,
            loss,
            d0,
            g2: Touched::new(d),
            scaled: Vec::new(),
        })
    }

    /// The wrapped learner (which sees scaled features).
    pub fn inner(&self) -> &L {
        &self.inner
    }

    /// The wrapped learner, to change (a mixture's retirement threshold: `any.rs`).
    pub(super) fn inner_mut(&mut self) -> &mut L {
        &mut self.inner
    }

    fn scale(&self, i: usize) -> f64 {
        1.0 / (self.d0 + self.g2.array(0)[i]).sqrt()
    }

    /// The scale `1/√D_ii` of feature `i`, `None` beyond the stored entries.
    pub(crate) fn scale_at(&self, i: usize) -> Option<f64> {
        (i < self.g2.len()).then(|| self.scale(i))
    }

    /// The features whose `D_ii` is not `d₀` (every other feature's scale is `1/√d₀`).
    pub(crate) fn adapted_columns(&self) -> impl Iterator<Item = u32> + '_ {
        let g2 = self.g2.array(0);
        self.g2
            .features()
            .into_iter()
            .filter(move |&i| g2[i] != 0.0)
            .map(|i| i as u32)
    }

    /// The largest scale `1/√D_ii` (`+∞` if one is NaN), from the adapted features and the
    /// others' `1/√d₀`, or 1 if larger: a factor that bounds the weights' growth under this
    /// wrapper, in `O(features adapted)`.
    pub(crate) fn largest_scale(&self) -> f64 {
        let adapted = self.adapted_columns().map(|j| self.scale(j as usize));
        largest_inverse_scale(std::iter::once(self.d0.sqrt().recip()).chain(adapted))
    }

    /// Writes the scaled values of `x` into `out` (same indices).
    fn scaled_values(&self, x: Row<'_>, out: &mut Vec<f64>) {
        out.clear();
        match x {
            Row::Dense(v) => out.extend(v.iter().enumerate().map(|(i, xi)| xi * self.scale(i))),
            Row::Sparse { indices, values } => {
                // Gather `D_ii − d₀` first, then scale in a separate loop over contiguous
                // values, which LLVM vectorises (four square roots and divisions per
                // instruction with AVX2, see `scale_in_place`).
                let g2 = self.g2.array(0);
                out.extend(indices.iter().map(|&i| g2[i as usize]));
                scale_in_place(out, values, self.d0);
            }
        }
    }
}

impl<L: OnlineLearner> OnlineLearner for DiagonalAdaptation<L> {
    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn predict(&self, x: Row<'_>) -> f64 {
        let x = restrict(x, self.g2.len());
        let mut v = Vec::new();
        self.scaled_values(x, &mut v);
        self.inner.predict(with_values(x, &v))
    }

    fn learn(&mut self, x: Row<'_>, y: f64, weight: f64) -> Result<f64, LearnError> {
        // The wrapped learner's columns are prefetched here too: `D`'s entries are read right
        // away, and the wrapped learner's own hint would come only after that.
        self.prefetch(x);
        // The wrapped learner checks the example (label, weight, finite values: a non-finite
        // value stays non-finite when scaled) before changing anything; here only the indices
        // must be checked before `D` is read.
        let need = x.max_index_plus_one();
        if need > self.g2.len() {
            return Err(LearnError::DimensionMismatch {
                index: need - 1,
                dim: self.g2.len(),
            });
        }
        let mut v = std::mem::take(&mut self.scaled);
        self.scaled_values(x, &mut v);
        let result = self.inner.learn(with_values(x, &v), y, weight);
        self.scaled = v;
        let p = result?;
        let dl = weight * self.loss.derivative(p, y);
        if dl != 0.0 {
            x.for_each_entry(|i, xi| {
                let g = dl * xi;
                let next = self.g2.array(0)[i] + g * g;
                if next.is_finite() {
                    self.g2.set(i, [next]);
                }
            });
        }
        Ok(p)
    }

    /// Loads the example's `D_ii` entries and forwards the hint to the wrapped learner.
    #[inline]
    fn prefetch(&self, x: Row<'_>) {
        self.prefetch_own(x);
        self.inner.prefetch(x);
    }

    fn weights(&self) -> Cow<'_, [f64]> {
        let w = self.inner.weights();
        Cow::Owned(
            w.iter()
                .enumerate()
                .map(|(i, wi)| wi * self.scale(i))
                .collect(),
        )
    }
}

impl<L> DiagonalAdaptation<L> {
    /// Loads the example's `D_ii` entries (a random access per feature into a `d`-long table).
    #[inline]
    fn prefetch_own(&self, x: Row<'_>) {
        super::prefetch::prefetch_entries(self.g2.array(0), x);
    }
}

/// Drops features at or beyond `dim` (prediction ignores unseen features).
pub(crate) fn restrict(x: Row<'_>, dim: usize) -> Row<'_> {
    match x {
        Row::Dense(v) => Row::Dense(&v[..v.len().min(dim)]),
        Row::Sparse { indices, values } => {
            let n = indices.partition_point(|&i| (i as usize) < dim);
            Row::Sparse {
                indices: &indices[..n],
                values: &values[..n],
            }
        }
    }
}

/// `out_i ← x_i / √(d₀ + out_i)` (on entry `out_i` holds `D_ii`), computed as
/// `x_i·(1/√(d₀ + out_i))` like [`DiagonalAdaptation::scale`].
#[inline(always)]
fn scale_generic(out: &mut [f64], values: &[f64], d0: f64) {
    for (o, xi) in out.iter_mut().zip(values) {
        *o = xi * (1.0 / (d0 + *o).sqrt());
    }
}

/// [`scale_generic`] compiled for AVX2: square roots and divisions four per instruction instead
/// of two (on r8_earn_vs_rest, 60 non-zeros, sparse Oja-SON + diagonal went from 0.96 M to
/// 1.01 M examples/s). Square root and division are correctly rounded in both instruction sets,
/// so the results are the same to the bit (test below).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn scale_avx2(out: &mut [f64], values: &[f64], d0: f64) {
    scale_generic(out, values, d0)
}

/// The scaling loop of a sparse row, with the AVX2 copy when the CPU has it.
fn scale_in_place(out: &mut [f64], values: &[f64], d0: f64) {
    #[cfg(target_arch = "x86_64")]
    if super::sparse::has_avx2() {
        // SAFETY: the CPU supports AVX2 (checked above).
        return unsafe { scale_avx2(out, values, d0) };
    }
    scale_generic(out, values, d0)
}

/// The wrapped learners merged; `D`'s squared-gradient sums added ([`crate::merge`]). The
/// wrapped weights live in each shard's scaled coordinates `D^{−½}x`; averaging them with the
/// merged `D` is an approximation (exact when the shards' `D` agree), as for any adaptive
/// learner mixed by parameter averaging.
impl<L: MergeShare> MergeShare for DiagonalAdaptation<L> {
    fn check_merge(&self, other: &Self, base: Option<&Self>) -> MergeResult {
        crate::merge::with_base(self, other, base, |a, b| {
            crate::merge::same("dimension", a.g2.len(), b.g2.len())?;
            crate::merge::same("d0", a.d0.to_bits(), b.d0.to_bits())
        })?;
        self.inner.check_merge(&other.inner, base.map(|b| &b.inner))
    }

    fn merge_share(&mut self, other: &Self, base: Option<&Self>, share: f64) -> MergeResult {
        self.check_merge(other, base)?;
        self.inner
            .merge_share(&other.inner, base.map(|b| &b.inner), share)?;
        self.g2.update_all(|[g2]| {
            crate::merge::add_since(g2, other.g2.array(0), base.map(|b| b.g2.array(0)));
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linear::first_order::tests::learn_a_few;
    use crate::linear::AdaGrad;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// Saving and the load check's scale bound read only the adapted features (issue 26).
    #[test]
    fn only_the_adapted_features_are_read() {
        let inner = AdaGrad::new(4096, Loss::Logistic, 0.5).unwrap();
        let mut diag = DiagonalAdaptation::new(inner, Loss::Logistic, 0.1).unwrap();
        learn_a_few(&mut diag);
        let (bytes, bound) = (postcard::to_allocvec(&diag).unwrap(), diag.largest_scale());
        assert_eq!(bound, 0.1f64.sqrt().recip());
        assert_eq!(diag.adapted_columns().count(), 9);
        diag.g2.poison_untouched();
        assert_eq!(postcard::to_allocvec(&diag).unwrap(), bytes);
        assert_eq!(diag.largest_scale(), bound);
    }

    #[test]
    fn dispatched_scaling_equals_the_plain_loop_to_the_bit() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
        for n in 0..40 {
            let values: Vec<f64> = (0..n).map(|_| rng.random_range(-5.0..5.0)).collect();
            let d: Vec<f64> = (0..n).map(|_| rng.random_range(0.0..1e3)).collect();
            let d0 = rng.random_range(1e-3..2.0);
            let mut got = d.clone();
            scale_in_place(&mut got, &values, d0);
            let mut want = d.clone();
            scale_generic(&mut want, &values, d0);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&got), bits(&want), "n = {n}");
            for ((g, x), di) in got.iter().zip(&values).zip(&d) {
                assert_eq!(g.to_bits(), (x * (1.0 / (d0 + di).sqrt())).to_bits());
            }
        }
    }
}
