"""Where the time of one ``sketchlearn.dask.fit`` goes on a9a and r8_earn_vs_rest (issue 30),
with 1 and N workers: every task function of ``sketchlearn.dask`` runs wrapped in a timer on the
workers (``time.perf_counter`` and ``time.time`` inside the task, logged on the worker and
collected afterwards), so each phase — the file scan, the initial learners' construction,
learning, the delta's serialisation and its size in bytes, the delta's rebuild and the merge —
is measured where it runs; the gaps between them (scheduling, transfers) and the client's part
(the final transfer and the load and check of the merged state) come from the same clock.

    cd scripts && python dask_round_times.py --workers 2 [--repeats 3] [--rounds 1]
    cd scripts && python dask_round_times.py --d-scaling   # a round's state operations against d
    cd scripts && python dask_round_times.py --ceiling     # each step's CPU: the ratio's bound
    cd scripts && python dask_round_times.py --fixed-cost --reps 9   # fits of 16 rows
    cd scripts && python dask_round_times.py --generated 2000000 [--tmp DIR]  # bench_dask's stream
    cd scripts && python dask_round_times.py --transfer [--reps 3]  # a 100 MB result's trip

``--generated ROWS``: instead of a9a and r8, bench_dask.py's generated stream of ``ROWS`` rows
(16 files, 2^20 features; kept in ``--tmp`` and reused when already there). ``--per-file``:
every file a learning task reads timed on its own (wall and the task thread's CPU), with the
per-file calls of the build before dask13. Also printed: each worker thread's CPU, the task
thread's CPU by phase, the client's (and LocalCluster's scheduler's) CPU. ``--state-ops``:
only the CPU of a round's state operations (copy, encode, decode, delta, rebuild, merge) in
this process, on states learned from the stream's files. ``--transfer``: seconds from the end
of a task returning ``MB`` megabytes (a delta-sized ``bytes``) to the result's arrival on the
client, through the scheduler (``as_completed(..., with_results=True)``) and straight from the
worker (``client.gather(..., direct=True)``), two tasks at a time as in a 2-worker fit.

The fit is the one ``bench_dask.py`` times (same files, same warm-up fit of one file first).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import os
import pickle
import shutil
import tempfile
import time
from pathlib import Path

from bench_common import DATA
from bench_dask import (
    blocks_per_task,
    cpu_seconds,
    head_file,
    held_out,
    local_client,
    split_file,
)
from sketchlearn import OnlineClassifier, _core

LOG: list = []  # on a worker: (phase, wall start, wall stop, extra)
CPU: list = []  # on a worker: (phase, CPU seconds of the task's thread)


def _log() -> list:
    return list(LOG)


def _cpu() -> list:
    return list(CPU)


def _threads_cpu() -> dict:
    """CPU seconds (user + system) of each live thread of this process, by name: Python's
    thread names where known, else the kernel's (``comm``), with the thread id."""
    import threading

    names = {t.native_id: t.name for t in threading.enumerate()}
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        name = f"{names.get(int(tid), comm)} [{tid}]"
        out[name] = (int(fields[11]) + int(fields[12])) / tick
    return out


def _clear() -> None:
    LOG.clear()
    CPU.clear()


class Timed:
    """``sketchlearn.dask.<name>`` timed where it runs (by name: the worker's own function).
    ``extra(result, args)`` adds a number to the log (bytes of a delta, ...)."""

    def __init__(self, phase: str, name: str, extra=None):
        self.phase, self.name, self.extra = phase, name, extra

    def __call__(self, *args):
        fn = getattr(importlib.import_module("sketchlearn.dask"), self.name)
        t0, c0 = time.time(), time.thread_time()
        out = fn(*args)
        t1 = time.time()
        LOG.append((self.phase, t0, t1, self.extra(out) if self.extra else None))
        CPU.append((self.phase, time.thread_time() - c0))
        return out


def _delta_bytes(delta) -> int:
    return len(delta.delta)


def _state_bytes(est) -> int:
    return len(pickle.dumps(est, protocol=5))


