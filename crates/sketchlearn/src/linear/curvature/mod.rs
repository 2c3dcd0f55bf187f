//! Curvature models `A_t = αI + SᵀS` of the Sketched Online Newton learner (SON paper §2–3,
//! DESIGN.md §2): identity (OGD), the full `d × d` matrix (FULL-ON), and sketched ones (FD, RFD,
//! RP, Oja), all used through the [`Curvature`] trait via the Woodbury identity
//! `A⁻¹v = (v − Sᵀ(αI_m + SSᵀ)⁻¹Sv)/α`.

mod full;
mod identity;
mod sketched;

pub use full::FullCurvature;
pub use identity::IdentityCurvature;
pub(crate) use sketched::{check_row_norm, check_scaled_row};
pub use sketched::{
    FdCurvature, OjaCurvature, RpCurvature, MAX_OJA_ROW_SQUARED_NORM, MAX_ROW_SQUARED_NORM,
};

use crate::dispatch::enum_dispatch;
use crate::sketch::SketchError;
use crate::Row;
use serde::{Deserialize, Serialize};

/// An approximate Hessian `A` of the online Newton step, updated with the to-sketch vectors.
pub trait Curvature {
    /// Dimension `d`.
    fn dim(&self) -> usize;
    /// Adds `(scale·g)(scale·g)ᵀ` (SON Alg. 1 line 8 with `ĝ = √(σ+η)·g`).
    fn update(&mut self, g: Row<'_>, scale: f64) -> Result<(), SketchError>;
    /// `xᵀA⁻¹x`.
    fn inv_quad(&self, x: Row<'_>) -> f64;
    /// `target += coef · A⁻¹x`.
    fn add_solve(&mut self, x: Row<'_>, coef: f64, target: &mut [f64]);
    /// The isotropic part `α` currently in use.
    fn alpha(&self) -> f64;
    /// Refuses, without changing anything, a row `scale·g` that [`update`](Self::update) would
    /// refuse for its size (the sketched curvatures' bound, [`MAX_ROW_SQUARED_NORM`] or
    /// [`MAX_OJA_ROW_SQUARED_NORM`]); the update applies the same check itself. The learner
    /// asks first when a change of its own (a projection step) would come before the update.
    fn check_row(&self, _g: Row<'_>, _scale: f64) -> Result<(), SketchError> {
        Ok(())
    }
    /// The Newton step's pattern in one call: adds `(scale·x)(scale·x)ᵀ`, then
    /// `target += coef · A⁻¹x` with the updated `A`. Sketches override it to reuse `Sx` between
    /// the two halves.
    fn update_and_solve(
        &mut self,
        x: Row<'_>,
        scale: f64,
        coef: f64,
        target: &mut [f64],
    ) -> Result<(), SketchError> {
        self.update(x, scale)?;
        self.add_solve(x, coef, target);
        Ok(())
    }
}

/// A curvature model chosen at run time (what the CLI and model files use).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[allow(clippy::large_enum_variant)] // built once, never moved in a hot loop
pub enum AnyCurvature {
    /// `A = αI`.
    Identity(IdentityCurvature),
    /// Full `d × d` (FULL-ON).
    Full(FullCurvature),
    /// FD or RFD sketch (per-row or doubling).
    Fd(FdCurvature),
    /// Gaussian random projection.
    Rp(RpCurvature),
    /// Oja's sketch.
    Oja(OjaCurvature),
}

enum_dispatch!($ dispatch, AnyCurvature { Identity, Full, Fd, Rp, Oja });

impl Curvature for AnyCurvature {
    fn dim(&self) -> usize {
        dispatch!(self, c => c.dim())
    }
    fn update(&mut self, g: Row<'_>, scale: f64) -> Result<(), SketchError> {
        dispatch!(self, c => c.update(g, scale))
    }
    fn inv_quad(&self, x: Row<'_>) -> f64 {
        dispatch!(self, c => c.inv_quad(x))
    }
    fn add_solve(&mut self, x: Row<'_>, coef: f64, target: &mut [f64]) {
        dispatch!(self, c => c.add_solve(x, coef, target))
    }
    fn alpha(&self) -> f64 {
        dispatch!(self, c => c.alpha())
    }
    fn check_row(&self, g: Row<'_>, scale: f64) -> Result<(), SketchError> {
        dispatch!(self, c => c.check_row(g, scale))
    }
    fn update_and_solve(
        &mut self,
        x: Row<'_>,
        scale: f64,
        coef: f64,
        target: &mut [f64],
    ) -> Result<(), SketchError> {
        dispatch!(self, c => c.update_and_solve(x, scale, coef, target))
    }
}

/// FD/RFD and identity curvatures merge; full, RP and Oja are refused
/// ([`crate::merge::MergeError::Unsupported`], with the reason).
impl crate::merge::Merge for AnyCurvature {
    fn check_merge(&self, other: &Self, base: Option<&Self>) -> crate::merge::MergeResult {
        use crate::merge::{same, MergeError};
        if base.is_some_and(|g| std::mem::discriminant(g) != std::mem::discriminant(self)) {
            return Err(MergeError::Incompatible("base curvature kind".into()));
        }
        match (self, other) {
            (AnyCurvature::Identity(a), AnyCurvature::Identity(b)) => {
                same("dimension", a.dim(), b.dim())?;
                same("alpha", a.alpha().to_bits(), b.alpha().to_bits())
            }
            (AnyCurvature::Fd(a), AnyCurvature::Fd(b)) => a.check_merge(b, fd_base(base)),
            (AnyCurvature::Full(_), AnyCurvature::Full(_)) => Err(MergeError::Unsupported(
                "the full curvature keeps only A⁻¹ (d × d); use an FD or RFD curvature".into(),
            )),
            (AnyCurvature::Rp(_), AnyCurvature::Rp(_)) => Err(MergeError::Unsupported(
                "RP-SON: random projections from the same seed share their draws, so their \
                 sum is biased; use an FD or RFD curvature"
                    .into(),
            )),
            (AnyCurvature::Oja(_), AnyCurvature::Oja(_)) => Err(MergeError::Unsupported(
                "Oja-SON: Oja's sketch has no merge with a guarantee; use an FD or RFD curvature"
                    .into(),
            )),
            _ => Err(MergeError::Incompatible("different curvature kinds".into())),
        }
    }

    fn merge(&mut self, other: &Self, base: Option<&Self>) -> Result<(), crate::merge::MergeError> {
        self.check_merge(other, base)?;
        match (self, other) {
            (AnyCurvature::Fd(a), AnyCurvature::Fd(b)) => a.merge(b, fd_base(base)),
            _ => Ok(()), // the identity's `αI` (equal, checked); the others refused by the check
        }
    }
}

/// The FD curvature of a merge's base (checked to be one).
fn fd_base(base: Option<&AnyCurvature>) -> Option<&FdCurvature> {
    match base {
        Some(AnyCurvature::Fd(g)) => Some(g),
        _ => None,
    }
}
