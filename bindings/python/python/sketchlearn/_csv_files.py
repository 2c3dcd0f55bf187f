"""CSV files as an estimator's input (``partial_fit_file`` on a new estimator,
``sketchlearn.dask.fit`` on a list of files): which paths are CSV, and the one scan of them
(``_core.scan_csv_files``) that gives the schema every file is read through, the classes and
the scan's warnings (``scan.warnings``, ``scan.case_warning``), and the format files are read
as (``format`` and pandas' ``sep=``, :func:`file_format`)."""

from __future__ import annotations

import numpy as np

from sketchlearn import _core


def file_format(fmt: str, sep) -> str:
    """The format files are read as, from ``format`` and ``sep`` (pandas' name: ``","`` or
    ``"\\t"`` makes a file CSV separated by it whatever its name; ``None``: ``format`` alone,
    ``"auto"`` going by each file's name): ``_core.file_format``, the one validation of both
    (a ``ValueError`` names what is allowed), with the library's formats and separators."""
    return _core.file_format(fmt, sep)


def is_csv(path: str, fmt: str) -> bool:
    """Whether ``path`` is read as CSV with ``fmt`` (a :func:`file_format`): ``"csv"`` or
    ``"tsv"``, or (``"auto"``) a ``.csv`` or ``.tsv`` name, ``.gz`` looked through (the
    library's ``Format::resolve``, through ``_core.reads_as_csv``)."""
    return _core.reads_as_csv(path, fmt)


def csv_scan(estimator, paths: list, options: dict, classes) -> tuple:
    """The scan of the CSV files ``paths`` (one scan of all of them, in order; ``options``:
    ``_core.scan_csv_files``'s, with the :func:`file_format` as ``format``) and the classes:
    ``classes`` if given, else the labels found (a classifier needs a label column; a
    regressor's labels are numbers). The scan's warnings are ``scan.warnings`` and
    ``scan.case_warning``."""
    scan = _core.scan_csv_files(list(paths), **options)
    if not scan.has_labels:
        raise ValueError(
            f"{paths[0]}: the CSV files have no label column to learn from: give "
            "label_column (a column name or 0-based position; default: the column 'label')"
        )
    if estimator._regression or classes is not None:
        return scan, classes
    return scan, np.asarray(scan.labels)
