//! The dimension of a new learner and what the representation choice knows of the input
//! ([`InputProfile`]): hashed input has `d = 2^bits`; LIBSVM input is pre-scanned — all of it
//! when `d` is not given, its first [`SPARSITY_SAMPLE`] examples when it is. A stream read once
//! is spooled for the whole scan ([`Input::spool`]) and sampled in memory for the first
//! examples ([`Input::sample`], replayed to the run), so a pipe gives the file's profile.

use super::{Input, ReadOptions, RunError};
use crate::data::{Example, ExampleReader, ExampleSource, Format};
use crate::linear::{InputProfile, SPARSITY_SAMPLE};

/// The profile of `input` for a new learner (`dim`: the dimension if given).
pub(crate) fn profile(
    input: &mut Input,
    options: &ReadOptions,
    dim: Option<usize>,
) -> Result<InputProfile, RunError> {
    let format = input.format(options.format);
    if format == Format::Vw {
        if dim.is_some() {
            return Err(RunError::options(
                "VW input has dimension 2^bits: give --bits, not --dim",
            ));
        }
        let bits = options.bits(format, None)?;
        return Ok(InputProfile {
            dim: 1usize << bits,
            hashed: true,
            avg_nnz: None,
        });
    }
    let (dim, avg_nnz) = match (dim, input.rereadable()) {
        (Some(d), false) => {
            let zero_based = options.zero_based;
            let sampled = input.sample(|text, name| {
                let reader = ExampleReader::from_reader(text, name, format, zero_based, 18)?;
                scan_reader(reader, SPARSITY_SAMPLE)
            })?;
            (d, sampled.1)
        }
        (Some(d), true) => (d, scan(input, options, SPARSITY_SAMPLE)?.1),
        (None, _) => {
            input.spool()?;
            let (d, avg_nnz) = scan(input, options, u64::MAX)?;
            if avg_nnz.is_none() {
                return Err(RunError::options(format!(
                    "no examples in {}: the input is empty",
                    input.name()
                )));
            }
            (d, avg_nnz)
        }
    };
    Ok(InputProfile {
        dim,
        hashed: false,
        avg_nnz,
    })
}

/// Reads up to `limit` examples: one past the largest index, and the average number of stored
/// features per example (`None` for an empty input).
fn scan(
    input: &mut Input,
    options: &ReadOptions,
    limit: u64,
) -> Result<(usize, Option<f64>), RunError> {
    scan_reader(input.open(options, 18)?, limit)
}

/// [`scan`] of an example reader.
fn scan_reader(mut reader: ExampleReader, limit: u64) -> Result<(usize, Option<f64>), RunError> {
    let (mut ex, mut n, mut nnz) = (Example::default(), 0u64, 0usize);
    while n < limit && reader.read_into(&mut ex)? {
        n += 1;
        nnz += ex.indices.len();
    }
    Ok((
        reader.max_index_plus_one(),
        (n > 0).then(|| nnz as f64 / n as f64),
    ))
}
