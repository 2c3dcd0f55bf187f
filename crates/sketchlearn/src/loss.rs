//! Margin losses `ℓ(p; y)` of a raw prediction `p = wᵀx` and a label `y`.
//!
//! | loss | value | derivative in `p` | SON Assumption 2 constant σ on `|p|, |y| ≤ C` |
//! |---|---|---|---|
//! | logistic | `ln(1 + e^{−yp})` | `−y/(1 + e^{yp})` | `½·min(e^{−C}, 1/(8C))` |
//! | squared | `½(p − y)²` | `p − y` | `1/(4C²)` |
//! | hinge | `max(0, 1 − yp)` | `−y·[yp < 1]` | none (σ = 0) |
//! | smoothed hinge | `½(1−yp)²` if `0 < yp < 1`... see [`Loss::SmoothHinge`] | | none (σ = 0) |
//!
//! **Squared-loss scaling**: `½(p − y)²` (derivative `p − y`), the usual ML convention and VW's
//! `--loss_function squared` up to its factor 2; the RFD paper's experiments write `(p − y)²`,
//! which only doubles the gradient (equivalently, halves `1/α`).
//!
//! Derivation of σ (SON Assumption 2: `ℓ(b) ≥ ℓ(a) + ℓ'(a)(b−a) + σ/2·(ℓ'(a)(b−a))²` for
//! `|a|, |b| ≤ C`): for the squared loss the identity `ℓ(b) = ℓ(a) + ℓ'(a)(b−a) + ½(b−a)²` gives
//! `σ = 1/max ℓ'² = 1/(4C²)` (`|ℓ'| ≤ 2C`). The logistic loss is `e^{−C}`-exp-concave on
//! `[−C, C]` (`ℓ''/ℓ'² = e^{yp} ≥ e^{−C}`) with `|ℓ'| ≤ 1`, so Hazan et al.'s Lemma 3 gives
//! `σ = ½·min(e^{−C}, 1/(4·1·2C))`. Hinge and smoothed hinge have flat regions: σ = 0.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A margin loss for binary labels `y ∈ {−1, +1}` (squared loss: any real `y`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Loss {
    /// `ln(1 + exp(−y p))`.
    Logistic,
    /// `½ (p − y)²`.
    Squared,
    /// `max(0, 1 − y p)`.
    Hinge,
    /// Smoothed hinge (quadratically smoothed, width 1): `0` if `yp ≥ 1`, `½ − yp` if
    /// `yp ≤ 0`, `½(1 − yp)²` otherwise.
    SmoothHinge,
}

