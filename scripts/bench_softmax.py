#!/usr/bin/env python3
"""The untuned softmax learner against the untuned peers, and dense-time against sparse-time
(issue 24 item 2).

One pass in file order, untuned, progressive 0/1 error and examples/second of
`sketchlearn train --multiclass --reduction softmax` (no sketch flags: the sketch is chosen from
the input, fd-fast m = 20 on sparse input, rfd-fast m = 20 on dense input —
`linear/multiclass/sketch_choice.rs`) with
  * the default representation (`auto`: sparse-time where the input is sparse — r8_multiclass),
  * `--representation dense`: the dense-time learner,
  * `--representation sparse`: the sparse-time learner forced,
  * with `--before BIN`, the default of another build (e.g. main's binary) in the same run,
and, in the same run, the untuned peers of the issue: VW 9.11.9 `--oaa K -b 18` (default loss
and `--loss_function logistic`), River 0.26 `OneVsRestClassifier(LogisticRegression())` and
`SoftmaxRegression()` (each capped at `--river-budget` seconds, default 600; over it, the
number is taken from ../shared/peers/RESULTS.md and marked †; `--no-river` takes them from
there). The second table compares the default with the best peer in units of the peer's
standard error √(p(1−p)/n), p the peer's error (the issue's rule: within 1 s.e. on every file,
better by ≥ 1 s.e. on two). Then, on r8_multiclass (sparse), the other sketches with a
sparse-time form: RP, Oja and diagonal adaptation, each dense-time against sparse-time forced
(`--sketches-file NAME` picks another file, `--no-sketches` skips them).
Our ex/s is the CLI's wall time of the whole `train` (parsing and the class/dimension pre-scan
included); VW's is its `Workspace` pass on a converted file, River's its Python loop.

Usage (peers in a venv, see bench_multiclass.py):
    cargo build --release -p sketchlearn-cli
    .venv-peers/bin/python scripts/bench_softmax.py [--markdown] [--before BIN] [--river-budget S]
"""

import os
import sys

from bench_common import DATA, cli_json_rate
from bench_common import EXE as CLI
from bench_multiclass import FILES, RIVER_RESULTS, read_libsvm, river, se, vw

MODES = [
    ("auto", []),
    ("dense", ["--representation", "dense"]),
    ("sparse forced", ["--representation", "sparse"]),
]
SKETCHES = [
    ("rp", ["--curvature", "rp"]),
    ("oja", ["--curvature", "oja"]),
    ("rfd-fast --diag", ["--curvature", "rfd-fast", "--diag"]),
]


def softmax(path, extra, exe=CLI):
    return cli_json_rate(["--multiclass", "--reduction", "softmax", *extra], path, exe)


def arg(name, default=None):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def peers(rows, classes, name):
    res = {
        "VW --oaa": vw(rows, classes, False),
        "VW --oaa logistic": vw(rows, classes, True),
    }
    fb = RIVER_RESULTS[name]
    if "--no-river" in sys.argv:
        res["River OvR(LogReg)"] = {
            "error": fb[0],
            "n": len(rows),
            "eps": float("nan"),
            "how": "RESULTS.md",
        }
        res["River Softmax"] = {
            "error": fb[1],
            "n": len(rows),
            "eps": float("nan"),
            "how": "RESULTS.md",
        }
    else:
        budget = float(arg("--river-budget", 600))
        res["River OvR(LogReg)"] = river(rows, "ovr", budget, fb[0])
        res["River Softmax"] = river(rows, "softmax", budget, fb[1])
    return res


def cell(r):
    mark = "" if r["how"] in ("measured", "CLI") else "†"
    return f"{r['error']:.4f} ± {se(r):.4f}{mark}"


def main():
    md = "--markdown" in sys.argv
    before = arg("--before")
    modes = MODES + ([("before", [])] if before else [])
    head = " | ".join(f"softmax {m} error | ex/s" for m, _ in modes)
    lines = [
        f"| file | K | n | {head} | VW `--oaa` error | VW ex/s | auto/dense speed | auto/VW speed |",
        "|---|---:|---:|" + "---:|---:|" * len(modes) + "---:|---:|---:|---:|",
    ]
    verdict = [
        (
            "| file | softmax default | best untuned peer | its error | (peer − ours)/s.e.(peer) | "
            "VW `--oaa` logistic | River OvR(LogReg) | River Softmax |"
        ),
        "|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    better = within = 0
    for name in FILES:
        path = os.path.join(DATA, name)
        rows = read_libsvm(path)
        classes = sorted({y for y, _ in rows})
        res = {
            m: softmax(path, extra, before if m == "before" else CLI)
            for m, extra in modes
        }
        ps = peers(rows, classes, name)
        v = ps["VW --oaa"]
        cells = " | ".join(
            f"{r['error']:.4f} ± {se(r):.4f} | {r['eps']:,.0f}" for r in res.values()
        )
        auto, dense = res["auto"], res["dense"]
        lines.append(
            f"| {name} | {len(classes)} | {len(rows)} | {cells} | "
            f"{v['error']:.4f} ± {se(v):.4f} | {v['eps']:,.0f} | "
            f"{auto['eps'] / dense['eps']:.2f}× | {auto['eps'] / v['eps']:.3f}× |"
        )
        best_name, best = min(ps.items(), key=lambda kv: kv[1]["error"])
        z = (best["error"] - auto["error"]) / se(best)
        within += z >= -1
        better += z >= 1
        verdict.append(
            f"| {name} | {cell(auto)} | {best_name} | {cell(best)} | {z:+.2f} | "
            f"{cell(ps['VW --oaa logistic'])} | {cell(ps['River OvR(LogReg)'])} | "
            f"{cell(ps['River Softmax'])} |"
        )
        if not md:
            print(lines[-1], flush=True)
            print(verdict[-1], flush=True)
    verdict.append(
        f"\nWithin 1 s.e. of the best peer on {within} of {len(FILES)} files, better by "
        f"≥ 1 s.e. on {better} († = from ../shared/peers/RESULTS.md)."
    )
    if md:
        print("\n".join(lines))
        print()
        print("\n".join(verdict))
    if "--no-sketches" not in sys.argv:
        sketches(md)
    return 0


def sketches(md):
    """Dense-time against sparse-time softmax over each other sketch, on one (sparse) file."""
    name = "r8_multiclass.libsvm"
    name = arg("--sketches-file", name)
    path = os.path.join(DATA, name)
    lines = [
        f"\n{name}:\n",
        "| sketch | dense-time error | ex/s | sparse-time error | ex/s | sparse/dense speed |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for sketch, flags in SKETCHES:
        d = softmax(path, [*flags, "--representation", "dense"])
        s = softmax(path, [*flags, "--representation", "sparse"])
        lines.append(
            f"| {sketch} | {d['error']:.4f} ± {se(d):.4f} | {d['eps']:,.0f} | "
            f"{s['error']:.4f} ± {se(s):.4f} | {s['eps']:,.0f} | {s['eps'] / d['eps']:.2f}× |"
        )
        if not md:
            print(lines[-1], flush=True)
    if md:
        print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
