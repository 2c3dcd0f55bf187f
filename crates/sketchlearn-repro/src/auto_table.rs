//! Issue 7's evidence: the untuned default learner
//! ([`Algorithm::Auto`](sketchlearn::linear::Algorithm::Auto), the online mixture of two
//! RFD-SONs, FD-SON with diagonal adaptation and an AdaGrad grid) on every shared dataset, against the
//! measured bar of `../shared/peers/RESULTS.md` and against Vowpal Wabbit 9.11.9 (AdaGrad and
//! OjaNewton, tuned and untuned) run on the same files in the same run.
//!
//! Rows per dataset: the default exactly as `sketchlearn train FILE` builds it (dense or sparse
//! members by the CLI's automatic rule), each member alone (untuned), the default "tuned" over
//! one knob (a common step multiplier `s ∈ 2^−3..2^3`: `α₀/s`, `α/s`, `η·s`), the mixture's
//! final member weights and the cost per example of the default vs the AdaGrad grid alone; an ablation
//! of the mixing rule (and of member 4); and the default on 13 held-out tasks not used to
//! choose it.
//!
//! Goals checked (issue 7): (1) default within one binomial SE of the best untuned peer on every
//! set and never worse than tuned AdaGrad by more than one SE; (2) default better than the best
//! tuned peer by at least one SE on splice, ionosphere and magic04.shuf and not worse (by more
//! than one SE) on heart.

use super::son_table3::{collect_vw, load, parse_results, VwCell, VwKey};
use super::ReproArgs;
use crate::machine::{load_average, utc_now};
use crate::paths::repo_root;
use crate::peers::find_peers;
use crate::plot::{category_points, CatPanel, CatSeries};
use crate::stats::binomial_se;
use anyhow::{Context, Result};
use sketchlearn::linear::{
    AnyLearner, InputProfile, LearnerConfig, MixRule, Mixture, OnlineLearner, Representation,
    SparsityProbe,
};
use sketchlearn::run::learn_or_refuse;
use sketchlearn::Example;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::time::Instant;

/// The shared datasets of RESULTS.md: SON Table 3's eleven and r8 (file name without
/// `.libsvm`, short label).
pub(crate) fn datasets() -> Vec<(&'static str, &'static str)> {
    let mut v = super::son_table3::DATASETS.to_vec();
    v.push(("r8_earn_vs_rest", "r8"));
    v
}

/// Goal 2: sets where the default must beat the best tuned peer by one SE, and the one where it
/// must not be worse by more than one SE.
const PAYOFF_BEAT: [&str; 3] = ["splice", "ionosphere", "magic04.shuf"];
const PAYOFF_NOT_WORSE: [&str; 1] = ["heart"];

/// Held-out binary tasks from the shared data, not used to choose the default: (label, source
/// file without `.libsvm`, `None` = the file as it is, or `Some((positive class, negative class
/// or None = the rest))`).
type Classes = Option<(&'static str, Option<&'static str>)>;
const HELDOUT: [(&str, &str, Classes); 13] = [
    ("a8a", "a8a", None),
    ("a9a.t (a9a's test split)", "a9a.t", None),
    ("dna: class 3 vs rest", "dna", Some(("3", None))),
    (
        "mnist_test10k: 3 vs 5",
        "mnist_test10k",
        Some(("3", Some("5"))),
    ),
    // Added after the mixing rule was changed to the Brier score (a second, later check).
    ("dna: class 1 vs rest", "dna", Some(("1", None))),
    ("dna: class 2 vs rest", "dna", Some(("2", None))),
    ("mnist: 0 vs 6", "mnist_test10k", Some(("0", Some("6")))),
    ("mnist: 1 vs 7", "mnist_test10k", Some(("1", Some("7")))),
    ("mnist: 2 vs 3", "mnist_test10k", Some(("2", Some("3")))),
    ("mnist: 3 vs 8", "mnist_test10k", Some(("3", Some("8")))),
    ("mnist: 4 vs 9", "mnist_test10k", Some(("4", Some("9")))),
    ("mnist: 5 vs 8", "mnist_test10k", Some(("5", Some("8")))),
    ("mnist: 7 vs 9", "mnist_test10k", Some(("7", Some("9")))),
];

/// The LIBSVM file of a held-out task: the shared file itself, or a relabelled copy (±1, rows of
/// other classes dropped) written under `target/peers/` (file order kept).
fn heldout_file(args: &ReproArgs, src: &str, classes: Classes) -> Result<std::path::PathBuf> {
    let path = args.data_dir.join(format!("{src}.libsvm"));
    let Some((pos, neg)) = classes else {
        return Ok(path);
    };
    let dir = repo_root().join("target/peers");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let out = dir.join(format!(
        "heldout_{src}_{pos}_vs_{}.libsvm",
        neg.unwrap_or("rest")
    ));
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let mut w = String::with_capacity(text.len());
    for line in text.lines() {
        let (label, rest) = line.split_once(' ').unwrap_or((line, ""));
        let y = if label == pos {
            "+1"
        } else if neg.is_none_or(|n| n == label) {
            "-1"
        } else {
            continue;
        };
        w.push_str(y);
        w.push(' ');
        w.push_str(rest);
        w.push('\n');
    }
    std::fs::write(&out, w).with_context(|| format!("writing {}", out.display()))?;
    Ok(out)
}