def _merged_parts(a, b, base):
    """``_merged_state`` split in two timed parts: the delta's rebuild, the merge."""
    import copy

    t0, c0 = time.time(), time.thread_time()
    other = b.state(base)
    t1, c1 = time.time(), time.thread_time()
    out = copy.copy(a)
    out.learners_ = a.learners_.merged(other.learners_, base.learners_)
    t2 = time.time()
    LOG.append(("merge: rebuild delta", t0, t1, None))
    LOG.append(("merge: merge", t1, t2, None))
    CPU.append(("merge: rebuild delta", c1 - c0))
    CPU.append(("merge: merge", time.thread_time() - c1))
    return out


class LearnTimed:
    """``_learn_blocks`` timed (wall and the task thread's CPU). ``per_file``: for files, each
    file timed on its own, with the calls of the build before dask13 (``learned_file`` for
    the first file, ``learn_file`` for the others: a copy of the state a file); else the
    library's own function, timed as one phase."""

    def __init__(self, per_file: bool):
        self.per_file = per_file

    def __call__(self, model, Xs, ys, fmt, zero_based):
        if ys is not None or not self.per_file:
            return Timed("learn blocks", "_learn_blocks")(
                model, Xs, ys, fmt, zero_based
            )
        import copy

        import sketchlearn.dask as sd

        threads = 1 if sd._worker_threads() == 1 else None
        est = copy.copy(model)
        for i, path in enumerate(Xs):
            t0, c0 = time.time(), time.thread_time()
            if i == 0:
                est.learners_ = model.learners_.learned_file(
                    path, fmt, zero_based, threads=threads
                )
            else:
                est.learners_.learn_file(path, fmt, zero_based, threads=threads)
            name = f"learn {Path(path).name}"
            LOG.append((name, t0, time.time(), None))
            CPU.append((name, time.thread_time() - c0))
        return est


class LearnedDeltaTimed:
    """``_learned_delta`` (a one-round fit's task) timed. With ``per_file`` its learning runs
    file by file (:class:`LearnTimed`; the worker's own ``_learned_delta`` would call its
    unpatched ``_learn_blocks``) and the delta is timed as its own phase."""

    def __init__(self, per_file: bool):
        self.per_file = per_file

    def __call__(self, model, Xs, ys, fmt, zero_based):
        if not self.per_file:
            return Timed("learn blocks + delta", "_learned_delta", _delta_bytes)(
                model, Xs, ys, fmt, zero_based
            )
        learned = LearnTimed(True)(model, Xs, ys, fmt, zero_based)
        return Timed("delta of a state", "_delta_of", _delta_bytes)(learned, model)


WRAPPED = {
    "_scan_group": Timed("scan files (labels)", "_scan_group"),
    "_initial": Timed("initial learners", "_initial", _state_bytes),
    "_initial_of_scans": Timed("initial learners", "_initial_of_scans", _state_bytes),
    "_learn_blocks": LearnTimed(per_file=False),
    "_delta_of": Timed("delta of a state", "_delta_of", _delta_bytes),
    "_merged_state": _merged_parts,
    "_applied": Timed("apply the merged delta", "_applied"),
    "_learned_delta": Timed("learn blocks + delta", "_learned_delta", _delta_bytes),
}


class ClientTimed:
    """A function of ``sketchlearn.dask`` that runs on the client, timed there."""

    def __init__(self, phase: str, fn):
        self.phase, self.fn = phase, fn

    def __call__(self, *args):
        t0 = time.time()
        out = self.fn(*args)
        LOG.append((self.phase, t0, time.time(), None))
        return out


def instrument(per_file: bool) -> None:
    import sketchlearn.dask as sd

    WRAPPED["_learn_blocks"] = LearnTimed(per_file)
    WRAPPED["_learned_delta"] = LearnedDeltaTimed(per_file)
    for name, fn in WRAPPED.items():
        if hasattr(sd, name):  # also the build before a function was renamed
            setattr(sd, name, fn)
    if hasattr(sd, "_merged_on_client"):
        sd._merged_on_client = ClientTimed(
            "client: wait + gather + rebuild + merge", sd._merged_on_client
        )
        sd._merged = ClientTimed("client: merge", sd._merged)
        if hasattr(sd, "_merge_into"):  # dask16: the client merges in place
            sd._merge_into = ClientTimed("client: merge", sd._merge_into)
        rebuild = sd._Delta.state
        sd._Delta.state = lambda delta, base: ClientTimed(
            "client: rebuild a delta", rebuild
        )(delta, base)
    if hasattr(sd, "_scan_file"):  # the build before: a task a file
        sd._scan_file = Timed("scan a file (labels)", "_scan_file")


