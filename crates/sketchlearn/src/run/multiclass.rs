//! A multiclass run (issue 24, item 2): [`train_multiclass`] settles the classes (a scan of a
//! re-readable input, `--classes`, `--oaa K`, or the resumed model's), maps the labels
//! ([`Labeled`]), chooses the one-against-all members' representation for the input
//! ([`MulticlassConfig::for_input`]) and runs progressive validation with the refused-step
//! policy ([`progressive_multiclass`]); [`evaluate_multiclass_input`] scores a held-out input.
//! A label that is not a class is an error at its line; when the input was scanned first,
//! before anything is learned.
//!
//! ```
//! use sketchlearn::data::ClassSpec;
//! use sketchlearn::linear::multiclass::MulticlassConfig;
//! use sketchlearn::run::{self, Input, MulticlassStart, TrainOptions};
//! let text = "a 1:1\nb 2:1\nc 3:1\n".replace('a', "2").replace('b', "5").replace('c', "9").repeat(100);
//! let fitted = run::train_multiclass(
//!     Input::bytes("three.libsvm", text.into_bytes()),
//!     MulticlassStart::New(MulticlassConfig::default(), ClassSpec::FromInput),
//!     &TrainOptions::default(),
//!     &mut (),
//! )?;
//! assert_eq!(fitted.model.classes.to_list(), "2,5,9");
//! assert!(fitted.metrics.error_rate().unwrap() < 0.05);
//! # Ok::<(), sketchlearn::run::RunError>(())
//! ```

use super::input::examples;
use super::labels::{csv_read_classes, new_classes};
use super::{csv, Input, ReadOptions, RunError, TrainOptions};
use crate::data::{ClassSpec, ExampleSource, Format, InputSpec, Interactions, LabelMap, Labeled};
use crate::eval::multiclass::{
    evaluate_multiclass, progressive_multiclass, MulticlassMetrics, MulticlassProgress,
};
use crate::eval::EvalError;
use crate::linear::multiclass::{MulticlassConfig, MulticlassLearner, MulticlassModel};
use std::time::Instant;

/// Where the learner of a multiclass run comes from.
#[allow(clippy::large_enum_variant)] // one per run
pub enum MulticlassStart {
    /// A new learner of this configuration over the classes `spec` settles.
    New(MulticlassConfig, ClassSpec),
    /// Resume a model (its classes are the model's).
    Resume(MulticlassModel),
}

/// What a multiclass training run returns.
#[derive(Clone, Debug)]
pub struct MulticlassOutcome {
    /// The fitted model (`examples_seen` counts this run's examples too).
    pub model: MulticlassModel,
    /// Progressive metrics over all passes.
    pub metrics: MulticlassMetrics,
    /// Examples learned in this run (all passes).
    pub examples: u64,
    /// Steps refused.
    pub refused_steps: u64,
    /// Wall-clock seconds of the passes.
    pub seconds: f64,
}

/// A new multiclass model for `input` (CSV: of its scanned columns, kept in the model).
fn new_model(
    input: &mut Input,
    config: MulticlassConfig,
    spec: &ClassSpec,
    options: &TrainOptions,
) -> Result<MulticlassModel, RunError> {
    let format = input.format(options.read.format);
    let bits = options.read.bits(format, None)?;
    let schema = if format == Format::Csv {
        Some(csv::scan_new(input, options, true)?)
    } else {
        None
    };
    let (classes, p) = new_classes(
        input,
        &options.read,
        bits,
        schema.as_ref(),
        spec,
        options.dim,
    )?;
    let config = config.for_input(p.dim, p.hashed, p.avg_nnz);
    let mut model = MulticlassModel::build(config, classes, p.dim)
        .map_err(|e| RunError::options(format!("multiclass learner: {e}")))?;
    if let Some(schema) = schema {
        model.input = Some(InputSpec::new(Format::Csv, false, None, Some(schema)));
    }
    Ok(model)
}

