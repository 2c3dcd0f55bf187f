//! The markdown report of `son-table3`: setup, the peers and references, the per-learner tables
//! and the findings computed from them.

use super::reference::{paper_table3, VW_VARIANTS};
use super::{Cell, Measured, Param, FULL_MAX_DIM, M};
use crate::machine::load_average;
use crate::plot::{CatPanel, CatSeries};
use crate::report::title_and_command;
use anyhow::Result;
use std::fmt::Write as _;
use std::path::Path;

/// The whole report.
pub(super) fn markdown(m: &Measured) -> Result<String> {
    let mut md = String::new();
    setup(&mut md, m)?;
    peer_table(&mut md, m)?;
    learner_tables(&mut md, m)?;
    findings_vs_peers(&mut md, m)?;
    finding_default(&mut md, m)?;
    finding_best(&mut md, m)?;
    findings_second_order(&mut md, m)?;
    robustness(&mut md, m)?;
    vw_notes(&mut md, m)?;
    closing(&mut md, m)?;
    Ok(md)
}

/// `1`: `e` beats `peer` by more than one SE; `-1`: loses by more than one SE; `0`: neither
/// (or no peer).
pub(super) fn verdict(e: f64, peer: Option<f64>, se: Option<f64>) -> i8 {
    match (peer, se) {
        (Some(p), Some(s)) if e < p - s => 1,
        (Some(p), Some(s)) if e > p + s => -1,
        _ => 0,
    }
}

/// Wins and losses by more than one SE (set names with the difference) and ties of one error
/// rate against another, set by set.
#[derive(Default)]
struct Tally {
    win: Vec<String>,
    lose: Vec<String>,
    tie: usize,
}

impl Tally {
    /// Set `name`: error `e` against `other`, within the set's standard error `se`.
    fn add(&mut self, name: &str, e: f64, other: f64, se: Option<f64>) {
        let entry = || format!("{name} ({:+.4})", e - other);
        match verdict(e, Some(other), se) {
            1 => self.win.push(entry()),
            -1 => self.lose.push(entry()),
            _ => self.tie += 1,
        }
    }

    /// `N ▲ [names], N ▼ [names], N within 1 SE.` (`arrows`) or `better on N [names], worse on
    /// N [names], N within 1 SE.`
    fn summary(&self, arrows: bool) -> String {
        let (w, l) = (self.win.join(", "), self.lose.join(", "));
        let (nw, nl, tie) = (self.win.len(), self.lose.len(), self.tie);
        if arrows {
            format!("{nw} ▲ [{w}], {nl} ▼ [{l}], {tie} within 1 SE.")
        } else {
            format!("better on {nw} [{w}], worse on {nl} [{l}], {tie} within 1 SE.")
        }
    }
}

fn mark(v: i8) -> &'static str {
    match v {
        1 => " ▲",
        -1 => " ▼",
        _ => "",
    }
}

/// A cell's usable error: the tuned choice's, or the untuned run's when it is usable.
pub(super) fn err_of(c: &Option<Cell>, tuned: bool) -> Option<f64> {
    let c = c.as_ref()?;
    if tuned {
        c.tuned.as_ref().and_then(|t| t.1.error)
    } else {
        c.untuned.error.filter(|_| c.untuned.usable())
    }
}

