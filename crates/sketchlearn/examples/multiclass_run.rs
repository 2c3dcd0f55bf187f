//! One progressive pass of the default multiclass learner over a LIBSVM file, through the
//! library pieces the CLI uses: the class scan, the dimension / sparsity pre-scan, the
//! per-member representation rule ([`MulticlassConfig::for_input`]), the label-mapping
//! adapter and the progressive loop. Prints one JSON line (used by `scripts/bench_multiclass.py`
//! until `sketchlearn train --multiclass` lands).
//!
//! ```text
//! cargo run --release -p sketchlearn --example multiclass_run -- ../shared/data/dna.libsvm [oaa|softmax]
//! ```
//!
//! `seconds` times the learning pass (parsing included); the scans before it are `scan_seconds`.

use sketchlearn::data::{scan_classes, ExampleSource, LabelMap, Labeled};
use sketchlearn::eval::multiclass::{progressive_multiclass, MulticlassMetrics};
use sketchlearn::linear::multiclass::{MulticlassConfig, MulticlassModel};
use sketchlearn::{Example, LibsvmOptions, LibsvmReader};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args
        .first()
        .ok_or("usage: multiclass_run FILE [oaa|softmax]")?;
    let reduction = args.get(1).map_or("oaa", String::as_str).parse()?;
    let open = || LibsvmReader::open(path, LibsvmOptions::default());

    let t0 = Instant::now();
    let mut reader = open()?;
    let scan = scan_classes(&mut reader, path)?;
    let classes = scan.classes()?;
    // The scan read every example: the dimension and the sparsity come with it.
    let (dim, lines) = (reader.max_index_plus_one(), reader.line());
    let mut nnz = 0usize;
    let mut ex = Example::default();
    let mut again = open()?;
    while again.read_into(&mut ex)? {
        nnz += ex.indices.len();
    }
    let avg_nnz = nnz as f64 / lines.max(1) as f64;
    let scan_seconds = t0.elapsed().as_secs_f64();

    let config = MulticlassConfig {
        reduction,
        ..MulticlassConfig::default()
    }
    .for_input(dim, false, Some(avg_nnz));
    let mut model = MulticlassModel::build(config, classes.clone(), dim)?;
    let mut source = Labeled::new(open()?, LabelMap::Multiclass(classes.clone()), path.clone());
    let mut metrics = MulticlassMetrics::new(classes.len());
    let t1 = Instant::now();
    let pass = progressive_multiclass(
        &mut model.learner,
        |ex| source.read_into(ex),
        &mut metrics,
        &mut (),
    )?;
    let seconds = t1.elapsed().as_secs_f64();
    let s = metrics.summary();
    println!(
        "{{\"file\":{path:?},\"learner\":{:?},\"classes\":{:?},\"examples\":{},\"dim\":{dim},\
         \"progressive_error\":{},\"error_se\":{},\"multiclass_log_loss\":{},\"refused\":{},\
         \"seconds\":{seconds},\"scan_seconds\":{scan_seconds},\"examples_per_second\":{}}}",
        model.config.describe(),
        classes.to_list(),
        pass.examples,
        s.error,
        s.error_se,
        s.log_loss,
        pass.refused,
        pass.examples as f64 / seconds
    );
    Ok(())
}
