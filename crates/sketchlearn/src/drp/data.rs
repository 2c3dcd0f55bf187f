//! The training matrix of dual random projection: `n` sparse examples (the columns `x_i` of the
//! paper's `d × n` matrix `X`, DESIGN.md §4 item 16) with labels `y_i ∈ {−1, +1}`, stored as
//! compressed sparse rows.

use super::DrpError;
use crate::data::{Example, LibsvmReader};
use crate::Row;
use std::io::BufRead;

/// `n` labelled sparse examples in memory (CSR), labels ±1.
///
/// ```
/// use sketchlearn::drp::Dataset;
/// use sketchlearn::Row;
/// let mut data = Dataset::new(0);
/// data.push(Row::Sparse { indices: &[0, 3], values: &[1.0, 2.0] }, 1.0).unwrap();
/// data.push(Row::Dense(&[0.0, -1.0]), -1.0).unwrap();
/// assert_eq!((data.len(), data.dim(), data.nnz()), (2, 4, 3));
/// assert!(data.push(Row::Dense(&[1.0]), 0.0).is_err()); // labels must be ±1
/// let mut margins = vec![0.0; 2];
/// data.margins(&[1.0, 1.0, 0.0, 1.0], &mut margins); // x_iᵀw
/// assert_eq!(margins, vec![3.0, -1.0]);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Dataset {
    dim: usize,
    indptr: Vec<usize>,
    indices: Vec<u32>,
    values: Vec<f64>,
    labels: Vec<f64>,
    /// Regression: `1 − t_i` for the real targets `t_i` (the labels are then all `+1`).
    base_offsets: Option<Vec<f64>>,
}

impl Dataset {
    /// An empty set of dimension `dim` (pushing rows with larger indices grows it).
    pub fn new(dim: usize) -> Self {
        Dataset {
            dim,
            indptr: vec![0],
            ..Default::default()
        }
    }

    /// An empty regression set of dimension `dim`: examples with real targets, pushed with
    /// [`Dataset::push_target`], for the ridge (squared) loss.
    ///
    /// Ridge regression `min_w λ/2‖w‖² + Σ_i ½(t_i − x_iᵀw)²` is problem (1) with the ridge
    /// loss `ℓ(z) = ½(1 − z)²` evaluated at `z_i = x_iᵀw + (1 − t_i)`: every label `y_i` is
    /// `+1` and the margin carries a fixed offset `c_i = 1 − t_i` ([`Dataset::base_offsets`]),
    /// the same offset form (13) that Algorithm 2 uses. The dual variables are
    /// `α_i = ℓ'(z_i) = x_iᵀw − t_i` (the residuals), and Proposition 2.1's recovery
    /// `w = −(1/λ) X D(y) α` becomes `w = (1/λ) Σ_i (t_i − x_iᵀw) x_i` — the normal equation
    /// `(λI + XXᵀ) w = X t` of ridge regression, so the paper's Algorithms 1 and 2 and
    /// Theorems 2–5 (which only need `ℓ` smooth and convex) apply unchanged; only the offsets
    /// `o_i` of (13) gain `c_i`. On ±1 targets this is the same problem as the ridge loss on
    /// labels `y_i = t_i`, since `½(1 − y·p)² = ½(y − p)²`.
    ///
    /// ```
    /// use sketchlearn::drp::Dataset;
    /// use sketchlearn::Row;
    /// let mut data = Dataset::regression(2);
    /// data.push_target(Row::Dense(&[1.0, 2.0]), 3.5).unwrap();
    /// assert_eq!((data.labels(), data.base_offsets()), (&[1.0][..], Some(&[-2.5][..])));
    /// assert_eq!(data.targets(), vec![3.5]);
    /// assert!(data.push(Row::Dense(&[1.0, 0.0]), 1.0).is_err()); // real targets only
    /// assert!(data.push_target(Row::Dense(&[1.0, 0.0]), f64::NAN).is_err());
    /// ```
    pub fn regression(dim: usize) -> Self {
        Dataset {
            base_offsets: Some(Vec::new()),
            ..Dataset::new(dim)
        }
    }

