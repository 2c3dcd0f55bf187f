//! Versioned, checksummed, atomically written model files.
//!
//! Every persisted object (a learner, a sketch, a factorisation machine, …) goes through this module:
//! the value is serialised with [`postcard`] (compact, deterministic, bit-exact for `f64`) and wrapped
//! in a small self-describing frame that says *what* the file is (the magic number and a kind tag),
//! *which format* it uses (a version number) and *whether it is intact* (a CRC-32 checksum).
//!
//! # Byte layout
//!
//! All integers are little-endian.
//!
//! | offset        | size        | field                                                           |
//! |---------------|-------------|-----------------------------------------------------------------|
//! | 0             | 8           | magic number [`MAGIC`] = `b"SKLMODEL"`                          |
//! | 8             | 4 (`u32`)   | format version, currently [`FORMAT_VERSION`]                    |
//! | 12            | 2 (`u16`)   | kind tag length `k`, `1 ..= `[`MAX_KIND_LEN`]                   |
//! | 14            | `k`         | kind tag, UTF-8 (e.g. `"learner"`, `"sketch"`)                  |
//! | 14 + k        | 8 (`u64`)   | payload length `n`                                              |
//! | 22 + k        | 4 (`u32`)   | CRC-32 (IEEE, as computed by `crc32fast`) of bytes `0 .. 22 + k` followed by the payload |
//! | 26 + k        | `n`         | payload: the value encoded with `postcard`                      |
//!
//! The file ends exactly after the payload: trailing bytes are an error.
//!
//! # Validation order
//!
//! [`from_bytes`] (and so [`load`] and [`peek_kind`]) checks, in this order, and reports the first
//! failure:
//!
//! 1. the magic number → [`ModelError::NotAModel`] (also for an empty input);
//! 2. the format version → [`ModelError::UnsupportedVersion`] (older and newer versions alike: a
//!    different version may have a different layout, so nothing after it is interpreted; a
//!    newer one says to upgrade). Any change of a payload's layout — a field, an enum variant,
//!    an encoding — comes with a new [`FORMAT_VERSION`], so that older builds refuse the new
//!    files here rather than misreading them or failing in the decoder (the one exception,
//!    the linear models' optional extras trailer, `linear/extras.rs`, is refused by older
//!    builds as bytes left over);
//! 3. the lengths of the kind tag and of the payload against the bytes actually present, then the
//!    checksum → [`ModelError::Corrupted`] (truncation, trailing bytes, bit rot);
//! 4. the kind tag → [`ModelError::WrongKind`];
//! 5. the postcard payload → [`ModelError::Decode`] (the file is intact but does not hold the
//!    requested type, typically because the type changed between library versions).
//!
//! No length read from the input is ever used to allocate or slice before it has been checked against
//! the number of bytes that are really there, so no byte string can make these functions panic or
//! allocate more than a small multiple of the input size.
//!
//! # Atomic writes
//!
//! [`save`] serialises the value completely in memory first, writes it to a temporary file in the
//! target's directory (`.{file name}.tmp.{process id}.{counter}`), flushes it to disk with
//! `sync_all` and renames it over the target. A save that fails at any step removes its temporary
//! file and leaves an existing file at the target untouched: readers see either the old model or the
//! new one, never a mixture.
//!
//! # Caveat: postcard is not self-describing
//!
//! Types stored here must not rely on `deserialize_any`: `#[serde(untagged)]`, `#[serde(flatten)]`
//! and `skip_serializing_if` do not round-trip through postcard. Plain structs, enums, `Vec`s,
//! `Option`s, maps and strings all do.

use std::fs::File;
use std::io::Read;
use std::path::Path;

mod any_model;
pub(crate) mod delta;
pub(crate) mod interleaved;
pub(crate) mod keyed_delta;
mod replacing_file;
pub(crate) mod sparse_vec;
mod summary;
mod summary_text;
pub(crate) mod touched;
mod write;
pub use any_model::AnyModel;
pub use delta::{delta_bytes, from_delta_bytes};
pub use replacing_file::ReplacingFile;
pub(crate) use sparse_vec::decoding_version;
pub use sparse_vec::SPARSE_SINCE;
pub use summary::{Centre, ClassWeights, ModelSummary, Weight};
pub use write::remove_temporary_files;
pub(crate) use write::{sync_dir, temporary_beside, Registered};

use serde::de::DeserializeOwned;
use serde::Serialize;

/// The eight bytes every model file starts with.
pub const MAGIC: [u8; 8] = *b"SKLMODEL";

