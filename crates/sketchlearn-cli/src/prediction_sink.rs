//! Where `-p` predictions go, for every subcommand that writes them (`train`, `test`,
//! `train --multiclass`, `predict`, `fm`, `fm predict`): standard output (`-`, and no `-p` where
//! a subcommand scores to standard output) as they come, or a file that replaces its target only
//! when the run ends well ([`ReplacingFile`]). A run that stops on bad input half-way (the LIBSVM
//! dimension scan passes over values, so a bad value is met while learning; `predict` meets a
//! bad row after the rows before it were scored) leaves an existing predictions file as it was
//! and no partial file behind.

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

    /// [`PredictionSink::open`] with the command line's error: `cannot create predictions file
    /// PATH: why`.
    pub fn create(path: &str) -> anyhow::Result<Self> {
        Self::open(path).map_err(|e| anyhow::anyhow!("cannot create predictions file {path}: {e}"))
    }

    /// `-p PATH` ([`PredictionSink::create`]), else standard output.
    pub fn create_or_stdout(path: Option<&str>) -> anyhow::Result<Self> {
        Self::create(path.unwrap_or("-"))
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
