//! Throughput of doubling Frequent Directions against the dense GEMM rate of `faer`.
//!
//! Groups:
//! * `fd_insert_doubling/d{d}/m{m}`: dense Gaussian rows inserted into a warm doubling-FD sketch
//!   (`Throughput::Elements` = rows, so criterion reports rows/s). Each iteration inserts
//!   `4·(m+1)` rows, i.e. four whole shrink cycles.
//! * `gemm/...`: `spectral::matmul_into` for square `n = 256, 512` and the FD Gram shape
//!   `2m × d · d × 2m` of the largest case (`Throughput::Elements` = flops, so "elem/s" is flop/s).
//! * `fd_shrink_parts/...`: the three pieces of one doubling shrink (Gram `BBᵀ`, symmetric
//!   eigendecomposition, rotation `UᵀB`) for every `(d, m)`, on the buffer the benchmarked
//!   sketch would shrink next (measured right after its insert bench), to explain the FD rate.
//!
//! After the groups run, `main` reads criterion's `estimates.json` files and prints a markdown
//! table; when run by `cargo bench` (criterion gets `--bench`) and every FD estimate was written
//! by this run, the table is also written to `docs/results/fd_throughput.md`.
//!
//! Reproduce: `cargo bench -p sketchlearn --bench fd_insert`.

use criterion::{criterion_group, BenchmarkId, Criterion, SamplingMode, Throughput};
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};
use rand_xoshiro::Xoshiro256PlusPlus;
use sketchlearn::sketch::{FdVariant, FrequentDirections, Sketch};
use sketchlearn::spectral::{gram_rows, matmul_into, rotate_rows, SymEigen};
use sketchlearn::Row;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const DIMS: [usize; 3] = [100, 1000, 10_000];
const SKETCH_SIZES: [usize; 2] = [10, 50];
const SQUARE_SIZES: [usize; 2] = [256, 512];
/// Rows in the pre-generated pool (not a multiple of any `m + 1`, so the sketch sees the pool in
/// shifting orders).
const POOL_ROWS: usize = 257;
const SEED: u64 = 0x5EED_F00D;

const FD_GROUP: &str = "fd_insert_doubling";
const GEMM_GROUP: &str = "gemm";
const PARTS_GROUP: &str = "fd_shrink_parts";

/// Rows and shrinks counted over every timed iteration (warm-up included) of one FD bench.
struct ShrinkCount {
    d: usize,
    m: usize,
    rows: u64,
    shrinks: u64,
}

static SHRINK_COUNTS: Mutex<Vec<ShrinkCount>> = Mutex::new(Vec::new());

fn gaussian(len: usize, seed: u64) -> Vec<f64> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    (0..len).map(|_| StandardNormal.sample(&mut rng)).collect()
}

fn batch_rows(m: usize) -> usize {
    4 * (m + 1)
}

/// Model flops of one doubling shrink with `ℓ = 2m` buffer rows: Gram `2ℓ²d`, eigen `9ℓ³`,
/// rotation `2(m−1)ℓd`.
fn shrink_flops(d: usize, m: usize) -> (f64, f64, f64) {
    let (d, m) = (d as f64, m as f64);
    let l = 2.0 * m;
    (2.0 * l * l * d, 9.0 * l * l * l, 2.0 * (m - 1.0) * l * d)
}

/// For each `(d, m)`: the insert throughput (group `fd_insert_doubling`), then the three pieces
/// of a shrink (group `fd_shrink_parts`) on the exact buffer the benchmarked sketch would shrink
/// next, measured right after it so that both see the same machine load and sketch state.
fn fd_insert(c: &mut Criterion) {
    for d in DIMS {
        let pool = gaussian(POOL_ROWS * d, SEED ^ d as u64);
        for m in SKETCH_SIZES {
            let batch = batch_rows(m);
            let mut fd = FrequentDirections::fd(d, m, FdVariant::Doubling).expect("valid sketch");
            let mut next = 0usize;
            let mut next_row = || {
                let row = &pool[next * d..(next + 1) * d];
                next = (next + 1) % POOL_ROWS;
                row
            };
            // Warm: fill and shrink the 2m-row buffer a few times before timing.
            for _ in 0..4 * m + 3 {
                fd.insert(Row::Dense(next_row())).expect("finite row");
            }
            let (shrinks0, rows0) = (fd.shrinks(), fd.rows_seen());
            let mut group = c.benchmark_group(FD_GROUP);
            group
                .sample_size(10)
                .sampling_mode(SamplingMode::Flat)
                .warm_up_time(Duration::from_millis(500))
                .measurement_time(Duration::from_millis(1500))
                .throughput(Throughput::Elements(batch as u64));
            group.bench_function(BenchmarkId::new(format!("d{d}"), format!("m{m}")), |b| {
                b.iter(|| {
                    for _ in 0..batch {
                        black_box(&mut fd)
                            .insert(Row::Dense(next_row()))
                            .expect("finite row");
                    }
                })
            });
            group.finish();
            SHRINK_COUNTS.lock().unwrap().push(ShrinkCount {
                d,
                m,
                rows: fd.rows_seen() - rows0,
                shrinks: fd.shrinks() - shrinks0,
            });
            // The buffer of the next shrink: the 2m − 1 held rows (the m − 1 mutually orthogonal
            // rows kept by the previous shrink first) and the row that fills it.
            while fd.filled_rows() != 2 * m - 1 {
                fd.insert(Row::Dense(next_row())).expect("finite row");
            }
            let mut buf = fd.rows().to_vec();
            buf.extend_from_slice(next_row());
            shrink_parts(c, d, m, &buf);
        }
    }
}

