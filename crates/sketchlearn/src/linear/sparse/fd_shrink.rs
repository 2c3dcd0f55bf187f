//! The shrink of the sparse FD/RFD learner ([`fd`](super::fd)) at the end of an epoch.
//!
//! # Shrink (Algorithms 11–12, in the `V` basis)
//!
//! With `M = GVᵀ` (`M_r = F·u_r`), `G − MV = LQ̂` by Algorithm 13 on `P = [−M, I_r]` with the Gram
//! matrix of `[V; G]`, `[[I, Mᵀ], [M, GGᵀ]]` (known: no `d`-sized work); `Q̂ = Q₁V + Q₂G` has
//! orthonormal rows orthogonal to `V`. Then `BᵀB` restricted to `span(V, Q̂)` is
//! `C = diag(σ², 0) + [Mᵀ; Lᵀ][M, L]` (size `m + r'`), whose top-`m` eigenvectors `U` give the
//! new directions `V' = (U₁ᵀ + U₂ᵀQ₁)F·Z + U₂ᵀQ₂·G = N₁Z + N₂G` with the same eigenvalues as
//! the dense learner's `BBᵀ` (the kept ones are unique up to sign). Working in the `V` basis
//! instead of the paper's `Z` basis (Gram matrix `ZZᵀ`) avoids the `ε·ρ²` rounding of `ZZᵀ`.
//! * Usually `F ← N₁`, `Z ← Z + AG` with `A = N₁⁻¹N₂` (only `G`'s columns change), and
//!   `w̄ += Gᵀ(c − Aᵀb)` keeps `w`.
//! * When `N₁` is singular or badly conditioned (condition number above 1e6), the new basis is
//!   taken directly: `Z ← N₁Z` lazily (a rebase with transfer `w̄ ← w̄ + Zᵀb`, `b ← 0`), then
//!   `Z += N₂G` and `w̄ += Gᵀc` on `G`'s columns, `F ← I`.
//!
//! **The completing rows come from the old basis.** FD (Liberty 2013, Ghashami et al. 2016
//! Alg. 1; SON Alg. 8–12 for the doubling buffer) keeps only the rows `√(λ_i − δ)·v_i`,
//! `i < keep ≤ m − 1`; the other `m − keep` rows of `V` have `σ = 0` and only complete the
//! orthonormal basis (the paper's `D = 0` rows): `B`, `BBᵀ`, the step and every later shrink's
//! eigenvalues and kept eigenvectors are the same for any orthonormal completion inside
//! `span(V, Q̂)` (a later `C` is `BᵀB` restricted to `span(V', Q̂')`, which contains the kept rows
//! and the new residuals whichever completion is taken). Taking the eigenvectors of `C` for them,
//! as before, makes `N₁` singular on text: a kept direction made of new words has (almost) no `Z`
//! part, and the `m`-th eigenvector then has to carry it. Measured with a temporary counter
//! (default, m = 10, `keep = m − 1` at every shrink): on w8a all 4,500 direct-path shrinks, on
//! r8_earn_vs_rest 499 of 500, had exactly one singular value of `N₁` below `1e-6·σ_max`.
//! So the completing rows are taken in `span(V)` instead: `v'_t = ξ_tᵀV` with `ξ_t ∈ ℝ^m`
//! orthonormal and orthogonal to the kept rows' `U₁` columns (`V·v'_iᵀ = U₁[:, i]` because
//! `Q̂ ⊥ V`, so `ξ ⊥ U₁[:, i]` is exactly `v'_t ⊥ v'_i`), found by Gram–Schmidt
//! ([`complete_in_old_basis`]). Their rows of `N₁` are `ξ_tᵀF`, of `N₂` zero. With them `N₁`
//! had a condition number below 100 on 3,968 and below 1e6 on 4,468 of w8a's 4,500 shrinks
//! (r8: 272 and 484 of 500), so the fast path — `F ← N₁`, `Z += AG` on `G`'s columns only —
//! replaces the basis change, its rebase (the composition of every live epoch's transform) and
//! the `O(m²)` catch-up of every column touched afterwards. The completion is used when it gives
//! a condition number of at most [`COMPLETED_COND`] (1e3); otherwise `C`'s eigenvectors are
//! taken as before (with the fast path up to [`MAX_COND`], or the direct path). On the generated
//! sparse stream (2^18 features, 50 random non-zeros a row) nearly every kept direction is new,
//! `N₁` stays singular with either completion, and the shrink takes the direct path as before.
//! Only for `d ≥ 4m` ([`COMPLETE_FROM`]): at `d = 2m` the buffer's rows are necessarily
//! dependent, the learner is precision-limited, and there the different rounding moved the
//! sparse learner 7e-8 (relative) from the dense one, over the 1e-9 the equivalence test asks
//! (with `d ≥ 4m` it agrees to 1e-9, including the data touching few columns, where a bound of
//! 1e2 instead of 1e3 failed that test by 2e-3: the bound was chosen by that test).
//!
//! A representation in which `Z` itself gains rows for `G`'s new directions (`Z` of `m + s`
//! rows, `F ∈ ℝ^{m×(m+s)}`, compacted by one rebase when full) would avoid the basis change
//! also where the completion cannot; it needs a variable-width column store and was not built.
//!
//! **Precision.** The residuals `G − MV` are orthonormalised through a Gram matrix, whose
//! rounding (`ε·S²` on squared norms of size `S²`) costs relative accuracy `ε·(S/L)²` on a
//! residual of norm `L`: exactly dependent rows (repeated examples) are recognised at `L ≤ 1e-6·S`
//! (`gram_schmidt::GRAM_DEPENDENT`), and nearly dependent ones lose digits. With
//! `d ≫ m` and rows in general position the learner agrees with the dense one to 1e-9 (tested);
//! with repeated rows to about 1e-8; when `d < 2m` the buffer's rows are necessarily dependent,
//! the agreement degrades badly, and the constructor refuses (the dense learner is cheap there).
//!
//! **Data touching few columns.** A large `d` does not mean the data span many dimensions: a
//! low-dimensional set hashed into `2^b` weights touches a handful of columns. Then `V` soon
//! nearly spans the data, most raw rows are nearly dependent, the digits lost in their residual
//! directions make `V` drift from orthonormal, and the drift feeds itself (a truly dependent row
//! shows a residual of the size of the drift, which passes as a new direction): magic04 in VW
//! format (10 features and a constant in `2^18` weights) drove the predictions to 1e7 and the
//! progressive error to 0.54 (dense learner: 0.2115). So after a shrink that met a nearly
//! dependent row (residual below 1e-3 of its norm), when at most `64m` columns were ever touched,
//! `K = ZZᵀ` is computed exactly from those columns (the never-touched ones in closed form,
//! [`LazyColumns::exact_gram`](super::columns)), and `V` is re-orthonormalised against it
//! (`F ← L⁻¹F`, `LLᵀ = FKFᵀ`) when `max|VVᵀ − I|` exceeds 1e-7 — below the 1e-6 dependency
//! threshold, so the drift can no longer pass for a residual. With it the sparse learner agrees
//! with the dense one on magic04 to 1e-11 over the whole file, `O(m²)` per touched column in those
//! shrinks only. Data touching more than `64m` columns and yet confined to few dimensions are not
//! covered.
//!
//! The digits are lost only in the directions the shrink keeps: a raw row found dependent
//! (`L_qq = 0`, e.g. a repeated example) adds none. So such rows alone trigger the check on
//! every [`CHECK_EVERY`]-th shrink only (the shrink's number, saved with the model, so a loaded
//! learner checks on the same shrinks), kept nearly dependent rows on every shrink. On w8a
//! (binary features, many repeated rows; RFD-SON m = 10) 1,143 of 4,521 shrinks met a nearly
//! dependent row, 57 of them a kept one, and `V` was re-orthonormalised twice: the check took
//! 8.4 % of the learner's time, now 1.3 % (`perf`), with the same outputs to the bit.
//!
//! The shrink rule (`δ`, the rows kept) is FD's own ([`shrink_rule`]), applied to the dense
//! buffer's `2m` eigenvalues: those of `C` (whose non-zero ones are `BBᵀ`'s), padded with zeros
//! or cut to `2m`.

