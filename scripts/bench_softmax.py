#!/usr/bin/env python3
"""Softmax SON dense-time against sparse-time (issue 24 item 2), beside VW `--oaa K`.

One pass in file order, untuned, progressive 0/1 error and examples/second of
`sketchlearn train --multiclass --reduction softmax` (rfd-fast, m = 10) with
  * `--representation dense`: the dense-time learner (`SoftmaxSon`, the only one before),
  * the default representation (`auto`: sparse-time `SparseSoftmax` where `auto_sparse` says the
    input is sparse — r8_multiclass; dna and mnist stay dense),
  * `--representation sparse`: the sparse-time learner forced,
and VW 9.11.9 `--oaa K -b 18` in the same run (ratios are what to read on a shared machine).
Then, on r8_multiclass (sparse), the other sketches with a sparse-time form (issue 24): RP, Oja
and diagonal adaptation (`--diag` over rfd-fast), each dense-time against sparse-time forced
(`--sketches-file NAME` picks another file, `--no-sketches` skips them).
Our ex/s is the CLI's wall time of the whole `train` (parsing and the class/dimension pre-scan
included); VW's is its `Workspace` pass on a converted file.

Usage (peers in a venv, see bench_multiclass.py):
    cargo build --release -p sketchlearn-cli
    .venv-peers/bin/python scripts/bench_softmax.py [--markdown]
"""
import json
import os
import subprocess
import sys
import time

from bench_common import DATA
from bench_common import EXE as CLI
from bench_multiclass import FILES, read_libsvm, se, vw

MODES = [("dense", ["--representation", "dense"]),
         ("auto", []),
         ("sparse forced", ["--representation", "sparse"])]
SKETCHES = [("rp", ["--curvature", "rp"]),
            ("oja", ["--curvature", "oja"]),
            ("rfd-fast --diag", ["--diag"])]


def softmax(path, extra):
    t = time.perf_counter()
    out = subprocess.run([CLI, "train", "--multiclass", "--reduction", "softmax", "--json",
                          "--quiet", *extra, path], check=True, capture_output=True,
                         text=True).stdout
    wall = time.perf_counter() - t
    s = json.loads(out)
    n = s.get("examples") or s["metrics"]["examples"]
    return {"error": s["progressive_error"], "n": n, "eps": n / wall}


def main():
    md = "--markdown" in sys.argv
    head = " | ".join(f"softmax {m} error | ex/s" for m, _ in MODES)
    lines = [f"| file | K | n | {head} | VW `--oaa` error | VW ex/s | auto/dense speed | auto/VW speed |",
             "|---|---:|---:|" + "---:|---:|" * len(MODES) + "---:|---:|---:|---:|"]
    for name in FILES:
        path = os.path.join(DATA, name)
        rows = read_libsvm(path)
        classes = sorted({y for y, _ in rows})
        res = {m: softmax(path, extra) for m, extra in MODES}
        v = vw(rows, classes, False)
        cells = " | ".join(f"{r['error']:.4f} ± {se(r):.4f} | {r['eps']:,.0f}" for r in res.values())
        auto, dense = res["auto"], res["dense"]
        lines.append(f"| {name} | {len(classes)} | {len(rows)} | {cells} | "
                     f"{v['error']:.4f} ± {se(v):.4f} | {v['eps']:,.0f} | "
                     f"{auto['eps'] / dense['eps']:.2f}× | {auto['eps'] / v['eps']:.3f}× |")
        if not md:
            print(lines[-1], flush=True)
    if md:
        print("\n".join(lines))
    if "--no-sketches" not in sys.argv:
        sketches(md)
    return 0


def sketches(md):
    """Dense-time against sparse-time softmax over each other sketch, on one (sparse) file."""
    name = "r8_multiclass.libsvm"
    if "--sketches-file" in sys.argv:
        name = sys.argv[sys.argv.index("--sketches-file") + 1]
    path = os.path.join(DATA, name)
    lines = [f"\n{name}:\n",
             "| sketch | dense-time error | ex/s | sparse-time error | ex/s | sparse/dense speed |",
             "|---|---:|---:|---:|---:|---:|"]
    for sketch, flags in SKETCHES:
        d = softmax(path, [*flags, "--representation", "dense"])
        s = softmax(path, [*flags, "--representation", "sparse"])
        lines.append(f"| {sketch} | {d['error']:.4f} ± {se(d):.4f} | {d['eps']:,.0f} | "
                     f"{s['error']:.4f} ± {se(s):.4f} | {s['eps']:,.0f} | {s['eps'] / d['eps']:.2f}× |")
        if not md:
            print(lines[-1], flush=True)
    if md:
        print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
