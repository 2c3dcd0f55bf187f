//! The binary example cache (`Input::cache`, issue 27): a run through the cache learns the same
//! bits as from the text (first run writing it, later runs reading it, one or several passes,
//! LIBSVM and VW with interactions, CSV with named labels, files, bytes and streams); a cache that no longer fits its
//! input or options, or is damaged, is rebuilt with a note; a file that is not a cache is never
//! overwritten.

use crate::common;

use common::scratch::Scratch;
use sketchlearn::data::{CsvExampleOptions, Interactions};
use sketchlearn::linear::LearnerConfig;
use sketchlearn::loss::Loss;
use sketchlearn::run::{
    self, Input, Observer, ReadOptions, Silent, Start, TrainOptions, TrainOutcome, Warning,
};

/// Records the warnings of a run.
#[derive(Default)]
struct Notes(Vec<Warning>);

impl Observer for Notes {
    fn warning(&mut self, w: &Warning) {
        self.0.push(w.clone());
    }
}

impl Notes {
    fn rebuilt(&self) -> Vec<String> {
        self.0
            .iter()
            .filter_map(|w| match w {
                Warning::CacheRebuilt { reason, .. } => Some(reason.clone()),
                _ => None,
            })
            .collect()
    }
}

fn libsvm_text(n: usize, seed: u64) -> String {
    let mut s = seed;
    let mut next = move || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        s >> 33
    };
    (0..n)
        .map(|k| {
            let label = if next() % 3 == 0 { "0" } else { "1" };
            let mut line = label.to_owned();
            let mut j = 0;
            for _ in 0..1 + next() % 6 {
                j += 1 + next() % 40;
                let v = match next() % 3 {
                    0 => "1".to_owned(),
                    1 => format!("{}", (next() % 1000) as f64 / 8.0),
                    _ => format!("{:.7}", (next() % 100_000) as f64 / 77_777.0 - 0.3),
                };
                line.push_str(&format!(" {j}:{v}"));
            }
            if k % 97 == 5 {
                line.push_str("\n# a comment shifts the lines");
            }
            line + "\n"
        })
        .collect()
}

fn vw_text(n: usize) -> String {
    (0..n)
        .map(|k| {
            let label = if (k * 7) % 5 < 2 { 1 } else { -1 };
            let weight = if k % 11 == 0 { " 2.5" } else { "" };
            format!(
                "{label}{weight} |a x{} y:{} |b z{} w:0.25\n",
                k % 13,
                (k % 7) as f64 * 0.5,
                k % 5
            )
        })
        .collect()
}

fn options(passes: u32) -> TrainOptions {
    TrainOptions {
        passes,
        ..TrainOptions::default()
    }
}

fn train(input: Input, options: &TrainOptions, observer: &mut dyn Observer) -> TrainOutcome {
    run::train(
        input,
        Start::New(LearnerConfig::default()),
        options,
        observer,
    )
    .unwrap()
}

/// The message of a run that must fail.
fn train_error(input: Input, options: &TrainOptions) -> String {
    run::train(
        input,
        Start::New(LearnerConfig::default()),
        options,
        &mut Silent,
    )
    .unwrap_err()
    .to_string()
}

fn model_bytes(outcome: &TrainOutcome) -> Vec<u8> {
    outcome.model.to_bytes().unwrap()
}

#[test]
fn same_model_bits_with_and_without_the_cache() {
    let dir = Scratch::new("same");
    let data = dir.path("train.libsvm");
    std::fs::write(&data, libsvm_text(700, 1)).unwrap();
    let data = data.to_str().unwrap();
    for passes in [1, 2] {
        let cache = dir.path(&format!("train-{passes}.cache"));
        let plain = model_bytes(&train(Input::path(data), &options(passes), &mut Silent));
        let mut notes = Notes::default();
        let writing = train(
            Input::path(data).cache(&cache),
            &options(passes),
            &mut notes,
        );
        assert!(cache.exists(), "the first run writes the cache");
        assert!(notes.rebuilt().is_empty(), "{:?}", notes.0);
        let reading = train(
            Input::path(data).cache(&cache),
            &options(passes),
            &mut notes,
        );
        assert!(notes.rebuilt().is_empty(), "{:?}", notes.0);
        assert_eq!(model_bytes(&writing), plain, "passes {passes}");
        assert_eq!(model_bytes(&reading), plain, "passes {passes}");
        assert_eq!(reading.examples, 700 * u64::from(passes));
    }
    // No temporary file is left behind.
    assert_eq!(
        dir.entries(),
        ["train-1.cache", "train-2.cache", "train.libsvm"]
    );
}

