//! Test error of the recovered models (DRP paper Alg. 1 and 2) against the exact optimum and
//! against LIBLINEAR (run as an external program on the same split, when installed), with wall
//! times measured in the same run, for ridge, logistic and smoothed hinge on four data sets.

use super::drp_common::{
    a9a, liblinear_binary, liblinear_solver, mnist, r8, run_liblinear, synthetic, write_libsvm,
    DrpData, LiblinearRun,
};
use super::{command_line, ReproArgs};
use crate::plot::{line_panels, Panel, Series};
use crate::report::{table_header, write_md_csv};
use anyhow::Result;
use sketchlearn::drp::{relative_error, Alg2Status, DrpLoss, DrpParams, ExactSolver, Problem};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

const LAMBDA: f64 = 1.0;
const T: usize = 3;
const SEED: u64 = 1;

fn grid(name: &str) -> Vec<usize> {
    match name {
        "synthetic" => vec![40, 160, 640],
        "r8" => vec![100, 400, 1600],
        "mnist-3v8" => vec![50, 200, 800],
        _ => vec![32, 128, 512],
    }
}

fn pct(e: f64) -> String {
    format!("{:.2} %", 100.0 * e)
}

struct Ctx {
    name: &'static str,
    n: usize,
    nt: usize,
    d: usize,
    loss: DrpLoss,
}

/// The CSV of a run and the data set's context: [`Rows::row`] writes a solution's line there
/// and in the markdown table `md`.
struct Rows<'a> {
    csv: &'a mut String,
    ctx: &'a Ctx,
}

impl Rows<'_> {
    /// One table row (markdown) and one CSV line.
    #[allow(clippy::too_many_arguments)]
    fn row(
        &mut self,
        md: &mut String,
        solution: &str,
        m: Option<usize>,
        t: usize,
        err: f64,
        rec: Option<f64>,
        secs: f64,
        note: &str,
    ) -> Result<()> {
        writeln!(
            self.csv,
            "{},{},{},{},{},{LAMBDA},{solution},{},{t},{err:.6},{},{secs:.4},{note}",
            self.ctx.name,
            self.ctx.n,
            self.ctx.nt,
            self.ctx.d,
            self.ctx.loss,
            m.map_or(String::new(), |m| m.to_string()),
            rec.map_or(String::new(), |r| format!("{r:.6e}"))
        )?;
        writeln!(
            md,
            "| {} | {solution}{} | {} | {} | {} | {secs:.3} |",
            self.ctx.loss,
            if note.is_empty() {
                String::new()
            } else {
                format!(" ({note})")
            },
            m.map_or("—".to_string(), |m| m.to_string()),
            pct(err),
            rec.map_or("—".to_string(), |r| format!("{r:.2e}")),
        )?;
        Ok(())
    }
}

