//! Progressive error of the sparse-time SON learners (one pass, m = 10) on `r8_earn_vs_rest` and
//! `a9a`, unhashed (LIBSVM indices, `d` from the file) and hashed (VW text, `-b 18`, hashed as
//! VW hashes), untuned (defaults) and tuned (best of a grid, as the peers are tuned), next to
//! VW AdaGrad and OjaNewton run in the same process tree (`scripts/peers/run_vw.py`, tuned and
//! untuned; VW always hashes).
//!
//! Last, the SON §5.1 ill-conditioned data (dense, d = 100, n = 10 000, condition number 200,
//! **unnormalised**), where VW 9.11.9's OjaNewton with `--normalize false` (the paper's plain
//! Oja-SON) produces NaN weights: sketchlearn's sparse Oja-SON (no diagonal adaptation) next to
//! it, tuned and untuned; the VW rows report the status `run_vw.py` found (non-finite weights).
//!
//! Grids (the same spacing as VW's): SON `α ∈ {2^-6, …, 2^10}` (the step is `1/α`, VW's
//! `--alpha_inverse` grid is `2^-10 … 2^6`), RFD `α₀` likewise, AdaGrad learning rate
//! `2^-3 … 2^6`. Tuning on the same pass that is scored (as in the SON paper's Table 3 and as
//! the VW runs are tuned).

use super::sparse_common::{libsvm_as_vw, load_libsvm, load_vw, time_learner};
use super::{command_line, ReproArgs};
use crate::machine::{load_average, utc_now};
use crate::peers::{find_python, Peers};
use crate::plot::{line_panels, Panel, Series};
use crate::report::{table_header, write_md_csv};
use anyhow::Result;
use serde_json::Value;
use sketchlearn::data::PackedExamples;
use sketchlearn::linear::{Algorithm, CurvatureKind, LearnerConfig, Representation};
use sketchlearn::Example;
use std::fmt::Write as _;
use std::path::Path;

const M: usize = 10;
const SETS: [&str; 2] = ["r8_earn_vs_rest", "a9a"];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Param {
    Alpha,
    Alpha0,
    Lr,
}

struct Spec {
    name: &'static str,
    config: LearnerConfig,
    param: Param,
}

fn specs() -> Vec<Spec> {
    let son = |c, p| LearnerConfig {
        algorithm: Algorithm::Newton,
        curvature: c,
        representation: Representation::Sparse,
        size: M,
        diag: p,
        ..LearnerConfig::default()
    };
    vec![
        Spec {
            name: "AdaGrad",
            config: LearnerConfig {
                algorithm: Algorithm::AdaGrad,
                ..LearnerConfig::default()
            },
            param: Param::Lr,
        },
        Spec {
            name: "Oja-SON (oja-sparse)",
            config: son(CurvatureKind::Oja, false),
            param: Param::Alpha,
        },
        Spec {
            name: "Oja-SON + diag (oja-sparse --diag)",
            config: son(CurvatureKind::Oja, true),
            param: Param::Alpha,
        },
        Spec {
            name: "RP-SON (rp-sparse)",
            config: son(CurvatureKind::Rp, false),
            param: Param::Alpha,
        },
        Spec {
            name: "FD-SON (fd-sparse)",
            config: son(CurvatureKind::FdFast, false),
            param: Param::Alpha,
        },
        Spec {
            name: "RFD-SON (rfd-sparse)",
            config: son(CurvatureKind::RfdFast, false),
            param: Param::Alpha0,
        },
    ]
}

fn grid(p: Param) -> Vec<f64> {
    match p {
        Param::Lr => (-3..=6).map(|k| 2f64.powi(k)).collect(),
        _ => (-6..=10).map(|k| 2f64.powi(k)).collect(),
    }
}

fn with(cfg: &LearnerConfig, p: Param, v: f64) -> LearnerConfig {
    let mut c = cfg.clone();
    match p {
        Param::Alpha => c.alpha = v,
        Param::Alpha0 => c.alpha0 = v,
        Param::Lr => c.learning_rate = v,
    }
    c
}

struct Row {
    data: String,
    input: String,
    learner: String,
    untuned: f64,
    tuned: f64,
    best: String,
    n: usize,
    curve: Vec<(f64, f64)>,
}

