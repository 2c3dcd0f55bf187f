//! Dense spectral measurements on row-major `f64` slices — the eigenvalues, spectral norms and
//! singular values that tests and experiments compare sketches against — and the three kernels
//! of Frequent Directions' shrink (Gram matrix `BBᵀ`, symmetric eigendecomposition, rotation
//! `UᵀB`) for benchmarks that explain the sketches' speed.
//!
//! This is the public part of the crate's dense linear algebra; the rest (Cholesky factors,
//! Gram matrices of columns, power iteration, the `faer` wrapper itself) is internal and may
//! change with any release. Everything here runs sequentially and gives the same bits for the
//! same input. Conventions: matrices are row-major slices `a[i * cols + j]`; eigenvalues and
//! singular values are returned in **descending** order; eigenvectors are the columns of an
//! `n × n` row-major matrix.
//!
//! For sketches of large sparse data, measure the error without forming `d × d` matrices with
//! [`relative_spectral_error`](crate::sketch::relative_spectral_error) (Lanczos) instead.
//!
//! ```
//! use sketchlearn::spectral::{gram_rows, singular_values, sym_eigenvalues, sym_spectral_norm, SymEigen};
//!
//! let b = [3.0, 0.0, 0.0, 4.0]; // 2 × 2
//! assert_eq!(singular_values(&b, 2, 2).unwrap(), vec![4.0, 3.0]);
//!
//! let mut g = [0.0; 4];
//! gram_rows(&b, 2, 2, &mut g); // BBᵀ
//! assert_eq!(g, [9.0, 0.0, 0.0, 16.0]);
//! assert_eq!(sym_eigenvalues(&g, 2).unwrap(), vec![16.0, 9.0]);
//! assert_eq!(sym_spectral_norm(&[1.0, 0.0, 0.0, -3.0], 2).unwrap(), 3.0);
//!
//! // A reusable workspace (no allocation per call), eigenvectors included.
//! let mut eig = SymEigen::new(2);
//! eig.compute(&[2.0, 1.0, 1.0, 2.0]).unwrap();
//! assert!((eig.values()[0] - 3.0).abs() < 1e-12 && (eig.values()[1] - 1.0).abs() < 1e-12);
//! ```

pub use crate::linalg::{
    gram_rows, matmul_into, rotate_rows, singular_values, sym_eigenvalues, sym_spectral_norm,
    LinalgError, SymEigen,
};
