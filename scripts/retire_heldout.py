#!/usr/bin/env python3
"""The warm-up rule of the retirement (ε = 1e-9, no check before W = max(FLOOR, k·d/nnz̄) examples)
on held-out generated streams (issue 27; docs/results/speed.md, "The retirement threshold ε on
every shared file", the held-out part).

Each stream is scripts/bench_speed.py's generator (`generate_sparse`) with other dimensions d,
non-zeros per row nnz and seeds: `--streams LOG2D:NNZ:SEED,...` (100,000 rows), written to
`--work` if missing and deleted after its row unless `--keep`. Per stream, with the scratch build of
docs/results/retire_eps_scratch.patch (`--bin`; it reads SL_WARM_UP and prints SL_TRACE):
  * one run with no retirement (`--retire 0`) and SL_TRACE: its error, and the members' weight
    trajectories at every check point (256 examples), from which
      - the bottom-out: the check point at which the slow member (the outer mixture's member
        that ε = 1e-9 without warm-up retires) weighs least, and that weight;
      - W_need: the smallest warm-up (a multiple of 256) under which ε = 1e-9 retires no member,
        of any mixture, that later weighs more than 1e-6 (one that "comes back"), i.e. 256 past
        the last check point at which such a member weighs below ε; k_need = W_need/(d/nnz̄);
  * today's default (`--retire 1e-20`), ε = 1e-9 with the library's warm-up (1,024), and ε =
    1e-9 with W for each k of `--ks` and for k_need (when it is above the floor); a W at or
    beyond the stream's length reaches no check point, so the run is the no-retirement run
    (not repeated; shown as "= no ret.").
Errors are progressive 0/1 errors; z = (error − today's)/s.e., s.e. = √(p(1−p)/n) at today's p.

    python3 scripts/retire_heldout.py --bin /tmp/sl-scratch --work /work/retire17tmp \
        --streams 18:50:1,18:50:2,20:50:1 [--ks 3,5,8] [--keep] > heldout.md
    python3 scripts/retire_heldout.py --summarize heldout.md

`--summarize TABLE` reads such a table back and prints, per stream with a slow member, the
bottom-out example t_b and c = t_b·nnz̄/d (the expected views of a feature by then), k_need,
W_need ≈ k_need·d/nnz̄ (k_need is printed to 2 decimals) and W_need/√(d/nnz̄), then the
least-squares slopes of log W_need and log t_b against log(d/nnz̄) (1 = the rule's scaling).
"""

import argparse
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_speed import generate_sparse
from retire_eps import retirements, shape
from retire_trace import parse_trace

PERIOD = 256
N = 100_000


def run(binary, path, eps, warm_up=None, trace=False):
    """(JSON of `train --quiet --json --retire EPS FILE`, stderr)."""
    env = dict(os.environ)
    if warm_up is not None:
        env["SL_WARM_UP"] = repr(float(warm_up))
    if trace:
        env["SL_TRACE"] = "1"
    cmd = [str(binary), "train", "--quiet", "--json", "--retire", eps, str(path)]
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout), out.stderr


def outer(mixtures, members):
    """The outer mixture: of those with as many members as the JSON's mixture, the one whose
    first line comes last (inner mixtures print first; parse_trace keeps that order)."""
    return [m for m in mixtures if len(m[0][3]) == members][-1]


def needed_warm_up(mixtures, eps, floor):
    """W_need (module docs): 256 past the last check point at which a member that comes back
    (weighs > 1e-6 afterwards) weighs below `eps`; `floor` if there is none."""
    need = floor
    for rows in mixtures:
        for j in range(len(rows[0][3])):
            below = [i for i, r in enumerate(rows) if r[3][j] < eps]
            if not below:
                continue
            last = below[-1]
            later = [r[3][j] for r in rows[last + 1 :]]
            if later and max(later) > 1e-6:
                need = max(need, int(rows[last][0]) + PERIOD)
    return need


def bottom(rows, j):
    """(check point, weight) of member j's smallest weight."""
    i = min(range(len(rows)), key=lambda i: rows[i][3][j])
    return rows[i][0], rows[i][3][j]


def cell(j, ref, se):
    err = j["progressive_error"]
    z = (err - ref) / se if se > 0 else 0.0
    mark = "**" if abs(z) > 1 else ""
    return f"{mark}{err:.6f} ({z:+.2f}){mark}, {retirements(j)}"


