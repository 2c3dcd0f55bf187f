//! Checks of a loaded sparse-time learner's state (issue 26, item 4): a model file with a valid
//! checksum can hold a state no training produces — an index beyond `d` in a raw FD row, a
//! matrix of the wrong size, more buffered rows than the sketch holds — which would index out
//! of range at the first prediction or step. Each check here names what is wrong; the column
//! store checks its own consistency when it is read (`columns.rs`).
//!
//! The invariants, for sketch size `m` and dimension `d` (SON paper §4 and Appendices G–H, in
//! the representation of the [module](super) docs):
//! * all: `b ∈ ℝ^m`, the column store has `m` directions, SON's `c`, `C` and `α` are valid
//!   ([`check_params`]);
//! * RP (Alg. 7): `H` and `SSᵀ` are `m × m`;
//! * Oja (Alg. 4, 5): `F` is `m × m`, `active` and `λ` have `m` entries, `c_Oja > 0`;
//! * FD/RFD (Alg. 8–12): `m ≥ 1`, `d ≥ 2m`, `F` is `m × m`, `σ` and `active` have `m`
//!   entries, `k ≤ m`, the buffer of `ℓ` rows (`2m ≤ ℓ ≤ d`: `2m`, or longer through
//!   `SparseFd::with_buffer`) holds `k + r < ℓ` rows (a full one is shrunk at once), `c` has `r`
//!   entries, the Gram matrix and its factor are `ℓ × ℓ`, and every raw row has as many
//!   values as indices, indices `< d`, finite values and `u = Zĝ ∈ ℝ^m` finite; `Σδ ≥ 0` finite.
//! * the sparse-time softmax learner (`K` classes over one curvature, [`SparseSoftmax`]): its
//!   curvature's invariants (FD: with `c ∈ ℝ^{r·K}`, finite), `K` heads in the column store,
//!   `b ∈ ℝ^{K·m}` finite, `α` finite and `> 0`.

use super::columns::LazyColumns;
use super::fd::SparseFdCurvature;
use super::heads::HeadsCurvature;
use super::newton::{check_params, SparseCurvature};
use super::{
    SparseFd, SparseLearner, SparseNewton, SparseOja, SparseOjaCurvature, SparseRp,
    SparseRpCurvature, SparseSoftmax,
};

/// Checks `learner`'s state; the error says what is inconsistent.
pub(crate) fn check(learner: &SparseLearner) -> Result<(), String> {
    match learner {
        SparseLearner::Rp(l) => check_rp(l).map_err(|e| format!("sparse RP-SON: {e}")),
        SparseLearner::Oja(l) => check_oja(l).map_err(|e| format!("sparse Oja-SON: {e}")),
        SparseLearner::Fd(l) => check_fd(l).map_err(|e| format!("sparse FD-SON: {e}")),
    }
}

/// The weights of `learner` at the columns that bound all its weights: the stored columns, the
/// curvature's own ([`SparseCurvature::own_columns`]), `extra` (a wrapper's columns of its own
/// state), the last (an intercept's) and one unstored column per row
/// ([`LazyColumns::unstored_representatives`](super::columns::LazyColumns::unstored_representatives),
/// which says why these bound the rest). `(column, weight)` pairs, increasing; the cost is
/// `O(m²)` per listed column, not `O(m²d)` as [`OnlineLearner::weights`](crate::linear::OnlineLearner::weights).
pub(crate) fn bounding_weights(learner: &SparseLearner, extra: &[u32]) -> Vec<(u32, f64)> {
    match learner {
        SparseLearner::Rp(l) => newton_bounding_weights(l, extra),
        SparseLearner::Oja(l) => newton_bounding_weights(l, extra),
        SparseLearner::Fd(l) => newton_bounding_weights(l, extra),
    }
}

fn newton_bounding_weights<C: SparseCurvature>(
    l: &SparseNewton<C>,
    extra: &[u32],
) -> Vec<(u32, f64)> {
    let store = &l.w.cols;
    let d = store.dim();
    let mut cols = store.stored_columns();
    l.curv.own_columns(&mut cols);
    cols.extend(extra.iter().copied().filter(|&j| (j as usize) < d));
    cols.extend(d.checked_sub(1).map(|j| j as u32));
    cols.sort_unstable();
    cols.dedup();
    let spare = store.unstored_representatives(&cols);
    cols.extend(spare);
    cols.sort_unstable();
    let mut z = vec![0.0; store.size()];
    let mut w: Vec<f64> = cols
        .iter()
        .map(|&j| store.peek(j as usize, &mut z) + crate::linalg::dot(&z, &l.w.b))
        .collect();
    l.curv.add_weights_at(&cols, &mut w);
    cols.into_iter().zip(w).collect()
}

