//! LIBSVM text parsed on several threads, the examples delivered in file order (issue 27).
//!
//! On dense text (1000 numbers a line) parsing costs more than learning, and one parser thread
//! ([`ReadAhead`](super::ReadAhead)) leaves the learner waiting. [`ParallelParse`] cuts the
//! input into **blocks of whole lines** and parses them on `workers` threads:
//!
//! - a *cutter* thread reads the input into blocks of about `block` bytes, each ending at a
//!   newline (a line longer than `block` is one block; the last line may lack its newline), and
//!   sends block `k` to worker `k mod workers` through that worker's bounded channel;
//! - each *worker* parses its blocks in the order it receives them with an ordinary
//!   [`LibsvmReader`] over the block (so every example and every error is the one-thread
//!   reader's), and sends one result per block through its own bounded channel: the examples,
//!   their lines within the block, the block's number of lines and the error it stopped at;
//! - the consumer ([`ParallelParse::read_into`]) takes the results of blocks `0, 1, 2, …` from
//!   workers `0, 1, …, 0, 1, …` in turn, adding the lines of the blocks before to every line
//!   number.
//!
//! **No deadlock.** Every channel is bounded and each block gives exactly one result. When the
//! consumer waits for block `k` from worker `j`, the cutter has sent every block before the one
//! it may be blocked on, so block `k` is in `j`'s queue or being parsed; `j`'s result queue
//! holds only blocks `≥ k` (the consumer took every earlier one), so if it is full it holds
//! block `k`, else `j` can send it. The buffers going back for reuse are sent with `try_send`
//! (dropped when their queue is full) and taken with `try_recv`: they never block.
//!
//! **Same stream, same errors, same bits.** The examples are the one-thread reader's, in file
//! order; a parse error comes after every example before it, with its line in the file, and
//! the stream ends there; an I/O error is reported at the line being read, as
//! [`LibsvmReader`] reports it. The number of workers changes only who parses a block, never
//! what is delivered. Memory is bounded: at most a few blocks per worker are in flight.
//!
//! A worker's result is a `ParsedBatch` (`data/parsed_batch.rs`), as
//! [`ReadAhead`](super::ReadAhead)'s hand-overs are: filled by the block's reader to its end or
//! first error, its examples swapped out by the consumer, a worker's panic passed on.

use super::error::ParseError;
use super::labeled::LabelField;
use super::parsed_batch::{pass_on_panic, ParsedBatch};
use super::read_ahead::ExampleSource;
use super::{Example, LibsvmOptions, LibsvmReader};
use std::io::{BufRead, Cursor, Read};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

/// Bytes per block (whole lines: a block ends at the first newline past this size).
pub const BLOCK: usize = 256 << 10;

/// The shortest first line (in bytes) for which `train` and `test` parse LIBSVM text on
/// several threads ([`ParallelParse::pays`]). Measured 2026-11-27 on the shared 2-core machine:
/// the dense stream (d = 1000, ~11 KB a line, Oja-SON m=10) is parse-bound and gains; a9a
/// (~150 bytes a line) under the default mixture, whose members learn on two threads of their
/// own, lost wall-clock time (threads contending for 2 cores, the examples' buffers freed across
/// threads), so short lines keep the one parser thread ([`ReadAhead`](super::ReadAhead)).
pub const LONG_LINE: usize = 4096;

/// Blocks queued for each worker, and results queued from each worker.
const QUEUE: usize = 2;

/// A block of whole lines for a worker, or the I/O error the cutter stopped at.
enum Block {
    Lines { bytes: Vec<u8>, first: bool },
    Failed(std::io::Error),
}

/// A worker's result for one block: its examples with their lines within the block (1-based)
/// and the parse or I/O error it stopped at (its line within the block: the stream ends there).
struct Parsed {
    batch: ParsedBatch<ParseError>,
    /// The number of lines of the block (read to its end unless it stopped at an error).
    block_lines: u64,
}

/// LIBSVM text parsed on worker threads, delivered in order (see the [module](self) docs).
pub struct ParallelParse {
    results: Vec<Receiver<Parsed>>,
    spares: Vec<SyncSender<Parsed>>,
    cutter: Option<JoinHandle<()>>,
    workers: Vec<Option<JoinHandle<()>>>,
    next: usize,
    cur: Option<Parsed>,
    lines_before: u64,
    line: u64,
    label: Option<LabelField>,
    ended: bool,
}