/// The default, the default's members mixed by AdaHedge on mistakes, and AdaGrad alone on one
/// held-out task.
struct Heldout {
    label: &'static str,
    file: String,
    n: usize,
    d: usize,
    default: Pass,
    mistakes: Pass,
    adagrad: Pass,
}

/// Short names of the default's members, in `LearnerConfig::auto_members` order.
const MEMBER_LABELS: [&str; 4] = [
    "RFD-SON",
    "FD-SON + diag",
    "AdaGrad grid (η, 8η)",
    "RFD-SON, 3α₀, 2c",
];

/// Step multipliers `2^j` of the one-knob tuning.
const SCALES: std::ops::RangeInclusive<i32> = -3..=3;

/// One progressive pass.
struct Pass {
    error: f64,
    seconds: f64,
    refused: u64,
    finite: bool,
    member_weights: Option<Vec<f64>>,
}

fn pass(cfg: &LearnerConfig, dim: usize, data: &[Example]) -> Result<Pass> {
    run_pass(cfg.build(dim)?, data)
}

/// A mixture of `members` under `rule` (the default's members under another rule, or a subset).
fn mix_pass(
    members: &[LearnerConfig],
    rule: MixRule,
    dim: usize,
    data: &[Example],
) -> Result<Pass> {
    let built = members
        .iter()
        .map(|m| m.check().and_then(|v| v.build_unscaled(dim)))
        .collect::<Result<Vec<_>, _>>()?;
    let loss = members[0].loss;
    run_pass(
        AnyLearner::Mixture(Mixture::new(built, loss, rule, 1.0)?),
        data,
    )
}

/// The mixing rules the ablation compares with the default's, and their labels.
const ABLATION: [(&str, Option<MixRule>); 6] = [
    (
        "AdaHedge on the raw Brier score (the default until issue 27)",
        Some(MixRule::AdaHedgeBrier),
    ),
    ("AdaHedge on mistakes", Some(MixRule::AdaHedge)),
    (
        "Absolute (anytime Hedge on 1 − q(y))",
        Some(MixRule::Absolute),
    ),
    ("Bayes (η = 1, log loss)", Some(MixRule::Bayes)),
    (
        "ZeroOne (anytime Hedge on mistakes)",
        Some(MixRule::ZeroOne),
    ),
    ("AdaHedge without member (4)", None),
];

/// What `train` knows of a file read whole (`hashed`: VW text, `dim = 2^bits`): its
/// dimension, average non-zeros and first rows ([`SparsityProbe`]).
pub(crate) fn profile(data: &[Example], dim: usize, hashed: bool) -> InputProfile {
    let mut probe = SparsityProbe::default();
    for e in data {
        probe.observe(&e.indices);
    }
    let nnz = data.iter().map(|e| e.indices.len()).sum::<usize>() as f64;
    InputProfile {
        dim,
        hashed,
        avg_nnz: Some(nnz / data.len().max(1) as f64),
        sample: probe.sample(),
    }
}

/// The configuration `sketchlearn train FILE` resolves for `data` (its representation and
/// members, [`ValidLearnerConfig::resolve`](sketchlearn::linear::ValidLearnerConfig::resolve)),
/// and whether its members are sparse-time.
pub(crate) fn train_default(
    data: &[Example],
    dim: usize,
    hashed: bool,
) -> Result<(LearnerConfig, bool)> {
    train_resolved(LearnerConfig::default(), data, dim, hashed)
}

/// `start` as `train` resolves it for these rows (members and representation), and whether
/// the representation is sparse-time.
pub(crate) fn train_resolved(
    start: LearnerConfig,
    data: &[Example],
    dim: usize,
    hashed: bool,
) -> Result<(LearnerConfig, bool)> {
    let (valid, _) = start.check()?.resolve(&profile(data, dim, hashed));
    let config = valid.into_inner();
    let sparse = config.representation == Representation::Sparse;
    Ok((config, sparse))
}

fn run_pass(mut l: AnyLearner, data: &[Example]) -> Result<Pass> {
    let t = Instant::now();
    let (mut wrong, mut refused) = (0usize, 0u64);
    for e in data {
        let p = learn_or_refuse(&mut l, e.row(), e.label, e.weight, &mut refused)?;
        if (p > 0.0) != (e.label > 0.0) {
            wrong += 1;
        }
    }
    let seconds = t.elapsed().as_secs_f64();
    let finite = l.weights().iter().all(|w| w.is_finite());
    let member_weights = match &l {
        AnyLearner::Mixture(m) => {
            refused += m.refused_steps();
            Some(m.member_weights())
        }
        _ => None,
    };
    Ok(Pass {
        error: wrong as f64 / data.len() as f64,
        seconds,
        refused,
        finite,
        member_weights,
    })
}

struct Row {
    name: &'static str,
    short: &'static str,
    n: usize,
    d: usize,
    sparse: bool,
    default: Pass,
    members: Vec<Pass>,
    ablation: Vec<Pass>,
    adagrad_us: f64,
    tuned: (i32, f64),
}

/// The default with every step scaled by `2^j`.
fn scaled(base: &LearnerConfig, j: i32) -> LearnerConfig {
    let s = 2f64.powi(j);
    LearnerConfig {
        alpha0: base.alpha0 / s,
        alpha: base.alpha / s,
        learning_rate: base.learning_rate * s,
        ..base.clone()
    }
}

