//! An in-memory data set with its examples stored back to back, for loops that pass over the
//! same examples many times (benchmarks, multi-pass training, hyper-parameter sweeps).
//!
//! A `Vec<Example>` holds two heap allocations per example, scattered wherever the allocator put
//! them while parsing. A loop over it reads every example cold from memory, and the sparse-time
//! learners — whose own work per example is about a microsecond — then spend a noticeable part
//! of their time waiting for the example itself: on `r8_earn_vs_rest` (60 non-zeros, 720 bytes
//! per example), copying the example into the intercept's buffer was 10 % of sparse Oja-SON's
//! profile. A streaming run does not pay this (its parser fills one reused buffer, hot in the
//! cache), nor does Vowpal Wabbit's learner (it learns from the buffer its parser thread just
//! filled). [`PackedExamples`] stores the indices, values, labels and weights in flat arrays and
//! its iterator asks the CPU to fetch the example [`PREFETCH_AHEAD`] positions ahead while the
//! current one is learned, so that a learner sees its input in the cache as it would when
//! streaming. Measured (scratch harness, r8_earn_vs_rest ×26, sparse Oja-SON + diagonal, m = 10,
//! b = 18): 0.93 M examples/s from a `Vec<Example>`, 0.98 M packed, 1.11 M packed with the
//! prefetch.
//!
//! ```
//! use sketchlearn::data::PackedExamples;
//! use sketchlearn::{Example, Row};
//! let ex = Example { label: 1.0, weight: 1.0, indices: vec![2, 7], values: vec![0.5, -1.0] };
//! let mut data = PackedExamples::new();
//! data.push(&ex);
//! data.push(&Example { label: -1.0, ..ex.clone() });
//! assert_eq!(data.len(), 2);
//! let labels: Vec<f64> = data.iter().map(|e| e.label).collect();
//! assert_eq!(labels, [1.0, -1.0]);
//! let first = data.get(0).unwrap();
//! assert!(matches!(first.row, Row::Sparse { indices: &[2, 7], .. }));
//! ```

use super::{Example, Row};

/// How many examples ahead [`PackedExamplesIter`] prefetches (1, 2, 4 and 8 measured the same
/// within noise; 2 leaves the current example's data time to arrive when examples are short).
pub const PREFETCH_AHEAD: usize = 2;

/// Examples stored in flat arrays: example `k`'s features are
/// `indices[offsets[k]..offsets[k + 1]]` and the same range of `values`.
#[derive(Clone, Debug, Default)]
pub struct PackedExamples {
    indices: Vec<u32>,
    values: Vec<f64>,
    offsets: Vec<usize>,
    labels: Vec<f64>,
    weights: Vec<f64>,
}

/// One example of a [`PackedExamples`], borrowed.
#[derive(Clone, Copy, Debug)]
pub struct ExampleRef<'a> {
    /// The features (always [`Row::Sparse`]).
    pub row: Row<'a>,
    /// The label.
    pub label: f64,
    /// The importance weight.
    pub weight: f64,
}

impl PackedExamples {
    /// An empty set.
    pub fn new() -> Self {
        PackedExamples {
            offsets: vec![0],
            ..Default::default()
        }
    }

    /// Appends a copy of `ex`.
    pub fn push(&mut self, ex: &Example) {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        self.indices.extend_from_slice(&ex.indices);
        self.values.extend_from_slice(&ex.values);
        self.offsets.push(self.indices.len());
        self.labels.push(ex.label);
        self.weights.push(ex.weight);
    }

    /// Number of examples.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Whether there are no examples.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// Total number of stored non-zeros.
    pub fn nnz(&self) -> usize {
        self.indices.len()
    }

    /// Example `k`, if `k < len()`.
    pub fn get(&self, k: usize) -> Option<ExampleRef<'_>> {
        let &[a, b] = self.offsets.get(k..k.checked_add(2)?)? else {
            return None;
        };
        Some(ExampleRef {
            row: Row::Sparse {
                indices: &self.indices[a..b],
                values: &self.values[a..b],
            },
            label: self.labels[k],
            weight: self.weights[k],
        })
    }

    /// Asks the CPU to bring example `k`'s indices and values into the cache (a hint: no effect
    /// on results; nothing happens for `k ≥ len()` or off x86-64).
    #[inline]
    pub fn prefetch(&self, k: usize) {
        if let Some(&[a, b]) = k.checked_add(2).and_then(|e| self.offsets.get(k..e)) {
            prefetch_slice(&self.indices[a..b]);
            prefetch_slice(&self.values[a..b]);
        }
    }

    /// The examples in order, each prefetched [`PREFETCH_AHEAD`] positions before it is
    /// returned.
    pub fn iter(&self) -> PackedExamplesIter<'_> {
        for k in 0..PREFETCH_AHEAD {
            self.prefetch(k);
        }
        PackedExamplesIter {
            data: self,
            next: 0,
        }
    }
}

