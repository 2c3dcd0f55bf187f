//! A model's *delta* against a base it grew from: model bytes that hold, of each large
//! per-feature store, only the entries that differ from the base's, and from which the model is
//! rebuilt exactly (bit for bit) given the same base. Distributed training sends these
//! (`sketchlearn.dask`): a task learns a block starting from the round's broadcast state `G` and
//! returns its state's delta against `G`, which every worker holds; the round's merge is then
//! computed on the rebuilt states — the same inputs, so the same merge.
//!
//! # How
//!
//! The large stores are the sparse-time learners' column stores (`m + 2` numbers per touched
//! feature, `linear/sparse/columns.rs`) and unit scaling's per-feature moments
//! (`linear/unit_scaling.rs`); every other field is small and goes in whole. Each store takes
//! part through its own serde code, which asks this module what to do ([`mode`]):
//!
//! 1. **Record.** The base is serialised once with its stores *recording* a snapshot of
//!    themselves ([`record`]: the entries a file would hold) and writing nothing; the small fields
//!    go into a checksum, the base's fingerprint.
//! 2. **Diff.** The model is serialised with each store taking the next snapshot
//!    ([`next_base`], in serialisation order: the model and its base have the same structure) and
//!    writing only its entries that are new or differ bitwise from the snapshot's (and the keys it
//!    no longer has). The per-feature arrays and the unit scaling's moments are streamed from the
//!    store ([`super::keyed_delta`]: no list of the store's entries or of its changes in between).
//! 3. **Patch.** On the receiving side the base is recorded again, and the delta is decoded with
//!    each store taking the next snapshot and filling in the entries the delta does not hold from
//!    it (the arrays and moments straight into the rebuilt store); the rebuilt store then goes
//!    through the same checks as one read from a file.
//!
//! The delta's payload starts with the base's fingerprint (length and CRC-32 of its small
//! fields, and a digest of its stores' keys and values): a delta applied to another base is
//! refused. Deltas are not model files: they are
//! for one process to hand a state to another that holds the base.
//!
//! A store changes only in the entries of the features learned on since the base (a sparse
//! column is rewritten when touched, a feature's moments when it is seen), so a task's delta
//! costs the features of its block, not all the features the model has seen.

use super::{from_bytes, write, ModelError};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::any::Any;
use std::cell::RefCell;
use std::collections::VecDeque;

/// What the large stores do when (de)serialised on this thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Ordinary model bytes.
    Whole,
    /// Push a snapshot with [`record`] and write nothing.
    Record,
    /// Write the entries that differ from [`next_base`].
    Diff,
    /// Read the entries that differ and take the others from [`next_base`].
    Patch,
}

struct State {
    mode: Mode,
    snapshots: VecDeque<Box<dyn Any>>,
    /// A digest of the recorded snapshots' contents (part of the base's fingerprint).
    digest: u64,
}

thread_local! {
    static STATE: RefCell<Option<State>> = const { RefCell::new(None) };
}

/// What the large stores do on this thread now.
pub(crate) fn mode() -> Mode {
    STATE.with(|s| s.borrow().as_ref().map_or(Mode::Whole, |s| s.mode))
}

/// A digest of `words` (a store's keys and values' bits): a multiply–rotate mix, a few cycles
/// per word (not cryptographic: it tells bases apart, it does not resist forgery).
pub(crate) fn digest(words: impl IntoIterator<Item = u64>) -> u64 {
    words.into_iter().fold(0, |h, w| {
        (h ^ w).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29)
    })
}

/// Keeps a store's snapshot (in [`Mode::Record`]); its [`digest`] goes into the base's
/// fingerprint, so that a delta applied to a base whose stores differ is refused.
pub(crate) fn record<T: Any>(snapshot: T, digest: u64) {
    STATE.with(|s| {
        if let Some(s) = s.borrow_mut().as_mut() {
            s.snapshots.push_back(Box::new(snapshot));
            s.digest = self::digest([s.digest, digest]);
        }
    });
}

/// The base's snapshot of the next store (in [`Mode::Diff`] and [`Mode::Patch`]); an error
/// message when the base has no store of this type there (another structure).
pub(crate) fn next_base<T: Any>() -> Result<T, &'static str> {
    let next = STATE.with(|s| {
        s.borrow_mut()
            .as_mut()
            .and_then(|s| s.snapshots.pop_front())
    });
    next.ok_or(NOT_ITS_BASE)?
        .downcast::<T>()
        .map(|b| *b)
        .map_err(|_| NOT_ITS_BASE)
}

/// The error of a store whose base does not match.
pub(crate) const NOT_ITS_BASE: &str = "the delta does not fit this base (another model)";

