//! A [`Mixture`] learning a batch of examples on two threads (issue 27, item 3).
//!
//! The members of a mixture never see the mixture's weights: member `k`'s prediction of
//! example `t` and its state afterwards depend only on the examples `1..t`. So a batch can be
//! learned member by member — the first half of the members on a second thread, the other half
//! on the caller's — recording each member's progressive prediction of each example, and the
//! weighting ([`Mixture::mix_round`]) runs over the recorded predictions in example order (on
//! the second thread, overlapping the caller's members: below).
//! Every floating-point operation is the one the one-example-at-a-time path makes, in the same
//! order for each member and for the weights, so the results are the same bits (tested:
//! `tests/suite/mixture.rs`, `batches_on_two_threads_are_bit_identical_to_one_example_at_a_time`).
//!
//! Members that share one unit scaling (`shared_scaling.rs`) have the batch's examples join
//! it, in order: the caller's thread scales them one by one and hands each example's scaled
//! values to the other thread as soon as they are done, so that the other half of the members
//! learns while the rest of the batch is scaled (the scaling is no longer a serial stretch
//! before the two threads start); the caller's members then learn the kept values. Every
//! member's learner learns those of example `i` at step `i` (the values it computed itself
//! there before).
//!
//! Retired members (`mixture_retirement.rs`) are left out: the active ones are split in two
//! halves. A batch is learned in parts that end at the retirement check points (which depend only
//! on the examples' importance weights), so a member that retires at a check point has learned
//! exactly the examples up to it, as one example at a time would; with a single active member
//! left, the rest is learned on the caller's thread. So with importance weights of 256 or more
//! every example is a check point, and the parts (one example each) are learned on the caller's
//! thread. Learning past a check point instead (checking at the batch's end, or deciding at the
//! point but not splitting) is not the same bits: a member retiring there would keep the
//! examples after it in its saved state — with unit weights in batches of 100, the state bytes
//! of `tests/suite/mixture_retirement.rs`'s batch test differ (tried, 27 Nov) — and a check moved to
//! a batch's end would make the results depend on how the input is batched.
//!
//! **The weighting on the helper.** The weighting's rounds (a log-sum-exp over the members and
//! AdaHedge's mixability gap: about twenty `exp`/`ln` an example, 7 % of the caller's
//! instructions on a9a's first 17,664 examples, callgrind, 27 Nov) used to run on the caller's
//! thread after both groups were done, while the helper waited for the next batch. Now the
//! helper's group learns the batch, then the helper runs the rounds while the caller's group is
//! still learning: the caller's members but the last learn the whole batch, and the last hands
//! the group's predictions over in runs of 64 examples as it makes them (`learn_handing`), so
//! the rounds trail it by one run; the caller waits only for the last run's rounds. This is done
//! when the helper's members took less time than the caller's (scaling included) in the last
//! part ([`WeighOn`]; on r8_earn_vs_rest the helper's group is the heavier); otherwise the
//! caller runs the rounds after both groups, as before. The rounds
//! see the same predictions in example order (a retired member's 0 as before) and the members
//! learn what they did before, in the same order, so the bits are unchanged; a part still ends
//! at a check point, and its rounds (the retirement's check with them) are done before the next
//! part starts, so a member that retires there has learned exactly the examples up to it.
//!
//! The second thread is kept from batch to batch ([`member_thread`](super::member_thread)), not
//! started for each.
//!
//! Errors: an example the mixture would reject ([`check_example`]) ends the batch before it,
//! as the sequential path does. A member's refused step (or failed sketch) is counted and the
//! member predicts with its kept state, as in [`Mixture::learn`]. Any other member error ends
//! the batch at that example, but the other members may by then have learned the examples
//! after it (no such error is known once the example has passed [`check_example`]).

use super::handoff::{handoff, Giver, Taker};
use super::member_thread::beside;
use super::mixture_lone::RUN;
use super::shared_scaling::{member_step, put_state, take_state};
use super::unit_scaling::UnitScale;
use super::{check_example, learn_each, learn_onto, LearnError, Mixture, OnlineLearner};
use crate::Example;
use std::cell::Cell;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

