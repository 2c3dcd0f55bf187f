//! Model files: round trips, damage detection (every byte flipped, every truncation, lying length
//! fields), foreign files, wrong kinds and atomic writes.

use crate::common;

use common::scratch::Scratch;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use sketchlearn::model::{self, ModelError, FORMAT_VERSION, MAGIC, MAX_KIND_LEN};

// ---------------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Shrink {
    Exact,
    Doubling { buffer_rows: u32 },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Curvature {
    Identity,
    Sketched {
        method: String,
        shrink: Shrink,
        alpha: f64,
        rows: Vec<Vec<f64>>,
    },
    Full(Vec<f64>),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Learner {
    name: String,
    seen: u64,
    weights: Vec<f64>,
    special: Vec<f64>,
    curvature: Curvature,
    fallback: Option<Box<Curvature>>,
    extras: BTreeMap<String, i64>,
}

/// Values whose bit patterns a lossy format would change.
fn special_values() -> Vec<f64> {
    vec![
        0.0,
        -0.0,
        f64::from_bits(1),                      // smallest subnormal
        -f64::from_bits(0x000f_ffff_ffff_ffff), // largest subnormal, negated
        f64::MIN_POSITIVE / 3.0,                // another subnormal
        f64::MIN_POSITIVE,
        f64::MAX,
        f64::MIN,
        f64::EPSILON,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        f64::from_bits(0x7ff8_0000_dead_beef), // NaN with a payload
        f64::from_bits(0xfff0_0000_0000_0001), // negative signalling NaN
        1.0 / 3.0,
        -std::f64::consts::PI,
    ]
}

fn sample_learner() -> Learner {
    let mut extras = BTreeMap::new();
    extras.insert("passes".to_string(), 3);
    extras.insert("min".to_string(), i64::MIN);
    Learner {
        name: "son-rfd ünïcødé ✓".to_string(),
        seen: u64::MAX - 7,
        weights: (0..50).map(|i| (i as f64).sin() * 1e-3).collect(),
        special: special_values(),
        curvature: Curvature::Sketched {
            method: "rfd".to_string(),
            shrink: Shrink::Doubling { buffer_rows: 20 },
            alpha: 1e-300,
            rows: vec![vec![1.0, -0.0], vec![], vec![f64::from_bits(3)]],
        },
        fallback: Some(Box::new(Curvature::Full(vec![-0.0, 2.5]))),
        extras,
    }
}

/// Compares two learners bit for bit (NaN != NaN under `PartialEq`, and -0.0 == 0.0).
fn assert_bit_identical(a: &Learner, b: &Learner) {
    fn bits(v: &[f64]) -> Vec<u64> {
        v.iter().map(|x| x.to_bits()).collect()
    }
    fn curvature_bits(c: &Curvature) -> String {
        match c {
            Curvature::Identity => "identity".to_string(),
            Curvature::Sketched {
                method,
                shrink,
                alpha,
                rows,
            } => format!(
                "{method} {shrink:?} {:x} {:?}",
                alpha.to_bits(),
                rows.iter().map(|r| bits(r)).collect::<Vec<_>>()
            ),
            Curvature::Full(v) => format!("full {:?}", bits(v)),
        }
    }
    assert_eq!(a.name, b.name);
    assert_eq!(a.seen, b.seen);
    assert_eq!(bits(&a.weights), bits(&b.weights));
    assert_eq!(bits(&a.special), bits(&b.special));
    assert_eq!(curvature_bits(&a.curvature), curvature_bits(&b.curvature));
    assert_eq!(
        a.fallback.as_deref().map(curvature_bits),
        b.fallback.as_deref().map(curvature_bits)
    );
    assert_eq!(a.extras, b.extras);
}

/// A small model used by the damage tests: a header and a short payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Small {
    w: Vec<f64>,
    steps: u64,
    tag: Shrink,
}