pub fn run(args: &ReproArgs) -> Result<()> {
    let t0 = Instant::now();
    let load_before = load_average();
    let date = utc_now();
    let mut rows = Vec::new();
    let mut files = Vec::new();
    for (name, short) in datasets() {
        let path = args.data_dir.join(format!("{name}.libsvm"));
        let (data, d) = load(&path).with_context(|| format!("loading {}", path.display()))?;
        files.push(path.to_string_lossy().to_string());
        let n = data.len();
        // Exactly what `sketchlearn train FILE` builds.
        let (base, sparse) = train_default(&data, d, false)?;
        eprintln!("{name}: n = {n}, d = {d}, sparse members: {sparse}");
        let default = pass(&base, d, &data)?;
        let members = base
            .auto_members()
            .iter()
            .map(|m| pass(m, d, &data))
            .collect::<Result<Vec<_>>>()?;
        let adagrad_us = members[2].seconds / n as f64 * 1e6;
        let member_cfgs = base.auto_members();
        let ablation = ABLATION
            .iter()
            .map(|(_, rule)| match rule {
                Some(rule) => mix_pass(&member_cfgs, *rule, d, &data),
                None => mix_pass(&member_cfgs[..3], base.mix_rule(), d, &data),
            })
            .collect::<Result<Vec<_>>>()?;
        let mut tuned = (0, default.error);
        for j in SCALES {
            let e = if j == 0 {
                default.error
            } else {
                pass(&scaled(&base, j), d, &data)?.error
            };
            if e < tuned.1 {
                tuned = (j, e);
            }
        }
        rows.push(Row {
            name,
            short,
            n,
            d,
            sparse,
            default,
            members,
            ablation,
            adagrad_us,
            tuned,
        });
    }
    let mut heldout = Vec::new();
    for (label, src, classes) in HELDOUT {
        let path = heldout_file(args, src, classes)?;
        let (data, d) = load(&path).with_context(|| format!("loading {}", path.display()))?;
        let n = data.len();
        let (base, _) = train_default(&data, d, false)?;
        eprintln!("held out {label}: n = {n}, d = {d}");
        heldout.push(Heldout {
            label,
            file: path.to_string_lossy().to_string(),
            n,
            d,
            default: pass(&base, d, &data)?,
            mistakes: mix_pass(&base.auto_members(), MixRule::AdaHedge, d, &data)?,
            adagrad: pass(&base.auto_members()[2], d, &data)?,
        });
    }
    let ours_seconds = t0.elapsed().as_secs_f64();

    // Peers, same run.
    let tv = Instant::now();
    let mut vw: HashMap<VwKey, VwCell> = HashMap::new();
    let peers = find_peers();
    match &peers {
        Ok(p) => {
            for mode in ["adagrad", "oja"] {
                let mut a: Vec<String> =
                    ["--mode", mode, "--setting", "both", "--sketch-size", "10"]
                        .iter()
                        .map(|s| s.to_string())
                        .collect();
                a.extend(files.iter().cloned());
                a.extend(heldout.iter().map(|h| h.file.clone()));
                let lines = p.run_vw(&a)?;
                collect_vw(&lines, mode, &mut vw);
            }
        }
        Err(why) => eprintln!("peers skipped: {why}"),
    }
    let vw_seconds = tv.elapsed().as_secs_f64();
    let quoted = parse_results(&args.data_dir.join("../peers/RESULTS.md"));
    report(
        args,
        &rows,
        &files,
        &heldout,
        &vw,
        &quoted,
        peers.err(),
        &date,
        &load_before,
        ours_seconds,
        vw_seconds,
    )
}

/// `v` padded with `filler` to `k` entries.
fn pad(mut v: Vec<String>, k: usize, filler: &str) -> Vec<String> {
    while v.len() < k {
        v.push(filler.into());
    }
    v
}

/// `(error − bar)/SE(bar)`, the bar's binomial standard error on `n` examples.
fn z(e: f64, bar: &Option<(f64, String)>, n: usize) -> Option<f64> {
    bar.as_ref()
        .map(|(b, _)| (e - b) / binomial_se(*b, n).max(1e-12))
}

/// Issue 7's goals on one dataset for the error `e`.
struct Goals {
    /// 1a: within one SE of the best untuned peer.
    untuned: bool,
    /// 1b: not worse than tuned AdaGrad by more than one SE (true without a bar).
    adagrad: bool,
    /// 2 (payoff sets only): the limit `bar ∓ SE` against the best tuned peer and whether `e`
    /// is within it.
    payoff: Option<(f64, bool)>,
}

fn goals(r: &Row, bar: &Bars, e: f64) -> Goals {
    let payoff = bar.tuned.as_ref().and_then(|(b, _)| {
        let se = binomial_se(*b, r.n);
        let limit = if PAYOFF_BEAT.contains(&r.name) {
            b - se
        } else if PAYOFF_NOT_WORSE.contains(&r.name) {
            b + se
        } else {
            return None;
        };
        Some((limit, e <= limit))
    });
    Goals {
        untuned: z(e, &bar.untuned, r.n).is_some_and(|v| v <= 1.0),
        adagrad: z(e, &bar.adagrad_tuned, r.n).is_none_or(|v| v <= 1.0),
        payoff,
    }
}

