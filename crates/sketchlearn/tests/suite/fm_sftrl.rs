//! SFTRL (Alg. 4/5) and GFD (Alg. 2/3): equality with full FTRL when the sketch is large
//! enough, Theorem 2's bound on random signed streams, the sign convention and the doubling
//! "else" branch (DESIGN.md §4 items 12–13), the factored backend against the crate's reference
//! GFD, and model files.

use crate::common;
use common::{learn_sparse, random_example as example};

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use sketchlearn::fm::{
    ConvexKind, DenseConvexFm, FactoredGfd, FmAlgorithm, FmConfig, FmModel, Sftrl, SftrlBackend,
};
use sketchlearn::linear::{LearnError, OnlineLearner};
use sketchlearn::loss::Loss;
use sketchlearn::sketch::{FdVariant, GeneralizedFrequentDirections};
use sketchlearn::spectral::{sym_eigenvalues, sym_spectral_norm};
use sketchlearn::Row;

const VARIANTS: [FdVariant; 2] = [FdVariant::PerRow, FdVariant::Doubling];
const BACKENDS: [SftrlBackend; 2] = [SftrlBackend::Factored, SftrlBackend::Reference];

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * (1.0 + a.abs().max(b.abs()))
}

/// Must show: SFTRL with m ≥ d + 2 equals full FTRL's prediction to rounding, both algorithms
/// (and both sketch backends), square and logistic loss.
#[test]
fn sftrl_with_large_sketch_equals_full_ftrl() {
    for (loss, binary, eta) in [(Loss::Squared, false, 0.02), (Loss::Logistic, true, 0.3)] {
        for d in [3usize, 6, 9] {
            for variant in VARIANTS {
                for backend in BACKENDS {
                    let m = d + 2;
                    let mut rng = Xoshiro256PlusPlus::seed_from_u64(d as u64 * 31 + 7);
                    let mut sftrl = Sftrl::new(d, m, variant, eta, loss, backend).unwrap();
                    let mut ftrl =
                        DenseConvexFm::new(d, ConvexKind::Ftrl, eta, loss, None, 1 << 20).unwrap();
                    let mut max_diff: f64 = 0.0;
                    for t in 0..400 {
                        let (idx, val, y) = example(&mut rng, d, 1 + t % 3, false, binary);
                        let a = learn_sparse(&mut sftrl, &idx, &val, y);
                        let b = learn_sparse(&mut ftrl, &idx, &val, y);
                        assert!(
                            close(a, b, 1e-8),
                            "{loss:?} d={d} {variant:?} {backend:?} t={t}: sftrl {a} vs ftrl {b}"
                        );
                        max_diff = max_diff.max((a - b).abs());
                    }
                    // The implicit Θ equals FTRL's matrix too.
                    let theta = sftrl.theta_dense();
                    for (p, q) in theta.iter().zip(ftrl.theta()) {
                        assert!(close(*p, *q, 1e-8), "Θ differs: {p} vs {q}");
                    }
                    assert!(max_diff < 1e-6);
                }
            }
        }
    }
}

/// With a small sketch the two GFD implementations still agree (same shrinks, same rows kept).
#[test]
fn factored_backend_matches_reference_gfd() {
    for variant in VARIANTS {
        for (d, m, one_hot) in [(40usize, 4usize, true), (25, 3, false), (60, 6, true)] {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(99 + d as u64);
            let (loss, eta) = (Loss::Squared, 0.01);
            let mut fast = Sftrl::new(d, m, variant, eta, loss, SftrlBackend::Factored).unwrap();
            let mut slow = Sftrl::new(d, m, variant, eta, loss, SftrlBackend::Reference).unwrap();
            for t in 0..1500 {
                let (idx, val, y) = example(&mut rng, d, 2, one_hot, false);
                let a = learn_sparse(&mut fast, &idx, &val, y);
                let b = learn_sparse(&mut slow, &idx, &val, y);
                assert!(
                    close(a, b, 1e-7),
                    "{variant:?} d={d} m={m} t={t}: factored {a} vs reference {b}"
                );
            }
            assert!(
                fast.sketch_error_bound() > 0.0,
                "the sketch must have shrunk"
            );
            assert_eq!(fast.sketch_rows(), slow.sketch_rows());
            assert!(close(
                fast.sketch_error_bound(),
                slow.sketch_error_bound(),
                1e-8
            ));
            // compact() leaves predictions unchanged.
            let (idx, val, _) = example(&mut rng, d, 2, one_hot, false);
            let x = Row::Sparse {
                indices: &idx,
                values: &val,
            };
            let before = fast.predict(x);
            fast.compact().unwrap();
            assert!(close(before, fast.predict(x), 1e-10));
        }
    }
}

