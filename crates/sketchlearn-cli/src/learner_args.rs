//! The learner flags of `sketchlearn train` (a clap argument group: `-i` conflicts with all of
//! them), mapped onto the library's [`LearnerConfig`]; the library validates the result.

use anyhow::{bail, Result};
use sketchlearn::linear::{Algorithm, CurvatureKind, LearnerConfig, Representation};
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

/// Hyper-parameters of a new learner (all optional: unset ones take the library defaults).
#[derive(clap::Args, Debug, Default)]
pub struct LearnerArgs {
    /// Algorithm: auto | ogd | adagrad | adagrad-grid | newton. Default: auto, an online mixture
    /// of two RFD-SONs (two step sizes), FD-SON with diagonal adaptation and an AdaGrad grid
    /// (each learns every example; the prediction weighs them by their progressive Brier
    /// scores after calibrating each member's scale, AdaHedge) — or newton when --curvature or --diag is given. adagrad-grid: AdaGrad
    /// at -l and 8× -l (the latter's intercept constant /32), mixed the same way.
    #[arg(long)]
    pub algo: Option<Algorithm>,
    /// Curvature of the newton learner (and of auto's sketched members): identity | full | fd |
    /// fd-fast | rfd | rfd-fast | rp | oja (oja-sparse, rp-sparse, fd-sparse, rfd-sparse: the
    /// same with --representation sparse).
    #[arg(long)]
    pub curvature: Option<CurvatureArg>,
    /// Sketch size m.
    #[arg(long)]
    pub size: Option<usize>,
    /// Loss: logistic | squared | hinge | smooth-hinge.
    #[arg(long)]
    pub loss: Option<Loss>,
    /// Newton: α of A = αI + SᵀS (1/α acts as the step size).
    #[arg(long)]
    pub alpha: Option<f64>,
    /// RFD-SON: initial α₀ of the RFD sketch.
    #[arg(long)]
    pub alpha0: Option<f64>,
    /// Newton: c = σ + η (the sketch receives √c·g).
    #[arg(long = "c")]
    pub c: Option<f64>,
    /// Projection bound C of {|wᵀx| ≤ C} (default: no projection).
    #[arg(long)]
    pub clip: Option<f64>,
    /// Wrap the learner in diagonal adaptation (SON §5.2).
    #[arg(long)]
    pub diag: bool,
    /// OGD / AdaGrad learning rate.
    #[arg(short = 'l', long = "learning-rate")]
    pub learning_rate: Option<f64>,
    /// Oja's learning-rate constant c of γ_t = min(c/t, 1).
    #[arg(long)]
    pub oja_c: Option<f64>,
    /// No intercept (by default a constant feature 1 is appended, as VW does).
    #[arg(long)]
    pub no_bias: bool,
    /// The intercept's constant feature value (default 1): below 1, a scale-free learner
    /// (AdaGrad) moves the bias more slowly than the weights.
    #[arg(long)]
    pub bias_value: Option<f64>,
    /// State of the newton learner (and of auto's sketched members): auto | dense | sparse.
    /// sparse: the sparse-time learner of the curvature (oja, rp, fd/fd-fast, rfd/rfd-fast),
    /// O(m² + m·nnz) per example instead of O(md). auto (default): chosen from the input (see
    /// below).
    #[arg(long, value_name = "auto|dense|sparse")]
    pub representation: Option<Representation>,
    /// Same as --representation sparse.
    #[arg(long, conflicts_with_all = ["dense", "representation"])]
    pub sparse: bool,
    /// Same as --representation dense.
    #[arg(long, conflicts_with = "representation")]
    pub dense: bool,
}

impl LearnerArgs {
    /// The configuration: library defaults overridden by the flags given (not yet checked).
    pub fn config(&self, seed: u64) -> Result<LearnerConfig> {
        let d = LearnerConfig::default();
        let named_sparse = self.curvature.is_some_and(|c| c.sparse);
        let representation = match (self.sparse, self.dense, self.representation) {
            (true, _, _) => Representation::Sparse,
            (_, true, _) => Representation::Dense,
            (_, _, Some(r)) => r,
            _ if named_sparse => Representation::Sparse,
            _ => d.representation,
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
            loss: self.loss.unwrap_or(d.loss),
            alpha: self.alpha.unwrap_or(d.alpha),
            alpha0: self.alpha0.unwrap_or(d.alpha0),
            c: self.c.unwrap_or(d.c),
            clip: self.clip.unwrap_or(d.clip),
            diag: self.diag || d.diag,
            diag_d0: d.diag_d0,
            learning_rate: self.learning_rate.unwrap_or(d.learning_rate),
            seed,
            oja_c: self.oja_c.unwrap_or(d.oja_c),
            bias: d.bias && !self.no_bias,
            bias_value: self.bias_value.unwrap_or(d.bias_value),
            representation,
        })
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
