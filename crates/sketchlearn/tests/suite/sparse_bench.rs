//! Quick throughput check of the sparse learners (ignored; run with
//! `cargo test --release -p sketchlearn --test suite sparse_bench:: -- --ignored --nocapture`).

use crate::common;

use sketchlearn::linear::{Algorithm, CurvatureKind, LearnerConfig, OnlineLearner, Representation};
use std::time::Instant;

fn cpu() -> f64 {
    let s = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
    let f: Vec<&str> = s[s.rfind(')').unwrap() + 1..].split_whitespace().collect();
    (f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap()) / 100.0
}

fn data(n: usize, d: usize, nnz: usize) -> Vec<(Vec<u32>, Vec<f64>, f64)> {
    let mut lcg = common::Lcg(12345);
    let mut next = || lcg.next_u64() >> 11;
    (0..n)
        .map(|_| {
            let mut idx: Vec<u32> = (0..nnz).map(|_| (next() % d as u64) as u32).collect();
            idx.sort_unstable();
            idx.dedup();
            let val: Vec<f64> = idx
                .iter()
                .map(|_| ((next() % 1000) as f64 / 500.0 - 1.0) / (nnz as f64).sqrt())
                .collect();
            let y = if idx[0] % 2 == 0 { 1.0 } else { -1.0 };
            (idx, val, y)
        })
        .collect()
}

#[test]
#[ignore]
fn bench() {
    let m: usize = std::env::var("M")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let nnz: usize = std::env::var("NNZ")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let bits: u32 = std::env::var("BITS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(18);
    let d = 1usize << bits;
    let set = data(200_000, d, nnz);
    let mut cfgs = vec![(
        "adagrad",
        LearnerConfig {
            algorithm: Algorithm::AdaGrad,
            ..Default::default()
        },
    )];
    for c in [
        CurvatureKind::Oja,
        CurvatureKind::Rp,
        CurvatureKind::FdFast,
        CurvatureKind::RfdFast,
    ] {
        let config = LearnerConfig {
            algorithm: sketchlearn::linear::Algorithm::Newton,
            curvature: c,
            representation: Representation::Sparse,
            size: m,
            ..Default::default()
        };
        cfgs.push((config.curvature_name(), config));
    }
    cfgs.push((
        "oja-diag",
        LearnerConfig {
            algorithm: sketchlearn::linear::Algorithm::Newton,
            curvature: CurvatureKind::Oja,
            representation: Representation::Sparse,
            size: m,
            diag: true,
            ..Default::default()
        },
    ));
    let only = std::env::var("ONLY").unwrap_or_default();
    for (name, cfg) in cfgs {
        if !only.is_empty() && !only.split(',').any(|o| o == name) {
            continue;
        }
        let mut l = cfg.build(d).unwrap();
        let t = Instant::now();
        let c = cpu();
        let mut err = 0;
        for (i, v, y) in &set {
            let p = l
                .learn(
                    sketchlearn::Row::Sparse {
                        indices: i,
                        values: v,
                    },
                    *y,
                    1.0,
                )
                .unwrap_or(0.0);
            if (p > 0.0) != (*y > 0.0) {
                err += 1;
            }
        }
        let s = t.elapsed().as_secs_f64();
        let cs = cpu() - c;
        let reb = match &l {
            sketchlearn::linear::AnyLearner::Intercept(b) => match b.inner() {
                sketchlearn::linear::AnyLearner::Sparse(s) => s.rebases(),
                _ => 0,
            },
            _ => 0,
        };
        eprintln!("{name:12} m={m} nnz={nnz} b={bits}: {:.0} ex/s wall, {:.0} ex/s cpu, err {:.4}, rebases {reb}", set.len() as f64 / s, set.len() as f64 / cs, err as f64 / set.len() as f64);
    }
}