use super::axpy::axpy;
use super::columns::{head, Z};
use super::fd::{RawRow, SparseFdCurvature};
use super::gram_schmidt::{decompose_with, GramSchmidtWork, GRAM_DEPENDENT};
use super::newton::SparseWeights;
use crate::linalg::dot;
use crate::linear::LearnError;
use crate::sketch::{shrink_rule, SketchError};
use crate::small_sym_eigen::FdEigen;

/// Largest `|VVᵀ − I|` entry tolerated after a shrink before `V` is re-orthonormalised (on
/// data touching few columns; see [`SparseFdCurvature::reorthonormalize`]).
const MAX_DRIFT: f64 = 1e-7;
/// Residual norm (relative to the row's norm) below which a raw row counts as nearly dependent
/// on `V` and the rows before it, so that the shrink checks `V`'s orthonormality.
const NEAR_DEPENDENT: f64 = 1e-3;
/// Most touched columns for which the exact `ZZᵀ` is computed after such a shrink (per `m`).
const FEW_PER_ROW: usize = 64;
/// A shrink whose only nearly dependent raw rows were found dependent (repeated examples,
/// frequent on binary data) checks `V`'s orthonormality only when its number is a multiple of
/// this (see the module docs).
const CHECK_EVERY: u64 = 8;
/// Condition number of `N₁` above which the shrink takes the new basis directly.
const MAX_COND: f64 = 1e6;
/// Condition number of `N₁` with the completing rows from `span(V)` above which they are
/// dropped for `C`'s eigenvectors (see the module docs).
const COMPLETED_COND: f64 = 1e3;
/// Smallest `d / m` at which the completing rows are taken from `span(V)` (see the module
/// docs: below it the learner is precision-limited and keeps `C`'s eigenvectors).
const COMPLETE_FROM: usize = 4;

