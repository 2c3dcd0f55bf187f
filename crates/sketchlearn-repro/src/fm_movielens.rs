//! SFTRL paper §5.2 (Tables 2–4, Figure 1) on MovieLens-100K and ml-latest-small: RMSE of
//! online rating prediction with SFTRL (Alg. 4 and Alg. 5) for several sketch sizes against full
//! FTRL, OGD (step η/√t), OCG on the nuclear-norm ball, Rendle's FM by SGD and River's
//! `FMRegressor`, with wall time, CPU time and memory; and this crate's split SFTRL
//! ([`SftrlSplit`](sketchlearn::fm::SftrlSplit)) at its default settings for every m, tuned at
//! m = 10, and with each of its three changes undone (ablation).
//!
//! Protocol: one-hot user + item features (DESIGN.md §4 item 15; ids remapped on the training
//! part), raw ratings, half squared loss; the first 80 % of the file in file order is learned in
//! one online pass (progressive RMSE), the last 20 % is predicted without updates (test RMSE).
//! Every configuration is a child `sketchlearn fm --json` process (its own CPU time and peak RSS).
//! Hyper-parameters are chosen per family as the lowest **progressive** RMSE over a small grid
//! (the test part never chooses); all grid points are in the CSV. River runs through
//! `scripts/peers/river_fm.py` on the same split (skipped with a note when `.venv-peers` is
//! missing).

use super::fm_common::{
    algo_grid, args, fmt_bytes, fmt_opt, report_start, run_best, run_fm, run_one, s, sftrl_by_m,
    split_grid, with_base, FmRun, Grid,
};
use super::ReproArgs;
use crate::machine::load_average;
use crate::peers::run_river;
use crate::plot::{line_panels, Panel, Series};
use crate::report::{table_header, write_md_csv};
use anyhow::Result;
use serde_json::Value;
use sketchlearn::fm::{FirstOrderStep, FmAlgorithm, FmConfig};
use sketchlearn::loss::Loss;
use std::fmt::Write as _;
use std::path::Path;

/// The error cells of a run's markdown rows: progressive and test RMSE (4 decimals).
const RMSE: [(&str, usize); 2] = [("progressive_rmse", 4), ("test_rmse", 4)];
/// The time cells of a run's markdown rows: CPU and wall seconds (3 decimals).
const TIMES: [(&str, usize); 2] = [("cpu_seconds", 3), ("seconds", 3)];

/// Sketch sizes of the SFTRL rows (the list).
const SIZES: [usize; 5] = [5, 10, 20, 40, 50];
/// The paper's SFTRL RMSE on MovieLens-100K (Table 2) and the time target.
const PAPER_RMSE: f64 = 0.9624;
/// The linear baseline's family name.
const BIASES_ONLY: &str = "Biases only (FM-SGD, factors fixed at 0)";
/// Split SFTRL at its defaults (no tuning) and tuned at m = 10.
const SPLIT_DEFAULTS: &str = "Split SFTRL, defaults";
const SPLIT_TUNED: &str = "Split SFTRL, tuned (m = 10)";

struct Dataset {
    label: &'static str,
    file: &'static str,
    scale: &'static str,
    /// u.user / u.item side files (MovieLens-100K only).
    side: Option<(&'static str, &'static str)>,
}

const DATASETS: [Dataset; 2] = [
    Dataset {
        label: "MovieLens-100K",
        file: "movielens100k.tsv",
        scale: "1,5",
        side: Some(("movielens100k_users.psv", "movielens100k_items.psv")),
    },
    Dataset {
        label: "ml-latest-small",
        file: "movielens_latest_small.tsv",
        scale: "0.5,5",
        side: None,
    },
];

/// A family's chosen run.
struct Chosen {
    run: FmRun,
    clipped_test: Option<f64>,
    /// `--pairwise` of the same configuration: RMS of the pairwise part of the test
    /// predictions and the test RMSE without it.
    pairwise: Option<(f64, f64)>,
}

struct DatasetResult {
    label: &'static str,
    all: Vec<FmRun>,
    chosen: Vec<Chosen>,
    /// Per m: (Alg. 5 chosen, Alg. 4 at the same η).
    by_m: Vec<(usize, FmRun, FmRun)>,
    /// Per m: split SFTRL at its defaults.
    split_by_m: Vec<(usize, FmRun)>,
    /// Split SFTRL at m = 10 with one of its changes undone.
    ablation: Vec<FmRun>,
    river: Result<Vec<Value>, String>,
    extras: Vec<FmRun>,
}