impl Loss {
    /// Every loss, in a fixed order.
    pub const ALL: [Loss; 4] = [
        Loss::Logistic,
        Loss::Squared,
        Loss::Hinge,
        Loss::SmoothHinge,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Loss::Logistic => "logistic",
            Loss::Squared => "squared",
            Loss::Hinge => "hinge",
            Loss::SmoothHinge => "smooth-hinge",
        }
    }

    /// `ℓ(p; y)`.
    ///
    /// ```
    /// use sketchlearn::loss::Loss;
    /// assert!((Loss::Logistic.value(0.0, 1.0) - 2f64.ln()).abs() < 1e-15);
    /// assert_eq!(Loss::Squared.value(3.0, 1.0), 2.0);
    /// assert_eq!(Loss::Hinge.value(0.5, 1.0), 0.5);
    /// assert_eq!(Loss::SmoothHinge.value(0.5, 1.0), 0.125);
    /// ```
    pub fn value(self, p: f64, y: f64) -> f64 {
        match self {
            Loss::Logistic => softplus(-y * p),
            Loss::Squared => 0.5 * (p - y) * (p - y),
            Loss::Hinge => (1.0 - y * p).max(0.0),
            Loss::SmoothHinge => {
                let z = y * p;
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

    /// `∂ℓ/∂p`.
    ///
    /// ```
    /// use sketchlearn::loss::Loss;
    /// // Central finite differences agree with the derivative.
    /// for loss in Loss::ALL {
    ///     for &(p, y) in &[(0.3, 1.0), (-1.7, 1.0), (2.2, -1.0)] {
    ///         let h = 1e-6;
    ///         let fd = (loss.value(p + h, y) - loss.value(p - h, y)) / (2.0 * h);
    ///         assert!((fd - loss.derivative(p, y)).abs() < 1e-6, "{loss:?}");
    ///     }
    /// }
    /// ```
    pub fn derivative(self, p: f64, y: f64) -> f64 {
        match self {
            Loss::Logistic => -y * sigmoid(-y * p),
            Loss::Squared => p - y,
            Loss::Hinge => {
                if y * p < 1.0 {
                    -y
                } else {
                    0.0
                }
            }
            Loss::SmoothHinge => {
                let z = y * p;
                if z >= 1.0 {
                    0.0
                } else if z <= 0.0 {
                    -y
                } else {
                    -y * (1.0 - z)
                }
            }
        }
    }

    /// The constant σ of SON Assumption 2 for predictions and labels bounded by `c` in absolute
    /// value, where it exists (see the module documentation for the derivation).
    ///
    /// ```
    /// use sketchlearn::loss::Loss;
    /// assert_eq!(Loss::Squared.curvature(1.0), Some(0.25));
    /// assert_eq!(Loss::Hinge.curvature(1.0), None);
    /// ```
    pub fn curvature(self, c: f64) -> Option<f64> {
        if !(c.is_finite() && c > 0.0) {
            return None;
        }
        match self {
            Loss::Logistic => Some(0.5 * (-c).exp().min(1.0 / (8.0 * c))),
            Loss::Squared => Some(1.0 / (4.0 * c * c)),
            Loss::Hinge | Loss::SmoothHinge => None,
        }
    }

    /// True for losses of binary classification (labels ±1).
    pub fn is_classification(self) -> bool {
        !matches!(self, Loss::Squared)
    }
}

/// `ln(1 + e^x)` without overflow.
pub fn softplus(x: f64) -> f64 {
    if x > 0.0 {
        x + (-x).exp().ln_1p()
    } else {
        x.exp().ln_1p()
    }
}

/// `(softplus(x), softplus(−x))` with one `exp` and one `ln_1p`: both are `ln(1 + e^{−|x|})`
/// plus `max(x, 0)` resp. `max(−x, 0)`, and [`softplus`] computes that `ln(1 + e^{−|x|})` from
/// the same argument on both sides, so each is the bits of [`softplus`]'s (tested, zeros and
/// NaN included).
pub fn softplus_pair(x: f64) -> (f64, f64) {
    if x > 0.0 {
        let l = (-x).exp().ln_1p();
        (x + l, l)
    } else {
        let l = x.exp().ln_1p();
        (l, if x < 0.0 { -x + l } else { l })
    }
}

/// `1/(1 + e^{−x})` without overflow.
pub fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

impl fmt::Display for Loss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Loss {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Loss::ALL
            .into_iter()
            .find(|l| l.name() == s)
            .ok_or_else(|| {
                format!("unknown loss '{s}' (expected logistic, squared, hinge or smooth-hinge)")
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn same(a: f64, b: f64) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }

    #[test]
    fn softplus_pair_special_values() {
        for x in [
            0.0,
            -0.0,
            1e-320,
            -1e-320,
            1.0,
            -1.0,
            40.0,
            -40.0,
            750.0,
            -750.0,
            f64::MAX,
            f64::MIN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ] {
            let (a, b) = softplus_pair(x);
            assert!(same(a, softplus(x)) && same(b, softplus(-x)), "{x}");
        }
    }

    proptest! {
        /// Both halves are [`softplus`]'s bits (the mixture's prediction uses the pair).
        #[test]
        fn softplus_pair_is_softplus_to_the_bit(x in -800.0f64..800.0, tiny in -1e-300f64..1e-300) {
            for v in [x, tiny] {
                let (a, b) = softplus_pair(v);
                prop_assert!(same(a, softplus(v)) && same(b, softplus(-v)), "{}", v);
            }
        }
    }
}
