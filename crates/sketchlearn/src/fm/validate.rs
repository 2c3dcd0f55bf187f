//! Checks of a loaded FM model (issue 26, item 4): a model file with a valid checksum can hold a
//! state no training produces — a factored sketch whose dense rows are shorter than its
//! dimension says, an inverted-index entry pointing past its list, a NaN in `Θ` — which would
//! index out of range or predict nonsense at the first use. Each check here names what is wrong;
//! [`FmModel::load`](super::FmModel::load) reports it as `invalid model: …`.
//!
//! The invariants, for `d` features (`n = d + 1` coordinates of `â = [x; 1]`):
//! * the configuration passes [`FmConfig::check`](super::FmConfig::check) (the command line's
//!   check) and names the learner's algorithm; each learner's own hyper-parameters pass the
//!   checks of its constructor (`check_params`), so `m` and `k` are at most
//!   [`MAX_FM_SIZE`](super::MAX_FM_SIZE);
//! * SFTRL (Alg. 4/5): both GFD sides are sketches of dimension `n`, size `m`, the learner's
//!   buffer; the factored side `B = C·Q` (see [`FactoredFd`]) has `C` of
//!   `capacity × (capacity + 4L)` entries, the Gram matrix `capacity²`, `rows < capacity` signs
//!   `±1` (`+1` unless signed), `r_d < capacity` dense rows of `d` entries, `r_s < 4L` sparse
//!   rows in CSR form with indices `< d`, `C = I` only when `C` is square, and the inverted index
//!   (`sp_head`, `sp_next`, `sp_row`) is the one the rows build;
//! * split SFTRL: the first-order sums have `d` entries (and their AdaGrad squares `d` or none),
//!   the pairwise sketch is a signed factored side of dimension `d`;
//! * FTRL/OGD: `Θ` is `n × n`, `Σ∇f` present exactly for constrained FTRL, of the same size;
//! * OCG: `M` absent or `n × n`, `atom_u` `n` entries per atom weight, the power-iteration vector
//!   `n` entries, the gradient sum's entries `(i ≤ j < n)` each listed once in its position map,
//!   `scale > 0`, fewer pending examples than the block;
//! * FM-SGD: `w ∈ ℝ^d`, factors `d × k`;
//! * the learner is centred at the running label mean ([`LabelCentred`](super::LabelCentred))
//!   exactly when the configuration says so, one level deep, its mean and weight finite;
//! * every number of the state finite, and the ratings encoder's side features within their
//!   blocks.

use super::factored::{FactoredFd, NONE};
use super::sftrl::Gfd;
use super::{
    AnyFm, ConvexKind, DenseConvexFm, FirstOrderStep, FmAlgorithm, FmModel, FmSgd, Ocg,
    RunningMean, Sftrl, SftrlSplit,
};
use crate::sketch::FdVariant;

/// Checks `model`; the error says what is inconsistent.
pub(crate) fn check(model: &FmModel) -> Result<(), String> {
    model
        .config
        .check()
        .map_err(|e| format!("configuration: {e}"))?;
    let learner = check_centring(model)?;
    check_algorithm(model.config.algorithm, learner)?;
    match learner {
        AnyFm::Sftrl(l) => check_sftrl(l).map_err(|e| format!("SFTRL: {e}")),
        AnyFm::SftrlSplit(l) => check_split(l).map_err(|e| format!("split SFTRL: {e}")),
        AnyFm::Dense(l) => check_dense(l).map_err(|e| format!("dense FM: {e}")),
        AnyFm::Ocg(l) => check_ocg(l).map_err(|e| format!("OCG: {e}")),
        AnyFm::FmSgd(l) => check_fm_sgd(l).map_err(|e| format!("FM-SGD: {e}")),
        AnyFm::LabelCentred(_) => unreachable!("check_centring returns the inner learner"),
    }?;
    if let Some(side) = model.encoder.as_ref().and_then(|e| e.side()) {
        for (what, block) in [("user", &side.users), ("item", &side.items)] {
            let n = block.len();
            if block.features.values().flatten().any(|&j| j as usize >= n) {
                return Err(format!(
                    "a {what} side feature is not below the block's {n} features"
                ));
            }
        }
    }
    Ok(())
}

