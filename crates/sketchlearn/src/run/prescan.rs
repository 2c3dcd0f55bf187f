//! The one walk over a new learner's input before learning (issue 24): the labels for the
//! classes ([`ClassScan`], when they come from the input) and what the representation choice
//! knows of it ([`InputProfile`]) are collected by the same reader, so a re-readable file is
//! read once before the pass, not once for each.
//!
//! Which examples the walk reads: all of them when the classes are scanned or the dimension is
//! not given (LIBSVM: one past the largest index), else the first [`SPARSITY_SAMPLE`] (the
//! sparsity of the input); VW input has `d = 2^bits` and is read for its classes and its first
//! rows (past them only each line's label is parsed, [`VwReader::headers_after`](crate::data::VwReader::headers_after)). The first [`SPARSITY_SAMPLE`] rows are always counted for the default's members
//! ([`SparsityProbe`], the rule of [`sparse_data`](crate::linear::sparse_data)): the same rows
//! whether the input is a file, a pipe or a cache (VW with `-q` excepted: its crossed rows are
//! not built here, and it keeps every member). A stream
//! read once is spooled first when the dimension is not given ([`Input::spool`]), so its classes
//! are scanned like a file's; with `--dim` it is only sampled in memory ([`Input::sample`],
//! replayed to the run), and its classes come from `--classes` or its `−1/+1` / `0/1` convention.

use super::cache::Opened;
use super::halves::{self, Halves};
use super::input::examples;
use super::{Input, ReadOptions, RunError};
use crate::data::{
    ClassScan, Example, ExampleReader, ExampleSource, Format, Interactions, LabelField,
    LibsvmOptions, ParseError, Schema,
};
use crate::linear::{InputProfile, SparsityProbe, SPARSITY_SAMPLE};

/// What the walk found: the labels (when scanned) and the profile.
pub(crate) struct Prescan {
    pub scan: Option<ClassScan>,
    pub profile: InputProfile,
}

/// The state of one walk: the labels collected (when asked), the stored features of the
/// first `limit` examples, and the first rows' [`SparsityProbe`] (within those `limit`).
pub(super) struct Walk {
    pub(super) scan: Option<ClassScan>,
    /// The labels are scanned to the input's end (else only within `limit`: a [`guess`]).
    scan_to_end: bool,
    limit: u64,
    pub(super) n: u64,
    pub(super) nnz: usize,
    pub(super) probe: SparsityProbe,
    /// A [`guess`]'s walk: stop once the first rows cannot be dense ([`Self::cannot_be_dense`]).
    stop_when_sparse: bool,
    /// One past the largest index read, kept only by a [`guess`]'s walk (`stop_when_sparse`;
    /// 0 otherwise: other walks get the dimension from the reader, `max_index_plus_one`).
    dim: usize,
}

impl Walk {
    pub(super) fn new(scan: Option<ClassScan>, limit: u64) -> Self {
        Walk {
            scan,
            scan_to_end: true,
            limit,
            n: 0,
            nnz: 0,
            probe: SparsityProbe::default(),
            stop_when_sparse: false,
            dim: 0,
        }
    }

    /// Reads `source` as far as needed: to its end when the labels are scanned, else `limit`
    /// examples.
    fn read<S>(&mut self, source: &mut S) -> Result<(), RunError>
    where
        S: ExampleSource<Error = ParseError> + ?Sized,
    {
        self.read_counting(source, |_, ex| ex.indices.len())
    }

    /// [`read`](Self::read) with `stored` giving the number of stored features of the
    /// example just read (a reader may pass over the features themselves past the sampled rows,
    /// [`CacheReader::headers_after`](super::cache_file::CacheReader::headers_after)).
    fn read_counting<S>(
        &mut self,
        source: &mut S,
        stored: impl Fn(&S, &Example) -> usize,
    ) -> Result<(), RunError>
    where
        S: ExampleSource<Error = ParseError> + ?Sized,
    {
        let mut ex = Example::default();
        let to_end = self.scan.is_some() && self.scan_to_end;
        while (to_end || self.n < self.limit) && source.read_into(&mut ex)? {
            if let Some(scan) = self.scan.as_mut().filter(|_| to_end || self.n < self.limit) {
                scan.add_read(source, &ex)?;
            }
            if self.n < self.limit {
                self.n += 1;
                self.nnz += stored(source, &ex);
                if self.n <= SPARSITY_SAMPLE {
                    self.probe.observe(&ex.indices);
                }
                if self.stop_when_sparse && self.stops_at(&ex) {
                    break;
                }
            }
        }
        Ok(())
    }

