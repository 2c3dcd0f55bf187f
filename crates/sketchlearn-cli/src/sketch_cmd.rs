//! `sketchlearn sketch`: sketch the rows of a file and report speed and accuracy.

use anyhow::{bail, Result};
use serde::Serialize;
use sketchlearn::data::{for_each_row, load_rows, Format};
use sketchlearn::sketch::{
    relative_spectral_error, AnySketch, LanczosOptions, RowMatrix, SketchConfig, SketchMethod,
    SymOperator,
};
use std::time::{Duration, Instant};

/// Largest dimension for which the relative spectral error is computed without `--exact`.
const AUTO_EXACT_MAX_DIM: usize = 5000;

/// Most stored entries kept for the relative spectral error without `--exact` (2^25: about
/// 400 MB with their indices); past it the rows are dropped and the error is not computed, so
/// the memory of `sketch` does not grow with the stream (issue 26, item 5).
const AUTO_EXACT_MAX_ENTRIES: usize = 1 << 25;

/// Arguments of `sketchlearn sketch`.
#[derive(clap::Args, Debug)]
#[command(
    allow_negative_numbers = true,
    after_help = "\
Rows are inserted one at a time, in file order. `seconds` and `rows_per_second` time the sketch \
updates only (parsing excluded). GFD sketches Σ s_t x_t x_tᵀ with s_t = the row's label.\n\n\
Example:\n  sketchlearn sketch --method rfd-fast --size 10 data/heart.libsvm"
)]
pub struct SketchArgs {
    /// `--quiet`: nothing on stderr but warnings and errors (this command writes no notes).
    #[command(flatten)]
    pub quiet: crate::quiet::Quiet,
    /// Sketch: fd | fd-fast | rfd | rfd-fast | gfd | gfd-fast | rp | oja.
    #[arg(long, value_parser = parse_method)]
    pub method: SketchMethod,
    /// Sketch size m (rows kept: m−1 for FD/RFD/GFD, 2m buffer for the -fast variants).
    #[arg(long)]
    pub size: usize,
    /// Seed of the random draws (rp, oja).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Compute the relative spectral error even when the dimension exceeds 5000 or the stream
    /// has more than 2^25 stored entries (all rows are then kept in memory).
    #[arg(long, conflicts_with = "no_exact")]
    pub exact: bool,
    /// Never compute the relative spectral error (it is computed by default when d ≤ 5000 and
    /// the stream has at most 2^25 stored entries).
    #[arg(long)]
    pub no_exact: bool,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// LIBSVM indices start at 0 instead of 1.
    #[arg(long)]
    pub zero_based: bool,
    /// Dimension d (default: one past the largest index in the file; needed to stream stdin).
    #[arg(long)]
    pub dim: Option<usize>,
    /// Input format: auto (`.csv` → csv, `.vw` → vw, else libsvm) | libsvm | vw | csv.
    #[arg(long, default_value_t = Format::Auto)]
    pub format: Format,
    /// RFD's initial α₀.
    #[arg(long, default_value_t = 0.0)]
    pub alpha0: f64,
    /// Regularizer α of H = (αI + SSᵀ)⁻¹ kept by rp and oja.
    #[arg(long, default_value_t = 1.0)]
    pub alpha: f64,
    /// Oja's learning-rate constant c (γ_t = min(c/t, 1)).
    #[arg(long, default_value_t = 1.0)]
    pub oja_c: f64,
    /// Input file (LIBSVM or CSV; `-` = stdin; `.gz` is decompressed).
    pub file: String,
}

fn parse_method(s: &str) -> Result<SketchMethod, String> {
    s.parse()
        .map_err(|e: sketchlearn::SketchError| e.to_string())
}

/// What `sketchlearn sketch --json` prints.
#[derive(Serialize, Debug)]
pub struct SketchReport {
    pub method: String,
    pub size: usize,
    pub rows: u64,
    pub dim: usize,
    pub seconds: f64,
    pub rows_per_second: f64,
    pub relative_spectral_error: Option<f64>,
    pub alpha: f64,
    pub stored_rows: usize,
    pub total_shrinkage: Option<f64>,
    pub error_seconds: Option<f64>,
    pub file: String,
}