/// The learner is centred at the running label mean exactly when the configuration says so
/// (no intercept, squared loss), around a learner that is not itself centred, with a finite mean
/// and a finite weight `≥ 0`; returns the learner under the centring.
fn check_centring(model: &FmModel) -> Result<&AnyFm, String> {
    let centred = model.config.centres_at_label_mean();
    match &model.learner {
        AnyFm::LabelCentred(c) if centred => {
            let RunningMean { weight, mean } = c.labels;
            if !(weight.is_finite() && weight >= 0.0 && mean.is_finite()) {
                return Err(format!(
                    "the running label mean {mean} (weight {weight}) is not finite, or its \
                     weight is negative"
                ));
            }
            if matches!(c.inner, AnyFm::LabelCentred(_)) {
                return Err("a label-centred learner inside another".into());
            }
            Ok(&c.inner)
        }
        AnyFm::LabelCentred(_) => {
            Err("the learner is centred at the label mean, the configuration is not".into())
        }
        _ if centred => {
            Err("the configuration centres at the label mean, the learner is not centred".into())
        }
        l => Ok(l),
    }
}

/// The configuration names the learner the file holds.
fn check_algorithm(algorithm: FmAlgorithm, learner: &AnyFm) -> Result<(), String> {
    let agrees = match learner {
        AnyFm::Sftrl(l) => {
            (algorithm, l.variant) == (FmAlgorithm::Sftrl, FdVariant::PerRow)
                || (algorithm, l.variant) == (FmAlgorithm::SftrlFast, FdVariant::Doubling)
        }
        AnyFm::SftrlSplit(_) => algorithm == FmAlgorithm::SftrlSplit,
        AnyFm::Dense(l) => match l.kind {
            ConvexKind::Ftrl => algorithm == FmAlgorithm::Ftrl,
            ConvexKind::Ogd(_) => algorithm == FmAlgorithm::Ogd,
        },
        AnyFm::Ocg(_) => algorithm == FmAlgorithm::Ocg,
        AnyFm::FmSgd(_) => algorithm == FmAlgorithm::FmSgd,
        AnyFm::LabelCentred(_) => false,
    };
    if agrees {
        Ok(())
    } else {
        Err(format!(
            "the configuration names {algorithm}, the file holds another learner"
        ))
    }
}

/// `what` has `want` entries (`None`: a size that overflows).
fn len(what: &str, got: usize, want: Option<usize>) -> Result<(), String> {
    match want {
        Some(w) if w == got => Ok(()),
        Some(w) => Err(format!("{what} has {got} entries, expected {w}")),
        None => Err(format!("the size of {what} overflows")),
    }
}

fn finite(what: &str, x: f64) -> Result<(), String> {
    if x.is_finite() {
        Ok(())
    } else {
        Err(format!("{what} is {x}"))
    }
}

fn all_finite(what: &str, xs: &[f64]) -> Result<(), String> {
    match xs.iter().position(|x| !x.is_finite()) {
        None => Ok(()),
        Some(k) => Err(format!("{what}[{k}] is {}", xs[k])),
    }
}

fn nonnegative(what: &str, x: f64) -> Result<(), String> {
    if x.is_finite() && x >= 0.0 {
        Ok(())
    } else {
        Err(format!("{what} is {x}"))
    }
}

/// `n = d + 1` coordinates, indexed by `u32`.
fn coordinates(dim: usize) -> Result<usize, String> {
    dim.checked_add(1)
        .filter(|&n| n <= u32::MAX as usize)
        .ok_or_else(|| format!("dimension {dim} is too large"))
}

fn check_sftrl(l: &Sftrl) -> Result<(), String> {
    Sftrl::check_params(l.m, l.variant, l.eta).map_err(|e| e.to_string())?;
    let n = coordinates(l.dim)?;
    finite("the intercept", l.intercept)?;
    match &l.gfd {
        Gfd::Factored(g) => {
            if l.backend != super::SftrlBackend::Factored {
                return Err("a factored sketch in a learner of the reference backend".into());
            }
            check_factored(&g.positive, n, l.m, l.variant, false)
                .map_err(|e| format!("positive side: {e}"))?;
            check_factored(&g.negative, n, l.m, l.variant, false)
                .map_err(|e| format!("negative side: {e}"))
        }
        Gfd::Reference(g) => {
            if l.backend != super::SftrlBackend::Reference {
                return Err("a reference sketch in a learner of the factored backend".into());
            }
            g.positive()
                .check_state(n, l.m, l.variant)
                .map_err(|e| format!("positive side: {e}"))?;
            g.negative()
                .check_state(n, l.m, l.variant)
                .map_err(|e| format!("negative side: {e}"))
        }
    }
}