/// A second run reads the cache it finds fresh: the file is not written again (same inode:
/// a rebuild renames a new file over it).
#[cfg(unix)]
#[test]
fn a_fresh_cache_is_read_not_rewritten() {
    use std::os::unix::fs::MetadataExt;
    let dir = Scratch::new("fresh");
    let data = dir.path("t.libsvm");
    std::fs::write(&data, libsvm_text(300, 2)).unwrap();
    let path = data.to_str().unwrap();
    let cache = dir.path("t.cache");
    train(Input::path(path).cache(&cache), &options(1), &mut Silent);
    assert!(std::fs::read(&cache).unwrap().starts_with(b"SKLCACHE"));
    let inode = std::fs::metadata(&cache).unwrap().ino();
    train(Input::path(path).cache(&cache), &options(3), &mut Silent);
    assert_eq!(std::fs::metadata(&cache).unwrap().ino(), inode);
}

#[test]
fn vw_with_interactions_and_weights_through_the_cache() {
    let dir = Scratch::new("vw");
    let data = dir.path("t.vw");
    std::fs::write(&data, vw_text(500)).unwrap();
    let data = data.to_str().unwrap();
    let cache = dir.path("t.cache");
    let mut q = Interactions::default();
    q.push("ab").unwrap();
    let with = |bits, interactions| TrainOptions {
        read: ReadOptions {
            bits: Some(bits),
            interactions,
            ..ReadOptions::default()
        },
        passes: 2,
        ..TrainOptions::default()
    };
    for (bits, interactions) in [(12, q), (12, Interactions::default()), (10, q)] {
        let options = with(bits, interactions);
        let plain = model_bytes(&train(Input::path(data), &options, &mut Silent));
        let mut notes = Notes::default();
        let first = train(Input::path(data).cache(&cache), &options, &mut notes);
        let second = train(Input::path(data).cache(&cache), &options, &mut notes);
        assert_eq!(model_bytes(&first), plain, "bits {bits}");
        assert_eq!(model_bytes(&second), plain, "bits {bits}");
        // Each change of -b or -q makes the last cache stale: rebuilt once, with a note.
        if (bits, interactions) != (12, q) {
            assert_eq!(notes.rebuilt().len(), 1, "{:?}", notes.0);
            assert!(notes.rebuilt()[0].contains("other read options"));
        } else {
            assert!(notes.rebuilt().is_empty());
        }
    }
}

#[test]
fn a_changed_input_rebuilds_its_cache_with_a_note() {
    let dir = Scratch::new("stale");
    let data = dir.path("t.libsvm");
    let cache = dir.path("t.cache");
    std::fs::write(&data, libsvm_text(400, 3)).unwrap();
    let path = data.to_str().unwrap();
    train(Input::path(path).cache(&cache), &options(1), &mut Silent);
    // Same length, same first and last blocks' sizes: only the content (and time) differ.
    let changed = libsvm_text(400, 3).replacen("1:", "2:", 1);
    std::fs::write(&data, &changed).unwrap();
    let plain = model_bytes(&train(Input::path(path), &options(2), &mut Silent));
    let mut notes = Notes::default();
    let rebuilt = train(Input::path(path).cache(&cache), &options(2), &mut notes);
    assert_eq!(model_bytes(&rebuilt), plain);
    let reasons = notes.rebuilt();
    assert_eq!(reasons.len(), 1, "{:?}", notes.0);
    assert!(reasons[0].contains("the input changed"), "{reasons:?}");
    let shown = notes.0[0].to_string();
    assert!(shown.contains("t.cache is written anew"), "{shown}");
    // Now fresh again.
    let mut notes = Notes::default();
    train(Input::path(path).cache(&cache), &options(1), &mut notes);
    assert!(notes.rebuilt().is_empty());
}

