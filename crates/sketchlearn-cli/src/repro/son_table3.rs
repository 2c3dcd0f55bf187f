//! SON paper (Luo et al. 2016) §5.2 / Appendix Table 3: one-pass progressive error on real data,
//! sketchlearn's learners next to the peers measured in the same run.
//!
//! Eleven binary LIBSVM sets from `--data-dir` (the `.shuf` versions of the class-sorted ones),
//! each loaded once into memory. One pass in file order, logistic loss, progressive 0/1 error (a
//! score ≤ 0 predicts −1). sketchlearn learners: AdaGrad, Oja-SON, FD-SON (doubling FD),
//! RFD-SON (doubling RFD) at m = 10 and FULL-ON (d ≤ 300), each without and with SON's diagonal
//! adaptation (§5.2); "tuned" = the best progressive error over a grid scored on the same stream
//! (optimistic, as in the papers), "untuned" = `LearnerConfig::default()` with that
//! algorithm/curvature and m = 10 (printed in the report, so the defaults in force at run time
//! are what is measured).
//!
//! Peers, in the same run and on the same files: Vowpal Wabbit AdaGrad and OjaNewton (m = 10,
//! default normalisation and `--normalize false`) through `scripts/peers/run_vw.py` with the
//! `.venv-peers` interpreter (see `scripts/peers/README.md`); skipped, with a note in the report,
//! when that virtualenv is missing. The best peer numbers of `../shared/peers/RESULTS.md` are
//! quoted for reference.
//!
//! Also holds the helpers shared with [`super::throughput`]: locating the peers, running
//! `run_vw.py`, load average and date.

use super::{command_line, ReproArgs};
use anyhow::{anyhow, bail, Context, Result};
use plotters::prelude::*;
use serde_json::Value;
use sketchlearn::eval::{progressive_with, Metrics};
use sketchlearn::linear::{Algorithm, CurvatureKind, LearnerConfig, OnlineLearner};
use sketchlearn::run::Tolerant;
use sketchlearn::{Example, LibsvmOptions, LibsvmReader};
use std::collections::HashMap;
use std::convert::Infallible;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// Datasets in report order: (name = file stem, short label for the plot).
pub(super) const DATASETS: [(&str, &str); 11] = [
    ("australian", "austral"),
    ("breast-cancer", "breast"),
    ("diabetes", "diabet"),
    ("heart", "heart"),
    ("ionosphere", "iono"),
    ("splice", "splice"),
    ("mushrooms", "mush"),
    ("a9a", "a9a"),
    ("w8a.shuf", "w8a"),
    ("magic04.shuf", "magic04"),
    ("spam.shuf", "spam"),
];

/// Sketch size of every sketched learner.
const M: usize = 10;
/// FULL-ON only up to this dimension (of the data file).
const FULL_MAX_DIM: usize = 300;

/// The tuned hyper-parameter of a learner family.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Param {
    /// AdaGrad learning rate η: 2^-3..2^6.
    LearningRate,
    /// Newton α (1/α is the step): 2^-10..2^6.
    Alpha,
    /// RFD-SON α₀: 10^-4..10^2.
    Alpha0,
}

impl Param {
    fn name(self) -> &'static str {
        match self {
            Param::LearningRate => "lr",
            Param::Alpha => "alpha",
            Param::Alpha0 => "alpha0",
        }
    }

    /// The grid: (value, label).
    fn grid(self) -> Vec<(f64, String)> {
        match self {
            Param::LearningRate => (-3..=6).map(pow2).collect(),
            Param::Alpha => (-10..=6).map(pow2).collect(),
            Param::Alpha0 => (-4..=2)
                .map(|j| (10f64.powi(j), format!("1e{j}")))
                .collect(),
        }
    }

    fn describe_grid(self) -> &'static str {
        match self {
            Param::LearningRate => "η ∈ 2^j, j = −3..6 (10 values)",
            Param::Alpha => "α ∈ 2^j, j = −10..6 (17 values)",
            Param::Alpha0 => "α₀ ∈ 10^j, j = −4..2 (7 values)",
        }
    }
}

fn pow2(j: i32) -> (f64, String) {
    (2f64.powi(j), format!("2^{j}"))
}

/// A family of sketchlearn learners (one column pair per diag setting).
struct Family {
    key: &'static str,
    label: &'static str,
    algorithm: Algorithm,
    curvature: CurvatureKind,
    param: Param,
    full: bool,
}

const FAMILIES: [Family; 5] = [
    Family {
        key: "adagrad",
        label: "AdaGrad",
        algorithm: Algorithm::AdaGrad,
        curvature: CurvatureKind::Identity,
        param: Param::LearningRate,
        full: false,
    },
    Family {
        key: "oja",
        label: "Oja-SON",
        algorithm: Algorithm::Newton,
        curvature: CurvatureKind::Oja,
        param: Param::Alpha,
        full: false,
    },
    Family {
        key: "fd",
        label: "FD-SON",
        algorithm: Algorithm::Newton,
        curvature: CurvatureKind::FdFast,
        param: Param::Alpha,
        full: false,
    },
    Family {
        key: "rfd",
        label: "RFD-SON",
        algorithm: Algorithm::Newton,
        curvature: CurvatureKind::RfdFast,
        param: Param::Alpha0,
        full: false,
    },
    Family {
        key: "full",
        label: "FULL-ON",
        algorithm: Algorithm::Newton,
        curvature: CurvatureKind::Full,
        param: Param::Alpha,
        full: true,
    },
];

/// One learner column: a family with or without diagonal adaptation.
#[derive(Clone, Copy)]
struct Column {
    family: usize,
    diag: bool,
}

impl Column {
    fn all() -> Vec<Column> {
        (0..FAMILIES.len())
            .flat_map(|family| [false, true].map(|diag| Column { family, diag }))
            .collect()
    }
    fn fam(self) -> &'static Family {
        &FAMILIES[self.family]
    }
    fn key(self) -> String {
        format!("{}{}", self.fam().key, if self.diag { "_diag" } else { "" })
    }
    fn label(self) -> String {
        format!(
            "{}{}",
            self.fam().label,
            if self.diag { "+diag" } else { "" }
        )
    }
    /// The configuration: the run-time defaults with this algorithm/curvature, m = 10, and the
    /// tuned hyper-parameter when `value` is given.
    fn config(self, value: Option<f64>) -> LearnerConfig {
        let f = self.fam();
        let mut c = LearnerConfig {
            algorithm: f.algorithm,
            diag: self.diag,
            ..LearnerConfig::default()
        };
        if f.algorithm == Algorithm::Newton {
            c.curvature = f.curvature;
            c.size = M;
        }
        if let Some(v) = value {
            match f.param {
                Param::LearningRate => c.learning_rate = v,
                Param::Alpha => c.alpha = v,
                Param::Alpha0 => c.alpha0 = v,
            }
        }
        c
    }
}

