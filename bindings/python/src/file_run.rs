//! One pass of the library's training run over a file, from a given state: what
//! `LinearLearners.learn_file` and `learned_file` share.

use crate::interrupt::Interrupt;
use crate::state::State;
use crate::tally::Tally;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use sketchlearn::cancel::Cancel;
use sketchlearn::eval::Metrics;
use sketchlearn::linear::on_one_thread;
use sketchlearn::run::{self, Input, MulticlassStart, ReadOptions, Silent, Start, TrainOptions};

/// `(examples, mean progressive loss, error rate or None)` of one file.
pub type FileSummary = (u64, f64, Option<f64>);

/// A file to learn and how to read it.
pub struct FileRun {
    input: Input,
    options: TrainOptions,
    one_thread: bool,
}

/// Whether `threads` asks for the caller's thread alone (`Some(1)`); `Some(0)` is refused.
pub fn one_thread(threads: Option<usize>) -> PyResult<bool> {
    if threads == Some(0) {
        return Err(PyValueError::new_err(
            "threads must be at least 1 (or None)",
        ));
    }
    Ok(threads == Some(1))
}

/// Runs `f` on the caller's thread alone when `one_thread` ([`on_one_thread`]: no second
/// thread for the mixture's members; the same results), else as usual.
pub fn on_threads<T>(one_thread: bool, f: impl FnOnce() -> T) -> T {
    if one_thread {
        on_one_thread(f)
    } else {
        f()
    }
}

impl FileRun {
    /// `threads = Some(1)`: no read-ahead thread and no second thread for the mixture's
    /// members (the same results on the caller's thread alone); `0` is refused.
    pub fn new(
        path: &std::path::Path,
        format: &str,
        zero_based: bool,
        threads: Option<usize>,
    ) -> PyResult<Self> {
        let one_thread = one_thread(threads)?;
        let format = format
            .parse::<sketchlearn::data::Format>()
            .map_err(PyValueError::new_err)?;
        let options = TrainOptions {
            read: ReadOptions {
                format,
                zero_based,
                read_ahead: !one_thread,
                ..ReadOptions::default()
            },
            ..TrainOptions::default()
        };
        let input = Input::path(path.to_string_lossy().into_owned());
        Ok(FileRun {
            input,
            options,
            one_thread,
        })
    }

    /// `start` after the pass (the GIL released meanwhile), counted in `tally`: the
    /// binary/regression metrics and largest label (multiclass metrics are the run's own) and
    /// the refused steps. Ctrl-C stops the pass at the next row read: the state of the rows
    /// learned is returned with `KeyboardInterrupt` as the summary.
    pub fn learn(
        self,
        py: Python<'_>,
        start: State,
        tally: &mut Tally,
    ) -> PyResult<(State, PyResult<FileSummary>)> {
        let FileRun {
            input,
            options,
            one_thread,
        } = self;
        crate::file_format::check_csv_learners(start.input(), input.name(), options.read.format)?;
        let interrupt = Interrupt::new();
        let poll = || interrupt.poll();
        let cancel = Cancel::new(&poll);
        let pass = || run_once(input, start, &options, cancel);
        let outcome = py.detach(|| on_threads(one_thread, pass));
        match outcome {
            Ok(done) => {
                tally.refused += done.refused;
                if let Some((m, label_max)) = &done.metrics {
                    tally.metrics.merge(m);
                    tally.label_max = tally.label_max.max(*label_max);
                }
                let summary = interrupt.check().map(|()| done.summary);
                Ok((done.state, summary))
            }
            Err(e) => Err(interrupt.raise_or(PyValueError::new_err(e))),
        }
    }
}

/// What one pass gave.
struct Done {
    state: State,
    summary: FileSummary,
    refused: u64,
    /// Binary/regression metrics and largest label (`None` for a multiclass model).
    metrics: Option<(Metrics, f64)>,
}

/// The training run (binary/regression or multiclass, as `state`) over `input`.
fn run_once(
    input: Input,
    state: State,
    options: &TrainOptions,
    cancel: Cancel<'_>,
) -> Result<Done, String> {
    match state {
        State::Linear(model) => {
            let start = Start::Resume(model);
            let out = run::train_cancellable(input, start, options, &mut Silent, cancel)
                .map_err(|e| e.to_string())?;
            let m = &out.metrics;
            Ok(Done {
                summary: (out.examples, m.mean_loss(), m.error_rate()),
                refused: out.refused_steps,
                metrics: Some((out.metrics.clone(), out.label_max)),
                state: State::Linear(out.model),
            })
        }
        State::Multi(model) => {
            let start = MulticlassStart::Resume(model);
            let out = run::train_multiclass_cancellable(input, start, options, &mut (), cancel)
                .map_err(|e| e.to_string())?;
            let m = &out.metrics;
            Ok(Done {
                summary: (out.examples, m.log_loss(), m.error_rate()),
                refused: out.refused_steps,
                metrics: None,
                state: State::Multi(out.model),
            })
        }
    }
}
