//! Shared pieces of the sparse-time SON experiments (`sparse-throughput`, `sparse-scaling`,
//! `sparse-accuracy`): synthetic sparse data, VW-text conversion, in-memory loading, and the
//! timing/memory helpers.

use crate::machine::thread_cpu;
use crate::paths::cache_dir;
use crate::rng::SplitMix64;
use crate::stats::median_finite;
use anyhow::{Context, Result};
use sketchlearn::data::{PackedExamples, VwOptions, VwReader};
use sketchlearn::eval::Metrics;
use sketchlearn::linear::LearnerConfig;
use sketchlearn::run::learn_or_refuse;
use sketchlearn::{Example, LibsvmOptions, LibsvmReader};
use std::fmt::Write as _;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The weight of feature `j` in the synthetic models: a hashed standard normal.
fn theta(j: u64, seed: u64) -> f64 {
    let mut r = SplitMix64::new(seed ^ j.wrapping_mul(0xD6E8_FEB8_6659_FD93));
    r.normal()
}

/// Synthetic sparse binary data in memory: `n` examples, `nnz` distinct feature ids uniform in
/// `0..d`, values `N(0,1)/√nnz` (so `‖x‖ ≈ 1`), `y = sign(θᵀx + 0.25ε)` with a fixed Gaussian `θ`.
pub fn synthetic(n: usize, d: usize, nnz: usize, seed: u64) -> Vec<Example> {
    let mut rng = SplitMix64::new(seed);
    let scale = 1.0 / (nnz as f64).sqrt();
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let mut idx: Vec<u32> = Vec::with_capacity(nnz);
        while idx.len() < nnz {
            let j = (rng.next_u64() % d as u64) as u32;
            if !idx.contains(&j) {
                idx.push(j);
            }
        }
        idx.sort_unstable();
        let values: Vec<f64> = idx.iter().map(|_| scale * rng.normal()).collect();
        let margin: f64 = idx
            .iter()
            .zip(&values)
            .map(|(&j, v)| theta(j as u64, seed) * v)
            .sum();
        let label = if margin + 0.25 * rng.normal() > 0.0 {
            1.0
        } else {
            -1.0
        };
        out.push(Example {
            label,
            weight: 1.0,
            indices: idx,
            values,
        });
    }
    out
}

/// SON paper §5.1 data, unnormalised and dense: `X = Z·diag(λ)^½·Vᵀ` with `Z` Gaussian `n × d`, `V`
/// a random orthonormal basis, `λ` = ones then the last 10 rising linearly to `kappa`,
/// `y = sign(Xθ)` — the data on which VW 9.11.9's OjaNewton (`--normalize false`, m = 10)
/// produces NaN weights.
pub fn ill_conditioned(n: usize, d: usize, kappa: f64, seed: u64) -> Vec<Example> {
    let mut rng = SplitMix64::new(seed);
    let mut v: Vec<f64> = (0..d * d).map(|_| rng.normal()).collect();
    sketchlearn::synthetic::orthonormalize_rows(&mut v, d, d);
    let lam: Vec<f64> = (0..d)
        .map(|i| {
            if i + 10 < d {
                1.0
            } else {
                1.0 + (kappa - 1.0) * (i + 11 - d) as f64 / 10.0
            }
        })
        .collect();
    let theta: Vec<f64> = (0..d).map(|_| rng.normal()).collect();
    (0..n)
        .map(|_| {
            let z: Vec<f64> = (0..d).map(|i| lam[i].sqrt() * rng.normal()).collect();
            let x: Vec<f64> = (0..d)
                .map(|j| (0..d).map(|i| z[i] * v[i * d + j]).sum())
                .collect();
            sketchlearn::synthetic::sign_labelled(x, &theta)
        })
        .collect()
}

/// Writes examples as VW text `label |f id:value ...` (ids are VW integer feature names: VW and
/// sketchlearn hash them identically). Values with 6 significant digits.
pub fn write_vw(path: &Path, examples: &[Example]) -> Result<()> {
    let tmp = path.with_extension("tmp");
    let mut w = BufWriter::with_capacity(1 << 22, std::fs::File::create(&tmp)?);
    let mut line = String::new();
    for ex in examples {
        line.clear();
        line.push_str(if ex.label > 0.0 { "1 |f" } else { "-1 |f" });
        for (j, v) in ex.indices.iter().zip(&ex.values) {
            write!(line, " {j}:{v:.6}")?;
        }
        line.push('\n');
        w.write_all(line.as_bytes())?;
    }
    w.flush()?;
    drop(w);
    std::fs::rename(&tmp, path)?;
    Ok(())
}

/// LIBSVM → VW text (`label |f idx:val`, labels ±1), cached under `target/peers/` by name.
pub fn libsvm_as_vw(src: &Path) -> Result<PathBuf> {
    let name = src
        .file_name()
        .and_then(|s| s.to_str())
        .unwrap_or("data")
        .trim_end_matches(".libsvm");
    let dst = cache_dir()?.join(format!("sparse_{name}.vw"));
    if dst.exists() {
        return Ok(dst);
    }
    let ex = load_libsvm(src)?;
    write_vw(&dst, &ex)?;
    Ok(dst)
}

