//! Issue 27, item 2: is every member of the default worth its cost on sparse data? The default
//! (`sketchlearn train FILE`, the `auto` mixture of `LearnerConfig::auto_members`) against the
//! same mixture with one member removed or replaced, on the 12 shared sets of `auto.md` and the
//! generated sparse stream of `scripts/bench_speed.py` (`2^18` features, 50 non-zeros, 100k rows,
//! read from `target/bench_speed/sparse_2p18_nnz50_100k.libsvm` when present), with each
//! member's CPU time per example.
//!
//! Every variant is built as `LearnerConfig::build` builds the default (each member in its own
//! [`UnitScaling`], mixed by the default's rule, the representation `train` picks for the file);
//! the full member list built this way is checked to give the default's error exactly. The
//! acceptance rule of the issue: a composition may replace the default only if every shared set
//! stays within one binomial standard error of the default and the generated stream at or below
//! AdaGrad's error. Since the data-sparsity rule (`linear/data_sparsity.rs`) the default is the
//! full mixture on dense data, `auto-sparse` (members 2 and 3) on sparse data and
//! `auto-very-sparse` (member 3) on very sparse data: the table
//! compares against the full mixture, and a second table gives the default `train` resolves
//! now, on the LIBSVM files and on the same rows as VW text.

use super::auto_table::{train_default, train_resolved};
use super::payoff_members::mix;
use super::son_table3::load;
use super::ReproArgs;
use crate::machine::{load_average, thread_cpu, utc_now};
use crate::paths::repo_root;
use crate::report::{table_header, write_md_csv};
use crate::sparse_common::{libsvm_as_vw, load_vw};
use crate::stats::binomial_se;
use anyhow::{ensure, Context, Result};
use sketchlearn::linear::{Algorithm, AnyLearner, CurvatureKind, LearnerConfig, UnitScaling};
use sketchlearn::run::learn_or_refuse;
use sketchlearn::Example;
use std::fmt::Write as _;
use std::time::Instant;

/// A member list: the default's members by index (0–3), or 4 for Oja-SON + diag (member 2 with
/// Oja's curvature).
type Variant = (&'static str, &'static [usize]);

/// The compositions compared, the default first.
const VARIANTS: [Variant; 7] = [
    ("default (1)+(2)+(3)+(4)", &[0, 1, 2, 3]),
    ("without (1) RFD-SON", &[1, 2, 3]),
    ("without (2) FD-SON + diag", &[0, 2, 3]),
    ("without (4) RFD-SON 3α₀", &[0, 1, 2]),
    ("without (1) and (4)", &[1, 2]),
    ("(2) → Oja-SON + diag", &[0, 4, 2, 3]),
    ("(2) → Oja-SON + diag, without (4)", &[0, 4, 2]),
];

/// Names of the candidate members (indices of [`VARIANTS`]).
const MEMBERS: [&str; 5] = [
    "(1) RFD-SON",
    "(2) FD-SON + diag",
    "(3) AdaGrad grid",
    "(4) RFD-SON 3α₀",
    "Oja-SON + diag",
];

/// The generated sparse stream of `scripts/bench_speed.py`, relative to the repository root.
const GENERATED: &str = "target/bench_speed/sparse_2p18_nnz50_100k.libsvm";

struct Set {
    name: String,
    n: usize,
    sparse: bool,
    default: f64,
    variants: Vec<f64>,
    /// CPU µs per example of each candidate member alone (in its `UnitScaling`).
    member_us: Vec<f64>,
    default_us: f64,
    adagrad: f64,
    /// The default `train` resolves now (`resolved`: `auto`, `auto-sparse` or
    /// `auto-very-sparse`, the data-sparsity rule's choice) and its CPU.
    new_default: f64,
    new_us: f64,
    resolved: Algorithm,
}

/// A set read as VW text: the full mixture and the resolved default.
struct VwSet {
    name: String,
    n: usize,
    full: f64,
    new_default: f64,
    resolved: Algorithm,
}

/// The default's members and Oja-SON + diag, as configured for `base`.
fn candidates(base: &LearnerConfig) -> Vec<LearnerConfig> {
    let mut m = base.auto_members();
    let oja = LearnerConfig {
        curvature: CurvatureKind::Oja,
        ..m[1].clone()
    };
    m.push(oja);
    m
}

/// One member as the default builds it: unscaled, in its own [`UnitScaling`].
fn member(cfg: &LearnerConfig, dim: usize) -> Result<AnyLearner> {
    let built = cfg.check()?.build_unscaled(dim)?;
    Ok(AnyLearner::UnitScaling(Box::new(UnitScaling::new(built))))
}

