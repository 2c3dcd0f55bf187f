"""Benchmark of sketchlearn.dask (issue 30): distributed training against the single stream,
and the distributed FD sketch against dask.array.linalg.svd_compressed.

    .venv-ci/bin/python scripts/bench_dask.py --workers 2            # 1 and 2 workers
    .venv-ci/bin/python scripts/bench_dask.py --workers 16 --rows 10000000   # issue's full size

Runs unchanged with any number of workers (the worker counts measured are 1 and --workers).
Data sets:
* a generated sparse stream (fixed seed): --rows rows, 2^20 features, ~20 non-zeros per row,
  labels from a sparse logistic model, written as LIBSVM into 16 files, plus a held-out file;
* a9a (train → a9a.t) and r8_earn_vs_rest (first 5485 rows → last 2189 rows) from
  ../shared/data beside the repository (or --data), each split into 8 LIBSVM files.
Each is learned (a) as one stream in this process (in memory with ``fit``, and with
``partial_fit_file`` over the files in order in the representation ``fit`` chose: the
single-stream default) and (b) with ``sketchlearn.dask.fit`` on a LocalCluster of 1 and N
worker processes (one thread each; the representation chosen from a scan of the files, so
sparse-time for sparse data). Reported: examples/second, progressive error (single stream)
and held-out error ± its standard error.
The sketch: a dense matrix with a decaying spectrum in row blocks; ``sketchlearn.dask.sketch``
(FD, size 2k) against ``svd_compressed`` (rank k): seconds, and the spectral error of the top-k
subspace ``‖X − X V_k V_kᵀ‖₂² / σ_{k+1}²`` (1 is optimal).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from bench_common import DATA
from sketchlearn import OnlineClassifier
from sketchlearn.dask import fit, sketch
from sklearn.datasets import dump_svmlight_file, load_svmlight_file

BITS = 20
SEED = 20261125


def generated(rows: int, out: Path, files: int = 16, nnz: int = 20):
    """16 LIBSVM files of a sparse logistic stream and one held-out file (fixed seed)."""
    d = 1 << BITS
    rng = np.random.default_rng(SEED)
    w = np.zeros(d)
    support = rng.choice(d, size=20_000, replace=False)
    w[support] = rng.normal(size=support.size) * 2.0
    paths = []

    def write(n: int, path: Path, rng) -> None:
        step = 50_000
        with open(path, "wb") as f:
            for lo in range(0, n, step):
                m = min(step, n - lo)
                cols = np.concatenate(
                    [
                        rng.choice(support, size=(m, nnz // 2)),
                        rng.integers(0, d, (m, nnz // 2)),
                    ],
                    axis=1,
                )
                cols.sort(axis=1)
                vals = rng.random((m, nnz))
                X = sp.csr_matrix(
                    (vals.ravel(), cols.ravel(), np.arange(0, m * nnz + 1, nnz)),
                    shape=(m, d),
                )
                X.sum_duplicates()
                p = 1.0 / (1.0 + np.exp(-(X @ w)))
                y = np.where(rng.random(m) < p, 1, -1)
                dump_svmlight_file(X, y, f, zero_based=False)

    per = rows // files
    for i in range(files):
        path = out / f"gen{i:02d}.libsvm"
        write(per, path, np.random.default_rng(SEED + 1 + i))
        paths.append(str(path))
    test = out / "gen_test.libsvm"
    write(max(rows // 20, 10_000), test, np.random.default_rng(SEED - 1))
    return paths, str(test), d


def split_file(
    src: Path, out: Path, name: str, parts: int, lo: int = 0, hi: int | None = None
):
    lines = src.read_bytes().splitlines(keepends=True)[lo:hi]
    paths = []
    step = -(-len(lines) // parts)
    for i in range(parts):
        p = out / f"{name}{i}.libsvm"
        p.write_bytes(b"".join(lines[i * step : (i + 1) * step]))
        paths.append(str(p))
    return paths


def held_out(est, path: str, d: int):
    X, y = load_svmlight_file(path, n_features=d)
    err = float(np.mean(est.predict(X) != y))
    return err, float(np.sqrt(err * (1 - err) / len(y)))


def single_stream(make, paths, d, sparse):
    """The files learned in order by one estimator in this process (representation
    ``sparse``: the one the library chose for the in-memory run, which the Dask run's file
    scan chooses too). Also its CPU seconds (this process)."""
    est = make().set_params(sparse=sparse)
    t0, c0 = time.perf_counter(), cpu_seconds()
    for p in paths:
        est.partial_fit_file(p, n_features=d)
    return est, time.perf_counter() - t0, cpu_seconds() - c0


def cpu_seconds() -> float:
    """User + system CPU seconds of this process so far (all its threads)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def head_file(path: str, out: Path, lines: int = 1000) -> str:
    """The first ``lines`` lines of ``path`` as a file of their own (the workers' warm-up)."""
    p = out / f"warmup_{Path(path).name}"
    with open(path, "rb") as f:
        p.write_bytes(b"".join(line for _, line in zip(range(lines), f)))
    return str(p)


