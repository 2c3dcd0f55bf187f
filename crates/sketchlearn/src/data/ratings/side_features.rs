//! MovieLens-100K side features of users and items (`u.user`, `u.item`): categorical features
//! a [`RatingsEncoder`](super::RatingsEncoder) places after the user and item one-hots (SFTRL
//! paper §5.2; see the [encoding](super) of the module documentation).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::RatingsError;
use crate::data::error::{ParseError, ParseErrorKind};
use crate::data::lines::LineReader;
use crate::data::source::open_input;

/// Categorical side features of users or items: raw id → list of feature indices (local to
/// this block, value 1 each), with the feature names.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SideBlock {
    /// Feature names, e.g. `gender=F`, `genre=Comedy`.
    pub names: Vec<String>,
    /// Raw id → local feature indices (sorted).
    #[serde(serialize_with = "crate::sorted_map::serialize")]
    pub features: HashMap<String, Vec<u32>>,
}

impl SideBlock {
    fn add(&mut self, index: &mut HashMap<String, u32>, id: &str, name: String) {
        let next = self.names.len() as u32;
        let f = *index.entry(name.clone()).or_insert_with(|| {
            self.names.push(name);
            next
        });
        let v = self.features.entry(id.to_owned()).or_default();
        if !v.contains(&f) {
            v.push(f);
            v.sort_unstable();
        }
    }

    /// Number of features of the block.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// True when the block has no feature.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// Optional side features (MovieLens-100K `u.user` and `u.item`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SideFeatures {
    /// User features (age bucket, gender, occupation).
    pub users: SideBlock,
    /// Item features (genres, release decade).
    pub items: SideBlock,
}

/// The records of a MovieLens `|`-separated side file: each non-blank line split at `|`, with
/// its line number (from 1). A line with fewer than `min_fields` fields or an empty id (field
/// 0) is a [`ParseErrorKind::WrongFieldCount`] naming the line (`expected` fields).
fn psv_records(
    path: &str,
    min_fields: usize,
    expected: usize,
) -> Result<Vec<(u64, Vec<String>)>, RatingsError> {
    let mut out = Vec::new();
    for (k, line) in read_lines_latin1(path)?.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<String> = line.split('|').map(str::to_owned).collect();
        if f.len() < min_fields || f[0].trim().is_empty() {
            let kind = ParseErrorKind::WrongFieldCount {
                expected,
                found: f.len(),
            };
            return Err(ParseError::new(path, k as u64 + 1, 0, kind).into());
        }
        out.push((k as u64 + 1, f));
    }
    Ok(out)
}

fn read_lines_latin1(path: &str) -> Result<Vec<String>, RatingsError> {
    let mut lines = LineReader::new(open_input(path)?, path);
    let mut out = Vec::new();
    while lines.next_line()? {
        // Latin-1: every byte is the code point of the same value.
        let s: String = lines.raw().iter().map(|&b| b as char).collect();
        out.push(s.trim_end_matches(['\n', '\r']).to_owned());
    }
    Ok(out)
}

const GENRES: [&str; 19] = [
    "unknown",
    "Action",
    "Adventure",
    "Animation",
    "Children's",
    "Comedy",
    "Crime",
    "Documentary",
    "Drama",
    "Fantasy",
    "Film-Noir",
    "Horror",
    "Musical",
    "Mystery",
    "Romance",
    "Sci-Fi",
    "Thriller",
    "War",
    "Western",
];

fn age_bucket(age: u32) -> &'static str {
    match age {
        0..=17 => "<18",
        18..=24 => "18-24",
        25..=34 => "25-34",
        35..=44 => "35-44",
        45..=49 => "45-49",
        50..=55 => "50-55",
        _ => "56+",
    }
}

impl SideFeatures {
    /// Reads MovieLens-100K `u.user` (`id|age|gender|occupation|zip`; features `age=<bucket>`,
    /// `gender=<g>`, `occupation=<o>`) and/or `u.item` (`id|title|date|video date|url|19 genre
    /// flags`, latin-1; features `genre=<name>` for each flag 1 and `decade=<1990s>` from the
    /// date). A line that does not fit is a [`RatingsError::Parse`] with its line number; blank
    /// lines are skipped.
    ///
    /// ```no_run
    /// use sketchlearn::data::ratings::SideFeatures;
    /// let side = SideFeatures::movielens(
    ///     Some("../shared/data/movielens100k_users.psv"),
    ///     Some("../shared/data/movielens100k_items.psv"),
    /// ).unwrap();
    /// assert!(side.users.len() > 20 && side.items.len() >= 19);
    /// ```
    pub fn movielens(users: Option<&str>, items: Option<&str>) -> Result<Self, RatingsError> {
        let mut side = SideFeatures::default();
        if let Some(path) = users {
            let mut index = HashMap::new();
            for (line, f) in psv_records(path, 4, 5)? {
                let bad = |column: usize, kind| ParseError::new(path, line, column, kind);
                let id = f[0].trim();
                let age: u32 = f[1]
                    .trim()
                    .parse()
                    .map_err(|_| bad(0, ParseErrorKind::UnparsableValue(f[1].to_owned())))?;
                side.users
                    .add(&mut index, id, format!("age={}", age_bucket(age)));
                side.users
                    .add(&mut index, id, format!("gender={}", f[2].trim()));
                side.users
                    .add(&mut index, id, format!("occupation={}", f[3].trim()));
            }
        }
        if let Some(path) = items {
            let mut index = HashMap::new();
            for (_, f) in psv_records(path, 5 + GENRES.len(), 5 + GENRES.len())? {
                let id = f[0].trim();
                if let Some(year) = f[2]
                    .rsplit('-')
                    .next()
                    .and_then(|y| y.trim().parse::<u32>().ok())
                {
                    side.items
                        .add(&mut index, id, format!("decade={}s", year / 10 * 10));
                }
                for (g, flag) in GENRES.iter().zip(&f[f.len() - GENRES.len()..]) {
                    if flag.trim() == "1" {
                        side.items.add(&mut index, id, format!("genre={g}"));
                    }
                }
                side.items.features.entry(id.to_owned()).or_default();
            }
        }
        Ok(side)
    }
}
