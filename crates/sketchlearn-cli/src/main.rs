//! `sketchlearn`: the command line of the sketchlearn library.

mod drp_cmd;
mod fm_cmd;
mod learner_args;
mod sketch_cmd;
mod train;

use clap::{Parser, Subcommand};

/// Second-order online learning with streaming matrix sketches.
#[derive(Parser, Debug)]
#[command(name = "sketchlearn", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Sketch a matrix (rows of a LIBSVM or CSV file) and report time and relative spectral error.
    Sketch(sketch_cmd::SketchArgs),
    /// Train a linear learner online (progressive validation), optionally saving the model.
    Train(Box<train::TrainArgs>),
    /// Evaluate a saved model on a file, without updating it.
    Test(train::TestArgs),
    /// Dual random projection: recover the optimum of an L2-regularised problem from m random
    /// projections (naive, Alg. 1, Alg. 2), optionally against the exact solution.
    Drp(Box<drp_cmd::DrpArgs>),
    /// Online factorization machines (SFTRL, FTRL, OGD, OCG, FM-SGD) on ratings or LIBSVM data:
    /// one online pass over the first part of the file, then a test on the rest.
    Fm(Box<fm_cmd::FmArgs>),
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Sketch(args) => sketch_cmd::run(&args),
        Command::Train(args) => train::train(&args),
        Command::Test(args) => train::test(&args),
        Command::Drp(args) => drp_cmd::run(&args),
        Command::Fm(args) => fm_cmd::run(&args),
    };
    if let Err(e) = result {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
