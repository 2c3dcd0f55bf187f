//! The label map of a binary or regression run (issue 24, item 1): a new classifier's classes
//! come from a scan of the input when it can be read again, from `--classes NEG,POS`, or — on a
//! stream read once — from the `−1/+1` or `0/1` convention it uses; a resumed or evaluated
//! model uses the classes it stored (`−1/+1` for files of format 4 and 5). Regression
//! (`--loss squared`) keeps its labels.

use super::{Input, ReadOptions, RunError};
use crate::data::{scan_classes, ClassSpec, LabelMap, ParseError, ParseErrorKind, Task};
use crate::labels::{Classes, LabelError};
use crate::loss::Loss;

/// The task of a binary learner with `loss`.
fn task(loss: Loss) -> Task {
    if loss.is_classification() {
        Task::Binary
    } else {
        Task::Regression
    }
}

/// The label map of a run of a new learner with `loss` over `input`, classes given by `spec`
/// (the input is scanned first when it can be re-read and the loss classifies).
pub(crate) fn new_map(
    input: &mut Input,
    read: &ReadOptions,
    bits: u32,
    spec: &ClassSpec,
    loss: Loss,
) -> Result<LabelMap, RunError> {
    let task = task(loss);
    let name = input.name().to_owned();
    let scan = if task == Task::Binary && input.rereadable() {
        let mut reader = input.open(read, bits)?;
        let scan = scan_classes(&mut reader, &name)?;
        if scan.is_empty() {
            return Err(RunError::options(format!(
                "no examples in {name}: the input is empty"
            )));
        }
        Some(scan)
    } else {
        None
    };
    Ok(LabelMap::settle(spec, task, scan.as_ref(), &name)?)
}

/// The label map of a stored model with `loss` and `classes` (`None`: `−1/+1`); a declared
/// list (`spec`) must equal the model's.
pub(crate) fn model_map(
    classes: Option<&Classes>,
    loss: Loss,
    spec: &ClassSpec,
    source_name: &str,
) -> Result<LabelMap, RunError> {
    if task(loss) == Task::Regression {
        return Ok(LabelMap::settle(spec, Task::Regression, None, source_name)?);
    }
    let classes = classes.cloned().unwrap_or_else(Classes::plus_minus_one);
    match spec {
        ClassSpec::Declared(c) if *c != classes => Err(RunError::options(format!(
            "{source_name}: --classes {} disagrees with the model's classes {}",
            c.to_list(),
            classes.to_list()
        ))),
        ClassSpec::Oaa(_) => Err(RunError::options(
            "--oaa is for a multiclass model; this model is binary",
        )),
        _ => Ok(LabelMap::Binary(classes)),
    }
}

/// A label that is not one of a stored model's classes: the hint says so (instead of the
/// training-time advice about `--multiclass`).
pub(crate) fn for_model(mut e: ParseError) -> ParseError {
    if let ParseErrorKind::Label(LabelError::Unknown { hint, .. }) = &mut e.kind {
        *hint = "the model was trained on these classes: the data must use the same labels".into();
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linear::{LearnerConfig, LinearModel};
    use crate::run::{evaluate, ReadOptions, Silent};

    #[test]
    fn an_unseen_class_at_test_names_the_models_classes() {
        let config = LearnerConfig::default();
        let mut model = LinearModel::new(config.clone(), config.build(2).unwrap());
        model.classes = Some(Classes::parse_list("2,4").unwrap());
        let input = Input::bytes("t.libsvm", b"4 1:1\n2 2:1\n3 1:1\n".to_vec());
        let e = evaluate(input, &model, &ReadOptions::default(), &mut Silent)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("t.libsvm:3:1: label 3 is not one of the classes 2,4")
                && e.contains("trained on these classes"),
            "{e}"
        );
    }
}
