//! The Gaussian random matrix `R ∈ ℝ^{d×m}` with i.i.d. `N(0, 1)` entries (DRP paper §2, eq. (5))
//! and the projection `x̂ = Rᵀx/√m`.
//!
//! `R` is never stored: entry `R[j, k]` is a pure function of `(seed, j, k)`, generated from a
//! counter-based stream, so any row can be regenerated in any order and the same seed gives the
//! same bits on every machine. Construction: entries come in Box–Muller pairs `(k = 2p, 2p + 1)`;
//! pair `p` of row `j` has the counter `c = j·2³¹ + p < 2⁶³` and takes the two uniforms of the
//! SplitMix64 stream (Steele, Lea & Flood 2014) at positions `2c` and `2c + 1`, i.e.
//! `h_b = mix64(key + (2c + b)·γ)` with the golden-ratio increment `γ` and `key` derived from the
//! seed. The position is a bijection of `(j, k)`, so distinct entries never share their bits.
//! `u₁ = (⌊h₀/2¹¹⌋ + 1)/2⁵³ ∈ (0, 1]`, `u₂ = ⌊h₁/2¹¹⌋/2⁵³`, and
//! `(R[j,2p], R[j,2p+1]) = √(−2 ln u₁)·(cos 2πu₂, sin 2πu₂)`. (Marsaglia's polar form avoids the
//! sine and cosine but its data-dependent rejection measured 2.5× slower here.)

use super::data::Dataset;
use super::low_dim::Projected;
use super::DrpError;
use crate::cancel::{Cancel, Cancelled};
use crate::Row;

const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

#[inline]
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A seeded Gaussian `d × m` matrix generated on the fly (see the module documentation).
///
/// ```
/// use sketchlearn::drp::GaussianProjection;
/// let r = GaussianProjection::new(4, 7).unwrap();
/// let mut row = [0.0; 4];
/// r.row(12_345, &mut row);
/// assert_eq!(row[3], r.entry(12_345, 3)); // any entry, any order, same bits
/// assert_eq!(row, {
///     let mut again = [0.0; 4];
///     GaussianProjection::new(4, 7).unwrap().row(12_345, &mut again);
///     again
/// });
/// assert!(GaussianProjection::new(0, 7).is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GaussianProjection {
    m: usize,
    key: u64,
    seed: u64,
}

impl GaussianProjection {
    /// `1 ≤ m ≤ 2³²` columns, generated from `seed`. Rows `j` up to `2³² − 1` (the `u32` index
    /// space of [`Row`]).
    pub fn new(m: usize, seed: u64) -> Result<Self, DrpError> {
        if m == 0 || m > (1usize << 32) {
            return Err(DrpError::InvalidParameter(format!(
                "projection size m must be in 1..=2^32, got {m}"
            )));
        }
        Ok(GaussianProjection {
            m,
            key: mix64(seed ^ 0x6A09_E667_F3BC_C909),
            seed,
        })
    }

    /// The number of columns `m`.
    pub fn size(&self) -> usize {
        self.m
    }

    /// The seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The Box–Muller pair `p` of row `j`.
    #[inline]
    fn pair(&self, j: usize, p: usize) -> (f64, f64) {
        let c = ((j as u64) << 31) | p as u64;
        let base = self.key.wrapping_add((c << 1).wrapping_mul(GAMMA));
        let h1 = mix64(base);
        let h2 = mix64(base.wrapping_add(GAMMA));
        let u1 = ((h1 >> 11) as f64 + 1.0) * (1.0 / (1u64 << 53) as f64);
        let u2 = (h2 >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
        let rad = (-2.0 * u1.ln()).sqrt();
        let (sin, cos) = (std::f64::consts::TAU * u2).sin_cos();
        (rad * cos, rad * sin)
    }

    /// `R[j, k]`.
    pub fn entry(&self, j: usize, k: usize) -> f64 {
        let (a, b) = self.pair(j, k / 2);
        if k % 2 == 0 {
            a
        } else {
            b
        }
    }

    /// Row `j` of `R` into `out[..m]`.
    pub fn row(&self, j: usize, out: &mut [f64]) {
        let m = self.m;
        let mut k = 0;
        while k + 1 < m {
            let (a, b) = self.pair(j, k / 2);
            out[k] = a;
            out[k + 1] = b;
            k += 2;
        }
        if k < m {
            out[k] = self.pair(j, k / 2).0;
        }
    }

    /// `x̂ = Rᵀx/√m` for one example (eq. (5)).
    pub fn project_row(&self, x: Row<'_>) -> Vec<f64> {
        let m = self.m;
        let mut out = vec![0.0; m];
        let mut r = vec![0.0; m];
        let scale = 1.0 / (m as f64).sqrt();
        let add = |j: usize, v: f64| {
            if v != 0.0 {
                self.row(j, &mut r);
                crate::linalg::axpy(v * scale, &r, &mut out);
            }
        };
        x.for_each_entry(add);
        out
    }

    /// The projected training matrix `X̂ᵀ = XᵀR/√m` (`n × m`, row `i` is `x̂_i`), computed
    /// feature by feature so that each row of `R` is generated once: `O(d·m)` normal draws plus
    /// `O(nnz·m)` flops, `O(n·m)` memory.
    pub fn project(&self, data: &Dataset) -> Projected {
        self.project_cancellable(data, Cancel::never())
            .expect("never cancelled")
    }

    /// [`GaussianProjection::project`], polling `cancel` every 256 features.
    pub fn project_cancellable(
        &self,
        data: &Dataset,
        cancel: Cancel<'_>,
    ) -> Result<Projected, Cancelled> {
        let (n, m) = (data.len(), self.m);
        let mut p = vec![0.0; n * m];
        let cols = data.columns();
        let scale = 1.0 / (m as f64).sqrt();
        let mut r = vec![0.0; m];
        for j in 0..data.dim() {
            if j % 256 == 255 {
                cancel.check()?;
            }
            let (a, b) = (cols.ptr[j], cols.ptr[j + 1]);
            if a == b {
                continue;
            }
            self.row(j, &mut r);
            for k in a..b {
                let i = cols.rows[k] as usize;
                crate::linalg::axpy(cols.vals[k] * scale, &r, &mut p[i * m..(i + 1) * m]);
            }
        }
        Ok(Projected::new(n, m, p))
    }

    /// `R z/√m` of length `d`: the naive solution (10) for `z = z*`.
    pub fn back_project(&self, z: &[f64], d: usize) -> Vec<f64> {
        let m = self.m;
        let scale = 1.0 / (m as f64).sqrt();
        let mut r = vec![0.0; m];
        (0..d)
            .map(|j| {
                self.row(j, &mut r);
                crate::linalg::dot(&r, &z[..m]) * scale
            })
            .collect()
    }
}
