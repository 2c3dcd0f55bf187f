"""River estimators: :class:`Classifier` (binary) and :class:`Regressor`, learning one dict
at a time with the Rust learners of ``sketchlearn train``.

Feature names are hashed as Vowpal Wabbit hashes ``| name:value`` (default namespace) into
``2**bits`` weights, so a model trained by ``sketchlearn train -b BITS`` on a VW file scores
the same features here; a string value ``v`` of feature ``f`` is the indicator ``f=v``. The
dictionary is hashed in Rust (no Python loop over features), and the learners are the
sparse-time ones (O(m² + m·nnz) per example, independent of ``2**bits``).
"""

from __future__ import annotations

import math
import os

from river import base

from sketchlearn import _core
from sketchlearn._base import core_params


class _RiverLinear:
    """Shared parameters and the lazily built Rust learner."""

    _regression = False

    def __init__(
        self,
        algo: str = "auto",
        curvature: str | None = None,
        size: int = 10,
        loss: str | None = None,
        diag: bool = False,
        learning_rate: float | None = None,
        alpha: float | None = None,
        alpha0: float | None = None,
        c: float | None = None,
        clip: float | None = None,
        fit_intercept: bool = True,
        bits: int = 18,
        seed: int | None = None,
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
        self.fit_intercept = fit_intercept
        self.bits = bits
        self.seed = seed
        self._learners = None

    def _build(self):
        if not 1 <= self.bits <= 30:
            raise ValueError(f"bits must be between 1 and 30, got {self.bits}")
        params = core_params(self, self.seed)
        self._learners = _core.LinearLearners(
            params, 1 << self.bits, hashed=True, regression=self._regression
        )
        return self._learners

    def _score(self, x: dict) -> float:
        if self._learners is None:
            return 0.0
        return self._learners.predict_one(x)

    def save(self, path: str | os.PathLike) -> None:
        """Writes the CLI's model file (``sketchlearn test -i PATH -b BITS file.vw`` reads it)."""
        learners = self._learners if self._learners is not None else self._build()
        learners.save(os.fspath(path))

    @classmethod
    def _unit_test_params(cls):
        yield {"bits": 12}
        yield {"algo": "adagrad", "bits": 10}


class Classifier(_RiverLinear, base.Classifier):
    """Binary online classifier for River (logistic loss by default).

    ``learn_one(x, y)`` takes a dict and a boolean label (True is the positive class);
    ``predict_proba_one`` returns ``{False: 1 − p, True: p}`` with ``p = σ(wᵀx)``. Parameters
    are :class:`sketchlearn.OnlineClassifier`'s, plus ``bits`` (hashed features ``2**bits``,
    VW's ``-b``) and ``seed``.
    """

    def learn_one(self, x: dict, y) -> None:
        """Learns one example (``y``: bool, or a truthy/falsy label)."""
        learners = self._learners if self._learners is not None else self._build()
        learners.learn_one(x, 1.0 if y else -1.0)

    def predict_proba_one(self, x: dict) -> dict:
        """``{False: 1 − p, True: p}``."""
        s = self._score(x)
        if self.loss not in (None, "logistic"):
            p = 1.0 if s > 0 else 0.0
        else:
            p = 1.0 / (1.0 + math.exp(-s)) if s >= 0 else math.exp(s) / (1.0 + math.exp(s))
        return {False: 1.0 - p, True: p}

    def predict_one(self, x: dict) -> bool:
        """True when the score is > 0."""
        return self._score(x) > 0.0

    @property
    def _multiclass(self) -> bool:
        return False


class Regressor(_RiverLinear, base.Regressor):
    """Online regressor for River (squared loss ½(p − y)²). Parameters as
    :class:`Classifier`."""

    _regression = True

    def learn_one(self, x: dict, y: float) -> None:
        """Learns one example."""
        learners = self._learners if self._learners is not None else self._build()
        learners.learn_one(x, float(y))

    def predict_one(self, x: dict) -> float:
        """The prediction ``wᵀx``."""
        return self._score(x)
