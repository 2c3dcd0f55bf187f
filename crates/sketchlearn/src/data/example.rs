//! One labelled example: a sparse row with a label and an importance weight.

/// A borrowed view of one row of a matrix: either dense (all `d` coordinates) or sparse
/// (strictly increasing `u32` indices with their values).
///
/// Sketches and learners take rows through this view so that dense slices and parsed sparse
/// examples go through the same code.
///
/// ```
/// use sketchlearn::Row;
/// let dense = Row::Dense(&[1.0, 0.0, 2.0]);
/// let sparse = Row::Sparse { indices: &[0, 2], values: &[1.0, 2.0] };
/// assert_eq!(dense.squared_norm(), sparse.squared_norm());
/// assert_eq!(sparse.max_index_plus_one(), 3);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Row<'a> {
    /// All coordinates, `values.len()` = dimension.
    Dense(&'a [f64]),
    /// Non-zero coordinates only; indices strictly increasing.
    Sparse {
        /// Column indices (0-based), strictly increasing.
        indices: &'a [u32],
        /// Values, same length as `indices`.
        values: &'a [f64],
    },
}

/// Whether every value is finite: a value is NaN or infinite exactly when its exponent bits
/// are all ones. The test is an integer compare folded with `&` (no early exit), which the
/// compiler vectorises, where `iter().all(f64::is_finite)` stops to branch at every value.
#[inline]
pub(crate) fn all_finite(values: &[f64]) -> bool {
    const EXPONENT: u64 = 0x7ff0_0000_0000_0000;
    values
        .iter()
        .fold(true, |ok, v| ok & (v.to_bits() & EXPONENT != EXPONENT))
}

/// `Some(n)` when the strictly increasing `indices` are exactly `0..n` with `n ≤ len` (a dense
/// row written in sparse form): since they are strictly increasing from 0, the last one is
/// `n − 1` exactly when there is no gap, so O(1) decides it.
fn leading_block(indices: &[u32], len: usize) -> Option<usize> {
    let n = indices.len();
    let is_block = n > 0 && indices[0] == 0 && indices[n - 1] as usize == n - 1;
    (is_block && n <= len).then_some(n)
}

use super::dot4::{dot4, dot4_rows};

impl<'a> Row<'a> {
    /// Squared Euclidean norm.
    pub fn squared_norm(&self) -> f64 {
        match self {
            Row::Dense(v) => v.iter().map(|x| x * x).sum(),
            Row::Sparse { values, .. } => values.iter().map(|x| x * x).sum(),
        }
    }

    /// One past the largest index that may be non-zero (the smallest dimension that holds the row).
    pub fn max_index_plus_one(&self) -> usize {
        match self {
            Row::Dense(v) => v.len(),
            Row::Sparse { indices, .. } => indices.last().map_or(0, |&i| i as usize + 1),
        }
    }

    /// Calls `f(j, x_j)` for every stored entry in index order: each coordinate of a dense row
    /// (zeros included), each listed entry of a sparse one.
    ///
    /// ```
    /// use sketchlearn::Row;
    /// let mut seen = Vec::new();
    /// Row::Dense(&[0.5, 0.0]).for_each_entry(|j, x| seen.push((j, x)));
    /// Row::Sparse { indices: &[4], values: &[2.0] }.for_each_entry(|j, x| seen.push((j, x)));
    /// assert_eq!(seen, [(0, 0.5), (1, 0.0), (4, 2.0)]);
    /// ```
    #[inline]
    pub fn for_each_entry(&self, mut f: impl FnMut(usize, f64)) {
        match self {
            Row::Dense(v) => v.iter().enumerate().for_each(|(j, &x)| f(j, x)),
            Row::Sparse { indices, values } => indices
                .iter()
                .zip(values.iter())
                .for_each(|(&j, &x)| f(j as usize, x)),
        }
    }

    /// Number of stored entries (d for a dense row, nnz for a sparse one).
    pub fn stored_len(&self) -> usize {
        match self {
            Row::Dense(v) => v.len(),
            Row::Sparse { values, .. } => values.len(),
        }
    }

    /// Dot product with a dense vector `w` (entries beyond `w.len()` count as zero).
    pub fn dot(&self, w: &[f64]) -> f64 {
        match self {
            Row::Dense(v) => v.iter().zip(w).map(|(a, b)| a * b).sum(),
            Row::Sparse { indices, values } => {
                if let Some(n) = leading_block(indices, w.len()) {
                    // Indices 0..n (dense data written sparsely): the same sums as below, with
                    // contiguous loads instead of gathers (bit-identical).
                    return dot4(&w[..n], values);
                }
                gather_dot(indices, values, w.len(), |i| w[i])
            }
        }
    }