/// The outcome of one progressive pass.
#[derive(Clone, Debug)]
pub(super) struct RunOutcome {
    /// Progressive 0/1 error (None when the run failed).
    pub error: Option<f64>,
    /// Steps refused because they would have made weights non-finite.
    pub refused: u64,
    /// Non-finite weights at the end.
    pub nonfinite: bool,
    /// Why the run stopped early, if it did.
    pub failure: Option<String>,
    /// Wall seconds of the pass.
    pub seconds: f64,
}

impl RunOutcome {
    fn usable(&self) -> bool {
        self.error.is_some() && self.failure.is_none() && !self.nonfinite
    }
    fn flags(&self) -> String {
        let mut s = String::new();
        if self.refused > 0 {
            write!(s, " [{} refused]", self.refused).unwrap();
        }
        if self.nonfinite {
            s.push_str(" [non-finite weights]");
        }
        if let Some(f) = &self.failure {
            write!(s, " [failed: {f}]").unwrap();
        }
        s
    }
}

/// One progressive pass of `cfg` over in-memory examples.
pub(super) fn run_learner(cfg: &LearnerConfig, dim: usize, data: &[Example]) -> RunOutcome {
    let start = Instant::now();
    let mut learner = match cfg.build(dim) {
        Ok(l) => l,
        Err(e) => {
            return RunOutcome {
                error: None,
                refused: 0,
                nonfinite: false,
                failure: Some(format!("build: {e}")),
                seconds: 0.0,
            }
        }
    };
    let mut metrics = Metrics::without_auc();
    let mut counting = Tolerant::new(&mut learner);
    let mut next = 0usize;
    let result = progressive_with(
        &mut counting,
        |ex: &mut Example| -> Result<bool, Infallible> {
            let Some(src) = data.get(next) else {
                return Ok(false);
            };
            next += 1;
            ex.label = src.label;
            ex.weight = src.weight;
            ex.indices.extend_from_slice(&src.indices);
            ex.values.extend_from_slice(&src.values);
            Ok(true)
        },
        cfg.loss,
        &mut metrics,
        |_| {},
    );
    let refused = counting.refused;
    let seconds = start.elapsed().as_secs_f64();
    let nonfinite = learner.weights().iter().any(|w| !w.is_finite());
    let failure = result.err().map(|e| match e {
        sketchlearn::eval::EvalError::Learn { example, source } => {
            format!("example {example}: {source}")
        }
        sketchlearn::eval::EvalError::Source(never) => match never {},
    });
    RunOutcome {
        error: if failure.is_some() {
            None
        } else {
            metrics.error_rate()
        },
        refused,
        nonfinite,
        failure,
        seconds,
    }
}

/// Reads a LIBSVM file into memory: the examples and one past the largest index.
pub(super) fn load(path: &Path) -> Result<(Vec<Example>, usize)> {
    let p = path.to_string_lossy().to_string();
    let mut reader =
        LibsvmReader::open(&p, LibsvmOptions::default()).with_context(|| format!("opening {p}"))?;
    let mut out = Vec::new();
    let mut ex = Example::default();
    while reader.read_into(&mut ex)? {
        if ex.label != 1.0 && ex.label != -1.0 {
            bail!("{p}: label {} is not ±1", ex.label);
        }
        out.push(ex.clone());
    }
    Ok((out, reader.max_index_plus_one()))
}

// ---------------------------------------------------------------------------------------------
// Helpers shared with the throughput experiment.

/// Where the peers live: the repository root (holding `scripts/peers/run_vw.py`) and the
/// `.venv-peers` interpreter.
pub(super) struct Peers {
    pub root: PathBuf,
    pub python: PathBuf,
    pub script: PathBuf,
}

/// The repository root: the current directory if it holds `scripts/peers/run_vw.py`, else the
/// workspace this binary was built from.
pub(super) fn repo_root() -> PathBuf {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    if cwd.join("scripts/peers/run_vw.py").exists() {
        return cwd;
    }
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    if built.join("scripts/peers/run_vw.py").exists() {
        return built.canonicalize().unwrap_or(built);
    }
    cwd
}

/// The peers, or why they cannot be run.
pub(super) fn find_peers() -> std::result::Result<Peers, String> {
    let root = repo_root();
    let script = root.join("scripts/peers/run_vw.py");
    let python = root.join(".venv-peers/bin/python");
    if !script.exists() {
        return Err(format!("{} not found", script.display()));
    }
    if !python.exists() {
        return Err(format!(
            "{} not found: create it with `python3 -m venv .venv-peers && .venv-peers/bin/pip \
             install vowpalwabbit==9.11.9 river==0.26.1` (see scripts/peers/README.md)",
            python.display()
        ));
    }
    let ok = Command::new(&python)
        .args(["-c", "import vowpalwabbit"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !ok {
        return Err(format!(
            "{} cannot import vowpalwabbit (install vowpalwabbit==9.11.9 into .venv-peers)",
            python.display()
        ));
    }
    Ok(Peers {
        root,
        python,
        script,
    })
}

/// Runs `run_vw.py ARGS` (stderr passed through) and returns its JSON lines.
pub(super) fn run_vw(peers: &Peers, args: &[String]) -> Result<Vec<Value>> {
    eprintln!("  run_vw.py {}", args.join(" "));
    let child = Command::new(&peers.python)
        .arg(&peers.script)
        .args(args)
        .current_dir(&peers.root)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("starting {}", peers.python.display()))?;
    let out = child.wait_with_output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    if !out.status.success() {
        eprintln!(
            "  warning: run_vw.py exited with {} after {} JSON lines",
            out.status,
            lines.len()
        );
    }
    Ok(lines)
}

/// `/proc/loadavg`'s first three fields.
pub(super) fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

/// The current UTC date and time (`date -u`), for the reports.
pub(super) fn utc_now() -> String {
    Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "?".into())
}

/// One binomial standard error `√(p(1−p)/n)`.
pub(super) fn binomial_se(p: f64, n: usize) -> f64 {
    (p * (1.0 - p) / n as f64).sqrt()
}

pub(super) fn fmt_opt(x: Option<f64>) -> String {
    x.map_or("—".into(), |v| format!("{v:.4}"))
}

// ---------------------------------------------------------------------------------------------
// Reference numbers.

/// A peer number quoted from RESULTS.md.
#[derive(Clone, Debug, Default)]
pub(super) struct Quoted {
    pub tuned: Option<(f64, String)>,
    pub untuned: Option<(f64, String)>,
    pub full: Option<String>,
}

/// The leading number of a cell such as `0.1549 (River)` or `**0.2180**`, and the rest.
fn number_cell(cell: &str) -> Option<(f64, String)> {
    let t = cell.trim().replace("**", "");
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let v: f64 = t[..end].parse().ok()?;
    let rest = t[end..]
        .trim()
        .trim_start_matches('(')
        .trim_end_matches(')')
        .to_string();
    Some((v, rest))
}

