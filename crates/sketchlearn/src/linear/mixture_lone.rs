//! A [`Mixture`] with a single active member left, learning a batch on two threads (issue 27,
//! item 3).
//!
//! Once every other member has retired (`mixture_retirement.rs`: on a9a the default's three
//! losing members retire by example 17,664, and the fourth learns the last 46 % of the pass
//! alone), [`Mixture::learn_batch_parallel`] used to learn each example on the caller's thread:
//! the shared unit scaling's join, the member's step, then the weighting's round
//! ([`Mixture::mix_round`]: a log-sum-exp over the members and AdaHedge's mixability gap, about
//! twenty `exp`/`ln`), while the second core had only the parser's thread to run. Here the
//! caller's thread learns the member alone, and the helper thread
//! ([`member_thread`](super::member_thread)) does the rest: it scales the batch's rows in order,
//! handing each over as soon as it is done (as `mixture_batch.rs` does for the other half of
//! the members), and then runs the weighting's rounds over the member's predictions, which the
//! caller hands over in runs of [`RUN`] examples (one hand-over per run rather than per
//! example: the member's step, a few microseconds on a9a, is longer than a round, so the helper
//! would otherwise wait, and be woken, at every example).
//!
//! **The same bits.** The member learns the same scaled values in the same order; the rounds
//! see the same predictions, in example order, with the retired members' predictions 0 as
//! before; no retirement can happen (a single active member is never checked,
//! `Retirement::due`), so the batch is not cut into parts. Which
//! thread runs a computation does not enter its arithmetic. Tested against one example at a
//! time (`tests/suite/mixture_retirement.rs`, `a_lone_member_on_two_threads_is_bit_identical`), with
//! and without a shared scaling, an invalid example and a batch ending inside a run.
//!
//! Errors: as in `mixture_batch.rs`, an example the mixture would reject ends the batch before
//! it; a member error ends it at its example (the rounds before it are done). By then the
//! helper thread has already scaled the batch's later rows: with a shared scaling, the state
//! has joined every valid example of the part, as in `mixture_batch.rs`, where the other members
//! may also have learned them (no such error is known once the example has passed
//! `check_example`).

use super::handoff::{handoff, Giver};
use super::member_thread::beside;
use super::mixture_batch::{
    check_rest, learn_member, scale_rows, valid_prefix, GroupOutcome, RowSource,
};
use super::shared_scaling::{put_state, take_state};
use super::{LearnError, Mixture, OnlineLearner};
use crate::Example;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// Examples per hand-over of the member's predictions to the weighting's thread (also the
/// caller's group's hand-over in `mixture_batch.rs`). The last run of a batch is weighted
/// after the member is done (the serial tail, ~0.18 µs a round on a9a), so a run is short
/// compared with a batch of 256; the weighting keeps up with the member and then waits, so
/// nearly every hand-over wakes it, which costs the member's thread ~7.5 µs on this machine
/// (a send that unparks a parked thread, timed 29 Nov). 64 rather than 32: on a batch of 256
/// about three wake-ups instead of six, for ~6 µs more of tail.
pub(super) const RUN: usize = 64;

/// What the caller's thread did: the member's refused steps, and its first error (the index in
/// the batch and the error).
type Learned = (u64, Option<(usize, LearnError)>);

/// The member `member` learns `batch` in order (scaled rows from `scaled` when the members
/// share their scaling), writing its predictions to `preds` and handing them over on `tx` a run
/// of [`RUN`] at a time; stops at its first error.
fn learn_runs<'a, L: OnlineLearner>(
    member: &mut L,
    batch: &[Example],
    mut scaled: Option<RowSource<'_>>,
    preds: &'a mut [f64],
    tx: Giver<&'a [f64]>,
) -> Learned {
    let mut out = GroupOutcome::default();
    for (r, run) in preds.chunks_mut(RUN).enumerate() {
        let start = r * RUN;
        let learned = learn_member(member, run, (batch, start), &mut scaled, &mut out);
        let done = out.error.as_ref().map_or(run.len(), |(i, _)| i - start);
        let run: &'a [f64] = run;
        // The receiver lives until this side is done: it waits for the runs.
        let _ = tx.send(&run[..done]);
        if !learned {
            break;
        }
    }
    (out.refused, out.error)
}

impl<L: OnlineLearner + Send + Clone> Mixture<L> {
    /// One part of a batch (see [`Mixture::learn_batch_parallel`]) when member `j` is the only
    /// active one: it learns on this thread, the scaling and the weighting on the helper (see
    /// the [module](self) docs). The predictions are appended to `out`.
    pub(super) fn learn_lone(
        &mut self,
        j: usize,
        batch: &[Example],
        out: &mut Vec<f64>,
    ) -> Result<(), LearnError> {
        let k = self.members.len();
        let dim = self.dim();
        let valid = valid_prefix(batch, dim);
        let good = &batch[..valid];
        let mut state = take_state(&mut self.members);
        let entries: usize = good.iter().map(|ex| ex.row().stored_len()).sum();
        let mut rows = std::mem::take(&mut self.shared);
        let buffer = rows.buffer(if state.is_some() { entries } else { 0 });
        // The weighting's rounds use every field but the members (`mix_round` reads their
        // number from the losses): the members are taken out so that the helper may hold the
        // rest of the mixture while this thread's member learns.
        let mut members = std::mem::take(&mut self.members);
        let mut preds = vec![0.0; good.len()];
        let mixer = &mut *self;
        let member = &mut members[j];
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let (runs_tx, runs_rx) = handoff::<&[f64]>();
            let (rows_tx, rows_rx) = handoff();
            let source = state.as_ref().map(|_| RowSource {
                got: Vec::with_capacity(good.len()),
                arriving: Some(rows_rx),
            });
            beside(
                || {
                    if let Some((d, scale)) = state.as_mut() {
                        scale_rows(Arc::make_mut(scale), *d, good, buffer, rows_tx);
                    }
                    let mut column = std::mem::take(&mut mixer.scratch);
                    column.clear();
                    column.resize(k, 0.0);
                    let mut examples = good.iter();
                    for run in runs_rx {
                        for (&p, ex) in run.iter().zip(examples.by_ref()) {
                            column[j] = p;
                            let example = (ex.label, ex.weight, ex.row().stored_len());
                            out.push(mixer.mix_round(&column, example, 1.0));
                        }
                    }
                    mixer.scratch = column;
                },
                || learn_runs(member, good, source, &mut preds, runs_tx),
            )
        }));
        self.members = members;
        self.shared = rows;
        if let Some((_, scale)) = state {
            put_state(&mut self.members, scale);
        }
        // A panic in a member or a round is a bug: re-raise it on the caller's thread.
        let (rounds, (refused, failed)) = outcome.unwrap_or_else(|panic| resume_unwind(panic));
        rounds.unwrap_or_else(|panic| resume_unwind(panic));
        self.refused += refused;
        if let Some((_, e)) = failed {
            return Err(e);
        }
        check_rest(batch, valid, dim)
    }
}
