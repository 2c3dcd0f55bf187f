//! Choosing a multiclass learner at run time: the validated [`MulticlassConfig`] and the
//! [`AnyMulticlass`] it builds (for the CLI, model files and bindings).

use super::sketch_choice::SOFTMAX_DEFAULT_SIZE;
use super::{DiagonalScaled, MulticlassLearner, OneVsAll, RowScaled, SoftmaxParams, SoftmaxSon};
use crate::dispatch::enum_dispatch;
use crate::linear::curvature::{
    AnyCurvature, FdCurvature, FullCurvature, IdentityCurvature, OjaCurvature, RpCurvature,
};
use crate::linear::sparse::{SparseSoftmax, SparseSoftmaxOja, SparseSoftmaxRp};
use crate::linear::{CurvatureKind, LearnError, LearnerConfig, Representation};
use crate::sketch::FdVariant;
use crate::Row;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// How `K` classes are learned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Reduction {
    /// [`OneVsAll`] over binary learners built from [`MulticlassConfig::member`].
    OneVsAll,
    /// [`SoftmaxSon`]: softmax regression with the Kronecker-factored sketched Newton step.
    Softmax,
}

impl Reduction {
    /// The command-line name: `oaa` or `softmax`.
    pub fn name(self) -> &'static str {
        match self {
            Reduction::OneVsAll => "oaa",
            Reduction::Softmax => "softmax",
        }
    }
}

impl fmt::Display for Reduction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Reduction {
    type Err = String;
    /// `oaa` (also `one-vs-all`, `ova`) or `softmax`.
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "oaa" | "one-vs-all" | "ova" => Ok(Reduction::OneVsAll),
            "softmax" => Ok(Reduction::Softmax),
            _ => Err(format!(
                "unknown reduction '{s}' (expected one of: oaa, softmax)"
            )),
        }
    }
}

/// Every hyper-parameter of a multiclass learner; [`MulticlassConfig::build`] validates them.
///
/// `member` configures every one-against-all member (its loss, algorithm, sketch and seed);
/// the other fields configure the softmax learner.
///
/// ```
/// use sketchlearn::linear::multiclass::{MulticlassConfig, MulticlassLearner, Reduction};
/// use sketchlearn::Row;
/// let softmax = MulticlassConfig { reduction: Reduction::Softmax, classes: 4, ..Default::default() };
/// let mut model = softmax.build(2).unwrap();
/// let p = model.learn(Row::Dense(&[1.0, 0.5]), 2, 1.0).unwrap();
/// assert_eq!(p.len(), 4);
/// let oaa = MulticlassConfig { classes: 3, ..MulticlassConfig::default() };
/// assert_eq!(oaa.build(2).unwrap().classes(), 3);
/// assert!(MulticlassConfig { classes: 1, ..Default::default() }.build(2).is_err());
/// assert!(MulticlassConfig { size: 0, ..softmax }.build(2).is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MulticlassConfig {
    /// One-against-all or softmax.
    pub reduction: Reduction,
    /// The number of classes `K ≥ 2`.
    pub classes: usize,
    /// One-against-all: the configuration of every member (default [`LearnerConfig::default`],
    /// the `auto` mixture). Its `representation` is also the softmax learner's:
    /// [`Representation::Sparse`] builds the sparse-time [`SparseSoftmax`] (fd-fast, rfd-fast,
    /// rp, oja; with `diag` inside [`DiagonalScaled`]), and its `oja_c` is the softmax Oja
    /// sketch's learning-rate constant.
    pub member: LearnerConfig,
    /// Softmax: the feature-side curvature (identity, full, fd, fd-fast, rfd, rfd-fast, rp, oja;
    /// not the sparse kinds).
    pub curvature: CurvatureKind,
    /// Softmax: sketch size `m ≥ 1`.
    pub size: usize,
    /// Softmax: `α` of `Φ = αI + BᵀB` (FD, full, identity, RP, Oja), in units of the mean
    /// squared row norm ([`RowScaled`]).
    pub alpha: f64,
    /// Softmax: `α₀` of the RFD sketch (rfd, rfd-fast), in the same units.
    pub alpha0: f64,
    /// Softmax: `c`, the sketch receives `√(c·ω)·x̃`.
    pub c: f64,
    /// Softmax: the class-side ridge `λ` of `Γ = Σ̄ + λI`.
    pub ridge: f64,
    /// Softmax: projection bound `C` on each score (∞ = none).
    pub clip: f64,
    /// Softmax: add an intercept (a constant feature at index `d`).
    pub bias: bool,
    /// Softmax: the intercept's constant feature value.
    pub bias_value: f64,
    /// Softmax: seed of the random curvatures (RP, Oja).
    pub seed: u64,
    /// Softmax: SON's diagonal adaptation (§5.2), see [`SoftmaxParams::diag`].
    pub diag: bool,
    /// Softmax: diagonal adaptation's `d₀`.
    pub diag_d0: f64,
    /// Softmax: the curvature is the untuned default's to choose from the input
    /// ([`MulticlassConfig::for_input`], `sketch_choice.rs`: fd-fast on sparse input, rfd-fast on
    /// dense input). Set by [`MulticlassConfig::from_member`] when no curvature was given;
    /// cleared once chosen, and never saved (a model records the curvature it was built with).
    #[serde(skip)]
    pub sketch_from_input: bool,
}

