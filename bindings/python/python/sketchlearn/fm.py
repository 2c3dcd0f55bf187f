"""scikit-learn estimators over the core's online factorization machines (``sketchlearn fm``):
:class:`FMRegressor` and the binary :class:`FMClassifier`.

The model is the compact convex FM ``z = âᵀΘâ`` with ``â = [x; 1]`` learned by Sketched FTRL
(Luo et al., KDD 2018; ``sftrl``, ``sftrl-fast``, ``sftrl-split``), full-matrix FTRL/OGD, OCG,
or Rendle's FM by SGD (``fm-sgd``). Every row is learned once per pass, in order, by Rust.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from sketchlearn import _core
from sketchlearn._refused import warn_refused
from sketchlearn._validation import (
    as_rows,
    as_targets,
    binary_classes,
    core_targets,
    seed_of,
    validate_input,
)

_PARAMS_DOC = """
    Parameters
    ----------
    algo : {"sftrl-fast", "sftrl", "sftrl-split", "ftrl", "ogd", "ocg", "fm-sgd"}, \
default="sftrl-fast"
        The learner (CLI ``sketchlearn fm --algo``; ``sftrl-fast`` is its default on LIBSVM rows).
    size : int, default=None
        Sketch size m of the SFTRL learners (``None``: 10).
    eta, eta_pairwise : float, default=None
        Step sizes (``None``: the defaults the CLI takes for the algorithm and loss).
    rank : int, default=None
        Rank k of ``fm-sgd`` (``None``: 10).
    loss : {"logistic", "squared", "hinge", "smooth-hinge"}, default=None
        ``None``: logistic for the classifier, squared for the regressor.
    intercept : float, default=None
        Initial intercept μ. ``None``: for the squared loss the running mean of the labels
        learned so far (each prediction from the earlier labels only), for the other losses 0 —
        the core's default, as ``sketchlearn fm`` takes it.
    normalize : bool, default=True
        Scale every row to unit norm first (CLI ``--normalize``, recorded in the model file).
        The default steps suit unit-norm or one-hot rows; on raw rows of larger norm constant
        steps can diverge (scikit-learn's regression check set: R² 0.52 normalised, −2064
        raw), so ``False`` — ``sketchlearn fm`` without ``--normalize`` — wants a smaller
        ``eta``.
    n_passes : int, default=1
        Passes over the data in :meth:`fit`.
    random_state : int, RandomState or None, default=None
        Seed of fm-sgd's initial factors and OCG's initial vector; ``None`` is seed 0, the CLI's
        default.
"""


class _OnlineFM(BaseEstimator):
    _regression = False

    def __init__(
        self,
        *,
        algo: str = "sftrl-fast",
        size: int | None = None,
        eta: float | None = None,
        eta_pairwise: float | None = None,
        rank: int | None = None,
        loss: str | None = None,
        intercept: float | None = None,
        normalize: bool = True,
        n_passes: int = 1,
        random_state: Any = None,
    ) -> None:
        self.algo = algo
        self.size = size
        self.eta = eta
        self.eta_pairwise = eta_pairwise
        self.rank = rank
        self.loss = loss
        self.intercept = intercept
        self.normalize = normalize
        self.n_passes = n_passes
        self.random_state = random_state

    def _validate(self, X, y="no_validation", *, reset: bool):
        return validate_input(self, X, y, reset=reset)

    def _learn(self, X, targets, *, reset: bool, passes: int):
        rows, _ = as_rows(X)
        if reset:
            params = {
                "algo": self.algo,
                "size": self.size,
                "eta": self.eta,
                "eta_pairwise": self.eta_pairwise,
                "rank": self.rank,
                "loss": self.loss,
                "intercept": self.intercept,
                "seed": seed_of(self.random_state),
            }
            self.fm_ = _core.FmLearner(
                params, X.shape[1], normalize=bool(self.normalize), regression=self._regression
            )
        with warn_refused(self.fm_, stacklevel=4, made="the model"):  # once, all passes
            for _ in range(passes):
                self.fm_.learn(rows, as_targets(targets))
        return self

    def _raw(self, X) -> np.ndarray:
        check_is_fitted(self, "fm_")
        rows, _ = as_rows(self._validate(X, reset=False))
        return self.fm_.predict(rows)

    @property
    def progressive_score_(self) -> dict:
        """Progressive validation of everything learned since the model was built:
        ``{"examples", "loss", "error"}``."""
        check_is_fitted(self, "fm_")
        n, loss, error = self.fm_.progressive()
        return {"examples": n, "loss": loss, "error": error}

    def save(self, path) -> None:
        """Writes the model file of ``sketchlearn fm -f`` (``sketchlearn fm predict -i PATH``
        reads it; a classifier predicts its ±1 labels there)."""
        check_is_fitted(self, "fm_")
        self.fm_.save(str(path))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class FMRegressor(RegressorMixin, _OnlineFM):
    __doc__ = """Online factorization machine regressor (squared loss ½(p − y)²).""" + _PARAMS_DOC

    _regression = True

    def fit(self, X, y):
        """Learns ``n_passes`` passes over ``(X, y)`` in row order, from scratch."""
        X, y = self._validate(X, y, reset=True)
        return self._learn(X, y, reset=True, passes=self.n_passes)

    def partial_fit(self, X, y):
        """Learns one pass over ``(X, y)``, continuing from the current state."""
        first = not hasattr(self, "fm_")
        X, y = self._validate(X, y, reset=first)
        return self._learn(X, y, reset=first, passes=1)

    def predict(self, X) -> np.ndarray:
        """Predictions ``ŷ(x)``."""
        return self._raw(X)


class FMClassifier(ClassifierMixin, _OnlineFM):
    __doc__ = (
        """Online factorization machine for binary classification (the CLI's FM learners take
    two classes; the later-sorted class is +1, as in :class:`~sketchlearn.OnlineClassifier`).
    """
        + _PARAMS_DOC
    )

    def _set_classes(self, classes) -> None:
        self.classes_ = binary_classes(classes, "FMClassifier")

    def _targets(self, y) -> np.ndarray:
        return core_targets(self.classes_, y)

    def fit(self, X, y):
        """Learns ``n_passes`` passes over ``(X, y)`` in row order, from scratch."""
        if self.loss == "squared":
            raise ValueError("FMClassifier needs a classification loss; use FMRegressor")
        X, y = self._validate(X, y, reset=True)
        check_classification_targets(y)
        self._set_classes(y)
        return self._learn(X, self._targets(y), reset=True, passes=self.n_passes)

    def partial_fit(self, X, y, classes=None):
        """Learns one pass over ``(X, y)``; ``classes`` is required on the first call."""
        first = not hasattr(self, "fm_")
        if first:
            if classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit")
            self._set_classes(classes)
        X, y = self._validate(X, y, reset=first)
        check_classification_targets(y)
        return self._learn(X, self._targets(y), reset=first, passes=1)

    def decision_function(self, X) -> np.ndarray:
        """Raw scores (> 0 predicts ``classes_[1]``)."""
        return self._raw(X)

    def predict(self, X) -> np.ndarray:
        """Predicted labels."""
        s = self._raw(X)
        return self.classes_[(s > 0).astype(int)]

    def _has_proba(self) -> bool:
        return self.loss in (None, "logistic")

    @available_if(_has_proba)
    def predict_proba(self, X) -> np.ndarray:
        """``[1 − σ(score), σ(score)]`` (logistic loss only)."""
        p = expit(self._raw(X))
        return np.column_stack([1.0 - p, p])

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags
