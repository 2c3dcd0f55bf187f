"""One model world: :func:`load` reads the model files of ``sketchlearn train -f`` (and of
:meth:`OnlineClassifier.save`) into a fitted scikit-learn estimator."""

from __future__ import annotations

import os

import numpy as np

from sketchlearn import _core


def load(path: str | os.PathLike):
    """Reads a model file of ``sketchlearn train -f`` (binary, regression or ``--multiclass``)
    into a fitted estimator.

    A model with the squared loss becomes an :class:`~sketchlearn.OnlineRegressor`; any
    other an :class:`~sketchlearn.OnlineClassifier` whose ``classes_`` are the labels the file
    records (numbers as ints when integral, names as strings; a file of unnamed ±1 labels,
    format 5 or older, gives ``[-1, 1]``); a ``--multiclass`` model keeps its ``reduction``.
    Its hyper-parameters become the estimator's parameters, its full state (weights and
    sketch) the fitted learner, so that ``partial_fit`` resumes training bit for bit as
    ``sketchlearn train -i`` does.
    """
    from sketchlearn.sklearn import OnlineClassifier, OnlineRegressor

    learners = _core.LinearLearners.load(os.fspath(path))
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