/// Reads a whole VW file with `bits` hash bits.
pub fn load_vw(path: &Path, bits: u32) -> Result<Vec<Example>> {
    let mut r = VwReader::open(path.to_str().context("path")?, VwOptions { bits })?;
    let mut out = Vec::new();
    let mut ex = Example::default();
    while r.read_into(&mut ex)? {
        out.push(std::mem::take(&mut ex));
    }
    Ok(out)
}

/// Reads a whole LIBSVM file (1-based indices), labels mapped to ±1.
pub fn load_libsvm(path: &Path) -> Result<Vec<Example>> {
    let mut r = LibsvmReader::open(
        path.to_str().context("path")?,
        LibsvmOptions { zero_based: false },
    )?;
    let mut out = Vec::new();
    let mut ex = Example::default();
    while r.read_into(&mut ex)? {
        ex.label = if ex.label > 0.0 { 1.0 } else { -1.0 };
        out.push(std::mem::take(&mut ex));
    }
    Ok(out)
}

/// One past the largest feature index.
pub fn dim_of(examples: &[Example]) -> usize {
    examples
        .iter()
        .filter_map(|e| e.indices.last())
        .map(|&j| j as usize + 1)
        .max()
        .unwrap_or(0)
}

/// Peak resident memory (MB) of `sketchlearn train --quiet <flags> FILE` run as a child process
/// under `/usr/bin/time` (parsing included: the readers stream, in constant memory).
pub fn child_peak_mb(flags: &[String], file: &Path) -> Option<f64> {
    let exe = crate::paths::cli_exe().ok()?;
    let out = Command::new("/usr/bin/time")
        .args(["-f", "%M"])
        .arg(exe)
        .args(["train", "--quiet"])
        .args(flags)
        .arg(file)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let kb: f64 = String::from_utf8_lossy(&out.stderr)
        .lines()
        .last()?
        .trim()
        .parse()
        .ok()?;
    Some(kb / 1024.0)
}

/// The JSON lines of `scripts/peers/sparse_vw_bench.py` (every run a fresh VW process reading
/// its binary cache), with the medians the reports need.
pub struct VwBench(pub Vec<serde_json::Value>);

impl VwBench {
    /// Median of `key` over the runs of `mode` (`adagrad`, `oja`, `noop`) and `kind`
    /// (`startup`, `noop`, `learn`); NaN when there is none.
    pub fn pick(&self, mode: &str, kind: &str, key: &str) -> f64 {
        let v: Vec<f64> = self
            .0
            .iter()
            .filter(|r| r["mode"] == mode && r["kind"] == kind)
            .filter_map(|r| r[key].as_f64())
            .collect();
        median_finite(&v)
    }

    /// Seconds (`key` = `cpu` or `wall`) of reading the cache alone: `--noop` − its start-up.
    pub fn parse_only(&self, key: &str) -> f64 {
        (self.pick("noop", "noop", key) - self.pick("noop", "startup", key)).max(0.0)
    }

    /// Learning-only seconds of `mode`: per repetition, (run − start-up) − (`--noop` − its
    /// start-up), each difference taken between runs of the same repetition, and the median over
    /// the repetitions. NaN when it is not measurable: not above the run-to-run spread
    /// (max − min) of the start-up times or of the differences themselves, in which it is then
    /// lost — VW OjaNewton's `O(m²·2^b)` start-up takes seconds at b = 24 (8.0–8.7 s in three
    /// runs), while learning r8's 7 674 examples takes it tens of milliseconds. (With the
    /// start-ups' spread alone, one report of three runs took a +0.42 s difference on r8 at
    /// b = 24 for VW's learning time, 18k examples/s; rerun, the three differences were −0.38,
    /// −0.08 and +0.13 s.)
    pub fn learn_only(&self, mode: &str, key: &str) -> f64 {
        let get = |mode: &str, kind: &str, rep: &serde_json::Value| {
            self.0
                .iter()
                .find(|r| r["mode"] == mode && r["kind"] == kind && &r["repeat"] == rep)
                .and_then(|r| r[key].as_f64())
        };
        let mut reps: Vec<&serde_json::Value> = Vec::new();
        for r in &self.0 {
            if !reps.contains(&&r["repeat"]) {
                reps.push(&r["repeat"]);
            }
        }
        let diffs: Vec<f64> = reps
            .iter()
            .filter_map(|rep| {
                let learn = get(mode, "learn", rep)? - get(mode, "startup", rep)?;
                let read = get("noop", "noop", rep)? - get("noop", "startup", rep)?;
                Some(learn - read.max(0.0))
            })
            .collect();
        let startups: Vec<f64> = reps
            .iter()
            .filter_map(|rep| get(mode, "startup", rep))
            .collect();
        let spread_of = |v: &[f64]| {
            v.iter().cloned().fold(f64::NEG_INFINITY, f64::max)
                - v.iter().cloned().fold(f64::INFINITY, f64::min)
        };
        let spread = spread_of(&startups).max(spread_of(&diffs));
        let t = median_finite(&diffs);
        if t > spread.max(0.0) {
            t
        } else {
            f64::NAN
        }
    }

