//! The FD error bound of the curvature sketches inside a learner, for `sketchlearn.dask`'s
//! verbose rounds: walks the learner tree through its public accessors.

use sketchlearn::linear::curvature::AnyCurvature;
use sketchlearn::linear::multiclass::AnyMulticlass;
use sketchlearn::linear::sparse::SparseLearner;
use sketchlearn::linear::AnyLearner;

/// The largest `Σδ` (total shrinkage) of the FD/RFD curvature sketches in `learner` (dense or
/// sparse-time).
pub fn largest_shrinkage(learner: &AnyLearner) -> Option<f64> {
    match learner {
        AnyLearner::Newton(n) => match n.curvature() {
            AnyCurvature::Fd(c) => Some(c.sketch().total_shrinkage()),
            _ => None,
        },
        AnyLearner::Sparse(SparseLearner::Fd(l)) => Some(l.total_shrinkage()),
        AnyLearner::Diagonal(l) => largest_shrinkage(l.inner()),
        AnyLearner::Intercept(l) => largest_shrinkage(l.inner()),
        AnyLearner::TargetStandardization(l) => largest_shrinkage(l.inner()),
        AnyLearner::FeatureScaling(l) => largest_shrinkage(l.inner()),
        AnyLearner::UnitScaling(l) => largest_shrinkage(l.inner()),
        AnyLearner::RowScaling(l) => largest_shrinkage(l.inner()),
        AnyLearner::Mixture(m) => members(m.members()),
        AnyLearner::ScaledMixture(m) => members(m.mixture().members()),
        _ => None,
    }
}

fn members(members: &[AnyLearner]) -> Option<f64> {
    members
        .iter()
        .filter_map(largest_shrinkage)
        .reduce(f64::max)
}

/// The largest `Σδ` of the FD/RFD curvature sketches of a multiclass learner: the members' of
/// one-against-all, or the softmax learner's one feature-side sketch shared by the `K` classes
/// (dense or sparse-time, inside its row scaling and diagonal adaptation). `None` for softmax
/// over RP or Oja (they do not shrink: no such bound).
pub fn largest_multiclass_shrinkage(learner: &AnyMulticlass) -> Option<f64> {
    match learner {
        AnyMulticlass::OneVsAll(o) => members(o.members()),
        AnyMulticlass::Softmax(s) => match s.curvature() {
            AnyCurvature::Fd(c) => Some(c.sketch().total_shrinkage()),
            _ => None,
        },
        AnyMulticlass::SparseSoftmax(s) => Some(s.total_shrinkage()),
        AnyMulticlass::RowScaled(l) => largest_multiclass_shrinkage(l.inner()),
        AnyMulticlass::DiagonalScaled(l) => largest_multiclass_shrinkage(l.inner()),
        AnyMulticlass::SparseSoftmaxRp(_) | AnyMulticlass::SparseSoftmaxOja(_) => None,
    }
}
