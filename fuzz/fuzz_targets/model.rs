//! Fuzz target: structure-aware model files. A trained linear model (one of a few learners) has
//! its payload edited by the fuzzer's bytes — pairs (position, value), then a cut — and is framed
//! again with a valid checksum, so every input reaches the decoder and the validation (not the
//! checksum test).
//!
//! Invariants: no panic; a model that loads predicts finite numbers.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sketchlearn::linear::{
    Algorithm, CurvatureKind, LearnerConfig, LinearModel, OnlineLearner, Representation,
};
use sketchlearn::model::{FORMAT_VERSION, MAGIC};
use sketchlearn::Row;
use std::sync::OnceLock;

const KIND: &[u8] = b"linear-learner";

fn seeds() -> &'static [Vec<u8>] {
    static SEEDS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let newton = |curvature, representation| LearnerConfig {
            algorithm: Algorithm::Newton,
            curvature,
            representation,
            size: 3,
            ..LearnerConfig::default()
        };
        [
            LearnerConfig::default(),
            newton(CurvatureKind::Fd, Representation::Dense),
            newton(CurvatureKind::Oja, Representation::Dense),
            newton(CurvatureKind::Full, Representation::Dense),
            // Sparse-time learners (raw FD rows, the lazy column store): validated on load.
            newton(CurvatureKind::Rfd, Representation::Sparse),
            newton(CurvatureKind::Oja, Representation::Sparse),
            newton(CurvatureKind::Rp, Representation::Sparse),
        ]
        .into_iter()
        .map(|config| {
            let mut model = LinearModel::new(config.clone(), config.build(6).unwrap());
            for t in 0..30 {
                let x: Vec<f64> = (0..6).map(|j| ((t * 5 + j * 3) % 7) as f64 / 3.0 - 1.0).collect();
                let _ = model.learner.learn(Row::Dense(&x), if x[0] > 0.0 { 1.0 } else { -1.0 }, 1.0);
            }
            let image = model.to_bytes().unwrap();
            image[14 + KIND.len() + 12..].to_vec()
        })
        .collect()
    })
}

fn frame(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&(KIND.len() as u16).to_le_bytes());
    out.extend_from_slice(KIND);
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    let mut crc = crc32fast::Hasher::new();
    crc.update(&out);
    crc.update(payload);
    out.extend_from_slice(&crc.finalize().to_le_bytes());
    out.extend_from_slice(payload);
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, edits)) = data.split_first() else {
        return;
    };
    let mut payload = seeds()[which as usize % seeds().len()].clone();
    let n = payload.len();
    let mut pairs = edits.chunks_exact(3);
    for e in &mut pairs {
        let pos = u16::from_le_bytes([e[0], e[1]]) as usize % n;
        payload[pos] = e[2];
    }
    if let [cut, ..] = pairs.remainder() {
        payload.truncate(n - (*cut as usize % 4));
    }
    if let Ok(model) = LinearModel::from_bytes(&frame(&payload), "fuzz") {
        let d = model.learner.dim();
        let p = model.learner.predict(Row::Dense(&vec![1.0; d.min(1 << 16)]));
        assert!(p.is_finite(), "a loaded model predicts {p}");
    }
});