    /// Whether the first `limit` rows cannot be dense in the sense of
    /// [`Speculation::worth_it`](super::speculation::Speculation::worth_it) — on average at
    /// least half of their dimension `D` stored, `2·nnz ≥ limit·D` — whatever the rows not read
    /// yet hold. A row stores distinct indices below `D` (strictly increasing, or an error), so
    /// the `limit − n` rows left add at most `(limit − n)·D`, and the final `2·nnz` is at most
    /// `2·nnz_n + 2·(limit − n)·D`; that is below `limit·D` when `2·nnz_n < (2n − limit)·D`,
    /// which past the sample's middle (`2n > limit`) only grows with `D ≥ self.dim`. So a
    /// sparse file's guess (r8_earn_vs_rest: 58 of 23,585 features) stops after about half of
    /// its sampled rows instead of all of them (issue 27: the guess is read on one thread before
    /// the walk, and it is declined anyway). Exact in integers; the check in floating point
    /// declines the same files (`nnz / limit < D / 2` by at least `1 / (2·limit)`, far above
    /// the rounding of numbers below 2^32).
    fn cannot_be_dense(&self) -> bool {
        let past_middle = (2 * self.n).saturating_sub(self.limit);
        2 * (self.nnz as u128) < u128::from(past_middle) * self.dim as u128
    }

