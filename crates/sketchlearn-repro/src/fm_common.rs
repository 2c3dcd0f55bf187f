//! Helpers of the FM experiments (`fm_movielens`, `fm_binary`): every measured configuration
//! runs as a child `sketchlearn fm --json` process, so that its wall time, CPU time and peak RSS
//! (`VmHWM`) are its own; River runs through `scripts/peers/river_fm.py`.

use anyhow::{bail, Context, Result};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};

/// A grid: `(setting label, fm arguments)` pairs.
pub type Grid = Vec<(String, Vec<String>)>;

/// One measured configuration.
#[derive(Clone, Debug)]
pub struct FmRun {
    /// Family label in the report (e.g. `SFTRL (Alg. 5)`).
    pub family: String,
    /// The varying hyper-parameters, e.g. `m=10 eta=0.015`.
    pub setting: String,
    /// Sketch size or rank, when it applies.
    pub m: Option<usize>,
    /// The `fm` arguments (without `--quiet --json` and the file).
    pub args: Vec<String>,
    /// The `fm --json` report.
    pub report: Value,
}

impl FmRun {
    /// A numeric field of the report (`None` when missing or null).
    pub fn num(&self, key: &str) -> Option<f64> {
        self.report.get(key).and_then(Value::as_f64)
    }

    /// The report's `fields` — `(key, decimals)` — formatted by [`fmt_opt`] and joined by
    /// `sep`: the measured cells of a CSV line (`","`) or of a markdown row (`" | "`).
    pub fn cells(&self, fields: &[(&str, usize)], sep: &str) -> String {
        fields
            .iter()
            .map(|&(key, digits)| fmt_opt(self.num(key), digits))
            .collect::<Vec<_>>()
            .join(sep)
    }

    /// One CSV line: `label`, the run's family, setting and m, then its `fields` (as
    /// [`FmRun::cells`]).
    pub fn csv_line(
        &self,
        csv: &mut String,
        label: &str,
        fields: &[(&str, usize)],
    ) -> std::fmt::Result {
        use std::fmt::Write as _;
        writeln!(
            csv,
            "{label},\"{}\",\"{}\",{},{}",
            self.family,
            self.setting,
            self.m.map_or(String::new(), |m| m.to_string()),
            self.cells(fields, ",")
        )
    }

