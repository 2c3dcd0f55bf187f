//! Issue 28, item 4: the sketched full-matrix AdaGrads — Ada-FD (Wan, Wei & Zhang, IJCAI 2018)
//! and Sketchy (Feinberg et al., NeurIPS 2023), `sketchlearn train --algo ada-fd|sketchy` —
//! against the best *tuned* peer of `../shared/peers/RESULTS.md`, and whether either, added to
//! the default mixture as a fifth member, raises the payoff count.
//!
//! Per dataset (one pass in file order, progressive 0/1 error): each learner as the CLI builds
//! it (row-scaled, `ValidLearnerConfig::build`) at its defaults and tuned over a grid
//! (learning rate `η ∈ 2^−2..2^1` × two `δ`, the best on the same stream, as the peers' tuning); the
//! default mixture, and the same mixture (same rule, same members, the representation chosen
//! as `train` chooses it) with Ada-FD, Sketchy or both added as members at their defaults. The
//! payoff: beat the best tuned peer by one binomial SE on the six curvature-sensitive sets;
//! the guard: stay within one SE of the best untuned peer on the shared sets — SON Table 3's
//! eleven; r8 (d = 23 585) is left out: the dense-time learners' `O(m²d)` step made it too slow
//! for this run.
//!
//! This experiment does not change the library's default; it reports the numbers.

use super::peer_z::{counts, peer_table, z, Against};
use super::son_table3::{load, parse_results, QuotedByName, DATASETS};
use super::ReproArgs;
use crate::machine::utc_now;
use crate::report::{table_header, write_md_csv};
use crate::stats::binomial_se;
use anyhow::{Context, Result};
use sketchlearn::linear::{Algorithm, AnyLearner, LearnerConfig};
use sketchlearn::run::learn_or_refuse;
use sketchlearn::Example;
use std::fmt::Write as _;
use std::time::Instant;

/// The curvature-sensitive sets of the payoff (`docs/results/defaults.md`).
pub(crate) const PAYOFF: [&str; 6] = [
    "splice",
    "heart",
    "ionosphere",
    "magic04.shuf",
    "mushrooms",
    "w8a.shuf",
];

/// The learning rates of the tuning grid, `2^j`.
const ETA_EXPONENTS: std::ops::RangeInclusive<i32> = -2..=1;
/// Ada-FD's `δ` (`--alpha`, row-scaled units) and Sketchy's (`--alpha0`).
const ADA_FD_DELTAS: [f64; 2] = [0.3, 1.0];
const SKETCHY_DELTAS: [f64; 2] = [0.0, 0.2];

/// The two learners, their names and `δ` grids.
const LEARNERS: [(Algorithm, &str, &[f64]); 2] = [
    (Algorithm::AdaFd, "Ada-FD", &ADA_FD_DELTAS),
    (Algorithm::Sketchy, "Sketchy", &SKETCHY_DELTAS),
];

/// The mixtures compared: the default's members plus these extra learners (at defaults).
const MIXTURES: [(&str, &[Algorithm]); 4] = [
    ("default", &[]),
    ("+ Ada-FD", &[Algorithm::AdaFd]),
    ("+ Sketchy", &[Algorithm::Sketchy]),
    ("+ both", &[Algorithm::AdaFd, Algorithm::Sketchy]),
];

/// A configuration of `algorithm` at the defaults with `η` and `δ`.
fn single(algorithm: Algorithm, eta: f64, delta: Option<f64>) -> LearnerConfig {
    let d = LearnerConfig::default();
    let (alpha, alpha0) = match (algorithm, delta) {
        (Algorithm::AdaFd, Some(v)) => (v, d.alpha0),
        (Algorithm::Sketchy, Some(v)) => (d.alpha, v),
        _ => (d.alpha, d.alpha0),
    };
    LearnerConfig {
        algorithm,
        learning_rate: eta,
        alpha,
        alpha0,
        ..d
    }
}

/// Progressive 0/1 error of one pass (refused steps counted as the CLI does, not fatal).
pub(crate) fn error(mut learner: AnyLearner, data: &[Example]) -> Result<f64> {
    let (mut wrong, mut refused) = (0usize, 0u64);
    for e in data {
        let p = learn_or_refuse(&mut learner, e.row(), e.label, e.weight, &mut refused)?;
        if (p > 0.0) != (e.label > 0.0) {
            wrong += 1;
        }
    }
    Ok(wrong as f64 / data.len() as f64)
}

/// The default mixture (members and rule of `base`, built as the library builds them) with
/// `extra` learners added as members, each as `train --algo` builds it.
fn mixture(base: &LearnerConfig, extra: &[Algorithm], dim: usize) -> Result<AnyLearner> {
    let mut members = base
        .auto_members()
        .iter()
        .map(|m| Ok(m.check()?.build_unscaled(dim)?))
        .collect::<Result<Vec<_>>>()?;
    for &a in extra {
        let d = LearnerConfig::default().learning_rate;
        members.push(single(a, d, None).build(dim)?);
    }
    super::payoff_members::mix(base, members)
}