#[test]
fn a_damaged_cache_is_rebuilt_and_a_foreign_file_is_left_alone() {
    let dir = Scratch::new("damaged");
    let data = dir.path("t.libsvm");
    std::fs::write(&data, libsvm_text(300, 4)).unwrap();
    let path = data.to_str().unwrap();
    let cache = dir.path("t.cache");
    let plain = model_bytes(&train(Input::path(path), &options(1), &mut Silent));
    train(Input::path(path).cache(&cache), &options(1), &mut Silent);
    let good = std::fs::read(&cache).unwrap();
    for at in [good.len() / 2, good.len() - 6, good.len() - 2] {
        let mut bad = good.clone();
        bad[at] ^= 0x40;
        std::fs::write(&cache, &bad).unwrap();
        let mut notes = Notes::default();
        let outcome = train(Input::path(path).cache(&cache), &options(1), &mut notes);
        assert_eq!(model_bytes(&outcome), plain, "byte {at}");
        assert_eq!(
            notes.rebuilt(),
            ["it is damaged (its checksum does not match)"]
        );
        assert_eq!(std::fs::read(&cache).unwrap(), good, "rebuilt whole");
    }
    // Truncated.
    std::fs::write(&cache, &good[..good.len() / 3]).unwrap();
    let mut notes = Notes::default();
    train(Input::path(path).cache(&cache), &options(1), &mut notes);
    assert_eq!(notes.rebuilt().len(), 1);
    // Someone else's file at the cache path: an error, the file unchanged.
    let mine = b"my notes, not a cache\n".repeat(3);
    std::fs::write(&cache, &mine).unwrap();
    let err = train_error(Input::path(path).cache(&cache), &options(1));
    assert!(err.contains("is not a sketchlearn cache"), "{err}");
    assert!(err.contains("t.cache"), "{err}");
    assert_eq!(std::fs::read(&cache).unwrap(), mine);
}

#[test]
fn a_parse_error_leaves_no_cache_and_names_the_text() {
    let dir = Scratch::new("parse");
    let data = dir.path("t.libsvm");
    let mut text = libsvm_text(300, 5);
    text.push_str("1 3:oops\n");
    std::fs::write(&data, &text).unwrap();
    let cache = dir.path("t.cache");
    let err = train_error(
        Input::path(data.to_str().unwrap()).cache(&cache),
        &options(1),
    );
    let lines = text.lines().count();
    assert!(err.contains(&format!("t.libsvm:{lines}:5")), "{err}");
    assert_eq!(dir.entries(), ["t.libsvm"], "no cache, no temporary file");
}

/// A third label is found by the run (not the parser): from the cache it names the same line
/// as from the text.
#[test]
fn errors_after_parsing_name_the_text_line_from_the_cache() {
    let dir = Scratch::new("lines");
    let data = dir.path("t.libsvm");
    let mut text = libsvm_text(300, 6);
    text.push_str("\n\n7 1:1\n");
    std::fs::write(&data, &text).unwrap();
    let path = data.to_str().unwrap();
    let cache = dir.path("t.cache");
    let fail = |input: Input| {
        let options = TrainOptions {
            dim: Some(50),
            ..options(1)
        };
        train_error(input, &options)
    };
    let want = fail(Input::path(path));
    assert!(
        want.contains(&format!(":{}", text.lines().count())),
        "{want}"
    );
    assert_eq!(fail(Input::path(path).cache(&cache)), want);
    assert!(cache.exists());
    assert_eq!(fail(Input::path(path).cache(&cache)), want);
}

