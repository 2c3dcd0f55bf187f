//! A [`Mixture`] learning a batch of examples on two threads (issue 27, item 3).
//!
//! The members of a mixture never see the mixture's weights: member `k`'s prediction of
//! example `t` and its state afterwards depend only on the examples `1..t`. So a batch can be
//! learned member by member — the first half of the members on a second thread, the other half
//! on the caller's — recording each member's progressive prediction of each example, and the
//! weighting ([`Mixture::mix_round`]) then runs over the recorded predictions in example order.
//! Every floating-point operation is the one the one-example-at-a-time path makes, in the same
//! order for each member and for the weights, so the results are the same bits (tested:
//! `tests/mixture.rs`, `batches_on_two_threads_are_bit_identical_to_one_example_at_a_time`).
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
//! of `tests/mixture_retirement.rs`'s batch test differ (tried, 27 Nov) — and a check moved to
//! a batch's end would make the results depend on how the input is batched.
//!
//! The second thread is kept from batch to batch ([`member_thread`](super::member_thread)), not
//! started for each.
//!
//! Errors: an example the mixture would reject ([`check_example`]) ends the batch before it,
//! as the sequential path does. A member's refused step (or failed sketch) is counted and the
//! member predicts with its kept state, as in [`Mixture::learn`]. Any other member error ends
//! the batch at that example, but the other members may by then have learned the examples
//! after it (no such error is known once the example has passed [`check_example`]).

use super::member_thread::beside;
use super::shared_scaling::{member_step, put_state, take_state};
use super::unit_scaling::UnitScale;
use super::{check_example, learn_each, learn_onto, LearnError, Mixture, OnlineLearner};
use crate::Example;
use std::cell::Cell;
use std::sync::{mpsc, Arc, OnceLock};

/// Fewest examples in a batch for which the second thread is used (handing a batch over and
/// back costs a few microseconds; a sketched member's example a few).
const MIN_PARALLEL_BATCH: usize = 16;

thread_local! {
    /// Set inside [`on_one_thread`]: this thread's batches learn on it alone.
    static ONE_THREAD: Cell<bool> = const { Cell::new(false) };
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
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            ONE_THREAD.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(ONE_THREAD.with(|c| c.replace(true)));
    f()
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
struct GroupOutcome {
    refused: u64,
    /// The first example (index in the batch) on which a member failed, and its error.
    error: Option<(usize, LearnError)>,
}

/// The scaled rows of a batch as a group of members reads them (see [`learn_group`]): all
/// present, or arriving in order from the thread that scales them.
pub(super) struct RowSource<'a> {
    pub(super) got: Vec<&'a [f64]>,
    pub(super) arriving: Option<mpsc::Receiver<&'a [f64]>>,
}

impl<'a> RowSource<'a> {
    /// Example `i`'s scaled values (waiting for them if they have not arrived yet).
    pub(super) fn get(&mut self, i: usize) -> &'a [f64] {
        while self.got.len() <= i {
            let next = self.arriving.as_ref().and_then(|rx| rx.recv().ok());
            // The scaling thread sends every example of the batch before it ends (it cannot
            // fail; a panic there is re-raised by `beside`, after this side has reported).
            self.got
                .push(next.expect("the scaling thread sends every example"));
        }
        self.got[i]
    }
}

/// A member and the row of the batch's predictions it fills.
type Slot<'a, L> = (&'a mut L, &'a mut [f64]);

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
        for (i, ex) in batch.iter().enumerate() {
            // The next example's entries start loading while this one is learned (a hint: no
            // value changes): on wide sparse streams a member mostly waits for its tables.
            if let Some(next) = batch.get(i + 1) {
                member.prefetch(next.row());
            }
            let (x, v) = (ex.row(), scaled.as_mut().map(|s| s.get(i)));
            row[i] = match member_step(&mut **member, x, v, (ex.label, ex.weight), &mut out.refused)
            {
                Ok(p) => p,
                Err(e) => {
                    if out.error.as_ref().is_none_or(|(j, _)| i < *j) {
                        out.error = Some((i, e));
                    }
                    break;
                }
            };
        }
    }
    out
}

/// Scales the batch's rows by the shared statistics `state` in order (each joins it first, as
/// `ScaledRows::observe` does), into `buffer` (exactly
/// the batch's stored entries long), sending each row on `tx` as soon as it is done; returns
/// them all.
pub(super) fn scale_rows<'a>(
    state: &mut UnitScale,
    d: usize,
    batch: &[Example],
    buffer: &'a mut [f64],
    tx: mpsc::Sender<&'a [f64]>,
) -> Vec<&'a [f64]> {
    let mut done = Vec::with_capacity(batch.len());
    let mut row = Vec::new();
    let mut rest = buffer;
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
        // The receiver is gone only when its group stopped at an error: nothing to do.
        let _ = tx.send(chunk);
        done.push(chunk);
    }
    done
}

