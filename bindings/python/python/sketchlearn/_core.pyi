"""Type stubs of the compiled ``sketchlearn._core`` module (the Rust binding)."""

from collections.abc import Sequence
from os import PathLike
from typing import Any

import numpy as np
import numpy.typing as npt

#: A 2-d float64/float32 array or ``("csr", indptr, indices, data, n_rows, n_cols)``.
Rows = npt.NDArray[np.floating] | tuple
ProgressRow = tuple[float, float, int, float, float, float, int]

MODEL_FORMAT_VERSION: int
__version__: str

class LinearLearners:
    """One core model: binary, regression, or multiclass (one-against-all or softmax)."""

    def __init__(
        self,
        params: dict,
        dim: int,
        classes: list | None = None,
        *,
        reduction: str = "oaa",
        hashed: bool = False,
        avg_nnz: float | None = None,
        sparse: bool | None = None,
        regression: bool = False,
        first_rows: tuple[int, int, int] | None = None,
        csv: CsvScan | None = None,
    ) -> None: ...
    def learn(
        self,
        x: Rows,
        y: npt.NDArray[np.float64],
        sample_weight: npt.NDArray[np.float64] | None = None,
        progress: bool = False,
        threads: int | None = None,
    ) -> list[ProgressRow]:
        """Learns every row in order (GIL released); progress rows when asked
        (``threads=1``: on the calling thread alone, the same results)."""
    def final_progress(self) -> ProgressRow | None:
        """The closing progress row."""
    def decision_function(self, x: Rows) -> npt.NDArray[np.float64]:
        """Raw scores ``(n, 1)`` or ``(n, K)``."""
    def predict_proba(self, x: Rows) -> npt.NDArray[np.float64]:
        """A multiclass model's class probabilities ``(n, K)``."""
    def classes(self) -> list | None:
        """The classes the model records (``None``: regression or unnamed ±1)."""
    def learn_one(self, x: dict, y: float, weight: float = 1.0) -> float:
        """Learns one hashed dictionary; returns the score before the update."""
    def predict_one(self, x: dict) -> float:
        """The score of one hashed dictionary."""
    def weights(self) -> npt.NDArray[np.float64]:
        """Weights ``(K, d [+ 1 intercept])``."""
    def params(self) -> dict:
        """Hyper-parameters as estimator parameters."""
    def merge(self, other: LinearLearners, base: LinearLearners | None = None) -> None:
        """Iterative parameter mixing of ``other`` into these learners (over ``base``)."""
    def merge_in_place(self, other: LinearLearners, base: LinearLearners | None = None) -> None:
        """``merge`` with no copy of this state: a refused merge leaves it unchanged; only a
        numerical failure of a sketch's decomposition can leave it part-merged (drop it)."""
    def merged(self, other: LinearLearners, base: LinearLearners | None = None) -> LinearLearners:
        """``merge`` into new learners, these unchanged."""
    def sketch_error_bound(self) -> float | None:
        """Largest total shrinkage ``Σδ`` of the FD/RFD curvature sketches (FD's error bound).

        FD's spectral error bound ``‖GᵀG − BᵀB‖₂ ≤ Σδ`` for the rows ``G`` a sketch received:
        the model's sketch (binary), the members' (one-against-all), or the one feature-side
        sketch shared by the ``K`` classes (softmax, rows ``√(c·ω)·x̃``). ``None`` when there is
        no FD/RFD sketch: RP and Oja sketches (and first-order learners) do not shrink, so no
        such bound is defined.
        """
    def learn_file(
        self,
        path: str,
        format: str = "auto",
        zero_based: bool = False,
        threads: int | None = None,
    ) -> tuple[int, float, float | None]:
        """One pass over a LIBSVM/VW/CSV file with the Rust reader (``threads=1``: on the
        calling thread alone, the same results)."""
    def learned_file(
        self,
        path: str,
        format: str = "auto",
        zero_based: bool = False,
        threads: int | None = None,
    ) -> LinearLearners:
        """``learn_file`` into new learners, these unchanged (one copy of the state)."""
    def learned_files(
        self,
        paths: Sequence[str | PathLike],
        format: str = "auto",
        zero_based: bool = False,
        threads: int | None = None,
    ) -> LinearLearners:
        """``learn_file`` over each path in turn into new learners, these unchanged (one copy
        of the state for all the files)."""
    def delta_from(self, base: LinearLearners) -> bytes:
        """This state's delta against ``base`` (the features that differ from it)."""
    def forget_retired(self, base: LinearLearners, members: list[tuple[int, int]]) -> None:
        """``base``'s learner put back for each ``(mixture, member)`` of ``members`` (retired
        here; numbered as ``retired_members``): the same predictions and later learning, bit
        for bit; only their states differ."""
    @staticmethod
    def patched(base: LinearLearners, delta: bytes) -> LinearLearners:
        """The state whose ``delta_from(base)`` is ``delta``, bit for bit."""
    def progressive(self) -> tuple[int, float, float | None]:
        """``(examples, mean loss, error rate)`` of progressive validation."""
    def to_bytes(self) -> bytes:
        """The model as model-file bytes."""
    def state_bytes(self) -> bytes:
        """The learner state (no input format; no binary classes) as model-file bytes."""
    @staticmethod
    def from_bytes(state: bytes) -> LinearLearners:
        """Inverse of :meth:`to_bytes`."""
    def save(self, path: str | PathLike) -> None:
        """Writes the CLI's model file."""
    @staticmethod
    def load(path: str | PathLike) -> LinearLearners:
        """Reads the CLI's model file."""
    @property
    def dim(self) -> int: ...
    @property
    def n_scores(self) -> int: ...
    @property
    def examples_seen(self) -> int: ...
    @property
    def refused_steps(self) -> int: ...
    @property
    def divergence(self) -> str | None:
        """The core's divergence warning for the learning since this object was built."""
    @property
    def sparse(self) -> bool: ...
    @property
    def description(self) -> str: ...
    @property
    def fixed_description(self) -> str | None: ...
    @property
    def retire(self) -> float | None:
        """The mixture's retirement threshold ε (``None``: no mixture)."""
    @property
    def retired_at(self) -> list[float | None] | None:
        """Per mixture member: the weight seen when it retired, ``None`` while it learns."""
    @property
    def retired_members(self) -> list[tuple[int, int]]:
        """``(mixture, member)`` of every retired member: mixture 0 of a binary or regression
        model, mixture ``c`` for class ``c`` of a one-against-all model."""

