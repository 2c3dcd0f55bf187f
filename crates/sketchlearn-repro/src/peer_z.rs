//! Candidates' error rates against a peer's, in the peer's binomial standard errors: the rows of
//! the payoff tables (won: `z ≤ −1` against the best tuned peer) and of the guard tables
//! (within: `z ≤ 1` against the best untuned peer) that `payoff_members` and `sketched_adagrad`
//! write.

use crate::report::table_header;
use crate::son_table3::{Quoted, QuotedByName};
use crate::stats::binomial_se;
use std::fmt::Write as _;

/// `(e − bar)/SE(bar)`.
pub(crate) fn z(e: f64, bar: f64, n: usize) -> f64 {
    (e - bar) / binomial_se(bar, n).max(1e-12)
}

/// The peer a table compares against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Against {
    /// The payoff: the best tuned peer; a cell with `z ≤ −1` is won (marked `, won`).
    Tuned,
    /// The guard: the best untuned peer; a cell with `z ≤ 1` is within one SE.
    Untuned,
}

impl Against {
    /// The peer's `(error, name)` in `quote`.
    fn peer(self, quote: &Quoted) -> Option<&(f64, String)> {
        match self {
            Against::Tuned => quote.tuned.as_ref(),
            Against::Untuned => quote.untuned.as_ref(),
        }
    }

    /// The header of the peer's column.
    fn column(self) -> &'static str {
        match self {
            Against::Tuned => "best tuned peer",
            Against::Untuned => "best untuned peer",
        }
    }

    /// The largest `z` that counts, and the mark of the cells that count.
    fn limit(self) -> (f64, &'static str) {
        match self {
            Against::Tuned => (-1.0, ", won"),
            Against::Untuned => (1.0, ""),
        }
    }
}

/// Writes a markdown table of the candidates `names` against the peer: the header, then one row
/// a set of `sets` (`(name, test examples, the candidates' errors)`) that has a quote of the
/// peer, `| name | peer (who) | e (z ±z.zz) | … |`, the cells that count marked (see
/// [`Against`]). Returns how many sets each candidate counts on and the number of rows written.
pub(crate) fn peer_table<'a>(
    md: &mut String,
    names: &[&str],
    sets: impl IntoIterator<Item = (&'a str, usize, &'a [f64])>,
    quoted: &QuotedByName,
    against: Against,
) -> Result<(Vec<usize>, usize), std::fmt::Error> {
    let header = format!("| dataset | {} | {} |", against.column(), names.join(" | "));
    table_header(md, &header)?;
    let (limit, mark) = against.limit();
    let (mut hits, mut rows) = (vec![0usize; names.len()], 0);
    for (name, n, errors) in sets {
        let Some((peer, who)) = quoted.get(name).and_then(|q| against.peer(q)) else {
            continue;
        };
        rows += 1;
        let cells: Vec<String> = errors
            .iter()
            .zip(hits.iter_mut())
            .map(|(&e, hit)| {
                let v = z(e, *peer, n);
                *hit += (v <= limit) as usize;
                format!("{e:.4} (z {v:+.2}{})", if v <= limit { mark } else { "" })
            })
            .collect();
        writeln!(md, "| {name} | {peer:.4} ({who}) | {} |", cells.join(" | "))?;
    }
    Ok((hits, rows))
}

/// The counts of a table's last row: `c of {of}` for each candidate.
pub(crate) fn counts(v: &[usize], of: usize) -> String {
    v.iter()
        .map(|c| format!("{c} of {of}"))
        .collect::<Vec<_>>()
        .join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_mark_and_count_the_cells_within_the_limit() {
        let quote = |tuned: Option<f64>, untuned: f64| Quoted {
            tuned: tuned.map(|e| (e, "VW".to_string())),
            untuned: Some((untuned, "River".to_string())),
            full: None,
        };
        let quoted = std::collections::HashMap::from([
            ("heart".to_string(), quote(Some(0.2), 0.1)),
            ("a9a".to_string(), quote(None, 0.1)),
        ]);
        let sets = [
            ("heart", 100, &[0.1, 0.2][..]),
            ("a9a", 100, &[0.1, 0.2][..]),
        ];
        let mut md = String::new();
        let won = peer_table(&mut md, &["a", "b"], sets, &quoted, Against::Tuned).unwrap();
        assert_eq!(
            md,
            "| dataset | best tuned peer | a | b |\n|---|---|---|---|\n\
             | heart | 0.2000 (VW) | 0.1000 (z -2.50, won) | 0.2000 (z +0.00) |\n"
        );
        assert_eq!(won, (vec![1, 0], 1));
        assert_eq!(counts(&won.0, 6), "1 of 6 | 0 of 6");
        let mut md = String::new();
        let within = peer_table(&mut md, &["a", "b"], sets, &quoted, Against::Untuned).unwrap();
        assert_eq!(within, (vec![2, 0], 2));
        assert!(md.ends_with("| a9a | 0.1000 (River) | 0.1000 (z +0.00) | 0.2000 (z +3.33) |\n"));
    }
}
