//! The label map of a run (issue 24, items 1 and 5): a new classifier's classes come from a
//! scan of the input's labels as written (numbers, or a CSV column's names) when it can be read
//! again, from `--classes` / `--oaa`, or — a binary learner on a stream read once — from the
//! `−1/+1` or `0/1` convention it uses; a resumed or evaluated model uses the classes it stored
//! (`−1/+1` for files of format 4 and 5). Regression (`--loss squared`) keeps its labels. The
//! same map serves every format ([`crate::data::labeled`]).

use super::prescan::prescan;
use super::{Input, ReadOptions, RunError, Warning};
use crate::data::{ClassScan, ClassSpec, LabelMap, ParseError, ParseErrorKind, Schema, Task};
use crate::labels::{Classes, LabelError};
use crate::linear::InputProfile;
use crate::loss::Loss;

/// The task of a binary learner with `loss`.
fn task(loss: Loss) -> Task {
    if loss.is_classification() {
        Task::Binary
    } else {
        Task::Regression
    }
}

/// The label map of a run of a new learner with `loss` over `input` (CSV: read through
/// `schema`), classes given by `spec`, and the input's profile (`dim` if given): one walk of
/// the input collects both ([`prescan`]; the labels as written — numbers, or a CSV column's
/// names — when the loss classifies and the input can be re-read).
pub(crate) fn new_map(
    input: &mut Input,
    read: &ReadOptions,
    bits: u32,
    schema: Option<&Schema>,
    spec: &ClassSpec,
    loss: Loss,
    dim: Option<usize>,
) -> Result<(LabelMap, InputProfile), RunError> {
    let task = task(loss);
    let name = input.name().to_owned();
    let found = prescan(input, read, bits, schema, dim, task == Task::Binary)?;
    let map = settle_scanned(spec, task, found.scan.as_ref(), &name)?;
    note_case_twins(input, spec, found.scan.as_ref());
    Ok((map, found.profile))
}

/// The classes of a new multiclass learner over `input` and the input's profile (one walk, as
/// [`new_map`]).
pub(crate) fn new_classes(
    input: &mut Input,
    read: &ReadOptions,
    bits: u32,
    schema: Option<&Schema>,
    spec: &ClassSpec,
    dim: Option<usize>,
) -> Result<(Classes, InputProfile), RunError> {
    let name = input.name().to_owned();
    let found = prescan(input, read, bits, schema, dim, true)?;
    let map = settle_scanned(spec, Task::Multiclass, found.scan.as_ref(), &name)?;
    note_case_twins(input, spec, found.scan.as_ref());
    let classes = map.classes().expect("a multiclass map has classes");
    Ok((classes, found.profile))
}

/// Warns ([`Warning::ClassesDifferByCase`]) when classes found in the input (not declared)
/// include two names that differ only by case: they are learned as two classes.
fn note_case_twins(input: &mut Input, spec: &ClassSpec, scan: Option<&ClassScan>) {
    if !matches!(spec, ClassSpec::FromInput) {
        return;
    }
    if let Some((first, second)) = scan.and_then(ClassScan::case_twins) {
        input.note_scan([Warning::ClassesDifferByCase { first, second }]);
    }
}

/// [`LabelMap::settle`] on a scan; an empty scan is an empty input.
fn settle_scanned(
    spec: &ClassSpec,
    task: Task,
    scan: Option<&ClassScan>,
    name: &str,
) -> Result<LabelMap, RunError> {
    if scan.is_some_and(ClassScan::is_empty) {
        return Err(RunError::options(super::error::no_examples(name)));
    }
    Ok(LabelMap::settle(spec, task, scan, name)?)
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
