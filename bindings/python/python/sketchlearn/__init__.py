"""sketchlearn: second-order online learning with streaming matrix sketches.

Estimators for scikit-learn (:class:`OnlineClassifier`, :class:`OnlineRegressor`, the
factorization machines :class:`FMClassifier` and :class:`FMRegressor`, the batch
:class:`DRPClassifier` by dual random projection), a streaming
covariance sketch (:class:`FrequentDirections`), River estimators (:mod:`sketchlearn.river`)
and :func:`load`, which reads model files written by ``sketchlearn train -f`` or
:meth:`OnlineClassifier.save`. :class:`DataWarning` is what they warn of the data with (as
``sketchlearn train``'s ``warning:`` lines).
"""

from sketchlearn._core import MODEL_FORMAT_VERSION, __version__
from sketchlearn._data_warnings import DataWarning
from sketchlearn._model_files import load
from sketchlearn.drp import DRPClassifier, DRPRegressor
from sketchlearn.fm import FMClassifier, FMRegressor
from sketchlearn.sketch import FrequentDirections
from sketchlearn.sklearn import OnlineClassifier, OnlineRegressor, expected_failed_checks

__all__ = [
    "MODEL_FORMAT_VERSION",
    "DRPClassifier",
    "DataWarning",
    "DRPRegressor",
    "FMClassifier",
    "FMRegressor",
    "FrequentDirections",
    "OnlineClassifier",
    "OnlineRegressor",
    "__version__",
    "expected_failed_checks",
    "load",
]