def blocks_per_task(files: int, workers: int, rounds: int) -> int:
    """Files each task learns so that a fit of ``files`` on ``workers`` takes ``rounds``
    rounds (0: one file per task)."""
    return 1 if rounds == 0 else -(-files // (workers * rounds))


def one_round_fit(client, paths: list, d: int, workers: int):
    """``sketchlearn.dask.fit`` of the default classifier on the files ``paths`` (``d``
    features) in one round on ``workers`` workers: the issue's schedule, as the scripts
    that split a fit's costs run it."""
    return fit(
        OnlineClassifier(),
        paths,
        n_features=d,
        client=client,
        blocks_per_task=blocks_per_task(len(paths), workers, 1),
    )


@contextlib.contextmanager
def local_client(workers: int):
    """A client of a LocalCluster of ``workers`` processes, one thread each, each worker in
    a session of its own (``os.setsid``). Linux with autogroup scheduling
    (``/proc/sys/kernel/sched_autogroup_enabled``) shares the cores among sessions, not
    processes: on a machine loaded by other sessions, workers in this script's session would
    share one session's CPU whatever their number, and 2 workers would measure no speed-up
    over 1. In sessions of their own they compete as separate machines' workers would."""
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
        ) as cluster,
        Client(cluster) as client,
    ):
        client.run(_own_session)
        yield client


def _own_session() -> int:
    """Moves this (worker) process into a new session; its session id."""
    with contextlib.suppress(PermissionError):  # already a session leader
        os.setsid()
    return os.getsid(0)


def _prog(est):
    return est.progressive_score_["error"]


def _note(*parts) -> None:
    print(
        *parts, f"load {os.getloadavg()[0]:.1f}", time.strftime("%H:%M:%S"), flush=True
    )


