"""CPU seconds of the non-learning steps of a one-round, 2-worker ``sketchlearn.dask.fit`` of
the generated stream of ``bench_dask.py`` (issue 30), in one process (``time.process_time``,
less sensitive to a loaded machine than wall time): two halves of the files learned from the
round's base (the initial model), then each step a fit takes after the learning — the deltas
(``delta_from``), rebuilding states from them (``patched``), the merge, pickling the merged
state for the client and unpickling it there. Prints the steps of the merge task as it was
(both inputs rebuilt from their deltas, merged into the rebuilt left one) and as it is (the
left input as learned, ``merged`` into a new state; the right one rebuilt), checks both give
the same bytes, and the bytes that move.

    python scripts/measure_merge_task.py --rows 120000 --reps 3
"""

from __future__ import annotations

import argparse
import pickle
import shutil
import tempfile
import time
from pathlib import Path

from bench_dask import generated
from sketchlearn import OnlineClassifier
from sketchlearn._core import LinearLearners
from sketchlearn.dask import _initial, _scan_group


def cpu(f, *args):
    t = time.process_time()
    out = f(*args)
    return out, time.process_time() - t


def learned(base, paths):
    state = base.learned_file(paths[0], "auto", False, threads=1)
    for p in paths[1:]:
        state.learn_file(p, "auto", False, threads=1)
    return state


def merge_task_before(base, da, db):
    a = LinearLearners.patched(base, da)
    a.merge(LinearLearners.patched(base, db), base)
    return a


def merge_task_after(base, a, db):
    return a.merged(LinearLearners.patched(base, db), base)


def pickle_round_trip(state):
    """The state's pickle (protocol 5) and the CPU seconds of pickling and of unpickling it."""
    blob, dumps_s = cpu(pickle.dumps, state, 5)
    _, loads_s = cpu(pickle.loads, blob)
    return blob, dumps_s, loads_s


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=120_000)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="measure_merge_"))
    try:
        paths, _, d = generated(args.rows, tmp)
        scan = _scan_group(paths[:1], "auto", False)[0]
        base = _initial(
            OnlineClassifier(), d, [-1, 1], (scan[3], 20.0, scan[4])
        ).learners_
        half = len(paths) // 2
        a, b = learned(base, paths[:half]), learned(base, paths[half:])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for rep in range(args.reps):
        db, delta_s = cpu(b.delta_from, base)
        _, patched_s = cpu(LinearLearners.patched, base, db)
        before, before_s = cpu(merge_task_before, base, a.delta_from(base), db)
        after, after_s = cpu(merge_task_after, base, a, db)
        assert before.state_bytes() == after.state_bytes()
        blob, dumps_s, loads_s = pickle_round_trip(after)
        print(
            f"rep {rep + 1}: delta_from {delta_s:.2f} ({len(db) / 1e6:.0f} MB), patched "
            f"{patched_s:.2f}; merge task before {before_s:.2f}, after {after_s:.2f}; merged "
            f"state pickle {dumps_s:.2f} + unpickle {loads_s:.2f} ({len(blob) / 1e6:.0f} MB)",
            flush=True,
        )


if __name__ == "__main__":
    main()
