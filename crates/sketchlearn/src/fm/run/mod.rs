//! A whole factorization-machine run, the one entry a command line (`sketchlearn fm`), a Python
//! binding and a cluster worker call ([`train_and_test`]): read a ratings or LIBSVM file, build
//! the ratings encoder and side features (or take a resumed model's), learn the first
//! `train_fraction` of the file in one pass of progressive validation with the library's
//! refused-step and divergence policies, predict the rest without updates, and return the
//! metrics ([`FmReport`]) with the fitted model; progress goes to an [`FmObserver`]. Scoring
//! new data with a saved model is [`score_pairs`] (ratings models) and [`score_rows`] (LIBSVM
//! models).

mod data;
mod error;
mod overrides;
mod pairs;
mod passes;
mod report;
mod score;
pub mod side_eta;

pub use error::FmRunError;
pub use overrides::FmOverrides;
pub use report::FmReport;
pub use score::{score_pairs, score_rows, ScoreOptions};

use crate::data::ratings::{split_point, RatingsOptions};
use crate::eval::ProgressRow;
use crate::fm::{FmConfig, FmModel};
use crate::labels::Classes;
use crate::linear::OnlineLearner;
use crate::run::{ObserverError, Silent, Warning};
use data::{has_examples, load_libsvm, load_ratings, Examples, FmData};
use passes::{learn, pairwise_stats, test};
use report::cpu_seconds;
use report::Tested;
use std::cell::Cell;
use std::time::Instant;

/// The options of an FM run ([`train_and_test`]); [`FmRunOptions::new`] gives the defaults of
/// `sketchlearn fm FILE`.
#[derive(Clone, Debug, PartialEq)]
pub struct FmRunOptions {
    /// The ratings or LIBSVM file (`-`: standard input; `.gz` decompressed).
    pub file: String,
    /// The file holds LIBSVM rows (else ratings); [`looks_like_libsvm`] decides by the name.
    pub libsvm: bool,
    /// Hyper-parameters of a new model (refused with `initial_model`).
    pub overrides: FmOverrides,
    /// Resume this saved model (its hyper-parameters, encoder and normalisation).
    pub initial_model: Option<String>,
    /// Fraction of the file (in file order) learned online; the rest is the test part.
    pub train_fraction: f64,
    /// Scale every row to unit L2 norm (a new model; a resumed one keeps its own choice).
    pub normalize: bool,
    /// LIBSVM: the dimension (default: one past the largest index of the file).
    pub dim: Option<usize>,
    /// LIBSVM: indices start at 0.
    pub zero_based: bool,
    /// Ratings: format, declared scale and the policies for ratings out of it and malformed
    /// rows (the columns come from `columns`).
    pub ratings: RatingsOptions,
    /// Ratings: the user, item and rating columns, then side-feature columns (header names or
    /// 1-based positions; default: a resumed model's list).
    pub columns: Option<Vec<String>>,
    /// Ratings: an id unseen in training is an error instead of a cold-start prediction.
    pub unseen_error: bool,
    /// Ratings: MovieLens-100K `u.user` side features.
    pub user_features: Option<String>,
    /// Ratings: MovieLens-100K `u.item` side features.
    pub item_features: Option<String>,
    /// Ratings: clip the reported predictions into the scale (declared, else the training
    /// range); learning uses the raw ones.
    pub clip_predictions: bool,
    /// Save the model (with the ratings encoder) here after the learning pass, before the
    /// compaction for fast predictions, so a resumed run goes on as an uninterrupted one.
    pub final_model: Option<String>,
    /// Also measure what the pairwise interactions add to the test predictions (square loss;
    /// an untimed pass).
    pub pairwise: bool,
}

impl FmRunOptions {
    /// The defaults of `sketchlearn fm FILE`: 80 % learned, the format from the name.
    pub fn new(file: impl Into<String>) -> Self {
        let file = file.into();
        FmRunOptions {
            libsvm: looks_like_libsvm(&file),
            file,
            overrides: FmOverrides::default(),
            initial_model: None,
            train_fraction: 0.8,
            normalize: false,
            dim: None,
            zero_based: false,
            ratings: RatingsOptions::default(),
            columns: None,
            unseen_error: false,
            user_features: None,
            item_features: None,
            clip_predictions: false,
            final_model: None,
            pairwise: false,
        }
    }
}

/// Whether a file is LIBSVM by its name: `.libsvm`, `.svm`, `.txt`, `.svmlight` (and `.gz` of
/// those); anything else is read as ratings.
pub fn looks_like_libsvm(file: &str) -> bool {
    let p = file.strip_suffix(".gz").unwrap_or(file);
    [".libsvm", ".svm", ".txt", ".svmlight"]
        .iter()
        .any(|e| p.ends_with(e))
}

