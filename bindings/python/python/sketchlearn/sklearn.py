"""scikit-learn estimators: :class:`OnlineClassifier` and :class:`OnlineRegressor`.

Both learn online — every row once per pass, in order — with the Rust learners of the CLI
(``sketchlearn train``): by default ``auto``, an online mixture of sketched Newton learners and
an AdaGrad grid. The parameters mirror the CLI flags; ``None`` means the library default.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from sketchlearn._base import OnlineLinearModel
from sketchlearn._data_warnings import case_warning, labels_case_warning, warn_data
from sketchlearn._validation import as_rows, core_targets

_PARAMS_DOC = """
    Parameters
    ----------
    algo : {"auto", "auto-sparse", "auto-very-sparse", "ogd", "adagrad", "adagrad-grid", \
"newton", "ada-fd", "sketchy"}
        Learning algorithm (CLI ``--algo``; default ``"auto"``). ``auto`` mixes two RFD-SONs,
        FD-SON with diagonal adaptation and an AdaGrad grid online (a classifier's ``auto`` on
        SciPy sparse input whose first 1000 rows use on average under a tenth of the distinct
        features they hold becomes ``auto-sparse``: FD-SON with diagonal adaptation and the
        AdaGrad grid; at 1000 rows or more that hold each of their features fewer than twice
        on average, ``auto-very-sparse``: the AdaGrad grid alone; as ``sketchlearn train``
        chooses); ``newton`` is one
        (sketched) Online Newton learner over ``curvature``; ``ada-fd`` and ``sketchy`` are
        full-matrix AdaGrad on a Frequent Directions sketch of the gradients (Ada-FD: δ is
        ``alpha``; Sketchy: δ is ``alpha0``).
    curvature : {"identity", "full", "fd", "fd-fast", "rfd", "rfd-fast", "rp", "oja"}, default=None
        Curvature of the Newton learner (and of ``auto``'s sketched members); ``None`` is
        ``rfd-fast`` (softmax: ``fd-fast`` on sparse input, ``rfd-fast`` on dense input).
    size : int, default=None
        Sketch size m; ``None`` is 10 (softmax: 20).
    loss : {"logistic", "squared", "hinge", "smooth-hinge"}, default=None
        ``None``: logistic for the classifier, squared for the regressor.
    diag : bool, default=False
        Diagonal adaptation (SON §5.2) around one learner (not with ``algo="auto"``).
    learning_rate, alpha, alpha0, c, clip, oja_c : float, default=None
        The CLI's ``-l``, ``--alpha``, ``--alpha0``, ``--c``, ``--clip``, ``--oja-c``
        (``None``: library default).
    fit_intercept : bool, default=True
        Learn an intercept (a constant feature, as the CLI does unless ``--no-bias``).
    retire : float, default=None
        The mixture's retirement threshold ε (CLI ``--retire EPS``; ``None``: the library
        default, 1e-20): at check points (every 256 of importance weight after the first
        1024, once the rows' stored entries seen reach 3 × the number of features) a member
        whose weight is below ε, and not the largest, retires — it is no longer
        learned nor evaluated (``retired_at_`` says when). ``0`` keeps every member to the end
        (the results of before the rule, bit for bit). Must be in [0, 1); only for a mixture
        (``algo`` ``"auto"``, ``"auto-sparse"``, ``"adagrad-grid"``) of a binary classifier or
        a regressor, as on the command line. It is applied when the learners are built
        (``fit``, or the first ``partial_fit``), as the other hyper-parameters are: changing
        it later with ``set_params`` takes effect at the next ``fit``.
    n_passes : int, default=1
        Passes over the data in :meth:`fit` (:meth:`partial_fit` makes one).
    sparse : bool, default=None
        ``None``: the CLI's rule — sparse-time learners (O(m² + m·nnz) per row) for SciPy
        sparse input with fewer than d/10 non-zeros per row on average (FD/RFD: d/(4m), where
        the dense learner is cheaper above) (first call), dense
        learners otherwise; ``True``/``False`` force one (CLI ``--sparse``/``--dense``).
    random_state : int, RandomState or None, default=None
        Seed of the random draws (RP, Oja); ``None`` is seed 0, the CLI's default.
    verbose : bool, default=False
        Print the CLI's progress table (progressive loss at 1, 2, 4, … examples) on stderr.
    reduction : {"oaa", "softmax"}, default="oaa"
        :class:`OnlineClassifier` with more than two classes (CLI ``--multiclass --reduction``):
        ``oaa`` is the core's one-against-all over K learners of the parameters above;
        ``softmax`` the core's softmax regression with a Kronecker-factored sketched Newton step
        (its own library defaults: m=20, FD on sparse input, RFD on dense input). Not used by
        two classes or by :class:`OnlineRegressor`.
"""


class OnlineClassifier(ClassifierMixin, OnlineLinearModel):
    __doc__ = (
        """Online linear classifier (binary, or multiclass through the core's multiclass
    learners, as ``sketchlearn train --multiclass``).

    Labels may be numbers or strings; ``classes_`` is ``np.unique(y)``. Binary problems learn
    the later-sorted class as +1 (scikit-learn's convention, and the CLI's). The model file of
    :meth:`save` records the classes, so ``sketchlearn test -i``/``predict -i`` print the user's
    labels; :func:`sketchlearn.load` gives a CLI model's labels as ``classes_``.
    """
        + _PARAMS_DOC
    )

    _regression = False

    def _check_loss(self) -> None:
        if self.loss == "squared":
            raise ValueError("OnlineClassifier needs a classification loss; use OnlineRegressor")

    def _learner_classes(self) -> list:
        return self.classes_.tolist()

    def _targets(self, y) -> np.ndarray:
        return core_targets(self.classes_, y)

    def _set_classes(self, classes) -> None:
        classes = np.unique(classes)
        if len(classes) < 2:
            raise ValueError(
                f"OnlineClassifier needs samples of at least 2 classes in the data, but the "
                f"data contains only one class: {classes!r}"
            )
        self.classes_ = classes

    def fit(self, X, y, sample_weight=None):
        """Learns ``n_passes`` passes over ``(X, y)`` in row order, from scratch.

        ``X``: array (float32/float64, any order) or SciPy sparse matrix; ``y``: labels;
        ``sample_weight``: importance weights ≥ 0. Returns ``self``. Labels that differ only
        by case (``yes`` and ``Yes``) are two classes: a ``sketchlearn.DataWarning`` names
        them and their first rows, as ``sketchlearn train`` warns.
        """
        self._check_loss()
        X, y = self._validate(X, y, reset=True)
        check_classification_targets(y)
        self._set_classes(y)
        warn_data([labels_case_warning(y)])
        return self._fit(X, self._targets(y), sample_weight, reset=True, passes=self.n_passes)

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Learns one pass over ``(X, y)``, continuing from the current state.

        ``classes`` (every label that will ever appear) is required on the first call, as for
        scikit-learn's ``SGDClassifier``. A label that is not a class is a ``ValueError``
        naming its row (and a class that differs from it only by case: ``Yes`` where the
        classes are ``no, yes``); classes that differ only by case warn as in :meth:`fit`.
        """
        first = not hasattr(self, "learners_")
        if first:
            self._check_loss()
            if classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit")
            self._set_classes(classes)
            warn_data([case_warning(self.classes_.tolist(), where=" in classes=")])
        elif classes is not None and not np.array_equal(np.unique(classes), self.classes_):
            raise ValueError(
                f"classes={classes!r} is not the same as on the first call ({self.classes_!r})"
            )
        X, y = self._validate(X, y, reset=first)
        check_classification_targets(y)
        return self._fit(X, self._targets(y), sample_weight, reset=first, passes=1)

    def decision_function(self, X) -> np.ndarray:
        """Raw scores ``wᵀx``: shape ``(n,)`` for two classes (> 0 predicts ``classes_[1]``),
        ``(n, K)`` for K > 2 classes."""
        s = self._scores(X)
        return s[:, 0] if s.shape[1] == 1 else s

    def predict(self, X) -> np.ndarray:
        """Predicted labels."""
        s = self._scores(X)
        if s.shape[1] == 1:
            return self.classes_[(s[:, 0] > 0).astype(int)]
        return self.classes_[np.argmax(s, axis=1)]

    def _has_proba(self) -> bool:
        return self.loss in (None, "logistic")

    @available_if(_has_proba)
    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities (logistic loss only): σ(score) for two classes; for K > 2 the
        core's (one-against-all: the members' σ(score_k) normalised to sum 1; softmax: the
        softmax of the scores)."""
        check_is_fitted(self, "learners_")
        if self.learners_.n_scores > 1:
            rows, _ = as_rows(self._validate(X, reset=False))
            return self.learners_.predict_proba(rows)
        p = expit(self._scores(X)[:, 0])
        return np.column_stack([1.0 - p, p])

    @available_if(_has_proba)
    def predict_log_proba(self, X) -> np.ndarray:
        """Logarithm of :meth:`predict_proba`."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = True
        return tags