    /// `out[i] = self.dot(&v[i·d..(i + 1)·d])` for the first `out.len()` rows of the row-major
    /// `v` (`d` columns), to the bit; a dense row written sparsely (indices `0..n`) runs the
    /// rows' sums side by side ([`dot4_rows`]).
    pub(crate) fn dot_rows(&self, v: &[f64], d: usize, out: &mut [f64]) {
        if let Row::Sparse { indices, values } = self {
            if let Some(n) = leading_block(indices, d) {
                return dot4_rows(v, d, &values[..n], out);
            }
            if indices.last().is_none_or(|&i| (i as usize) < d) {
                return gather_dot_rows(indices, values, v, d, out);
            }
        }
        for (i, o) in out.iter_mut().enumerate() {
            *o = self.dot(&v[i * d..(i + 1) * d]);
        }
    }

    /// `out += scale · row` on a dense vector (entries beyond `out.len()` are ignored).
    pub fn axpy_into(&self, scale: f64, out: &mut [f64]) {
        match self {
            Row::Dense(v) => {
                for (o, x) in out.iter_mut().zip(v.iter()) {
                    *o += scale * x;
                }
            }
            Row::Sparse { indices, values } => {
                if let Some(n) = leading_block(indices, out.len()) {
                    // Indices 0..n: a contiguous (vectorised) loop, the same products and sums.
                    for (o, x) in out[..n].iter_mut().zip(values.iter()) {
                        *o += scale * x;
                    }
                    return;
                }
                for (&i, &x) in indices.iter().zip(values.iter()) {
                    if let Some(o) = out.get_mut(i as usize) {
                        *o += scale * x;
                    }
                }
            }
        }
    }

    /// Writes the row into a dense buffer of the buffer's length (zeroing it first).
    pub fn write_dense(&self, out: &mut [f64]) {
        out.iter_mut().for_each(|o| *o = 0.0);
        self.axpy_into(1.0, out);
    }

    /// The entries as one contiguous slice when the row stores exactly the coordinates `0..len`:
    /// a dense row of length `len`, or a sparse row indexed `0..len` (dense data written sparsely).
    ///
    /// ```
    /// use sketchlearn::Row;
    /// let block = Row::Sparse { indices: &[0, 1, 2], values: &[1.0, 2.0, 3.0] };
    /// assert_eq!(block.contiguous(3), Some(&[1.0, 2.0, 3.0][..]));
    /// assert_eq!(Row::Sparse { indices: &[0, 2], values: &[1.0, 3.0] }.contiguous(3), None);
    /// assert_eq!(Row::Dense(&[1.0, 2.0]).contiguous(2), Some(&[1.0, 2.0][..]));
    /// ```
    pub fn contiguous(&self, len: usize) -> Option<&'a [f64]> {
        match *self {
            Row::Dense(v) => (v.len() == len).then_some(v),
            Row::Sparse { indices, values } => {
                (leading_block(indices, len) == Some(len)).then_some(values)
            }
        }
    }

    /// True when every stored value is exactly zero (or nothing is stored).
    pub fn is_zero(&self) -> bool {
        match self {
            Row::Dense(v) => v.iter().all(|&x| x == 0.0),
            Row::Sparse { values, .. } => values.iter().all(|&x| x == 0.0),
        }
    }
}

/// A labelled example with a sparse feature vector, as produced by the parsers.
///
/// `indices` are 0-based and strictly increasing; `values` are finite.
///
/// ```
/// use sketchlearn::Example;
/// let ex = Example { label: 1.0, weight: 1.0, indices: vec![0, 4], values: vec![0.5, -1.0] };
/// assert_eq!(ex.row().max_index_plus_one(), 5);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Example {
    /// The label (±1 for binary tasks, any finite value for regression or multiclass ids).
    pub label: f64,
    /// Importance weight (1 unless the input says otherwise).
    pub weight: f64,
    /// Feature indices, 0-based, strictly increasing.
    pub indices: Vec<u32>,
    /// Feature values, finite, same length as `indices`.
    pub values: Vec<f64>,
}

impl Example {
    /// The features as a sparse [`Row`] view.
    pub fn row(&self) -> Row<'_> {
        Row::Sparse {
            indices: &self.indices,
            values: &self.values,
        }
    }

    /// The features below `dim` as a sparse [`Row`] view: how a model of dimension `dim`
    /// scores an example holding indices it never saw (`test`, `predict`): they count as
    /// zero. Indices are strictly increasing, so the kept ones are a prefix.
    ///
    /// ```
    /// use sketchlearn::data::Example;
    /// let ex = Example { indices: vec![0, 4, 9], values: vec![1.0, 2.0, 3.0], ..Example::default() };
    /// assert_eq!(ex.row_within(5).stored_len(), 2);
    /// assert_eq!(ex.row_within(10).stored_len(), 3);
    /// ```
    pub fn row_within(&self, dim: usize) -> Row<'_> {
        let keep = self.indices.partition_point(|&i| (i as usize) < dim);
        Row::Sparse {
            indices: &self.indices[..keep],
            values: &self.values[..keep],
        }
    }

    /// Clears features and resets label and weight, keeping allocations for reuse.
    pub fn clear(&mut self) {
        self.label = 0.0;
        self.weight = 1.0;
        self.indices.clear();
        self.values.clear();
    }
}