fn run_dataset(ds: &Dataset, data_dir: &Path) -> Result<DatasetResult> {
    let file = data_dir.join(ds.file);
    eprintln!("{} ({})", ds.label, file.display());
    let with = with_base(vec![s("--scale"), s(ds.scale)]);
    let mut all = Vec::new();
    let mut chosen = Vec::new();
    let key = "progressive_rmse";

    // The η grid extends past the progressive minimum (near η = 0.02–0.025 on both data sets)
    // so that the choice is not at its edge.
    let etas = [0.01, 0.015, 0.02, 0.025, 0.03];
    let by_m = sftrl_by_m(
        &SIZES,
        &etas,
        eta_of,
        &file,
        "progressive_rmse",
        &with,
        &mut all,
    )?;
    // Split SFTRL at its defaults (η = 0.2 with AdaGrad β = 5, η_p = 0.5, truncation): the
    // untuned setting a user gets, for every m.
    let mut split_by_m = Vec::new();
    for &m in &SIZES {
        let a = with(args(&[("--algo", s("sftrl-split")), ("--size", s(m))]));
        let setting = format!("m={m} defaults");
        let run = run_one(SPLIT_DEFAULTS, Some(m), setting, a, &file, key, &mut all)?;
        split_by_m.push((m, run));
    }
    // Ablation at m = 10: each of split SFTRL's changes undone on its own.
    let mut ablation = Vec::new();
    for (label, extra) in [
        (
            "first-order step constant, η = 0.015 (SFTRL's default)",
            vec![("--first-order", s("constant")), ("--eta", s(0.015))],
        ),
        (
            "shrink (Frequent Directions) instead of truncation",
            vec![("--compression", s("shrink"))],
        ),
        (
            "no pairwise part (η_p = 1e-9)",
            vec![("--eta-pairwise", s(1e-9))],
        ),
    ] {
        let mut pairs = vec![("--algo", s("sftrl-split")), ("--size", s(10))];
        pairs.extend(extra);
        let (family, setting) = ("Split SFTRL ablation", label.to_string());
        let a = with(args(&pairs));
        ablation.push(run_one(family, Some(10), setting, a, &file, key, &mut all)?);
    }

    // The headline SFTRL rows: m = 10 (the paper's size for MovieLens-100K) and the best m.
    let pick = |v: &[(usize, FmRun, FmRun)], m: usize, alg5: bool| {
        v.iter()
            .find(|x| x.0 == m)
            .map(|x| if alg5 { x.1.clone() } else { x.2.clone() })
    };
    for alg5 in [true, false] {
        if let Some(r) = pick(&by_m, 10, alg5) {
            chosen.push(Chosen {
                run: r,
                clipped_test: None,
                pairwise: None,
            });
        }
    }
    if let Some((_, r)) = split_by_m.iter().find(|x| x.0 == 10) {
        chosen.push(Chosen {
            run: r.clone(),
            clipped_test: None,
            pairwise: None,
        });
    }

    let families = baseline_families(&with);
    for (family, grid) in families {
        chosen.push(Chosen {
            run: run_best(family, None, &grid, &file, key, &mut all)?,
            clipped_test: None,
            pairwise: None,
        });
    }

    // Test RMSE with predictions clipped into the rating scale (as River's PredClipper does),
    // and what the pairwise part adds to the (unclipped) test predictions, for every chosen
    // configuration (a second run of the same configuration; its timings are not used).
    for c in chosen.iter_mut() {
        let mut a = c.run.args.clone();
        a.push(s("--clip-predictions"));
        a.push(s("--pairwise"));
        if let Ok(r) = run_fm(&a, &file) {
            c.clipped_test = r["test_rmse"].as_f64();
            c.pairwise = r["test_pairwise_rms"]
                .as_f64()
                .zip(r["test_rmse_without_pairwise"].as_f64());
        }
    }

    let extras = side_feature_extras(ds, data_dir, &file, &with, &mut all)?;
    let river = run_river(&file);
    Ok(DatasetResult {
        label: ds.label,
        all,
        chosen,
        by_m,
        split_by_m,
        ablation,
        river,
        extras,
    })
}

/// The η read back from a chosen SFTRL run's learner description (`… eta=0.015 …`).
fn eta_of(run: &FmRun) -> String {
    run.report["learner"]
        .as_str()
        .and_then(|l| l.split("eta=").nth(1))
        .and_then(|t| t.split_whitespace().next())
        .unwrap_or("0.015")
        .to_string()
}

