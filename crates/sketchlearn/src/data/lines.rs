//! Reading a text input line by line, as every line-based reader (LIBSVM, VW, CSV) does: the
//! next line into a reused buffer with its 1-based number, an I/O error naming the source and
//! the line being read (after which the input is at its end), errors placed at a column of the
//! current line, and the UTF-8 byte-order mark a first line may start with.

use std::io::BufRead;

use super::error::{ParseError, ParseErrorKind};

/// The UTF-8 byte-order mark.
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// The line-reading part of a line-based reader: its input, the source name (for errors), one
/// reused line buffer and the number of the last line read.
#[derive(Debug)]
pub(crate) struct LineReader<R> {
    reader: R,
    source_name: String,
    buf: Vec<u8>,
    line: u64,
    io_failed: bool,
    /// The input is the start of its source (a first line may begin with a byte-order mark).
    at_start: bool,
}

impl<R: BufRead> LineReader<R> {
    /// Lines of `reader`, called `source_name` in errors.
    pub fn new(reader: R, source_name: impl Into<String>) -> Self {
        LineReader {
            reader,
            source_name: source_name.into(),
            buf: Vec::with_capacity(1024),
            line: 0,
            io_failed: false,
            at_start: true,
        }
    }

    /// The input continues a source after its first line (a block of
    /// [`ParallelParse`](super::ParallelParse)): no byte-order mark is taken off its first line.
    pub fn continuing(mut self) -> Self {
        self.at_start = false;
        self
    }

    /// Reads the next line into the buffer (cleared first, the newline kept) and counts it;
    /// `Ok(false)` at the end of the input. An I/O error names the source and the line being
    /// read; after it the input is at its end (`Ok(false)`).
    #[inline]
    pub fn next_line(&mut self) -> Result<bool, ParseError> {
        if self.io_failed {
            return Ok(false);
        }
        self.buf.clear();
        match super::newline::read_line(&mut self.reader, &mut self.buf) {
            Ok(0) => Ok(false),
            Ok(_) => {
                self.line += 1;
                Ok(true)
            }
            Err(e) => {
                self.io_failed = true;
                Err(ParseError::io(&self.source_name, self.line + 1, &e))
            }
        }
    }

    /// Whether the next line is longer than `bytes` (its first `bytes` bytes, as far as the
    /// input's buffer holds them, contain no newline); nothing is consumed. `false` when the
    /// buffer holds fewer bytes or the input fails (the next read reports the error).
    pub fn next_line_longer_than(&mut self, bytes: usize) -> bool {
        match self.reader.fill_buf() {
            Ok(buf) => buf.len() >= bytes && !buf[..bytes].contains(&b'\n'),
            Err(_) => false,
        }
    }

    /// The last line read, as read (the newline kept).
    #[inline]
    pub fn raw(&self) -> &[u8] {
        &self.buf
    }

    /// The last line read without the byte-order mark a first line may start with, and the
    /// mark's length (the number of bytes before the text: add it to a position in the text to
    /// get the position in the line).
    #[inline]
    pub fn text(&self) -> (usize, &[u8]) {
        let offset = if self.at_start && self.line == 1 && self.buf.starts_with(UTF8_BOM) {
            UTF8_BOM.len()
        } else {
            0
        };
        (offset, &self.buf[offset..])
    }

    /// An error at `column` (1-based; 0 for none) of the last line read.
    pub fn error(&self, column: usize, kind: ParseErrorKind) -> ParseError {
        ParseError::new(self.source_name.clone(), self.line, column, kind)
    }

    /// The number of the last line read (1-based; 0 before the first read).
    pub fn line(&self) -> u64 {
        self.line
    }

    /// The name used in error messages.
    pub fn source_name(&self) -> &str {
        &self.source_name
    }

    /// Gives back the underlying reader.
    pub fn into_inner(self) -> R {
        self.reader
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufReader, Read};

    /// Gives `text`, then fails on every read.
    struct FailsAfter(&'static [u8]);

    impl Read for FailsAfter {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            if self.0.is_empty() {
                return Err(std::io::Error::other("disk on fire"));
            }
            let n = self.0.len().min(out.len());
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn lines_bom_errors_and_the_end_after_an_io_error() {
        let input = BufReader::new(FailsAfter(b"\xEF\xBB\xBFa,b\nc\n"));
        let mut lines = LineReader::new(input, "t.csv");
        assert!(lines.next_line().unwrap());
        assert_eq!(lines.text(), (3, &b"a,b\n"[..]));
        assert!(lines.next_line().unwrap());
        assert_eq!((lines.line(), lines.text()), (2, (0, &b"c\n"[..])));
        let e = lines.error(1, ParseErrorKind::EmptyField);
        assert_eq!((e.source_name.as_str(), e.line, e.column), ("t.csv", 2, 1));
        let e = lines.next_line().unwrap_err();
        assert_eq!(e.to_string(), "t.csv:3: I/O error: disk on fire");
        // The failing input is not read again.
        assert!(!lines.next_line().unwrap());
        assert_eq!(lines.line(), 2);
    }
}
