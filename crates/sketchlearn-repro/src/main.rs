//! `sketchlearn-repro`: the paper experiments, each writing a markdown table, a CSV and a PNG
//! plot under the output folder (default `docs/results`).
//!
//! `cargo run --release -p sketchlearn-repro -- NAME [--data-dir ../shared/data] [--out docs/results]`
//! from the repository root. Experiments that time or call the command line run the `sketchlearn`
//! binary of the same build (see [`paths::cli_exe`]).

mod auto_members;
mod auto_table;
mod drp_common;
mod drp_recovery;
mod drp_test_error;
mod fd_buffer;
mod fm_binary;
mod fm_common;
mod fm_movielens;
mod hyper;
mod learn;
mod machine;
mod parallel;
mod paths;
mod payoff_criterion;
mod payoff_members;
mod peer_z;
mod peers;
mod plot;
mod report;
mod rfd_figure1;
mod rfd_table2;
mod rng;
mod sketched_adagrad;
mod son_synthetic;
mod son_table3;
mod sparse_accuracy;
mod sparse_common;
mod sparse_scaling;
mod sparse_throughput;
mod stats;
mod throughput;

use anyhow::Result;
use clap::Parser;
use std::path::PathBuf;

/// Reproduce a paper experiment: writes tables and plots under docs/results/.
#[derive(Parser, Debug)]
#[command(name = "sketchlearn-repro", version, about, long_about = None)]
pub struct ReproArgs {
    /// Which experiment.
    #[arg(value_enum)]
    pub experiment: Experiment,
    /// Folder holding the shared datasets (a9a.libsvm, spam.libsvm, ...).
    #[arg(long, default_value = "../shared/data")]
    pub data_dir: PathBuf,
    /// Output folder for the .md, .csv and .png files.
    #[arg(long, default_value = "docs/results")]
    pub out: PathBuf,
    /// Sketch sizes m (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "5,10,20,40,80")]
    pub sizes: Vec<usize>,
}