fn small() -> Small {
    Small {
        w: vec![0.5, -0.0, f64::from_bits(1)],
        steps: 12,
        tag: Shrink::Doubling { buffer_rows: 4 },
    }
}

const KIND: &str = "learner";

/// Offsets of the header fields for a kind tag of `k` bytes.
struct Layout {
    kind: std::ops::Range<usize>,
    payload_len: std::ops::Range<usize>,
    crc: std::ops::Range<usize>,
    payload: usize,
}

fn layout(k: usize) -> Layout {
    Layout {
        kind: 14..14 + k,
        payload_len: 14 + k..22 + k,
        crc: 22 + k..26 + k,
        payload: 26 + k,
    }
}

/// Recomputes the checksum of a (possibly tampered) image in place.
fn fix_crc(bytes: &mut [u8], k: usize) {
    let l = layout(k);
    let mut h = crc32fast::Hasher::new();
    h.update(&bytes[..l.crc.start]);
    h.update(&bytes[l.payload..]);
    bytes[l.crc.clone()].copy_from_slice(&h.finalize().to_le_bytes());
}

/// Builds a well-formed frame (correct lengths and checksum) around an arbitrary payload.
fn frame(kind: &str, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&(kind.len() as u16).to_le_bytes());
    out.extend_from_slice(kind.as_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(payload);
    fix_crc(&mut out, kind.len());
    out
}

fn kind_of(err: &ModelError) -> &'static str {
    match err {
        ModelError::Io { .. } => "Io",
        ModelError::NotAModel { .. } => "NotAModel",
        ModelError::UnsupportedVersion { .. } => "UnsupportedVersion",
        ModelError::Corrupted { .. } => "Corrupted",
        ModelError::WrongKind { .. } => "WrongKind",
        ModelError::Decode { .. } => "Decode",
        ModelError::Encode(_) => "Encode",
        _ => "unknown",
    }
}

// ---------------------------------------------------------------------------------------------
// Round trips
// ---------------------------------------------------------------------------------------------

#[test]
fn round_trip_in_memory_is_bit_identical() {
    let learner = sample_learner();
    let bytes = model::to_bytes(KIND, &learner).unwrap();
    let back: Learner = model::from_bytes(&bytes, KIND, "memory").unwrap();
    assert_bit_identical(&learner, &back);
    // Serialising is deterministic.
    assert_eq!(bytes, model::to_bytes(KIND, &back).unwrap());
}

#[test]
fn round_trip_through_a_file_is_bit_identical() {
    let dir = Scratch::new("round-trip");
    let path = dir.path("learner.skl");
    let learner = sample_learner();
    model::save(&path, KIND, &learner).unwrap();
    let back: Learner = model::load(&path, KIND).unwrap();
    assert_bit_identical(&learner, &back);
    assert_eq!(model::peek_kind(&path).unwrap(), KIND);
    // The file is exactly what to_bytes produces.
    assert_eq!(
        fs::read(&path).unwrap(),
        model::to_bytes(KIND, &learner).unwrap()
    );
}

#[test]
fn header_has_the_documented_layout() {
    let kind = "sketch";
    let bytes = model::to_bytes(kind, &small()).unwrap();
    let payload = postcard::to_stdvec(&small()).unwrap();
    let l = layout(kind.len());
    assert_eq!(&bytes[..8], b"SKLMODEL");
    assert_eq!(&bytes[8..12], &11u32.to_le_bytes());
    assert_eq!(&bytes[12..14], &(kind.len() as u16).to_le_bytes());
    assert_eq!(&bytes[l.kind.clone()], kind.as_bytes());
    assert_eq!(
        &bytes[l.payload_len.clone()],
        &(payload.len() as u64).to_le_bytes()
    );
    let mut h = crc32fast::Hasher::new();
    h.update(&bytes[..l.crc.start]);
    h.update(&payload);
    assert_eq!(&bytes[l.crc.clone()], &h.finalize().to_le_bytes());
    assert_eq!(&bytes[l.payload..], &payload[..]);
    // A frame built independently from the documented layout is accepted.
    let rebuilt = frame(kind, &payload);
    assert_eq!(rebuilt, bytes);
}

