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

mod reference;
mod report;

pub(crate) use reference::{
    collect_vw, fmt_opt, parse_results, Quoted, QuotedByName, VwCell, VwKey,
};

use super::ReproArgs;
use crate::learn::progressive;
use crate::machine::{load_average, utc_now};
use crate::peers::{find_peers, Peers};
use crate::plot::category_points;
use crate::report::write_md_csv;
use anyhow::{bail, Context, Result};
use reference::{references, Reference, VW_VARIANTS};
use serde_json::Value;
use sketchlearn::linear::{Algorithm, CurvatureKind, LearnerConfig, OnlineLearner};
use sketchlearn::{Example, LibsvmOptions, LibsvmReader};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
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
    let mut learner = match cfg.check().and_then(|v| v.build_unscaled(dim)) {
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
    let pass = progressive(&mut learner, cfg, data);
    let seconds = start.elapsed().as_secs_f64();
    let nonfinite = learner.weights().iter().any(|w| !w.is_finite());
    let failure = pass
        .failure
        .map(|(example, source)| format!("example {example}: {source}"));
    RunOutcome {
        error: if failure.is_some() {
            None
        } else {
            pass.metrics.error_rate()
        },
        refused: pass.refused,
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

/// Results of one column on one dataset.
#[derive(Clone, Debug)]
pub(super) struct Cell {
    /// The tuned choice: grid label and outcome.
    tuned: Option<(String, RunOutcome)>,
    untuned: RunOutcome,
    /// Tuned value at an end of the grid.
    at_edge: bool,
}

pub(super) struct DatasetResult {
    name: &'static str,
    short: &'static str,
    n: usize,
    d: usize,
    cells: Vec<Option<Cell>>, // per Column (None = not run, e.g. FULL-ON above 300)
    seconds: f64,
}

/// Everything the report is written from: the sketchlearn grids, the peers' runs, the quoted
/// references and the run's conditions.
struct Measured {
    columns: Vec<Column>,
    default_cfg: LearnerConfig,
    /// The column that is `LearnerConfig::default()`, if one is.
    default_col: Option<usize>,
    /// `LearnerConfig::default()` per dataset when no column is it.
    default_extra: HashMap<&'static str, RunOutcome>,
    results: Vec<DatasetResult>,
    /// The data files in `DATASETS` order, as VW's results name them.
    files: Vec<String>,
    vw: HashMap<VwKey, VwCell>,
    /// The peers were run, or why not.
    peers: Result<(), String>,
    results_md: PathBuf,
    quoted: QuotedByName,
    refs: Vec<Reference>,
    data_dir: PathBuf,
    date: String,
    load_before: String,
    t0: Instant,
    ours_seconds: f64,
    vw_seconds: f64,
}

impl Measured {
    /// VW's chosen run of variant `key` and `setting` on dataset `ds`.
    fn vw_cell(&self, ds: usize, key: &str, setting: &str) -> Option<VwCell> {
        self.vw
            .get(&(self.files[ds].clone(), key.to_string(), setting.to_string()))
            .cloned()
    }
}

/// VW's runs of this experiment: the data files, the chosen runs, every JSON line per variant,
/// and whether the peers could run.
struct PeerRuns {
    files: Vec<String>,
    vw: HashMap<VwKey, VwCell>,
    lines: Vec<(&'static str, Vec<Value>)>,
    peers: Result<Peers, String>,
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
    let results = sweep(args, &columns, &mut grid_csv)?;
    let default_col = columns.iter().position(|c| c.config(None) == default_cfg);
    let default_extra = default_runs(args, &results, default_col, &default_cfg)?;
    let ours_seconds = t0.elapsed().as_secs_f64();

    let tv = Instant::now();
    let peer_runs = run_peers(args)?;
    let vw_seconds = tv.elapsed().as_secs_f64();
    vw_grid_rows(&mut grid_csv, &peer_runs.lines)?;

    let results_md = args.data_dir.join("../peers/RESULTS.md");
    let quoted = parse_results(&results_md);
    let mut m = Measured {
        columns,
        default_cfg,
        default_col,
        default_extra,
        results,
        files: peer_runs.files,
        vw: peer_runs.vw,
        peers: peer_runs.peers.map(|_| ()),
        results_md,
        quoted,
        refs: Vec::new(),
        data_dir: args.data_dir.clone(),
        date,
        load_before,
        t0,
        ours_seconds,
        vw_seconds,
    };
    m.refs = references(&m.results, &m.quoted, |ds, key, setting| {
        m.vw_cell(ds, key, setting)
    });
    let md = report::markdown(&m)?;
    let csv = report::wide_csv(&m)?;
    let panels = report::plot_panels(&m);
    let png = args.out.join("son_table3.png");
    category_points(&png, &panels, 1500, 1100)?;

    std::fs::write(args.out.join("son_table3_grid.csv"), grid_csv)?;
    write_md_csv(
        &args.out,
        "son_table3",
        &md,
        &csv,
        Some(t0.elapsed().as_secs_f64()),
    )?;
    Ok(())
}

/// The sketchlearn grids: every column's tuned and untuned runs on every dataset, each grid run
/// a row of `grid_csv`.
fn sweep(
    args: &ReproArgs,
    columns: &[Column],
    grid_csv: &mut String,
) -> Result<Vec<DatasetResult>> {
    // sketchlearn
    let mut results = Vec::new();
    for (name, short) in DATASETS {
        let path = args.data_dir.join(format!("{name}.libsvm"));
        let (data, d) = load(&path).with_context(|| format!("loading {}", path.display()))?;
        let n = data.len();
        let ts = Instant::now();
        eprintln!("{name}: n = {n}, d = {d}");
        let mut cells = Vec::new();
        for &col in columns {
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
    Ok(results)
}

/// `LearnerConfig::default()` on every dataset, when it is none of the untuned columns.
fn default_runs(
    args: &ReproArgs,
    results: &[DatasetResult],
    default_col: Option<usize>,
    default_cfg: &LearnerConfig,
) -> Result<HashMap<&'static str, RunOutcome>> {
    let mut default_extra: HashMap<&str, RunOutcome> = HashMap::new();
    if default_col.is_none() {
        for r in results {
            let path = args.data_dir.join(format!("{}.libsvm", r.name));
            let (data, d) = load(&path)?;
            default_extra.insert(r.name, run_learner(default_cfg, d, &data));
        }
    }
    Ok(default_extra)
}

/// VW AdaGrad and OjaNewton (and OjaNewton without normalisation), tuned and untuned, on the
/// same files, when the peers can run.
fn run_peers(args: &ReproArgs) -> Result<PeerRuns> {
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
                let lines = p.run_vw(&a)?;
                collect_vw(&lines, key, &mut vw);
                vw_lines_all.push((key, lines));
            }
        }
        Err(why) => eprintln!("peers skipped: {why}"),
    }
    Ok(PeerRuns {
        files,
        vw,
        lines: vw_lines_all,
        peers,
    })
}

/// Every VW grid run as a row of `grid_csv`.
fn vw_grid_rows(grid_csv: &mut String, vw_lines_all: &[(&str, Vec<Value>)]) -> Result<()> {
    for (key, lines) in vw_lines_all {
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
