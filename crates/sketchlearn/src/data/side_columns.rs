//! Side-feature columns of a ratings file (`sketchlearn fm --columns user,item,rating,age,genre`):
//! the columns after the user, item and rating become features of the rating's row, beside the
//! one-hot user and item (SFTRL paper §5.2 uses side information this way; DESIGN.md §4 item 15).
//!
//! The reader ([`parse_ratings_with_side`](super::ratings::parse_ratings_with_side)) keeps every
//! row's texts of these columns in a [`SideTable`]; [`SideColumns::fit`] makes the schema from
//! the **training part**, as the id maps are fitted, and the schema is stored in the model so
//! that later files (`fm -i`, `fm predict`) map the same columns to the same features:
//!
//! - a column whose non-missing texts are all finite numbers is **numeric**: one feature, the
//!   value standardised with the training part's mean μ and standard deviation σ,
//!   `(x − μ)/σ` (σ = 1 when the column is constant). The FM's default steps are sized for
//!   one-hot rows (values 1); a raw value such as an age of 40 makes the row's squared norm
//!   ~1600 and constant steps diverge, while a standardised value is of order 1. Centring also
//!   makes a missing value (absent feature, 0) the training mean;
//! - any other column is **categorical**: one feature per value seen in training, value 1; a
//!   field holding several values separated by `|` (MovieLens genres `Action|Comedy`) gives one
//!   feature per value; a value unseen in training gives no feature (as an unseen id);
//! - a missing value — empty, `NA`, `N/A`, `NaN`, `nan`, `null`, `NULL` or `?`, as the CSV
//!   reader reads them ([`is_missing`]), or a row too short to have the field — gives no feature.
//!
//! - every side column's features are multiplied by `1/√c` (`c` side columns), and the `k`
//!   values of one categorical field by a further `1/√k`, so the side columns together add
//!   about 1 to a row's squared norm (a numeric value's square is 1 on average, a field's
//!   values' squares sum to 1) — as much as one more one-hot id — however many columns there
//!   are; the user and item keep their value 1.
//!
//! A text that is not a number in a column that is numeric in the training part is an error
//! naming the line and the column.
//!
//! ```
//! use sketchlearn::data::side_columns::{SideColumns, SideTable};
//! let mut table = SideTable::new(vec![("age".into(), 3), ("genre".into(), 4)]);
//! for (age, genre) in [("20", "Drama"), ("40", "Action|Drama"), ("NA", "Comedy")] {
//!     table.push_row(&[age, genre]);
//! }
//! let spec = ["user", "item", "rating", "age", "genre"].map(String::from).to_vec();
//! let schema = SideColumns::fit(&table, 0..2, spec);
//! assert_eq!(schema.dim(), 3); // age, genre=Drama, genre=Action
//! let mut out = Vec::new();
//! schema.encode_texts(&["40", "Action|Drama"], 10, &mut out).unwrap();
//! // age (40 − 30)/10 = 1, two genres; two columns: × 1/√2, two values: × 1/√2.
//! let indices: Vec<u32> = out.iter().map(|p| p.0).collect();
//! assert_eq!(indices, vec![10, 11, 12]);
//! let h = 0.5f64.sqrt();
//! assert!(out.iter().zip([h, 0.5, 0.5]).all(|(p, v)| (p.1 - v).abs() < 1e-15));
//! out.clear();
//! schema.encode_texts(&["NA", "Comedy"], 10, &mut out).unwrap(); // missing, unseen
//! assert!(out.is_empty());
//! ```

use super::csv_schema::is_missing;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

/// The side columns' texts of every rating of a file, in file order: each column's distinct
/// texts once, and one text index per (row, column).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SideTable {
    /// The whole `--columns` list as given (user, item, rating, then the side columns), kept
    /// in the fitted schema ([`SideColumns::spec`]).
    pub spec: Vec<String>,
    /// Column names as given (header names or 1-based positions).
    pub names: Vec<String>,
    /// 0-based fields of the columns on a line.
    pub fields: Vec<usize>,
    /// Distinct texts of each column, in order of first appearance.
    pub texts: Vec<Vec<String>>,
    /// Row-major text indices (`rows × columns`).
    pub cells: Vec<u32>,
    #[serde(skip)]
    index: Vec<HashMap<String, u32>>,
}

