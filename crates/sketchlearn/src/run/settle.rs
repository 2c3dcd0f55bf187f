//! Settling the learner of a training run: a resumed model as it is, or a new one — its
//! configuration checked, its dimension and representation chosen from the input (LIBSVM / VW
//! pre-scan, or the CSV schema), checked against the machine (reliable: [`check_dim`],
//! [`cap_size`], [`check_fits`]), its penalty applied, and what the model keeps of its input
//! recorded (a CSV schema in its [`InputSpec`], the penalty and interactions in its
//! [`ModelExtras`]) — and the label map of the run (issue 24, [`super::labels`]).

use super::footprint::{cap_size, check_dim, check_fits, what_sets_dim};
use super::labels::{model_map, new_map};
use super::{csv, Input, RunError, Start, TrainOptions, Warning};
use crate::data::{ClassSpec, Format, InputSpec, LabelMap};
use crate::linear::{LinearModel, ModelExtras, RepresentationChoice};

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
    let valid = config.check()?;
    options.regularization.check(&valid)?;
    check_interactions(options, format, input.name())?;
    let bits = options.read.bits(format, None)?;
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
    let dim = input_profile.dim;
    let what_sets_dim = what_sets_dim(
        options.dim,
        input_profile.hashed,
        schema.is_some(),
        input.name(),
    );
    check_dim(dim, &what_sets_dim)?;
    let (valid, note) = cap_size(valid, dim)?;
    let (valid, representation) = valid.resolve(&input_profile);
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
    Ok(Settled {
        model,
        representation,
        notes: note.into_iter().chain(memory).collect(),
        map,
    })
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

/// [`TrainOptions::retirement`] applied to the model's mixture, if it is one.
fn set_retirement(model: &mut LinearModel, options: &TrainOptions) -> Result<(), RunError> {
    if let Some(epsilon) = options.retirement {
        model
            .learner
            .set_retirement(epsilon)
            .map_err(|e| RunError::options(format!("--retire: {e}")))?;
    }
    Ok(())
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
