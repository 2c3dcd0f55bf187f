"""The VW-style progress table that ``sketchlearn train`` prints, for ``verbose=True``."""

from __future__ import annotations

import sys
from collections.abc import Iterable


def print_header(description: str, dim: int) -> None:
    """Prints the learner line and the two header lines on standard error."""
    err = sys.stderr
    print(f"learner: {description}  (d = {dim})", file=err)
    print(
        f"{'average':<12} {'since':<12} {'example':>12} {'example':>12} "
        f"{'current':>9} {'current':>9} {'current':>9}",
        file=err,
    )
    print(
        f"{'loss':<12} {'last':<12} {'counter':>12} {'weight':>12} "
        f"{'label':>9} {'predict':>9} {'features':>9}",
        file=err,
    )


def print_rows(rows: Iterable[tuple]) -> None:
    """Prints progress rows ``(average, since, examples, weight, label, prediction, nnz)``."""
    for avg, since, n, weight, label, pred, nnz in rows:
        print(
            f"{avg:<12.6f} {since:<12.6f} {n:>12} {weight:>12.1f} "
            f"{label:>9.4f} {pred:>9.4f} {nnz:>9}",
            file=sys.stderr,
        )