/// The format version written by [`to_bytes`]/[`save`] and the only one [`from_bytes`]/[`load`]
/// accept ([`from_bytes_with`]/[`load_with`] also hand older readable versions, from
/// [`OLDEST_READABLE_VERSION`], to a decoder that knows their layout). Version 2: linear learners' configurations and intercepts carry the intercept's
/// constant value (`bias_value`), and `Algorithm` has `AdaGradGrid` (the default's AdaGrad member).
/// Version 3: FM files — `FmConfig` has the split SFTRL's settings, `AnyFm` its variant, and the
/// factored FD sketches of SFTRL carry row signs and a compression rule. Version 4: the signed
/// factored FD sketch records when its Gram matrix is next recomputed from its rows.
/// Version 5: a linear learner's configuration has a curvature of 8 kinds and a separate
/// representation (dense, sparse or auto) instead of 12 curvature kinds that mixed both
/// (`LinearModel::load` converts version 4; every other kind's layout is unchanged).
/// Version 6: linear and multiclass models keep the user's classes and a description of their
/// training input (format, index base, hash bits, CSV schema); `LinearModel::load` and
/// `MulticlassModel::load` convert version 5 (FM files are unchanged).
/// Version 7: the per-feature arrays of the first-order learners and wrappers (OGD, AdaGrad,
/// proximal, diagonal adaptation, feature scaling) are stored as their non-zero entries
/// ([`sparse_vec`]), so that a file grows with the features seen, not with the hashed
/// dimension; version 6 and older are read through the same types (the decoder is told the
/// payload's version).
/// Version 8: the default's unit scaling (`linear/unit_scaling.rs`) keeps each feature's
/// largest absolute value and how many entries were measurements'; version 7 files load with
/// the maximum unknown (`+∞`), which keeps their features' maps as version 7 computed them.
/// Version 9 (issue 26): marks two layouts that came in under version 8 — the softmax
/// learner's row-scaled wrapper (`AnyMulticlass::RowScaled`, a new enum variant) and
/// `ProximalOgd`'s `(D, C)` pairs written for its stored weights only
/// (`linear/proximal/ogd_state.rs`) — so that a build of version 8 refuses a new file as
/// [`ModelError::UnsupportedVersion`] ("written by a newer sketchlearn") instead of failing
/// to decode it. Every other payload is the same as version 8's; a version-8 file loads as
/// before (a `ProximalOgd` of version 8 may hold either pair layout; from 9 only the shorter).
/// Version 10: the default classifier's mixture (`AdaHedgeCalibrated`) saves whether it
/// predicts with its members' calibrated probabilities (`linear/mixture_wire.rs`); a file of an
/// earlier version loads with the raw prediction it was written with. Every other payload is
/// the same as version 9's.
/// Version 11 (stop 59): the learner configuration's algorithm has a new variant,
/// `auto-very-sparse` (`linear/data_sparsity.rs`), so that a build of version 10 refuses a
/// file that may hold it as [`ModelError::UnsupportedVersion`] instead of failing to decode
/// it. Every payload is laid out as version 10's; a version-10 file loads as before.
pub const FORMAT_VERSION: u32 = 11;

/// The oldest format version that [`from_bytes_with`]/[`load_with`] hand to their decoder
/// (older ones are [`ModelError::UnsupportedVersion`]).
pub const OLDEST_READABLE_VERSION: u32 = 4;

/// The maximum length of a kind tag in bytes (UTF-8).
pub const MAX_KIND_LEN: usize = 64;

/// Size of the fixed part of the header that precedes the kind tag: magic, version, tag length.
const PREFIX_LEN: usize = 8 + 4 + 2;
/// Size of the fixed part of the header that follows the kind tag: payload length, checksum.
const SUFFIX_LEN: usize = 8 + 4;

