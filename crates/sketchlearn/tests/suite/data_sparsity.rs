//! The default's members follow the data's sparsity (`linear/data_sparsity.rs`, issue 27): a
//! classifier's `auto` on sparse rows becomes `auto-sparse` (members 2 and 3), on very sparse
//! rows `auto-very-sparse` (member 3), on dense rows it keeps all four; the choice is the same whether the rows come from a file, a pipe or a
//! cache, as LIBSVM or VW text, with or without `--dim`; and a saved model continues bit for
//! bit after loading.

use crate::common;

use common::scratch::Scratch;
use sketchlearn::data::Format;
use sketchlearn::linear::{Algorithm, LearnerConfig, LinearModel};
use sketchlearn::run::{self, Input, ReadOptions, Silent, Start, TrainOptions, TrainOutcome};

/// `n` rows of `per_row` distinct features drawn from `1..=pool` (LCG, fixed seed), labels
/// ±1 from the first feature's parity; as LIBSVM (`vw = false`) or VW text.
fn rows(n: usize, per_row: u64, pool: u64, vw: bool) -> String {
    let mut lcg = common::Lcg(27);
    let mut next = move || lcg.next_u64() >> 33;
    let mut out = String::new();
    for _ in 0..n {
        let mut ids: Vec<u64> = Vec::new();
        while (ids.len() as u64) < per_row.min(pool) {
            let j = 1 + next() % pool;
            if !ids.contains(&j) {
                ids.push(j);
            }
        }
        ids.sort_unstable();
        let label = if ids[0] % 2 == 0 { "1" } else { "-1" };
        out.push_str(label);
        out.push_str(if vw { " |f" } else { "" });
        for j in ids {
            let v = (next() % 1000) as f64 / 500.0 - 1.0;
            out.push_str(&format!(" {j}:{v}"));
        }
        out.push('\n');
    }
    out
}

fn options(format: Format, dim: Option<usize>) -> TrainOptions {
    TrainOptions {
        read: ReadOptions {
            format,
            ..ReadOptions::default()
        },
        dim,
        ..TrainOptions::default()
    }
}

fn train(input: Input, options: &TrainOptions) -> TrainOutcome {
    run::train(
        input,
        Start::New(LearnerConfig::default()),
        options,
        &mut Silent,
    )
    .unwrap()
}

/// What must not depend on how the rows were read: the resolved configuration, the weights
/// and the progressive error.
fn fingerprint(o: &TrainOutcome) -> (LearnerConfig, Vec<f64>, String) {
    use sketchlearn::linear::OnlineLearner;
    (
        o.model.config.clone(),
        o.model.learner.weights().to_vec(),
        format!("{:?}", o.metrics),
    )
}

/// Trains on `text` from a file, a pipe, a first cache run and a second (reading) cache run;
/// returns the algorithm all four chose, after checking they agree.
fn chosen(dir: &Scratch, name: &str, text: &str, options: &TrainOptions) -> Algorithm {
    let path = dir.path(name);
    std::fs::write(&path, text).unwrap();
    let file = path.to_str().unwrap();
    let pipe = Input::reader(
        name,
        Box::new(std::io::Cursor::new(text.as_bytes().to_vec())),
    );
    let cache = dir.path(&format!("{name}.cache"));
    let runs = [
        train(Input::path(file), options),
        train(pipe, options),
        train(Input::path(file).cache(&cache), options),
        train(Input::path(file).cache(&cache), options),
    ];
    let first = fingerprint(&runs[0]);
    for (k, run) in runs.iter().enumerate().skip(1) {
        assert_eq!(
            fingerprint(run),
            first,
            "{name}: run {k} differs from the file's"
        );
    }
    std::fs::remove_file(&cache).unwrap();
    first.0.algorithm
}

#[test]
fn sparse_rows_get_the_sparse_data_members_whatever_reads_them() {
    let dir = Scratch::new("sparsity");
    for dim in [None, Some(3000)] {
        for (format, ext, vw) in [(Format::Libsvm, "libsvm", false), (Format::Vw, "vw", true)] {
            if vw && dim.is_some() {
                continue; // VW's dimension is 2^bits
            }
            let o = options(format, dim);
            // 5 of 2000 ids a row: 5 < (≈1400 seen in 400 rows)/10.
            let sparse = chosen(&dir, &format!("s.{ext}"), &rows(400, 5, 2000, vw), &o);
            assert_eq!(sparse, Algorithm::AutoSparse, "{ext} dim {dim:?}");
            // 8 of 12 ids a row: dense.
            let dense = chosen(&dir, &format!("d.{ext}"), &rows(400, 8, 12, vw), &o);
            assert_eq!(dense, Algorithm::Auto, "{ext} dim {dim:?}");
        }
    }
}

/// The rule looks at the first 1000 rows only: sparse rows after 1000 dense ones do not change
/// the choice, and the member set is what the model's description shows.
#[test]
fn the_choice_is_made_on_the_first_rows() {
    let text = rows(1000, 8, 12, false) + &rows(400, 5, 2000, false);
    let o = train(
        Input::bytes("mixed.libsvm", text.into_bytes()),
        &options(Format::Libsvm, None),
    );
    assert_eq!(o.model.config.algorithm, Algorithm::Auto);
    let text = rows(1000, 5, 2000, false) + &rows(400, 8, 12, false);
    let o = train(
        Input::bytes("mixed.libsvm", text.into_bytes()),
        &options(Format::Libsvm, None),
    );
    assert_eq!(o.model.config.algorithm, Algorithm::AutoSparse);
    assert!(o
        .model
        .config
        .describe()
        .starts_with("auto-sparse[newton/fd-sparse"));
    assert_eq!(o.model.mixture_weights().unwrap().len(), 2);
}

