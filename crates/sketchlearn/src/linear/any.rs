//! [`AnyLearner`]: a linear learner chosen at run time (what [`ValidLearnerConfig::build`]
//! returns and model files hold).
//!
//! [`ValidLearnerConfig::build`]: super::ValidLearnerConfig::build

use super::curvature::AnyCurvature;
use super::sparse::SparseLearner;
use super::{
    AdaFd, AdaGrad, DiagonalAdaptation, FeatureScaling, FixedLinear, Intercept, LearnError,
    Mixture, Newton, Ogd, OnlineLearner, ProximalAdaGrad, ProximalOgd, RowScaling, RunningMean,
    ScaledMixture, Sketchy, TargetStandardization, UnitScaling,
};
use crate::dispatch::{enum_dispatch, forward_online_learner};
use crate::{Example, Row};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// A learner chosen at run time.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[allow(clippy::large_enum_variant)] // built once, never moved in a hot loop
pub enum AnyLearner {
    /// Online gradient descent.
    Ogd(Ogd),
    /// Diagonal AdaGrad.
    AdaGrad(AdaGrad),
    /// Sketched Online Newton.
    Newton(Newton<AnyCurvature>),
    /// Any of the above with diagonal adaptation.
    Diagonal(Box<DiagonalAdaptation<AnyLearner>>),
    /// Any of the above with an intercept.
    Intercept(Box<Intercept<AnyLearner>>),
    /// Fixed weights computed offline (e.g. by dual random projection); never learns.
    Fixed(FixedLinear),
    /// A sparse-time Sketched Online Newton learner (RP, Oja, FD/RFD).
    Sparse(SparseLearner),
    /// An exponentially weighted online mixture of learners.
    Mixture(Mixture),
    /// The running mean of the labels.
    RunningMean(RunningMean),
    /// A learner of standardised labels.
    TargetStandardization(Box<TargetStandardization<AnyLearner>>),
    /// A learner of RMS-scaled features.
    FeatureScaling(Box<FeatureScaling<AnyLearner>>),
    /// The squared-loss mixture ([`MixRule::AdaHedgeScaled`](super::MixRule::AdaHedgeScaled)).
    ScaledMixture(Box<ScaledMixture>),
    /// OGD with an L1/L2 penalty (lazy proximal steps).
    ProximalOgd(ProximalOgd),
    /// AdaGrad with an L1/L2 penalty (lazy proximal steps).
    ProximalAdaGrad(ProximalAdaGrad),
    /// A learner of rows divided by their running RMS norm (every single Newton learner).
    RowScaling(Box<RowScaling<AnyLearner>>),
    /// Ada-FD: full-matrix AdaGrad on an FD sketch of the gradients.
    AdaFd(AdaFd),
    /// Sketchy AdaGrad: the same with the sketch's escaped mass added back.
    Sketchy(Sketchy),
    /// A learner of features brought down to unit scale (every member of the default
    /// classification mixture).
    UnitScaling(Box<UnitScaling<AnyLearner>>),
}

enum_dispatch!($ dispatch, AnyLearner {
    Ogd, AdaGrad, Newton, Diagonal, Intercept, Fixed, Sparse, Mixture, RunningMean,
    TargetStandardization, FeatureScaling, ScaledMixture, ProximalOgd, ProximalAdaGrad, RowScaling,
    AdaFd, Sketchy, UnitScaling,
});

forward_online_learner!(AnyLearner, dispatch {
    fn learn_batch(&mut self, batch: &[Example], out: &mut Vec<f64>) -> Result<(), LearnError> {
        match self {
            AnyLearner::Mixture(mix) => mix.learn_batch_parallel(batch, out),
            other => super::learn_each(other, batch, out),
        }
    }

    fn nested_refusals(&self) -> u64 {
        self.member_refused_steps()
    }

    fn as_unit_scaling(&self) -> Option<&UnitScaling<AnyLearner>> {
        match self {
            AnyLearner::UnitScaling(l) => Some(l),
            _ => None,
        }
    }

    fn as_unit_scaling_mut(&mut self) -> Option<&mut UnitScaling<AnyLearner>> {
        match self {
            AnyLearner::UnitScaling(l) => Some(l),
            _ => None,
        }
    }
});

