//! Output paths checked before any work: fail early, never destroy.
//!
//! Every subcommand that writes a file (`-f` model, `-p` predictions) calls [`check_output`]
//! before reading its data: the parent directory must exist and be writable, the path must not
//! be a directory, a device or a FIFO (`-` is standard output where it applies), and it must
//! not be one of the inputs (compared by device and inode, so `./x`, `x` and a hard link are
//! the same file), and an existing file must hold what the flag writes ([`check_replaceable`]).

use anyhow::{bail, Context, Result};
use std::fs;
use std::path::Path;
use std::sync::OnceLock;

use sketchlearn::run::file_holds;
pub use sketchlearn::run::Written;

/// `--overwrite` (a global flag), set once by `main`.
pub static OVERWRITE: OnceLock<bool> = OnceLock::new();

/// What the output is, in messages (`predictions file`, `model file`).
pub fn check_output(path: &str, what: &str, inputs: &[&str]) -> Result<()> {
    if path == "-" {
        return Ok(());
    }
    let p = Path::new(path);
    if let Ok(meta) = fs::metadata(p) {
        let kind = meta.file_type();
        if kind.is_dir() {
            bail!("the {what} {path} is a directory");
        }
        if !kind.is_file() {
            bail!("the {what} {path} is not a regular file (a device, FIFO or socket)");
        }
        for input in inputs.iter().filter(|i| **i != "-") {
            if same_file(p, Path::new(input)) {
                bail!(
                    "the {what} {path} is the input file {input}: writing it would destroy the \
                     data (give another path)"
                );
            }
        }
        if meta.permissions().readonly() {
            bail!("the {what} {path} is read-only");
        }
    }
    let parent = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let dir = fs::metadata(parent)
        .with_context(|| format!("the directory of the {what} {path} does not exist"))?;
    if !dir.is_dir() {
        bail!("the {what} {path}: {} is not a directory", parent.display());
    }
    // Writable: create and remove a probe file (permissions alone miss read-only mounts).
    let probe = parent.join(format!(".sketchlearn-probe-{}", std::process::id()));
    fs::File::create(&probe).with_context(|| {
        format!("cannot write the {what} {path}: its directory is not writable")
    })?;
    fs::remove_file(&probe).ok();
    Ok(())
}

/// A `--cache` path, if given, checked as an output (a file we may write beside its inputs;
/// that it holds a cache and nothing else is the library's check).
pub fn check_cache(cache: Option<&Path>, inputs: &[&str]) -> Result<()> {
    match cache.and_then(Path::to_str) {
        Some(path) => check_output(path, "cache file", inputs),
        None => Ok(()),
    }
}

/// True when both paths exist and are the same file (device and inode on Unix).
fn same_file(a: &Path, b: &Path) -> bool {
    match (fs::metadata(a), fs::metadata(b)) {
        (Ok(ma), Ok(mb)) => {
            #[cfg(unix)]
            {
                use std::os::unix::fs::MetadataExt;
                ma.dev() == mb.dev() && ma.ino() == mb.ino()
            }
            #[cfg(not(unix))]
            {
                let _ = (ma, mb);
                matches!((fs::canonicalize(a), fs::canonicalize(b)), (Ok(x), Ok(y)) if x == y)
            }
        }
        _ => false,
    }
}

/// The checks of a learning command: the model (`-f`) must not be the data (it may be the
/// model it resumes from, `-i`, as in VW); the predictions (`-p`) must be neither the data nor
/// either model.
pub fn check_learning_outputs(
    data: &[&str],
    initial_model: Option<&str>,
    final_model: Option<&str>,
    predictions: Option<&str>,
    written: Written,
) -> Result<()> {
    if let (Some(p), Some(f)) = (predictions, final_model) {
        if p != "-" && (p == f || same_file(Path::new(p), Path::new(f))) {
            bail!("the model and the predictions would both be written to {p}");
        }
    }
    if let Some(f) = final_model {
        check_output(f, "model file", data)?;
        check_replaceable(f, "-f", "a sketchlearn model", Written::Model)?;
    }
    if let Some(p) = predictions {
        let mut inputs = data.to_vec();
        inputs.extend(initial_model);
        check_output(p, "predictions file", &inputs)?;
        check_replaceable(p, "-p", "predictions", written)?;
    }
    Ok(())
}

/// A non-empty file at an output path that is not what its flag writes (`-f data.libsvm` for
/// `-i`, `-p train.csv`) is refused and left alone unless `--overwrite` (VW replaces it).
fn check_replaceable(path: &str, flag: &str, held: &str, written: Written) -> Result<()> {
    if path == "-" || OVERWRITE.get() == Some(&true) {
        return Ok(());
    }
    let holds = file_holds(Path::new(path), written).with_context(|| format!("reading {path}"))?;
    if holds == Some(false) {
        bail!(
            "{flag} {path}: the file exists and is not {held}, so it is left alone; give {flag} a new \
             path, remove the file, or add --overwrite to replace it"
        );
    }
    Ok(())
}

/// A data file that is empty, a model, binary or not UTF-8 is an error that says so, before any
/// learner is built ([`sketchlearn::data::text_input::check_has_examples`]).
pub fn check_not_empty(path: &str) -> Result<()> {
    Ok(sketchlearn::data::text_input::check_has_examples(path)?)
}
