//! Parsing on a second thread while the learner learns ("read-ahead").
//!
//! Text input is expensive to parse: a VW line of r8_earn_vs_rest (60 features) costs about
//! 20 000 instructions (UTF-8 check, float parsing, MurmurHash3), more than sparse Oja-SON spends
//! learning from it. Vowpal Wabbit parses on its own thread for this reason. [`ReadAhead`] does
//! the same for any [`ExampleSource`]: a background thread fills batches of [`BATCH`] examples
//! and hands them over through a bounded channel ([`DEPTH`] batches in flight), the caller takes
//! the examples one by one with [`ReadAhead::read_into`], exactly as from the source itself, and
//! the used example buffers travel back to the parser to be refilled (no allocation per example
//! once the buffers have grown).
//!
//! **Same stream, same errors.** The examples arrive in file order, unchanged; a parse error is
//! returned after every example before it, as the source would return it, and the parser
//! stops there. [`ReadAhead::line`] is the line of the last example returned, for messages about
//! it (the source itself is ahead). Dropping the `ReadAhead` early stops the parser at its next
//! hand-over.
//!
//! The hand-overs are `ParsedBatch`es (`data/parsed_batch.rs`), as
//! [`ParallelParse`](super::ParallelParse)'s workers' results are (one policy for filling,
//! taking and a parser's panic).
//!
//! ```
//! use std::io::Cursor;
//! use sketchlearn::data::{ReadAhead, LibsvmOptions, LibsvmReader};
//! use sketchlearn::Example;
//! let text = "1 1:0.5\n-1 2:1\n1 3:x\n";
//! let reader = LibsvmReader::new(Cursor::new(text), "t.libsvm", LibsvmOptions::default());
//! let mut ahead = ReadAhead::new(reader);
//! let mut ex = Example::default();
//! assert!(ahead.read_into(&mut ex).unwrap());
//! assert_eq!((ex.label, ahead.line()), (1.0, 1));
//! assert!(ahead.read_into(&mut ex).unwrap());
//! assert_eq!((ex.label, ahead.line()), (-1.0, 2));
//! let err = ahead.read_into(&mut ex).unwrap_err();
//! assert_eq!(err.to_string(), r#"t.libsvm:3:5: cannot parse value "x""#);
//! ```

use super::labeled::LabelField;
use super::parsed_batch::{pass_on_panic, ParsedBatch};
use super::{Example, LibsvmReader, ParseError, VwReader};
use std::io::BufRead;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

/// Examples per hand-over.
pub const BATCH: usize = 256;

/// Batches parsed ahead of the learner (the channel's bound).
pub const DEPTH: usize = 4;

/// A reader of examples, one at a time into a reused [`Example`].
pub trait ExampleSource {
    /// The reader's error.
    type Error;
    /// Reads the next example into `ex` (returns `Ok(false)` at the end).
    fn read_into(&mut self, ex: &mut Example) -> Result<bool, Self::Error>;
    /// The 1-based line of the last example read (0 before the first).
    fn line(&self) -> u64;
    /// The label of the last example read as its source wrote it, when that is more than the
    /// number in [`Example::label`]: a CSV label column's field ([`LabelField`]: a name, or a
    /// number, and its column). `None` (the default): the label is `Example::label`.
    fn label_field(&self) -> Option<&LabelField> {
        None
    }
}

impl<R: BufRead> ExampleSource for LibsvmReader<R> {
    type Error = ParseError;
    fn read_into(&mut self, ex: &mut Example) -> Result<bool, ParseError> {
        LibsvmReader::read_into(self, ex)
    }
    fn line(&self) -> u64 {
        LibsvmReader::line(self)
    }
}

impl<R: BufRead> ExampleSource for VwReader<R> {
    type Error = ParseError;
    fn read_into(&mut self, ex: &mut Example) -> Result<bool, ParseError> {
        VwReader::read_into(self, ex)
    }
    fn line(&self) -> u64 {
        VwReader::line(self)
    }
}

/// A source parsed on a background thread (see the module documentation).
pub struct ReadAhead<E> {
    handle: Option<std::thread::JoinHandle<()>>,
    rx: Option<Receiver<ParsedBatch<E>>>,
    back: Option<SyncSender<ParsedBatch<E>>>,
    cur: Option<ParsedBatch<E>>,
    line: u64,
    label: Option<LabelField>,
}

