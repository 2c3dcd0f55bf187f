"""The fixed costs of a one-round ``sketchlearn.dask.fit`` of the generated stream that grow with
the number of tasks (dask20), measured in this process on the code the tasks and the client run,
without Dask. The files: ``bench_dask.generated(rows, DIR)``'s ``DIR/gen*.libsvm`` (16 files).

    python dask_task_costs.py DIR            # warm-up, deltas, the client's tail
    python dask_task_costs.py DIR --pair 2   # also: two halves one after the other, then at once
    python dask_task_costs.py DIR --skip-warm-up --repeat 3   # the client's merge, 3 times

1. **The task's warm-up:** one task's learners (``_initial_of_scans``, as a worker builds them)
   learn the first six files one by one (``learned_files``, ``threads=1`` as on a worker of one
   thread): the CPU of each file, and where the default's members retired.
2. **The deltas:** each half of the files learned as one task of a 2-worker fit learns it, and
   its ``delta_from`` the base (size, CPU).
3. **The client's tail of a 2-worker fit** (``_merged_on_client``): the two deltas pickled and
   unpickled (what the transfer copies), rebuilt (``patched``), and the second merged into the
   first in place (``merge_in_place``); ``--repeat N``: the rebuilds and the merge N times,
   with the merged state's hash (``state_bytes``: compare builds).
4. ``--pair N``: N times, the two halves learned by two processes one after the other, then by
   two at once: each process's learning CPU (contention between two learners on two cores).
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import os
import pickle
import resource
import subprocess
import sys
import time

import sketchlearn
from sketchlearn import OnlineClassifier
from sketchlearn.dask import _initial_of_scans, _scan_group

D = 1 << 20


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def base_of(paths: list):
    """The initial learners of a 2-worker fit of ``paths``, as each worker builds them."""
    scans = _scan_group(paths, "auto", False, True)
    return _initial_of_scans(OnlineClassifier(), D, None, [scans], 2).learners_


def half(paths: list, which: int, base=None):
    """Half ``which`` of the files learned as one task learns it; prints its CPU and returns its
    delta against the base."""
    base = base_of(paths) if base is None else base
    mine = paths[: len(paths) // 2] if which == 0 else paths[len(paths) // 2 :]
    c0, t0 = cpu(), time.perf_counter()
    out = base.learned_files(mine, "auto", False, threads=1)
    c1, t1 = cpu(), time.perf_counter()
    delta = out.delta_from(base)
    print(
        f"  half {which}: learning CPU {c1 - c0:.2f} s (wall {t1 - t0:.2f} s), "
        f"delta {len(delta) / 1e6:.1f} MB in {cpu() - c1:.2f} s CPU, "
        f"load {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    return delta


def warm_up(paths: list, base) -> None:
    state, used = base, []
    for p in paths[:6]:
        c0 = cpu()
        state = state.learned_files([p], "auto", False, threads=1)
        used.append(f"{cpu() - c0:.2f}")
    print(f"1. CPU s of each of the first 6 files, one by one: {', '.join(used)}")
    print(f"   members retired at {state.retired_at} (of {state.examples_seen} rows)")


def tail(base, deltas: list, repeat: int) -> None:
    c0 = cpu()
    moved = [pickle.loads(pickle.dumps(d, protocol=5)) for d in deltas]
    trips = cpu() - c0
    for _ in range(repeat):
        c1 = cpu()
        a = type(base).patched(base, moved[0])
        c2 = cpu()
        b = type(base).patched(base, moved[1])
        c3 = cpu()
        a.merge_in_place(b, base)
        c4 = cpu()
        state = hashlib.sha256(a.state_bytes()).hexdigest()[:8]
        print(
            f"3. client: pickle round trips {trips:.2f} s, rebuilds {c2 - c1:.2f} + "
            f"{c3 - c2:.2f} s, merge in place {c4 - c3:.2f} s (CPU); merged {state}, "
            f"load {os.getloadavg()[0]:.1f} ({sketchlearn.__file__})",
            flush=True,
        )
        del a, b


def pair(where: str, rounds: int) -> None:
    cmd = [sys.executable, __file__, where, "--half"]
    for r in range(rounds):
        print(f"4. round {r + 1}: one after the other", flush=True)
        for h in "01":
            subprocess.run([*cmd, h], check=True)
        print(f"4. round {r + 1}: both at once", flush=True)
        procs = [subprocess.Popen([*cmd, h]) for h in "01"]
        for p in procs:
            p.wait()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--pair", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--skip-warm-up", action="store_true")
    ap.add_argument("--half", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    paths = sorted(glob.glob(args.dir + "/gen[0-9]*.libsvm"))
    if args.half is not None:
        half(paths, args.half)
        return
    base = base_of(paths)
    print(f"load {os.getloadavg()[0]:.1f}, {time.strftime('%H:%M:%S')}")
    if not args.skip_warm_up:
        warm_up(paths, base)
    print("2. each half as a task:")
    deltas = [half(paths, h, base) for h in (0, 1)]
    tail(base, deltas, args.repeat)
    del deltas
    pair(args.dir, args.pair)


if __name__ == "__main__":
    main()