/// What is known when learning starts (the data read, the model built or resumed).
#[derive(Clone, Copy, Debug)]
pub struct FmRunStart<'a> {
    /// The model's configuration.
    pub config: &'a FmConfig,
    /// The learner's dimension.
    pub dim: usize,
    /// Examples to learn.
    pub train_examples: usize,
    /// Examples to test.
    pub test_examples: usize,
    /// A binary LIBSVM run's two classes (index 1 positive), in which a front end shows the
    /// progress table's labels ([`crate::run::progress_row`]); none for ratings or regression.
    pub classes: Option<&'a Classes>,
}

/// Receives an FM run's events. Every method has an empty default: implement what you show.
pub trait FmObserver {
    /// Learning starts.
    fn started(&mut self, _start: &FmRunStart<'_>) {}
    /// A progress row of the learning pass fell due (examples 1, 2, 4, 8, … and the end).
    fn progress(&mut self, _row: &ProgressRow) {}
    /// A warning ([`Warning::Diverged`] after a learning pass that diverged, a front end adds
    /// what to change; [`Warning::UnseenWhileLearning`] after a resumed model's learning pass).
    fn warning(&mut self, _warning: &Warning) {}
    /// The test part starts: whether to receive its predictions ([`test_prediction`]); an error
    /// (e.g. an output that cannot be created) stops the run.
    ///
    /// [`test_prediction`]: FmObserver::test_prediction
    fn test_started(&mut self) -> Result<bool, ObserverError> {
        Ok(false)
    }
    /// The (clipped) prediction of the next test example, in file order.
    fn test_prediction(&mut self, _prediction: f64) {}
}

impl FmObserver for Silent {}

/// The result of [`train_and_test`].
#[derive(Clone, Debug)]
pub struct FmOutcome {
    /// The metrics and measures.
    pub report: FmReport,
    /// The fitted model (compacted for fast predictions; with its ratings encoder).
    pub model: FmModel,
}

/// Runs `sketchlearn fm`: learns the first `train_fraction` of `options.file` online
/// (progressive validation) and predicts the rest without updates.
///
/// ```
/// use sketchlearn::fm::run::{self, FmRunOptions};
/// use sketchlearn::run::Silent;
/// let file = std::env::temp_dir().join(format!("fm_doc_{}.tsv", std::process::id()));
/// let lines: String = (0..400).map(|k| format!("{} {} {}\n", k % 7, k % 5, 1 + k % 7 % 5)).collect();
/// std::fs::write(&file, lines)?;
/// let options = FmRunOptions::new(file.to_str().unwrap());
/// let fitted = run::train_and_test(&options, &mut Silent)?;
/// std::fs::remove_file(&file)?;
/// assert_eq!((fitted.report.train_examples, fitted.report.test_examples), (320, 80));
/// assert_eq!(fitted.report.algorithm, "sftrl-split"); // the default on ratings
/// assert!(fitted.report.test_rmse.unwrap() < 1.0);
/// assert!(fitted.model.encoder.is_some());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn train_and_test(
    options: &FmRunOptions,
    observer: &mut dyn FmObserver,
) -> Result<FmOutcome, FmRunError> {
    options.check()?;
    let (mut resumed, config) = starting_model(options)?;
    let load_start = Instant::now();
    let normalize = resumed.as_ref().map_or(options.normalize, |m| m.normalize);
    let (data, n_train, scale_range) = if options.libsvm {
        let data = load_libsvm(options, config.loss, normalize)?;
        let n_train = split_point(data.len(), options.train_fraction);
        (data, n_train, None)
    } else {
        load_ratings(options, &mut resumed)?
    };
    let load_seconds = load_start.elapsed().as_secs_f64();
    let n = data.len();
    has_examples(n, &options.file)?;
    let mut model = match resumed {
        Some(m) => m,
        None => {
            let mut m = FmModel::new(config, config.build(data.dim(options.dim))?);
            m.normalize = normalize;
            m
        }
    };
    let clip_range = if options.clip_predictions {
        if options.libsvm {
            return Err(FmRunError::options(
                "--clip-predictions applies to ratings only",
            ));
        }
        scale_range
    } else {
        None
    };
    observer.started(&FmRunStart {
        config: &model.config,
        dim: model.learner.dim(),
        train_examples: n_train,
        test_examples: n - n_train,
        classes: data.classes(),
    });
    let examples = Examples {
        data: &data,
        normalize,
        unseen_users: Cell::new(0),
        unseen_items: Cell::new(0),
    };
    let cpu_start = cpu_seconds();
    let mut learned = learn(&mut model, &examples, n_train, clip_range, observer)?;
    // Saved before the compaction for fast predictions, which changes the arithmetic of later
    // steps: a model resumed with -i goes on exactly as an uninterrupted run would.
    if let Some(path) = &options.final_model {
        if let FmData::Ratings { encoder, .. } = &data {
            model.encoder = Some(encoder.clone());
        }
        model.save(path)?;
    }
    let compact_start = Instant::now();
    model.learner.compact()?;
    learned.seconds += compact_start.elapsed().as_secs_f64();
    // Said once the learning part is over (saved, compacted): a run that fails there says
    // only why.
    if let Some(w) = learned.unseen_warning() {
        observer.warning(&w);
    }
    let (metrics, seconds) = test(&mut model, &examples, n_train..n, clip_range, observer)?;
    let cpu_seconds = cpu_start.zip(cpu_seconds()).map(|(a, b)| b - a);
    let unseen = examples.unseen();
    let pairwise = if options.pairwise && !model.config.loss.is_classification() && n > n_train {
        Some(pairwise_stats(&model, &examples, n_train..n)?)
    } else {
        None
    };
    let tested = Tested {
        metrics,
        seconds,
        cpu_seconds,
        unseen: (unseen.0 - learned.unseen.0, unseen.1 - learned.unseen.1),
        pairwise,
    };
    let report = FmReport::new(
        &options.file,
        &model,
        &data,
        (learned, load_seconds),
        &tested,
        clip_range.is_some(),
    );
    if let FmData::Ratings { encoder, .. } = data {
        model.encoder.get_or_insert(encoder);
    }
    Ok(FmOutcome { report, model })
}

