//! Choosing a sketch at run time: [`SketchMethod`], the validated [`SketchConfig`] and the
//! [`AnySketch`] it builds (used by the CLI, the experiments and the bindings).

use super::{
    FdVariant, FrequentDirections, GeneralizedFrequentDirections, OjaSketch, RandomProjection,
    Sketch, SketchError, SymOperator,
};
use crate::Row;
use std::fmt;
use std::str::FromStr;

/// The sketches the crate offers, by their command-line names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum SketchMethod {
    /// Frequent Directions, per-row (RFD paper Alg. 1).
    Fd,
    /// Frequent Directions with doubling space (Alg. 2).
    FdFast,
    /// Robust/Regularized FD, per-row (Alg. 3).
    Rfd,
    /// RFD with doubling space (Alg. 4).
    RfdFast,
    /// Generalized FD, per-row (SFTRL Alg. 2); rows are signed by their label.
    Gfd,
    /// Generalized FD with doubling space (SFTRL Alg. 3).
    GfdFast,
    /// Gaussian random projection (SON §3, Alg. 6).
    Rp,
    /// Oja's sketch (SON §3, Alg. 3).
    Oja,
}

impl SketchMethod {
    /// Every method, in a fixed order.
    pub const ALL: [SketchMethod; 8] = [
        SketchMethod::Fd,
        SketchMethod::FdFast,
        SketchMethod::Rfd,
        SketchMethod::RfdFast,
        SketchMethod::Gfd,
        SketchMethod::GfdFast,
        SketchMethod::Rp,
        SketchMethod::Oja,
    ];

    /// The command-line name (`fd`, `fd-fast`, ...).
    pub fn name(self) -> &'static str {
        match self {
            SketchMethod::Fd => "fd",
            SketchMethod::FdFast => "fd-fast",
            SketchMethod::Rfd => "rfd",
            SketchMethod::RfdFast => "rfd-fast",
            SketchMethod::Gfd => "gfd",
            SketchMethod::GfdFast => "gfd-fast",
            SketchMethod::Rp => "rp",
            SketchMethod::Oja => "oja",
        }
    }

    /// True for GFD, whose rows carry a sign.
    pub fn is_signed(self) -> bool {
        matches!(self, SketchMethod::Gfd | SketchMethod::GfdFast)
    }
}

impl fmt::Display for SketchMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for SketchMethod {
    type Err = SketchError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SketchMethod::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = SketchMethod::ALL.iter().map(|m| m.name()).collect();
                SketchError::InvalidParameter(format!(
                    "unknown sketch method '{s}' (expected one of {})",
                    names.join(", ")
                ))
            })
    }
}

/// Hyper-parameters of a sketch; [`SketchConfig::build`] validates them.
///
/// ```
/// use sketchlearn::sketch::{SketchConfig, SketchMethod};
/// let cfg = SketchConfig::new(SketchMethod::RfdFast, 10);
/// let sketch = cfg.build(123).unwrap();
/// assert_eq!(sketch.dim(), 123);
/// assert!(SketchConfig::new(SketchMethod::Fd, 0).build(5).is_err());
/// ```
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SketchConfig {
    /// Which sketch.
    pub method: SketchMethod,
    /// Sketch size `m ≥ 1`.
    pub size: usize,
    /// Seed of the random draws (RP, Oja's initial directions).
    pub seed: u64,
    /// RFD's initial `α₀ ≥ 0`.
    pub alpha0: f64,
    /// Regularizer `α > 0` of `H = (αI + SSᵀ)⁻¹` maintained by RP and Oja.
    pub alpha: f64,
    /// Oja's learning-rate constant `c` in `γ_t = min(c/t, 1)`.
    pub oja_c: f64,
}

impl SketchConfig {
    /// Defaults: seed 0, `α₀ = 0`, `α = 1`, `c = 1`.
    pub fn new(method: SketchMethod, size: usize) -> Self {
        SketchConfig {
            method,
            size,
            seed: 0,
            alpha0: 0.0,
            alpha: 1.0,
            oja_c: 1.0,
        }
    }

