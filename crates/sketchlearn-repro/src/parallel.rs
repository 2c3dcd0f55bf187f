//! The experiments' runs spread over the (shared) machine's cores.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Worker threads (the machine has 2 cores, shared).
pub const MAX_THREADS: usize = 2;

/// `f` over `jobs` on up to [`MAX_THREADS`] scoped threads; results in job order. Prints a
/// progress line every `report` jobs.
pub fn par_map<J: Sync, R: Send>(jobs: &[J], report: usize, f: impl Fn(&J) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, MAX_THREADS)
        .min(jobs.len().max(1));
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..jobs.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= jobs.len() {
                    break;
                }
                let r = f(&jobs[i]);
                results.lock().expect("a worker panicked")[i] = Some(r);
                let k = done.fetch_add(1, Ordering::Relaxed) + 1;
                if report > 0 && (k % report == 0 || k == jobs.len()) {
                    eprintln!("  {k}/{} runs done", jobs.len());
                }
            });
        }
    });
    results
        .into_inner()
        .expect("a worker panicked")
        .into_iter()
        .map(|r| r.expect("every job ran"))
        .collect()
}