def measure(a, log2d, nnz, seed):
    path = Path(a.work) / f"sparse_2p{log2d}_nnz{nnz}_s{seed}_100k.libsvm"
    if not path.exists():
        generate_sparse(path, n=N, d=1 << log2d, nnz=nnz, seed=seed)
    rows, d, nnz_bar = shape(path)
    ratio = d / nnz_bar
    j0, err = run(a.bin, path, "0", trace=True)
    mixtures = parse_trace(err)
    j20, _ = run(a.bin, path, "1e-20")
    j9, _ = run(a.bin, path, a.eps)
    ref = j20["progressive_error"]
    se = math.sqrt(ref * (1 - ref) / j20["examples"])
    top = outer(mixtures, len(j20["mixture"]))
    slow = [
        k
        for k, m in enumerate(j9["mixture"])
        if m.get("retired") and top[-1][3][k] > 1e-6
    ]
    slow_txt = " ".join(
        f"{k}: t={t:.0f} π={p:.1e} (t·nnz̄/d = {t / ratio:.2f})"
        for k in slow
        for t, p in [bottom(top, k)]
    )
    w_need = needed_warm_up(mixtures, float(a.eps), a.floor)
    k_need = w_need / ratio
    row = [
        f"2^{log2d}/{nnz}/s{seed}",
        f"{ratio:,.0f}",
        f"{j0['progressive_error']:.6f}, -",
        f"{ref:.6f} ± {se:.2g}, {retirements(j20)}",
        cell(j9, ref, se),
    ]
    ks = [float(k) for k in a.ks.split(",")]
    if k_need * ratio > a.floor:
        ks.append(k_need)
    for k in ks:
        w = max(a.floor, k * ratio)
        if w >= rows:
            row.append("= no ret. (W ≥ n)")
            continue
        jk, _ = run(a.bin, path, a.eps, warm_up=w)
        row.append(cell(jk, ref, se))
    if k_need * ratio <= a.floor:
        row.append("floor")
    row[-1] = f"k={k_need:.2f}: " + row[-1]
    row.append(slow_txt or "-")
    if not a.keep:
        path.unlink()
    return row


def slope(x, y):
    mx, my = sum(x) / len(x), sum(y) / len(y)
    return sum((a - mx) * (b - my) for a, b in zip(x, y)) / sum(
        (a - mx) ** 2 for a in x
    )


def summarize(table):
    """The `--summarize` report (module docs) of a table this script printed."""
    rows = []
    with open(table) as f:
        lines = f.readlines()
    for line in lines:
        m = re.match(r"\| (2\^\d+/\d+/s\d+) \| ([\d,]+) \|", line)
        k = re.search(r"k=([\d.]+): (?!floor)", line)
        b = re.search(r"t=(\d+) π=\S+ \(t·nnz̄/d = ([\d.]+)\)", line)
        if m and k and b:
            ratio, k_need = float(m[2].replace(",", "")), float(k[1])
            rows.append((m[1], ratio, k_need, k_need * ratio, int(b[1]), float(b[2])))
    rows.sort(key=lambda r: r[1])
    for name, ratio, k_need, w, t_b, c in rows:
        print(
            f"{name:14} d/nnz̄={ratio:7.0f} t_b={t_b:6d} c={c:5.2f} k_need={k_need:5.2f}"
            f" W_need≈{w:7.0f} W_need/√(d/nnz̄)={w / math.sqrt(ratio):5.0f}"
        )
    x = [math.log(r[1]) for r in rows]
    print(
        f"{len(rows)} streams; slope of log W_need on log(d/nnz̄): "
        f"{slope(x, [math.log(r[3]) for r in rows]):.2f}; "
        f"of log t_b: {slope(x, [math.log(r[4]) for r in rows]):.2f}"
    )


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--bin")
    ap.add_argument("--work")
    ap.add_argument("--summarize", metavar="TABLE")
    ap.add_argument("--streams", default="18:50:1,18:50:2")
    ap.add_argument("--ks", default="3,5,8")
    ap.add_argument("--eps", default="1e-9")
    ap.add_argument("--floor", type=float, default=2048.0)
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    if a.summarize:
        summarize(a.summarize)
        return
    if not (a.bin and a.work):
        ap.error("--bin and --work are needed to measure")
    head = ["stream d/nnz/seed", "d/nnz̄", "no retirement", "ε = 1e-20 (today) ± s.e."]
    head += [f"ε = {a.eps}, W = 1024"]
    head += [f"ε = {a.eps}, k = {k}" for k in a.ks.split(",")]
    head += [f"ε = {a.eps}, k = k_need", "slow member: bottom-out"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head), flush=True)
    for spec in a.streams.split(","):
        log2d, nnz, seed = (int(x) for x in spec.split(":"))
        print("| " + " | ".join(measure(a, log2d, nnz, seed)) + " |", flush=True)


if __name__ == "__main__":
    main()