    /// Builds the sketch for rows of dimension `dim`.
    pub fn build(&self, dim: usize) -> Result<AnySketch, SketchError> {
        let m = self.size;
        Ok(match self.method {
            SketchMethod::Fd => AnySketch::Fd(FrequentDirections::fd(dim, m, FdVariant::PerRow)?),
            SketchMethod::FdFast => {
                AnySketch::Fd(FrequentDirections::fd(dim, m, FdVariant::Doubling)?)
            }
            SketchMethod::Rfd => AnySketch::Fd(FrequentDirections::rfd(
                dim,
                m,
                FdVariant::PerRow,
                self.alpha0,
            )?),
            SketchMethod::RfdFast => AnySketch::Fd(FrequentDirections::rfd(
                dim,
                m,
                FdVariant::Doubling,
                self.alpha0,
            )?),
            SketchMethod::Gfd => AnySketch::Gfd(Box::new(GeneralizedFrequentDirections::new(
                dim,
                m,
                FdVariant::PerRow,
            )?)),
            SketchMethod::GfdFast => AnySketch::Gfd(Box::new(GeneralizedFrequentDirections::new(
                dim,
                m,
                FdVariant::Doubling,
            )?)),
            SketchMethod::Rp => {
                AnySketch::Rp(RandomProjection::new(dim, m, self.alpha, self.seed)?)
            }
            SketchMethod::Oja => {
                AnySketch::Oja(OjaSketch::new(dim, m, self.alpha, self.oja_c, self.seed)?)
            }
        })
    }
}

impl SketchConfig {
    /// Builds the sketch for `rows` and inserts every row in order (the rows' weights are GFD's
    /// signs); returns it with the time spent in the updates alone.
    pub fn sketch_rows(
        &self,
        rows: &super::RowMatrix,
    ) -> Result<(AnySketch, std::time::Duration), SketchError> {
        let mut sketch = self.build(rows.dim())?;
        let start = std::time::Instant::now();
        for i in 0..rows.rows() {
            sketch.insert(rows.row(i), rows.weight(i))?;
        }
        Ok((sketch, start.elapsed()))
    }
}

/// A sketch chosen at run time (serializable: the Python binding pickles it).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[allow(clippy::large_enum_variant)] // built once per run, never moved in a hot loop
pub enum AnySketch {
    /// FD or RFD, per-row or doubling.
    Fd(FrequentDirections),
    /// GFD.
    Gfd(Box<GeneralizedFrequentDirections>),
    /// Random projection.
    Rp(RandomProjection),
    /// Oja.
    Oja(OjaSketch),
}

impl AnySketch {
    /// Dimension `d`.
    pub fn dim(&self) -> usize {
        match self {
            AnySketch::Fd(s) => s.dim(),
            AnySketch::Gfd(s) => s.dim(),
            AnySketch::Rp(s) => s.dim(),
            AnySketch::Oja(s) => s.dim(),
        }
    }

    /// Inserts a row; `sign` is the weight `s_t` of GFD's `Σ s_t g_t g_tᵀ` and is ignored by the
    /// PSD sketches.
    pub fn insert(&mut self, row: Row<'_>, sign: f64) -> Result<(), SketchError> {
        match self {
            AnySketch::Fd(s) => s.insert(row),
            AnySketch::Gfd(s) => s.insert_signed(row, sign),
            AnySketch::Rp(s) => s.insert(row),
            AnySketch::Oja(s) => s.insert(row),
        }
    }

    /// The approximation as an operator (`BᵀB + αI`, or `B₊ᵀB₊ − B₋ᵀB₋` for GFD).
    pub fn operator(&self) -> Box<dyn SymOperator + '_> {
        match self {
            AnySketch::Fd(s) => Box::new(s.matrix()),
            AnySketch::Gfd(s) => Box::new(&**s),
            AnySketch::Rp(s) => Box::new(s.matrix()),
            AnySketch::Oja(s) => Box::new(s.matrix()),
        }
    }

    /// The isotropic part `α` of the approximation (RFD only; 0 otherwise).
    pub fn alpha(&self) -> f64 {
        match self {
            AnySketch::Fd(s) => s.alpha(),
            _ => 0.0,
        }
    }

    /// Number of non-zero rows held (both sides for GFD; `m` for RP and Oja).
    pub fn stored_rows(&self) -> usize {
        match self {
            AnySketch::Fd(s) => s.filled_rows(),
            AnySketch::Gfd(s) => s.positive().filled_rows() + s.negative().filled_rows(),
            AnySketch::Rp(s) => s.sketch_size(),
            AnySketch::Oja(s) => s.sketch_size(),
        }
    }

    /// The FD/GFD total shrinkage `Σ δ_t` (an upper bound on the spectral error), if any.
    pub fn total_shrinkage(&self) -> Option<f64> {
        match self {
            AnySketch::Fd(s) => Some(s.total_shrinkage()),
            AnySketch::Gfd(s) => Some(s.error_bound()),
            _ => None,
        }
    }
}

impl<T: SymOperator + ?Sized> SymOperator for &T {
    fn dim(&self) -> usize {
        (**self).dim()
    }

    fn apply(&self, v: &[f64], out: &mut [f64]) {
        (**self).apply(v, out)
    }
}
