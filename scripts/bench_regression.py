#!/usr/bin/env python3
"""The squared-loss default on the 8 shared regression files (issue 28, item 1).

One pass in file order (the .shuf file for cadata), progressive predictions written by the
release CLI (`sketchlearn train --loss squared -p`), scored here: RMSE, MAE, R² (against the
variance of the labels), next to the running mean (computed here) and the untuned peers of
../shared/peers/RESULTS.md. Usage: cargo build --release -p sketchlearn-cli &&
python3 scripts/bench_regression.py [--markdown]
"""

import json
import math
import os
import subprocess
import sys
import tempfile

from bench_common import DATA, EXE

# file -> (VW default, River LR, River scaled LR): ../shared/peers/RESULTS.md, progressive RMSE;
# None = diverges.
PEERS = {
    "cpusmall.libsvm": (35.68, None, 796.3),
    "cpusmall_scale.libsvm": (19.87, 11.58, 796.3),
    "cadata.shuf.libsvm": (236715, None, 96337),
    "cadata_scale.shuf.libsvm": (236703, 75666, 96337),
    "abalone.libsvm": (2.318, 2.072, 2.163),
    "abalone_scale.libsvm": (2.632, 2.131, 2.163),
    "space_ga.libsvm": (0.1407, None, 0.1470),
    "space_ga_scale.libsvm": (0.1354, 0.1513, 0.1470),
}


def labels(path):
    with open(path) as f:
        return [float(line.split(None, 1)[0]) for line in f if line.strip()]


def scores(y, p):
    n = len(y)
    mse = sum((a - b) ** 2 for a, b in zip(y, p)) / n
    mae = sum(abs(a - b) for a, b in zip(y, p)) / n
    mean = sum(y) / n
    var = sum((a - mean) ** 2 for a in y) / n
    return math.sqrt(mse), mae, 1 - mse / var


def running_mean(y):
    out, s = [], 0.0
    for t, v in enumerate(y):
        out.append(s / t if t else 0.0)
        s += v
    return out


def main():
    md = "--markdown" in sys.argv
    rows = []
    for name, peers in PEERS.items():
        path = os.path.join(DATA, name)
        y = labels(path)
        with tempfile.NamedTemporaryFile("r", suffix=".pred") as tmp:
            out = subprocess.run(
                [
                    EXE,
                    "train",
                    "--loss",
                    "squared",
                    "--json",
                    "--quiet",
                    "-p",
                    tmp.name,
                    path,
                ],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            p = [float(line) for line in tmp.read().split()]
        summary = json.loads(out)
        rmse, mae, r2 = scores(y, p)
        m_rmse, m_mae, _ = scores(y, running_mean(y))
        best = min(v for v in peers if v is not None)
        weights = [round(m["weight"], 3) for m in summary.get("mixture") or []]
        ok = rmse <= best and rmse <= m_rmse
        rows.append((name, len(y), rmse, mae, r2, best, m_rmse, m_mae, ok, weights))
    if md:
        print(
            "| file | n | ours RMSE | ours MAE | ours R² | best untuned peer RMSE | running mean RMSE | running mean MAE | ≤ both | mixture weights |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|:-:|---|")
        for r in rows:
            print(
                f"| {r[0]} | {r[1]} | {r[2]:.5g} | {r[3]:.5g} | {r[4]:.4f} | {r[5]:.5g} | {r[6]:.5g} | {r[7]:.5g} | {'yes' if r[8] else '**no**'} | {r[9]} |"
            )
    else:
        for r in rows:
            print(
                f"{r[0]:26s} n={r[1]:6d} rmse={r[2]:.5g} mae={r[3]:.5g} r2={r[4]:.4f} "
                f"peer={r[5]:.5g} mean={r[6]:.5g} ok={r[8]} w={r[9]}"
            )
    return 0 if all(r[8] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