    /// A [`guess`]'s walk after `ex`, its latest row: `dim` takes in the row's largest index
    /// (kept only by such a walk), then whether the sample [`cannot_be_dense`](Self::cannot_be_dense).
    fn stops_at(&mut self, ex: &Example) -> bool {
        if let Some(&last) = ex.indices.last() {
            self.dim = self.dim.max(last as usize + 1);
        }
        self.cannot_be_dense()
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
            let walk = if scan.is_some() && !input.has_cache() {
                vw_labels(input, &read, bits, scan, limit)?
            } else if scan.is_some() {
                // A cache written here serves the pass only with the pass's crosses (`-q`).
                let mut walk = Walk::new(scan, limit);
                walk.read(&mut *examples(input, &read, bits, None, read.interactions)?)?;
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

/// VW text read for every label but the features only of its first `limit` rows (past them
/// only each line's header, [`VwReader::headers_after`](crate::data::VwReader::headers_after)):
/// the labels need no features, so a bad feature past those rows is left to the pass.
pub(super) fn vw_labels(
    input: &mut Input,
    read: &ReadOptions,
    bits: u32,
    scan: Option<ClassScan>,
    limit: u64,
) -> Result<Walk, RunError> {
    let mut walk = Walk::new(scan, limit);
    let plain = ReadOptions {
        interactions: Interactions::default(),
        ..read.clone()
    };
    let mut reader = input.open(&plain, bits)?;
    if let Opened::Text(ExampleReader::Vw(text)) = &mut reader {
        text.headers_after(limit);
    }
    walk.read(&mut reader)?;
    Ok(walk)
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
        None if walk.n == 0 => Err(RunError::options(super::error::no_examples(input.name()))),
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
    first_rows_split(input, read, bits, limit, scan, Some(SPLIT_BYTES))
}

/// [`first_rows`] with the smallest file walked on two threads ([`on_two_threads`]) given:
/// `None` walks every file on the caller's thread alone.
pub(super) fn first_rows_split(
    input: &mut Input,
    read: &ReadOptions,
    bits: u32,
    limit: u64,
    scan: Option<ClassScan>,
    split_from: Option<u64>,
) -> Result<(Walk, usize), RunError> {
    let split = |min_bytes| on_two_threads(input, read, limit, scan.as_ref(), min_bytes);
    if let Some(found) = split_from.and_then(split) {
        return Ok(found);
    }
    if input.rereadable() {
        let mut walk = Walk::new(scan, limit);
        let mut reader = input.open(read, bits)?;
        match &mut reader {
            Opened::Text(ExampleReader::Libsvm(text)) => text.skip_values(),
            // The sampled rows' features, then only the counts and the largest index.
            Opened::Cached(cache) => cache.headers_after(SPARSITY_SAMPLE),
            _ => {}
        }
        walk.read_counting(&mut reader, |r, ex| match r {
            Opened::Cached(cache) => cache.last_nnz(),
            _ => ex.indices.len(),
        })?;
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

/// The walk's findings guessed from the first [`SPARSITY_SAMPLE`] examples of a plain LIBSVM
/// file (no `--dim`, no cache), for a run that learns before the walk would have ended
/// ([`super::speculation`]): the labels of those rows (when `classes`), their sample and
/// average stored features, and one past their largest index as the dimension — what
/// [`prescan`] finds when no later example has a larger index and the later rows keep the
/// representation's choice, which the run checks at its first pass's end. `None` (walk the
/// whole file as before) when the input is not such a file, holds fewer examples than the
/// sample (the walk would read all of it anyway) or fails to read: the whole walk then
/// reports the error, at its place.
pub(crate) fn guess(
    input: &mut Input,
    read: &ReadOptions,
    bits: u32,
    classes: bool,
) -> Option<Prescan> {
    let plain = input.plain_path().is_some() && !input.has_cache();
    if input.format(read.format) != Format::Libsvm || !plain {
        return None;
    }
    let read = ReadOptions {
        read_ahead: false,
        ..read.clone()
    };
    let mut walk = Walk::new(
        classes.then(|| ClassScan::new(input.name())),
        SPARSITY_SAMPLE,
    );
    walk.scan_to_end = false;
    walk.stop_when_sparse = true;
    let mut reader = input.open(&read, bits).ok()?;
    if let Opened::Text(ExampleReader::Libsvm(text)) = &mut reader {
        text.skip_values();
    }
    walk.read(&mut reader).ok()?;
    if walk.n < SPARSITY_SAMPLE {
        return None;
    }
    let profile = InputProfile {
        dim: reader.max_index_plus_one(),
        hashed: false,
        avg_nnz: walk.avg_nnz(),
        sample: walk.probe.sample(),
    };
    Some(Prescan {
        scan: walk.scan,
        profile,
    })
}

/// The smallest file [`first_rows`] reads on two threads (2 MiB). The walk is on the
/// wall-clock's path before any learning, and a thread start costs tens of microseconds against
/// the milliseconds a MiB of text takes to walk: r8_earn_vs_rest (6 MB), w8a (3.4 MB) and a9a
/// (2.3 MB) are split too. When the first half holds fewer than the sampled rows (lines that
/// average over 1 KiB, a dense file), the second half's first rows complete the sample.
pub(super) const SPLIT_BYTES: u64 = 2 << 20;

/// [`first_rows`] of a plain LIBSVM file of at least `min_bytes` that the walk reads to its
/// end, on two threads ([`halves`]): each half walked by its own reader, then the second
/// half's labels (in the order of their lines, at their lines in the file), examples and
/// largest index added to the first's — what one reader gives, since the walk only counts,
/// takes maxima and records each label's first line. The sampled rows ([`SPARSITY_SAMPLE`])
/// are the first reader's, then, when its half holds fewer, the first rows of the second half
/// ([`KeepFirstRows`]): the rows one reader samples, in its order. `None` (read it on one
/// thread) when the file is not split or anything fails in either half: the one-thread read
/// then reports the error exactly as before, at its place.
fn on_two_threads(
    input: &Input,
    read: &ReadOptions,
    limit: u64,
    scan: Option<&ClassScan>,
    min_bytes: u64,
) -> Option<(Walk, usize)> {
    let to_the_end = scan.is_some() || limit == u64::MAX;
    if input.format(read.format) != Format::Libsvm || !to_the_end {
        return None;
    }
    let options = LibsvmOptions {
        zero_based: read.zero_based,
    };
    let Halves {
        mut first,
        mut second,
    } = halves::split(input.plain_path()?, input.name(), options, min_bytes)?;
    first.skip_values();
    second.skip_values();
    let fresh = || scan.map(|_| ClassScan::new(input.name()));
    let mut a = Walk::new(fresh(), limit);
    // The second half's examples are counted only when every example is.
    let mut b = Walk::new(fresh(), if limit == u64::MAX { limit } else { 0 });
    let mut kept = KeepFirstRows::new(&mut second);
    let (ok_a, ok_b) = std::thread::scope(|s| {
        let second_half = s.spawn(|| b.read(&mut kept).is_ok());
        let ok_a = a.read(&mut first).is_ok();
        let ok_b = second_half
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (ok_a, ok_b)
    });
    let KeepFirstRows { indices, ends, .. } = kept;
    if !(ok_a && ok_b) {
        return None;
    }
    let mut start = 0;
    for &end in ends
        .iter()
        .take(SPARSITY_SAMPLE.saturating_sub(a.n) as usize)
    {
        // Rows past the first half's, within the sample: counted here when only the sample is
        // (else with all of the second half's below).
        a.probe.observe(&indices[start..end]);
        if limit != u64::MAX {
            a.n += 1;
            a.nnz += end - start;
        }
        start = end;
    }
    let lines_before = first.line();
    if let (Some(all), Some(later)) = (a.scan.as_mut(), b.scan.as_ref()) {
        let mut by_line: Vec<_> = later.labels().collect();
        by_line.sort_by_key(|&(_, line)| line);
        for (label, line) in by_line {
            all.add_label(label, lines_before + line, 1).ok()?;
        }
    }
    a.n += b.n;
    a.nnz += b.nnz;
    let max_index = first.max_index_plus_one().max(second.max_index_plus_one());
    Some((a, max_index))
}

/// A source that keeps the stored indices of its first [`SPARSITY_SAMPLE`] examples: the
/// second half's first rows, which complete the sample when the first half holds fewer (and so
/// the file is walked once, not declined and walked again).
struct KeepFirstRows<'a, S: ?Sized> {
    source: &'a mut S,
    indices: Vec<u32>,
    /// Where each kept row's indices end in `indices`.
    ends: Vec<usize>,
}

impl<'a, S: ?Sized> KeepFirstRows<'a, S> {
    fn new(source: &'a mut S) -> Self {
        KeepFirstRows {
            source,
            indices: Vec::new(),
            ends: Vec::new(),
        }
    }
}

impl<S: ExampleSource<Error = ParseError> + ?Sized> ExampleSource for KeepFirstRows<'_, S> {
    type Error = ParseError;
    fn read_into(&mut self, ex: &mut Example) -> Result<bool, ParseError> {
        let more = self.source.read_into(ex)?;
        if more && (self.ends.len() as u64) < SPARSITY_SAMPLE {
            self.indices.extend_from_slice(&ex.indices);
            self.ends.push(self.indices.len());
        }
        Ok(more)
    }
    fn line(&self) -> u64 {
        self.source.line()
    }
    fn label_field(&self) -> Option<&LabelField> {
        self.source.label_field()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The guess stops early only when the whole sample cannot be dense: a walk of rows of
        /// distinct sorted indices that stops after row `n` (`cannot_be_dense`) has, over all of
        /// its `limit` rows, `2·nnz < limit·D` — whatever the rows after `n` hold.
        #[test]
        fn a_guess_stops_only_when_the_sample_cannot_be_dense(
            rows in prop::collection::vec(prop::collection::btree_set(0u32..64, 0..64), 1..40),
        ) {
            let limit = rows.len() as u64;
            let mut walk = Walk::new(None, limit);
            let (all_nnz, all_dim) = rows.iter().fold((0, 0), |(nnz, dim), r| {
                (nnz + r.len(), r.last().map_or(dim, |&l| dim.max(l as usize + 1)))
            });
            let dense = 2 * all_nnz as u64 >= limit * all_dim as u64;
            for row in &rows {
                walk.n += 1;
                walk.nnz += row.len();
                if let Some(&last) = row.last() {
                    walk.dim = walk.dim.max(last as usize + 1);
                }
                if walk.cannot_be_dense() {
                    prop_assert!(!dense, "stopped at row {} of a dense sample", walk.n);
                }
            }
        }
    }

    /// A sparse file's guess reads about half of its sampled rows (a row past the middle of
    /// the sample, then declined: fewer rows than the sample); a dense file's reads all of them.
    #[test]
    fn a_sparse_files_guess_stops_past_the_middle_of_its_sample() {
        let rows = SPARSITY_SAMPLE as usize + 10;
        let sparse: String = (0..rows)
            .map(|k| format!("{} {}:1 {}:1\n", k % 2, k % 50 + 1, 100 + k % 7))
            .collect();
        let dense: String = (0..rows)
            .map(|k| format!("{} 1:{} 2:1 3:1\n", k % 2, k % 3))
            .collect();
        let path = |name: &str, text: &str| {
            let p = std::env::temp_dir()
                .join(format!("sketchlearn-guess-{}-{name}", std::process::id()));
            std::fs::write(&p, text).unwrap();
            p
        };
        let (sparse_path, dense_path) =
            (path("sparse.libsvm", &sparse), path("dense.libsvm", &dense));
        let read = ReadOptions::default();
        let mut input = Input::path(sparse_path.to_str().unwrap());
        assert!(guess(&mut input, &read, 18, true).is_none());
        let mut walk = Walk::new(None, SPARSITY_SAMPLE);
        walk.stop_when_sparse = true;
        let mut reader =
            crate::data::LibsvmReader::new(sparse.as_bytes(), "s", LibsvmOptions::default());
        walk.read(&mut reader).unwrap();
        // D = 106, two stored per row: stops at the first n with 4n < (2n − 1000)·106.
        assert_eq!(walk.n, 510);
        let mut input = Input::path(dense_path.to_str().unwrap());
        let found = guess(&mut input, &read, 18, true).expect("a dense file is guessed");
        assert_eq!((found.profile.dim, found.profile.avg_nnz), (3, Some(3.0)));
        std::fs::remove_file(sparse_path).ok();
        std::fs::remove_file(dense_path).ok();
    }

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

    /// VW text: every label is scanned, but the features only of the first rows; a bad
    /// feature past them is left to the pass, a bad label anywhere is the walk's error.
    #[test]
    fn vw_labels_are_scanned_past_the_sampled_rows_without_their_features() {
        let rows = SPARSITY_SAMPLE as usize + 5;
        let line = |k: usize| match k {
            _ if k == rows - 2 => "3 |f c:junk\n".to_string(),
            _ => format!("{} |f a{} b:{}\n", 1 + 2 * (k % 2), k % 7, k % 5 + 1),
        };
        let text: String = (0..rows).map(line).collect();
        let mut input = Input::bytes("t.vw", text.clone().into_bytes());
        let found = prescan(&mut input, &ReadOptions::default(), 18, None, None, true).unwrap();
        assert_eq!(found.scan.unwrap().binary().unwrap().to_list(), "1,3");
        assert_eq!(found.profile.avg_nnz, Some(2.0));
        assert_eq!(input.opens(), 1);
        let bad = text.replacen("3 |f c:junk", "x3 |f c:junk", 1);
        let mut input = Input::bytes("t.vw", bad.into_bytes());
        let err = prescan(&mut input, &ReadOptions::default(), 18, None, None, true);
        let err = err
            .err()
            .expect("a bad label is the walk's error")
            .to_string();
        assert!(err.contains(&format!("t.vw:{}:1", rows - 1)), "{err}");
    }

    /// What a walk found, to compare: labels with their first lines, counts, sample, dimension.
    type Found = (Vec<(String, u64)>, u64, usize, String, usize);

    fn found((walk, max_index): &(Walk, usize)) -> Found {
        let labels = walk.scan.iter().flat_map(|s| s.labels());
        let labels = labels.map(|(l, line)| (l.to_string(), line)).collect();
        let sample = format!("{:?}", walk.probe.sample());
        (labels, walk.n, walk.nnz, sample, *max_index)
    }

    /// `text` as a file, walked on two threads (`None`: declined) and on one.
    fn both_ways(text: &str, dim: Option<usize>) -> (Option<Found>, Result<Found, String>) {
        let path = std::env::temp_dir().join(format!(
            "sketchlearn-halves-{}-{:x}.libsvm",
            std::process::id(),
            text.len() ^ text.as_bytes().iter().map(|&b| b as usize).sum::<usize>()
        ));
        std::fs::write(&path, text).unwrap();
        let input = Input::path(path.to_str().unwrap());
        let limit = dim.map_or(u64::MAX, |_| SPARSITY_SAMPLE);
        let read = ReadOptions::default();
        let scan = || Some(ClassScan::new(input.name()));
        let two = on_two_threads(&input, &read, limit, scan().as_ref(), 0).map(|w| found(&w));
        let mut input = Input::path(path.to_str().unwrap());
        let one = first_rows(&mut input, &read, 18, limit, scan());
        std::fs::remove_file(&path).unwrap();
        (two, one.map(|w| found(&w)).map_err(|e| e.to_string()))
    }

    /// Rows of 1 to 6 features; the label `7` first appears on line `seven`, blank lines and
    /// comments on some lines.
    fn rows(n: usize, seven: usize) -> String {
        (0..n)
            .map(|k| {
                let label = if k == seven { "7" } else { ["1", "-1"][k % 2] };
                let features: String = (0..1 + k % 6)
                    .map(|j| format!(" {}:{}.5", 1 + j * 3 + k % 11, j))
                    .collect();
                let extra = ["", "\n", "\n# note\n", "\r"][usize::from(k % 97 == 3) * (k % 4)];
                format!("{label}{features}{extra}\n")
            })
            .collect()
    }

    /// The walk on two threads finds what the walk on one finds: labels first seen in either
    /// half at their lines, every example counted, the largest index of both halves.
    #[test]
    fn two_halves_walk_like_one_reader() {
        for (n, seven) in [(3000, 2900), (3000, 1700), (3000, 10), (2400, 2399)] {
            for dim in [None, Some(50)] {
                let (two, one) = both_ways(&rows(n, seven), dim);
                assert_eq!(two.expect("split"), one.unwrap(), "n {n}, 7 on {seven}");
            }
        }
    }

    /// Declined, and so read by one reader with its errors where they are: a bad line in
    /// either half, a byte-order mark at the cut.
    #[test]
    fn two_halves_decline_errors_and_marks() {
        for bad in [100, 2800] {
            let mut lines: Vec<&str> = rows(3000, 5).leak().lines().collect();
            lines[bad] = "1 2:1 x:1";
            let (two, one) = both_ways(&(lines.join("\n") + "\n"), None);
            assert!(two.is_none());
            let err = one.unwrap_err();
            assert!(
                err.ends_with(&format!(":{}:7: cannot parse feature index \"x\"", bad + 1)),
                "{err}"
            );
        }
        let text = rows(3000, 5);
        let middle = text[text.len() / 2..].find('\n').unwrap() + text.len() / 2 + 1;
        let marked = format!("{}\u{feff}{}", &text[..middle], &text[middle..]);
        assert!(both_ways(&marked, None).0.is_none());
    }

    /// A first half shorter than the sample (long lines, a small file) is not declined, which
    /// walked the file twice (both halves, then the whole): the second half's first rows
    /// complete the sample, and the counts are one reader's with and without `--dim`.
    #[test]
    fn a_first_half_shorter_than_the_sample_is_completed_by_the_second() {
        let dense = |n: usize| -> String {
            (0..n)
                .map(|k| {
                    let features: String = (0..40 + k % 200)
                        .map(|j| format!(" {}:{}", 1 + j * (1 + k % 3), k % 9))
                        .collect();
                    format!("{}{features}\n", ["1", "-1"][k % 2])
                })
                .collect()
        };
        for text in [
            rows(1500, 5),
            rows(1500, 1400),
            rows(3, 1),
            dense(900),
            dense(1990),
        ] {
            for dim in [None, Some(50)] {
                let (two, one) = both_ways(&text, dim);
                let lines = text.lines().count();
                assert_eq!(
                    two.expect("split"),
                    one.unwrap(),
                    "{lines} lines, dim {dim:?}"
                );
            }
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
