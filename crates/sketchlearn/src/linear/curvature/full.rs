//! The full `d × d` curvature of FULL-ON (SON paper eq. (2), Hazan et al.'s ONS with SON's
//! projection): `A = αI + Σ ĝĝᵀ`, with `A⁻¹` kept by Sherman–Morrison updates in `O(d²)`.

use super::Curvature;
use crate::linalg::{axpy, dot};
use crate::sketch::SketchError;
use crate::Row;
use serde::{Deserialize, Serialize};

/// Full-matrix curvature (memory `d²`; for moderate `d`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FullCurvature {
    dim: usize,
    alpha: f64,
    /// `A⁻¹`, row-major `d × d`.
    inv: Vec<f64>,
    #[serde(skip)]
    work: Vec<f64>,
}

impl FullCurvature {
    /// `A = αI` initially; `α > 0`.
    pub fn new(dim: usize, alpha: f64) -> Result<Self, SketchError> {
        if !(alpha.is_finite() && alpha > 0.0) {
            return Err(SketchError::InvalidParameter(format!(
                "alpha must be finite and > 0, got {alpha}"
            )));
        }
        let inv = crate::linalg::scaled_identity(dim, 1.0 / alpha);
        Ok(FullCurvature {
            dim,
            alpha,
            inv,
            work: Vec::new(),
        })
    }

    /// `A⁻¹` (row-major `d × d`).
    pub fn inverse(&self) -> &[f64] {
        &self.inv
    }

    /// `out = A⁻¹x` (dense).
    fn solve_into(&self, x: Row<'_>, out: &mut [f64]) {
        let d = self.dim;
        match x {
            Row::Dense(v) => {
                for i in 0..d {
                    out[i] = dot(&self.inv[i * d..(i + 1) * d], v);
                }
            }
            Row::Sparse { indices, values } => {
                // A⁻¹ is symmetric: A⁻¹x = Σ_j x_j · row_j(A⁻¹).
                out.iter_mut().for_each(|o| *o = 0.0);
                for (&j, &xj) in indices.iter().zip(values) {
                    axpy(xj, &self.inv[j as usize * d..(j as usize + 1) * d], out);
                }
            }
        }
    }
}

impl Curvature for FullCurvature {
    fn dim(&self) -> usize {
        self.dim
    }

    fn update(&mut self, g: Row<'_>, scale: f64) -> Result<(), SketchError> {
        if scale == 0.0 || g.is_zero() {
            return Ok(());
        }
        let d = self.dim;
        let mut u = std::mem::take(&mut self.work);
        u.resize(d, 0.0);
        self.solve_into(g, &mut u); // u = A⁻¹g
        let q = scale * scale * g.dot(&u);
        let denom = 1.0 + q;
        if !(denom.is_finite() && q.is_finite()) {
            self.work = u;
            return Err(SketchError::NonFinite("full curvature update".into()));
        }
        let f = scale * scale / denom;
        for i in 0..d {
            let a = f * u[i];
            if a != 0.0 {
                axpy(-a, &u, &mut self.inv[i * d..(i + 1) * d]);
            }
        }
        self.work = u;
        Ok(())
    }

    fn inv_quad(&self, x: Row<'_>) -> f64 {
        let d = self.dim;
        match x {
            Row::Dense(v) => (0..d)
                .map(|i| v[i] * dot(&self.inv[i * d..(i + 1) * d], v))
                .sum(),
            Row::Sparse { indices, values } => {
                let mut s = 0.0;
                for (&i, &xi) in indices.iter().zip(values) {
                    let row = &self.inv[i as usize * d..(i as usize + 1) * d];
                    for (&j, &xj) in indices.iter().zip(values) {
                        s += xi * row[j as usize] * xj;
                    }
                }
                s
            }
        }
    }

    fn add_solve(&mut self, x: Row<'_>, coef: f64, target: &mut [f64]) {
        let d = self.dim;
        let mut u = std::mem::take(&mut self.work);
        u.resize(d, 0.0);
        self.solve_into(x, &mut u);
        axpy(coef, &u, target);
        self.work = u;
    }

    fn alpha(&self) -> f64 {
        self.alpha
    }
}