/// The baselines' grids: split SFTRL tuned, full FTRL, OGD, OCG, FM-SGD and the biases-only model.
fn baseline_families(with: &impl Fn(Vec<String>) -> Vec<String>) -> Vec<(&'static str, Grid)> {
    vec![
        (
            SPLIT_TUNED,
            split_grid(&[0.1, 0.2, 0.3], &[0.25, 0.5, 1.0], with),
        ),
        (
            "FTRL (full matrix)",
            algo_grid("ftrl", &[0.005, 0.01, 0.015, 0.02, 0.03], &[], with),
        ),
        (
            "OGD (η/√t)",
            algo_grid("ogd", &[0.25, 0.5, 1.0, 2.0], &[], with),
        ),
        (
            "OCG (nuclear ball)",
            [(10.0, 0.2, 0.01), (20.0, 0.2, 0.01)]
                .iter()
                .map(|&(tau, g, e)| {
                    (
                        format!("tau={tau} gamma={g} eta={e} block=100 mu=3"),
                        with(args(&[
                            ("--algo", s("ocg")),
                            ("--radius", s(tau)),
                            ("--ocg-gamma", s(g)),
                            ("--eta", s(e)),
                            ("--ocg-block", s(100)),
                            ("--intercept", s(3)),
                        ])),
                    )
                })
                .collect(),
        ),
        ("FM-SGD (Rendle, k=10)", {
            let mut g = algo_grid("fm-sgd", &[0.02, 0.04], &[], with);
            // River's MovieLens tutorial rates (factors, linear, intercept; intercept 3), as
            // written and doubled (River's squared loss has twice our gradient).
            for (label, v, w, w0) in [
                ("River tutorial rates as written", 0.05, 0.025, 0.01),
                (
                    "River tutorial rates x2 (= River's loss scale)",
                    0.1,
                    0.05,
                    0.02,
                ),
            ] {
                g.push((
                    format!("{label}: eta={v} w={w} w0={w0} mu=3"),
                    with(args(&[
                        ("--algo", s("fm-sgd")),
                        ("--eta", s(v)),
                        ("--eta-linear", s(w)),
                        ("--eta-intercept", s(w0)),
                        ("--intercept", s(3)),
                    ])),
                ));
            }
            g
        }),
        // The same FM with its factors fixed at zero (they never move from there): a linear
        // user + item bias model, what the pairwise interactions are measured against.
        (
            BIASES_ONLY,
            [0.025, 0.05, 0.1]
                .iter()
                .map(|&w| {
                    (
                        format!("factors fixed at 0: w={w} w0=0.02 mu=3"),
                        with(args(&[
                            ("--algo", s("fm-sgd")),
                            ("--init-std", s(0)),
                            ("--eta-linear", s(w)),
                            ("--eta-intercept", s(0.02)),
                            ("--intercept", s(3)),
                        ])),
                    )
                })
                .collect(),
        ),
    ]
}

/// Extras: side features (MovieLens-100K u.user / u.item), rows scaled to unit norm (without
/// the scaling the longer rows need a much smaller step); every run joins `all`.
fn side_feature_extras(
    ds: &Dataset,
    data_dir: &Path,
    file: &Path,
    with: &impl Fn(Vec<String>) -> Vec<String>,
    all: &mut Vec<FmRun>,
) -> Result<Vec<FmRun>> {
    let key = "progressive_rmse";
    let mut extras = Vec::new();
    if let Some((u, i)) = ds.side {
        let side = vec![
            s("--user-features"),
            data_dir.join(u).to_string_lossy().into_owned(),
            s("--item-features"),
            data_dir.join(i).to_string_lossy().into_owned(),
            s("--normalize"),
        ];
        let mut grid = Vec::new();
        for eta in [0.02, 0.04] {
            let mut a = with(args(&[
                ("--algo", s("sftrl-fast")),
                ("--size", s(10)),
                ("--eta", s(eta)),
            ]));
            a.extend(side.clone());
            grid.push((format!("m=10 eta={eta} +side features, unit rows"), a));
        }
        extras.push(run_best("SFTRL (Alg. 5)", Some(10), &grid, file, key, all)?);
        let mut a = with(args(&[("--algo", s("fm-sgd")), ("--intercept", s(3))]));
        a.extend(side);
        let setting = s("default rates mu=3 +side features, unit rows");
        extras.push(run_one(
            "FM-SGD (Rendle, k=10)",
            None,
            setting,
            a,
            file,
            key,
            all,
        )?);
    }

    Ok(extras)
}
pub fn run(args: &ReproArgs) -> Result<()> {
    let started = std::time::Instant::now();
    let load_before = load_average();
    let mut results = Vec::new();
    for ds in &DATASETS {
        results.push(run_dataset(ds, &args.data_dir)?);
    }
    let (mut md, mut csv) = report_start(
        "SFTRL paper §5.2: online rating prediction on MovieLens (RMSE, time, memory)",
        "dataset,family,setting,m,progressive_rmse,test_rmse,cpu_seconds,wall_seconds,\
         train_seconds,peak_rss_bytes,model_bytes,dim,unseen_users,unseen_items",
    )?;
    writeln!(
        md,
        "Protocol: one-hot user + item features (ids remapped on the training part; an id unseen \
         in training loses its one-hot feature at test time), raw ratings, half squared loss, the \
         compact FM `z = âᵀΘâ`, `â = [x; 1]` (FM-SGD: Rendle's FM, rank 10). The first 80 % of \
         the file in file order is learned in one online pass (progressive RMSE: each rating \
         predicted before it is learned), the last 20 % is predicted without updates (test RMSE). \
         Each family's hyper-parameters are the lowest progressive RMSE over the grid in the CSV \
         (the test part never chooses). Every run is its own process: *CPU s* is the CPU time of \
         the learning pass plus the test predictions (data loading excluded; robust to the other \
         jobs on this shared 2-core machine), *wall s* the elapsed time of the same, *model* the \
         bytes of the learner's state, *peak RSS* the process's VmHWM. Load average before/after: \
         {load_before} / {}. Clipped = predictions clipped into the rating scale for scoring \
         (learning unchanged), as River's `PredClipper` in its MovieLens tutorial.\n",
        load_average()
    )?;
    let mut panels = Vec::new();
    let mut verdicts = Vec::new();
    for r in &results {
        writeln!(md, "## {}\n", r.label)?;
        runs_csv(&mut csv, r)?;
        let river_best = chosen_tables(&mut md, &mut csv, r)?;
        split_tables(&mut md, r)?;
        observations(&mut md, r)?;
        // Targets (MovieLens-100K).
        if r.label == "MovieLens-100K" {
            targets(&mut verdicts, r, river_best);
        }
        panels.extend(dataset_panels(r, river_best));
    }
    writeln!(md, "## Targets\n")?;
    for v in &verdicts {
        writeln!(md, "{v}")?;
    }
    writeln!(
        md,
        "\n![RMSE, CPU time and learning curves](fm_movielens.png)\n\n(Flat lines: the chosen \
         configuration of each baseline, which has no sketch size.)\n\nTotal experiment time: \
         {:.0} s.",
        started.elapsed().as_secs_f64()
    )?;
    // Two rows of three panels: one figure per dataset, side by side in one PNG each.
    let png = args.out.join("fm_movielens.png");
    line_panels(&png, &panels[..3.min(panels.len())], 1800, 520)?;
    if panels.len() > 3 {
        line_panels(
            &args.out.join("fm_movielens_latest_small.png"),
            &panels[3..],
            1800,
            520,
        )?;
        writeln!(md, "\n![ml-latest-small](fm_movielens_latest_small.png)")?;
    }
    write_md_csv(&args.out, "fm_movielens", &md, &csv, None)?;
    Ok(())
}