fn check_split(l: &SftrlSplit) -> Result<(), String> {
    let variant = l.pair.variant;
    SftrlSplit::check_params(l.m, variant, l.eta, l.eta_pair, l.step).map_err(|e| e.to_string())?;
    coordinates(l.dim)?;
    finite("the intercept", l.intercept)?;
    finite("the sum of q", l.sum_q)?;
    nonnegative("the sum of q²", l.sq_q)?;
    let d = Some(l.dim);
    len("the linear sums", l.linear.len(), d)?;
    len("the diagonal sums", l.diagonal.len(), d)?;
    let squares = match l.step {
        FirstOrderStep::AdaGrad { .. } => d,
        FirstOrderStep::Constant => Some(0),
    };
    len("the linear squares", l.linear_sq.len(), squares)?;
    len("the diagonal squares", l.diagonal_sq.len(), squares)?;
    for (what, xs) in [
        ("linear", &l.linear),
        ("diagonal", &l.diagonal),
        ("linear_sq", &l.linear_sq),
        ("diagonal_sq", &l.diagonal_sq),
    ] {
        all_finite(what, xs)?;
    }
    if let Some(x) = l.linear_sq.iter().chain(&l.diagonal_sq).find(|&&x| x < 0.0) {
        return Err(format!("a sum of squares is {x}"));
    }
    check_factored(&l.pair, l.dim, l.m, variant, true).map_err(|e| format!("pairwise sketch: {e}"))
}

/// One factored FD side (see the module documentation for the invariants).
fn check_factored(
    f: &FactoredFd,
    dim: usize,
    m: usize,
    variant: FdVariant,
    signed: bool,
) -> Result<(), String> {
    if (f.dim, f.m, f.variant, f.signed) != (dim, m, variant, signed) {
        return Err(format!(
            "dimension {}, size {}, {:?}, signed {}; expected {dim}, {m}, {variant:?}, {signed}",
            f.dim, f.m, f.variant, f.signed
        ));
    }
    let cap = variant.buffer_rows(m);
    let l4 = f.sparse_target.checked_mul(4);
    if f.sparse_target == 0 || Some(f.cstride) != l4.and_then(|l4| l4.checked_add(cap)) {
        return Err(format!(
            "a coefficient stride of {} for {cap} buffer rows and a sparse target of {}",
            f.cstride, f.sparse_target
        ));
    }
    len("C", f.coef.len(), cap.checked_mul(f.cstride))?;
    len("the Gram matrix", f.gram.len(), cap.checked_mul(cap))?;
    len("the signs", f.signs.len(), Some(cap))?;
    if f.rows >= cap || f.r_d >= cap {
        return Err(format!(
            "{} rows and {} dense rows in a buffer of {cap}",
            f.rows, f.r_d
        ));
    }
    if let Some(s) = f
        .signs
        .iter()
        .find(|&&s| s != 1.0 && !(signed && s == -1.0))
    {
        return Err(format!("a row sign is {s}"));
    }
    len("the dense rows", f.dense.len(), dim.checked_mul(f.r_d))?;
    check_sparse_rows(f)?;
    let r_s = f.sp_start.len() - 1;
    if f.c_identity && f.rows != f.r_d + r_s {
        return Err(format!(
            "C is marked the identity with {} rows and {} columns",
            f.rows,
            f.r_d + r_s
        ));
    }
    for (what, xs) in [
        ("a dense row", &f.dense),
        ("a sparse row", &f.sp_val),
        ("C", &f.coef),
        ("the Gram matrix", &f.gram),
    ] {
        all_finite(what, xs)?;
    }
    nonnegative("the total shrinkage", f.shrink_total)?;
    nonnegative("the log amplification", f.log_amplification)
}

