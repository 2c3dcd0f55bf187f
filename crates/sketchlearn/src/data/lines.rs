//! Reading a text input line by line, as every line-based reader (LIBSVM, VW, CSV) does: the
//! next line into a reused buffer with its 1-based number, an I/O error naming the source and
//! the line being read, and the UTF-8 byte-order mark a first line may start with.

use std::io::BufRead;

use super::error::ParseError;

/// The UTF-8 byte-order mark.
pub(crate) const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// A line-based reader: its input, line buffer, source name and the number of the last line
/// read; [`next_line`](LineInput::next_line) reads the next line into the buffer.
pub(crate) trait LineInput {
    /// The input, the line buffer, the source name (for errors) and the last line's number.
    fn line_parts(&mut self) -> (&mut dyn BufRead, &mut Vec<u8>, &str, &mut u64);

    /// Reads the next line into the buffer (cleared first, the newline kept) and counts it;
    /// `Ok(false)` at the end of the input. An I/O error names the source and the line being
    /// read.
    #[inline]
    fn next_line(&mut self) -> Result<bool, ParseError> {
        let (reader, buf, source, line) = self.line_parts();
        buf.clear();
        match reader.read_until(b'\n', buf) {
            Ok(0) => Ok(false),
            Ok(_) => {
                *line += 1;
                Ok(true)
            }
            Err(e) => Err(ParseError::io(source, *line + 1, &e)),
        }
    }
}

/// The length of the byte-order mark that line `line` (1-based) starts with: 3 on a first line
/// that starts with one, else 0.
#[inline]
pub(crate) fn bom_len(line: u64, text: &[u8]) -> usize {
    if line == 1 && text.starts_with(UTF8_BOM) {
        UTF8_BOM.len()
    } else {
        0
    }
}