/// How many datasets meet goals 1a, 1b and 2 with the errors `errs` (one per row).
fn goal_counts(rows: &[Row], bars: &[Bars], errs: &[f64]) -> (usize, usize, usize) {
    let (mut a, mut b, mut c) = (0, 0, 0);
    for ((r, bar), &e) in rows.iter().zip(bars).zip(errs) {
        let g = goals(r, bar, e);
        a += g.untuned as usize;
        b += g.adagrad as usize;
        c += g.payoff.is_some_and(|(_, ok)| ok) as usize;
    }
    (a, b, c)
}

/// The bars of one dataset: (value, who).
struct Bars {
    untuned: Option<(f64, String)>,
    tuned: Option<(f64, String)>,
    adagrad_tuned: Option<(f64, String)>,
}

fn min_bar(a: Option<(f64, String)>, b: Option<(f64, String)>) -> Option<(f64, String)> {
    match (a, b) {
        (Some(x), Some(y)) => Some(if y.0 < x.0 { y } else { x }),
        (x, y) => x.or(y),
    }
}

/// What the report is written from.
struct Ctx<'a> {
    rows: &'a [Row],
    files: &'a [String],
    heldout: &'a [Heldout],
    vw: &'a HashMap<VwKey, VwCell>,
    peers_missing: Option<String>,
    date: &'a str,
    load_before: &'a str,
    ours_seconds: f64,
    vw_seconds: f64,
    /// The bars per dataset.
    bars: Vec<Bars>,
    dflt: LearnerConfig,
}

/// `x` with four decimals, `—` for none.
fn f4(x: Option<f64>) -> String {
    x.map_or("—".to_string(), |v| format!("{v:.4}"))
}

/// A bar with who set it, `—` for none.
fn fb(b: &Option<(f64, String)>) -> String {
    b.as_ref()
        .map_or("—".to_string(), |(v, w)| format!("{v:.4} ({w})"))
}

/// Goal 1 over the datasets: how many meet 1a and 1b, and the ones that do not.
struct Goal1<'a> {
    g1a: usize,
    g1b: usize,
    g1a_fail: Vec<&'a str>,
    g1b_fail: Vec<&'a str>,
}

#[allow(clippy::too_many_arguments)]
fn report(
    args: &ReproArgs,
    rows: &[Row],
    files: &[String],
    heldout: &[Heldout],
    vw: &HashMap<VwKey, VwCell>,
    quoted: &HashMap<String, super::son_table3::Quoted>,
    peers_missing: Option<String>,
    date: &str,
    load_before: &str,
    ours_seconds: f64,
    vw_seconds: f64,
) -> Result<()> {
    let cell = |i: usize, mode: &str, setting: &str| -> Option<&VwCell> {
        vw.get(&(files[i].clone(), mode.to_string(), setting.to_string()))
    };
    let vw_err = |i: usize, mode: &str, setting: &str| cell(i, mode, setting).and_then(|c| c.error);
    let bars: Vec<Bars> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let q = quoted.get(r.name);
            let tag = |v: Option<f64>, who: &str| v.map(|v| (v, format!("{who}, this run")));
            let q_untuned = q
                .and_then(|q| q.untuned.clone())
                .map(|(v, w)| (v, format!("{w}, RESULTS.md")));
            let q_tuned = q
                .and_then(|q| q.tuned.clone())
                .map(|(v, w)| (v, format!("{w}, RESULTS.md")));
            // RESULTS.md's tuned AdaGrad: its best tuned peer when that is River (AdaGrad) or VW
            // AdaGrad.
            let q_ada = q_tuned
                .clone()
                .filter(|(_, w)| w.contains("River") || w.contains("AdaGrad"));
            Bars {
                untuned: min_bar(
                    q_untuned,
                    min_bar(
                        tag(vw_err(i, "adagrad", "untuned"), "VW AdaGrad"),
                        tag(vw_err(i, "oja", "untuned"), "VW Oja"),
                    ),
                ),
                tuned: min_bar(
                    q_tuned,
                    min_bar(
                        tag(vw_err(i, "adagrad", "tuned"), "VW AdaGrad"),
                        tag(vw_err(i, "oja", "tuned"), "VW Oja"),
                    ),
                ),
                adagrad_tuned: min_bar(q_ada, tag(vw_err(i, "adagrad", "tuned"), "VW AdaGrad")),
            }
        })
        .collect();
    let c = Ctx {
        rows,
        files,
        heldout,
        vw,
        peers_missing,
        date,
        load_before,
        ours_seconds,
        vw_seconds,
        bars,
        dflt: LearnerConfig::default(),
    };
    let mut md = String::new();
    setup(&mut md, &c)?;
    let (csv, g1) = main_table(&mut md, &c)?;
    goals_section(&mut md, &c, &g1)?;
    mechanism(&mut md, &c)?;
    ablation(&mut md, &c)?;
    heldout_section(&mut md, &c)?;
    writeln!(
        md,
        "![default vs peers](auto.png)\n\nFigure: error / best peer's error per dataset (log \
         scale; below 1 = better than the peer). Top: untuned (sketchlearn default, VW \
         defaults). Bottom: tuned (sketchlearn's one knob, VW grids)."
    )?;
    let panels = plot_panels(&c);
    category_points(&args.out.join("auto.png"), &panels, 1500, 1100)?;
    std::fs::write(args.out.join("auto.md"), md)?;
    std::fs::write(args.out.join("auto.csv"), csv)?;
    eprintln!("wrote {}/auto.{{md,csv,png}}", args.out.to_string_lossy());
    Ok(())
}

