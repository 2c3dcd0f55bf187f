//! The label and multiclass flags of `train` (issue 24): `--multiclass`, VW's `--oaa K`,
//! `--classes`, `--reduction`, and what `-p` writes (`--raw`, `--probabilities`).

use anyhow::{bail, Result};
use sketchlearn::data::ClassSpec;
use sketchlearn::labels::Classes;
use sketchlearn::linear::multiclass::{MulticlassConfig, Reduction, SoftmaxGiven};
use sketchlearn::linear::LearnerConfig;

/// Classes and prediction-output flags.
#[derive(clap::Args, Debug, Default, Clone)]
pub struct ClassArgs {
    /// K >= 2 classes (numbers or CSV names), from the file or --classes
    #[arg(long, help_heading = "Learner")]
    pub multiclass: bool,
    /// Multiclass over the classes 1..K (or 0..K-1), as VW's --oaa K
    #[arg(long, value_name = "K", help_heading = "Learner", value_parser = clap::value_parser!(u64).range(2..=4096))]
    pub oaa: Option<u64>,
    /// Classes in order: NEG,POS or A,B,C [default: sorted; stream: ±1, 0/1]
    #[arg(long, value_name = "A,B,..", help_heading = "Learner")]
    pub classes: Option<String>,
    /// Multiclass: oaa (one-against-all) | softmax [default: oaa]
    #[arg(long, value_name = "R", help_heading = "Learner")]
    pub reduction: Option<Reduction>,
    /// -p writes margins wᵀx (multiclass: the probabilities only)
    #[arg(long, conflicts_with = "probabilities", help_heading = "Output")]
    pub raw: bool,
    /// Multiclass -p: the label, then each class's probability
    #[arg(long, help_heading = "Output")]
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

    /// The multiclass configuration over the binary learner `member`
    /// ([`MulticlassConfig::from_member`]): one-against-all trains `member` per class; softmax
    /// takes its sketch flags from it (`--curvature`, `--size`, `--alpha`, `--clip`, `--diag`,
    /// `--no-bias`/`--bias-value`, `--seed`), and `--alpha0` and `--c` when given (`given`).
    pub fn multiclass_config(
        &self,
        member: LearnerConfig,
        given: SoftmaxGiven,
    ) -> Result<MulticlassConfig> {
        let reduction = self.reduction.unwrap_or(Reduction::OneVsAll);
        MulticlassConfig::from_member(reduction, member, given)
            .map_err(|e| anyhow::anyhow!("--reduction {reduction}: {e}"))
    }
}
