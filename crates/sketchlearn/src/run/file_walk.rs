//! The walk over one of several LIBSVM/VW files a learner is trained on in parts
//! (`sketchlearn.dask`, issue 30): the walk before a run ([`prescan`](super::prescan)) of one
//! file, with what it found kept as counts, so that the profile of all the files (their
//! classes, their stored features per example, the first file's first rows) is added up
//! across files walked on different machines.
//!
//! It is the CLI's walk: LIBSVM values are passed over, not parsed
//! ([`LibsvmReader::skip_values`](crate::data::LibsvmReader::skip_values)); VW features only of
//! the first [`SPARSITY_SAMPLE`] rows, and past them only each line's label when the labels
//! are wanted ([`VwReader::headers_after`](crate::data::VwReader::headers_after)); a large
//! plain file on two threads when allowed. A bad label or index is the walk's error (file,
//! line, column); a bad value on a plain LIBSVM line, or a bad feature past VW's first rows,
//! is left to the learning pass, which reports it at the same line and column.

use super::prescan::{first_rows_split, vw_labels, SPLIT_BYTES};
use super::{Input, ReadOptions, RunError};
use crate::data::{ClassScan, Format};
use crate::linear::{SparsitySample, SPARSITY_SAMPLE};

/// What [`walk_file`] found in one file.
#[derive(Clone, Debug)]
pub struct FileWalk {
    /// The distinct labels, each with its first line (when asked for).
    pub labels: Option<ClassScan>,
    /// The examples counted: every example of LIBSVM text; the first [`SPARSITY_SAMPLE`] of VW
    /// text (hashed input: its representation does not depend on its stored features per
    /// example, [`InputProfile::is_sparse`](crate::linear::InputProfile::is_sparse)).
    pub rows: u64,
    /// The stored features of the examples counted.
    pub nnz: u64,
    /// VW text (`2^bits` hashed features).
    pub hashed: bool,
    /// The first rows' [`SparsitySample`] (`None` for a file with no examples).
    pub sample: Option<SparsitySample>,
}

