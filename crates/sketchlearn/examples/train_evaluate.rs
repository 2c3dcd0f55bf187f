//! Train and evaluate on a LIBSVM file: progressive validation (each example is predicted, then
//! learned) on the first 200 rows of `data/heart.libsvm`, then a held-out evaluation of the
//! trained model on the remaining rows, after a save/load round trip through a model file.
//!
//! ```text
//! cargo run --release -p sketchlearn --example train_evaluate [-- path/to/file.libsvm]
//! ```

use sketchlearn::prelude::*;

/// Rows learned progressively; the rest are held out.
const TRAIN: usize = 200;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).unwrap_or_else(|| {
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/heart.libsvm").to_string()
    });
    let reader = LibsvmReader::open(&path, LibsvmOptions::default())?;
    let examples: Vec<Example> = reader.collect::<Result<_, _>>()?;
    let dim = examples
        .iter()
        .map(|ex| ex.row().max_index_plus_one())
        .max()
        .unwrap_or(0);
    let (train, test) = examples.split_at(TRAIN.min(examples.len()));
    println!(
        "{path}: {} rows, d = {dim}; {} learned, {} held out",
        examples.len(),
        train.len(),
        test.len()
    );

    // The default learner (the `auto` mixture of RFD-SON variants and AdaGrad), logistic loss.
    let config = LearnerConfig::default();
    let mut model = LinearModel::new(config.clone(), config.build(dim)?);
    let mut progressive_metrics = Metrics::new();
    let rows = train.iter().cloned().map(Ok::<_, ParseError>);
    model.examples_seen += progressive(
        &mut model.learner,
        rows,
        config.loss,
        &mut progressive_metrics,
        |_| {},
    )?;
    report("progressive", &progressive_metrics);

    // Save and load through the Learner trait: the loaded model predicts the same bits.
    let file = std::env::temp_dir().join(format!("train_evaluate-{}.skl", std::process::id()));
    Learner::save(&model, &file)?;
    let loaded = <LinearModel as Learner>::load(&file)?;
    std::fs::remove_file(&file)?;
    assert!(test
        .iter()
        .all(|ex| loaded.predict(ex.row()).to_bits() == model.predict(ex.row()).to_bits()));

    let mut held_out = Metrics::new();
    evaluate(
        &loaded.learner,
        test.iter().cloned().map(Ok::<_, ParseError>),
        config.loss,
        &mut held_out,
        |_| {},
    )?;
    report("held-out", &held_out);
    if let Some(ex) = test.first() {
        let p = loaded.predict_proba(ex.row()).unwrap_or(f64::NAN);
        println!(
            "first held-out row: label {:+}, P(+1 | x) = {p:.3}",
            ex.label
        );
    }
    println!("model: {} examples seen", loaded.examples_seen());
    Ok(())
}

fn report(name: &str, m: &Metrics) {
    println!(
        "{name:>12}: {} examples, error {:.4}, logloss {:.4}, AUC {:.4}",
        m.examples(),
        m.error_rate().unwrap_or(f64::NAN),
        m.mean_loss(),
        m.auc().unwrap_or(f64::NAN)
    );
}