/// Fewest examples in a batch for which the second thread is used (handing a batch over and
/// back costs a few microseconds; a sketched member's example a few).
const MIN_PARALLEL_BATCH: usize = 16;

thread_local! {
    /// Set inside [`on_one_thread`]: this thread's batches learn on it alone.
    static ONE_THREAD: Cell<bool> = const { Cell::new(false) };
    /// Set inside [`weighing_on`]: the thread of the weighting's rounds, instead of [`WeighOn`].
    static WEIGH_FORCED: Cell<Option<bool>> = const { Cell::new(None) };
}

/// `f()` with `cell` (this thread's) set to `value`, restored afterwards, also on a panic.
fn with_set<T: Copy + 'static, R>(
    cell: &'static std::thread::LocalKey<Cell<T>>,
    value: T,
    f: impl FnOnce() -> R,
) -> R {
    struct Restore<T: Copy + 'static>(&'static std::thread::LocalKey<Cell<T>>, T);
    impl<T: Copy + 'static> Drop for Restore<T> {
        fn drop(&mut self) {
            self.0.with(|c| c.set(self.1));
        }
    }
    let _restore = Restore(cell, cell.with(|c| c.replace(value)));
    f()
}

/// `f()` with every mixture batch learned on the calling thread alone (no second thread for
/// the members; the same results, see the [module](self) docs). For a caller that owns one
/// core of a shared machine: a Dask worker of one thread (`sketchlearn.dask`), or a benchmark
/// that compares one such worker with two.
///
/// ```
/// use sketchlearn::linear::on_one_thread;
/// assert_eq!(on_one_thread(|| 1 + 1), 2);
/// ```
pub fn on_one_thread<R>(f: impl FnOnce() -> R) -> R {
    with_set(&ONE_THREAD, true, f)
}

/// `f()` with the weighting's rounds of every part learned on two threads run on the helper
/// thread (`helper`) or on the caller's, instead of where the last part's timing puts them
/// ([`WeighOn`]). For tests, which must cover both paths whatever the machine's timing; the
/// results are the same bits either way.
///
/// ```
/// use sketchlearn::linear::weighing_on;
/// assert_eq!(weighing_on(true, || 2 * 3), 6);
/// ```
#[doc(hidden)]
pub fn weighing_on<R>(helper: bool, f: impl FnOnce() -> R) -> R {
    with_set(&WEIGH_FORCED, Some(helper), f)
}

/// Whether this machine has a second core for the members (asked once), and this thread may
/// use it (not inside [`on_one_thread`]).
fn two_cores() -> bool {
    static CORES: OnceLock<bool> = OnceLock::new();
    !ONE_THREAD.with(Cell::get)
        && *CORES.get_or_init(|| std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2))
}

/// What one group of members did over a batch.
#[derive(Default)]
pub(super) struct GroupOutcome {
    pub(super) refused: u64,
    /// The first example (index in the batch) on which a member failed, and its error.
    pub(super) error: Option<(usize, LearnError)>,
}

/// The scaled rows of a batch as a group of members reads them (see [`learn_group`]): all
/// present, or arriving in order from the thread that scales them, a few at a time
/// ([`scale_rows`]).
pub(super) struct RowSource<'a> {
    pub(super) got: Vec<&'a [f64]>,
    pub(super) arriving: Option<Taker<Vec<&'a [f64]>>>,
}

impl<'a> RowSource<'a> {
    /// Example `i`'s scaled values (waiting for them if they have not arrived yet).
    pub(super) fn get(&mut self, i: usize) -> &'a [f64] {
        while self.got.len() <= i {
            let next = self.arriving.as_ref().and_then(Taker::recv);
            // The scaling thread sends every example of the batch before it ends (it cannot
            // fail; a panic there is re-raised by `beside`, after this side has reported).
            self.got
                .extend(next.expect("the scaling thread sends every example"));
        }
        self.got[i]
    }
}

/// A member and the row of the batch's predictions it fills.
type Slot<'a, L> = (&'a mut L, &'a mut [f64]);

