//! The common ending of an experiment: its markdown report and CSV written under the output
//! folder, and a line on stderr saying where.

use anyhow::Result;
use std::path::Path;

/// Writes `NAME.md` and `NAME.csv` under `out` and prints `wrote …/NAME.md` on stderr, followed
/// by the experiment's wall time in seconds when `seconds` is given.
pub fn write_md_csv(
    out: &Path,
    name: &str,
    md: &str,
    csv: &str,
    seconds: Option<f64>,
) -> Result<()> {
    let md_path = out.join(format!("{name}.md"));
    std::fs::write(&md_path, md)?;
    std::fs::write(out.join(format!("{name}.csv")), csv)?;
    match seconds {
        Some(s) => eprintln!("wrote {} ({s:.0} s)", md_path.display()),
        None => eprintln!("wrote {}", md_path.display()),
    }
    Ok(())
}
