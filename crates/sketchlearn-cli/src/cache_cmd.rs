//! `sketchlearn cache`: parse an input once into a binary cache ([`sketchlearn::run::write_cache`]),
//! so that later `train -c` / `test -c` runs with the same file and read flags read the cache.

use crate::input_args::InputArgs;
use anyhow::{bail, Result};
use sketchlearn::run;

/// Arguments of `sketchlearn cache`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Example: sketchlearn cache -c r8.cache r8.vw && sketchlearn train -c r8.cache --passes 3 r8.vw"
)]
pub struct CacheArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// `--quiet`: nothing on stderr but warnings and errors (this command writes no notes; its
    /// one line goes to stdout).
    #[command(flatten)]
    pub quiet: crate::quiet::Quiet,
}

pub fn run(args: &CacheArgs) -> Result<()> {
    args.input.check()?;
    let Some(path) = args.input.cache.as_deref() else {
        bail!(
            "give the cache file: sketchlearn cache -c FILE {}",
            args.input.file
        );
    };
    crate::paths::check_cache(Some(path), &[&args.input.file])?;
    let outcome = run::write_cache(args.input.input(), &args.input.read_options()?)?;
    for w in &outcome.warnings {
        let advice = run::warning_advice(w, None);
        eprintln!("{}", crate::train::warning_line(w, advice.as_deref()));
    }
    let state = if outcome.fresh {
        "up to date"
    } else {
        "written"
    };
    println!(
        "cache {}: {} examples, {state}",
        path.display(),
        outcome.examples
    );
    Ok(())
}