/// `member` learns the examples `start..start + row.len()` of `batch` in order, writing its
/// progressive prediction of example `start + i` to `row[i]`; at its first error it records it
/// in `out` (if it is the group's earliest) and returns false.
pub(super) fn learn_member<L: OnlineLearner>(
    member: &mut L,
    row: &mut [f64],
    (batch, start): (&[Example], usize),
    scaled: &mut Option<RowSource<'_>>,
    out: &mut GroupOutcome,
) -> bool {
    for (off, slot) in row.iter_mut().enumerate() {
        let i = start + off;
        // The next example's entries start loading while this one is learned (a hint: no
        // value changes): on wide sparse streams a member mostly waits for its tables.
        if let Some(next) = batch.get(i + 1) {
            member.prefetch(next.row());
        }
        let ex = &batch[i];
        let v = scaled.as_mut().map(|s| s.get(i));
        match member_step(member, ex.row(), v, (ex.label, ex.weight), &mut out.refused) {
            Ok(p) => *slot = p,
            Err(e) => {
                if out.error.as_ref().is_none_or(|(j, _)| i < *j) {
                    out.error = Some((i, e));
                }
                return false;
            }
        }
    }
    true
}

/// Each member of `members` learns `batch` in order, writing its progressive prediction of
/// example `i` to `row[i]`. With `scaled` (the members share their unit scaling, and the batch
/// joins it) each member's learner learns the scaled values of example `i`.
fn learn_group<L: OnlineLearner>(
    members: &mut [Slot<'_, L>],
    batch: &[Example],
    mut scaled: Option<RowSource<'_>>,
) -> GroupOutcome {
    let mut out = GroupOutcome::default();
    for (member, row) in members.iter_mut() {
        learn_member(&mut **member, row, (batch, 0), &mut scaled, &mut out);
    }
    out
}

/// The predictions of one run of examples by the caller's group of members (one slice per
/// member, in the group's order), handed to the weighting (see [`learn_handing`]).
type Run<'a> = Vec<&'a [f64]>;

/// [`learn_group`] for the caller's group, handing its predictions to the weighting as they
/// are made: the members but the last learn the whole batch; the last learns it in runs of
/// [`RUN`] examples, and after each run the group's predictions of it are sent on `tx`, cut at
/// the group's first error (nothing after it is sent). Every member learns what
/// [`learn_group`] would, in the same order.
fn learn_handing<'a, L: OnlineLearner>(
    members: Vec<Slot<'a, L>>,
    batch: &[Example],
    mut scaled: Option<RowSource<'_>>,
    tx: Giver<Run<'a>>,
) -> GroupOutcome {
    let mut out = GroupOutcome::default();
    let mut done: Vec<&'a [f64]> = Vec::with_capacity(members.len());
    let mut members = members.into_iter();
    let Some((last, last_row)) = members.next_back() else {
        return out;
    };
    for (member, row) in members {
        learn_member(member, row, (batch, 0), &mut scaled, &mut out);
        done.push(row);
    }
    let mut learning = true;
    for (r, chunk) in last_row.chunks_mut(RUN).enumerate() {
        let start = r * RUN;
        if learning {
            learning = learn_member(&mut *last, chunk, (batch, start), &mut scaled, &mut out);
        }
        let limit = out.error.as_ref().map_or(batch.len(), |(i, _)| *i);
        let len = chunk.len().min(limit.saturating_sub(start));
        if len > 0 {
            let chunk: &'a [f64] = chunk;
            let mut run: Run<'a> = done.iter().map(|row| &row[start..start + len]).collect();
            run.push(&chunk[..len]);
            // The receiver is gone only when the weighting stopped at the other group's error.
            let _ = tx.send(run);
        }
        // Past an error of the group nothing more is weighed (an earlier member's error: the
        // last member still learns the rest of the batch, as in `learn_group`).
        if !learning {
            break;
        }
    }
    out
}

/// Most scaled rows per hand-over of [`scale_rows`].
const ROWS_PER_HANDOVER: usize = 16;