/// Sets this thread's mode while alive (and the snapshots), restoring the previous on drop, so
/// that an error or panic inside a pass leaves the thread in [`Mode::Whole`].
struct Scope(Option<State>);

impl Scope {
    fn new(mode: Mode, snapshots: VecDeque<Box<dyn Any>>) -> Self {
        let state = State {
            mode,
            snapshots,
            digest: 0,
        };
        Scope(STATE.with(|s| s.replace(Some(state))))
    }

    /// The snapshots recorded or left over, and the digest of those recorded.
    fn snapshots(&self) -> (VecDeque<Box<dyn Any>>, u64) {
        STATE.with(|s| {
            s.borrow_mut()
                .as_mut()
                .map(|s| (std::mem::take(&mut s.snapshots), s.digest))
                .unwrap_or_default()
        })
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        STATE.with(|s| *s.borrow_mut() = self.0.take());
    }
}

/// Counts and checksums the small fields (the record pass's output).
#[derive(Default)]
struct Fingerprint {
    len: u64,
    crc: crc32fast::Hasher,
}

impl std::io::Write for Fingerprint {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.len += buf.len() as u64;
        self.crc.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A base's fingerprint: the length and CRC-32 of its small fields, and the digest of its
/// stores.
type Print = (u64, u32, u64);

/// The base's fingerprint and its stores' snapshots.
fn record_base<T: Serialize + ?Sized>(
    base: &T,
) -> Result<(Print, VecDeque<Box<dyn Any>>), ModelError> {
    let scope = Scope::new(Mode::Record, VecDeque::new());
    let f = postcard::to_io(base, Fingerprint::default())
        .map_err(|e| ModelError::Encode(e.to_string()))?;
    let (snapshots, digest) = scope.snapshots();
    Ok(((f.len, f.crc.finalize(), digest), snapshots))
}

/// The payload of a delta: the base's fingerprint, then the model with its stores as deltas.
#[derive(Serialize)]
struct Out<'a, T: ?Sized> {
    base: Print,
    value: &'a T,
}

#[derive(serde::Deserialize)]
struct In<T> {
    base: Print,
    value: T,
}

/// The bytes of `value`'s delta against `base` (which `value` grew from), framed as a model of
/// kind `kind` (checksummed; `kind` names what the bytes are, e.g. `linear-learner-delta`).
///
/// ```
/// use sketchlearn::linear::{LearnerConfig, LinearModel, OnlineLearner};
/// use sketchlearn::model::{delta_bytes, from_delta_bytes};
/// use sketchlearn::Row;
/// let config = LearnerConfig::default();
/// let base = LinearModel::new(config.clone(), config.build(3).unwrap());
/// let mut grown = base.clone();
/// grown.learner.learn(Row::Dense(&[1.0, 0.0, 2.0]), 1.0, 1.0).unwrap();
/// let delta = delta_bytes("linear-learner-delta", &grown, &base).unwrap();
/// let back: LinearModel = from_delta_bytes(&delta, "linear-learner-delta", &base, "memory").unwrap();
/// let bytes = |m: &LinearModel| sketchlearn::model::to_bytes("linear-learner", m).unwrap();
/// assert_eq!(bytes(&back), bytes(&grown));
/// ```
pub fn delta_bytes<T: Serialize + ?Sized>(
    kind: &str,
    value: &T,
    base: &T,
) -> Result<Vec<u8>, ModelError> {
    let (fingerprint, snapshots) = record_base(base)?;
    let scope = Scope::new(Mode::Diff, snapshots);
    let out = write::image(
        kind,
        &Out {
            base: fingerprint,
            value,
        },
    )?;
    if !scope.snapshots().0.is_empty() {
        return Err(ModelError::Encode(NOT_ITS_BASE.into()));
    }
    Ok(out)
}

/// The model back from its [`delta_bytes`] against the same `base`; `source_name` names the
/// bytes in errors. A delta made against another base is an error ([`ModelError::Decode`]).
pub fn from_delta_bytes<T: Serialize + DeserializeOwned>(
    bytes: &[u8],
    kind: &str,
    base: &T,
    source_name: &str,
) -> Result<T, ModelError> {
    let (fingerprint, snapshots) = record_base(base)?;
    let scope = Scope::new(Mode::Patch, snapshots);
    let wrong = || ModelError::Decode {
        path: source_name.to_owned(),
        message: NOT_ITS_BASE.into(),
    };
    let got: In<T> = from_bytes(bytes, kind, source_name).map_err(|e| match e {
        ModelError::Decode { path, message } => ModelError::Decode {
            path,
            message: format!("{NOT_ITS_BASE}, or damaged: {message}"),
        },
        e => e,
    })?;
    if got.base != fingerprint || !scope.snapshots().0.is_empty() {
        return Err(wrong());
    }
    Ok(got.value)
}
