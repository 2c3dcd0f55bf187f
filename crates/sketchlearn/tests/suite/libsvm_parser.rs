//! Tests of the streaming LIBSVM reader: malformed input (kind, line, column), accepted
//! variants of the format, gzip input, a real data file, and property tests.

use std::io::{Cursor, Write};

use crate::common;

use proptest::prelude::*;
use sketchlearn::data::{open_input, LibsvmOptions, LibsvmReader, ParseError, ParseErrorKind};
use sketchlearn::Example;

const ONE_BASED: LibsvmOptions = LibsvmOptions { zero_based: false };
const ZERO_BASED: LibsvmOptions = LibsvmOptions { zero_based: true };

fn reader(bytes: &[u8], options: LibsvmOptions) -> LibsvmReader<Cursor<Vec<u8>>> {
    LibsvmReader::new(Cursor::new(bytes.to_vec()), "test.libsvm", options)
}

fn parse_all(text: &str, options: LibsvmOptions) -> Result<Vec<Example>, ParseError> {
    reader(text.as_bytes(), options).collect()
}

fn ex(label: f64, indices: &[u32], values: &[f64]) -> Example {
    Example {
        label,
        weight: 1.0,
        indices: indices.to_vec(),
        values: values.to_vec(),
    }
}

/// Two good lines around a comment, so the line under test is line 4.
const PREFIX: &[u8] = b"+1 1:0.5 2:1\n# a comment line\n-1 3:2\n";

fn s(x: &str) -> String {
    x.to_string()
}