/// The sparse rows `S` (CSR) and their inverted index.
fn check_sparse_rows(f: &FactoredFd) -> Result<(), String> {
    let nnz = f.sp_idx.len();
    if f.sp_start.first() != Some(&0)
        || f.sp_start.last() != Some(&nnz)
        || f.sp_start.windows(2).any(|w| w[0] > w[1])
    {
        return Err(format!(
            "the sparse rows' starts are not 0 ≤ … ≤ {nnz} in order"
        ));
    }
    let r_s = f.sp_start.len() - 1;
    if r_s >= 4 * f.sparse_target {
        return Err(format!(
            "{r_s} sparse rows (at most {} before they are materialised)",
            4 * f.sparse_target - 1
        ));
    }
    len("the sparse values", f.sp_val.len(), Some(nnz))?;
    if let Some(j) = f.sp_idx.iter().find(|&&j| j as usize >= f.dim) {
        return Err(format!(
            "sparse index {j} is not below the dimension {}",
            f.dim
        ));
    }
    len("the index heads", f.sp_head.len(), Some(f.dim))?;
    // The inverted index the rows build (entries in order, each the head of its coordinate).
    let mut head = vec![NONE; f.dim];
    let (mut next, mut row) = (Vec::with_capacity(nnz), Vec::with_capacity(nnz));
    for s in 0..r_s {
        for e in f.sp_start[s]..f.sp_start[s + 1] {
            let j = f.sp_idx[e] as usize;
            next.push(head[j]);
            row.push(s as u32);
            head[j] = e as u32;
        }
    }
    if f.sp_head != head || f.sp_next != next || f.sp_row != row {
        return Err("the inverted index of the sparse rows is not the one they build".into());
    }
    Ok(())
}

fn check_dense(l: &DenseConvexFm) -> Result<(), String> {
    DenseConvexFm::check_params(l.eta, l.ball).map_err(|e| e.to_string())?;
    let n = coordinates(l.dim)?;
    finite("the intercept", l.intercept)?;
    len("Θ", l.theta.len(), n.checked_mul(n))?;
    all_finite("Θ", &l.theta)?;
    let constrained_ftrl = l.kind == ConvexKind::Ftrl && l.ball.is_some();
    match &l.grad_sum {
        Some(g) if constrained_ftrl => {
            len("the gradient sum", g.len(), n.checked_mul(n))?;
            all_finite("the gradient sum", g)
        }
        None if !constrained_ftrl => Ok(()),
        _ => Err("a gradient sum is kept by constrained FTRL, and only by it".into()),
    }
}

fn check_ocg(l: &Ocg) -> Result<(), String> {
    Ocg::check_params(&l.params).map_err(|e| e.to_string())?;
    let n = coordinates(l.dim)?;
    if !(l.scale.is_finite() && l.scale > 0.0) {
        return Err(format!("the scale is {}", l.scale));
    }
    nonnegative("the dense part's weight", l.dense_weight)?;
    if let Some(m) = &l.dense {
        len("the dense part", m.len(), n.checked_mul(n))?;
        all_finite("the dense part", m)?;
    }
    len("the atoms", l.atom_u.len(), l.atom_c.len().checked_mul(n))?;
    len("the power-iteration vector", l.v.len(), Some(n))?;
    for (what, xs) in [
        ("an atom", &l.atom_u),
        ("an atom weight", &l.atom_c),
        ("v", &l.v),
    ] {
        all_finite(what, xs)?;
    }
    if l.pending >= l.params.block {
        return Err(format!(
            "{} examples pending in blocks of {}",
            l.pending, l.params.block
        ));
    }
    let g = &l.grad;
    if g.n != n {
        return Err(format!("a gradient sum of side {}, expected {n}", g.n));
    }
    len("the gradient rows", g.i.len(), Some(g.v.len()))?;
    len("the gradient columns", g.j.len(), Some(g.v.len()))?;
    len("the gradient position map", g.pos.len(), Some(g.v.len()))?;
    all_finite("the gradient sum", &g.v)?;
    for (p, (&i, &j)) in g.i.iter().zip(&g.j).enumerate() {
        if i > j || j as usize >= n {
            return Err(format!("gradient entry ({i}, {j}) is not i ≤ j < {n}"));
        }
        if g.pos.get(&(i as u64 * n as u64 + j as u64)) != Some(&(p as u32)) {
            return Err(format!(
                "gradient entry ({i}, {j}) is not in the position map"
            ));
        }
    }
    Ok(())
}

