//! The undo copy behind "a refused row changes nothing but the count".
//!
//! **Invariant:** when a row is refused (a step inside the learner, or inside a learner it
//! holds, is refused, or the step ends in an error), the learner is left exactly as it was
//! before the row, except that its own count of refused steps grows by the refusals the row
//! caused. The members that learned the row before one refused it, shared statistics, weights
//! and losses are all put back.
//!
//! [`learn_or_undo`] is that step, used by [`Mixture`](super::Mixture) and by
//! `OneVsAll` (multiclass) on a row above the mixture's size test (`suspect_row`).
//! The caller decides when to pay for the copy: a row that is not suspect is learned in place,
//! with no clone and no allocation.

use super::LearnError;

/// A learner that can be learned from an undo copy ([`learn_or_undo`]).
pub(crate) trait Undo: Clone {
    /// The refused steps counted by the learner itself and inside the learners it holds.
    fn refusals(&self) -> u64;

    /// Counts `n` more refused steps in the learner's own count.
    fn count_refused(&mut self, n: u64);
}

/// Runs `step` on `state`. If it succeeds with no new refusal, returns `Ok(Some(value))`.
/// Otherwise `state` is put back as it was before the step, with the step's refusals added to
/// its own count ([`Undo::count_refused`]; refusals inside the held learners are put back with
/// them, so all of them are counted at this level), and the step's error is returned, or
/// `Ok(None)` for a refusal.
pub(crate) fn learn_or_undo<S: Undo, T>(
    state: &mut S,
    step: impl FnOnce(&mut S) -> Result<T, LearnError>,
) -> Result<Option<T>, LearnError> {
    let (mut kept, before) = (state.clone(), state.refusals());
    let learned = step(state);
    if learned.is_ok() && state.refusals() == before {
        return learned.map(Some);
    }
    kept.count_refused(state.refusals().saturating_sub(before));
    *state = kept;
    learned.map(|_| None)
}
