//! The evaluation flags of `sketchlearn train` (passes, hold-out, test file, early stop,
//! shuffle buffer), mapped onto the library's [`Evaluation`]; the library runs them.

use sketchlearn::run::Evaluation;

/// How a training run is evaluated besides progressive validation.
#[derive(clap::Args, Debug)]
#[command(next_help_heading = "Evaluation")]
pub struct EvalArgs {
    /// Passes over the data
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub passes: u32,
    /// Hold out this fraction (every k-th example; not learned) [default: none]
    #[arg(long, value_name = "FRACTION")]
    pub holdout: Option<f64>,
    /// Evaluate the model on this file after each pass
    #[arg(long, value_name = "FILE")]
    pub test: Option<String>,
    /// Stop after N passes without a better held-out loss [default: off]
    #[arg(long, value_name = "N")]
    pub early_stop: Option<u32>,
    /// Shuffle through a buffer of N examples (seeded by --seed)
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub shuffle_buffer: usize,
}

impl EvalArgs {
    /// The library's evaluation settings.
    pub fn evaluation(&self, seed: u64) -> Evaluation {
        Evaluation {
            holdout: self.holdout,
            early_stop: self.early_stop,
            shuffle_buffer: self.shuffle_buffer,
            seed,
        }
    }
}
