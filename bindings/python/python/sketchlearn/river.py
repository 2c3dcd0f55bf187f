"""River estimators: :class:`Classifier` (binary) and :class:`Regressor`, learning one dict
at a time with the Rust learners of ``sketchlearn train``.

Feature names are hashed as Vowpal Wabbit hashes ``| name:value`` (default namespace) into
``2**bits`` weights, so a model trained by ``sketchlearn train -b BITS`` on a VW file scores
the same features here; a string value ``v`` of feature ``f`` is the indicator ``f=v``. The
dictionary is hashed in Rust (no Python loop over features), and the learners are the
sparse-time ones (O(m² + m·nnz) per example, independent of ``2**bits``).

The classifier's default (``algo=None``) is ``"auto-sparse"``: the default's composition for
sparse data (FD-SON + diag and the AdaGrad grid, ``LearnerConfig::sparse_data_members``), not
the four members of ``"auto"``. ``sketchlearn train`` chooses the members by the first 1000
rows of its input (``linear/data_sparsity.rs``); a River stream has no rows ahead, and the two
RFD-SON members are ≈ 10 of the ≈ 16 µs the core spends on an a9a dict (in
``progressive_val_score``: ``"auto"`` 0.28× River's ``LogisticRegression()`` rate, error 0.1543;
``"auto-sparse"`` 0.55×, error 0.1587; River 0.1594 — ``docs/results/python.md``, 2026-11-26).
``algo="auto"`` keeps all four. The regressor's default is ``"auto"`` (the two-member
composition is a classifier's). The CLI trains the default's learner on the same dicts as a VW
file with ``sketchlearn train -b BITS --algo auto-sparse``.

``learn_one`` warns of refused steps (as ``partial_fit`` does) but does not check divergence:
the core's rule judges a run's whole progressive loss, and judged after every example it would
call a stream's first confident mistakes a divergence; and the check (``_diverged.warn_diverged``
around each call) costs ≈ 2.4 µs an example on its own, against ≈ 19 µs for the whole call
(``scripts/river_divergence_cost.py``: a9a's first 8,000 dicts, ``Classifier()``; docs/results/
robustness.md, branch tidy20). The learners' progressive loss is still counted:
``_learners.divergence`` gives the rule's answer on demand.
"""

from __future__ import annotations

import math
import os

from river import base

from sketchlearn import _core
from sketchlearn._base import core_params
from sketchlearn._refused import warn_refused


class _RiverLinear:
    """Shared parameters and the lazily built Rust learner."""

    _regression = False
    # The algorithm of ``algo=None`` without a curvature or diag (None: the core's default).
    _default_algo: str | None = None

    def __init__(
        self,
        algo: str | None = None,
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
        self._learners = _core.LinearLearners(
            self._core_params(), 1 << self.bits, hashed=True, regression=self._regression
        )
        return self._learners

    def _core_params(self) -> dict:
        """The parameters ``sketchlearn._core.LinearLearners`` builds the learner from:
        ``algo=None`` is the estimator's default — unless a curvature or diag is given, which
        (as on the command line) names one Newton learner, or the loss is squared (the core's
        ``auto-sparse`` is a classification loss's composition; ``auto`` then)."""
        params = core_params(self, self.seed)
        chosen = self.algo is not None or self.curvature is not None or self.diag
        if not chosen and self.loss != "squared":
            params["algo"] = self._default_algo
        return params

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


def _binary_target(y) -> float:
    """The learner's ±1 target of a River binary label: ``True``/``1``/``+1`` positive,
    ``False``/``0``/``-1`` negative (River's ``optim.losses`` convention: 0 is read as -1).
    Truthiness is not used: ``-1`` and a name such as ``"no"`` are truthy, and would have been
    learned as the positive class."""
    try:
        value = float(y)
    except (TypeError, ValueError):
        value = math.nan
    if value == 1.0:
        return 1.0
    if value in (0.0, -1.0):
        return -1.0
    raise ValueError(
        f"label {y!r}: Classifier is binary and learns the labels True/False, 1/0 or +1/-1 "
        "(map other labels first, e.g. y == 'yes')"
    )


class Classifier(_RiverLinear, base.Classifier):
    """Binary online classifier for River (logistic loss by default).

    ``learn_one(x, y)`` takes a dict and a binary label (``True``, ``1`` or ``+1`` is the
    positive class; ``False``, ``0`` or ``-1`` the negative one);
    ``predict_proba_one`` returns ``{False: 1 − p, True: p}`` with ``p = σ(wᵀx)`` and
    ``predict_one`` ``True``/``False`` whatever the labels learned (as River's own
    ``LogisticRegression`` does): a metric that compares them with ``-1``/``+1`` labels needs
    the labels mapped first (``y == 1``). Parameters
    are :class:`sketchlearn.OnlineClassifier`'s, plus ``bits`` (hashed features ``2**bits``,
    VW's ``-b``) and ``seed``; ``algo=None`` is ``"auto-sparse"`` (the module's docs say why;
    ``algo="auto"`` mixes all four members of the default).
    """

    _default_algo = "auto-sparse"

    def learn_one(self, x: dict, y) -> None:
        """Learns one example (``y``: a bool, ``0``/``1`` or ``-1``/``+1``, as River's
        binary losses read them; anything else is a ``ValueError``)."""
        target = _binary_target(y)
        learners = self._learners if self._learners is not None else self._build()
        with warn_refused(learners):
            learners.learn_one(x, target)

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
    :class:`Classifier`; ``algo=None`` is ``"auto"``."""

    _regression = True

    def learn_one(self, x: dict, y: float) -> None:
        """Learns one example."""
        learners = self._learners if self._learners is not None else self._build()
        with warn_refused(learners):
            learners.learn_one(x, float(y))

    def predict_one(self, x: dict) -> float:
        """The prediction ``wᵀx``."""
        return self._score(x)