    /// Appends an example with the real target `t` to a [`Dataset::regression`] set.
    pub fn push_target(&mut self, row: Row<'_>, target: f64) -> Result<(), DrpError> {
        let index = self.len();
        if self.base_offsets.is_none() {
            return Err(DrpError::InvalidParameter(format!(
                "example {index}: a classification set takes labels ±1 (use Dataset::regression for real targets)"
            )));
        }
        if !target.is_finite() {
            return Err(DrpError::NonFinite(format!(
                "example {index}: target {target}"
            )));
        }
        self.push_row(row, 1.0)?;
        if let Some(c) = self.base_offsets.as_mut() {
            c.push(1.0 - target);
        }
        Ok(())
    }

    /// Appends an example. The label must be exactly `+1` or `−1` and the values finite; a
    /// sparse row's indices must be strictly increasing (as [`Row`] promises). Explicit zeros of
    /// dense rows are not stored.
    pub fn push(&mut self, row: Row<'_>, label: f64) -> Result<(), DrpError> {
        let index = self.len();
        if self.base_offsets.is_some() {
            return Err(DrpError::InvalidParameter(format!(
                "example {index}: a regression set takes real targets (use push_target)"
            )));
        }
        if label != 1.0 && label != -1.0 {
            return Err(DrpError::Label { index, label });
        }
        self.push_row(row, label)
    }

    fn push_row(&mut self, row: Row<'_>, label: f64) -> Result<(), DrpError> {
        let index = self.len();
        let start = self.indices.len();
        match row {
            Row::Dense(v) => {
                for (j, &x) in v.iter().enumerate() {
                    if x != 0.0 {
                        self.indices.push(j as u32);
                        self.values.push(x);
                    }
                }
            }
            Row::Sparse { indices, values } => {
                if indices.len() != values.len() {
                    return Err(DrpError::Dimension(format!(
                        "example {index}: {} indices but {} values",
                        indices.len(),
                        values.len()
                    )));
                }
                if indices.windows(2).any(|w| w[0] >= w[1]) {
                    return Err(DrpError::Dimension(format!(
                        "example {index}: sparse indices are not strictly increasing"
                    )));
                }
                self.indices.extend_from_slice(indices);
                self.values.extend_from_slice(values);
            }
        }
        if self.values[start..].iter().any(|x| !x.is_finite()) {
            self.indices.truncate(start);
            self.values.truncate(start);
            return Err(DrpError::NonFinite(format!(
                "example {index}: feature value"
            )));
        }
        if let Some(&last) = self.indices[start..].last() {
            self.dim = self.dim.max(last as usize + 1);
        }
        self.indptr.push(self.indices.len());
        self.labels.push(label);
        Ok(())
    }

    /// Reads every example of a LIBSVM stream. `label_map` turns a file label into `Some(±1)`
    /// or `None` to skip the example (e.g. keep two digits of a multiclass file); a mapped label
    /// other than ±1 is an error that names the line.
    ///
    /// ```
    /// use sketchlearn::drp::Dataset;
    /// use sketchlearn::LibsvmReader;
    /// let text = "3 1:0.5\n8 2:1\n5 1:1\n";
    /// let mut r = LibsvmReader::new(std::io::Cursor::new(text), "inline", Default::default());
    /// let data = Dataset::from_libsvm(&mut r, |y| match y as i64 {
    ///     3 => Some(1.0),
    ///     8 => Some(-1.0),
    ///     _ => None,
    /// })
    /// .unwrap();
    /// assert_eq!((data.len(), data.labels()), (2, &[1.0, -1.0][..]));
    /// ```
    pub fn from_libsvm<R: BufRead>(
        reader: &mut LibsvmReader<R>,
        label_map: impl FnMut(f64) -> Option<f64>,
    ) -> Result<Self, DrpError> {
        Self::read(Dataset::new(0), reader, label_map)
    }

