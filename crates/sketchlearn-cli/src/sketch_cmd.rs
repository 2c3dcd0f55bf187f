//! `sketchlearn sketch`: sketch the rows of a file and report speed and accuracy (the
//! library's [`SketchJob`]).

use anyhow::Result;
use sketchlearn::data::Format;
use sketchlearn::sketch::{ExactError, SketchConfig, SketchJob, SketchMethod};

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
    /// Input format: auto (`.csv` → csv, `.tsv` → tsv, `.vw` → vw, else libsvm) | libsvm | vw | csv | tsv.
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

pub fn run(args: &SketchArgs) -> Result<()> {
    let job = SketchJob {
        config: SketchConfig {
            method: args.method,
            size: args.size,
            seed: args.seed,
            alpha0: args.alpha0,
            alpha: args.alpha,
            oja_c: args.oja_c,
        },
        file: args.file.clone(),
        format: args.format,
        zero_based: args.zero_based,
        dim: args.dim,
        exact: match (args.exact, args.no_exact) {
            (true, _) => ExactError::Always,
            (false, true) => ExactError::Never,
            (false, false) => ExactError::Auto,
        },
    };
    let report = job.run()?;
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print!("{}", report.text());
    }
    Ok(())
}