/// Prefetch hints for every cache line of `s` (64-byte lines).
#[inline]
pub(crate) fn prefetch_slice<T>(s: &[T]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = s.as_ptr() as *const i8;
        let bytes = std::mem::size_of_val(s);
        let mut off = 0;
        while off < bytes {
            // SAFETY: prefetching is a hint that never faults; the address lies inside `s`.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(off)) };
            off += 64;
        }
        if bytes > 0 {
            // The last line, which the stride misses when `s` does not start on a line.
            // SAFETY: as above.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(bytes - 1)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = s;
}

impl<'a> From<&'a [Example]> for PackedExamples {
    fn from(examples: &'a [Example]) -> Self {
        let mut p = PackedExamples::new();
        let nnz = examples.iter().map(|e| e.indices.len()).sum();
        p.indices.reserve_exact(nnz);
        p.values.reserve_exact(nnz);
        p.offsets.reserve_exact(examples.len());
        p.labels.reserve_exact(examples.len());
        p.weights.reserve_exact(examples.len());
        for e in examples {
            p.push(e);
        }
        p
    }
}

impl<'a> IntoIterator for &'a PackedExamples {
    type Item = ExampleRef<'a>;
    type IntoIter = PackedExamplesIter<'a>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// Iterator over a [`PackedExamples`] (see [`PackedExamples::iter`]).
#[derive(Clone, Debug)]
pub struct PackedExamplesIter<'a> {
    data: &'a PackedExamples,
    next: usize,
}

impl<'a> Iterator for PackedExamplesIter<'a> {
    type Item = ExampleRef<'a>;

    #[inline]
    fn next(&mut self) -> Option<ExampleRef<'a>> {
        let ex = self.data.get(self.next)?;
        self.data.prefetch(self.next + PREFETCH_AHEAD);
        self.next += 1;
        Some(ex)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.data.len() - self.next.min(self.data.len());
        (n, Some(n))
    }
}

impl ExactSizeIterator for PackedExamplesIter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    fn example(k: usize) -> Example {
        let n = k % 5;
        Example {
            label: if k % 2 == 0 { 1.0 } else { -1.0 },
            weight: 1.0 + k as f64,
            indices: (0..n as u32).map(|i| 3 * i + k as u32).collect(),
            values: (0..n).map(|i| i as f64 - 0.5 * k as f64).collect(),
        }
    }

    #[test]
    fn iteration_returns_every_example_unchanged() {
        let exs: Vec<Example> = (0..40).map(example).collect();
        let packed = PackedExamples::from(&exs[..]);
        assert_eq!(packed.len(), 40);
        assert_eq!(
            packed.nnz(),
            exs.iter().map(|e| e.indices.len()).sum::<usize>()
        );
        assert_eq!(packed.iter().len(), 40);
        let mut seen = 0;
        for (e, p) in exs.iter().zip(&packed) {
            let Row::Sparse { indices, values } = p.row else {
                panic!("packed rows are sparse")
            };
            assert_eq!(indices, &e.indices[..]);
            assert_eq!(values, &e.values[..]);
            assert_eq!((p.label, p.weight), (e.label, e.weight));
            seen += 1;
        }
        assert_eq!(seen, 40);
        assert!(packed.get(40).is_none());
        assert!(packed.get(usize::MAX).is_none());
        // Prefetching past the end or of an empty example is harmless.
        packed.prefetch(40);
        packed.prefetch(usize::MAX);
        packed.prefetch(0);
    }

    #[test]
    fn empty_and_default_sets_are_empty() {
        for p in [PackedExamples::new(), PackedExamples::default()] {
            assert!(p.is_empty());
            assert_eq!(p.iter().count(), 0);
            assert!(p.get(0).is_none());
        }
        let mut d = PackedExamples::default();
        d.push(&example(3));
        assert_eq!(d.get(0).unwrap().label, -1.0);
    }
}
