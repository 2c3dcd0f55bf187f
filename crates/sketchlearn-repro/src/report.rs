//! The common ending of an experiment: its markdown report and CSV written under the output
//! folder, and a line on stderr saying where.

use anyhow::Result;
use std::fmt::Write as _;
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

/// The report's heading `# TITLE` and the line that reproduces it; `peers` names what needs the
/// peers' virtual environment (`"VW needs"`, `"peers need"`).
pub fn title_and_command(md: &mut String, title: &str, peers: &str) -> std::fmt::Result {
    writeln!(md, "# {title}\n")?;
    writeln!(
        md,
        "Reproduce: `{}` (from the repository root; {peers} `.venv-peers`, see \
         `scripts/peers/README.md`).\n",
        crate::command_line()
    )
}

/// A markdown table's header row `header` (`| a | b |`) and the rule under it (`|---|---|`,
/// one `---` per column).
pub fn table_header(md: &mut String, header: &str) -> std::fmt::Result {
    let columns = header.matches(" | ").count() + 1;
    writeln!(md, "{header}")?;
    writeln!(md, "|{}", "---|".repeat(columns))
}

#[cfg(test)]
mod tests {
    use super::table_header;

    #[test]
    fn a_table_header_has_one_rule_cell_per_column() {
        let mut md = String::new();
        table_header(&mut md, "| m | FD (Alg.1) | seconds (FD, RFD) |").unwrap();
        assert_eq!(
            md,
            "| m | FD (Alg.1) | seconds (FD, RFD) |\n|---|---|---|\n"
        );
    }
}