def run_learning(
    name,
    make,
    paths,
    test,
    d,
    workers,
    schedules=(0,),
    in_memory=True,
    sparse=None,
    single_last=False,
):
    """Rows of the table for one data set. ``in_memory``: also the single stream as
    ``fit`` on the whole set in memory, whose choice of representation the other runs take;
    without it (a set too large to hold comfortably) the representation is ``sparse``.
    ``single_last``: the single stream over the files after the Dask fits, not before."""
    rows = []
    if in_memory:
        # The library default as a single user runs it: the whole training set in memory,
        # the representation chosen by `auto` (sparse-time for sparse input).
        parts = [load_svmlight_file(p, n_features=d) for p in paths]
        X = sp.vstack([x for x, _ in parts]).tocsr()
        y = np.concatenate([t for _, t in parts])
        del parts
        est = make()
        t0 = time.perf_counter()
        est.fit(X, y)
        secs = time.perf_counter() - t0
        del X, y
        err, se = held_out(est, test, d)
        kind = "sparse-time" if est.learners_.sparse else "dense"
        n = est.learners_.examples_seen
        rows.append(
            (name, f"single stream, in memory ({kind})", n / secs, _prog(est), err, se)
        )
        _note(rows[-1])
        sparse = bool(est.learners_.sparse)
    if not single_last:
        rows.append(single_stream_row(name, make, paths, test, d, sparse))
    warm = head_file(paths[0], Path(paths[0]).parent)
    # Each schedule's 1- and N-worker fits run back to back (interleaved), so that their
    # ratio sees about the same machine load.
    for rounds in schedules:
        for k in sorted({1, workers}):
            with local_client(k) as client:
                fit(make(), [warm], n_features=d, client=client)  # warm the workers up
                cpu0 = client.run(cpu_seconds)
                own0 = cpu_seconds()
                t0 = time.perf_counter()
                per_task = blocks_per_task(len(paths), k, rounds)
                model = fit(
                    make(), paths, n_features=d, client=client, blocks_per_task=per_task
                )
                secs = time.perf_counter() - t0
                own = cpu_seconds() - own0
                cpu = client.run(cpu_seconds)
            err, se = held_out(model, test, d)
            kind = "sparse-time" if model.learners_.sparse else "dense"
            label = f"dask, {k} worker(s), {per_task} file(s) a task ({kind})"
            n = model.learners_.examples_seen
            rows.append((name, label, n / secs, None, err, se))
            used = ", ".join(f"{cpu[w] - cpu0[w]:.2f}" for w in sorted(cpu))
            # This process's CPU: Dask's client side, LocalCluster's scheduler (it runs in this
            # process), and a one-round fit's last merge (sketchlearn.dask merges the one or two
            # tasks' deltas here, as Spark's treeAggregate on the driver).
            _note(
                rows[-1],
                f"wall {secs:.2f} s, workers' CPU {used} s, client + scheduler CPU {own:.2f} s",
            )
    if single_last:
        rows.append(single_stream_row(name, make, paths, test, d, sparse))
    return rows


def single_stream_row(name, make, paths, test, d, sparse):
    """The table's row of the single stream over the files (printed as it comes)."""
    kind = "sparse-time" if sparse else "dense"
    est, secs, cpu = single_stream(make, paths, d, sparse)
    n = est.learners_.examples_seen
    err, se = held_out(est, test, d)
    row = (name, f"single stream, files ({kind})", n / secs, _prog(est), err, se)
    _note(row, f"wall {secs:.1f} s, CPU {cpu:.1f} s")
    return row


