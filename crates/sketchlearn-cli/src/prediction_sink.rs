//! Where `-p` predictions go: standard output (`-`) as they come, or a file that replaces its
//! target only when the run ends well ([`ReplacingFile`]). A run that stops on bad input
//! half-way (the LIBSVM dimension scan passes over values, so a bad value is met while
//! learning) leaves an existing predictions file as it was and no partial file behind.

use sketchlearn::model::ReplacingFile;
use std::io::{self, BufWriter, Stdout, Write};
use std::path::Path;

/// An open `-p` output.
pub enum PredictionSink {
    /// `-p -`.
    Stdout(BufWriter<Stdout>),
    /// `-p FILE`, in place at [`PredictionSink::finish`].
    File(ReplacingFile),
}

impl PredictionSink {
    /// Opens `path` (`-`: standard output).
    pub fn open(path: &str) -> io::Result<Self> {
        Ok(match path {
            "-" => PredictionSink::Stdout(BufWriter::new(io::stdout())),
            _ => PredictionSink::File(ReplacingFile::create(Path::new(path))?),
        })
    }

    /// Flushes standard output, or puts the file in place.
    pub fn finish(self) -> io::Result<()> {
        match self {
            PredictionSink::Stdout(mut out) => out.flush(),
            PredictionSink::File(file) => file.commit(),
        }
    }

    fn out(&mut self) -> &mut dyn Write {
        match self {
            PredictionSink::Stdout(out) => out,
            PredictionSink::File(file) => file,
        }
    }
}

impl Write for PredictionSink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.out().write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.out().flush()
    }
}