/// Scales the batch's rows by the shared statistics `state` in order (each joins it first, as
/// `ScaledRows::observe` does), into `buffer` (exactly the batch's stored entries long),
/// handing them over on `tx` as they are done; returns them all.
///
/// The hand-overs hold the first row, then the next 1, 2, 4 and 8, then 16 at a time
/// ([`ROWS_PER_HANDOVER`]), and the rest at the end: the rows' reader starts on the first at
/// once, but does not wait (and get woken) row by row when it catches up with the scaling. It
/// did: a send that wakes a parked thread costs the sender ~7.5 µs on this machine, longer than
/// scaling a row (~1 µs) or a member's step on it (2–4 µs on a9a), so the reader caught up
/// again after every wake-up — on a9a's default run, ~480 of the ~70 parts' rows woke the
/// members' thread (`perf record -e syscalls:sys_enter_futex`, 29 Nov).
pub(super) fn scale_rows<'a>(
    state: &mut UnitScale,
    d: usize,
    batch: &[Example],
    buffer: &'a mut [f64],
    tx: Giver<Vec<&'a [f64]>>,
) -> Vec<&'a [f64]> {
    let mut done = Vec::with_capacity(batch.len());
    let mut row = Vec::new();
    let mut rest = buffer;
    let mut handed = 0;
    for (i, ex) in batch.iter().enumerate() {
        // The next example's moments start loading while this one joins (a hint, as the
        // members' in `learn_group`).
        if let Some(next) = batch.get(i + 1) {
            state.prefetch(next.row());
        }
        state.observe_scaled(d, ex.row(), &mut row);
        let (chunk, tail) = std::mem::take(&mut rest).split_at_mut(row.len());
        chunk.copy_from_slice(&row);
        rest = tail;
        let chunk: &'a [f64] = chunk;
        done.push(chunk);
        let (n, waiting) = (done.len(), done.len() - handed);
        if waiting == handed.clamp(1, ROWS_PER_HANDOVER) || n == batch.len() {
            // The receiver is gone only when its group stopped at an error: nothing to do.
            let _ = tx.send(done[handed..].to_vec());
            handed = n;
        }
    }
    done
}

impl<L: OnlineLearner + Send + Clone> Mixture<L> {
    /// [`OnlineLearner::learn_batch`] with the members split over two threads when the machine
    /// has two cores (see the [module](self) docs); the same results as learning the examples
    /// one at a time.
    pub fn learn_batch_parallel(
        &mut self,
        batch: &[Example],
        out: &mut Vec<f64>,
    ) -> Result<(), LearnError> {
        // A batch with a row a member may refuse is learned one example at a time, whose undo
        // copy keeps such a row from changing anything (`Mixture::learn_normalized`); the same
        // bits as this path otherwise.
        if self.members.len() < 2
            || batch.len() < MIN_PARALLEL_BATCH
            || !two_cores()
            || batch
                .iter()
                .any(|ex| super::mixture::suspect_row(ex.row(), ex.label, ex.weight))
        {
            return learn_each(self, batch, out);
        }
        out.clear();
        let mut start = 0;
        while start < batch.len() {
            let end = start + self.part_len(&batch[start..]);
            self.learn_part(&batch[start..end], out)?;
            start = end;
        }
        Ok(())
    }

    /// The examples of `batch` up to and including the next retirement check point (all of
    /// them when there is none): the weight seen is summed as [`Mixture::mix_round`] sums it.
    fn part_len(&self, batch: &[Example]) -> usize {
        let mut seen = self.seen;
        for (i, ex) in batch.iter().enumerate() {
            let before = seen;
            seen += ex.weight;
            if self.retirement.due(before, seen) {
                return i + 1;
            }
        }
        batch.len()
    }