/// Every run of one dataset as a CSV row.
fn runs_csv(csv: &mut String, r: &DatasetResult) -> Result<()> {
    for run in &r.all {
        run.csv_line(
            csv,
            r.label,
            &[
                ("progressive_rmse", 6),
                ("test_rmse", 6),
                ("cpu_seconds", 4),
                ("seconds", 4),
                ("train_seconds", 4),
                ("peak_rss_bytes", 0),
                ("model_bytes", 0),
                ("dim", 0),
                ("unseen_users", 0),
                ("unseen_items", 0),
            ],
        )?;
    }
    Ok(())
}

/// The dataset's size, each method's chosen configuration (River's runs too, also into the
/// CSV) and SFTRL against m; River's chosen (test RMSE, clipped test RMSE).
fn chosen_tables(
    md: &mut String,
    csv: &mut String,
    r: &DatasetResult,
) -> Result<Option<(f64, f64)>> {
    if let Some(first) = r.all.first() {
        writeln!(
            md,
            "d = {} one-hot features (+ the constant of â); {} training and {} test ratings; \
             {} test ratings by users and {} by items unseen in training.\n",
            fmt_opt(first.num("dim"), 0),
            fmt_opt(first.num("train_examples"), 0),
            fmt_opt(first.num("test_examples"), 0),
            fmt_opt(first.num("unseen_users"), 0),
            fmt_opt(first.num("unseen_items"), 0),
        )?;
    }
    writeln!(md, "### Chosen configuration of each method\n")?;
    table_header(md, "| method | setting | progressive RMSE | test RMSE | test RMSE clipped | pairwise part RMS (test) | test RMSE without it | CPU s | wall s | model | peak RSS |")?;
    for c in &r.chosen {
        let run = &c.run;
        writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            run.family,
            run.setting,
            run.cells(&RMSE, " | "),
            fmt_opt(c.clipped_test, 4),
            fmt_opt(c.pairwise.map(|p| p.0), 4),
            fmt_opt(c.pairwise.map(|p| p.1), 4),
            run.cells(&TIMES, " | "),
            fmt_bytes(run.num("model_bytes")),
            fmt_bytes(run.num("peak_rss_bytes")),
        )?;
    }
    let mut river_best: Option<(f64, f64)> = None;
    match &r.river {
        Ok(lines) => {
            for l in lines.iter().filter(|l| l["type"] == "run") {
                let is_best = lines
                    .iter()
                    .any(|b| b["type"] == "best" && b["setting"] == l["setting"]);
                writeln!(
                    md,
                    "| River 0.26.1 FMRegressor{} | {} | {} | {} | {} | - | - | - | {} | - | - |",
                    if is_best { " (chosen)" } else { "" },
                    l["setting"].as_str().unwrap_or("?"),
                    fmt_opt(l["progressive_rmse"].as_f64(), 4),
                    fmt_opt(l["test_rmse"].as_f64(), 4),
                    fmt_opt(l["test_rmse_clipped"].as_f64(), 4),
                    fmt_opt(l["seconds"].as_f64(), 3),
                )?;
                if is_best {
                    river_best = l["test_rmse"].as_f64().zip(l["test_rmse_clipped"].as_f64());
                }
                writeln!(
                    csv,
                    "{},\"River FMRegressor\",\"{}\",,{},{},,{},,,,,,",
                    r.label,
                    l["setting"].as_str().unwrap_or("?"),
                    fmt_opt(l["progressive_rmse"].as_f64(), 6),
                    fmt_opt(l["test_rmse"].as_f64(), 6),
                    fmt_opt(l["seconds"].as_f64(), 4),
                )?;
            }
        }
        Err(why) => writeln!(md, "| River | not run: {why} | | | | | | | | | |")?,
    }
    for e in &r.extras {
        writeln!(
            md,
            "| {} | {} | {} | - | - | - | {} | {} | {} |",
            e.family,
            e.setting,
            e.cells(&RMSE, " | "),
            e.cells(&TIMES, " | "),
            fmt_bytes(e.num("model_bytes")),
            fmt_bytes(e.num("peak_rss_bytes")),
        )?;
    }
    writeln!(md)?;

    writeln!(md, "### SFTRL against the sketch size m\n")?;
    table_header(md, "| m | Alg. 5 setting | Alg. 5 progressive | Alg. 5 test | Alg. 5 CPU s | Alg. 5 wall s | Alg. 4 progressive | Alg. 4 test | Alg. 4 CPU s | Alg. 4 wall s | model (Alg. 5 / Alg. 4) |")?;
    for (m, fast, slow) in &r.by_m {
        writeln!(
            md,
            "| {m} | {} | {} | {} | {} | {} | {} / {} |",
            fast.setting,
            fast.cells(&RMSE, " | "),
            fast.cells(&TIMES, " | "),
            slow.cells(&RMSE, " | "),
            slow.cells(&TIMES, " | "),
            fmt_bytes(fast.num("model_bytes")),
            fmt_bytes(slow.num("model_bytes")),
        )?;
    }
    writeln!(md)?;
    Ok(river_best)
}

