//! Reading linear-model files of format version 5, which had no classes and no input
//! description (they load as `−1/+1` models: [`LinearModelV5`]), and of format version 4, whose configuration had one 12-variant
//! curvature enum mixing the sketch and the representation (`oja-sparse`, …) and no
//! `representation` field. Their payload is decoded with the private types below (the same
//! postcard layout as then) and converted: `oja-sparse`, `rp-sparse`, `fd-sparse` and
//! `rfd-sparse` become `oja`, `rp`, `fd-fast`, `rfd-fast` with [`Representation::Sparse`]
//! (the sparse FD learners always had the doubling buffer), the others keep their curvature
//! with `Dense` where the choice applies (the learner in the file is dense) and `Auto` where it
//! does not (OGD, AdaGrad, identity, full). The learner state itself is unchanged since
//! version 4.

use super::{Algorithm, AnyLearner, CurvatureKind, LearnerConfig, LinearModel, Representation};
use crate::loss::Loss;
use serde::Deserialize;

/// `CurvatureKind` as of format version 4 (variant order is the postcard encoding).
#[derive(Clone, Copy, Debug, Deserialize)]
enum CurvatureV4 {
    Identity,
    Full,
    Fd,
    FdFast,
    Rfd,
    RfdFast,
    Rp,
    Oja,
    OjaSparse,
    RpSparse,
    FdSparse,
    RfdSparse,
}

/// `LearnerConfig` as of format version 4 (field order is the postcard encoding).
#[derive(Clone, Debug, Deserialize)]
struct ConfigV4 {
    algorithm: Algorithm,
    curvature: CurvatureV4,
    size: usize,
    loss: Loss,
    alpha: f64,
    alpha0: f64,
    c: f64,
    clip: f64,
    diag: bool,
    diag_d0: f64,
    learning_rate: f64,
    seed: u64,
    oja_c: f64,
    bias: bool,
    bias_value: f64,
}

/// `LinearModel` as of format version 4.
#[derive(Deserialize)]
pub(super) struct LinearModelV4 {
    config: ConfigV4,
    learner: AnyLearner,
    examples_seen: u64,
}

impl From<ConfigV4> for LearnerConfig {
    fn from(c: ConfigV4) -> Self {
        use CurvatureV4 as V;
        let (curvature, sparse) = match c.curvature {
            V::Identity => (CurvatureKind::Identity, false),
            V::Full => (CurvatureKind::Full, false),
            V::Fd => (CurvatureKind::Fd, false),
            V::FdFast => (CurvatureKind::FdFast, false),
            V::Rfd => (CurvatureKind::Rfd, false),
            V::RfdFast => (CurvatureKind::RfdFast, false),
            V::Rp => (CurvatureKind::Rp, false),
            V::Oja => (CurvatureKind::Oja, false),
            V::OjaSparse => (CurvatureKind::Oja, true),
            V::RpSparse => (CurvatureKind::Rp, true),
            V::FdSparse => (CurvatureKind::FdFast, true),
            V::RfdSparse => (CurvatureKind::RfdFast, true),
        };
        let choice_applies = c.algorithm.has_newton() && curvature.has_sparse_learner();
        LearnerConfig {
            algorithm: c.algorithm,
            curvature,
            size: c.size,
            loss: c.loss,
            alpha: c.alpha,
            alpha0: c.alpha0,
            c: c.c,
            clip: c.clip,
            diag: c.diag,
            diag_d0: c.diag_d0,
            learning_rate: c.learning_rate,
            seed: c.seed,
            oja_c: c.oja_c,
            bias: c.bias,
            bias_value: c.bias_value,
            representation: match (sparse, choice_applies) {
                (true, _) => Representation::Sparse,
                (false, true) => Representation::Dense,
                (false, false) => Representation::Auto,
            },
        }
    }
}

impl From<LinearModelV4> for LinearModel {
    fn from(m: LinearModelV4) -> Self {
        LinearModel {
            examples_seen: m.examples_seen,
            ..LinearModel::new(m.config.into(), m.learner)
        }
    }
}

/// `LinearModel` as of format version 5 (field order is the postcard encoding).
#[derive(Deserialize)]
pub(super) struct LinearModelV5 {
    config: LearnerConfig,
    learner: AnyLearner,
    examples_seen: u64,
}

impl From<LinearModelV5> for LinearModel {
    fn from(m: LinearModelV5) -> Self {
        LinearModel {
            examples_seen: m.examples_seen,
            ..LinearModel::new(m.config, m.learner)
        }
    }
}
