//! Issue 27, item 1: does a longer FD buffer make the sparse-time RFD-SON member cheaper?
//!
//! The default mixture's RFD-SON member (m = 10, α₀ = 1, c = 0.1, logistic loss, no intercept)
//! as [`SparseFd`] with the paper's doubling buffer (ℓ = 2m) and with longer buffers
//! ([`SparseFd::with_buffer`], ℓ = 3m, 4m, 6m: shrink — and, on text, change basis — every
//! ℓ − m + 1 appends instead of every m + 1). Learning only (the examples are parsed into memory
//! first), CPU time of the thread, median of 3 interleaved repetitions; progressive error and
//! the number of shrinks of each. Streams: r8_earn_vs_rest, w8a.shuf (../shared/data) and the
//! generated sparse stream of `sparse_common::synthetic` (20 000 rows, 50 ids in 0..2^18).

use super::sparse_common::{dim_of, load_libsvm, sig3, synthetic};
use super::{command_line, ReproArgs};
use crate::machine::{load_average, thread_cpu, utc_now};
use crate::report::write_md_csv;
use crate::stats::median_finite;
use anyhow::Result;
use sketchlearn::data::Example;
use sketchlearn::linear::sparse::SparseFd;
use sketchlearn::linear::{NewtonParams, OnlineLearner};
use sketchlearn::loss::Loss;
use sketchlearn::Row;
use std::fmt::Write as _;
use std::time::Instant;

const M: usize = 10;
const BUFFERS: [usize; 4] = [2, 3, 4, 6];
const REPS: usize = 3;

/// One timed pass: (CPU seconds, progressive error, shrinks).
fn pass(data: &[Example], dim: usize, l: usize) -> Result<(f64, f64, u64)> {
    let params = NewtonParams {
        loss: Loss::Logistic,
        c: 0.1,
        clip: f64::INFINITY,
    };
    let fd = SparseFd::rfd(dim, M, 1.0, 0, params)?;
    let mut fd = if l == 2 * M { fd } else { fd.with_buffer(l)? };
    let mut mistakes = 0usize;
    let c0 = thread_cpu();
    for ex in data {
        let x = Row::Sparse {
            indices: &ex.indices,
            values: &ex.values,
        };
        let p = fd.learn(x, ex.label, 1.0)?;
        mistakes += usize::from((p > 0.0) != (ex.label > 0.0));
    }
    let cpu = thread_cpu() - c0;
    Ok((cpu, mistakes as f64 / data.len() as f64, fd.shrinks()))
}

pub fn run(args: &ReproArgs) -> Result<()> {
    let t0 = Instant::now();
    let load_before = load_average();
    let mut streams: Vec<(String, Vec<Example>)> = Vec::new();
    for name in ["r8_earn_vs_rest", "w8a.shuf"] {
        let path = args.data_dir.join(format!("{name}.libsvm"));
        streams.push((name.into(), load_libsvm(&path)?));
    }
    streams.push((
        "generated sparse (20k rows, 50 ids in 0..2^18)".into(),
        synthetic(20_000, 1 << 18, 50, 27),
    ));
    let mut md = String::new();
    let mut csv =
        String::from("stream,buffer_rows,shrinks,progressive_error,cpu_seconds,ex_per_s\n");
    writeln!(
        md,
        "# A longer FD buffer for the sparse-time RFD-SON member (issue 27, item 1)\n\n\
         Generated {} by `{}`; load average {load_before} at the start.\n\n\
         RFD-SON m = {M}, α₀ = 1, c = 0.1, logistic, `SparseFd::rfd(..).with_buffer(ℓ)`; learning \
         only, CPU seconds of the thread, median of {REPS} interleaved runs.\n\n\
         | stream | ℓ | shrinks | progressive error | CPU s | ex/s | time vs ℓ = 2m |\n\
         |---|---:|---:|---:|---:|---:|---:|",
        utc_now(),
        command_line()
    )?;
    for (name, data) in &streams {
        let dim = dim_of(data).max(6 * M);
        let mut cpu = vec![Vec::new(); BUFFERS.len()];
        let mut out = vec![(0.0, 0); BUFFERS.len()];
        for _ in 0..REPS {
            for (i, &b) in BUFFERS.iter().enumerate() {
                let (c, err, shrinks) = pass(data, dim, b * M)?;
                cpu[i].push(c);
                out[i] = (err, shrinks);
            }
        }
        let base = median_finite(&cpu[0]);
        for (i, &b) in BUFFERS.iter().enumerate() {
            let (c, (err, shrinks)) = (median_finite(&cpu[i]), out[i]);
            let rate = data.len() as f64 / c;
            writeln!(
                md,
                "| {name} | {} | {shrinks} | {err:.4} | {} | {} | {:.2}× |",
                b * M,
                sig3(c),
                sig3(rate),
                c / base
            )?;
            writeln!(csv, "{name},{},{shrinks},{err},{c},{rate}", b * M)?;
        }
    }
    writeln!(md, "\nload average {} at the end.", load_average())?;
    write_md_csv(
        &args.out,
        "fd_buffer",
        &md,
        &csv,
        Some(t0.elapsed().as_secs_f64()),
    )
}
