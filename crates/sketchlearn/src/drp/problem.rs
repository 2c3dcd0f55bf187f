//! The L2-regularised margin-loss problem (1) of the DRP paper,
//! `min_w λ/2‖w‖² + Σ_i ℓ(y_i x_iᵀw)` (no `1/n`, DESIGN.md §4 item 16), its losses, and the
//! shifted/offset form (13) that Algorithm 2 solves in the projected space.

use super::data::Dataset;
use super::DrpError;
use crate::loss::{sigmoid, softplus, Loss};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A differentiable margin loss `ℓ(z)` of the margin `z = y·xᵀw`.
///
/// | loss | `ℓ(z)` | `ℓ'(z)` | `ℓ''(z)` | smoothness γ |
/// |---|---|---|---|---|
/// | ridge | `½(1 − z)²` | `z − 1` | `1` | 1 |
/// | logistic | `ln(1 + e^{−z})` | `−1/(1 + e^{z})` | `σ(z)σ(−z)` | ¼ |
/// | smoothed hinge | `0` (`z ≥ 1`), `½ − z` (`z ≤ 0`), `½(1 − z)²` | `min(0, max(−1, z − 1))` | `[0 < z < 1]` | 1 |
///
/// With `y ∈ {±1}` the ridge loss is `½(y − xᵀw)²`, the paper's square-loss example (§3), and
/// the three losses are [`Loss::Squared`], [`Loss::Logistic`] and [`Loss::SmoothHinge`] of the
/// rest of the library evaluated at `p = xᵀw` (see [`DrpLoss::to_loss`]). The smoothed hinge is
/// the hinge loss smoothed as in the paper's footnote 1; its second derivative is the
/// generalised one (it jumps at 0 and 1).
///
/// ```
/// use sketchlearn::drp::DrpLoss;
/// for loss in [DrpLoss::Ridge, DrpLoss::Logistic, DrpLoss::SmoothHinge] {
///     for &z in &[-1.3, 0.2, 0.7, 2.5] {
///         let h = 1e-6;
///         let fd = (loss.value(z + h) - loss.value(z - h)) / (2.0 * h);
///         assert!((fd - loss.derivative(z)).abs() < 1e-6);
///         // Same values as the library's losses at p = z, y = 1.
///         assert!((loss.value(z) - loss.to_loss().value(z, 1.0)).abs() < 1e-12);
///     }
/// }
/// assert_eq!("smooth-hinge".parse::<DrpLoss>(), Ok(DrpLoss::SmoothHinge));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DrpLoss {
    /// Square loss `½(1 − z)²` (ridge regression on ±1 labels).
    Ridge,
    /// Logistic loss `ln(1 + e^{−z})`.
    Logistic,
    /// Quadratically smoothed hinge (width 1).
    SmoothHinge,
}

impl DrpLoss {
    /// Every loss, in a fixed order.
    pub const ALL: [DrpLoss; 3] = [DrpLoss::Ridge, DrpLoss::Logistic, DrpLoss::SmoothHinge];

    /// The command-line name: `ridge`, `logistic`, `smooth-hinge`.
    pub fn name(self) -> &'static str {
        match self {
            DrpLoss::Ridge => "ridge",
            DrpLoss::Logistic => "logistic",
            DrpLoss::SmoothHinge => "smooth-hinge",
        }
    }

    /// `ℓ(z)`.
    #[inline]
    pub fn value(self, z: f64) -> f64 {
        match self {
            DrpLoss::Ridge => 0.5 * (1.0 - z) * (1.0 - z),
            DrpLoss::Logistic => softplus(-z),
            DrpLoss::SmoothHinge => {
                if z >= 1.0 {
                    0.0
                } else if z <= 0.0 {
                    0.5 - z
                } else {
                    0.5 * (1.0 - z) * (1.0 - z)
                }
            }
        }
    }

    /// `ℓ'(z)`: the dual variable `α_i = ℓ'(y_i x_iᵀw)` of Propositions 2.1–2.2.
    #[inline]
    pub fn derivative(self, z: f64) -> f64 {
        match self {
            DrpLoss::Ridge => z - 1.0,
            DrpLoss::Logistic => -sigmoid(-z),
            DrpLoss::SmoothHinge => (z - 1.0).clamp(-1.0, 0.0),
        }
    }

    /// `ℓ''(z)` (the generalised second derivative for the smoothed hinge).
    #[inline]
    pub fn second_derivative(self, z: f64) -> f64 {
        match self {
            DrpLoss::Ridge => 1.0,
            DrpLoss::Logistic => sigmoid(z) * sigmoid(-z),
            DrpLoss::SmoothHinge => {
                if z > 0.0 && z < 1.0 {
                    1.0
                } else {
                    0.0
                }
            }
        }
    }

    /// The smoothness constant γ (`ℓ'' ≤ γ`) of Theorem 6.
    pub fn smoothness(self) -> f64 {
        match self {
            DrpLoss::Ridge | DrpLoss::SmoothHinge => 1.0,
            DrpLoss::Logistic => 0.25,
        }
    }

    /// The library loss with the same values at `p = xᵀw` for labels ±1 (used when a recovered
    /// model is saved as a linear model).
    pub fn to_loss(self) -> Loss {
        match self {
            DrpLoss::Ridge => Loss::Squared,
            DrpLoss::Logistic => Loss::Logistic,
            DrpLoss::SmoothHinge => Loss::SmoothHinge,
        }
    }
}