def scan_file(
    path: str | PathLike,
    format: str = "auto",
    zero_based: bool = False,
    *,
    labels: bool = True,
    threads: int | None = None,
) -> tuple[list[float], int, int, bool, tuple[int, int, int] | None]:
    """The walk over a LIBSVM/VW file before learning, values passed over: (distinct labels
    (empty unless ``labels``), rows, stored features (LIBSVM: every row; VW: the first
    rows), hashed, first rows' (rows, stored features, distinct features)). ``threads=1``:
    on the calling thread alone."""

class CsvScan:
    """The schema of a list of CSV files and what its scan found (an opaque object for
    ``LinearLearners(csv=...)``)."""

    @property
    def dim(self) -> int: ...
    @property
    def rows(self) -> int: ...
    @property
    def labels(self) -> list: ...
    @property
    def has_labels(self) -> bool: ...
    @property
    def warnings(self) -> list[str]: ...
    @property
    def case_warning(self) -> str | None: ...

def scan_csv_files(
    paths: list[str],
    *,
    format: str = "auto",
    has_header: bool | None = None,
    label_column: str | int | None = None,
    ignore_columns: list[str | int] = ...,
    max_categories: int = 64,
    hash_bits: int = 10,
) -> CsvScan:
    """One scan of the CSV files ``paths`` as one input, in order, GIL released: the schema
    (the CLI's ``--header``/``--no-header``, ``--label-column``, ``--ignore-columns``,
    ``--max-categories``, ``--hash-bits``), the labels and the warnings (columns of numbers
    read as strings; ``case_warning``: labels that differ only by case, each where it first
    appears). ``format``: a :func:`file_format` (``"csv"`` commas, ``"tsv"`` tabs, ``"auto"``
    each file by its name). Errors name file, line and column."""

def file_format(format: str = "auto", sep: str | None = None) -> str:
    """The format files are read as: ``format``, or with ``sep`` (``","`` or ``"\\t"``) the
    CSV format of that separator whatever the file's name; a ``ValueError`` names the allowed
    values."""

