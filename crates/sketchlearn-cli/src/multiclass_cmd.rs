//! `train --multiclass` / `--oaa K` and `test`/`predict` of a multiclass model (issue 24,
//! item 2): the library's multiclass run ([`run::train_multiclass`]) with a progress table on
//! stderr, `-p` lines (the predicted label; with `--probabilities` one probability per class),
//! and a JSON summary with the confusion matrix.

use crate::prediction_output::PredictionFormat;
use crate::train::{TestArgs, TrainArgs};
use anyhow::{Context, Result};
use sketchlearn::data::VwOptions;
use sketchlearn::eval::multiclass::{
    MulticlassMetrics, MulticlassPassReport, MulticlassProgress, MulticlassRow,
};
use sketchlearn::labels::Classes;
use sketchlearn::linear::multiclass::MulticlassModel;
use sketchlearn::linear::Regularization;
use sketchlearn::run::{self, Input, MulticlassReport, MulticlassStart, TrainOptions, Warning};
use sketchlearn::Example;
use std::io::Write;

/// The progress table and the `-p` file of a multiclass run, set up when the run starts (the
/// classes settled, the input checked): the file is created only then.
struct Table<'a> {
    quiet: bool,
    path: Option<&'a str>,
    raw: bool,
    probabilities: bool,
    classes: Option<Classes>,
    format: Option<PredictionFormat>,
    out: Option<crate::prediction_sink::PredictionSink>,
    error: Option<std::io::Error>,
}

impl<'a> Table<'a> {
    fn new(quiet: bool, path: Option<&'a str>, raw: bool, probabilities: bool) -> Self {
        Table {
            quiet,
            path,
            raw,
            probabilities,
            classes: None,
            format: None,
            out: None,
            error: None,
        }
    }

    fn finish(mut self) -> Result<()> {
        if let Some(e) = self.error.take() {
            return Err(anyhow::Error::new(e).context("writing predictions"));
        }
        if let Some(out) = self.out.take() {
            out.finish().context("writing predictions")?;
        }
        Ok(())
    }
}

impl MulticlassProgress for Table<'_> {
    fn started(
        &mut self,
        classes: &Classes,
        learner: &str,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let classes = classes.clone();
        if let Some(p) = self.path {
            self.out = Some(crate::prediction_sink::PredictionSink::create(p)?);
        }
        if !self.quiet {
            eprintln!("learner: {learner}");
            eprintln!(
                "{:<12} {:<12} {:>12} {:>12} {:>12} {:>12}",
                "error", "since last", "examples", "log loss", "label", "predicted"
            );
        }
        self.format = Some(PredictionFormat::multiclass(
            classes.clone(),
            self.raw,
            self.probabilities,
        ));
        self.classes = Some(classes);
        Ok(())
    }
    fn schema(&mut self, schema: &sketchlearn::data::Schema, classes: &Classes) {
        if !self.quiet {
            let line = sketchlearn::run::describe_schema(schema, Some(classes), true);
            eprintln!("{line}");
        }
    }
    fn row(&mut self, r: &MulticlassRow) {
        if let (false, Some(c)) = (self.quiet, &self.classes) {
            let l = c.labels();
            eprintln!(
                "{:<12.6} {:<12.6} {:>12} {:>12.6} {:>12} {:>12}",
                r.error,
                r.since_last_error,
                r.examples,
                r.log_loss,
                l[r.class].to_string(),
                l[r.predicted].to_string()
            );
        }
    }
    fn pass_done(&mut self, r: &MulticlassPassReport<'_>) {
        if !self.quiet {
            let numbers = |m: &MulticlassMetrics| (m.log_loss(), m.error_rate());
            if let Some(line) = crate::train::pass_line(r, "log loss", numbers) {
                eprintln!("{line}");
            }
        }
    }
    fn warning(&mut self, warning: &Warning) {
        let advice = sketchlearn::run::warning_advice(warning, None);
        eprintln!("{}", crate::train::warning_line(warning, advice.as_deref()));
    }
    fn prediction(&mut self, _ex: &Example, p: &[f64]) {
        if let (Some(out), Some(f)) = (self.out.as_mut(), &self.format) {
            if let Err(e) = writeln!(out, "{}", f.multiclass_line(p)) {
                self.out = None;
                self.error.get_or_insert(e);
            }
        }
    }
}

