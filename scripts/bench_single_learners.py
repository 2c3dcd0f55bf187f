#!/usr/bin/env python3
"""Every single learner at its default flags (issue 28, item 3).

One pass, logistic loss, progressive 0/1 error ± its binomial standard error sqrt(p(1-p)/n), for
`sketchlearn train --algo A [--curvature C]` (no other flag) on
  * the dense generated stream: the SON paper's §5.1 data (`sketchlearn::synthetic::
    ill_conditioned`, d = 1000, condition number κ = 100, n = 20 000, seed 1), written by
    `cargo run --release -p sketchlearn --example dense_stream` to a scratch folder (deleted at
    the end), with Vowpal Wabbit's OjaNewton (`--OjaNewton --sketch_size 10`) and AdaGrad
    defaults run in the same run on the same numbers (`scripts/peers/run_vw.py`, .venv-peers);
  * four shared sets (heart, ionosphere, splice, magic04.shuf);
  * `--algo newton --curvature oja --size 10 --diag` on diabetes_raw (8 features + intercept).
"one class" = the share of the majority predicted class among the last half of the progressive
predictions is above 99% (the learner predicts one class for ever).
The bar (issue 28): error <= VW OjaNewton's + 0.05 on the dense stream, never one class.

Usage (repository root): cargo build --release -p sketchlearn-cli &&
    cargo build --release -p sketchlearn --example dense_stream &&
    python3 scripts/bench_single_learners.py [--markdown]
"""

import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

from bench_common import DATA, EXE, ROOT, release

GEN = release("examples", "dense_stream")
VW_PY = os.path.join(ROOT, ".venv-peers", "bin", "python")
N, D, KAPPA, SEED = 20_000, 1000, 100, 1
SHARED = ["heart", "ionosphere", "splice", "magic04.shuf"]
LEARNERS = (
    [["--algo", "ogd"], ["--algo", "adagrad"], ["--algo", "adagrad-grid"]]
    + [
        ["--algo", "newton", "--curvature", c]
        for c in ["identity", "full", "fd", "fd-fast", "rfd", "rfd-fast", "rp", "oja"]
    ]
    + [["--algo", "ada-fd"], ["--algo", "sketchy"]]
    + [[]]
)


def se(p, n):
    return math.sqrt(max(p * (1 - p), 0.0) / n)


def run(flags, path, scratch, dim=None):
    """Progressive error, n, learner name, and whether the last half predicts one class."""
    pred = os.path.join(scratch, "pred.txt")
    extra = ["--dim", str(dim)] if dim else []
    out = subprocess.run(
        [EXE, "train", "--json", "--quiet", *extra, *flags, "-p", pred, path],
        capture_output=True,
        text=True,
        check=True,
    )
    res = json.loads(out.stdout)
    with open(pred) as f:
        labels = [line.split()[0] for line in f if line.strip()]
    tail = labels[len(labels) // 2 :]
    top = max(tail.count(c) for c in set(tail))
    return (
        res["progressive_error"],
        res["examples"],
        res["learner"],
        top / len(tail) > 0.99,
    )


def vw(vw_file):
    """VW OjaNewton and AdaGrad at their defaults on the same stream: {mode: error}."""
    if not os.path.exists(VW_PY):
        return {}
    out = subprocess.run(
        [
            VW_PY,
            os.path.join(ROOT, "scripts", "peers", "run_vw.py"),
            "--mode",
            "oja,adagrad",
            "--setting",
            "untuned",
            vw_file,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    runs = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
    return {r["mode"]: r["progressive_error"] for r in runs if r.get("type") == "run"}


def cell(err, n, one_class):
    return f"{err:.4f} ± {se(err, n):.4f}" + (" (one class)" if one_class else "")


def main():
    md = "--markdown" in sys.argv
    scratch = tempfile.mkdtemp(prefix="single_learners_")
    try:
        dense, dense_vw = (
            os.path.join(scratch, "dense.libsvm"),
            os.path.join(scratch, "dense.vw"),
        )
        subprocess.run(
            [GEN, str(N), str(D), str(KAPPA), str(SEED), dense, dense_vw], check=True
        )
        peers = vw(dense_vw)
        bar = peers.get("oja")
        files = [("dense d=1000 κ=100", dense, D)] + [
            (name, os.path.join(DATA, name + ".libsvm"), None) for name in SHARED
        ]
        head = ["flags", "learner"] + [f[0] for f in files] + ["dense ≤ VW Oja + 0.05"]
        rows = []
        for flags in LEARNERS:
            cells, name, ok = [], None, None
            for label, path, dim in files:
                err, n, name_, one = run(flags, path, scratch, dim)
                name = name or name_
                cells.append(cell(err, n, one))
                if dim:
                    ok = bar is not None and err <= bar + 0.05 and not one
            rows.append(
                [" ".join(flags) or "(default)", name]
                + cells
                + ["yes" if ok else ("no" if bar is not None else "no VW")]
            )
        for mode in ("oja", "adagrad"):
            if mode in peers:
                rows.append(
                    [f"VW {mode} default", "", cell(peers[mode], N, False)]
                    + [""] * (len(files) - 1)
                    + [""]
                )
        raw = os.path.join(DATA, "diabetes_raw.libsvm")
        diag = ["--algo", "newton", "--curvature", "oja", "--size", "10", "--diag"]
        err, n, name, one = run(diag, raw, scratch)
        if md:
            print("| " + " | ".join(head) + " |")
            print("|" + "---|" * len(head))
            for r in rows:
                print(
                    "| "
                    + " | ".join(f"`{c}`" if i == 0 else c for i, c in enumerate(r))
                    + " |"
                )
        else:
            for r in rows:
                print("\t".join(r))
        print(
            f"\n`{' '.join(diag)}` on diabetes_raw: {cell(err, n, one)}"
            f" ({'predicts one class' if one else 'predicts both classes'})."
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