    /// The statuses of `mode`'s learning runs.
    pub fn statuses(&self, mode: &str) -> Vec<&str> {
        self.0
            .iter()
            .filter(|r| r["mode"] == mode && r["kind"] == "learn")
            .filter_map(|r| r["status"].as_str())
            .collect()
    }
}

/// One timed run of a learner over in-memory examples.
#[derive(Clone, Debug)]
pub struct Run {
    /// Seconds to build the learner.
    pub startup: f64,
    /// Learning loop, wall seconds.
    pub wall: f64,
    /// Learning loop, thread CPU seconds.
    pub cpu: f64,
    /// Progressive 0/1 error.
    pub error: f64,
    /// Steps refused as diverging.
    pub refused: u64,
}

/// Builds `config` for `dim`, learns every example once (progressive validation), and measures.
/// One pass of a fresh learner over `data`, progressive error and times. The examples come from
/// a [`PackedExamples`] (flat arrays, the next examples prefetched) so that the timed loop sees
/// its input in the cache, as a streaming run does (its parser's buffer) and as VW's learner
/// does (its parser thread's buffer): on r8 ×26 the scattered `Vec<Example>` made sparse
/// Oja-SON + diag ~15 % slower (see `sketchlearn::data::packed`).
pub fn time_learner(config: &LearnerConfig, dim: usize, data: &PackedExamples) -> Result<Run> {
    let t0 = Instant::now();
    let mut learner = config.check()?.build_unscaled(dim)?;
    let startup = t0.elapsed().as_secs_f64();
    let mut metrics = Metrics::without_auc();
    let mut refused = 0u64;
    let (c0, w0) = (thread_cpu(), Instant::now());
    for ex in data {
        let p = learn_or_refuse(&mut learner, ex.row, ex.label, ex.weight, &mut refused)?;
        metrics.add(p, ex.label, ex.weight, config.loss);
    }
    let (wall, cpu) = (w0.elapsed().as_secs_f64(), thread_cpu() - c0);
    drop(learner);
    Ok(Run {
        startup,
        wall,
        cpu,
        error: metrics.error_rate().unwrap_or(f64::NAN),
        refused,
    })
}

/// A number with 3 significant digits.
pub fn sig3(x: f64) -> String {
    if !x.is_finite() {
        return "—".into();
    }
    let a = x.abs();
    if a >= 1000.0 {
        format!("{x:.0}")
    } else if a >= 100.0 {
        format!("{x:.1}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::VwBench;

    /// VW records of one mode: per repetition (start-up, learn) seconds, and a `--noop` pair.
    fn bench(runs: &[(f64, f64)]) -> VwBench {
        let mut v = Vec::new();
        for (k, &(startup, learn)) in runs.iter().enumerate() {
            for (mode, kind, cpu) in [
                ("oja", "startup", startup),
                ("oja", "learn", learn),
                ("noop", "startup", 0.006),
                ("noop", "noop", 0.016),
            ] {
                v.push(serde_json::json!({"mode": mode, "kind": kind, "repeat": k, "cpu": cpu}));
            }
        }
        VwBench(v)
    }

    #[test]
    fn learning_time_is_the_median_difference_net_of_reading() {
        // Learning 1.00 s (+ 0.01 s of reading) on a 0.1 s start-up, a few ms of noise.
        let b = bench(&[(0.100, 1.110), (0.102, 1.115), (0.098, 1.105)]);
        let t = b.learn_only("oja", "cpu");
        assert!((t - 1.0).abs() < 1e-9, "{t}");
    }

    #[test]
    fn a_difference_within_the_noise_is_not_measurable() {
        // The case met at b = 24 on r8 (VW 9.11.9, three runs): start-ups 8.03–8.67 s, learns
        // 7.96–8.30 s: the differences (−0.08, −0.38, +0.13 s) are noise.
        let b = bench(&[(8.028, 7.957), (8.667, 8.296), (8.029, 8.169)]);
        assert!(b.learn_only("oja", "cpu").is_nan());
        // Positive by chance but below the spread of the differences themselves (start-ups
        // steady): not measurable either.
        let b = bench(&[(8.0, 8.02), (8.0, 8.5), (8.0, 8.3)]);
        assert!(b.learn_only("oja", "cpu").is_nan());
        // The same start-ups with steady learns: measurable.
        let b = bench(&[(8.0, 8.51), (8.0, 8.52), (8.0, 8.50)]);
        assert!((b.learn_only("oja", "cpu") - 0.5).abs() < 1e-9);
    }
}
