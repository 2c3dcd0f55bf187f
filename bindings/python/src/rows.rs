//! The rows of a Python input matrix, walked in Rust without copying the matrix: a NumPy array
//! (float64 or float32, any memory order) or a CSR matrix handed over as its three buffers.
//!
//! A dense row reaches the core as its non-zero entries (a sparse [`Row`] gathered into a small
//! scratch buffer), exactly as the CLI hands the core a LIBSVM line: the learners then do the
//! same arithmetic on an array as on the file — the same bits — and skip the zeros (a9a: 14 of
//! 123 values per row). CSR rows are borrowed from the matrix.

use numpy::ndarray::ArrayView2;
use numpy::{PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use sketchlearn::Row;

/// The Python objects that own an input matrix, borrowed read-only while Rust walks it.
pub enum RowsInput<'py> {
    /// A 2-d float64 array.
    F64(PyReadonlyArray2<'py, f64>),
    /// A 2-d float32 array.
    F32(PyReadonlyArray2<'py, f32>),
    /// `("csr", indptr: int64[n+1], indices: uint32[nnz], data: float64[nnz], n_rows, n_cols)`.
    Csr {
        indptr: PyReadonlyArray1<'py, i64>,
        indices: PyReadonlyArray1<'py, u32>,
        data: PyReadonlyArray1<'py, f64>,
        n_rows: usize,
        n_cols: usize,
    },
}

impl<'py> RowsInput<'py> {
    /// Borrows `obj`: a 2-d float64/float32 array, or the CSR tuple described on
    /// [`RowsInput::Csr`] (built by `sketchlearn._validation`).
    pub fn extract(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(a) = obj.extract::<PyReadonlyArray2<'py, f64>>() {
            return Ok(RowsInput::F64(a));
        }
        if let Ok(a) = obj.extract::<PyReadonlyArray2<'py, f32>>() {
            return Ok(RowsInput::F32(a));
        }
        if let Ok(t) = obj.cast::<PyTuple>() {
            if t.len() == 6 && t.get_item(0)?.extract::<String>()? == "csr" {
                return Ok(RowsInput::Csr {
                    indptr: t.get_item(1)?.extract()?,
                    indices: t.get_item(2)?.extract()?,
                    data: t.get_item(3)?.extract()?,
                    n_rows: t.get_item(4)?.extract()?,
                    n_cols: t.get_item(5)?.extract()?,
                });
            }
        }
        Err(PyTypeError::new_err(
            "expected a 2-d float64/float32 NumPy array or a CSR matrix \
             (convert with sketchlearn._validation.as_rows)",
        ))
    }

    /// A view of the rows that can cross into code running without the GIL.
    pub fn rows(&self) -> PyResult<Rows<'_>> {
        let rows = match self {
            RowsInput::F64(a) => Rows::F64(a.as_array()),
            RowsInput::F32(a) => Rows::F32(a.as_array()),
            RowsInput::Csr {
                indptr,
                indices,
                data,
                n_rows,
                n_cols,
            } => {
                let rows = Rows::Csr {
                    indptr: indptr.as_slice()?,
                    indices: indices.as_slice()?,
                    values: data.as_slice()?,
                    n_rows: *n_rows,
                    n_cols: *n_cols,
                };
                rows.check_structure()?;
                rows
            }
        };
        if rows.n_cols() > u32::MAX as usize {
            return Err(PyValueError::new_err(format!(
                "{} columns: more than the {} features a row may index",
                rows.n_cols(),
                u32::MAX
            )));
        }
        Ok(rows)
    }
}

/// Buffers for the non-zero entries of one dense row.
#[derive(Default)]
pub struct RowScratch {
    indices: Vec<u32>,
    values: Vec<f64>,
}

impl RowScratch {
    /// The non-zero entries of `values` (in column order) as a sparse row. A dense matrix has
    /// at most `u32::MAX` columns here: [`RowsInput::rows`] refuses wider ones.
    fn gather(&mut self, values: impl Iterator<Item = f64>) -> Row<'_> {
        self.indices.clear();
        self.values.clear();
        for (j, v) in values.enumerate() {
            if v != 0.0 {
                self.indices.push(j as u32);
                self.values.push(v);
            }
        }
        Row::Sparse {
            indices: &self.indices,
            values: &self.values,
        }
    }
}