impl Default for MulticlassConfig {
    /// One-against-all over [`LearnerConfig::default`] (the `auto` mixture), three classes; the
    /// softmax learner's parameters: RFD (doubling), `m = 20`, `α = α₀ = 1` mean squared rows
    /// (the learner is row-scaled, [`RowScaled`]), `c = 0.2`, `λ = 0.1`, intercept, no diagonal
    /// adaptation. Built through [`MulticlassConfig::from_member`] without a curvature (the CLI
    /// and Python defaults), the curvature is chosen from the input: fd-fast (fixed `α`) on
    /// sparse input, rfd-fast on dense input (`sketch_choice.rs` derives why).
    ///
    /// Evidence (one pass in file order, progressive error,
    /// `cargo run --release -p sketchlearn --example softmax_mixture_probe`,
    /// `docs/results/multiclass.md`): the softmax learner so chosen 0.0734 / 0.1072 / 0.0387 on
    /// dna / mnist_test10k / r8_multiclass (VW `--oaa` 0.0788 / 0.1131 / 0.0444; the stop-37
    /// softmax default, rfd-fast `m = 10`, `α₀ = 1.5`, `c = λ = 0.05`: 0.0807 / 0.1086 /
    /// 0.0459); one-against-all `auto` 0.0741 / 0.1067 / 0.0383. `c·λ = 0.02` is the middle of
    /// a plateau on the dense sets (`c, λ ∈ {0.1, 0.2}`: dna 0.0716–0.0744, mnist
    /// 0.1058–0.1072 at `m = 15–30`); R8 with FD is 0.0384–0.0390 for `c = 0.2`, `λ = 0.1`,
    /// `α ∈ [0.7, 1]`, `m ∈ [10, 20]`. The softmax learner is not the default reduction.
    fn default() -> Self {
        MulticlassConfig {
            reduction: Reduction::OneVsAll,
            classes: 3,
            member: LearnerConfig::default(),
            curvature: CurvatureKind::RfdFast,
            size: SOFTMAX_DEFAULT_SIZE,
            alpha: 1.0,
            alpha0: 1.0,
            c: 0.2,
            ridge: 0.1,
            clip: f64::INFINITY,
            bias: true,
            bias_value: 1.0,
            seed: 0,
            diag: false,
            diag_d0: 0.1,
            sketch_from_input: false,
        }
    }
}