pub fn run(args: &ReproArgs) -> Result<()> {
    let liblinear = liblinear_binary();
    let tmp = std::env::temp_dir().join(format!("sketchlearn-drp-{}", std::process::id()));
    std::fs::create_dir_all(&tmp)?;
    let mut md = String::new();
    let mut csv = String::from(
        "dataset,n_train,n_test,d,loss,lambda,solution,m,t,test_error,relative_error,seconds,note\n",
    );
    writeln!(
        md,
        "# DRP: test error of the recovered model vs the exact solution and LIBLINEAR\n"
    )?;
    writeln!(
        md,
        "Reproduce: `{}` (single thread; seed {SEED} for R; numbers also in \
         `drp_test_error.csv`).\n",
        command_line()
    )?;
    writeln!(
        md,
        "Problem (1) with λ = {LAMBDA}, no intercept, on each data set's train/test split. Rows: \
         the naive solution ŵ = Rz*/√m, Algorithm 1, Algorithm 2 with T = {T} (the iterate with \
         the smallest ‖∇f‖, i.e. what `sketchlearn drp -f` saves; `div@t` marks a detected \
         divergence), the exact optimum w* (trust-region Newton–CG, relative gradient 1e-10) and \
         LIBLINEAR. Seconds: DRP = projection + low-dimensional solves + recoveries (+ R regenerated \
         for the naive solution), cumulative; exact = solve only; both with the data in memory \
         (`load` = our LIBSVM parsing time of the training file). LIBLINEAR = wall time of the \
         `liblinear-train` process, which includes parsing its text file, default tolerance \
         (`-e`), `-B -1` (no bias): logistic `-s 0 -c 1/λ` and ridge `-s 12 -p 0 -c 1/(2λ)` (L2-loss \
         SVR = ridge) solve the same problem as ours (its distance to w* is shown); smoothed hinge \
         is compared with `-s 2 -c 1/λ`, the squared hinge — a different loss, test error only.\n"
    )?;
    match &liblinear {
        Some(p) => writeln!(md, "LIBLINEAR: `{}`.\n", p.display())?,
        None => writeln!(
            md,
            "LIBLINEAR: **not run** (no `liblinear-train` on PATH; Debian package \
             `liblinear-tools`).\n"
        )?,
    }
    let loaders: Vec<Box<dyn Fn() -> Result<DrpData>>> = vec![
        Box::new(synthetic),
        Box::new(|| r8(&args.data_dir)),
        Box::new(|| mnist(&args.data_dir)),
        Box::new(|| a9a(&args.data_dir)),
    ];
    let mut panels: Vec<Vec<Panel>> = DrpLoss::ALL.iter().map(|_| Vec::new()).collect();
    for load in loaders {
        let t0 = Instant::now();
        let data = load()?;
        let load_seconds = t0.elapsed().as_secs_f64();
        dataset_section(
            &mut md,
            &mut csv,
            &data,
            load_seconds,
            &liblinear,
            &tmp,
            &mut panels,
        )?;
    }
    for (li, loss) in DrpLoss::ALL.iter().enumerate() {
        let png = format!("drp_test_error_{loss}.png");
        line_panels(&args.out.join(&png), &panels[li], 2200, 520)?;
        writeln!(md, "![{loss}: test error vs m]({png})\n")?;
    }
    std::fs::remove_dir_all(&tmp).ok();
    write_md_csv(&args.out, "drp_test_error", &md, &csv, None)?;
    Ok(())
}

/// One dataset's section of the report and the CSV, and its panel per loss.
fn dataset_section(
    md: &mut String,
    csv: &mut String,
    data: &DrpData,
    load_seconds: f64,
    liblinear: &Option<PathBuf>,
    tmp: &Path,
    panels: &mut [Vec<Panel>],
) -> Result<()> {
    let (n, nt, d) = (data.train.len(), data.test.len(), data.train.dim());
    eprintln!("{}: n = {n}, test {nt}, d = {d}", data.name);
    writeln!(
        md,
        "## {} (train {n}, test {nt}, d = {d}; load {load_seconds:.2} s for train + test)\n",
        data.name
    )?;
    writeln!(md, "{}.\n", data.note)?;
    table_header(
        md,
        "| loss | solution | m | test error | ‖w − w*‖/‖w*‖ | seconds |",
    )?;
    let train_file = tmp.join(format!("{}.train.svm", data.name));
    if liblinear.is_some() {
        write_libsvm(&data.train, &train_file)?;
    }
    for (li, &loss) in DrpLoss::ALL.iter().enumerate() {
        let ctx = Ctx {
            name: data.name,
            n,
            nt,
            d,
            loss,
        };
        panels[li].push(loss_section(
            md,
            csv,
            data,
            &ctx,
            liblinear,
            &train_file,
            tmp,
        )?);
    }
    writeln!(md)?;
    std::fs::remove_file(&train_file).ok();
    Ok(())
}