impl AnyLearner {
    /// Sets the retirement threshold `ε` of every mixture in this learner — a mixture, the
    /// mixtures among its members (`adagrad-grid` inside `auto`) and a wrapped one
    /// (`mixture_retirement.rs`; 0 turns retirement off everywhere: the learner of before the
    /// rule, bit for bit). `false` when it holds no mixture.
    pub fn set_retirement(&mut self, epsilon: f64) -> Result<bool, LearnError> {
        use AnyLearner::*;
        Ok(match self {
            Mixture(m) => retire_in(m, epsilon)?,
            ScaledMixture(m) => retire_in(m.mixture_mut(), epsilon)?,
            Diagonal(l) => l.inner_mut().set_retirement(epsilon)?,
            Intercept(l) => l.inner_mut().set_retirement(epsilon)?,
            TargetStandardization(l) => l.inner_mut().set_retirement(epsilon)?,
            FeatureScaling(l) => l.inner_mut().set_retirement(epsilon)?,
            RowScaling(l) => l.inner_mut().set_retirement(epsilon)?,
            UnitScaling(l) => l.inner_mut().set_retirement(epsilon)?,
            _ => false,
        })
    }

    /// [`Mixture::set_calibrated_output`] on this learner if it is a mixture (nothing
    /// otherwise). The builder decides it (`linear/check.rs`, `calibrated_output`: on for a
    /// logistic default or grid alone, off for a grid that is another mixture's member, whose
    /// raw score its parent grades); one-against-all turns its class learners off
    /// ([`OneVsAll::of_class_learners`](super::multiclass::OneVsAll::of_class_learners)).
    pub fn set_calibrated_output(&mut self, on: bool) {
        if let AnyLearner::Mixture(m) = self {
            m.set_calibrated_output(on);
        }
    }

    /// The learner's mixture (`auto`, `auto-sparse`, `adagrad-grid`, whether or not its rows
    /// are scaled), if it is one; `None` for one learner (a mixture among a mixture's members
    /// is that member's). Exhaustive (no wildcard): a new learner that holds a mixture must say
    /// so here, or `inspect` would lose its weights and a distributed fit its retirements.
    pub fn mixture(&self) -> Option<&Mixture> {
        use AnyLearner::*;
        match self {
            Mixture(mix) => Some(mix),
            ScaledMixture(mix) => Some(mix.mixture()),
            Ogd(_)
            | AdaGrad(_)
            | Newton(_)
            | Diagonal(_)
            | Intercept(_)
            | Fixed(_)
            | Sparse(_)
            | RunningMean(_)
            | TargetStandardization(_)
            | FeatureScaling(_)
            | ProximalOgd(_)
            | ProximalAdaGrad(_)
            | RowScaling(_)
            | AdaFd(_)
            | Sketchy(_)
            | UnitScaling(_) => None,
        }
    }

    /// [`mixture`](Self::mixture), to change.
    fn mixture_mut(&mut self) -> Option<&mut Mixture> {
        match self {
            AnyLearner::Mixture(mix) => Some(mix),
            AnyLearner::ScaledMixture(mix) => Some(mix.mixture_mut()),
            _ => None,
        }
    }

    /// [`Mixture::forget_retired`] on this learner's mixture (a mixture, or a scaled one: the
    /// learners whose [`mixture`](Self::mixture) is `Some`) over `base`'s, the learner it grew
    /// from: `base`'s learner put back for each of `members`, all retired here. The predictions
    /// and what it learns next are the same bits; only those members' states differ. An empty
    /// `members` changes nothing, on any learner; refused (nothing changed) for a learner
    /// without a mixture, a `base` of another kind, or a member that is active.
    pub fn forget_retired(
        &mut self,
        base: &AnyLearner,
        members: &[usize],
    ) -> Result<(), LearnError> {
        self.check_forget_retired(base, members)?;
        match (self.mixture_mut(), base.mixture()) {
            (Some(m), Some(b)) => m.forget_retired(b, members),
            _ => Ok(()), // `members` is empty: checked
        }
    }

