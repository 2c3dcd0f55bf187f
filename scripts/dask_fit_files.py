"""One one-round ``sketchlearn.dask.fit`` of already generated files with ``K`` workers: the fit
loop of ``bench_dask.py`` (warm-up, workers' CPU, client CPU) without generating the files or
the single stream, so that builds can be compared interleaved on the same files (dask17). The
files: ``bench_dask.generated(rows, DIR)``'s ``DIR/gen*.libsvm``.

    python dask_fit_files.py DIR TAG K
"""

from __future__ import annotations

import glob
import hashlib
import os
import sys
import time
from pathlib import Path

import sketchlearn
from bench_dask import blocks_per_task, cpu_seconds, head_file, local_client
from sketchlearn import OnlineClassifier
from sketchlearn.dask import fit


def timed_fit(paths: list, k: int, warm: str, d: int = 1 << 20, rounds: int = 1):
    """The benchmark's fit of ``paths`` on ``k`` local workers in ``rounds`` rounds (the
    issue's: one), after a warm-up fit of ``warm``: the fitted model, its wall seconds, the
    client's CPU seconds and each worker's CPU seconds (in the workers' order). Also
    ``dask_ab.py``'s and ``dask_ab_classes.py``'s."""
    with local_client(k) as client:
        fit(OnlineClassifier(), [warm], n_features=d, client=client)
        cpu0, own0, t0 = client.run(cpu_seconds), cpu_seconds(), time.perf_counter()
        per_task = blocks_per_task(len(paths), k, rounds)
        model = fit(
            OnlineClassifier(),
            paths,
            n_features=d,
            client=client,
            blocks_per_task=per_task,
        )
        secs, own = time.perf_counter() - t0, cpu_seconds() - own0
        cpu = client.run(cpu_seconds)
    return model, secs, own, [cpu[w] - cpu0[w] for w in sorted(cpu)]


def main() -> None:
    where, tag, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
    paths = sorted(glob.glob(where + "/gen[0-9]*.libsvm"))
    model, secs, own, cpu = timed_fit(paths, k, head_file(paths[0], Path(where).parent))
    n = model.learners_.examples_seen
    used = ", ".join(f"{c:.2f}" for c in cpu)
    state = hashlib.sha256(model.learners_.state_bytes()).hexdigest()[:8]
    print(
        f"{tag} {k}w: {n / secs:,.0f} ex/s wall {secs:.2f} s workers' CPU {used} client "
        f"{own:.2f} state {state} load {os.getloadavg()[0]:.1f} ({sketchlearn.__file__})"
    )


if __name__ == "__main__":
    main()
