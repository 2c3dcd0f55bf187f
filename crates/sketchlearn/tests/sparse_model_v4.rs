//! Model files of the sparse-time learners (Oja, RP, FD, RFD) in format version 4, written before
//! their drivers became one generic driver (issue 23, item 5). Each file must still load, write
//! back to the same bytes (the serialized layout did not change), predict what the model that
//! wrote it predicted, and go on learning as it would have.
//!
//! The files and `sparse-v4.predictions` were written once, by the code before that change, with
//! `SKETCHLEARN_WRITE_SPARSE_V4=1`; they are a record, not something to re-write.

use sketchlearn::linear::{Algorithm, CurvatureKind, LearnerConfig, LinearModel, OnlineLearner};
use sketchlearn::model;
use sketchlearn::Row;
use std::path::{Path, PathBuf};

type Data = Vec<(Vec<u32>, Vec<f64>, f64)>;

/// A deterministic sparse stream over d = 256 (a fixed LCG), 20 draws per row.
fn stream(n: usize) -> Data {
    let mut s: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = move || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    (0..n)
        .map(|_| {
            let mut idx: Vec<u32> = (0..20).map(|_| (next() * 256.0) as u32).collect();
            idx.sort_unstable();
            idx.dedup();
            let val: Vec<f64> = idx.iter().map(|_| next() * 2.0 - 0.7).collect();
            let score: f64 = idx
                .iter()
                .zip(&val)
                .map(|(&j, &v)| if j % 5 < 2 { v } else { -0.2 * v })
                .sum();
            (idx, val, if score > 0.0 { 1.0 } else { -1.0 })
        })
        .collect()
}

struct Fnv(u64);
impl Fnv {
    fn new() -> Self {
        Fnv(0xcbf29ce484222325)
    }
    fn f64(&mut self, x: f64) {
        for b in x.to_bits().to_le_bytes() {
            self.0 ^= b as u64;
            self.0 = self.0.wrapping_mul(0x100000001b3);
        }
    }
}

fn row(e: &(Vec<u32>, Vec<f64>, f64)) -> Row<'_> {
    Row::Sparse {
        indices: &e.0,
        values: &e.1,
    }
}

/// The hash of the predictions on `data`, then of the progressive predictions of one more pass
/// of learning and of the final weights.
fn fingerprint(model: &mut LinearModel, data: &Data) -> String {
    let mut h = Fnv::new();
    for e in data {
        h.f64(model.learner.predict(row(e)));
    }
    for e in data {
        h.f64(model.learner.learn(row(e), e.2, 1.0).unwrap_or(f64::NAN));
    }
    for w in model.learner.weights().iter() {
        h.f64(*w);
    }
    format!("{:016x}", h.0)
}

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

const KINDS: [CurvatureKind; 4] = [
    CurvatureKind::OjaSparse,
    CurvatureKind::RpSparse,
    CurvatureKind::FdSparse,
    CurvatureKind::RfdSparse,
];

#[test]
fn version_4_sparse_model_files_load_write_back_and_predict_the_same() {
    let data = stream(700);
    let (train, rest) = data.split_at(400);
    let rest = rest.to_vec();
    let record = dir().join("sparse-v4.predictions");
    let write = std::env::var_os("SKETCHLEARN_WRITE_SPARSE_V4").is_some();
    let mut lines = Vec::new();
    for kind in KINDS {
        let path = dir().join(format!("sparse-{}-v4.model", kind.name()));
        if write {
            let config = LearnerConfig {
                algorithm: Algorithm::Newton,
                curvature: kind,
                size: 5,
                ..Default::default()
            };
            let mut model = LinearModel::new(config.clone(), config.build(256).unwrap());
            for e in train {
                model.learner.learn(row(e), e.2, 1.0).unwrap();
            }
            model.examples_seen = train.len() as u64;
            model.save(&path).unwrap();
            let mut copy = model.clone();
            lines.push(format!("{} {}", kind.name(), fingerprint(&mut copy, &rest)));
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let mut model = LinearModel::load(&path).unwrap();
        assert_eq!(model.examples_seen, train.len() as u64);
        let back = model::to_bytes(sketchlearn::linear::LINEAR_MODEL_KIND, &model).unwrap();
        assert!(
            back == bytes,
            "{}: the model writes back different bytes",
            kind.name()
        );
        lines.push(format!(
            "{} {}",
            kind.name(),
            fingerprint(&mut model, &rest)
        ));
    }
    let text = lines.join("\n") + "\n";
    if write {
        std::fs::write(&record, &text).unwrap();
    }
    assert_eq!(text, std::fs::read_to_string(record).unwrap());
}
