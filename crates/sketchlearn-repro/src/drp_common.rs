//! Shared pieces of the dual-random-projection experiments: the four data sets with their
//! train/test splits, LIBLINEAR as a measurement peer (run as an external program when installed),
//! and the effective rank r̄ of Theorem 6.

use anyhow::{bail, Context, Result};
use sketchlearn::drp::{low_rank, Dataset, DrpLoss, LowRankSpec};
use sketchlearn::spectral::sym_eigenvalues;
use sketchlearn::Row;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// A data set with its split.
pub struct DrpData {
    pub name: &'static str,
    pub train: Dataset,
    pub test: Dataset,
    /// How the split was made.
    pub note: String,
    /// The rank of `X` when known by construction.
    pub known_rank: Option<usize>,
}

/// Synthetic rank-10 data (d = 4000): 1000 training and 1000 test examples.
pub fn synthetic() -> Result<DrpData> {
    let all = low_rank(&LowRankSpec {
        n: 2000,
        d: 4000,
        rank: 10,
        flip: 0.1,
        seed: 2013,
    })?;
    let (train, test) = all.split_at(1000);
    Ok(DrpData {
        name: "synthetic",
        train,
        test,
        note: "rank-10 Gaussian factors, d = 4000, 10 % label noise, seed 2013; first 1000 rows \
               train, last 1000 test"
            .into(),
        known_rank: Some(10),
    })
}

/// r8 "earn" vs rest: the file's 5485 training rows, then its 2189 test rows.
pub fn r8(data_dir: &Path) -> Result<DrpData> {
    let path = data_dir.join("r8_earn_vs_rest.libsvm");
    let all = Dataset::load(&path.to_string_lossy(), false, Some).with_context(|| "r8")?;
    let (train, test) = all.split_at(5485);
    Ok(DrpData {
        name: "r8",
        train,
        test,
        note: "r8_earn_vs_rest.libsvm: rows 1–5485 train, 5486–7674 test (the R8 split)".into(),
        known_rank: None,
    })
}

/// MNIST test10k, digit 3 (+1) vs digit 8 (−1): first 70 % of the rows train, the rest test.
pub fn mnist(data_dir: &Path) -> Result<DrpData> {
    let path = data_dir.join("mnist_test10k.libsvm");
    let map = |y: f64| {
        if y == 3.0 {
            Some(1.0)
        } else if y == 8.0 {
            Some(-1.0)
        } else {
            None
        }
    };
    let mut all = Dataset::load(&path.to_string_lossy(), false, map).with_context(|| "mnist")?;
    all.set_dim(784);
    let total = all.len();
    let k = total * 7 / 10;
    let (train, test) = all.split_at(k);
    Ok(DrpData {
        name: "mnist-3v8",
        train,
        test,
        note: format!(
            "mnist_test10k.libsvm digits 3 (+1) vs 8 (−1), pixels/255: first {k} of {} rows \
             train, the rest test",
            total
        ),
        known_rank: None,
    })
}

/// a9a with its official test set a9a.t (d = 123).
pub fn a9a(data_dir: &Path) -> Result<DrpData> {
    let mut train = Dataset::load(&data_dir.join("a9a.libsvm").to_string_lossy(), false, Some)?;
    let mut test = Dataset::load(
        &data_dir.join("a9a.t.libsvm").to_string_lossy(),
        false,
        Some,
    )?;
    train.set_dim(123);
    test.set_dim(123);
    Ok(DrpData {
        name: "a9a",
        train,
        test,
        note: "a9a.libsvm train (32561), a9a.t.libsvm test (16281)".into(),
        known_rank: None,
    })
}

/// The squared singular values σ_i² of X (eigenvalues of the `d × d` matrix Σ x_i x_iᵀ);
/// `None` when d > 1000 (too costly here).
pub fn squared_singular_values(data: &Dataset) -> Option<Vec<f64>> {
    let d = data.dim();
    if d > 1000 {
        return None;
    }
    let mut c = vec![0.0; d * d];
    for i in 0..data.len() {
        if let Row::Sparse { indices, values } = data.row(i) {
            for (a, &ja) in indices.iter().enumerate() {
                for (b, &jb) in indices.iter().enumerate() {
                    c[ja as usize * d + jb as usize] += values[a] * values[b];
                }
            }
        }
    }
    sym_eigenvalues(&c, d).ok()
}