/// The raw rows' residuals against `V` (Algorithm 13 on `P = [−M, I_r]`).
struct Residuals {
    /// The active rows of `V`.
    act: Vec<usize>,
    /// `M = GVᵀ` on the active rows (`r × ma`).
    mm: Vec<f64>,
    /// `P` after Algorithm 13 (`r × n`, `n = ma + r`): `Q̂ = Q₁V + Q₂G` on its independent rows.
    p: Vec<f64>,
    n: usize,
    /// `L` of `G − MV = LQ̂` (`r × r`).
    lmat: Vec<f64>,
    /// The independent rows.
    qi: Vec<usize>,
    /// A raw row (nearly) in the span of `V` and the rows before it.
    near_dependent: bool,
}

/// The eigen-system of `C = diag(σ², 0) + [Mᵀ; Lᵀ][M, L]` and FD's shrink of it.
struct Spectrum {
    /// Eigenvalues, descending.
    lam: Vec<f64>,
    /// Eigenvectors (columns), row-major `nc × nc`.
    uvec: Vec<f64>,
    nc: usize,
    delta: f64,
    keep: usize,
}

/// The shrink's scratch matrices, kept between shrinks so that a shrink allocates nothing once
/// the sizes have been seen (every entry is written before it is read: not part of the state,
/// not saved, and a clone starts empty).
#[derive(Debug, Default)]
pub(super) struct ShrinkWork {
    act: Vec<usize>,
    mm: Vec<f64>,
    kr: Vec<f64>,
    p: Vec<f64>,
    lmat: Vec<f64>,
    qi: Vec<usize>,
    gs: GramSchmidtWork,
    col: Vec<f64>,
    cmat: Vec<f64>,
    /// One eigen-workspace per size of `C` met so far (at most `m + 2m` sizes):
    /// [`FdEigen`] (not faer's solver at these sizes, where it is bound by its set-up).
    eigs: Vec<FdEigen>,
    lam: Vec<f64>,
    uvec: Vec<f64>,
    dense: Vec<f64>,
    n1a: Vec<f64>,
    n1: Vec<f64>,
    n2full: Vec<f64>,
    /// The completing rows' coordinates in the old basis ([`complete_in_old_basis`]).
    xi: Vec<f64>,
    /// `A`, `Aᵀ` (fast path) or `N₂ᵀ` (direct path).
    amat: Vec<f64>,
    at: Vec<f64>,
    coef: Vec<f64>,
    /// `N₁⁻¹` and the Gauss–Jordan scratch of [`invert`].
    inv: Vec<f64>,
    gj: Vec<f64>,
    /// Raw rows of past epochs, emptied, whose allocations the next appends reuse.
    pub(super) spare: Vec<RawRow>,
}

impl Clone for ShrinkWork {
    fn clone(&self) -> Self {
        ShrinkWork::default()
    }
}

/// `buf` emptied and refilled with `len` zeros (its allocation kept), taken out of the
/// workspace.
fn zeroed<T: Clone + Default>(buf: &mut Vec<T>, len: usize) -> Vec<T> {
    let mut v = std::mem::take(buf);
    v.clear();
    v.resize(len, T::default());
    v
}

