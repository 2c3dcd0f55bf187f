//! `train --keep-names`: the names of hashed VW features kept in the model (like VW's
//! `--invert_hash`), for `inspect`. The table and its caps are the library's
//! ([`sketchlearn::data::FeatureNames`]); this reads the training file once more through the
//! same VW reader to fill it, extending a resumed model's table.
use anyhow::{bail, Result};
use sketchlearn::data::{Format, VwOptions, VwReader};
use sketchlearn::linear::ModelExtras;

/// Refuses `--keep-names` where there are no names to keep (before training).
pub fn check(keep: bool, format: Format, file: &str) -> Result<()> {
    if !keep {
        return Ok(());
    }
    if format != Format::Vw {
        bail!(
            "--keep-names keeps the names of hashed VW features; {file} is read as {} \
             (LIBSVM has no names; a CSV model keeps its column names without the flag)",
            format.name()
        );
    }
    if file == "-" {
        bail!("--keep-names reads the training file a second time: give a file, not - (stdin)");
    }
    Ok(())
}

/// Records the names of `file`'s features (hashed with `bits` bits and the model's
/// interactions) into `extras`; a note on stderr when the table is full.
pub fn record(extras: &mut ModelExtras, file: &str, bits: u32, quiet: bool) -> Result<()> {
    let names = std::mem::take(&mut extras.feature_names);
    let mut reader = VwReader::open(file, VwOptions { bits })?
        .with_interactions(extras.interactions)
        .with_names(names);
    let mut ex = sketchlearn::Example::default();
    while reader.read_into(&mut ex)? {}
    extras.feature_names = reader.take_names().unwrap_or_default();
    if extras.feature_names.is_full() && !quiet {
        eprintln!(
            "note: --keep-names kept the first {} feature names (the cap); later names are not kept",
            sketchlearn::data::feature_names::MAX_NAMES
        );
    }
    Ok(())
}
