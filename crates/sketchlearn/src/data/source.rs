//! Input sources: files, standard input and transparently decompressed gzip streams.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Cursor, Read};

use super::error::{ParseError, ParseErrorKind};

/// Buffer size of the readers returned by [`open_input`] (256 KiB).
pub const INPUT_BUFFER_SIZE: usize = 256 * 1024;

/// The two magic bytes every gzip member starts with.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// The name [`open_input`] and the `open` constructors of the readers give standard input.
pub const STDIN_NAME: &str = "<stdin>";

/// The source name used in error messages for `path`: `"<stdin>"` for `-`, else the path itself.
pub fn source_name(path: &str) -> &str {
    if path == "-" {
        STDIN_NAME
    } else {
        path
    }
}

/// Opens `path` for buffered reading; `-` means standard input.
///
/// Gzip input is detected by its magic bytes (`1f 8b`), not by the file name, and is decompressed
/// transparently (multi-member files such as the output of `cat a.gz b.gz` included). Other input is
/// read through a 256 KiB buffer. A file that cannot be opened gives a [`ParseError`] of kind
/// [`ParseErrorKind::Io`] naming the path (line 0).
///
/// ```
/// use std::io::BufRead;
/// let path = std::env::temp_dir().join(format!("sketchlearn-open-input-doc-{}.txt", std::process::id()));
/// std::fs::write(&path, "+1 1:0.5\n").unwrap();
/// let mut input = sketchlearn::data::open_input(path.to_str().unwrap()).unwrap();
/// let mut line = String::new();
/// input.read_line(&mut line).unwrap();
/// assert_eq!(line, "+1 1:0.5\n");
/// std::fs::remove_file(&path).unwrap();
///
/// let err = sketchlearn::data::open_input("/no/such/file.libsvm").err().unwrap();
/// assert!(err.to_string().starts_with("/no/such/file.libsvm: I/O error: cannot open"));
/// ```
pub fn open_input(path: &str) -> Result<Box<dyn BufRead + Send>, ParseError> {
    if path == "-" {
        wrap(io::stdin(), STDIN_NAME)
    } else {
        let file = File::open(path).map_err(|e| {
            ParseError::new(path, 0, 0, ParseErrorKind::Io(format!("cannot open: {e}")))
        })?;
        wrap(file, path)
    }
}

/// Sniffs the gzip magic and returns the buffered (and, if needed, decompressing) reader: what
/// [`open_input`] does for a file, for any reader (`name` names it in errors).
pub fn wrap<R: Read + Send + 'static>(
    mut raw: R,
    name: &str,
) -> Result<Box<dyn BufRead + Send>, ParseError> {
    let mut prefix = [0u8; 2];
    let mut got = 0;
    while got < prefix.len() {
        match raw.read(&mut prefix[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                return Err(ParseError::new(
                    name,
                    0,
                    0,
                    ParseErrorKind::Io(format!("cannot read: {e}")),
                ))
            }
        }
    }
    let is_gzip = got == 2 && prefix == GZIP_MAGIC;
    let joined = Cursor::new(prefix).take(got as u64).chain(raw);
    if is_gzip {
        let compressed = BufReader::with_capacity(INPUT_BUFFER_SIZE, joined);
        Ok(Box::new(BufReader::with_capacity(
            INPUT_BUFFER_SIZE,
            flate2::bufread::MultiGzDecoder::new(compressed),
        )))
    } else {
        Ok(Box::new(BufReader::with_capacity(
            INPUT_BUFFER_SIZE,
            joined,
        )))
    }
}
