//! Sketch a matrix and report its relative spectral error `‖AᵀA − Â‖₂ / ‖AᵀA‖₂` (RFD paper
//! §5.1): Frequent Directions (`Â = BᵀB`) against Robust Frequent Directions (`Â = BᵀB + αI`),
//! doubling buffers, for a few sketch sizes `m`.
//!
//! The matrix `A` is 2,000 rows of the SON paper's ill-conditioned data (d = 100, condition
//! number 1,000; `sketchlearn::synthetic::ill_conditioned`), or the rows of a LIBSVM file given
//! as argument.
//!
//! ```text
//! cargo run --release -p sketchlearn --example sketch_error [-- path/to/file.libsvm]
//! ```

use sketchlearn::prelude::*;
use sketchlearn::synthetic::ill_conditioned;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (name, rows) = match std::env::args().nth(1) {
        Some(path) => {
            let reader = LibsvmReader::open(&path, LibsvmOptions::default())?;
            (path, reader.collect::<Result<Vec<_>, _>>()?)
        }
        None => (
            "ill-conditioned (κ = 1000)".to_string(),
            ill_conditioned(2_000, 100, 1_000.0, 42),
        ),
    };
    let dim = rows
        .iter()
        .map(|ex| ex.row().max_index_plus_one())
        .max()
        .unwrap_or(0);
    let mut exact = RowMatrix::new(dim);
    for ex in &rows {
        exact.push(ex.row(), 1.0);
    }
    println!("{name}: n = {}, d = {dim}", rows.len());
    println!("{:>4}  {:>10}  {:>10}", "m", "FD error", "RFD error");
    for m in [5, 10, 20, 40] {
        if m > dim {
            break;
        }
        let mut fd = FrequentDirections::fd(dim, m, FdVariant::Doubling)?;
        let mut rfd = FrequentDirections::rfd(dim, m, FdVariant::Doubling, 0.0)?;
        for ex in &rows {
            fd.insert(ex.row())?;
            rfd.insert(ex.row())?;
        }
        let opts = LanczosOptions::default();
        let e_fd = relative_spectral_error(&exact, &fd.matrix(), opts)?;
        let e_rfd = relative_spectral_error(&exact, &rfd.matrix(), opts)?;
        println!("{m:>4}  {e_fd:>10.4}  {e_rfd:>10.4}");
    }
    Ok(())
}
