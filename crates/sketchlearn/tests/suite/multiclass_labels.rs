//! Labels as users have them and multiclass model files (issue 24): a generated 3-class
//! stream with labels 2/5/9 is scanned, mapped, learned progressively; a model saved halfway
//! and loaded resumes to the same bits as one uninterrupted pass.

use crate::common;

use sketchlearn::data::{scan_classes, ExampleSource, LabelMap, Labeled};
use sketchlearn::eval::multiclass::{
    progressive_multiclass, MulticlassMetrics, MulticlassProgress,
};
use sketchlearn::linear::multiclass::{MulticlassConfig, MulticlassModel, Reduction};
use sketchlearn::{Example, LibsvmOptions, LibsvmReader, ParseErrorKind};
use std::io::Cursor;

/// 3 classes labelled 2, 5, 9; 4 features; class c has feature c large.
fn stream(n: usize) -> String {
    let mut s = String::new();
    let mut state = 12345u64;
    for t in 0..n {
        let c = t % 3;
        let mut line = ["2", "5", "9"][c].to_string();
        for j in 0..4 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let noise = (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
            let v = noise + if j == c { 1.5 } else { 0.0 };
            line.push_str(&format!(" {}:{v:.4}", j + 1));
        }
        s.push_str(&line);
        s.push('\n');
    }
    s
}

fn reader(text: &str) -> LibsvmReader<Cursor<String>> {
    LibsvmReader::new(
        Cursor::new(text.to_string()),
        "gen.libsvm",
        LibsvmOptions::default(),
    )
}

#[derive(Default)]
struct Probs(Vec<Vec<f64>>);
impl MulticlassProgress for Probs {
    fn prediction(&mut self, _ex: &Example, p: &[f64]) {
        self.0.push(p.to_vec());
    }
}

/// Learns examples `skip..skip+take` of `text` into `model`, returning the probabilities.
fn learn(model: &mut MulticlassModel, text: &str, skip: usize, take: usize) -> Vec<Vec<f64>> {
    let map = LabelMap::Multiclass(model.classes.clone());
    let mut source = Labeled::new(reader(text), map, "gen.libsvm");
    let mut ex = Example::default();
    for _ in 0..skip {
        source.read_into(&mut ex).unwrap();
    }
    let mut left = take;
    let mut metrics = MulticlassMetrics::new(model.classes.len());
    let mut probs = Probs::default();
    let pass = progressive_multiclass(
        &mut model.learner,
        |ex| {
            if left == 0 {
                return Ok(false);
            }
            left -= 1;
            source.read_into(ex)
        },
        &mut metrics,
        &mut probs,
    )
    .unwrap();
    model.examples_seen += pass.examples;
    probs.0
}