#[test]
fn malformed_lines_report_kind_line_and_column() {
    use ParseErrorKind::*;
    // (bad line, options, expected kind, expected 1-based column)
    let cases: Vec<(&[u8], LibsvmOptions, ParseErrorKind, usize)> = vec![
        (b"abc 1:2", ONE_BASED, UnparsableLabel(s("abc")), 1),
        (b"  1..2 1:2", ONE_BASED, UnparsableLabel(s("1..2")), 3),
        (b"1:2 3:4", ONE_BASED, MissingLabel, 1),
        (b" \t 2:1", ONE_BASED, MissingLabel, 4),
        (b"qid:3 2:1", ONE_BASED, MissingLabel, 1),
        (b"+1 1:2 x:3", ONE_BASED, UnparsableIndex(s("x")), 8),
        (b"+1 1:2 -3:3", ONE_BASED, UnparsableIndex(s("-3")), 8),
        (b"+1 1:2 +3:3", ONE_BASED, UnparsableIndex(s("+3")), 8),
        (b"+1 1:2 :3", ONE_BASED, UnparsableIndex(s("")), 8),
        (b"+1 1:2 1.5:3", ONE_BASED, UnparsableIndex(s("1.5")), 8),
        (b"+1\t1:2\tx:3", ONE_BASED, UnparsableIndex(s("x")), 8),
        (b"+1 1:2 3:abc", ONE_BASED, UnparsableValue(s("abc")), 10),
        (b"+1 1:2 3:", ONE_BASED, UnparsableValue(s("")), 10),
        (b"+1 1:2 3:2:1", ONE_BASED, UnparsableValue(s("2:1")), 10),
        (b"+1 1:2 3:abc\r", ONE_BASED, UnparsableValue(s("abc")), 10),
        (b"+1 1:2 3", ONE_BASED, MissingColon(s("3")), 8),
        (b"+1 1:2 3=4", ONE_BASED, MissingColon(s("3=4")), 8),
        (b"+1 1:2 3:nan", ONE_BASED, NonFiniteValue(s("nan")), 10),
        (b"+1 1:2 3:NaN", ONE_BASED, NonFiniteValue(s("NaN")), 10),
        (b"+1 1:2 3:inf", ONE_BASED, NonFiniteValue(s("inf")), 10),
        (
            b"+1 1:2 3:-infinity",
            ONE_BASED,
            NonFiniteValue(s("-infinity")),
            10,
        ),
        (b"+1 1:2 3:1e999", ONE_BASED, NonFiniteValue(s("1e999")), 10),
        (
            b"+1 1:2 3:-1e999",
            ONE_BASED,
            NonFiniteValue(s("-1e999")),
            10,
        ),
        (b"nan 1:2", ONE_BASED, NonFiniteValue(s("nan")), 1),
        (b"-inf 1:2", ONE_BASED, NonFiniteValue(s("-inf")), 1),
        (b"1e999 1:2", ONE_BASED, NonFiniteValue(s("1e999")), 1),
        (b"+1 0:2", ONE_BASED, ZeroIndexInOneBased, 4),
        (b"+1 2:1 0:2", ONE_BASED, ZeroIndexInOneBased, 8),
        (b"+1 1:2 1:3", ONE_BASED, DuplicateIndex(1), 8),
        (b"+1 5:2 1:3 5:4", ONE_BASED, DuplicateIndex(5), 12),
        (
            b"+1 9:2 1:3 qid:2 4:0 1:4",
            ONE_BASED,
            DuplicateIndex(1),
            22,
        ),
        (b"+1 0:2 0:3", ZERO_BASED, DuplicateIndex(0), 8),
        (
            b"+1 4294967296:1",
            ONE_BASED,
            IndexTooLarge(s("4294967296")),
            4,
        ),
        (
            b"+1 4294967295:1",
            ZERO_BASED,
            IndexTooLarge(s("4294967295")),
            4,
        ),
        (
            b"+1 1:1 99999999999999999999999:1",
            ONE_BASED,
            IndexTooLarge(s("99999999999999999999999")),
            8,
        ),
        (
            b"\x00\x01\x02",
            ONE_BASED,
            UnparsableLabel(s("\u{0}\u{1}\u{2}")),
            1,
        ),
    ];
    for (bad, options, kind, column) in cases {
        let mut input = PREFIX.to_vec();
        input.extend_from_slice(bad);
        input.extend_from_slice(b"\n+1 7:1\n");
        let mut r = reader(&input, options);
        let shown = String::from_utf8_lossy(bad).into_owned();
        let first = r
            .next()
            .unwrap()
            .unwrap_or_else(|e| panic!("{shown:?}: {e}"));
        let second = r
            .next()
            .unwrap()
            .unwrap_or_else(|e| panic!("{shown:?}: {e}"));
        assert_eq!(first.label, 1.0);
        assert_eq!(second.label, -1.0);
        let err = match r.next() {
            Some(Err(e)) => e,
            other => panic!("{shown:?}: expected an error, got {other:?}"),
        };
        assert_eq!(err.kind, kind, "{shown:?}");
        assert_eq!(err.line, 4, "{shown:?}");
        assert_eq!(err.column, column, "{shown:?}");
        assert_eq!(err.source_name, "test.libsvm");
        // The reader resumes at the next line.
        let after = r.next().unwrap().unwrap();
        let seven = if options.zero_based { 7 } else { 6 };
        assert_eq!((after.indices, r.line()), (vec![seven], 5), "{shown:?}");
        assert!(r.next().is_none());
    }
}

#[test]
fn error_display_names_file_line_and_column() {
    let err = parse_all("+1 1:1\n\n+1 2:x\n", ONE_BASED).unwrap_err();
    assert_eq!(err.to_string(), "test.libsvm:3:6: cannot parse value \"x\"");
    let err = parse_all("+1 1:1\n-1 3:1 2:1 3:5\n", ONE_BASED).unwrap_err();
    assert_eq!(
        err.to_string(),
        "test.libsvm:2:12: duplicate feature index 3"
    );
}

#[test]
fn long_tokens_are_cut_in_messages() {
    let long = "x".repeat(1000);
    let err = parse_all(&format!("{long} 1:1\n"), ONE_BASED).unwrap_err();
    match err.kind {
        ParseErrorKind::UnparsableLabel(t) => {
            assert!(
                t.len() < 100 && t.starts_with("xxxx") && t.ends_with("..."),
                "{t}"
            )
        }
        k => panic!("{k:?}"),
    }
}