/// Title, how to reproduce, the run's conditions and the setup.
fn setup(md: &mut String, c: &Ctx) -> Result<()> {
    let &Ctx {
        ref peers_missing,
        date,
        load_before,
        ours_seconds,
        vw_seconds,
        ref dflt,
        ..
    } = c;
    writeln!(
        md,
        "# The untuned default vs the bar (issue 7)\n\nReproduce: `{}` (from the repository root; \
         VW needs `.venv-peers`, see `scripts/peers/README.md`).\n\nRun {date}; load average \
         {load_before} before, {} after; sketchlearn {ours_seconds:.0} s, VW {vw_seconds:.0} s \
         (single thread, shared 2-core machine).\n",
        super::command_line(),
        load_average()
    )?;
    writeln!(
        md,
        "## Setup\n\n* One pass in file order over each shared dataset (`.shuf` for the \
         class-sorted ones), logistic loss, progressive 0/1 error (a score ≤ 0 predicts −1), \
         exactly as `sketchlearn train FILE` runs it — no flags. The default learner is \
         `{}`: an online mixture (AdaHedge on each member's progressive Brier score \
         (1 − q(y))², q(y) = σ(s·p) its probability of the label with its score's scale s \
         calibrated online — a parameter-free rate; see `crates/sketchlearn/src/linear/mixture.rs` \
         and `calibration.rs`) of {} members \
         that all learn every example. For sparse inputs (m·average non-zeros < d/4: r8) \
         the CLI's rule picks the sparse-time members (`rfd-sparse`, `fd-sparse`), which \
         compute the same learners in O(m² + m·nnz) per example (so a VW-format file, which \
         always takes them, gets the same learner as its LIBSVM version).\n* SE = √(p(1−p)/n) with p the bar's error. z = (error − \
         bar)/SE: within one SE ⇔ z ≤ 1.\n* Bars: *best untuned peer* = the lower of RESULTS.md's \
         'best peer untuned' and this run's VW AdaGrad/OjaNewton defaults; *best tuned peer* \
         likewise with the tuned grids (VW AdaGrad `-l` 2^-3..2^6, OjaNewton `--alpha_inverse` \
         2^-10..2^6, m = 10, scored on the same stream); *tuned AdaGrad* = the lower of this \
         run's tuned VW AdaGrad and RESULTS.md's best tuned peer when that is River's or VW's \
         AdaGrad.\n* *sketchlearn tuned* = the same mixture with one knob, every member's step \
         multiplied by s = 2^j, j = −3..3 (α₀/s, α/s, η·s), best progressive error (optimistic, \
         like the peers' tuning).\n",
        dflt.describe(),
        dflt.auto_members().len()
    )?;
    if let Some(why) = &peers_missing {
        writeln!(
            md,
            "**VW was not run**: {why}. Only RESULTS.md's numbers are used.\n"
        )?;
    }

    Ok(())
}

/// The table per dataset (and the CSV), counting goal 1.
fn main_table<'a>(md: &mut String, c: &Ctx<'a>) -> Result<(String, Goal1<'a>)> {
    let &Ctx {
        rows,
        files,
        vw,
        ref bars,
        ref dflt,
        ..
    } = c;
    let cell = |i: usize, mode: &str, setting: &str| -> Option<&VwCell> {
        vw.get(&(files[i].clone(), mode.to_string(), setting.to_string()))
    };
    let vw_err = |i: usize, mode: &str, setting: &str| cell(i, mode, setting).and_then(|c| c.error);
    writeln!(md, "## The table\n")?;
    writeln!(
        md,
        "| dataset | n | d | best peer untuned | best peer tuned | tuned AdaGrad | VW AdaGrad untuned / tuned | VW Oja untuned / tuned | **sketchlearn default** | z vs best untuned | z vs tuned AdaGrad | z vs best tuned | sketchlearn tuned (s) |\n|---|---:|---:|---|---|---|---|---|---:|---:|---:|---:|---|"
    )?;
    let k = dflt.auto_members().len();
    let member_cols: Vec<String> = (1..=k).map(|j| format!("member_{j}")).collect();
    let pi_cols: Vec<String> = (1..=k).map(|j| format!("pi_{j}")).collect();
    let mut csv = format!(
        "dataset,n,d,sparse,best_untuned,best_tuned,adagrad_tuned,vw_adagrad_untuned,vw_adagrad_tuned,vw_oja_untuned,vw_oja_tuned,default,default_tuned,default_tuned_log2_scale,{},{},mix_adahedge_mistakes,mix_absolute,mix_bayes,mix_zeroone,mix_without_member_4,us_per_example_default,us_per_example_adagrad,refused,finite\n",
        member_cols.join(","),
        pi_cols.join(",")
    );
    let (mut g1a, mut g1b) = (0usize, 0usize);
    let mut g1a_fail = Vec::new();
    let mut g1b_fail = Vec::new();
    for (i, (r, b)) in rows.iter().zip(bars).enumerate() {
        let e = r.default.error;
        let zu = z(e, &b.untuned, r.n);
        let za = z(e, &b.adagrad_tuned, r.n);
        let zt = z(e, &b.tuned, r.n);
        let g = goals(r, b, e);
        if g.untuned {
            g1a += 1;
        } else {
            g1a_fail.push(r.name);
        }
        if g.adagrad {
            g1b += 1;
        } else {
            g1b_fail.push(r.name);
        }
        let zf = |x: Option<f64>| x.map_or("—".into(), |v| format!("{v:+.2}"));
        writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} / {} | {} / {} | **{:.4}** | {} | {} | {} | {:.4} (2^{}) |",
            r.name,
            r.n,
            r.d,
            fb(&b.untuned),
            fb(&b.tuned),
            fb(&b.adagrad_tuned),
            f4(vw_err(i, "adagrad", "untuned")),
            f4(vw_err(i, "adagrad", "tuned")),
            f4(vw_err(i, "oja", "untuned")),
            f4(vw_err(i, "oja", "tuned")),
            e,
            zf(zu),
            zf(za),
            zf(zt),
            r.tuned.1,
            r.tuned.0
        )?;
        let pi = r.default.member_weights.clone().unwrap_or_default();
        let us = r.default.seconds / r.n as f64 * 1e6;
        let joined = |v: Vec<String>| v.join(",");
        writeln!(
            csv,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.3},{:.3},{},{}",
            r.name,
            r.n,
            r.d,
            r.sparse,
            f4(b.untuned.as_ref().map(|x| x.0)),
            f4(b.tuned.as_ref().map(|x| x.0)),
            f4(b.adagrad_tuned.as_ref().map(|x| x.0)),
            f4(vw_err(i, "adagrad", "untuned")),
            f4(vw_err(i, "adagrad", "tuned")),
            f4(vw_err(i, "oja", "untuned")),
            f4(vw_err(i, "oja", "tuned")),
            e,
            r.tuned.1,
            r.tuned.0,
            joined(pad(
                r.members.iter().map(|m| m.error.to_string()).collect(),
                k,
                ""
            )),
            joined(pad(pi.iter().map(|x| x.to_string()).collect(), k, "")),
            joined(r.ablation.iter().map(|m| m.error.to_string()).collect()),
            us,
            r.adagrad_us,
            r.default.refused,
            r.default.finite
        )?;
    }
    Ok((
        csv,
        Goal1 {
            g1a,
            g1b,
            g1a_fail,
            g1b_fail,
        },
    ))
}