/// How many examples of `batch` come before the first that the mixture (of dimension `dim`)
/// rejects ([`check_example`]): a part learns those, and ends with [`finish_part`].
pub(super) fn valid_prefix(batch: &[Example], dim: usize) -> usize {
    batch
        .iter()
        .position(|ex| check_example(&ex.row(), ex.label, ex.weight, dim).is_err())
        .unwrap_or(batch.len())
}

/// A part's result once its first `valid` examples are learned (see [`valid_prefix`]): a
/// member's error (`failed`, with its example's index) first, else the rejection of the example
/// after the valid ones, if any.
pub(super) fn finish_part(
    batch: &[Example],
    valid: usize,
    dim: usize,
    failed: Option<(usize, LearnError)>,
) -> Result<(), LearnError> {
    if let Some((_, e)) = failed {
        return Err(e);
    }
    match batch.get(valid) {
        Some(bad) => check_example(&bad.row(), bad.label, bad.weight, dim),
        None => Ok(()),
    }
}

impl<L: OnlineLearner + Send> Mixture<L> {
    /// [`OnlineLearner::learn_batch`] with the members split over two threads when the machine
    /// has two cores (see the [module](self) docs); the same results as learning the examples
    /// one at a time.
    pub fn learn_batch_parallel(
        &mut self,
        batch: &[Example],
        out: &mut Vec<f64>,
    ) -> Result<(), LearnError> {
        if self.members.len() < 2 || batch.len() < MIN_PARALLEL_BATCH || !two_cores() {
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
        let k = self.members.len();
        if batch.len() < MIN_PARALLEL_BATCH {
            return learn_onto(self, batch, out);
        }
        if self.retirement.active_count() == 1 {
            let lone = (0..k).find(|&j| self.retirement.is_active(j));
            return self.learn_lone(lone.unwrap_or(0), batch, out);
        }
        let dim = self.dim();
        let valid = valid_prefix(batch, dim);
        let (good, n) = (&batch[..valid], valid);
        let mut preds = vec![0.0; k * n];
        // With a shared unit scaling, this thread scales the batch's rows while the other
        // thread's members already learn those that are done; then this thread's members learn
        // them all. Each member learns the same values in the same order as before.
        let mut state = take_state(&mut self.members);
        let entries: usize = good.iter().map(|ex| ex.row().stored_len()).sum();
        let buffer = self
            .shared
            .buffer(if state.is_some() { entries } else { 0 });
        let retirement = &self.retirement;
        let mut slots: Vec<Slot<'_, L>> = self
            .members
            .iter_mut()
            .zip(preds.chunks_exact_mut(n.max(1)))
            .enumerate()
            .filter(|(j, _)| retirement.is_active(*j))
            .map(|(_, slot)| slot)
            .collect();
        let half = slots.len() / 2;
        let (first, second) = slots.split_at_mut(half);
        let (a, b) = match state.as_mut() {
            None => beside(
                || learn_group(first, good, None),
                || learn_group(second, good, None),
            ),
            Some((d, scale)) => {
                let (tx, rx) = mpsc::channel();
                let source = RowSource {
                    got: Vec::with_capacity(n),
                    arriving: Some(rx),
                };
                beside(
                    || learn_group(first, good, Some(source)),
                    || {
                        let done = scale_rows(Arc::make_mut(scale), *d, good, buffer, tx);
                        let source = RowSource {
                            got: done,
                            arriving: None,
                        };
                        learn_group(second, good, Some(source))
                    },
                )
            }
        };
        drop(slots);
        if let Some((_, scale)) = state {
            put_state(&mut self.members, scale);
        }
        // A panic in a member is a bug: re-raise it on the caller's thread.
        let a = a.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        self.refused += a.refused + b.refused;
        let failed = match (a.error, b.error) {
            (Some(x), Some(y)) => Some(if y.0 < x.0 { y } else { x }),
            (x, y) => x.or(y),
        };
        let stop = failed.as_ref().map_or(n, |(i, _)| *i);
        let mut column = std::mem::take(&mut self.scratch);
        for (i, ex) in good[..stop].iter().enumerate() {
            column.clear();
            column.extend((0..k).map(|j| preds[j * n + i]));
            let example = (ex.label, ex.weight, ex.row().stored_len());
            out.push(self.mix_round(&column, example, 1.0));
        }
        self.scratch = column;
        finish_part(batch, valid, dim, failed)
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