#[test]
fn accepts_comments_blank_lines_qid_crlf_tabs() {
    let text = "# header comment\n\
                \n\
                +1 qid:3 1:0.5 3:-2 # trailing comment\r\n\
                \t \r\n\
                -1\t2:1e-3\t\t4:+7   \n\
                #only comment\n\
                0 qid:1 # label only, with qid\n\
                2.5 1:1#comment glued to token\n\
                1E2 10:.5 11:5.\n\
                -0.25";
    let got = parse_all(text, ONE_BASED).unwrap();
    assert_eq!(
        got,
        vec![
            ex(1.0, &[0, 2], &[0.5, -2.0]),
            ex(-1.0, &[1, 3], &[1e-3, 7.0]),
            ex(0.0, &[], &[]),
            ex(2.5, &[0], &[1.0]),
            ex(100.0, &[9, 10], &[0.5, 5.0]),
            ex(-0.25, &[], &[]),
        ]
    );
}

#[test]
fn line_numbers_count_skipped_lines() {
    let mut r = reader(b"\n# c\n+1 1:1\n\n\n-1 2:1\n", ONE_BASED);
    let mut e = Example::default();
    assert!(r.read_into(&mut e).unwrap());
    assert_eq!(r.line(), 3);
    assert!(r.read_into(&mut e).unwrap());
    assert_eq!(r.line(), 6);
    assert!(!r.read_into(&mut e).unwrap());
    assert_eq!(r.examples_read(), 2);
}

#[test]
fn unsorted_indices_are_sorted_with_their_values() {
    let got = parse_all("1 5:50 2:20 9:90 1:10 3:30\n", ONE_BASED).unwrap();
    assert_eq!(
        got,
        vec![ex(1.0, &[0, 1, 2, 4, 8], &[10.0, 20.0, 30.0, 50.0, 90.0])]
    );
}

#[test]
fn explicit_zero_values_are_kept() {
    let got = parse_all("1 1:0 2:-0 3:0.0\n", ONE_BASED).unwrap();
    assert_eq!(got[0].indices, vec![0, 1, 2]);
    assert!(got[0].values.iter().all(|&v| v == 0.0));
}

#[test]
fn zero_based_mode_keeps_indices() {
    let got = parse_all("1 0:1 2:3\n-1 4294967294:2\n", ZERO_BASED).unwrap();
    assert_eq!(
        got,
        vec![
            ex(1.0, &[0, 2], &[1.0, 3.0]),
            ex(-1.0, &[u32::MAX - 1], &[2.0])
        ]
    );
}

#[test]
fn largest_one_based_index_fits() {
    let mut r = reader(b"1 4294967295:1\n", ONE_BASED);
    let e = r.next().unwrap().unwrap();
    assert_eq!(e.indices, vec![u32::MAX - 1]);
    assert_eq!(r.max_index_plus_one(), u32::MAX as usize);
}

#[test]
fn labels_in_all_usual_spellings() {
    let got = parse_all("+1\n-1\n1\n0\n2.5\n-3e-2\n+4E+1\n", ONE_BASED).unwrap();
    let labels: Vec<f64> = got.iter().map(|e| e.label).collect();
    assert_eq!(labels, vec![1.0, -1.0, 1.0, 0.0, 2.5, -0.03, 40.0]);
    assert!(got.iter().all(|e| e.weight == 1.0));
}

#[test]
fn max_index_tracks_all_rows_and_byte_order_mark_is_skipped() {
    let mut r = reader(b"\xEF\xBB\xBF+1 3:1\n-1 1:1\n+1 7:1 2:1\n", ONE_BASED);
    assert_eq!(r.max_index_plus_one(), 0);
    assert_eq!(r.line(), 0);
    let rows: Vec<Example> = r.by_ref().collect::<Result<_, _>>().unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(r.max_index_plus_one(), 7);
    assert_eq!(r.line(), 3);

    // Columns on the first line count the BOM's bytes.
    let err = parse_all("\u{feff}+1 x:1\n", ONE_BASED).unwrap_err();
    assert_eq!((err.line, err.column), (1, 7));
}

#[test]
fn read_into_reuses_and_resets_the_example() {
    let mut r = reader(b"1 1:1 2:2 3:3\n-1 5:5\n", ONE_BASED);
    let mut e = Example {
        label: 9.0,
        weight: 7.0,
        indices: vec![1, 2, 3, 4, 5, 6],
        values: vec![0.0; 6],
    };
    assert!(r.read_into(&mut e).unwrap());
    assert_eq!(e, ex(1.0, &[0, 1, 2], &[1.0, 2.0, 3.0]));
    let cap = e.indices.capacity();
    assert!(r.read_into(&mut e).unwrap());
    assert_eq!(e, ex(-1.0, &[4], &[5.0]));
    assert_eq!(e.indices.capacity(), cap);
    assert!(!r.read_into(&mut e).unwrap());
    assert!(!r.read_into(&mut e).unwrap());
}

