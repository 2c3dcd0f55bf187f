#!/usr/bin/env python3
"""CPU and examples/s of the untuned default at several retirement thresholds ε, interleaved
with VW's default on the same files in the same run (issue 27; docs/results/speed.md, "The
retirement threshold ε on every shared file").

Run from the repository root with the peers' interpreter (VW), after
`cargo build --release -p sketchlearn-cli` and one `scripts/bench_speed.py` run (which writes the
generated stream and the VW text files into target/bench_speed/):

    .venv-peers/bin/python scripts/retire_eps_cpu.py [--reps 5] [--eps 1e-20,1e-9]
        [--work target/bench_speed] [--bin target/release/sketchlearn] [--warm-up K,FLOOR]

Each round runs, per stream, `sketchlearn train --quiet --json --retire EPS FILE` for every ε
and then VW's default exactly as scripts/bench_speed.py does (a fresh Python process running
`vowpalwabbit.Workspace("-d FILE.vw -b 18 --binary --loss_function logistic --quiet")`), and
records each child's wall clock and user + sys CPU (`getrusage(RUSAGE_CHILDREN)` around it).
Printed per stream and tool: the sorted CPU seconds, their median, the best wall clock, the
whole-process examples/s at the best wall clock (bench_speed.py's measure) and at the median
CPU, and the ratios ours / VW of both. The load average is printed before and after.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_speed import VW_CODE
from retire_eps import warm_up_env

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
STREAMS = ["a9a", "w8a.shuf", "r8_earn_vs_rest", "sparse_2p18_nnz50_100k"]


def timed(cmd, env=None):
    """(stdout, wall seconds, user + sys CPU seconds) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(
        cmd, check=True, capture_output=True, text=True, env=env
    ).stdout
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return out, wall, cpu


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--bin", default=REPO / "target" / "release" / "sketchlearn")
    ap.add_argument("--work", default=REPO / "target" / "bench_speed")
    ap.add_argument("--eps", default="1e-20,1e-9")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument(
        "--warm-up",
        default=None,
        metavar="K,FLOOR",
        help="the runs after the first ε under retire_eps.py's SL_WARM_UP (a scratch build)",
    )
    a = ap.parse_args()
    work = Path(a.work)
    eps = a.eps.split(",")
    files = {}
    for s in STREAMS:
        libsvm = DATA / f"{s}.libsvm"
        files[s] = (
            libsvm if libsvm.exists() else work / f"{s}.libsvm",
            work / f"{s}.vw",
        )
    runs = {}  # (stream, tool) -> [(wall, cpu, n, error)]
    print("load average before:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    rule = tuple(float(x) for x in a.warm_up.split(",")) if a.warm_up else None
    envs = {s: warm_up_env(rule, f[0]) for s, f in files.items()}
    for _ in range(a.reps):
        for s, (libsvm, vw) in files.items():
            for i, e in enumerate(eps):
                cmd = [str(a.bin), "train", "--quiet", "--json", "--retire", e]
                out, wall, cpu = timed(
                    [*cmd, str(libsvm)], env=envs[s] if i > 0 else None
                )
                j = json.loads(out)
                runs.setdefault((s, f"ours ε={e}"), []).append(
                    (wall, cpu, j["examples"], j["progressive_error"])
                )
            vw_args = f"-d {vw} -b 18 --binary --loss_function logistic --quiet"
            out, wall, cpu = timed([sys.executable, "-c", VW_CODE, vw_args])
            j = json.loads(out)
            runs.setdefault((s, "VW default"), []).append(
                (wall, cpu, j["examples"], j["error"])
            )
    print("load average after:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    print()
    print(
        "| stream | run | error | CPU s (user+sys, sorted) | median CPU | best wall s "
        "| ex/s (best wall) | ex/s (median CPU) | ratio to VW: wall / CPU |"
    )
    print("|---|---|---|---|---:|---:|---:|---:|---|")
    for s in files:
        vw = runs[(s, "VW default")]
        vw_wall = min(r[0] for r in vw)
        vw_cpu = statistics.median(r[1] for r in vw)
        for tool in [f"ours ε={e}" for e in eps] + ["VW default"]:
            rs = runs[(s, tool)]
            n = rs[0][2]
            wall = min(r[0] for r in rs)
            cpu = statistics.median(r[1] for r in rs)
            cpus = " ".join(f"{r[1]:.2f}" for r in sorted(rs, key=lambda r: r[1]))
            ratio = (
                ""
                if tool == "VW default"
                else f"{vw_wall / wall:.2f}× / {vw_cpu / cpu:.2f}×"
            )
            print(
                f"| {s} | {tool} | {rs[0][3]:.4f} | {cpus} | {cpu:.3f} | {wall:.3f} "
                f"| {n / wall:,.0f} | {n / cpu:,.0f} | {ratio} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