def one_fit(client, paths, d, rounds, workers):
    from sketchlearn.dask import fit

    client.run(_clear)
    _clear()
    cpu0 = client.run(cpu_seconds)
    th0 = client.run(_threads_cpu)
    own0 = cpu_seconds()
    t0w, t0 = time.time(), time.perf_counter()
    model = fit(
        OnlineClassifier(),
        paths,
        n_features=d,
        client=client,
        blocks_per_task=blocks_per_task(len(paths), workers, rounds),
    )
    secs = time.perf_counter() - t0
    t1w = time.time()
    own = cpu_seconds() - own0
    cpu1 = client.run(cpu_seconds)
    th1 = client.run(_threads_cpu)
    print(f"  client + scheduler CPU during the fit: {own:.2f} s")
    for i, w in enumerate(sorted(th1)):
        used = {n: c - th0[w].get(n, 0.0) for n, c in th1[w].items()}
        busy = sorted(((c, n) for n, c in used.items() if c >= 0.05), reverse=True)
        print(
            f"  worker {i} threads' CPU: " + ", ".join(f"{n} {c:.2f}" for c, n in busy)
        )
    logs = client.run(_log)
    logs["~client"] = _log()
    cpus = client.run(_cpu)
    _clear()
    for i, w in enumerate(sorted(cpus)):
        by = {}
        for phase, c in cpus[w]:
            key = "learn files" if phase.startswith("learn gen") else phase
            by[key] = by.get(key, 0.0) + c
        files = [f"{c:.1f}" for phase, c in cpus[w] if phase.startswith("learn gen")]
        if files:
            print(f"  worker {i} CPU of each file learned: " + " ".join(files))
        print(
            f"  worker {i} task-thread CPU: "
            + ", ".join(f"{k} {v:.2f}" for k, v in by.items())
        )
    return model, secs, t0w, t1w, logs, {w: cpu1[w] - cpu0[w] for w in cpu1}


def report(name, k, model, secs, t0w, t1w, logs, cpu, test, d) -> None:
    n = model.learners_.examples_seen
    err, se = held_out(model, test, d)
    print(
        f"\n{name}, {k} worker(s): {n} examples, wall {secs:.3f} s = {n / secs:,.0f} ex/s, "
        f"held-out {err:.4f} ± {se:.4f}, state sha256 "
        f"{hashlib.sha256(model.learners_.state_bytes()).hexdigest()[:16]}, workers' CPU "
        + ", ".join(f"{c:.2f}" for c in cpu.values())
        + f" s, load {os.getloadavg()[0]:.1f}"
    )
    last = t0w  # the last worker task's end (the client's own phases are not tasks)
    for i, w in enumerate(sorted(logs)):
        for phase, a, b, extra in sorted(logs[w], key=lambda r: r[1]):
            size = "" if extra is None else f"  [{extra:,} bytes]"
            who = "client  " if w == "~client" else f"worker {i}"
            print(
                f"  {who}: {phase:<24} {a - t0w:7.3f} → {b - t0w:7.3f} s"
                f"  ({b - a:.3f} s){size}"
            )
            if w != "~client":
                last = max(last, b)
    print(f"  client: after the last worker task until fit returns: {t1w - last:.3f} s")
    blob = pickle.dumps(model, protocol=5)
    t = time.perf_counter()
    pickle.loads(blob)
    print(
        f"  the merged estimator pickled: {len(blob):,} bytes; unpickled (load + check) "
        f"here in {time.perf_counter() - t:.3f} s"
    )


def parse_alone(paths) -> float:
    t = time.process_time()
    for p in paths:
        _core.scan_file(p, "auto", False)
    return time.process_time() - t