/// A unique temporary path (removed when dropped).
struct TempPath(std::path::PathBuf);

impl TempPath {
    fn new(name: &str) -> Self {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        TempPath(std::env::temp_dir().join(format!(
            "sketchlearn-test-{}-{nanos}-{n}-{name}",
            std::process::id()
        )))
    }
    fn as_str(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

#[test]
fn gzip_input_is_decompressed_by_open_input() {
    let text = "+1 1:0.5 3:1\n# comment\n-1 2:-1\n";
    // Named .gz, and (same content) a name without the suffix: the magic bytes decide.
    for name in ["data.libsvm.gz", "data.libsvm"] {
        let path = TempPath::new(name);
        std::fs::write(&path.0, gzip(text.as_bytes())).unwrap();
        let input = open_input(path.as_str()).unwrap();
        let got: Vec<Example> = LibsvmReader::new(input, path.as_str(), ONE_BASED)
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            got,
            vec![ex(1.0, &[0, 2], &[0.5, 1.0]), ex(-1.0, &[1], &[-1.0])],
            "{name}"
        );
    }
}

#[test]
fn multi_member_gzip_is_read_whole() {
    let mut bytes = gzip(b"+1 1:1\n");
    bytes.extend(gzip(b"-1 2:1\n"));
    let path = TempPath::new("multi.gz");
    std::fs::write(&path.0, bytes).unwrap();
    let got: Vec<Example> = LibsvmReader::open(path.as_str(), ONE_BASED)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(got.len(), 2);
    assert_eq!(got[1].indices, vec![1]);
}

#[test]
fn corrupt_gzip_is_an_io_error_not_a_panic() {
    let good = gzip(b"+1 1:1\n-1 2:1\n+1 3:1\n");
    let n = good.len();
    let truncated = good[..n - 6].to_vec();
    let mut bad_crc = good.clone();
    bad_crc[n - 8] ^= 0xff;
    for bytes in [truncated, bad_crc] {
        let path = TempPath::new("corrupt.gz");
        std::fs::write(&path.0, bytes).unwrap();
        let results: Vec<_> = LibsvmReader::open(path.as_str(), ONE_BASED)
            .unwrap()
            .collect();
        let err = results
            .iter()
            .find_map(|r| r.as_ref().err())
            .expect("an error");
        assert!(matches!(err.kind, ParseErrorKind::Io(_)), "{err}");
        assert_eq!(err.source_name, path.as_str());
        // After an I/O error the stream ends.
        assert!(results.last().unwrap().is_err());
    }
}

#[test]
fn plain_files_and_tiny_files_open() {
    // Files shorter than the gzip magic, or starting with only its first byte, are plain text.
    for (content, rows) in [
        ("", Ok(0)),
        ("1", Ok(1)),
        ("+1 1:1\n", Ok(1)),
        ("\x1f", Err(())),
    ] {
        let path = TempPath::new("plain.libsvm");
        std::fs::write(&path.0, content).unwrap();
        let got: Result<Vec<Example>, ParseError> = LibsvmReader::open(path.as_str(), ONE_BASED)
            .unwrap()
            .collect();
        match (got, rows) {
            (Ok(got), Ok(n)) => assert_eq!(got.len(), n, "{content:?}"),
            (Err(e), Err(())) => {
                assert!(matches!(e.kind, ParseErrorKind::UnparsableLabel(_)), "{e}")
            }
            (got, _) => panic!("{content:?}: {got:?}"),
        }
    }
}

#[test]
fn missing_file_error_names_the_path() {
    let err = open_input("/definitely/not/here.libsvm").err().unwrap();
    assert_eq!(err.source_name, "/definitely/not/here.libsvm");
    assert_eq!(err.line, 0);
    assert!(matches!(err.kind, ParseErrorKind::Io(_)));
    let msg = err.to_string();
    assert!(
        msg.starts_with("/definitely/not/here.libsvm: I/O error: cannot open"),
        "{msg}"
    );
    assert!(LibsvmReader::open("/definitely/not/here.libsvm", ONE_BASED).is_err());
}

#[test]
fn heart_dataset() {
    // The repository's own copy (data/heart.libsvm), so the test always runs.
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/heart.libsvm");
    let mut r = LibsvmReader::open(path, ONE_BASED).unwrap();
    let mut e = Example::default();
    let mut rows = 0;
    let mut labels = [0usize; 2];
    while r.read_into(&mut e).unwrap() {
        rows += 1;
        assert!(e.indices.windows(2).all(|w| w[0] < w[1]));
        labels[usize::from(e.label > 0.0)] += 1;
        assert!(e.label == 1.0 || e.label == -1.0);
    }
    assert_eq!(rows, 270);
    assert_eq!(r.max_index_plus_one(), 13);
    assert_eq!(labels[0] + labels[1], 270);
    assert!(labels[0] > 0 && labels[1] > 0);
}

fn check_invariants(e: &Example) {
    assert_eq!(e.indices.len(), e.values.len());
    assert!(e.indices.windows(2).all(|w| w[0] < w[1]), "{e:?}");
    assert!(e.values.iter().all(|v| v.is_finite()), "{e:?}");
    assert!(e.label.is_finite());
    assert_eq!(e.weight, 1.0);
    assert!(e.indices.iter().all(|&i| i < u32::MAX));
}

fn read_everything(bytes: &[u8], options: LibsvmOptions) {
    let mut r = reader(bytes, options);
    let lines = bytes.iter().filter(|&&b| b == b'\n').count() as u64 + 1;
    let mut max = 0;
    let mut steps = 0;
    for item in r.by_ref() {
        steps += 1;
        assert!(steps <= lines, "more items than lines");
        match item {
            Ok(e) => {
                check_invariants(&e);
                max = max.max(e.row().max_index_plus_one());
            }
            Err(err) => {
                assert!(err.line >= 1 && err.line <= lines);
                assert!(err.column >= 1);
                let _ = err.to_string();
            }
        }
    }
    assert_eq!(r.max_index_plus_one(), max);
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        read_everything(&bytes, ONE_BASED);
        read_everything(&bytes, ZERO_BASED);
    }

