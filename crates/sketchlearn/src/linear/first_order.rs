//! First-order baselines: online gradient descent (Zinkevich 2003) and diagonal AdaGrad (Duchi,
//! Hazan & Singer 2011).

use super::{check_example, weight_ok, LearnError, OnlineLearner};
use crate::loss::Loss;
use crate::merge::{MergeResult, MergeShare};
use crate::model::interleaved::Interleaved;
use crate::model::touched::Touched;
use crate::Row;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// Step-size schedule of [`Ogd`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum StepSchedule {
    /// `η_t = η`.
    Constant,
    /// `η_t = η/√t`.
    InverseSqrt,
}

/// Online gradient descent `w ← w − η_t ℓ'(p) x`, optionally followed (before each prediction)
/// by the Euclidean projection onto `{|wᵀx_t| ≤ C}` (the SON projection with `A = I`).
///
/// ```
/// use sketchlearn::linear::{Ogd, OnlineLearner, StepSchedule};
/// use sketchlearn::loss::Loss;
/// use sketchlearn::Row;
/// let mut ogd = Ogd::new(2, Loss::Squared, 0.5, StepSchedule::Constant, f64::INFINITY).unwrap();
/// let p = ogd.learn(Row::Dense(&[1.0, 0.0]), 2.0, 1.0).unwrap();
/// assert_eq!(p, 0.0);
/// assert_eq!(ogd.weights()[0], 1.0); // 0 − 0.5·(0 − 2)·1
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Ogd {
    /// The weights (written as one sparse array; saved and checked in proportion to the
    /// features touched).
    w: Touched<1>,
    loss: Loss,
    eta: f64,
    schedule: StepSchedule,
    clip: f64,
    t: u64,
}

impl Ogd {
    /// `η > 0`, projection bound `C > 0` (∞ = none).
    pub fn new(
        dim: usize,
        loss: Loss,
        eta: f64,
        schedule: StepSchedule,
        clip: f64,
    ) -> Result<Self, LearnError> {
        if !(eta.is_finite() && eta > 0.0) {
            return Err(LearnError::InvalidParameter(format!(
                "learning rate must be finite and > 0, got {eta}"
            )));
        }
        if clip.is_nan() || clip <= 0.0 {
            return Err(LearnError::InvalidParameter(format!(
                "projection bound C must be > 0 (inf = none), got {clip}"
            )));
        }
        Ok(Ogd {
            w: Touched::new(dim),
            loss,
            eta,
            schedule,
            clip,
            t: 0,
        })
    }
}

impl Ogd {
    /// `max_i |w_i|` (`+∞` if a weight is NaN) from the touched features: `O(touched)`.
    pub(crate) fn largest_weight(&self) -> f64 {
        largest_at(self.w.array(0), self.w.features())
    }
}

/// `max |w_i|` over the features `at` (`+∞` if one is NaN).
pub(crate) fn largest_at(w: &[f64], at: Vec<usize>) -> f64 {
    super::validate::largest(at.into_iter().map(|i| w[i]))
}

impl OnlineLearner for Ogd {
    fn dim(&self) -> usize {
        self.w.len()
    }

    fn predict(&self, x: Row<'_>) -> f64 {
        crate::linear::clip_score(x.dot(self.w.array(0)), self.clip)
    }

