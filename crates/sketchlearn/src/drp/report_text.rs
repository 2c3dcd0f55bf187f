//! The text form of a [`DrpReport`] (what `sketchlearn drp` prints without `--json`).

use super::job::DrpReport;
use std::fmt::Write;

impl DrpReport {
    /// The report as a table; `saved_to` names the file the recovered model was saved to.
    pub fn text(&self, saved_to: Option<&str>) -> String {
        let r = self;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "drp: loss {}, lambda {}, m {}, T {}, seed {}",
            r.loss, r.lambda, r.size, r.iterations, r.seed
        );
        let _ = writeln!(
            s,
            "train: n = {}, d = {}, nnz = {} (read in {:.3} s); projection {:.3} s",
            r.examples, r.dim, r.nnz, r.load_seconds, r.projection_seconds
        );
        if let Some(n) = r.test_examples {
            let _ = writeln!(s, "test: n = {n}");
        }
        let _ = writeln!(s);
        r.solution_table(&mut s);
        let _ = writeln!(s);
        let _ = writeln!(s, "algorithm 2: {}", r.status);
        if r.diverged_at.is_some() {
            let _ = writeln!(
                s,
                "warning: Algorithm 2 diverged: m = {} is too small for the effective rank of \
                 the data at lambda = {} (increase --size or --lambda); the best iterate is kept",
                r.size, r.lambda
            );
        }
        if let (Some(path), Some(t)) = (saved_to, r.saved_iteration) {
            let _ = writeln!(s, "saved the t={t} iterate to {path}");
        }
        s
    }

    /// One line per solution under a header.
    fn solution_table(&self, s: &mut String) {
        let test_column = if self.regression {
            "test RMSE"
        } else {
            "test error"
        };
        let _ = writeln!(
            s,
            "{:<10} {:>16} {:>12} {:>11} {:>12} {:>9}",
            "solution", "objective", "‖∇f‖ rel.", test_column, "‖w−w*‖/‖w*‖", "seconds"
        );
        for r in &self.solutions {
            let name = match r.name.as_str() {
                "alg2" => format!("alg2 t={}", r.t),
                other => other.to_string(),
            };
            let test = r.test_error.or(r.test_rmse);
            let _ = writeln!(
                s,
                "{:<10} {:>16.6} {:>12.3e} {:>11} {:>12} {:>9.3}",
                name,
                r.objective,
                r.relative_grad_norm,
                test.map_or("-".into(), |x| format!("{x:.4}")),
                r.recovery_error.map_or("-".into(), |e| format!("{e:.3e}")),
                r.seconds
            );
        }
    }
}
