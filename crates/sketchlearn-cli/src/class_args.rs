//! The label and multiclass flags of `train` (issue 24): `--multiclass`, VW's `--oaa K`,
//! `--classes`, `--reduction`, and what `-p` writes (`--raw`, `--probabilities`).

use anyhow::{bail, Result};
use sketchlearn::data::ClassSpec;
use sketchlearn::labels::Classes;
use sketchlearn::linear::multiclass::{MulticlassConfig, Reduction};
use sketchlearn::linear::LearnerConfig;

/// Classes and prediction-output flags.
#[derive(clap::Args, Debug, Default, Clone)]
pub struct ClassArgs {
    /// Learn K >= 2 classes (any label values: numbers or CSV strings), classes from the file
    /// or --classes.
    #[arg(long)]
    pub multiclass: bool,
    /// Multiclass with the classes 1..K (or 0..K-1), as VW's --oaa K.
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u64).range(2..=4096))]
    pub oaa: Option<u64>,
    /// The classes in order: NEG,POS for a binary learner (POS is positive), A,B,C for
    /// --multiclass (default: from the file, sorted; the later class positive).
    #[arg(long, value_name = "A,B,...")]
    pub classes: Option<String>,
    /// Multiclass reduction: oaa (one-against-all over the binary learner; default, the
    /// measured best) | softmax (multinomial logistic with a Kronecker-factored sketched step).
    #[arg(long, value_name = "oaa|softmax")]
    pub reduction: Option<Reduction>,
    /// -p writes raw margins wᵀx instead of labels (multiclass: the class probabilities only).
    #[arg(long, conflicts_with = "probabilities")]
    pub raw: bool,
    /// Multiclass -p: the label, then one probability per class (in the model's class order).
    #[arg(long)]
    pub probabilities: bool,
}

impl ClassArgs {
    /// Whether a new learner is multiclass.
    pub fn is_multiclass(&self) -> bool {
        self.multiclass || self.oaa.is_some() || self.reduction.is_some()
    }

    /// The classes of a new learner as given.
    pub fn spec(&self) -> Result<ClassSpec> {
        Ok(match (&self.classes, self.oaa) {
            (Some(_), Some(_)) => bail!("give --classes or --oaa, not both"),
            (Some(list), None) => ClassSpec::Declared(
                Classes::parse_list(list).map_err(|e| anyhow::anyhow!("--classes {list}: {e}"))?,
            ),
            (None, Some(k)) => ClassSpec::Oaa(k as usize),
            (None, None) => ClassSpec::FromInput,
        })
    }

    /// The multiclass configuration over the binary learner `member`.
    pub fn multiclass_config(&self, member: LearnerConfig) -> Result<MulticlassConfig> {
        if !member.loss.is_classification() {
            bail!("--multiclass needs a classification loss, not --loss squared");
        }
        Ok(MulticlassConfig {
            reduction: self.reduction.unwrap_or(Reduction::OneVsAll),
            member,
            ..MulticlassConfig::default()
        })
    }
}