fn print_text(r: &MulticlassReport, what: &str) {
    eprintln!();
    eprintln!("classes           {}", r.classes.join(","));
    eprintln!("examples          {}", r.examples);
    if let Some(e) = r.progressive_error.or(r.error) {
        eprintln!("{what:<17} {e:.6} (s.e. {:.6})", r.error_se);
    }
    eprintln!("log loss          {:.6}", r.multiclass_log_loss);
    for (name, m) in [("holdout", &r.holdout), ("test", &r.test)] {
        if let Some(m) = m {
            eprintln!(
                "{name:<17} log loss {:.6}, error {:.6} ({} examples)",
                m.multiclass_log_loss,
                m.error.unwrap_or(f64::NAN),
                m.examples
            );
        }
    }
    eprintln!("seconds           {:.3}", r.seconds);
}

/// `train` of a multiclass model: new (`--multiclass`, `--oaa K`, `--reduction`) or resumed.
pub fn train(
    args: &TrainArgs,
    resumed: Option<MulticlassModel>,
    input: sketchlearn::data::InputSpec,
) -> Result<()> {
    let start = match resumed {
        Some(m) => {
            if let Some(list) = &args.class.classes {
                let c = Classes::parse_list(list).map_err(|e| anyhow::anyhow!("--classes: {e}"))?;
                if c != m.classes {
                    anyhow::bail!(
                        "--classes {list} disagrees with the model's classes {}",
                        m.classes.to_list()
                    );
                }
            }
            MulticlassStart::Resume(m)
        }
        None => {
            let member = args.learner.config(args.seed)?;
            MulticlassStart::New(
                args.class
                    .multiclass_config(member, args.learner.softmax_given())?,
                args.class.spec()?,
            )
        }
    };
    if args.retire.is_some() {
        anyhow::bail!(sketchlearn::linear::multiclass_refuses_retire("--retire"));
    }
    let options = TrainOptions {
        read: args.input.read_options()?,
        passes: args.eval.passes,
        dim: args.input.dim,
        regularization: match start {
            MulticlassStart::Resume(_) => Regularization::default(),
            MulticlassStart::New(..) => args.learner.regularization(),
        },
        evaluation: args.eval.evaluation(args.seed),
        retirement: None,
    };
    let quiet = args.quiet.quiet;
    let mut table = Table::new(
        quiet,
        args.predictions.as_deref(),
        args.class.raw,
        args.class.probabilities,
    );
    let test = args.eval.test.as_deref().map(Input::path);
    let data = args.input.input();
    let mut outcome = run::train_multiclass_and_test(data, test, start, &options, &mut table)?;
    table.finish()?;
    let model = &mut outcome.model;
    let bits = model
        .input
        .get_or_insert(input)
        .bits
        .unwrap_or(VwOptions::default().bits);
    if args.keep_names {
        crate::keep_names::record(&mut model.extras, &args.input.file, bits, quiet)?;
    }
    let r = MulticlassReport::of_training(&outcome);
    if !quiet {
        print_text(&r, "progressive error");
        if outcome.best_pass < outcome.passes {
            eprintln!(
                "early stop        the model of pass {} (best held-out loss) of {} passes run",
                outcome.best_pass, outcome.passes
            );
        }
    }
    if let Some(path) = &args.final_model {
        outcome.model.save(path)?;
    }
    if args.json {
        println!("{}", serde_json::to_string(&r)?);
    }
    Ok(())
}

/// `test` of a multiclass model on `file` (read as `read`; CSV through the model's columns).
pub fn test(
    args: &TestArgs,
    model: &MulticlassModel,
    read: sketchlearn::run::ReadOptions,
) -> Result<()> {
    let mut table = Table::new(
        true,
        args.score.predictions.as_deref(),
        args.score.raw,
        args.score.probabilities,
    );
    let t = std::time::Instant::now();
    let (metrics, _) = run::evaluate_multiclass_input(args.input(), model, &read, &mut table)?;
    table.finish()?;
    let r = MulticlassReport::of_evaluation(model, &metrics, t.elapsed().as_secs_f64());
    if args.json {
        println!("{}", serde_json::to_string(&r)?);
    } else {
        println!("learner   {}", r.learner);
        println!("classes   {}", r.classes.join(","));
        println!("examples  {}", r.examples);
        if let Some(e) = r.error {
            println!("error     {e:.6}");
        }
        println!("log loss  {:.6}", r.multiclass_log_loss);
        println!("seconds   {:.3}", r.seconds);
    }
    Ok(())
}
