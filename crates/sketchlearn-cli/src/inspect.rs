//! `sketchlearn inspect MODEL [--json]`: what a model file holds, readable.

use crate::saved_model::AnyModel;
use anyhow::Result;
use serde::Serialize;
use sketchlearn::data::ratings::RatingsEncoder;
use sketchlearn::data::Schema;
use sketchlearn::fm::{AnyFm, FmModel, FM_MODEL_KIND};
use sketchlearn::labels::Classes;
use sketchlearn::linear::multiclass::{MulticlassLearner, MulticlassModel};
use sketchlearn::linear::{
    sketch_summaries, top_weights, AnyLearner, LinearModel, OnlineLearner, Regularization,
    SketchSummary,
};

/// Arguments of `sketchlearn inspect`.
#[derive(clap::Args, Debug)]
pub struct InspectArgs {
    /// `--quiet`: nothing on stderr but warnings and errors (this command writes no notes).
    #[command(flatten)]
    pub quiet: crate::quiet::Quiet,
    /// How many of the largest weights to list.
    #[arg(long, default_value_t = 10)]
    pub top: usize,
    /// How many singular values of each sketch to list.
    #[arg(long, default_value_t = 5)]
    pub singular_values: usize,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// The model file (written by `train -f`, `multiclass -f` or `fm -f`).
    pub model: String,
}

