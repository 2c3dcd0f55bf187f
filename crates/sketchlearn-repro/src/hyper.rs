//! Tuned hyper-parameters: a learner's step parameter on a geometric grid `base^exp`, as the
//! learner experiments (`son-synthetic`, `rfd-table2`) sweep and report it.

use sketchlearn::linear::LearnerConfig;

/// A tuned hyper-parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Param {
    /// OGD / AdaGrad learning rate.
    Lr,
    /// Newton `α`.
    Alpha,
    /// RFD-SON `α₀`.
    Alpha0,
}

/// One grid point `base^exp` of a [`Param`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hyper {
    pub param: Param,
    pub base: i32,
    pub exp: i32,
}

impl Hyper {
    pub fn value(self) -> f64 {
        f64::from(self.base).powi(self.exp)
    }
    pub fn name(self) -> &'static str {
        match self.param {
            Param::Lr => "lr",
            Param::Alpha => "α",
            Param::Alpha0 => "α0",
        }
    }
    /// `2^-3`, `1e-4`.
    pub fn short(self) -> String {
        if self.base == 10 {
            format!("1e{}", self.exp)
        } else {
            format!("{}^{}", self.base, self.exp)
        }
    }
    pub fn apply(self, cfg: &mut LearnerConfig) {
        let v = self.value();
        match self.param {
            Param::Lr => cfg.learning_rate = v,
            Param::Alpha => cfg.alpha = v,
            Param::Alpha0 => cfg.alpha0 = v,
        }
    }
}

/// `base^exp` for `exp` in `lo..=hi` (step `step`).
pub fn grid(param: Param, base: i32, lo: i32, hi: i32, step: usize) -> Vec<Hyper> {
    (lo..=hi)
        .step_by(step)
        .map(|exp| Hyper { param, base, exp })
        .collect()
}