    /// Reads a LIBSVM source as a [`Dataset::regression`] set: every label is a real target
    /// (ridge regression; `sketchlearn drp --loss ridge --regression`).
    ///
    /// ```
    /// use sketchlearn::drp::Dataset;
    /// use sketchlearn::LibsvmReader;
    /// let text = "3.5 1:0.5\n-0.25 2:1\n";
    /// let mut r = LibsvmReader::new(std::io::Cursor::new(text), "inline", Default::default());
    /// let data = Dataset::regression_from_libsvm(&mut r).unwrap();
    /// assert_eq!((data.len(), data.targets()), (2, vec![3.5, -0.25]));
    /// ```
    pub fn regression_from_libsvm<R: BufRead>(
        reader: &mut LibsvmReader<R>,
    ) -> Result<Self, DrpError> {
        Self::read(Dataset::regression(0), reader, Some)
    }

    /// Appends every example of `reader` whose label `label_map` keeps to `data` (a
    /// classification set: the mapped label must be ±1; a regression set: the real target).
    fn read<R: BufRead>(
        mut data: Dataset,
        reader: &mut LibsvmReader<R>,
        mut label_map: impl FnMut(f64) -> Option<f64>,
    ) -> Result<Self, DrpError> {
        let mut ex = Example::default();
        while reader.read_into(&mut ex)? {
            if let Some(y) = label_map(ex.label) {
                let pushed = if data.is_regression() {
                    data.push_target(ex.row(), y)
                } else {
                    data.push(ex.row(), y)
                };
                pushed.map_err(|e| match e {
                    DrpError::Label { .. } => DrpError::FileLabel {
                        source_name: reader.source_name().to_string(),
                        line: reader.line(),
                        label: ex.label,
                    },
                    other => other,
                })?;
            }
        }
        data.dim = data.dim.max(reader.max_index_plus_one());
        Ok(data)
    }

    /// Reads the LIBSVM file `path` (`-` = standard input, gzip detected) like
    /// [`Dataset::from_libsvm`].
    pub fn load(
        path: &str,
        zero_based: bool,
        label_map: impl FnMut(f64) -> Option<f64>,
    ) -> Result<Self, DrpError> {
        let mut reader = LibsvmReader::open(path, crate::data::LibsvmOptions { zero_based })?;
        Self::from_libsvm(&mut reader, label_map)
    }

    /// Reads the LIBSVM file `path` like [`Dataset::regression_from_libsvm`].
    pub fn load_regression(path: &str, zero_based: bool) -> Result<Self, DrpError> {
        let mut reader = LibsvmReader::open(path, crate::data::LibsvmOptions { zero_based })?;
        Self::regression_from_libsvm(&mut reader)
    }

    /// Number of examples `n`.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// True when there is no example.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// Dimension `d` (one past the largest index, or more if set so).
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Raises the dimension to `dim` (it never shrinks below the largest stored index).
    pub fn set_dim(&mut self, dim: usize) {
        self.dim = self.dim.max(dim);
    }

    /// Number of stored (non-zero) entries.
    pub fn nnz(&self) -> usize {
        self.values.len()
    }

    /// The labels `y` (all `+1` in a regression set).
    pub fn labels(&self) -> &[f64] {
        &self.labels
    }

    /// `c_i = 1 − t_i` of a regression set (see [`Dataset::regression`]); `None` for ±1 labels.
    pub fn base_offsets(&self) -> Option<&[f64]> {
        self.base_offsets.as_deref()
    }

    /// The regression targets `t_i = 1 − c_i`, or the labels of a classification set.
    pub fn targets(&self) -> Vec<f64> {
        match &self.base_offsets {
            Some(c) => c.iter().map(|c| 1.0 - c).collect(),
            None => self.labels.clone(),
        }
    }

    /// Whether this is a regression set ([`Dataset::regression`]).
    pub fn is_regression(&self) -> bool {
        self.base_offsets.is_some()
    }