/// The dataset rows of `RESULTS.md` (`| dataset | n | d | tuned | untuned | full | paper |`).
pub(super) fn parse_results(path: &Path) -> HashMap<String, Quoted> {
    let mut out = HashMap::new();
    let Ok(text) = std::fs::read_to_string(path) else {
        return out;
    };
    for line in text.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // "| a | b |" splits into ["", a, b, ""].
        if cells.len() < 8 || cells[1].is_empty() || cells[1] == "dataset" {
            continue;
        }
        if cells[2].parse::<u64>().is_err() {
            continue;
        }
        out.insert(
            cells[1].to_string(),
            Quoted {
                tuned: number_cell(cells[4]),
                untuned: number_cell(cells[5]),
                full: Some(cells[6].replace("**", "")).filter(|s| !s.is_empty()),
            },
        );
    }
    out
}

/// SON paper Table 3, m = 10: (Oja-SON without, with diagonal adaptation, AdaGrad). The paper's
/// a9a has 48 842 rows (train + test) and its w8a and magic04 are other versions of the data.
fn paper_table3(name: &str) -> Option<(f64, f64, f64)> {
    Some(match name {
        "australian" => (0.366667, 0.157971, 0.289855),
        "breast-cancer" => (0.374817, 0.036603, 0.358712),
        "diabetes" => (0.433594, 0.328125, 0.391927),
        "heart" => (0.388889, 0.244444, 0.362963),
        "ionosphere" => (0.148148, 0.182336, 0.190883),
        "splice" => (0.343, 0.229, 0.301),
        "mushrooms" => (0.002339, 0.002462, 0.001969),
        "a9a" => (0.195203, 0.155953, 0.156414),
        "w8a.shuf" => (0.000101, 0.000422, 0.000221),
        "magic04.shuf" => (0.000263, 0.000158, 0.000210),
        _ => return None,
    })
}

// ---------------------------------------------------------------------------------------------
// VW results.

/// The chosen run of one VW mode/setting on one file.
#[derive(Clone, Debug, Default)]
pub(super) struct VwCell {
    pub error: Option<f64>,
    pub value: Option<f64>,
    pub status: String,
    pub grid: u64,
    pub failed: u64,
}

impl VwCell {
    fn ok_error(&self) -> Option<f64> {
        self.error.filter(|_| self.status == "ok")
    }
    fn show(&self, param: bool) -> String {
        let mut s = fmt_opt(self.error);
        if param {
            match self.value {
                Some(v) => write!(s, " ({})", short_value(v)).unwrap(),
                None => s.push_str(" (default)"),
            }
        }
        if self.status != "ok" {
            write!(s, " [{}]", self.status).unwrap();
        }
        if self.failed > 0 && self.grid > 1 {
            write!(s, " [{}/{} grid runs failed]", self.failed, self.grid).unwrap();
        }
        s
    }
}

pub(super) fn short_value(v: f64) -> String {
    let l = v.log2();
    if (l - l.round()).abs() < 1e-9 {
        format!("2^{}", l.round() as i64)
    } else {
        format!("{v}")
    }
}

/// VW mode variants of the table: (key, run_vw mode, normalize flag).
const VW_VARIANTS: [(&str, &str, Option<&str>); 3] = [
    ("vw_adagrad", "adagrad", None),
    ("vw_oja", "oja", None),
    ("vw_oja_nonorm", "oja", Some("false")),
];

pub(super) type VwKey = (String, String, String); // (file, variant key, setting)