/// Effective rank r̄ = Σ σ_i²/(λ/γ + σ_i²) of Theorem 6 (γ the loss's smoothness).
pub fn effective_rank(sigma2: &[f64], lambda: f64, loss: DrpLoss) -> f64 {
    let shift = lambda / loss.smoothness();
    sigma2
        .iter()
        .map(|&s| s.max(0.0) / (shift + s.max(0.0)))
        .sum()
}

/// Writes a data set as a LIBSVM file (1-based indices).
pub fn write_libsvm(data: &Dataset, path: &Path) -> Result<()> {
    let mut out = std::io::BufWriter::new(
        std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?,
    );
    for i in 0..data.len() {
        write!(out, "{}", if data.labels()[i] > 0.0 { "+1" } else { "-1" })?;
        if let Row::Sparse { indices, values } = data.row(i) {
            for (j, v) in indices.iter().zip(values) {
                write!(out, " {}:{}", j + 1, v)?;
            }
        }
        writeln!(out)?;
    }
    out.flush()?;
    Ok(())
}

/// The LIBLINEAR training program, if installed (`liblinear-train` as Debian names it).
pub fn liblinear_binary() -> Option<PathBuf> {
    for name in ["liblinear-train", "train"] {
        if let Ok(out) = Command::new("sh")
            .arg("-c")
            .arg(format!("command -v {name}"))
            .output()
        {
            let p = String::from_utf8_lossy(&out.stdout).trim().to_string();
            if out.status.success() && !p.is_empty() {
                // `train` is a generic name: accept it only if it prints LIBLINEAR's usage.
                let usage = Command::new(&p)
                    .stdin(std::process::Stdio::null())
                    .output()
                    .ok()?;
                let text = String::from_utf8_lossy(&usage.stdout).to_string()
                    + &String::from_utf8_lossy(&usage.stderr);
                if text.contains("liblinear") || text.contains("LIBLINEAR") || name != "train" {
                    return Some(PathBuf::from(p));
                }
            }
        }
    }
    None
}

/// LIBLINEAR's solver and cost for our problem: `(-s, C, comparable)`, where `comparable` says
/// whether the objective is the same as ours (logistic: C = 1/λ; ridge = L2-loss SVR with p = 0,
/// C = 1/(2λ)); smoothed hinge is compared with the squared hinge (`-s 2`), a different loss.
pub fn liblinear_solver(loss: DrpLoss, lambda: f64) -> (u32, f64, bool) {
    match loss {
        DrpLoss::Logistic => (0, 1.0 / lambda, true),
        DrpLoss::Ridge => (12, 0.5 / lambda, true),
        DrpLoss::SmoothHinge => (2, 1.0 / lambda, false),
    }
}

/// A LIBLINEAR run: its weights (length `dim`) and wall time of the training process (which
/// includes reading the text file).
pub struct LiblinearRun {
    pub w: Vec<f64>,
    pub seconds: f64,
    pub solver: u32,
    pub c: f64,
    pub comparable: bool,
}

/// Trains with LIBLINEAR's default tolerance and no bias (`-B -1`, the default), as in our
/// problem.
pub fn run_liblinear(
    bin: &Path,
    train_file: &Path,
    model_file: &Path,
    loss: DrpLoss,
    lambda: f64,
    dim: usize,
) -> Result<LiblinearRun> {
    let (s, c, comparable) = liblinear_solver(loss, lambda);
    let mut cmd = Command::new(bin);
    cmd.arg("-s")
        .arg(s.to_string())
        .arg("-c")
        .arg(format!("{c}"));
    if s == 12 {
        cmd.arg("-p").arg("0");
    }
    cmd.arg("-q").arg(train_file).arg(model_file);
    let start = Instant::now();
    let out = cmd
        .output()
        .with_context(|| format!("running {}", bin.display()))?;
    let seconds = start.elapsed().as_secs_f64();
    if !out.status.success() {
        bail!(
            "{} failed: {}",
            bin.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let text = std::fs::read_to_string(model_file)?;
    let mut w = vec![0.0; dim];
    let mut sign = 1.0;
    let mut in_w = false;
    let mut k = 0;
    for line in text.lines() {
        if in_w {
            if let Ok(v) = line.trim().parse::<f64>() {
                if k < dim {
                    w[k] = v;
                }
                k += 1;
            }
        } else if let Some(rest) = line.strip_prefix("label ") {
            // Binary models score the first listed label positively.
            if rest.split_whitespace().next() == Some("-1") {
                sign = -1.0;
            }
        } else if line.trim() == "w" {
            in_w = true;
        }
    }
    w.iter_mut().for_each(|v| *v *= sign);
    Ok(LiblinearRun {
        w,
        seconds,
        solver: s,
        c,
        comparable,
    })
}
