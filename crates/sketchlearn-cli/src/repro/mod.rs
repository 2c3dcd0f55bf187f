//! `sketchlearn repro`: paper experiments, each writing a markdown table, a CSV and a PNG plot
//! under the output folder (default `docs/results`).

mod rfd_figure1;

use anyhow::Result;
use std::path::PathBuf;

/// Arguments of `sketchlearn repro`.
#[derive(clap::Args, Debug)]
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

/// The experiments `repro` knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Experiment {
    /// RFD paper Figure 1: relative spectral error of FD vs RFD (per-row and doubling) on a9a
    /// and spam.
    RfdFigure1,
}

pub fn run(args: &ReproArgs) -> Result<()> {
    std::fs::create_dir_all(&args.out)?;
    match args.experiment {
        Experiment::RfdFigure1 => rfd_figure1::run(args),
    }
}

/// The command line that reproduces an experiment, for the reports.
pub fn command_line() -> String {
    let args: Vec<String> = std::env::args().skip(1).collect();
    format!(
        "cargo run --release -p sketchlearn-cli -- {}",
        args.join(" ")
    )
}