#[test]
fn a_stream_writes_its_cache_and_later_passes_read_it() {
    let dir = Scratch::new("stream");
    let text = libsvm_text(500, 7);
    let cache = dir.path("stdin.cache");
    let stream = || Input::reader("<stdin>", Box::new(std::io::Cursor::new(text.clone())));
    for passes in [1, 3] {
        let plain = model_bytes(&train(stream(), &options(passes), &mut Silent));
        let mut notes = Notes::default();
        let cached = train(stream().cache(&cache), &options(passes), &mut notes);
        assert_eq!(model_bytes(&cached), plain, "passes {passes}");
        assert!(cache.exists());
        if passes == 3 {
            // The cache from the run before is not trusted for a stream.
            assert_eq!(notes.rebuilt().len(), 1, "{:?}", notes.0);
            assert!(notes.rebuilt()[0].contains("stream"));
        }
    }
    // With --dim the stream is read once, by the pass, which writes the cache.
    std::fs::remove_file(&cache).unwrap();
    let dim = TrainOptions {
        dim: Some(300),
        ..options(1)
    };
    let plain = model_bytes(&train(stream(), &dim, &mut Silent));
    let cached = train(stream().cache(&cache), &dim, &mut Silent);
    assert_eq!(model_bytes(&cached), plain);
    assert!(cache.exists());
}

#[test]
fn evaluation_reads_through_the_cache_too() {
    let dir = Scratch::new("eval");
    let data = dir.path("t.libsvm");
    std::fs::write(&data, libsvm_text(400, 8)).unwrap();
    let path = data.to_str().unwrap();
    let model = train(Input::path(path), &options(1), &mut Silent).model;
    let cache = dir.path("t.cache");
    let plain = run::evaluate(
        Input::path(path),
        &model,
        &ReadOptions::default(),
        &mut Silent,
    )
    .unwrap()
    .metrics;
    for _ in 0..2 {
        let cached = run::evaluate(
            Input::path(path).cache(&cache),
            &model,
            &ReadOptions::default(),
            &mut Silent,
        )
        .unwrap()
        .metrics;
        assert_eq!(cached.mean_loss().to_bits(), plain.mean_loss().to_bits());
        assert_eq!(cached.examples(), plain.examples());
    }
}

/// CSV rows with named labels, a one-hot and a numeric column (some missing), over `n` rows.
fn csv_text(n: usize, seed: u64) -> String {
    let mut text = String::from("Attrition,Dept,Age,Score\n");
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for _ in 0..n {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let dept = ["Sales", "R&D", "HR"][(state % 3) as usize];
        let age = 20 + (state >> 8) % 40;
        let score = ((state >> 20) % 1000) as f64 / 250.0 - 2.0;
        let label = if score + (age as f64 - 40.0) / 20.0 > 0.0 {
            "Yes"
        } else {
            "No"
        };
        let age = if (state >> 40) % 9 == 0 {
            "NA".to_string()
        } else {
            age.to_string()
        };
        text.push_str(&format!("{label},{dept},{age},{score}\n"));
    }
    text
}

fn csv_options(passes: u32, label: &str) -> TrainOptions {
    TrainOptions {
        read: ReadOptions {
            csv: CsvExampleOptions {
                label_column: Some(label.parse().unwrap()),
                ..CsvExampleOptions::default()
            },
            ..ReadOptions::default()
        },
        ..options(passes)
    }
}

/// CSV through the cache (its labels as written, names included, and their columns): the same
/// model bits as from the text, for the run writing it and the runs reading it, one and two
/// passes, and the same evaluation; `run::write_cache` makes the cache a run then reads.
#[test]
fn csv_through_the_cache_learns_the_same_bits() {
    let dir = Scratch::new("csv");
    let data = dir.path("t.csv");
    std::fs::write(&data, csv_text(500, 5)).unwrap();
    let path = data.to_str().unwrap();
    for passes in [1, 2] {
        let cache = dir.path(&format!("t-{passes}.cache"));
        let o = csv_options(passes, "Attrition");
        let plain = train(Input::path(path), &o, &mut Silent);
        let mut notes = Notes::default();
        let writing = train(Input::path(path).cache(&cache), &o, &mut notes);
        assert!(cache.exists());
        let reading = train(Input::path(path).cache(&cache), &o, &mut notes);
        assert!(notes.rebuilt().is_empty(), "{:?}", notes.0);
        assert_eq!(
            model_bytes(&writing),
            model_bytes(&plain),
            "passes {passes}"
        );
        assert_eq!(
            model_bytes(&reading),
            model_bytes(&plain),
            "passes {passes}"
        );
        assert_eq!(
            reading.metrics.mean_loss().to_bits(),
            plain.metrics.mean_loss().to_bits()
        );
        let evaluate = |input: Input| {
            run::evaluate(input, &plain.model, &o.read, &mut Silent)
                .unwrap()
                .metrics
        };
        let (a, b) = (
            evaluate(Input::path(path)),
            evaluate(Input::path(path).cache(&cache)),
        );
        assert_eq!(a.mean_loss().to_bits(), b.mean_loss().to_bits());
        assert_eq!(a.examples(), b.examples());
    }
    let cache = dir.path("w.cache");
    let o = csv_options(1, "Attrition");
    let outcome = run::write_cache(Input::path(path).cache(&cache), &o.read).unwrap();
    assert_eq!((outcome.examples, outcome.fresh), (500, false));
    let again = run::write_cache(Input::path(path).cache(&cache), &o.read).unwrap();
    assert_eq!((again.examples, again.fresh), (500, true));
    let mut notes = Notes::default();
    let reading = train(Input::path(path).cache(&cache), &o, &mut notes);
    assert!(notes.rebuilt().is_empty(), "{:?}", notes.0);
    let plain = train(Input::path(path), &o, &mut Silent);
    assert_eq!(model_bytes(&reading), model_bytes(&plain));
}