pub(super) fn collect_vw(lines: &[Value], variant: &str, out: &mut HashMap<VwKey, VwCell>) {
    for v in lines {
        if v["type"] != "best" {
            continue;
        }
        let file = v["file"].as_str().unwrap_or_default().to_string();
        let setting = v["setting"].as_str().unwrap_or_default().to_string();
        out.insert(
            (file, variant.to_string(), setting),
            VwCell {
                error: v["progressive_error"].as_f64(),
                value: v["value"].as_f64(),
                status: v["status"].as_str().unwrap_or("?").to_string(),
                grid: v["grid_size"].as_u64().unwrap_or(0),
                failed: v["grid_failed"].as_u64().unwrap_or(0),
            },
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The experiment.

/// Results of one column on one dataset.
#[derive(Clone, Debug)]
struct Cell {
    /// The tuned choice: grid label and outcome.
    tuned: Option<(String, RunOutcome)>,
    untuned: RunOutcome,
    /// Tuned value at an end of the grid.
    at_edge: bool,
}

struct DatasetResult {
    name: &'static str,
    short: &'static str,
    n: usize,
    d: usize,
    cells: Vec<Option<Cell>>, // per Column (None = not run, e.g. FULL-ON above 300)
    seconds: f64,
}

pub fn run(args: &ReproArgs) -> Result<()> {
    let t0 = Instant::now();
    let load_before = load_average();
    let date = utc_now();
    let columns = Column::all();
    let default_cfg = LearnerConfig::default();
    let mut grid_csv = String::from(
        "dataset,source,learner,diag,param,value,progressive_error,refused_steps,status,seconds\n",
    );

    // sketchlearn
    let mut results = Vec::new();
    for (name, short) in DATASETS {
        let path = args.data_dir.join(format!("{name}.libsvm"));
        let (data, d) = load(&path).with_context(|| format!("loading {}", path.display()))?;
        let n = data.len();
        let ts = Instant::now();
        eprintln!("{name}: n = {n}, d = {d}");
        let mut cells = Vec::new();
        for &col in &columns {
            let fam = col.fam();
            if fam.full && d > FULL_MAX_DIM {
                cells.push(None);
                continue;
            }
            let mut done: Vec<(LearnerConfig, RunOutcome)> = Vec::new();
            let grid = fam.param.grid();
            let mut best: Option<(usize, RunOutcome)> = None;
            for (k, (v, label)) in grid.iter().enumerate() {
                let cfg = col.config(Some(*v));
                let r = run_learner(&cfg, d, &data);
                writeln!(
                    grid_csv,
                    "{name},sketchlearn,{},{},{},{label},{},{},{},{:.3}",
                    fam.key,
                    col.diag,
                    fam.param.name(),
                    r.error.map_or(String::new(), |e| format!("{e:.6}")),
                    r.refused,
                    status(&r),
                    r.seconds
                )?;
                let better = match &best {
                    None => r.usable(),
                    Some((_, b)) => r.usable() && r.error < b.error,
                };
                if better {
                    best = Some((k, r.clone()));
                }
                done.push((cfg, r));
            }
            let untuned_cfg = col.config(None);
            let untuned = match done.iter().find(|(c, _)| *c == untuned_cfg) {
                Some((_, r)) => r.clone(),
                None => run_learner(&untuned_cfg, d, &data),
            };
            let at_edge = best
                .as_ref()
                .is_some_and(|(k, _)| *k == 0 || *k + 1 == grid.len());
            let tuned = best.map(|(k, r)| (grid[k].1.clone(), r));
            eprintln!(
                "  {:13} tuned {} ({})  untuned {}{}",
                col.label(),
                fmt_opt(tuned.as_ref().and_then(|t| t.1.error)),
                tuned.as_ref().map_or("-", |t| t.0.as_str()),
                fmt_opt(untuned.error),
                untuned.flags()
            );
            cells.push(Some(Cell {
                tuned,
                untuned,
                at_edge,
            }));
        }
        // LearnerConfig::default() itself is one of the untuned cells (RFD-SON, no diag, when
        // the defaults are those); run it separately only if it is not.
        results.push(DatasetResult {
            name,
            short,
            n,
            d,
            cells,
            seconds: ts.elapsed().as_secs_f64(),
        });
    }
    let default_col = columns.iter().position(|c| c.config(None) == default_cfg);
    let mut default_extra: HashMap<&str, RunOutcome> = HashMap::new();
    if default_col.is_none() {
        for r in &results {
            let path = args.data_dir.join(format!("{}.libsvm", r.name));
            let (data, d) = load(&path)?;
            default_extra.insert(r.name, run_learner(&default_cfg, d, &data));
        }
    }
    let ours_seconds = t0.elapsed().as_secs_f64();

    // Peers
    let tv = Instant::now();
    let files: Vec<String> = DATASETS
        .iter()
        .map(|(n, _)| {
            args.data_dir
                .join(format!("{n}.libsvm"))
                .to_string_lossy()
                .to_string()
        })
        .collect();
    let mut vw: HashMap<VwKey, VwCell> = HashMap::new();
    let mut vw_lines_all = Vec::new();
    let peers = find_peers();
    match &peers {
        Ok(p) => {
            for (key, mode, normalize) in VW_VARIANTS {
                let mut a = vec![
                    "--mode".to_string(),
                    mode.to_string(),
                    "--setting".into(),
                    "both".into(),
                    "--sketch-size".into(),
                    M.to_string(),
                ];
                if let Some(nv) = normalize {
                    a.push("--normalize".into());
                    a.push(nv.into());
                }
                a.extend(files.iter().cloned());
                let lines = run_vw(p, &a)?;
                collect_vw(&lines, key, &mut vw);
                vw_lines_all.push((key, lines));
            }
        }
        Err(why) => eprintln!("peers skipped: {why}"),
    }
    let vw_seconds = tv.elapsed().as_secs_f64();
    for (key, lines) in &vw_lines_all {
        for v in lines.iter().filter(|v| v["type"] == "run") {
            let file = v["file"].as_str().unwrap_or_default();
            let name = Path::new(file)
                .file_name()
                .and_then(|s| s.to_str())
                .unwrap_or_default()
                .trim_end_matches(".libsvm")
                .to_string();
            writeln!(
                grid_csv,
                "{name},vw,{key},false,{},{},{},,{},{:.3}",
                v["param"].as_str().unwrap_or_default(),
                v["value"]
                    .as_f64()
                    .map_or("default".into(), |x| format!("{x}")),
                v["progressive_error"]
                    .as_f64()
                    .map_or(String::new(), |e| format!("{e:.6}")),
                v["status"].as_str().unwrap_or("?"),
                v["seconds"].as_f64().unwrap_or(f64::NAN)
            )?;
        }
    }
    let vw_cell = |ds: usize, key: &str, setting: &str| -> Option<VwCell> {
        vw.get(&(files[ds].clone(), key.to_string(), setting.to_string()))
            .cloned()
    };

    let results_md = args.data_dir.join("../peers/RESULTS.md");
    let quoted = parse_results(&results_md);

    // References per dataset: best tuned / untuned peer = RESULTS.md and this run's VW.
    struct Reference {
        tuned: Option<(f64, String)>,
        untuned: Option<(f64, String)>,
        se: Option<f64>,
    }
    let refs: Vec<Reference> = results
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let q = quoted.get(r.name).cloned().unwrap_or_default();
            let mut tuned: Vec<(f64, String)> = q
                .tuned
                .iter()
                .map(|(v, w)| (*v, format!("{w}, RESULTS.md")))
                .collect();
            let mut untuned: Vec<(f64, String)> = q
                .untuned
                .iter()
                .map(|(v, w)| (*v, format!("{w}, RESULTS.md")))
                .collect();
            for (key, label) in [
                ("vw_adagrad", "VW AdaGrad"),
                ("vw_oja", "VW Oja"),
                ("vw_oja_nonorm", "VW Oja normalize=false"),
            ] {
                if let Some(e) = vw_cell(i, key, "tuned").and_then(|c| c.ok_error()) {
                    tuned.push((e, format!("{label}, this run")));
                }
                // normalize=false is not VW's default, so it is no untuned peer.
                if key != "vw_oja_nonorm" {
                    if let Some(e) = vw_cell(i, key, "untuned").and_then(|c| c.ok_error()) {
                        untuned.push((e, format!("{label}, this run")));
                    }
                }
            }
            let min =
                |v: Vec<(f64, String)>| v.into_iter().min_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
            let tuned = min(tuned);
            let se = tuned.as_ref().map(|t| binomial_se(t.0, r.n));
            Reference {
                tuned,
                untuned: min(untuned),
                se,
            }
        })
        .collect();

    // ------------------------------------------------------------------ markdown
    let mut md = String::new();
    writeln!(
        md,
        "# SON paper Table 3 (§5.2): one-pass progressive error, sketchlearn vs peers\n"
    )?;
    writeln!(
        md,
        "Reproduce: `{}` (from the repository root; peers need `.venv-peers`, see \
         `scripts/peers/README.md`).\n",
        command_line()
    )?;
    writeln!(
        md,
        "Run {date}; load average (1/5/15 min) {load_before} before, {} after; wall time {:.0} s \
         (sketchlearn grids {:.0} s, VW {:.0} s; single thread, machine shared).\n",
        load_average(),
        t0.elapsed().as_secs_f64(),
        ours_seconds,
        vw_seconds
    )?;
    writeln!(md, "## Setup\n")?;
    writeln!(
        md,
        "* Data: `{}` (the `.shuf` files for the class-sorted sets), one pass in file order, \
         each set loaded once into memory.",
        args.data_dir.display()
    )?;
    writeln!(
        md,
        "* Logistic loss; progressive 0/1 error: each example is predicted before it is learned, \
         a score ≤ 0 predicts −1 (as VW's `--binary`). Single runs; no seeds matter except \
         Oja's initial directions (seed {}).",
        default_cfg.seed
    )?;
    writeln!(
        md,
        "* sketchlearn learners, each without and with SON's diagonal adaptation (§5.2, feed \
         `D_t^(−½)x_t`, `D_0 = {}·I`): AdaGrad; Oja-SON, FD-SON (doubling FD, `fd-fast`) and \
         RFD-SON (doubling RFD, `rfd-fast`) with m = {M}; FULL-ON (d ≤ {FULL_MAX_DIM}).",
        default_cfg.diag_d0
    )?;
    writeln!(
        md,
        "* Tuned = best progressive error over a grid scored on the same stream (optimistic, as in \
         the papers and RESULTS.md): AdaGrad {}; Oja-SON, FD-SON, FULL-ON {}; RFD-SON {} \
         (its α then grows from the sketch). Other hyper-parameters at their defaults. A tuned \
         value at the edge of its grid is marked †.",
        Param::LearningRate.describe_grid(),
        Param::Alpha.describe_grid(),
        Param::Alpha0.describe_grid()
    )?;
    writeln!(
        md,
        "* Untuned = `LearnerConfig::default()` with that algorithm/curvature and m = {M}, i.e. \
         the defaults compiled into this binary:"
    )?;
    for &col in &columns {
        writeln!(md, "  * {}: `{}`", col.label(), col.config(None).describe())?;
    }
    writeln!(
        md,
        "  * `LearnerConfig::default()` itself: `{}`{}.",
        default_cfg.describe(),
        default_col.map_or(String::new(), |c| format!(
            " (= the untuned {} column)",
            columns[c].label()
        ))
    )?;
    writeln!(
        md,
        "  * every field of `LearnerConfig::default()` (JSON): `{}`",
        serde_json::to_string(&default_cfg).unwrap_or_default()
    )?;
    match &peers {
        Ok(_) => writeln!(
            md,
            "* Peers, same run, same files and order: Vowpal Wabbit 9.11.9 through \
             `scripts/peers/run_vw.py` (`-b 18 --binary --loss_function logistic`; AdaGrad = \
             `--adaptive --normalized --invariant -l η`, η over 2^-3..2^6, untuned η = 0.5; \
             OjaNewton `--sketch_size {M}`, `--alpha_inverse` over 2^-10..2^6, untuned = VW's \
             defaults; also with `--normalize false`, VW's plain SON without its per-feature \
             AdaGrad-like rescaling, which is not VW's default and so counts only as a tuned peer). \
             VW adds a constant feature."
        )?,
        Err(why) => writeln!(
            md,
            "* **Peers were not run**: {why}. The VW columns are empty; the RESULTS.md numbers \
             stand in as the bar."
        )?,
    }
    writeln!(
        md,
        "* Best peer tuned/untuned = the lower of `{}` (\"best peer tuned/untuned\", incl. River) \
         and this run's VW numbers. SE = one binomial standard error √(p(1−p)/n) with p = best \
         peer tuned; \"beats\"/\"loses\" below means by more than one SE.\n",
        results_md.display()
    )?;
    if quoted.is_empty() {
        writeln!(
            md,
            "(RESULTS.md not found at `{}`: the reference columns are empty.)\n",
            results_md.display()
        )?;
    }

    // Summary table
    writeln!(md, "## Peers and references\n")?;
    writeln!(
        md,
        "| dataset | n | d | SE | best peer tuned | best peer untuned | VW AdaGrad tuned (η) | VW AdaGrad untuned | VW Oja tuned (1/α) | VW Oja untuned | VW Oja normalize=false tuned (1/α) | VW Oja normalize=false untuned | full Newton, tuned (RESULTS.md) | paper Oja-SON m=10 / +diag / AdaGrad |"
    )?;
    writeln!(
        md,
        "|---|---:|---:|---:|---|---|---|---|---|---|---|---|---|---|"
    )?;
    for (i, r) in results.iter().enumerate() {
        let rf = &refs[i];
        let show_ref = |x: &Option<(f64, String)>| {
            x.as_ref()
                .map_or("—".into(), |(v, w)| format!("{v:.4} ({w})"))
        };
        let vwc = |key: &str, setting: &str, param: bool| {
            vw_cell(i, key, setting).map_or("—".into(), |c| c.show(param))
        };
        let paper = paper_table3(r.name).map_or("—".into(), |(a, b, c)| {
            format!("{a:.4} / {b:.4} / {c:.4}")
        });
        writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.name,
            r.n,
            r.d,
            rf.se.map_or("—".into(), |s| format!("{s:.4}")),
            show_ref(&rf.tuned),
            show_ref(&rf.untuned),
            vwc("vw_adagrad", "tuned", true),
            vwc("vw_adagrad", "untuned", false),
            vwc("vw_oja", "tuned", true),
            vwc("vw_oja", "untuned", false),
            vwc("vw_oja_nonorm", "tuned", true),
            vwc("vw_oja_nonorm", "untuned", false),
            quoted
                .get(r.name)
                .and_then(|q| q.full.clone())
                .unwrap_or_else(|| "—".into()),
            paper
        )?;
    }
    writeln!(md)?;

    // Per-learner tables
    let verdict = |e: f64, peer: Option<f64>, se: Option<f64>| -> i8 {
        match (peer, se) {
            (Some(p), Some(s)) if e < p - s => 1,
            (Some(p), Some(s)) if e > p + s => -1,
            _ => 0,
        }
    };
    let mark = |v: i8| match v {
        1 => " ▲",
        -1 => " ▼",
        _ => "",
    };
    for tuned in [true, false] {
        writeln!(
            md,
            "## sketchlearn, {}\n",
            if tuned {
                "tuned (chosen value in parentheses)"
            } else {
                "untuned (run-time defaults, listed above)"
            }
        )?;
        writeln!(
            md,
            "▲ / ▼: better / worse than the best {} peer by more than one SE. Flags: refused = \
             steps refused because they would have made weights non-finite; † = tuned value at \
             the edge of the grid.\n",
            if tuned { "tuned" } else { "untuned" }
        )?;
        let mut header = String::from("| dataset | SE | best peer |");
        let mut rule = String::from("|---|---:|---|");
        for col in &columns {
            write!(header, " {} |", col.label())?;
            rule.push_str("---|");
        }
        writeln!(md, "{header}\n{rule}")?;
        for (i, r) in results.iter().enumerate() {
            let rf = &refs[i];
            let peer = if tuned { &rf.tuned } else { &rf.untuned };
            let mut line = format!(
                "| {} | {} | {} |",
                r.name,
                rf.se.map_or("—".into(), |s| format!("{s:.4}")),
                peer.as_ref().map_or("—".into(), |p| format!("{:.4}", p.0))
            );
            for cell in &r.cells {
                let text = match cell {
                    None => "n/a (d > 300)".to_string(),
                    Some(c) => {
                        let (label, o) = if tuned {
                            match &c.tuned {
                                Some((l, o)) => {
                                    (format!(" ({l}{})", if c.at_edge { "†" } else { "" }), o)
                                }
                                None => {
                                    line.push_str(" all failed |");
                                    continue;
                                }
                            }
                        } else {
                            (String::new(), &c.untuned)
                        };
                        match o.error {
                            Some(e) => format!(
                                "{e:.4}{label}{}{}",
                                mark(verdict(e, peer.as_ref().map(|p| p.0), rf.se)),
                                o.flags()
                            ),
                            None => format!("—{}", o.flags()),
                        }
                    }
                };
                write!(line, " {text} |")?;
            }
            writeln!(md, "{line}")?;
        }
        writeln!(md)?;
    }

    // ------------------------------------------------------------------ findings
    writeln!(md, "## Findings (computed from the tables above)\n")?;
    let err_of = |c: &Option<Cell>, tuned: bool| -> Option<f64> {
        let c = c.as_ref()?;
        if tuned {
            c.tuned.as_ref().and_then(|t| t.1.error)
        } else {
            c.untuned.error.filter(|_| c.untuned.usable())
        }
    };
    for tuned in [true, false] {
        writeln!(
            md,
            "**{} vs the best {} peer** (wins ▲ / losses ▼ by more than one SE, out of the sets \
             where both exist):\n",
            if tuned { "Tuned" } else { "Untuned" },
            if tuned { "tuned" } else { "untuned" }
        )?;
        for (j, col) in columns.iter().enumerate() {
            let (mut win, mut lose, mut tie) = (Vec::new(), Vec::new(), 0);
            for (i, r) in results.iter().enumerate() {
                let peer = if tuned {
                    &refs[i].tuned
                } else {
                    &refs[i].untuned
                };
                if let (Some(e), Some(p)) = (err_of(&r.cells[j], tuned), peer) {
                    let diff = e - p.0;
                    match verdict(e, Some(p.0), refs[i].se) {
                        1 => win.push(format!("{} ({diff:+.4})", r.name)),
                        -1 => lose.push(format!("{} ({diff:+.4})", r.name)),
                        _ => tie += 1,
                    }
                }
            }
            writeln!(
                md,
                "* {}: {} ▲ [{}], {} ▼ [{}], {} within 1 SE.",
                col.label(),
                win.len(),
                win.join(", "),
                lose.len(),
                lose.join(", "),
                tie
            )?;
        }
        writeln!(md)?;
    }
    // The library default.
    {
        let (mut win, mut lose, mut tie) = (Vec::new(), Vec::new(), 0);
        for (i, r) in results.iter().enumerate() {
            let e = match default_col {
                Some(j) => err_of(&r.cells[j], false),
                None => default_extra.get(r.name).and_then(|o| o.error),
            };
            if let (Some(e), Some(p)) = (e, &refs[i].untuned) {
                let diff = e - p.0;
                match verdict(e, Some(p.0), refs[i].se) {
                    1 => win.push(format!("{} ({diff:+.4})", r.name)),
                    -1 => lose.push(format!("{} ({diff:+.4})", r.name)),
                    _ => tie += 1,
                }
            }
        }
        writeln!(
            md,
            "**`LearnerConfig::default()` (`{}`) vs the best untuned peer**: {} ▲ [{}], {} ▼ [{}], \
             {} within 1 SE.\n",
            default_cfg.describe(),
            win.len(),
            win.join(", "),
            lose.len(),
            lose.join(", "),
            tie
        )?;
    }
    // Best sketchlearn learner per dataset.
    writeln!(
        md,
        "**Best sketchlearn learner per set (tuned, over all {} columns; doubly optimistic) vs the \
         best tuned peer:**\n",
        columns.len()
    )?;
    let mut best_rows = Vec::new();
    for (i, r) in results.iter().enumerate() {
        let best = columns
            .iter()
            .enumerate()
            .filter_map(|(j, c)| err_of(&r.cells[j], true).map(|e| (e, c.label())))
            .min_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
        if let (Some((e, who)), Some(p)) = (best, &refs[i].tuned) {
            let v = verdict(e, Some(p.0), refs[i].se);
            best_rows.push(format!(
                "{}: {e:.4} ({who}) vs {:.4} ({}) → {}",
                r.name,
                p.0,
                p.1,
                match v {
                    1 => "beats",
                    -1 => "loses",
                    _ => "within 1 SE",
                }
            ));
        }
    }
    for b in &best_rows {
        writeln!(md, "* {b}")?;
    }
    writeln!(md)?;
    // Second-order information: sketches and FULL-ON vs our AdaGrad, and m = 10 vs FULL-ON.
    writeln!(
        md,
        "**Second-order information inside sketchlearn (tuned, ▲/▼ by more than one SE):**\n"
    )?;
    let col_of = |key: &str| columns.iter().position(|c| c.key() == key);
    for (a, b) in [
        ("full", "adagrad"),
        ("oja", "adagrad"),
        ("fd", "adagrad"),
        ("rfd", "adagrad"),
        ("oja_diag", "adagrad"),
        ("fd_diag", "adagrad"),
        ("rfd_diag", "adagrad"),
        ("fd_diag", "full"),
        ("oja_diag", "oja"),
        ("fd_diag", "fd"),
        ("rfd_diag", "rfd"),
    ] {
        let (Some(ja), Some(jb)) = (col_of(a), col_of(b)) else {
            continue;
        };
        let (mut win, mut lose, mut tie) = (Vec::new(), Vec::new(), 0);
        for (i, r) in results.iter().enumerate() {
            if let (Some(ea), Some(eb)) = (err_of(&r.cells[ja], true), err_of(&r.cells[jb], true)) {
                match verdict(ea, Some(eb), refs[i].se) {
                    1 => win.push(format!("{} ({:+.4})", r.name, ea - eb)),
                    -1 => lose.push(format!("{} ({:+.4})", r.name, ea - eb)),
                    _ => tie += 1,
                }
            }
        }
        writeln!(
            md,
            "* {} vs {}: better on {} [{}], worse on {} [{}], {} within 1 SE.",
            columns[ja].label(),
            columns[jb].label(),
            win.len(),
            win.join(", "),
            lose.len(),
            lose.join(", "),
            tie
        )?;
    }
    writeln!(md)?;
    // Robustness notes.
    let mut notes = Vec::new();
    for r in &results {
        for (j, c) in r.cells.iter().enumerate() {
            let Some(c) = c else { continue };
            if !c.untuned.flags().is_empty() {
                notes.push(format!(
                    "{} untuned on {}: {:?}{}",
                    columns[j].label(),
                    r.name,
                    c.untuned.error,
                    c.untuned.flags()
                ));
            }
            if let Some((l, o)) = &c.tuned {
                if o.refused > 0 {
                    notes.push(format!(
                        "{} tuned ({l}) on {}: {} refused steps",
                        columns[j].label(),
                        r.name,
                        o.refused
                    ));
                }
            } else {
                notes.push(format!(
                    "{} on {}: every grid value failed",
                    columns[j].label(),
                    r.name
                ));
            }
        }
    }
    let cols = &columns;
    let edges: Vec<String> = results
        .iter()
        .flat_map(|r| {
            r.cells.iter().enumerate().filter_map(move |(j, c)| {
                let c = c.as_ref()?;
                c.at_edge.then(|| {
                    format!(
                        "{} on {} ({})",
                        cols[j].label(),
                        r.name,
                        c.tuned.as_ref().map_or("", |t| t.0.as_str())
                    )
                })
            })
        })
        .collect();
    writeln!(md, "**Robustness:**\n")?;
    if notes.is_empty() {
        writeln!(
            md,
            "* No untuned run refused a step, failed or ended with non-finite weights; no chosen \
             tuned run refused a step."
        )?;
    }
    for n in &notes {
        writeln!(md, "* {n}")?;
    }
    if !edges.is_empty() {
        writeln!(
            md,
            "* Tuned value at the edge of its grid ({}): {}.",
            edges.len(),
            edges.join("; ")
        )?;
    }
    let vw_failures: Vec<String> = vw
        .iter()
        .filter(|(_, c)| c.failed > 0 || c.status != "ok")
        .map(|((f, k, s), c)| {
            format!(
                "{k} {s} on {}: {} of {} runs failed or left non-finite weights{}",
                Path::new(f)
                    .file_name()
                    .map(|x| x.to_string_lossy().to_string())
                    .unwrap_or_default(),
                c.failed,
                c.grid,
                if c.status != "ok" {
                    format!(" (the reported one too: {})", c.status)
                } else {
                    String::new()
                }
            )
        })
        .collect();
    let mut vw_failures = vw_failures;
    vw_failures.sort();
    for f in &vw_failures {
        writeln!(md, "* VW: {f}")?;
    }
    // VW this run vs RESULTS.md.
    let mut drift = Vec::new();
    for (i, r) in results.iter().enumerate() {
        if let Some(q) = quoted.get(r.name) {
            for (key, setting, quoted_v) in [
                ("vw_oja", "tuned", &q.tuned),
                ("vw_adagrad", "tuned", &q.tuned),
                ("vw_oja", "untuned", &q.untuned),
                ("vw_adagrad", "untuned", &q.untuned),
            ] {
                let Some((qv, who)) = quoted_v else { continue };
                let want = if key == "vw_oja" {
                    "VW Oja"
                } else {
                    "VW AdaGrad"
                };
                if !who.contains(want) {
                    continue;
                }
                if let Some(e) = vw_cell(i, key, setting).and_then(|c| c.error) {
                    if (e - qv).abs() > 1e-4 {
                        drift.push(format!(
                            "{} {key} {setting}: {e:.4} here vs {qv:.4} in RESULTS.md",
                            r.name
                        ));
                    }
                }
            }
        }
    }
    if peers.is_ok() {
        if drift.is_empty() {
            writeln!(
                md,
                "* This run's VW numbers agree (to 1e-4) with every VW number RESULTS.md quotes as \
                 a best peer."
            )?;
        } else {
            writeln!(
                md,
                "* VW here differs from RESULTS.md: {}.",
                drift.join("; ")
            )?;
        }
    }
    writeln!(md)?;
    writeln!(
        md,
        "Per-set wall time of the sketchlearn grids (s): {}.\n",
        results
            .iter()
            .map(|r| format!("{} {:.1}", r.name, r.seconds))
            .collect::<Vec<_>>()
            .join(", ")
    )?;
    writeln!(
        md,
        "![error relative to the best peer](son_table3.png)\n\n(Each point: a learner's \
         progressive error divided by the best peer's on that set, log scale; below 1 = better \
         than the best peer. Top: tuned vs best tuned peer; bottom: untuned vs best untuned peer.)\n"
    )?;
    writeln!(
        md,
        "Every grid run (sketchlearn and VW) is in `son_table3_grid.csv`; the wide table in \
         `son_table3.csv`."
    )?;

    // ------------------------------------------------------------------ CSV
    let mut csv = String::from(
        "dataset,n,d,se,best_peer_tuned,best_peer_tuned_source,best_peer_untuned,best_peer_untuned_source,results_md_full_newton",
    );
    for (key, _, _) in VW_VARIANTS {
        write!(
            csv,
            ",{key}_tuned,{key}_tuned_value,{key}_tuned_status,{key}_untuned,{key}_untuned_status"
        )?;
    }
    for col in &columns {
        let k = col.key();
        let p = col.fam().param.name();
        write!(
            csv,
            ",{k}_tuned,{k}_tuned_{p},{k}_tuned_refused,{k}_untuned,{k}_untuned_refused"
        )?;
    }
    csv.push_str(",default_config_error,paper_oja_m10,paper_oja_m10_diag,paper_adagrad\n");
    let q = |s: &str| format!("\"{}\"", s.replace('"', "'"));
    for (i, r) in results.iter().enumerate() {
        let rf = &refs[i];
        write!(
            csv,
            "{},{},{},{},{},{},{},{},{}",
            r.name,
            r.n,
            r.d,
            rf.se.map_or(String::new(), |s| format!("{s:.6}")),
            rf.tuned
                .as_ref()
                .map_or(String::new(), |t| format!("{:.6}", t.0)),
            q(rf.tuned.as_ref().map_or("", |t| t.1.as_str())),
            rf.untuned
                .as_ref()
                .map_or(String::new(), |t| format!("{:.6}", t.0)),
            q(rf.untuned.as_ref().map_or("", |t| t.1.as_str())),
            q(&quoted
                .get(r.name)
                .and_then(|x| x.full.clone())
                .unwrap_or_default())
        )?;
        for (key, _, _) in VW_VARIANTS {
            let t = vw_cell(i, key, "tuned").unwrap_or_default();
            let u = vw_cell(i, key, "untuned").unwrap_or_default();
            write!(
                csv,
                ",{},{},{},{},{}",
                t.error.map_or(String::new(), |e| format!("{e:.6}")),
                t.value.map_or(String::new(), |v| format!("{v}")),
                t.status,
                u.error.map_or(String::new(), |e| format!("{e:.6}")),
                u.status
            )?;
        }
        for cell in &r.cells {
            match cell {
                None => csv.push_str(",,,,,"),
                Some(c) => {
                    let (te, tv, tr) = match &c.tuned {
                        Some((l, o)) => (
                            o.error.map_or(String::new(), |e| format!("{e:.6}")),
                            l.clone(),
                            o.refused.to_string(),
                        ),
                        None => (String::new(), String::new(), String::new()),
                    };
                    write!(
                        csv,
                        ",{te},{tv},{tr},{},{}",
                        c.untuned.error.map_or(String::new(), |e| format!("{e:.6}")),
                        c.untuned.refused
                    )?;
                }
            }
        }
        let def = match default_col {
            Some(j) => r.cells[j].as_ref().and_then(|c| c.untuned.error),
            None => default_extra.get(r.name).and_then(|o| o.error),
        };
        let paper = paper_table3(r.name);
        writeln!(
            csv,
            ",{},{},{},{}",
            def.map_or(String::new(), |e| format!("{e:.6}")),
            paper.map_or(String::new(), |p| p.0.to_string()),
            paper.map_or(String::new(), |p| p.1.to_string()),
            paper.map_or(String::new(), |p| p.2.to_string())
        )?;
    }

    // ------------------------------------------------------------------ plot
    let cats: Vec<String> = results.iter().map(|r| r.short.to_string()).collect();
    let plot_keys = [
        "adagrad", "oja_diag", "fd", "fd_diag", "rfd", "rfd_diag", "full",
    ];
    let mut panels = Vec::new();
    for tuned in [true, false] {
        let mut series = Vec::new();
        let peer_of = |i: usize| {
            if tuned {
                refs[i].tuned.as_ref().map(|t| t.0)
            } else {
                refs[i].untuned.as_ref().map(|t| t.0)
            }
        };
        let ratio = |e: Option<f64>, i: usize| -> Option<f64> {
            let (e, p) = (e?, peer_of(i)?);
            // A perfect peer (0 errors) leaves no ratio; floor both at half an error.
            let floor = 0.5 / results[i].n as f64;
            Some(e.max(floor) / p.max(floor))
        };
        series.push(CatSeries {
            label: "VW OjaNewton".into(),
            values: (0..results.len())
                .map(|i| {
                    ratio(
                        vw_cell(i, "vw_oja", if tuned { "tuned" } else { "untuned" })
                            .and_then(|c| c.error),
                        i,
                    )
                })
                .collect(),
        });
        for key in plot_keys {
            let Some(j) = col_of(key) else { continue };
            series.push(CatSeries {
                label: columns[j].label(),
                values: results
                    .iter()
                    .enumerate()
                    .map(|(i, r)| ratio(err_of(&r.cells[j], tuned), i))
                    .collect(),
            });
        }
        panels.push(CatPanel {
            title: if tuned {
                "tuned: error / best tuned peer's error".into()
            } else {
                "untuned (defaults): error / best untuned peer's error".into()
            },
            y_label: "error ratio (log)".into(),
            categories: cats.clone(),
            series,
        });
    }
    let png = args.out.join("son_table3.png");
    category_points(&png, &panels, 1500, 1100)?;

    std::fs::write(args.out.join("son_table3.md"), md)?;
    std::fs::write(args.out.join("son_table3.csv"), csv)?;
    std::fs::write(args.out.join("son_table3_grid.csv"), grid_csv)?;
    eprintln!(
        "wrote {} ({:.0} s)",
        args.out.join("son_table3.md").display(),
        t0.elapsed().as_secs_f64()
    );
    Ok(())
}