def run_sketch(workers, n=40_000, d=400, k=10):
    import dask.array as da

    scales = 1.0 / np.sqrt(1.0 + np.arange(d))

    def subspace_error(v):  # uses X and s, set below
        q, _ = np.linalg.qr(v.T)
        resid = X - (X @ q) @ q.T
        return np.linalg.norm(resid, 2) ** 2 / s[k] ** 2

    out = []
    with local_client(workers) as client:
        # Generated on the workers (16 row blocks); gathered once here for the exact error.
        rng = da.random.default_rng(SEED)
        Xd = client.persist(rng.normal(size=(n, d), chunks=(n // 16, d)) * scales)
        X = Xd.compute()
        s = np.linalg.svd(X, compute_uv=False)
        t0 = time.perf_counter()
        sk = sketch(Xd, size=2 * k, method="fd-fast", client=client)
        t_fd = time.perf_counter() - t0
        out.append(("FD sketch (m = 2k)", t_fd, subspace_error(sk.components_[:k])))
        t0 = time.perf_counter()
        _, _, vt = da.linalg.svd_compressed(Xd, k=k, seed=SEED)
        vt = vt.compute()
        t_svd = time.perf_counter() - t0
        out.append(("svd_compressed (rank k)", t_svd, subspace_error(vt)))
    return out, (n, d, k)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rows", type=int, default=320_000, help="generated stream rows")
    ap.add_argument("--data", default=DATA)
    ap.add_argument("--skip-generated", action="store_true")
    ap.add_argument("--skip-real", action="store_true", help="skip a9a and r8")
    ap.add_argument(
        "--skip-in-memory",
        action="store_true",
        help="generated stream: no in-memory single stream (10M rows: ~5 GB of CSR)",
    )
    ap.add_argument(
        "--single-last",
        action="store_true",
        help="generated stream: the single stream after the Dask fits (the 1 vs N ratio first)",
    )
    ap.add_argument(
        "--skip-sketch",
        action="store_true",
        help="no distributed sketch against svd_compressed",
    )
    ap.add_argument(
        "--tmp", default=None, help="directory for the files (default: the system's)"
    )
    ap.add_argument(
        "--rounds",
        default="0",
        help="Dask rounds (merges) per fit, or a comma-separated list of them, each measured "
        "with 1 and N workers: each task learns files/(workers·rounds) files "
        "(sketchlearn.dask.fit's blocks_per_task); 0: one file per task",
    )
    args = ap.parse_args()
    schedules = [int(r) for r in args.rounds.split(",")]
    data = Path(args.data)
    tmp = Path(tempfile.mkdtemp(prefix="bench_dask_", dir=args.tmp))
    rows = []
    load_before = os.getloadavg()
    try:
        if not args.skip_real:
            rows += run_real(data, tmp, args.workers, schedules)
        if not args.skip_generated:
            t0 = time.perf_counter()
            gen, gen_test, d = generated(args.rows, tmp)
            _note(f"generated {args.rows} rows in {time.perf_counter() - t0:.0f} s")
            rows += run_learning(
                f"generated {args.rows} x 2^{BITS} (auto)",
                OnlineClassifier,
                gen,
                gen_test,
                d,
                args.workers,
                schedules,
                in_memory=not args.skip_in_memory,
                sparse=True,
                single_last=args.single_last,
            )
        sketch_rows, (n, d, k) = (
            ([], (0, 0, 0)) if args.skip_sketch else run_sketch(args.workers)
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    report(rows, sketch_rows, n, d, k, args.workers, load_before)


def run_real(data: Path, tmp: Path, workers: int, schedules) -> list:
    """a9a and r8_earn_vs_rest, each in 8 files."""
    rows = []
    a9a = split_file(data / "a9a.libsvm", tmp, "a9a", 8)
    rows += run_learning(
        "a9a (auto)",
        OnlineClassifier,
        a9a,
        str(data / "a9a.t.libsvm"),
        123,
        workers,
        schedules,
    )
    r8 = split_file(data / "r8_earn_vs_rest.libsvm", tmp, "r8", 8, 0, 5485)
    r8_test = split_file(data / "r8_earn_vs_rest.libsvm", tmp, "r8test", 1, 5485)[0]
    rows += run_learning(
        "r8 earn (auto)", OnlineClassifier, r8, r8_test, 23585, workers, schedules
    )
    return rows


def report(rows, sketch_rows, n, d, k, workers, load_before) -> None:
    print(
        f"load average (1, 5, 15 min) at the start {load_before}, at the end {os.getloadavg()}"
    )
    print(
        "| data | learner run | examples/s | progressive error | held-out error ± s.e. |"
    )
    print("|---|---|---:|---:|---:|")
    for name, run, eps, prog, err, se in rows:
        p = "" if prog is None else f"{prog:.4f}"
        print(f"| {name} | {run} | {eps:,.0f} | {p} | {err:.4f} ± {se:.4f} |")
    if not sketch_rows:
        return
    print()
    print(f"Sketch of a {n} x {d} matrix, k = {k}, {workers} worker(s):")
    print("| method | seconds | ‖X − X V_k V_kᵀ‖₂² / σ_{k+1}² |")
    print("|---|---:|---:|")
    for name, secs, e in sketch_rows:
        print(f"| {name} | {secs:.2f} | {e:.4f} |")


if __name__ == "__main__":
    main()