    #[test]
    fn libsvm_like_text_never_panics(text in "[-+0-9:.eE#qidnaf \t\r\n]{0,300}") {
        read_everything(text.as_bytes(), ONE_BASED);
        read_everything(text.as_bytes(), ZERO_BASED);
    }
}

fn finite() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>().prop_filter("finite", |x| x.is_finite()),
        (-5i32..5).prop_map(f64::from),
        -1.0..1.0f64,
    ]
}

/// A random example plus the order in which its features are written.
fn example_and_order() -> impl Strategy<Value = (Example, Vec<usize>)> {
    (
        finite(),
        proptest::collection::btree_map(prop_oneof![0u32..50, 0u32..u32::MAX - 1], finite(), 0..12),
    )
        .prop_flat_map(|(label, features)| {
            let n = features.len();
            let e = Example {
                label,
                weight: 1.0,
                indices: features.keys().copied().collect(),
                values: features.values().copied().collect(),
            };
            (Just(e), Just((0..n).collect::<Vec<_>>()).prop_shuffle())
        })
}

proptest! {
    #[test]
    fn round_trip_through_text(
        rows in proptest::collection::vec((example_and_order(), any::<u8>()), 0..20),
        zero_based in any::<bool>(),
    ) {
        let mut text = String::new();
        for ((e, order), style) in &rows {
            let sep = if style & 1 == 0 { " " } else { "\t" };
            if style & 2 != 0 {
                text.push_str("# a comment line\n\n");
            }
            text.push_str(&format!("{}", e.label));
            if style & 4 != 0 {
                text.push_str(" qid:17");
            }
            for &k in order {
                let written = if zero_based { e.indices[k] as u64 } else { e.indices[k] as u64 + 1 };
                text.push_str(&format!("{sep}{written}:{}", e.values[k]));
            }
            if style & 8 != 0 {
                text.push_str(" # trailing");
            }
            text.push_str(if style & 16 == 0 { "\n" } else { "\r\n" });
        }
        let options = LibsvmOptions { zero_based };
        let mut r = reader(text.as_bytes(), options);
        let parsed: Vec<Example> = r.by_ref().collect::<Result<_, _>>()
            .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(parsed.len(), rows.len());
        for (p, ((e, _), _)) in parsed.iter().zip(&rows) {
            prop_assert_eq!(p.label.to_bits(), e.label.to_bits());
            prop_assert_eq!(&p.indices, &e.indices);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            prop_assert_eq!(bits(&p.values), bits(&e.values));
            prop_assert_eq!(p.weight, 1.0);
        }
        let max = rows.iter().map(|((e, _), _)| e.row().max_index_plus_one()).max().unwrap_or(0);
        prop_assert_eq!(r.max_index_plus_one(), max);
    }
}

