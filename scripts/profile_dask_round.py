"""CPU seconds of the steps of one sketchlearn.dask round on the generated stream of
scripts/bench_dask.py (issue 30): learning a block, copying the state, merging two learned
states over their base, pickling and unpickling the state. Run in one process, timed with
``time.process_time`` (less sensitive than wall time to a loaded machine).

    python scripts/profile_dask_round.py [--rows 200000] [--rounds 2]
"""

from __future__ import annotations

import argparse
import copy
import pickle
import shutil
import tempfile
import time
from pathlib import Path

from bench_dask import generated
from sketchlearn import OnlineClassifier
from sketchlearn.dask import _initial


def timed(fn, *args):
    t0 = time.process_time()
    out = fn(*args)
    return out, time.process_time() - t0


def learn(model, path):
    """A copy of ``model`` after one pass over ``path`` (as ``sketchlearn.dask`` does)."""
    return copy.deepcopy(model).partial_fit_file(path)


def merged(a, b, base):
    return copy.deepcopy(a).merge(b, base=base)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--rounds", type=int, default=2, help="merge rounds before timing")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="profile_dask_"))
    try:
        paths, _, d = generated(args.rows, tmp)
        model = _initial(OnlineClassifier(), d, [-1, 1], (False, 20.0))
        for r in range(args.rounds + 1):
            a = learn(model, paths[2 * r])
            b, learn_s = timed(learn, model, paths[2 * r + 1])
            _, copy_s = timed(copy.deepcopy, model)
            result, merge_s = timed(merged, a, b, model)
            blob, dumps_s = timed(pickle.dumps, b, 5)
            _, loads_s = timed(pickle.loads, blob)
            print(
                f"round {r + 1}: learn a block {learn_s:.2f} (with its copy), "
                f"copy {copy_s:.2f}, merge {merge_s:.2f}, pickle {dumps_s:.2f} + unpickle "
                f"{loads_s:.2f} of {len(blob) / 1e6:.0f} MB (CPU s)",
                flush=True,
            )
            model = result
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
