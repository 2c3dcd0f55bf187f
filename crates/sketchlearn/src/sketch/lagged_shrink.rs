//! The lagged FD shrink: the shrink of a full buffer computed off the learning thread while
//! the next `k` rows are appended (PROTOTYPE, stage 1 of issue #27 item 3).
//!
//! [`shrink_rows`] is FD's shrink (Liberty 2013; Ghashami et al. 2016, Alg. 2 with an
//! `ℓ`-row buffer) as a pure function of the `ℓ` full rows and their Gram matrix; it also
//! returns the Gram matrix of the kept rows (what the FD-SON curvature recomputes after a
//! shrink). [`Pending`] runs it on a shared worker thread and is joined after `k` appends.

use super::fd_products;
use super::frequent_directions::shrink_rule;
use super::SketchError;
use crate::small_sym_eigen::FdEigen;
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

/// The outcome of a shrink of a full buffer.
#[derive(Debug)]
pub(crate) struct ShrinkOut {
    /// The kept rows, `keep × d` row-major.
    pub rows: Vec<f64>,
    pub keep: usize,
    pub delta: f64,
    /// `BBᵀ` of the kept rows (`keep × keep`), as `fd_products::gram` forms it.
    pub gram: Vec<f64>,
}

/// FD's shrink of the `l` rows `rows` (`l × d`) with Gram matrix `gram` (`l × l`) by
/// `δ = λ_m`: the same operations as `FrequentDirections::shrink`, so the same bits.
pub(crate) fn shrink_rows(
    rows: &[f64],
    gram: &[f64],
    l: usize,
    d: usize,
    m: usize,
    eig: &mut FdEigen,
) -> Result<ShrinkOut, SketchError> {
    eig.compute(&gram[..l * l])?;
    let lambda = eig.values();
    let (delta, keep) = shrink_rule(lambda, m);
    let mut out = vec![0.0; keep * d];
    fd_products::rotate(eig.vectors(), l, keep, rows, d, &mut out);
    for i in 0..keep {
        let s = (1.0 - delta / lambda[i]).max(0.0).sqrt();
        out[i * d..(i + 1) * d].iter_mut().for_each(|x| *x *= s);
    }
    let mut g = vec![0.0; keep * keep];
    fd_products::gram(&out, keep, d, &mut g, keep);
    Ok(ShrinkOut {
        rows: out,
        keep,
        delta,
        gram: g,
    })
}

type Job = Box<dyn FnOnce() + Send>;

/// The shared shrink worker (one thread, started on first use), or `None` if it could not be
/// started (then every shrink runs inline at its join).
fn worker() -> Option<&'static Mutex<Sender<Job>>> {
    static WORKER: OnceLock<Option<Mutex<Sender<Job>>>> = OnceLock::new();
    WORKER
        .get_or_init(|| {
            let (tx, rx) = channel::<Job>();
            std::thread::Builder::new()
                .name("fd-shrink".into())
                .spawn(move || {
                    for job in rx {
                        job();
                    }
                })
                .ok()
                .map(|_| Mutex::new(tx))
        })
        .as_ref()
}

thread_local! {
    static EIG: std::cell::RefCell<Option<FdEigen>> = const { std::cell::RefCell::new(None) };
}

/// Runs `shrink_rows` with this thread's eigen workspace.
pub(crate) fn shrink_rows_here(
    rows: &[f64],
    gram: &[f64],
    l: usize,
    d: usize,
    m: usize,
) -> Result<ShrinkOut, SketchError> {
    EIG.with(|cell| {
        let mut slot = cell.borrow_mut();
        let eig = match &mut *slot {
            Some(e) if e.size() == l => e,
            s => s.insert(FdEigen::new(l)),
        };
        shrink_rows(rows, gram, l, d, m, eig)
    })
}

type Outcome = Result<ShrinkOut, SketchError>;

/// A shrink running on the worker.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    done: Mutex<Option<Outcome>>,
    ready: Condvar,
}

impl Pending {
    /// Starts the shrink of `rows`/`gram` on the worker; `None` if there is none.
    pub(crate) fn start(
        rows: Vec<f64>,
        gram: Vec<f64>,
        l: usize,
        d: usize,
        m: usize,
    ) -> Option<Arc<Pending>> {
        static INLINE: OnceLock<bool> = OnceLock::new();
        if *INLINE.get_or_init(|| std::env::var_os("SKETCHLEARN_FD_LAG_INLINE").is_some()) {
            return None;
        }
        let worker = worker()?;
        let p = Arc::new(Pending::default());
        let q = Arc::clone(&p);
        let job: Job = Box::new(move || {
            let out = shrink_rows_here(&rows, &gram, l, d, m);
            *q.done.lock().unwrap() = Some(out);
            q.ready.notify_one();
        });
        worker.lock().ok()?.send(job).ok()?;
        Some(p)
    }

    /// Waits for the outcome.
    pub(crate) fn wait(&self) -> Outcome {
        static WAITS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        static JOINS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let mut g = self.done.lock().unwrap();
        let j = JOINS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        if g.is_none() {
            WAITS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        if j % 1000 == 0 && std::env::var_os("SKETCHLEARN_FD_LAG_DEBUG").is_some() {
            eprintln!(
                "joins {j} waited {}",
                WAITS.load(std::sync::atomic::Ordering::Relaxed)
            );
        }
        loop {
            if let Some(out) = g.take() {
                return out;
            }
            g = self.ready.wait(g).unwrap();
        }
    }
}
