//! The one walk over a new learner's input before learning (issue 24): the labels for the
//! classes ([`ClassScan`], when they come from the input) and what the representation choice
//! knows of it ([`InputProfile`]) are collected by the same reader, so a re-readable file is
//! read once before the pass, not once for each.
//!
//! Which examples the walk reads: all of them when the classes are scanned or the dimension is
//! not given (LIBSVM: one past the largest index), else the first [`SPARSITY_SAMPLE`] (the
//! sparsity of the input); VW input has `d = 2^bits` and is read for its classes and its first
//! rows. The first [`SPARSITY_SAMPLE`] rows are always counted for the default's members
//! ([`SparsityProbe`], the rule of [`sparse_data`](crate::linear::sparse_data)): the same rows
//! whether the input is a file, a pipe or a cache (VW with `-q` excepted: its crossed rows are
//! not built here, and it keeps every member). A stream
//! read once is spooled first when the dimension is not given ([`Input::spool`]), so its classes
//! are scanned like a file's; with `--dim` it is only sampled in memory ([`Input::sample`],
//! replayed to the run), and its classes come from `--classes` or its `−1/+1` / `0/1` convention.

use super::cache::Opened;
use super::input::examples;
use super::{Input, ReadOptions, RunError};
use crate::data::{
    ClassScan, Example, ExampleReader, ExampleSource, Format, Interactions, ParseError, Schema,
};
use crate::linear::{InputProfile, SparsityProbe, SPARSITY_SAMPLE};

/// What the walk found: the labels (when scanned) and the profile.
pub(crate) struct Prescan {
    pub scan: Option<ClassScan>,
    pub profile: InputProfile,
}

/// The state of one walk: the labels collected (when asked), the stored features of the
/// first `limit` examples, and the first rows' [`SparsityProbe`] (within those `limit`).
struct Walk {
    scan: Option<ClassScan>,
    limit: u64,
    n: u64,
    nnz: usize,
    probe: SparsityProbe,
}

impl Walk {
    fn new(scan: Option<ClassScan>, limit: u64) -> Self {
        Walk {
            scan,
            limit,
            n: 0,
            nnz: 0,
            probe: SparsityProbe::default(),
        }
    }

    /// Reads `source` as far as needed: to its end when the labels are scanned, else `limit`
    /// examples.
    fn read<S>(&mut self, source: &mut S) -> Result<(), RunError>
    where
        S: ExampleSource<Error = ParseError> + ?Sized,
    {
        let mut ex = Example::default();
        while (self.scan.is_some() || self.n < self.limit) && source.read_into(&mut ex)? {
            if let Some(scan) = &mut self.scan {
                scan.add_read(source, &ex)?;
            }
            if self.n < self.limit {
                self.n += 1;
                self.nnz += ex.indices.len();
                self.probe.observe(&ex.indices);
            }
        }
        Ok(())
    }

    /// The average number of stored features per example (`None` before any).
    fn avg_nnz(&self) -> Option<f64> {
        (self.n > 0).then(|| self.nnz as f64 / self.n as f64)
    }
}

/// The walk over a new learner's `input` (CSV: through `schema`; `dim` if given); the labels
/// are scanned when `classes` and the input can be read again (see the [module](self) docs).
pub(crate) fn prescan(
    input: &mut Input,
    read: &ReadOptions,
    bits: u32,
    schema: Option<&Schema>,
    dim: Option<usize>,
    classes: bool,
) -> Result<Prescan, RunError> {
    let format = input.format(read.format);
    if format == Format::Vw && dim.is_some() {
        return Err(RunError::options(
            "VW input has dimension 2^bits: give --bits, not --dim",
        ));
    }
    if format == Format::Libsvm && dim.is_none() {
        input.spool()?;
    }
    let scan = (classes && input.rereadable()).then(|| ClassScan::new(input.name()));
    let read = ReadOptions {
        read_ahead: false,
        ..read.clone()
    };
    let (dim, hashed, walk) = match (format, schema) {
        (Format::Csv, Some(schema)) => {
            let mut walk = Walk::new(scan, SPARSITY_SAMPLE);
            walk.read(&mut *examples(
                input,
                &read,
                bits,
                Some(schema),
                Interactions::default(),
            )?)?;
            (schema.dim(), false, walk)
        }
        (Format::Vw, _) => {
            // Without `-q` the first rows are measured; with it, the rows read here are not the
            // learner's (crosses are built only for a cache), so none are.
            let limit = match read.interactions.is_empty() {
                true => SPARSITY_SAMPLE,
                false => 0,
            };
            let walk = if scan.is_some() {
                let mut walk = Walk::new(scan, limit);
                // The labels need no crosses, but a cache written here serves the pass only
                // with the pass's (the run's `-q`).
                let crosses = match input.has_cache() {
                    true => read.interactions,
                    false => Interactions::default(),
                };
                walk.read(&mut *examples(input, &read, bits, None, crosses)?)?;
                walk
            } else if limit > 0 {
                first_rows(input, &read, bits, limit, None)?.0
            } else {
                Walk::new(None, 0)
            };
            (1usize << bits, true, walk)
        }
        _ => libsvm_walk(input, &read, bits, dim, scan)?,
    };
    let profile = InputProfile {
        dim,
        hashed,
        avg_nnz: walk.avg_nnz(),
        sample: walk.probe.sample(),
    };
    Ok(Prescan {
        scan: walk.scan,
        profile,
    })
}