    fn learn(&mut self, x: Row<'_>, y: f64, weight: f64) -> Result<f64, LearnError> {
        check_example(&x, y, weight, self.w.len())?;
        self.t += 1;
        let mut p = x.dot(self.w.array(0));
        if p.abs() > self.clip {
            let xx = x.squared_norm();
            if xx > 0.0 {
                let tau = p.signum() * (p.abs() - self.clip);
                self.w.axpy(-tau / xx, x);
                p -= tau;
            }
        }
        let eta = match self.schedule {
            StepSchedule::Constant => self.eta,
            StepSchedule::InverseSqrt => self.eta / (self.t as f64).sqrt(),
        };
        let step = -eta * weight * self.loss.derivative(p, y);
        if step != 0.0 {
            let w = self.w.array(0);
            let finite = match x {
                Row::Dense(v) => v.iter().zip(w).all(|(xi, wi)| weight_ok(wi + step * xi)),
                Row::Sparse { indices, values } => indices
                    .iter()
                    .zip(values)
                    .all(|(&i, xi)| weight_ok(w[i as usize] + step * xi)),
            };
            if !finite {
                return Err(LearnError::Diverged(format!(
                    "OGD step, example {}",
                    self.t
                )));
            }
            self.w.axpy(step, x);
        }
        Ok(p)
    }

    fn weights(&self) -> Cow<'_, [f64]> {
        Cow::Borrowed(self.w.array(0))
    }
}

/// Diagonal AdaGrad: `G_i += g_i²`, `w_i ← w_i − η g_i/√G_i` (coordinates never touched stay
/// at 0). Per example `O(nnz)`.
///
/// ```
/// use sketchlearn::linear::{AdaGrad, OnlineLearner};
/// use sketchlearn::loss::Loss;
/// use sketchlearn::Row;
/// let mut ada = AdaGrad::new(1, Loss::Squared, 1.0).unwrap();
/// ada.learn(Row::Dense(&[2.0]), 1.0, 1.0).unwrap();
/// // g = (0 − 1)·2 = −2, G = 4, w = 0 − 1·(−2)/2 = 1.
/// assert_eq!(ada.weights()[0], 1.0);
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AdaGrad {
    /// Per feature: the weight `w_i` and `G_i`, side by side (one cache line per feature: a
    /// step reads and writes both; written as two sparse arrays, the bytes of the two separate
    /// arrays kept before; saved and checked in proportion to the features touched).
    coords: Interleaved,
    loss: Loss,
    eta: f64,
}

impl AdaGrad {
    /// Learning rate `η > 0`.
    pub fn new(dim: usize, loss: Loss, eta: f64) -> Result<Self, LearnError> {
        if !(eta.is_finite() && eta > 0.0) {
            return Err(LearnError::InvalidParameter(format!(
                "learning rate must be finite and > 0, got {eta}"
            )));
        }
        Ok(AdaGrad {
            coords: Interleaved::new(dim),
            loss,
            eta,
        })
    }

    fn update_coord(&mut self, i: usize, g: f64) -> Result<(), LearnError> {
        if g == 0.0 {
            return Ok(());
        }
        let [w, g2] = self.coords.at(i);
        let g2 = g2 + g * g;
        if g2 == 0.0 {
            // g² underflowed (|g| < 1e-162, e.g. a saturated logistic derivative): no step.
            return Ok(());
        }
        let w = w - self.eta * g / g2.sqrt();
        if !(g2.is_finite() && weight_ok(w)) {
            return Err(LearnError::Diverged(format!("AdaGrad coordinate {i}")));
        }
        self.coords.set(i, [w, g2]);
        Ok(())
    }

    /// `max_i |w_i|` (`+∞` if a weight is NaN) from the touched features: `O(touched)`.
    pub(crate) fn largest_weight(&self) -> f64 {
        let w = self.coords.pairs();
        super::validate::largest(self.coords.features().into_iter().map(|i| w[i][0]))
    }
}

impl OnlineLearner for AdaGrad {
    fn dim(&self) -> usize {
        self.coords.len()
    }

    fn predict(&self, x: Row<'_>) -> f64 {
        self.coords.dot_first(x)
    }

    /// Loads the example's `(w_i, G_i)` pairs (one random access per feature into a `d`-long
    /// table: on a wide sparse stream most of AdaGrad's time is waiting for them).
    #[inline]
    fn prefetch(&self, x: Row<'_>) {
        super::prefetch::prefetch_entries(self.coords.pairs(), x);
    }