/// The best `(error, η, δ)` of `algorithm` over the grid.
fn tuned(algorithm: Algorithm, deltas: &[f64], dim: usize, data: &[Example]) -> Result<[f64; 3]> {
    let mut best = [f64::INFINITY, 0.0, 0.0];
    for j in ETA_EXPONENTS {
        let eta = 2f64.powi(j);
        for &delta in deltas {
            let e = error(single(algorithm, eta, Some(delta)).build(dim)?, data)?;
            if e < best[0] {
                best = [e, eta, delta];
            }
        }
    }
    Ok(best)
}

/// One dataset's measurements.
struct Set {
    name: &'static str,
    n: usize,
    /// The two learners untuned, in [`LEARNERS`] order.
    untuned: [f64; 2],
    /// Tuned `(error, η, δ)` (payoff sets only).
    tuned: Option<[[f64; 3]; 2]>,
    /// The mixtures, in [`MIXTURES`] order.
    mixtures: Vec<f64>,
}

/// A shared set's examples, its dimension, and the default configuration with the
/// representation `train` picks for it (sparse-time members when the rows are sparse).
pub(crate) fn load_set(
    args: &ReproArgs,
    name: &str,
) -> Result<(Vec<Example>, usize, LearnerConfig)> {
    let path = args.data_dir.join(format!("{name}.libsvm"));
    let (data, d) = load(&path).with_context(|| format!("loading {}", path.display()))?;
    let (base, _) = super::auto_table::train_default(&data, d, false)?;
    Ok((data, d, base))
}

fn measure(args: &ReproArgs, name: &'static str) -> Result<Set> {
    let (data, d, base) = load_set(args, name)?;
    let n = data.len();
    let t = Instant::now();
    let mut untuned = [0.0; 2];
    for (slot, (a, _, _)) in untuned.iter_mut().zip(LEARNERS) {
        let eta = LearnerConfig::default().learning_rate;
        *slot = error(single(a, eta, None).build(d)?, &data)?;
    }
    let tuned = if PAYOFF.contains(&name) {
        let a = tuned(LEARNERS[0].0, LEARNERS[0].2, d, &data)?;
        let b = tuned(LEARNERS[1].0, LEARNERS[1].2, d, &data)?;
        Some([a, b])
    } else {
        None
    };
    let mixtures = MIXTURES
        .iter()
        .map(|(_, extra)| error(mixture(&base, extra, d)?, &data))
        .collect::<Result<Vec<_>>>()?;
    eprintln!(
        "{name}: n = {n}, d = {d}, untuned {untuned:?}, mixtures {mixtures:?} ({:.0} s)",
        t.elapsed().as_secs_f64()
    );
    Ok(Set {
        name,
        n,
        untuned,
        tuned,
        mixtures,
    })
}

pub fn run(args: &ReproArgs) -> Result<()> {
    run_sets(
        args,
        "sketched_adagrad",
        DATASETS.iter().map(|(n, _)| *n),
        measure,
        report,
    )
}

