"""The CPU of a one-round ``sketchlearn.dask.fit`` of already generated files split by task part,
on each worker and on the client (dask23): each part's thread CPU (``time.thread_time``) around
the library's own functions, wrapped in every process before the fit — on the workers the
label scan (``_scan_group``), the initial learners (``_initial_of_scans``), the learning
(``_learn_blocks``: parse + learn, ``learned_files``) and the delta (``_delta_of``:
``delta_from``); on the client the rebuilds (``_Delta.state``) and the merge
(``_merge_into``) — and each process's CPU by thread name (``/proc/self/task``: the task
thread, the event loop, which pickles and sends the delta, Dask's offload thread), so that
what no wrapper covers shows too. The files: ``bench_dask.generated(rows, DIR)``'s
``DIR/gen*.libsvm``.

    python dask_task_cpu.py DIR K        # K workers, one round (the benchmark's schedule)

Also the fitted model's state hash (``state_bytes``: compare builds).
"""

from __future__ import annotations

import glob
import hashlib
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

import sketchlearn.dask as sd
from bench_dask import head_file, local_client, one_round_fit
from dask_thread_cpu import diff, thread_cpu
from sketchlearn import OnlineClassifier
from sketchlearn.dask import fit

WORKER_PARTS = ("_scan_group", "_initial_of_scans", "_learn_blocks", "_delta_of")


def timed(fn, name: str, log: dict):
    """``fn`` logging the thread CPU seconds of each call under ``name`` in ``log``."""

    def wrapper(*args, **kwargs):
        c0 = time.thread_time()
        try:
            return fn(*args, **kwargs)
        finally:
            log[name].append(time.thread_time() - c0)

    wrapper.__wrapped__ = fn
    return wrapper


def wrap(names, log: dict, where=sd) -> None:
    for n in names:
        fn = getattr(where, n)
        setattr(where, n, timed(getattr(fn, "__wrapped__", fn), n, log))


def wrap_worker() -> int:
    """Wraps the task parts in this (worker) process; the log starts empty."""
    sd._task_cpu_log = defaultdict(list)
    wrap(WORKER_PARTS, sd._task_cpu_log)
    return os.getpid()


def worker_log() -> dict:
    return {k: list(v) for k, v in sd._task_cpu_log.items()}


def clear_worker_log() -> None:
    sd._task_cpu_log.clear()


def fmt(log: dict) -> str:
    return ", ".join(f"{k} {sum(v):.2f} ({len(v)})" for k, v in log.items())


def main() -> None:
    where, k, d = sys.argv[1], int(sys.argv[2]), 1 << 20
    paths = sorted(glob.glob(where + "/gen[0-9]*.libsvm"))
    warm = head_file(paths[0], Path(where).parent)
    client_log: dict = defaultdict(list)
    wrap(["_merge_into"], client_log)
    wrap(["state"], client_log, where=sd._Delta)
    with local_client(k) as client:
        pids = client.run(wrap_worker)
        fit(OnlineClassifier(), [warm], n_features=d, client=client)
        client.run(clear_worker_log)
        client_log.clear()
        load0 = os.getloadavg()
        w0, c0, t0 = client.run(thread_cpu), thread_cpu(), time.perf_counter()
        model = one_round_fit(client, paths, d, k)
        secs = time.perf_counter() - t0
        w1, c1 = client.run(thread_cpu), thread_cpu()
        logs = client.run(worker_log)
    state = hashlib.sha256(model.learners_.state_bytes()).hexdigest()[:8]
    print(
        f"{k}w: wall {secs:.2f} s, load {load0} -> {os.getloadavg()}, model state {state}"
    )
    print(f"  client+scheduler threads: {diff(c1, c0)}")
    print(f"  client parts: {fmt(client_log)}")
    for w in sorted(w1):
        total = sum(w1[w].values()) - sum(w0[w].values())
        print(f"  worker pid {pids[w]} total {total:.2f}: {diff(w1[w], w0[w])}")
        print(f"    parts: {fmt(logs[w])}")


if __name__ == "__main__":
    main()
