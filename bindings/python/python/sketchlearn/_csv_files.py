"""CSV files as an estimator's input (``partial_fit_file`` on a new estimator,
``sketchlearn.dask.fit`` on a list of files): which paths are CSV, and the one scan of them
(``_core.scan_csv_files``) that gives the schema every file is read through, the classes and
the scan's warnings (``scan.warnings``)."""

from __future__ import annotations

import numpy as np

from sketchlearn import _core


def is_csv(path: str, fmt: str) -> bool:
    """Whether ``path`` is read as CSV: ``format="csv"``, or (``"auto"``) a ``.csv`` or
    ``.tsv`` name, ``.gz`` looked through (the library's ``Format::resolve``; a ``.tsv`` file
    is separated by tabs)."""
    if fmt != "auto":
        return fmt == "csv"
    name = path[:-3] if path.endswith(".gz") else path
    return name.endswith((".csv", ".tsv"))


def csv_scan(estimator, paths: list, options: dict, classes) -> tuple:
    """The scan of the CSV files ``paths`` (one scan of all of them, in order) and the
    classes: ``classes`` if given, else the labels found (a classifier needs a label column; a
    regressor's labels are numbers). The scan's warnings are ``scan.warnings``."""
    scan = _core.scan_csv_files(list(paths), **options)
    if not scan.has_labels:
        raise ValueError(
            f"{paths[0]}: the CSV files have no label column to learn from: give "
            "label_column (a column name or 0-based position; default: the column 'label')"
        )
    if estimator._regression or classes is not None:
        return scan, classes
    return scan, np.asarray(scan.labels)
