//! The learner flags of `sketchlearn train` (a clap argument group: `-i` conflicts with all of
//! them), mapped onto the library's [`LearnerConfig`]; the library validates the result.

use anyhow::{bail, Result};
use sketchlearn::linear::{
    Algorithm, CurvatureKind, LearnerConfig, Regularization, Representation,
};
use sketchlearn::loss::Loss;
use std::str::FromStr;

/// A `--curvature` value: a curvature kind, or the name of its sparse-time learner
/// (`oja-sparse`, `rp-sparse`, `fd-sparse`, `rfd-sparse`: the kind with the sparse
/// representation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CurvatureArg {
    pub kind: CurvatureKind,
    pub sparse: bool,
}

impl FromStr for CurvatureArg {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if let Some(kind) = CurvatureKind::ALL.into_iter().find(|k| {
            k.sparse_name() == Some(s) && !matches!(k, CurvatureKind::Fd | CurvatureKind::Rfd)
        }) {
            return Ok(CurvatureArg { kind, sparse: true });
        }
        Ok(CurvatureArg {
            kind: s.parse()?,
            sparse: false,
        })
    }
}

/// Hyper-parameters of a new learner (unset ones take the library defaults, shown in `--help`;
/// the long explanations are in `docs/guide.md`).
#[derive(clap::Args, Debug)]
#[command(next_help_heading = "Learner")]
pub struct LearnerArgs {
    // `auto*`: auto, auto-sparse or auto-very-sparse (`docs/guide.md`, "Binary classification").
    /// auto*|ogd|adagrad[-grid]|newton|ada-fd|sketchy [default: auto]
    #[arg(long, value_name = "NAME")]
    pub algo: Option<Algorithm>,
    /// OGD / AdaGrad / ada-fd / sketchy learning rate
    #[arg(short = 'l', long = "learning-rate", value_name = "ETA", default_value_t = d().learning_rate)]
    pub learning_rate: f64,
    /// Penalty λ₁‖w‖₁, and (λ₂/2)‖w‖² with --l2 λ₂ (ogd, adagrad) [default: 0]
    #[arg(
        long,
        value_name = "λ1",
        default_value_t = 0.0,
        hide_default_value = true
    )]
    pub l1: f64,
    /// L2 penalty (λ₂/2)‖w‖² (ogd, adagrad; help: under --l1)
    #[arg(long, value_name = "λ2", default_value_t = 0.0, hide = true)]
    pub l2: f64,
    /// Wrap the learner in diagonal adaptation (SON §5.2)
    #[arg(long)]
    pub diag: bool,
    /// No intercept (default: a constant feature, --bias-value 1)
    #[arg(long)]
    pub no_bias: bool,
    /// The intercept's constant feature value (help: under --no-bias)
    #[arg(long, value_name = "V", default_value_t = d().bias_value, hide = true)]
    pub bias_value: f64,
    /// Projection bound C of |wᵀx| ≤ C [default: none]
    #[arg(long, value_name = "C")]
    pub clip: Option<f64>,
    /// logistic | squared | hinge | smooth-hinge
    #[arg(long, value_name = "NAME", default_value_t = d().loss, help_heading = "Loss")]
    pub loss: Loss,
    /// identity|full|fd|fd-fast|rfd|rfd-fast|rp|oja [default: rfd-fast]
    #[arg(long, value_name = "NAME", help_heading = "Sketch")]
    pub curvature: Option<CurvatureArg>,
    /// Sketch size m [default: 10; softmax: 20]
    #[arg(long, value_name = "M", help_heading = "Sketch")]
    pub size: Option<usize>,
    /// Newton: α of A = αI + SᵀS (1/α: step size); ada-fd: δ
    #[arg(long, value_name = "A", default_value_t = d().alpha, help_heading = "Sketch")]
    pub alpha: f64,
    /// RFD-SON: initial α₀; sketchy: initial δ [default: 0.2; softmax: 1]
    #[arg(long, value_name = "A", help_heading = "Sketch")]
    pub alpha0: Option<f64>,
    /// Newton: c = σ + η (the sketch takes √c·g) [default: 0.1; softmax: 0.2]
    #[arg(long = "c", value_name = "C", help_heading = "Sketch")]
    pub c: Option<f64>,
    /// Oja's learning-rate constant c of γ_t = min(c/t, 1) (a rare flag: in the guide)
    #[arg(long, value_name = "C", default_value_t = d().oja_c, hide = true)]
    pub oja_c: f64,
    /// auto (from the input) | dense | sparse
    #[arg(long, value_name = "R", default_value_t = d().representation, help_heading = "Sketch")]
    pub representation: Representation,
    /// Same as --representation sparse
    #[arg(long, hide = true, conflicts_with_all = ["dense", "representation"])]
    pub sparse: bool,
    /// Same as --representation dense
    #[arg(long, hide = true, conflicts_with = "representation")]
    pub dense: bool,
}