impl fmt::Display for DrpLoss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for DrpLoss {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "ridge" | "squared" => Ok(DrpLoss::Ridge),
            "logistic" => Ok(DrpLoss::Logistic),
            "smooth-hinge" => Ok(DrpLoss::SmoothHinge),
            _ => Err(format!(
                "unknown loss '{s}' (expected ridge, logistic or smooth-hinge)"
            )),
        }
    }
}

/// Problem (1): `f(w) = λ/2‖w‖² + Σ_i ℓ(y_i x_iᵀw)` with `λ > 0` (validated); on a regression
/// set, `Σ_i ℓ(x_iᵀw + c_i)` = ridge regression (see [`Dataset::regression`]).
///
/// ```
/// use sketchlearn::drp::{Dataset, DrpLoss, Problem};
/// use sketchlearn::Row;
/// let mut data = Dataset::new(2);
/// data.push(Row::Dense(&[1.0, 0.0]), 1.0).unwrap();
/// let p = Problem::new(DrpLoss::Ridge, 2.0).unwrap();
/// // f(w) = w₀² + w₁² + ½(1 − w₀)²
/// assert_eq!(p.objective(&data, &[1.0, 1.0]), 2.0);
/// assert!(Problem::new(DrpLoss::Ridge, 0.0).is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Problem {
    loss: DrpLoss,
    lambda: f64,
}

impl Problem {
    /// Validates `λ` (finite, `> 0`).
    pub fn new(loss: DrpLoss, lambda: f64) -> Result<Self, DrpError> {
        if !(lambda.is_finite() && lambda > 0.0) {
            return Err(DrpError::InvalidParameter(format!(
                "lambda must be finite and > 0, got {lambda}"
            )));
        }
        Ok(Problem { loss, lambda })
    }

    /// The loss.
    pub fn loss(&self) -> DrpLoss {
        self.loss
    }

    /// The regularisation `λ`.
    pub fn lambda(&self) -> f64 {
        self.lambda
    }

    /// `f(w)`.
    pub fn objective(&self, data: &Dataset, w: &[f64]) -> f64 {
        let reg = 0.5 * self.lambda * w.iter().map(|x| x * x).sum::<f64>();
        let y = data.labels();
        let c = data.base_offsets();
        reg + (0..data.len())
            .map(|i| {
                self.loss
                    .value(y[i] * data.row(i).dot(w) + c.map_or(0.0, |c| c[i]))
            })
            .sum::<f64>()
    }

    /// `∇f(w) = λw + Σ_i ℓ'(y_i x_iᵀw) y_i x_i` (length `max(d, w.len())`). At the optimum it is
    /// zero: this is the KKT condition the exact solver is tested against.
    pub fn gradient(&self, data: &Dataset, w: &[f64]) -> Vec<f64> {
        let mut g: Vec<f64> = w.iter().map(|x| self.lambda * x).collect();
        g.resize(data.dim().max(w.len()), 0.0);
        let alpha = self.dual(data, w);
        let c: Vec<f64> = alpha
            .iter()
            .zip(data.labels())
            .map(|(a, y)| a * y)
            .collect();
        data.add_combination(&c, &mut g);
        g
    }

    /// The dual variables `α_i = ℓ'(y_i x_iᵀw)` (Proposition 2.1, right-hand identity of (4));
    /// `ℓ'(x_iᵀw + c_i)` with the offsets `c_i` of a regression set ([`Dataset::regression`]).
    pub fn dual(&self, data: &Dataset, w: &[f64]) -> Vec<f64> {
        let y = data.labels();
        let c = data.base_offsets();
        (0..data.len())
            .map(|i| {
                self.loss
                    .derivative(y[i] * data.row(i).dot(w) + c.map_or(0.0, |c| c[i]))
            })
            .collect()
    }

    /// `Ok` unless `data` is a regression set and the loss is not the squared (ridge) one.
    pub fn check_data(&self, data: &Dataset) -> Result<(), DrpError> {
        if data.is_regression() && self.loss != DrpLoss::Ridge {
            return Err(DrpError::InvalidParameter(format!(
                "real-valued targets need the squared (ridge) loss, not {}",
                self.loss
            )));
        }
        Ok(())
    }

    /// The primal vector of a dual one, `w = −(1/λ) X D(y) α` (eq. (4), (11), (12)), of length
    /// `d`.
    pub fn primal_from_dual(&self, data: &Dataset, alpha: &[f64]) -> Vec<f64> {
        let c: Vec<f64> = alpha
            .iter()
            .zip(data.labels())
            .map(|(a, y)| -a * y / self.lambda)
            .collect();
        let mut w = vec![0.0; data.dim()];
        data.add_combination(&c, &mut w);
        w
    }
}