/// One run of a payoff-style experiment: `measure` each named set, compare with the peers'
/// quoted errors (`../peers/RESULTS.md`) in `report` (markdown, CSV), and write both as
/// `<stem>.md`/`<stem>.csv` with the run's duration.
pub(crate) fn run_sets<S>(
    args: &ReproArgs,
    stem: &str,
    names: impl Iterator<Item = &'static str>,
    measure: impl Fn(&ReproArgs, &'static str) -> Result<S>,
    report: impl Fn(&[S], &QuotedByName, &str) -> Result<(String, String)>,
) -> Result<()> {
    let t0 = Instant::now();
    let date = utc_now();
    let sets = names
        .map(|name| measure(args, name))
        .collect::<Result<Vec<_>>>()?;
    let quoted = parse_results(&args.data_dir.join("../peers/RESULTS.md"));
    let (md, csv) = report(&sets, &quoted, &date)?;
    write_md_csv(&args.out, stem, &md, &csv, Some(t0.elapsed().as_secs_f64()))
}

/// `e ± SE(e)`.
pub(crate) fn pm(e: f64, n: usize) -> String {
    format!("{e:.4} ± {:.4}", binomial_se(e, n))
}

fn report(sets: &[Set], quoted: &QuotedByName, date: &str) -> Result<(String, String)> {
    let mut md = String::new();
    writeln!(
        md,
        "# Ada-FD and Sketchy AdaGrad vs the best tuned peer, and as mixture members\n\n\
         Reproduce: `{}` (from the repository root; the peers' numbers are \
         `../shared/peers/RESULTS.md`'s, no peer is run).\n",
        crate::command_line()
    )?;
    writeln!(
        md,
        "Run {date}. One pass in file order, logistic loss, intercept, progressive 0/1 error ± \
         √(p(1−p)/n). Learners as `sketchlearn train --algo ada-fd|sketchy` builds them \
         (rows divided by their running RMS norm; sketch size m = 10, i.e. 9 directions kept). \
         Defaults: η = 0.5 (`-l`; steps 2 and 4), Ada-FD δ = 1 (`--alpha`), Sketchy δ = 0.2 (`--alpha0`). \
         Tuned: the best of η ∈ 2^−2..2^1 (`-l`, the step is 4η for Ada-FD and 8η for Sketchy, \
         `ADA_FD_STEP_SCALE`, `SKETCHY_STEP_SCALE`) × δ ∈ {ADA_FD_DELTAS:?} (Ada-FD) or \
         {SKETCHY_DELTAS:?} (Sketchy) on the same stream. z = (error − peer)/SE(peer); won = z ≤ −1.\n"
    )?;
    let mut csv = String::from(
        "dataset,n,peer_tuned,peer_untuned,adafd,adafd_tuned,adafd_eta,adafd_delta,sketchy,\
         sketchy_tuned,sketchy_eta,sketchy_delta,default,default_plus_adafd,default_plus_sketchy,\
         default_plus_both\n",
    );
    writeln!(md, "## Each learner alone (the six payoff sets)\n")?;
    table_header(
        &mut md,
        "| dataset | n | best tuned peer | default (mixture) | Ada-FD untuned | Ada-FD tuned (η, δ) | z | Sketchy untuned | Sketchy tuned (η, δ) | z |",
    )?;
    for s in sets {
        let q = quoted.get(s.name);
        let peer = q.and_then(|q| q.tuned.clone());
        let untuned_peer = q.and_then(|q| q.untuned.clone());
        let [a, b] = s.tuned.unwrap_or([[f64::NAN; 3]; 2]);
        writeln!(
            csv,
            "{},{},{},{},{},{},{},{},{},{},{},{},{}",
            s.name,
            s.n,
            peer.as_ref().map_or(f64::NAN, |p| p.0),
            untuned_peer.as_ref().map_or(f64::NAN, |p| p.0),
            s.untuned[0],
            a[0],
            a[1],
            a[2],
            s.untuned[1],
            b[0],
            b[1],
            b[2],
            s.mixtures
                .iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join(",")
        )?;
        let (Some(_), Some((p, who))) = (s.tuned, peer) else {
            continue;
        };
        let zs = |e: f64| format!("{:+.2}", z(e, p, s.n));
        writeln!(
            md,
            "| {} | {} | {p:.4} ({who}) | {} | {} | {} ({}, {}) | {} | {} | {} ({}, {}) | {} |",
            s.name,
            s.n,
            pm(s.mixtures[0], s.n),
            pm(s.untuned[0], s.n),
            pm(a[0], s.n),
            a[1],
            a[2],
            zs(a[0]),
            pm(s.untuned[1], s.n),
            pm(b[0], s.n),
            b[1],
            b[2],
            zs(b[0]),
        )?;
    }
    mixture_tables(&mut md, sets, quoted)?;
    Ok((md, csv))
}

/// The payoff and the guard for each mixture.
fn mixture_tables(md: &mut String, sets: &[Set], quoted: &QuotedByName) -> std::fmt::Result {
    writeln!(
        md,
        "\n## As a fifth (sixth) member of the default mixture\n\nThe default's four members \
         and rule (AdaHedge on calibrated probabilities) with the learner added at its \
         defaults. Payoff: z against the best tuned peer on the six sets (won = z ≤ −1). \
         Guard: z against the best untuned peer on SON Table 3's eleven sets (within = z ≤ 1; r8 not run: \
         the dense-time step on d = 23 585 was too slow for this run).\n"
    )?;
    let names: Vec<&str> = MIXTURES.iter().map(|(n, _)| *n).collect();
    let payoff = sets.iter().filter(|s| PAYOFF.contains(&s.name));
    let rows = payoff.map(|s| (s.name, s.n, &s.mixtures[..]));
    let (won, _) = peer_table(md, &names, rows, quoted, Against::Tuned)?;
    writeln!(
        md,
        "| **won by ≥ 1 SE** | | {} |",
        counts(&won, PAYOFF.len())
    )?;
    writeln!(
        md,
        "\n### The guard: within one SE of the best untuned peer\n"
    )?;
    let rows = sets.iter().map(|s| (s.name, s.n, &s.mixtures[..]));
    let (within, _) = peer_table(md, &names, rows, quoted, Against::Untuned)?;
    writeln!(
        md,
        "| **within 1 SE** | | {} |",
        counts(&within, sets.len())
    )
}