proptest! {
    /// The fast decimal path (Clinger) returns the very double `f64::from_str` returns, for
    /// plain decimals of every length around its limits (19 digits, 2^53, 22 fraction digits)
    /// and for the forms it hands over to the standard parser (exponents).
    #[test]
    fn decimal_values_parse_like_the_standard_library(v in common::decimal_text(-30..30)) {
        let want = v.parse::<f64>();
        let line = format!("1 3:{v}\n");
        let mut r = reader(line.as_bytes(), ONE_BASED);
        let got = r.next().expect("one line");
        match want {
            Ok(x) if x.is_finite() => {
                let e = got.map_err(|e| TestCaseError::fail(format!("{v}: {e}")))?;
                prop_assert_eq!(e.values[0].to_bits(), x.to_bits(), "{}", v);
            }
            _ => prop_assert!(got.is_err(), "{} should be rejected", v),
        }
    }
}

#[test]
fn decimal_fast_path_edges() {
    for v in [
        "9007199254740992", // 2^53: fast path
        "9007199254740993", // 2^53 + 1: rounds, standard parser
        "0.1",
        "-0",
        "-0.0",
        ".5",
        "5.",
        "0.0000000000000000000001",
        "1234567890123456789",
        "12345678901234567890",
        "3.14159265358979323846",
        "+7.25",
    ] {
        let line = format!("1 1:{v}\n");
        let e = reader(line.as_bytes(), ONE_BASED).next().unwrap().unwrap();
        assert_eq!(
            e.values[0].to_bits(),
            v.parse::<f64>().unwrap().to_bits(),
            "{v}"
        );
    }
}

/// Reads `bytes` twice, in full and with [`LibsvmReader::skip_values`], item by item: a line
/// the full parse accepts gives the same label, indices and line when values are skipped; a
/// line read without its values where the full parse fails failed on a value (reported by the
/// full read, at its column); every other error is the same error. The largest index is the
/// full parse's when no value failed.
fn skipping_values_agrees(bytes: &[u8], options: LibsvmOptions) -> Result<(), TestCaseError> {
    let mut full = reader(bytes, options);
    let mut scan = reader(bytes, options);
    scan.skip_values();
    let mut value_failed = false;
    loop {
        let (a, b) = (full.next(), scan.next());
        prop_assert_eq!(full.line(), scan.line());
        match (a, b) {
            (None, None) => break,
            (Some(Ok(a)), Some(Ok(b))) => {
                prop_assert_eq!(a.label.to_bits(), b.label.to_bits());
                prop_assert_eq!(&a.indices, &b.indices);
            }
            (Some(Err(e)), Some(Ok(_))) => {
                prop_assert!(
                    matches!(
                        e.kind,
                        ParseErrorKind::UnparsableValue(_) | ParseErrorKind::NonFiniteValue(_)
                    ),
                    "{}",
                    e
                );
                value_failed = true;
            }
            (Some(Err(a)), Some(Err(b))) => prop_assert_eq!(a, b),
            (a, b) => prop_assert!(false, "full {:?}, values skipped {:?}", a, b),
        }
    }
    if !value_failed {
        prop_assert_eq!(full.max_index_plus_one(), scan.max_index_plus_one());
    }
    Ok(())
}

