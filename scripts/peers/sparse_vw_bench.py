#!/usr/bin/env python3
"""Vowpal Wabbit timings for docs/results/sparse_throughput.md: start-up, parse-only and
learning time, peak memory, progressive error.

Every run is a fresh child process (so VmHWM is that run's peak). The text file is first turned
into VW's binary cache (`--cache_file`, one `--noop -k` pass, not timed), and every timed run
reads that cache, so that VW's parsing costs little (text parsing takes VW about as long as
OjaNewton's learning, and runs in a separate thread, so subtracting it is unreliable):
  startup  the learner on an empty file      -> start-up time (VW allocates and, for OjaNewton,
                                                initialises its whole 2^b weight table here)
  noop     `--noop` on the cache             -> reading the cache
  learn    the learner on the cache          -> total time
Learning-only time = (learn - startup) - (noop - startup of noop). CPU times are the child's
process CPU time (`time.process_time()` around the `Workspace` constructor, which runs the pass).

Usage:
  .venv-peers/bin/python scripts/peers/sparse_vw_bench.py --bits 18 --repeat 3 FILE.vw
Output: one JSON object per line:
  {"mode", "kind", "bits", "repeat", "wall", "cpu", "vmhwm_kb", "examples", "progressive_error",
   "status", "message"}
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, math, sys, time
import vowpalwabbit
args = sys.argv[1]
t0 = time.perf_counter(); c0 = time.process_time()
ws = vowpalwabbit.Workspace(args)
wall = time.perf_counter() - t0; cpu = time.process_time() - c0
n = ws.get_weighted_examples(); loss = ws.get_sum_loss()
hwm = None
for line in open("/proc/self/status"):
    if line.startswith("VmHWM:"):
        hwm = int(line.split()[1])
ws.finish()
err = loss / n if n > 0 else None
if err is not None and not math.isfinite(err):
    err = None
print(json.dumps(dict(wall=wall, cpu=cpu, vmhwm_kb=hwm, examples=n, progressive_error=err)))
"""

MODES = {
    "adagrad": "--adaptive --normalized --invariant -l 0.5",
    "oja": "--OjaNewton --sketch_size {m}",
}


def run_child(python, args):
    proc = subprocess.run(
        [python, "-c", CHILD, args], check=False, capture_output=True, text=True
    )
    if proc.returncode != 0 or not proc.stdout.strip():
        return {"status": "error", "message": proc.stderr.strip()[-300:]}
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["status"] = (
        "ok" if out["progressive_error"] is not None or out["examples"] == 0 else "nan"
    )
    out["message"] = None
    return out


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("file")
    ap.add_argument("--bits", type=int, default=18)
    ap.add_argument("--sketch-size", type=int, default=10)
    ap.add_argument("--modes", default="adagrad,oja")
    ap.add_argument("--repeat", type=int, default=3)
    opts = ap.parse_args()
    python = sys.executable
    common = f"--binary --loss_function logistic -b {opts.bits} --quiet"
    with tempfile.TemporaryDirectory() as tmp:
        empty = Path(tmp) / "empty.vw"
        empty.write_text("")
        cache = Path(tmp) / "data.cache"
        made = run_child(
            python, f"--noop {common} -d {opts.file} --cache_file {cache} -k"
        )
        if made.get("status") == "error" or not cache.exists():
            sys.exit(f"could not build the cache: {made}")
        src = f"-d {opts.file} --cache_file {cache}"
        plan = [
            ("noop", "startup", f"--noop {common} -d {empty}"),
            ("noop", "noop", f"--noop {common} {src}"),
        ]
        for mode in opts.modes.split(","):
            algo = MODES[mode].format(m=opts.sketch_size)
            plan.append((mode, "startup", f"{algo} {common} -d {empty}"))
            plan.append((mode, "learn", f"{algo} {common} {src}"))
        for rep in range(opts.repeat):
            for mode, kind, args in plan:
                r = run_child(python, args)
                r.update(mode=mode, kind=kind, bits=opts.bits, repeat=rep, args=args)
                sys.stdout.write(json.dumps(r) + "\n")
                sys.stdout.flush()


if __name__ == "__main__":
    main()
