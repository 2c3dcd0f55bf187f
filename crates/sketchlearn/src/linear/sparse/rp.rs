//! Sparse RP-SON (SON paper Appendix G.1, Algorithm 7).
//!
//! `A = αI + SᵀS` with the Gaussian sketch `S ← S + rĝᵀ`, `r ~ N(0, I/m)` drawn exactly as
//! [`RandomProjection`](crate::sketch::RandomProjection) draws it (same seeded
//! `Xoshiro256PlusPlus`, `m` standard normals per update, times `1/√m`, also for a zero row), so
//! that the sparse and dense learners see the same sketch. The weights are `w = w̄ + Sᵀb`.
//!
//! Per example, with `z = Sx` gathered from the example's columns:
//! * prediction `p = w̄ᵀx + bᵀz`; projection `xᵀA⁻¹x = (‖x‖² − zᵀHz)/α`;
//! * a step `w += c·A⁻¹x = (c/α)(x − SᵀHz)` is `w̄ += (c/α)x` on the example's coordinates and
//!   `b −= (c/α)Hz`;
//! * the sketch update `S' = S + rĝᵀ` changes `Sᵀb` by `ĝ(rᵀb)`, so `w̄ −= (rᵀb)ĝ` keeps `w`;
//!   `S'S'ᵀ = SSᵀ + rqᵀ + qrᵀ` with `q = Sĝ + (‖ĝ‖²/2)r` (= `S'ĝ − (‖ĝ‖²/2)r`), the same
//!   symmetric rank-two update of `H = (αI + SSᵀ)⁻¹` as the dense sketch, and `S'x = z + r(ĝᵀx)`.
//!
//! The update's and the step's changes of the example's columns are written in one pass by the
//! driver ([`SparseNewton`]: `w̄_j += (f − (rᵀb)s)·x_j`, `S[:, j] += r·s·x_j`)
//! unless the step's guard cannot be proved from the gather's maxima or a projection step came
//! first.
//!
//! `SSᵀ` is also kept (`O(m²)` per update) so that `H` can be recomputed from it when rounding
//! breaks the incremental update, where the dense sketch recomputes it from `S` (`O(m²d)`).
//! When `w̄ᵀx` and `bᵀz` cancel by more than a factor 1000 (large steps on unnormalised data),
//! `Sᵀb` is transferred into `w̄` lazily (see `columns.rs`) and `b ← 0`.
//! Cost `O(m² + m·nnz)` per example.

use super::columns::{Init, LazyColumns};
use super::heads::HeadsCurvature;
use super::newton::{
    check_params, stored_layout, SparseCurvature, SparseNewton, SparseWeights, ToSketch,
};
use crate::linalg::{dot, SymEigen};
use crate::linear::curvature::{check_row_norm, MAX_ROW_SQUARED_NORM};
use crate::linear::{weight_ok, LearnError, NewtonParams};
use crate::sketch::symmetric_rank_two;
use crate::sketch::SketchError;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Sparse-time RP-SON: the driver [`SparseNewton`] over the Gaussian sketch
/// [`SparseRpCurvature`].
///
/// ```
/// use sketchlearn::linear::sparse::SparseRp;
/// use sketchlearn::linear::{NewtonParams, OnlineLearner};
/// use sketchlearn::Row;
/// let mut rp = SparseRp::new(1 << 20, 5, 1.0, 7, NewtonParams::default()).unwrap();
/// for _ in 0..10 {
///     rp.learn(Row::Sparse { indices: &[3, 900_000], values: &[1.0, 0.5] }, 1.0, 1.0).unwrap();
/// }
/// assert!(rp.predict(Row::Sparse { indices: &[3], values: &[1.0] }) > 0.0);
/// ```
pub type SparseRp = SparseNewton<SparseRpCurvature>;

/// The RP curvature `A = αI + SᵀS` with `S = Z` the sparsely updated Gaussian sketch (see the
/// [module](self) docs). (The binary learner's model files list these fields themselves, see
/// `stored_layout!`; the serde derive is the sparse-time softmax learner's.)
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct SparseRpCurvature {
    pub(super) alpha: f64,
    pub(super) m: usize,
    /// `H = (αI + SSᵀ)⁻¹`, row-major `m × m`.
    pub(super) h: Vec<f64>,
    /// `SSᵀ`.
    pub(super) gram: Vec<f64>,
    rng: Xoshiro256PlusPlus,
    rows_seen: u64,
    #[serde(skip)]
    hz: Vec<f64>,
    #[serde(skip)]
    r: Vec<f64>,
    #[serde(skip)]
    q: Vec<f64>,
    /// The last update's draw `r` (the column pass needs it after `r` is reused).
    #[serde(skip)]
    delta: Vec<f64>,
}

