//! An upper bound on a new learner's memory from its configuration alone, so that the memory
//! check ([`check_fits`](super::footprint::check_fits)) passes a learner that fits by far
//! without building the nine probe learners of its estimate (issue 27: ≈1.2 ms of CPU on every
//! `train` with `d > 4096`, e.g. r8_earn_vs_rest and the generated stream, whose learners take
//! megabytes or a few gigabytes of a machine's many).
//!
//! The check's verdict on a learner of `all` bytes (every feature used) on a machine of
//! `have` bytes is "fits" exactly when `all ≤ have` (`judge`); its numbers appear only in a
//! warning or a refusal, i.e. when `all > have`. So a bound `U ≥ all` with `U ≤ have` gives the
//! verdict the probes give, and the check probes as before in every other case: **the same
//! verdicts and the same numbers**.
//!
//! The bound: the state of every learner is a sum of arrays of sizes `1, d, m, m·d, m², d²`
//! ([`footprint`](super::footprint)'s module documentation), so for a single learner of sketch
//! size `m` in dimension `d`
//!
//! `U = W · ((d + 1)(m + 1) + (m + 1)² + [full curvature] (d + 1)²)`, with `W` = [`WORD_BYTES`],
//!
//! and a mixture's is the sum of its members' plus [`MIXTURE_BYTES`]. Every coefficient of `U`
//! in `d` is at least twice the estimate's, for every configuration the tests build (every
//! algorithm, curvature, representation, sketch size, intercept, loss and penalty:
//! `tests::the_bound_dominates_the_estimate_coefficient_by_coefficient`), so `U ≥ all` at every
//! `d` (over the 461 configurations there, of sketch sizes 1 to 1,024, the tightest coefficient
//! is 8.7 times the estimate's). On this project's inputs the default's bound is 0.33 GB (r8:
//! `d = 23,585`; estimate 12 MB) and 3.7 GB (the generated stream, `d = 2^18`; estimate 134 MB), against the
//! 24 GiB of the machine it was measured on.

use crate::linear::multiclass::{MulticlassConfig, Reduction};
use crate::linear::{Algorithm, CurvatureKind, LearnerConfig};

/// Bytes of the bound per unit of `(d + 1)(m + 1)`, `(m + 1)²` and, for a full curvature,
/// `(d + 1)²`: 32 numbers of 8 bytes.
pub(super) const WORD_BYTES: f64 = 256.0;

/// Bytes of the bound for a mixture's own state (its members' weights and losses).
pub(super) const MIXTURE_BYTES: f64 = 4096.0;

/// An upper bound on the bytes of `config`'s learner in dimension `dim` with every feature used
/// (see the [module](self) docs): at least [`estimate`](super::footprint) gives, whatever the
/// penalty. The `match`es name every algorithm and curvature, so that a new one with `d²` state
/// cannot fall through to the bound without that term (and skip the probes that would see it).
pub(super) fn upper_bytes(config: &LearnerConfig, dim: usize) -> f64 {
    use Algorithm::*;
    let square = match config.algorithm {
        Auto | AutoSparse | AutoVerySparse | AdaGradGrid => {
            let members = config.mixture_members().expect("a mixture has members");
            let members: f64 = members.iter().map(|m| upper_bytes(m, dim)).sum();
            return members + MIXTURE_BYTES;
        }
        Newton => full_curvature(config.curvature),
        // Ada-FD and Sketchy do not read the curvature: their FD sketch is `m × d`.
        Ogd | AdaGrad | RunningMean | AdaFd | Sketchy => false,
    };
    let (d, m) = (dim as f64 + 1.0, config.size as f64 + 1.0);
    let square = if square { d * d } else { 0.0 };
    WORD_BYTES * (d * m + m * m + square)
}

/// An upper bound on the bytes of the multiclass learner of `config` in dimension `dim` (every
/// feature used): `K` times its member's for one-against-all; `None` for the softmax learner,
/// which has no bound (the check probes it).
pub(super) fn upper_bytes_multiclass(config: &MulticlassConfig, dim: usize) -> Option<f64> {
    match config.reduction {
        Reduction::OneVsAll => Some(config.classes as f64 * upper_bytes(&config.member, dim)),
        Reduction::Softmax => None,
    }
}

