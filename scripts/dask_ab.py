"""The issue-30 benchmark's 1- and N-worker one-round fits (``bench_dask.run_learning``'s loop:
a warm-up fit, then the timed fit) on files already generated and kept, so that two builds can
be compared on the same files without generating 10M rows (~105 s idle) for each run; prints
each fit's wall, workers' and client + scheduler CPU seconds, held-out error and a hash of the
held-out decision values' bytes (equal hashes: the same predictions). The files:
``bench_dask.generated(rows, DIR)``'s ``DIR/gen*.libsvm`` and ``DIR/gen_test.libsvm``.

    python dask_ab.py DIR [K]        # 1 and K workers (default 2)
"""

from __future__ import annotations

import glob
import hashlib
import os
import sys
from pathlib import Path

from bench_dask import head_file, held_out
from dask_fit_files import timed_fit
from sklearn.datasets import load_svmlight_file

D = 1 << 20


def main() -> None:
    data, workers = Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 2
    paths = sorted(glob.glob(str(data / "gen[0-9]*.libsvm")))
    test = str(data / "gen_test.libsvm")
    warm = head_file(paths[0], Path("/tmp"), 1000)
    X, _ = load_svmlight_file(test, n_features=D)
    for k in (1, workers):
        load = os.getloadavg()[0]
        model, secs, own, cpu = timed_fit(paths, k, warm, D)
        err, _ = held_out(model, test, D)
        used = ", ".join(f"{c:.2f}" for c in cpu)
        digest = hashlib.sha256(model.decision_function(X).tobytes()).hexdigest()[:16]
        print(
            f"{k} worker(s): wall {secs:.2f} s, workers' CPU {used} s, client + scheduler CPU "
            f"{own:.2f} s, held-out error {err:.4f}, decision hash {digest}, load {load:.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