def reads_as_csv(path: str | PathLike, format: str = "auto") -> bool:
    """Whether ``path`` is read as CSV with ``format`` (``"auto"``: a ``.csv``/``.tsv`` name,
    ``.gz`` looked through)."""

def resolved_format(path: str | PathLike, format: str = "auto") -> str:
    """The format ``path`` is read as with ``format`` (``"auto"``: by the name, ``.vw``,
    ``.csv``, ``.tsv``, else ``"libsvm"``, ``.gz`` looked through)."""

def model_kind(path: str | PathLike) -> str:
    """The kind tag of a model file (``linear-learner``, ``multiclass-learner``, ``fm-learner``)."""

def label_targets(
    classes: list, y: npt.NDArray[np.float64] | Sequence[Any]
) -> npt.NDArray[np.float64]:
    """The learner's targets of labels ``y`` for ``classes`` in their order, by the core's label
    map: ``-1/+1`` for two classes (the second positive), the class index for more; a label that
    is not a class is a ``ValueError`` naming its row (and a class that differs from it only by
    case)."""

def case_twins(labels: list, rows: list[int]) -> tuple[tuple[str, int], tuple[str, int]] | None:
    """The first two names among the distinct ``labels`` (first seen at ``rows``) that differ
    only by case, each with its first row, in the order they first appear (the library's rule
    behind ``sketchlearn train``'s warning); ``None`` when there are none."""

def drp_fit(
    x: Rows, y: npt.NDArray[np.float64], params: dict, classes: list | None
) -> tuple[LinearLearners, dict]:
    """Dual random projection on ``(x, y)`` (labels ±1; ``classes=None``: ridge regression on
    real targets): the recovered model of
    ``sketchlearn drp -f`` and a report (``status``, ``iteration``, ``objective``,
    ``relative_grad_norm``, ``naive_objective``, ``low_dim_unconverged``)."""

class FmLearner:
    """One online factorization machine of the core (``sketchlearn fm``)."""

    def __init__(
        self, params: dict, dim: int, *, normalize: bool = False, regression: bool = False
    ) -> None: ...
    def learn(self, x: Rows, y: npt.NDArray[np.float64]) -> None:
        """Learns every row in order (GIL released)."""
    def predict(self, x: Rows) -> npt.NDArray[np.float64]:
        """Predictions (raw scores for a classification loss)."""
    def progressive(self) -> tuple[int, float, float | None]:
        """``(examples, mean loss, error rate)`` of progressive validation."""
    def params(self) -> dict:
        """Hyper-parameters as estimator parameters."""
    def save(self, path: str | PathLike) -> None:
        """Writes the model file of ``sketchlearn fm -f``."""
    @staticmethod
    def load(path: str | PathLike) -> FmLearner:
        """Reads a model file of ``sketchlearn fm -f`` (LIBSVM rows)."""
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def from_bytes(state: bytes) -> FmLearner: ...
    @property
    def dim(self) -> int: ...
    @property
    def examples_seen(self) -> int: ...
    @property
    def refused_steps(self) -> int: ...

class SketchState:
    """A streaming covariance sketch (fd, fd-fast, rfd, rfd-fast, gfd, gfd-fast, rp, oja)."""

    def __init__(
        self,
        method: str,
        size: int,
        dim: int,
        seed: int = 0,
        alpha0: float = 0.0,
        alpha: float = 1.0,
        oja_c: float = 1.0,
    ) -> None: ...
    def insert(self, x: Rows, signs: npt.NDArray[np.float64] | None = None) -> None:
        """Inserts every row (GIL released)."""
    def merge(self, other: SketchState) -> None:
        """Stacks and re-shrinks (FD, RFD, GFD)."""
    def matrices(
        self,
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64] | None, float]:
        """``(B₊, B₋ or None, α)``."""
    def relative_spectral_error(
        self, x: Rows, signs: npt.NDArray[np.float64] | None = None
    ) -> float:
        """‖AᵀA − approximation‖₂ / ‖AᵀA‖₂."""
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def from_bytes(state: bytes) -> SketchState: ...
    @property
    def dim(self) -> int: ...
    @property
    def rows_seen(self) -> int: ...
    @property
    def total_shrinkage(self) -> float | None: ...