/// The mixture of `members` (indices of [`candidates`]) with the default's rule.
fn mixture(base: &LearnerConfig, members: &[usize], dim: usize) -> Result<AnyLearner> {
    let all = candidates(base);
    let built = members
        .iter()
        .map(|&k| member(&all[k], dim))
        .collect::<Result<Vec<_>>>()?;
    mix(base, built)
}

/// Progressive 0/1 error and CPU µs per example of one pass (this thread's CPU time).
fn pass(mut l: AnyLearner, data: &[Example]) -> Result<(f64, f64)> {
    let t = thread_cpu();
    let (mut wrong, mut refused) = (0usize, 0u64);
    for e in data {
        let p = learn_or_refuse(&mut l, e.row(), e.label, e.weight, &mut refused)?;
        if (p > 0.0) != (e.label > 0.0) {
            wrong += 1;
        }
    }
    let us = (thread_cpu() - t) / data.len() as f64 * 1e6;
    Ok((wrong as f64 / data.len() as f64, us))
}

/// The full four-member mixture (the default before the data-sparsity rule) for `base`, and
/// the default `train` resolves (`base` itself; `auto-sparse` on sparse data).
fn full_of(base: &LearnerConfig) -> LearnerConfig {
    LearnerConfig {
        algorithm: Algorithm::Auto,
        ..base.clone()
    }
}

/// `train`'s default for these rows and whether the compositions' sketched members are
/// sparse-time. `auto-very-sparse` holds no sketched member, so `train` leaves its
/// representation unresolved; the compositions compared here hold them, built in the
/// representation `train` picks for them on these rows (the one `--algo auto-sparse` resolves).
fn default_for_members(
    data: &[Example],
    dim: usize,
    hashed: bool,
) -> Result<(LearnerConfig, bool)> {
    let (base, sparse) = train_default(data, dim, hashed)?;
    if base.algorithm != Algorithm::AutoVerySparse {
        return Ok((base, sparse));
    }
    let named = LearnerConfig {
        algorithm: Algorithm::AutoSparse,
        ..LearnerConfig::default()
    };
    let (named, sparse) = train_resolved(named, data, dim, hashed)?;
    let base = LearnerConfig {
        representation: named.representation,
        ..base
    };
    Ok((base, sparse))
}

fn measure(name: &str, path: &std::path::Path) -> Result<Set> {
    let (data, d) = load(path).with_context(|| format!("loading {}", path.display()))?;
    let n = data.len();
    let (base, sparse) = default_for_members(&data, d, false)?;
    let (default, default_us) = pass(full_of(&base).build(d)?, &data)?;
    let (new_default, new_us) = pass(base.build(d)?, &data)?;
    let mut variants = Vec::new();
    for (label, members) in VARIANTS {
        let (e, _) = pass(mixture(&base, members, d)?, &data)?;
        variants.push(e);
        eprintln!("{name}: {label}: {e:.4}");
    }
    ensure!(
        variants[0] == default,
        "{name}: the default's members mixed here give {} instead of the default's {default}",
        variants[0]
    );
    // The resolved composition's error: a variant's when it is one of them, else its own pass.
    let members = resolved_members(base.algorithm)?;
    let same = match VARIANTS.iter().position(|(_, v)| *v == members) {
        Some(k) => variants[k],
        None => pass(mixture(&base, members, d)?, &data)?.0,
    };
    ensure!(
        same == new_default,
        "{name}: {} built as a mixture gives {same}, train's default {new_default}",
        base.algorithm
    );
    let mut member_us = Vec::new();
    let mut adagrad = f64::NAN;
    for (k, cfg) in candidates(&base).iter().enumerate() {
        let (e, us) = pass(member(cfg, d)?, &data)?;
        if k == 2 {
            let single = LearnerConfig {
                algorithm: Algorithm::AdaGrad,
                ..cfg.clone()
            };
            adagrad = pass(single.build(d)?, &data)?.0;
        }
        member_us.push(us);
        eprintln!("{name}: {} alone: {e:.4}, {us:.1} µs/example", MEMBERS[k]);
    }
    Ok(Set {
        name: name.to_string(),
        n,
        sparse,
        default,
        variants,
        member_us,
        default_us,
        adagrad,
        new_default,
        new_us,
        resolved: base.algorithm,
    })
}

