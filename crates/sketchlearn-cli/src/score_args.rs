//! The model and prediction-output flags that `test` and `predict` share (one definition, so
//! the two commands say and do the same).

/// `-i MODEL`, `-p FILE`, `--raw`, `--probabilities`.
#[derive(clap::Args, Debug)]
pub struct ScoreArgs {
    /// The model (written by `train -f`).
    #[arg(short = 'i', long = "initial-model")]
    pub initial_model: String,
    /// Write each prediction to this file (`-` = standard output; `predict`'s default): the
    /// label in the model's classes and the positive class's probability (logistic), the label
    /// (hinge), the value (squared loss).
    #[arg(short = 'p', long = "predictions")]
    pub predictions: Option<String>,
    /// -p writes raw margins wᵀx instead of labels and probabilities (multiclass: the
    /// probabilities only).
    #[arg(long, conflicts_with = "probabilities")]
    pub raw: bool,
    /// Multiclass -p: the label, then one probability per class (in the model's class order).
    #[arg(long)]
    pub probabilities: bool,
}