/// Whether a Newton learner of `curvature` keeps a `d × d` matrix.
fn full_curvature(curvature: CurvatureKind) -> bool {
    use CurvatureKind::*;
    match curvature {
        Full => true,
        Identity | Fd | FdFast | Rfd | RfdFast | Rp | Oja => false,
    }
}

#[cfg(test)]
mod tests {
    use super::super::footprint::{estimate, fits_by_bound, verdict, verdict_multiclass};
    use super::*;
    use crate::linear::{InputProfile, Regularization, Representation, ValidLearnerConfig};
    use crate::loss::Loss;

    /// Every configuration the memory check can see, as far as its memory goes: each algorithm
    /// (each curvature for the sketched ones), representation, a few sketch sizes, with and
    /// without the intercept and the diagonal, two losses (`auto` adds a member for the squared
    /// one), with and without a penalty; those the run would refuse before the check are left out.
    fn configurations() -> Vec<(ValidLearnerConfig, Regularization)> {
        use Algorithm::*;
        let penalties = [
            Regularization::default(),
            Regularization { l1: 1e-3, l2: 1e-4 },
        ];
        let mut out = Vec::new();
        for algorithm in Algorithm::ALL {
            let curvatures: &[CurvatureKind] = match algorithm {
                Newton | AdaFd | Sketchy => &CurvatureKind::ALL,
                _ => &[CurvatureKind::RfdFast],
            };
            for &curvature in curvatures {
                for representation in [
                    Representation::Dense,
                    Representation::Sparse,
                    Representation::Auto,
                ] {
                    for (size, bias, diag, loss) in [
                        (1, true, false, Loss::Logistic),
                        (4, false, true, Loss::Squared),
                        (10, true, true, Loss::Logistic),
                        (10, true, false, Loss::Squared),
                        (40, false, false, Loss::Hinge),
                        (256, true, true, Loss::Logistic),
                        (1024, false, true, Loss::Squared),
                    ] {
                        let config = LearnerConfig {
                            algorithm,
                            curvature,
                            representation,
                            size,
                            bias,
                            diag,
                            loss,
                            ..LearnerConfig::default()
                        };
                        let Ok(valid) = config.check() else {
                            continue;
                        };
                        for reg in penalties {
                            if reg.check(&valid).is_ok() {
                                out.push((valid.clone(), reg));
                            }
                        }
                    }
                }
            }
        }
        out
    }

    /// The coefficients `[c₀, c₁, c₂]` of the quadratic `f(d)` through its values at
    /// `d = h, 2h, 3h`.
    fn coefficients(f: impl Fn(usize) -> f64) -> [f64; 3] {
        const H: usize = 4096;
        let h = H as f64;
        let y = [f(H), f(2 * H), f(3 * H)];
        let c2 = (y[0] - 2.0 * y[1] + y[2]) / (2.0 * h * h);
        let c1 = (y[1] - y[0]) / h - 3.0 * h * c2;
        [y[0] - c1 * h - c2 * h * h, c1, c2]
    }

    /// `upper ≥ 2 · estimate` coefficient by coefficient in `d` (the constant: `upper ≥
    /// estimate`), so the bound holds at every dimension for every configuration: the estimate
    /// is a quadratic in `d` for a given configuration (the probes'), and so is the bound.
    #[test]
    fn the_bound_dominates_the_estimate_coefficient_by_coefficient() {
        let configs = configurations();
        assert!(configs.len() > 300, "{}", configs.len());
        let mut tightest: f64 = f64::INFINITY;
        for (valid, reg) in &configs {
            let est = coefficients(|d| estimate(valid, reg, d).unwrap());
            let upper = coefficients(|d| upper_bytes(valid.config(), d));
            let name = || format!("{} {reg:?}", valid.config().describe());
            assert!(upper[0] >= est[0], "{}: {upper:?} vs {est:?}", name());
            for i in 1..3 {
                assert!(
                    upper[i] >= 2.0 * est[i].max(0.0),
                    "{}: d^{i}: {upper:?} vs {est:?}",
                    name()
                );
                if est[i] > 0.0 {
                    tightest = tightest.min(upper[i] / est[i]);
                }
            }
        }
        eprintln!(
            "{} configurations; tightest ratio {tightest:.2}",
            configs.len()
        );
    }

