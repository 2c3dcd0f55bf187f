"""Steps the core refused, told once: a row whose step would make the weights non-finite (values
such as ``±1e300``, whose squares overflow) is scored but not learned (the core's refused-step
policy, ``sketchlearn::run::learn_or_refuse``), and ``sketchlearn train`` ends with ``warning: N
steps refused (they would have made weights non-finite)``. The estimators and River models give
the same warning through :func:`warn_refused`, and ``sketchlearn.dask.fit`` the total over its
tasks through :func:`warn_refused_count`; :func:`refused_message` is the one place that words
it."""

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
    warn_refused_count(learner.refused_steps - before, stacklevel + 1, made)


def warn_refused_count(n: int, stacklevel: int = 2, made: str = "weights") -> None:
    """Warns (``RuntimeWarning``) of ``n`` refused steps, if any: for counts gathered
    elsewhere, such as ``sketchlearn.dask``'s over its tasks; ``stacklevel`` as
    :func:`warnings.warn`'s, seen from the caller (2: the line that called the caller)."""
    if n > 0:
        warnings.warn(refused_message(n, made), RuntimeWarning, stacklevel=stacklevel + 1)
