//! Property tests for what the papers prove about the sketches.
//!
//! Inputs are random low-rank-plus-noise matrices, including rank-deficient ones (rank 0 too),
//! and zero rows. Every bound is checked with dense `d × d` linear algebra.

#![allow(clippy::needless_range_loop)] // index loops mirror the maths

use proptest::prelude::*;
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};
use rand_xoshiro::Xoshiro256PlusPlus;
use sketchlearn::sketch::{
    relative_spectral_error, FdVariant, FrequentDirections, GeneralizedFrequentDirections,
    LanczosOptions, OjaSketch, RandomProjection, RowMatrix, Sketch,
};
use sketchlearn::spectral::{singular_values, sym_eigenvalues};
use sketchlearn::Row;

/// A row-major `n × d` matrix `U W + noise·N` with `U: n × r`, `W: r × d`, and about
/// `zero_frac` of its rows set to zero.
#[derive(Clone, Debug)]
struct Case {
    n: usize,
    d: usize,
    a: Vec<f64>,
}

fn low_rank(n: usize, d: usize, r: usize, noise: f64, zero_frac: f64, seed: u64) -> Case {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut g = || -> f64 { StandardNormal.sample(&mut rng) };
    let u: Vec<f64> = (0..n * r).map(|_| g()).collect();
    // Decaying column scales make the spectrum non-flat.
    let w: Vec<f64> = (0..r * d)
        .map(|k| g() * 2f64.powi(-((k / d) as i32)))
        .collect();
    let mut a = vec![0.0; n * d];
    for i in 0..n {
        for j in 0..d {
            let mut s = 0.0;
            for k in 0..r {
                s += u[i * r + k] * w[k * d + j];
            }
            a[i * d + j] = s + noise * g();
        }
    }
    let zero_every = if zero_frac > 0.0 {
        (1.0 / zero_frac).round() as usize
    } else {
        0
    };
    if zero_every > 0 {
        for i in (0..n).step_by(zero_every) {
            a[i * d..(i + 1) * d].iter_mut().for_each(|x| *x = 0.0);
        }
    }
    Case { n, d, a }
}

fn case_strategy() -> impl Strategy<Value = Case> {
    (
        1usize..60,
        1usize..14,
        0usize..8,
        prop_oneof![Just(0.0), Just(1e-3), Just(0.3)],
        prop_oneof![Just(0.0), Just(0.2)],
        any::<u64>(),
    )
        .prop_map(|(n, d, r, noise, zf, seed)| low_rank(n, d, r.min(d), noise, zf, seed))
}

fn gram(c: &Case) -> Vec<f64> {
    let d = c.d;
    let mut g = vec![0.0; d * d];
    for i in 0..c.n {
        let row = &c.a[i * d..(i + 1) * d];
        for p in 0..d {
            for q in 0..d {
                g[p * d + q] += row[p] * row[q];
            }
        }
    }
    g
}

fn sub(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter().zip(b).map(|(x, y)| x - y).collect()
}

fn eig_range(m: &[f64], d: usize) -> (f64, f64) {
    let v = sym_eigenvalues(m, d).unwrap();
    (v[d - 1], v[0])
}

fn spec(m: &[f64], d: usize) -> f64 {
    let (lo, hi) = eig_range(m, d);
    lo.abs().max(hi.abs())
}

/// `‖A − A_k‖²_F = Σ_{i>k} σ_i²`.
fn tail_sq(c: &Case, k: usize) -> f64 {
    let s = singular_values(&c.a, c.n, c.d).unwrap();
    s.iter().skip(k).map(|x| x * x).sum()
}

fn frob_sq(c: &Case) -> f64 {
    c.a.iter().map(|x| x * x).sum()
}

fn sketch_fd(c: &Case, m: usize, variant: FdVariant, rfd: Option<f64>) -> FrequentDirections {
    let mut fd = match rfd {
        Some(a0) => FrequentDirections::rfd(c.d, m, variant, a0).unwrap(),
        None => FrequentDirections::fd(c.d, m, variant).unwrap(),
    };
    for i in 0..c.n {
        fd.insert(Row::Dense(&c.a[i * c.d..(i + 1) * c.d])).unwrap();
    }
    fd
}

