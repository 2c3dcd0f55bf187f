"""CPU time a River ``learn_one`` would pay to check divergence after every example: the
default ``Classifier()`` on the first rows of a9a as dicts, as it learns today and with
``_diverged.warn_diverged`` around each core call (what ``partial_fit`` does once a call),
interleaved, median of ``--reps`` runs (µs an example); and the check around nothing.

    PYTHONPATH=<the package> python scripts/river_divergence_cost.py [--rows 8000] [--reps 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from sketchlearn._diverged import warn_diverged
from sketchlearn._refused import warn_refused
from sketchlearn.river import Classifier, _binary_target

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "a9a.libsvm"


def rows(path: Path, n: int) -> list:
    out = []
    with open(path) as f:
        for line in f:
            if len(out) == n:
                break
            label, *pairs = line.split()
            out.append(
                ({k: float(v) for k, v in (p.split(":") for p in pairs)}, label == "+1")
            )
    return out


def today(model, x, y) -> None:
    model.learn_one(x, y)


def checked(model, x, y) -> None:
    learners = model._learners if model._learners is not None else model._build()
    with warn_refused(learners), warn_diverged(learners):
        learners.learn_one(x, _binary_target(y))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=8000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--data", type=Path, default=DATA)
    args = ap.parse_args()
    stream = rows(args.data, args.rows)
    times: dict = {"today": [], "checked": []}
    for _ in range(args.reps):
        for name, learn in (("today", today), ("checked", checked)):
            model = Classifier()
            t0 = time.process_time()
            for x, y in stream:
                learn(model, x, y)
            times[name].append((time.process_time() - t0) / len(stream) * 1e6)
    learners = Classifier()._build()
    alone = []
    for _ in range(args.reps):  # the check around nothing: its own cost, less noisy
        t0 = time.process_time()
        for _ in range(100_000):
            with warn_diverged(learners):
                pass
        alone.append((time.process_time() - t0) / 100_000 * 1e6)
    times["the check alone"] = alone
    for name, ts in times.items():
        print(
            f"{name}: median {statistics.median(ts):.2f} µs/example {[round(t, 2) for t in ts]}"
        )


if __name__ == "__main__":
    main()