/// The library's defaults, which the flags' defaults show.
fn d() -> LearnerConfig {
    LearnerConfig::default()
}

impl LearnerArgs {
    /// The flags whose softmax default differs from the binary one, as given.
    pub fn softmax_given(&self) -> sketchlearn::linear::multiclass::SoftmaxGiven {
        sketchlearn::linear::multiclass::SoftmaxGiven {
            alpha0: self.alpha0,
            c: self.c,
            curvature: self.curvature.map(|c| c.kind),
            size: self.size,
        }
    }

    /// The configuration: library defaults overridden by the flags given (not yet checked).
    pub fn config(&self, seed: u64) -> Result<LearnerConfig> {
        let d = LearnerConfig::default();
        let named_sparse = self.curvature.is_some_and(|c| c.sparse);
        let representation = match (self.sparse, self.dense) {
            (true, _) => Representation::Sparse,
            (_, true) => Representation::Dense,
            _ if named_sparse && self.representation == Representation::Auto => {
                Representation::Sparse
            }
            _ => self.representation,
        };
        if named_sparse && representation != Representation::Sparse {
            bail!("--curvature {}-sparse names the sparse representation", {
                self.curvature.map_or("", |c| c.kind.name())
            });
        }
        Ok(LearnerConfig {
            // A curvature or --diag names one Newton learner; without them the default (auto).
            algorithm: self
                .algo
                .unwrap_or(if self.curvature.is_some() || self.diag {
                    Algorithm::Newton
                } else {
                    d.algorithm
                }),
            curvature: self.curvature.map_or(d.curvature, |c| c.kind),
            size: self.size.unwrap_or(d.size),
            loss: self.loss,
            alpha: self.alpha,
            alpha0: self.alpha0.unwrap_or(d.alpha0),
            c: self.c.unwrap_or(d.c),
            clip: self.clip.unwrap_or(d.clip),
            diag: self.diag || d.diag,
            diag_d0: d.diag_d0,
            learning_rate: self.learning_rate,
            seed,
            oja_c: self.oja_c,
            bias: d.bias && !self.no_bias,
            bias_value: self.bias_value,
            representation,
        })
    }

    /// The L1/L2 penalty (checked against the learner by the library).
    pub fn regularization(&self) -> Regularization {
        Regularization {
            l1: self.l1,
            l2: self.l2,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparse_learner_names_parse_as_a_curvature_and_the_sparse_representation() {
        let p = |s: &str| s.parse::<CurvatureArg>().unwrap();
        assert_eq!(p("oja-sparse").kind, CurvatureKind::Oja);
        assert_eq!(p("fd-sparse").kind, CurvatureKind::FdFast);
        assert_eq!(p("rfd-sparse").kind, CurvatureKind::RfdFast);
        assert!(p("rp-sparse").sparse && !p("rp").sparse);
        assert!("full-sparse".parse::<CurvatureArg>().is_err());
    }
}