/// LIBSVM: the whole file when `dim` is not given (then one past its largest index is the
/// dimension), else its first [`SPARSITY_SAMPLE`] examples (all with `scan`); a stream read
/// once with `dim` given is sampled in memory.
fn libsvm_walk(
    input: &mut Input,
    read: &ReadOptions,
    bits: u32,
    dim: Option<usize>,
    scan: Option<ClassScan>,
) -> Result<(usize, bool, Walk), RunError> {
    let limit = if dim.is_some() {
        SPARSITY_SAMPLE
    } else {
        u64::MAX
    };
    let (walk, max_index) = first_rows(input, read, bits, limit, scan)?;
    match dim {
        Some(d) => Ok((d, false, walk)),
        None if walk.n == 0 => Err(RunError::options(format!(
            "no examples in {}: the input is empty",
            input.name()
        ))),
        None => Ok((max_index, false, walk)),
    }
}

/// Reads `input` as far as the walk needs (`limit` examples, or all with `scan`): a
/// re-readable input through [`Input::open`] (its cache, or LIBSVM text without its values),
/// a stream read once by sampling its start in memory ([`Input::sample`], no scan). Returns the
/// walk and one past the largest index read (0 when sampled).
fn first_rows(
    input: &mut Input,
    read: &ReadOptions,
    bits: u32,
    limit: u64,
    scan: Option<ClassScan>,
) -> Result<(Walk, usize), RunError> {
    if input.rereadable() {
        let mut walk = Walk::new(scan, limit);
        let mut reader = input.open(read, bits)?;
        if let Opened::Text(ExampleReader::Libsvm(text)) = &mut reader {
            text.skip_values();
        }
        walk.read(&mut reader)?;
        return Ok((walk, reader.max_index_plus_one()));
    }
    let (format, zero_based) = (input.format(read.format), read.zero_based);
    let walk = input.sample(|text, name| {
        let mut reader = ExampleReader::from_reader(text, name, format, zero_based, bits)?;
        let mut walk = Walk::new(None, limit);
        walk.read(&mut reader)?;
        Ok(walk)
    })?;
    Ok((walk, 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A binary or multiclass run of a new learner on a file reads it once before the pass:
    /// the classes and the profile come from the same walk.
    #[test]
    fn one_walk_gives_the_classes_and_the_profile() {
        let text = b"2 1:1 3:2\n4 2:1\n2 5:1\n".to_vec();
        for dim in [None, Some(9)] {
            let mut input = Input::bytes("t.libsvm", text.clone());
            let found = prescan(&mut input, &ReadOptions::default(), 18, None, dim, true).unwrap();
            assert_eq!(input.opens(), 1, "dim {dim:?}");
            let scan = found.scan.expect("a file's labels are scanned");
            assert_eq!(scan.binary().unwrap().to_list(), "2,4");
            assert_eq!(found.profile.dim, dim.unwrap_or(5));
            assert_eq!(found.profile.avg_nnz, Some(4.0 / 3.0));
        }
    }

    /// A stream read once without `--dim` is spooled and then scanned like a file; with
    /// `--dim` it is only sampled, and its classes are left to its convention.
    #[test]
    fn a_stream_is_scanned_when_it_is_spooled() {
        let stream = || {
            let text = std::io::Cursor::new(b"1 1:1\n1 2:1\n0 1:1\n".to_vec());
            Input::reader("pipe", Box::new(text))
        };
        let mut input = stream();
        let found = prescan(&mut input, &ReadOptions::default(), 18, None, None, true).unwrap();
        assert_eq!(found.scan.unwrap().binary().unwrap().to_list(), "0,1");
        assert_eq!(found.profile.dim, 2);
        let mut input = stream();
        let found = prescan(&mut input, &ReadOptions::default(), 18, None, Some(4), true).unwrap();
        assert!(found.scan.is_none());
        assert_eq!(found.profile.avg_nnz, Some(1.0));
    }
}