/// The experiments `sketchlearn-repro` knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Experiment {
    /// RFD paper Figure 1: relative spectral error of FD vs RFD (per-row and doubling) on a9a
    /// and spam.
    RfdFigure1,
    /// SON paper §5.1 (Figure 1): progressive error of AdaGrad and Oja/FD/RFD-SON (m = 0, 5, 10)
    /// vs the condition number κ on synthetic ill-conditioned data.
    SonSynthetic,
    /// RFD paper Table 2 and Figures 2–4 on a9a: test accuracy of AdaGrad, FULL-ON and
    /// FD/RP/Oja/RFD-SON at the best α0 and as a function of α0.
    RfdTable2,
    /// SON paper Table 3 (§5.2): one-pass progressive error of AdaGrad, Oja/FD/RFD-SON (m = 10)
    /// and FULL-ON, without and with diagonal adaptation, tuned and untuned, on 11 real sets,
    /// next to VW AdaGrad/OjaNewton run in the same process tree (scripts/peers/run_vw.py).
    SonTable3,
    /// Throughput on dense synthetic data (d = 1000, n = 200k): examples/s and progressive error
    /// of sketchlearn AdaGrad and SON (FD/RFD/Oja/RP, m = 10) vs VW AdaGrad and OjaNewton.
    Throughput,
    /// DRP paper Theorems 2, 3, 5: recovery error ‖w − w*‖/‖w*‖ of the naive solution,
    /// Algorithm 1 and Algorithm 2 (T = 2..5) vs the number of projections m, ridge and
    /// logistic, on synthetic rank-10 data, r8, MNIST 3-vs-8 and a9a.
    DrpRecovery,
    /// DRP: test error and time of the recovered models vs the exact solution and LIBLINEAR
    /// (ridge, logistic, smoothed hinge) on the same four data sets.
    DrpTestError,
    /// SFTRL paper §5.2: RMSE of SFTRL (Alg. 4/5, m = 5..50) vs full FTRL, OGD, OCG, FM-SGD and
    /// River's FMRegressor on MovieLens-100K and ml-latest-small (80/20 in file order), with time
    /// and memory.
    FmMovielens,
    /// SFTRL paper §5.3: AUC of SFTRL vs the FM baselines (logistic loss, unit-norm rows) on
    /// spam.shuf, a9a and magic04.shuf, and the loss-vs-m table (paper Table 7).
    FmBinary,
    /// Sparse-time SON (issue 4): one-pass learning-only examples/s, peak memory and start-up
    /// of sparse Oja/RP/FD/RFD-SON (m = 10) and AdaGrad vs VW OjaNewton and AdaGrad, synthetic
    /// sparse data and r8, b = 18 and 24.
    SparseThroughput,
    /// Sparse-time SON: examples/s for m ∈ {5, 10, 20, 50} × nnz ∈ {10, 50, 200} (and d), with a
    /// fit of the cost to m² and m·nnz.
    SparseScaling,
    /// Sparse-time SON: progressive error on r8_earn_vs_rest and a9a, hashed and unhashed,
    /// tuned and untuned, vs VW AdaGrad and OjaNewton.
    SparseAccuracy,
    /// Issue 7: the untuned default (the `auto` mixture) on all 12 shared datasets vs the best
    /// untuned/tuned peers (RESULTS.md and VW AdaGrad/OjaNewton in the same run), each member
    /// alone, the one-knob tuned default, member weights and cost.
    Auto,
    /// Issue 27, item 2: the default with each member removed or replaced (12 shared sets and the
    /// generated sparse stream), and each member's CPU time per example.
    AutoMembers,
    /// Issue 27: the sparse-time RFD-SON member with the paper's doubling buffer (ℓ = 2m) and
    /// longer buffers (ℓ = 3m, 4m, 6m): learning-only time, shrinks, progressive error.
    FdBuffer,
    /// Issue 28, item 4: Ada-FD and Sketchy AdaGrad (`--algo ada-fd|sketchy`) untuned and tuned
    /// against the best tuned peer on the six payoff sets, and the default mixture with either
    /// added as a member (payoff count, and the 12-set guard against the best untuned peer).
    SketchedAdagrad,
    /// Issue 28, item 4: the oracle bound on the payoff sets the default misses (the best single
    /// learner over a wide grid, tuned on the stream) and candidate member grids (one more
    /// member, or m = 20): payoff count and the 12-set guard.
    PayoffMembers,
    /// Issue 28, item 4: the criterion for a curvature-sensitive set (a tuned full Newton
    /// step beats every tuned first-order peer by one SE) on every shared binary set, peers run
    /// in the same run, and the untuned default against the best tuned peer on each.
    PayoffCriterion,
}

fn main() {
    let args = ReproArgs::parse();
    if let Err(e) = run(&args) {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

pub fn run(args: &ReproArgs) -> Result<()> {
    std::fs::create_dir_all(&args.out)?;
    match args.experiment {
        Experiment::DrpRecovery => drp_recovery::run(args),
        Experiment::DrpTestError => drp_test_error::run(args),
        Experiment::FmMovielens => fm_movielens::run(args),
        Experiment::FmBinary => fm_binary::run(args),
        Experiment::RfdFigure1 => rfd_figure1::run(args),
        Experiment::SonSynthetic => son_synthetic::run(args),
        Experiment::RfdTable2 => rfd_table2::run(args),
        Experiment::SonTable3 => son_table3::run(args),
        Experiment::Throughput => throughput::run(args),
        Experiment::SparseThroughput => sparse_throughput::run(args),
        Experiment::SparseScaling => sparse_scaling::run(args),
        Experiment::SparseAccuracy => sparse_accuracy::run(args),
        Experiment::Auto => auto_table::run(args),
        Experiment::AutoMembers => auto_members::run(args),
        Experiment::FdBuffer => fd_buffer::run(args),
        Experiment::SketchedAdagrad => sketched_adagrad::run(args),
        Experiment::PayoffMembers => payoff_members::run(args),
        Experiment::PayoffCriterion => payoff_criterion::run(args),
    }
}

/// The command line that reproduces an experiment, for the reports.
pub fn command_line() -> String {
    let args: Vec<String> = std::env::args().skip(1).collect();
    format!(
        "cargo run --release -p sketchlearn-repro -- {}",
        args.join(" ")
    )
}