fn status(r: &RunOutcome) -> &'static str {
    if r.failure.is_some() {
        "failed"
    } else if r.nonfinite {
        "nonfinite"
    } else {
        "ok"
    }
}

// ---------------------------------------------------------------------------------------------
// A grouped point chart over categories (datasets).

pub(super) struct CatSeries {
    pub label: String,
    pub values: Vec<Option<f64>>,
}

pub(super) struct CatPanel {
    pub title: String,
    pub y_label: String,
    pub categories: Vec<String>,
    pub series: Vec<CatSeries>,
}

/// Series colour `j`: black for the first series (sketchlearn), then the shared palette.
fn series_color(j: usize) -> RGBColor {
    match j % 8 {
        0 => RGBColor(0, 0, 0),
        k => crate::plot::COLORS[k - 1],
    }
}

/// Panels stacked vertically; in each, one column of points per category, the series side by
/// side within it, a log y axis and a line at 1.
pub(super) fn category_points(
    path: &Path,
    panels: &[CatPanel],
    width: u32,
    height: u32,
) -> Result<()> {
    let root = BitMapBackend::new(path, (width, height)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow!("{e}"))?;
    let areas = root.split_evenly((panels.len().max(1), 1));
    for (p, area) in panels.iter().zip(areas.iter()) {
        let err = |e: &dyn std::fmt::Display| anyhow!("plot: {e}");
        let k = p.categories.len().max(1);
        let (mut lo, mut hi) = (1.0f64, 1.0f64);
        for v in p
            .series
            .iter()
            .flat_map(|s| s.values.iter().flatten())
            .filter(|v| v.is_finite() && **v > 0.0)
        {
            lo = lo.min(*v);
            hi = hi.max(*v);
        }
        let (lo, hi) = (lo / 1.3, hi * 2.0);
        let mut chart = ChartBuilder::on(area)
            .caption(&p.title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(30)
            .y_label_area_size(70)
            .build_cartesian_2d(-0.5f64..(k as f64 - 0.5), (lo..hi).log_scale())
            .map_err(|e| err(&e))?;
        let cats = &p.categories;
        let x_fmt = |v: &f64| {
            let r = v.round();
            if (v - r).abs() < 1e-6 && r >= 0.0 && (r as usize) < cats.len() {
                cats[r as usize].clone()
            } else {
                String::new()
            }
        };
        let y_fmt = |v: &f64| {
            let s = format!("{v:.3}");
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        };
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(k + k / 2)
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .y_desc(p.y_label.as_str())
            .draw()
            .map_err(|e| err(&e))?;
        chart
            .draw_series(LineSeries::new(
                vec![(-0.5, 1.0), (k as f64 - 0.5, 1.0)],
                BLACK.stroke_width(1),
            ))
            .map_err(|e| err(&e))?;
        let ns = p.series.len().max(1) as f64;
        for (j, s) in p.series.iter().enumerate() {
            let color = series_color(j);
            let off = (j as f64 - (ns - 1.0) / 2.0) * 0.8 / ns;
            let pts: Vec<(f64, f64)> = s
                .values
                .iter()
                .enumerate()
                .filter_map(|(i, v)| {
                    v.filter(|x| x.is_finite() && *x > 0.0)
                        .map(|x| (i as f64 + off, x))
                })
                .collect();
            chart
                .draw_series(pts.into_iter().map(|q| Circle::new(q, 5, color.filled())))
                .map_err(|e| err(&e))?
                .label(s.label.as_str())
                .legend(move |(x, y)| Circle::new((x + 8, y), 5, color.filled()));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 16))
            .position(SeriesLabelPosition::UpperLeft)
            .draw()
            .map_err(|e| err(&e))?;
    }
    root.present()
        .map_err(|e| anyhow!("writing {}: {e}", path.display()))?;
    Ok(())
}