impl FmRunOptions {
    /// Refuses the options that do not fit each other, before anything is read (also done by
    /// [`train_and_test`]; a front end calls it first to report these before its own checks).
    pub fn check(&self) -> Result<(), FmRunError> {
        let options = self;
        if !(0.0..=1.0).contains(&options.train_fraction) {
            return Err(FmRunError::options(format!(
                "--train-fraction must be in [0, 1], got {}",
                options.train_fraction
            )));
        }
        if options.libsvm && options.columns.is_some() {
            return Err(FmRunError::options(
                "--columns applies to ratings files (this one is read as LIBSVM; see --format)",
            ));
        }
        Ok(())
    }
}

/// The model to resume (`initial_model`) or `None`, and the configuration (checked before the
/// data are read).
fn starting_model(options: &FmRunOptions) -> Result<(Option<FmModel>, FmConfig), FmRunError> {
    let hyper = &options.overrides;
    if let Some(path) = &options.initial_model {
        if hyper.any_set() {
            return Err(FmRunError::options(
                "hyper-parameters come from the model given with -i; drop the algorithm flags",
            ));
        }
        let model = FmModel::load(path)?;
        let config = model.config;
        return Ok((Some(model), config));
    }
    hyper.check(options.libsvm).map_err(FmRunError::Options)?;
    let side_files = options.user_features.is_some() || options.item_features.is_some();
    let side_columns = options.columns.as_ref().is_some_and(|c| c.len() > 3);
    let config = hyper.config(options.libsvm, side_files, side_columns);
    config.build(0)?; // validate before reading the data
    Ok((None, config))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Warnings(Vec<Warning>);

    impl FmObserver for Warnings {
        fn warning(&mut self, warning: &Warning) {
            self.0.push(warning.clone());
        }
    }

    /// A resumed model learning ids it never saw says so only when the learning part ends
    /// well: a run that cannot save its model reports that error alone.
    #[test]
    fn unseen_ids_note_comes_only_after_a_learning_part_that_succeeded() {
        let dir = std::env::temp_dir().join(format!("skl-fm-unseen-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (train, more) = (dir.join("train.csv"), dir.join("more.csv"));
        std::fs::write(
            &train,
            "userId,movieId,rating\n1,10,4\n2,10,3\n1,11,5\n2,11,2\n",
        )
        .unwrap();
        std::fs::write(
            &more,
            "userId,movieId,rating\n3,10,3\n3,11,5\n2,12,2\n1,11,4\n",
        )
        .unwrap();
        let model = dir.join("m.skl");
        let mut first = FmRunOptions::new(train.to_str().unwrap());
        first.final_model = Some(model.to_str().unwrap().into());
        train_and_test(&first, &mut Silent).unwrap();
        let mut resumed = FmRunOptions::new(more.to_str().unwrap());
        resumed.initial_model = Some(model.to_str().unwrap().into());
        resumed.train_fraction = 0.75;
        let mut seen = Warnings::default();
        train_and_test(&resumed, &mut seen).unwrap();
        assert!(
            matches!(
                seen.0[..],
                [Warning::UnseenWhileLearning {
                    users: 2,
                    items: 1,
                    examples: 3
                }]
            ),
            "{:?}",
            seen.0
        );
        resumed.final_model = Some(dir.join("no such dir/m.skl").to_str().unwrap().into());
        let mut failed = Warnings::default();
        assert!(train_and_test(&resumed, &mut failed).is_err());
        assert!(failed.0.is_empty(), "{:?}", failed.0);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