impl SparseFdCurvature {
    /// The end of an epoch: shrink the `2m` rows to at most `m − 1` (see the module docs).
    /// Compiled a second time for AVX2 and run that way when the CPU has it: the small
    /// products of the shrink (Algorithm 13's Gram–Schmidt, `C`, `N₁`, `N₂`, the inverse) run
    /// 4-wide, with the same products and sums in the same order (no FMA), so the same bits.
    pub(super) fn shrink(
        &mut self,
        w: &mut SparseWeights,
        z: &mut [f64],
        gx: &mut Vec<f64>,
    ) -> Result<(), LearnError> {
        #[cfg(target_arch = "x86_64")]
        if super::has_avx2() {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { self.shrink_avx2(w, z, gx) };
        }
        self.shrink_plain(w, z, gx)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn shrink_avx2(
        &mut self,
        w: &mut SparseWeights,
        z: &mut [f64],
        gx: &mut Vec<f64>,
    ) -> Result<(), LearnError> {
        self.shrink_plain(w, z, gx)
    }

    #[inline(always)]
    fn shrink_plain(
        &mut self,
        w: &mut SparseWeights,
        z: &mut [f64],
        gx: &mut Vec<f64>,
    ) -> Result<(), LearnError> {
        let m = self.m;
        let mut work = self.work.take().unwrap_or_default();
        let res = self.residuals(&mut work);
        let spec = self.spectrum(&res, &mut work)?;
        // The completing rows from span(V) first; kept only if they make N₁ well conditioned
        // within COMPLETED_COND, else C's eigenvectors as before (see the module docs).
        let (mut n1, mut n2full, mut mnew, completed) =
            self.new_directions(&res, &spec, &mut work, w.cols.dim() >= COMPLETE_FROM * m);
        let cond = if completed { COMPLETED_COND } else { MAX_COND };
        let mut well_conditioned = mnew == m && invert(&n1, m, &mut work.gj, &mut work.inv, cond);
        if completed && !well_conditioned {
            (work.n1, work.n2full) = (n1, n2full);
            (n1, n2full, mnew, _) = self.new_directions(&res, &spec, &mut work, false);
            well_conditioned = mnew == m && invert(&n1, m, &mut work.gj, &mut work.inv, MAX_COND);
        }
        // Fast path: A = N1⁻¹N2, F ← N1, Z += AG; else take the basis directly.
        if well_conditioned {
            let n1inv = std::mem::take(&mut work.inv);
            let old_f = self.fast_path(w, z, gx, n1, &n1inv, &n2full, &mut work);
            (work.n1, work.inv) = (old_f, n1inv);
        } else {
            self.direct_path(w, z, gx, &n1, &n2full, mnew, &mut work);
            work.n1 = n1;
        }
        work.n2full = n2full;
        // On data touching few columns (a low-dimensional set, hashed or not) the residuals of
        // the raw rows against V are tiny whenever V nearly spans the data, their directions
        // lose digits in the Gram-matrix Gram–Schmidt, and the loss of orthonormality compounds
        // from shrink to shrink (magic04 with an intercept: prediction error 1e-13 → 1e7 against
        // the dense learner within 3000 examples). There K = ZZᵀ is cheap to compute exactly,
        // and V is re-orthonormalised against it.
        if res.near_dependent {
            if let Some(kk) = w.cols.exact_gram(FEW_PER_ROW * m) {
                self.reorthonormalize(&kk);
            }
        }
        work.spare.append(&mut self.g);
        self.index.clear();
        self.c.clear();
        gx.clear();
        self.keep_top_rows(&spec)?;
        (work.act, work.mm, work.p, work.lmat, work.qi) =
            (res.act, res.mm, res.p, res.lmat, res.qi);
        (work.lam, work.uvec) = (spec.lam, spec.uvec);
        self.work = Some(work);
        self.maybe_rebase(w, z, false);
        Ok(())
    }

    /// `M = GVᵀ`, and `G − MV = LQ̂` by Algorithm 13 on `P = [−M, I_r]` with the Gram matrix
    /// `[[I, Mᵀ], [M, GGᵀ]]` of `[V_a; G]`.
    #[inline(always)]
    fn residuals(&self, work: &mut ShrinkWork) -> Residuals {
        let (m, cap) = (self.m, self.cap());
        let (k, r) = (self.k, self.g.len());
        let mut act = zeroed(&mut work.act, 0);
        act.extend((0..m).filter(|&i| self.active[i]));
        let ma = act.len();
        // M = G Vᵀ restricted to the active rows of V: M[q][a] = (F u_q)_{act[a]}.
        let mut mm = zeroed(&mut work.mm, r * ma);
        for q in 0..r {
            for (a, &i) in act.iter().enumerate() {
                mm[q * ma + a] = dot(&self.f[i * m..(i + 1) * m], &self.g[q].u);
            }
        }
        // Algorithm 13 on P = [−M, I_r] with the Gram matrix [[I, Mᵀ], [M, GGᵀ]] of [V_a; G].
        let n = ma + r;
        let mut kr = zeroed(&mut work.kr, n * n);
        for a in 0..ma {
            kr[a * n + a] = 1.0;
        }
        for q in 0..r {
            for a in 0..ma {
                kr[(ma + q) * n + a] = mm[q * ma + a];
                kr[a * n + ma + q] = mm[q * ma + a];
            }
            for q2 in 0..r {
                kr[(ma + q) * n + ma + q2] = self.gram[(k + q) * cap + k + q2];
            }
        }
        let mut p = zeroed(&mut work.p, r * n);
        for q in 0..r {
            for a in 0..ma {
                p[q * n + a] = -mm[q * ma + a];
            }
            p[q * n + ma + q] = 1.0;
        }
        let mut lmat = zeroed(&mut work.lmat, r * r);
        let ind = decompose_with(
            &mut p,
            r,
            n,
            &kr,
            Some(&mut lmat),
            GRAM_DEPENDENT,
            &mut work.gs,
        );
        let mut qi = zeroed(&mut work.qi, 0);
        qi.extend((0..r).filter(|&q| ind[q]));
        work.kr = kr;
        // A raw row nearly in the span of V and the rows before it, yet kept: its residual
        // direction is known to few digits (see the re-orthonormalisation). A row found
        // dependent (L_qq = 0) adds no direction: it counts only on every CHECK_EVERY-th shrink.
        let near = |q: usize| {
            lmat[q * r + q] <= NEAR_DEPENDENT * self.gram[(k + q) * cap + k + q].max(0.0).sqrt()
        };
        let near_dependent = (0..r).any(|q| near(q) && lmat[q * r + q] > 0.0)
            || (self.shrinks % CHECK_EVERY == 0 && (0..r).any(near));
        Residuals {
            act,
            mm,
            p,
            n,
            lmat,
            qi,
            near_dependent,
        }
    }

    /// `C = diag(σ², 0) + [Mᵀ; Lᵀ][M, L]` of size `ma + r'`, its eigen-system, and FD's
    /// shrink rule: `δ = λ_m`, keep the leading `λ_i − δ > tol` among the first `m − 1`.
    #[inline(always)]
    fn spectrum(&self, res: &Residuals, work: &mut ShrinkWork) -> Result<Spectrum, LearnError> {
        let (m, cap) = (self.m, self.cap());
        let (k, r) = (self.k, self.g.len());
        let (ma, rr) = (res.act.len(), res.qi.len());
        let nc = ma + rr;
        let mut col = zeroed(&mut work.col, r * nc); // [M, L_ind] (r × nc)
        for q in 0..r {
            col[q * nc..q * nc + ma].copy_from_slice(&res.mm[q * ma..(q + 1) * ma]);
            for (t, &qq) in res.qi.iter().enumerate() {
                col[q * nc + ma + t] = res.lmat[q * r + qq];
            }
        }
        // C = colᵀcol, row by row: every entry is Σ_q col_qa·col_qb from −0.0 in the order of
        // q (as `Iterator::sum`), vectorised along the row.
        let mut cmat = zeroed(&mut work.cmat, nc * nc);
        for a in 0..nc {
            let row = &mut cmat[a * nc..a * nc + a + 1];
            row.fill(-0.0);
            for cq in col.chunks_exact(nc) {
                axpy(row, &cq[..=a], cq[a]);
            }
            for b in 0..a {
                cmat[b * nc + a] = cmat[a * nc + b];
            }
        }
        for (a, &i) in res.act.iter().enumerate() {
            if i < k {
                cmat[a * nc + a] += self.sigma[i] * self.sigma[i];
            }
        }
        let at = match work.eigs.iter().position(|e| e.size() == nc) {
            Some(at) => at,
            None => {
                work.eigs.push(FdEigen::new(nc));
                work.eigs.len() - 1
            }
        };
        let eig = &mut work.eigs[at];
        eig.compute(&cmat).map_err(SketchError::from)?;
        let mut lam = zeroed(&mut work.lam, 0);
        lam.extend_from_slice(eig.values());
        let mut uvec = zeroed(&mut work.uvec, 0);
        uvec.extend_from_slice(eig.vectors());
        // The dense buffer's BBᵀ has 2m eigenvalues: C's, whose non-zero ones they are, padded
        // with zeros (or cut: C's beyond 2m are zero up to rounding).
        let mut dense = zeroed(&mut work.dense, 0);
        dense.extend_from_slice(&lam);
        dense.resize(cap, 0.0);
        let (delta, keep) = shrink_rule(&dense, m);
        (work.col, work.cmat, work.dense) = (col, cmat, dense);
        Ok(Spectrum {
            lam,
            uvec,
            nc,
            delta,
            keep,
        })
    }

    /// The new directions `V' = N₁Z + N₂G` with `N₁ = (U₁ᵀ + U₂ᵀQ₁)F` (`m × m`) and
    /// `N₂ = U₂ᵀQ₂` (`m × r`, zero rows beyond `mnew = min(m, nc)`); returns `(N₁, N₂, mnew)`.
    #[inline(always)]
    fn new_directions(
        &self,
        res: &Residuals,
        spec: &Spectrum,
        work: &mut ShrinkWork,
        complete: bool,
    ) -> (Vec<f64>, Vec<f64>, usize, bool) {
        let m = self.m;
        let r = self.g.len();
        let (ma, n, nc) = (res.act.len(), res.n, spec.nc);
        let (p, qi, uvec) = (&res.p, &res.qi, &spec.uvec);
        let mnew = m.min(nc);
        // N1 = (U1ᵀ + U2ᵀQ1) F_a (mnew × m), N2 = U2ᵀ Q2 (mnew × r); Q1 = p[qi][..ma], Q2 = p[qi][ma..].
        let mut n1a = zeroed(&mut work.n1a, mnew * ma); // (U1ᵀ + U2ᵀQ1)
                                                        // N2 in the first mnew rows of the m × r N2full (zero rows beyond).
        let mut n2 = zeroed(&mut work.n2full, m * r);
        // Row by row, each entry summed in the order of t (n1a from U₁'s entry, N₂ from −0.0),
        // vectorised along the row.
        for i in 0..mnew {
            let v = &mut n1a[i * ma..(i + 1) * ma];
            for (a, x) in v.iter_mut().enumerate() {
                *x = uvec[a * nc + i];
            }
            let n2i = &mut n2[i * r..(i + 1) * r];
            n2i.fill(-0.0);
            for (t, &qq) in qi.iter().enumerate() {
                let u = uvec[(ma + t) * nc + i];
                let prow = &p[qq * n..(qq + 1) * n];
                axpy(v, &prow[..ma], u);
                axpy(n2i, &prow[ma..ma + r], u);
            }
        }
        // The rows past `keep` (σ' = 0) taken from span(V) instead (see the module docs).
        let mut completed = false;
        if complete && ma == m && spec.keep < mnew {
            let mut xi = zeroed(&mut work.xi, 0);
            if complete_in_old_basis(uvec, nc, ma, spec.keep, mnew, &mut xi) {
                n1a[spec.keep * ma..mnew * ma].copy_from_slice(&xi);
                n2[spec.keep * r..mnew * r].fill(0.0);
                completed = true;
            }
            work.xi = xi;
        }
        // N₁ = n1a·F_a, row by row (each entry from −0.0 in the order of the active rows).
        let mut n1 = zeroed(&mut work.n1, m * m);
        for i in 0..mnew {
            let row = &mut n1[i * m..(i + 1) * m];
            row.fill(-0.0);
            for (a, &fr) in res.act.iter().enumerate() {
                axpy(row, &self.f[fr * m..(fr + 1) * m], n1a[i * ma + a]);
            }
        }
        work.n1a = n1a;
        (n1, n2, mnew, completed)
    }

    /// `N₁` well conditioned: `A = N₁⁻¹N₂`, `F ← N₁`, `Z += AG` and `w̄ += Gᵀ(c − Aᵀb)` on
    /// `G`'s columns (keeps `w`), `z += A·Gx`. Returns the old `F`.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn fast_path(
        &mut self,
        w: &mut SparseWeights,
        z: &mut [f64],
        gx: &[f64],
        n1: Vec<f64>,
        n1inv: &[f64],
        n2full: &[f64],
        work: &mut ShrinkWork,
    ) -> Vec<f64> {
        let (m, cap) = (self.m, self.cap());
        let (k, r) = (self.k, self.g.len());
        let mut amat = zeroed(&mut work.amat, m * r);
        for i in 0..m {
            for q in 0..r {
                amat[i * r + q] = (0..m).map(|c| n1inv[i * m + c] * n2full[c * r + q]).sum();
            }
        }
        // tr(Z'Z'ᵀ) = tr K + 2Σ_q A_qᵀu_q + Σ_{q,q'} (A_qᵀA_q')(GGᵀ)_{qq'}.
        for q in 0..r {
            let aq: f64 = (0..m).map(|i| amat[i * r + q] * self.g[q].u[i]).sum();
            self.trk += 2.0 * aq;
            for q2 in 0..r {
                let aa: f64 = (0..m).map(|i| amat[i * r + q] * amat[i * r + q2]).sum();
                self.trk += aa * self.gram[(k + q) * cap + k + q2];
            }
        }
        // w̄_h += Gᵀ(c_h − Aᵀb_h) for every head, Z += AG on G's columns; z += A·gx.
        let heads = w.b.len() / m;
        let mut coef = zeroed(&mut work.coef, 0);
        coef.extend((0..r * heads).map(|qh| {
            let (q, h) = (qh / heads, qh % heads);
            let bh = &w.b[h * m..(h + 1) * m];
            self.c[qh] - (0..m).map(|i| amat[i * r + q] * bh[i]).sum::<f64>()
        }));
        let mut at = zeroed(&mut work.at, 0);
        transpose_into(&amat, m, r, &mut at);
        catch_up(w, &self.g);
        for (q, row) in self.g.iter().enumerate() {
            let aq = &at[q * m..(q + 1) * m];
            let cq = &coef[q * heads..(q + 1) * heads];
            for (&j, &v) in row.indices.iter().zip(&row.values) {
                let slot = w.cols.current(j as usize);
                for (h, c) in cq.iter().enumerate() {
                    slot[head(m, h)] += c * v;
                }
                axpy(&mut slot[Z..Z + m], aq, v);
            }
        }
        for i in 0..m {
            z[i] += (0..r).map(|q| amat[i * r + q] * gx[q]).sum::<f64>();
        }
        for i in 0..m {
            self.active[i] = true;
        }
        (work.amat, work.at, work.coef) = (amat, at, coef);
        std::mem::replace(&mut self.f, n1)
    }