/// One loss on one dataset: the exact solution, LIBLINEAR and the projections' rows, and the
/// panel of test error against m.
fn loss_section(
    md: &mut String,
    csv: &mut String,
    data: &DrpData,
    ctx: &Ctx,
    liblinear: &Option<PathBuf>,
    train_file: &Path,
    tmp: &Path,
) -> Result<Panel> {
    let (loss, d) = (ctx.loss, ctx.d);
    let problem = Problem::new(loss, LAMBDA)?;
    let exact = ExactSolver::default().solve(&problem, &data.train)?;
    let exact_err = data.test.error_rate(&exact.w);
    let mut rows = Rows { csv, ctx };
    rows.row(
        md,
        "exact",
        None,
        0,
        exact_err,
        Some(0.0),
        exact.seconds,
        "",
    )?;
    let ll: Option<LiblinearRun> = match &liblinear {
        Some(bin) => Some(run_liblinear(
            bin,
            train_file,
            &tmp.join("model.txt"),
            loss,
            LAMBDA,
            d,
        )?),
        None => None,
    };
    let (s, c, _) = liblinear_solver(loss, LAMBDA);
    match &ll {
        Some(run) => {
            let rec = run.comparable.then(|| relative_error(&run.w, &exact.w));
            let note = if run.comparable {
                format!("-s {} -c {}", run.solver, run.c)
            } else {
                format!("-s {} -c {}, squared hinge", run.solver, run.c)
            };
            rows.row(
                md,
                "LIBLINEAR",
                None,
                0,
                data.test.error_rate(&run.w),
                rec,
                run.seconds,
                &note,
            )?;
        }
        None => writeln!(
            md,
            "| {loss} | LIBLINEAR (-s {s} -c {c}) | — | not run | — | — |"
        )?,
    }
    let series = projection_sweep(md, csv, data, ctx, &exact.w, exact_err, ll.as_ref())?;
    Ok(Panel {
        title: format!("{} {loss}", data.name),
        x_label: "projections m".into(),
        y_label: "test error".into(),
        log_x: true,
        log_y: true,
        series,
    })
}

/// The naive solution, Algorithm 1 and Algorithm 2 for every m of the dataset's grid: their rows
/// and the panel's series.
fn projection_sweep(
    md: &mut String,
    csv: &mut String,
    data: &DrpData,
    ctx: &Ctx,
    exact_w: &[f64],
    exact_err: f64,
    ll: Option<&LiblinearRun>,
) -> Result<Vec<Series>> {
    let loss = ctx.loss;
    let mut rows = Rows { csv, ctx };
    let mut series = vec![
        Series {
            label: "naive".into(),
            points: Vec::new(),
        },
        Series {
            label: "Alg. 1".into(),
            points: Vec::new(),
        },
        Series {
            label: format!("Alg. 2 (T={T}, best)"),
            points: Vec::new(),
        },
        Series {
            label: "exact".into(),
            points: Vec::new(),
        },
    ];
    let mut ll_series = Series {
        label: "LIBLINEAR".into(),
        points: Vec::new(),
    };
    for m in grid(data.name) {
        let fit = DrpParams::new(loss, LAMBDA, m)
            .iterations(T)
            .seed(SEED)
            .build()?
            .fit(&data.train)?;
        let t1 = fit.projection_seconds + fit.reports[0].seconds;
        let naive_secs = t1 + fit.naive_seconds;
        let e_naive = data.test.error_rate(&fit.naive);
        let e_alg1 = data.test.error_rate(fit.alg1());
        let best = fit.best_index();
        let e_best = data.test.error_rate(fit.best());
        let best_secs = fit.projection_seconds + fit.reports.iter().map(|r| r.seconds).sum::<f64>();
        let status = match fit.status {
            Alg2Status::Diverged { at } => format!("div@{at}"),
            _ => String::new(),
        };
        eprintln!(
            "  {loss:12} m = {m:5}: naive {e_naive:.4} alg1 {e_alg1:.4} best(t={}) {e_best:.4} exact {exact_err:.4} {status}",
            fit.reports[best].t
        );
        rows.row(
            md,
            "naive",
            Some(m),
            0,
            e_naive,
            Some(relative_error(&fit.naive, exact_w)),
            naive_secs,
            "",
        )?;
        rows.row(
            md,
            "Alg. 1",
            Some(m),
            1,
            e_alg1,
            Some(relative_error(fit.alg1(), exact_w)),
            t1,
            "",
        )?;
        let note = format!(
            "t={}{}",
            fit.reports[best].t,
            if status.is_empty() {
                String::new()
            } else {
                format!(", {status}")
            }
        );
        rows.row(
            md,
            &format!("Alg. 2 T={T}"),
            Some(m),
            fit.reports[best].t,
            e_best,
            Some(relative_error(fit.best(), exact_w)),
            best_secs,
            &note,
        )?;
        series[0].points.push((m as f64, e_naive));
        series[1].points.push((m as f64, e_alg1));
        series[2].points.push((m as f64, e_best));
        series[3].points.push((m as f64, exact_err));
        if let Some(run) = ll {
            ll_series
                .points
                .push((m as f64, data.test.error_rate(&run.w)));
        }
    }
    if ll.is_some() {
        series.push(ll_series);
    }
    Ok(series)
}
