"""What the scikit-learn classifier and regressor share: parameters, input validation and
the calls into ``sketchlearn._core.LinearLearners``."""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from sketchlearn import _core
from sketchlearn._csv_files import csv_scan, file_format, is_csv
from sketchlearn._data_warnings import warn_data
from sketchlearn._diverged import warn_diverged
from sketchlearn._progress import print_header, print_rows
from sketchlearn._refused import warn_refused
from sketchlearn._validation import as_rows, as_targets, seed_of, validate_input

#: Constructor parameters handed to the core, by their names there.
_CORE_PARAMS = (
    "algo",
    "curvature",
    "size",
    "loss",
    "diag",
    "learning_rate",
    "alpha",
    "alpha0",
    "c",
    "clip",
    "oja_c",
    "fit_intercept",
    "retire",
)


def core_params(est, random_state: Any) -> dict:
    """The parameters of ``est`` named in ``_CORE_PARAMS`` that it has (the River estimators
    have no ``oja_c``), as ``sketchlearn._core.LinearLearners`` takes them, with the seed of
    ``random_state``."""
    params = {name: getattr(est, name) for name in _CORE_PARAMS if hasattr(est, name)}
    params["seed"] = seed_of(random_state)
    return params


def _first_rows(X):
    """``(rows, stored features, distinct features)`` of SciPy input's first 1000 rows (the
    sample ``sketchlearn train`` measures for the default's members); ``None`` for dense
    arrays, whose sparsity the core does not judge."""
    if not sp.issparse(X):
        return None
    head = sp.csr_matrix(X)[:1000]
    return (int(head.shape[0]), int(head.nnz), int(np.unique(head.indices).size))