    /// `Ok` when [`forget_retired`](Self::forget_retired) with these arguments refuses nothing,
    /// else its error; nothing is changed.
    pub fn check_forget_retired(
        &self,
        base: &AnyLearner,
        members: &[usize],
    ) -> Result<(), LearnError> {
        if members.is_empty() {
            return Ok(());
        }
        let same_kind = std::mem::discriminant(self) == std::mem::discriminant(base);
        match (self.mixture(), base.mixture()) {
            (Some(m), Some(b)) if same_kind => m.check_forget(b, members),
            _ => Err(LearnError::InvalidParameter(
                "only a mixture's retired members can be put back to the base's, and the base \
                 must be the same kind of mixture"
                    .into(),
            )),
        }
    }

    /// Member steps refused inside the mixtures this learner holds (a mixture, the mixtures
    /// among its members, a wrapped one): a mixture absorbs a member's refused step — the
    /// member keeps its state and the mixture goes on ([`Mixture::refused_steps`]) — so the
    /// run's policy ([`learn_or_refuse`](crate::run::learn_or_refuse)) never sees it. Front
    /// ends add this count's growth over a run to the steps they report refused; without it,
    /// a default whose every member refused every row (features of `1e300`) learned nothing
    /// and said nothing of why. 0 for a learner without a mixture.
    ///
    /// ```
    /// use sketchlearn::linear::{LearnerConfig, OnlineLearner};
    /// use sketchlearn::Row;
    /// let mut learner = LearnerConfig::default().build(2).unwrap();
    /// learner.learn(Row::Dense(&[1.0, -2.0]), 1.0, 1.0).unwrap();
    /// assert_eq!(learner.member_refused_steps(), 0);
    /// let mut huge = LearnerConfig::default().build(2).unwrap();
    /// huge.learn(Row::Dense(&[1e300, -2e300]), 1.0, 1.0).unwrap(); // the members refuse
    /// assert!(huge.member_refused_steps() > 0);
    /// ```
    pub fn member_refused_steps(&self) -> u64 {
        use AnyLearner::*;
        match self {
            Mixture(m) => refused_in(m),
            ScaledMixture(m) => refused_in(m.mixture()),
            Diagonal(l) => l.inner().member_refused_steps(),
            Intercept(l) => l.inner().member_refused_steps(),
            TargetStandardization(l) => l.inner().member_refused_steps(),
            FeatureScaling(l) => l.inner().member_refused_steps(),
            RowScaling(l) => l.inner().member_refused_steps(),
            UnitScaling(l) => l.inner().member_refused_steps(),
            _ => 0,
        }
    }

    /// [`set_retirement`](Self::set_retirement) as a user's option (`--retire`, Python's
    /// `retire=`): an error for `ε` outside `[0, 1)` and for a learner that holds no mixture,
    /// worded with the option's name and, for the second, `fix` (how to leave it out).
    pub fn retire(&mut self, epsilon: f64, option: &str, fix: &str) -> Result<(), String> {
        match self.set_retirement(epsilon) {
            Ok(true) => Ok(()),
            Ok(false) => Err(format!(
                "{option} applies to mixtures (the default auto, auto-sparse, adagrad-grid); this \
                 learner holds none: {fix}"
            )),
            Err(e) => Err(format!("{option}: {e}")),
        }
    }
}

/// The refusal of a retirement threshold (`--retire`, Python's `retire=`, named by `option`)
/// by a multiclass model: its binary members keep the default
/// [`DEFAULT_RETIREMENT`](super::DEFAULT_RETIREMENT) (one message for every front end, as
/// [`AnyLearner::retire`]'s).
pub fn multiclass_refuses_retire(option: &str) -> String {
    format!(
        "{option} is for binary and regression models (multiclass keeps the default {:e})",
        super::DEFAULT_RETIREMENT
    )
}

/// [`AnyLearner::member_refused_steps`] of a mixture: its own count and its members' (a member
/// may itself be a mixture).
fn refused_in(m: &Mixture) -> u64 {
    let inner = m.members().iter().map(AnyLearner::member_refused_steps);
    inner.fold(m.refused_steps(), u64::saturating_add)
}

/// [`AnyLearner::set_retirement`] of a mixture: its own threshold and its members' (a member
/// may itself be a mixture). Always `true`.
fn retire_in(m: &mut Mixture, epsilon: f64) -> Result<bool, LearnError> {
    m.set_retirement(epsilon)?;
    for member in m.members_mut() {
        member.set_retirement(epsilon)?;
    }
    Ok(true)
}