pub fn run(args: &SketchArgs) -> Result<()> {
    let cfg = SketchConfig {
        method: args.method,
        size: args.size,
        seed: args.seed,
        alpha0: args.alpha0,
        alpha: args.alpha,
        oja_c: args.oja_c,
    };
    cfg.build(0)?; // validate hyper-parameters before reading anything
    let signed = args.method.is_signed();
    if signed && args.format.resolve(&args.file) == Format::Csv {
        bail!(
            "{} signs each row by its label; CSV input has no labels",
            args.method
        );
    }
    let weight = |label: f64| if signed { label } else { 1.0 };

    let stream_dim = match args.dim {
        Some(d) => Some(d),
        None if args.file != "-" => {
            // Pre-scan the file for its dimension (not timed).
            let (_, d) = for_each_row(&args.file, args.format, args.zero_based, |_, _| {
                Ok::<(), std::convert::Infallible>(())
            })?;
            Some(d)
        }
        None => None,
    };
    let (sketch, elapsed, rows, exact): (AnySketch, Duration, u64, Option<RowMatrix>) =
        match stream_dim {
            Some(dim) => {
                let want_exact = !args.no_exact && (args.exact || dim <= AUTO_EXACT_MAX_DIM);
                let mut exact = want_exact.then(|| RowMatrix::new(dim));
                let mut sketch = cfg.build(dim)?;
                let mut elapsed = Duration::ZERO;
                let mut entries = 0usize;
                let (n, _) = for_each_row(&args.file, args.format, args.zero_based, |row, y| {
                    let t = Instant::now();
                    sketch.insert(row, weight(y))?;
                    elapsed += t.elapsed();
                    entries += match row {
                        sketchlearn::Row::Dense(v) => v.len(),
                        sketchlearn::Row::Sparse { values, .. } => values.len(),
                    };
                    if !args.exact && entries > AUTO_EXACT_MAX_ENTRIES {
                        exact = None;
                    }
                    if let Some(e) = exact.as_mut() {
                        e.push(row, weight(y));
                    }
                    Ok::<(), sketchlearn::SketchError>(())
                })?;
                if let Some(e) = exact.as_mut() {
                    e.set_dim(dim);
                }
                (sketch, elapsed, n, exact)
            }
            None => {
                let rows = load_rows(&args.file, args.format, args.zero_based, weight)?;
                let (sketch, elapsed) = cfg.sketch_rows(&rows)?;
                let want_exact = !args.no_exact && (args.exact || rows.dim() <= AUTO_EXACT_MAX_DIM);
                let n = rows.rows() as u64;
                (sketch, elapsed, n, want_exact.then_some(rows))
            }
        };

    let (error, error_seconds) = match &exact {
        Some(e) => {
            let t = Instant::now();
            let err = relative_spectral_error(e, &*sketch.operator(), LanczosOptions::default())?;
            (Some(err), Some(t.elapsed().as_secs_f64()))
        }
        None => (None, None),
    };
    let seconds = elapsed.as_secs_f64();
    let report = SketchReport {
        method: args.method.to_string(),
        size: args.size,
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
        file: args.file.clone(),
    };
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print_table(&report);
    }
    Ok(())
}

fn print_table(r: &SketchReport) {
    println!("file                     {}", r.file);
    println!("method                   {}", r.method);
    println!("size                     {}", r.size);
    println!("rows                     {}", r.rows);
    println!("dim                      {}", r.dim);
    println!(
        "seconds                  {:.6}  (sketch updates only)",
        r.seconds
    );
    println!("rows_per_second          {:.0}", r.rows_per_second);
    match r.relative_spectral_error {
        Some(e) => println!("relative_spectral_error  {e:.6e}"),
        None => println!(
            "relative_spectral_error  (not computed: d > 5000 or more than 2^25 stored entries; \
             pass --exact)"
        ),
    }
    if let Some(s) = r.total_shrinkage {
        println!("total_shrinkage          {s:.6e}");
    }
    if r.alpha != 0.0 {
        println!("alpha                    {:.6e}", r.alpha);
    }
    println!("stored_rows              {}", r.stored_rows);
}