impl MulticlassConfig {
    /// Validates the hyper-parameters and builds the learner for input dimension `dim`.
    pub fn build(&self, dim: usize) -> Result<AnyMulticlass, LearnError> {
        if self.classes < 2 {
            return Err(LearnError::InvalidParameter(format!(
                "a multiclass model needs at least 2 classes, got {}",
                self.classes
            )));
        }
        match self.reduction {
            Reduction::OneVsAll => {
                let members = (0..self.classes)
                    .map(|_| self.member.build(dim))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(AnyMulticlass::OneVsAll(OneVsAll::of_class_learners(
                    members,
                    self.member.loss,
                )?))
            }
            Reduction::Softmax => {
                let de = dim + self.bias as usize;
                let params = SoftmaxParams {
                    c: self.c,
                    ridge: self.ridge,
                    clip: self.clip,
                    bias: self.bias.then_some(self.bias_value),
                    diag: self.diag.then_some(self.diag_d0),
                };
                let learner = if self.member.representation == Representation::Sparse {
                    self.sparse_softmax(dim, params)?
                } else {
                    AnyMulticlass::Softmax(SoftmaxSon::new(
                        self.classes,
                        self.softmax_curvature(de)?,
                        params,
                    )?)
                };
                // α and α₀ count in units of the mean squared row norm (`row_scaled.rs`).
                Ok(AnyMulticlass::RowScaled(Box::new(RowScaled::new(learner))))
            }
        }
    }

    /// Whether the softmax learner has a sparse-time form for these parameters (a doubling
    /// FD/RFD, an RP or an Oja sketch; with or without diagonal adaptation).
    pub(crate) fn softmax_has_sparse(&self) -> bool {
        matches!(
            self.curvature,
            CurvatureKind::FdFast | CurvatureKind::RfdFast | CurvatureKind::Rp | CurvatureKind::Oja
        )
    }

    /// The sparse-time softmax learner ([`SparseSoftmax`] over the chosen sketch) for input
    /// dimension `dim`; with `diag`, inside [`DiagonalScaled`], which appends the intercept
    /// itself so that its coordinate is scaled too (as the dense learner's).
    fn sparse_softmax(
        &self,
        dim: usize,
        params: SoftmaxParams,
    ) -> Result<AnyMulticlass, LearnError> {
        let Some(d0) = params.diag else {
            return self.sparse_softmax_learner(dim, params);
        };
        let de = dim + params.bias.is_some() as usize;
        let inner = SoftmaxParams {
            bias: None,
            diag: None,
            ..params
        };
        let inner = self.sparse_softmax_learner(de, inner)?;
        let wrapped = DiagonalScaled::new(inner, params.bias, d0)?;
        Ok(AnyMulticlass::DiagonalScaled(Box::new(wrapped)))
    }

    fn sparse_softmax_learner(
        &self,
        dim: usize,
        params: SoftmaxParams,
    ) -> Result<AnyMulticlass, LearnError> {
        let (k, m, seed, a) = (self.classes, self.size, self.seed, self.alpha);
        Ok(match self.curvature {
            CurvatureKind::FdFast => AnyMulticlass::SparseSoftmax(Box::new(SparseSoftmax::fd(
                k, dim, m, a, seed, params,
            )?)),
            CurvatureKind::RfdFast => AnyMulticlass::SparseSoftmax(Box::new(SparseSoftmax::rfd(
                k,
                dim,
                m,
                self.alpha0,
                seed,
                params,
            )?)),
            CurvatureKind::Rp => AnyMulticlass::SparseSoftmaxRp(Box::new(SparseSoftmaxRp::rp(
                k, dim, m, a, seed, params,
            )?)),
            CurvatureKind::Oja => AnyMulticlass::SparseSoftmaxOja(Box::new(SparseSoftmaxOja::oja(
                k,
                dim,
                m,
                a,
                self.member.oja_c,
                seed,
                params,
            )?)),
            other => {
                return Err(LearnError::InvalidParameter(format!(
                    "the sparse-time softmax learner takes the curvature fd-fast, rfd-fast, rp or \
                     oja, not {other}: use --representation dense"
                )))
            }
        })
    }