/// Why a model could not be written, read or decoded.
///
/// Every variant that concerns a file names it (`path`; for [`from_bytes`] this is the caller's
/// `source_name`).
///
/// ```
/// use sketchlearn::model::{self, ModelError};
///
/// let err = model::from_bytes::<u32>(b"1 3:0.5 7:1\n", "learner", "train.svm").unwrap_err();
/// assert!(matches!(err, ModelError::NotAModel { .. }));
/// assert_eq!(
///     err.to_string(),
///     "train.svm: not a sketchlearn model file (bad magic number)"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The file could not be read, created, written, synced or renamed.
    #[error("I/O error on {path}: {message}")]
    Io {
        /// The model file concerned.
        path: String,
        /// What failed and the operating system's explanation.
        message: String,
    },
    /// The input does not start with [`MAGIC`]: it is not a model file at all.
    #[error("{path}: not a sketchlearn model file (bad magic number)")]
    NotAModel {
        /// The input concerned.
        path: String,
    },
    /// The input is a model file of a format version this build does not read: newer than
    /// [`FORMAT_VERSION`] (the message says to upgrade), or older than the oldest its reader
    /// converts.
    ///
    /// ```
    /// use sketchlearn::model::ModelError;
    /// let err = ModelError::UnsupportedVersion { path: "m.model".into(), found: 12, oldest: 4, supported: 9 };
    /// assert_eq!(
    ///     err.to_string(),
    ///     "m.model: model file format version 12 is not supported: this build reads versions \
    ///      4 to 9; the file was written by a newer sketchlearn, upgrade sketchlearn to read it"
    /// );
    /// ```
    #[error(
        "{path}: model file format version {found} is not supported: this build reads {}; {}",
        readable_versions(*.oldest, *.supported),
        version_advice(*.found, *.supported)
    )]
    UnsupportedVersion {
        /// The input concerned.
        path: String,
        /// The version stored in the file.
        found: u32,
        /// The oldest version this reader reads (as [`OLDEST_READABLE_VERSION`], or
        /// [`FORMAT_VERSION`] for [`from_bytes`], or a later one for a kind whose old files
        /// cannot be converted).
        oldest: u32,
        /// The newest version this build reads ([`FORMAT_VERSION`]).
        supported: u32,
    },
    /// The input is damaged: truncated, with trailing bytes, an impossible length field or a
    /// checksum mismatch.
    #[error("{path}: corrupted model file: {reason}")]
    Corrupted {
        /// The input concerned.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// The input is an intact model file, but of another kind than the one asked for.
    #[error("{path}: expected a \"{expected}\" model file, but it holds a \"{found}\"")]
    WrongKind {
        /// The input concerned.
        path: String,
        /// The kind tag the caller asked for.
        expected: String,
        /// The kind tag stored in the file.
        found: String,
    },
    /// The checksum matched but the payload does not decode as the requested type (usually a file
    /// written by a library version whose types differ).
    #[error("{path}: cannot decode the model payload: {message}")]
    Decode {
        /// The input concerned.
        path: String,
        /// postcard's explanation.
        message: String,
    },
    /// The payload decoded, but its contents are not a valid model (e.g. a configuration that
    /// does not pass its checks).
    #[error("{path}: invalid model: {reason}")]
    Invalid {
        /// The input concerned.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// The value could not be serialised, or the kind tag is invalid.
    #[error("cannot encode model: {0}")]
    Encode(String),
}

/// "version 9" or "versions 4 to 9".
fn readable_versions(oldest: u32, supported: u32) -> String {
    if oldest >= supported {
        format!("version {supported}")
    } else {
        format!("versions {oldest} to {supported}")
    }
}

/// Who wrote a file of an unsupported version, and what to do about it.
fn version_advice(found: u32, supported: u32) -> &'static str {
    if found > supported {
        "the file was written by a newer sketchlearn, upgrade sketchlearn to read it"
    } else {
        "the file was written by an older sketchlearn whose files this build no longer \
         converts, train the model again"
    }
}

fn corrupted(path: &str, reason: impl Into<String>) -> ModelError {
    ModelError::Corrupted {
        path: path.to_owned(),
        reason: reason.into(),
    }
}

fn io_error(path: &Path, what: &str, err: &std::io::Error) -> ModelError {
    ModelError::Io {
        path: path.display().to_string(),
        message: format!("{what}: {err}"),
    }
}

/// Serialises `value` into a complete model file image with the kind tag `kind`.
///
/// `kind` must be 1 to [`MAX_KIND_LEN`] bytes long; otherwise, or when `value`'s `Serialize`
/// implementation fails, the result is [`ModelError::Encode`].
///
/// ```
/// use sketchlearn::model;
///
/// let bytes = model::to_bytes("weights", &vec![1.0_f64, -0.5]).unwrap();
/// assert_eq!(&bytes[..8], b"SKLMODEL");
/// assert_eq!(&bytes[8..12], &model::FORMAT_VERSION.to_le_bytes());
/// let back: Vec<f64> = model::from_bytes(&bytes, "weights", "memory").unwrap();
/// assert_eq!(back, vec![1.0, -0.5]);
/// ```
pub fn to_bytes<T: Serialize + ?Sized>(kind: &str, value: &T) -> Result<Vec<u8>, ModelError> {
    write::image(kind, value)
}