    /// `N₁` singular or badly conditioned: `Z ← N₁Z` with the transfer `w̄ += Zᵀb` (lazy), then
    /// `Z += N₂G`, `w̄ += Gᵀc` on `G`'s columns, `F ← I` on the `mnew` new rows.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn direct_path(
        &mut self,
        w: &mut SparseWeights,
        z: &mut [f64],
        gx: &[f64],
        n1: &[f64],
        n2full: &[f64],
        mnew: usize,
        work: &mut ShrinkWork,
    ) {
        let m = self.m;
        let r = self.g.len();
        w.rebase(Some(n1));
        let mut n2t = zeroed(&mut work.at, 0);
        transpose_into(n2full, m, r, &mut n2t);
        let heads = w.b.len() / m;
        catch_up(w, &self.g);
        for (q, row) in self.g.iter().enumerate() {
            let nq = &n2t[q * m..(q + 1) * m];
            let cq = &self.c[q * heads..(q + 1) * heads];
            for (&j, &v) in row.indices.iter().zip(&row.values) {
                let slot = w.cols.current(j as usize);
                for (h, c) in cq.iter().enumerate() {
                    slot[head(m, h)] += c * v;
                }
                axpy(&mut slot[Z..Z + m], nq, v);
            }
        }
        for i in 0..m {
            self.tmp[i] = dot(&n1[i * m..(i + 1) * m], z)
                + (0..r).map(|q| n2full[i * r + q] * gx[q]).sum::<f64>();
        }
        z.copy_from_slice(&self.tmp[..m]);
        work.at = n2t;
        self.f.iter_mut().for_each(|v| *v = 0.0);
        for i in 0..m {
            self.active[i] = i < mnew;
            if i < mnew {
                self.f[i * m + i] = 1.0;
            }
        }
        self.trk = mnew as f64;
    }

    /// The new top rows `σ_i = √(λ_i − δ)`, `i < keep`, with `BBᵀ = diag(σ²)`, `α`'s shrinkage
    /// (RFD) and the factor of `αI + BBᵀ`.
    fn keep_top_rows(&mut self, spec: &Spectrum) -> Result<(), LearnError> {
        let cap = self.cap();
        let (lam, delta, keep) = (&spec.lam, spec.delta, spec.keep);
        self.sigma.iter_mut().for_each(|v| *v = 0.0);
        for i in 0..keep {
            self.sigma[i] = lam[i].max(0.0).sqrt() * (1.0 - delta / lam[i]).max(0.0).sqrt();
        }
        self.k = keep;
        self.gram.iter_mut().for_each(|v| *v = 0.0);
        for i in 0..keep {
            self.gram[i * cap + i] = self.sigma[i] * self.sigma[i];
        }
        self.shrink_total += delta;
        self.shrinks += 1;
        if !self.shrink_total.is_finite() {
            return Err(SketchError::NonFinite("FD shrinkage overflowed".into()).into());
        }
        self.refactor()
    }

    /// Re-orthonormalises the active rows of `V = F·Z` against `K = ZZᵀ` when they have
    /// drifted from orthonormal by more than [`MAX_DRIFT`]: `F ← L⁻¹F` with `LLᵀ = FKFᵀ`.
    fn reorthonormalize(&mut self, kk: &[f64]) {
        let m = self.m;
        let act: Vec<usize> = (0..m).filter(|&i| self.active[i]).collect();
        let na = act.len();
        let mut fk = vec![0.0; na * m];
        for (a, &i) in act.iter().enumerate() {
            for c in 0..m {
                fk[a * m + c] = (0..m).map(|e| self.f[i * m + e] * kk[e * m + c]).sum();
            }
        }
        let mut w = vec![0.0; na * na];
        let mut drift: f64 = 0.0;
        for a in 0..na {
            for b in 0..na {
                let v = dot(
                    &fk[a * m..(a + 1) * m],
                    &self.f[act[b] * m..(act[b] + 1) * m],
                );
                w[a * na + b] = v;
                drift = drift.max((v - if a == b { 1.0 } else { 0.0 }).abs());
            }
        }
        // A NaN drift (non-finite state) is left to the learner's other guards.
        let drifted = drift > MAX_DRIFT;
        if !drifted || crate::linalg::cholesky_in_place(&mut w, na, na).is_err() {
            return;
        }
        for a in 0..na {
            for c in 0..m {
                let mut acc = self.f[act[a] * m + c];
                for b in 0..a {
                    acc -= w[a * na + b] * self.f[act[b] * m + c];
                }
                self.f[act[a] * m + c] = acc / w[a * na + a];
            }
        }
    }
}