/// A linear map `A` with rows `a_i` (`rows × cols`): the data matrix `Xᵀ` of the full problem or
/// the projected `X̂ᵀ` of the low-dimensional one.
pub(crate) trait Design {
    fn rows(&self) -> usize;
    fn cols(&self) -> usize;
    /// `out_i = a_iᵀ w`.
    fn mul(&self, w: &[f64], out: &mut [f64]);
    /// `out += Σ_i c_i a_i`.
    fn mul_t_add(&self, c: &[f64], out: &mut [f64]);
}

impl Design for Dataset {
    fn rows(&self) -> usize {
        self.len()
    }
    fn cols(&self) -> usize {
        self.dim()
    }
    fn mul(&self, w: &[f64], out: &mut [f64]) {
        self.margins(w, out)
    }
    fn mul_t_add(&self, c: &[f64], out: &mut [f64]) {
        self.add_combination(c, out)
    }
}

/// A smooth objective for the trust-region Newton solver.
pub(crate) trait SmoothObjective {
    fn dim(&self) -> usize;
    /// `f(w)`; also remembers the margins at `w` for a following [`Self::gradient`] call.
    fn value(&mut self, w: &[f64]) -> f64;
    /// `∇f(w)` at the point of the last [`Self::value`] call; prepares `∇²f` there.
    fn gradient(&mut self, w: &[f64], g: &mut [f64]);
    /// `out = ∇²f v` at the point of the last [`Self::gradient`] call.
    fn hess_vec(&mut self, v: &[f64], out: &mut [f64]);
}

/// `F(w) = λ/2‖w + s‖² + Σ_i ℓ(y_i a_iᵀw + o_i)`: problem (1) with `s = 0, o = 0`, and problem
/// (13) of Algorithm 2 in the projected space with `s = Rᵀw̃/√m`, `o_i = y_i x_iᵀw̃`.
pub(crate) struct MarginObjective<'a, D: Design> {
    design: &'a D,
    loss: DrpLoss,
    lambda: f64,
    y: &'a [f64],
    offset: Option<&'a [f64]>,
    shift: Option<&'a [f64]>,
    margins: Vec<f64>,
    curvature: Vec<f64>,
    tmp: Vec<f64>,
}

impl<'a, D: Design> MarginObjective<'a, D> {
    pub fn new(
        design: &'a D,
        loss: DrpLoss,
        lambda: f64,
        y: &'a [f64],
        offset: Option<&'a [f64]>,
        shift: Option<&'a [f64]>,
    ) -> Self {
        let n = design.rows();
        MarginObjective {
            design,
            loss,
            lambda,
            y,
            offset,
            shift,
            margins: vec![0.0; n],
            curvature: vec![0.0; n],
            tmp: vec![0.0; n],
        }
    }

    /// `ℓ''` at the margins of the last [`SmoothObjective::gradient`] call.
    pub fn curvature(&self) -> &[f64] {
        &self.curvature
    }

    /// `z_i = y_i a_iᵀ w + o_i` into `self.margins`.
    fn compute_margins(&mut self, w: &[f64]) {
        self.design.mul(w, &mut self.margins);
        for i in 0..self.margins.len() {
            let o = self.offset.map_or(0.0, |o| o[i]);
            self.margins[i] = self.y[i] * self.margins[i] + o;
        }
    }
}

impl<D: Design> SmoothObjective for MarginObjective<'_, D> {
    fn dim(&self) -> usize {
        self.design.cols()
    }

    fn value(&mut self, w: &[f64]) -> f64 {
        self.compute_margins(w);
        let reg = match self.shift {
            Some(s) => w.iter().zip(s).map(|(a, b)| (a + b) * (a + b)).sum::<f64>(),
            None => w.iter().map(|a| a * a).sum::<f64>(),
        };
        0.5 * self.lambda * reg
            + self
                .margins
                .iter()
                .map(|&z| self.loss.value(z))
                .sum::<f64>()
    }

    fn gradient(&mut self, w: &[f64], g: &mut [f64]) {
        for (i, gi) in g.iter_mut().enumerate() {
            *gi = self.lambda * (w[i] + self.shift.map_or(0.0, |s| s[i]));
        }
        for i in 0..self.margins.len() {
            let z = self.margins[i];
            self.tmp[i] = self.loss.derivative(z) * self.y[i];
            self.curvature[i] = self.loss.second_derivative(z);
        }
        self.design.mul_t_add(&self.tmp, g);
    }

    fn hess_vec(&mut self, v: &[f64], out: &mut [f64]) {
        self.design.mul(v, &mut self.tmp);
        for (t, c) in self.tmp.iter_mut().zip(&self.curvature) {
            *t *= c; // y_i² = 1
        }
        for (o, vi) in out.iter_mut().zip(v) {
            *o = self.lambda * vi;
        }
        self.design.mul_t_add(&self.tmp, out);
    }
}