#[test]
fn kind_tag_limits_are_enforced_when_encoding() {
    assert!(matches!(
        model::to_bytes("", &1u8),
        Err(ModelError::Encode(_))
    ));
    let too_long = "k".repeat(MAX_KIND_LEN + 1);
    let err = model::to_bytes(&too_long, &1u8).unwrap_err();
    assert!(matches!(err, ModelError::Encode(_)), "{err:?}");
    let longest = "é".repeat(MAX_KIND_LEN / 2); // 64 bytes of UTF-8
    let bytes = model::to_bytes(&longest, &7u8).unwrap();
    assert_eq!(model::from_bytes::<u8>(&bytes, &longest, "m").unwrap(), 7);
}

// ---------------------------------------------------------------------------------------------
// Damage
// ---------------------------------------------------------------------------------------------

/// [`small`] saved as `name` in a fresh scratch folder for `test`: the folder, the path and the
/// bytes written.
fn saved_small(test: &str, name: &str) -> (Scratch, PathBuf, Vec<u8>) {
    let dir = Scratch::new(test);
    let path = dir.path(name);
    model::save(&path, KIND, &small()).unwrap();
    let bytes = fs::read(&path).unwrap();
    (dir, path, bytes)
}

#[test]
fn flipping_any_single_byte_is_detected_with_the_right_error() {
    let (dir, _, original) = saved_small("flip", "small.skl");
    let l = layout(KIND.len());
    assert!(original.len() > l.payload, "the payload must not be empty");

    let mut seen = BTreeMap::new();
    for i in 0..original.len() {
        let mut bytes = original.clone();
        bytes[i] ^= 0xFF;
        let err = match model::from_bytes::<Small>(&bytes, KIND, "flipped") {
            Ok(v) => panic!("byte {i} flipped but the model loaded: {v:?}"),
            Err(e) => e,
        };
        let expected = match i {
            0..=7 => "NotAModel",
            8..=11 => "UnsupportedVersion",
            _ => "Corrupted",
        };
        assert_eq!(kind_of(&err), expected, "byte {i}: {err}");
        match (&err, i) {
            (
                ModelError::UnsupportedVersion {
                    found, supported, ..
                },
                _,
            ) => {
                assert_ne!(*found, FORMAT_VERSION);
                assert_eq!(*supported, FORMAT_VERSION);
            }
            (ModelError::Corrupted { reason, .. }, 12..=13) => {
                assert!(reason.contains("kind tag length"), "byte {i}: {reason}")
            }
            (ModelError::Corrupted { reason, .. }, _) if l.payload_len.contains(&i) => assert!(
                reason.contains("truncated") || reason.contains("trailing"),
                "byte {i}: {reason}"
            ),
            (ModelError::Corrupted { reason, .. }, _) => {
                assert!(reason.contains("checksum"), "byte {i}: {reason}")
            }
            _ => {}
        }
        *seen.entry(expected).or_insert(0) += 1;
        // The same through the file system, for a sample of positions.
        if i % 7 == 0 {
            let damaged = dir.path("damaged.skl");
            fs::write(&damaged, &bytes).unwrap();
            let from_file = model::load::<Small>(&damaged, KIND).unwrap_err();
            assert_eq!(kind_of(&from_file), expected, "byte {i} via load");
            assert_eq!(kind_of(&model::peek_kind(&damaged).unwrap_err()), expected);
        }
    }
    assert_eq!(seen["NotAModel"], 8);
    assert_eq!(seen["UnsupportedVersion"], 4);
    assert_eq!(seen["Corrupted"], original.len() - 12);
}

