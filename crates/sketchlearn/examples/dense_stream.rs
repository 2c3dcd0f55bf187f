//! Write the SON paper's §5.1 ill-conditioned dense stream (`sketchlearn::synthetic::
//! ill_conditioned`: Gaussian rows whose covariance has condition number `κ`, labels
//! `sign(θᵀx)`) as a LIBSVM file and, when a second path is given, as Vowpal Wabbit text
//! (`label |f j:v …`), so that sketchlearn and VW read the same numbers (four decimals).
//! `scripts/bench_single_learners.py` uses it for the dense generated stream (d = 1000, κ = 100).
//!
//! ```text
//! cargo run --release -p sketchlearn --example dense_stream -- N D KAPPA SEED OUT.libsvm [OUT.vw]
//! ```
//! Without arguments it prints five rows of a small stream (n = 5, d = 4, κ = 100) to stdout.

use sketchlearn::synthetic::ill_conditioned;
use std::io::{BufWriter, Write};

/// One example as `label j:v j:v …` (1-based indices, four decimals).
fn libsvm_line(label: f64, values: &[f64]) -> String {
    let mut line = String::with_capacity(10 * values.len());
    line.push_str(if label > 0.0 { "1" } else { "-1" });
    for (j, v) in values.iter().enumerate() {
        line.push_str(&format!(" {}:{v:.4}", j + 1));
    }
    line
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() {
        for ex in ill_conditioned(5, 4, 100.0, 7) {
            println!("{}", libsvm_line(ex.label, &ex.values));
        }
        return Ok(());
    }
    if args.len() < 5 {
        return Err("usage: dense_stream N D KAPPA SEED OUT.libsvm [OUT.vw]".into());
    }
    let (n, d): (usize, usize) = (args[0].parse()?, args[1].parse()?);
    let (kappa, seed): (f64, u64) = (args[2].parse()?, args[3].parse()?);
    let mut libsvm = BufWriter::new(std::fs::File::create(&args[4])?);
    let mut vw = match args.get(5) {
        Some(p) => Some(BufWriter::new(std::fs::File::create(p)?)),
        None => None,
    };
    for ex in ill_conditioned(n, d, kappa, seed) {
        let line = libsvm_line(ex.label, &ex.values);
        writeln!(libsvm, "{line}")?;
        if let Some(vw) = vw.as_mut() {
            let (label, features) = line.split_once(' ').unwrap_or((&line, ""));
            writeln!(vw, "{label} |f {features}")?;
        }
    }
    libsvm.flush()?;
    if let Some(mut vw) = vw {
        vw.flush()?;
    }
    Ok(())
}