/// A label error found while reading the cache names the text's file, line and column, as
/// from the text; a changed CSV file or other columns rebuild the cache with a note.
#[test]
fn csv_cache_label_errors_and_stale_caches() {
    let dir = Scratch::new("csv-stale");
    let data = dir.path("t.csv");
    let cache = dir.path("t.cache");
    let o = csv_options(1, "Attrition");
    let mut text = csv_text(300, 6);
    text.push_str("Maybe,HR,30,1.5\n");
    std::fs::write(&data, &text).unwrap();
    let path = data.to_str().unwrap();
    run::write_cache(Input::path(path).cache(&cache), &o.read).unwrap();
    let plain = train_error(Input::path(path), &o);
    let cached = train_error(Input::path(path).cache(&cache), &o);
    assert_eq!(cached, plain);
    assert!(plain.contains("t.csv:302:1"), "{plain}");
    // Same length, other content.
    std::fs::write(&data, text.replacen("Sales", "Salez", 1)).unwrap();
    let wrote = run::write_cache(Input::path(path).cache(&cache), &o.read).unwrap();
    assert!(!wrote.fresh);
    let reasons: Vec<String> = wrote.warnings.iter().map(|w| w.to_string()).collect();
    assert!(
        reasons.len() == 1 && reasons[0].contains("the input changed"),
        "{reasons:?}"
    );
    // Another schema (a column ignored): rebuilt.
    std::fs::write(&data, csv_text(300, 6)).unwrap();
    run::write_cache(Input::path(path).cache(&cache), &o.read).unwrap();
    let mut other = csv_options(1, "Attrition");
    other.read.csv.ignore_columns = vec!["Dept".parse().unwrap()];
    let mut notes = Notes::default();
    let rebuilt = train(Input::path(path).cache(&cache), &other, &mut notes);
    let reasons = notes.rebuilt();
    assert_eq!(reasons.len(), 1, "{:?}", notes.0);
    assert!(reasons[0].contains("CSV columns"), "{reasons:?}");
    let plain = train(Input::path(path), &other, &mut Silent);
    assert_eq!(model_bytes(&rebuilt), model_bytes(&plain));
}