    /// The progressive learning curve `(examples, mean loss)`.
    pub fn curve(&self) -> Vec<(f64, f64)> {
        self.report
            .get("progress")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|p| {
                        let p = p.as_array()?;
                        Some((p.first()?.as_f64()?, p.get(1)?.as_f64()?))
                    })
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Runs `sketchlearn fm --quiet --json ARGS FILE` as a child process and parses its report.
pub fn run_fm(args: &[String], file: &Path) -> Result<Value> {
    let exe = crate::paths::cli_exe()?;
    let out = Command::new(&exe)
        .arg("fm")
        .args(["--quiet", "--json"])
        .args(args)
        .arg(file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .with_context(|| format!("running {}", exe.display()))?;
    if !out.status.success() {
        bail!(
            "sketchlearn fm {} {} failed: {}",
            args.join(" "),
            file.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    serde_json::from_slice(&out.stdout).context("parsing the fm --json report")
}

/// Runs every `(setting, args)` of a grid and returns them all; the selected one is the lowest
/// `select_key` (a training-stream metric: the test part never chooses).
pub fn run_grid(
    family: &str,
    m: Option<usize>,
    grid: &[(String, Vec<String>)],
    file: &Path,
    select_key: &str,
) -> Result<(Vec<FmRun>, usize)> {
    let mut runs = Vec::new();
    for (setting, args) in grid {
        let report = run_fm(args, file)?;
        let run = FmRun {
            family: family.to_string(),
            setting: setting.clone(),
            m,
            args: args.clone(),
            report,
        };
        eprintln!(
            "  {family:<18} {setting:<44} {select_key} {:.4}  test {}  cpu {:.2}s",
            run.num(select_key).unwrap_or(f64::NAN),
            fmt_opt(run.num("test_rmse").or(run.num("test_auc")), 4),
            run.num("cpu_seconds").unwrap_or(f64::NAN)
        );
        runs.push(run);
    }
    let best = runs
        .iter()
        .enumerate()
        .min_by(|a, b| {
            let ka = a.1.num(select_key).unwrap_or(f64::INFINITY);
            let kb = b.1.num(select_key).unwrap_or(f64::INFINITY);
            ka.total_cmp(&kb)
        })
        .map(|(i, _)| i)
        .unwrap_or(0);
    Ok((runs, best))
}

/// Runs one configuration (`setting`, `args`); the run joins `all`.
pub fn run_one(
    family: &str,
    m: Option<usize>,
    setting: String,
    args: Vec<String>,
    file: &Path,
    key: &str,
    all: &mut Vec<FmRun>,
) -> Result<FmRun> {
    run_best(family, m, &[(setting, args)], file, key, all)
}

/// Runs a grid (see [`run_grid`]); every run joins `all`; the selected run.
pub fn run_best(
    family: &str,
    m: Option<usize>,
    grid: &[(String, Vec<String>)],
    file: &Path,
    key: &str,
    all: &mut Vec<FmRun>,
) -> Result<FmRun> {
    let (runs, best) = run_grid(family, m, grid, file, key)?;
    let chosen = runs[best].clone();
    all.extend(runs);
    Ok(chosen)
}

/// `--algo ALGO --eta η` for each η of `etas`, plus the fixed `extra` flags, each completed by
/// `with`; labelled `eta=η` followed by the extra flags as `name=value`.
pub fn algo_grid(
    algo: &str,
    etas: &[f64],
    extra: &[(&str, String)],
    with: &impl Fn(Vec<String>) -> Vec<String>,
) -> Grid {
    etas.iter()
        .map(|&e| {
            let mut pairs = vec![("--algo", algo.to_string()), ("--eta", e.to_string())];
            pairs.extend(extra.iter().cloned());
            let label = std::iter::once(format!("eta={e}"))
                .chain(
                    extra
                        .iter()
                        .map(|(k, v)| format!("{}={v}", k.trim_start_matches("--"))),
                )
                .collect::<Vec<_>>()
                .join(" ");
            (label, with(args(&pairs)))
        })
        .collect()
}

/// `x` as a `String` (for flag values).
pub fn s(x: impl ToString) -> String {
    x.to_string()
}

/// `base` followed by a configuration's own flags: the `with` of a data set.
pub fn with_base(base: Vec<String>) -> impl Fn(Vec<String>) -> Vec<String> {
    move |extra| {
        let mut v = base.clone();
        v.extend(extra);
        v
    }
}

/// A report's start: the markdown title and reproduce line, and the CSV with its header.
pub fn report_start(title: &str, csv_header: &str) -> Result<(String, String)> {
    use std::fmt::Write as _;
    let mut md = String::new();
    writeln!(md, "# {title}\n")?;
    writeln!(md, "Reproduce: `{}`\n", crate::command_line())?;
    Ok((md, format!("{csv_header}\n")))
}

/// The grid of split SFTRL at sketch size 10 over `etas × pairwise_etas`, each configuration's
/// arguments completed by `with` (the data set's common flags).
pub fn split_grid(
    etas: &[f64],
    pairwise_etas: &[f64],
    with: impl Fn(Vec<String>) -> Vec<String>,
) -> Grid {
    let mut grid = Vec::new();
    for &e in etas {
        for &p in pairwise_etas {
            grid.push((
                format!("m=10 eta={e} eta_pairwise={p}"),
                with(args(&[
                    ("--algo", "sftrl-split".to_string()),
                    ("--size", "10".to_string()),
                    ("--eta", e.to_string()),
                    ("--eta-pairwise", p.to_string()),
                ])),
            ));
        }
    }
    grid
}

/// SFTRL per sketch size: for each m of `sizes`, the doubling variant (Alg. 5) over the η grid
/// `etas`, then the per-row variant (Alg. 4) at the η `eta_of` reads from the chosen Alg. 5 run.
/// Per m: (m, Alg. 5 chosen, Alg. 4 at the same η); every run joins `all`.
pub fn sftrl_by_m(
    sizes: &[usize],
    etas: &[f64],
    eta_of: impl Fn(&FmRun) -> String,
    file: &Path,
    key: &str,
    with: &impl Fn(Vec<String>) -> Vec<String>,
    all: &mut Vec<FmRun>,
) -> Result<Vec<(usize, FmRun, FmRun)>> {
    let mut by_m = Vec::new();
    for &m in sizes {
        let grid: Grid = etas
            .iter()
            .map(|&eta| {
                (
                    format!("m={m} eta={eta}"),
                    with(args(&[
                        ("--algo", "sftrl-fast".to_string()),
                        ("--size", m.to_string()),
                        ("--eta", eta.to_string()),
                    ])),
                )
            })
            .collect();
        let fast = run_best("SFTRL (Alg. 5)", Some(m), &grid, file, key, all)?;
        let eta = eta_of(&fast);
        let per_row = with(args(&[
            ("--algo", "sftrl".to_string()),
            ("--size", m.to_string()),
            ("--eta", eta.clone()),
        ]));
        let setting = format!("m={m} eta={eta}");
        let slow = run_one("SFTRL (Alg. 4)", Some(m), setting, per_row, file, key, all)?;
        by_m.push((m, fast, slow));
    }
    Ok(by_m)
}
/// `--flag value` pairs as owned strings.
pub fn args(pairs: &[(&str, String)]) -> Vec<String> {
    let mut v = Vec::new();
    for (k, val) in pairs {
        v.push(k.to_string());
        if !val.is_empty() {
            v.push(val.clone());
        }
    }
    v
}

/// `x` with `digits` decimals, `-` for none.
pub fn fmt_opt(x: Option<f64>, digits: usize) -> String {
    match x {
        Some(v) if v.is_finite() => format!("{v:.digits$}"),
        _ => "-".into(),
    }
}

/// Bytes as `12.3 MB` / `456 kB`.
pub fn fmt_bytes(b: Option<f64>) -> String {
    match b {
        Some(b) if b >= 1e6 => format!("{:.1} MB", b / 1e6),
        Some(b) => format!("{:.0} kB", b / 1e3),
        None => "-".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cells and the CSV line keep the report's formatting: `fmt_opt`'s decimals, `-` for
    /// a missing or null field, an empty m.
    #[test]
    fn cells_and_csv_line_format_as_the_tables_did() {
        let run = FmRun {
            family: "SFTRL (Alg. 5)".into(),
            setting: "m=10 eta=0.015".into(),
            m: None,
            args: Vec::new(),
            report: serde_json::json!({"test_rmse": 0.94715649, "seconds": 2.0, "dim": null}),
        };
        let fields = [("test_rmse", 4), ("seconds", 3), ("dim", 0), ("missing", 2)];
        assert_eq!(run.cells(&fields, " | "), "0.9472 | 2.000 | - | -");
        let mut csv = String::new();
        run.csv_line(&mut csv, "ml", &fields[..2]).unwrap();
        assert_eq!(
            csv,
            "ml,\"SFTRL (Alg. 5)\",\"m=10 eta=0.015\",,0.9472,2.000\n"
        );
    }
}
