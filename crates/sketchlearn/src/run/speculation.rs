//! Learning before the input's walk would have ended (issue 27): a new learner on a plain dense
//! LIBSVM file without `--dim` is built from a guess of what the walk before learning
//! ([`prescan`](super::prescan)) finds — read off the file's first rows
//! ([`prescan::guess`](super::prescan::guess)) — and its first pass starts at once. The pass
//! itself reads every example in full, so it knows at its end what the walk would have found:
//! the largest index, the number of stored features, the labels. The guess is **kept** only
//! when the walk would have built the same learner:
//!
//! * no example has an index at or past the guessed dimension (one past the first rows'
//!   largest): then one past the file's largest index is the guess, the walk's dimension;
//! * the representation chosen for the whole file's average of stored features is the one
//!   chosen for the guess ([`ValidLearnerConfig::resolve`], compared with `==`; the sample rows
//!   are the same first rows);
//! * a classifier's first rows hold two labels, so its classes are the walk's (the later
//!   sorted one positive); a third label anywhere is the label map's error, which ends the pass.
//!
//! Same dimension, configuration and classes mean the same learner, fed the same examples in
//! the same order: the same bits. Nothing reaches the run's observer before the guess is kept:
//! its events (the start, warnings, progress rows, the predictions) are held ([`Deferred`]) and
//! handed on in their order when the first pass ends and the guess stands. Otherwise — an index
//! past the guess (the pass stops there), another representation, any error of the first pass,
//! more examples than [`HELD_PREDICTIONS`] — the run starts again as it did before this module:
//! the walk, then the passes, reporting any error exactly as before; the guess's work is lost.
//!
//! Which inputs are guessed (the rest walk first, as before): a new binary or regression learner
//! (the classes from the input), LIBSVM text in a re-readable file without a cache or `--dim`,
//! no cancel hook, at least [`SPARSITY_SAMPLE`](crate::linear::SPARSITY_SAMPLE) examples, first
//! rows dense (on average at least half of the guessed dimension stored: a sparse file's
//! largest index is seldom among its first rows, and a guess that fails late costs a pass),
//! and a file small enough that its predictions fit in the held memory.
//!
//! Why a sparse file's guess does not grow instead (issue 27, branch sparse14; measured in
//! `docs/results/speed.md`, "Sparse text: why the walk stays before learning"): a learner built
//! for the first rows' dimension and grown when a larger index comes would not be the walked
//! learner bit for bit. The default's FD-SON member computes with `d` beyond its storage — its
//! sparse-time learner starts from directions `Z₀` whose column `j` is `±1/√⌈(d − j mod m)/m⌉`
//! ([`initial_directions`](crate::linear::sparse::initial_directions)), its dense learner sums
//! `d + 1` coordinates in four lanes and a tail of `(d + 1) mod 4` (`linalg::dot`) —
//! while only the AdaGrad grid and the unit scaling use `d` as a capacity
//! (`tests::a_sparse_files_fd_member_depends_on_d_beyond_its_storage`).

use super::{Observer, ObserverError, PassReport, RunError, RunStart, Warning};
use crate::data::{Example, ParseError, ParseErrorKind, Schema};
use crate::eval::ProgressRow;
use crate::labels::Classes;
use crate::linear::{InputProfile, LearnerConfig, RepresentationChoice, ValidLearnerConfig};

/// At most this many examples are learned before the guess is checked (their predictions are
/// held, 8 bytes each: 32 MiB); a file expected to hold more than half of them is not guessed,
/// and a first pass that reaches them starts the run again.
pub(crate) const HELD_PREDICTIONS: u64 = 1 << 22;

/// The guess of a run: what the learner was built for, and what the first pass has seen.
#[derive(Debug)]
pub(crate) struct Speculation {
    /// The input's name (in the error that ends a failed guess's pass).
    source_name: String,
    /// The guessed profile (its dimension the learner's).
    guess: InputProfile,
    /// The configuration before the representation was chosen, and what it chose for `guess`.
    unresolved: ValidLearnerConfig,
    resolved: (ValidLearnerConfig, RepresentationChoice),
    /// Examples and stored features read by the first pass; whether it read to the end.
    n: u64,
    nnz: usize,
    ended: bool,
}