/// The buffer schedules: the paper's two and two longer buffers (`ℓ = 2m + 1`, `ℓ = 5m`), for
/// which the same bounds hold (`sketch::frequent_directions` module docs).
fn variants(m: usize) -> [FdVariant; 4] {
    [
        FdVariant::PerRow,
        FdVariant::Doubling,
        FdVariant::Buffer(2 * m + 1),
        FdVariant::Buffer(5 * m),
    ]
}

/// Checks the FD guarantees for one sketch of `c`.
fn check_fd_bounds(c: &Case, fd: &FrequentDirections, m: usize) -> Result<(), TestCaseError> {
    let d = c.d;
    let tol = 1e-9 * (1.0 + frob_sq(c));
    let err = sub(&gram(c), &fd.matrix().to_dense());
    let (lo, hi) = eig_range(&err, d);
    prop_assert!(lo >= -tol, "AᵀA − BᵀB not PSD: min eigenvalue {lo}");
    let delta = fd.total_shrinkage();
    prop_assert!(hi <= delta + tol, "‖AᵀA − BᵀB‖ = {hi} > Σδ = {delta}");
    for k in 0..m {
        let bound = tail_sq(c, k) / (m - k) as f64;
        prop_assert!(
            delta <= bound + tol,
            "k={k}: Σδ = {delta} > ‖A − A_k‖²/(m−k) = {bound}"
        );
    }
    prop_assert!(fd.filled_rows() < fd.capacity());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, .. ProptestConfig::default() })]

    #[test]
    fn fd_is_psd_and_within_bound(c in case_strategy(), m in 1usize..9) {
        for v in variants(m) {
            let fd = sketch_fd(&c, m, v, None);
            check_fd_bounds(&c, &fd, m)?;
            prop_assert_eq!(fd.rows_seen(), c.n as u64);
        }
    }

    #[test]
    fn rfd_has_fd_sketch_and_half_the_error(c in case_strategy(), m in 1usize..9, a0 in prop_oneof![Just(0.0), Just(1e-3), Just(2.5)]) {
        let d = c.d;
        let tol = 1e-9 * (1.0 + frob_sq(&c));
        for v in variants(m) {
            let fd = sketch_fd(&c, m, v, None);
            let rfd = sketch_fd(&c, m, v, Some(a0));
            // Same B (bit for bit: the same shrink steps), α = α0 + Σδ/2.
            prop_assert_eq!(fd.rows(), rfd.rows());
            prop_assert_eq!(rfd.alpha(), a0 + fd.total_shrinkage() / 2.0);
            // ‖(AᵀA + α0 I) − (BᵀB + αI)‖ ≤ Σδ/2 ≤ ‖A − A_k‖²/(2(m−k)) (RFD Theorem 3).
            let mut target = gram(&c);
            for i in 0..d { target[i * d + i] += a0; }
            let err = spec(&sub(&target, &rfd.matrix().to_dense()), d);
            let half = rfd.total_shrinkage() / 2.0;
            prop_assert!(err <= half + tol, "RFD error {err} > Σδ/2 = {half}");
            for k in 0..m {
                let bound = tail_sq(&c, k) / (2.0 * (m - k) as f64);
                prop_assert!(err <= bound + tol, "k={k}: RFD error {err} > {bound}");
            }
            // (RFD's error is not always below FD's own error — only its bound is half of FD's:
            // when FD's error is well under Σδ, shifting by Σδ/2 can overshoot.)
        }
    }

    #[test]
    fn exact_when_sketch_exceeds_rank(n in 1usize..40, d in 1usize..12, r in 0usize..6, seed in any::<u64>()) {
        let r = r.min(d);
        let c = low_rank(n, d, r, 0.0, 0.25, seed);
        // FD keeps m − 1 directions (the m-th row is the free one), so m = rank + 1 is exact.
        let m = r + 1;
        let scale = 1.0 + frob_sq(&c);
        for v in variants(m) {
            let fd = sketch_fd(&c, m, v, None);
            let err = spec(&sub(&gram(&c), &fd.matrix().to_dense()), d);
            prop_assert!(err <= 1e-9 * scale, "m = {m} > rank {r} but error {err}");
        }
    }

    #[test]
    fn merge_keeps_single_stream_bound(c in case_strategy(), m in 1usize..9, split in 0.0f64..1.0) {
        let cut = (split * c.n as f64) as usize;
        for v in variants(m) {
            let first = Case { n: cut, d: c.d, a: c.a[..cut * c.d].to_vec() };
            let second = Case { n: c.n - cut, d: c.d, a: c.a[cut * c.d..].to_vec() };
            let mut a = sketch_fd(&first, m, v, None);
            let b = sketch_fd(&second, m, v, None);
            a.merge(&b).unwrap();
            prop_assert_eq!(a.rows_seen(), c.n as u64);
            check_fd_bounds(&c, &a, m)?;
            // RFD merge: the shrinkage halves add up, α0 counted once.
            let mut ra = sketch_fd(&first, m, v, Some(0.5));
            let rb = sketch_fd(&second, m, v, Some(0.5));
            ra.merge(&rb).unwrap();
            prop_assert!((ra.alpha() - (0.5 + ra.total_shrinkage() / 2.0)).abs() <= 1e-12 * (1.0 + ra.alpha()));
        }
    }

    #[test]
    fn gfd_within_theorem_2(c in case_strategy(), m in 1usize..9, signs_seed in any::<u64>()) {
        let d = c.d;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(signs_seed);
        let s: Vec<f64> = (0..c.n).map(|_| { let z: f64 = StandardNormal.sample(&mut rng); if z.abs() < 0.1 { 0.0 } else { z } }).collect();
        // H₊ has rows √s_t g_t for s_t > 0; H₋ has rows √(−s_t) g_t for s_t < 0.
        let part = |positive: bool| {
            let mut a = Vec::new();
            for i in 0..c.n {
                if (positive && s[i] > 0.0) || (!positive && s[i] < 0.0) {
                    let f = s[i].abs().sqrt();
                    a.extend(c.a[i * d..(i + 1) * d].iter().map(|x| x * f));
                }
            }
            Case { n: a.len() / d, d, a }
        };
        let (hp, hn) = (part(true), part(false));
        let tol = 1e-9 * (1.0 + frob_sq(&hp) + frob_sq(&hn));
        for v in variants(m) {
            let mut gfd = GeneralizedFrequentDirections::new(d, m, v).unwrap();
            for i in 0..c.n {
                gfd.insert_signed(Row::Dense(&c.a[i * d..(i + 1) * d]), s[i]).unwrap();
            }
            let exact = sub(&gram(&hp), &gram(&hn));
            let err = spec(&sub(&exact, &gfd.to_dense()), d);
            prop_assert!(err <= gfd.error_bound() + tol, "GFD error {err} > Σδ {}", gfd.error_bound());
            for k in 0..m {
                let tail = |h: &Case| if h.n == 0 { 0.0 } else { tail_sq(h, k) };
                let bound = (tail(&hp) + tail(&hn)) / (m - k) as f64;
                prop_assert!(err <= bound + tol, "k={k}: GFD error {err} > Theorem 2 bound {bound}");
            }
            prop_assert!(gfd.positive().filled_rows() < gfd.positive().capacity());
        }
    }

    #[test]
    fn random_projection_h_is_the_inverse(c in case_strategy(), m in 1usize..8, alpha in prop_oneof![Just(0.1), Just(1.0), Just(10.0)], seed in any::<u64>()) {
        let d = c.d;
        let mut rp = RandomProjection::new(d, m, alpha, seed).unwrap();
        for i in 0..c.n {
            rp.insert(Row::Dense(&c.a[i * d..(i + 1) * d])).unwrap();
        }
        // Direct: (αI + SSᵀ)⁻¹ via an m × m eigendecomposition.
        let s = rp.s();
        let mut k = vec![0.0; m * m];
        for i in 0..m {
            for j in 0..m {
                k[i * m + j] = (0..d).map(|p| s[i * d + p] * s[j * d + p]).sum::<f64>() + if i == j { alpha } else { 0.0 };
            }
        }
        // H · K must be the identity.
        let h = rp.h();
        let cond = spec(&k, m) / alpha;
        for i in 0..m {
            for j in 0..m {
                let v: f64 = (0..m).map(|p| h[i * m + p] * k[p * m + j]).sum();
                let want = if i == j { 1.0 } else { 0.0 };
                prop_assert!((v - want).abs() <= 1e-9 * cond.max(1.0), "(HK)[{i},{j}] = {v} cond {cond}");
            }
        }
    }

    #[test]
    fn oja_keeps_orthonormal_directions(c in case_strategy(), m in 1usize..6, seed in any::<u64>()) {
        let d = c.d;
        let mut oja = OjaSketch::new(d, m, 1.0, 1.0, seed).unwrap();
        for i in 0..c.n {
            oja.insert(Row::Dense(&c.a[i * d..(i + 1) * d])).unwrap();
        }
        let v = oja.eigenvectors();
        for i in 0..m {
            for j in 0..m {
                let ip: f64 = (0..d).map(|p| v[i * d + p] * v[j * d + p]).sum();
                let norm_i: f64 = (0..d).map(|p| v[i * d + p] * v[i * d + p]).sum();
                if i == j {
                    // A row is unit or, when m > d (no room), exactly zero.
                    prop_assert!((ip - 1.0).abs() < 1e-9 || ip == 0.0, "row {i} norm² {ip}");
                } else if norm_i > 0.0 {
                    prop_assert!(ip.abs() < 1e-9, "rows {i},{j}: {ip}");
                }
            }
        }
        let t = oja.t() as f64;
        for (i, h) in oja.h_diag().iter().enumerate() {
            prop_assert!((h - 1.0 / (1.0 + t * oja.eigenvalues()[i])).abs() < 1e-12);
        }
    }

    #[test]
    fn lanczos_matches_dense(c in case_strategy(), m in 1usize..6) {
        let d = c.d;
        let fd = sketch_fd(&c, m, FdVariant::Doubling, Some(0.0));
        let mut rows = RowMatrix::new(d);
        for i in 0..c.n {
            rows.push(Row::Dense(&c.a[i * d..(i + 1) * d]), 1.0);
        }
        let lanczos = relative_spectral_error(&rows, &fd.matrix(), LanczosOptions::default()).unwrap();
        let g = gram(&c);
        let norm = spec(&g, d);
        let dense_err = spec(&sub(&g, &fd.matrix().to_dense()), d);
        let dense = if norm > 0.0 { dense_err / norm } else { dense_err };
        prop_assert!((lanczos - dense).abs() <= 1e-8 * (1.0 + dense), "lanczos {lanczos} vs dense {dense}");
    }
}