/// Learns `text` (`n` rows, labels 2/5/9, dimension `dim`) with `config` in one pass and again
/// saved to a file after 250 rows, loaded and continued: the same probabilities to the bit and
/// the same final model bytes. Returns the one pass's probabilities.
fn assert_resumes_bit_exact(
    config: &MulticlassConfig,
    text: &str,
    n: usize,
    dim: usize,
    name: &str,
) -> Vec<Vec<f64>> {
    let classes = scan_classes(&mut reader(text), "gen.libsvm")
        .unwrap()
        .classes()
        .unwrap();
    assert_eq!(classes.to_list(), "2,5,9");
    let dir = std::env::temp_dir().join(format!(
        "sketchlearn-mc-resume-{name}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let fresh = || MulticlassModel::build(config.clone(), classes.clone(), dim).unwrap();
    let mut whole = fresh();
    let all = learn(&mut whole, text, 0, n);

    let mut first = fresh();
    let mut resumed_probs = learn(&mut first, text, 0, 250);
    let path = dir.join(format!("{name}.model"));
    first.save(&path).unwrap();
    let mut resumed = MulticlassModel::load(&path).unwrap();
    assert_eq!(resumed.examples_seen, 250);
    assert_eq!(
        resumed.config, first.config,
        "{name}: the configuration round-trips"
    );
    resumed_probs.extend(learn(&mut resumed, text, 250, n - 250));

    assert_eq!(all.len(), n);
    for (a, b) in all.iter().zip(&resumed_probs) {
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(a), bits(b), "{name}");
    }
    whole.save(dir.join("a")).unwrap();
    resumed.save(dir.join("b")).unwrap();
    assert_eq!(
        std::fs::read(dir.join("a")).unwrap(),
        std::fs::read(dir.join("b")).unwrap(),
        "{name}: the final states differ"
    );
    std::fs::remove_dir_all(&dir).unwrap();
    all
}

#[test]
fn resume_from_a_model_file_is_bit_exact_for_both_reductions() {
    let text = stream(600);
    for reduction in [Reduction::OneVsAll, Reduction::Softmax] {
        let config = MulticlassConfig {
            reduction,
            ..MulticlassConfig::default()
        };
        let all = assert_resumes_bit_exact(&config, &text, 600, 4, reduction.name());
        let mut metrics = MulticlassMetrics::new(3);
        for (p, t) in all.iter().zip(0..) {
            metrics.add(p, t % 3, 1.0);
        }
        assert!(metrics.error_rate().unwrap() < 0.15, "{reduction}");
    }
}

/// 3 classes labelled 2, 5, 9 in dimension 400, 6 stored features per row (class c's word
/// `c + 1` and five drawn at random): sparse input by the representation rule.
fn sparse_stream(n: usize) -> String {
    let mut s = String::new();
    let mut lcg = common::Lcg(99);
    let mut next = || (lcg.next_u64() >> 33) as usize;
    for t in 0..n {
        let c = t % 3;
        let mut idx: Vec<usize> = (0..5).map(|_| 4 + next() % 396).collect();
        idx.push(c + 1);
        idx.sort_unstable();
        idx.dedup();
        let mut line = ["2", "5", "9"][c].to_string();
        for i in idx {
            line.push_str(&format!(" {i}:{}", if i <= 3 { 2.0 } else { 0.5 }));
        }
        s.push_str(&line);
        s.push('\n');
    }
    s
}

/// The untuned softmax learner (`train --multiclass --reduction softmax`, no sketch flags)
/// chooses its sketch from the input — fd-fast, sparse-time, on sparse input; rfd-fast on dense
/// input (`sketch_choice.rs`) — and each resumes from a model file to the bit.
#[test]
fn the_untuned_softmax_chooses_its_sketch_and_resumes_bit_exact() {
    use sketchlearn::linear::multiclass::SoftmaxGiven;
    use sketchlearn::linear::{CurvatureKind, LearnerConfig, Representation};
    let untuned = MulticlassConfig::from_member(
        Reduction::Softmax,
        LearnerConfig::default(),
        SoftmaxGiven::default(),
    )
    .unwrap();
    let untuned = MulticlassConfig {
        classes: 3,
        ..untuned
    };
    let cases = [
        (
            "sparse",
            sparse_stream(600),
            400,
            6.0,
            CurvatureKind::FdFast,
        ),
        ("dense", stream(600), 4, 4.0, CurvatureKind::RfdFast),
    ];
    for (name, text, dim, nnz, curvature) in cases {
        let config = untuned.for_input(dim, false, Some(nnz));
        assert_eq!(config.curvature, curvature, "{name}");
        assert!(!config.sketch_from_input, "{name}: the choice is made once");
        let sparse = config.member.representation == Representation::Sparse;
        assert_eq!(sparse, name == "sparse");
        let all = assert_resumes_bit_exact(&config, &text, 600, dim, name);
        let mut metrics = MulticlassMetrics::new(3);
        for (p, t) in all.iter().zip(0..) {
            metrics.add(p, t % 3, 1.0);
        }
        assert!(metrics.error_rate().unwrap() < 0.15, "{name}");
    }
    // A curvature given is kept whatever the input.
    let given = SoftmaxGiven {
        curvature: Some(CurvatureKind::RfdFast),
        ..SoftmaxGiven::default()
    };
    let rfd = MulticlassConfig::from_member(Reduction::Softmax, LearnerConfig::default(), given)
        .unwrap()
        .for_input(400, false, Some(6.0));
    assert_eq!(rfd.curvature, CurvatureKind::RfdFast);
}

#[test]
fn binary_labels_in_any_convention_learn_the_same() {
    let base = stream(300);
    // Classes 2 and 5 only, relabelled three ways: the targets and so the learning are identical.
    let two: Vec<&str> = base.lines().filter(|l| !l.starts_with('9')).collect();
    let mut runs = Vec::new();
    for (neg, pos) in [("-1", "+1"), ("0", "1"), ("2", "4")] {
        let text: String = two
            .iter()
            .map(|l| {
                let (y, rest) = l.split_once(' ').unwrap();
                format!("{} {rest}\n", if y == "2" { neg } else { pos })
            })
            .collect();
        let classes = scan_classes(&mut reader(&text), "b.libsvm")
            .unwrap()
            .binary()
            .unwrap();
        let mut source = Labeled::new(reader(&text), LabelMap::Binary(classes), "b.libsvm");
        let mut ex = Example::default();
        let mut targets = Vec::new();
        while source.read_into(&mut ex).unwrap() {
            targets.push(ex.label);
        }
        runs.push(targets);
    }
    assert_eq!(runs[0], runs[1]);
    assert_eq!(runs[0], runs[2]);
}

#[test]
fn a_model_that_saw_three_classes_rejects_a_fourth_at_its_line() {
    let classes = sketchlearn::labels::Classes::parse_list("2,5,9").unwrap();
    let mut s = Labeled::new(
        reader("2 1:1\n5 1:1\n7 1:1\n"),
        LabelMap::Multiclass(classes),
        "test.libsvm",
    );
    let mut ex = Example::default();
    assert!(s.read_into(&mut ex).unwrap() && s.read_into(&mut ex).unwrap());
    let e = s.read_into(&mut ex).unwrap_err();
    assert!(matches!(e.kind, ParseErrorKind::Label(_)));
    assert!(
        e.to_string()
            .starts_with("test.libsvm:3:1: label 7 is not one of the classes 2,5,9"),
        "{e}"
    );
}

#[test]
fn sparse_time_members_predict_what_dense_members_do() {
    // 3 classes, d = 400, 6 non-zeros per example: for_input makes the members sparse-time.
    let (d, n) = (400usize, 300usize);
    let mut lcg = common::Lcg(99);
    let mut next = || (lcg.next_u64() >> 33) as usize;
    let data: Vec<Example> = (0..n)
        .map(|t| {
            let c = t % 3;
            let mut idx: Vec<u32> = (0..5).map(|_| (next() % d) as u32).collect();
            idx.push(c as u32);
            idx.sort_unstable();
            idx.dedup();
            let values = idx.iter().map(|&i| if i < 3 { 2.0 } else { 0.5 }).collect();
            Example {
                label: c as f64,
                weight: 1.0,
                indices: idx,
                values,
            }
        })
        .collect();
    let base = MulticlassConfig {
        classes: 3,
        ..MulticlassConfig::default()
    };
    let sparse = base.for_input(d, false, Some(6.0));
    assert_eq!(
        sparse.member.representation,
        sketchlearn::linear::Representation::Sparse
    );
    let mut a = base.build(d).unwrap();
    let mut b = sparse.build(d).unwrap();
    let run = |l: &mut sketchlearn::linear::multiclass::AnyMulticlass| {
        let mut it = data.clone().into_iter();
        let mut probs = Probs::default();
        progressive_multiclass(
            l,
            |ex: &mut Example| {
                Ok::<_, std::convert::Infallible>(it.next().map(|e| *ex = e).is_some())
            },
            &mut MulticlassMetrics::new(3),
            &mut probs,
        )
        .unwrap();
        probs.0
    };
    let (pa, pb) = (run(&mut a), run(&mut b));
    for (x, y) in pa.iter().flatten().zip(pb.iter().flatten()) {
        assert!((x - y).abs() < 1e-6, "{x} vs {y}");
    }
}