/// Split SFTRL at its defaults against m, and its ablation.
fn split_tables(md: &mut String, r: &DatasetResult) -> Result<()> {
    // The defaults as the command line has them (the text cannot go stale).
    let defaults = FmConfig::for_loss(FmAlgorithm::SftrlSplit, Loss::Squared);
    let beta = match defaults.first_order {
        FirstOrderStep::AdaGrad { beta } => beta,
        FirstOrderStep::Constant => f64::NAN,
    };
    writeln!(
        md,
        "### Split SFTRL (this crate) at its defaults against the sketch size m\n\n\
         `sketchlearn fm --algo sftrl-split --size m`, nothing tuned: the first-order part \
         (intercept, user and item terms) exact with per-entry AdaGrad steps (η = {}, \
         β = {beta}), the pairwise part sketched alone, step η_p = {}, by a signed sketch \
         compressed jointly by truncation (see `SftrlSplit`).\n",
        defaults.eta, defaults.eta_pairwise
    )?;
    table_header(
        md,
        "| m | progressive RMSE | test RMSE | CPU s | wall s | model | peak RSS |",
    )?;
    for (m, run) in &r.split_by_m {
        writeln!(
            md,
            "| {m} | {} | {} | {} | {} |",
            run.cells(&RMSE, " | "),
            run.cells(&TIMES, " | "),
            fmt_bytes(run.num("model_bytes")),
            fmt_bytes(run.num("peak_rss_bytes")),
        )?;
    }
    writeln!(
        md,
        "\nAblation (m = 10, defaults otherwise; each row undoes one change):\n"
    )?;
    table_header(md, "| variant | progressive RMSE | test RMSE | CPU s |")?;
    if let Some((_, d)) = r.split_by_m.iter().find(|x| x.0 == 10) {
        writeln!(
            md,
            "| split SFTRL, defaults | {} | {} |",
            d.cells(&RMSE, " | "),
            fmt_opt(d.num("cpu_seconds"), 3),
        )?;
    }
    for a in &r.ablation {
        writeln!(
            md,
            "| {} | {} | {} |",
            a.setting,
            a.cells(&RMSE, " | "),
            fmt_opt(a.num("cpu_seconds"), 3),
        )?;
    }
    writeln!(md)?;
    Ok(())
}

