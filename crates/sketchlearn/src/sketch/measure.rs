//! Sketching the rows of a file and measuring it, as `sketchlearn sketch` does: the rows go
//! into the sketch one at a time in file order (the updates timed, parsing not), then the
//! relative spectral error `‖AᵀA − Â‖₂ / ‖AᵀA‖₂` (RFD paper §5.1) is computed against the
//! rows kept — by default only while that is cheap (d ≤ 5000 and at most 2^25 stored
//! entries), so the memory of a long stream does not grow with it (issue 26, item 5).

use super::{relative_spectral_error, AnySketch, LanczosOptions, RowMatrix, SketchConfig};
use super::{SketchError, SymOperator};
use crate::data::{for_each_row, load_rows, Format, ParseError, RowsError};
use crate::linalg::LinalgError;
use crate::Row;
use serde::Serialize;
use std::convert::Infallible;
use std::time::{Duration, Instant};

/// Largest dimension for which the relative spectral error is computed by default.
const AUTO_EXACT_MAX_DIM: usize = 5000;

/// Most stored entries kept for the relative spectral error by default (2^25: about 400 MB
/// with their indices); past it the rows are dropped and the error is not computed.
const AUTO_EXACT_MAX_ENTRIES: usize = 1 << 25;

/// When to compute the relative spectral error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExactError {
    /// When d ≤ 5000 and the stream has at most 2^25 stored entries.
    Auto,
    /// Always (all rows are kept in memory).
    Always,
    /// Never.
    Never,
}

impl ExactError {
    /// Whether the rows of a `dim`-column input are kept for the exact error (`Auto`'s bound
    /// on stored entries is applied while they are read).
    fn wanted(self, dim: usize) -> bool {
        match self {
            ExactError::Always => true,
            ExactError::Auto => dim <= AUTO_EXACT_MAX_DIM,
            ExactError::Never => false,
        }
    }
}

/// What to sketch and how to measure it.
#[derive(Clone, Debug)]
pub struct SketchJob {
    /// The sketch.
    pub config: SketchConfig,
    /// The input (LIBSVM, VW or CSV; `-` = stdin; `.gz` decompressed).
    pub file: String,
    /// Its format (`Auto`: from the name).
    pub format: Format,
    /// LIBSVM indices start at 0.
    pub zero_based: bool,
    /// The dimension d (default: one past the largest index, from a first untimed pass; stdin
    /// without it is read into memory first).
    pub dim: Option<usize>,
    /// When to compute the relative spectral error.
    pub exact: ExactError,
}