fn gemm(c: &mut Criterion) {
    let mut group = c.benchmark_group(GEMM_GROUP);
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(1));
    let mut shapes: Vec<(String, String, usize, usize, usize)> = SQUARE_SIZES
        .iter()
        .map(|&n| ("square".to_string(), n.to_string(), n, n, n))
        .collect();
    let (d, l) = (
        DIMS[DIMS.len() - 1],
        2 * SKETCH_SIZES[SKETCH_SIZES.len() - 1],
    );
    shapes.push(("fd_gram".into(), format!("{l}x{d}x{l}"), l, d, l));
    for (name, param, n, k, p) in shapes {
        let a = gaussian(n * k, SEED + 1);
        let b = gaussian(k * p, SEED + 2);
        let mut out = vec![0.0; n * p];
        group.throughput(Throughput::Elements((2 * n * k * p) as u64));
        group.bench_function(BenchmarkId::new(name, param), |bch| {
            bch.iter(|| matmul_into(black_box(&a), black_box(&b), n, k, p, &mut out))
        });
        black_box(&out);
    }
    group.finish();
}

fn shrink_parts(c: &mut Criterion, d: usize, m: usize, buf: &[f64]) {
    let mut group = c.benchmark_group(PARTS_GROUP);
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(700));
    let l = 2 * m;
    let (f_gram, f_eig, f_rot) = shrink_flops(d, m);
    let mut gram = vec![0.0; l * l];
    gram_rows(buf, l, d, &mut gram);
    let mut eig = SymEigen::new(l);
    eig.compute(&gram).expect("finite Gram");
    let mut rotated = vec![0.0; (m - 1) * d];
    let id = format!("d{d}_m{m}");

    group.throughput(Throughput::Elements(f_gram as u64));
    group.bench_function(BenchmarkId::new("gram_rows", &id), |b| {
        b.iter(|| gram_rows(black_box(buf), l, d, &mut gram))
    });
    group.throughput(Throughput::Elements(f_eig as u64));
    group.bench_function(BenchmarkId::new("sym_eigen", &id), |b| {
        b.iter(|| eig.compute(black_box(&gram)).expect("finite Gram"))
    });
    let u = eig.vectors().to_vec();
    group.throughput(Throughput::Elements(f_rot as u64));
    group.bench_function(BenchmarkId::new("rotate_rows", &id), |b| {
        b.iter(|| rotate_rows(black_box(&u), l, m - 1, buf, d, &mut rotated))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().without_plots();
    targets = fd_insert, gemm
}

fn main() {
    let start = SystemTime::now();
    let load_before = load_average();
    benches();
    Criterion::default().configure_from_args().final_summary();
    if std::env::args().any(|a| a == "--bench") {
        report(start, &load_before);
    }
}

// ---------------------------------------------------------------------------------------------
// Report

fn workspace_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::canonicalize(&root).unwrap_or(root)
}

/// Criterion's output directory, located as criterion does (`CRITERION_HOME`, then
/// `CARGO_TARGET_DIR/criterion`), falling back to the first `target/` above the manifest.
fn criterion_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(target).join("criterion");
    }
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .map(|p| p.join("target"))
        .find(|t| t.is_dir())
        .unwrap_or_else(|| workspace_root().join("target"))
        .join("criterion")
}

