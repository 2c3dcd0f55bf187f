//! [`Merge`] for the sketches (see [`crate::merge`] for the two kinds of merge and rounds).
//!
//! * FD / RFD: stacked and shrunk (Ghashami et al. 2016, §3.1); with a common base, merged by
//!   [`fd_rebase`](super::fd_rebase). The total shrinkage adds up (`Δ_a + Δ_b − Δ_G` plus the
//!   merge's own `δ`), so the FD bound `‖AᵀA − BᵀB‖₂ ≤ Σδ ≤ ‖A − A_k‖²_F/(m−k)` holds for the
//!   union, and RFD's `α = α₀ + Σδ/2` counts `α₀` once.
//! * GFD: its two FD sides merged side by side (SFTRL Theorem 2 for each side).
//! * Random projection: refused. `S = Σ_t r_t g_tᵀ` is unbiased because the `r_t` are
//!   independent; two shards drawing from the same seed reuse the same `r_t`, so `S_a + S_b`
//!   has the cross terms `g_aᵀg_b` in expectation — biased.
//! * Oja: refused. Its rows are an orthonormal basis learned with a step size tied to the
//!   stream's own history (SON Alg. 3): two bases and their eigenvalue estimates have no
//!   combination with a guarantee.

use super::fd_rebase::{combine_signed, SignedRows};
use super::{FrequentDirections, OjaSketch, RandomProjection, Sketch};
use crate::merge::{add_count, add_scalar, same, with_base, Merge, MergeError, MergeResult};

impl FrequentDirections {
    fn check_mergeable(&self, other: &Self) -> Result<(), MergeError> {
        same("dimension", self.dim(), other.dim())?;
        same("sketch size", self.sketch_size(), other.sketch_size())?;
        same("FD variant", self.variant(), other.variant())?;
        same(
            "regularized (RFD)",
            self.is_regularized(),
            other.is_regularized(),
        )?;
        same("alpha0", self.alpha0().to_bits(), other.alpha0().to_bits())
    }
}

fn part(s: &FrequentDirections, sign: f64) -> SignedRows<'_> {
    SignedRows {
        rows: s.rows(),
        count: s.filled_rows(),
        sign,
    }
}

impl Merge for FrequentDirections {
    fn check_merge(&self, other: &Self, base: Option<&Self>) -> MergeResult {
        with_base(self, other, base, Self::check_mergeable)
    }

    /// ```
    /// use sketchlearn::merge::Merge;
    /// use sketchlearn::sketch::{FdVariant, FrequentDirections, Sketch};
    /// use sketchlearn::Row;
    /// let mut a = FrequentDirections::fd(2, 2, FdVariant::PerRow).unwrap();
    /// let empty = a.clone();
    /// a.insert(Row::Dense(&[1.0, 0.0])).unwrap();
    /// let before = a.rows().to_vec();
    /// Merge::merge(&mut a, &empty, None).unwrap(); // the empty sketch is the identity
    /// assert_eq!(a.rows(), &before[..]);
    /// ```
    fn merge(&mut self, other: &Self, base: Option<&Self>) -> Result<(), MergeError> {
        Merge::check_merge(self, other, base)?;
        let Some(base) = base else {
            return Ok(FrequentDirections::merge(self, other)?);
        };
        let parts = [part(self, 1.0), part(other, 1.0), part(base, -1.0)];
        let merged = combine_signed(&parts, self.dim(), self.sketch_size(), self.capacity())?;
        let shrink_total = add_scalar(
            self.total_shrinkage(),
            other.total_shrinkage(),
            Some(base.total_shrinkage()),
        ) + merged.delta;
        let shrinks = add_count(self.shrinks(), other.shrinks(), Some(base.shrinks()))
            + u64::from(merged.delta > 0.0);
        let rows_seen = add_count(self.rows_seen(), other.rows_seen(), Some(base.rows_seen()));
        self.set_merged(
            &merged.rows,
            merged.filled,
            shrink_total,
            shrinks,
            rows_seen,
        );
        Ok(())
    }
}

impl Merge for RandomProjection {
    fn check_merge(&self, _other: &Self, _base: Option<&Self>) -> MergeResult {
        Err(MergeError::Unsupported(
            "random-projection sketches from the same seed share their Gaussian draws, so \
             their sum is biased; use an FD or RFD sketch to merge"
                .into(),
        ))
    }

    /// Refused ([`check_merge`](Merge::check_merge)).
    fn merge(&mut self, other: &Self, base: Option<&Self>) -> Result<(), MergeError> {
        self.check_merge(other, base)
    }
}

impl Merge for OjaSketch {
    fn check_merge(&self, _other: &Self, _base: Option<&Self>) -> MergeResult {
        Err(MergeError::Unsupported(
            "Oja's sketch (an orthonormal basis learned by stochastic steps) has no merge with \
             a guarantee; use an FD or RFD sketch to merge"
                .into(),
        ))
    }

    /// Refused ([`check_merge`](Merge::check_merge)).
    fn merge(&mut self, other: &Self, base: Option<&Self>) -> Result<(), MergeError> {
        self.check_merge(other, base)
    }
}