impl SideTable {
    /// No rows yet; `columns` are `(name, 0-based field)` pairs.
    pub fn new(columns: Vec<(String, usize)>) -> Self {
        let (names, fields): (Vec<_>, Vec<_>) = columns.into_iter().unzip();
        SideTable {
            texts: vec![Vec::new(); names.len()],
            index: vec![HashMap::new(); names.len()],
            names,
            fields,
            cells: Vec::new(),
            spec: Vec::new(),
        }
    }

    /// Number of side columns.
    pub fn columns(&self) -> usize {
        self.names.len()
    }

    /// Appends one row's texts (one per column, `""` for a field the line does not have).
    pub fn push_row(&mut self, texts: &[&str]) {
        for (c, &t) in texts.iter().enumerate() {
            let next = self.texts[c].len() as u32;
            let k = *self.index[c].entry(t.to_owned()).or_insert_with(|| {
                self.texts[c].push(t.to_owned());
                next
            });
            self.cells.push(k);
        }
    }

    /// The text of `row`'s column `c`.
    pub fn text(&self, row: usize, c: usize) -> &str {
        &self.texts[c][self.cells[row * self.columns() + c] as usize]
    }
}

/// What a side column gives (see the [module](self) documentation).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum SideKind {
    /// One feature `(x − mean)/scale`.
    Numeric {
        /// Training mean.
        mean: f64,
        /// Training standard deviation (1 for a constant column).
        scale: f64,
    },
    /// One feature per value seen in training (value → local index).
    Categorical {
        /// Value → index within the column.
        values: BTreeMap<String, u32>,
    },
}

/// One fitted side column.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SideColumn {
    /// The column's name as given in `--columns`.
    pub name: String,
    /// How its texts become features.
    pub kind: SideKind,
}

impl SideColumn {
    /// Number of features.
    pub fn width(&self) -> usize {
        match &self.kind {
            SideKind::Numeric { .. } => 1,
            SideKind::Categorical { values } => values.len(),
        }
    }
}

/// The side-column schema a model keeps: the `--columns` list it was trained with and how each
/// side column becomes features.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SideColumns {
    /// The whole `--columns` list as given: user, item, rating, then the side columns.
    pub spec: Vec<String>,
    /// The side columns, in `--columns` order.
    pub columns: Vec<SideColumn>,
}

/// The values of a categorical field: its `|`-separated parts that are not missing.
fn parts(text: &str) -> impl Iterator<Item = &str> {
    text.split('|').map(str::trim).filter(|p| !is_missing(p))
}

fn number(text: &str) -> Option<f64> {
    text.parse::<f64>().ok().filter(|x| x.is_finite())
}

impl SideColumns {
    /// Fits the schema on rows `rows` of `table` (see the [module](self) documentation).
    pub fn fit(table: &SideTable, rows: Range<usize>, spec: Vec<String>) -> Self {
        let columns = (0..table.columns())
            .map(|c| SideColumn {
                name: table.names[c].clone(),
                kind: Self::fit_column(table, c, rows.clone()),
            })
            .collect();
        SideColumns { spec, columns }
    }

