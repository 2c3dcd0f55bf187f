//! What a model file holds, readable: its learner, loss, classes, input format, dimension,
//! examples seen, intercept, mixture weights, largest weights (named where the model knows
//! the names) and its sketches' top singular values. One [`ModelSummary`] for the three kinds
//! of model (linear, multiclass, factorization machine); `sketchlearn inspect` prints it as
//! text ([`ModelSummary::text`]) or JSON (its `Serialize` form).

use crate::data::ratings::RatingsEncoder;
use crate::data::Schema;
use crate::fm::{AnyFm, FmModel, FM_MODEL_KIND};
use crate::labels::Classes;
use crate::linear::multiclass::{MulticlassLearner, MulticlassModel};
use crate::linear::{
    sketch_summaries, top_weights, LinearModel, MemberWeight, OnlineLearner, Regularization,
    SketchSummary,
};
use crate::model::{AnyModel, ModelError};
use serde::Serialize;
use std::path::Path;

/// What a model holds (the fields `inspect --json` prints).
///
/// ```
/// use sketchlearn::linear::{LearnerConfig, LinearModel, OnlineLearner};
/// use sketchlearn::model::ModelSummary;
/// use sketchlearn::Row;
/// let config = LearnerConfig::default();
/// let mut model = LinearModel::new(config.clone(), config.build(3).unwrap());
/// model.learner.learn(Row::Dense(&[1.0, 0.0, 2.0]), 1.0, 1.0).unwrap();
/// let summary = ModelSummary::of_linear(&model, 2, 5);
/// assert_eq!(summary.dim, 3);
/// assert!(summary.top_weights.len() <= 2);
/// assert!(summary.text("m.skl").starts_with("model          m.skl\n"));
/// ```
#[derive(Serialize, Debug)]
pub struct ModelSummary {
    /// The learner's description (a recovered DRP model: its own, [`LinearModel::name`]).
    pub learner: String,
    /// The loss's name.
    pub loss: String,
    /// A classifier's classes (binary: negative, positive).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub classes: Option<Vec<String>>,
    /// The training input's format (libsvm, vw, csv), when the model records it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    /// The dimension d.
    pub dim: usize,
    /// The intercept (the weight after the d features), if the learner has one.
    pub intercept: Option<f64>,
    /// Examples learned (all passes).
    pub examples_seen: u64,
    /// A mixture's members and their weights π.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mixture: Option<Vec<MemberWeight>>,
    /// When the mixture predicts with its members' calibrated probabilities
    /// `Σ_k π_k σ(s_k·p_k)` (the default classifier from model format 10,
    /// `linear/mixture_output.rs`): each member's scale `s_k`, in the order of `mixture`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_scales: Option<Vec<f64>>,
    /// The largest weights by magnitude.
    pub top_weights: Vec<Weight>,
    /// The curvature sketches and their top singular values.
    pub sketches: Vec<SketchSummary>,
    /// The L1/L2 penalty (`--l1`, `--l2`), when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub regularization: Option<Regularization>,
    /// The CSV columns the model reads (training on CSV).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub csv_columns: Option<Vec<String>>,
    /// An FM model's side-feature columns (`fm --columns user,item,rating,SIDE..`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub side_columns: Option<Vec<String>>,
    /// A multiclass model's largest weights, class by class.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub class_weights: Option<Vec<ClassWeights>>,
    /// An FM model's intercept policy: the centre its intercept is learned around.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub centred_at: Option<Centre>,
}

/// The centre of an FM's intercept (`fm/label_mean.rs`): the running mean `μ` of the labels
/// learned so far (the squared-loss default, `intercept=mean`), or a fixed value (`--intercept`,
/// 0 for the logistic loss). The model predicts `centre + intercept + linear + pairwise terms`.
#[derive(Serialize, Debug)]
pub struct Centre {
    /// Whether the centre is the running label mean (else fixed).
    pub label_mean: bool,
    /// `μ` (the label mean so far, or the fixed centre).
    pub value: f64,
    /// The labels the mean is over (their total importance weight: the count with unit
    /// weights); none for a fixed centre.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub labels: Option<f64>,
}

/// One class's intercept and largest weights (a multiclass model).
#[derive(Serialize, Debug)]
pub struct ClassWeights {
    /// The class's name.
    pub class: String,
    /// Its intercept, if the learner has one.
    pub intercept: Option<f64>,
    /// Its largest weights by magnitude.
    pub top_weights: Vec<Weight>,
}

/// One weight: its 0-based index (LIBSVM index − 1, or VW hash bucket) and, where known, name.
#[derive(Serialize, Debug)]
pub struct Weight {
    /// 0-based feature index.
    pub index: usize,
    /// The feature's name (CSV column, VW name kept by `--keep-names`, FM user/item/side).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The weight.
    pub weight: f64,
}

impl ModelSummary {
    /// The summary of the model file at `path` (any kind), with the `top` largest weights and
    /// each sketch's `singular_values` largest singular values.
    pub fn load(
        path: impl AsRef<Path>,
        top: usize,
        singular_values: usize,
    ) -> Result<Self, ModelError> {
        let (bytes, kind, name) = super::read_with_kind(path.as_ref())?;
        if kind == FM_MODEL_KIND {
            return Ok(Self::of_fm(&FmModel::from_bytes(&bytes, &name)?, top));
        }
        Ok(match AnyModel::from_image(&bytes, &kind, &name)? {
            AnyModel::Linear(model) => Self::of_linear(&model, top, singular_values),
            AnyModel::Multiclass(m) => Self::of_multiclass(&m, top),
        })
    }

