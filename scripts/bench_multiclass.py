#!/usr/bin/env python3
"""Multiclass default against the untuned peers (issue 24, "Measure").

One pass in file order, untuned, progressive 0/1 error and examples/second on dna.libsvm (3
classes), r8_multiclass.libsvm (8, sparse, 23,585 features) and mnist_test10k.libsvm (10, 784
dense), for
  * sketchlearn's multiclass default (one-against-all over the binary `auto` mixture, sparse-time
    members when the input is sparse): `sketchlearn train --multiclass --json` when the CLI has
    it, else the library example `multiclass_run` (the same library calls; said in the output);
  * VW 9.11.9 `--oaa K` (default loss, and `--loss_function logistic`), labels mapped to 1..K in
    sorted order, features as `|f idx:val` (converted before timing; time = the Workspace pass,
    parsing included, as VW parses in its own thread);
  * River 0.26.1 OneVsRestClassifier(LogisticRegression()) and SoftmaxRegression()
    (predict_one, then learn_one), each capped at --river-budget seconds (default 600): a run
    that does not finish in time is reported from ../shared/peers/RESULTS.md and marked so.

Usage (peers in a venv: python3 -m venv .venv-peers && .venv-peers/bin/pip install
vowpalwabbit==9.11.9 river==0.26.1 scikit-learn):
    cargo build --release -p sketchlearn-cli --example multiclass_run -p sketchlearn
    .venv-peers/bin/python scripts/bench_multiclass.py [--markdown] [--river-budget S]
"""

import json
import math
import os
import subprocess
import sys
import tempfile
import time

from bench_common import DATA, cli_json_rate, read_libsvm, release
from bench_common import EXE as CLI

EXAMPLE = release("examples", "multiclass_run")
FILES = ["dna.libsvm", "r8_multiclass.libsvm", "mnist_test10k.libsvm"]
# ../shared/peers/RESULTS.md (2026-11-24): River OvR(LogReg), River Softmax.
RIVER_RESULTS = {
    "dna.libsvm": (0.1127, 0.0973),
    "r8_multiclass.libsvm": (0.4405, 0.2244),
    "mnist_test10k.libsvm": (0.1291, 0.1236),
}


def cli_has_multiclass():
    if not os.path.exists(CLI):
        return False
    h = subprocess.run(
        [CLI, "train", "--help"], check=False, capture_output=True, text=True
    ).stdout
    return "--multiclass" in h


def ours(path):
    if cli_has_multiclass():
        return cli_json_rate(["--multiclass"], path)
    out = subprocess.run(
        [EXAMPLE, path], check=True, capture_output=True, text=True
    ).stdout
    s = json.loads(out)
    return {
        "error": s["progressive_error"],
        "n": s["examples"],
        "eps": s["examples_per_second"],
        "how": "library example multiclass_run",
        "learner": s["learner"],
    }


def vw(rows, classes, logistic):
    from vowpalwabbit import Workspace

    index = {c: k + 1 for k, c in enumerate(classes)}
    with tempfile.NamedTemporaryFile("w", suffix=".vw", delete=False) as f:
        for y, x in rows:
            f.write(
                f"{index[y]} |f " + " ".join(f"{i}:{v:g}" for i, v in x.items()) + "\n"
            )
        name = f.name
    args = f"--oaa {len(classes)} -b 18 --quiet -d {name}"
    if logistic:
        args += " --loss_function logistic"
    t = time.perf_counter()
    ws = Workspace(args)
    secs = time.perf_counter() - t
    err = ws.get_sum_loss() / ws.get_weighted_examples()
    ws.finish()
    os.unlink(name)
    return {"error": err, "n": len(rows), "eps": len(rows) / secs, "how": "measured"}


def river(rows, kind, budget, fallback):
    from river import linear_model, multiclass

    model = (
        multiclass.OneVsRestClassifier(linear_model.LogisticRegression())
        if kind == "ovr"
        else linear_model.SoftmaxRegression()
    )
    t = time.perf_counter()
    wrong = 0
    for n, (y, x) in enumerate(rows, 1):
        if model.predict_one(x) != y:
            wrong += 1
        model.learn_one(x, y)
        if time.perf_counter() - t > budget:
            return {
                "error": fallback,
                "n": len(rows),
                "eps": n / (time.perf_counter() - t),
                "how": f"RESULTS.md (over the {budget:.0f} s budget after {n} examples)",
            }
    secs = time.perf_counter() - t
    return {
        "error": wrong / len(rows),
        "n": len(rows),
        "eps": len(rows) / secs,
        "how": "measured",
    }


def se(r):
    e = r["error"]
    return math.sqrt(e * (1 - e) / r["n"])


def main():
    md = "--markdown" in sys.argv
    budget = 600.0
    if "--river-budget" in sys.argv:
        budget = float(sys.argv[sys.argv.index("--river-budget") + 1])
    table = []
    for name in FILES:
        path = os.path.join(DATA, name)
        rows = read_libsvm(path)
        classes = sorted({y for y, _ in rows})
        res = {"sketchlearn default": ours(path)}
        res["VW --oaa"] = vw(rows, classes, False)
        res["VW --oaa logistic"] = vw(rows, classes, True)
        fb = RIVER_RESULTS[name]
        res["River OvR(LogReg)"] = river(rows, "ovr", budget, fb[0])
        res["River Softmax"] = river(rows, "softmax", budget, fb[1])
        table.append((name, len(classes), len(rows), res))
        if not md:
            for k, r in res.items():
                print(
                    f"{name:22s} {k:20s} error {r['error']:.4f} ± {se(r):.4f} "
                    f"{r['eps']:10.0f} ex/s  [{r['how']}]",
                    flush=True,
                )
    ok_all, better = True, 0
    lines = []
    for name, k, n, res in table:
        o = res["sketchlearn default"]
        peers = {p: r for p, r in res.items() if p != "sketchlearn default"}
        best_name, best = min(peers.items(), key=lambda kv: kv[1]["error"])
        z = (best["error"] - o["error"]) / se(o)
        ok_all &= z >= -1
        better += z >= 1
        cells = " | ".join(
            f"{r['error']:.4f} ± {se(r):.4f}"
            + (
                ""
                if r["how"] in ("measured", "CLI") or r["how"].startswith("library")
                else "†"
            )
            for r in res.values()
        )
        vw_eps = res["VW --oaa"]["eps"]
        lines.append(
            f"| {name} | {k} | {n} | {cells} | {best_name} | {z:+.2f} | "
            f"{o['eps']:,.0f} | {vw_eps:,.0f} | {o['eps'] / vw_eps:.2f}× |"
        )
    if md:
        print(
            "| file | K | n | sketchlearn default | VW `--oaa` | VW `--oaa` logistic | River OvR(LogReg) | River Softmax | best peer | (best peer − ours)/s.e.(ours) | ours ex/s | VW `--oaa` ex/s | ours/VW |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|")
        print("\n".join(lines))
        print(
            f"\nours measured with: {table[0][3]['sketchlearn default']['how']}; † = from ../shared/peers/RESULTS.md (River over the time budget)"
        )
    else:
        print("\n".join(lines))
    print(
        f"\nwithin 1 s.e. of the best peer on all: {ok_all}; better by >= 1 s.e. on {better} of {len(table)}"
    )
    return 0 if ok_all and better >= 2 else 1


if __name__ == "__main__":
    sys.exit(main())
