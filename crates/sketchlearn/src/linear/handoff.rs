//! A one-way hand-over between the two threads of a mixture's batch (issue 27): the scaled
//! rows (`mixture_batch.rs`), the runs of predictions for the weighting (`mixture_batch.rs`,
//! `mixture_lone.rs`).
//!
//! These went through `std::sync::mpsc` channels, whose blocking `recv` registers the waiting
//! thread under a mutex that the sending side takes too: on a9a's default run (`perf record -e
//! syscalls:sys_enter_futex --call-graph dwarf sketchlearn train --quiet a9a.libsvm`, 29 Nov)
//! the caller made about two `futex` calls per hand-over that found the other thread waiting
//! (the wake, and the release of that contended mutex), and the waiting thread one more (the
//! contended lock) besides its own wait — ~1,700 of the process's ~3,400 `futex` calls. On this
//! machine (a virtual one) a send that wakes a waiting thread costs the sender ~7.5 µs.
//!
//! Here the values still travel in a channel, but nobody blocks inside it: the taker polls it
//! ([`Receiver::try_recv`]) and, when it is empty, parks its thread ([`std::thread::park`]);
//! the giver sends, then unparks the taker's thread if it has said it waits. An unpark of a
//! thread that is not parked is an atomic swap, no system call; so a hand-over costs a system
//! call only when it actually wakes a parked thread, and there is no lock to contend.
//!
//! **No lost wake-up.** The taker records its thread before its last look at the channel, the
//! giver sends before it looks for that record, and a sequentially consistent fence separates
//! the store from the load on each side: either the taker's last look finds the value, or the
//! giver finds the record and unparks (a park after an unpark returns at once: the token).
//! Spurious returns from `park` (another unpark's token, the platform) are looped over. The end
//! of the stream (the giver dropped) wakes the taker the same way.
//!
//! Which thread computes what is unchanged, so no result changes.

use std::sync::atomic::{fence, Ordering};
use std::sync::mpsc::{self, Receiver, SendError, Sender, TryRecvError};
use std::sync::{Arc, OnceLock};
use std::thread::{self, Thread};

/// A new hand-over: the giving end and the taking end.
pub(super) fn handoff<T>() -> (Giver<T>, Taker<T>) {
    let (tx, rx) = mpsc::channel();
    let waiter = Arc::new(OnceLock::new());
    (
        Giver {
            tx: Some(tx),
            waiter: Arc::clone(&waiter),
        },
        Taker { rx, waiter },
    )
}

/// The giving end of a [`handoff`].
pub(super) struct Giver<T> {
    tx: Option<Sender<T>>,
    /// The taker's thread, once it has waited.
    waiter: Arc<OnceLock<Thread>>,
}

impl<T> Giver<T> {
    /// Hands `value` over (an error when the taker is gone), waking the taker if it waits.
    pub(super) fn send(&self, value: T) -> Result<(), SendError<T>> {
        self.tx
            .as_ref()
            .expect("present until dropped")
            .send(value)?;
        self.wake();
        Ok(())
    }

    fn wake(&self) {
        fence(Ordering::SeqCst);
        if let Some(t) = self.waiter.get() {
            t.unpark();
        }
    }
}

impl<T> Drop for Giver<T> {
    /// Ends the stream: a waiting taker wakes and finds it ended.
    fn drop(&mut self) {
        self.tx.take();
        self.wake();
    }
}

/// The taking end of a [`handoff`]; it waits on one thread only (the first that waits).
pub(super) struct Taker<T> {
    rx: Receiver<T>,
    waiter: Arc<OnceLock<Thread>>,
}

impl<T> Taker<T> {
    /// The next value, waiting for it; `None` once the giver is dropped and every value taken.
    pub(super) fn recv(&self) -> Option<T> {
        loop {
            match self.rx.try_recv() {
                Ok(v) => return Some(v),
                Err(TryRecvError::Disconnected) => return None,
                Err(TryRecvError::Empty) => {}
            }
            let me = self.waiter.get_or_init(thread::current);
            debug_assert_eq!(me.id(), thread::current().id(), "one taking thread");
            fence(Ordering::SeqCst);
            match self.rx.try_recv() {
                Ok(v) => return Some(v),
                Err(TryRecvError::Disconnected) => return None,
                Err(TryRecvError::Empty) => thread::park(),
            }
        }
    }
}

impl<T> Iterator for Taker<T> {
    type Item = T;
    fn next(&mut self) -> Option<T> {
        self.recv()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Values arrive in order across threads, with the taker waiting (parked) for most of them
    /// and the giver sometimes ahead; the end of the stream ends the taking.
    #[test]
    fn values_arrive_in_order_and_the_end_ends_the_wait() {
        for pause_every in [1, 7, 1000] {
            let (give, take) = handoff::<u32>();
            let giver = thread::spawn(move || {
                for i in 0..2000 {
                    if i % pause_every == 0 {
                        thread::sleep(Duration::from_micros(50));
                    }
                    give.send(i).unwrap();
                }
            });
            let got: Vec<u32> = take.collect();
            giver.join().unwrap();
            assert_eq!(got, (0..2000).collect::<Vec<_>>());
        }
    }

    /// A taker that waits before anything is sent is woken by the giver's drop alone.
    #[test]
    fn a_dropped_giver_wakes_a_waiting_taker() {
        let (give, take) = handoff::<u8>();
        let giver = thread::spawn(move || {
            thread::sleep(Duration::from_millis(20));
            drop(give);
        });
        assert_eq!(take.recv(), None);
        giver.join().unwrap();
    }

    /// Sending to a dropped taker is an error carrying the value back.
    #[test]
    fn sending_to_a_dropped_taker_fails() {
        let (give, take) = handoff::<u8>();
        drop(take);
        assert_eq!(give.send(3).unwrap_err().0, 3);
    }
}
