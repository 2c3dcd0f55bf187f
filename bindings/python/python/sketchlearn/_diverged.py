"""A learning call that diverged, told once: ``sketchlearn train`` ends a run whose progressive
loss is not finite or far above a constant prediction's with ``warning: the learning pass
diverged (progressive loss …): the steps are too large for rows of this scale; …`` — the
library's rule, ``sketchlearn::run::divergence_warning``. The default mixture refuses no step on
rows such as ``±1e300`` (its members score them, their losses carry it), so this is what
tells of them. The estimators ask the core the same question
(``LinearLearners.divergence``: the rule over the progressive loss since the learners were
built, with the largest label learned) and warn through :func:`warn_diverged`, once, in the
call that made the answer yes; ``sketchlearn.dask.fit`` through :func:`warn_divergence`, once,
with its first task's text that diverged."""

from __future__ import annotations

import warnings
from contextlib import contextmanager

#: What a scikit-learn user changes (the CLI names its own flags instead).
ADVICE = (
    "scale the features (e.g. sklearn.preprocessing.StandardScaler) and look for extreme "
    "values (such as 1e300)"
)


@contextmanager
def warn_diverged(learners, stacklevel: int = 3):
    """Runs the body and warns (``RuntimeWarning``, the core's text and :data:`ADVICE`) if
    ``learners`` (a ``sketchlearn._core.LinearLearners``) diverged by the end of it and had not
    before: a ``fit`` judges its passes as ``sketchlearn train`` judges its run; a stream of
    ``partial_fit`` calls is told at the call where everything learned so far first diverged,
    not again at every later call. ``stacklevel`` counts the frames from the function
    holding the ``with`` to the user's call."""
    before = learners.divergence is not None
    yield
    if not before:
        warn_divergence(learners.divergence, stacklevel + 1)


def warn_divergence(text: str | None, stacklevel: int = 2) -> None:
    """Warns (``RuntimeWarning``) of the core's divergence ``text`` with :data:`ADVICE`, if
    any: the one wording, for :func:`warn_diverged` and for a text gathered elsewhere
    (``sketchlearn.dask``'s from its tasks); ``stacklevel`` as :func:`warnings.warn`'s, seen
    from the caller."""
    if text is not None:
        warnings.warn(f"{text}; {ADVICE}", RuntimeWarning, stacklevel=stacklevel + 1)
