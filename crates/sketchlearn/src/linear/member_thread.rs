//! The second thread a mixture's batch learns its other members on (issue 27, item 3), kept
//! for the life of the thread that asks for it instead of started for every batch.
//!
//! [`Mixture::learn_batch_parallel`](super::Mixture::learn_batch_parallel) learns each batch of
//! 256 examples with half of the members on a second thread. A thread started for each batch
//! costs its `clone`, the alternate signal stack Rust's runtime maps, guards and unmaps for
//! every thread (`mmap` + `mprotect` + `munmap`, with a TLB shoot-down on the other core), and
//! the first touches of that memory: on r8_earn_vs_rest (30 batches, about 100 ms a run) `perf
//! record` found about 2 % of the member thread's samples there, and the generated sparse stream
//! starts 391 of them. [`beside`] hands the closure to one helper thread per calling thread
//! instead (started at its first batch, ended when the calling thread ends), which runs it
//! while the caller runs its own part, and returns what [`std::thread::scope`] would: the
//! other part's result or its panic, the caller's result. Which thread runs which member does
//! not enter any arithmetic, so the results are the same bits
//! (`tests/suite/mixture.rs`, `batches_on_two_threads_are_bit_identical_to_one_example_at_a_time`).
//!
//! # Borrowing across the helper thread
//!
//! The closure borrows the caller's batch, members and buffers, so it is not `'static`; its
//! lifetime is erased to send it, which is sound because [`beside`] does not return (nor
//! unwind) before the helper reports the closure finished — the same argument as a scoped
//! thread's join. The wait is in a guard's `drop`, so it also holds when the caller's own part
//! panics. The helper catches the closure's panic (it reports it instead of ending), and it
//! ends only when its caller's end of the channels is dropped, which cannot happen during a
//! call (the caller holds it). A process forked from one with a helper starts its own (the
//! helper's thread is not copied by `fork`; the process id tells, so a forked process that gets
//! the id of the dead process its helper record came from would wait for a thread that does not
//! exist — a case not handled). When the helper cannot be used (it could not be started, the
//! caller's part calls `beside` again on the same thread, or this thread's record is already
//! destroyed: a call from another thread-local's destructor) a scoped thread is started as
//! before; a call from inside the other part starts a helper of the helper thread, kept for
//! that thread's life.
//!
//! # Both parts always run at once
//!
//! The two parts may wait on each other: the mixture's weighting can run on the other part
//! while the caller's members hand it their predictions (`WeighOn` in `mixture_batch.rs` and
//! `mixture_lone.rs`), and a shared scaling is handed across the same way. So no path may run
//! one part before the other on one thread: every fallback is a scoped thread. That includes a
//! helper found gone when the job is sent, which should not happen (its thread ends only when
//! the caller drops its end of the channels, and it catches the jobs' panics), but would if
//! its thread were ended some other way; the test `a_helper_gone_runs_both_parts_at_once`
//! provokes it.

use std::any::Any;
use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread;

/// A closure for the helper, its lifetime erased (see the [module](self) docs).
type Job = Box<dyn FnOnce() + Send + 'static>;
/// A panic's payload, as [`thread::Result`] carries it.
type Panic = Box<dyn Any + Send + 'static>;

/// The calling thread's end of its helper: closures to run, and the report of each.
struct Helper {
    jobs: Sender<Job>,
    done: Receiver<Result<(), Panic>>,
    /// The process that started it: a child made by `fork` (Python's `multiprocessing` on
    /// Linux) inherits this record but not the thread, and starts its own.
    pid: u32,
}

thread_local! {
    /// This thread's helper (`None` until its first [`beside`]).
    static HELPER: RefCell<Option<Helper>> = const { RefCell::new(None) };
}

impl Helper {
    /// Starts a helper thread: it runs each job it receives and reports it, until the caller's
    /// end is dropped.
    fn start() -> std::io::Result<Helper> {
        let (jobs, inbox) = mpsc::channel::<Job>();
        let (report, done) = mpsc::channel();
        thread::Builder::new()
            .name("sketchlearn-members".into())
            .spawn(move || {
                for job in inbox {
                    if report.send(catch_unwind(AssertUnwindSafe(job))).is_err() {
                        break;
                    }
                }
            })?;
        Ok(Helper {
            jobs,
            done,
            pid: std::process::id(),
        })
    }
}