#[test]
fn random_sketches_are_deterministic() {
    let c = low_rank(50, 7, 3, 0.1, 0.0, 11);
    let run = |seed| {
        let mut rp = RandomProjection::new(7, 4, 1.0, seed).unwrap();
        let mut oja = OjaSketch::new(7, 3, 1.0, 2.0, seed).unwrap();
        for i in 0..c.n {
            rp.insert(Row::Dense(&c.a[i * 7..(i + 1) * 7])).unwrap();
            oja.insert(Row::Dense(&c.a[i * 7..(i + 1) * 7])).unwrap();
        }
        (rp.h().to_vec(), oja.matrix().b.to_vec())
    };
    assert_eq!(run(5), run(5));
    assert_ne!(run(5), run(6));
}

#[test]
fn sparse_and_dense_rows_give_the_same_sketch() {
    let c = low_rank(40, 9, 4, 0.2, 0.3, 3);
    let mut dense = FrequentDirections::rfd(9, 3, FdVariant::Doubling, 0.0).unwrap();
    let mut sparse = dense.clone();
    for i in 0..c.n {
        let row = &c.a[i * 9..(i + 1) * 9];
        dense.insert(Row::Dense(row)).unwrap();
        let (idx, val): (Vec<u32>, Vec<f64>) = row
            .iter()
            .enumerate()
            .filter(|&(_, &x)| x != 0.0)
            .map(|(j, &x)| (j as u32, x))
            .unzip();
        sparse
            .insert(Row::Sparse {
                indices: &idx,
                values: &val,
            })
            .unwrap();
    }
    assert_eq!(dense.rows(), sparse.rows());
    assert_eq!(dense.alpha(), sparse.alpha());
}

#[test]
fn random_projection_is_unbiased_on_average() {
    // E[SᵀS] = GᵀG: averaged over seeds the relative error of the mean shrinks.
    let c = low_rank(30, 5, 5, 0.0, 0.0, 9);
    let g = gram(&c);
    let mut mean = vec![0.0; 25];
    let reps = 400;
    for seed in 0..reps {
        let mut rp = RandomProjection::new(5, 3, 1.0, seed).unwrap();
        for i in 0..c.n {
            rp.insert(Row::Dense(&c.a[i * 5..(i + 1) * 5])).unwrap();
        }
        for (m, x) in mean.iter_mut().zip(rp.matrix().to_dense()) {
            *m += x / reps as f64;
        }
    }
    let rel = spec(&sub(&mean, &g), 5) / spec(&g, 5);
    assert!(rel < 0.15, "mean of SᵀS is {rel} away from GᵀG");
}