/// A validated frame: header checked, lengths consistent, checksum matching.
struct Frame<'a> {
    version: u32,
    kind: &'a str,
    payload: &'a [u8],
}

/// Reads `N` bytes at `*pos`, advancing it; `None` when fewer than `N` remain.
fn take<const N: usize>(bytes: &[u8], pos: &mut usize) -> Option<[u8; N]> {
    let end = pos.checked_add(N)?;
    let chunk: [u8; N] = bytes.get(*pos..end)?.try_into().ok()?;
    *pos = end;
    Some(chunk)
}

/// Checks the magic number of the first (up to) eight bytes of an input.
fn check_magic(head: &[u8], path: &str) -> Result<(), ModelError> {
    if head.len() >= MAGIC.len() {
        if head[..MAGIC.len()] == MAGIC {
            return Ok(());
        }
    } else if !head.is_empty() && MAGIC.starts_with(head) {
        return Err(corrupted(
            path,
            format!(
                "truncated after {} bytes, inside the magic number",
                head.len()
            ),
        ));
    }
    Err(ModelError::NotAModel {
        path: path.to_owned(),
    })
}

/// Validates everything but the kind tag's value and the payload's content; the format version
/// must be in `versions`.
fn parse_frame<'a>(
    bytes: &'a [u8],
    path: &str,
    versions: std::ops::RangeInclusive<u32>,
) -> Result<Frame<'a>, ModelError> {
    check_magic(bytes, path)?;
    let mut pos = MAGIC.len();
    let truncated = |what: &str| {
        corrupted(
            path,
            format!(
                "truncated: the file ends ({} bytes) inside the {what}",
                bytes.len()
            ),
        )
    };

    let version =
        u32::from_le_bytes(take(bytes, &mut pos).ok_or_else(|| truncated("format version"))?);
    if !versions.contains(&version) {
        return Err(ModelError::UnsupportedVersion {
            path: path.to_owned(),
            found: version,
            oldest: *versions.start(),
            supported: *versions.end(),
        });
    }

    let kind_len = usize::from(u16::from_le_bytes(
        take(bytes, &mut pos).ok_or_else(|| truncated("kind tag length"))?,
    ));
    if kind_len == 0 || kind_len > MAX_KIND_LEN {
        return Err(corrupted(
            path,
            format!("kind tag length {kind_len} is outside 1..={MAX_KIND_LEN}"),
        ));
    }
    let kind_start = pos;
    let kind_end = kind_start + kind_len;
    if kind_end > bytes.len() {
        return Err(truncated("kind tag"));
    }
    pos = kind_end;

    let payload_len =
        u64::from_le_bytes(take(bytes, &mut pos).ok_or_else(|| truncated("payload length"))?);
    let checksum_start = pos;
    let stored_crc =
        u32::from_le_bytes(take(bytes, &mut pos).ok_or_else(|| truncated("checksum"))?);

    let remaining = bytes.len() - pos;
    // Compare in u64: the stored length may exceed usize on 32-bit targets.
    match payload_len.cmp(&(remaining as u64)) {
        std::cmp::Ordering::Greater => {
            return Err(corrupted(
                path,
                format!("truncated: the header announces a payload of {payload_len} bytes, only {remaining} are present"),
            ))
        }
        std::cmp::Ordering::Less => {
            return Err(corrupted(
                path,
                format!(
                    "{} trailing bytes after the {payload_len}-byte payload",
                    remaining as u64 - payload_len
                ),
            ))
        }
        std::cmp::Ordering::Equal => {}
    }
    let payload = &bytes[pos..];

    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&bytes[..checksum_start]);
    hasher.update(payload);
    let actual_crc = hasher.finalize();
    if actual_crc != stored_crc {
        return Err(corrupted(
            path,
            format!("checksum mismatch (stored {stored_crc:#010x}, computed {actual_crc:#010x})"),
        ));
    }

    let kind = std::str::from_utf8(&bytes[kind_start..kind_end])
        .map_err(|_| corrupted(path, "the kind tag is not valid UTF-8"))?;
    Ok(Frame {
        version,
        kind,
        payload,
    })
}