pub fn run(args: &ReproArgs) -> Result<()> {
    let mut rows = Vec::new();
    for set in SETS {
        let src = args.data_dir.join(format!("{set}.libsvm"));
        let vw = libsvm_as_vw(&src)?;
        let inputs: [(&str, Vec<Example>); 2] = [
            ("unhashed (LIBSVM)", load_libsvm(&src)?),
            ("hashed (VW, b=18)", load_vw(&vw, 18)?),
        ];
        for (input, data) in &inputs {
            let dim = if input.starts_with("hashed") {
                1 << 18
            } else {
                super::sparse_common::dim_of(data)
            };
            let data = &PackedExamples::from(&data[..]);
            for s in specs() {
                eprintln!("{set} {input} {}", s.name);
                let untuned = time_learner(&s.config, dim, data)?.error;
                let mut curve = Vec::new();
                for v in grid(s.param) {
                    let e = time_learner(&with(&s.config, s.param, v), dim, data)?.error;
                    curve.push((v, e));
                }
                let (bv, be) = lowest(&curve);
                let pname = match s.param {
                    Param::Alpha => "α",
                    Param::Alpha0 => "α₀",
                    Param::Lr => "lr",
                };
                rows.push(Row {
                    data: set.into(),
                    input: input.to_string(),
                    learner: s.name.into(),
                    untuned,
                    tuned: be,
                    best: format!("{pname} = {bv}"),
                    n: data.len(),
                    curve,
                });
            }
        }
        if let Some(peers) = find_python() {
            let out = vw_grid(&peers, "adagrad,oja", &[], &vw)?;
            for (mode, name) in [("adagrad", "VW AdaGrad"), ("oja", "VW OjaNewton")] {
                let best = |setting: &str| {
                    out.iter()
                        .find(|r| {
                            r["type"] == "best" && r["mode"] == mode && r["setting"] == setting
                        })
                        .cloned()
                };
                let (u, t) = (best("untuned"), best("tuned"));
                let err = |r: &Option<serde_json::Value>| {
                    r.as_ref()
                        .and_then(|r| r["progressive_error"].as_f64())
                        .unwrap_or(f64::NAN)
                };
                let status = |r: &Option<serde_json::Value>| {
                    r.as_ref()
                        .and_then(|r| r["status"].as_str().map(String::from))
                        .unwrap_or_default()
                };
                let curve: Vec<(f64, f64)> = out
                    .iter()
                    .filter(|r| r["type"] == "run" && r["mode"] == mode && r["setting"] == "tuned")
                    .filter_map(|r| Some((r["value"].as_f64()?, r["progressive_error"].as_f64()?)))
                    .collect();
                rows.push(Row {
                    data: set.into(),
                    input: "hashed (VW, b=18)".into(),
                    learner: name.into(),
                    untuned: err(&u),
                    tuned: err(&t),
                    best: format!(
                        "{} = {} {}",
                        t.as_ref().and_then(|r| r["param"].as_str()).unwrap_or("?"),
                        t.as_ref()
                            .map(|r| r["value"].to_string())
                            .unwrap_or_default(),
                        [status(&u), status(&t)]
                            .iter()
                            .filter(|s| !s.is_empty() && *s != "ok")
                            .cloned()
                            .collect::<Vec<_>>()
                            .join(" ")
                    ),
                    n: 0,
                    curve,
                });
            }
        }
    }
    ill_conditioned_rows(&mut rows)?;
    write_report(args, &rows)
}

/// The ill-conditioned unnormalised case (see the module documentation).
fn ill_conditioned_rows(rows: &mut Vec<Row>) -> Result<()> {
    let data = super::sparse_common::ill_conditioned(10_000, 100, 200.0, 0x111C);
    let vw = crate::paths::cache_dir()?.join("sparse_ill_conditioned_k200.vw");
    if !vw.exists() {
        super::sparse_common::write_vw(&vw, &data)?;
    }
    // Read back what the file holds (6 significant digits), as VW does.
    let data = PackedExamples::from(&load_vw(&vw, 18)?[..]);
    let set = "ill-conditioned κ=200 (unnormalised)";
    for (name, kind, diag) in [
        ("Oja-SON (oja-sparse)", CurvatureKind::Oja, false),
        (
            "Oja-SON + diag (oja-sparse --diag)",
            CurvatureKind::Oja,
            true,
        ),
        ("RP-SON (rp-sparse)", CurvatureKind::Rp, false),
        ("RFD-SON (rfd-sparse)", CurvatureKind::RfdFast, false),
    ] {
        let cfg = LearnerConfig {
            algorithm: Algorithm::Newton,
            curvature: kind,
            representation: Representation::Sparse,
            size: M,
            diag,
            ..LearnerConfig::default()
        };
        let p = if kind == CurvatureKind::RfdFast {
            Param::Alpha0
        } else {
            Param::Alpha
        };
        eprintln!("{set} {name}");
        let first = time_learner(&cfg, 1 << 18, &data)?;
        let mut curve = Vec::new();
        for v in grid(p) {
            curve.push((v, time_learner(&with(&cfg, p, v), 1 << 18, &data)?.error));
        }
        let (bv, be) = lowest(&curve);
        rows.push(Row {
            data: set.into(),
            input: "hashed (VW, b=18)".into(),
            learner: name.into(),
            untuned: first.error,
            tuned: be,
            best: format!(
                "{} = {bv}{}",
                if p == Param::Alpha0 { "α₀" } else { "α" },
                if first.refused > 0 {
                    format!("; untuned: {} refused steps", first.refused)
                } else {
                    String::new()
                }
            ),
            n: data.len(),
            curve,
        });
    }
    if let Some(peers) = find_python() {
        let out = vw_grid(&peers, "oja", &["--normalize", "false"], &vw)?;
        let runs: Vec<&serde_json::Value> = out.iter().filter(|r| r["type"] == "run").collect();
        let nan = runs.iter().filter(|r| r["status"] != "ok").count();
        let get = |setting: &str| {
            out.iter()
                .find(|r| r["type"] == "best" && r["setting"] == setting)
                .and_then(|r| r["progressive_error"].as_f64())
                .unwrap_or(f64::NAN)
        };
        rows.push(Row {
            data: set.into(),
            input: "hashed (VW, b=18)".into(),
            learner: "VW OjaNewton --normalize false".into(),
            untuned: get("untuned"),
            tuned: get("tuned"),
            best: format!("{nan} of {} runs ended with non-finite weights", runs.len()),
            n: 0,
            curve: Vec::new(),
        });
    }
    Ok(())
}