/// The goals, computed.
fn goals_section(md: &mut String, c: &Ctx, g1: &Goal1) -> Result<()> {
    let &Ctx { rows, ref bars, .. } = c;
    let Goal1 {
        g1a,
        g1b,
        g1a_fail,
        g1b_fail,
    } = g1;

    writeln!(md, "\n## Goals\n")?;
    let fails = |word: &str, names: &[&str]| {
        if names.is_empty() {
            String::new()
        } else {
            format!(" ({word} {})", names.join(", "))
        }
    };
    writeln!(
        md,
        "* **Goal 1a — within one SE of the best untuned peer**: {g1a}/{} datasets{}.",
        rows.len(),
        fails("not on:", g1a_fail)
    )?;
    writeln!(
        md,
        "* **Goal 1b — never worse than tuned AdaGrad by more than one SE**: {g1b}/{} datasets{}.",
        rows.len(),
        fails("worse on:", g1b_fail)
    )?;
    let mut g2 = Vec::new();
    for (r, b) in rows.iter().zip(bars) {
        let (Some((bar, who)), Some((limit, ok))) = (&b.tuned, goals(r, b, r.default.error).payoff)
        else {
            continue;
        };
        g2.push(format!(
            "{}: {:.4} vs best tuned {:.4} ({who}) {} SE {:.4} = {:.4} → {}",
            r.name,
            r.default.error,
            bar,
            if limit < *bar { "−" } else { "+" },
            binomial_se(*bar, r.n),
            limit,
            if ok { "**met**" } else { "not met" }
        ));
    }
    writeln!(
        md,
        "* **Goal 2 — payoff** (beat the best tuned peer by one SE; heart: not worse by more \
         than one SE):\n{}",
        g2.iter()
            .map(|s| format!("  * {s}"))
            .collect::<Vec<_>>()
            .join("\n")
    )?;
    let all_finite = rows.iter().all(|r| r.default.finite);
    let refused: u64 = rows.iter().map(|r| r.default.refused).sum();
    writeln!(
        md,
        "* Weights finite at the end of every run: {}; member steps refused by the non-finite \
         guard: {refused}.",
        if all_finite { "yes" } else { "**no**" }
    )?;

    Ok(())
}