    /// A binary or regression model: the `top` largest weights, the mixture's weights and
    /// each sketch's `singular_values` largest singular values.
    pub fn of_linear(model: &LinearModel, top: usize, singular_values: usize) -> Self {
        let dim = model.learner.dim();
        let weights = model.learner.weights();
        let (intercept, top_weights) = largest(&weights, dim, top, |j| model.feature_name(j));
        ModelSummary {
            learner: model.name(),
            loss: model.config.loss.name().to_string(),
            classes: model.classes.as_ref().map(Classes::names),
            input: model.input.as_ref().map(|i| i.format.name().to_string()),
            dim,
            intercept,
            examples_seen: model.examples_seen,
            mixture: model.mixture_weights(),
            output_scales: model.mixture().and_then(|m| m.output_scales()),
            top_weights,
            sketches: sketch_summaries(&model.learner, singular_values),
            regularization: Some(model.extras.regularization).filter(|r| !r.is_none()),
            csv_columns: csv_columns(model.schema()),
            side_columns: None,
            class_weights: None,
            centred_at: None,
        }
    }

    /// A multiclass model: the learner, its classes, dimension and examples seen, and each
    /// class's intercept and `top` largest weights.
    pub fn of_multiclass(m: &MulticlassModel, top: usize) -> Self {
        let dim = m.learner.dim();
        let class_weights = m
            .classes
            .names()
            .into_iter()
            .zip(m.learner.class_weights())
            .map(|(class, w)| {
                let (intercept, top_weights) = largest(&w, dim, top, |j| m.feature_name(j));
                ClassWeights {
                    class,
                    intercept,
                    top_weights,
                }
            })
            .collect();
        ModelSummary {
            learner: m.config.describe(),
            loss: m.config.member.loss.name().to_string(),
            classes: Some(m.classes.names()),
            input: m.input.as_ref().map(|i| i.format.name().to_string()),
            dim,
            intercept: None,
            examples_seen: m.examples_seen,
            mixture: None,
            output_scales: None,
            top_weights: Vec::new(),
            sketches: Vec::new(),
            regularization: None,
            csv_columns: csv_columns(m.schema()),
            side_columns: None,
            class_weights: Some(class_weights),
            centred_at: None,
        }
    }

    /// A factorization machine: the learner, loss, dimension, examples seen and the `top`
    /// largest first-order weights, named by the ratings encoder (users, items, side features
    /// and side columns), the side columns it reads and the centre of its intercept.
    pub fn of_fm(m: &FmModel, top: usize) -> Self {
        let dim = m.learner.dim();
        let names = m.encoder.as_ref().map(RatingsEncoder::feature_names);
        let name = |j: usize| names.as_ref().and_then(|n| n.get(j).cloned());
        let (intercept, top_weights) = largest(&m.learner.weights(), dim, top, name);
        let side = m.encoder.as_ref().and_then(RatingsEncoder::side_columns);
        let input = if m.encoder.is_some() {
            "ratings"
        } else {
            "libsvm"
        };
        ModelSummary {
            learner: m.config.describe(),
            loss: m.config.loss.name().to_string(),
            classes: None,
            input: Some(input.to_string()),
            dim,
            intercept,
            examples_seen: m.examples_seen,
            mixture: None,
            output_scales: None,
            top_weights,
            sketches: Vec::new(),
            regularization: None,
            csv_columns: None,
            side_columns: side.map(|c| c.names().map(str::to_owned).collect()),
            class_weights: None,
            centred_at: Some(fm_centre(m)),
        }
    }
}

/// An FM's [`Centre`].
fn fm_centre(m: &FmModel) -> Centre {
    match &m.learner {
        AnyFm::LabelCentred(c) => Centre {
            label_mean: true,
            value: c.labels.mean,
            labels: Some(c.labels.weight),
        },
        _ => Centre {
            label_mean: false,
            value: m.config.intercept.unwrap_or(0.0),
            labels: None,
        },
    }
}

/// The intercept (the weight after the `dim` features, if any) and the `top` largest feature
/// weights by magnitude, with their `name`s where known.
fn largest(
    weights: &[f64],
    dim: usize,
    top: usize,
    name: impl Fn(usize) -> Option<String>,
) -> (Option<f64>, Vec<Weight>) {
    let (features, intercept) = if weights.len() == dim + 1 {
        (&weights[..dim], Some(weights[dim]))
    } else {
        (&weights[..weights.len().min(dim)], None)
    };
    let top = top_weights(features, top)
        .into_iter()
        .map(|(index, weight)| Weight {
            index,
            name: name(index),
            weight,
        })
        .collect();
    (intercept, top)
}

/// The names of a CSV model's columns.
fn csv_columns(schema: Option<&Schema>) -> Option<Vec<String>> {
    schema.map(|s| s.columns().iter().map(|c| c.name.clone()).collect())
}
