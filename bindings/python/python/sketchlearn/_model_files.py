"""One model world: :func:`load` reads the model files of ``sketchlearn train -f`` (and of
:meth:`OnlineClassifier.save`) into a fitted scikit-learn estimator."""

from __future__ import annotations

import os
import re

import numpy as np

from sketchlearn import _core


def load(path: str | os.PathLike):
    """Reads a model file of ``sketchlearn train -f`` (binary, regression or ``--multiclass``)
    into a fitted estimator.

    A model with the squared loss becomes an :class:`~sketchlearn.OnlineRegressor`; any
    other an :class:`~sketchlearn.OnlineClassifier` whose ``classes_`` are the labels the file
    records (numbers as ints when integral, names as strings; a file of unnamed ±1 labels,
    format 5 or older, gives ``[-1, 1]``); a ``--multiclass`` model keeps its ``reduction``.
    A factorization machine (``sketchlearn fm -f`` on LIBSVM rows, or
    :meth:`FMClassifier.save`) becomes an :class:`~sketchlearn.FMRegressor` or a binary
    :class:`~sketchlearn.FMClassifier` with ``classes_ = [-1, 1]``.
    Its hyper-parameters become the estimator's parameters, its full state (weights and
    sketch) the fitted learner, so that ``partial_fit`` resumes training bit for bit as
    ``sketchlearn train -i`` does.
    """
    from sketchlearn.sklearn import OnlineClassifier, OnlineRegressor

    if _core.model_kind(os.fspath(path)) == "fm-learner":
        return _load_fm(path)
    learners = _core.LinearLearners.load(os.fspath(path))
    if learners.fixed_description is not None:
        return _load_drp(learners)
    params = learners.params()
    seed = params.pop("seed")
    curvature = params["curvature"]
    if curvature.endswith("-sparse"):
        params["curvature"] = curvature[: -len("-sparse")].replace("fd", "fd-fast")
        sparse = True
    else:
        sparse = False
    regression = params["loss"] == "squared"
    cls = OnlineRegressor if regression else OnlineClassifier
    est = cls(**params, sparse=sparse, random_state=seed)
    est.learners_ = learners
    est.n_features_in_ = learners.dim
    if not regression:
        classes = learners.classes()
        est.classes_ = np.array([-1, 1] if classes is None else _label_array(classes))
    return est


def _label_array(labels: list) -> np.ndarray:
    """Labels as NumPy holds them: one dtype when they share a type, else objects."""
    if len({type(v) for v in labels}) == 1:
        return np.array(labels)
    return np.array(labels, dtype=object)


def _load_fm(path):
    """A factorization machine model file as a fitted FM estimator."""
    from sketchlearn.fm import FMClassifier, FMRegressor

    fm = _core.FmLearner.load(os.fspath(path))
    params = fm.params()
    seed = params.pop("seed")
    regression = params["loss"] == "squared"
    est = (FMRegressor if regression else FMClassifier)(**params, random_state=seed)
    est.fm_ = fm
    est.n_features_in_ = fm.dim
    if not regression:
        est.classes_ = np.array([-1, 1])
    return est


#: The description ``drp::recovered_model`` gives a recovered model (core, one format).
_DRP_DESCRIPTION = re.compile(
    r"^drp (?P<loss>\S+) lambda=(?P<alpha>\S+) m=(?P<size>\d+) T=(?P<iterations>\d+) "
    r"seed=(?P<seed>\d+) \(Alg\.2 iterate t=(?P<t>\d+)\)$"
)


def _load_drp(learners):
    """A fixed-weights model file of dual random projection as a fitted DRPClassifier, or a
    DRPRegressor for the ridge loss without recorded classes."""
    from sketchlearn.drp import DRPClassifier, DRPRegressor

    match = _DRP_DESCRIPTION.match(learners.fixed_description)
    if match is None:
        raise ValueError(
            f"a model of fixed weights that is not a dual random projection: "
            f"{learners.fixed_description!r}"
        )
    params = {
        "size": int(match["size"]),
        "alpha": float(match["alpha"]),
        "iterations": int(match["iterations"]),
        "random_state": int(match["seed"]),
    }
    classes = learners.classes()
    regression = classes is None and match["loss"] == "ridge"
    est = DRPRegressor(**params) if regression else DRPClassifier(loss=match["loss"], **params)
    est.learners_ = learners
    est.n_features_in_ = learners.dim
    est.n_iter_ = int(match["t"])
    if regression:
        return est
    est.classes_ = np.array([-1, 1] if classes is None else _label_array(classes))
    return est
