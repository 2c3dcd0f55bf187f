//! Stopping a training run when its caller asks ([`Cancel`]): the run's reader reports the end
//! of the input at the first example read after the request, so the pass ends as an input
//! would — the examples read before are learned whole (a batch already read is learned; a
//! shuffle buffer hands on what it holds), nothing is learned in part — and the run returns
//! the model as of that example with [`TrainOutcome::cancelled`](super::TrainOutcome::cancelled)
//! set, making no further pass and no test evaluation. A run that is not cancelled reads and
//! learns exactly as without the hook (the hook is polled once per example read), so its bits
//! are the same.

use super::train::not_empty;
use super::{Input, RunError};
use crate::cancel::Cancel;
use std::cell::Cell;

/// A run's view of its caller's [`Cancel`] hook, remembering whether it stopped the run.
pub(crate) struct Cancellation<'a> {
    cancel: Cancel<'a>,
    stopped: Cell<bool>,
}

impl<'a> Cancellation<'a> {
    pub(crate) fn new(cancel: Cancel<'a>) -> Self {
        Cancellation {
            cancel,
            stopped: Cell::new(false),
        }
    }

    /// True when the reader must report the end of the input: the caller asked to stop, now or
    /// before.
    #[inline]
    fn stop_reading(&self) -> bool {
        if !self.stopped.get() && self.cancel.requested() {
            self.stopped.set(true);
        }
        self.stopped.get()
    }

    /// Whether the run was stopped.
    pub(crate) fn stopped(&self) -> bool {
        self.stopped.get()
    }

    /// `read()`, or the end of the input (`Ok(false)`) once the caller asked to stop: the
    /// reader a cancellable pass learns from.
    #[inline]
    pub(crate) fn read<E>(&self, read: impl FnOnce() -> Result<bool, E>) -> Result<bool, E> {
        if self.stop_reading() {
            Ok(false)
        } else {
            read()
        }
    }

    /// A run that read no example is an error ([`not_empty`]) unless the caller stopped it.
    pub(crate) fn check_not_empty(&self, examples: u64, input: &Input) -> Result<(), RunError> {
        if self.stopped() {
            Ok(())
        } else {
            not_empty(examples, input)
        }
    }
}