    fn learn(&mut self, x: Row<'_>, y: f64, weight: f64) -> Result<f64, LearnError> {
        check_example(&x, y, weight, self.coords.len())?;
        let p = self.coords.dot_first(x);
        let dl = weight * self.loss.derivative(p, y);
        if dl != 0.0 {
            match x {
                Row::Dense(v) => {
                    for (i, &xi) in v.iter().enumerate() {
                        self.update_coord(i, dl * xi)?;
                    }
                }
                Row::Sparse { indices, values } => {
                    for (&i, &xi) in indices.iter().zip(values) {
                        self.update_coord(i as usize, dl * xi)?;
                    }
                }
            }
        }
        Ok(p)
    }

    /// The weights (a copy: they are stored beside the `G_i`).
    fn weights(&self) -> Cow<'_, [f64]> {
        Cow::Owned(self.coords.column(0))
    }
}

/// Iterative parameter mixing ([`crate::merge`]): weights averaged by the round's examples.
impl MergeShare for Ogd {
    fn check_merge(&self, other: &Self, base: Option<&Self>) -> MergeResult {
        crate::merge::with_base(self, other, base, |a, b| {
            crate::merge::same("dimension", a.w.len(), b.w.len())
        })
    }

    fn merge_share(&mut self, other: &Self, base: Option<&Self>, share: f64) -> MergeResult {
        self.check_merge(other, base)?;
        self.w
            .update_all(|[w]| crate::merge::mix(w, other.w.array(0), share));
        self.t = crate::merge::add_count(self.t, other.t, base.map(|b| b.t));
        Ok(())
    }
}

/// Weights averaged by the round's examples; the squared-gradient sums added (the base's
/// counted once), so the step sizes are those of one stream over all the shards' examples.
/// In place, feature by feature ([`Interleaved::update_with`]: no `d`-sized temporary, which
/// matters at `-b 27`), with [`crate::merge::mix`]'s and [`crate::merge::add_since`]'s
/// arithmetic, so the same bits as those array passes.
impl MergeShare for AdaGrad {
    fn check_merge(&self, other: &Self, base: Option<&Self>) -> MergeResult {
        crate::merge::with_base(self, other, base, |a, b| {
            crate::merge::same("dimension", a.coords.len(), b.coords.len())
        })
    }