    /// One part of a batch (see [`Mixture::learn_batch_parallel`]): its predictions are
    /// appended to `out`.
    fn learn_part(&mut self, batch: &[Example], out: &mut Vec<f64>) -> Result<(), LearnError> {
        if batch.len() < MIN_PARALLEL_BATCH {
            return learn_onto(self, batch, out);
        }
        if self.retirement.active_count() == 1 {
            let lone = (0..self.members.len()).find(|&j| self.retirement.is_active(j));
            return self.learn_lone(lone.unwrap_or(0), batch, out);
        }
        let dim = self.dim();
        let valid = valid_prefix(batch, dim);
        let good = &batch[..valid];
        let mut state = take_state(&mut self.members);
        let entries: usize = good.iter().map(|ex| ex.row().stored_len()).sum();
        let mut rows = std::mem::take(&mut self.shared);
        let buffer = rows.buffer(if state.is_some() { entries } else { 0 });
        // The weighting's rounds run on the helper thread (see `learn_beside`), which then
        // holds the rest of the mixture: the members are taken out, as in `mixture_lone.rs`.
        let mut members = std::mem::take(&mut self.members);
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            self.learn_beside(&mut members, good, state.as_mut(), buffer, out)
        }));
        self.members = members;
        self.shared = rows;
        if let Some((_, scale)) = state {
            put_state(&mut self.members, scale);
        }
        // A panic in a member or a round is a bug: re-raise it on the caller's thread.
        let (a, b) = outcome.unwrap_or_else(|panic| resume_unwind(panic));
        let a = a.unwrap_or_else(|panic| resume_unwind(panic));
        self.refused += a.refused + b.refused;
        let failed = match (a.error, b.error) {
            (Some(x), Some(y)) => Some(if y.0 < x.0 { y } else { x }),
            (x, y) => x.or(y),
        };
        if let Some((_, e)) = failed {
            return Err(e);
        }
        check_rest(batch, valid, dim)
    }

    /// The valid examples `good` of a part learned by the active `members` (taken out of the
    /// mixture) on two threads, with the weighting's rounds on the helper (see the
    /// [module](self) docs): the helper's group learns the batch, then weighs it as the
    /// caller's group hands its predictions over ([`learn_handing`]); the caller scales the
    /// rows (with a shared `state`) into `buffer`, then learns its group. Returns the helper's
    /// outcome (or its panic) and the caller's.
    fn learn_beside(
        &mut self,
        members: &mut [L],
        good: &[Example],
        state: Option<&mut (usize, Arc<UnitScale>)>,
        buffer: &mut [f64],
        out: &mut Vec<f64>,
    ) -> (std::thread::Result<GroupOutcome>, GroupOutcome) {
        let (k, n) = (members.len(), good.len());
        let mut preds = vec![0.0; k * n];
        let active: Vec<usize> = (0..k).filter(|&j| self.retirement.is_active(j)).collect();
        let half = active.len() / 2;
        // Where the rounds find member `j`'s predictions; a retired member predicts 0.
        let mut sources = vec![Source::Retired; k];
        for (p, &j) in active.iter().enumerate() {
            sources[j] = if p < half {
                Source::Helper(p)
            } else {
                Source::Caller(p - half)
            };
        }
        let retirement = &self.retirement;
        let mut first: Vec<Slot<'_, L>> = members
            .iter_mut()
            .zip(preds.chunks_exact_mut(n.max(1)))
            .enumerate()
            .filter(|(j, _)| retirement.is_active(*j))
            .map(|(_, slot)| slot)
            .collect();
        let second = first.split_off(half);
        let (runs_tx, runs) = handoff();
        let (rows_tx, rows_rx) = handoff();
        let arriving = state.is_some().then(|| RowSource {
            got: Vec::with_capacity(n),
            arriving: Some(rows_rx),
        });
        // The rounds run on the thread whose members took less time in the last part
        // (`WeighOn`); which thread runs them does not change their arithmetic.
        let on_helper = WEIGH_FORCED.with(Cell::get).unwrap_or(self.weigh_on.helper);
        let mut runs = Some(runs);
        let (runs_slot, mixer) = (&mut runs, &mut *self);
        let (a, (b, caller_took)) = beside(
            || {
                let start = Instant::now();
                let mine = learn_group(&mut first, good, arriving);
                let took = start.elapsed();
                if let Some(runs) = runs_slot.take_if(|_| on_helper) {
                    let stop = mine.error.as_ref().map_or(n, |(i, _)| *i);
                    mixer.weigh_runs((&sources, &first), runs, &good[..stop], out);
                }
                (mine, took)
            },
            || {
                let start = Instant::now();
                // With a shared unit scaling, this thread scales the batch's rows while the
                // helper's members already learn those that are done.
                let scaled = state.map(|(d, scale)| RowSource {
                    got: scale_rows(Arc::make_mut(scale), *d, good, buffer, rows_tx),
                    arriving: None,
                });
                (
                    learn_handing(second, good, scaled, runs_tx),
                    start.elapsed(),
                )
            },
        );
        let a = a.map(|(mine, helper_took)| {
            if let Some(runs) = runs.take() {
                // The rounds on this thread: the runs are all in the channel.
                let stop = mine.error.as_ref().map_or(n, |(i, _)| *i);
                self.weigh_runs((&sources, &first), runs, &good[..stop], out);
            }
            self.weigh_on.helper = helper_took < caller_took;
            mine
        });
        (a, b)
    }

    /// The weighting's rounds over `good` in order: example `i`'s column takes each member's
    /// prediction from `sources` (the helper group's rows `mine`, or the caller's runs as they
    /// arrive on `runs`). Stops at the end of `good` or when the runs end (the caller's
    /// group's first error), whichever is first.
    fn weigh_runs(
        &mut self,
        (sources, mine): (&[Source], &[Slot<'_, L>]),
        runs: Taker<Run<'_>>,
        good: &[Example],
        out: &mut Vec<f64>,
    ) {
        let mut column = std::mem::take(&mut self.scratch);
        let mut examples = good.iter().enumerate();
        'runs: for run in runs {
            for off in 0..run.first().map_or(0, |r| r.len()) {
                let Some((i, ex)) = examples.next() else {
                    break 'runs;
                };
                column.clear();
                column.extend(sources.iter().map(|s| match *s {
                    Source::Retired => 0.0,
                    Source::Helper(p) => mine[p].1[i],
                    Source::Caller(p) => run[p][off],
                }));
                let example = (ex.label, ex.weight, ex.row().stored_len());
                out.push(self.mix_round(&column, example, 1.0));
            }
        }
        self.scratch = column;
    }
}