/// The `(value, error)` of `curve` with the lowest finite error (NaNs when there is none).
fn lowest(curve: &[(f64, f64)]) -> (f64, f64) {
    curve
        .iter()
        .copied()
        .filter(|c| c.1.is_finite())
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap_or((f64::NAN, f64::NAN))
}

/// `run_vw.py --mode MODES --setting both EXTRA… --bits 18 --sketch-size M VW`: VW's untuned
/// run and tuned grid on the hashed file `vw`, as JSON lines.
fn vw_grid(peers: &Peers, modes: &str, extra: &[&str], vw: &Path) -> Result<Vec<Value>> {
    let mut args: Vec<String> = ["--mode", modes, "--setting", "both"]
        .iter()
        .chain(extra)
        .map(|a| a.to_string())
        .collect();
    args.extend([
        "--bits".into(),
        "18".into(),
        "--sketch-size".into(),
        M.to_string(),
        vw.display().to_string(),
    ]);
    peers.run_script("scripts/peers/run_vw.py", &args)
}

fn write_report(args: &ReproArgs, rows: &[Row]) -> Result<()> {
    let mut md = String::new();
    let mut csv = String::from("data,input,learner,untuned_error,tuned_error,best\n");
    writeln!(
        md,
        "# Sparse-time SON: progressive error vs Vowpal Wabbit (m = {M})\n"
    )?;
    writeln!(
        md,
        "One pass, progressive 0/1 error, logistic loss. Measured {} (load average {}). \
         sketchlearn untuned = library defaults (intercept, α = α₀ = 1, c = 0.1, AdaGrad lr 0.5); \
         tuned = best of the grid α (RFD: α₀) ∈ 2^-6..2^10, AdaGrad lr ∈ 2^-3..2^6. VW untuned = \
         its defaults (`--OjaNewton --sketch_size {M}`: `--normalize true`, i.e. an AdaGrad-like \
         feature scaling, comparable to our `--diag`; AdaGrad `-l 0.5`), tuned over \
         `--alpha_inverse` 2^-10..2^6 / `-l` 2^-3..2^6 (`scripts/peers/run_vw.py`). The binomial \
         standard error of an error rate p on n examples is √(p(1−p)/n) (r8: n = 7674, a9a: \
         n = 32561). In the last block VW's error is of the run that finished with non-finite weights \
         when every run did.\n\nReproduce:\n\n```\n{}\n```\n",
        utc_now(),
        load_average(),
        command_line()
    )?;
    table_header(
        &mut md,
        "| data | input | learner | untuned | tuned | best setting |",
    )?;
    for r in rows {
        let se = if r.n > 0 {
            format!(" ±{:.4}", (r.tuned * (1.0 - r.tuned) / r.n as f64).sqrt())
        } else {
            String::new()
        };
        writeln!(
            md,
            "| {} | {} | {} | {:.4} | {:.4}{se} | {} |",
            r.data, r.input, r.learner, r.untuned, r.tuned, r.best
        )?;
        writeln!(
            csv,
            "{},{},{},{},{},{}",
            r.data,
            r.input,
            r.learner,
            r.untuned,
            r.tuned,
            r.best.replace(',', ";")
        )?;
    }
    let panels: Vec<Panel> = SETS
        .iter()
        .map(|set| Panel {
            title: format!("{set}, hashed b=18: error vs step 1/α (VW: alpha_inverse)"),
            x_label: "1/α".into(),
            y_label: "progressive error".into(),
            log_x: true,
            log_y: false,
            series: rows
                .iter()
                .filter(|r| {
                    r.data == *set
                        && r.input.starts_with("hashed")
                        && (r.learner.contains("SON") || r.learner.contains("Oja"))
                })
                .map(|r| Series {
                    label: r.learner.clone(),
                    points: r
                        .curve
                        .iter()
                        .map(|&(v, e)| {
                            if r.learner.starts_with("VW") {
                                (v, e)
                            } else {
                                (1.0 / v, e)
                            }
                        })
                        .collect(),
                })
                .collect(),
        })
        .collect();
    writeln!(md, "\n![accuracy](sparse_accuracy.png)")?;
    line_panels(&args.out.join("sparse_accuracy.png"), &panels, 1500, 550)?;
    write_md_csv(&args.out, "sparse_accuracy", &md, &csv, None)?;
    Ok(())
}
