//! One unit scaling for all the members of a [`Mixture`](super::Mixture) (issue 27).
//!
//! Every member of the default classification mixture is a [`UnitScaling`] of its learner, and
//! its statistics (the example count, each feature's moments, the table share) use no label:
//! they are a function of the examples seen, the same for every member. Kept per member, the
//! default made `K` identical copies and `K` hash look-ups per non-zero, 20–27 % of its CPU on
//! sparse streams. So the members hold one shared state (an `Arc`, copied on write when another
//! learner still holds it: a clone of the mixture, say), the example joins it once, and every
//! member's learner is handed the same scaled values.
//!
//! **The same bits.** Member `k` alone would, for an example `x` it has validated: let `x` join
//! its statistics, scale `x` by them ([`UnitScaling`]'s `observe_scaled`), and learn the scaled
//! row; a refused step predicts with the statistics that `x` joined. Its statistics before `x`
//! equal every other member's (the same examples joined in the same order, from equal starts),
//! so they are the shared state, and the scaled row is the one computed once. A batch on two
//! threads ([`Mixture::learn_batch_parallel`](super::Mixture::learn_batch_parallel)) scales its
//! examples in order before the members learn them: the row of example `i` is what the state
//! gave right after `i` joined, which is what each member computed there before. Tested
//! against members with their own statistics (`tests/suite/shared_scaling.rs`) and by the golden
//! hashes, which did not change.
//!
//! **When.** Members share when they are all [`UnitScaling`]s with equal statistics: at
//! construction (all empty), after loading a file (which holds one copy per member, as
//! before), after a merge ([`merge_members`]: the shared statistics merged once). Otherwise each
//! member keeps its own state and learns as before.

use super::rescaling::with_values;
use super::{LearnError, OnlineLearner, UnitScaling};
use crate::merge::{MergeResult, MergeShare};
use crate::Row;
use std::sync::Arc;

/// Makes `members` share one scaling state when they are all unit scalings with equal
/// statistics (see the [module](self) docs); otherwise leaves them as they are.
pub(super) fn link<L: OnlineLearner>(members: &mut [L]) {
    let Some((first, rest)) = members.split_first_mut() else {
        return;
    };
    let Some(head) = first.as_unit_scaling() else {
        return;
    };
    let equal = |m: &L| m.as_unit_scaling().is_some_and(|u| u.same_scale_as(head));
    if rest.iter().all(equal) {
        for u in rest.iter_mut().filter_map(L::as_unit_scaling_mut) {
            u.share_scale_of(head);
        }
    }
}

/// A [`Mixture`](super::Mixture)'s members merged with `other`'s over `base`'s, member `k` with
/// member `k` ([`MergeShare`]). When the members of each of the three share one scaling state,
/// it is merged once, with the first member, and the other members merge their learners alone
/// and share the first's merged state.
///
/// **The same bits as merging each member on its own** (and then [`link`]ing them, as the
/// mixture's merge does): a [`UnitScaling`]'s merge is its learner's merge and, apart from it, a
/// function of the three statistics alone (`unit_scaling.rs`: counts and moments added since the
/// base), and member `k`'s three statistics are member 0's — the same objects — so member `k`
/// would compute member 0's merged statistics bit for bit, and `link` would then make it share
/// them. At `2^20` features each member's merge of the moments is a copy of the `32·d`-byte
/// table and a pass adding a block's moments to it, `K − 1` of them thrown away by `link`
/// (docs/results/dask.md, dask15).
pub(super) fn merge_members<L: OnlineLearner + MergeShare>(
    members: &mut [L],
    other: &[L],
    base: Option<&[L]>,
    share: f64,
) -> MergeResult {
    let shares = |m: &[L]| shared_head(m).is_some();
    if shares(members) && shares(other) && base.is_none_or(shares) {
        merge_sharing(members, other, base, share)
    } else {
        merge_each(members, other, base, share)
    }
}

/// [`merge_members`] when the members do not all share one scaling: each on its own.
fn merge_each<L: MergeShare>(
    members: &mut [L],
    other: &[L],
    base: Option<&[L]>,
    share: f64,
) -> MergeResult {
    for (k, (m, o)) in members.iter_mut().zip(other).enumerate() {
        m.merge_share(o, base.map(|b| &b[k]), share)?;
    }
    Ok(())
}

