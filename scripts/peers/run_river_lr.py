#!/usr/bin/env python3
"""Run River's logistic regression (the first-order peer of `../shared/peers/RESULTS.md`) on
LIBSVM files: one pass in file order, progressive 0/1 error (predict, then learn).

Learners (River 0.26.1, other settings at their defaults, intercept included):
  plain   `river.linear_model.LogisticRegression(optimizer=river.optim.AdaGrad(lr))`
  scaled  `river.preprocessing.StandardScaler() | (the same)` (RESULTS.md's untuned peer on the
          raw-scale files: the scaler's running mean and variance, learned before each step)
untuned lr = 0.1 (River's AdaGrad default), tuned = the lowest progressive error over
lr = 2^-3..2^6 (RESULTS.md's grid), scored on the same stream. A probability <= 0.5 (a score <= 0) predicts -1, as RESULTS.md counts.

Output: one JSON object per line on stdout:
  {"type": "run", "file", "model", "lr", "examples", "progressive_error", "seconds"}
  {"type": "best", "file", "model": "plain" | "scaled", "setting": "tuned" | "untuned", "lr",
   "progressive_error", "examples"}

Example:
  .venv-peers/bin/python scripts/peers/run_river_lr.py ../shared/data/a8a.libsvm
"""

import argparse
import json
import sys
import time
from pathlib import Path

from river import linear_model, optim, preprocessing

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import bench_common  # scripts/, the folder above this one

GRID = [2.0**j for j in range(-3, 7)]
DEFAULT_LR = 0.1


def read_libsvm(path):
    """The file's rows as (features, label > 0) pairs, River's order."""
    return [(x, y > 0) for y, x in bench_common.read_libsvm(path)]


def make(kind, lr):
    model = linear_model.LogisticRegression(optimizer=optim.AdaGrad(lr))
    return preprocessing.StandardScaler() | model if kind == "scaled" else model


def progressive_error(rows, kind, lr):
    model = make(kind, lr)
    wrong = 0
    for x, y in rows:
        p = model.predict_proba_one(x).get(True, 0.0)
        wrong += (p > 0.5) != y
        model.learn_one(x, y)
    return wrong / len(rows)


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    for path in args.files:
        rows = read_libsvm(path)
        for kind in ("plain", "scaled"):
            errors = {}
            for lr in sorted(set(GRID + [DEFAULT_LR])):
                t = time.perf_counter()
                errors[lr] = progressive_error(rows, kind, lr)
                emit(
                    {
                        "type": "run",
                        "file": path,
                        "model": kind,
                        "lr": lr,
                        "examples": len(rows),
                        "progressive_error": errors[lr],
                        "seconds": time.perf_counter() - t,
                    }
                )
            best = min(GRID, key=lambda lr: errors[lr])
            for setting, lr in (("tuned", best), ("untuned", DEFAULT_LR)):
                emit(
                    {
                        "type": "best",
                        "file": path,
                        "model": kind,
                        "setting": setting,
                        "lr": lr,
                        "progressive_error": errors[lr],
                        "examples": len(rows),
                    }
                )


if __name__ == "__main__":
    main()