def ceiling(sets, reps: int) -> None:
    """In this process, the thread CPU (best of ``reps``) of each step of a one-round fit of
    ``sets`` with 1 worker (all files in one task) and 2 (the first and second half of the
    files in one task each), from the initial learners the fit builds: the label scan, the
    learning, the delta, its rebuild and, with 2 workers, the merge. With 2 workers the steps
    of the two tasks run in parallel, so their larger one is on the critical path. The ratio
    of the two paths is what 2 workers could give against 1 with no scheduling, transfer or
    Python overhead at all: an estimate of the bound on the wall-clock ratio for this split
    (thread CPU, best of ``reps``; a loaded machine moves it)."""
    import copy

    from sketchlearn.dask import _initial, _scan_group

    def best(fn, *args):
        out, secs = None, float("inf")
        for _ in range(reps):
            c = time.thread_time()
            out = fn(*args)
            secs = min(secs, time.thread_time() - c)
        return out, secs * 1e3

    for name, paths, _, d in sets:
        half = len(paths) // 2
        scans, scan1 = best(_scan_group, paths, "auto", False)
        scan2 = max(
            best(_scan_group, p, "auto", False)[1] for p in (paths[:half], paths[half:])
        )
        rows, nnz = sum(s[1] for s in scans), sum(s[2] for s in scans)
        profile = (scans[0][3], nnz / rows, scans[0][4])
        base = _initial(OnlineClassifier(), d, [-1, 1], profile).learners_
        one, learn1 = best(base.learned_files, paths, "auto", False, 1)
        a, learn_a = best(base.learned_files, paths[:half], "auto", False, 1)
        b, learn_b = best(base.learned_files, paths[half:], "auto", False, 1)
        delta1, d1 = best(one.delta_from, base)
        (da, d_a), (db, d_b) = best(a.delta_from, base), best(b.delta_from, base)
        _, p1 = best(type(base).patched, base, delta1)
        p2 = max(best(type(base).patched, base, x)[1] for x in (da, db))
        _, merge = best(a.merged, b, base)
        _, copy_ms = best(copy.copy, one)
        raw, enc = best(one.to_bytes)
        _, dec = best(type(one).from_bytes, raw)
        path1 = scan1 + learn1 + d1 + p1
        path2 = scan2 + max(learn_a, learn_b) + max(d_a, d_b) + p2 + merge
        print(
            f"\n{name} (CPU ms, best of {reps}; the state copy {copy_ms:.1f} ms):\n"
            f"  1 worker:  scan {scan1:.1f} + learn {learn1:.1f} + delta {d1:.1f} "
            f"({len(delta1):,} B) + rebuild {p1:.1f} = {path1:.1f} (the whole state's "
            f"to_bytes + from_bytes instead of delta + rebuild: {enc:.1f} + {dec:.1f})\n"
            f"  2 workers: scan {scan2:.1f} + learn max({learn_a:.1f}, {learn_b:.1f}) + delta "
            f"max({d_a:.1f}, {d_b:.1f}) ({len(da):,} + {len(db):,} B) + rebuild {p2:.1f} + "
            f"merge {merge:.1f} = {path2:.1f}\n"
            f"  learning alone: {learn1 / max(learn_a, learn_b):.2f}x; every step: "
            f"{path1 / path2:.2f}x (no scheduling, transfer or Python counted)",
            flush=True,
        )


def fixed_cost(data: Path, tmp: Path, workers: int, reps: int) -> None:
    """Median and least wall seconds of ``reps`` fits of 8 files of 2 rows each (the first 16
    rows of a9a and of r8): a fit's fixed cost alone (scan, initial learners, hops, delta,
    rebuild, merge of nearly empty states), with 1 and ``workers`` workers."""
    import statistics

    from sketchlearn.dask import fit

    sets = [
        ("a9a", split_file(data / "a9a.libsvm", tmp, "tiny_a9a", 8, 0, 16), 123),
        (
            "r8",
            split_file(data / "r8_earn_vs_rest.libsvm", tmp, "tiny_r8", 8, 0, 16),
            23585,
        ),
    ]
    for k in sorted({1, workers}):
        with local_client(k) as client:
            for name, paths, d in sets:
                fit(OnlineClassifier(), paths, n_features=d, client=client)  # warm-up
                secs = []
                for _ in range(reps):
                    t = time.perf_counter()
                    fit(OnlineClassifier(), paths, n_features=d, client=client)
                    secs.append(time.perf_counter() - t)
                print(
                    f"{name}, 16 rows in 8 files, {k} worker(s): median "
                    f"{statistics.median(secs) * 1e3:.1f} ms, least {min(secs) * 1e3:.1f} ms "
                    f"({reps} fits, load {os.getloadavg()[0]:.1f})",
                    flush=True,
                )


