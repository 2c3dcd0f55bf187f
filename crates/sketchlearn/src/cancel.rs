//! Cooperative cancellation of long computations: a hook that the caller supplies and the
//! computation polls at points where stopping leaves nothing half-written (each Newton
//! iteration, each block of columns of a projection, each iteration of DRP's Algorithm 2).
//!
//! The library itself never interrupts anything: [`Cancel::never`] is the default of every
//! entry point. A front end supplies the hook — the Python package's hook re-acquires the GIL
//! at most every 0.1 s and asks `PyErr_CheckSignals` whether Ctrl-C was pressed, so the core
//! knows nothing of Python. A hook may be called often: make it cheap (rate-limit it by time)
//! and make it return `true` for every call after the first `true`.

use std::fmt;

/// A cancellation hook: `requested()` is true once the caller wants the computation stopped.
/// Copy it freely; it borrows the caller's closure.
///
/// ```
/// use sketchlearn::cancel::{Cancel, Cancelled};
/// use std::sync::atomic::{AtomicBool, Ordering};
/// let stop = AtomicBool::new(false);
/// let poll = || stop.load(Ordering::Relaxed);
/// let cancel = Cancel::new(&poll);
/// assert_eq!(cancel.check(), Ok(()));
/// stop.store(true, Ordering::Relaxed);
/// assert_eq!(cancel.check(), Err(Cancelled));
/// assert!(!Cancel::never().requested());
/// ```
#[derive(Clone, Copy, Default)]
pub struct Cancel<'a> {
    hook: Option<&'a (dyn Fn() -> bool + Sync)>,
}

impl<'a> Cancel<'a> {
    /// A hook that never cancels (what the library's plain entry points use).
    pub fn never() -> Self {
        Cancel { hook: None }
    }

    /// Polls `hook` (true = stop).
    pub fn new(hook: &'a (dyn Fn() -> bool + Sync)) -> Self {
        Cancel { hook: Some(hook) }
    }

    /// Whether this hook can never ask to stop ([`never`](Self::never)).
    pub fn is_never(&self) -> bool {
        self.hook.is_none()
    }

    /// Whether the caller asked to stop.
    #[inline]
    pub fn requested(&self) -> bool {
        self.hook.is_some_and(|h| h())
    }

    /// `Err(Cancelled)` when the caller asked to stop.
    #[inline]
    pub fn check(&self) -> Result<(), Cancelled> {
        if self.requested() {
            Err(Cancelled)
        } else {
            Ok(())
        }
    }
}

impl fmt::Debug for Cancel<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.hook.is_some() {
            "Cancel(hook)"
        } else {
            "Cancel(never)"
        })
    }
}

/// The computation stopped because its [`Cancel`] hook asked it to; its result was discarded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cancelled by the caller")]
pub struct Cancelled;
