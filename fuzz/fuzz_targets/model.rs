//! Fuzz target: structure-aware model files. A trained linear model (one of a few learners) has
//! its payload edited by the fuzzer's bytes — pairs (position, value), then a cut — and is framed
//! again with a valid checksum, so every input reaches the decoder and the validation (not the
//! checksum test).
//!
//! FM models (every algorithm, trained on one-hot pairs) are seeds too, loaded with
//! `FmModel::from_bytes` (their state is validated on load: `fm/validate.rs`).
//!
//! Invariants: no panic; a model that loads predicts finite numbers.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sketchlearn::fm::{FmAlgorithm, FmConfig, FmModel, FM_MODEL_KIND};
use sketchlearn::linear::{
    Algorithm, CurvatureKind, LearnerConfig, LinearModel, OnlineLearner, Representation,
};
use sketchlearn::model::{FORMAT_VERSION, MAGIC};
use sketchlearn::Row;
use std::sync::OnceLock;

const KIND: &[u8] = b"linear-learner";

/// Linear seeds first, then FM seeds (payloads, with their kind tag).
fn seeds() -> &'static [(&'static [u8], Vec<u8>)] {
    static SEEDS: OnceLock<Vec<(&'static [u8], Vec<u8>)>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let mut out: Vec<(&'static [u8], Vec<u8>)> =
            linear_seeds().into_iter().map(|p| (KIND, p)).collect();
        for algorithm in FmAlgorithm::ALL {
            let config = FmConfig {
                size: 3,
                rank: 3,
                ..FmConfig::new(algorithm)
            };
            let mut model = FmModel::new(config, config.build(8).unwrap());
            for t in 0..40u32 {
                let x = [t % 3, 3 + (t * 5) % 5];
                let row = Row::Sparse {
                    indices: &x,
                    values: &[1.0, 1.0],
                };
                let _ = model.learner.learn(row, f64::from(t % 4) - 1.5, 1.0);
            }
            let image = sketchlearn::model::to_bytes(FM_MODEL_KIND, &model).unwrap();
            out.push((
                FM_MODEL_KIND.as_bytes(),
                image[14 + FM_MODEL_KIND.len() + 12..].to_vec(),
            ));
        }
        out
    })
}

fn linear_seeds() -> Vec<Vec<u8>> {
    {
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
                let x: Vec<f64> = (0..6)
                    .map(|j| ((t * 5 + j * 3) % 7) as f64 / 3.0 - 1.0)
                    .collect();
                let _ =
                    model
                        .learner
                        .learn(Row::Dense(&x), if x[0] > 0.0 { 1.0 } else { -1.0 }, 1.0);
            }
            let image = model.to_bytes().unwrap();
            image[14 + KIND.len() + 12..].to_vec()
        })
        .collect()
    }
}

fn frame(kind: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&(kind.len() as u16).to_le_bytes());
    out.extend_from_slice(kind);
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
    let (kind, seed) = &seeds()[which as usize % seeds().len()];
    let mut payload = seed.clone();
    let n = payload.len();
    let mut pairs = edits.chunks_exact(3);
    for e in &mut pairs {
        let pos = u16::from_le_bytes([e[0], e[1]]) as usize % n;
        payload[pos] = e[2];
    }
    if let [cut, ..] = pairs.remainder() {
        payload.truncate(n - (*cut as usize % 4));
    }
    let image = frame(kind, &payload);
    if *kind != KIND {
        if let Ok(model) = FmModel::from_bytes(&image, "fuzz") {
            let p = model.learner.predict(Row::Sparse {
                indices: &[0, 4],
                values: &[1.0, 1.0],
            });
            assert!(p.is_finite(), "a loaded FM model predicts {p}");
        }
        return;
    }
    if let Ok(model) = LinearModel::from_bytes(&image, "fuzz") {
        let d = model.learner.dim();
        let p = model
            .learner
            .predict(Row::Dense(&vec![1.0; d.min(1 << 16)]));
        assert!(p.is_finite(), "a loaded model predicts {p}");
    }
});