def d_scaling(tmp: Path, bits=(14, 16, 18, 20, 22)) -> None:
    """In this process: milliseconds (best of 2) of the state operations of a Dask round on a
    sparse-time state that learned 200 rows (about 400 features) at hashed dimensions
    ``2^bits``, and the bytes of the learned state and of its delta: the bytes follow the
    features touched, the in-memory copies follow ``d``."""
    import copy

    from sketchlearn.dask import _initial, _scan_group

    path = tmp / "small.libsvm"
    with open(path, "w") as f:
        f.writelines(
            f"{(i % 2) * 2 - 1} {i * 37 % 5000 + 1}:1 {i * 101 % 5000 + 1}:0.5\n"
            for i in range(1, 201)
        )
    path = str(path)

    def best(fn, *args):
        out, secs = None, float("inf")
        for _ in range(2):
            t = time.perf_counter()
            out = fn(*args)
            secs = min(secs, time.perf_counter() - t)
        return out, secs * 1e3

    scan = _scan_group([path], "auto", False)[0]
    for b in bits:
        profile = (True, scan[2] / scan[1], scan[4])
        base = _initial(OnlineClassifier(), 1 << b, [-1, 1], profile).learners_
        _, copy0 = best(copy.copy, base)
        a, learn = best(base.learned_file, path, "auto", False, 1)
        other = base.learned_file(path, "auto", False, 1)
        delta, delta_ms = best(a.delta_from, base)
        _, patch = best(type(base).patched, base, delta)
        _, merge = best(a.merged, other, base)
        print(
            f"d=2^{b}: copy of the empty state {copy0:.1f} ms, learned_file (200 rows) "
            f"{learn:.1f}, delta {delta_ms:.1f}, patched {patch:.1f}, merged {merge:.1f}; "
            f"state {len(a.to_bytes()):,} bytes, delta {len(delta):,} bytes",
            flush=True,
        )


def generated_set(args) -> list:
    """bench_dask.py's generated stream of ``args.generated`` rows in ``args.tmp`` (made there
    unless its files are there already)."""
    from bench_dask import BITS, generated

    out = Path(args.tmp or tempfile.mkdtemp(prefix="dask_round_times_gen_"))
    out.mkdir(parents=True, exist_ok=True)
    paths = sorted(str(p) for p in out.glob("gen[0-9][0-9].libsvm"))
    test = out / "gen_test.libsvm"
    if len(paths) != 16 or not test.exists():
        paths, test, _ = generated(args.generated, out)
    return [(f"generated {args.generated} x 2^{BITS}", paths, str(test), 1 << BITS)]


def state_ops(paths: list) -> None:
    """In this process: CPU seconds of each state operation of a round on the state learned
    from the first two of ``paths`` (``--generated``'s files) and on one learned from the
    ninth, both from the fit's initial learners."""
    import copy

    from sketchlearn.dask import _initial, _scan_group

    scan = _scan_group(paths[:1], "auto", False)[0]
    profile = (scan[3], scan[2] / scan[1], scan[4])
    base = _initial(OnlineClassifier(), 1 << 20, [-1, 1], profile).learners_

    def cpu(name, fn, *args):
        c = time.thread_time()
        out = fn(*args)
        print(f"  {name:<40} {time.thread_time() - c:7.3f} s CPU", flush=True)
        return out

    a = cpu("learned_file (1st file)", base.learned_file, paths[0], "auto", False, 1)
    cpu("learn_file (2nd file)", a.learn_file, paths[1], "auto", False, 1)
    b = cpu(
        "learned_file (9th file, from the start)",
        base.learned_file,
        paths[8],
        "auto",
        False,
        1,
    )
    cpu("copy", copy.copy, a)
    raw = cpu("to_bytes", a.to_bytes)
    cpu(f"from_bytes ({len(raw):,} bytes)", type(a).from_bytes, raw)
    delta = cpu("delta_from", a.delta_from, base)
    cpu(f"patched ({len(delta):,} bytes)", type(base).patched, base, delta)
    cpu("merged", a.merged, b, base)


def _sized_result(n: int):
    """``(the time the task ends, n random bytes)``."""
    out = os.urandom(n)
    return time.time(), out