impl SparseRp {
    /// Dimension `d`, sketch size `m ≥ 0`, `α > 0`, seed of the Gaussian draws (the dense
    /// `RpCurvature::new(d, m, α, seed)` with the same seed draws the same `r`'s).
    pub fn new(
        dim: usize,
        m: usize,
        alpha: f64,
        seed: u64,
        params: NewtonParams,
    ) -> Result<Self, LearnError> {
        check_params(&params, alpha)?;
        let cols = LazyColumns::new(dim, m, Init::Zero);
        let curv = SparseRpCurvature::new(m, alpha, seed);
        Ok(SparseNewton::from_parts(params, cols, curv))
    }
}

impl SparseRpCurvature {
    /// `S = 0` (`H = I/α`), the Gaussian draws seeded with `seed`.
    pub(super) fn new(m: usize, alpha: f64, seed: u64) -> Self {
        let h = crate::linalg::scaled_identity(m, 1.0 / alpha);
        SparseRpCurvature {
            alpha,
            m,
            h,
            gram: vec![0.0; m * m],
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            rows_seen: 0,
            hz: Vec::new(),
            r: Vec::new(),
            q: Vec::new(),
            delta: Vec::new(),
        }
    }

    /// `H = (αI + SSᵀ)⁻¹` from the kept `SSᵀ` (clamped eigendecomposition).
    fn recompute_h(&mut self) -> Result<(), LearnError> {
        let m = self.m;
        let mut eig = SymEigen::new(m);
        eig.compute(&self.gram).map_err(SketchError::from)?;
        eig.clamped_inverse(self.alpha, &mut self.h);
        Ok(())
    }
}

impl SparseCurvature for SparseRpCurvature {
    fn size(&self) -> usize {
        self.m
    }

    fn alpha(&self) -> f64 {
        self.alpha
    }

    fn scratch(&mut self) {
        let m = self.m;
        self.hz.resize(m, 0.0);
        self.r.resize(m, 0.0);
        self.q.resize(m, 0.0);
        self.delta.resize(m, 0.0);
    }

    /// `zᵀHz` (`Hz` in `self.hz`).
    fn quad(&mut self, z: &[f64], _m: usize) -> f64 {
        let m = self.m;
        for i in 0..m {
            self.hz[i] = dot(&self.h[i * m..(i + 1) * m], z);
        }
        dot(z, &self.hz)
    }

    /// `Hz` (in `self.hz`): `A⁻¹x = (x − SᵀHz)/α`.
    fn step_direction(&mut self, coef: f64, z: &[f64], b: &[f64], m: usize) -> bool {
        let f = coef / self.alpha;
        self.solve(z, m);
        (0..self.m).all(|i| weight_ok(b[i] - f * self.hz[i]))
    }

    fn apply_step(&mut self, f: f64, b: &mut [f64], _m: usize) {
        for i in 0..self.m {
            b[i] -= f * self.hz[i];
        }
    }

    /// `‖ĝ‖² = s²‖x‖²` within [`MAX_ROW_SQUARED_NORM`]: the dense learner's rule (its
    /// derivation there).
    fn check_row(&self, g: ToSketch<'_>) -> Result<(), LearnError> {
        Ok(check_row_norm(g.s * g.s * g.xx, MAX_ROW_SQUARED_NORM)?)
    }