/// The same rows as VW text (`label |f idx:val`, read with 18 hash bits, as `train FILE.vw`
/// reads them): the full mixture against the default `train` resolves for hashed input.
fn measure_vw(name: &str, path: &std::path::Path) -> Result<VwSet> {
    let vw = libsvm_as_vw(path)?;
    let data = load_vw(&vw, 18)?;
    let d = 1usize << 18;
    let (base, _) = default_for_members(&data, d, true)?;
    let (full, _) = pass(full_of(&base).build(d)?, &data)?;
    let (new_default, _) = pass(base.build(d)?, &data)?;
    eprintln!(
        "{name} (VW): full {full:.4}, {}: {new_default:.4}",
        base.algorithm
    );
    Ok(VwSet {
        name: name.to_string(),
        n: data.len(),
        full,
        new_default,
        resolved: base.algorithm,
    })
}

pub fn run(args: &ReproArgs) -> Result<()> {
    let t0 = Instant::now();
    let (date, load_before) = (utc_now(), load_average());
    let mut sets = Vec::new();
    for (name, _) in super::auto_table::datasets() {
        let path = args.data_dir.join(format!("{name}.libsvm"));
        sets.push(measure(name, &path)?);
    }
    let generated = repo_root().join(GENERATED);
    if generated.exists() {
        sets.push(measure("generated sparse", &generated)?);
    } else {
        eprintln!(
            "{} not found: run scripts/bench_speed.py once to write it",
            GENERATED
        );
    }
    let mut vw = Vec::new();
    for (name, _) in super::auto_table::datasets() {
        vw.push(measure_vw(
            name,
            &args.data_dir.join(format!("{name}.libsvm")),
        )?);
    }
    let mut md = String::new();
    report(&mut md, &sets, &date, &load_before)?;
    report_new(&mut md, &sets, &vw)?;
    write_md_csv(
        &args.out,
        "auto_members",
        &md,
        &csv(&sets),
        Some(t0.elapsed().as_secs_f64()),
    )
}

fn report(md: &mut String, sets: &[Set], date: &str, load: &str) -> std::fmt::Result {
    writeln!(
        md,
        "# Is every member of the default worth its cost? (issue 27, item 2)\n"
    )?;
    writeln!(
        md,
        "Reproduce: `cargo run --release -p sketchlearn-repro -- auto-members` (run \
         `scripts/bench_speed.py` once first: it writes the generated stream to `{GENERATED}`). \
         Run {date}; load average {load}. The full mixture of the four members (the default \
         before the data-sparsity rule; `sketchlearn train FILE` on the dense sets) and the same \
         mixture with members removed or replaced, each member in its own unit scaling, mixed \
         by the default's rule, sparse-time members where `train` picks them; progressive 0/1 \
         error, one pass in file order. z = (error − full)/SE(full). A composition may \
         replace the default only if every shared set stays within one SE (z ≤ 1) and the \
         generated stream at or below AdaGrad's error.\n"
    )?;
    let header = format!(
        "| dataset | n | SE | {} |",
        VARIANTS.iter().map(|v| v.0).collect::<Vec<_>>().join(" | ")
    );
    table_header(md, &header)?;
    for s in sets {
        let se = binomial_se(s.default, s.n);
        let cells: Vec<String> = s
            .variants
            .iter()
            .map(|&e| format!("{e:.4} ({:+.2})", (e - s.default) / se.max(1e-12)))
            .collect();
        let sparse = if s.sparse { " (sparse members)" } else { "" };
        writeln!(
            md,
            "| {}{sparse} | {} | {se:.4} | {} |",
            s.name,
            s.n,
            cells.join(" | ")
        )?;
    }
    writeln!(md)?;
    for (k, (label, _)) in VARIANTS.iter().enumerate().skip(1) {
        let bad: Vec<&str> = sets
            .iter()
            .filter(|s| !passes(s, k))
            .map(|s| s.name.as_str())
            .collect();
        let verdict = if bad.is_empty() {
            "passes".to_string()
        } else {
            format!("fails on {}", bad.join(", "))
        };
        writeln!(md, "* {label}: {verdict}.")?;
    }
    writeln!(
        md,
        "\nCPU µs per example (this thread), each member alone and the default (the thread's \
         CPU time advances in scheduler ticks: on the small sets, below ~5k rows, these are \
         coarse):\n"
    )?;
    table_header(
        md,
        &format!("| dataset | {} | default |", MEMBERS.join(" | ")),
    )?;
    for s in sets {
        let cells: Vec<String> = s.member_us.iter().map(|u| format!("{u:.1}")).collect();
        writeln!(
            md,
            "| {} | {} | {:.1} |",
            s.name,
            cells.join(" | "),
            s.default_us
        )?;
    }
    Ok(())
}

