//! Settling the learner of a training run: a resumed model as it is, or a new one — its
//! configuration checked, its dimension and representation chosen from the input (LIBSVM / VW
//! pre-scan, or the CSV schema), checked against the machine (reliable: [`check_dim`],
//! [`cap_size`], [`check_fits`]), its penalty applied, and what the model keeps of its input
//! recorded (a CSV schema in its [`InputSpec`], the penalty and interactions in its
//! [`ModelExtras`]) — and the label map of the run (issue 24, [`super::labels`]).

use super::footprint::{cap_size, check_dim, check_fits, what_sets_dim};
use super::labels::{model_map, new_map};
use super::speculation::Speculation;
use super::{csv, prescan, Input, RunError, Start, TrainOptions, Warning};
use crate::data::{ClassSpec, Format, InputSpec, LabelMap, Schema, Task};
use crate::linear::{
    InputProfile, LearnerConfig, LinearModel, ModelExtras, RepresentationChoice, ValidLearnerConfig,
};

/// The model a run starts from, how its representation was settled, the notes to give (a
/// capped sketch size) and the label map of its input.
pub(crate) struct Settled {
    pub model: LinearModel,
    pub representation: RepresentationChoice,
    pub notes: Vec<Warning>,
    pub map: LabelMap,
}

/// The model a run starts from (see the [module](self) documentation).
pub(crate) fn settle(
    input: &mut Input,
    start: Start,
    options: &TrainOptions,
    classes: &ClassSpec,
) -> Result<Settled, RunError> {
    let format = input.format(options.read.format);
    let config = match start {
        Start::Resume(model) => return resume(input, model, options, classes),
        Start::New(config) => config,
    };
    let (valid, bits) = checked(&config, options, format, input.name())?;
    let schema = match format {
        Format::Csv => Some(csv::scan_new(input, options)?),
        _ => None,
    };
    let (map, input_profile) = new_map(
        input,
        &options.read,
        bits,
        schema.as_ref(),
        classes,
        valid.loss,
        options.dim,
    )?;
    Ok(build(input, valid, options, schema, map, &input_profile)?.0)
}

/// The model a run starts from when its input is guessed ([`super::speculation`]): a new
/// learner built for the guess of the walk from the input's first rows
/// ([`prescan::guess`](super::prescan::guess)), with the [`Speculation`] the first pass checks.
/// `None` (settle as usual) when the run is not one that is guessed (see [`super::speculation`]),
/// or anything fails: [`settle`] then reports it.
pub(crate) fn settle_guessed(
    input: &mut Input,
    config: &LearnerConfig,
    options: &TrainOptions,
    classes: &ClassSpec,
) -> Option<(Settled, Speculation)> {
    let format = input.format(options.read.format);
    if format != Format::Libsvm || options.dim.is_some() || *classes != ClassSpec::FromInput {
        return None;
    }
    let file_bytes = std::fs::metadata(input.plain_path()?).ok()?.len();
    let (valid, bits) = checked(config, options, format, input.name()).ok()?;
    let binary = valid.loss.is_classification();
    let found = prescan::guess(input, &options.read, bits, binary)?;
    if !Speculation::worth_it(&found.profile, file_bytes) {
        return None;
    }
    let map = match &found.scan {
        Some(scan) if scan.labels().count() == 2 => {
            LabelMap::settle(classes, Task::Binary, Some(scan), input.name()).ok()?
        }
        Some(_) => return None,
        None => LabelMap::Real,
    };
    let (settled, unresolved) = build(input, valid, options, None, map, &found.profile).ok()?;
    let resolved = unresolved.resolve(&found.profile);
    let guess = Speculation::new(input.name(), found.profile, unresolved, resolved);
    Some((settled, guess))
}

/// A new learner's configuration checked (with the penalty and the interactions) and the
/// input's hash bits.
fn checked(
    config: &LearnerConfig,
    options: &TrainOptions,
    format: Format,
    name: &str,
) -> Result<(ValidLearnerConfig, u32), RunError> {
    let valid = config.clone().check()?;
    options.regularization.check(&valid)?;
    check_interactions(options, format, name)?;
    Ok((valid, options.read.bits(format, None)?))
}

