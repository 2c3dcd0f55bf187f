//! One progressive-validation pass with the library's policies: [`progressive_pass`] is
//! [`eval::progressive_with`](crate::eval::progressive_with) over a learner with the
//! refused-step policy, reporting to an [`Observer`], in batches of examples
//! ([`OnlineLearner::learn_batch`]: the default mixture's members learn on two threads); [`train`](super::train) runs it once per pass, and front ends with their own
//! example source (e.g. `sketchlearn fm`) call it directly.

use super::{Observer, Tolerant};
use crate::eval::{EvalError, Metrics};
use crate::linear::OnlineLearner;
use crate::loss::Loss;
use crate::Example;

/// What one pass did besides the metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PassOutcome {
    /// Examples read.
    pub examples: u64,
    /// Steps refused by the learner (weights left unchanged, the example scored anyway).
    pub refused_steps: u64,
    /// The largest label magnitude seen (for [`divergence_warning`](super::divergence_warning)).
    pub label_max: f64,
}

/// Progressive validation of `learner` over the examples `next` yields (see
/// [`progressive_with`]) with the refused-step policy ([`learn_or_refuse`](super::learn_or_refuse)):
/// every prediction and due progress row goes to `observer`, `metrics` accumulates (across
/// calls: rows follow its cumulative count).
///
/// ```
/// use sketchlearn::eval::Metrics;
/// use sketchlearn::linear::LearnerConfig;
/// use sketchlearn::loss::Loss;
/// use sketchlearn::run::{progressive_pass, Silent};
/// use sketchlearn::Example;
/// let data: Vec<Example> = (0..50)
///     .map(|i| {
///         let y = if i % 2 == 0 { 1.0 } else { -1.0 };
///         Example { label: y, weight: 1.0, indices: vec![0, 1], values: vec![y, 1.0] }
///     })
///     .collect();
/// let mut learner = LearnerConfig::default().build(2).unwrap();
/// let mut metrics = Metrics::new();
/// let mut rows = data.iter();
/// let next = |ex: &mut Example| {
///     Ok::<_, std::convert::Infallible>(rows.next().map(|e| ex.clone_from(e)).is_some())
/// };
/// let pass = progressive_pass(&mut learner, next, Loss::Logistic, &mut metrics, &mut Silent)?;
/// assert_eq!((pass.examples, pass.refused_steps, pass.label_max), (50, 0, 1.0));
/// assert!(metrics.error_rate().unwrap() < 0.1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn progressive_pass<L, E>(
    learner: &mut L,
    next: impl FnMut(&mut Example) -> Result<bool, E>,
    loss: Loss,
    metrics: &mut Metrics,
    observer: &mut dyn Observer,
) -> Result<PassOutcome, EvalError<E>>
where
    L: OnlineLearner + ?Sized,
    E: std::error::Error + 'static,
{
    progressive_pass_in_batches(learner, next, loss, metrics, observer, BATCH)
}

/// [`progressive_pass`] reading `batch` examples before each
/// [`OnlineLearner::learn_batch`]: 1 when `next` must see the weights of every example learned
/// before it (the hold-out split predicts its examples in `next`; with larger batches they would
/// be predicted with weights up to a batch old).
pub(crate) fn progressive_pass_in_batches<L, E>(
    learner: &mut L,
    mut next: impl FnMut(&mut Example) -> Result<bool, E>,
    loss: Loss,
    metrics: &mut Metrics,
    observer: &mut dyn Observer,
    batch_size: usize,
) -> Result<PassOutcome, EvalError<E>>
where
    L: OnlineLearner + ?Sized,
    E: std::error::Error + 'static,
{
    let mut label_max = 0.0f64;
    let mut tolerant = Tolerant::new(learner);
    let mut batch: Vec<Example> = Vec::new();
    let mut preds = Vec::new();
    let mut examples = 0u64;
    loop {
        let (filled, end) = fill(&mut batch, &mut next, batch_size);
        let learned = tolerant.learn_batch(&batch[..filled], &mut preds);
        for (ex, &p) in batch.iter().zip(&preds) {
            examples += 1;
            label_max = label_max.max(ex.label.abs());
            observer.prediction(p);
            let features = ex.indices.len();
            if let Some(row) = metrics.add_with_progress(p, ex.label, ex.weight, loss, features) {
                observer.progress(&row);
            }
        }
        if let Err(source) = learned {
            let example = examples + 1;
            return Err(EvalError::Learn { example, source });
        }
        match end {
            BatchEnd::Full => {}
            BatchEnd::Exhausted => break,
            BatchEnd::Failed(e) => return Err(EvalError::Source(e)),
        }
    }
    Ok(PassOutcome {
        examples,
        refused_steps: tolerant.refused,
        label_max,
    })
}

/// Examples learned per [`OnlineLearner::learn_batch`] call: enough to amortise a thread start
/// over a batch (a mixture's members learn on two threads), few enough that progress rows and
/// predictions follow the input closely.
const BATCH: usize = 256;

/// How a batch ended.
enum BatchEnd<E> {
    /// Full: more may follow.
    Full,
    /// The source has no more examples.
    Exhausted,
    /// The source failed after the examples read (which are learned first, as one example at a
    /// time would have been).
    Failed(E),
}

/// Reads up to `size` examples into `batch`'s first slots (reusing their buffers): how many,
/// and why it stopped.
fn fill<E>(
    batch: &mut Vec<Example>,
    next: &mut impl FnMut(&mut Example) -> Result<bool, E>,
    size: usize,
) -> (usize, BatchEnd<E>) {
    for filled in 0..size.max(1) {
        if filled == batch.len() {
            batch.push(Example::default());
        }
        let ex = &mut batch[filled];
        ex.clear();
        match next(ex) {
            Ok(true) => {}
            Ok(false) => return (filled, BatchEnd::Exhausted),
            Err(e) => return (filled, BatchEnd::Failed(e)),
        }
    }
    (size.max(1), BatchEnd::Full)
}

/// The input lines of the most recent examples read, so that an error met while learning a
/// batch names the line of the example that caused it (the reader is by then up to a batch
/// further on). Keeps the last `2·BATCH`: the failing example is in the batch being learned.
pub(crate) struct RecentLines {
    lines: Vec<u64>,
    read: u64,
}

impl RecentLines {
    pub(crate) fn new() -> Self {
        RecentLines {
            lines: vec![0; 2 * BATCH],
            read: 0,
        }
    }

    /// Records the line of the next example read.
    pub(crate) fn push(&mut self, line: u64) {
        let slot = (self.read % self.lines.len() as u64) as usize;
        self.lines[slot] = line;
        self.read += 1;
    }

    /// The line of example `example` (1-based, in reading order), if still kept.
    pub(crate) fn line_of(&self, example: u64) -> Option<u64> {
        let cap = self.lines.len() as u64;
        (example >= 1 && example <= self.read && self.read - example < cap)
            .then(|| self.lines[((example - 1) % cap) as usize])
    }
}