/// Eigenvalues (descending) of `Σ_{s>0} s g gᵀ` or `Σ_{s<0} −s g gᵀ`.
fn side_spectrum(stream: &[(Vec<f64>, f64)], d: usize, positive: bool) -> Vec<f64> {
    let mut g = vec![0.0; d * d];
    for (row, s) in stream {
        if (*s > 0.0) == positive && *s != 0.0 {
            let w = s.abs();
            for i in 0..d {
                for j in 0..d {
                    g[i * d + j] += w * row[i] * row[j];
                }
            }
        }
    }
    sym_eigenvalues(&g, d).unwrap()
}

/// Must show: ‖G − (B₊ᵀB₊ − B₋ᵀB₋)‖₂ ≤ (‖H₊ − H₊,k‖²_F + ‖H₋ − H₋,k‖²_F)/(m − k) for every
/// k < m (SFTRL Theorem 2), for the reference and the factored GFD, per-row and doubling, on
/// random signed streams (dense and sparse rows, low-rank-ish and flat spectra). The computable
/// bound (total shrinkage) sits between the true error and the theorem's right-hand side.
#[test]
fn gfd_error_within_theorem_2_bound() {
    let mut checked = 0;
    for seed in 0..12u64 {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1000 + seed);
        let d = 8 + (seed as usize % 5) * 3;
        let m = 2 + seed as usize % 5;
        let n = 60 + 20 * (seed as usize % 4);
        let sparse = seed % 2 == 0;
        // Low-rank structure for half the seeds: rows near a 3-dimensional subspace.
        let basis: Vec<Vec<f64>> = (0..3)
            .map(|_| (0..d).map(|_| rng.random_range(-1.0..1.0)).collect())
            .collect();
        let stream: Vec<(Vec<f64>, f64)> = (0..n)
            .map(|_| {
                let mut row = vec![0.0; d];
                if seed % 3 == 0 {
                    for b in &basis {
                        let c: f64 = rng.random_range(-1.0..1.0);
                        row.iter_mut().zip(b).for_each(|(r, x)| *r += c * x);
                    }
                    row.iter_mut()
                        .for_each(|r| *r += 0.05 * rng.random_range(-1.0..1.0));
                } else if sparse {
                    for _ in 0..3 {
                        row[rng.random_range(0..d)] = rng.random_range(-2.0..2.0);
                    }
                } else {
                    row.iter_mut()
                        .for_each(|r| *r = rng.random_range(-1.0..1.0));
                }
                let s = match rng.random_range(0..10) {
                    0 => 0.0,
                    k if k < 6 => rng.random_range(0.01..3.0),
                    _ => -rng.random_range(0.01..3.0),
                };
                (row, s)
            })
            .collect();
        let mut exact = vec![0.0; d * d];
        for (row, s) in &stream {
            for i in 0..d {
                for j in 0..d {
                    exact[i * d + j] += s * row[i] * row[j];
                }
            }
        }
        let (pos, neg) = (
            side_spectrum(&stream, d, true),
            side_spectrum(&stream, d, false),
        );
        let tail = |ev: &[f64], k: usize| ev.iter().skip(k).map(|x| x.max(0.0)).sum::<f64>();
        for variant in VARIANTS {
            let mut reference = GeneralizedFrequentDirections::new(d, m, variant).unwrap();
            let mut factored = FactoredGfd::new(d, m, variant).unwrap();
            for (row, s) in &stream {
                let idx: Vec<u32> = (0..d as u32).filter(|&j| row[j as usize] != 0.0).collect();
                let val: Vec<f64> = idx.iter().map(|&j| row[j as usize]).collect();
                reference
                    .insert_signed(
                        Row::Sparse {
                            indices: &idx,
                            values: &val,
                        },
                        *s,
                    )
                    .unwrap();
                factored.insert_signed(&idx, &val, *s).unwrap();
            }
            for (name, approx, computable) in [
                ("reference", reference.to_dense(), reference.error_bound()),
                ("factored", factored.to_dense(), factored.error_bound()),
            ] {
                let diff: Vec<f64> = exact.iter().zip(&approx).map(|(a, b)| a - b).collect();
                let err = sym_spectral_norm(&diff, d).unwrap();
                let scale = 1e-9 * (1.0 + pos[0].abs() + neg[0].abs());
                assert!(
                    err <= computable + scale,
                    "seed {seed} {variant:?} {name}: error {err} > total shrinkage {computable}"
                );
                for k in 0..m {
                    let bound = (tail(&pos, k) + tail(&neg, k)) / (m - k) as f64;
                    assert!(
                        computable <= bound + scale,
                        "seed {seed} {variant:?} {name} k={k}: shrinkage {computable} > Theorem 2 bound {bound}"
                    );
                    assert!(err <= bound + scale);
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 100);
}

/// Item 13: q > 0 (over-prediction) goes to B₊, q < 0 to B₋, q = 0 nowhere; the prediction is
/// −η·âᵀ(B₊ᵀB₊ − B₋ᵀB₋)â (item 12: the printed formula drops η).
#[test]
fn sign_convention_and_eta() {
    for backend in BACKENDS {
        let eta = 0.1;
        let mut fm = Sftrl::new(3, 4, FdVariant::PerRow, eta, Loss::Squared, backend).unwrap();
        let x = Row::Sparse {
            indices: &[0, 2],
            values: &[1.0, 2.0],
        };
        // z = 0 < y = 2: q = −2 < 0 → B₋ gets √2·â, â = [1, 0, 2, 1], ‖â‖² = 6.
        assert_eq!(fm.learn(x, 2.0, 1.0).unwrap(), 0.0);
        assert_eq!(fm.sketch_rows(), (0, 1));
        let z = fm.predict(x);
        assert!((z - eta * 2.0 * 36.0).abs() < 1e-12, "{z}");
        // Now z = 7.2 > y = 0: q = 7.2 > 0 → B₊.
        fm.learn(x, 0.0, 1.0).unwrap();
        assert_eq!(fm.sketch_rows(), (1, 1));
        // q = 0 (weight 0) changes nothing.
        let before = fm.predict(x);
        fm.learn(x, 100.0, 0.0).unwrap();
        assert_eq!(fm.sketch_rows(), (1, 1));
        assert_eq!(fm.predict(x), before);
    }
}

/// Item 13, doubling "else" branch: rows appended while the 2m buffer is not full are kept (the
/// printed Alg. 5 would drop them). With 2m − 1 rows on one side nothing has been shrunk, so
/// SFTRL-fast is still exactly FTRL even though 2m − 1 > m − 1.
#[test]
fn doubling_keeps_rows_until_the_buffer_is_full() {
    for backend in BACKENDS {
        let (d, m) = (12, 3);
        let mut fast =
            Sftrl::new(d, m, FdVariant::Doubling, 0.001, Loss::Squared, backend).unwrap();
        let mut ftrl =
            DenseConvexFm::new(d, ConvexKind::Ftrl, 0.001, Loss::Squared, None, 1 << 20).unwrap();
        // Labels far above the predictions: every q < 0, so every row goes to B₋.
        for t in 0..(2 * m - 1) as u32 {
            let x = Row::Sparse {
                indices: &[t, t + 1],
                values: &[1.0, 1.0],
            };
            let a = fast.learn(x, 100.0, 1.0).unwrap();
            let b = ftrl.learn(x, 100.0, 1.0).unwrap();
            assert!(close(a, b, 1e-12));
        }
        assert_eq!(fast.sketch_rows(), (0, 2 * m - 1));
        for j in 0..d as u32 {
            let x = Row::Sparse {
                indices: &[j],
                values: &[1.0],
            };
            assert!(close(fast.predict(x), ftrl.predict(x), 1e-12));
        }
        // The 2m-th row fills the buffer: shrink to at most m − 1 rows.
        fast.learn(
            Row::Sparse {
                indices: &[0, 11],
                values: &[1.0, 1.0],
            },
            100.0,
            1.0,
        )
        .unwrap();
        assert!(fast.sketch_rows().1 < m);
    }
}

/// Per-row SFTRL keeps at most m − 1 rows per side at all times.
#[test]
fn per_row_keeps_m_minus_one_rows() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
    for backend in BACKENDS {
        let mut fm = Sftrl::new(30, 4, FdVariant::PerRow, 0.01, Loss::Squared, backend).unwrap();
        for _ in 0..300 {
            let (idx, val, y) = example(&mut rng, 30, 2, true, false);
            common::learn_sparse(&mut fm, &idx, &val, y);
            let (p, n) = fm.sketch_rows();
            assert!(p <= 3 && n <= 3);
        }
    }
}

/// Resuming from a model file continues bit for bit, for every algorithm.
#[test]
fn model_file_resume_is_bit_identical() {
    let dir = std::env::temp_dir().join(format!("fm-resume-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for alg in FmAlgorithm::ALL {
        let mut config = FmConfig::new(alg);
        config.size = 3;
        config.radius = if matches!(alg, FmAlgorithm::Ocg | FmAlgorithm::Ogd) {
            20.0
        } else {
            f64::INFINITY
        };
        config.project_every = 7;
        let d = 20;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let data: Vec<_> = (0..200)
            .map(|_| example(&mut rng, d, 2, true, false))
            .collect();
        let mut straight = config.build(d).unwrap();
        let mut model = FmModel::new(config, config.build(d).unwrap());
        for (k, (idx, val, y)) in data.iter().enumerate() {
            let x = Row::Sparse {
                indices: idx,
                values: val,
            };
            let a = straight.learn(x, *y, 1.0).unwrap();
            let b = model.learner.learn(x, *y, 1.0).unwrap();
            assert_eq!(a.to_bits(), b.to_bits(), "{alg} before saving, example {k}");
            if k == 99 {
                let path = dir.join(format!("{alg}.skl"));
                model.save(&path).unwrap();
                model = FmModel::load(&path).unwrap();
            }
        }
        let x = Row::Sparse {
            indices: &[1, 7],
            values: &[1.0, 1.0],
        };
        assert_eq!(
            straight.predict(x).to_bits(),
            model.learner.predict(x).to_bits(),
            "{alg}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Invalid hyper-parameters are errors at build time, never panics; bad examples are errors
/// that leave the model unchanged.
#[test]
fn invalid_parameters_and_inputs() {
    let base = FmConfig::new(FmAlgorithm::Sftrl);
    for bad in [
        FmConfig { eta: 0.0, ..base },
        FmConfig {
            eta: f64::NAN,
            ..base
        },
        FmConfig { eta: -1.0, ..base },
        FmConfig { size: 0, ..base },
        FmConfig {
            algorithm: FmAlgorithm::FmSgd,
            rank: 0,
            ..base
        },
        FmConfig {
            algorithm: FmAlgorithm::FmSgd,
            init_std: -1.0,
            ..base
        },
        FmConfig {
            algorithm: FmAlgorithm::Ocg,
            radius: f64::INFINITY,
            ..base
        },
        FmConfig {
            algorithm: FmAlgorithm::Ocg,
            radius: 10.0,
            ocg_block: 0,
            ..base
        },
        FmConfig {
            algorithm: FmAlgorithm::Ogd,
            radius: -1.0,
            ..base
        },
        FmConfig {
            algorithm: FmAlgorithm::Ogd,
            radius: 5.0,
            project_every: 0,
            ..base
        },
    ] {
        assert!(
            matches!(bad.build(10), Err(LearnError::InvalidParameter(_))),
            "{bad:?}"
        );
    }
    // The dense baselines refuse a matrix above the limit with a clear message.
    let too_big = FmConfig {
        algorithm: FmAlgorithm::Ftrl,
        max_dense_entries: 1000,
        ..base
    };
    let msg = too_big.build(100).unwrap_err().to_string();
    assert!(msg.contains("dense") && msg.contains("d = 100"), "{msg}");

    for alg in FmAlgorithm::ALL {
        let mut fm = FmConfig {
            radius: if alg == FmAlgorithm::Ocg {
                10.0
            } else {
                f64::INFINITY
            },
            ..FmConfig::new(alg)
        }
        .build(4)
        .unwrap();
        let x = Row::Sparse {
            indices: &[1],
            values: &[1.0],
        };
        fm.learn(x, 3.0, 1.0).unwrap();
        let before = fm.predict(x);
        let bad_index = Row::Sparse {
            indices: &[4],
            values: &[1.0],
        };
        assert!(matches!(
            fm.learn(bad_index, 1.0, 1.0),
            Err(LearnError::DimensionMismatch { .. })
        ));
        assert!(fm.learn(x, f64::NAN, 1.0).is_err());
        assert!(fm.learn(x, 1.0, -1.0).is_err());
        let nan_x = Row::Sparse {
            indices: &[0],
            values: &[f64::NAN],
        };
        assert!(fm.learn(nan_x, 1.0, 1.0).is_err());
        assert_eq!(fm.predict(x), before, "{alg}");
        // Features beyond the dimension are ignored by predict.
        let wide = Row::Sparse {
            indices: &[1, 9],
            values: &[1.0, 5.0],
        };
        assert_eq!(fm.predict(wide), before, "{alg}");
    }
}

/// Extreme values are refused (`Diverged`) or learned, never a panic, and the model stays
/// usable: predictions stay finite for every algorithm and both SFTRL backends.
#[test]
fn extreme_values_never_panic() {
    let mut configs: Vec<FmConfig> = FmAlgorithm::ALL
        .iter()
        .map(|&alg| FmConfig {
            radius: if alg == FmAlgorithm::Ocg {
                10.0
            } else {
                f64::INFINITY
            },
            size: 2,
            ..FmConfig::new(alg)
        })
        .collect();
    configs.push(FmConfig {
        backend: SftrlBackend::Reference,
        size: 2,
        ..FmConfig::new(FmAlgorithm::Sftrl)
    });
    for config in configs {
        let mut fm = config.build(3).unwrap();
        for (v, y) in [
            (1e80, 1.0),
            (1e200, 3.0),
            (1.0, 1e300),
            (-1e150, -1e150),
            (1e-300, 2.0),
            (1.0, 2.0),
        ] {
            for _ in 0..4 {
                let x = Row::Sparse {
                    indices: &[0, 2],
                    values: &[v, 1.0],
                };
                let _ = fm.learn(x, y, 1.0);
            }
        }
        let x = Row::Sparse {
            indices: &[1],
            values: &[1.0],
        };
        let r = fm.learn(x, 2.0, 1.0);
        assert!(
            r.is_ok() || matches!(r, Err(LearnError::Diverged(_))),
            "{config:?}: {r:?}"
        );
        let p = fm.predict(x);
        assert!(p.is_finite(), "{config:?}: {p}");
    }
}