/// [`merge_members`] when the members of each of the three share one scaling: the first
/// member merged whole, the others' learners alone, sharing the first's merged statistics.
fn merge_sharing<L: OnlineLearner + MergeShare>(
    members: &mut [L],
    other: &[L],
    base: Option<&[L]>,
    share: f64,
) -> MergeResult {
    fn scaling<L: OnlineLearner>(l: &L) -> &UnitScaling<super::AnyLearner> {
        l.as_unit_scaling()
            .expect("members sharing a scaling are unit scalings")
    }
    let Some((head, rest)) = members.split_first_mut() else {
        return Ok(());
    };
    head.merge_share(&other[0], base.map(|b| &b[0]), share)?;
    let head = scaling(head);
    for (k, m) in rest.iter_mut().enumerate() {
        let (o, b) = (scaling(&other[k + 1]), base.map(|b| scaling(&b[k + 1])));
        let u = m
            .as_unit_scaling_mut()
            .expect("members sharing a scaling are unit scalings");
        u.inner_mut()
            .merge_share(o.inner(), b.map(|b| b.inner()), share)?;
        u.share_scale_of(head);
    }
    Ok(())
}

/// The first member's unit scaling when every member is one and they share its state.
fn shared_head<L: OnlineLearner>(members: &[L]) -> Option<&UnitScaling<super::AnyLearner>> {
    let (first, rest) = members.split_first()?;
    let head = first.as_unit_scaling()?;
    rest.iter()
        .all(|m| {
            m.as_unit_scaling()
                .is_some_and(|u| u.shares_scale_with(head))
        })
        .then_some(head)
}

/// The scaled values of a run of examples, computed once for every member: example `i`'s are
/// `values[ends[i − 1]..ends[i]]` (buffers reused from one call to the next).
#[derive(Clone, Debug, Default)]
pub(super) struct ScaledRows {
    values: Vec<f64>,
    ends: Vec<usize>,
    row: Vec<f64>,
}

impl ScaledRows {
    /// When `members` share one scaling state: each row of `rows`, in order, joins it, and its
    /// scaled values are kept (true). Otherwise nothing is done (false).
    pub(super) fn observe<'a, L: OnlineLearner>(
        &mut self,
        members: &mut [L],
        rows: impl Iterator<Item = Row<'a>>,
    ) -> bool {
        self.values.clear();
        self.ends.clear();
        let Some((d, mut scale)) = take_state(members) else {
            return false;
        };
        let state = Arc::make_mut(&mut scale);
        for x in rows {
            state.observe_scaled(d, x, &mut self.row);
            self.values.extend_from_slice(&self.row);
            self.ends.push(self.values.len());
        }
        put_state(members, scale);
        true
    }

    /// A buffer of `len` values to scale a batch into (the kept values' storage, reused: its
    /// contents are to be overwritten, and [`get`](Self::get) is not valid until the next
    /// [`observe`](Self::observe)).
    pub(super) fn buffer(&mut self, len: usize) -> &mut [f64] {
        self.ends.clear();
        self.values.resize(len, 0.0);
        &mut self.values
    }

    /// The scaled values of the `i`-th row observed.
    pub(super) fn get(&self, i: usize) -> &[f64] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.values[start..self.ends[i]]
    }
}

/// The members' shared statistics taken out of them (each holder but one let go, so the state
/// changes in place, unless a learner outside these members holds it too: then it is copied
/// once when first changed, and the copy is shared), with the dimension: `None` when the
/// members do not share one. [`put_state`] gives it back; in between the members' learners
/// learn rows scaled by it (they never read it).
pub(super) fn take_state<L: OnlineLearner>(
    members: &mut [L],
) -> Option<(usize, Arc<super::unit_scaling::UnitScale>)> {
    shared_head(members)?;
    let d = members[0].dim();
    let mut scale = None;
    for u in members.iter_mut().filter_map(L::as_unit_scaling_mut) {
        scale = Some(u.take_scale());
    }
    Some((d, scale?))
}

/// Gives the statistics taken by [`take_state`] back to every member.
pub(super) fn put_state<L: OnlineLearner>(
    members: &mut [L],
    scale: Arc<super::unit_scaling::UnitScale>,
) {
    for u in members.iter_mut().filter_map(L::as_unit_scaling_mut) {
        u.put_scale(Arc::clone(&scale));
    }
}

/// One member's step on `x`: with `scaled` (the members share their scaling, `x` has joined
/// it) the member's learner learns the scaled row; otherwise the member learns `x`. A refused
/// step (or a failed sketch) is counted in `refused`, and the member predicts with its kept
/// state.
pub(super) fn member_step<L: OnlineLearner>(
    member: &mut L,
    x: Row<'_>,
    scaled: Option<&[f64]>,
    (y, weight): (f64, f64),
    refused: &mut u64,
) -> Result<f64, LearnError> {
    match scaled.zip(member.as_unit_scaling_mut()) {
        Some((v, u)) => step(u.inner_mut(), with_values(x, v), y, weight, refused),
        None => step(member, x, y, weight, refused),
    }
}

