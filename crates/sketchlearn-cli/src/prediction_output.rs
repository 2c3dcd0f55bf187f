//! What a prediction line says (`train -p`, `test -p`, `predict`; issue 25, item 1): the label
//! in the user's convention and the probability of the positive class (logistic loss), the label
//! (hinge losses: they give no probability), the value (regression), the label and one
//! probability per class (multiclass with `--probabilities`), or the raw margins (`--raw`).

use sketchlearn::labels::Classes;
use sketchlearn::loss::{sigmoid, Loss};
use std::fmt::Write;

/// How a prediction is printed.
#[derive(Clone, Debug)]
pub enum PredictionFormat {
    /// The raw margin `wᵀx` (multiclass: one score per class).
    Raw,
    /// A regression value.
    Value,
    /// A binary label; with the probability of the positive class when `probability`.
    Binary {
        /// The classes (index 1 is positive).
        classes: Classes,
        /// Print `σ(margin)` after the label (logistic loss).
        probability: bool,
    },
    /// A multiclass label; with every class's probability when `probabilities`.
    Multiclass {
        /// The classes.
        classes: Classes,
        /// Print the probabilities after the label.
        probabilities: bool,
    },
}

impl PredictionFormat {
    /// The format for a binary or regression model with `loss` and `classes` (`None`: `-1,1`).
    pub fn binary(loss: Loss, classes: Option<Classes>, raw: bool) -> Self {
        if raw {
            PredictionFormat::Raw
        } else if !loss.is_classification() {
            PredictionFormat::Value
        } else {
            PredictionFormat::Binary {
                classes: classes.unwrap_or_else(Classes::plus_minus_one),
                probability: loss == Loss::Logistic,
            }
        }
    }

    /// The format for a multiclass model.
    pub fn multiclass(classes: Classes, raw: bool, probabilities: bool) -> Self {
        if raw {
            PredictionFormat::Raw
        } else {
            PredictionFormat::Multiclass {
                classes,
                probabilities,
            }
        }
    }

    /// One line (without the newline) for a binary or regression margin.
    pub fn line(&self, margin: f64) -> String {
        match self {
            PredictionFormat::Binary {
                classes,
                probability: true,
            } => format!("{} {:.6}", classes.binary_label(margin), sigmoid(margin)),
            PredictionFormat::Binary { classes, .. } => classes.binary_label(margin).to_string(),
            _ => format!("{margin}"),
        }
    }

    /// One line for a multiclass prediction with the probabilities `p`: the label (and the
    /// probabilities with `--probabilities`; only the probabilities with `--raw`).
    pub fn multiclass_line(&self, p: &[f64]) -> String {
        let mut s = String::new();
        if let PredictionFormat::Multiclass { classes, .. } = self {
            let best = sketchlearn::linear::multiclass::argmax(p);
            let _ = write!(s, "{}", classes.labels()[best]);
        }
        let with_p = matches!(
            self,
            PredictionFormat::Raw
                | PredictionFormat::Multiclass {
                    probabilities: true,
                    ..
                }
        );
        if with_p {
            for v in p {
                let sep = if s.is_empty() { "" } else { " " };
                let _ = write!(s, "{sep}{v:.6}");
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_lines_in_the_users_labels() {
        let c = Classes::parse_list("2,4").unwrap();
        let f = PredictionFormat::binary(Loss::Logistic, Some(c.clone()), false);
        assert_eq!(f.line(0.0), "2 0.500000");
        assert_eq!(
            PredictionFormat::binary(Loss::Hinge, Some(c), false).line(1.0),
            "4"
        );
        assert_eq!(
            PredictionFormat::binary(Loss::Squared, None, false).line(2.5),
            "2.5"
        );
        assert_eq!(
            PredictionFormat::binary(Loss::Logistic, None, true).line(-0.5),
            "-0.5"
        );
        let m = PredictionFormat::multiclass(Classes::parse_list("a,b,c").unwrap(), false, true);
        assert_eq!(
            m.multiclass_line(&[0.2, 0.5, 0.3]),
            "b 0.200000 0.500000 0.300000"
        );
    }
}