impl<E: Send + 'static> ReadAhead<E> {
    /// Starts the parser thread on `source`.
    pub fn new<S>(mut source: S) -> Self
    where
        S: ExampleSource<Error = E> + Send + 'static,
    {
        let (tx, rx) = sync_channel::<ParsedBatch<E>>(DEPTH);
        // Used batches come back here; DEPTH + 2 can exist (in the channel, being filled, being
        // read), so the return channel never blocks the reader.
        let (back, spare) = sync_channel::<ParsedBatch<E>>(DEPTH + 2);
        let handle = std::thread::spawn(move || {
            let mut made = 0;
            loop {
                let mut batch = match spare.try_recv() {
                    Ok(b) => b,
                    Err(_) if made < DEPTH + 2 => {
                        made += 1;
                        ParsedBatch::new()
                    }
                    // Every batch is out: wait for one (or stop if the reader is gone).
                    Err(_) => match spare.recv() {
                        Ok(b) => b,
                        Err(_) => return,
                    },
                };
                batch.fill(&mut source, BATCH);
                let last = batch.ends();
                if tx.send(batch).is_err() || last {
                    return;
                }
            }
        });
        ReadAhead {
            handle: Some(handle),
            rx: Some(rx),
            back: Some(back),
            cur: None,
            line: 0,
            label: None,
        }
    }

    /// Reads the next example into `ex`, as [`ExampleSource::read_into`] (`ex`'s old buffers go
    /// back to the parser).
    pub fn read_into(&mut self, ex: &mut Example) -> Result<bool, E> {
        loop {
            if let Some(b) = self.cur.as_mut() {
                if let Some(line) = b.next_into(ex, &mut self.label) {
                    self.line = line;
                    return Ok(true);
                }
                if let Some(end) = b.take_end() {
                    // Stay at the end: later calls return `Ok(false)` (the parser has returned).
                    self.cur = None;
                    self.rx = None;
                    return end.map(|()| false);
                }
                let used = self.cur.take().expect("checked above");
                if let Some(back) = &self.back {
                    // The parser may have stopped; a lost batch is harmless then.
                    let _ = back.try_send(used);
                }
            }
            let Some(rx) = &self.rx else {
                return Ok(false);
            };
            match rx.recv() {
                Ok(b) => self.cur = Some(b),
                // The parser ended without its final batch: only a panic does that.
                Err(_) => {
                    self.rx = None;
                    pass_on_panic(self.handle.take());
                    return Ok(false);
                }
            }
        }
    }

    /// The line of the last example returned (0 before the first).
    pub fn line(&self) -> u64 {
        self.line
    }
}

/// A `ReadAhead` is itself a source, so callers can hold either behind one
/// `dyn ExampleSource` (e.g. a command-line switch between the two).
impl<E: Send + 'static> ExampleSource for ReadAhead<E> {
    type Error = E;
    fn read_into(&mut self, ex: &mut Example) -> Result<bool, E> {
        ReadAhead::read_into(self, ex)
    }
    fn line(&self) -> u64 {
        ReadAhead::line(self)
    }
    fn label_field(&self) -> Option<&LabelField> {
        self.label.as_ref()
    }
}

