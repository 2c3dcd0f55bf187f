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

/// The exact AUC: the scores in ascending order, each positive counting the weight of the
/// negatives below it and half of those tied with it (the Mann–Whitney statistic of the module
/// docs).
///
/// From [`RADIX_FROM`] scores the order comes from a stable radix sort ([`by_score`], O(n),
/// against O(n log n) for a comparison sort: a quarter less time at 30k–100k scores, 0.3–1 ms
/// at the end of a `train` on a9a, w8a or the generated stream, issue 27). The sums are those
/// of [`exact_auc_by_comparison`] — the comparison sort's result, kept as the reference — bit
/// for bit: both walk the same groups of tied scores in the
/// same order, and within a group only the order of the additions may differ, which changes
/// nothing when the positives of the group have one weight and so do its negatives (every
/// unweighted stream). A group with two different weights in a class is summed in the
/// comparison sort's order instead ([`tied_sums`] declines, the reference is returned).
fn exact_auc(data: &[(f64, f64)]) -> Option<f64> {
    match data.len() < RADIX_FROM {
        true => exact_auc_by_comparison(data),
        false => exact_auc_by_radix(data),
    }
}

/// [`exact_auc`] in the order of [`by_score`], or of the comparison sort when a tie holds two
/// weights in a class.
fn exact_auc_by_radix(data: &[(f64, f64)]) -> Option<f64> {
    let (pos_total, neg_total) = totals(data)?;
    match concordance(&by_score(data), true) {
        Some(concordant) => Some(concordant / (pos_total * neg_total)),
        None => exact_auc_by_comparison(data),
    }
}

/// [`exact_auc`] by a comparison sort of a copy of the scores: O(n log n). The reference whose
/// result [`exact_auc`] gives, and what it falls back on.
fn exact_auc_by_comparison(data: &[(f64, f64)]) -> Option<f64> {
    let (pos_total, neg_total) = totals(data)?;
    let mut data = data.to_vec();
    data.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    let concordant = concordance(&data, false).expect("sums taken in any order");
    Some(concordant / (pos_total * neg_total))
}

/// The positive and the negative weight of `data`, in its order; `None` when either is 0.
fn totals(data: &[(f64, f64)]) -> Option<(f64, f64)> {
    let (mut pos_total, mut neg_total) = (0.0, 0.0);
    for &(_, w) in data {
        if w > 0.0 {
            pos_total += w;
        } else {
            neg_total -= w;
        }
    }
    let empty = pos_total <= 0.0 || neg_total <= 0.0;
    (!empty).then_some((pos_total, neg_total))
}

/// The concordant weight of `sorted` (ascending scores): each positive gets the weight of the
/// negatives strictly below it, plus half of those tied with it. With `uniform`, `None` when a
/// group of tied scores holds two different weights in one class (see [`tied_sums`]).
fn concordance(sorted: &[(f64, f64)], uniform: bool) -> Option<f64> {
    let mut neg_below = 0.0;
    let mut concordant = 0.0;
    let mut i = 0;
    while i < sorted.len() {
        let score = sorted[i].0;
        let end = i + sorted[i..]
            .iter()
            .position(|a| a.0.total_cmp(&score) != Ordering::Equal)
            .unwrap_or(sorted.len() - i);
        let (pos, neg) = tied_sums(&sorted[i..end], uniform)?;
        concordant += pos * (neg_below + 0.5 * neg);
        neg_below += neg;
        i = end;
    }
    Some(concordant)
}

/// The positive and the negative weight of a group of tied scores, added in its order. With
/// `uniform`, `None` unless the group's positives share one weight and so do its negatives:
/// then any order of the group gives these sums, bit for bit (the same additions of the same
/// number).
fn tied_sums(group: &[(f64, f64)], uniform: bool) -> Option<(f64, f64)> {
    let (mut pos, mut neg) = (0.0, 0.0);
    let (mut first_pos, mut first_neg) = (None, None);
    for &(_, w) in group {
        let first = if w > 0.0 {
            pos += w;
            &mut first_pos
        } else {
            neg -= w;
            &mut first_neg
        };
        if uniform && *first.get_or_insert(w.to_bits()) != w.to_bits() {
            return None;
        }
    }
    Some((pos, neg))
}

/// The key of a score whose unsigned order is [`f64::total_cmp`]'s: a negative score's bits
/// all flipped, a positive one's sign bit set.
fn order_key(s: f64) -> u64 {
    let b = s.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | 1 << 63
    }
}

/// The fewest scores [`exact_auc`] sorts by radix: below, the comparison sort is as fast (7,674
/// scores: 0.14 ms against the radix sort's 0.21; 32,561: 1.20 ms against 0.90; 100,000: 4.0
/// against 2.9 — the fastest of 60 runs of each, 2026-11-27).
const RADIX_FROM: usize = 1 << 14;

/// Bits of the key sorted by each pass of [`by_score`].
const RADIX_BITS: u32 = 11;