/// Validates a model file image and decodes its payload as a `T`.
///
/// `expected_kind` must equal the kind tag stored by [`to_bytes`]; `source_name` names the input in
/// error messages (a path, `"stdin"`, …). See the [module documentation](self) for the checks and the
/// error each one produces. Never panics, whatever `bytes` holds.
///
/// ```
/// use sketchlearn::model::{self, ModelError};
///
/// let bytes = model::to_bytes("sketch", &(3_u64, "fd".to_string())).unwrap();
/// let (rows, name): (u64, String) = model::from_bytes(&bytes, "sketch", "memory").unwrap();
/// assert_eq!((rows, name.as_str()), (3, "fd"));
///
/// let err = model::from_bytes::<(u64, String)>(&bytes, "learner", "memory").unwrap_err();
/// assert!(matches!(err, ModelError::WrongKind { .. }));
///
/// let mut damaged = bytes.clone();
/// *damaged.last_mut().unwrap() ^= 1;
/// let err = model::from_bytes::<(u64, String)>(&damaged, "sketch", "memory").unwrap_err();
/// assert!(matches!(err, ModelError::Corrupted { .. }));
/// ```
pub fn from_bytes<T: DeserializeOwned>(
    bytes: &[u8],
    expected_kind: &str,
    source_name: &str,
) -> Result<T, ModelError> {
    let frame = parse_frame(bytes, source_name, FORMAT_VERSION..=FORMAT_VERSION)?;
    check_kind(&frame, expected_kind, source_name)?;
    decode_payload(frame.payload, source_name)
}

fn check_kind(frame: &Frame<'_>, expected_kind: &str, source_name: &str) -> Result<(), ModelError> {
    if frame.kind != expected_kind {
        return Err(ModelError::WrongKind {
            path: source_name.to_owned(),
            expected: expected_kind.to_owned(),
            found: frame.kind.to_owned(),
        });
    }
    Ok(())
}

/// Decodes a postcard payload as a `T` (for the decoders of [`from_bytes_with`]); bytes left
/// over are an error.
pub fn decode_payload<T: DeserializeOwned>(
    payload: &[u8],
    source_name: &str,
) -> Result<T, ModelError> {
    let (value, rest) =
        postcard::take_from_bytes::<T>(payload).map_err(|e| ModelError::Decode {
            path: source_name.to_owned(),
            message: e.to_string(),
        })?;
    if !rest.is_empty() {
        return Err(ModelError::Decode {
            path: source_name.to_owned(),
            message: format!(
                "{} bytes of the payload are left over after decoding the value",
                rest.len()
            ),
        });
    }
    Ok(value)
}

/// [`from_bytes`] for a type whose layout changed between format versions: a frame of any
/// version from [`OLDEST_READABLE_VERSION`] to [`FORMAT_VERSION`] is validated as usual, then
/// `decode(version, payload, source_name)` decodes its payload (typically with
/// [`decode_payload`] into the type of that version, then converts).
///
/// ```
/// use sketchlearn::model::{self, ModelError};
/// let bytes = model::to_bytes("counter", &3_u32).unwrap();
/// let n = model::from_bytes_with(&bytes, "counter", "memory", |version, payload, name| {
///     assert_eq!(version, model::FORMAT_VERSION);
///     model::decode_payload::<u32>(payload, name)
/// })
/// .unwrap();
/// assert_eq!(n, 3);
/// ```
pub fn from_bytes_with<T>(
    bytes: &[u8],
    expected_kind: &str,
    source_name: &str,
    decode: impl FnOnce(u32, &[u8], &str) -> Result<T, ModelError>,
) -> Result<T, ModelError> {
    let frame = parse_frame(bytes, source_name, OLDEST_READABLE_VERSION..=FORMAT_VERSION)?;
    check_kind(&frame, expected_kind, source_name)?;
    let _scope = sparse_vec::VersionScope::new(frame.version);
    decode(frame.version, frame.payload, source_name)
}

/// Reads a whole file, refusing early (after eight bytes) when it does not start with [`MAGIC`], so
/// that passing a large data file by mistake does not read it all.
fn read_model_file(path: &Path) -> Result<Vec<u8>, ModelError> {
    let name = path.display().to_string();
    let mut file = File::open(path).map_err(|e| io_error(path, "cannot open for reading", &e))?;
    let mut bytes = Vec::new();
    (&mut file)
        .take(MAGIC.len() as u64)
        .read_to_end(&mut bytes)
        .map_err(|e| io_error(path, "cannot read", &e))?;
    check_magic(&bytes, &name)?;
    file.read_to_end(&mut bytes)
        .map_err(|e| io_error(path, "cannot read", &e))?;
    Ok(bytes)
}