fn check_fm_sgd(l: &FmSgd) -> Result<(), String> {
    FmSgd::check_params(&l.params).map_err(|e| e.to_string())?;
    finite("the intercept", l.w0)?;
    len("w", l.w.len(), Some(l.dim))?;
    len("the factors", l.v.len(), l.dim.checked_mul(l.params.rank))?;
    all_finite("w", &l.w)?;
    all_finite("the factors", &l.v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fm::{FmConfig, SftrlBackend};
    use crate::linear::OnlineLearner;
    use crate::Row;

    /// A model of `algorithm` trained on a few one-hot pairs of 12 features (sparse rows held in
    /// the factored sketches, atoms in OCG).
    fn trained(algorithm: FmAlgorithm, edit: impl Fn(&mut FmConfig)) -> FmModel {
        let mut config = FmConfig::new(algorithm);
        config.size = 3;
        edit(&mut config);
        let mut model = FmModel::new(config, config.build(12).unwrap());
        for t in 0..60u32 {
            let x = [t % 5, 5 + (t * 3) % 7];
            let row = Row::Sparse {
                indices: &x,
                values: &[1.0, 1.0],
            };
            model
                .learner
                .learn(row, f64::from(t % 4) * 2.0 - 3.0, 1.0)
                .unwrap();
        }
        model
    }

    fn every_learner() -> Vec<FmModel> {
        let mut out: Vec<FmModel> = FmAlgorithm::ALL
            .iter()
            .map(|&a| trained(a, |_| ()))
            .collect();
        out.push(trained(FmAlgorithm::Sftrl, |c| {
            c.backend = SftrlBackend::Reference
        }));
        out.push(trained(FmAlgorithm::Ftrl, |c| c.radius = 5.0));
        out.push(trained(FmAlgorithm::SftrlSplit, |c| {
            c.first_order = FirstOrderStep::Constant
        }));
        out
    }

    #[test]
    fn trained_models_pass() {
        for model in every_learner() {
            check(&model).unwrap_or_else(|e| panic!("{}: {e}", model.config.describe()));
        }
    }

    /// The learner under the default centring at the label mean.
    fn inner(l: &mut AnyFm) -> &mut AnyFm {
        match l {
            AnyFm::LabelCentred(c) => &mut c.inner,
            l => l,
        }
    }

    /// The centring is checked: it agrees with the configuration, is one level deep, and its
    /// mean and weight are finite.
    #[test]
    fn the_label_mean_centring_is_checked() {
        let model = trained(FmAlgorithm::SftrlSplit, |_| ());
        let AnyFm::LabelCentred(c) = &model.learner else {
            panic!("the squared-loss default is centred at the label mean")
        };
        assert_eq!(c.labels.weight, 60.0);
        let mut fixed = model.clone();
        fixed.config.intercept = Some(0.0);
        let err = check(&fixed).unwrap_err();
        assert!(err.contains("the configuration is not"), "{err}");
        let mut bare = model.clone();
        bare.learner = c.inner.clone();
        let err = check(&bare).unwrap_err();
        assert!(err.contains("the learner is not centred"), "{err}");
        let mut nested = model.clone();
        nested.learner = AnyFm::LabelCentred(Box::new(crate::fm::LabelCentred::new(
            model.learner.clone(),
        )));
        let err = check(&nested).unwrap_err();
        assert!(err.contains("inside another"), "{err}");
        for (weight, mean) in [(f64::NAN, 1.0), (-1.0, 1.0), (2.0, f64::INFINITY)] {
            let mut broken = model.clone();
            if let AnyFm::LabelCentred(c) = &mut broken.learner {
                c.labels = RunningMean { weight, mean };
            }
            let err = check(&broken).unwrap_err();
            assert!(err.contains("running label mean"), "{err}");
        }
    }

    fn sftrl_side(model: &mut FmModel) -> &mut FactoredFd {
        match inner(&mut model.learner) {
            AnyFm::Sftrl(l) => match &mut l.gfd {
                Gfd::Factored(g) => &mut g.positive,
                Gfd::Reference(_) => unreachable!(),
            },
            _ => unreachable!(),
        }
    }

    #[test]
    fn each_broken_invariant_is_named() {
        type Break = fn(&mut FmModel);
        let cases: [(&str, Break); 9] = [
            ("dense rows has", |m| {
                sftrl_side(m).dense.truncate(3);
            }),
            ("sparse index 99", |m| sftrl_side(m).sp_idx[0] = 99),
            ("inverted index", |m| sftrl_side(m).sp_next[0] = 0),
            ("C has", |m| sftrl_side(m).coef.pop().map(drop).unwrap()),
            ("rows", |m| sftrl_side(m).rows = 6),
            ("a row sign is -1", |m| sftrl_side(m).signs[0] = -1.0),
            ("Gram matrix[0] is NaN", |m| {
                sftrl_side(m).gram[0] = f64::NAN
            }),
            ("configuration: invalid parameter: eta", |m| {
                m.config.eta = -1.0
            }),
            ("names fm-sgd", |m| m.config.algorithm = FmAlgorithm::FmSgd),
        ];
        for (want, breaks) in cases {
            let mut model = trained(FmAlgorithm::SftrlFast, |_| ());
            assert!(sftrl_side(&mut model).r_d > 0 && !sftrl_side(&mut model).sp_idx.is_empty());
            breaks(&mut model);
            let err = check(&model).unwrap_err();
            assert!(err.contains(want), "{err} (expected {want})");
        }
    }

    /// Breaks of the other learners: one size and one number each.
    #[test]
    fn the_other_learners_are_checked() {
        type Break = fn(&mut AnyFm);
        let cases: Vec<(FmAlgorithm, &str, Break)> = vec![
            (FmAlgorithm::SftrlSplit, "linear sums", |l| {
                if let AnyFm::SftrlSplit(l) = l {
                    l.linear.pop();
                }
            }),
            (FmAlgorithm::SftrlSplit, "sparse index", |l| {
                if let AnyFm::SftrlSplit(l) = l {
                    l.pair.sp_idx[0] = 12;
                }
            }),
            (FmAlgorithm::Ftrl, "Θ has", |l| {
                if let AnyFm::Dense(l) = l {
                    l.theta.pop();
                }
            }),
            (FmAlgorithm::Ogd, "Θ[2] is inf", |l| {
                if let AnyFm::Dense(l) = l {
                    l.theta[2] = f64::INFINITY;
                }
            }),
            (FmAlgorithm::Ocg, "position map", |l| {
                if let AnyFm::Ocg(l) = l {
                    l.grad.j[0] = l.grad.j[0].max(1) - 1;
                    l.grad.i[0] = 0;
                    l.grad.j[0] = 12;
                }
            }),
            (FmAlgorithm::Ocg, "atoms has", |l| {
                if let AnyFm::Ocg(l) = l {
                    l.atom_c.push(1.0);
                }
            }),
            (FmAlgorithm::FmSgd, "factors has", |l| {
                if let AnyFm::FmSgd(l) = l {
                    l.v.pop();
                }
            }),
            (FmAlgorithm::FmSgd, "FM rank k must be at most", |l| {
                if let AnyFm::FmSgd(l) = l {
                    l.params.rank = usize::MAX;
                }
            }),
        ];
        for (algorithm, want, breaks) in cases {
            let mut model = trained(algorithm, |_| ());
            breaks(inner(&mut model.learner));
            let err = check(&model).unwrap_err();
            assert!(err.contains(want), "{algorithm}: {err} (expected {want})");
        }
    }

    /// Through the load path: the crafted file that indexed out of range in the factored sketch
    /// (`q_times`, dense rows shorter than `d × r_d`) is refused with a message naming it.
    #[test]
    fn a_model_file_with_short_dense_rows_is_refused() {
        let mut model = trained(FmAlgorithm::SftrlFast, |_| ());
        sftrl_side(&mut model).dense.truncate(3);
        let image = crate::model::to_bytes(super::super::FM_MODEL_KIND, &model).unwrap();
        let msg = FmModel::from_bytes(&image, "m.model")
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("m.model: invalid model: SFTRL: positive side: the dense rows has 3"),
            "{msg}"
        );
    }
}