/// Lines of plain `index:token` features whose tokens are random (good, bad, long, with `#`,
/// `:` or control bytes), in either base.
fn plain_lines_with_any_values() -> impl Strategy<Value = String> {
    let token = "[-+0-9.eEa#:\u{1}\u{b}\u{c}]{0,20}";
    let feature = (0u32..40, token).prop_map(|(i, v)| format!("{i}:{v}"));
    let line = (
        "-?[0-9]{1,3}",
        proptest::collection::vec(feature, 0..8),
        "[ \t]{1,2}",
    )
        .prop_map(|(label, features, sep)| format!("{label}{sep}{}", features.join(&sep)));
    proptest::collection::vec(line, 0..12).prop_map(|lines| lines.join("\n"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    /// Skipping values (the dimension scan of a run) changes no label, index, line or error
    /// but the values' own ([`skipping_values_agrees`]).
    #[test]
    fn skipping_values_keeps_labels_indices_and_errors(
        text in prop_oneof![
            plain_lines_with_any_values(),
            "[-+0-9:.eE#qidnaf \t\r\n\u{1}\u{b}]{0,300}",
        ],
        bytes in proptest::collection::vec(any::<u8>(), 0..200),
    ) {
        for options in [ONE_BASED, ZERO_BASED] {
            skipping_values_agrees(text.as_bytes(), options)?;
            skipping_values_agrees(&bytes, options)?;
        }
    }
}

/// A dense file read with values skipped: the labels and indices of the full parse.
#[test]
fn skipping_values_on_a_dense_file() {
    let mut text = String::new();
    for r in 0..50 {
        text.push_str(if r % 2 == 0 { "1" } else { "-1" });
        for j in 1..=120 {
            text.push_str(&format!(" {j}:{:.4}", (r * 7 + j) as f64 * 0.37 - 20.0));
        }
        text.push('\n');
    }
    skipping_values_agrees(text.as_bytes(), ONE_BASED).unwrap();
    let mut scan = reader(text.as_bytes(), ONE_BASED);
    scan.skip_values();
    assert_eq!(scan.by_ref().count(), 50);
    assert_eq!(scan.max_index_plus_one(), 120);
}

/// Values skipped eight bytes at a time stop at a `#` (the rest of the line is a comment) and
/// at a control byte that is not whitespace (the line is parsed in full) wherever they fall.
#[test]
fn skipping_values_stops_at_a_comment_or_control_byte() {
    for at in 0..12 {
        for stop in ["#", "\u{1}", "#9:1 ", "\u{b}"] {
            let value = format!("{}{stop}{}", &"0.12345678901"[..at], "x 30:1 40:2");
            let text = format!("1 2:{value} 50:1\n-1 3:1\n");
            skipping_values_agrees(text.as_bytes(), ONE_BASED).unwrap();
        }
    }
}

/// A byte that is not UTF-8 in a label, an index or a value (a Latin-1 export) is named as such,
/// at its line and column, with the `iconv` fix, not as a token that does not parse.
#[test]
fn bytes_that_are_not_utf8_are_named_with_the_iconv_fix() {
    let cases: [(&[u8], u8, usize); 3] = [
        (b"\xff\xfe 1:2", 0xff, 1),
        (b"+1 1:\xff", 0xff, 6),
        (b"+1 \xc3(:1", 0xc3, 4),
    ];
    for (bad, byte, column) in cases {
        let mut input = b"+1 1:1\n-1 2:1\n".to_vec();
        input.extend_from_slice(bad);
        input.push(b'\n');
        let mut r = reader(&input, ONE_BASED);
        assert!(r.next().unwrap().is_ok() && r.next().unwrap().is_ok());
        let err = match r.next() {
            Some(Err(e)) => e,
            other => panic!("{bad:?}: expected an error, got {other:?}"),
        };
        let ParseErrorKind::Column(message) = &err.kind else {
            panic!("{bad:?}: {:?}", err.kind);
        };
        let head = format!("not UTF-8 text (byte 0x{byte:02x})");
        assert!(
            message.starts_with(&head) && message.contains("iconv -f latin1 -t utf-8"),
            "{message}"
        );
        assert_eq!((err.line, err.column), (3, column), "{bad:?}");
    }
}