/// A new learner for the input described by `input_profile` (and `schema`, CSV): its dimension
/// checked, its sketch size capped, its representation chosen, its memory checked. Returns the
/// model settled and the configuration before the representation was chosen.
fn build(
    input: &Input,
    valid: ValidLearnerConfig,
    options: &TrainOptions,
    schema: Option<Schema>,
    map: LabelMap,
    input_profile: &InputProfile,
) -> Result<(Settled, ValidLearnerConfig), RunError> {
    let dim = input_profile.dim;
    let what_sets_dim = what_sets_dim(
        options.dim,
        input_profile.hashed,
        schema.is_some(),
        input.name(),
    );
    check_dim(dim, &what_sets_dim)?;
    let (valid, note) = cap_size(valid, dim)?;
    let unresolved = valid.clone();
    let (valid, representation) = valid.resolve(input_profile);
    let memory = check_fits(&valid, &options.regularization, dim, &what_sets_dim)?;
    let learner = options.regularization.build(&valid, dim)?;
    let mut model = LinearModel::new(valid.into_inner(), learner);
    set_retirement(&mut model, options)?;
    if let Some(schema) = schema {
        model.input = Some(InputSpec::new(Format::Csv, false, None, Some(schema)));
    }
    model.extras = ModelExtras {
        regularization: options.regularization,
        interactions: options.read.interactions,
        ..ModelExtras::default()
    };
    let settled = Settled {
        model,
        representation,
        notes: note.into_iter().chain(memory).collect(),
        map,
    };
    Ok((settled, unresolved))
}

/// `-q` crosses VW namespaces: an error for `format` input named `name` that is not VW.
pub(crate) fn check_interactions(
    options: &TrainOptions,
    format: Format,
    name: &str,
) -> Result<(), RunError> {
    if !options.read.interactions.is_empty() && format != Format::Vw {
        return Err(RunError::options(format!(
            "-q/--interactions cross VW namespaces: {name} is {format} input (give VW text, a \
             .vw file or --format vw)"
        )));
    }
    Ok(())
}

/// A resumed model (binary or multiclass) keeps its interactions and penalty: an error when
/// the options give others.
pub(crate) fn check_resumed(options: &TrainOptions) -> Result<(), RunError> {
    if !options.read.interactions.is_empty() {
        return Err(RunError::options(
            "a resumed model keeps its own interactions (no -q with -i)",
        ));
    }
    if !options.regularization.is_none() {
        return Err(RunError::options(
            "a resumed model keeps its own regularisation (no --l1/--l2 with -i)",
        ));
    }
    Ok(())
}

/// A resumed model keeps its configuration, penalty, interactions and classes.
fn resume(
    input: &Input,
    mut model: LinearModel,
    options: &TrainOptions,
    classes: &ClassSpec,
) -> Result<Settled, RunError> {
    model.config.check()?;
    check_resumed(options)?;
    set_retirement(&mut model, options)?;
    let map = stored_map(&model, classes, input.name())?;
    Ok(Settled {
        model,
        representation: RepresentationChoice::Given,
        notes: Vec::new(),
        map,
    })
}

/// [`TrainOptions::retirement`] applied to the model's mixture ([`AnyLearner::retire`]): an
/// error for a threshold outside `[0, 1)` and for a model that holds no mixture.
///
/// [`AnyLearner::retire`]: crate::linear::AnyLearner::retire
fn set_retirement(model: &mut LinearModel, options: &TrainOptions) -> Result<(), RunError> {
    match options.retirement {
        Some(epsilon) => model
            .learner
            .retire(epsilon, "--retire", "drop --retire")
            .map_err(RunError::options),
        None => Ok(()),
    }
}

/// The label map of a stored model: its classes (numbers, or a CSV column's names), in
/// every format.
pub(crate) fn stored_map(
    model: &LinearModel,
    classes: &ClassSpec,
    name: &str,
) -> Result<LabelMap, RunError> {
    model_map(model.classes.as_ref(), model.config.loss, classes, name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linear::{LearnerConfig, OnlineLearner};

    /// A new classifier on a file: its classes and its dimension come from one read, the pass
    /// is the second.
    #[test]
    fn a_new_classifier_reads_its_file_once_before_learning() {
        let mut input = Input::bytes("t.libsvm", b"0 1:1 3:2\n1 2:1\n0 4:1\n".to_vec());
        let start = Start::New(LearnerConfig::default());
        let settled = settle(
            &mut input,
            start,
            &TrainOptions::default(),
            &ClassSpec::FromInput,
        )
        .unwrap();
        assert_eq!(input.opens(), 1);
        assert_eq!(settled.map.classes().unwrap().to_list(), "0,1");
        assert_eq!(settled.model.learner.dim(), 4);
    }
}
