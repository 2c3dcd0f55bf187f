//! A binary stream read once (whose classes could not be scanned: `--dim` given, or VW input)
//! shows its label convention (`−1/+1` or `0/1`) at its first negative label
//! ([`ImplicitBinary`]); [`Convention`] tells the observer ([`Observer::classes`]) before the
//! predictions that follow, so that a front end prints predicted labels in the stream's own
//! convention.
//!
//! While every label read is `1` the convention is open, so the predictions are held back (at
//! most [`HOLD_LIMIT`]) and handed on once it is settled: every prediction is then in the
//! user's convention from the first line. A stream whose first [`HOLD_LIMIT`] examples are all
//! positive, or that has no negative label at all, gets `−1/+1` for those.

use super::{Observer, ObserverError, RunStart, Warning};
use crate::eval::ProgressRow;
use crate::labels::{Classes, ImplicitBinary};
use std::cell::Cell;

/// The most predictions held back while the convention is open (8 bytes each).
pub(crate) const HOLD_LIMIT: usize = 1 << 16;

/// The convention last reported, the classes waiting to be reported, and whether the
/// convention is still open (only positive labels so far).
#[derive(Default)]
pub(crate) struct Seen {
    last: Cell<Option<ImplicitBinary>>,
    pending: Cell<Option<Classes>>,
    open: Cell<bool>,
}

impl Seen {
    /// Records the convention after an example was read.
    pub(crate) fn note(&self, now: ImplicitBinary) {
        if self.last.get() != Some(now) {
            self.last.set(Some(now));
            self.pending.set(Some(now.classes()));
            self.open.set(now == ImplicitBinary::default());
        }
    }
}

/// Forwards every event to `inner`, first reporting a convention that became known, and holds
/// the predictions back while it is open (see the [module](self) documentation). Dropping it
/// hands on what it holds.
pub(crate) struct Convention<'a, 'o> {
    pub(crate) inner: &'a mut (dyn Observer + 'o),
    pub(crate) seen: &'a Seen,
    pub(crate) held: Vec<f64>,
}

impl<'a, 'o> Convention<'a, 'o> {
    /// Watches the run's events for `inner`.
    pub(crate) fn new(inner: &'a mut (dyn Observer + 'o), seen: &'a Seen) -> Self {
        Convention {
            inner,
            seen,
            held: Vec::new(),
        }
    }

    /// Reports the pending classes, then the predictions held back.
    fn release(&mut self) {
        if let Some(c) = self.seen.pending.take() {
            self.inner.classes(&c);
        }
        for score in self.held.drain(..) {
            self.inner.prediction(score);
        }
    }
}

impl Drop for Convention<'_, '_> {
    fn drop(&mut self) {
        self.release();
    }
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
        if self.seen.open.get() && self.held.len() < HOLD_LIMIT {
            self.held.push(score);
            return;
        }
        self.release();
        self.inner.prediction(score);
    }
    fn classes(&mut self, classes: &Classes) {
        self.inner.classes(classes);
    }
    fn warning(&mut self, warning: &Warning) {
        self.inner.warning(warning);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records what reaches the front end.
    #[derive(Default)]
    struct Printed(Vec<String>);

    impl Observer for Printed {
        fn prediction(&mut self, score: f64) {
            self.0.push(format!("p{score}"));
        }
        fn classes(&mut self, classes: &Classes) {
            self.0.push(classes.to_list());
        }
    }

    /// What reaches the front end when the labels `ys` are read and predicted in turn (the
    /// prediction `i` for the `i`-th), and how many predictions were held at the end.
    fn play(ys: &[f64]) -> (Vec<String>, usize) {
        let mut printed = Printed::default();
        let seen = Seen::default();
        let mut conv = ImplicitBinary::default();
        let held = {
            let mut watched = Convention::new(&mut printed, &seen);
            for (i, &y) in ys.iter().enumerate() {
                conv.target(y).unwrap();
                seen.note(conv);
                watched.prediction(i as f64);
            }
            watched.held.len()
        };
        (printed.0, held)
    }

    /// Labels 1, 1, 0, 1: the two predictions before the first `0` wait for it, so every
    /// prediction reaches the front end after the `0,1` convention.
    #[test]
    fn predictions_wait_for_the_first_negative_label() {
        let (printed, held) = play(&[1.0, 1.0, 0.0, 1.0]);
        assert_eq!(printed, ["0,1", "p0", "p1", "p2", "p3"]);
        assert_eq!(held, 0);
    }

    /// Only positive labels: held to the end of the pass, then `−1/+1`.
    #[test]
    fn an_open_convention_ends_as_plus_minus_one() {
        let (printed, held) = play(&[1.0, 1.0, 1.0]);
        assert_eq!(held, 3);
        assert_eq!(printed, ["-1,1", "p0", "p1", "p2"]);
    }
}