impl ParallelParse {
    /// Parses `reader` (fresh: nothing read yet) on `workers` threads (at least 1) in blocks of
    /// about `block` bytes (at least 1).
    pub fn new<R: BufRead + Send + 'static>(
        reader: LibsvmReader<R>,
        workers: usize,
        block: usize,
    ) -> Self {
        let (workers, block) = (workers.max(1), block.max(1));
        let name = reader.source_name().to_owned();
        let options = reader.options();
        let input = reader.into_inner();
        let (used_tx, used_rx) = sync_channel::<Vec<u8>>(2 * workers * (QUEUE + 2));
        let mut to_workers = Vec::with_capacity(workers);
        let mut results = Vec::with_capacity(workers);
        let mut spares = Vec::with_capacity(workers);
        let mut handles = Vec::with_capacity(workers);
        for _ in 0..workers {
            let (block_tx, block_rx) = sync_channel::<Block>(QUEUE);
            let (result_tx, result_rx) = sync_channel::<Parsed>(QUEUE);
            let (spare_tx, spare_rx) = sync_channel::<Parsed>(QUEUE + 2);
            let (name, used) = (name.clone(), used_tx.clone());
            handles.push(Some(std::thread::spawn(move || {
                work(block_rx, result_tx, spare_rx, used, &name, options)
            })));
            to_workers.push(block_tx);
            results.push(result_rx);
            spares.push(spare_tx);
        }
        drop(used_tx);
        let cutter = std::thread::spawn(move || cut(input, block, to_workers, used_rx));
        ParallelParse {
            results,
            spares,
            cutter: Some(cutter),
            workers: handles,
            next: 0,
            cur: None,
            lines_before: 0,
            line: 0,
            label: None,
            ended: false,
        }
    }

    /// Whether `reader`'s input is worth several parser threads: its first line is longer than
    /// [`LONG_LINE`] (nothing is consumed).
    pub fn pays<R: BufRead>(reader: &mut LibsvmReader<R>) -> bool {
        reader.next_line_longer_than(LONG_LINE)
    }

    /// The number of parser threads for this machine: its cores, at most 2 (the learner
    /// uses the rest of a 2-core machine's time).
    pub fn default_workers() -> usize {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(2))
    }

    /// Reads the next example into `ex`, as [`LibsvmReader::read_into`] (the stream ends at
    /// its first error; `ex`'s old buffers go back to the workers).
    pub fn read_into(&mut self, ex: &mut Example) -> Result<bool, ParseError> {
        loop {
            if let Some(p) = self.cur.as_mut() {
                if let Some(line) = p.batch.next_into(ex, &mut self.label) {
                    self.line = self.lines_before + line;
                    return Ok(true);
                }
                if let Some(Err(mut e)) = p.batch.take_end() {
                    self.ended = true;
                    self.cur = None;
                    e.line += self.lines_before;
                    return Err(e);
                }
                self.lines_before += p.block_lines;
                let used = self.cur.take().expect("checked above");
                let worker = (self.next + self.results.len() - 1) % self.results.len();
                // The worker may have stopped; a lost buffer is harmless then.
                let _ = self.spares[worker].try_send(used);
            }
            if self.ended {
                return Ok(false);
            }
            let worker = self.next % self.results.len();
            match self.results[worker].recv() {
                Ok(p) => {
                    self.cur = Some(p);
                    self.next += 1;
                }
                // The cutter sent no block `next`: the end of the input, or a panic (passed on,
                // never a silently shortened stream).
                Err(_) => {
                    self.ended = true;
                    self.rethrow(worker);
                    return Ok(false);
                }
            }
        }
    }

    /// Passes on a panic of worker `j`, whose result channel was found closed, or else of the
    /// cutter. `j` has returned (or unwound); if it did not panic, its block channel closed, so
    /// the cutter has returned (or unwound) too. The other workers are not waited for.
    fn rethrow(&mut self, j: usize) {
        pass_on_panic(self.workers[j].take());
        pass_on_panic(self.cutter.take());
    }

    /// The line of the last example returned (0 before the first).
    pub fn line(&self) -> u64 {
        self.line
    }
}

impl ExampleSource for ParallelParse {
    type Error = ParseError;
    fn read_into(&mut self, ex: &mut Example) -> Result<bool, ParseError> {
        ParallelParse::read_into(self, ex)
    }
    fn line(&self) -> u64 {
        ParallelParse::line(self)
    }
    fn label_field(&self) -> Option<&LabelField> {
        self.label.as_ref()
    }
}

impl Drop for ParallelParse {
    fn drop(&mut self) {
        // Closing the result channels makes each worker's next send fail; it returns, closing
        // its block channel, and the cutter's next send fails (not joined: the cutter may be
        // blocked reading a pipe).
        self.results.clear();
        self.spares.clear();
    }
}