    fn merge_share(&mut self, other: &Self, base: Option<&Self>, share: f64) -> MergeResult {
        self.check_merge(other, base)?;
        self.coords.update_with(
            &other.coords,
            base.map(|b| &b.coords),
            |[w, g2], [ow, og], b| {
                if share != 1.0 {
                    *w = crate::merge::mix_one(*w, ow, share);
                }
                *g2 = crate::merge::add_since_one(*g2, og, b.map(|[_, bg]| bg));
            },
        );
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Learns 20 sparse rows over features 0–4, 100–102 and 4000 of `d = 4096`.
    pub(crate) fn learn_a_few(learner: &mut impl OnlineLearner) {
        for t in 0..20u32 {
            let indices = [t % 5, 100 + t % 3, 4000];
            let x = Row::Sparse {
                indices: &indices,
                values: &[1.0 + t as f64, -0.5, 0.25],
            };
            let y = if t % 2 == 0 { 1.0 } else { -1.0 };
            learner.learn(x, y, 1.0).unwrap();
        }
    }

    /// Saving and the load check's weight bound read only the touched features (issue 26): a
    /// NaN in every untouched entry changes neither.
    #[test]
    fn adagrad_reads_only_the_touched_features() {
        let mut ada = AdaGrad::new(4096, Loss::Logistic, 0.5).unwrap();
        learn_a_few(&mut ada);
        let (bytes, bound) = (postcard::to_allocvec(&ada).unwrap(), ada.largest_weight());
        let full = ada.weights().iter().fold(0.0f64, |a, w| a.max(w.abs()));
        assert_eq!(bound, full);
        assert!(bound > 0.0);
        ada.coords.poison_untouched();
        assert_eq!(postcard::to_allocvec(&ada).unwrap(), bytes);
        assert_eq!(ada.largest_weight(), bound);
    }

    /// OGD's fields as they were written before [`Touched`]: the file's bytes.
    #[derive(Serialize)]
    struct PlainOgd {
        #[serde(with = "crate::model::sparse_vec")]
        w: Vec<f64>,
        loss: Loss,
        eta: f64,
        schedule: StepSchedule,
        clip: f64,
        t: u64,
    }

    /// OGD (with the projection, so both updates run) writes the bytes of its plain weight
    /// array, and saving and the load check's bound read only the touched features: a NaN in
    /// every untouched entry changes neither; it loads back to the same bytes.
    #[test]
    fn ogd_reads_only_the_touched_features_and_writes_the_same_bytes() {
        let mut ogd = Ogd::new(4096, Loss::Logistic, 0.5, StepSchedule::InverseSqrt, 1.5).unwrap();
        learn_a_few(&mut ogd);
        let plain = PlainOgd {
            w: ogd.weights().to_vec(),
            loss: ogd.loss,
            eta: ogd.eta,
            schedule: ogd.schedule,
            clip: ogd.clip,
            t: ogd.t,
        };
        let bytes = postcard::to_allocvec(&ogd).unwrap();
        assert_eq!(bytes, postcard::to_allocvec(&plain).unwrap());
        let bound = ogd.largest_weight();
        assert_eq!(
            bound,
            super::super::validate::largest(plain.w.iter().copied())
        );
        assert!(bound > 0.0);
        let back: Ogd = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(postcard::to_allocvec(&back).unwrap(), bytes);
        ogd.w.poison_untouched();
        assert_eq!(postcard::to_allocvec(&ogd).unwrap(), bytes);
        assert_eq!(ogd.largest_weight(), bound);
    }

    /// Learns rows over features `offset..offset + 3` and 4000 (`d = 4096`).
    fn learn_from(learner: &mut AdaGrad, offset: u32) {
        for t in 0..7u32 {
            let indices = [offset + t % 3, offset + 3, 4000];
            let x = Row::Sparse {
                indices: &indices,
                values: &[0.5 + t as f64, -1.5, 0.75],
            };
            let y = if (t + offset) % 3 == 0 { 1.0 } else { -1.0 };
            learner.learn(x, y, 1.0).unwrap();
        }
    }

    /// The in-place merge writes the bytes of the array passes it replaced: the two columns
    /// copied into [`Touched`] arrays, [`crate::merge::mix`] and [`crate::merge::add_since`]
    /// over them (adagrad10's merge), with and without a base, for shares below and at 1.
    #[test]
    fn adagrad_merges_in_place_to_the_bytes_of_the_array_passes() {
        let mut base = AdaGrad::new(4096, Loss::Logistic, 0.5).unwrap();
        learn_from(&mut base, 10);
        let (mut a, mut b) = (base.clone(), base.clone());
        learn_from(&mut a, 20);
        learn_from(&mut b, 30);
        learn_from(&mut b, 12);
        for (base, share) in [(Some(&base), 0.375), (None, 0.6), (Some(&base), 1.0)] {
            let mut t = Touched::<2>::from_arrays([a.coords.column(0), a.coords.column(1)]);
            let (ow, og) = (b.coords.column(0), b.coords.column(1));
            let bg = base.map(|g| g.coords.column(1));
            t.update_all(|[w, g2]| {
                crate::merge::mix(w, &ow, share);
                crate::merge::add_since(g2, &og, bg.as_deref());
            });
            let mut merged = a.clone();
            merged.merge_share(&b, base, share).unwrap();
            assert_eq!(
                postcard::to_allocvec(&merged.coords).unwrap(),
                postcard::to_allocvec(&t).unwrap(),
                "share {share}, base {}",
                base.is_some()
            );
            assert_eq!(merged.coords.features(), t.features());
        }
    }
}