/// Each member alone and the mixture's final weights.
fn mechanism(md: &mut String, c: &Ctx) -> Result<()> {
    let &Ctx { rows, ref dflt, .. } = c;
    writeln!(
        md,
        "\n## The mechanism: each member alone (untuned) and the mixture's final weights π\n"
    )?;
    let names: Vec<String> = dflt.auto_members().iter().map(|m| m.describe()).collect();
    let label = |j: usize| MEMBER_LABELS.get(j).copied().unwrap_or("member");
    writeln!(
        md,
        "Members: {}. Bold: the best member on the dataset.\n",
        names
            .iter()
            .enumerate()
            .map(|(j, n)| format!("({}) `{n}`", j + 1))
            .collect::<Vec<_>>()
            .join(", ")
    )?;
    writeln!(
        md,
        "| dataset | {} | default (mixture) | π {} | µs/example default | µs/example member (3) | cost ratio |\n|---|{}---:|---|---:|---:|---:|",
        (0..names.len())
            .map(|j| format!("({}) {}", j + 1, label(j)))
            .collect::<Vec<_>>()
            .join(" | "),
        (1..=names.len())
            .map(|j| format!("({j})"))
            .collect::<Vec<_>>()
            .join(" / "),
        "---:|".repeat(names.len())
    )?;
    for r in rows {
        let best = r
            .members
            .iter()
            .map(|m| m.error)
            .fold(f64::INFINITY, f64::min);
        let cells: Vec<String> = r
            .members
            .iter()
            .map(|m| {
                if m.error == best {
                    format!("**{:.4}**", m.error)
                } else {
                    format!("{:.4}", m.error)
                }
            })
            .collect();
        let cells = pad(cells, names.len(), "—");
        let pi = r
            .default
            .member_weights
            .as_ref()
            .map(|p| {
                p.iter()
                    .map(|x| format!("{x:.2}"))
                    .collect::<Vec<_>>()
                    .join(" / ")
            })
            .unwrap_or_default();
        let us = r.default.seconds / r.n as f64 * 1e6;
        writeln!(
            md,
            "| {}{} | {} | {:.4} | {} | {:.1} | {:.1} | {:.1}× |",
            r.name,
            if r.sparse { " (sparse members)" } else { "" },
            cells.join(" | "),
            r.default.error,
            pi,
            us,
            r.adagrad_us,
            us / r.adagrad_us.max(1e-9)
        )?;
    }
    writeln!(
        md,
        "\nThe cost per example is the sum of the members' (the AdaGrad grid two AdaGrads, \
         O(nnz) each; the three sketched Newton members O(m·d) dense or O(m² + m·nnz) sparse): \
         linear in d, about 3 sketched learners' worth and two AdaGrads. Timings are wall-clock in-process on the shared machine: ratios, not \
         absolute rates, are meaningful.\n"
    )?;
    Ok(())
}

/// The mixing rules compared, and the default without member (4).
fn ablation(md: &mut String, c: &Ctx) -> Result<()> {
    let &Ctx { rows, ref bars, .. } = c;
    writeln!(
        md,
        "## Why this rule and the fourth member (ablation)\n\nThe same members mixed by the \
         other rules of `MixRule`, and the default's rule without member (4). Goals counted as \
         above (1a: within one SE of the best untuned peer; 1b: not worse than tuned AdaGrad by \
         more than one SE; 2: the payoff sets).\n"
    )?;
    writeln!(
        md,
        "| dataset | default: AdaHedge on calibrated Brier, 4 members | {} |\n|---|---:|{}",
        ABLATION
            .iter()
            .map(|(l, _)| l.to_string())
            .collect::<Vec<_>>()
            .join(" | "),
        "---:|".repeat(ABLATION.len())
    )?;
    for r in rows {
        writeln!(
            md,
            "| {} | {:.4} | {} |",
            r.name,
            r.default.error,
            r.ablation
                .iter()
                .map(|p| format!("{:.4}", p.error))
                .collect::<Vec<_>>()
                .join(" | ")
        )?;
    }
    let count = |errs: &[f64]| -> String {
        let (a, b, c) = goal_counts(rows, bars, errs);
        format!("{a} / {b} / {c}")
    };
    let default_errs: Vec<f64> = rows.iter().map(|r| r.default.error).collect();
    writeln!(
        md,
        "| *goals 1a / 1b / 2 met* | {} | {} |",
        count(&default_errs),
        (0..ABLATION.len())
            .map(|j| count(&rows.iter().map(|r| r.ablation[j].error).collect::<Vec<_>>()))
            .collect::<Vec<_>>()
            .join(" | ")
    )?;
    writeln!(
        md,
        "\nAdaHedge (parameter-free) follows a clear leader at once and hedges \
         only while the members are close. On the Brier score (1 − q(y))², a bounded proper \
         scoring rule, it tells the members apart sooner than on mistakes, which on a few \
         hundred examples are too few to separate them (heart, ionosphere, splice); Absolute \
         favours the most confident member (RFD-SON with the smaller α₀) even where it errs \
         more; Bayes follows the best log loss, which is not the fewest mistakes on w8a. Member \
         (4), a more cautious Newton step, is the best member on splice, ionosphere and a9a. \
         Member (3) is itself a mixture (same rule) of AdaGrad at η = 0.5 and at 8η with the \
         intercept's constant 1/32 (its bias moves at η/4): on spam.shuf, features of very \
         different scales, tuned AdaGrad (River, lr 4: 0.0806) beats every sketched member \
         (FD-SON + diag 0.0854), and the grid's second learner gets 0.0800. As a fifth member \
         of the outer mixture instead, it cost ionosphere one mistake (0.1538 → 0.1567: \
         AdaHedge's rate ln K/Δ and the early predictions depend on K); nested, the outer \
         mixture is unchanged wherever member (3) is not the leader.\n"
    )?;
    Ok(())
}