    /// The softmax learner's feature-side curvature of dimension `de`.
    fn softmax_curvature(&self, de: usize) -> Result<AnyCurvature, LearnError> {
        use CurvatureKind::*;
        let m = self.size;
        if m == 0 && matches!(self.curvature, Fd | FdFast | Rfd | RfdFast | Rp | Oja) {
            return Err(LearnError::InvalidParameter(
                "sketch size must be at least 1".into(),
            ));
        }
        let a = self.alpha;
        let alpha_ok = a.is_finite() && a > 0.0;
        if !alpha_ok && !matches!(self.curvature, Rfd | RfdFast) {
            return Err(LearnError::InvalidParameter(format!(
                "alpha must be finite and > 0, got {a}"
            )));
        }
        Ok(match self.curvature {
            Identity => AnyCurvature::Identity(IdentityCurvature::new(de, a)?),
            Full => AnyCurvature::Full(FullCurvature::new(de, a)?),
            Fd => AnyCurvature::Fd(FdCurvature::fd(de, m, FdVariant::PerRow, a)?),
            FdFast => AnyCurvature::Fd(FdCurvature::fd(de, m, FdVariant::Doubling, a)?),
            Rfd => AnyCurvature::Fd(FdCurvature::rfd(de, m, FdVariant::PerRow, self.alpha0)?),
            RfdFast => AnyCurvature::Fd(FdCurvature::rfd(de, m, FdVariant::Doubling, self.alpha0)?),
            Rp => AnyCurvature::Rp(RpCurvature::new(de, m, a, self.seed)?),
            Oja => AnyCurvature::Oja(OjaCurvature::new(de, m, a, self.member.oja_c, self.seed)?),
        })
    }

    /// A short description, e.g. `softmax rfd-fast m=10 alpha0=1 c=0.1 ridge=0.1 K=3`.
    pub fn describe(&self) -> String {
        match self.reduction {
            Reduction::OneVsAll => format!("oaa K={} [{}]", self.classes, self.member.describe()),
            Reduction::Softmax => {
                let step = match self.curvature {
                    CurvatureKind::Rfd | CurvatureKind::RfdFast => {
                        format!("m={} alpha0={}", self.size, self.alpha0)
                    }
                    CurvatureKind::Identity | CurvatureKind::Full => {
                        format!("alpha={}", self.alpha)
                    }
                    _ => format!("m={} alpha={}", self.size, self.alpha),
                };
                let sparse = if self.member.representation == Representation::Sparse {
                    " sparse-time"
                } else {
                    ""
                };
                let mut s = format!(
                    "softmax{sparse} {} {step} c={} ridge={} K={}",
                    self.curvature, self.c, self.ridge, self.classes
                );
                // Only whether there is an intercept is shown, not its constant.
                let bias = self.bias.then_some(1.0);
                crate::linear::config::describe_options(&mut s, self.clip, self.diag, bias);
                s
            }
        }
    }
}

/// A multiclass learner chosen at run time.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[allow(clippy::large_enum_variant)] // built once, never moved in a hot loop
pub enum AnyMulticlass {
    /// One-against-all over [`AnyLearner`](crate::linear::AnyLearner)s.
    OneVsAll(OneVsAll),
    /// Softmax regression with the sketched Kronecker-factored Newton step.
    Softmax(SoftmaxSon),
    /// The same in sparse time (doubling FD/RFD sketch; boxed: its column store and buffer
    /// are larger than the other variants).
    SparseSoftmax(Box<SparseSoftmax>),
    /// A softmax learner (`Softmax` or `SparseSoftmax`) on rows divided by their running RMS
    /// norm, so that `α`/`α₀` count in units of the mean squared row ([`RowScaled`]): what
    /// [`MulticlassConfig::build`] makes for `Reduction::Softmax` (files written before keep
    /// the unwrapped learner, with `α` in absolute units).
    RowScaled(Box<RowScaled<AnyMulticlass>>),
    /// The softmax learner in sparse time over the Gaussian (RP) sketch.
    SparseSoftmaxRp(Box<SparseSoftmaxRp>),
    /// The softmax learner in sparse time over Oja's sketch.
    SparseSoftmaxOja(Box<SparseSoftmaxOja>),
    /// A sparse-time softmax learner with SON's diagonal adaptation ([`DiagonalScaled`]; the
    /// dense-time learner has it inside).
    DiagonalScaled(Box<DiagonalScaled<AnyMulticlass>>),
}