/// Brings the raw rows' columns up to date, four at a time where the sketch size allows
/// ([`LazyColumns::refresh_all`]), before the column pass of the shrink writes them: the same
/// values and state as the pass's own `current` on each column in order (a column is caught
/// up at its first appearance, before any write to it), with the catch-ups overlapping.
#[inline(always)]
fn catch_up(w: &mut SparseWeights, g: &[RawRow]) {
    for row in g {
        w.cols.refresh_all(&row.indices);
    }
}

/// Least squared residual (of a unit vector's) accepted for a completing row in
/// [`complete_in_old_basis`]: below it the old basis offers no direction orthogonal to the kept
/// rows and the eigenvectors of `C` are kept.
const MIN_COMPLETION: f64 = 1e-6;

/// The coordinates `ξ_t` (`t < mnew − keep`, row-major `(mnew − keep) × ma`, into `xi`) of
/// orthonormal vectors of `ℝ^ma` orthogonal to the kept rows' `U₁` columns
/// (`uvec[a·nc + i]`, `a < ma`, `i < keep`): the completing rows `ξ_tᵀV` of the new basis
/// (see the module docs). Modified Gram–Schmidt, twice, of the `U₁` columns, then of the unit
/// vector with the largest remaining part, one at a time. `false` (and `xi` unusable) when no
/// unit vector keeps a squared part of at least [`MIN_COMPLETION`].
#[inline(always)]
fn complete_in_old_basis(
    uvec: &[f64],
    nc: usize,
    ma: usize,
    keep: usize,
    mnew: usize,
    xi: &mut Vec<f64>,
) -> bool {
    let mut basis: Vec<f64> = Vec::with_capacity(mnew * ma);
    let mut v = vec![0.0; ma];
    let project = |v: &mut [f64], basis: &[f64]| {
        for _pass in 0..2 {
            for b in basis.chunks_exact(ma) {
                let c = dot(b, v);
                for (x, y) in v.iter_mut().zip(b) {
                    *x -= c * y;
                }
            }
        }
    };
    for i in 0..keep {
        for (a, x) in v.iter_mut().enumerate() {
            *x = uvec[a * nc + i];
        }
        project(&mut v, &basis);
        let norm = dot(&v, &v).sqrt();
        if norm > 1e-12 {
            basis.extend(v.iter().map(|x| x / norm));
        }
    }
    xi.clear();
    for _t in keep..mnew {
        // The unit vector e_a with the largest part outside the basis: 1 − Σ_b q_b[a]².
        let mut best = (0, f64::NEG_INFINITY);
        for a in 0..ma {
            let out = 1.0 - basis.chunks_exact(ma).map(|b| b[a] * b[a]).sum::<f64>();
            if out > best.1 {
                best = (a, out);
            }
        }
        if best.1 < MIN_COMPLETION {
            return false;
        }
        v.fill(0.0);
        v[best.0] = 1.0;
        project(&mut v, &basis);
        let norm = dot(&v, &v).sqrt();
        v.iter_mut().for_each(|x| *x /= norm);
        basis.extend_from_slice(&v);
        xi.extend_from_slice(&v);
    }
    true
}

