//! The text form of a [`ModelSummary`] (what `sketchlearn inspect` prints without `--json`).

use super::summary::{Centre, ModelSummary, Weight};
use std::fmt::Write;

impl ModelSummary {
    /// The summary as aligned text lines, headed by the model's `path`.
    pub fn text(&self, path: &str) -> String {
        let r = self;
        let mut s = String::new();
        let _ = writeln!(s, "model          {path}");
        let _ = writeln!(s, "learner        {}", r.learner);
        let _ = writeln!(s, "loss           {}", r.loss);
        if let Some(c) = &r.classes {
            let _ = writeln!(s, "classes        {}", c.join(","));
        }
        if let Some(i) = &r.input {
            let _ = writeln!(s, "input          {i}");
        }
        let _ = writeln!(s, "dimension      {}", r.dim);
        let _ = writeln!(s, "examples seen  {}", r.examples_seen);
        if let Some(b) = r.intercept {
            let _ = writeln!(s, "intercept      {b:.6}");
        }
        r.centre_line(&mut s);
        if let Some(g) = &r.regularization {
            let _ = writeln!(s, "penalty        l1 {} l2 {}", g.l1, g.l2);
        }
        if let Some(c) = &r.csv_columns {
            let _ = writeln!(s, "csv columns    {}", c.join(", "));
        }
        if let Some(c) = &r.side_columns {
            let _ = writeln!(s, "side columns   {}", c.join(", "));
        }
        if let Some(members) = &r.mixture {
            let _ = writeln!(s, "\nmixture weights");
            for m in members {
                let _ = writeln!(s, "  {:.3}  {}", m.weight, m.learner);
            }
            if let Some(scales) = &r.output_scales {
                let list: Vec<String> = scales.iter().map(|k| format!("{k:.3}")).collect();
                let _ = writeln!(
                    s,
                    "  predicts Σ π·σ(s·p), the members' calibrated probabilities; s = {}",
                    list.join(" ")
                );
            }
        }
        for c in r.class_weights.iter().flatten() {
            let _ = write!(s, "\nclass {}", c.class);
            if let Some(b) = c.intercept {
                let _ = write!(s, " (intercept {b:.6})");
            }
            weight_table(&mut s, &c.top_weights);
        }
        if r.top_weights.is_empty() {
            return s;
        }
        weight_table(&mut s, &r.top_weights);
        r.sketch_lines(&mut s);
        s
    }

    /// The `centred at` line of an FM.
    fn centre_line(&self, s: &mut String) {
        match &self.centred_at {
            Some(Centre {
                label_mean: true,
                value,
                labels,
            }) => {
                let n = labels.unwrap_or(0.0);
                let _ = writeln!(s, "centred at     label mean {value:.6} over {n} labels");
            }
            Some(c) => {
                let _ = writeln!(s, "centred at     {:.6} (fixed)", c.value);
            }
            None => {}
        }
    }

    /// The sketches' top singular values, one sketch a line.
    fn sketch_lines(&self, s: &mut String) {
        if self.sketches.is_empty() {
            return;
        }
        let _ = writeln!(s, "\nsketches (top singular values)");
        for k in &self.sketches {
            let values: Vec<String> = k
                .singular_values
                .iter()
                .map(|v| format!("{v:.4}"))
                .collect();
            let at = if k.path.is_empty() {
                "learner"
            } else {
                &k.path
            };
            let _ = writeln!(
                s,
                "  {at:<22} {:<10} alpha {:<10.4} {}",
                k.kind,
                k.alpha,
                values.join(" ")
            );
        }
    }
}

/// A table of weights under a `top N weights` line.
fn weight_table(s: &mut String, weights: &[Weight]) {
    let _ = writeln!(
        s,
        "\ntop {} weights by magnitude (index: 0-based; LIBSVM index - 1, VW hash bucket, CSV or \
         FM feature)",
        weights.len()
    );
    let _ = writeln!(s, "  {:>10}  {:>12}  name", "index", "weight");
    for w in weights {
        let name = w.name.as_deref().unwrap_or("-");
        let _ = writeln!(s, "  {:>10}  {:>12.6}  {name}", w.index, w.weight);
    }
}