/// A read-only view of the rows of a matrix (`Send`: usable while the GIL is released).
#[derive(Clone, Copy)]
pub enum Rows<'a> {
    /// Dense float64, any strides.
    F64(ArrayView2<'a, f64>),
    /// Dense float32, any strides (converted row by row).
    F32(ArrayView2<'a, f32>),
    /// Compressed sparse rows with sorted, distinct column indices.
    Csr {
        indptr: &'a [i64],
        indices: &'a [u32],
        values: &'a [f64],
        n_rows: usize,
        n_cols: usize,
    },
}

impl<'a> Rows<'a> {
    /// Number of rows.
    pub fn n_rows(&self) -> usize {
        match self {
            Rows::F64(a) => a.nrows(),
            Rows::F32(a) => a.nrows(),
            Rows::Csr { n_rows, .. } => *n_rows,
        }
    }

    /// Number of columns (features).
    pub fn n_cols(&self) -> usize {
        match self {
            Rows::F64(a) => a.ncols(),
            Rows::F32(a) => a.ncols(),
            Rows::Csr { n_cols, .. } => *n_cols,
        }
    }

    /// Row `i`: its non-zero entries gathered into `scratch` for a dense matrix (any dtype and
    /// order), borrowed from the matrix for CSR.
    pub fn row<'s>(&'s self, i: usize, scratch: &'s mut RowScratch) -> Row<'s> {
        match self {
            Rows::F64(a) => scratch.gather(a.row(i).iter().copied()),
            Rows::F32(a) => scratch.gather(a.row(i).iter().map(|&x| f64::from(x))),
            Rows::Csr {
                indptr,
                indices,
                values,
                ..
            } => {
                let (lo, hi) = (indptr[i] as usize, indptr[i + 1] as usize);
                Row::Sparse {
                    indices: &indices[lo..hi],
                    values: &values[lo..hi],
                }
            }
        }
    }

    /// The first row holding a NaN or an infinity: its row, its column and that value.
    pub fn first_non_finite(&self) -> Option<(usize, usize, f64)> {
        let mut scratch = RowScratch::default();
        for i in 0..self.n_rows() {
            let bad = match self.row(i, &mut scratch) {
                Row::Dense(v) => v.iter().position(|x| !x.is_finite()).map(|j| (j, v[j])),
                Row::Sparse { indices, values } => values
                    .iter()
                    .position(|x| !x.is_finite())
                    .map(|k| (indices[k] as usize, values[k])),
            };
            if let Some((j, x)) = bad {
                return Some((i, j, x));
            }
        }
        None
    }

    /// `ValueError` naming the first row and column with a NaN or an infinity.
    pub fn check_finite(&self, what: &str) -> PyResult<()> {
        match self.first_non_finite() {
            Some((i, j, x)) => Err(PyValueError::new_err(format!(
                "{what} contains NaN or infinity: row {i}, column {j} has the value {x}"
            ))),
            None => Ok(()),
        }
    }

    /// CSR consistency: `indptr` non-decreasing from 0 to `nnz`, each row's indices strictly
    /// increasing and below `n_cols` (a bad CSR matrix is an error naming the row, never a
    /// wrong index into the buffers).
    fn check_structure(&self) -> PyResult<()> {
        let Rows::Csr {
            indptr,
            indices,
            values,
            n_rows,
            n_cols,
        } = *self
        else {
            return Ok(());
        };
        let bad = |msg: String| Err(PyValueError::new_err(msg));
        if indptr.len() != n_rows + 1 || indices.len() != values.len() {
            return bad(format!(
                "malformed CSR matrix: {} row pointers for {n_rows} rows, {} indices for {} values",
                indptr.len(),
                indices.len(),
                values.len()
            ));
        }
        if indptr[0] != 0 || indptr[n_rows] as usize != indices.len() {
            return bad("malformed CSR matrix: row pointers do not span the data".into());
        }
        for i in 0..n_rows {
            let (lo, hi) = (indptr[i], indptr[i + 1]);
            if hi < lo {
                return bad(format!("malformed CSR matrix: row {i} has negative length"));
            }
            let idx = &indices[lo as usize..hi as usize];
            if idx.windows(2).any(|w| w[0] >= w[1]) {
                return bad(format!(
                    "row {i}: column indices must be sorted and distinct (call sum_duplicates())"
                ));
            }
            if let Some(&j) = idx.last() {
                if j as usize >= n_cols {
                    return bad(format!(
                        "row {i}: column index {j} is outside the {n_cols} columns"
                    ));
                }
            }
        }
        Ok(())
    }
}
