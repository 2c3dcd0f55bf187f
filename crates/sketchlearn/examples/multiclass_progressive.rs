//! One pass in file order over multiclass LIBSVM files: progressive error and examples/second
//! of one-against-all (`auto` and AdaGrad members) and softmax SON.
//!
//! ```text
//! cargo run --release -p sketchlearn --example multiclass_progressive -- \
//!     ../shared/data/dna.libsvm ../shared/data/mnist_test10k.libsvm ../shared/data/r8_multiclass.libsvm
//! ```
//!
//! Labels are mapped to class ids `0..K` in sorted order. Reading is not timed.

mod common;

use sketchlearn::linear::multiclass::{MulticlassConfig, MulticlassLearner, Reduction};
use sketchlearn::linear::{Algorithm, LearnerConfig};
use std::time::Instant;

use common::read_with_classes as read;

fn configs(k: usize) -> Vec<(String, MulticlassConfig)> {
    let oaa = |member: LearnerConfig| MulticlassConfig {
        reduction: Reduction::OneVsAll,
        classes: k,
        member,
        ..MulticlassConfig::default()
    };
    let adagrad = LearnerConfig {
        algorithm: Algorithm::AdaGrad,
        ..LearnerConfig::default()
    };
    let mut out = vec![
        ("OvA(auto)".to_string(), oaa(LearnerConfig::default())),
        ("OvA(adagrad)".to_string(), oaa(adagrad)),
    ];
    if std::env::var_os("SOFTMAX_ONLY").is_some() {
        out.clear();
    }
    // The untuned softmax learner, as `train --multiclass --reduction softmax` builds it (its
    // sketch chosen from the input by `for_input`).
    let member = LearnerConfig::default();
    let given = sketchlearn::linear::multiclass::SoftmaxGiven::default();
    let softmax = MulticlassConfig::from_member(Reduction::Softmax, member, given).unwrap();
    out.push((
        "softmax default".to_string(),
        MulticlassConfig {
            classes: k,
            ..softmax
        },
    ));
    if let Ok(extra) = std::env::var("SOFTMAX_GRID") {
        // e.g. SOFTMAX_GRID="0.1,0.1 1,0.1,3 1,1,1,20": c,ridge[,alpha0[,m[,diag d0]]] (RFD, doubling).
        for point in extra.split_whitespace() {
            let v: Vec<f64> = point.split(',').map(|s| s.parse().unwrap()).collect();
            let base = softmax_base(k);
            let config = MulticlassConfig {
                c: v[0],
                ridge: v[1],
                alpha0: v.get(2).copied().unwrap_or(base.alpha0),
                size: v.get(3).map_or(base.size, |&m| m as usize),
                diag: v.get(4).is_some_and(|&d0| d0 > 0.0),
                diag_d0: v
                    .get(4)
                    .copied()
                    .filter(|&d0| d0 > 0.0)
                    .unwrap_or(base.diag_d0),
                ..base
            };
            out.push((config.describe(), config));
        }
    }
    out
}

fn softmax_base(k: usize) -> MulticlassConfig {
    MulticlassConfig {
        reduction: Reduction::Softmax,
        classes: k,
        ..MulticlassConfig::default()
    }
}

fn main() {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    for path in &paths {
        let (data, d, k) = read(path);
        println!("{path}: n = {}, d = {d}, K = {k}", data.len());
        let avg_nnz = data.iter().map(|(e, _)| e.indices.len()).sum::<usize>() as f64
            / data.len().max(1) as f64;
        for (name, config) in configs(k) {
            // The representation the CLI would choose (sparse time on r8_multiclass).
            let config = config.for_input(d, false, Some(avg_nnz));
            let mut learner = config.build(d).expect("build");
            let start = Instant::now();
            let mut mistakes = 0usize;
            let mut logloss = 0.0;
            for (ex, class) in &data {
                let p = learner
                    .learn(ex.row(), *class, ex.weight)
                    .unwrap_or_else(|_| learner.predict_proba(ex.row()));
                let guess = (0..k).fold(0, |b, j| if p[j] > p[b] { j } else { b });
                mistakes += (guess != *class) as usize;
                logloss -= p[*class].max(1e-15).ln();
            }
            let secs = start.elapsed().as_secs_f64();
            let n = data.len() as f64;
            let err = mistakes as f64 / n;
            let se = (err * (1.0 - err) / n).sqrt();
            println!(
                "  {name:<60} error {err:.4} (s.e. {se:.4})  logloss {:.4}  {:>9.0} ex/s  refused {}",
                logloss / n,
                n / secs,
                learner.refused()
            );
        }
    }
}