/// Observations computed from this run.
fn observations(md: &mut String, r: &DatasetResult) -> Result<()> {
    let find = |prefix: &str| r.chosen.iter().find(|c| c.run.family.starts_with(prefix));
    let test = |c: Option<&Chosen>| c.and_then(|c| c.run.num("test_rmse"));
    let sftrl10 = r
        .by_m
        .iter()
        .find(|x| x.0 == 10)
        .and_then(|x| x.1.num("test_rmse"));
    writeln!(md, "Observations:\n")?;
    if let (Some(a), Some(f)) = (sftrl10, test(find("FTRL"))) {
        let ratio = find("FTRL")
            .and_then(|c| c.run.num("model_bytes"))
            .zip(
                r.by_m
                    .iter()
                    .find(|x| x.0 == 10)
                    .and_then(|x| x.1.num("model_bytes")),
            )
            .map_or(f64::NAN, |(full, sk)| full / sk);
        writeln!(
            md,
            "- Full-matrix FTRL (what SFTRL sketches) has test RMSE {f:.4} against {a:.4} for \
             SFTRL Alg. 5 with m = 10: {} Its state is {ratio:.0}× larger; its time is lower \
             here only because a one-hot example touches just 3×3 entries of the dense matrix.",
            if f < a {
                "on this data the sketch costs accuracy (the paper's Table 2, where FTRL is far \
                 behind, does not reproduce with a tuned step)."
            } else {
                "the sketch does not cost accuracy here."
            }
        )?;
    }
    if let (Some(fm), Ok(lines)) = (find("FM-SGD"), &r.river) {
        let river = lines
            .iter()
            .find(|l| l["type"] == "best")
            .and_then(|l| l["test_rmse"].as_f64());
        if let (Some(ours), Some(river)) = (fm.run.num("test_rmse"), river) {
            writeln!(
                md,
                "- Rendle's FM by SGD (this crate) has test RMSE {ours:.4}, River's FMRegressor \
                 {river:.4}: the same model and algorithm, at River's tutorial rates doubled \
                 (River's squared loss `(p − y)²` has twice the gradient of `½(p − y)²`)."
            )?;
        }
    }
    // What the pairwise interactions add: SFTRL's against Rendle's FM, and the linear
    // (biases-only) model both would be without them.
    let pairwise = |prefix: &str| find(prefix).and_then(|c| c.pairwise.zip(test(Some(c))));
    if let (Some(((s_rms, s_without), s_test)), Some(((f_rms, _), f_test)), Some(lin)) = (
        pairwise("SFTRL (Alg. 5)"),
        pairwise("FM-SGD"),
        test(find(BIASES_ONLY)),
    ) {
        writeln!(
            md,
            "- What the pairwise interactions add on the test part: in SFTRL (Alg. 5, m = 10) \
             their part of the predictions has RMS {s_rms:.4} (test RMSE {s_test:.4}, \
             {s_without:.4} without it); in Rendle's FM {f_rms:.4} (test RMSE {f_test:.4}). The \
             linear model both contain — intercept, user and item biases — reaches {lin:.4} \
             alone (FM-SGD with its factors fixed at 0). {}",
            if f_rms < 0.02 {
                "Neither model's pairwise part matters on this test part (the ratings to \
                 predict are mostly by users unseen in training, see below): the test RMSE \
                 compares bias models here."
            } else if s_rms < 0.1 * f_rms {
                "So on this data SFTRL is in effect a bias model. Full FTRL's pairwise part \
                 is exactly 0 on a pair never rated in training (its Θ_ui only moves when \
                 user u rates item i), so a sketch can generalise to new pairs only through \
                 its low rank; SFTRL's GFD sketches the positive and the negative gradient \
                 sums separately, each dominated by the constant and the per-user and \
                 per-item terms the two share, and what survives of their difference in the \
                 user × item block is ~0. This is why SFTRL cannot reach Rendle's FM (or \
                 River's) here, whatever m and η: the FM's gain over the bias model is \
                 what its factors learn."
            } else {
                "SFTRL's sketch carries a real interaction part here."
            }
        )?;
    }
    if let (Some(((p_rms, p_without), p_test)), Some(lin)) =
        (pairwise(SPLIT_DEFAULTS), test(find(BIASES_ONLY)))
    {
        writeln!(
            md,
            "- Split SFTRL (defaults, m = 10) keeps the first-order part out of the sketch and \
             sketches the pairwise part alone, compressed jointly: its pairwise part has RMS \
             {p_rms:.4} on the test part (test RMSE {p_test:.4}, {p_without:.4} without it; the \
             FM-SGD bias model {lin:.4}). The ablation above separates what each change does."
        )?;
    }
    for e in &r.extras {
        let base = if e.family.starts_with("SFTRL") {
            sftrl10
        } else {
            test(find("FM-SGD"))
        };
        if let (Some(x), Some(b)) = (e.num("test_rmse"), base) {
            writeln!(
                md,
                "- {} with the u.user/u.item side features ({}): test RMSE {x:.4} against \
                 {b:.4} without them: {} in one pass at these steps.",
                e.family,
                e.setting,
                if x < b {
                    "they help"
                } else {
                    "they do not help"
                }
            )?;
        }
    }
    if let Some(first) = r.all.first() {
        let unseen = first.num("unseen_users").unwrap_or(0.0);
        let n = first.num("test_examples").unwrap_or(1.0);
        if unseen > 0.5 * n {
            writeln!(
                md,
                "- The file is sorted by user, so {:.0} % of the test ratings come from users \
                 never seen in training: the test RMSE measures cold-start predictions (bias \
                 and item effects only) and is not comparable with the progressive RMSE.",
                100.0 * unseen / n
            )?;
        }
    }
    writeln!(
        md,
        "- Peak RSS can be below the model bytes of the dense baselines: their zero-initialised \
         (d+1)² matrix is mapped lazily and only the pages that one-hot examples touch become \
         resident.\n"
    )?;
    Ok(())
}