impl Speculation {
    /// Whether a run on a file of `file_bytes` may learn from `guess` (see the
    /// [module](self) docs: dense first rows, a bounded number of examples).
    pub(crate) fn worth_it(guess: &InputProfile, file_bytes: u64) -> bool {
        let Some(avg) = guess.avg_nnz else {
            return false;
        };
        // A stored feature takes at least four bytes of text (" 1:0"), a line one more.
        let rows = file_bytes as f64 / (4.0 * avg + 2.0);
        guess.dim > 0 && avg >= guess.dim as f64 / 2.0 && rows <= (HELD_PREDICTIONS / 2) as f64
    }

    /// The guess for a learner configured as `unresolved`, which chose `resolved` for it.
    pub(crate) fn new(
        source_name: &str,
        guess: InputProfile,
        unresolved: ValidLearnerConfig,
        resolved: (ValidLearnerConfig, RepresentationChoice),
    ) -> Self {
        Speculation {
            source_name: source_name.to_owned(),
            guess,
            unresolved,
            resolved,
            n: 0,
            nnz: 0,
            ended: false,
        }
    }

    /// What the first pass's source returned for `ex` (`read`), checked against the guess: an
    /// index at or past the guessed dimension, or more than [`HELD_PREDICTIONS`] examples, end
    /// the pass with an error (the guess fails, the run starts again).
    pub(crate) fn watch(
        &mut self,
        read: Result<bool, ParseError>,
        ex: &Example,
        line: u64,
    ) -> Result<bool, ParseError> {
        match read {
            Ok(true) => {
                let past = ex
                    .indices
                    .last()
                    .is_some_and(|&i| i as usize >= self.guess.dim);
                self.n += 1;
                self.nnz += ex.indices.len();
                #[cfg(test)]
                tests::LEARNED.with(|n| n.set(n.get() + 1));
                if past || self.n > HELD_PREDICTIONS {
                    let why = "the guessed dimension does not hold this example".to_owned();
                    return Err(ParseError::new(
                        &self.source_name,
                        line,
                        0,
                        ParseErrorKind::Unsupported(why),
                    ));
                }
                Ok(true)
            }
            Ok(false) => {
                self.ended = true;
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// [`watch`](Self::watch) when a guess is open (`guess`), else `read` as it is.
    pub(crate) fn watch_in(
        guess: Option<&mut Self>,
        read: Result<bool, ParseError>,
        ex: &Example,
        line: u64,
    ) -> Result<bool, ParseError> {
        match guess {
            Some(guess) => guess.watch(read, ex, line),
            None => read,
        }
    }

    /// Whether the walk would have built this learner: the first pass read the whole file, no
    /// index past the guess, and the whole file's profile chooses what the guess chose.
    pub(crate) fn holds(&self) -> bool {
        let whole = InputProfile {
            avg_nnz: (self.n > 0).then(|| self.nnz as f64 / self.n as f64),
            ..self.guess
        };
        self.ended && self.unresolved.resolve(&whole) == self.resolved
    }
}

/// A run's observer while the guess is open: its events held (the first pass's predictions
/// one `f64` each), then handed on in order ([`release`](Self::release)); after that, or
/// when nothing is guessed, every event goes straight on.
pub(crate) struct Deferred<'o> {
    observer: &'o mut dyn Observer,
    held: Option<Held>,
}

/// The events held: the start, the predictions, and the other events with the number of
/// predictions before each.
#[derive(Default)]
struct Held {
    start: Option<OwnedStart>,
    predictions: Vec<f64>,
    others: Vec<(usize, Event)>,
}

/// A [`RunStart`] kept.
struct OwnedStart {
    config: LearnerConfig,
    dim: usize,
    representation: RepresentationChoice,
    classes: Option<Classes>,
    schema: Option<Schema>,
}

enum Event {
    Progress(ProgressRow),
    Classes(Classes),
    Warning(Warning),
}

impl<'o> Deferred<'o> {
    /// Events go straight to `observer`.
    pub(crate) fn passing(observer: &'o mut dyn Observer) -> Self {
        Deferred {
            observer,
            held: None,
        }
    }

    /// Events are held until [`release`](Self::release).
    pub(crate) fn holding(observer: &'o mut dyn Observer) -> Self {
        Deferred {
            observer,
            held: Some(Held::default()),
        }
    }

    /// Whether the events go (or went) to the observer: a later error is the run's.
    pub(crate) fn released(&self) -> bool {
        self.held.is_none()
    }

    /// Hands the held events on, in their order; from now on events pass straight. The
    /// observer's refusal to start is the run's error, as it is before learning.
    pub(crate) fn release(&mut self) -> Result<(), RunError> {
        let Some(held) = self.held.take() else {
            return Ok(());
        };
        #[cfg(test)]
        tests::KEPT.with(|k| k.set(k.get() + 1));
        if let Some(s) = &held.start {
            let start = RunStart {
                config: &s.config,
                dim: s.dim,
                representation: s.representation,
                classes: s.classes.as_ref(),
                schema: s.schema.as_ref(),
            };
            self.observer.started(&start).map_err(RunError::Observer)?;
        }
        let mut others = held.others.into_iter().peekable();
        for (k, &score) in held.predictions.iter().enumerate() {
            while let Some((_, event)) = others.next_if(|(before, _)| *before == k) {
                self.hand_on(event);
            }
            self.observer.prediction(score);
        }
        for (_, event) in others {
            self.hand_on(event);
        }
        Ok(())
    }

    /// At the first pass's end, with its `guess` (if any): the held events handed on when the
    /// guess holds ([`release`](Self::release)); when it does not, an error that ends this try
    /// of the run, nothing having reached the observer.
    pub(crate) fn keep_guess(&mut self, guess: Option<Speculation>) -> Result<(), RunError> {
        match guess {
            Some(guess) if !guess.holds() => Err(RunError::options(
                "the guessed dimension or representation failed",
            )),
            Some(_) => self.release(),
            None => Ok(()),
        }
    }

    fn hand_on(&mut self, event: Event) {
        match event {
            Event::Progress(row) => self.observer.progress(&row),
            Event::Classes(classes) => self.observer.classes(&classes),
            Event::Warning(w) => self.observer.warning(&w),
        }
    }

    fn hold(&mut self, event: Event) -> Option<Event> {
        match self.held.as_mut() {
            Some(held) => {
                held.others.push((held.predictions.len(), event));
                None
            }
            None => Some(event),
        }
    }
}

impl Observer for Deferred<'_> {
    fn started(&mut self, start: &RunStart<'_>) -> Result<(), ObserverError> {
        match self.held.as_mut() {
            Some(held) => {
                held.start = Some(OwnedStart {
                    config: start.config.clone(),
                    dim: start.dim,
                    representation: start.representation,
                    classes: start.classes.cloned(),
                    schema: start.schema.cloned(),
                });
                Ok(())
            }
            None => self.observer.started(start),
        }
    }

    fn progress(&mut self, row: &ProgressRow) {
        if let Some(Event::Progress(row)) = self.hold(Event::Progress(*row)) {
            self.observer.progress(&row);
        }
    }

    fn prediction(&mut self, score: f64) {
        match self.held.as_mut() {
            Some(held) => held.predictions.push(score),
            None => self.observer.prediction(score),
        }
    }

    fn classes(&mut self, classes: &Classes) {
        if let Some(Event::Classes(c)) = self.hold(Event::Classes(classes.clone())) {
            self.observer.classes(&c);
        }
    }

    fn warning(&mut self, warning: &Warning) {
        if let Some(Event::Warning(w)) = self.hold(Event::Warning(warning.clone())) {
            self.observer.warning(&w);
        }
    }

    /// Comes only after the first pass, when the events were handed on.
    fn pass_done(&mut self, report: &PassReport<'_>) {
        debug_assert!(
            self.held.is_none(),
            "a pass ended before the guess was checked"
        );
        self.observer.pass_done(report);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::ClassSpec;
    use crate::linear::{Algorithm, CurvatureKind};
    use crate::run::{train_and_test, Input, Start, TrainOptions};
    use std::cell::Cell;

    thread_local! {
        /// Guesses kept on this thread.
        pub(super) static KEPT: Cell<u32> = const { Cell::new(0) };
        /// Examples a guessed first pass read on this thread.
        pub(super) static LEARNED: Cell<u64> = const { Cell::new(0) };
    }

    /// Records every event, in order, as text.
    #[derive(Default)]
    struct Log(Vec<String>);

    impl Observer for Log {
        fn started(&mut self, start: &RunStart<'_>) -> Result<(), ObserverError> {
            self.0.push(format!("start {}", start.dim));
            Ok(())
        }
        fn progress(&mut self, row: &ProgressRow) {
            self.0.push(format!("progress {}", row.examples));
        }
        fn prediction(&mut self, score: f64) {
            self.0.push(format!("p {score}"));
        }
        fn warning(&mut self, warning: &Warning) {
            self.0.push(format!("w {warning}"));
        }
    }

    fn events(o: &mut dyn Observer) {
        let config = LearnerConfig::default();
        let start = RunStart {
            config: &config,
            dim: 7,
            representation: RepresentationChoice::Given,
            classes: None,
            schema: None,
        };
        o.started(&start).unwrap();
        o.warning(&Warning::Diverged { mean_loss: 2.0 });
        let mut metrics = crate::eval::Metrics::new();
        for k in 0..5 {
            o.prediction(k as f64);
            if let Some(row) =
                metrics.add_with_progress(0.5, 1.0, 1.0, crate::loss::Loss::Logistic, 1)
            {
                o.progress(&row);
            }
        }
        o.warning(&Warning::Diverged { mean_loss: 3.0 });
    }

    /// Held events reach the observer only when released, in the order they came.
    #[test]
    fn held_events_are_handed_on_in_their_order() {
        let mut straight = Log::default();
        events(&mut Deferred::passing(&mut straight));
        let mut later = Log::default();
        let mut deferred = Deferred::holding(&mut later);
        events(&mut deferred);
        assert!(!deferred.released());
        deferred.release().unwrap();
        assert!(deferred.released());
        deferred.prediction(9.0);
        straight.0.push("p 9".into());
        assert_eq!(later.0, straight.0);
        assert!(straight.0.len() > 10, "{:?}", straight.0);
    }

    /// A guess holds only if the pass read to the end without an index past it, and the whole
    /// file's average keeps the representation's choice.
    #[test]
    fn a_guess_holds_only_for_what_the_walk_would_find() {
        let config = LearnerConfig::default().check().unwrap();
        let guess = InputProfile {
            dim: 4,
            hashed: false,
            avg_nnz: Some(4.0),
            sample: None,
        };
        let resolved = config.resolve(&guess);
        let mut s = Speculation::new("f", guess, config, resolved);
        let ex = |indices: Vec<u32>| Example {
            values: vec![1.0; indices.len()],
            indices,
            ..Example::default()
        };
        assert!(s.watch(Ok(true), &ex(vec![0, 1, 2, 3]), 1).is_ok());
        assert!(!s.holds(), "not read to the end");
        assert_eq!(s.watch(Ok(false), &ex(vec![]), 1), Ok(false));
        assert!(s.holds());
        let err = s.watch(Ok(true), &ex(vec![0, 4]), 2).unwrap_err();
        assert_eq!((err.line, err.column), (2, 0));
        assert!(Speculation::worth_it(&s.guess, 1 << 20));
        let sparse = InputProfile {
            avg_nnz: Some(1.0),
            ..s.guess
        };
        assert!(!Speculation::worth_it(&sparse, 1 << 20));
        assert!(!Speculation::worth_it(&s.guess, 1 << 40));
    }

    /// Predictions, as bits, of a learner built by `config` (checked, unscaled as a mixture's
    /// member) for dimension `dim`, learning the same 400 sparse rows over features `0..600`
    /// (20 stored a row, labels from a fixed rule), each predicted before it is learned.
    fn prediction_bits(config: &LearnerConfig, dim: usize) -> Vec<u64> {
        let mut learner = config.clone().check().unwrap().build_unscaled(dim).unwrap();
        let mut seed = 27u64;
        let mut next = move || {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            seed >> 33
        };
        (0..400)
            .map(|_| {
                let mut indices: Vec<u32> = (0..20).map(|_| (next() % 600) as u32).collect();
                indices.sort_unstable();
                indices.dedup();
                let values: Vec<f64> = indices
                    .iter()
                    .map(|_| (next() % 1000) as f64 / 500.0 - 1.0)
                    .collect();
                let y = if values[0] + values[values.len() / 2] > 0.0 {
                    1.0
                } else {
                    -1.0
                };
                let row = || crate::data::Row::Sparse {
                    indices: &indices,
                    values: &values,
                };
                let p = crate::linear::OnlineLearner::predict(&learner, row());
                crate::linear::OnlineLearner::learn(&mut learner, row(), y, 1.0).unwrap();
                p.to_bits()
            })
            .collect()
    }

    /// Why a sparse file's run is not learned from a guessed dimension that grows (issue 27;
    /// `docs/results/speed.md`, "Sparse text: why the walk stays before learning"): the
    /// default's FD-SON member on sparse data computes with `d` beyond its storage — its
    /// sparse-time learner starts from the structured directions `Z₀`, whose column `j` is
    /// `±1/√⌈(d − j mod m)/m⌉` ([`initial_directions`](crate::linear::sparse::initial_directions)),
    /// and its dense learner sums `d + 1` coordinates in four lanes and a tail of
    /// `(d + 1) mod 4` (`linalg::dot`; 601 and 904 differ there) — so a learner built for fewer
    /// features than the file holds and grown would not be the walked one bit for bit, even on
    /// rows it has room for. The AdaGrad grid (its other member) computes the same bits at any
    /// `d` that holds the rows. If this test fails because the FD member stopped depending on
    /// `d`, a growable store could give the walked bits: revisit [`Speculation::worth_it`].
    #[test]
    fn a_sparse_files_fd_member_depends_on_d_beyond_its_storage() {
        use crate::linear::Representation;
        let members = LearnerConfig::default().sparse_data_members();
        let fd = |representation| LearnerConfig {
            representation,
            ..members[0].clone()
        };
        for representation in [Representation::Sparse, Representation::Dense] {
            let (small, large) = (
                prediction_bits(&fd(representation), 600),
                prediction_bits(&fd(representation), 903),
            );
            let differ = small.iter().zip(&large).filter(|(a, b)| a != b).count();
            assert!(
                differ > 0,
                "{representation:?}: the same bits at d = 600 and 903"
            );
            for (a, b) in small.iter().zip(&large) {
                let (a, b) = (f64::from_bits(*a), f64::from_bits(*b));
                assert!(
                    (a - b).abs() <= 1e-9 * (1.0 + a.abs()),
                    "{representation:?}: {a} {b}"
                );
            }
        }
        let grid = &members[1];
        assert_eq!(grid.algorithm, Algorithm::AdaGradGrid);
        assert_eq!(prediction_bits(grid, 600), prediction_bits(grid, 903));
    }

    /// Records every event of a run, in order.
    #[derive(Default)]
    struct Everything(Vec<String>);

    impl Observer for Everything {
        fn started(&mut self, s: &RunStart<'_>) -> Result<(), ObserverError> {
            let classes = s.classes.map(|c| c.to_list());
            self.0
                .push(format!("start {} {} {classes:?}", s.dim, s.representation));
            Ok(())
        }
        fn progress(&mut self, row: &ProgressRow) {
            self.0.push(format!("{row:?}"));
        }
        fn prediction(&mut self, score: f64) {
            self.0.push(format!("{}", score.to_bits()));
        }
        fn classes(&mut self, classes: &Classes) {
            self.0.push(classes.to_list());
        }
        fn warning(&mut self, warning: &Warning) {
            self.0.push(format!("{warning}"));
        }
        fn pass_done(&mut self, r: &PassReport<'_>) {
            self.0
                .push(format!("pass {} {:?}", r.pass, r.progressive.mean_loss()));
        }
    }

    /// What a run gave: its events, model bytes and examples, or its error.
    type Run = Result<(Vec<String>, Vec<u8>, u64), String>;

    /// `text` trained from a file (guessed when it qualifies) and from a stream of the same
    /// bytes (walked first, as before this module); with whether the file's guess was kept.
    fn file_and_stream(text: &str, config: &LearnerConfig, passes: u32) -> (Run, Run, bool) {
        let path = std::env::temp_dir().join(format!(
            "sketchlearn-guess-{}-{:x}.libsvm",
            std::process::id(),
            text.len() ^ text.bytes().map(usize::from).sum::<usize>()
        ));
        std::fs::write(&path, text).unwrap();
        let options = TrainOptions {
            passes,
            ..TrainOptions::default()
        };
        let run = |input: Input| -> Run {
            let mut seen = Everything::default();
            let start = Start::New(config.clone());
            let spec = ClassSpec::FromInput;
            let out = train_and_test(input, None, start, &options, &spec, &mut seen)
                .map_err(|e| e.to_string().replace(path.to_str().unwrap(), "IN"))?;
            Ok((seen.0, out.model.to_bytes().unwrap(), out.examples))
        };
        let before = KEPT.with(Cell::get);
        let file = run(Input::path(path.to_str().unwrap()));
        let kept = KEPT.with(Cell::get) > before;
        let bytes = std::io::Cursor::new(text.as_bytes().to_vec());
        let name = path.to_str().unwrap().to_owned();
        let stream = run(Input::reader(name, Box::new(bytes)));
        std::fs::remove_file(&path).unwrap();
        (file, stream, kept)
    }

    /// `n` rows of `d` features each (1..=d), labels `±1` in turn, values from the row.
    fn dense(n: usize, d: usize) -> Vec<String> {
        (0..n)
            .map(|k| {
                let label = if (k * 7 + k / 3) % 2 == 0 { "1" } else { "-1" };
                let row: String = (1..=d)
                    .map(|j| format!(" {j}:{}", ((k * 31 + j * 17) % 23) as f64 / 7.0 - 1.5))
                    .collect();
                format!("{label}{row}\n")
            })
            .collect()
    }

    fn oja() -> LearnerConfig {
        LearnerConfig {
            algorithm: Algorithm::Newton,
            curvature: CurvatureKind::Oja,
            size: 4,
            ..LearnerConfig::default()
        }
    }

    /// A dense file's guess is kept, and the run (events in order, model bytes) is the walked
    /// run's, for Oja-SON and the default, in one pass and two.
    #[test]
    fn a_kept_guess_gives_the_walked_run() {
        let text = dense(1300, 12).concat();
        for (config, passes) in [(oja(), 1), (oja(), 2), (LearnerConfig::default(), 1)] {
            let (file, stream, kept) = file_and_stream(&text, &config, passes);
            assert!(kept, "{config:?}");
            let file = file.unwrap();
            assert_eq!(file, stream.unwrap());
            assert!(file.0[0].starts_with("start 12 "), "{:?}", file.0[0]);
            assert_eq!(file.2, 1300 * u64::from(passes));
        }
    }

    /// An observer refusing to start stops a guessed run before it learns (as the walk's run
    /// stops before its passes), with the observer's error; a walked run never asks it
    /// [`Observer::ready`] and stops at [`Observer::started`], before learning too.
    ///
    /// What shows "before learning" differs: a guessed pass holds its predictions (so the
    /// observer could not see them), and [`LEARNED`] counts the examples it read; a walked run
    /// counts nothing there (it never guesses), but hands each example's prediction straight
    /// to the observer, which records them — an example learned before or after `started`
    /// refused would show in its record.
    #[test]
    fn an_observer_refusing_to_start_stops_the_guess_before_learning() {
        struct Refuses {
            asked: Vec<&'static str>,
        }
        impl Observer for Refuses {
            fn ready(&mut self) -> Result<(), ObserverError> {
                self.asked.push("ready");
                Err("cannot create the output".into())
            }
            fn started(&mut self, _: &RunStart<'_>) -> Result<(), ObserverError> {
                self.asked.push("started");
                Err("cannot create the output".into())
            }
            fn prediction(&mut self, _: f64) {
                self.asked.push("prediction");
            }
        }
        let path = std::env::temp_dir().join(format!(
            "sketchlearn-guess-refused-{}.libsvm",
            std::process::id()
        ));
        std::fs::write(&path, dense(1300, 12).concat()).unwrap();
        let options = TrainOptions::default();
        let run = |input: Input| {
            let mut refuses = Refuses { asked: Vec::new() };
            let start = Start::New(oja());
            let examples = LEARNED.with(Cell::get);
            let out = train_and_test(
                input,
                None,
                start,
                &options,
                &ClassSpec::FromInput,
                &mut refuses,
            );
            let learned = LEARNED.with(Cell::get) - examples;
            (out.err().map(|e| e.to_string()), refuses.asked, learned)
        };
        let file = run(Input::path(path.to_str().unwrap()));
        let text = std::fs::read(&path).unwrap();
        let stream = run(Input::reader("IN", Box::new(std::io::Cursor::new(text))));
        std::fs::remove_file(&path).unwrap();
        for (err, _, _) in [&file, &stream] {
            assert!(err.as_ref().unwrap().contains("cannot create the output"));
        }
        assert_eq!(file.1, ["ready"]);
        assert_eq!(file.2, 0, "examples read by the guessed pass");
        assert_eq!(stream.1, ["started"], "no prediction: no example learned");
    }

    /// A guess that fails leaves the run to the walk, with the walk's learner and errors: an
    /// index past the first rows' (a larger dimension), later rows without features (another
    /// representation), a third label, a bad index and a bad value past the first rows.
    #[test]
    fn a_failed_guess_runs_as_before() {
        let rows = dense(1300, 12);
        let wider = rows.iter().enumerate().map(|(k, r)| match k {
            1200 => "1 3:1 15:0.5\n".to_owned(),
            _ => r.clone(),
        });
        let sparse = rows
            .iter()
            .cloned()
            .chain((0..14_000).map(|k| format!("{}\n", 1 - 2 * (k % 2))));
        let third = rows.iter().enumerate().map(|(k, r)| match k {
            1100 => "3 1:1\n".to_owned(),
            _ => r.clone(),
        });
        let bad_index = rows.iter().enumerate().map(|(k, r)| match k {
            1250 => "1 1:1 x:2\n".to_owned(),
            _ => r.clone(),
        });
        let bad_value = rows.iter().enumerate().map(|(k, r)| match k {
            1250 => "1 1:1 2:zz\n".to_owned(),
            _ => r.clone(),
        });
        let cases: [(&str, String); 5] = [
            ("wider", wider.collect()),
            ("sparse", sparse.collect()),
            ("third", third.collect()),
            ("bad index", bad_index.collect()),
            ("bad value", bad_value.collect()),
        ];
        for (what, text) in cases {
            let (file, stream, kept) = file_and_stream(&text, &oja(), 1);
            assert!(!kept, "{what}");
            assert_eq!(file, stream, "{what}");
            match what {
                "wider" => assert!(file.unwrap().0[0].starts_with("start 15 ")),
                "sparse" => assert!(file.unwrap().0[0].contains("sparse input"), "{what}"),
                "third" => assert!(file.unwrap_err().starts_with("IN:1101:1: label 3")),
                "bad index" => assert!(file.unwrap_err().starts_with("IN:1251:")),
                _ => {
                    let e = file.unwrap_err();
                    assert!(e.starts_with("IN:1251:") && e.contains("zz"), "{e}")
                }
            }
        }
    }
}
