//! The AUC of a stream in bounded memory: exact (every score kept) up to
//! [`EXACT_AUC_LIMIT`] examples, then a fixed histogram of the scores whose error is bounded and
//! reported.
//!
//! # The binned estimate and its bound
//!
//! The weighted Mann–Whitney statistic is `AUC = (Σ_{i∈P, j∈N} w_i w_j [s_i > s_j] + ½[s_i = s_j])
//! / (W_P W_N)`. With the scores put into bins `b(s)` by a monotone map (so `b(s_i) < b(s_j)`
//! implies `s_i < s_j`), every pair in different bins is ordered exactly as by the scores; only
//! the pairs that share a bin are unknown, and the estimate counts them ½. Its error is therefore
//! at most `½ Σ_b P_b N_b / (W_P W_N)`, where `P_b`, `N_b` are the positive and negative weight in
//! bin `b` — [`StreamingAuc::error_bound`] reports it (0 while exact).
//!
//! The bins: `t = s / (1 + |s|) ∈ (−1, 1)`, a monotone squashing of the raw score, cut into
//! [`BINS`] equal intervals: score resolution about `3·10⁻⁵` near 0 and `4·10⁻³` at `|s| = 10`,
//! the range where logistic margins live. Memory: `2 × BINS` weights (1 MiB).

use std::cmp::Ordering;

/// Examples whose scores are kept exactly before the histogram takes over (16 bytes each: 16 MiB).
pub const EXACT_AUC_LIMIT: usize = 1 << 20;

/// Histogram bins once the stream is longer than [`EXACT_AUC_LIMIT`].
pub const BINS: usize = 1 << 16;

/// The AUC's data: every `(score, ±weight)` while the stream is short, a histogram after.
#[derive(Clone, Debug)]
pub enum StreamingAuc {
    /// `(score, w)` for positives and `(score, −w)` for negatives, weights `w > 0` only.
    Exact(Vec<(f64, f64)>),
    /// Positive and negative weight per bin.
    Binned {
        /// Positive weight per bin.
        pos: Vec<f64>,
        /// Negative weight per bin.
        neg: Vec<f64>,
    },
}

impl Default for StreamingAuc {
    fn default() -> Self {
        StreamingAuc::Exact(Vec::new())
    }
}

/// The bin of score `s` (NaN in the top bin).
fn bin(s: f64) -> usize {
    if s.is_nan() || s == f64::INFINITY {
        return BINS - 1;
    }
    if s == f64::NEG_INFINITY {
        return 0;
    }
    let t = s / (1.0 + s.abs()); // in (-1, 1)
    let k = ((t + 1.0) * 0.5 * BINS as f64).floor();
    (k.max(0.0) as usize).min(BINS - 1)
}

impl StreamingAuc {
    /// Adds a score with a positive (`label > 0`) or negative label and weight `w > 0`.
    pub fn add(&mut self, score: f64, positive: bool, w: f64) {
        match self {
            StreamingAuc::Exact(data) => {
                // `+ 0.0` turns −0.0 into +0.0, so that both zeros sort (and tie) together.
                data.push((score + 0.0, if positive { w } else { -w }));
                if data.len() > EXACT_AUC_LIMIT {
                    self.switch_to_bins();
                }
            }
            StreamingAuc::Binned { pos, neg } => {
                let b = bin(score);
                if positive {
                    pos[b] += w;
                } else {
                    neg[b] += w;
                }
            }
        }
    }

    /// Switches to the histogram (no-op if already binned).
    fn switch_to_bins(&mut self) {
        if let StreamingAuc::Exact(data) = self {
            let (mut pos, mut neg) = (vec![0.0; BINS], vec![0.0; BINS]);
            for &(s, w) in data.iter() {
                if w > 0.0 {
                    pos[bin(s)] += w;
                } else {
                    neg[bin(s)] -= w;
                }
            }
            *self = StreamingAuc::Binned { pos, neg };
        }
    }

    /// Adds `other`'s data, as if its examples had been added here.
    pub fn merge(&mut self, other: &StreamingAuc) {
        match (&mut *self, other) {
            (StreamingAuc::Exact(a), StreamingAuc::Exact(b))
                if a.len() + b.len() <= EXACT_AUC_LIMIT =>
            {
                a.extend_from_slice(b);
            }
            _ => {
                self.switch_to_bins();
                let mut o = other.clone();
                o.switch_to_bins();
                if let (
                    StreamingAuc::Binned { pos, neg },
                    StreamingAuc::Binned { pos: p2, neg: n2 },
                ) = (self, o)
                {
                    pos.iter_mut().zip(&p2).for_each(|(a, b)| *a += b);
                    neg.iter_mut().zip(&n2).for_each(|(a, b)| *a += b);
                }
            }
        }
    }

    /// True once the histogram has taken over.
    pub fn is_binned(&self) -> bool {
        matches!(self, StreamingAuc::Binned { .. })
    }

    /// `(AUC, error bound)`; `None` when the positives or the negatives have no weight. The
    /// bound is 0 while exact (see the module documentation).
    pub fn auc(&self) -> Option<(f64, f64)> {
        match self {
            StreamingAuc::Exact(data) => exact_auc(data).map(|a| (a, 0.0)),
            StreamingAuc::Binned { pos, neg } => binned_auc(pos, neg),
        }
    }
}