/// Mean time per iteration in ns from `<group>/<function>/<param>/new/estimates.json`, only if
/// the file was written by this process (so that stale or filtered-out results are not used).
fn mean_ns(group: &str, function: &str, param: &str, since: SystemTime) -> Option<f64> {
    let path = criterion_dir()
        .join(group)
        .join(function)
        .join(param)
        .join("new/estimates.json");
    let modified = std::fs::metadata(&path).ok()?.modified().ok()?;
    if modified < since {
        return None;
    }
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).ok()?).ok()?;
    json["mean"]["point_estimate"].as_f64()
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

/// The 1/5/15-minute load averages from `/proc/loadavg` (other processes share the cores).
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "unknown".into())
}

/// UTC `YYYY-MM-DD HH:MM` from the system clock (civil-from-days, H. Hinnant).
fn utc_now() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        rem / 3600,
        (rem % 3600) / 60
    )
}

fn fmt_opt<T>(x: Option<T>, f: impl Fn(T) -> String) -> String {
    x.map_or_else(|| "n/a".into(), f)
}

fn report(since: SystemTime, load_before: &str) {
    let counts: HashMap<(usize, usize), (u64, u64)> = SHRINK_COUNTS
        .lock()
        .unwrap()
        .iter()
        .map(|c| ((c.d, c.m), (c.rows, c.shrinks)))
        .collect();
    let gemm_ns = mean_ns(GEMM_GROUP, "square", "512", since);
    let gemm_gflops = gemm_ns.map(|ns| 2.0 * 512f64.powi(3) / ns);
    let (gd, gl) = (
        DIMS[DIMS.len() - 1],
        2 * SKETCH_SIZES[SKETCH_SIZES.len() - 1],
    );
    let gram_param = format!("{gl}x{gd}x{gl}");
    let gram_gflops = mean_ns(GEMM_GROUP, "fd_gram", &gram_param, since)
        .map(|ns| 2.0 * (gl * gd * gl) as f64 / ns);
    let sq256 = mean_ns(GEMM_GROUP, "square", "256", since).map(|ns| 2.0 * 256f64.powi(3) / ns);

    let mut all_fresh = gemm_gflops.is_some();
    let mut table = String::new();
    table.push_str(
        "| d | m | rows/s | shrinks/row (measured) | flops/row (model) | achieved GFLOP/s \
         | GEMM 512² GFLOP/s | achieved / GEMM |\n\
         |---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let mut parts = String::new();
    parts.push_str(
        "| d | m | Gram BBᵀ µs (GFLOP/s) | eigen 2m×2m µs (GFLOP/s) | rotation UᵀB µs (GFLOP/s) \
         | sum of parts µs | measured µs per shrink cycle | parts / measured |\n\
         |---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for d in DIMS {
        for m in SKETCH_SIZES {
            let batch = batch_rows(m) as f64;
            let ns = mean_ns(FD_GROUP, &format!("d{d}"), &format!("m{m}"), since);
            let rows_per_s = ns.map(|ns| batch / (ns * 1e-9));
            let shrinks_per_row = counts
                .get(&(d, m))
                .filter(|&&(rows, _)| rows > 0)
                .map(|&(rows, shrinks)| shrinks as f64 / rows as f64);
            all_fresh &= rows_per_s.is_some() && shrinks_per_row.is_some();
            let (fg, fe, fr) = shrink_flops(d, m);
            let flops_per_row = shrinks_per_row.map(|s| s * (fg + fe + fr));
            let achieved = match (rows_per_s, flops_per_row) {
                (Some(r), Some(f)) => Some(r * f * 1e-9),
                _ => None,
            };
            let ratio = match (achieved, gemm_gflops) {
                (Some(a), Some(g)) => Some(a / g),
                _ => None,
            };
            let _ = writeln!(
                table,
                "| {d} | {m} | {} | {} | {} | {} | {} | {} |",
                fmt_opt(rows_per_s, |x| format!("{x:.0}")),
                fmt_opt(shrinks_per_row, |x| format!("{x:.4} (1/{:.2})", 1.0 / x)),
                fmt_opt(flops_per_row, |x| format!("{x:.3e}")),
                fmt_opt(achieved, |x| format!("{x:.2}")),
                fmt_opt(gemm_gflops, |x| format!("{x:.2}")),
                fmt_opt(ratio, |x| format!("{:.0}%", 100.0 * x)),
            );

            let id = format!("d{d}_m{m}");
            let part = |f: &str| mean_ns(PARTS_GROUP, f, &id, since);
            let (tg, te, tr) = (part("gram_rows"), part("sym_eigen"), part("rotate_rows"));
            let cell = |t: Option<f64>, flops: f64| {
                fmt_opt(t, |ns| format!("{:.1} ({:.2})", ns * 1e-3, flops / ns))
            };
            let sum = match (tg, te, tr) {
                (Some(a), Some(b), Some(c)) => Some(a + b + c),
                _ => None,
            };
            // Measured time of one shrink cycle (1/shrinks-per-row inserts).
            let cycle = match (ns, shrinks_per_row) {
                (Some(ns), Some(s)) => Some(ns / batch / s),
                _ => None,
            };
            let _ = writeln!(
                parts,
                "| {d} | {m} | {} | {} | {} | {} | {} | {} |",
                cell(tg, fg),
                cell(te, fe),
                cell(tr, fr),
                fmt_opt(sum, |x| format!("{:.1}", x * 1e-3)),
                fmt_opt(cycle, |x| format!("{:.1}", x * 1e-3)),
                fmt_opt(sum.zip(cycle), |(s, c)| format!("{:.0}%", 100.0 * s / c)),
            );
        }
    }
    let gemm_line = format!(
        "faer GEMM (`spectral::matmul_into`, sequential): square 256: {} GFLOP/s, square 512: {} \
         GFLOP/s, FD Gram shape {gl}×{gd}·{gd}×{gl}: {} GFLOP/s.",
        fmt_opt(sq256, |x| format!("{x:.2}")),
        fmt_opt(gemm_gflops, |x| format!("{x:.2}")),
        fmt_opt(gram_gflops, |x| format!("{x:.2}")),
    );

    println!("\n## Doubling FD insert throughput\n\n{table}\n{gemm_line}\n\n{parts}");

    if !all_fresh {
        println!(
            "(not writing docs/results/fd_throughput.md: some benchmarks were filtered out or \
             not run in this process)"
        );
        return;
    }
    let nproc = std::thread::available_parallelism().map_or(0, |n| n.get());
    let doc = format!(
        "# Doubling Frequent Directions: insert throughput vs. GEMM rate\n\n\
         Generated by `crates/sketchlearn/benches/fd_insert.rs`. Reproduce with:\n\n\
         ```sh\ncargo bench -p sketchlearn --bench fd_insert\n```\n\n\
         * Date: {date}\n\
         * Machine: nproc = {nproc}, CPU: {cpu}\n\
         * All linear algebra runs sequentially (`faer` with `Par::Seq`), one thread.\n\
         * Load average (1/5/15 min) before / after the run: {load_before} / {load_after}. \
         Times are wall-clock, so other processes on the machine lower the absolute rates; \
         each `(d, m)` insert bench and its shrink pieces run back to back.\n\n\
         **What was measured.** `FrequentDirections::fd(d, m, FdVariant::Doubling)` fed dense \
         standard-Gaussian rows (a pool of {POOL_ROWS} rows per `d`, fixed seed, cycled) into an \
         already-warm sketch; each criterion iteration inserts `4·(m+1)` rows. rows/s is from \
         criterion's mean time per iteration. Shrinks/row is counted with `shrinks()` over every \
         timed iteration. flops/row = shrinks/row × (Gram `2·(2m)²·d` + eigendecomposition \
         `9·(2m)³` + rotation `2·(m−1)·2m·d`); achieved GFLOP/s = rows/s × flops/row. GEMM is \
         `spectral::matmul_into` on a square 512×512 product (flops `2n³`).\n\n\
         {table}\n{gemm_line}\n\n\
         ### Pieces of one shrink (2m-row buffer), timed separately\n\n\
         Each piece runs, right after the insert bench of the same `(d, m)`, on the exact buffer \
         the benchmarked sketch would shrink next (the `m−1` orthogonal rows kept by the \
         previous shrink plus `m+1` new rows), hot in cache. GFLOP/s per piece \
         uses the model flops above; \"measured µs per shrink cycle\" is the FD insert time \
         per row divided by shrinks/row (it also includes the `m+1` row insertions, the \
         rescaled copy of the kept rows and the buffer zeroing).\n\n{parts}",
        date = utc_now(),
        cpu = cpu_model(),
        load_after = load_average(),
    );
    let path = workspace_root().join("docs/results/fd_throughput.md");
    let written = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(&path, doc));
    match written {
        Ok(()) => println!("wrote {}", path.display()),
        Err(e) => eprintln!("could not write {}: {e}", path.display()),
    }
}