/// Regression keeps its members, and a named algorithm is not changed.
#[test]
fn only_a_classifiers_auto_changes() {
    let text = rows(400, 5, 2000, false);
    let squared = LearnerConfig {
        loss: sketchlearn::loss::Loss::Squared,
        ..LearnerConfig::default()
    };
    let o = run::train(
        Input::bytes("s.libsvm", text.clone().into_bytes()),
        Start::New(squared),
        &options(Format::Libsvm, None),
        &mut Silent,
    )
    .unwrap();
    assert_eq!(o.model.config.algorithm, Algorithm::Auto);
    let newton = LearnerConfig {
        algorithm: Algorithm::Newton,
        ..LearnerConfig::default()
    };
    let o = run::train(
        Input::bytes("s.libsvm", text.into_bytes()),
        Start::New(newton),
        &options(Format::Libsvm, None),
        &mut Silent,
    )
    .unwrap();
    assert_eq!(o.model.config.algorithm, Algorithm::Newton);
}

/// A model of sparse data saved half-way and loaded continues with the same bits as the
/// model kept in memory, and keeps its two members.
#[test]
fn a_saved_sparse_default_continues_bit_for_bit() {
    let first = rows(300, 5, 2000, false);
    let second = rows(600, 5, 2000, false)[first.len()..].to_owned();
    let o = train(
        Input::bytes("a.libsvm", first.into_bytes()),
        &options(Format::Libsvm, Some(2000)),
    );
    assert_eq!(o.model.config.algorithm, Algorithm::AutoSparse);
    continues_bit_for_bit(o.model, &second);
}

/// Very sparse rows (1000 rows or more whose first 1000 hold each feature fewer than twice on
/// average) get the AdaGrad grid alone, `auto-very-sparse`, whatever reads them; the same rows
/// cut to 999 are judged sparse only, and rows that share their features (5 of 2000 a row:
/// 2.7 views a feature) keep `auto-sparse`.
#[test]
fn very_sparse_rows_get_the_grid_alone_whatever_reads_them() {
    let dir = Scratch::new("very_sparse");
    for dim in [None, Some(1 << 18)] {
        for (format, ext, vw) in [(Format::Libsvm, "libsvm", false), (Format::Vw, "vw", true)] {
            if vw && dim.is_some() {
                continue; // VW's dimension is 2^bits
            }
            let o = options(format, dim);
            // 20 of 200,000 ids a row: ≈1.05 views a feature over 1000 rows.
            let text = rows(1200, 20, 200_000, vw);
            let very = chosen(&dir, &format!("v.{ext}"), &text, &o);
            assert_eq!(very, Algorithm::AutoVerySparse, "{ext} dim {dim:?}");
            let short: String = text.lines().take(999).map(|l| format!("{l}\n")).collect();
            let sparse = chosen(&dir, &format!("short.{ext}"), &short, &o);
            assert_eq!(sparse, Algorithm::AutoSparse, "{ext} dim {dim:?}");
            let shared = chosen(&dir, &format!("shared.{ext}"), &rows(1200, 5, 2000, vw), &o);
            assert_eq!(shared, Algorithm::AutoSparse, "{ext} dim {dim:?}");
        }
    }
}

/// The very sparse composition is one member, the default's AdaGrad grid, and its model saved
/// half-way and loaded continues with the same bits as the model kept in memory.
#[test]
fn a_saved_very_sparse_default_continues_bit_for_bit() {
    let all = rows(1600, 20, 200_000, false);
    let cut = all.lines().take(1200).map(|l| l.len() + 1).sum::<usize>();
    let (first, second) = (all[..cut].to_owned(), all[cut..].to_owned());
    let o = train(
        Input::bytes("a.libsvm", first.into_bytes()),
        &options(Format::Libsvm, Some(200_001)),
    );
    assert_eq!(o.model.config.algorithm, Algorithm::AutoVerySparse);
    assert!(o
        .model
        .config
        .describe()
        .starts_with("auto-very-sparse[adagrad-grid"));
    assert_eq!(o.model.mixture_weights().unwrap().len(), 1);
    continues_bit_for_bit(o.model, &second);
}

/// `model` saved and loaded, then resumed on `second`, gives the bytes of `model` resumed on
/// it from memory; the loaded configuration is the saved one.
fn continues_bit_for_bit(model: LinearModel, second: &str) {
    let reloaded = LinearModel::from_bytes(&model.to_bytes().unwrap(), "memory").unwrap();
    assert_eq!(reloaded.config, model.config);
    let resume = |model: LinearModel| {
        run::train(
            Input::bytes("b.libsvm", second.as_bytes().to_vec()),
            Start::Resume(model),
            &options(Format::Libsvm, None),
            &mut Silent,
        )
        .unwrap()
        .model
        .to_bytes()
        .unwrap()
    };
    assert_eq!(resume(reloaded), resume(model));
}