enum_dispatch!($ dispatch, AnyMulticlass {
    OneVsAll,
    Softmax,
    SparseSoftmax,
    RowScaled,
    SparseSoftmaxRp,
    SparseSoftmaxOja,
    DiagonalScaled
});

impl AnyMulticlass {
    /// Each class's weight vector, class `k` at `k`: `d` feature weights, then the intercept's
    /// when the learner has one (one-against-all: member `k`'s weights; softmax: row `k` of
    /// `W`). `O(K·d)`, for inspection.
    pub fn class_weights(&self) -> Vec<Vec<f64>> {
        match self {
            AnyMulticlass::OneVsAll(l) => l
                .members()
                .iter()
                .map(|m| crate::linear::OnlineLearner::weights(m).into_owned())
                .collect(),
            AnyMulticlass::Softmax(l) => rows(l.input_weights(), l.classes()),
            AnyMulticlass::SparseSoftmax(l) => rows(l.weights(), l.classes()),
            AnyMulticlass::SparseSoftmaxRp(l) => rows(l.weights(), l.classes()),
            AnyMulticlass::SparseSoftmaxOja(l) => rows(l.weights(), l.classes()),
            AnyMulticlass::RowScaled(l) => l.original_weights(l.inner().class_weights()),
            AnyMulticlass::DiagonalScaled(l) => l.original_weights(l.inner().class_weights()),
        }
    }

    /// Per class of a one-against-all model, its member's mixture, if it is one
    /// ([`AnyLearner::mixture`](crate::linear::AnyLearner::mixture): the default's members are
    /// `auto` mixtures); empty for a softmax model, which holds no mixture.
    pub fn class_mixtures(&self) -> Vec<Option<&crate::linear::Mixture>> {
        match self {
            AnyMulticlass::OneVsAll(l) => l.members().iter().map(|m| m.mixture()).collect(),
            _ => Vec::new(),
        }
    }

    /// [`OneVsAll::forget_retired`]: for each `(class, member)` of `members`, `base`'s learner
    /// put back for that member of that class's mixture, retired there. An empty `members`
    /// changes nothing, on any learner; refused (nothing changed) for a softmax model, a
    /// `base` of another kind, or a member that is active.
    pub fn forget_retired(
        &mut self,
        base: &AnyMulticlass,
        members: &[(usize, usize)],
    ) -> Result<(), LearnError> {
        match (self, base) {
            _ if members.is_empty() => Ok(()),
            (AnyMulticlass::OneVsAll(l), AnyMulticlass::OneVsAll(b)) => {
                l.forget_retired(b, members)
            }
            _ => Err(LearnError::InvalidParameter(
                "only a one-against-all model's classes hold mixtures whose retired members can \
                 be put back to the base's, and the base must be one too"
                    .into(),
            )),
        }
    }

    /// The learner inside its [`RowScaled`] and [`DiagonalScaled`] wrappers, or this one: what
    /// the model is made of (one-against-all, dense-time or sparse-time softmax).
    pub fn unscaled(&self) -> &AnyMulticlass {
        match self {
            AnyMulticlass::RowScaled(l) => l.inner().unscaled(),
            AnyMulticlass::DiagonalScaled(l) => l.inner().unscaled(),
            other => other,
        }
    }
}

/// A row-major `K × d̃` matrix as `K` rows.
fn rows(w: Vec<f64>, k: usize) -> Vec<Vec<f64>> {
    w.chunks_exact(w.len() / k).map(<[f64]>::to_vec).collect()
}