/// `what` has `want` entries.
fn len(what: &str, got: usize, want: usize) -> Result<(), String> {
    if got == want {
        Ok(())
    } else {
        Err(format!("{what} has {got} entries, expected {want}"))
    }
}

/// What every sparse learner shares: parameters, `b ∈ ℝ^m`, `m` directions in the store.
fn check_common<C>(l: &SparseNewton<C>, m: usize, alpha: f64) -> Result<(), String> {
    check_params(&l.params, alpha).map_err(|e| e.to_string())?;
    len("b", l.w.b.len(), m)?;
    store_directions(&l.w.cols, m, 1)
}

/// The column store holds `m` directions and `heads` weight vectors.
fn store_directions(
    cols: &super::columns::LazyColumns,
    m: usize,
    heads: usize,
) -> Result<(), String> {
    if cols.heads() != heads {
        return Err(format!(
            "the column store has {} weight vectors, expected {heads}",
            cols.heads()
        ));
    }
    let store = cols.size();
    if store != m {
        return Err(format!(
            "the column store has {store} directions, the sketch {m}"
        ));
    }
    Ok(())
}

fn check_rp(l: &SparseRp) -> Result<(), String> {
    check_common(l, l.curv.m, l.curv.alpha)?;
    check_rp_curvature(&l.curv)
}

/// RP's own state: `α`, `H` and `SSᵀ` of `m × m`.
pub(super) fn check_rp_curvature(c: &SparseRpCurvature) -> Result<(), String> {
    positive_alpha(c.alpha)?;
    len("H", c.h.len(), c.m * c.m)?;
    len("the Gram matrix", c.gram.len(), c.m * c.m)
}

fn check_oja(l: &SparseOja) -> Result<(), String> {
    check_common(l, l.curv.m, l.curv.alpha)?;
    check_oja_curvature(&l.curv)
}

/// Oja's own state: `α`, `c_Oja`, `F` of `m × m`, `active` and `λ` of `m`, a finite `tr(ZZᵀ)`.
pub(super) fn check_oja_curvature(c: &SparseOjaCurvature) -> Result<(), String> {
    positive_alpha(c.alpha)?;
    if !(c.oja_c.is_finite() && c.oja_c > 0.0) {
        return Err(format!("Oja's constant c is {}", c.oja_c));
    }
    len("F", c.f.len(), c.m * c.m)?;
    len("active", c.active.len(), c.m)?;
    len("lambda", c.lambda.len(), c.m)?;
    finite("tr(ZZᵀ)", c.trk)
}

fn positive_alpha(alpha: f64) -> Result<(), String> {
    if alpha.is_finite() && alpha > 0.0 {
        Ok(())
    } else {
        Err(format!("alpha is {alpha}"))
    }
}

fn check_fd(l: &SparseFd) -> Result<(), String> {
    let c = &l.curv;
    check_common(l, c.m, c.alpha)?;
    check_fd_buffer(c, &l.w.cols, 1)
}

/// The sparse-time softmax learner: `K` heads over one curvature (FD, RP or Oja).
pub(crate) fn check_softmax<C: HeadsCurvature>(l: &SparseSoftmax<C>) -> Result<(), String> {
    let (m, k) = (l.curv.size(), l.heads());
    len("b", l.w.b.len(), k * m)?;
    store_directions(&l.w.cols, m, k)?;
    l.curv.check_heads(&l.w, k)?;
    l.w.b.iter().try_for_each(|&v| finite("a coefficient", v))
}

/// The FD buffer serving `heads` heads: `α`, the buffer's invariants, finite `c`.
pub(super) fn check_fd_heads(
    c: &SparseFdCurvature,
    cols: &LazyColumns,
    heads: usize,
) -> Result<(), String> {
    positive_alpha(c.alpha)?;
    check_fd_buffer(c, cols, heads)?;
    c.c.iter().try_for_each(|&v| finite("a coefficient", v))
}