    fn fit_column(table: &SideTable, c: usize, rows: Range<usize>) -> SideKind {
        let texts = rows.clone().map(|r| table.text(r, c).trim());
        let present: Vec<&str> = texts.filter(|t| !is_missing(t)).collect();
        let numbers: Option<Vec<f64>> = present.iter().map(|t| number(t)).collect();
        if let Some(x) = numbers {
            let n = x.len().max(1) as f64;
            let mean = x.iter().map(|v| v / n).sum::<f64>(); // no overflow below f64::MAX
            let sd = (x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt();
            let scale = if sd > 0.0 && sd.is_finite() { sd } else { 1.0 };
            return SideKind::Numeric { mean, scale };
        }
        let mut values = BTreeMap::new();
        for p in present.iter().flat_map(|t| parts(t)) {
            let next = values.len() as u32;
            values.entry(p.to_owned()).or_insert(next);
        }
        SideKind::Categorical { values }
    }

    /// Checks a schema read from a file: finite means, positive finite scales, and each
    /// categorical column's indices exactly `0..values` (so every feature is below
    /// [`dim`](Self::dim)).
    pub fn check(&self) -> Result<(), String> {
        for col in &self.columns {
            match &col.kind {
                SideKind::Numeric { mean, scale } => {
                    if !(mean.is_finite() && scale.is_finite() && *scale > 0.0) {
                        return Err(format!(
                            "side column {:?}: mean {mean} and scale {scale} must be finite \
                             with scale > 0",
                            col.name
                        ));
                    }
                }
                SideKind::Categorical { values } => {
                    let mut seen = vec![false; values.len()];
                    for &k in values.values() {
                        match seen.get_mut(k as usize) {
                            Some(s) if !*s => *s = true,
                            _ => {
                                return Err(format!(
                                    "side column {:?}: value index {k} repeated or not below {}",
                                    col.name,
                                    values.len()
                                ))
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// The factor `1/√c` of every side column's features (`c` side columns): see the
    /// [module](self) documentation.
    fn column_weight(&self) -> f64 {
        1.0 / (self.columns.len().max(1) as f64).sqrt()
    }

    /// Number of features of all side columns.
    pub fn dim(&self) -> usize {
        self.columns.iter().map(SideColumn::width).sum()
    }

    /// The side column names.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.columns.iter().map(|c| c.name.as_str())
    }

    /// The name of each side-column feature, in feature order: a numeric column's name, and
    /// `name=value` for each value of a categorical column (`genre=Drama`).
    ///
    /// ```
    /// use sketchlearn::data::side_columns::{SideColumns, SideTable};
    /// let mut table = SideTable::new(vec![("age".into(), 3), ("genre".into(), 4)]);
    /// table.push_row(&["20", "Drama"]);
    /// table.push_row(&["40", "Action|Drama"]);
    /// let schema = SideColumns::fit(&table, 0..2, Vec::new());
    /// assert_eq!(schema.feature_names(), ["age", "genre=Drama", "genre=Action"]);
    /// ```
    pub fn feature_names(&self) -> Vec<String> {
        let mut out = Vec::with_capacity(self.dim());
        for col in &self.columns {
            match &col.kind {
                SideKind::Numeric { .. } => out.push(col.name.clone()),
                SideKind::Categorical { values } => {
                    let mut by_index: Vec<(&u32, &String)> =
                        values.iter().map(|(v, k)| (k, v)).collect();
                    by_index.sort_unstable();
                    out.extend(by_index.iter().map(|(_, v)| format!("{}={v}", col.name)));
                }
            }
        }
        out
    }

    /// Appends the features of one row's side texts (one per column, in order) to `out` as
    /// `(index, value)` with indices from `base` up, ascending. Err: the column and text of a
    /// number expected in a numeric column.
    pub fn encode_texts(
        &self,
        texts: &[&str],
        base: usize,
        out: &mut Vec<(u32, f64)>,
    ) -> Result<(), SideValueError> {
        let start = out.len();
        for (c, text) in texts.iter().enumerate().take(self.columns.len()) {
            self.encode_column(c, text, out)?;
        }
        out[start..].iter_mut().for_each(|p| p.0 += base as u32);
        Ok(())
    }

    /// Appends the features of column `c`'s `text` to `out`, indices counted from the first
    /// side column's first feature.
    pub fn encode_column(
        &self,
        c: usize,
        text: &str,
        out: &mut Vec<(u32, f64)>,
    ) -> Result<(), SideValueError> {
        let offset: usize = self.columns[..c].iter().map(SideColumn::width).sum();
        let col = &self.columns[c];
        let text = text.trim();
        let w = self.column_weight();
        match &col.kind {
            SideKind::Numeric { mean, scale } if !is_missing(text) => {
                let z = number(text)
                    .map(|x| w * (x - mean) / scale)
                    .filter(|z| z.is_finite())
                    .ok_or_else(|| SideValueError {
                        column: col.name.clone(),
                        text: text.to_owned(),
                    })?;
                out.push((offset as u32, z));
            }
            SideKind::Numeric { .. } => {}
            SideKind::Categorical { values } => {
                let start = out.len();
                out.extend(
                    parts(text)
                        .filter_map(|p| values.get(p))
                        .map(|&k| ((offset + k as usize) as u32, 1.0)),
                );
                out[start..].sort_unstable_by_key(|p| p.0);
                out.dedup_by_key(|p| p.0); // `A|A`: one feature
                let k = (out.len() - start) as f64;
                out[start..].iter_mut().for_each(|p| p.1 = w / k.sqrt());
            }
        }
        Ok(())
    }
}

/// A text that is not a number in a side column that is numeric in the training part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SideValueError {
    /// The column's name.
    pub column: String,
    /// The text found.
    pub text: String,
}
