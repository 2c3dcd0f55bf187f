//! Ctrl-C in long Rust computations: a [`sketchlearn::cancel::Cancel`] hook that, while the GIL
//! is released, re-acquires it at most every [`INTERVAL`] to run Python's signal handlers
//! (`PyErr_CheckSignals`). When a handler raises (`KeyboardInterrupt` for SIGINT), the hook
//! keeps the exception and answers `true` from then on; the core stops at its next checkpoint
//! and the caller re-raises the exception with [`Interrupt::check`] or [`Interrupt::raise_or`].
//! Row loops poll through [`Interrupt::due`], every [`POLL_ROWS`] rows.

use pyo3::prelude::*;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The longest time between two signal checks.
pub const INTERVAL: Duration = Duration::from_millis(100);

/// Rows between two polls in a row loop (a poll costs a lock and a clock read).
pub const POLL_ROWS: usize = 16;

/// The signal check of one call (create it, pass [`Interrupt::poll`] to the core as its hook).
pub struct Interrupt {
    state: Mutex<(Instant, Option<PyErr>)>,
}

impl Interrupt {
    pub fn new() -> Self {
        Interrupt {
            state: Mutex::new((Instant::now(), None)),
        }
    }

    /// True once a signal handler raised; checks the signals when [`INTERVAL`] has passed.
    pub fn poll(&self) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.1.is_some() {
            return true;
        }
        if state.0.elapsed() < INTERVAL {
            return false;
        }
        state.0 = Instant::now();
        if let Err(e) = Python::attach(|py| py.check_signals()) {
            state.1 = Some(e);
            return true;
        }
        false
    }

    /// [`Interrupt::poll`] at every [`POLL_ROWS`]-th row `i` (a row loop stops before row
    /// `i` when it is true, so its learner has learned whole rows only).
    #[inline]
    pub fn due(&self, i: usize) -> bool {
        i % POLL_ROWS == 0 && self.poll()
    }

    /// The exception a signal handler raised, if any; otherwise `other`.
    pub fn raise_or(self, other: PyErr) -> PyErr {
        self.take().unwrap_or(other)
    }

    /// `Err` with the exception a signal handler raised, if any.
    pub fn check(self) -> PyResult<()> {
        self.take().map_or(Ok(()), Err)
    }

    fn take(self) -> Option<PyErr> {
        self.state.into_inner().unwrap_or_else(|e| e.into_inner()).1
    }
}
