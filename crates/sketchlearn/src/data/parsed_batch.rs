//! A batch of parsed examples handed from a parser thread to the reader: the policy that
//! [`ReadAhead`](super::ReadAhead) (one parser thread) and
//! [`ParallelParse`](super::ParallelParse) (a worker per block of lines) share.
//!
//! - **Filling** ([`ParsedBatch::fill`]): a parser reads examples from an [`ExampleSource`] into
//!   the batch's reused buffers, each with its line and written label, and stops at the
//!   source's end or first error, which the batch carries after its examples.
//! - **Taking** ([`ParsedBatch::next_into`]): the reader swaps each example out into its own
//!   [`Example`], so the buffers it used travel back to be refilled (no allocation per example
//!   once they have grown); the batch itself goes back with `try_send` and is taken with
//!   `try_recv`, never blocking either side.
//! - **A closed channel is not an end** ([`pass_on_panic`]): a parser thread that stops without
//!   its last batch has panicked, and the reader passes the panic on instead of delivering a
//!   silently shortened stream.

use super::labeled::LabelField;
use super::read_ahead::ExampleSource;
use super::Example;
use std::thread::JoinHandle;

/// Examples `0..len` with their lines (and written labels, from a source that has them), then
/// possibly the end of the source.
pub(super) struct ParsedBatch<E> {
    examples: Vec<Example>,
    lines: Vec<u64>,
    labels: Vec<Option<LabelField>>,
    len: usize,
    /// The next example [`next_into`](ParsedBatch::next_into) gives.
    pos: usize,
    /// `Some(Ok(()))` at the end of the source, `Some(Err(e))` at its error.
    end: Option<Result<(), E>>,
}

impl<E> ParsedBatch<E> {
    /// An empty batch (its buffers grow on the first fill).
    pub(super) fn new() -> Self {
        ParsedBatch {
            examples: Vec::new(),
            lines: Vec::new(),
            labels: Vec::new(),
            len: 0,
            pos: 0,
            end: None,
        }
    }

    /// Reads up to `max` examples from `source` into the batch (replacing what it held), and
    /// the source's end or error if one comes first.
    pub(super) fn fill<S: ExampleSource<Error = E> + ?Sized>(
        &mut self,
        source: &mut S,
        max: usize,
    ) {
        self.len = 0;
        self.pos = 0;
        self.end = None;
        while self.len < max {
            let k = self.len;
            if k == self.examples.len() {
                self.examples.push(Example::default());
                self.lines.push(0);
                self.labels.push(None);
            }
            match source.read_into(&mut self.examples[k]) {
                Ok(true) => {
                    self.lines[k] = source.line();
                    self.labels[k] = source.label_field().cloned();
                    self.len += 1;
                }
                Ok(false) => {
                    self.end = Some(Ok(()));
                    return;
                }
                Err(e) => {
                    self.end = Some(Err(e));
                    return;
                }
            }
        }
    }

    /// A batch of no examples that ends with `error`.
    pub(super) fn fail(&mut self, error: E) {
        self.len = 0;
        self.pos = 0;
        self.end = Some(Err(error));
    }

    /// Swaps the next example into `ex` (and its written label into `label`) and returns its
    /// line; `None` when every example was taken.
    #[inline]
    pub(super) fn next_into(
        &mut self,
        ex: &mut Example,
        label: &mut Option<LabelField>,
    ) -> Option<u64> {
        let k = self.pos;
        if k >= self.len {
            return None;
        }
        std::mem::swap(ex, &mut self.examples[k]);
        std::mem::swap(label, &mut self.labels[k]);
        self.pos += 1;
        Some(self.lines[k])
    }

    /// What came after the examples (taken: `None` on a second call): `Some(Ok(()))` the end
    /// of the source, `Some(Err(e))` its error.
    pub(super) fn take_end(&mut self) -> Option<Result<(), E>> {
        self.end.take()
    }

    /// Whether the source ended (or failed) in this batch.
    pub(super) fn ends(&self) -> bool {
        self.end.is_some()
    }
}

/// Joins a parser thread whose channel was found closed before its last batch, and passes its
/// panic on (a thread that returned normally passes nothing).
pub(super) fn pass_on_panic(handle: Option<JoinHandle<()>>) {
    if let Some(Err(panic)) = handle.map(JoinHandle::join) {
        std::panic::resume_unwind(panic);
    }
}