/// `out[r] = gather_dot(indices, values, d, |i| v[r·d + i])` for the first `out.len()` rows of
/// the row-major `v` (`d` columns; every index `< d`), to the bit: four rows at a time, each
/// with its own four accumulators in [`gather_dot`]'s order, so that each index and value is
/// loaded once for the four rows and their sums run side by side (one row at a time, each
/// short sum waited on its own additions: FD-SON's `Bx` on a9a's rows of 14 non-zeros).
fn gather_dot_rows(indices: &[u32], values: &[f64], v: &[f64], d: usize, out: &mut [f64]) {
    const ROWS: usize = 4;
    let tail = indices.len() / 4 * 4;
    let done = out.len() / ROWS * ROWS;
    let mut blocks = out.chunks_exact_mut(ROWS);
    for (q, o) in (&mut blocks).enumerate() {
        let w: [&[f64]; ROWS] = std::array::from_fn(|r| &v[(q * ROWS + r) * d..][..d]);
        let mut acc = [[0.0f64; 4]; ROWS];
        for (ic, vc) in indices[..tail].chunks_exact(4).zip(values.chunks_exact(4)) {
            for (a, w) in acc.iter_mut().zip(&w) {
                for k in 0..4 {
                    a[k] += w[ic[k] as usize] * vc[k];
                }
            }
        }
        for ((o, a), w) in o.iter_mut().zip(&acc).zip(&w) {
            let rest: f64 = indices[tail..]
                .iter()
                .zip(&values[tail..])
                .map(|(&i, &x)| w[i as usize] * x)
                .sum();
            *o = (a[0] + a[1]) + (a[2] + a[3]) + rest;
        }
    }
    for (r, o) in blocks.into_remainder().iter_mut().enumerate() {
        let w = &v[(done + r) * d..][..d];
        *o = gather_dot(indices, values, d, |i| w[i]);
    }
}

/// `Σ_k w(i_k)·x_k` over a sparse row's increasing `indices` and `values`, for a vector of
/// length `len` read through `w` (entries at or beyond `len` count as zero): when every index is
/// in range, four independent accumulators break the floating-point add chain; otherwise one
/// sum over the indices in range. [`Row::dot`] and the interleaved tables' `dot_first` sum
/// through it, so they give the same bits.
#[inline(always)]
pub(crate) fn gather_dot(
    indices: &[u32],
    values: &[f64],
    len: usize,
    w: impl Fn(usize) -> f64,
) -> f64 {
    if indices.last().is_none_or(|&i| (i as usize) < len) {
        let mut acc = [0.0f64; 4];
        let mut chunks = indices.chunks_exact(4).zip(values.chunks_exact(4));
        for (ic, vc) in &mut chunks {
            for k in 0..4 {
                acc[k] += w(ic[k] as usize) * vc[k];
            }
        }
        let tail = indices.len() / 4 * 4;
        let rest: f64 = indices[tail..]
            .iter()
            .zip(&values[tail..])
            .map(|(&i, &x)| w(i as usize) * x)
            .sum();
        (acc[0] + acc[1]) + (acc[2] + acc[3]) + rest
    } else {
        indices
            .iter()
            .zip(values.iter())
            .filter(|&(&i, _)| (i as usize) < len)
            .map(|(&i, &x)| w(i as usize) * x)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`Row::dot_rows`] gives each row's [`Row::dot`] to the bit: sparse rows of 0–13
    /// non-zeros (the gathered four-row blocks, a tail of `nnz mod 4`, rows beyond the last
    /// block of four), a dense row written sparsely, signed zeros among the values.
    #[test]
    fn dot_rows_equal_one_dot_per_row_to_the_bit() {
        let mut next = crate::linalg::test_uniforms();
        let d = 37;
        for rows in [0, 1, 3, 4, 5, 9] {
            let mut v: Vec<f64> = (0..rows * d).map(|_| next() - 0.5).collect();
            v.iter_mut().step_by(7).for_each(|x| *x = -0.0);
            for nnz in 0..14 {
                let mut indices: Vec<u32> = (0..d as u32).filter(|_| next() < 0.4).collect();
                indices.truncate(nnz);
                let block: Vec<u32> = (0..nnz as u32).collect();
                for idx in [&indices, &block] {
                    let values: Vec<f64> = idx
                        .iter()
                        .map(|&i| if i % 5 == 0 { -0.0 } else { next() - 0.5 })
                        .collect();
                    let x = Row::Sparse {
                        indices: idx,
                        values: &values,
                    };
                    let mut got = vec![f64::NAN; rows];
                    x.dot_rows(&v, d, &mut got);
                    for (r, g) in got.iter().enumerate() {
                        let want = x.dot(&v[r * d..(r + 1) * d]);
                        assert_eq!(
                            g.to_bits(),
                            want.to_bits(),
                            "rows {rows}, nnz {nnz}, row {r}"
                        );
                    }
                }
            }
        }
    }
}