impl MulticlassLearner for AnyMulticlass {
    fn classes(&self) -> usize {
        dispatch!(self, l => l.classes())
    }
    fn dim(&self) -> usize {
        dispatch!(self, l => l.dim())
    }
    fn scores(&self, x: Row<'_>) -> Vec<f64> {
        dispatch!(self, l => l.scores(x))
    }
    fn predict_proba(&self, x: Row<'_>) -> Vec<f64> {
        dispatch!(self, l => l.predict_proba(x))
    }
    fn predict_class(&self, x: Row<'_>) -> usize {
        dispatch!(self, l => l.predict_class(x))
    }
    fn learn(&mut self, x: Row<'_>, class: usize, weight: f64) -> Result<Vec<f64>, LearnError> {
        dispatch!(self, l => l.learn(x, class, weight))
    }
    fn refused(&self) -> u64 {
        dispatch!(self, l => l.refused())
    }
    fn examples_seen(&self) -> u64 {
        dispatch!(self, l => l.examples_seen())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for r in [Reduction::OneVsAll, Reduction::Softmax] {
            assert_eq!(r.name().parse::<Reduction>().unwrap(), r);
        }
        assert_eq!(
            "one-vs-all".parse::<Reduction>().unwrap(),
            Reduction::OneVsAll
        );
        assert!("ovo".parse::<Reduction>().is_err());
    }

    #[test]
    fn build_validates() {
        let ok = MulticlassConfig {
            reduction: Reduction::Softmax,
            ..MulticlassConfig::default()
        };
        assert!(ok.build(4).is_ok());
        for bad in [
            MulticlassConfig {
                classes: 1,
                ..ok.clone()
            },
            MulticlassConfig {
                size: 0,
                ..ok.clone()
            },
            MulticlassConfig {
                c: 0.0,
                ..ok.clone()
            },
            MulticlassConfig {
                ridge: f64::NAN,
                ..ok.clone()
            },
            MulticlassConfig {
                alpha0: 0.0,
                ..ok.clone()
            },
            MulticlassConfig {
                clip: -1.0,
                ..ok.clone()
            },
            MulticlassConfig {
                bias_value: 0.0,
                ..ok.clone()
            },
            MulticlassConfig {
                curvature: CurvatureKind::FdFast,
                alpha: 0.0,
                ..ok.clone()
            },
            MulticlassConfig {
                reduction: Reduction::OneVsAll,
                member: LearnerConfig {
                    learning_rate: -1.0,
                    ..LearnerConfig::default()
                },
                ..ok.clone()
            },
        ] {
            assert!(bad.build(4).is_err(), "{}", bad.describe());
        }
    }

    /// The softmax learner's Oja sketch takes `member.oja_c` (CLI `--oja-c`, Python `oja_c`),
    /// dense and sparse time; it was once always 1.
    #[test]
    fn softmax_oja_takes_the_members_oja_c() {
        let run = |oja_c: f64, representation: Representation| {
            let mut l = MulticlassConfig {
                reduction: Reduction::Softmax,
                curvature: CurvatureKind::Oja,
                size: 2,
                member: LearnerConfig {
                    oja_c,
                    representation,
                    ..LearnerConfig::default()
                },
                ..Default::default()
            }
            .build(6)
            .unwrap();
            let mut p = Vec::new();
            for t in 0..40 {
                let x = [(t % 5) as f64 - 2.0, 1.0, -0.5, (t % 3) as f64, 0.0, 0.25];
                p = l.learn(Row::Dense(&x), t % 3, 1.0).unwrap();
            }
            p
        };
        for representation in [Representation::Dense, Representation::Sparse] {
            let (one, half) = (run(1.0, representation), run(0.5, representation));
            assert_ne!(one, half, "{representation:?}");
            assert_eq!(one, run(1.0, representation));
        }
        let bad = MulticlassConfig {
            reduction: Reduction::Softmax,
            curvature: CurvatureKind::Oja,
            member: LearnerConfig {
                oja_c: -1.0,
                ..LearnerConfig::default()
            },
            ..Default::default()
        };
        assert!(bad.build(4).is_err());
    }

    #[test]
    fn every_dense_curvature_builds_and_learns() {
        use CurvatureKind::*;
        for curvature in [Identity, Full, Fd, FdFast, Rfd, RfdFast, Rp, Oja] {
            let mut l = MulticlassConfig {
                reduction: Reduction::Softmax,
                curvature,
                size: 2,
                ..Default::default()
            }
            .build(3)
            .unwrap();
            for t in 0..10 {
                let x = [t as f64 * 0.1, 1.0, -0.5];
                let p = l.learn(Row::Dense(&x), t % 3, 1.0).unwrap();
                assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12, "{curvature}");
            }
        }
    }
}