/// The FD buffer's invariants (module docs) over the column store `cols` of dimension `d`,
/// `heads` weight vectors.
fn check_fd_buffer(c: &SparseFdCurvature, cols: &LazyColumns, heads: usize) -> Result<(), String> {
    let (m, d) = (c.m, cols.dim());
    if m == 0 || d < 2 * m {
        return Err(format!(
            "sketch size {m} for dimension {d} (needs 1 ≤ m, 2m ≤ d)"
        ));
    }
    len("F", c.f.len(), m * m)?;
    len("sigma", c.sigma.len(), m)?;
    len("active", c.active.len(), m)?;
    // The buffer length ℓ (2m, or longer: `SparseFd::with_buffer`) is the side of the Gram matrix.
    let cap = c.cap();
    if cap * cap != c.gram.len() || cap < 2 * m || cap > d {
        return Err(format!(
            "a Gram matrix of {} entries for sketch size {m} (needs ℓ² entries, 2m ≤ ℓ ≤ d)",
            c.gram.len()
        ));
    }
    len("its factor", c.chol.len(), cap * cap)?;
    len("c", c.c.len(), c.g.len() * heads)?;
    if c.k > m || c.k + c.g.len() >= cap {
        return Err(format!(
            "{} + {} buffered rows for sketch size {m} (at most {} in all)",
            c.k,
            c.g.len(),
            cap - 1
        ));
    }
    if !(c.shrink_total.is_finite() && c.shrink_total >= 0.0) {
        return Err(format!("the total shrinkage is {}", c.shrink_total));
    }
    finite("tr(ZZᵀ)", c.trk)?;
    let mut stored = cols.stored_columns();
    stored.sort_unstable();
    for (q, row) in c.g.iter().enumerate() {
        check_row(&row.indices, &row.values, &row.u, m, d)
            .and_then(|()| check_row_columns(&row.indices, &row.values, &stored))
            .map_err(|e| format!("buffered row {q}: {e}"))?;
    }
    Ok(())
}

/// A raw FD row's non-zeros are at columns the store holds (`stored`, increasing). Training
/// buffers `ĝ = s·x` only where `s·x_j ≠ 0`, and gathering `x` for the score brought each such
/// column up to date first, so it is stored; a file buffering a non-zero on a column never
/// touched was not written by training (the sketch would hold a direction the weights never
/// saw). An explicit zero value adds nothing to the sketch, so it is accepted wherever it is.
fn check_row_columns(indices: &[u32], values: &[f64], stored: &[u32]) -> Result<(), String> {
    let untouched = |(&j, &v): (&u32, &f64)| v != 0.0 && stored.binary_search(&j).is_err();
    match indices.iter().zip(values).find(|&e| untouched(e)) {
        Some((j, v)) => Err(format!(
            "column {j} holds {v} but the column store never touched that column (training \
             buffers only columns it has learned)"
        )),
        None => Ok(()),
    }
}

/// A raw FD row `ĝ` (sparse) and `u = Zĝ`.
fn check_row(indices: &[u32], values: &[f64], u: &[f64], m: usize, d: usize) -> Result<(), String> {
    len("values", values.len(), indices.len())?;
    len("u", u.len(), m)?;
    if let Some(j) = indices.iter().find(|&&j| j as usize >= d) {
        return Err(format!("index {j} is not below the dimension {d}"));
    }
    values
        .iter()
        .chain(u)
        .try_for_each(|&v| finite("a value", v))
}

