//! The data of an FM run in memory, in file order ([`FmData`]): a ratings file with its encoder
//! (the resumed model's, or fitted on the training part) or LIBSVM rows, and [`Examples`], which
//! encodes them on demand (one-hot user and item, side features) counting the ids unseen in
//! training.

use super::{FmRunError, FmRunOptions};
use crate::data::ratings::{
    read_header, read_ratings_with_side, RatingColumns, RatingsEncoder, RatingsOptions,
    RatingsTable, SideFeatures, TableMap, Unseen,
};
use crate::data::side_columns::SideTable;
use crate::data::ClassScan;
use crate::fm::{l2_normalize, FmModel};
use crate::labels::{ClassLabel, Classes};
use crate::loss::Loss;
use crate::{Example, LibsvmOptions, LibsvmReader};
use std::cell::Cell;
use std::convert::Infallible;
use std::ops::Range;

/// The data, in memory, in file order.
#[allow(clippy::large_enum_variant)] // one value per run
pub(super) enum FmData {
    Ratings {
        table: RatingsTable,
        encoder: RatingsEncoder,
        map: TableMap,
    },
    /// The rows, one past their largest index (as read) and, for a classification loss, the
    /// two classes the labels were read in (for the progress table).
    Libsvm {
        rows: Vec<Example>,
        dim: usize,
        classes: Option<Classes>,
    },
}

impl FmData {
    pub(super) fn len(&self) -> usize {
        match self {
            FmData::Ratings { table, .. } => table.len(),
            FmData::Libsvm { rows, .. } => rows.len(),
        }
    }

    /// The dimension: the encoder's, or `given`, else one past the largest LIBSVM index.
    pub(super) fn dim(&self, given: Option<usize>) -> usize {
        match self {
            FmData::Ratings { encoder, .. } => encoder.dim(),
            FmData::Libsvm { dim, .. } => given.unwrap_or(*dim),
        }
    }

    /// The classes of a binary LIBSVM run (none for ratings or regression).
    pub(super) fn classes(&self) -> Option<&Classes> {
        match self {
            FmData::Libsvm { classes, .. } => classes.as_ref(),
            FmData::Ratings { .. } => None,
        }
    }

    /// Malformed rows skipped and ratings out of scale (skipped or clamped).
    pub(super) fn skipped(&self) -> (u64, u64) {
        match self {
            FmData::Ratings { table, .. } => (table.stats.malformed, table.stats.out_of_scale),
            FmData::Libsvm { .. } => (0, 0),
        }
    }
}

/// A LIBSVM file in memory (labels ±1 for a classification loss; rows normalised on request).
pub(super) fn load_libsvm(
    options: &FmRunOptions,
    loss: Loss,
    normalize: bool,
) -> Result<FmData, FmRunError> {
    let mut reader = LibsvmReader::open(
        &options.file,
        LibsvmOptions {
            zero_based: options.zero_based,
        },
    )?;
    let mut rows = Vec::new();
    let mut ex = Example::default();
    let mut scan = ClassScan::new(&options.file);
    while reader.read_into(&mut ex)? {
        if loss.is_classification() {
            scan.add(ex.label, reader.line())?;
        }
        if normalize {
            l2_normalize(&mut ex);
        }
        rows.push(ex.clone());
    }
    has_examples(rows.len(), &options.file)?;
    let mut found = None;
    if loss.is_classification() {
        // Two classes in any convention (-1/+1, 0/1, 2/4; the larger positive), as `train`.
        let classes = scan.binary_only(
            "sketchlearn fm learns two classes only; train --multiclass learns more",
        )?;
        for r in &mut rows {
            r.label = classes.binary_target(&ClassLabel::Number(r.label))?;
        }
        found = Some(classes);
    }
    Ok(FmData::Libsvm {
        rows,
        dim: reader.max_index_plus_one(),
        classes: found,
    })
}

/// An input without one example (an empty file or stream, a header alone) is an error that says
/// so, as in `train`, instead of a run over nothing (NaN metrics) or a class check that finds no
/// labels.
pub(super) fn has_examples(n: usize, file: &str) -> Result<(), FmRunError> {
    if n == 0 {
        return Err(FmRunError::options(crate::run::error::no_examples(
            crate::data::source::source_name(file),
        )));
    }
    Ok(())
}

/// A rating scale: the smallest and the largest rating.
pub(super) type Scale = (f64, f64);