class OnlineRegressor(RegressorMixin, OnlineLinearModel):
    __doc__ = """Online linear regressor (squared loss by default: ½(p − y)²).""" + _PARAMS_DOC

    _regression = True

    def fit(self, X, y, sample_weight=None):
        """Learns ``n_passes`` passes over ``(X, y)`` in row order, from scratch."""
        X, y = self._validate(X, y, reset=True)
        return self._fit(X, y, sample_weight, reset=True, passes=self.n_passes)

    def partial_fit(self, X, y, sample_weight=None):
        """Learns one pass over ``(X, y)``, continuing from the current state."""
        first = not hasattr(self, "learners_")
        X, y = self._validate(X, y, reset=first)
        return self._fit(X, y, sample_weight, reset=first, passes=1)

    def predict(self, X) -> np.ndarray:
        """Predictions ``wᵀx``."""
        return self._scores(X)[:, 0]


def expected_failed_checks(estimator) -> dict[str, str]:
    """The scikit-learn estimator checks that cannot apply to an online learner, with the
    reason — pass it as ``expected_failed_checks`` to ``check_estimator`` or
    ``parametrize_with_checks``."""
    reasons = {
        "check_sample_weight_equivalence_on_dense_data": (
            "online learning: a weight-2 row is one large step, not two successive steps, so "
            "weights are not equivalent to repeated rows"
        ),
        "check_sample_weight_equivalence_on_sparse_data": (
            "online learning: a weight-2 row is one large step, not two successive steps"
        ),
    }
    del estimator
    return reasons
