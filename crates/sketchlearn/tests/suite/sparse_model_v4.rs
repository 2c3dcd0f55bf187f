//! Model files of the sparse-time learners (Oja, RP, FD, RFD) in format version 4, written before
//! their drivers became one generic driver (issue 23, item 5). Each file must still load,
//! predict what the model that wrote it predicted, and go on learning as it would have; written
//! back (format version 5 since the configuration split, its learner state unchanged) it loads
//! to the same model.
//!
//! The files and `sparse-v4.predictions` were written once, by the code before that change (with
//! `SKETCHLEARN_WRITE_SPARSE_V4=1` then); they are a record, not something to re-write — today's
//! code writes version 5.

use sketchlearn::linear::{LinearModel, OnlineLearner};
use sketchlearn::model;
use sketchlearn::Row;

use crate::common;

use common::golden::{golden_dir as dir, lcg, Data, Fnv, Planted};

/// A deterministic sparse stream over d = 256 (a fixed LCG), 20 draws per row.
fn stream(n: usize) -> Data {
    Planted {
        rows: n,
        draws: 20,
        scale: 256.0,
        always: None,
        value: (2.0, -0.7),
        signal: |j| j % 5 < 2,
        off: -0.2,
        noise: None,
    }
    .stream(lcg(0x2545_F491_4F6C_DD1D))
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
    h.hex()
}

/// The sparse-time learners, by the names their version-4 curvature had.
const KINDS: [&str; 4] = ["oja-sparse", "rp-sparse", "fd-sparse", "rfd-sparse"];

#[test]
fn version_4_sparse_model_files_load_write_back_and_predict_the_same() {
    let data = stream(700);
    let (train, rest) = data.split_at(400);
    let rest = rest.to_vec();
    let record = dir().join("sparse-v4.predictions");
    let mut lines = Vec::new();
    for kind in KINDS {
        let path = dir().join(format!("sparse-{kind}-v4.model"));
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(
            &bytes[8..12],
            &4u32.to_le_bytes(),
            "{kind}: a version-4 file"
        );
        let mut model = LinearModel::load(&path).unwrap();
        assert_eq!(model.examples_seen, train.len() as u64);
        assert_eq!(model.config.curvature_name(), kind);
        let back = model::to_bytes(sketchlearn::linear::LINEAR_MODEL_KIND, &model).unwrap();
        let mut again = LinearModel::from_bytes(&back, "memory").unwrap();
        assert!(
            again.to_bytes().unwrap() == back,
            "{kind}: the converted model does not write back the same bytes"
        );
        let hash = fingerprint(&mut model, &rest);
        assert_eq!(fingerprint(&mut again, &rest), hash, "{kind}: resaved");
        lines.push(format!("{kind} {hash}"));
    }
    let text = lines.join("\n") + "\n";
    assert_eq!(text, std::fs::read_to_string(record).unwrap());
}