def transfer(workers: int, reps: int, mb: int = 100) -> None:
    """A result of ``mb`` MB from each of ``workers`` tasks, gathered through the scheduler and
    directly; seconds from each task's end to the result on the client, ``reps`` times."""
    from distributed import as_completed

    with local_client(workers) as client:
        for r in range(reps):
            for direct in (False, True):
                fs = [
                    client.submit(_sized_result, mb * 10**6, pure=False)
                    for _ in range(workers)
                ]
                secs = []
                if direct:
                    for fut in as_completed(fs):
                        end, _ = client.gather(fut, direct=True)
                        secs.append(time.time() - end)
                else:
                    for _, (end, _) in as_completed(fs, with_results=True):
                        secs.append(time.time() - end)
                del fs
                how = "directly" if direct else "through the scheduler"
                print(
                    f"rep {r}: {mb} MB from {workers} tasks, {how}: task end → client "
                    + ", ".join(f"{x:.3f}" for x in secs)
                    + f" s (load {os.getloadavg()[0]:.1f})",
                    flush=True,
                )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=1, help="as bench_dask.py's")
    ap.add_argument("--data", default=DATA)
    ap.add_argument(
        "--generated", type=int, default=0, help="rows of bench_dask's stream"
    )
    ap.add_argument("--tmp", default=None, help="--generated: directory of its files")
    ap.add_argument(
        "--state-ops",
        action="store_true",
        help="--generated: only the state operations' CPU in this process",
    )
    ap.add_argument(
        "--per-file",
        action="store_true",
        help="files: time each file (with a copy of the state a file, as before dask13)",
    )
    ap.add_argument(
        "--ceiling",
        action="store_true",
        help="a9a/r8: only the CPU of each step of a 1- and a 2-worker fit in this process "
        "(the ratio with no Dask overhead)",
    )
    ap.add_argument(
        "--fixed-cost",
        action="store_true",
        help="only the wall of fits of 16 rows (a fit's fixed cost), 1 and N workers",
    )
    ap.add_argument(
        "--transfer",
        action="store_true",
        help="only the trip of a 100 MB task result to the client, via the scheduler and direct",
    )
    ap.add_argument(
        "--reps",
        type=int,
        default=7,
        help="--ceiling: best of; --fixed-cost: fits; --transfer: repeats",
    )
    ap.add_argument(
        "--d-scaling",
        action="store_true",
        help="only the in-process cost of a round's state operations against 2^14..2^22",
    )
    args = ap.parse_args()
    if args.state_ops and args.generated <= 0:
        ap.error(
            "--state-ops needs --generated ROWS (the stream whose states it times)"
        )
    data = Path(args.data)
    tmp = Path(tempfile.mkdtemp(prefix="dask_round_times_"))
    try:
        if args.transfer:
            transfer(args.workers, args.reps)
            return
        if args.d_scaling:  # in this process: the functions as they are
            d_scaling(tmp)
            return
        if args.state_ops:  # in this process, on the generated stream's files
            state_ops(generated_set(args)[0][1])
            return
        sets = (
            generated_set(args)
            if args.generated
            else [
                (
                    "a9a",
                    split_file(data / "a9a.libsvm", tmp, "a9a", 8),
                    "a9a.t.libsvm",
                    123,
                ),
                (
                    "r8",
                    split_file(data / "r8_earn_vs_rest.libsvm", tmp, "r8", 8, 0, 5485),
                    split_file(data / "r8_earn_vs_rest.libsvm", tmp, "r8t", 1, 5485)[0],
                    23585,
                ),
            ]
        )
        if args.fixed_cost:
            fixed_cost(data, tmp, args.workers, args.reps)
            return
        if args.ceiling:  # in this process: the functions as they are
            ceiling(sets, args.reps)
            return
        instrument(args.per_file)
        for name, paths, test, d in sets:
            test = test if os.path.isabs(test) else str(data / test)
            if not args.generated:
                print(
                    f"\n{name}: parsing the 8 files alone here: {parse_alone(paths):.3f} s CPU"
                )
            warm = head_file(paths[0], tmp)
            for k in sorted({1, args.workers}):
                with local_client(k) as client:
                    from sketchlearn.dask import fit

                    fit(OnlineClassifier(), [warm], n_features=d, client=client)
                    for _ in range(args.repeats):
                        out = one_fit(client, paths, d, args.rounds, k)
                        report(name, k, *out, test, d)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    # Run from the module, not ``__main__``: the timed wrappers and the log must be pickled by
    # reference (the workers import this module and log into its ``LOG``).
    import dask_round_times

    dask_round_times.main()
