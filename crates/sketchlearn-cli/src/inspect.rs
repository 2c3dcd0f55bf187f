//! `sketchlearn inspect MODEL [--json]`: what a model file holds, readable (the library's
//! [`ModelSummary`]).

use anyhow::Result;
use sketchlearn::model::ModelSummary;

/// Arguments of `sketchlearn inspect`.
#[derive(clap::Args, Debug)]
pub struct InspectArgs {
    /// `--quiet`: nothing on stderr but warnings and errors (this command writes no notes).
    #[command(flatten)]
    pub quiet: crate::quiet::Quiet,
    /// How many of the largest weights to list.
    #[arg(long, default_value_t = 10)]
    pub top: usize,
    /// How many singular values of each sketch to list.
    #[arg(long, default_value_t = 5)]
    pub singular_values: usize,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// The model file (written by `train -f`, `multiclass -f` or `fm -f`).
    pub model: String,
}

pub fn run(args: &InspectArgs) -> Result<()> {
    let report = ModelSummary::load(&args.model, args.top, args.singular_values)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.text(&args.model));
    }
    Ok(())
}