    /// The dimensions and machines the verdicts are compared at: from just above the check's
    /// threshold to 2^32, machines of 1 GiB to 1 TiB.
    const DIMS: [usize; 7] = [4097, 23_585, 1 << 18, 1 << 22, 1 << 27, 1 << 31, 1 << 32];
    const MACHINES: [u64; 4] = [1 << 30, 8 << 30, 24 << 30, 1 << 40];

    /// The check with its bound gives the probes' verdict, with the same numbers (the same
    /// warning or refusal, compared as text), on every configuration, dimension and machine
    /// above — binary learners (every third configuration: each verdict builds nine probes) and
    /// one-against-all of 2, 8 and 64 classes.
    #[test]
    fn the_checks_verdicts_and_numbers_are_the_probes() {
        let text = |r: Result<Option<crate::run::Warning>, crate::run::RunError>| match r {
            Ok(w) => format!("ok {:?}", w.map(|w| w.to_string())),
            Err(e) => format!("err {e}"),
        };
        let (mut passed, mut compared) = (0, 0);
        for (valid, reg) in configurations().into_iter().step_by(3) {
            for dim in DIMS {
                for have in MACHINES {
                    let probes = |have| verdict(&valid, &reg, dim, "-b", have);
                    let bound = upper_bytes(valid.config(), dim);
                    let with = text(fits_by_bound(Some(have), Some(bound), probes));
                    let probes = text(probes(have));
                    assert_eq!(with, probes, "{} d = {dim}", valid.config().describe());
                    passed += usize::from(upper_bytes(valid.config(), dim) <= have as f64);
                    compared += 1;
                }
            }
            for classes in [2, 8, 64] {
                let config = MulticlassConfig {
                    reduction: Reduction::OneVsAll,
                    classes,
                    member: valid.config().clone(),
                    ..MulticlassConfig::default()
                };
                for (dim, have) in [(23_585, 24 << 30), (1 << 18, 24 << 30), (1 << 27, 1 << 40)] {
                    let probes = |have| verdict_multiclass(&config, &reg, dim, "-b", have);
                    let bound = upper_bytes_multiclass(&config, dim);
                    let with = text(fits_by_bound(Some(have), bound, probes));
                    let probes = text(probes(have));
                    assert_eq!(with, probes, "{} d = {dim}", config.describe());
                }
            }
        }
        // The bound decides a good part of them (without it none would be compared).
        assert!(passed > compared / 4, "{passed} of {compared}");
    }

    /// The default on r8_earn_vs_rest (`d = 23,585`, 58 stored features a row) and on the
    /// generated stream (`d = 2^18`, 50) passes on a machine of 8 GiB without a probe — the
    /// check's ≈1.2 ms of CPU in such a `train` (issue 27, `docs/results/speed.md`).
    #[test]
    fn the_default_on_r8_and_the_generated_stream_needs_no_probe() {
        for (dim, nnz) in [(23_585, 58.0), (1 << 18, 50.0)] {
            let profile = InputProfile {
                dim,
                hashed: false,
                avg_nnz: Some(nnz),
                sample: None,
            };
            let (valid, _) = LearnerConfig::default().check().unwrap().resolve(&profile);
            let upper = upper_bytes(valid.config(), dim);
            assert!(upper <= (8u64 << 30) as f64, "d = {dim}: {upper}");
            let all = estimate(&valid, &Regularization::default(), dim).unwrap();
            eprintln!("d = {dim}: estimate {all:.0} B, bound {upper:.0} B");
        }
    }
}
