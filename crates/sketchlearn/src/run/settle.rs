//! Settling the learner of a training run: a resumed model as it is, or a new one — its
//! configuration checked, its dimension and representation chosen from the input (LIBSVM / VW
//! pre-scan, or the CSV schema), its penalty applied, and what the model keeps besides the
//! learner ([`ModelExtras`]: the CSV schema, the penalty) recorded.

use super::dimension::profile;
use super::{csv, Input, RunError, Start, TrainOptions};
use crate::data::Format;
use crate::linear::{LinearModel, ModelExtras, RepresentationChoice};

/// The model a run starts from and how its representation was settled.
pub(crate) fn settle(
    input: &mut Input,
    start: Start,
    options: &TrainOptions,
) -> Result<(LinearModel, RepresentationChoice), RunError> {
    let format = input.format(options.read.format);
    let config = match start {
        Start::Resume(model) => {
            model.config.check()?;
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
            return Ok((model, RepresentationChoice::Given));
        }
        Start::New(config) => config,
    };
    let valid = config.check()?;
    options.regularization.check(&valid)?;
    if !options.read.interactions.is_empty() && format != Format::Vw {
        return Err(RunError::options(format!(
            "-q/--interactions cross VW namespaces: {} is {format} input (give VW text, a .vw \
             file or --format vw)",
            input.name()
        )));
    }
    let (input_profile, schema) = if format == Format::Csv {
        if options.dim.is_some() {
            return Err(RunError::options(
                "CSV input: the dimension comes from the columns (no --dim)",
            ));
        }
        let schema = csv::scan(input, &options.read.csv)?;
        (csv::profile(input, &schema)?, Some(schema))
    } else {
        (profile(input, &options.read, options.dim)?, None)
    };
    let (valid, choice) = valid.resolve(&input_profile);
    let learner = options.regularization.build(&valid, input_profile.dim)?;
    let mut model = LinearModel::new(valid.into_inner(), learner);
    model.extras = ModelExtras {
        csv: schema,
        regularization: options.regularization,
        interactions: options.read.interactions,
    };
    Ok((model, choice))
}
