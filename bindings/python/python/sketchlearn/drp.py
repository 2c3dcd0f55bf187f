"""A scikit-learn estimator over the core's dual random projection (``sketchlearn drp``):
:class:`DRPClassifier`, a batch learner of L2-regularised linear classifiers.

Zhang, Mahdavi, Jin, Yang & Zhu, "Recovering the Optimal Solution by Dual Random Projection"
(COLT 2013): the problem ``min_w λ/2‖w‖² + Σ_i ℓ(y_i x_iᵀw)`` (no ``1/n``, no intercept) is
solved in an m-dimensional Gaussian random projection ``x̂ = Rᵀx/√m``; the d-dimensional
solution is recovered from the projected problem's *dual* variables, ``w̃ = −(1/λ) X D(y) α̂``
(Algorithm 1), and refined by ``iterations − 1`` more rounds of Algorithm 2.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from sketchlearn import _core
from sketchlearn._validation import (
    as_rows,
    as_targets,
    binary_classes,
    core_targets,
    seed_of,
    validate_input,
)


def _scores(est, X) -> np.ndarray:
    """``w̃ᵀx`` for each row of ``X`` (checked like the fit's input), from a fitted estimator."""
    check_is_fitted(est, "learners_")
    rows, _ = as_rows(validate_input(est, X, reset=False))
    return est.learners_.decision_function(rows)[:, 0]


def _solve(est, X, targets, loss: str, classes: list | None) -> None:
    """Runs the core's DRP with ``est``'s parameters on validated ``X`` and float targets
    (±1 with ``classes``, real without) and records the fitted attributes."""
    params = {
        "size": est.size,
        "loss": loss,
        "lambda": est.alpha,
        "iterations": est.iterations,
        "keep_going": est.keep_going,
        "seed": seed_of(est.random_state),
    }
    rows, _ = as_rows(X)
    est.learners_, report = _core.drp_fit(rows, as_targets(targets), params, classes)
    est.n_iter_ = report["iteration"]
    est.status_ = report["status"]
    est.objective_ = report["objective"]
    est.relative_grad_norm_ = report["relative_grad_norm"]
    est._warn(report)


class DRPClassifier(ClassifierMixin, BaseEstimator):
    """Binary linear classifier by dual random projection (Zhang et al., COLT 2013, Algorithms
    1 and 2), as ``sketchlearn drp`` computes it.

    ``fit`` solves ``min_w λ/2‖w‖² + Σ_i ℓ(y_i x_iᵀw)`` with ``λ = alpha`` (LIBLINEAR's
    ``C = 1/λ`` for the logistic loss; no intercept, as in the paper) from ``size`` Gaussian
    random projections of the d features: Algorithm 1 recovers ``w̃`` from the dual solution of
    the projected problem, and each further iteration of Algorithm 2 shrinks the error
    ``‖w̃ − w*‖`` geometrically when ``size`` exceeds the data's effective rank (Theorem 5).
    The cost is one projection of the data (``O(m·nnz)``) and ``iterations`` m-dimensional
    solves, never a d-dimensional one. The later-sorted class is ``y = +1``.

    The model is the file ``sketchlearn drp -f`` writes (:meth:`save`; ``sketchlearn test -i``
    scores it); on the same rows, ``size``, ``iterations``, ``alpha`` and seed the weights are
    the CLI's, bit for bit.

    Parameters
    ----------
    size : int, default=100
        Number m of random projections (CLI ``--size``).
    loss : {"logistic", "smooth-hinge", "ridge"}, default="logistic"
        The loss ℓ of the margin ``y xᵀw`` (CLI ``--loss``; ``ridge`` is ``(1 − y xᵀw)²/2``).
    alpha : float, default=1.0
        The regularisation λ > 0 of ``λ/2‖w‖²`` (CLI ``--lambda``).
    iterations : int, default=1
        Iterations T of Algorithm 2 (CLI ``--iterations``; 1 is Algorithm 1).
    keep_going : bool, default=False
        Run all T iterations even when Algorithm 2 diverges (``size`` too small for the data);
        by default it stops and keeps the iterate before the divergence, with a
        ``ConvergenceWarning``.
    random_state : int, RandomState or None, default=None
        Seed of the Gaussian matrix R (CLI ``--seed``); ``None`` is seed 0, the CLI's default.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    coef_ : ndarray of shape (1, n_features)
        The recovered weights ``w̃``.
    intercept_ : ndarray of shape (1,)
        Zeros (problem (1) has no intercept).
    n_iter_ : int
        The iteration t of Algorithm 2 whose ``w̃`` is kept.
    status_ : str
        ``completed``, ``converged at t=…`` or ``diverged at t=…``.
    objective_ : float
        ``f(w̃)`` of the kept iterate.
    relative_grad_norm_ : float
        ``‖∇f(w̃)‖/‖∇f(0)‖``; ``‖w̃ − w*‖ ≤ ‖∇f(w̃)‖/λ`` since f is λ-strongly convex.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sketchlearn import DRPClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((500, 8)) @ rng.standard_normal((8, 2000)) / 40  # rank 8
    >>> y = np.where(X @ rng.standard_normal(2000) > 0, "yes", "no")
    >>> clf = DRPClassifier(size=100, iterations=5).fit(X, y)
    >>> clf.status_, clf.n_iter_
    ('completed', 5)
    >>> exact = LogisticRegression(C=1.0, fit_intercept=False, tol=1e-10).fit(X, y)  # C = 1/λ
    >>> bool(np.linalg.norm(clf.coef_ - exact.coef_) < 0.05 * np.linalg.norm(exact.coef_))
    True
    """

    _regression = False  # for validate_input: labels are classes

    def __init__(
        self,
        *,
        size: int = 100,
        loss: str = "logistic",
        alpha: float = 1.0,
        iterations: int = 1,
        keep_going: bool = False,
        random_state: Any = None,
    ) -> None:
        self.size = size
        self.loss = loss
        self.alpha = alpha
        self.iterations = iterations
        self.keep_going = keep_going
        self.random_state = random_state

    def fit(self, X, y):
        """Solves the problem on ``(X, y)`` (two classes). ``X``: array (float32/float64, any
        order) or SciPy sparse matrix. Returns ``self``."""
        X, y = validate_input(self, X, y, reset=True)
        check_classification_targets(y)
        classes = binary_classes(y, "DRPClassifier")
        targets = core_targets(classes, y)
        _solve(self, X, targets, self.loss, classes.tolist())
        self.classes_ = classes
        return self

    def _warn(self, report: dict) -> None:
        if report["status"].startswith("diverged"):
            warnings.warn(
                f"Algorithm 2 {report['status']}: size={self.size} is too small for the "
                f"effective rank of the data at alpha={self.alpha} (increase size or alpha); "
                f"the iterate t={report['iteration']} before it is kept",
                ConvergenceWarning,
                stacklevel=4,
            )
        for t in report["low_dim_unconverged"]:
            warnings.warn(
                f"the low-dimensional solve of iteration {t} stopped before its tolerance",
                ConvergenceWarning,
                stacklevel=4,
            )

    def decision_function(self, X) -> np.ndarray:
        """Scores ``w̃ᵀx`` (> 0 predicts ``classes_[1]``)."""
        return _scores(self, X)

    def predict(self, X) -> np.ndarray:
        """Predicted labels."""
        s = self.decision_function(X)
        return self.classes_[(s > 0).astype(int)]

    def _has_proba(self) -> bool:
        return self.loss == "logistic"

    @available_if(_has_proba)
    def predict_proba(self, X) -> np.ndarray:
        """``[1 − σ(score), σ(score)]`` (logistic loss only)."""
        p = expit(self.decision_function(X))
        return np.column_stack([1.0 - p, p])

    @property
    def coef_(self) -> np.ndarray:
        """The recovered weights, shape ``(1, n_features)``."""
        check_is_fitted(self, "learners_")
        return self.learners_.weights()

    @property
    def intercept_(self) -> np.ndarray:
        """Zeros, shape ``(1,)``: problem (1) has no intercept."""
        check_is_fitted(self, "learners_")
        return np.zeros(1)

    def save(self, path) -> None:
        """Writes the model file of ``sketchlearn drp -f`` (``sketchlearn test -i PATH`` and
        ``predict -i PATH`` read it), recording ``classes_``."""
        check_is_fitted(self, "learners_")
        self.learners_.save(str(path))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.multi_class = False
        return tags


class DRPRegressor(RegressorMixin, BaseEstimator):
    """Ridge regression by dual random projection (Zhang et al., COLT 2013, Algorithms 1 and
    2): ``min_w λ/2‖w‖² + Σ_i ½(y_i − x_iᵀw)²`` with ``λ = alpha`` (scikit-learn's
    ``Ridge(alpha, fit_intercept=False)``), solved from ``size`` Gaussian random projections;
    the recovery ``w̃ = (1/λ) Σ_i (y_i − x̂_iᵀz) x_i`` uses the projected problem's residuals
    (its dual variables), see the core's ``drp::Dataset::regression``.

    Parameters and attributes are :class:`DRPClassifier`'s without ``loss`` (always squared)
    and ``classes_``. ``save`` writes the file of ``sketchlearn drp -f``; ``sketchlearn.load``
    gives it back as a ``DRPRegressor``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Ridge
    >>> from sketchlearn import DRPRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((500, 8)) @ rng.standard_normal((8, 2000)) / 40  # rank 8
    >>> y = X @ rng.standard_normal(2000) + 0.1 * rng.standard_normal(500)
    >>> reg = DRPRegressor(size=100, iterations=10).fit(X, y)
    >>> exact = Ridge(alpha=1.0, fit_intercept=False).fit(X, y)
    >>> bool(np.linalg.norm(reg.coef_ - exact.coef_) < 0.01 * np.linalg.norm(exact.coef_))
    True
    """

    _regression = True  # for validate_input: real targets

    def __init__(
        self,
        *,
        size: int = 100,
        alpha: float = 1.0,
        iterations: int = 1,
        keep_going: bool = False,
        random_state: Any = None,
    ) -> None:
        self.size = size
        self.alpha = alpha
        self.iterations = iterations
        self.keep_going = keep_going
        self.random_state = random_state

    def fit(self, X, y):
        """Solves ridge regression on ``(X, y)`` (real targets). Returns ``self``."""
        X, y = validate_input(self, X, y, reset=True)
        _solve(self, X, y, "ridge", None)
        return self

    def predict(self, X) -> np.ndarray:
        """Predictions ``w̃ᵀx``."""
        return _scores(self, X)

    _warn = DRPClassifier._warn
    coef_ = DRPClassifier.coef_
    intercept_ = DRPClassifier.intercept_
    save = DRPClassifier.save

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