/// Which thread runs a part's weighting rounds (see the [module](self) docs): the helper when
/// its group of members took less time than the caller's (scaling included) in the last part
/// learned on two threads, the caller otherwise (after both groups are done). Measured, not
/// learned: it moves work between threads and never changes a result.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct WeighOn {
    helper: bool,
}

/// Where the weighting's rounds find a member's predictions (see [`Mixture::weigh_runs`]).
#[derive(Clone, Copy)]
enum Source {
    /// A retired member: 0.
    Retired,
    /// The helper's group, at this position.
    Helper(usize),
    /// The caller's group, at this position of each [`Run`].
    Caller(usize),
}

/// The examples at the head of `batch` that the mixture accepts ([`check_example`]): a part
/// ends before the first it would reject, as the one-example-at-a-time path does.
pub(super) fn valid_prefix(batch: &[Example], dim: usize) -> usize {
    batch
        .iter()
        .position(|ex| check_example(&ex.row(), ex.label, ex.weight, dim).is_err())
        .unwrap_or(batch.len())
}

/// The end of a part whose first `valid` examples were learned: the rejected example's error,
/// if the part stopped at one.
pub(super) fn check_rest(batch: &[Example], valid: usize, dim: usize) -> Result<(), LearnError> {
    match batch.get(valid) {
        Some(bad) => check_example(&bad.row(), bad.label, bad.weight, dim),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A thread that learns a batch inside `on_one_thread` finds no second core, nested scopes
    /// and a panic inside restore the setting, and another thread is not affected.
    #[test]
    fn one_thread_scope_is_per_thread_and_restored() {
        let machine = two_cores();
        assert!(!on_one_thread(two_cores));
        assert!(!on_one_thread(|| {
            on_one_thread(|| ());
            two_cores()
        }));
        assert_eq!(two_cores(), machine);
        let _ = std::panic::catch_unwind(|| on_one_thread(|| panic!("inside")));
        assert_eq!(two_cores(), machine);
        let other = on_one_thread(|| std::thread::spawn(two_cores).join().unwrap());
        assert_eq!(other, machine);
    }
}