/// Maps a pass's error to a run error at the source's line.
fn run_error(e: EvalError<crate::data::ParseError>, name: &str, line: u64) -> RunError {
    match e {
        EvalError::Source(e) => RunError::Parse(e),
        EvalError::Learn { source, .. } => RunError::Learn {
            source_name: name.to_owned(),
            line,
            error: source,
        },
    }
}

/// Trains a multiclass learner on `input` ([module](self) documentation); a resumed model
/// learns on from where it stopped, bit for bit as one longer run. `--classes` with a resumed
/// model must list the model's classes.
pub fn train_multiclass(
    mut input: Input,
    start: MulticlassStart,
    options: &TrainOptions,
    progress: &mut dyn MulticlassProgress,
) -> Result<MulticlassOutcome, RunError> {
    options.check_passes(&mut input)?;
    if !options.read.interactions.is_empty() || !options.regularization.is_none() {
        return Err(RunError::options(
            "-q/--interactions and --l1/--l2 apply to a binary or regression learner, not a \
             multiclass one",
        ));
    }
    let format = input.format(options.read.format);
    let mut model = match start {
        MulticlassStart::Resume(m) => m,
        MulticlassStart::New(config, spec) => new_model(&mut input, config, &spec, options)?,
    };
    let bits = options.read.bits(format, Some(model.learner.dim()))?;
    progress
        .started(&model.classes, &model.config.describe())
        .map_err(RunError::Observer)?;
    let mut metrics = MulticlassMetrics::new(model.classes.len());
    let t = Instant::now();
    let (mut total, mut refused) = (0, 0);
    let schema = model.schema().filter(|_| format == Format::Csv);
    let read_classes = csv_read_classes(schema).unwrap_or_else(|| model.classes.clone());
    for _ in 0..options.passes {
        let schema = model.schema().filter(|_| format == Format::Csv);
        let reader = examples(
            &mut input,
            &options.read,
            bits,
            schema,
            Interactions::default(),
        )?;
        let map = LabelMap::Multiclass(read_classes.clone());
        let mut source = Labeled::new(reader, map, input.name());
        let pass = progressive_multiclass(
            &mut model.learner,
            |ex| source.read_into(ex),
            &mut metrics,
            progress,
        )
        .map_err(|e| run_error(e, input.name(), source.line()))?;
        total += pass.examples;
        refused += pass.refused;
    }
    model.examples_seen += total;
    Ok(MulticlassOutcome {
        model,
        metrics,
        examples: total,
        refused_steps: refused,
        seconds: t.elapsed().as_secs_f64(),
    })
}

/// Scores `model` on `input` without learning; a label that is not one of the model's classes
/// is an error at its line. Returns the metrics and the number of examples.
pub fn evaluate_multiclass_input(
    mut input: Input,
    model: &MulticlassModel,
    options: &ReadOptions,
    progress: &mut dyn MulticlassProgress,
) -> Result<(MulticlassMetrics, u64), RunError> {
    let format = input.format(options.format);
    let bits = options.bits(format, Some(model.learner.dim()))?;
    let schema = model.schema().filter(|_| format == Format::Csv);
    let reader = examples(&mut input, options, bits, schema, Interactions::default())?;
    let read_classes = csv_read_classes(schema).unwrap_or_else(|| model.classes.clone());
    let map = LabelMap::Multiclass(read_classes);
    let mut source = Labeled::new(reader, map, input.name());
    progress
        .started(&model.classes, &model.config.describe())
        .map_err(RunError::Observer)?;
    let mut metrics = MulticlassMetrics::new(model.classes.len());
    let n = evaluate_multiclass(
        &model.learner,
        |ex| source.read_into(ex),
        &mut metrics,
        progress,
    )
    .map_err(|e| match e {
        EvalError::Source(e) => RunError::Parse(super::labels::for_model(e)),
        e => run_error(e, input.name(), source.line()),
    })?;
    Ok((metrics, n))
}
