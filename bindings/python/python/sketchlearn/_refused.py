"""Steps the core refused, told once: a row whose step would make the weights non-finite (values
such as ``±1e300``, whose squares overflow) is scored but not learned (the core's refused-step
policy, ``sketchlearn::run::learn_or_refuse``), and ``sketchlearn train`` ends with ``warning: N
steps refused (they would have made weights non-finite)``. The estimators and River models give
the same warning through :func:`warn_refused`, the one place that words it."""

from __future__ import annotations

import warnings
from contextlib import contextmanager


def refused_message(n: int, made: str = "weights") -> str:
    """The CLI's warning for ``n`` refused steps (``made``: what they would have made
    non-finite, ``"the model"`` for a factorization machine), with what to do about it."""
    steps = "step" if n == 1 else "steps"
    return (
        f"{n} {steps} refused (they would have made {made} non-finite): those rows were not "
        "learned; their values are too large (e.g. 1e300) — scale the features"
    )


@contextmanager
def warn_refused(learner, stacklevel: int = 3, made: str = "weights"):
    """Runs the body and warns (``RuntimeWarning``, once for the call) if ``learner`` (a core
    learner with a ``refused_steps`` counter) refused steps meanwhile; ``stacklevel`` counts
    the frames from the function holding the ``with`` to the user's call."""
    before = learner.refused_steps
    yield
    refused = learner.refused_steps - before
    if refused > 0:
        warnings.warn(refused_message(refused, made), RuntimeWarning, stacklevel=stacklevel + 1)