/// Waits for the helper's report of the job in flight when dropped without [`Self::wait`]
/// (the caller's part panicked): the job borrows the caller's frame.
struct InFlight<'h> {
    done: &'h Receiver<Result<(), Panic>>,
    waited: bool,
}

impl InFlight<'_> {
    /// The job's outcome. (A helper gone before reporting cannot happen while its caller holds
    /// the channels; it would be reported as the job's panic.)
    fn wait(mut self) -> Result<(), Panic> {
        self.waited = true;
        self.done
            .recv()
            .unwrap_or_else(|_| Err(Box::new("the mixture's member thread ended")))
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if !self.waited {
            let _ = self.done.recv();
        }
    }
}

/// Runs `other` on this thread's helper thread while `mine` runs here; returns `other`'s result
/// (or its panic, as [`thread::ScopedJoinHandle::join`] gives it) and `mine`'s. See the
/// [module](self) docs.
pub(super) fn beside<A: Send, B>(
    other: impl FnOnce() -> A + Send,
    mine: impl FnOnce() -> B,
) -> (thread::Result<A>, B) {
    let mut parts = Some((other, mine));
    let on_record = HELPER.try_with(|cell| {
        // Borrowed: a call from the caller's part of an outer `beside` (scoped below).
        let mut helper = cell.try_borrow_mut().ok()?;
        if helper.as_ref().is_some_and(|h| h.pid != std::process::id()) {
            // Inherited through `fork`: its thread is not in this process. Its channels
            // are left alone (forgotten), not dropped, as they were the parent's.
            std::mem::forget(helper.take());
        }
        if helper.is_none() {
            *helper = Helper::start().ok();
        }
        let h = helper.as_ref()?;
        let (other, mine) = parts.take().expect("the parts are taken once");
        Some(on_helper(h, other, mine))
    });
    match on_record {
        Ok(Some(done)) => done,
        // No helper (not started, borrowed, or this thread's record already destroyed).
        _ => {
            let (other, mine) = parts.take().expect("not run on the helper");
            scoped(other, mine)
        }
    }
}

/// [`beside`] on a thread started for this call.
fn scoped<A: Send, B>(
    other: impl FnOnce() -> A + Send,
    mine: impl FnOnce() -> B,
) -> (thread::Result<A>, B) {
    thread::scope(|s| {
        let handle = s.spawn(other);
        let b = mine();
        (handle.join(), b)
    })
}