#[test]
fn truncation_at_every_length_is_detected() {
    let bytes = model::to_bytes(KIND, &small()).unwrap();
    for len in 0..bytes.len() {
        let err = model::from_bytes::<Small>(&bytes[..len], KIND, "cut").unwrap_err();
        let expected = if len == 0 { "NotAModel" } else { "Corrupted" };
        assert_eq!(kind_of(&err), expected, "length {len}: {err}");
        if len > 0 {
            assert!(err.to_string().contains("truncated"), "length {len}: {err}");
        }
    }
    assert!(model::from_bytes::<Small>(&bytes, KIND, "whole").is_ok());
}

#[test]
fn trailing_bytes_are_rejected() {
    let mut bytes = model::to_bytes(KIND, &small()).unwrap();
    bytes.push(0);
    let err = model::from_bytes::<Small>(&bytes, KIND, "long").unwrap_err();
    assert!(matches!(&err, ModelError::Corrupted { reason, .. } if reason.contains("trailing")));
    // Even when the checksum is fixed up to cover the extra byte the length field disagrees.
    fix_crc(&mut bytes, KIND.len());
    let err = model::from_bytes::<Small>(&bytes, KIND, "long").unwrap_err();
    assert!(matches!(&err, ModelError::Corrupted { reason, .. } if reason.contains("trailing")));
}

#[test]
fn huge_length_fields_do_not_allocate_or_panic() {
    let original = model::to_bytes(KIND, &small()).unwrap();
    let l = layout(KIND.len());
    for lie in [u64::MAX, u64::MAX / 2, 1 << 40, usize::MAX as u64] {
        let mut bytes = original.clone();
        bytes[l.payload_len.clone()].copy_from_slice(&lie.to_le_bytes());
        fix_crc(&mut bytes, KIND.len());
        let err = model::from_bytes::<Small>(&bytes, KIND, "lie").unwrap_err();
        assert!(
            matches!(&err, ModelError::Corrupted { reason, .. } if reason.contains("truncated")),
            "{err}"
        );
    }
    for lie in [u16::MAX, 65, 0] {
        let mut bytes = original.clone();
        bytes[12..14].copy_from_slice(&lie.to_le_bytes());
        let err = model::from_bytes::<Small>(&bytes, KIND, "lie").unwrap_err();
        assert!(
            matches!(&err, ModelError::Corrupted { reason, .. } if reason.contains("kind tag length")),
            "{err}"
        );
    }
    // A postcard length prefix inside an intact frame announcing u64::MAX elements.
    let mut payload = vec![0xFF; 9];
    payload.push(0x01); // varint u64::MAX
    let bytes = frame(KIND, &payload);
    let err = model::from_bytes::<Vec<f64>>(&bytes, KIND, "lie").unwrap_err();
    assert!(matches!(err, ModelError::Decode { .. }), "{err}");
    let err = model::from_bytes::<String>(&bytes, KIND, "lie").unwrap_err();
    assert!(matches!(err, ModelError::Decode { .. }), "{err}");
}

#[test]
fn other_versions_are_rejected_naming_both_versions() {
    let original = model::to_bytes(KIND, &small()).unwrap();
    for (found, word) in [
        (FORMAT_VERSION + 1, "newer"),
        (u32::MAX, "newer"),
        (0, "older"),
        (FORMAT_VERSION - 1, "older"),
    ] {
        let mut bytes = original.clone();
        bytes[8..12].copy_from_slice(&found.to_le_bytes());
        fix_crc(&mut bytes, KIND.len());
        let err = model::from_bytes::<Small>(&bytes, KIND, "v.skl").unwrap_err();
        assert_eq!(
            err,
            ModelError::UnsupportedVersion {
                path: "v.skl".into(),
                found,
                oldest: FORMAT_VERSION,
                supported: FORMAT_VERSION
            }
        );
        let msg = err.to_string();
        assert!(msg.contains(&format!("version {found}")), "{msg}");
        assert!(
            msg.contains(&format!("reads version {FORMAT_VERSION};")),
            "{msg}"
        );
        assert!(msg.contains(word), "{msg}");
        assert_eq!(
            msg.contains("upgrade sketchlearn"),
            word == "newer",
            "{msg}"
        );
        assert!(msg.contains("v.skl"), "{msg}");
    }
}