/// Row `r` (mutable) and row `c ≠ r` of a row-major matrix with `m` columns.
#[inline(always)]
fn row_and_pivot(a: &mut [f64], r: usize, c: usize, m: usize) -> (&mut [f64], &[f64]) {
    if r < c {
        let (lo, hi) = a.split_at_mut(c * m);
        (&mut lo[r * m..(r + 1) * m], &hi[..m])
    } else {
        let (lo, hi) = a.split_at_mut(r * m);
        (&mut hi[..m], &lo[c * m..(c + 1) * m])
    }
}

/// `t` ← the transpose (row-major `cols × rows`) of a row-major `rows × cols` matrix.
#[inline(always)]
fn transpose_into(a: &[f64], rows: usize, cols: usize, t: &mut Vec<f64>) {
    t.clear();
    t.resize(rows * cols, 0.0);
    for i in 0..rows {
        for j in 0..cols {
            t[j * rows + i] = a[i * cols + j];
        }
    }
}

/// The inverse of a row-major `m × m` matrix by Gauss–Jordan with partial pivoting into `inv`
/// (`w`: scratch), or `false` when it is singular, its condition number (Frobenius norms)
/// exceeds `max_cond`, or its inverse's norm exceeds [`MAX_COND`].
///
/// The last test matters for `N₁` on its own: when every new direction lies outside the old
/// basis, `N₁` is tiny yet well conditioned, `A = N₁⁻¹N₂` reaches 1e33, and the fast path's
/// `Z += AG` and `w̄ += Gᵀ(c − Aᵀb)` cancel numbers near 1e14 (m = 2, d = 11: the weights moved
/// by 2⁻⁵, one ulp at 2e14, while the sketches agreed to 1e-14; about 1 random stream in 400).
/// The direct path has no such amplification.
#[inline(always)]
fn invert(a: &[f64], m: usize, w: &mut Vec<f64>, inv: &mut Vec<f64>, max_cond: f64) -> bool {
    w.clear();
    w.extend_from_slice(a);
    inv.clear();
    inv.resize(m * m, 0.0);
    for i in 0..m {
        inv[i * m + i] = 1.0;
    }
    for c in 0..m {
        let Some(piv) = (c..m).max_by(|&x, &y| w[x * m + c].abs().total_cmp(&w[y * m + c].abs()))
        else {
            return false;
        };
        let pv = w[piv * m + c];
        if pv == 0.0 || !pv.is_finite() {
            return false;
        }
        if piv != c {
            for j in 0..m {
                w.swap(c * m + j, piv * m + j);
                inv.swap(c * m + j, piv * m + j);
            }
        }
        for j in 0..m {
            w[c * m + j] /= pv;
            inv[c * m + j] /= pv;
        }
        for r in 0..m {
            if r != c {
                let fct = w[r * m + c];
                if fct != 0.0 {
                    for a in [&mut w[..], &mut inv[..]] {
                        let (row, pivot) = row_and_pivot(a, r, c, m);
                        for (x, p) in row.iter_mut().zip(pivot) {
                            *x -= fct * p;
                        }
                    }
                }
            }
        }
    }
    let na: f64 = a.iter().map(|x| x * x).sum::<f64>().sqrt();
    let ni: f64 = inv.iter().map(|x| x * x).sum::<f64>().sqrt();
    (na * ni).is_finite() && na * ni <= max_cond && ni <= MAX_COND
}
