"""Two `sketchlearn` binaries on one file, interleaved (A B, then B A, ...): for each run of
`train --quiet FILE`, the process CPU and wall (`perf stat -e task-clock`) and, in a second run
under `perf record -e task-clock -s`, the CPU of the caller's (main) thread from `perf report -T`.
Prints the medians and the median paired difference (B minus A) of each measure. The main
thread carries the pass's critical path; on a shared machine CPU is the steadier measure, and
wall-clock is noise. Usage: python3 scripts/ab_thread_cpu.py N FILE BIN_A BIN_B
"""

import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def stat(binary, path):
    """Process CPU (task-clock) and wall milliseconds of one run."""
    t0 = time.perf_counter()
    r = subprocess.run(
        [
            "perf",
            "stat",
            "-x,",
            "-e",
            "task-clock",
            "--",
            binary,
            "train",
            path,
            "--quiet",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    wall = (time.perf_counter() - t0) * 1e3
    return float(r.stderr.strip().splitlines()[-1].split(",")[0]), wall


def main_thread_cpu(binary, path, scratch):
    """The main thread's CPU milliseconds in one run (`perf report -T`: tid == pid)."""
    subprocess.run(
        ["perf", "record", "-q", "-e", "task-clock", "-s", "-o", scratch]
        + ["--", binary, "train", path, "--quiet"],
        capture_output=True,
        check=True,
    )
    report = subprocess.run(
        ["perf", "report", "-i", scratch, "-T", "--stdio"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    main = 0.0
    for line in re.split(r"#\s+PID\s+TID\s+task-clock", report)[1].splitlines():
        f = line.split()
        if len(f) == 3 and f[0] == f[1]:
            main += int(f[2]) / 1e6
    return main


def main():
    n, path, a, b = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    got = {a: {"main thread CPU": [], "process CPU": [], "wall (noise)": []}, b: None}
    got[b] = {k: [] for k in got[a]}
    loads = []
    with tempfile.TemporaryDirectory() as tmp:
        scratch = str(Path(tmp) / "perf.data")
        for i in range(n):
            loads.append(Path("/proc/loadavg").read_text().split()[0])
            for binary in (a, b) if i % 2 == 0 else (b, a):
                cpu, wall = stat(binary, path)
                got[binary]["process CPU"].append(cpu)
                got[binary]["wall (noise)"].append(wall)
                got[binary]["main thread CPU"].append(
                    main_thread_cpu(binary, path, scratch)
                )
    print(f"{path}: {n} pairs, load (1 min) per pair {' '.join(loads)}")
    for key in got[a]:
        ma, mb = statistics.median(got[a][key]), statistics.median(got[b][key])
        diff = statistics.median(y - x for x, y in zip(got[a][key], got[b][key]))
        print(
            f"{key:16s} A {ma:8.1f} ms  B {mb:8.1f} ms  B/A {mb / ma:.3f}  paired {diff:+.1f} ms"
        )


if __name__ == "__main__":
    main()
