//! [`FmOverrides`]: the hyper-parameters a user chose (a front end's flags, a Python keyword),
//! resolved against the algorithm's defaults ([`FmConfig::for_loss`]) into an [`FmConfig`], with
//! the checks of combinations that do not fit, in one place for every front end.

use super::side_eta::{SIDE_COLUMNS_ETA_PAIRWISE, SIDE_FILES_ETA_PAIRWISE};
use crate::fm::{Compression, FirstOrderStep, FmAlgorithm, FmConfig, SftrlBackend};
use crate::linear::StepSchedule;
use crate::loss::Loss;

/// Hyper-parameters chosen by the user; `None` (or `false`) keeps the default of the algorithm
/// and loss. The names are those of `sketchlearn fm`'s flags.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FmOverrides {
    /// `--algo` (default: sftrl-split on ratings, sftrl-fast on LIBSVM rows).
    pub algo: Option<FmAlgorithm>,
    /// `--size`: sketch size m.
    pub size: Option<usize>,
    /// `--eta`: step size η.
    pub eta: Option<f64>,
    /// `--eta-pairwise` (sftrl-split; default 0.5, smaller with side features: [`side_eta`]).
    ///
    /// [`side_eta`]: super::side_eta
    pub eta_pairwise: Option<f64>,
    /// `--compression` (sftrl-split).
    pub compression: Option<Compression>,
    /// `--first-order` (sftrl-split): `Some(true)` constant steps, `Some(false)` AdaGrad.
    pub first_order_constant: Option<bool>,
    /// `--adagrad-beta` (sftrl-split with AdaGrad first-order steps).
    pub adagrad_beta: Option<f64>,
    /// `--loss` (default: square on ratings, logistic on LIBSVM rows).
    pub loss: Option<Loss>,
    /// `--rank` (fm-sgd).
    pub rank: Option<usize>,
    /// `--backend` (sftrl).
    pub backend: Option<SftrlBackend>,
    /// `--radius` (ocg; ftrl/ogd's optional constraint).
    pub radius: Option<f64>,
    /// `--project-every` (ftrl/ogd with a radius).
    pub project_every: Option<u64>,
    /// `--ocg-block`.
    pub ocg_block: Option<u64>,
    /// `--ocg-gamma`.
    pub ocg_gamma: Option<f64>,
    /// `--power-iters` (ocg).
    pub power_iters: Option<usize>,
    /// `--eta-linear` (fm-sgd).
    pub eta_linear: Option<f64>,
    /// `--eta-intercept` (fm-sgd).
    pub eta_intercept: Option<f64>,
    /// `--reg-w` (fm-sgd).
    pub reg_w: Option<f64>,
    /// `--reg-v` (fm-sgd).
    pub reg_v: Option<f64>,
    /// `--init-std` (fm-sgd).
    pub init_std: Option<f64>,
    /// `--intercept`: the initial intercept μ.
    pub intercept: Option<f64>,
    /// `--decay` (fm-sgd): steps η/√t.
    pub decay: bool,
    /// `--seed` (not a choice refused with a resumed model: it is then unused).
    pub seed: u64,
}

impl FmOverrides {
    /// Whether any hyper-parameter is chosen (the seed aside): a resumed model keeps its own, so
    /// choosing one with it is refused.
    pub fn any_set(&self) -> bool {
        *self
            != FmOverrides {
                seed: self.seed,
                ..FmOverrides::default()
            }
    }

    /// Whether an option of sftrl-split alone is chosen.
    fn any_split_option(&self) -> bool {
        self.eta_pairwise.is_some()
            || self.compression.is_some()
            || self.first_order_constant.is_some()
            || self.adagrad_beta.is_some()
    }

    /// The algorithm: the chosen one, else sftrl-split on ratings and sftrl-fast on LIBSVM rows.
    pub fn algorithm(&self, libsvm: bool) -> FmAlgorithm {
        self.algo.unwrap_or(if libsvm {
            FmAlgorithm::SftrlFast
        } else {
            FmAlgorithm::SftrlSplit
        })
    }

    /// Refuses the combinations that do not fit: sftrl-split's options with another algorithm,
    /// an AdaGrad β with constant first-order steps.
    pub fn check(&self, libsvm: bool) -> Result<(), String> {
        if self.any_split_option() && self.algorithm(libsvm) != FmAlgorithm::SftrlSplit {
            return Err(
                "--eta-pairwise, --compression, --first-order and --adagrad-beta are \
                        options of --algo sftrl-split"
                    .into(),
            );
        }
        if self.first_order_constant == Some(true) && self.adagrad_beta.is_some() {
            return Err("--adagrad-beta needs --first-order adagrad".into());
        }
        Ok(())
    }

    /// The configuration: the defaults of the algorithm and loss ([`FmConfig::for_loss`]; square
    /// loss on ratings, logistic on LIBSVM rows) overridden by the choices. sftrl-split's
    /// pairwise step defaults to 0.5 for ids alone, and to smaller steps with side features
    /// ([`SIDE_FILES_ETA_PAIRWISE`] with MovieLens side files, else
    /// [`SIDE_COLUMNS_ETA_PAIRWISE`] with side columns).
    pub fn config(&self, libsvm: bool, side_files: bool, side_columns: bool) -> FmConfig {
        let algorithm = self.algorithm(libsvm);
        let default_loss = if libsvm {
            Loss::Logistic
        } else {
            Loss::Squared
        };
        let d = FmConfig::for_loss(algorithm, self.loss.unwrap_or(default_loss));
        let default_eta_pairwise = if side_files {
            SIDE_FILES_ETA_PAIRWISE
        } else if side_columns {
            SIDE_COLUMNS_ETA_PAIRWISE
        } else {
            d.eta_pairwise
        };
        FmConfig {
            algorithm,
            size: self.size.unwrap_or(d.size),
            eta: self.eta.unwrap_or(d.eta),
            eta_pairwise: self.eta_pairwise.unwrap_or(default_eta_pairwise),
            compression: self.compression.unwrap_or(d.compression),
            first_order: match (self.first_order_constant, d.first_order) {
                (Some(true), _) => FirstOrderStep::Constant,
                (_, FirstOrderStep::AdaGrad { beta }) => FirstOrderStep::AdaGrad {
                    beta: self.adagrad_beta.unwrap_or(beta),
                },
                (_, constant) => constant,
            },
            loss: d.loss,
            rank: self.rank.unwrap_or(d.rank),
            seed: self.seed,
            backend: self.backend.unwrap_or(d.backend),
            radius: self.radius.unwrap_or(d.radius),
            project_every: self.project_every.unwrap_or(d.project_every),
            ocg_block: self.ocg_block.unwrap_or(d.ocg_block),
            ocg_gamma: self.ocg_gamma.unwrap_or(d.ocg_gamma),
            power_iters: self.power_iters.unwrap_or(d.power_iters),
            schedule: if self.decay {
                StepSchedule::InverseSqrt
            } else {
                d.schedule
            },
            eta_linear: self.eta_linear.or(d.eta_linear),
            eta_intercept: self.eta_intercept.or(d.eta_intercept),
            reg_w: self.reg_w.unwrap_or(d.reg_w),
            reg_v: self.reg_v.unwrap_or(d.reg_v),
            init_std: self.init_std.unwrap_or(d.init_std),
            intercept: self.intercept.or(d.intercept),
            max_dense_entries: d.max_dense_entries,
        }
    }
}