#[test]
fn intact_frames_that_do_not_decode_give_decode_errors() {
    // Wrong type: a bool must be 0 or 1.
    let bytes = model::to_bytes(KIND, &7u8).unwrap();
    let err = model::from_bytes::<bool>(&bytes, KIND, "b").unwrap_err();
    assert!(matches!(err, ModelError::Decode { .. }), "{err}");
    // Payload too short for the type.
    let bytes = model::to_bytes(KIND, &vec![1u8, 2, 3]).unwrap();
    let err = model::from_bytes::<Small>(&bytes, KIND, "short").unwrap_err();
    assert!(matches!(err, ModelError::Decode { .. }), "{err}");
    // Payload longer than the type: left-over bytes are not silently ignored.
    let bytes = model::to_bytes(KIND, &(1u8, 2u8)).unwrap();
    let err = model::from_bytes::<u8>(&bytes, KIND, "long").unwrap_err();
    assert!(
        matches!(&err, ModelError::Decode { message, .. } if message.contains("left over")),
        "{err}"
    );
    // An unknown enum variant.
    let bytes = model::to_bytes(KIND, &9u32).unwrap();
    let err = model::from_bytes::<Shrink>(&bytes, KIND, "enum").unwrap_err();
    assert!(matches!(err, ModelError::Decode { .. }), "{err}");
}