/// Reads the model file at `path` and decodes it as a `T` of kind `expected_kind`.
///
/// Errors are those of [`from_bytes`] (with the path as the name), plus [`ModelError::Io`] when the
/// file cannot be read.
///
/// ```
/// use sketchlearn::model::{self, ModelError};
///
/// let dir = std::env::temp_dir().join(format!("sketchlearn-doc-load-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("weights.skl");
/// model::save(&path, "weights", &vec![0.25_f64, -1.0]).unwrap();
/// let w: Vec<f64> = model::load(&path, "weights").unwrap();
/// assert_eq!(w, vec![0.25, -1.0]);
///
/// let missing = dir.join("missing.skl");
/// let err = model::load::<Vec<f64>>(&missing, "weights").unwrap_err();
/// assert!(matches!(err, ModelError::Io { .. }));
/// assert!(err.to_string().contains("missing.skl"));
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn load<T: DeserializeOwned>(
    path: impl AsRef<Path>,
    expected_kind: &str,
) -> Result<T, ModelError> {
    let path = path.as_ref();
    let bytes = read_model_file(path)?;
    from_bytes(&bytes, expected_kind, &path.display().to_string())
}

/// [`load`] through a version-aware decoder, as [`from_bytes_with`].
pub fn load_with<T>(
    path: impl AsRef<Path>,
    expected_kind: &str,
    decode: impl FnOnce(u32, &[u8], &str) -> Result<T, ModelError>,
) -> Result<T, ModelError> {
    let path = path.as_ref();
    let bytes = read_model_file(path)?;
    from_bytes_with(&bytes, expected_kind, &path.display().to_string(), decode)
}

/// Reads the model file at `path`, validates its header and checksum, and returns its kind tag
/// without decoding the payload (any readable version, [`OLDEST_READABLE_VERSION`] to
/// [`FORMAT_VERSION`]).
///
/// Useful to dispatch on what a file holds (`"learner"`, `"sketch"`, …) before choosing the type to
/// [`load`] it as.
///
/// ```
/// use sketchlearn::model;
///
/// let dir = std::env::temp_dir().join(format!("sketchlearn-doc-peek-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("s.skl");
/// model::save(&path, "sketch", &[1.0_f64, 2.0, 3.0]).unwrap();
/// assert_eq!(model::peek_kind(&path).unwrap(), "sketch");
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn peek_kind(path: impl AsRef<Path>) -> Result<String, ModelError> {
    let path = path.as_ref();
    let bytes = read_model_file(path)?;
    let frame = parse_frame(
        &bytes,
        &path.display().to_string(),
        OLDEST_READABLE_VERSION..=FORMAT_VERSION,
    )?;
    Ok(frame.kind.to_owned())
}

/// The model file at `path` read once: its bytes, its kind tag (checked as [`peek_kind`] checks
/// it) and its name for errors — for a caller that dispatches on the kind and then decodes the
/// same bytes (`from_bytes` of the chosen type) instead of reading the file again.
pub(crate) fn read_with_kind(path: &Path) -> Result<(Vec<u8>, String, String), ModelError> {
    let bytes = read_model_file(path)?;
    let name = path.display().to_string();
    let kind = parse_frame(&bytes, &name, OLDEST_READABLE_VERSION..=FORMAT_VERSION)?
        .kind
        .to_owned();
    Ok((bytes, kind, name))
}

/// Serialises `value` with the kind tag `kind` and writes it atomically to `path`.
///
/// The value is streamed to a temporary file in the same directory (no second copy in memory),
/// which is synced and renamed over `path`; on any failure ([`ModelError::Encode`],
/// [`ModelError::Io`]: a full disk, a file-size limit) the temporary file is removed and an
/// existing file at `path` keeps its old content. The directory must exist: it is not created.
///
/// ```
/// use sketchlearn::model;
///
/// let dir = std::env::temp_dir().join(format!("sketchlearn-doc-save-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("model.skl");
/// model::save(&path, "learner", &1_u64).unwrap();
/// model::save(&path, "learner", &2_u64).unwrap(); // replaces the first one
/// assert_eq!(model::load::<u64>(&path, "learner").unwrap(), 2);
/// assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1); // no temporary file left behind
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn save<T: Serialize + ?Sized>(
    path: impl AsRef<Path>,
    kind: &str,
    value: &T,
) -> Result<(), ModelError> {
    write::save(path.as_ref(), kind, value)
}