class OnlineLinearModel(BaseEstimator):
    """Base class of :class:`~sketchlearn.OnlineClassifier` and
    :class:`~sketchlearn.OnlineRegressor` (not for direct use)."""

    _regression = False
    # Threads of the learning calls: None, the library's choice; 1, the calling thread alone
    # (set by ``sketchlearn.dask`` on its copies in workers of one thread). Not a parameter.
    _threads: int | None = None
    # Whether a learning call warns (refused steps, divergence): False on ``sketchlearn.dask``'s
    # copies in its tasks, whose refused counts and divergence the client gathers and tells
    # once (``sketchlearn.dask._told``). Not a parameter.
    _warn_refused = True

    def __init__(
        self,
        *,
        algo: str = "auto",
        curvature: str | None = None,
        size: int | None = None,
        loss: str | None = None,
        diag: bool = False,
        learning_rate: float | None = None,
        alpha: float | None = None,
        alpha0: float | None = None,
        c: float | None = None,
        clip: float | None = None,
        oja_c: float | None = None,
        fit_intercept: bool = True,
        retire: float | None = None,
        n_passes: int = 1,
        sparse: bool | None = None,
        random_state: Any = None,
        verbose: bool = False,
        reduction: str = "oaa",
    ) -> None:
        self.algo = algo
        self.curvature = curvature
        self.size = size
        self.loss = loss
        self.diag = diag
        self.learning_rate = learning_rate
        self.alpha = alpha
        self.alpha0 = alpha0
        self.c = c
        self.clip = clip
        self.oja_c = oja_c
        self.fit_intercept = fit_intercept
        self.retire = retire
        self.n_passes = n_passes
        self.sparse = sparse
        self.random_state = random_state
        self.verbose = verbose
        self.reduction = reduction

    # -- building -------------------------------------------------------------------------

    def _core_params(self) -> dict:
        return core_params(self, self.random_state)

    def _learner_classes(self) -> list | None:
        """The classes handed to the core (``None``: regression)."""
        return None

    def _new_learners(self, X):
        avg_nnz = X.nnz / max(X.shape[0], 1) if sp.issparse(X) else None
        return _core.LinearLearners(
            self._core_params(),
            X.shape[1],
            self._learner_classes(),
            reduction=self.reduction,
            avg_nnz=avg_nnz,
            sparse=self.sparse,
            regression=self._regression,
            first_rows=_first_rows(X),
        )

    def _validate(self, X, y="no_validation", *, reset: bool):
        return validate_input(self, X, y, reset=reset)

    # -- learning -------------------------------------------------------------------------

    def _learn(self, rows, targets: np.ndarray, sample_weight, passes: int) -> None:
        learners = self.learners_
        if self.verbose and not getattr(self, "_printed_header", False):
            print_header(learners.description, learners.dim)
            self._printed_header = True
        tell = self._warn_refused
        told = warn_refused(learners, stacklevel=5) if tell else nullcontext()
        diverged = warn_diverged(learners, stacklevel=5) if tell else nullcontext()
        with told, diverged:  # once for the call, all passes
            for _ in range(passes):
                progress = learners.learn(
                    rows, targets, sample_weight, bool(self.verbose), threads=self._threads
                )
                if self.verbose:
                    print_rows(progress)
        if self.verbose:
            final = learners.final_progress()
            if final is not None:
                print_rows([final])

    def _fit(self, X, targets, sample_weight, *, reset: bool, passes: int):
        """Learns ``passes`` passes over validated ``X`` with core targets, (re)building the
        learners first when ``reset``."""
        if sample_weight is not None:
            sample_weight = np.ascontiguousarray(
                _check_sample_weight(sample_weight, X, dtype=np.float64)
            )
        rows, _ = as_rows(X)
        if reset:
            self.learners_ = self._new_learners(X)
            self._printed_header = False
        self._learn(rows, as_targets(targets), sample_weight, passes)
        return self

    def _scores(self, X) -> np.ndarray:
        """Raw scores ``(n, K)`` of the fitted learners."""
        check_is_fitted(self, "learners_")
        X = self._validate(X, reset=False)
        rows, _ = as_rows(X)
        return self.learners_.decision_function(rows)

    # -- distributed training: merge and files ------------------------------------------------

    def _init_learners(
        self, n_features: int, *, hashed=False, avg_nnz=None, first_rows=None, csv=None
    ) -> None:
        """Builds empty learners for ``n_features`` features: the representation ``sparse``
        says, or (``None``) the library's choice for input that is ``hashed`` (VW) or has
        ``avg_nnz`` stored features per row (unknown: dense). ``csv``: the
        ``_core.scan_csv_files`` of the CSV files to learn (read through its schema)."""
        self.learners_ = _core.LinearLearners(
            self._core_params(),
            int(n_features),
            self._learner_classes(),
            reduction=self.reduction,
            hashed=bool(hashed),
            avg_nnz=avg_nnz,
            sparse=self.sparse,
            regression=self._regression,
            first_rows=first_rows,
            csv=csv,
        )
        self.n_features_in_ = int(n_features)
        self._printed_header = False

    def merge(self, other, base=None):
        """Merges ``other``'s state into this one (iterative parameter mixing, McDonald et
        al. 2010: the weights averaged by the examples each learned since ``base``, the
        squared-gradient sums and mixture losses added, the curvature sketches merged with
        Frequent Directions' bound). ``base``: the estimator both continued from (the last
        broadcast model), or ``None`` when both started empty. Returns ``self``.

        Raises ``ValueError`` for different configurations, classes or dimensions and
        ``NotImplementedError`` for states with no sound merge (RP and Oja curvatures, softmax
        models); this estimator is then unchanged."""
        check_is_fitted(self, "learners_")
        check_is_fitted(other, "learners_")
        mine, theirs = getattr(self, "classes_", None), getattr(other, "classes_", None)
        if (mine is None) != (theirs is None) or (
            mine is not None and not np.array_equal(mine, theirs)
        ):
            raise ValueError(f"cannot merge: classes {mine!r} vs {theirs!r}")
        self.learners_.merge(other.learners_, None if base is None else base.learners_)
        return self

    def partial_fit_file(
        self,
        path,
        *,
        n_features=None,
        format="auto",
        zero_based=False,
        label_column=None,
        header=None,
        ignore_columns=(),
        sep=None,
    ):
        """Learns one pass over a LIBSVM, VW or CSV file (``.gz`` read through; a ``.tsv`` name
        is CSV separated by tabs), streamed by the Rust reader with no Python per row. The
        first call on a LIBSVM or VW file needs ``n_features`` (VW: ``2**bits``) unless the
        estimator is fitted; a new classifier reads ±1 labels there (``classes_ = [-1, 1]``).
        The first call on a CSV file scans it as ``sketchlearn train`` does (``label_column``,
        ``header``, ``ignore_columns``: its ``--label-column`` — default the column named
        ``label`` —, ``--header``/``--no-header`` and ``--ignore-columns``): the features
        come from the columns, a classifier's classes from the label column, and later calls
        read their CSV files through that schema. A fitted classifier reads its own classes'
        labels (more than two: one-against-all or softmax, as ``sketchlearn train -i``).
        Ctrl-C stops the pass at the next row read: the estimator keeps every row learned
        before it, whole, and ``KeyboardInterrupt`` is raised. Returns ``self``.

        ``sep`` (pandas' name): ``","`` or ``"\\t"`` reads the file as CSV separated by
        commas or tabs whatever its name (``data.txt``, ``export.dat``, a ``.csv`` holding
        tabs); ``None`` (default): as ``format`` says, ``"auto"`` by the name (``.csv`` commas,
        ``.tsv`` tabs, ``"csv"`` commas, ``"tsv"`` tabs). It goes with ``format`` ``"auto"``
        or ``"csv"`` (or ``"tsv"`` with ``"\\t"``); another value is a ``ValueError`` naming
        the allowed ones. Give it on every call reading such a file (the model keeps the
        columns, not the separator: a model fitted on a TSV reads the CSV of the same data;
        fitted on CSV, it refuses a file its name would read as LIBSVM or VW, naming ``sep=``).
        A first line that is one field holding the other separator is an error naming the
        ``sep=`` that reads it.

        Warns (``sketchlearn.DataWarning``) as ``sketchlearn train`` does of a CSV file's
        scan: a column of numbers with other values among them, read as strings; classes that
        differ only by case (with the file, line and column where each first appears)."""
        path = str(path)
        format = file_format(format, sep)
        csv_given = label_column is not None or header is not None or len(ignore_columns) > 0
        if not hasattr(self, "learners_") and is_csv(path, format):
            options = {"format": format, "has_header": header, "label_column": label_column}
            options["ignore_columns"] = list(ignore_columns)
            self._init_csv(path, options, n_features)
        elif csv_given:
            raise ValueError(
                "label_column, header and ignore_columns apply to the first call on a CSV file "
                "(later files are read through the schema it found)"
            )
        elif not hasattr(self, "learners_"):
            if n_features is None:
                raise ValueError("n_features must be given on the first call to partial_fit_file")
            if not self._regression:
                self.classes_ = np.array([-1, 1])
            self._init_learners(n_features)
        with warn_refused(self.learners_), warn_diverged(self.learners_):
            self.learners_.learn_file(path, format, zero_based)
        return self

    def _init_csv(self, path: str, options: dict, n_features) -> None:
        """Empty learners for the CSV file ``path``, from its scan (``_csv_files.csv_scan``),
        after warning of what the scan found (``DataWarning``)."""
        scan, classes = csv_scan(self, [path], options, None)
        if n_features is not None and n_features != scan.dim:
            raise ValueError(
                f"n_features={n_features}, but {path}'s columns give {scan.dim} features "
                "(leave n_features out for a CSV file)"
            )
        told = list(scan.warnings)
        if not self._regression:
            self._set_classes(classes)
            told.append(scan.case_warning)
        warn_data(told, stacklevel=3)
        self._init_learners(scan.dim, csv=scan)

    # -- inspection and files ---------------------------------------------------------------

    @property
    def coef_(self) -> np.ndarray:
        """Weights ``(K, n_features)`` (K = 1 for binary classification and regression)."""
        check_is_fitted(self, "learners_")
        w = self.learners_.weights()
        return w[:, : self.n_features_in_]

    @property
    def intercept_(self) -> np.ndarray:
        """Intercepts ``(K,)`` (zeros without ``fit_intercept``)."""
        check_is_fitted(self, "learners_")
        w = self.learners_.weights()
        if w.shape[1] > self.n_features_in_:
            return w[:, self.n_features_in_]
        return np.zeros(w.shape[0])

    @property
    def progressive_score_(self) -> dict:
        """Progressive validation of everything learned since the learners were built:
        ``{"examples", "loss", "error"}`` (each example scored before it was learned)."""
        check_is_fitted(self, "learners_")
        n, loss, error = self.learners_.progressive()
        return {"examples": n, "loss": loss, "error": error}

    @property
    def retired_at_(self) -> list | None:
        """Per member of the mixture (``algo`` ``"auto"``, ``"auto-sparse"``,
        ``"adagrad-grid"``): the importance weight seen (the examples, with unit weights) when
        the member retired — its weight negligible (below ``retire``) at a check point, it no
        longer learns nor predicts — or ``None`` while it learns (the CLI's ``--json``
        ``retired`` and ``retired_at``). The point is ``inf`` where importance weights near the
        largest float took the weight seen there (``"inf"`` in the JSON). ``None`` for a learner
        without a mixture, and multiclass models."""
        check_is_fitted(self, "learners_")
        return self.learners_.retired_at

    def save(self, path) -> None:
        """Writes the model file that ``sketchlearn test -i PATH`` and ``predict -i PATH``
        read and :func:`sketchlearn.load` reads back (``sketchlearn train -f``'s format: a
        classifier's file records ``classes_``, so the CLI prints the user's labels; more than
        two classes make a ``--multiclass`` model)."""
        check_is_fitted(self, "learners_")
        self.learners_.save(str(path))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
