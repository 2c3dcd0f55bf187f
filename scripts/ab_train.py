"""Two `sketchlearn` binaries on one file, interleaved: `train --quiet --json [ARGS] FILE`, each
run's wall-clock and its process CPU (user + sys, from `wait4`), medians and the median of the
paired differences (second binary minus first). On a shared machine the CPU is the steadier
measure. Usage: python scripts/ab_train.py N FILE BIN_A BIN_B [ARGS...]
"""

import os
import statistics
import sys
import time


def run(binary, path, extra):
    """Wall-clock and CPU milliseconds of one run (its output discarded)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        try:
            os.execv(binary, [binary, "train", "--quiet", "--json", *extra, path])
        finally:
            os._exit(127)  # never unwind through the parent's code in the child
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    os.close(devnull)
    if status != 0:
        sys.exit(f"{binary} failed on {path}")
    return wall * 1e3, (usage.ru_utime + usage.ru_stime) * 1e3


def main():
    n, path, a, b, extra = (
        int(sys.argv[1]),
        sys.argv[2],
        sys.argv[3],
        sys.argv[4],
        sys.argv[5:],
    )
    runs = {a: [], b: []}
    load = os.getloadavg()[0]
    for i in range(n):
        for binary in (a, b) if i % 2 == 0 else (b, a):
            runs[binary].append(run(binary, path, extra))
    name = os.path.basename(path)
    for binary in (a, b):
        wall = statistics.median(r[0] for r in runs[binary])
        cpu = statistics.median(r[1] for r in runs[binary])
        print(f"{name} {binary}: wall {wall:.2f} ms, CPU {cpu:.2f} ms (median of {n})")
    dw = statistics.median(y[0] - x[0] for x, y in zip(runs[a], runs[b]))
    dc = statistics.median(y[1] - x[1] for x, y in zip(runs[a], runs[b]))
    print(
        f"{name} paired B - A: wall {dw:+.2f} ms, CPU {dc:+.2f} ms; load {load:.1f} -> {os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