/// Sorts a copy of the scores: O(n log n).
fn exact_auc(data: &[(f64, f64)]) -> Option<f64> {
    let (mut pos_total, mut neg_total) = (0.0, 0.0);
    for &(_, w) in data {
        if w > 0.0 {
            pos_total += w;
        } else {
            neg_total -= w;
        }
    }
    if pos_total <= 0.0 || neg_total <= 0.0 {
        return None;
    }
    let mut data = data.to_vec();
    data.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    // Ascending scores: each positive gets the weight of the negatives strictly below it,
    // plus half of those tied with it.
    let mut neg_below = 0.0;
    let mut concordant = 0.0;
    let mut i = 0;
    while i < data.len() {
        let score = data[i].0;
        let (mut pos, mut neg) = (0.0, 0.0);
        while i < data.len() && data[i].0.total_cmp(&score) == Ordering::Equal {
            let w = data[i].1;
            if w > 0.0 {
                pos += w;
            } else {
                neg -= w;
            }
            i += 1;
        }
        concordant += pos * (neg_below + 0.5 * neg);
        neg_below += neg;
    }
    Some(concordant / (pos_total * neg_total))
}

fn binned_auc(pos: &[f64], neg: &[f64]) -> Option<(f64, f64)> {
    let (pos_total, neg_total): (f64, f64) = (pos.iter().sum(), neg.iter().sum());
    if pos_total <= 0.0 || neg_total <= 0.0 {
        return None;
    }
    let (mut neg_below, mut concordant, mut same_bin) = (0.0, 0.0, 0.0);
    for (p, n) in pos.iter().zip(neg) {
        concordant += p * (neg_below + 0.5 * n);
        same_bin += p * n;
        neg_below += n;
    }
    let norm = pos_total * neg_total;
    Some((concordant / norm, 0.5 * same_bin / norm))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn bins_are_monotone_and_in_range() {
        let mut last = 0;
        for k in -4000..=4000 {
            let s = k as f64 * 0.01;
            let b = bin(s);
            assert!(b >= last && b < BINS);
            last = b;
        }
        assert_eq!(bin(f64::INFINITY), BINS - 1);
        assert_eq!(bin(f64::NEG_INFINITY), 0);
        assert_eq!(bin(f64::NAN), BINS - 1);
    }

    proptest! {
        /// The binned AUC is within its bound of the exact one, and the bound is small when the
        /// scores are spread.
        #[test]
        fn binned_auc_is_within_its_bound(
            data in prop::collection::vec((-20.0f64..20.0, any::<bool>(), 0.1f64..3.0), 2..400),
        ) {
            let mut exact = StreamingAuc::default();
            for &(s, p, w) in &data {
                exact.add(s, p, w);
            }
            let mut binned = exact.clone();
            binned.switch_to_bins();
            if let (Some((a, e0)), Some((b, bound))) = (exact.auc(), binned.auc()) {
                prop_assert_eq!(e0, 0.0);
                prop_assert!((a - b).abs() <= bound + 1e-12, "{} vs {} ± {}", a, b, bound);
            }
        }

        /// Merging two halves equals adding everything to one (exact and binned).
        #[test]
        fn merge_equals_one_stream(
            data in prop::collection::vec((-5.0f64..5.0, any::<bool>()), 2..200),
            cut in 0usize..200,
        ) {
            let cut = cut.min(data.len());
            let (mut a, mut b, mut all) = Default::default();
            let (a_ref, b_ref, all_ref): (&mut StreamingAuc, &mut StreamingAuc, &mut StreamingAuc) =
                (&mut a, &mut b, &mut all);
            for (i, &(s, p)) in data.iter().enumerate() {
                if i < cut { a_ref.add(s, p, 1.0) } else { b_ref.add(s, p, 1.0) }
                all_ref.add(s, p, 1.0);
            }
            let mut binned = a.clone();
            binned.switch_to_bins();
            a.merge(&b);
            prop_assert_eq!(a.auc(), all.auc());
            binned.merge(&b);
            let mut all_binned = all.clone();
            all_binned.switch_to_bins();
            prop_assert_eq!(binned.auc(), all_binned.auc());
        }
    }

    #[test]
    fn a_long_stream_switches_to_the_histogram_and_stays_close() {
        let mut auc = StreamingAuc::default();
        let mut exact = Vec::new();
        let mut s: u64 = 7;
        for _ in 0..(EXACT_AUC_LIMIT + 1000) {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1);
            let u = (s >> 11) as f64 / (1u64 << 53) as f64;
            let positive = u > 0.5;
            let score = (u - 0.5) * 4.0 + if positive { 0.3 } else { -0.3 } * (u * 7.0).sin();
            auc.add(score, positive, 1.0);
            exact.push((score, if positive { 1.0 } else { -1.0 }));
        }
        assert!(auc.is_binned());
        let (a, bound) = auc.auc().unwrap();
        let truth = exact_auc(&exact).unwrap();
        assert!(bound < 1e-3, "bound {bound}");
        assert!((a - truth).abs() <= bound + 1e-12);
    }
}
