//! `sketchlearn`: the command line of the sketchlearn library.

mod cache_cmd;
mod class_args;
mod drp_cmd;
mod eval_args;
mod fm_cmd;
mod fm_predict;
mod input_args;
mod inspect;
mod keep_names;
mod learner_args;
mod multiclass_cmd;
mod paths;
mod predict;
mod prediction_output;
mod prediction_sink;
mod quiet;
mod saved_model;
mod score_args;
mod signals;
mod sketch_cmd;
mod train;

use clap::{Parser, Subcommand};

/// Second-order online learning with streaming matrix sketches.
#[derive(Parser, Debug)]
#[command(name = "sketchlearn", version, about, long_about = None)]
struct Cli {
    /// Let -f and -p replace a file that holds no model or predictions (else it is refused;
    /// hidden from --help, which stays short: the refusal names it, docs/guide.md explains it)
    #[arg(long, global = true, hide = true)]
    overwrite: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Sketch a matrix (rows of a LIBSVM or CSV file) and report time and relative spectral error.
    Sketch(sketch_cmd::SketchArgs),
    /// Train a linear learner online (progressive validation), optionally saving the model.
    Train(Box<train::TrainArgs>),
    /// Parse a LIBSVM or VW file once into a binary cache (-c FILE) that later `train -c` and
    /// `test -c` runs read instead of the text.
    Cache(cache_cmd::CacheArgs),
    /// Evaluate a saved model on a file, without updating it.
    Test(train::TestArgs),
    /// Score rows without labels with a saved model: a line in, a line out (labels and
    /// probabilities, values, or --raw margins).
    Predict(predict::PredictArgs),
    /// Show what a model holds: learner, loss, dimension, examples seen, mixture weights, the
    /// largest weights and the sketches' top singular values (--json for a machine).
    Inspect(inspect::InspectArgs),
    /// Dual random projection: recover the optimum of an L2-regularised problem from m random
    /// projections (naive, Alg. 1, Alg. 2), optionally against the exact solution.
    Drp(Box<drp_cmd::DrpArgs>),
    /// Online factorization machines (SFTRL, FTRL, OGD, OCG, FM-SGD) on ratings or LIBSVM data:
    /// one online pass over the first part of the file, then a test on the rest; `fm predict`
    /// scores new (user, item) pairs with a saved model.
    Fm(Box<fm_cmd::FmArgs>),
}

fn main() {
    signals::install();
    let cli = Cli::parse();
    let _ = paths::OVERWRITE.set(cli.overwrite);
    let result = match cli.command {
        Command::Sketch(args) => {
            paths::check_not_empty(&args.file).and_then(|()| sketch_cmd::run(&args))
        }
        Command::Train(args) => {
            let inputs: Vec<&str> = std::iter::once(args.input.file.as_str())
                .chain(args.eval.test.as_deref())
                .collect();
            paths::check_learning_outputs(
                &inputs,
                args.initial_model.as_deref(),
                args.final_model.as_deref(),
                args.predictions.as_deref(),
                paths::Written::Lines,
            )
            .and_then(|()| paths::check_not_empty(&args.input.file))
            .and_then(|()| paths::check_cache(args.input.cache.as_deref(), &inputs))
            .and_then(|()| train::train(&args))
        }
        Command::Cache(args) => {
            paths::check_not_empty(&args.input.file).and_then(|()| cache_cmd::run(&args))
        }
        Command::Test(args) => paths::check_learning_outputs(
            &[&args.file],
            Some(&args.score.initial_model),
            None,
            args.score.predictions.as_deref(),
            paths::Written::Lines,
        )
        .and_then(|()| paths::check_not_empty(&args.file))
        .and_then(|()| paths::check_cache(args.cache.as_deref(), &[&args.file]))
        .and_then(|()| train::test(&args)),
        Command::Predict(args) => predict::run(&args),
        Command::Inspect(args) => inspect::run(&args),
        Command::Drp(args) => drp_cmd::run(&args),
        Command::Fm(args) => match &args.action {
            Some(fm_cmd::FmAction::Predict(p)) => fm_predict::run(p),
            None => fm_cmd::run(&args),
        },
    };
    if let Err(e) = result {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