/// Title, how to reproduce, the run's conditions and the setup.
fn setup(md: &mut String, m: &Measured) -> Result<()> {
    let Measured {
        columns,
        default_cfg,
        default_col,
        peers,
        results_md,
        quoted,
        data_dir,
        date,
        load_before,
        t0,
        ours_seconds,
        vw_seconds,
        ..
    } = m;
    title_and_command(
        md,
        "SON paper Table 3 (§5.2): one-pass progressive error, sketchlearn vs peers",
        "peers need",
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
        data_dir.display()
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
    for &col in columns {
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
    Ok(())
}

/// The peers' and the references' numbers per dataset.
fn peer_table(md: &mut String, m: &Measured) -> Result<()> {
    let vw_cell = |ds: usize, key: &str, setting: &str| m.vw_cell(ds, key, setting);
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
    for (i, r) in m.results.iter().enumerate() {
        let rf = &m.refs[i];
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
            m.quoted
                .get(r.name)
                .and_then(|q| q.full.clone())
                .unwrap_or_else(|| "—".into()),
            paper
        )?;
    }
    writeln!(md)?;
    Ok(())
}

/// sketchlearn's errors, tuned and untuned, against the best peer.
fn learner_tables(md: &mut String, m: &Measured) -> Result<()> {
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
        for col in &m.columns {
            write!(header, " {} |", col.label())?;
            rule.push_str("---|");
        }
        writeln!(md, "{header}\n{rule}")?;
        for (i, r) in m.results.iter().enumerate() {
            let rf = &m.refs[i];
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
    Ok(())
}

/// Per learner column: wins and losses against the best peer.
fn findings_vs_peers(md: &mut String, m: &Measured) -> Result<()> {
    writeln!(md, "## Findings (computed from the tables above)\n")?;
    for tuned in [true, false] {
        writeln!(
            md,
            "**{} vs the best {} peer** (wins ▲ / losses ▼ by more than one SE, out of the sets \
             where both exist):\n",
            if tuned { "Tuned" } else { "Untuned" },
            if tuned { "tuned" } else { "untuned" }
        )?;
        for (j, col) in m.columns.iter().enumerate() {
            let mut tally = Tally::default();
            for (i, r) in m.results.iter().enumerate() {
                let peer = if tuned {
                    &m.refs[i].tuned
                } else {
                    &m.refs[i].untuned
                };
                if let (Some(e), Some(p)) = (err_of(&r.cells[j], tuned), peer) {
                    tally.add(r.name, e, p.0, m.refs[i].se);
                }
            }
            writeln!(md, "* {}: {}", col.label(), tally.summary(true))?;
        }
        writeln!(md)?;
    }
    Ok(())
}

/// `LearnerConfig::default()` against the best untuned peer.
fn finding_default(md: &mut String, m: &Measured) -> Result<()> {
    // The library default.
    {
        let mut tally = Tally::default();
        for (i, r) in m.results.iter().enumerate() {
            let e = match m.default_col {
                Some(j) => err_of(&r.cells[j], false),
                None => m.default_extra.get(r.name).and_then(|o| o.error),
            };
            if let (Some(e), Some(p)) = (e, &m.refs[i].untuned) {
                tally.add(r.name, e, p.0, m.refs[i].se);
            }
        }
        writeln!(
            md,
            "**`LearnerConfig::default()` (`{}`) vs the best untuned peer**: {}\n",
            m.default_cfg.describe(),
            tally.summary(true)
        )?;
    }
    Ok(())
}

/// The best sketchlearn learner per set against the best tuned peer.
fn finding_best(md: &mut String, m: &Measured) -> Result<()> {
    // Best sketchlearn learner per dataset.
    writeln!(
        md,
        "**Best sketchlearn learner per set (tuned, over all {} columns; doubly optimistic) vs the \
         best tuned peer:**\n",
        m.columns.len()
    )?;
    let mut best_rows = Vec::new();
    for (i, r) in m.results.iter().enumerate() {
        let best = m
            .columns
            .iter()
            .enumerate()
            .filter_map(|(j, c)| err_of(&r.cells[j], true).map(|e| (e, c.label())))
            .min_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
        if let (Some((e, who)), Some(p)) = (best, &m.refs[i].tuned) {
            let v = verdict(e, Some(p.0), m.refs[i].se);
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
    Ok(())
}

/// Sketches and FULL-ON against AdaGrad, diagonal adaptation against none.
fn findings_second_order(md: &mut String, m: &Measured) -> Result<()> {
    // Second-order information: sketches and FULL-ON vs our AdaGrad, and m = 10 vs FULL-ON.
    writeln!(
        md,
        "**Second-order information inside sketchlearn (tuned, ▲/▼ by more than one SE):**\n"
    )?;
    let col_of = |key: &str| m.columns.iter().position(|c| c.key() == key);
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
        let mut tally = Tally::default();
        for (i, r) in m.results.iter().enumerate() {
            if let (Some(ea), Some(eb)) = (err_of(&r.cells[ja], true), err_of(&r.cells[jb], true)) {
                tally.add(r.name, ea, eb, m.refs[i].se);
            }
        }
        writeln!(
            md,
            "* {} vs {}: {}",
            m.columns[ja].label(),
            m.columns[jb].label(),
            tally.summary(false)
        )?;
    }
    writeln!(md)?;
    Ok(())
}

/// Refused steps, failures and tuned values at the edge of their grid.
fn robustness(md: &mut String, m: &Measured) -> Result<()> {
    // Robustness notes.
    let mut notes = Vec::new();
    for r in &m.results {
        for (j, c) in r.cells.iter().enumerate() {
            let Some(c) = c else { continue };
            if !c.untuned.flags().is_empty() {
                notes.push(format!(
                    "{} untuned on {}: {:?}{}",
                    m.columns[j].label(),
                    r.name,
                    c.untuned.error,
                    c.untuned.flags()
                ));
            }
            if let Some((l, o)) = &c.tuned {
                if o.refused > 0 {
                    notes.push(format!(
                        "{} tuned ({l}) on {}: {} refused steps",
                        m.columns[j].label(),
                        r.name,
                        o.refused
                    ));
                }
            } else {
                notes.push(format!(
                    "{} on {}: every grid value failed",
                    m.columns[j].label(),
                    r.name
                ));
            }
        }
    }
    let cols = &m.columns;
    let edges: Vec<String> = m
        .results
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
    Ok(())
}

/// VW's failed runs and its numbers against RESULTS.md's.
fn vw_notes(md: &mut String, m: &Measured) -> Result<()> {
    let vw_cell = |ds: usize, key: &str, setting: &str| m.vw_cell(ds, key, setting);
    let vw_failures: Vec<String> =
        m.vw.iter()
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
    for (i, r) in m.results.iter().enumerate() {
        if let Some(q) = m.quoted.get(r.name) {
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
    if m.peers.is_ok() {
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
    Ok(())
}

/// Wall time per set, the figure and where the numbers are.
fn closing(md: &mut String, m: &Measured) -> Result<()> {
    writeln!(md)?;
    writeln!(
        md,
        "Per-set wall time of the sketchlearn grids (s): {}.\n",
        m.results
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
    Ok(())
}

/// The wide CSV: one row per dataset, every column's tuned and untuned numbers.
pub(super) fn wide_csv(m: &Measured) -> Result<String> {
    let vw_cell = |ds: usize, key: &str, setting: &str| m.vw_cell(ds, key, setting);
    let mut csv = String::from(
        "dataset,n,d,se,best_peer_tuned,best_peer_tuned_source,best_peer_untuned,best_peer_untuned_source,results_md_full_newton",
    );
    for (key, _, _) in VW_VARIANTS {
        write!(
            csv,
            ",{key}_tuned,{key}_tuned_value,{key}_tuned_status,{key}_untuned,{key}_untuned_status"
        )?;
    }
    for col in &m.columns {
        let k = col.key();
        let p = col.fam().param.name();
        write!(
            csv,
            ",{k}_tuned,{k}_tuned_{p},{k}_tuned_refused,{k}_untuned,{k}_untuned_refused"
        )?;
    }
    csv.push_str(",default_config_error,paper_oja_m10,paper_oja_m10_diag,paper_adagrad\n");
    let q = |s: &str| format!("\"{}\"", s.replace('"', "'"));
    for (i, r) in m.results.iter().enumerate() {
        let rf = &m.refs[i];
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
            q(&m.quoted
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
        let def = match m.default_col {
            Some(j) => r.cells[j].as_ref().and_then(|c| c.untuned.error),
            None => m.default_extra.get(r.name).and_then(|o| o.error),
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
    Ok(csv)
}

/// The figure's panels: each learner's error relative to the best peer's, tuned and untuned.
pub(super) fn plot_panels(m: &Measured) -> Vec<CatPanel> {
    let vw_cell = |ds: usize, key: &str, setting: &str| m.vw_cell(ds, key, setting);
    let col_of = |key: &str| m.columns.iter().position(|c| c.key() == key);
    let cats: Vec<String> = m.results.iter().map(|r| r.short.to_string()).collect();
    let plot_keys = [
        "adagrad", "oja_diag", "fd", "fd_diag", "rfd", "rfd_diag", "full",
    ];
    let mut panels = Vec::new();
    for tuned in [true, false] {
        let mut series = Vec::new();
        let peer_of = |i: usize| {
            if tuned {
                m.refs[i].tuned.as_ref().map(|t| t.0)
            } else {
                m.refs[i].untuned.as_ref().map(|t| t.0)
            }
        };
        let ratio = |e: Option<f64>, i: usize| -> Option<f64> {
            let (e, p) = (e?, peer_of(i)?);
            // A perfect peer (0 errors) leaves no ratio; floor both at half an error.
            let floor = 0.5 / m.results[i].n as f64;
            Some(e.max(floor) / p.max(floor))
        };
        series.push(CatSeries {
            label: "VW OjaNewton".into(),
            values: (0..m.results.len())
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
                label: m.columns[j].label(),
                values: m
                    .results
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
    panels
}

#[cfg(test)]
mod tests {
    use super::Tally;

    #[test]
    fn a_tally_counts_wins_losses_and_ties_beyond_one_se() {
        let mut t = Tally::default();
        t.add("a", 0.10, 0.20, Some(0.01));
        t.add("b", 0.30, 0.20, Some(0.01));
        t.add("c", 0.20, 0.205, Some(0.01));
        t.add("d", 0.20, 0.10, None);
        assert_eq!(
            t.summary(true),
            "1 ▲ [a (-0.1000)], 1 ▼ [b (+0.1000)], 2 within 1 SE."
        );
        assert_eq!(
            t.summary(false),
            "better on 1 [a (-0.1000)], worse on 1 [b (+0.1000)], 2 within 1 SE."
        );
    }
}
