"""What a Dask round moves, whole state against delta (issue 30): the generated stream of
``bench_dask.py`` (16 files of ``rows/16`` rows, 2^20 features), two files learned from the
empty sparse-time default and merged (a round's base), then a third file learned from that
base. Prints the pickled state's size and CPU seconds of ``pickle.dumps``/``loads``, and the
delta's (``delta_from``/``patched``), and checks the rebuilt state is the learned one.

    python scripts/measure_delta.py --rows 320000
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
from sketchlearn.dask import _initial


def cpu(f, *args):
    t = time.process_time()
    out = f(*args)
    return out, time.process_time() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=320_000)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="measure_delta_"))
    try:
        paths, _, d = generated(args.rows * 3 // 16, tmp, files=3)
        empty = _initial(OnlineClassifier(), d, [-1, 1], (False, 20.0)).learners_
        a, b = (empty.learned_file(p, threads=1) for p in paths[:2])
        base = a.merged(b, empty)
        state = base.learned_file(paths[2], threads=1)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for _ in range(2):
        whole, t_dumps = cpu(pickle.dumps, state)
        _, t_loads = cpu(pickle.loads, whole)
        print(
            f"state: {len(whole):,} bytes, dumps {t_dumps:.2f} s, loads {t_loads:.2f} s"
        )
        delta, t_delta = cpu(state.delta_from, base)
        back, t_patch = cpu(LinearLearners.patched, base, delta)
        print(
            f"delta: {len(delta):,} bytes, delta_from {t_delta:.2f} s, patched {t_patch:.2f} s"
        )
    assert back.state_bytes() == state.state_bytes()
    print("the state rebuilt from its delta is the learned state, byte for byte")


if __name__ == "__main__":
    main()