/// The targets on MovieLens-100K, each a line of `verdicts`.
fn targets(verdicts: &mut Vec<String>, r: &DatasetResult, river_best: Option<(f64, f64)>) {
    let best_sftrl = r.by_m.iter().flat_map(|(_, a, b)| [a, b]).min_by(|a, b| {
        a.num("test_rmse")
            .unwrap_or(f64::INFINITY)
            .total_cmp(&b.num("test_rmse").unwrap_or(f64::INFINITY))
    });
    let m10 = r.by_m.iter().find(|x| x.0 == 10);
    if let (Some(m10), Some(best)) = (m10, best_sftrl) {
        let t10 = m10.1.num("test_rmse").unwrap_or(f64::NAN);
        let tb = best.num("test_rmse").unwrap_or(f64::NAN);
        verdicts.push(format!(
            "- **RMSE ≤ {PAPER_RMSE}** (paper, SFTRL on MovieLens-100K): SFTRL Alg. 5 with m = 10 \
             has test RMSE {t10:.4} ({}), progressive RMSE {:.4}; the best SFTRL cell (chosen by \
             progressive RMSE within each m, {} {}) has test RMSE {tb:.4} ({}).",
            if t10 <= PAPER_RMSE { "met" } else { "not met" },
            m10.1.num("progressive_rmse").unwrap_or(f64::NAN),
            best.family,
            best.setting,
            if tb <= PAPER_RMSE { "met" } else { "not met" },
        ));
        if let Some((river_test, river_clipped)) = river_best {
            verdicts.push(format!(
                "- **RMSE ≤ River FM's**: River's chosen FMRegressor has test RMSE {river_test:.4} \
                 ({river_clipped:.4} clipped); SFTRL m = 10: {t10:.4} ({}); best SFTRL cell: \
                 {tb:.4} ({}).",
                if t10 <= river_test { "met" } else { "not met" },
                if tb <= river_test { "met" } else { "not met" },
            ));
        }
        if let Some((_, sp)) = r.split_by_m.iter().find(|x| x.0 == 10) {
            let ts = sp.num("test_rmse").unwrap_or(f64::NAN);
            let ps = sp.num("progressive_rmse").unwrap_or(f64::NAN);
            let (cpu, wall) = (
                sp.num("cpu_seconds").unwrap_or(f64::NAN),
                sp.num("seconds").unwrap_or(f64::NAN),
            );
            let river = river_best.map(|x| x.0);
            verdicts.push(format!(
                "- **Split SFTRL (this crate), m = 10, default settings**: test RMSE {ts:.4} \
                 (≤ {PAPER_RMSE}: {}; ≤ River's chosen FMRegressor {}: {}), progressive RMSE \
                 {ps:.4}; one pass {cpu:.3} s CPU, {wall:.3} s wall (under 1 s: {}).",
                if ts <= PAPER_RMSE { "met" } else { "not met" },
                river.map_or("-".to_string(), |x| format!("{x:.4}")),
                match river {
                    Some(x) if ts <= x => "met",
                    Some(_) => "not met",
                    None => "River not run",
                },
                if cpu < 1.0 && wall < 1.0 {
                    "met"
                } else if cpu < 1.0 {
                    "met in CPU time"
                } else {
                    "not met"
                },
            ));
        }
        let cpu = m10.1.num("cpu_seconds").unwrap_or(f64::NAN);
        let wall = m10.1.num("seconds").unwrap_or(f64::NAN);
        let cpu4 = m10.2.num("cpu_seconds").unwrap_or(f64::NAN);
        let wall4 = m10.2.num("seconds").unwrap_or(f64::NAN);
        verdicts.push(format!(
            "- **One pass on MovieLens-100K under 1 s** (80,000 ratings learned + 20,000 \
             predicted): SFTRL Alg. 5, m = 10: {cpu:.3} s CPU, {wall:.3} s wall ({}); \
             Alg. 4, m = 10: {cpu4:.3} s CPU, {wall4:.3} s wall ({}). The paper reports \
             167 s (MATLAB).",
            if cpu < 1.0 && wall < 1.0 {
                "met"
            } else if cpu < 1.0 {
                "met in CPU time; wall time inflated by the machine's load"
            } else {
                "not met"
            },
            if cpu4 < 1.0 && wall4 < 1.0 {
                "met"
            } else if cpu4 < 1.0 {
                "met in CPU time"
            } else {
                "not met"
            },
        ));
    }
}

