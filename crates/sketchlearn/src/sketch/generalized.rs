//! Generalized Frequent Directions (GFD) for indefinite symmetric matrices.
//!
//! SFTRL paper (Luo et al., "Sketched Follow-The-Regularized-Leader for Online Factorization
//! Machine", KDD 2018) §3.1: approximate `G = Σ_t s_t g_t g_tᵀ` with signed `s_t` by
//! `B₊ᵀB₊ − B₋ᵀB₋`, where `B₊` sketches the rows `√s_t g_t` with `s_t > 0` and `B₋` the rows
//! `√(−s_t) g_t` with `s_t < 0` (Algorithm 2, per-row; Algorithm 3, doubling space), each side
//! keeping at most `m − 1` rows. A term with `s_t = 0` changes nothing (DESIGN.md §4 item 13).
//!
//! Theorem 2: `‖G − (B₊ᵀB₊ − B₋ᵀB₋)‖₂ ≤ (‖H₊ − H₊,k‖²_F + ‖H₋ − H₋,k‖²_F)/(m − k)` for `k < m`,
//! with `G₊ = H₊ᵀH₊`, `G₋ = H₋ᵀH₋`. Each side is an FD sketch, so the sum of the two sides'
//! total shrinkage is also a bound, and it is what [`GeneralizedFrequentDirections::error_bound`]
//! returns.

use super::{FdVariant, FrequentDirections, Sketch, SketchError, SymOperator};
use crate::Row;

/// GFD sketch of `Σ s_t g_t g_tᵀ`.
///
/// ```
/// use sketchlearn::sketch::{FdVariant, GeneralizedFrequentDirections, SymOperator};
/// use sketchlearn::Row;
/// let mut gfd = GeneralizedFrequentDirections::new(2, 3, FdVariant::PerRow).unwrap();
/// gfd.insert_signed(Row::Dense(&[1.0, 0.0]), 2.0).unwrap();
/// gfd.insert_signed(Row::Dense(&[0.0, 1.0]), -0.5).unwrap();
/// // Exact while each side holds fewer than m rows: G = diag(2, −0.5).
/// let mut out = [0.0; 2];
/// gfd.apply(&[1.0, 1.0], &mut out);
/// assert!((out[0] - 2.0).abs() < 1e-12 && (out[1] + 0.5).abs() < 1e-12);
/// ```
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct GeneralizedFrequentDirections {
    positive: FrequentDirections,
    negative: FrequentDirections,
    rows_seen: u64,
}

impl GeneralizedFrequentDirections {
    /// A GFD sketch of size `m ≥ 1` (each side keeps at most `m − 1` rows).
    pub fn new(dim: usize, m: usize, variant: FdVariant) -> Result<Self, SketchError> {
        Ok(GeneralizedFrequentDirections {
            positive: FrequentDirections::fd(dim, m, variant)?,
            negative: FrequentDirections::fd(dim, m, variant)?,
            rows_seen: 0,
        })
    }

    /// Adds `s · g gᵀ` to the sketched matrix.
    pub fn insert_signed(&mut self, g: Row<'_>, s: f64) -> Result<(), SketchError> {
        if !s.is_finite() {
            return Err(SketchError::NonFinite(format!("GFD sign weight {s}")));
        }
        if s > 0.0 {
            self.positive.insert_scaled(g, s.sqrt())?;
        } else if s < 0.0 {
            self.negative.insert_scaled(g, (-s).sqrt())?;
        } else {
            super::error::check_row(&g, self.dim())?;
        }
        self.rows_seen += 1;
        Ok(())
    }

    /// The sketch `B₊` of the positive part.
    pub fn positive(&self) -> &FrequentDirections {
        &self.positive
    }

    /// The sketch `B₋` of the negative part.
    pub fn negative(&self) -> &FrequentDirections {
        &self.negative
    }

    /// Dimension `d`.
    pub fn dim(&self) -> usize {
        self.positive.dim()
    }

    /// Sketch size `m`.
    pub fn sketch_size(&self) -> usize {
        self.positive.sketch_size()
    }

    /// Number of terms inserted (including those with `s = 0`).
    pub fn rows_seen(&self) -> u64 {
        self.rows_seen
    }

    /// A computable bound on the spectral error: the two sides' total shrinkage added up
    /// (at most the right-hand side of SFTRL Theorem 2).
    pub fn error_bound(&self) -> f64 {
        self.positive.total_shrinkage() + self.negative.total_shrinkage()
    }

    /// Merges another GFD sketch (side by side FD merges).
    pub fn merge(&mut self, other: &GeneralizedFrequentDirections) -> Result<(), SketchError> {
        self.positive.merge(&other.positive)?;
        self.negative.merge(&other.negative)?;
        self.rows_seen += other.rows_seen;
        Ok(())
    }

    /// The dense `d × d` approximation `B₊ᵀB₊ − B₋ᵀB₋` (tests and small `d` only).
    pub fn to_dense(&self) -> Vec<f64> {
        let mut p = self.positive.matrix().to_dense();
        let n = self.negative.matrix().to_dense();
        for (a, b) in p.iter_mut().zip(n) {
            *a -= b;
        }
        p
    }
}

impl SymOperator for GeneralizedFrequentDirections {
    fn dim(&self) -> usize {
        self.positive.dim()
    }

    fn apply(&self, v: &[f64], out: &mut [f64]) {
        self.positive.matrix().apply(v, out);
        let mut neg = vec![0.0; out.len()];
        self.negative.matrix().apply(v, &mut neg);
        for (o, n) in out.iter_mut().zip(neg) {
            *o -= n;
        }
    }
}

impl crate::merge::Merge for GeneralizedFrequentDirections {
    /// Each side's rules (FD's).
    fn check_merge(&self, other: &Self, base: Option<&Self>) -> crate::merge::MergeResult {
        use crate::merge::Merge;
        let (p, n) = (base.map(|g| &g.positive), base.map(|g| &g.negative));
        Merge::check_merge(&self.positive, &other.positive, p)?;
        Merge::check_merge(&self.negative, &other.negative, n)
    }

    /// Both sides merged as FD sketches ([`crate::merge`]); rows seen as on one stream.
    fn merge(&mut self, other: &Self, base: Option<&Self>) -> Result<(), crate::merge::MergeError> {
        crate::merge::Merge::check_merge(self, other, base)?;
        let rows_seen =
            crate::merge::add_count(self.rows_seen, other.rows_seen, base.map(|b| b.rows_seen));
        crate::merge::Merge::merge(
            &mut self.positive,
            &other.positive,
            base.map(|b| &b.positive),
        )?;
        crate::merge::Merge::merge(
            &mut self.negative,
            &other.negative,
            base.map(|b| &b.negative),
        )?;
        self.rows_seen = rows_seen;
        Ok(())
    }
}