    /// The draw `r`, `SSᵀ`, `H` and `z ← S'x`; returns `Some(rᵀb)` (`r` in `self.delta`): the
    /// columns still change by `S ← S + rĝᵀ`, `w̄ −= (rᵀb)ĝ`, which keeps `w`. `None` when
    /// `ĝ = 0`. A row above [`MAX_ROW_SQUARED_NORM`] (or NaN) is refused first, by the dense
    /// learner's rule ([`check_row`](SparseCurvature::check_row)).
    ///
    /// **The checks after the draw** (`rᵀb·‖ĝ‖`, `r_i‖ĝ‖` and the new `SSᵀ` finite) cannot fail
    /// for a row that passed that rule, in a state this learner reached by learning fewer than
    /// `10⁵⁰/√m` rows:
    /// * `|r_i| < 14`: `rand_distr`'s ziggurat gives `|N(0,1)| ≤ R + ln(2⁵³)/R ≈ 13.7`
    ///   (`R ≈ 3.654`, its tail draws `R − ln(u)/R` with `u ≥ 2⁻⁵³`), times `1/√m ≤ 1`;
    /// * `‖ĝ‖ ≤ 10¹⁰⁰` (the rule) and `|b_i| ≤ MAX_WEIGHT = 10¹⁰⁰` (every step's guard), so
    ///   `|rᵀb|·‖ĝ‖ < 14m·10²⁰⁰` and `|r_i|‖ĝ‖ < 14·10¹⁰⁰`;
    /// * after `t` rows `S = Σ r_τ ĝ_τᵀ` has `‖S‖_F < 14√m·t·10¹⁰⁰`, so `|(SSᵀ)_ij| ≤ ‖S‖_F²`
    ///   and `|q_j| ≤ |S_j·ĝ| + ‖ĝ‖²|r_j|/2 < (14√m·t + 7)·10²⁰⁰`: the new entries
    ///   `(SSᵀ)_ij + r_i q_j + q_i r_j` stay below `10³⁰⁰` while `t√m < 10⁵⁰`.
    ///
    /// They remain (as errors, never panics) for a state loaded from a file, whose `SSᵀ` and `b`
    /// are checked only for their shapes. The draw is made from a copy of the generator, kept
    /// only once they pass: a refused row leaves the random stream and the row count as they
    /// were, so the learner goes on drawing the `r`'s of the dense learner, which never saw the
    /// row. When `H` cannot be recomputed the columns are updated before the error, as the rest
    /// of the sketch is (as the dense sketch's `recompute_h` fails after its `S` changed).
    fn prepare_update(
        &mut self,
        g: ToSketch<'_>,
        z: &mut [f64],
        w: &mut SparseWeights,
        _m: usize,
    ) -> Result<Option<f64>, LearnError> {
        self.check_row(g)?;
        let (m, ToSketch { x, s, xx, example }) = (self.m, g);
        let gg = s * s * xx;
        let scale = 1.0 / (m.max(1) as f64).sqrt();
        let mut rng = self.rng.clone();
        for ri in self.r.iter_mut() {
            let g: f64 = StandardNormal.sample(&mut rng);
            *ri = g * scale;
        }
        if gg == 0.0 {
            self.rng = rng;
            self.rows_seen += 1;
            return Ok(None);
        }
        let rb = dot(&self.r, &w.b);
        for i in 0..m {
            self.q[i] = s * z[i] + 0.5 * gg * self.r[i];
        }
        // Refuse (leaving S, H, w̄ and the generator as they are) an update that cannot stay
        // finite: only in a state loaded from a file (see the derivation above).
        let gmax = gg.sqrt();
        let finite = w.shifts_finite(&self.r, gmax)
            && (0..m).all(|i| {
                (self.r[i] * gmax).is_finite()
                    && (0..m).all(|j| {
                        (self.gram[i * m + j] + self.r[i] * self.q[j] + self.q[i] * self.r[j])
                            .is_finite()
                    })
            });
        if !finite {
            return Err(LearnError::Diverged(format!(
                "RP update, example {example} (non-finite sketch)"
            )));
        }
        self.rng = rng;
        self.rows_seen += 1;
        self.delta.copy_from_slice(&self.r);
        // q = Sĝ + (‖ĝ‖²/2) r with the old S (above); SSᵀ += rqᵀ + qrᵀ.
        for i in 0..m {
            for j in 0..m {
                self.gram[i * m + j] += self.r[i] * self.q[j] + self.q[i] * self.r[j];
            }
        }
        let sxx = s * xx;
        for i in 0..m {
            z[i] += self.r[i] * sxx;
        }
        // The dense sketch's update of H (recomputed from SSᵀ when it fails or cancels).
        if !symmetric_rank_two(&mut self.h, &mut self.hz, &mut self.r, &mut self.q) {
            if let Err(e) = self.recompute_h() {
                w.write_update(x, &self.delta, s);
                return Err(e);
            }
        }
        Ok(Some(rb))
    }