#[test]
fn invalid_utf8_kind_with_valid_checksum_is_corrupted() {
    let mut bytes = frame("ab", &[1]);
    bytes[14] = 0xFF;
    fix_crc(&mut bytes, 2);
    let err = model::from_bytes::<u8>(&bytes, "ab", "utf8").unwrap_err();
    assert!(
        matches!(&err, ModelError::Corrupted { reason, .. } if reason.contains("UTF-8")),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------------
// Foreign files, missing files, wrong kinds
// ---------------------------------------------------------------------------------------------

#[test]
fn foreign_files_are_not_models() {
    let dir = Scratch::new("foreign");
    let cases: [(&str, &[u8]); 5] = [
        ("train.svm", b"+1 3:0.5 17:1.25\n-1 2:1\n"),
        ("empty.skl", b""),
        ("image.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"),
        ("short.txt", b"hi"),
        ("model.json", br#"{"weights": [1.0, 2.0]}"#),
    ];
    for (name, content) in cases {
        let path = dir.path(name);
        fs::write(&path, content).unwrap();
        let err = model::load::<Small>(&path, KIND).unwrap_err();
        assert!(matches!(err, ModelError::NotAModel { .. }), "{name}: {err}");
        let msg = err.to_string();
        assert!(msg.contains(name), "{msg}");
        assert!(msg.contains("not a sketchlearn model file"), "{msg}");
        let err = model::peek_kind(&path).unwrap_err();
        assert!(matches!(err, ModelError::NotAModel { .. }), "{name}: {err}");
        let err = model::from_bytes::<Small>(content, KIND, name).unwrap_err();
        assert!(matches!(err, ModelError::NotAModel { .. }), "{name}: {err}");
    }
}

#[test]
fn missing_file_is_an_io_error_naming_the_path() {
    let dir = Scratch::new("missing");
    let path = dir.path("no-such-model.skl");
    for err in [
        model::load::<Small>(&path, KIND).unwrap_err(),
        model::peek_kind(&path).unwrap_err(),
    ] {
        match &err {
            ModelError::Io { path: p, .. } => assert_eq!(p, &path.display().to_string()),
            other => panic!("expected Io, got {other:?}"),
        }
        assert!(err.to_string().contains("no-such-model.skl"), "{err}");
    }
    // A directory is not a model file either.
    let err = model::load::<Small>(&dir.0, KIND).unwrap_err();
    assert!(matches!(err, ModelError::Io { .. }), "{err}");
}

#[test]
fn wrong_kind_names_both_kinds() {
    let dir = Scratch::new("kind");
    let path = dir.path("sketch.skl");
    model::save(&path, "sketch", &small()).unwrap();
    let err = model::load::<Small>(&path, "learner").unwrap_err();
    assert_eq!(
        err,
        ModelError::WrongKind {
            path: path.display().to_string(),
            expected: "learner".into(),
            found: "sketch".into()
        }
    );
    let msg = err.to_string();
    assert!(msg.contains("learner") && msg.contains("sketch"), "{msg}");
    assert_eq!(model::peek_kind(&path).unwrap(), "sketch");
    // Kind comparison is exact.
    assert!(matches!(
        model::load::<Small>(&path, "Sketch"),
        Err(ModelError::WrongKind { .. })
    ));
}

// ---------------------------------------------------------------------------------------------
// Atomic writes
// ---------------------------------------------------------------------------------------------

/// A value whose serialisation always fails.
struct Unserialisable;

impl Serialize for Unserialisable {
    fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
        Err(serde::ser::Error::custom("refusing to serialise"))
    }
}

/// A value whose serialisation fails halfway, after some fields were written.
struct FailsHalfway;

impl Serialize for FailsHalfway {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(Some(3))?;
        seq.serialize_element(&1.0f64)?;
        seq.serialize_element(&2.0f64)?;
        Err(serde::ser::Error::custom("disk model too big"))
    }
}

#[test]
fn saving_over_an_existing_file_replaces_it_and_leaves_no_temp_files() {
    let dir = Scratch::new("replace");
    let path = dir.path("m.skl");
    fs::write(&path, b"old content that is not a model").unwrap();
    model::save(&path, KIND, &small()).unwrap();
    assert_eq!(model::load::<Small>(&path, KIND).unwrap(), small());
    let mut second = small();
    second.steps = 99;
    second.w.clear();
    model::save(&path, KIND, &second).unwrap();
    assert_eq!(model::load::<Small>(&path, KIND).unwrap(), second);
    assert_eq!(dir.entries(), vec!["m.skl".to_string()]);
}

#[test]
fn saving_into_a_missing_directory_fails_and_creates_nothing() {
    let dir = Scratch::new("nodir");
    let missing = dir.path("not-there");
    let path = missing.join("m.skl");
    let err = model::save(&path, KIND, &small()).unwrap_err();
    match &err {
        ModelError::Io { path: p, .. } => assert_eq!(p, &path.display().to_string()),
        other => panic!("expected Io, got {other:?}"),
    }
    assert!(err.to_string().contains("m.skl"), "{err}");
    assert!(!missing.exists());
    assert!(dir.entries().is_empty());
}

#[test]
fn failed_serialisation_leaves_the_old_file_intact() {
    let (dir, path, before) = saved_small("serfail", "m.skl");

    let err = model::save(&path, KIND, &Unserialisable).unwrap_err();
    // postcard drops custom error messages ("Serde Serialization Error"), so only the variant is
    // checked.
    assert!(matches!(err, ModelError::Encode(_)), "{err}");
    let err = model::save(&path, KIND, &FailsHalfway).unwrap_err();
    assert!(matches!(err, ModelError::Encode(_)), "{err}");
    let err = model::save(&path, "", &small()).unwrap_err();
    assert!(matches!(err, ModelError::Encode(_)), "{err}");

    assert_eq!(fs::read(&path).unwrap(), before);
    assert_eq!(dir.entries(), vec!["m.skl".to_string()]);
    // Nothing is created when there was no file before either.
    let fresh = dir.path("fresh.skl");
    assert!(model::save(&fresh, KIND, &Unserialisable).is_err());
    assert!(!fresh.exists());
    assert_eq!(dir.entries(), vec!["m.skl".to_string()]);
}

#[test]
fn failed_rename_removes_the_temp_file_and_keeps_the_target() {
    // The target is a non-empty directory: the temporary file is written, the rename fails.
    let dir = Scratch::new("renamefail");
    let target = dir.path("occupied");
    fs::create_dir(&target).unwrap();
    fs::write(target.join("keep.txt"), b"keep").unwrap();
    let err = model::save(&target, KIND, &small()).unwrap_err();
    assert!(matches!(err, ModelError::Io { .. }), "{err}");
    assert!(err.to_string().contains("occupied"), "{err}");
    assert_eq!(dir.entries(), vec!["occupied".to_string()]);
    assert_eq!(fs::read(target.join("keep.txt")).unwrap(), b"keep");
}

#[test]
fn relative_paths_without_a_directory_are_saved_in_the_current_directory() {
    // A bare file name has the parent "": the temporary file must go to the current directory
    // (changing the working directory is not safe in a multi-threaded test runner, so the file is
    // written to the current directory and removed at once).
    let name = format!(".sketchlearn-model-files-{}-bare.skl", std::process::id());
    let path = Path::new(&name);
    model::save(path, KIND, &small()).unwrap();
    let back = model::load::<Small>(path, KIND);
    let _ = fs::remove_file(path);
    assert_eq!(back.unwrap(), small());
}

#[test]
fn concurrent_saves_leave_one_complete_model_and_no_temp_files() {
    let dir = Scratch::new("concurrent");
    let path = dir.path("m.skl");
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let path = &path;
            s.spawn(move || {
                for i in 0..10u64 {
                    let mut v = small();
                    v.steps = t * 100 + i;
                    v.w = vec![t as f64; 100 + i as usize];
                    model::save(path, KIND, &v).unwrap();
                    // Every read sees a complete model, old or new.
                    let r: Small = model::load(path, KIND).unwrap();
                    assert!(r.w.iter().all(|&x| x == r.w[0]));
                }
            });
        }
    });
    let last: Small = model::load(&path, KIND).unwrap();
    assert_eq!(last.w.len(), 100 + (last.steps % 100) as usize);
    assert_eq!(dir.entries(), vec!["m.skl".to_string()]);
}

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let r = model::from_bytes::<Learner>(&bytes, KIND, "fuzz");
        prop_assert!(r.is_err());
    }

    #[test]
    fn arbitrary_bytes_after_a_valid_prefix_never_panic(
        tail in proptest::collection::vec(any::<u8>(), 0..256),
    ) {
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        bytes.extend_from_slice(&tail);
        let _ = model::from_bytes::<Learner>(&bytes, KIND, "fuzz");
    }

    #[test]
    fn arbitrary_payloads_in_intact_frames_never_panic(
        payload in proptest::collection::vec(any::<u8>(), 0..512),
    ) {
        let bytes = frame(KIND, &payload);
        match model::from_bytes::<Learner>(&bytes, KIND, "fuzz") {
            Ok(v) => {
                // Whatever decoded must re-encode to the same payload.
                let again = model::to_bytes(KIND, &v).unwrap();
                prop_assert_eq!(&again, &bytes);
            }
            Err(e) => prop_assert!(matches!(e, ModelError::Decode { .. }), "{}", e),
        }
        let _ = model::from_bytes::<Vec<String>>(&bytes, KIND, "fuzz");
        let _ = model::from_bytes::<BTreeMap<u64, Vec<f64>>>(&bytes, KIND, "fuzz");
    }

    #[test]
    fn any_single_byte_change_is_an_error(
        weights in proptest::collection::vec(any::<f64>(), 0..40),
        seen in any::<u64>(),
        pos in any::<prop::sample::Index>(),
        xor in 1u8..=255,
    ) {
        let v = Small { w: weights, steps: seen, tag: Shrink::Exact };
        let mut bytes = model::to_bytes(KIND, &v).unwrap();
        let i = pos.index(bytes.len());
        bytes[i] ^= xor;
        prop_assert!(model::from_bytes::<Small>(&bytes, KIND, "mutated").is_err());
    }
}
