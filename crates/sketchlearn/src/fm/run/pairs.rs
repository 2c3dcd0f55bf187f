//! [`PairReader`]: where the user, the item and the side columns are on a line of pairs to
//! score ([`score_pairs`](super::score_pairs)). Names are resolved against the first non-empty
//! line (the header), so a header works on standard input too. The field separator is decided
//! once, as the ratings reader decides it: `.csv`/`.dat` by the extension, otherwise from the
//! first non-empty line.

use super::FmRunError;
use crate::data::ratings::{line_fields, sniff, RatingColumns, RatingsError, RatingsFormat};
use crate::data::side_columns::SideColumns;

/// The columns of a file of pairs, and its separator.
#[derive(Clone, Debug)]
pub(super) struct PairReader {
    spec: Vec<String>,
    /// 0-based fields (user, item, side columns…), once known.
    fields: Option<Vec<usize>>,
    /// The header's field names, when the columns were given by name.
    header: Option<Vec<String>>,
    format: RatingsFormat,
}

impl PairReader {
    /// The columns of `file`: `columns` (user, item, then the model's side columns), else the
    /// model's `--columns` list without its rating when it has side columns, else `1,2`.
    pub fn new(
        file: &str,
        columns: Option<&[String]>,
        side: Option<&SideColumns>,
    ) -> Result<Self, FmRunError> {
        let n_side = side.map_or(0, |c| c.columns.len());
        let spec = match (columns, side) {
            (Some(spec), _) => spec.to_vec(),
            (None, Some(c)) => [&c.spec[..2], &c.spec[3..]].concat(),
            (None, None) => vec!["1".into(), "2".into()],
        };
        if spec.len() != 2 + n_side {
            let names: Vec<&str> = side.map_or(Vec::new(), |c| c.names().collect());
            return Err(FmRunError::options(format!(
                "--columns needs user,item{} ({} columns: the model's side columns after the \
                 user and item), got {}",
                names.iter().map(|n| format!(",{n}")).collect::<String>(),
                2 + n_side,
                spec.len()
            )));
        }
        let by_position = spec.iter().all(|c| c.parse::<usize>().is_ok());
        let fields = if by_position {
            let f = |c: &String| RatingColumns::field(c, None, "");
            Some(spec.iter().map(f).collect::<Result<Vec<_>, _>>()?)
        } else {
            None
        };
        let path = file.strip_suffix(".gz").unwrap_or(file);
        let format = match std::path::Path::new(path).extension() {
            Some(e) if e == "csv" => RatingsFormat::Csv,
            Some(e) if e == "dat" => RatingsFormat::Dat,
            _ => RatingsFormat::Auto,
        };
        Ok(PairReader {
            spec,
            fields,
            header: None,
            format,
        })
    }

    /// The unseen-id error for the pair `texts` of `line` (the user's when `user_unseen`, else
    /// the item's): file, line, byte column, field and its header name.
    pub fn unseen(
        &self,
        line: &str,
        texts: &[&str],
        user_unseen: bool,
        source: &str,
        line_no: u64,
    ) -> RatingsError {
        let k = usize::from(!user_unseen);
        let field = self.fields.as_ref().map_or(k, |f| f[k]);
        // The id is a slice of `line` (fields are trimmed sub-slices): its byte offset.
        let column = texts[k].as_ptr() as usize - line.as_ptr() as usize + 1;
        RatingsError::UnseenId {
            source_name: source.to_owned(),
            line: line_no,
            column,
            what: if user_unseen { "user" } else { "item" },
            id: texts[k].to_owned(),
            field: field + 1,
            field_name: self.header.as_ref().and_then(|h| h.get(field)).cloned(),
        }
    }

    /// The user, item and side texts of a line (a missing side field is `""`); `None` for a
    /// blank line or the header.
    pub fn pair<'a>(
        &mut self,
        line: &'a str,
        source: &str,
        line_no: u64,
    ) -> Result<Option<Vec<&'a str>>, FmRunError> {
        let line = line.trim_end_matches(['\n', '\r']);
        if line.trim().is_empty() {
            return Ok(None);
        }
        if self.format == RatingsFormat::Auto {
            self.format = sniff(line);
        }
        let fields = line_fields(line, self.format);
        let Some(at) = &self.fields else {
            let header: Vec<String> = fields.iter().map(|f| f.to_string()).collect();
            let f = |c: &String| RatingColumns::field(c, Some(&header), source);
            self.fields = Some(self.spec.iter().map(f).collect::<Result<Vec<_>, _>>()?);
            self.header = Some(header);
            return Ok(None);
        };
        match (fields.get(at[0]), fields.get(at[1])) {
            (Some(u), Some(i)) if !u.is_empty() && !i.is_empty() => {
                let side = at[2..]
                    .iter()
                    .map(|&f| fields.get(f).copied().unwrap_or(""));
                Ok(Some([*u, *i].into_iter().chain(side).collect()))
            }
            _ => Err(FmRunError::options(format!(
                "{source}:{line_no}: expected a user in field {} and an item in field {} \
                 (--columns), found {} fields",
                at[0] + 1,
                at[1] + 1,
                fields.len()
            ))),
        }
    }
}