/// The cutter: reads `input` into blocks of whole lines, block `k` to `to[k mod to.len()]`,
/// until the end of the input, an I/O error (sent after the whole lines before it) or a closed
/// channel. Buffers come back through `used`.
fn cut(mut input: impl Read, block: usize, to: Vec<SyncSender<Block>>, used: Receiver<Vec<u8>>) {
    let mut k = 0;
    let mut send = |b: Block| {
        let ok = to[k % to.len()].send(b).is_ok();
        k += 1;
        ok
    };
    let mut carry: Vec<u8> = Vec::new();
    let mut first = true;
    loop {
        let mut buf = used.try_recv().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(&carry);
        carry.clear();
        let mut searched = 0;
        let (whole, failed, at_end) = loop {
            // Up to `block` bytes, or one more byte when the block holds no newline yet.
            let want = block.saturating_sub(buf.len()).max(1) as u64;
            match (&mut input).take(want).read_to_end(&mut buf) {
                Ok(n) if (n as u64) < want => break (buf.len(), None, true),
                Ok(_) => {}
                // Before an I/O error: the whole lines read (the partial line is lost, as in
                // the one-thread reader).
                Err(e) => {
                    let whole = buf.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
                    break (whole, Some(e), false);
                }
            }
            if buf.len() >= block {
                // The last newline of the block (the bytes searched before are not).
                if let Some(i) = buf[searched..].iter().rposition(|&b| b == b'\n') {
                    break (searched + i + 1, None, false);
                }
                searched = buf.len();
            }
        };
        carry.extend_from_slice(&buf[whole..]);
        buf.truncate(whole);
        if !buf.is_empty() && !send(Block::Lines { bytes: buf, first }) {
            return;
        }
        first = false;
        if let Some(e) = failed {
            send(Block::Failed(e));
            return;
        }
        if at_end {
            return;
        }
    }
}