/// What can stop a [`SketchJob`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SketchJobError {
    /// The job does not make sense (the message says why).
    #[error("{0}")]
    Invalid(String),
    /// The sketch refused its configuration or a row.
    #[error(transparent)]
    Sketch(#[from] SketchError),
    /// The input could not be read.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// The dimension's pre-scan failed.
    #[error(transparent)]
    Scan(#[from] RowsError<Infallible>),
    /// A row could not be read or inserted.
    #[error(transparent)]
    Rows(#[from] RowsError<SketchError>),
    /// The spectral error's eigen-solve failed.
    #[error(transparent)]
    Linalg(#[from] LinalgError),
}

/// The measured sketch (what `sketchlearn sketch --json` prints).
#[derive(Serialize, Debug)]
pub struct SketchReport {
    /// The sketch's name.
    pub method: String,
    /// Sketch size m.
    pub size: usize,
    /// Rows inserted.
    pub rows: u64,
    /// Dimension d.
    pub dim: usize,
    /// Seconds of the sketch updates (parsing excluded).
    pub seconds: f64,
    /// Rows per second of the updates.
    pub rows_per_second: f64,
    /// `‖AᵀA − Â‖₂ / ‖AᵀA‖₂`, when computed.
    pub relative_spectral_error: Option<f64>,
    /// The sketch's isotropic part α.
    pub alpha: f64,
    /// Rows the sketch stores.
    pub stored_rows: usize,
    /// FD's total shrinkage.
    pub total_shrinkage: Option<f64>,
    /// Seconds of the spectral error.
    pub error_seconds: Option<f64>,
    /// The input.
    pub file: String,
}

impl SketchJob {
    /// Sketches the file and measures the sketch.
    ///
    /// ```
    /// use sketchlearn::data::Format;
    /// use sketchlearn::sketch::{ExactError, SketchConfig, SketchJob, SketchMethod};
    /// let path = std::env::temp_dir().join(format!("doc-sketch-job-{}.libsvm", std::process::id()));
    /// std::fs::write(&path, "1 1:1 2:2\n1 2:1 3:1\n-1 1:3\n").unwrap();
    /// let job = SketchJob {
    ///     config: SketchConfig::new(SketchMethod::Fd, 3),
    ///     file: path.to_string_lossy().into_owned(),
    ///     format: Format::Auto, zero_based: false, dim: None, exact: ExactError::Auto,
    /// };
    /// let report = job.run().unwrap();
    /// assert_eq!((report.rows, report.dim), (3, 3));
    /// assert!(report.relative_spectral_error.unwrap() < 1.0);
    /// # std::fs::remove_file(&path).ok();
    /// ```
    pub fn run(&self) -> Result<SketchReport, SketchJobError> {
        let cfg = &self.config;
        cfg.build(0)?; // validate hyper-parameters before reading anything
        let signed = cfg.method.is_signed();
        if signed && self.format.resolve(&self.file).is_csv() {
            return Err(SketchJobError::Invalid(format!(
                "{} signs each row by its label; CSV input has no labels",
                cfg.method
            )));
        }
        let stream_dim = match self.dim {
            Some(d) => Some(d),
            None if self.file != "-" => {
                // Pre-scan the file for its dimension (not timed).
                let (_, d) = for_each_row(&self.file, self.format, self.zero_based, |_, _| {
                    Ok::<(), Infallible>(())
                })?;
                Some(d)
            }
            None => None,
        };
        let (sketch, elapsed, rows, exact) = match stream_dim {
            Some(dim) => self.stream(dim)?,
            None => self.in_memory()?,
        };
        let (error, error_seconds) = match &exact {
            Some(e) => {
                let t = Instant::now();
                let opts = LanczosOptions::default();
                let err = relative_spectral_error(e, &*sketch.operator(), opts)?;
                (Some(err), Some(t.elapsed().as_secs_f64()))
            }
            None => (None, None),
        };
        let seconds = elapsed.as_secs_f64();
        Ok(SketchReport {
            method: cfg.method.to_string(),
            size: cfg.size,
            rows,
            dim: sketch.dim(),
            seconds,
            rows_per_second: if seconds > 0.0 {
                rows as f64 / seconds
            } else {
                0.0
            },
            relative_spectral_error: error,
            alpha: sketch.alpha(),
            stored_rows: sketch.stored_rows(),
            total_shrinkage: sketch.total_shrinkage(),
            error_seconds,
            file: self.file.clone(),
        })
    }

    /// A row's weight: its label for the signed sketches (GFD), else 1.
    fn weight(&self, label: f64) -> f64 {
        if self.config.method.is_signed() {
            label
        } else {
            1.0
        }
    }

    /// Streams the rows of dimension `dim` into the sketch, keeping them for the error while
    /// [`ExactError`] allows.
    #[allow(clippy::type_complexity)]
    fn stream(
        &self,
        dim: usize,
    ) -> Result<(AnySketch, Duration, u64, Option<RowMatrix>), SketchJobError> {
        let always = self.exact == ExactError::Always;
        let mut exact = self.exact.wanted(dim).then(|| RowMatrix::new(dim));
        let mut sketch = self.config.build(dim)?;
        let mut elapsed = Duration::ZERO;
        let mut entries = 0usize;
        let (n, _) = for_each_row(&self.file, self.format, self.zero_based, |row, y| {
            let t = Instant::now();
            sketch.insert(row, self.weight(y))?;
            elapsed += t.elapsed();
            entries += match row {
                Row::Dense(v) => v.len(),
                Row::Sparse { values, .. } => values.len(),
            };
            if !always && entries > AUTO_EXACT_MAX_ENTRIES {
                exact = None;
            }
            if let Some(e) = exact.as_mut() {
                e.push(row, self.weight(y));
            }
            Ok::<(), SketchError>(())
        })?;
        if let Some(e) = exact.as_mut() {
            e.set_dim(dim);
        }
        Ok((sketch, elapsed, n, exact))
    }

    /// Reads all rows (stdin without a dimension), then sketches them.
    #[allow(clippy::type_complexity)]
    fn in_memory(&self) -> Result<(AnySketch, Duration, u64, Option<RowMatrix>), SketchJobError> {
        let rows = load_rows(&self.file, self.format, self.zero_based, |y| self.weight(y))?;
        let (sketch, elapsed) = self.config.sketch_rows(&rows)?;
        let want_exact = self.exact.wanted(rows.dim());
        let n = rows.rows() as u64;
        Ok((sketch, elapsed, n, want_exact.then_some(rows)))
    }
}

impl SketchReport {
    /// The report as aligned text lines.
    pub fn text(&self) -> String {
        use std::fmt::Write;
        let r = self;
        let mut s = String::new();
        let _ = writeln!(s, "file                     {}", r.file);
        let _ = writeln!(s, "method                   {}", r.method);
        let _ = writeln!(s, "size                     {}", r.size);
        let _ = writeln!(s, "rows                     {}", r.rows);
        let _ = writeln!(s, "dim                      {}", r.dim);
        let _ = writeln!(
            s,
            "seconds                  {:.6}  (sketch updates only)",
            r.seconds
        );
        let _ = writeln!(s, "rows_per_second          {:.0}", r.rows_per_second);
        let _ = match r.relative_spectral_error {
            Some(e) => writeln!(s, "relative_spectral_error  {e:.6e}"),
            None => writeln!(
                s,
                "relative_spectral_error  (not computed: d > 5000 or more than 2^25 stored \
                 entries; pass --exact)"
            ),
        };
        if let Some(t) = r.total_shrinkage {
            let _ = writeln!(s, "total_shrinkage          {t:.6e}");
        }
        if r.alpha != 0.0 {
            let _ = writeln!(s, "alpha                    {:.6e}", r.alpha);
        }
        let _ = writeln!(s, "stored_rows              {}", r.stored_rows);
        s
    }
}