fn finite(what: &str, v: f64) -> Result<(), String> {
    if v.is_finite() {
        Ok(())
    } else {
        Err(format!("{what} is {v}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linear::{NewtonParams, OnlineLearner};
    use crate::Row;

    fn trained_fd() -> SparseFd {
        trained(SparseFd::rfd(16, 3, 1.0, 1, NewtonParams::default()).unwrap())
    }

    fn trained(mut fd: SparseFd) -> SparseFd {
        for i in 0..4u32 {
            let x = [i, 5 + i % 3, 15];
            fd.learn(
                Row::Sparse {
                    indices: &x,
                    values: &[1.0, 0.5, -1.0],
                },
                1.0,
                1.0,
            )
            .unwrap();
        }
        fd
    }

    #[test]
    fn trained_learners_pass() {
        let fd = trained_fd();
        assert!(!fd.curv.g.is_empty(), "the test needs buffered rows");
        check(&SparseLearner::Fd(fd)).unwrap();
        let oja = SparseOja::new(16, 3, 1.0, 1.0, 0, NewtonParams::default()).unwrap();
        check(&SparseLearner::Oja(oja)).unwrap();
        let rp = SparseRp::new(16, 3, 1.0, 0, NewtonParams::default()).unwrap();
        check(&SparseLearner::Rp(rp)).unwrap();
        // A longer buffer (ℓ = 13 > 2m) is a valid state, with more buffered rows than 2m.
        let long = SparseFd::rfd(16, 3, 1.0, 1, NewtonParams::default()).unwrap();
        let mut long = trained(long.with_buffer(13).unwrap());
        long = trained(long);
        assert!(
            long.curv.k + long.curv.g.len() >= 6,
            "the test needs > 2m rows"
        );
        check(&SparseLearner::Fd(long.clone())).unwrap();
        long.curv.chol.pop();
        assert!(
            check(&SparseLearner::Fd(long)).is_err(),
            "a factor of the wrong size"
        );
    }

    #[test]
    fn each_broken_invariant_is_named() {
        type Break = fn(&mut SparseFd);
        let cases: [(&str, Break); 7] = [
            ("index 99", |l| l.curv.g[0].indices[0] = 99),
            // Column 4 is never touched by `trained` (its rows hold 0–3, 5–7 and 15).
            ("column 4 holds", |l| l.curv.g[0].indices[0] = 4),
            ("values has", |l| {
                l.curv.g[0].values.pop().map(drop).unwrap()
            }),
            ("buffered rows", |l| l.curv.k = 7),
            ("F has", |l| l.curv.f.push(0.0)),
            ("b has", |l| l.w.b.clear()),
            ("a value is inf", |l| l.curv.g[0].u[0] = f64::INFINITY),
        ];
        for (want, breaks) in cases {
            let mut fd = trained_fd();
            breaks(&mut fd);
            let err = check(&SparseLearner::Fd(fd)).unwrap_err();
            assert!(err.contains(want), "{err} (expected {want})");
        }
    }

    /// Explicit zeros in the examples, at a column nothing else touches: training does not
    /// buffer the zero, and the state passes; a buffered row holding an explicit zero on a
    /// column never touched (12) adds nothing to the sketch and passes too; a non-zero there
    /// is refused.
    #[test]
    fn explicit_zeros_on_untouched_columns_pass() {
        let mut fd = SparseFd::rfd(16, 3, 1.0, 1, NewtonParams::default()).unwrap();
        for i in 0..4u32 {
            let x = [i, 4, 5 + i % 3, 15];
            let row = Row::Sparse {
                indices: &x,
                values: &[1.0, 0.0, 0.5, -1.0],
            };
            fd.learn(row, 1.0, 1.0).unwrap();
        }
        assert!(!fd.curv.g.is_empty(), "the test needs buffered rows");
        let buffered = fd.curv.g.iter().flat_map(|r| &r.indices);
        assert!(buffered.clone().all(|&j| j != 4));
        check(&SparseLearner::Fd(fd.clone())).unwrap();
        assert!(!fd.w.cols.stored_columns().contains(&12));
        let row = &mut fd.curv.g[0];
        row.indices.push(12);
        row.values.push(0.0);
        check(&SparseLearner::Fd(fd.clone())).unwrap();
        fd.curv.g[0].values.last_mut().map(|v| *v = 0.25).unwrap();
        let err = check(&SparseLearner::Fd(fd)).unwrap_err();
        assert!(err.contains("column 12 holds 0.25"), "{err}");
    }

    fn trained_softmax() -> SparseSoftmax {
        use crate::linear::multiclass::{MulticlassLearner, SoftmaxParams};
        let mut s = SparseSoftmax::rfd(3, 16, 3, 1.0, 1, SoftmaxParams::default()).unwrap();
        for i in 0..4u32 {
            let x = [i, 5 + i % 3, 15];
            let row = Row::Sparse {
                indices: &x,
                values: &[1.0, 0.5, -1.0],
            };
            s.learn(row, i as usize % 3, 1.0).unwrap();
        }
        s
    }

    #[test]
    fn each_broken_softmax_invariant_is_named() {
        let s = trained_softmax();
        assert!(!s.curv.g.is_empty(), "the test needs buffered rows");
        s.check_loaded().unwrap();
        type Break = fn(&mut SparseSoftmax);
        let cases: [(&str, Break); 7] = [
            ("index 99", |l| l.curv.g[0].indices[0] = 99),
            ("column 4 holds", |l| l.curv.g[0].indices[0] = 4),
            ("c has", |l| l.curv.c.truncate(1)),
            ("b has", |l| l.w.b.pop().map(drop).unwrap()),
            ("a coefficient is NaN", |l| l.w.b[0] = f64::NAN),
            ("buffered rows", |l| l.curv.k = 7),
            ("alpha is", |l| l.curv.alpha = -1.0),
        ];
        for (want, breaks) in cases {
            let mut s = trained_softmax();
            breaks(&mut s);
            let err = s.check_loaded().unwrap_err();
            assert!(err.contains(want), "{err} (expected {want})");
        }
    }

    /// Through the load path: the model file of a learner with a hostile row index is refused
    /// with a message naming it (before, the first prediction indexed out of range).
    #[test]
    fn a_model_file_with_a_bad_index_is_refused() {
        use crate::linear::{AnyLearner, LearnerConfig, LinearModel};
        let mut fd = trained_fd();
        fd.curv.g[0].indices[0] = 99;
        let model = LinearModel::new(
            LearnerConfig::default(),
            AnyLearner::Sparse(SparseLearner::Fd(fd)),
        );
        let err = LinearModel::from_bytes(&model.to_bytes().unwrap(), "m.model").unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("invalid model") && msg.contains("index 99"),
            "{msg}"
        );
    }
}