/// A ratings file in memory with its encoder (the model's, or fitted on the training part),
/// the number of training ratings and the rating scale (the declared one, else the training
/// range).
pub(super) fn load_ratings(
    options: &FmRunOptions,
    model: &mut Option<FmModel>,
) -> Result<(FmData, usize, Option<Scale>), FmRunError> {
    let mut ratings = options.ratings;
    let spec = column_spec(options, model.as_ref())?;
    let side = match &spec {
        Some(spec) => {
            let (columns, side) = rating_columns(spec, &options.file, &ratings)?;
            ratings.columns = columns;
            side
        }
        None => SideTable::default(),
    };
    let table = read_ratings_with_side(&options.file, &ratings, side)?;
    let n_train = table.split_point(options.train_fraction);
    let mut encoder = match model.as_mut().map(|m| m.encoder.take()) {
        Some(Some(enc)) => enc,
        Some(None) => {
            return Err(FmRunError::options(
                "the model given with -i was not trained on ratings",
            ))
        }
        None => {
            let side = if options.user_features.is_some() || options.item_features.is_some() {
                Some(SideFeatures::movielens(
                    options.user_features.as_deref(),
                    options.item_features.as_deref(),
                )?)
            } else {
                None
            };
            RatingsEncoder::fit(&table, 0..n_train, side)
        }
    };
    if options.unseen_error {
        encoder.unseen = Unseen::Error;
    }
    let range = ratings.scale.or_else(|| table.rating_range_in(0..n_train));
    let map = encoder.map_table(&table);
    let data = FmData::Ratings {
        table,
        encoder,
        map,
    };
    Ok((data, n_train, range))
}

/// The `--columns` list to read the ratings with: the given one, else the one a resumed model
/// was trained with when it has side columns (so the same columns give the same features). A
/// given list's side columns must be the model's.
fn column_spec(
    options: &FmRunOptions,
    model: Option<&FmModel>,
) -> Result<Option<Vec<String>>, FmRunError> {
    let stored = model
        .and_then(|m| m.encoder.as_ref())
        .and_then(RatingsEncoder::side_columns);
    let Some(spec) = &options.columns else {
        return Ok(stored.map(|c| c.spec.clone()));
    };
    let given = spec.get(3..).unwrap_or_default();
    let trained: Vec<&str> = stored.map_or(Vec::new(), |c| c.names().collect());
    if model.is_some() && given != trained.as_slice() {
        return Err(FmRunError::options(format!(
            "--columns names the side columns [{}], the model given with -i was trained with \
             [{}]; give the model's (or leave --columns out to use its list)",
            given.join(","),
            trained.join(",")
        )));
    }
    Ok(Some(spec.clone()))
}

/// `--columns`: the user, item and rating fields of `file` and its side columns (an empty
/// table that the reader fills), by header name (the header is read first) or 1-based position.
fn rating_columns(
    spec: &[String],
    file: &str,
    options: &RatingsOptions,
) -> Result<(RatingColumns, SideTable), FmRunError> {
    let names: Vec<&str> = spec.iter().map(String::as_str).collect();
    let header = if names.iter().all(|c| c.parse::<usize>().is_ok()) {
        None
    } else {
        let probe = RatingsOptions {
            columns: RatingColumns::default(),
            ..*options
        };
        read_header(file, &probe)?
    };
    if names.len() < 3 {
        return Err(FmRunError::options(format!(
            "--columns needs user,item,rating (then any side columns), got {} column(s)",
            names.len()
        )));
    }
    let columns = RatingColumns::resolve(&names[..3], header.as_deref(), file)?;
    let mut taken = vec![columns.user, columns.item, columns.rating];
    let mut side = Vec::new();
    for name in &names[3..] {
        let field = RatingColumns::field(name, header.as_deref(), file)?;
        if taken.contains(&field) {
            return Err(FmRunError::options(format!(
                "--columns names one column twice: {}",
                names.join(",")
            )));
        }
        taken.push(field);
        side.push((name.to_string(), field));
    }
    let mut table = SideTable::new(side);
    table.spec = spec.to_vec();
    Ok((columns, table))
}

/// The examples, encoded on demand (ratings: one-hot user and item, side features), counting
/// the ids unseen in training.
pub(super) struct Examples<'a> {
    pub(super) data: &'a FmData,
    pub(super) normalize: bool,
    pub(super) unseen_users: Cell<u64>,
    pub(super) unseen_items: Cell<u64>,
}

impl Examples<'_> {
    /// Example `k` into `ex`.
    pub(super) fn get(&self, k: usize, ex: &mut Example) -> Result<(), FmRunError> {
        match self.data {
            FmData::Ratings {
                table,
                encoder,
                map,
            } => {
                let out = encoder.encode_checked(table, map, k, ex)?;
                if self.normalize {
                    l2_normalize(ex);
                }
                self.unseen_users
                    .set(self.unseen_users.get() + out.unseen_user as u64);
                self.unseen_items
                    .set(self.unseen_items.get() + out.unseen_item as u64);
            }
            FmData::Libsvm { rows, .. } => ex.clone_from(&rows[k]),
        }
        Ok(())
    }

    /// The unseen users and items counted so far.
    pub(super) fn unseen(&self) -> (u64, u64) {
        (self.unseen_users.get(), self.unseen_items.get())
    }

    /// Reads examples `range` in turn: a source for the evaluation loops (the first encoding
    /// error is kept in `error` and ends the stream).
    pub(super) fn source<'s>(
        &'s self,
        range: Range<usize>,
        error: &'s mut Option<FmRunError>,
    ) -> impl FnMut(&mut Example) -> Result<bool, Infallible> + 's {
        let mut k = range.start;
        move |ex| {
            if k >= range.end {
                return Ok(false);
            }
            if let Err(e) = self.get(k, ex) {
                *error = Some(e);
                return Ok(false);
            }
            k += 1;
            Ok(true)
        }
    }
}