    fn delta(&self) -> &[f64] {
        &self.delta
    }

    fn fusable(&self, _pending: bool, _b: &[f64]) -> bool {
        true
    }

    /// `w̄ ← w̄ + Sᵀb` (lazily), `b ← 0`: see `columns.rs`.
    fn transfer(&mut self, w: &mut SparseWeights, _z: &mut [f64]) {
        w.rebase(None);
    }
}

impl HeadsCurvature for SparseRpCurvature {
    /// `v = Hz` (in `self.hz`).
    fn solve(&mut self, z: &[f64], _m: usize) {
        let m = self.m;
        for i in 0..m {
            self.hz[i] = dot(&self.h[i * m..(i + 1) * m], z);
        }
    }

    fn solved(&self) -> &[f64] {
        &self.hz[..self.m]
    }

    fn check_heads(&self, _w: &SparseWeights, _heads: usize) -> Result<(), String> {
        super::validate::check_rp_curvature(self)
    }
}

stored_layout!(SparseRpCurvature, "SparseRp", SparseRpCurvature::new(0, 1.0, 0), {
    params: NewtonParams = params,
    alpha: f64 = curv.alpha,
    m: usize = curv.m,
    cols: LazyColumns = w.cols,
    b: Vec<f64> = w.b,
    h: Vec<f64> = curv.h,
    gram: Vec<f64> = curv.gram,
    rng: Xoshiro256PlusPlus = curv.rng,
    rows_seen: u64 = curv.rows_seen,
    t: u64 = examples,
    pscale: f64 = pscale,
});

#[cfg(test)]
mod tests {
    use super::SparseRp;
    use crate::linear::{LearnError, NewtonParams, OnlineLearner};
    use crate::loss::Loss;
    use crate::Row;

    /// Row `k` of a small fixed stream over 20 features (three non-zeros, label ±1).
    fn example(k: usize) -> ([u32; 3], [f64; 3], f64) {
        let j = (k * 7 % 18) as u32;
        let v = [0.5, -0.3 + 0.01 * k as f64, 0.2];
        ([j, j + 1, j + 2], v, if k % 3 == 0 { 1.0 } else { -1.0 })
    }

    fn learn(l: &mut SparseRp, k: usize) -> Result<f64, LearnError> {
        let (i, v, y) = example(k);
        l.learn(
            Row::Sparse {
                indices: &i,
                values: &v,
            },
            y,
            1.0,
        )
    }

    /// An update refused by the checks after the Gaussian draw — reached here through a Gram
    /// matrix with an infinite entry, as only a state loaded from a file can have (the
    /// derivation at `prepare_update`) — changes nothing, not even the random stream: with the
    /// entry restored, the learner goes on bit for bit as a copy that never saw the row. (The
    /// draw used to advance the generator and the row count before the refusal.)
    #[test]
    fn an_update_refused_after_the_draw_leaves_the_random_stream_as_it_was() {
        let p = NewtonParams {
            loss: Loss::Squared,
            ..NewtonParams::default()
        };
        let mut a = SparseRp::new(20, 3, 0.7, 11, p).unwrap();
        for k in 0..6 {
            learn(&mut a, k).unwrap();
        }
        let mut never = a.clone();
        let kept = a.curv.gram[4];
        a.curv.gram[4] = f64::INFINITY;
        let before = postcard::to_allocvec(&a).unwrap();
        // Row 0 again: its columns are up to date, so the gather changes nothing either.
        let err = learn(&mut a, 0).unwrap_err();
        assert!(
            matches!(&err, LearnError::Diverged(e) if e.contains("RP update, example 7 (non-finite sketch)")),
            "{err:?}"
        );
        assert_eq!(postcard::to_allocvec(&a).unwrap(), before);
        a.curv.gram[4] = kept;
        for k in 6..12 {
            let (pa, pn) = (learn(&mut a, k).unwrap(), learn(&mut never, k).unwrap());
            assert_eq!(pa.to_bits(), pn.to_bits(), "example {k}");
        }
        assert_eq!(
            postcard::to_allocvec(&a).unwrap(),
            postcard::to_allocvec(&never).unwrap()
        );
    }
}