fn step<L: OnlineLearner + ?Sized>(
    learner: &mut L,
    x: Row<'_>,
    y: f64,
    weight: f64,
    refused: &mut u64,
) -> Result<f64, LearnError> {
    match learner.learn(x, y, weight) {
        Ok(p) => Ok(p),
        // The example was validated by the mixture: what remains is a step refused (the learner
        // keeps its state) or a sketch failing (rolled back); the other members go on.
        Err(LearnError::Diverged(_) | LearnError::Sketch(_)) => {
            *refused += 1;
            Ok(learner.predict(x))
        }
        Err(e) => Err(e),
    }
}

/// Each member's score of `x` into `preds` (cleared first), the scaled values computed once
/// when the members share their scaling.
pub(super) fn predict_each<L: OnlineLearner>(
    members: &[L],
    x: Row<'_>,
    preds: &mut Vec<f64>,
    active: impl Fn(usize) -> bool,
) {
    preds.clear();
    // A retired member (`mixture_retirement.rs`) is not evaluated: its prediction is 0.
    let each = members.iter().enumerate().map(|(k, m)| (active(k), m));
    let Some(head) = shared_head(members) else {
        preds.extend(each.map(|(on, m)| if on { m.predict(x) } else { 0.0 }));
        return;
    };
    let mut v = Vec::new();
    head.scaled_values(x, &mut v);
    let z = with_values(x, &v);
    preds.extend(each.map(|(on, m)| match m.as_unit_scaling() {
        _ if !on => 0.0,
        Some(u) => u.inner().predict(z),
        None => m.predict(x),
    }));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linear::{AnyLearner, LearnerConfig, Mixture};
    use crate::merge::MergeShare;

    fn default_mixture(d: usize) -> Mixture {
        match LearnerConfig::default().build(d).unwrap() {
            AnyLearner::Mixture(m) => m,
            other => panic!("the default is a mixture, got {other:?}"),
        }
    }

    fn learn(m: &mut Mixture, t0: usize, n: usize) {
        for t in t0..t0 + n {
            let x = [100.0 + (t % 7) as f64, (t % 3) as f64, 0.5];
            let y = if t % 2 == 0 { 1.0 } else { -1.0 };
            m.learn(Row::Dense(&x), y, 1.0).unwrap();
        }
    }

    /// Built, learned, cloned, merged and loaded, the members share one state whenever their
    /// statistics are equal; unequal ones are left with their own.
    #[test]
    fn members_share_one_state_when_their_statistics_are_equal() {
        let mut a = default_mixture(3);
        assert!(a.members.len() >= 2 && shared_head(&a.members).is_some());
        learn(&mut a, 0, 30);
        assert!(shared_head(&a.members).is_some());
        // A clone shares until it learns: then it has its own, shared by its members.
        let base = a.clone();
        let mut b = a.clone();
        learn(&mut b, 30, 5);
        let (ha, hb) = (
            shared_head(&a.members).unwrap(),
            shared_head(&b.members).unwrap(),
        );
        assert!(!ha.shares_scale_with(hb) && !ha.same_scale_as(hb));
        assert!(ha.shares_scale_with(shared_head(&base.members).unwrap()));
        learn(&mut a, 40, 3);
        a.merge_share(&b, Some(&base), 0.5).unwrap();
        assert!(shared_head(&a.members).is_some());
        let bytes = postcard::to_allocvec(&a).unwrap();
        let back: Mixture = postcard::from_bytes(&bytes).unwrap();
        assert!(shared_head(&back.members).is_some());
        // Members that saw different examples keep their own statistics.
        let mut members = a.members.clone();
        members[1] = b.members[1].clone();
        let mixed = Mixture::new(members, a.loss, a.rule, 1.0).unwrap();
        assert!(shared_head(&mixed.members).is_none());
    }

    /// [`merge_members`] merges the shared statistics once: every member of the merged mixture
    /// has the bytes of that member merged on its own (the statistics merged once per member,
    /// as before), and all of them share one state — over a base and without one.
    #[test]
    fn members_merged_with_one_scaling_equal_members_merged_on_their_own() {
        let mut base = default_mixture(3);
        learn(&mut base, 0, 30);
        let (mut a, mut b) = (base.clone(), base.clone());
        learn(&mut a, 40, 7);
        learn(&mut b, 30, 5);
        for over in [Some(&base), None] {
            let mut merged = a.clone();
            merged.merge_share(&b, over, 0.4).unwrap();
            let head = shared_head(&merged.members).expect("merged members share");
            assert!(!head.shares_scale_with(shared_head(&a.members).unwrap()));
            for (k, m) in merged.members.iter().enumerate() {
                let mut alone = a.members[k].clone();
                alone
                    .merge_share(&b.members[k], over.map(|g| &g.members[k]), 0.4)
                    .unwrap();
                let bytes = |l: &AnyLearner| postcard::to_allocvec(l).unwrap();
                assert_eq!(bytes(m), bytes(&alone), "member {k}");
            }
        }
    }
}