/// `data` sorted by score ([`f64::total_cmp`]), ties in their order in `data`: a least
/// significant digit radix sort of the [`order_key`]s, [`RADIX_BITS`] at a time, skipping the
/// digits every key shares (the high bits of scores of one sign and magnitude).
fn by_score(data: &[(f64, f64)]) -> Vec<(f64, f64)> {
    const BUCKETS: usize = 1 << RADIX_BITS;
    const PASSES: usize = 64usize.div_ceil(RADIX_BITS as usize);
    let digit =
        |key: u64, pass: usize| ((key >> (pass as u32 * RADIX_BITS)) as usize) & (BUCKETS - 1);
    let mut keyed: Vec<(u64, f64)> = data.iter().map(|&(s, w)| (order_key(s), w)).collect();
    let mut counts = vec![[0usize; BUCKETS]; PASSES];
    for &(key, _) in &keyed {
        for (pass, count) in counts.iter_mut().enumerate() {
            count[digit(key, pass)] += 1;
        }
    }
    let mut spare = vec![(0u64, 0.0f64); keyed.len()];
    for (pass, count) in counts.iter_mut().enumerate() {
        if count.contains(&keyed.len()) {
            continue; // one digit for every key: this pass keeps the order
        }
        let mut start = 0;
        for c in count.iter_mut() {
            (*c, start) = (start, start + *c);
        }
        for &(key, w) in &keyed {
            let slot = &mut count[digit(key, pass)];
            spare[*slot] = (key, w);
            *slot += 1;
        }
        std::mem::swap(&mut keyed, &mut spare);
    }
    keyed
        .into_iter()
        .map(|(key, w)| {
            (
                f64::from_bits(if key >> 63 == 1 {
                    key & !(1 << 63)
                } else {
                    !key
                }),
                w,
            )
        })
        .collect()
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

    /// Scores drawn from a few values (many ties, both zeros, infinities and NaNs) with weights
    /// from a few values, or 1.
    fn tied_scores(weighted: bool) -> impl Strategy<Value = Vec<(f64, f64)>> {
        let score = prop::sample::select(vec![
            -3.5,
            -1.0,
            -0.0,
            0.0,
            1e-300,
            0.25,
            0.5,
            7.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -f64::NAN,
        ]);
        let spread = prop_oneof![score, -1e6f64..1e6];
        let weight = match weighted {
            true => prop::sample::select(vec![0.1, 0.3, 1.0, 2.5]).boxed(),
            false => Just(1.0).boxed(),
        };
        prop::collection::vec((spread, any::<bool>(), weight), 0..300).prop_map(|v| {
            v.into_iter()
                .map(|(s, p, w)| (s + 0.0, if p { w } else { -w }))
                .collect()
        })
    }

    proptest! {
        /// The radix sort's AUC is the comparison sort's, bit for bit: unweighted streams (the
        /// radix order is used), weighted ones (ties of two weights fall back), any ties.
        #[test]
        fn the_radix_auc_is_the_comparison_sorts_bit_for_bit(
            unweighted in tied_scores(false),
            weighted in tied_scores(true),
        ) {
            for data in [&unweighted, &weighted] {
                let (fast, reference) = (exact_auc_by_radix(data), exact_auc_by_comparison(data));
                prop_assert_eq!(fast.map(f64::to_bits), reference.map(f64::to_bits));
            }
        }

        /// `by_score` orders by `total_cmp` and keeps the order of ties (a stable sort).
        #[test]
        fn by_score_is_a_stable_sort_by_total_cmp(data in tied_scores(true)) {
            let mut expected = data.clone();
            expected.sort_by(|a, b| a.0.total_cmp(&b.0));
            let bits = |v: &[(f64, f64)]| -> Vec<(u64, u64)> {
                v.iter().map(|&(s, w)| (s.to_bits(), w.to_bits())).collect()
            };
            prop_assert_eq!(bits(&by_score(&data)), bits(&expected));
        }
    }

    /// A tie of two weights in one class is summed in the comparison sort's order (the fast
    /// path declines it).
    #[test]
    fn a_tie_of_two_weights_in_a_class_declines_the_radix_order() {
        let data = [(0.5, 0.1), (0.5, 0.7), (0.5, -1.0), (0.2, -1.0)];
        assert_eq!(concordance(&by_score(&data), true), None);
        assert_eq!(exact_auc_by_radix(&data), exact_auc_by_comparison(&data));
        let uniform = [(0.5, 1.0), (0.5, 1.0), (0.5, -2.0), (0.2, -1.0)];
        assert!(concordance(&by_score(&uniform), true).is_some());
    }

    /// Past [`RADIX_FROM`] scores `exact_auc` takes the radix order, with the comparison
    /// sort's bits (scores rounded to 1/64: many ties).
    #[test]
    fn a_long_exact_stream_is_sorted_by_radix_with_the_same_bits() {
        let mut state: u64 = 11;
        let data: Vec<(f64, f64)> = (0..RADIX_FROM + 1000)
            .map(|_| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                let u = (state >> 11) as f64 / (1u64 << 53) as f64;
                let score = ((u - 0.5) * 512.0).round() / 64.0;
                (score + 0.0, if (state >> 7) & 3 == 0 { 1.0 } else { -1.0 })
            })
            .collect();
        assert!(concordance(&by_score(&data), true).is_some());
        let bits = exact_auc(&data).map(f64::to_bits);
        assert_eq!(bits, exact_auc_by_comparison(&data).map(f64::to_bits));
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