/// Walks the LIBSVM or VW file `path` (`.gz` read through) as `read` says (its format,
/// `zero_based`, VW's `bits`), collecting the labels when `labels`, on two threads when
/// `two_threads` and the file is a plain LIBSVM file of at least 2 MiB (the same findings).
/// Without `labels`, VW text is read no further than its first rows. CSV is refused (its
/// labels are a column chosen by name). More distinct labels than the library's limit is an
/// error at the line of the one too many.
///
/// ```
/// use sketchlearn::run::{walk_file, ReadOptions};
/// let path = std::env::temp_dir().join(format!("walk-doc-{}.libsvm", std::process::id()));
/// std::fs::write(&path, "1 2:0.5 7:junk\n# a comment\n-1 3:1\n")?;
/// let path = path.to_str().unwrap();
/// let found = walk_file(path, &ReadOptions::default(), true, false)?;
/// let labels: Vec<String> = found.labels.unwrap().labels().map(|(l, _)| l.to_string()).collect();
/// assert_eq!(labels, ["-1", "1"]);
/// assert_eq!((found.rows, found.nnz, found.hashed), (2, 3, false));
/// assert_eq!(found.sample.unwrap().distinct, 3);
/// std::fs::write(path, "1 2:0.5\n-1 x:1\n")?;
/// let err = walk_file(path, &ReadOptions::default(), false, false).unwrap_err();
/// assert!(err.to_string().ends_with(":2:4: cannot parse feature index \"x\""), "{err}");
/// std::fs::remove_file(path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn walk_file(
    path: &str,
    read: &ReadOptions,
    labels: bool,
    two_threads: bool,
) -> Result<FileWalk, RunError> {
    let mut input = Input::path(path);
    // A path read once (a pipe, `/dev/fd/N`) is spooled first, as `train`'s walk does, so
    // that its labels are scanned like a file's (bounded by the spool's limit).
    input.spool()?;
    let format = input.format(read.format);
    let read = ReadOptions {
        read_ahead: false,
        ..read.clone()
    };
    let bits = read.bits(format, None)?;
    let scan = labels.then(|| ClassScan::new(input.name()));
    let walk = match (format, scan) {
        (Format::Vw, Some(scan)) => {
            vw_labels(&mut input, &read, bits, Some(scan), SPARSITY_SAMPLE)?
        }
        (Format::Vw, None) => {
            first_rows_split(&mut input, &read, bits, SPARSITY_SAMPLE, None, None)?.0
        }
        (_, scan) => {
            let split = two_threads.then_some(SPLIT_BYTES);
            first_rows_split(&mut input, &read, bits, u64::MAX, scan, split)?.0
        }
    };
    Ok(FileWalk {
        labels: walk.scan,
        rows: walk.n,
        nnz: walk.nnz as u64,
        hashed: format == Format::Vw,
        sample: walk.probe.sample(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{Example, ExampleReader, ExampleSource};
    use crate::linear::SparsityProbe;
    use std::io::Write;

    /// What the full parse of every example finds (the binding's scan before dask17): labels
    /// as text, rows, stored features, the first rows' sample.
    fn full_parse(path: &str, zero_based: bool) -> (Vec<String>, u64, u64, String) {
        let mut reader = ExampleReader::open(path, Format::Auto, zero_based, 18).unwrap();
        let (mut scan, mut ex) = (ClassScan::new(path), Example::default());
        let (mut rows, mut nnz, mut probe) = (0, 0, SparsityProbe::default());
        while reader.read_into(&mut ex).unwrap() {
            scan.add(ex.label, reader.line()).unwrap();
            rows += 1;
            nnz += ex.indices.len() as u64;
            probe.observe(&ex.indices);
        }
        let labels = scan.labels().map(|(l, n)| format!("{l}@{n}")).collect();
        (labels, rows, nnz, format!("{:?}", probe.sample()))
    }

    fn walked(path: &str, zero_based: bool, two: bool) -> (Vec<String>, u64, u64, String) {
        let read = ReadOptions {
            zero_based,
            ..ReadOptions::default()
        };
        let found = walk_file(path, &read, true, two).unwrap();
        let labels = found.labels.unwrap();
        let labels = labels.labels().map(|(l, n)| format!("{l}@{n}")).collect();
        (labels, found.rows, found.nnz, format!("{:?}", found.sample))
    }

    /// `text` written to a temporary file named `name` (gzipped when it ends in `.gz`).
    fn file(name: &str, text: &str) -> String {
        let path = std::env::temp_dir().join(format!("walk-{}-{name}", std::process::id()));
        let mut f = std::fs::File::create(&path).unwrap();
        if name.ends_with(".gz") {
            let mut gz = flate2::write::GzEncoder::new(f, flate2::Compression::fast());
            gz.write_all(text.as_bytes()).unwrap();
            gz.finish().unwrap();
        } else {
            f.write_all(text.as_bytes()).unwrap();
        }
        path.to_str().unwrap().to_owned()
    }

    /// LIBSVM rows of 1 to 7 features, five labels first seen at different lines, comments,
    /// blank lines, `\r\n`, exponents and unsorted indices (parsed in full by the walk); the
    /// smallest index written is `zero`.
    fn libsvm(n: usize, zero: u64) -> String {
        (0..n)
            .map(|k| {
                let label = ["1", "-1", "3", "0.5", "2e1"][(k * k / 7) % 5];
                let mut f: String = (0..1 + k % 7)
                    .map(|j| format!(" {}:{}.{}", zero + (j * 5 + k % 13) as u64, j, k % 10))
                    .collect();
                match k % 53 {
                    3 => f.push_str(" # note"),
                    4 => f = format!(" 9:1e-3 {}:2", zero + 2),
                    _ => {}
                }
                let gap = ["", "\n", "\n# comment\n", "\r"][usize::from(k % 41 == 1) * (k % 4)];
                format!("{label}{f}{gap}\n")
            })
            .collect()
    }

    /// The walk finds what the full parse finds on LIBSVM text: one-based and zero-based,
    /// plain and gzipped, on one thread and (a file of more than 2 MiB) on two.
    #[test]
    fn libsvm_walk_is_the_full_parse() {
        for (n, zero_based, name) in [
            (3000, true, "a.libsvm"),
            (3000, false, "b.libsvm"),
            (2500, true, "c.libsvm.gz"),
            (100_000, false, "d.libsvm"),
            (500, false, "e.libsvm"),
        ] {
            let path = file(name, &libsvm(n, u64::from(!zero_based)));
            let full = full_parse(&path, zero_based);
            assert_eq!(walked(&path, zero_based, false), full, "{name}");
            assert_eq!(walked(&path, zero_based, true), full, "{name}");
            std::fs::remove_file(path).unwrap();
        }
    }

    /// VW text: every label, and the first rows' features (the sample), as the full parse;
    /// rows and stored features of those rows only. Without labels, only those rows are read
    /// (a bad label past them is not seen).
    #[test]
    fn vw_walk_has_the_labels_and_the_first_rows() {
        let n = SPARSITY_SAMPLE as usize + 700;
        let text: String = (0..n)
            .map(|k| format!("{} |a x{} y:{}\n", [1, -1, 3][k % 3], k % 17, k % 5 + 1))
            .collect();
        let path = file("f.vw", &text);
        let (labels, _, _, sample) = full_parse(&path, false);
        let (walk_labels, rows, nnz, walk_sample) = walked(&path, false, true);
        assert_eq!((walk_labels, walk_sample), (labels, sample));
        assert_eq!((rows, nnz), (SPARSITY_SAMPLE, 2 * SPARSITY_SAMPLE));
        let bad = file("g.vw", &(text + "x1 |a b\n"));
        let no_labels = walk_file(&bad, &ReadOptions::default(), false, true).unwrap();
        assert!(no_labels.labels.is_none() && no_labels.hashed);
        assert_eq!(no_labels.rows, SPARSITY_SAMPLE);
        let err = walk_file(&bad, &ReadOptions::default(), true, true).unwrap_err();
        assert!(
            err.to_string().contains(&format!(":{}:1: ", n + 1)),
            "{err}"
        );
        std::fs::remove_file(path).unwrap();
        std::fs::remove_file(bad).unwrap();
    }

    /// A bad label or index is the walk's error at its line and column, with or without the
    /// labels and on one thread or two; a bad value on a plain line is left to the pass.
    #[test]
    fn bad_labels_and_indices_are_errors_and_values_are_left_to_the_pass() {
        let lines: Vec<String> = libsvm(80_000, 1).lines().map(str::to_owned).collect();
        for (bad, at, what) in [
            ("1 2:1 x:1", 7, "cannot parse feature index \"x\""),
            ("one 2:1", 1, "cannot parse label \"one\""),
        ] {
            for line in [100, 79_000] {
                let mut text = lines.clone();
                text[line] = bad.to_owned();
                let path = file("h.libsvm", &(text.join("\n") + "\n"));
                for (labels, two) in [(true, true), (false, false), (true, false)] {
                    let err = walk_file(&path, &ReadOptions::default(), labels, two).unwrap_err();
                    let expected = format!(":{}:{at}: {what}", line + 1);
                    assert!(err.to_string().contains(&expected), "{err}");
                }
                std::fs::remove_file(path).unwrap();
            }
        }
        let path = file("i.libsvm", "1 2:1\n-1 3:junk\n");
        let found = walk_file(&path, &ReadOptions::default(), true, false).unwrap();
        assert_eq!((found.rows, found.nnz), (2, 2));
        std::fs::remove_file(path).unwrap();
    }

    /// A path that can be read only once (a named pipe) is walked like a file: its labels,
    /// rows and stored features are found (they were silently dropped before the spool).
    #[test]
    fn a_pipe_is_walked_like_a_file() {
        let dir = std::env::temp_dir().join(format!("walk-fifo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("p.libsvm");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            return; // no mkfifo on this system: nothing to test
        }
        let text = "1 2:0.5 7:1\n-1 3:1\n3 1:2\n";
        let writer = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::write(fifo, text).unwrap())
        };
        let found = walk_file(fifo.to_str().unwrap(), &ReadOptions::default(), true, true);
        writer.join().unwrap();
        let found = found.unwrap();
        let labels: Vec<String> = found
            .labels
            .unwrap()
            .labels()
            .map(|(l, _)| l.to_string())
            .collect();
        assert_eq!(labels, ["-1", "1", "3"]);
        assert_eq!((found.rows, found.nnz), (3, 4));
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// CSV and zero-based VW are refused, with the readers' messages.
    #[test]
    fn csv_and_zero_based_vw_are_refused() {
        let csv = file("j.csv", "label,a\n1,2\n");
        let err = walk_file(&csv, &ReadOptions::default(), true, false).unwrap_err();
        assert!(
            err.to_string().contains("CSV input has no label column"),
            "{err}"
        );
        let vw = file("k.vw", "1 |a b\n");
        let zero = ReadOptions {
            zero_based: true,
            ..ReadOptions::default()
        };
        let err = walk_file(&vw, &zero, false, false).unwrap_err();
        assert!(err.to_string().contains("zero-based"), "{err}");
        std::fs::remove_file(csv).unwrap();
        std::fs::remove_file(vw).unwrap();
    }
}