/// [`beside`] on the running helper `h`.
fn on_helper<A: Send, B>(
    h: &Helper,
    other: impl FnOnce() -> A + Send,
    mine: impl FnOnce() -> B,
) -> (thread::Result<A>, B) {
    let mut slot: Option<A> = None;
    let out = &mut slot;
    let job: Box<dyn FnOnce() + Send + '_> = Box::new(move || *out = Some(other()));
    // SAFETY: the job borrows `slot` and what `other` borrows, all of which outlive this call;
    // this function neither returns nor unwinds before the helper has reported the job done
    // (`InFlight::wait`, or its `drop` on a panic of `mine`), and the helper drops the job
    // before reporting. So the erased lifetime is never outlived.
    let job: Job = unsafe { std::mem::transmute::<Box<dyn FnOnce() + Send + '_>, Job>(job) };
    if let Err(mpsc::SendError(job)) = h.jobs.send(job) {
        // The helper is gone (not expected: see the module docs): run the job on a scoped
        // thread beside `mine`, never before it on this thread, as the two parts may wait on
        // each other (the weighting on the other part, a shared scaling).
        let (first, b) = scoped(job, mine);
        return (first.map(|()| slot.expect("the job ran")), b);
    }
    let flight = InFlight {
        done: &h.done,
        waited: false,
    };
    let b = mine();
    let a = flight
        .wait()
        .map(|()| slot.expect("the helper ran the job"));
    (a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The helper runs the other part on one thread that is kept from call to call, next to the
    /// caller's part, with borrowed data; its panic comes back as the error, and the helper
    /// still serves the next call; a panic of the caller's part waits for the helper first.
    #[test]
    fn the_helper_is_kept_returns_results_and_panics() {
        let mut data = vec![1u64, 2, 3];
        let here = thread::current().id();
        let (a, b) = beside(|| (thread::current().id(), data.iter().sum::<u64>()), || 7);
        let (first, sum) = a.unwrap();
        assert_ne!(first, here);
        assert_eq!((sum, b), (6, 7));
        let (a, _) = beside(
            || {
                data.push(4);
                thread::current().id()
            },
            || (),
        );
        assert_eq!(a.unwrap(), first, "the same helper thread");
        assert_eq!(data, [1, 2, 3, 4]);
        let (a, b) = beside(|| -> u8 { panic!("in the helper") }, || 1);
        assert!(a.is_err());
        assert_eq!(b, 1);
        assert_eq!(beside(|| thread::current().id(), || ()).0.unwrap(), first);
        let slow = std::sync::atomic::AtomicBool::new(false);
        let caught = catch_unwind(AssertUnwindSafe(|| {
            beside(
                || {
                    thread::sleep(std::time::Duration::from_millis(20));
                    slow.store(true, std::sync::atomic::Ordering::SeqCst);
                },
                || panic!("in the caller"),
            )
        }));
        assert!(caught.is_err());
        assert!(
            slow.load(std::sync::atomic::Ordering::SeqCst),
            "waited for the helper"
        );
    }

    /// A helper whose thread is gone (its receiving end dropped) falls back to a scoped thread
    /// on which the other part runs beside the caller's: parts that wait on each other (as the
    /// weighting on the helper does) both finish. Run one before the other on this thread,
    /// the first would time out waiting for the second.
    #[test]
    fn a_helper_gone_runs_both_parts_at_once() {
        let (jobs, inbox) = mpsc::channel::<Job>();
        let (_report, done) = mpsc::channel();
        drop(inbox);
        thread::spawn(move || {
            HELPER.with(|cell| {
                *cell.borrow_mut() = Some(Helper {
                    jobs,
                    done,
                    pid: std::process::id(),
                })
            });
            let (to_other, from_mine) = mpsc::channel();
            let (to_mine, from_other) = mpsc::channel();
            let wait = std::time::Duration::from_secs(10);
            let here = thread::current().id();
            let (a, b) = beside(
                move || {
                    let heard = from_mine.recv_timeout(wait).is_ok();
                    let _ = to_mine.send(());
                    (heard, thread::current().id())
                },
                move || {
                    let _ = to_other.send(());
                    from_other.recv_timeout(wait).is_ok()
                },
            );
            let (heard, other_thread) = a.unwrap();
            assert!(heard && b, "the two parts ran at once");
            assert_ne!(other_thread, here);
        })
        .join()
        .unwrap();
    }

    /// A nested call (from inside the caller's part) falls back to a scoped thread and still
    /// returns both results.
    #[test]
    fn a_nested_call_uses_a_scoped_thread() {
        let (a, b) = beside(|| 1, || beside(|| 2, || 3));
        let (c, d) = b;
        assert_eq!((a.unwrap(), c.unwrap(), d), (1, 2, 3));
    }

    /// A call from another thread-local's destructor, after this thread's helper record is
    /// destroyed, runs on a scoped thread (`HELPER.with` would panic there, aborting the
    /// process).
    #[test]
    fn a_call_after_the_record_is_destroyed_uses_a_scoped_thread() {
        use std::sync::atomic::{AtomicU32, Ordering};
        static SUM: AtomicU32 = AtomicU32::new(0);
        struct AtExit;
        impl Drop for AtExit {
            fn drop(&mut self) {
                let (a, b) = beside(|| 2, || 3);
                SUM.store(a.unwrap() + b, Ordering::SeqCst);
            }
        }
        thread_local! {
            static LATE: AtExit = const { AtExit };
        }
        thread::spawn(|| {
            // Registered first, so destroyed after `HELPER` (thread-locals are destroyed in
            // the reverse order of their first use).
            LATE.with(|_| ());
            assert_eq!(beside(|| 1, || 1).0.unwrap(), 1);
        })
        .join()
        .unwrap();
        assert_eq!(SUM.load(Ordering::SeqCst), 5);
    }
}