impl<E> Drop for ReadAhead<E> {
    fn drop(&mut self) {
        // Closing both channels makes the parser's next send or wait fail, and it returns (not
        // joined: it may be blocked reading a pipe).
        self.rx.take();
        self.back.take();
        self.handle.take();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{LibsvmOptions, VwOptions};
    use std::io::Cursor;

    fn libsvm_text(n: usize) -> String {
        (0..n)
            .map(|k| {
                let mut line = format!("{}", if k % 3 == 0 { 1 } else { -1 });
                for j in 0..(k % 7) {
                    line.push_str(&format!(" {}:{}", 1 + j * 5 + k % 5, 0.25 * (j + k) as f64));
                }
                // Blank and comment lines shift the line numbers.
                if k % 50 == 7 {
                    line.push_str("\n\n# comment");
                }
                line + "\n"
            })
            .collect()
    }

    fn direct(text: &str) -> (Vec<Example>, Vec<u64>, Option<String>) {
        let mut r = LibsvmReader::new(Cursor::new(text.to_string()), "t", LibsvmOptions::default());
        let (mut out, mut lines) = (Vec::new(), Vec::new());
        let mut ex = Example::default();
        loop {
            match r.read_into(&mut ex) {
                Ok(true) => {
                    out.push(ex.clone());
                    lines.push(r.line());
                }
                Ok(false) => return (out, lines, None),
                Err(e) => return (out, lines, Some(e.to_string())),
            }
        }
    }

    fn ahead(text: &str) -> (Vec<Example>, Vec<u64>, Option<String>) {
        let r = LibsvmReader::new(Cursor::new(text.to_string()), "t", LibsvmOptions::default());
        let mut a = ReadAhead::new(r);
        let (mut out, mut lines) = (Vec::new(), Vec::new());
        let mut ex = Example::default();
        loop {
            match a.read_into(&mut ex) {
                Ok(true) => {
                    out.push(ex.clone());
                    lines.push(a.line());
                }
                Ok(false) => {
                    // The end is sticky.
                    assert!(!a.read_into(&mut ex).unwrap());
                    return (out, lines, None);
                }
                Err(e) => return (out, lines, Some(e.to_string())),
            }
        }
    }

    #[test]
    fn same_examples_and_lines_as_the_source() {
        // Around the batch size: empty, partial, exact and several batches.
        for n in [
            0,
            1,
            BATCH - 1,
            BATCH,
            BATCH + 1,
            5 * BATCH + 17,
            40 * BATCH,
        ] {
            let text = libsvm_text(n);
            let (want, want_lines, want_err) = direct(&text);
            let (got, got_lines, got_err) = ahead(&text);
            assert_eq!(got.len(), n);
            assert_eq!(got, want, "n = {n}");
            assert_eq!(got_lines, want_lines, "n = {n}");
            assert_eq!((got_err, want_err), (None, None));
        }
    }

    #[test]
    fn a_parse_error_comes_after_every_example_before_it() {
        for bad_at in [0, 3, BATCH - 1, BATCH, 3 * BATCH + 5] {
            let mut text = libsvm_text(bad_at);
            text.push_str("1 4:oops\n");
            text.push_str(&libsvm_text(10));
            let (want, want_lines, want_err) = direct(&text);
            let (got, got_lines, got_err) = ahead(&text);
            assert_eq!(got.len(), bad_at);
            assert_eq!(got, want);
            assert_eq!(got_lines, want_lines);
            assert!(want_err.as_deref().unwrap().contains("oops"));
            assert_eq!(got_err, want_err);
        }
    }

    /// A source that panics after a few examples.
    struct Panicky(u64);
    impl ExampleSource for Panicky {
        type Error = ParseError;
        fn read_into(&mut self, ex: &mut Example) -> Result<bool, ParseError> {
            self.0 += 1;
            assert!(self.0 <= 3, "source broke");
            ex.label = 1.0;
            Ok(true)
        }
        fn line(&self) -> u64 {
            self.0
        }
    }

    #[test]
    fn a_panicking_parser_is_not_a_short_stream() {
        let result = std::panic::catch_unwind(|| {
            let mut a = ReadAhead::new(Panicky(0));
            let mut ex = Example::default();
            while a.read_into(&mut ex).unwrap() {}
        });
        let panic = result.expect_err("the parser's panic reaches the reader");
        let msg = panic
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| panic.downcast_ref::<String>().map(String::as_str));
        assert_eq!(msg, Some("source broke"));
    }

    #[test]
    fn vw_input_and_early_drop() {
        let text: String = (0..3 * BATCH)
            .map(|k| {
                format!(
                    "{} |f a{} b:{}\n",
                    if k % 2 == 0 { 1 } else { -1 },
                    k % 9,
                    k
                )
            })
            .collect();
        let vw = |t: &str| {
            VwReader::new(Cursor::new(t.to_string()), "t.vw", VwOptions { bits: 18 }).unwrap()
        };
        let mut direct = vw(&text);
        let mut a = ReadAhead::new(vw(&text));
        let (mut e1, mut e2) = (Example::default(), Example::default());
        for _ in 0..BATCH + 3 {
            assert!(direct.read_into(&mut e1).unwrap());
            assert!(a.read_into(&mut e2).unwrap());
            assert_eq!(e1, e2);
            assert_eq!(a.line(), direct.line());
        }
        // Dropping with batches in flight returns at once and stops the parser.
        drop(a);
    }
}
