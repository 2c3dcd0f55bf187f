"""Input conversion for the Rust core: NumPy arrays pass through untouched when they are
float64 or float32 (any memory order); SciPy sparse matrices become canonical CSR buffers.
No Python loop ever runs over rows."""

from __future__ import annotations

from typing import Any, Union

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import validate_data

from sketchlearn import _core

#: What ``sketchlearn._core`` accepts as a matrix: a 2-d float array or a CSR tuple.
Rows = Union[np.ndarray, tuple]


def as_rows(X: Any) -> tuple[Rows, bool]:
    """Returns ``(rows, is_sparse)`` for a validated 2-d matrix ``X``.

    Dense: the array itself when it is float64/float32, else a float64 copy. Sparse (any SciPy
    format): ``("csr", indptr int64, indices uint32, data float64, n_rows, n_cols)`` with
    sorted, distinct indices; the caller's matrix is never modified.
    """
    if sp.issparse(X):
        csr = sp.csr_matrix(X, dtype=np.float64)
        if not csr.has_canonical_format:
            csr = csr.copy()  # may share its buffers with X: never sort the caller's arrays
            csr.sum_duplicates()
        indices = csr.indices
        indices = (
            indices.view(np.uint32) if indices.dtype == np.int32 else indices.astype(np.uint32)
        )
        indptr = csr.indptr.astype(np.int64, copy=False)
        data = np.ascontiguousarray(csr.data, dtype=np.float64)
        n_rows, n_cols = csr.shape
        return ("csr", indptr, np.ascontiguousarray(indices), data, n_rows, n_cols), True
    X = np.asarray(X)
    if X.dtype not in (np.float64, np.float32):
        X = X.astype(np.float64)
    elif not X.flags.aligned:
        X = np.require(X, requirements=("A",))
    if X.ndim != 2:
        raise ValueError(f"expected a 2-d matrix, got {X.ndim} dimension(s)")
    return X, False


def _numeric(dtype: Any) -> bool:
    """A column dtype whose values are numbers: bool, int, float (nullable ones too), or a
    category whose categories are numbers."""
    categories = getattr(dtype, "categories", None)
    if categories is not None:
        dtype = categories.dtype
    return getattr(dtype, "kind", "O") in {"b", "i", "u", "f"}


_NUMBER_KINDS = {"integer", "floating", "mixed-integer-float", "decimal", "boolean"}


def _numbers_in_objects(X: Any, name: Any, dtype: Any) -> bool:
    """An object column of a pandas frame whose values are all numbers (``Decimal`` from
    ``read_sql``, ``astype(object)``): converted as scikit-learn converts it. A Dask frame's
    values are not looked at on the client (its metadata has none), so there an object column
    is refused."""
    if getattr(dtype, "kind", None) != "O" or hasattr(X, "npartitions"):
        return False
    import pandas as pd

    return pd.api.types.infer_dtype(X[name], skipna=True) in _NUMBER_KINDS


def check_numeric_columns(X: Any) -> None:
    """Refuses a pandas or Dask DataFrame with columns that are not numbers (strings, objects,
    categories, dates), naming them and saying what to do: scikit-learn's own error (``could not
    convert string to float``) names neither the column nor a remedy. Anything without
    ``dtypes`` (arrays, matrices) passes; a Dask frame is checked from its metadata, on the
    client, before any task runs. Booleans and nullable numeric dtypes are numbers."""
    dtypes = getattr(X, "dtypes", None)
    if dtypes is None or not hasattr(dtypes, "items"):
        return
    bad = [
        (name, dtype)
        for name, dtype in dtypes.items()
        if not _numeric(dtype) and not _numbers_in_objects(X, name, dtype)
    ]
    if not bad:
        return
    shown = ", ".join(f"{name!r} ({dtype})" for name, dtype in bad[:10])
    more = f" and {len(bad) - 10} more" if len(bad) > 10 else ""
    names = [name for name, _ in bad[:3]]
    raise ValueError(
        f"X has {len(bad)} column(s) that are not numbers: {shown}{more}. The estimators learn "
        f"from numbers only: encode these columns first (e.g. pd.get_dummies(X, columns="
        f"{names!r}) or sklearn.preprocessing.OneHotEncoder in a Pipeline), or drop them; "
        "`sketchlearn train` and dask.fit on CSV files one-hot encode text columns themselves"
    )


def validate_input(est, X, y: Any = "no_validation", *, reset: bool):
    """scikit-learn's ``validate_data`` as the estimators need it: float64/float32 arrays or
    CSR/CSC/COO matrices, ``y`` numeric for a regressor (``est._regression``), NaN and infinity
    left to the core, which names the first non-finite row. A DataFrame's columns must be
    numbers (:func:`check_numeric_columns`)."""
    check_numeric_columns(X)
    kw = dict(
        accept_sparse=("csr", "csc", "coo"),
        dtype=(np.float64, np.float32),
        ensure_all_finite=False,
        reset=reset,
    )
    if isinstance(y, str) and y == "no_validation":
        return validate_data(est, X, **kw)
    return validate_data(est, X, y, y_numeric=est._regression, **kw)


def as_targets(y: Any) -> np.ndarray:
    """A contiguous, aligned float64 copy-if-needed of a 1-d target vector (arrays received
    from another process, e.g. a Dask worker's, may sit at unaligned addresses)."""
    return np.require(y, dtype=np.float64, requirements=("C", "A"))


def core_targets(classes: Any, y: Any) -> np.ndarray:
    """The learner's targets of the labels ``y`` for a classifier of ``classes`` (in their
    order): ``-1/+1`` for two classes (the second positive), the class index ``0..K`` for more.
    Mapped by the core's one label map, as ``sketchlearn train`` maps a file's labels; a label
    that is not a class is a ``ValueError`` naming the row, the label and the classes."""
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"expected 1-d labels, got shape {y.shape}")
    if y.dtype.kind in "biuf":
        y = as_targets(y)
    return _core.label_targets(np.asarray(classes).tolist(), y)


def seed_of(random_state: Any) -> int:
    """The core's 64-bit seed of a scikit-learn ``random_state``: ``None`` is 0 (the CLI's
    default, so that results are reproducible and equal the CLI's), an int is itself, a
    ``RandomState`` draws one."""
    if random_state is None:
        return 0
    if isinstance(random_state, (int, np.integer)):
        if random_state < 0:
            raise ValueError(f"random_state must be >= 0, got {random_state}")
        return int(random_state)
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(np.iinfo(np.int32).max))
    raise ValueError(f"random_state must be None, an int or a RandomState, got {random_state!r}")


def binary_classes(y: Any, name: str) -> np.ndarray:
    """``np.unique(y)`` for an estimator ``name`` of two classes: one class or more than two
    is a ``ValueError`` in scikit-learn's words."""
    classes = np.unique(y)
    if len(classes) < 2:
        raise ValueError(
            f"{name} needs samples of at least 2 classes in the data, but the data contains "
            f"only one class: {classes!r}"
        )
    if len(classes) > 2:
        raise ValueError(
            f"Only binary classification is supported. The type of the target is multiclass "
            f"({len(classes)} classes); use OnlineClassifier for more classes."
        )
    return classes