/// A run with a valid CSV cache takes its schema from the cache and does not read the text
/// (beyond the stamp's 64 KiB at each end): a middle row edited to a new category, with the
/// size and modification time kept, is neither scanned nor parsed — the run learns the cached
/// rows' bits with no note. (This is the stamp's documented limit, the same as for LIBSVM; a
/// scan of the text would have found the new category, changed the schema and rebuilt.)
#[test]
fn a_valid_csv_cache_is_read_without_scanning_the_text() {
    let dir = Scratch::new("csv-no-scan");
    let data = dir.path("t.csv");
    let cache = dir.path("t.cache");
    let text = csv_text(12_000, 7);
    assert!(text.len() > 3 * (64 << 10), "{}", text.len());
    std::fs::write(&data, &text).unwrap();
    let path = data.to_str().unwrap();
    let o = csv_options(1, "Attrition");
    let plain = train(Input::path(path), &o, &mut Silent);
    let mut notes = Notes::default();
    let writing = train(Input::path(path).cache(&cache), &o, &mut notes);
    assert_eq!(model_bytes(&writing), model_bytes(&plain));

    let middle = text.len() / 2;
    let at = middle + text[middle..].find("Sales").unwrap();
    let mut edited = text.clone();
    edited.replace_range(at..at + 5, "Salez");
    let modified = std::fs::metadata(&data).unwrap().modified().unwrap();
    std::fs::write(&data, &edited).unwrap();
    let file = std::fs::File::options().write(true).open(&data).unwrap();
    file.set_modified(modified).unwrap();
    drop(file);

    let reading = train(Input::path(path).cache(&cache), &o, &mut notes);
    assert!(notes.rebuilt().is_empty(), "{:?}", notes.0);
    assert_eq!(model_bytes(&reading), model_bytes(&plain));
    // Control: the edited text itself gives another schema (a fourth department).
    let from_text = train(Input::path(path), &o, &mut Silent);
    assert_ne!(model_bytes(&from_text), model_bytes(&plain));
}

/// Each flag of the schema scan (label column, ignored columns, the one-hot / hashed choice,
/// the hash bits) changes the schema: the run scans the text, rebuilds the cache with a note
/// and learns the bits of the text; the same flags again read the rebuilt cache. A flag that
/// gives the same schema (the label column by position instead of name) keeps the cache.
#[test]
fn a_changed_schema_flag_rebuilds_the_csv_cache() {
    let dir = Scratch::new("csv-flags");
    let data = dir.path("t.csv");
    let cache = dir.path("t.cache");
    std::fs::write(&data, csv_text(400, 8)).unwrap();
    let path = data.to_str().unwrap();
    let hashed = |bits| {
        let mut o = csv_options(1, "Attrition");
        o.read.csv.max_categories = 2;
        o.read.csv.hash_bits = bits;
        o
    };
    let mut ignored = csv_options(1, "Attrition");
    ignored.read.csv.ignore_columns = vec!["Age".parse().unwrap()];
    let (logistic, squared) = (
        LearnerConfig::default(),
        LearnerConfig {
            loss: Loss::Squared,
            ..LearnerConfig::default()
        },
    );
    let runs = [
        ("first", csv_options(1, "Attrition"), &logistic, None),
        ("by position", csv_options(1, "0"), &logistic, Some(false)),
        ("label", csv_options(1, "Score"), &squared, Some(true)),
        ("ignored", ignored, &logistic, Some(true)),
        ("one-hot", hashed(4), &logistic, Some(true)),
        ("hash bits", hashed(6), &logistic, Some(true)),
    ];
    let run = |input: Input, o: &TrainOptions, config: &LearnerConfig, notes: &mut Notes| {
        run::train(input, Start::New(config.clone()), o, notes).unwrap()
    };
    let mut previous: Option<Vec<u8>> = None;
    for (what, o, config, rebuilds) in &runs {
        let mut notes = Notes::default();
        let first = run(Input::path(path).cache(&cache), o, config, &mut notes);
        let reasons = notes.rebuilt();
        match rebuilds {
            Some(true) => {
                assert_eq!(reasons.len(), 1, "{what}: {:?}", notes.0);
                assert!(reasons[0].contains("CSV columns"), "{what}: {reasons:?}");
            }
            _ => assert!(reasons.is_empty(), "{what}: {reasons:?}"),
        }
        let plain = run(Input::path(path), o, config, &mut Notes::default());
        assert_eq!(model_bytes(&first), model_bytes(&plain), "{what}");
        let mut again = Notes::default();
        let second = run(Input::path(path).cache(&cache), o, config, &mut again);
        assert!(again.rebuilt().is_empty(), "{what}: {:?}", again.0);
        assert_eq!(model_bytes(&second), model_bytes(&plain), "{what}");
        if *rebuilds == Some(true) {
            assert_ne!(previous.as_ref(), Some(&model_bytes(&plain)), "{what}");
        }
        previous = Some(model_bytes(&plain));
    }
}