/// What `inspect --json` prints.
#[derive(Serialize, Debug)]
pub struct Inspection {
    pub learner: String,
    pub loss: String,
    /// A classifier's classes (binary: negative, positive).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub classes: Option<Vec<String>>,
    /// The training input's format (libsvm, vw, csv), when the model records it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    pub dim: usize,
    pub intercept: Option<f64>,
    pub examples_seen: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mixture: Option<Vec<Member>>,
    pub top_weights: Vec<Weight>,
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

/// One class's intercept and largest weights (a multiclass model).
#[derive(Serialize, Debug)]
pub struct ClassWeights {
    pub class: String,
    pub intercept: Option<f64>,
    pub top_weights: Vec<Weight>,
}

/// A mixture member and its weight.
#[derive(Serialize, Debug)]
pub struct Member {
    pub learner: String,
    pub weight: f64,
}

/// One weight: its 0-based index (LIBSVM index − 1, or VW hash bucket) and, where known, name.
#[derive(Serialize, Debug)]
pub struct Weight {
    pub index: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub weight: f64,
}

fn members(model: &LinearModel) -> Option<Vec<Member>> {
    let mix = match &model.learner {
        AnyLearner::Mixture(mix) => mix,
        AnyLearner::ScaledMixture(mix) => mix.mixture(),
        _ => return None,
    };
    let names = model.config.mixture_members()?;
    Some(
        mix.member_weights()
            .into_iter()
            .enumerate()
            .map(|(k, weight)| Member {
                learner: names
                    .get(k)
                    .map_or_else(|| format!("member {}", k + 1), |c| c.describe()),
                weight,
            })
            .collect(),
    )
}

/// Everything `inspect` shows, from a loaded model.
pub fn inspection(model: &LinearModel, top: usize, singular_values: usize) -> Inspection {
    let dim = model.learner.dim();
    let weights = model.learner.weights();
    let (intercept, top_weights) = largest(&weights, dim, top, |j| model.feature_name(j));
    Inspection {
        learner: crate::drp_cmd::model_name(model),
        loss: model.config.loss.name().to_string(),
        classes: model.classes.as_ref().map(Classes::names),
        input: model.input.as_ref().map(|i| i.format.name().to_string()),
        dim,
        intercept,
        examples_seen: model.examples_seen,
        mixture: members(model),
        top_weights,
        sketches: sketch_summaries(&model.learner, singular_values),
        regularization: Some(model.extras.regularization).filter(|r| !r.is_none()),
        csv_columns: csv_columns(model.schema()),
        side_columns: None,
        class_weights: None,
        centred_at: None,
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

/// What `inspect` shows of a multiclass model: the learner, its classes, dimension and
/// examples seen, and each class's intercept and `top` largest weights.
fn multiclass_inspection(m: &MulticlassModel, top: usize) -> Inspection {
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
    Inspection {
        learner: m.config.describe(),
        loss: m.config.member.loss.name().to_string(),
        classes: Some(m.classes.names()),
        input: m.input.as_ref().map(|i| i.format.name().to_string()),
        dim,
        intercept: None,
        examples_seen: m.examples_seen,
        mixture: None,
        top_weights: Vec::new(),
        sketches: Vec::new(),
        regularization: None,
        csv_columns: csv_columns(m.schema()),
        side_columns: None,
        class_weights: Some(class_weights),
        centred_at: None,
    }
}

/// What `inspect` shows of a factorization machine: the learner, loss, dimension, examples
/// seen and the `top` largest first-order weights, named by the ratings encoder (users, items,
/// side features and side columns), and the side columns it reads.
fn fm_inspection(m: &FmModel, top: usize) -> Inspection {
    let dim = m.learner.dim();
    let names = m.encoder.as_ref().map(RatingsEncoder::feature_names);
    let name = |j: usize| names.as_ref().and_then(|n| n.get(j).cloned());
    let (intercept, top_weights) = largest(&m.learner.weights(), dim, top, name);
    let side = m.encoder.as_ref().and_then(RatingsEncoder::side_columns);
    Inspection {
        learner: m.config.describe(),
        loss: m.config.loss.name().to_string(),
        classes: None,
        input: Some(
            if m.encoder.is_some() {
                "ratings"
            } else {
                "libsvm"
            }
            .to_string(),
        ),
        dim,
        intercept,
        examples_seen: m.examples_seen,
        mixture: None,
        top_weights,
        sketches: Vec::new(),
        regularization: None,
        csv_columns: None,
        side_columns: side.map(|c| c.names().map(str::to_owned).collect()),
        class_weights: None,
        centred_at: Some(fm_centre(m)),
    }
}

pub fn run(args: &InspectArgs) -> Result<()> {
    let report = if sketchlearn::model::peek_kind(&args.model)? == FM_MODEL_KIND {
        fm_inspection(&FmModel::load(&args.model)?, args.top)
    } else {
        match AnyModel::load(&args.model)? {
            AnyModel::Linear(model) => inspection(&model, args.top, args.singular_values),
            AnyModel::Multiclass(m) => multiclass_inspection(&m, args.top),
        }
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    print!("{}", text(&args.model, &report));
    Ok(())
}

/// The text form.
fn text(path: &str, r: &Inspection) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(s, "model          {path}");
    let _ = writeln!(s, "learner        {}", r.learner);
    let _ = writeln!(s, "loss           {}", r.loss);
    if let Some(c) = &r.classes {
        let _ = writeln!(s, "classes        {}", c.join(","));
    }
    if let Some(i) = &r.input {
        let _ = writeln!(s, "input          {i}");
    }
    let _ = writeln!(s, "dimension      {}", r.dim);
    let _ = writeln!(s, "examples seen  {}", r.examples_seen);
    if let Some(b) = r.intercept {
        let _ = writeln!(s, "intercept      {b:.6}");
    }
    match &r.centred_at {
        Some(Centre {
            label_mean: true,
            value,
            labels,
        }) => {
            let n = labels.unwrap_or(0.0);
            let _ = writeln!(s, "centred at     label mean {value:.6} over {n} labels");
        }
        Some(c) => {
            let _ = writeln!(s, "centred at     {:.6} (fixed)", c.value);
        }
        None => {}
    }
    if let Some(g) = &r.regularization {
        let _ = writeln!(s, "penalty        l1 {} l2 {}", g.l1, g.l2);
    }
    if let Some(c) = &r.csv_columns {
        let _ = writeln!(s, "csv columns    {}", c.join(", "));
    }
    if let Some(c) = &r.side_columns {
        let _ = writeln!(s, "side columns   {}", c.join(", "));
    }
    if let Some(members) = &r.mixture {
        let _ = writeln!(s, "\nmixture weights");
        for m in members {
            let _ = writeln!(s, "  {:.3}  {}", m.weight, m.learner);
        }
    }
    for c in r.class_weights.iter().flatten() {
        let _ = write!(s, "\nclass {}", c.class);
        if let Some(b) = c.intercept {
            let _ = write!(s, " (intercept {b:.6})");
        }
        weight_table(&mut s, &c.top_weights);
    }
    if r.top_weights.is_empty() {
        return s;
    }
    weight_table(&mut s, &r.top_weights);
    if !r.sketches.is_empty() {
        let _ = writeln!(s, "\nsketches (top singular values)");
        for k in &r.sketches {
            let values: Vec<String> = k
                .singular_values
                .iter()
                .map(|v| format!("{v:.4}"))
                .collect();
            let at = if k.path.is_empty() {
                "learner"
            } else {
                &k.path
            };
            let _ = writeln!(
                s,
                "  {at:<22} {:<10} alpha {:<10.4} {}",
                k.kind,
                k.alpha,
                values.join(" ")
            );
        }
    }
    s
}

/// A table of weights under a `top N weights` line.
fn weight_table(s: &mut String, weights: &[Weight]) {
    use std::fmt::Write;
    let _ = writeln!(
        s,
        "\ntop {} weights by magnitude (index: 0-based; LIBSVM index - 1, VW hash bucket, CSV or \
         FM feature)",
        weights.len()
    );
    let _ = writeln!(s, "  {:>10}  {:>12}  name", "index", "weight");
    for w in weights {
        let name = w.name.as_deref().unwrap_or("-");
        let _ = writeln!(s, "  {:>10}  {:>12.6}  {name}", w.index, w.weight);
    }
}
