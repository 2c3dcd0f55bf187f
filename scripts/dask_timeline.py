"""The timeline of one one-round ``sketchlearn.dask.fit`` of already generated files on ``K``
local workers (``bench_dask.local_client``, after a warm-up fit): each step of the fit's
module — the label scans, the initial models, each task's learning, its retired members, its
delta, the client's gathers, rebuilds and merge — wrapped on the client and on every worker,
with its start and end (seconds since the fit began), the CPU seconds of its thread and a
delta's bytes; then the fit's wall, the client's and each worker's CPU seconds (dask57).

    python dask_timeline.py DIR K [FILES]     # DIR/gen*.libsvm, the first FILES of them
"""

from __future__ import annotations

import functools
import glob
import json
import os
import sys
import time
from pathlib import Path

from bench_dask import cpu_seconds, head_file, local_client

LOG = "/tmp/dask_timeline.jsonl"
STEPS = (
    "_scan_group",
    "_initial_of_scans",
    "_learn_blocks",
    "_retired_members",
    "_forgetting_delta",
    "_forgotten",
    "_merged_on_client",
    "_merge_into",
    "_told",
)


def _log(name: str, t0: float, cpu: float, **extra) -> None:
    row = {
        "name": name,
        "t0": t0,
        "t1": time.time(),
        "pid": os.getpid(),
        "cpu": cpu,
        **extra,
    }
    with open(LOG, "a") as f:
        f.write(json.dumps(row) + "\n")


def _timed(name: str, fn):
    @functools.wraps(fn)
    def step(*args, **kwargs):
        t0, c0 = time.time(), time.thread_time()
        out = fn(*args, **kwargs)
        delta = getattr(out, "delta", None)
        extra = {} if delta is None else {"bytes": len(delta)}
        _log(name, t0, time.thread_time() - c0, **extra)
        return out

    return step


def instrument() -> int:
    """Wraps the fit's steps in this process (once); its process id."""
    import sketchlearn.dask as m

    if not getattr(m, "_timeline", False):
        m._timeline = True
        for name in STEPS:
            setattr(m, name, _timed(name, getattr(m, name)))
        m._Delta.state = _timed("rebuild", m._Delta.state)
    return os.getpid()


def main() -> None:
    from sketchlearn import OnlineClassifier
    from sketchlearn.dask import fit

    where, k = sys.argv[1], int(sys.argv[2])
    paths = sorted(glob.glob(where + "/gen[0-9]*.libsvm"))
    paths = paths[: int(sys.argv[3])] if len(sys.argv) > 3 else paths
    warm = head_file(paths[0], Path("/tmp"), 1000)
    with local_client(k) as client:
        instrument()
        pids = client.run(instrument)
        fit(OnlineClassifier(), [warm], n_features=1 << 20, client=client)
        gather = client.gather

        def timed_gather(*args, **kwargs):
            t0, c0 = time.time(), time.thread_time()
            out = gather(*args, **kwargs)
            _log("gather", t0, time.thread_time() - c0)
            return out

        client.gather = timed_gather
        open(LOG, "w").close()
        cpu0, own0, start = client.run(cpu_seconds), cpu_seconds(), time.time()
        fit(OnlineClassifier(), paths, n_features=1 << 20, client=client)
        wall, own, cpu = (
            time.time() - start,
            cpu_seconds() - own0,
            client.run(cpu_seconds),
        )
    who = {os.getpid(): "client"} | {
        pids[w]: f"w{i}" for i, w in enumerate(sorted(pids))
    }
    with open(LOG) as f:
        rows = sorted((json.loads(line) for line in f), key=lambda r: r["t0"])
    for r in rows:
        size = f"  {r['bytes'] / 1e6:.1f} MB" if "bytes" in r else ""
        print(
            f"{who.get(r['pid'], r['pid']):>6} {r['t0'] - start:7.3f} -> {r['t1'] - start:7.3f}"
            f"  {r['name']:<18} cpu {r['cpu']:.3f}{size}"
        )
    used = ", ".join(f"{cpu[w] - cpu0[w]:.2f}" for w in sorted(cpu))
    print(
        f"{k} worker(s), {len(paths)} files: wall {wall:.2f} s, workers' CPU {used} s, client "
        f"CPU {own:.2f} s, load {os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