/// One dataset's panels: test RMSE and CPU seconds against m, and the learning curves.
fn dataset_panels(r: &DatasetResult, river_best: Option<(f64, f64)>) -> Vec<Panel> {
    let mut panels = Vec::new();
    let xs: Vec<f64> = r.by_m.iter().map(|x| x.0 as f64).collect();
    let (x0, x1) = (
        xs.first().copied().unwrap_or(1.0),
        xs.last().copied().unwrap_or(2.0),
    );
    let flat = |label: &str, y: Option<f64>| Series {
        label: label.to_string(),
        points: y.map_or(Vec::new(), |y| vec![(x0, y), (x1, y)]),
    };
    let mut rmse_series = vec![
        Series {
            label: "SFTRL Alg.5 test".into(),
            points: r
                .by_m
                .iter()
                .filter_map(|(m, f, _)| Some((*m as f64, f.num("test_rmse")?)))
                .collect(),
        },
        Series {
            label: "SFTRL Alg.4 test".into(),
            points: r
                .by_m
                .iter()
                .filter_map(|(m, _, p)| Some((*m as f64, p.num("test_rmse")?)))
                .collect(),
        },
    ];
    let split_series = |key: &str| Series {
        label: "Split SFTRL".into(),
        points: r
            .split_by_m
            .iter()
            .filter_map(|(m, run)| Some((*m as f64, run.num(key)?)))
            .collect(),
    };
    rmse_series.push(Series {
        label: "Split SFTRL test".into(),
        ..split_series("test_rmse")
    });
    let mut cpu_series = vec![
        Series {
            label: "SFTRL Alg.5".into(),
            points: r
                .by_m
                .iter()
                .filter_map(|(m, f, _)| Some((*m as f64, f.num("cpu_seconds")?)))
                .collect(),
        },
        Series {
            label: "SFTRL Alg.4".into(),
            points: r
                .by_m
                .iter()
                .filter_map(|(m, _, p)| Some((*m as f64, p.num("cpu_seconds")?)))
                .collect(),
        },
        split_series("cpu_seconds"),
    ];
    for c in r
        .chosen
        .iter()
        .filter(|c| !c.run.family.starts_with("SFTRL") && !c.run.family.starts_with("Split"))
    {
        let short = c.run.family.split(' ').next().unwrap_or("?").to_string();
        rmse_series.push(flat(&format!("{short} test"), c.run.num("test_rmse")));
        cpu_series.push(flat(&short, c.run.num("cpu_seconds")));
    }
    if let Some((river_test, _)) = river_best {
        rmse_series.push(flat("River FM test", Some(river_test)));
    }
    if r.label == "MovieLens-100K" {
        rmse_series.push(flat("paper SFTRL 0.9624", Some(PAPER_RMSE)));
    }
    panels.push(Panel {
        title: format!("{}: test RMSE", r.label),
        x_label: "sketch size m".into(),
        y_label: "test RMSE".into(),
        log_x: true,
        log_y: false,
        series: rmse_series,
    });
    panels.push(Panel {
        title: format!("{}: CPU seconds", r.label),
        x_label: "sketch size m".into(),
        y_label: "CPU s (pass + test)".into(),
        log_x: true,
        log_y: true,
        series: cpu_series,
    });
    let curves: Vec<Series> = r
        .chosen
        .iter()
        .map(|c| Series {
            label: format!(
                "{}{}",
                c.run.family.split(' ').next().unwrap_or("?"),
                if c.run.family.contains("Alg. 4") {
                    " Alg.4"
                } else if c.run.family.contains("Alg. 5") {
                    " Alg.5"
                } else if c.run.family == SPLIT_DEFAULTS {
                    " SFTRL defaults"
                } else if c.run.family == SPLIT_TUNED {
                    " SFTRL tuned"
                } else {
                    ""
                }
            ),
            points: c
                .run
                .curve()
                .into_iter()
                .filter(|(n, _)| *n >= 64.0)
                .map(|(n, l)| (n, (2.0 * l).sqrt()))
                .collect(),
        })
        .collect();
    panels.push(Panel {
        title: format!("{}: progressive RMSE", r.label),
        x_label: "ratings learned".into(),
        y_label: "progressive RMSE so far".into(),
        log_x: true,
        log_y: false,
        series: curves,
    });
    panels
}