/// A worker: parses each block it receives into one [`Parsed`] (buffers reused from `spare`),
/// until its block channel closes or the consumer is gone.
fn work(
    blocks: Receiver<Block>,
    out: SyncSender<Parsed>,
    spare: Receiver<Parsed>,
    used: SyncSender<Vec<u8>>,
    name: &str,
    options: LibsvmOptions,
) {
    while let Ok(block) = blocks.recv() {
        let mut p = spare.try_recv().unwrap_or_else(|_| Parsed {
            batch: ParsedBatch::new(),
            block_lines: 0,
        });
        match block {
            Block::Failed(e) => {
                p.block_lines = 0;
                p.batch.fail(ParseError::io(name, 1, &e));
            }
            Block::Lines { bytes, first } => {
                let mut reader = LibsvmReader::new(Cursor::new(bytes), name, options);
                if !first {
                    reader = reader.continuing();
                }
                p.batch.fill(&mut reader, usize::MAX);
                p.block_lines = reader.line();
                let _ = used.try_send(reader.into_inner().into_inner());
            }
        }
        if out.send(p).is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::ParseErrorKind;

    /// Lines of several lengths, blank and comment lines, a final line with or without its
    /// newline.
    fn text(n: usize, final_newline: bool) -> String {
        let mut s = String::new();
        for k in 0..n {
            s.push_str(if k % 3 == 0 { "1" } else { "-1" });
            for j in 0..(k % 7) {
                s.push_str(&format!(" {}:{}", 1 + j * 5 + k % 5, 0.25 * (j + k) as f64));
            }
            if k % 11 == 4 {
                s.push_str("\n\n# comment");
            }
            s.push('\n');
        }
        if !final_newline && s.ends_with('\n') {
            s.pop();
        }
        s
    }

    type Read = (Vec<Example>, Vec<u64>, Option<String>);

    /// The examples and lines up to the end or the first error (`sticky`: check that the
    /// stream stays at its end after it).
    fn drain_to(src: &mut dyn ExampleSource<Error = ParseError>, sticky: bool) -> Read {
        let (mut out, mut lines) = (Vec::new(), Vec::new());
        let mut ex = Example::default();
        loop {
            match src.read_into(&mut ex) {
                Ok(true) => {
                    out.push(ex.clone());
                    lines.push(src.line());
                }
                Ok(false) => {
                    // The end is sticky.
                    assert!(!src.read_into(&mut ex).unwrap());
                    return (out, lines, None);
                }
                Err(e) => {
                    if sticky {
                        assert!(
                            !src.read_into(&mut ex).unwrap(),
                            "the stream ends at an error"
                        );
                    }
                    return (out, lines, Some(e.to_string()));
                }
            }
        }
    }

    fn drain(src: &mut dyn ExampleSource<Error = ParseError>) -> Read {
        drain_to(src, true)
    }

    fn one_thread(bytes: &[u8]) -> Read {
        let mut r = LibsvmReader::new(Cursor::new(bytes.to_vec()), "t", Default::default());
        drain_to(&mut r, false)
    }

    fn parallel(bytes: &[u8], workers: usize, block: usize) -> Read {
        let r = LibsvmReader::new(Cursor::new(bytes.to_vec()), "t", Default::default());
        drain(&mut ParallelParse::new(r, workers, block))
    }

    /// Every worker count and block size (tiny blocks: one line or less each) gives the
    /// one-thread reader's examples, lines and errors.
    fn same_as_one_thread(bytes: &[u8]) {
        let want = one_thread(bytes);
        for workers in [1, 2, 3] {
            for block in [1, 2, 7, 64, 1000, BLOCK] {
                let got = parallel(bytes, workers, block);
                assert_eq!(got, want, "workers {workers}, block {block}");
            }
        }
    }

    #[test]
    fn same_examples_lines_and_ends() {
        for n in [0, 1, 2, 5, 40, 300] {
            same_as_one_thread(text(n, true).as_bytes());
            same_as_one_thread(text(n, false).as_bytes());
        }
        same_as_one_thread(b"");
        same_as_one_thread(b"\n\n\n");
    }

    #[test]
    fn an_error_comes_after_every_example_before_it_at_its_line() {
        for bad_at in [0, 1, 17, 150] {
            let mut s = text(bad_at, true);
            s.push_str("1 4:oops\n");
            s.push_str(&text(30, true));
            let want = one_thread(s.as_bytes());
            assert!(want.2.as_deref().unwrap().contains("oops"));
            same_as_one_thread(s.as_bytes());
        }
    }

    #[test]
    fn a_byte_order_mark_only_at_the_start() {
        let mut s = b"\xEF\xBB\xBF1 1:2\n".to_vec();
        s.extend_from_slice(text(20, true).as_bytes());
        same_as_one_thread(&s);
        // Later in the file the mark is text: the label cannot be parsed.
        let mut s = text(20, true).into_bytes();
        s.extend_from_slice(b"\xEF\xBB\xBF1 1:2\n");
        let err = one_thread(&s).2.unwrap();
        assert!(err.contains("cannot parse label"), "{err}");
        same_as_one_thread(&s);
    }

    /// Gives `text`, then fails on every read.
    struct FailsAfter(Vec<u8>);

    impl std::io::Read for FailsAfter {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            if self.0.is_empty() {
                return Err(std::io::Error::other("disk on fire"));
            }
            let n = self.0.len().min(out.len()).min(5);
            out[..n].copy_from_slice(&self.0[..n]);
            self.0.drain(..n);
            Ok(n)
        }
    }

    #[test]
    fn an_io_error_at_the_line_being_read() {
        for cut in [0, 3, 40, 200] {
            let s = text(40, true).into_bytes();
            let head = s[..cut.min(s.len())].to_vec();
            let reader = |b: &[u8]| {
                let input = std::io::BufReader::new(FailsAfter(b.to_vec()));
                LibsvmReader::new(input, "t", LibsvmOptions::default())
            };
            let want = drain_to(&mut reader(&head), false);
            assert!(want.2.as_deref().unwrap().contains("disk on fire"));
            for workers in [1, 2] {
                for block in [1, 16, BLOCK] {
                    let got = drain(&mut ParallelParse::new(reader(&head), workers, block));
                    assert_eq!(got, want, "cut {cut}, workers {workers}, block {block}");
                }
            }
        }
    }

    #[test]
    fn only_long_lines_pay() {
        let long = format!("1 {}\n", "1:0.5 ".repeat(LONG_LINE));
        let short = text(2000, true);
        let mut r = LibsvmReader::new(Cursor::new(long.clone()), "t", Default::default());
        assert!(ParallelParse::pays(&mut r));
        let mut ex = Example::default();
        assert!(
            r.read_into(&mut ex).is_err(),
            "the duplicate index is still read"
        );
        let mut r = LibsvmReader::new(Cursor::new(short), "t", Default::default());
        assert!(!ParallelParse::pays(&mut r));
        assert!(r.read_into(&mut ex).unwrap());
        assert_eq!(r.line(), 1);
    }

    #[test]
    fn dropped_early_with_blocks_in_flight() {
        let s = text(2000, true);
        let r = LibsvmReader::new(Cursor::new(s.into_bytes()), "t", Default::default());
        let mut p = ParallelParse::new(r, 2, 8);
        let mut ex = Example::default();
        for _ in 0..10 {
            assert!(p.read_into(&mut ex).unwrap());
        }
        drop(p);
    }

    #[test]
    fn an_index_error_names_its_column() {
        let s = format!("{}1 0:1\n", text(50, true));
        let r = LibsvmReader::new(Cursor::new(s.into_bytes()), "t", Default::default());
        let mut p = ParallelParse::new(r, 2, 3);
        let mut ex = Example::default();
        let err = loop {
            match p.read_into(&mut ex) {
                Ok(true) => continue,
                Ok(false) => panic!("no error"),
                Err(e) => break e,
            }
        };
        assert_eq!(err.kind, ParseErrorKind::ZeroIndexInOneBased);
        assert_eq!(err.column, 3);
        assert_eq!(err.line, text(50, true).lines().count() as u64 + 1);
    }
}