    /// Example `i` as a sparse row.
    pub fn row(&self, i: usize) -> Row<'_> {
        let (a, b) = (self.indptr[i], self.indptr[i + 1]);
        Row::Sparse {
            indices: &self.indices[a..b],
            values: &self.values[a..b],
        }
    }

    /// The first `k` examples and the rest, as two sets of the same dimension.
    pub fn split_at(&self, k: usize) -> (Dataset, Dataset) {
        let k = k.min(self.len());
        let empty = || Dataset {
            base_offsets: self.base_offsets.as_ref().map(|_| Vec::new()),
            ..Dataset::new(self.dim)
        };
        let (mut a, mut b) = (empty(), empty());
        for i in 0..self.len() {
            let part = if i < k { &mut a } else { &mut b };
            // Rows and labels were validated on the way in.
            part.push_row(self.row(i), self.labels[i])
                .expect("validated row");
            if let (Some(to), Some(from)) = (part.base_offsets.as_mut(), &self.base_offsets) {
                to.push(from[i]);
            }
        }
        (a, b)
    }

    /// `out_i = x_iᵀ w` for every example (coordinates beyond `w.len()` count as zero).
    pub fn margins(&self, w: &[f64], out: &mut [f64]) {
        for (i, o) in out.iter_mut().enumerate().take(self.len()) {
            *o = self.row(i).dot(w);
        }
    }

    /// `out += Σ_i c_i x_i` (`out` has length at least `dim`).
    pub fn add_combination(&self, c: &[f64], out: &mut [f64]) {
        for (i, &ci) in c.iter().enumerate().take(self.len()) {
            if ci != 0.0 {
                self.row(i).axpy_into(ci, out);
            }
        }
    }

    /// Fraction of examples with `sign(x_iᵀw) ≠ y_i` (a score `≤ 0` predicts −1, as everywhere
    /// in sketchlearn); `NaN` for an empty set.
    pub fn error_rate(&self, w: &[f64]) -> f64 {
        let wrong = (0..self.len())
            .filter(|&i| {
                let p = if self.row(i).dot(w) > 0.0 { 1.0 } else { -1.0 };
                p != self.labels[i]
            })
            .count();
        wrong as f64 / self.len() as f64
    }

    /// Root mean squared error `√(Σ_i (t_i − x_iᵀw)²/n)` of the predictions `x_iᵀw` against
    /// the targets ([`Dataset::targets`]: a regression set's real targets, a classification
    /// set's ±1 labels); `NaN` for an empty set.
    ///
    /// ```
    /// use sketchlearn::drp::Dataset;
    /// use sketchlearn::Row;
    /// let mut data = Dataset::regression(1);
    /// data.push_target(Row::Dense(&[1.0]), 3.0).unwrap();
    /// data.push_target(Row::Dense(&[2.0]), 2.0).unwrap();
    /// assert_eq!(data.rmse(&[1.0]), (2.0f64 * 2.0 / 2.0).sqrt()); // residuals 2, 0
    /// ```
    pub fn rmse(&self, w: &[f64]) -> f64 {
        let targets = self.targets();
        let sum: f64 = (0..self.len())
            .map(|i| (targets[i] - self.row(i).dot(w)).powi(2))
            .sum();
        (sum / self.len() as f64).sqrt()
    }

    /// The columns (features) as compressed sparse columns: for feature `j`, the examples
    /// `col_rows[col_ptr[j]..col_ptr[j+1]]` with values `col_vals[..]` (example order).
    pub(crate) fn columns(&self) -> Columns {
        let d = self.dim;
        let mut counts = vec![0usize; d + 1];
        for &j in &self.indices {
            counts[j as usize + 1] += 1;
        }
        for j in 0..d {
            counts[j + 1] += counts[j];
        }
        let ptr = counts.clone();
        let mut next = counts;
        let mut rows = vec![0u32; self.nnz()];
        let mut vals = vec![0.0; self.nnz()];
        for i in 0..self.len() {
            for k in self.indptr[i]..self.indptr[i + 1] {
                let j = self.indices[k] as usize;
                rows[next[j]] = i as u32;
                vals[next[j]] = self.values[k];
                next[j] += 1;
            }
        }
        Columns { ptr, rows, vals }
    }
}

/// Compressed sparse columns of a [`Dataset`] (see [`Dataset::columns`]).
pub(crate) struct Columns {
    pub ptr: Vec<usize>,
    pub rows: Vec<u32>,
    pub vals: Vec<f64>,
}
