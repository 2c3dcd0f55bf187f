"""One ``sketchlearn.dask.fit`` of the generated stream of scripts/bench_dask.py (issue 30), with
Dask's task stream split by task kind (compute and transfer seconds), the workers' idle time
(workers × wall time − everything the task stream shows: waiting for the scheduler, for
the other worker's result, and the client's own work), the rate, the held-out error and each
worker's peak resident memory and CPU seconds during the fit; then, in this process on the fitted state, the CPU seconds of
the parts of a learning task (copy of the state, parsing a block alone, the whole task on one
thread) and of moving a state (pickle, unpickle).

    python scripts/dask_phases.py --workers 2 --rows 200000 [--rounds 0]
"""

from __future__ import annotations

import argparse
import copy
import os
import pickle
import shutil
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from bench_dask import blocks_per_task, generated, held_out, local_client
from sketchlearn import OnlineClassifier, _core
from sketchlearn.dask import fit


def peak_rss_mb() -> int:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


def phases(records) -> dict:
    from dask.utils import key_split

    out = defaultdict(float)
    for t in records:
        for s in t["startstops"]:
            out[(key_split(t["key"]), s["action"])] += s["stop"] - s["start"]
    return out


def cpu_seconds() -> float:
    """User + system CPU seconds of this (worker) process so far."""
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def cpu(fn, *args):
    t0 = time.process_time()
    out = fn(*args)
    return out, time.process_time() - t0


def task_parts(model, path: str) -> str:
    """CPU seconds of a learning task's parts on ``model``'s state, in this process."""
    state = model.learners_
    _, copy_s = cpu(copy.deepcopy, state)
    _, parse_s = cpu(_core.scan_file, path, "auto", False)
    _, task_s = cpu(state.learned_file, path, "auto", False, 1)
    blob, dumps_s = cpu(pickle.dumps, model, 5)
    _, loads_s = cpu(pickle.loads, blob)
    return (
        f"CPU s, one block on the fitted state: copy {copy_s:.2f}, parse alone {parse_s:.2f}, "
        f"learned_file on one thread (copy + parse + learn) {task_s:.2f}; "
        f"pickle {dumps_s:.2f} + unpickle {loads_s:.2f} of {len(blob) / 1e6:.0f} MB"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--rounds", type=int, default=0, help="as bench_dask.py's")
    args = ap.parse_args()
    load0 = os.getloadavg()[0]
    tmp = Path(tempfile.mkdtemp(prefix="dask_phases_"))
    try:
        paths, test, d = generated(args.rows, tmp)
        with local_client(args.workers) as client:
            from distributed import get_task_stream

            fit(OnlineClassifier(), paths[:1], n_features=d, client=client)  # warm-up
            cpu0 = client.run(cpu_seconds)
            with get_task_stream(client) as ts:
                t0 = time.perf_counter()
                model = fit(
                    OnlineClassifier(),
                    paths,
                    n_features=d,
                    client=client,
                    blocks_per_task=blocks_per_task(
                        len(paths), args.workers, args.rounds
                    ),
                )
                secs = time.perf_counter() - t0
            cpu1 = client.run(cpu_seconds)
            rss = client.run(peak_rss_mb)
        err, se = held_out(model, test, d)
        parts = task_parts(model, paths[-1])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    load = os.getloadavg()[0]
    busy = 0.0
    for (kind, action), s in sorted(phases(ts.data).items()):
        print(f"{kind} {action}: {s:.1f} s")
        busy += s
    print(
        f"wall {secs:.1f} s; workers idle {args.workers * secs - busy:.1f} s "
        f"(of {args.workers} x {secs:.1f})"
    )
    worker_cpu = sorted(cpu1[w] - cpu0[w] for w in cpu1)
    print("workers' CPU s during the fit: " + ", ".join(f"{c:.1f}" for c in worker_cpu))
    print(parts)
    print(
        f"{args.workers} worker(s): {args.rows / secs:,.0f} examples/s, held-out error "
        f"{err:.4f} ± {se:.4f}, workers' peak RSS {sorted(rss.values())} MB, "
        f"load {load:.1f} at the end, {load0:.1f} at the start"
    )


if __name__ == "__main__":
    main()