/// The held-out tasks.
fn heldout_section(md: &mut String, c: &Ctx) -> Result<()> {
    let &Ctx { heldout, vw, .. } = c;
    writeln!(
        md,
        "## Held-out check: tasks not used to choose the default\n\nThe members, their \
         parameters and the mixing rule were chosen looking at the 12 sets above. These binary \
         tasks from the shared data were not used for that (checked after), in file order: a8a, \
         a9a's test split, dna (class 3 vs the rest) and MNIST-10k (3 vs 5) were checked after \
         the members were chosen; the other nine after the rule was changed from mistakes to \
         the Brier score (the \"AdaHedge on mistakes\" column is the previous rule; the \
         members' calibration of issue 27 was added after all of these checks); all 13 \
         again after the AdaGrad grid replaced plain AdaGrad as member 3 (chosen on spam.shuf: \
         it changed a8a by +2 mistakes, MNIST 0 vs 6 by −1, 3 vs 8 by +2, 5 vs 8 by +1, the \
         others not at all). z is against the better of VW's untuned AdaGrad and OjaNewton (this run).\n\n| task | n | \
         d | **sketchlearn default** | AdaHedge on mistakes | AdaGrad grid alone (member 3) | VW \
         AdaGrad untuned / tuned | VW Oja untuned / tuned | z vs best untuned VW \
         |\n|---|---:|---:|---:|---:|---:|---|---|---:|"
    )?;
    let held_err = |f: &str, mode: &str, setting: &str| {
        vw.get(&(f.to_string(), mode.to_string(), setting.to_string()))
            .and_then(|c| c.error)
    };
    let (mut within, mut better, mut worse) = (0, 0, 0);
    for h in heldout {
        let best = [
            held_err(&h.file, "adagrad", "untuned"),
            held_err(&h.file, "oja", "untuned"),
        ]
        .into_iter()
        .flatten()
        .fold(f64::INFINITY, f64::min);
        let z = (h.default.error - best) / binomial_se(best, h.n).max(1e-12);
        if z <= 1.0 {
            within += 1;
        }
        // Count whole examples: the errors are counts over the same n.
        let diff = ((h.default.error - h.mistakes.error) * h.n as f64).round();
        if diff < 0.0 {
            better += 1;
        } else if diff > 0.0 {
            worse += 1;
        }
        let zv = if best.is_finite() {
            format!("{z:+.2}")
        } else {
            "—".into()
        };
        let f4 = |x: Option<f64>| x.map_or("—".to_string(), |v| format!("{v:.4}"));
        writeln!(
            md,
            "| {} | {} | {} | **{:.4}** | {:.4} | {:.4} | {} / {} | {} / {} | {} |",
            h.label,
            h.n,
            h.d,
            h.default.error,
            h.mistakes.error,
            h.adagrad.error,
            f4(held_err(&h.file, "adagrad", "untuned")),
            f4(held_err(&h.file, "adagrad", "tuned")),
            f4(held_err(&h.file, "oja", "untuned")),
            f4(held_err(&h.file, "oja", "tuned")),
            zv
        )?;
    }
    writeln!(
        md,
        "\nThe default is within one SE of the best untuned VW learner (or better) on {within} of \
         {} held-out tasks. Against the previous rule (AdaHedge on mistakes) it makes fewer \
         mistakes on {better}, more on {worse} and as many on {}.\n",
        heldout.len(),
        heldout.len() - better - worse
    )?;
    Ok(())
}

/// The figure's panels: error relative to the best peer's, untuned and tuned.
fn plot_panels(c: &Ctx) -> Vec<CatPanel> {
    let &Ctx {
        rows,
        files,
        vw,
        ref bars,
        ..
    } = c;
    let cell = |i: usize, mode: &str, setting: &str| -> Option<&VwCell> {
        vw.get(&(files[i].clone(), mode.to_string(), setting.to_string()))
    };
    let vw_err = |i: usize, mode: &str, setting: &str| cell(i, mode, setting).and_then(|c| c.error);
    // Plot.
    let cats: Vec<String> = rows.iter().map(|r| r.short.to_string()).collect();
    let ratio = |e: Option<f64>, b: &Option<(f64, String)>| match (e, b) {
        (Some(e), Some((b, _))) if *b > 0.0 => Some((e / b).max(1e-3)),
        _ => None,
    };
    let mut panels = Vec::new();
    for tuned in [false, true] {
        let setting = if tuned { "tuned" } else { "untuned" };
        let bar = |i: usize| {
            if tuned {
                &bars[i].tuned
            } else {
                &bars[i].untuned
            }
        };
        let ours = CatSeries {
            label: if tuned {
                "sketchlearn default, tuned (1 knob)".into()
            } else {
                "sketchlearn default".into()
            },
            values: rows
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    ratio(
                        Some(if tuned { r.tuned.1 } else { r.default.error }),
                        bar(i),
                    )
                })
                .collect(),
        };
        let mut series = vec![ours];
        for (mode, label) in [("adagrad", "VW AdaGrad"), ("oja", "VW OjaNewton")] {
            series.push(CatSeries {
                label: format!("{label} {setting}"),
                values: (0..rows.len())
                    .map(|i| ratio(vw_err(i, mode, setting), bar(i)))
                    .collect(),
            });
        }
        if !tuned {
            for (k, label) in MEMBER_LABELS.iter().enumerate() {
                series.push(CatSeries {
                    label: format!("({}) {label} alone", k + 1),
                    values: rows
                        .iter()
                        .enumerate()
                        .map(|(i, r)| ratio(r.members.get(k).map(|m| m.error), bar(i)))
                        .collect(),
                });
            }
        }
        panels.push(CatPanel {
            title: format!("{setting}: error / best {setting} peer's error"),
            y_label: "error ratio (log)".into(),
            categories: cats.clone(),
            series,
        });
    }
    panels
}
