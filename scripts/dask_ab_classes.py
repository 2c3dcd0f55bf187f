"""The retired-member lever (``sketchlearn.dask._FORGET_RETIRED``, read on the client) off and
on, interleaved, for a one-against-all fit of the default on ``W`` workers: each class's mixture
leaves out of the round's merge the members retired for that class in every task. Generates
once (kept in ``DIR``) a sparse stream of ``K`` classes — ``2^B`` features, 20 stored a row,
half of them from a support of 20,000 features, the class drawn from the softmax of ``K``
linear scores on it — as 8 LIBSVM files and a held-out file, then prints for each fit its
wall, workers' and client + scheduler CPU seconds, held-out error and a hash of the held-out
``predict_proba`` bytes (equal hashes: the same predictions). The fit is
``dask_fit_files.timed_fit`` (a warm-up fit, then the timed one).

    python dask_ab_classes.py DIR [ROWS] [K] [B] [W] [ROUNDS] [RUNS]   # 400000 5 18 2 1 2
"""

from __future__ import annotations

import glob
import hashlib
import os
import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import sketchlearn.dask as sd
from bench_dask import SEED, head_file
from dask_fit_files import timed_fit
from sklearn.datasets import dump_svmlight_file, load_svmlight_file


def generated(
    rows: int, out: Path, k: int, bits: int, files: int = 8, nnz: int = 20
) -> None:
    """``files`` LIBSVM files of ``rows`` rows in all and ``gen_test.libsvm`` (fixed seeds)."""
    d = 1 << bits
    rng = np.random.default_rng(SEED)
    support = rng.choice(d, size=20_000, replace=False)
    w = np.zeros((d, k))
    w[support] = rng.normal(size=(support.size, k)) * 2.0

    def write(n: int, path: Path, rng) -> None:
        cols = np.concatenate(
            [
                rng.choice(support, size=(n, nnz // 2)),
                rng.integers(0, d, (n, nnz // 2)),
            ],
            axis=1,
        )
        cols.sort(axis=1)
        vals = rng.random((n, nnz))
        X = sp.csr_matrix(
            (vals.ravel(), cols.ravel(), np.arange(0, n * nnz + 1, nnz)), (n, d)
        )
        X.sum_duplicates()
        s = X @ w
        p = np.exp(s - s.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        y = (rng.random((n, 1)) > np.cumsum(p, axis=1)).sum(axis=1)
        dump_svmlight_file(X, np.minimum(y, k - 1), str(path), zero_based=False)

    out.mkdir(parents=True, exist_ok=True)
    for i in range(files):
        write(
            rows // files,
            out / f"gen{i:02d}.libsvm",
            np.random.default_rng(SEED + 1 + i),
        )
    write(
        max(rows // 20, 10_000),
        out / "gen_test.libsvm",
        np.random.default_rng(SEED - 1),
    )


def main() -> None:
    args = [int(a) for a in sys.argv[2:]]
    rows, k, bits, workers, rounds, runs = args + [400_000, 5, 18, 2, 1, 2][len(args) :]
    data, d = Path(sys.argv[1]), 1 << bits
    if not (data / "gen_test.libsvm").exists():
        generated(rows, data, k, bits)
    paths = sorted(glob.glob(str(data / "gen[0-9]*.libsvm")))
    warm = head_file(paths[0], data, 1000)
    X, y = load_svmlight_file(str(data / "gen_test.libsvm"), n_features=d)
    for run in range(runs):
        for forget in (False, True):
            sd._FORGET_RETIRED = forget
            load = os.getloadavg()[0]
            model, secs, own, cpu = timed_fit(paths, workers, warm, d, rounds)
            err = float(np.mean(model.predict(X) != y))
            digest = hashlib.sha256(model.predict_proba(X).tobytes()).hexdigest()[:16]
            used = " + ".join(f"{c:.2f}" for c in cpu)
            print(
                f"run {run + 1} lever {'on ' if forget else 'off'}: wall {secs:.2f} s, workers' "
                f"CPU {used} s, client + scheduler CPU {own:.2f} s, held-out error {err:.4f}, "
                f"proba hash {digest}, retired {model.learners_.retired_members}, load {load:.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
