//! The reference numbers of `son-table3`: the best peers quoted from RESULTS.md, the SON
//! paper's Table 3, and VW's runs of this run.

use super::DatasetResult;
use crate::stats::binomial_se;
use serde_json::Value;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

pub(crate) fn fmt_opt(x: Option<f64>) -> String {
    x.map_or("—".into(), |v| format!("{v:.4}"))
}

// ---------------------------------------------------------------------------------------------
// Reference numbers.

/// A peer number quoted from RESULTS.md.
#[derive(Clone, Debug, Default)]
pub(crate) struct Quoted {
    pub tuned: Option<(f64, String)>,
    pub untuned: Option<(f64, String)>,
    pub full: Option<String>,
}

/// RESULTS.md's peer numbers by dataset name (what `parse_results` returns).
pub(crate) type QuotedByName = HashMap<String, Quoted>;

/// The leading number of a cell such as `0.1549 (River)` or `**0.2180**`, and the rest.
fn number_cell(cell: &str) -> Option<(f64, String)> {
    let t = cell.trim().replace("**", "");
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let v: f64 = t[..end].parse().ok()?;
    let rest = t[end..]
        .trim()
        .trim_start_matches('(')
        .trim_end_matches(')')
        .to_string();
    Some((v, rest))
}

/// The dataset rows of `RESULTS.md` (`| dataset | n | d | tuned | untuned | full | paper |`).
pub(crate) fn parse_results(path: &Path) -> QuotedByName {
    let mut out = HashMap::new();
    let Ok(text) = std::fs::read_to_string(path) else {
        return out;
    };
    for line in text.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // "| a | b |" splits into ["", a, b, ""].
        if cells.len() < 8 || cells[1].is_empty() || cells[1] == "dataset" {
            continue;
        }
        if cells[2].parse::<u64>().is_err() {
            continue;
        }
        out.insert(
            cells[1].to_string(),
            Quoted {
                tuned: number_cell(cells[4]),
                untuned: number_cell(cells[5]),
                full: Some(cells[6].replace("**", "")).filter(|s| !s.is_empty()),
            },
        );
    }
    out
}

/// SON paper Table 3, m = 10: (Oja-SON without, with diagonal adaptation, AdaGrad). The paper's
/// a9a has 48 842 rows (train + test) and its w8a and magic04 are other versions of the data.
pub(super) fn paper_table3(name: &str) -> Option<(f64, f64, f64)> {
    Some(match name {
        "australian" => (0.366667, 0.157971, 0.289855),
        "breast-cancer" => (0.374817, 0.036603, 0.358712),
        "diabetes" => (0.433594, 0.328125, 0.391927),
        "heart" => (0.388889, 0.244444, 0.362963),
        "ionosphere" => (0.148148, 0.182336, 0.190883),
        "splice" => (0.343, 0.229, 0.301),
        "mushrooms" => (0.002339, 0.002462, 0.001969),
        "a9a" => (0.195203, 0.155953, 0.156414),
        "w8a.shuf" => (0.000101, 0.000422, 0.000221),
        "magic04.shuf" => (0.000263, 0.000158, 0.000210),
        _ => return None,
    })
}

// ---------------------------------------------------------------------------------------------
// VW results.

/// The chosen run of one VW mode/setting on one file.
#[derive(Clone, Debug, Default)]
pub(crate) struct VwCell {
    pub error: Option<f64>,
    pub value: Option<f64>,
    pub status: String,
    pub grid: u64,
    pub failed: u64,
}

impl VwCell {
    pub(super) fn ok_error(&self) -> Option<f64> {
        self.error.filter(|_| self.status == "ok")
    }
    pub(super) fn show(&self, param: bool) -> String {
        let mut s = fmt_opt(self.error);
        if param {
            match self.value {
                Some(v) => write!(s, " ({})", short_value(v)).unwrap(),
                None => s.push_str(" (default)"),
            }
        }
        if self.status != "ok" {
            write!(s, " [{}]", self.status).unwrap();
        }
        if self.failed > 0 && self.grid > 1 {
            write!(s, " [{}/{} grid runs failed]", self.failed, self.grid).unwrap();
        }
        s
    }
}

pub(crate) fn short_value(v: f64) -> String {
    let l = v.log2();
    if (l - l.round()).abs() < 1e-9 {
        format!("2^{}", l.round() as i64)
    } else {
        format!("{v}")
    }
}

/// VW mode variants of the table: (key, run_vw mode, normalize flag).
pub(super) const VW_VARIANTS: [(&str, &str, Option<&str>); 3] = [
    ("vw_adagrad", "adagrad", None),
    ("vw_oja", "oja", None),
    ("vw_oja_nonorm", "oja", Some("false")),
];

pub(crate) type VwKey = (String, String, String); // (file, variant key, setting)

pub(crate) fn collect_vw(lines: &[Value], variant: &str, out: &mut HashMap<VwKey, VwCell>) {
    for v in lines {
        if v["type"] != "best" {
            continue;
        }
        let file = v["file"].as_str().unwrap_or_default().to_string();
        let setting = v["setting"].as_str().unwrap_or_default().to_string();
        out.insert(
            (file, variant.to_string(), setting),
            VwCell {
                error: v["progressive_error"].as_f64(),
                value: v["value"].as_f64(),
                status: v["status"].as_str().unwrap_or("?").to_string(),
                grid: v["grid_size"].as_u64().unwrap_or(0),
                failed: v["grid_failed"].as_u64().unwrap_or(0),
            },
        );
    }
}

/// The bar of one dataset: the best tuned and untuned peer (RESULTS.md and this run's VW) and
/// the binomial SE at the best tuned peer's error.
pub(super) struct Reference {
    pub tuned: Option<(f64, String)>,
    pub untuned: Option<(f64, String)>,
    pub se: Option<f64>,
}

/// The references per dataset: best tuned / untuned peer = RESULTS.md and this run's VW.
pub(super) fn references(
    results: &[DatasetResult],
    quoted: &QuotedByName,
    vw_cell: impl Fn(usize, &str, &str) -> Option<VwCell>,
) -> Vec<Reference> {
    results
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let q = quoted.get(r.name).cloned().unwrap_or_default();
            let mut tuned: Vec<(f64, String)> = q
                .tuned
                .iter()
                .map(|(v, w)| (*v, format!("{w}, RESULTS.md")))
                .collect();
            let mut untuned: Vec<(f64, String)> = q
                .untuned
                .iter()
                .map(|(v, w)| (*v, format!("{w}, RESULTS.md")))
                .collect();
            for (key, label) in [
                ("vw_adagrad", "VW AdaGrad"),
                ("vw_oja", "VW Oja"),
                ("vw_oja_nonorm", "VW Oja normalize=false"),
            ] {
                if let Some(e) = vw_cell(i, key, "tuned").and_then(|c| c.ok_error()) {
                    tuned.push((e, format!("{label}, this run")));
                }
                // normalize=false is not VW's default, so it is no untuned peer.
                if key != "vw_oja_nonorm" {
                    if let Some(e) = vw_cell(i, key, "untuned").and_then(|c| c.ok_error()) {
                        untuned.push((e, format!("{label}, this run")));
                    }
                }
            }
            let min =
                |v: Vec<(f64, String)>| v.into_iter().min_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
            let tuned = min(tuned);
            let se = tuned.as_ref().map(|t| binomial_se(t.0, r.n));
            Reference {
                tuned,
                untuned: min(untuned),
                se,
            }
        })
        .collect()
}
