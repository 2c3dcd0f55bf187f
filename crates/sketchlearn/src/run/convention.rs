//! A binary stream read once shows its label convention (`−1/+1` or `0/1`) at its first
//! negative label ([`ImplicitBinary`]); [`Convention`] tells the observer
//! ([`Observer::classes`]) before the next prediction, so that a front end prints predicted
//! labels in the stream's own convention from then on.

use super::{Observer, ObserverError, RunStart, Warning};
use crate::eval::ProgressRow;
use crate::labels::{Classes, ImplicitBinary};
use std::cell::Cell;

/// The convention last reported, and the classes waiting to be reported.
#[derive(Default)]
pub(crate) struct Seen {
    last: Cell<Option<ImplicitBinary>>,
    pending: Cell<Option<Classes>>,
}

impl Seen {
    /// Records the convention after an example was read.
    pub(crate) fn note(&self, now: ImplicitBinary) {
        if self.last.get() != Some(now) {
            self.last.set(Some(now));
            self.pending.set(Some(now.classes()));
        }
    }
}

/// Forwards every event to `inner`, first reporting a convention that became known.
pub(crate) struct Convention<'a, 'o> {
    pub(crate) inner: &'a mut (dyn Observer + 'o),
    pub(crate) seen: &'a Seen,
}

impl Observer for Convention<'_, '_> {
    fn started(&mut self, start: &RunStart<'_>) -> Result<(), ObserverError> {
        self.inner.started(start)
    }
    fn progress(&mut self, row: &ProgressRow) {
        self.inner.progress(row);
    }
    #[inline]
    fn prediction(&mut self, score: f64) {
        if let Some(c) = self.seen.pending.take() {
            self.inner.classes(&c);
        }
        self.inner.prediction(score);
    }
    fn classes(&mut self, classes: &Classes) {
        self.inner.classes(classes);
    }
    fn warning(&mut self, warning: &Warning) {
        self.inner.warning(warning);
    }
}