/// The default `train` resolves now (the four members, `auto-sparse` = {(2), (3)} where the
/// first rows are sparse, `auto-very-sparse` = {(3)} where they are very sparse) against the
/// full mixture: the LIBSVM files
/// above, then the same rows as VW text.
fn report_new(md: &mut String, sets: &[Set], vw: &[VwSet]) -> std::fmt::Result {
    writeln!(
        md,
        "\n## The default with the data-sparsity rule\n\n`sketchlearn train FILE` now mixes \
         members (2) and (3) only (`auto-sparse`) where the first 1000 rows are sparse (mean \
         stored features < 1/10 of the distinct features they use, \
         `linear/data_sparsity.rs`), member (3) alone (`auto-very-sparse`) where they are very \
         sparse (at least 1000 rows, each feature seen in fewer than two of them on average), \
         and all four elsewhere. z = (error − full)/SE(full); CPU µs \
         per example of this thread.\n"
    )?;
    table_header(
        md,
        "| dataset | n | members | full mixture | default now (z) | CPU full → now (µs) |",
    )?;
    for s in sets {
        let se = binomial_se(s.default, s.n).max(1e-12);
        writeln!(
            md,
            "| {} | {} | {} | {:.4} | {:.4} ({:+.2}) | {:.1} → {:.1} |",
            s.name,
            s.n,
            members_name(s.resolved),
            s.default,
            s.new_default,
            (s.new_default - s.default) / se,
            s.default_us,
            s.new_us
        )?;
    }
    writeln!(
        md,
        "\nThe same rows as VW text (`label |f idx:val`, 18 hash bits, `target/peers/sparse_NAME.vw`): \
         hashing gives `d = 2^18` and sparse-time members everywhere, but the members follow \
         the data.\n"
    )?;
    table_header(
        md,
        "| dataset (VW text) | n | members | full mixture | default now (z) |",
    )?;
    for s in vw {
        let se = binomial_se(s.full, s.n).max(1e-12);
        writeln!(
            md,
            "| {} | {} | {} | {:.4} | {:.4} ({:+.2}) |",
            s.name,
            s.n,
            members_name(s.resolved),
            s.full,
            s.new_default,
            (s.new_default - s.full) / se
        )?;
    }
    Ok(())
}

fn members_name(resolved: Algorithm) -> &'static str {
    match resolved {
        Algorithm::AutoVerySparse => "auto-very-sparse (3)",
        Algorithm::AutoSparse => "auto-sparse (2)+(3)",
        _ => "auto (1)–(4)",
    }
}

/// The members (indices of [`candidates`]) of the default `train` resolved: the data-sparsity
/// rule's three compositions (`LearnerConfig::auto_members`, `sparse_data_members`,
/// `very_sparse_data_members`).
fn resolved_members(resolved: Algorithm) -> Result<&'static [usize]> {
    Ok(match resolved {
        Algorithm::Auto => &[0, 1, 2, 3],
        Algorithm::AutoSparse => &[1, 2],
        Algorithm::AutoVerySparse => &[2],
        other => anyhow::bail!("the default resolved to {other}, not a composition of auto"),
    })
}

/// Whether variant `k` keeps set `s` within one SE of the default (and the generated stream at
/// or below AdaGrad's error).
fn passes(s: &Set, k: usize) -> bool {
    let e = s.variants[k];
    let within = e - s.default <= binomial_se(s.default, s.n);
    if s.name == "generated sparse" {
        within && e <= s.adagrad
    } else {
        within
    }
}

fn csv(sets: &[Set]) -> String {
    let mut out = String::from("dataset,n,sparse,default,adagrad");
    for k in 0..VARIANTS.len() {
        let _ = write!(out, ",variant_{k}");
    }
    for k in 0..MEMBERS.len() {
        let _ = write!(out, ",member_{k}_us");
    }
    out.push_str(",default_us,resolved,new_default,new_us\n");
    for s in sets {
        let _ = write!(
            out,
            "{},{},{},{},{}",
            s.name, s.n, s.sparse, s.default, s.adagrad
        );
        for e in &s.variants {
            let _ = write!(out, ",{e}");
        }
        for u in &s.member_us {
            let _ = write!(out, ",{u:.2}");
        }
        let _ = writeln!(
            out,
            ",{:.2},{},{},{:.2}",
            s.default_us, s.resolved, s.new_default, s.new_us
        );
    }
    out
}
