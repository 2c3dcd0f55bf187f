#!/usr/bin/env python3
"""Interleaved `perf stat` of `BIN train FILE --quiet` for several binaries (issue 27).

    python3 scripts/futex_stat.py FILE REPS BIN...

Prints, per binary, the medians over REPS runs of: futex system calls
(`syscalls:sys_enter_futex`: thread hand-overs that park or wake a thread), context
switches and task-clock (CPU milliseconds of all threads). No wall clock: `perf stat`'s own
start-up would be in it.
"""

import os
import statistics
import subprocess
import sys

EVENTS = "syscalls:sys_enter_futex,context-switches,task-clock"


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    path, reps, bins = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    runs = {b: [] for b in bins}
    for _ in range(reps):
        for b in bins:
            err = subprocess.run(
                ["perf", "stat", "-x,", "-e", EVENTS, b, "train", path, "--quiet"],
                capture_output=True,
                text=True,
                check=True,
            ).stderr
            counts = [
                float(line.split(",")[0]) for line in err.strip().splitlines()[-3:]
            ]
            runs[b].append(counts)
    print(os.path.basename(path), "reps", reps, "load", os.getloadavg()[0])
    for b in bins:
        futex, switches, cpu = (statistics.median(c) for c in zip(*runs[b]))
        print(
            f"  {b:40s} futex {futex:6.0f}  context switches {switches:6.0f}  "
            f"task-clock {cpu:6.1f} ms (medians)"
        )


if __name__ == "__main__":
    main()
