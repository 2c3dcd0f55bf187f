#!/usr/bin/env python3
"""End-to-end `sketchlearn train` wall time with and without the read-ahead parser thread.

Runs `train --quiet` on FILE for a few learners, alternating the default (parsing on a second
thread, `sketchlearn::data::ReadAhead`) and `--no-read-ahead` (parsing on the learner's thread),
REPS times each, and prints a Markdown table: best and median wall seconds per mode and their
ratio, examples per second, and the progressive error of both modes (which must be identical).
The file is read once beforehand so that both modes find it in the page cache.

Usage (after `cargo build --release -p sketchlearn-cli`):

    python3 scripts/bench_read_ahead.py FILE [--bits B] [--reps N] [--bin PATH]

e.g. the replicated r8 stream of `sketchlearn-repro sparse-throughput`:

    python3 scripts/bench_read_ahead.py target/peers/sparse_r8_earn_vs_rest_x26.vw --bits 18
"""

import argparse
import json
import statistics
import subprocess
import time

LEARNERS = {
    "Oja-SON + diag": ["--algo", "newton", "--curvature", "oja", "--diag"],
    "RP-SON": ["--algo", "newton", "--curvature", "rp"],
    "AdaGrad": ["--algo", "adagrad"],
}


def run(binary, args, path):
    start = time.perf_counter()
    out = subprocess.run(
        [binary, "train", "--quiet", "--json", *args, path],
        check=True,
        capture_output=True,
        text=True,
    )
    return time.perf_counter() - start, json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--bits", type=int, default=18)
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--bin", default="target/release/sketchlearn")
    a = ap.parse_args()
    with open(a.file, "rb") as f:
        while f.read(1 << 24):
            pass
    bits = ["-b", str(a.bits)] if a.file.endswith((".vw", ".vw.gz")) else []
    modes = {"read-ahead": [], "no read-ahead": ["--no-read-ahead"]}
    times, reports = {}, {}
    for _ in range(a.reps):
        for name, flags in LEARNERS.items():
            for mode, extra in modes.items():
                t, rep = run(a.bin, [*flags, *bits, *extra], a.file)
                times.setdefault((name, mode), []).append(t)
                reports[(name, mode)] = rep
    print(f"file: {a.file}, {a.reps} alternating runs per cell, wall seconds\n")
    print(
        "| learner | read-ahead best / median | no read-ahead best / median | speed-up (best) "
        "| examples/s (read-ahead, best) | progressive error (both) |"
    )
    print("|---|---|---|---|---|---|")
    for name in LEARNERS:
        ra, na = times[(name, "read-ahead")], times[(name, "no read-ahead")]
        r1, r2 = reports[(name, "read-ahead")], reports[(name, "no read-ahead")]
        e1, e2 = r1.get("progressive_error"), r2.get("progressive_error")
        same = "identical" if e1 == e2 else f"DIFFER: {e2}"
        print(
            f"| {name} | {min(ra):.3f} / {statistics.median(ra):.3f} "
            f"| {min(na):.3f} / {statistics.median(na):.3f} | {min(na) / min(ra):.2f}× "
            f"| {r1['examples'] / min(ra):,.0f} | {e1:.5f} ({same}) |"
        )


if __name__ == "__main__":
    main()
