"""Warnings about the data an estimator learns from, as ``sketchlearn train`` gives them on
stderr (``warning: ...``): :class:`DataWarning`.

- Classes that differ only by case (``yes`` and ``Yes``) are learned as two classes, since
  labels are compared exactly: :func:`case_warning` finds them by the library's rule
  (``sketchlearn::labels::differ_only_by_case``, through ``_core.case_twins``), for the labels
  a fit finds (``fit``'s ``y``, ``partial_fit``'s ``classes=``, ``sketchlearn.dask``'s
  classes); the labels of CSV files are judged by the library's scan of them, which words the
  warning with the file, line and column where each spelling first appears
  (``_core.CsvScan.case_warning``, once for all the files of a fit).
- A CSV column of numbers with other values among them is read as strings, every distinct
  number a category of its own: the library's scan words the warning
  (``_core.CsvScan.warnings``), once for all the files of a fit.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import Any

import numpy as np

from sketchlearn import _core


class DataWarning(UserWarning):
    """A warning about the data learned from (classes that differ only by case, a CSV column of
    numbers read as strings): what ``sketchlearn train`` prints as ``warning: ...`` on the same
    data. The fit goes on; ``warnings.simplefilter("error", DataWarning)`` makes it an
    error."""


def case_warning(labels: Any, rows: Any = None, where: str = "") -> str | None:
    """The warning for the first two of the distinct ``labels`` that differ only by case (the
    library's rule, ``_core.case_twins``), or ``None``: ``rows`` is the row where each first
    appears (``numpy.unique(y, return_index=True)``), ``None`` when not known (a list of
    classes, a CSV scan's sorted labels); ``where`` is said after the two names."""
    labels = list(labels)
    at = range(len(labels)) if rows is None else rows
    twins = _core.case_twins(labels, [int(r) for r in at])
    if twins is None:
        return None
    (first, first_row), (second, second_row) = twins
    if rows is None:
        named = f"{first} and {second}"
    else:
        named = f"{first} (first at row {first_row}) and {second} (first at row {second_row})"
    return (
        f"the labels {named}{where} differ only by case: they are learned as two classes, "
        "since labels are compared exactly (if they name one class, make their case uniform "
        "before fitting)"
    )


def labels_case_warning(y: Any) -> str | None:
    """:func:`case_warning` of a label vector ``y`` (its rows named), ``None`` at once for
    numbers: only names have a case."""
    y = np.asarray(y)
    if y.dtype.kind not in "UO" or y.size == 0:
        return None
    labels, rows = np.unique(y, return_index=True)
    return case_warning(labels.tolist(), rows.tolist())


def warn_data(messages: Iterable[str | None], stacklevel: int = 2) -> None:
    """Warns (:class:`DataWarning`) of each message that is not ``None``; ``stacklevel`` as
    :func:`warnings.warn`'s, seen from the caller (2: the line that called the caller)."""
    for message in messages:
        if message is not None:
            warnings.warn(message, DataWarning, stacklevel=stacklevel + 1)
