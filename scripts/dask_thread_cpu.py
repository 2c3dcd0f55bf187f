"""Where the CPU of a one-round ``sketchlearn.dask.fit`` of already generated files goes, thread
by thread, in each worker and in the client process (which holds a LocalCluster's scheduler),
and how much of the workers' memory is backed by transparent huge pages while they learn
(dask18). The files: ``bench_dask.generated(rows, DIR)``'s ``DIR/gen*.libsvm``.

    python dask_thread_cpu.py DIR K

Prints, for each process, the CPU seconds of each thread name during the fit (``/proc/self/
task/*/stat``: user + system), and the largest ``AnonHugePages`` / ``Anonymous`` of each worker
seen while the fit ran (``/proc/self/smaps``, sampled every 0.5 s from the client, with the
anonymous mappings of more than 8 MiB; ``NO_SAMPLER=1``: not sampled — the sampling runs on the
workers' event loops and adds to their CPU).
"""

from __future__ import annotations

import glob
import os
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

from bench_dask import head_file, local_client, one_round_fit
from sketchlearn import OnlineClassifier
from sketchlearn.dask import fit


def thread_cpu() -> dict:
    """CPU seconds of each thread name of this process (threads of one name summed)."""
    tick = os.sysconf("SC_CLK_TCK")
    names = {t.native_id: t.name for t in threading.enumerate()}
    out: dict = defaultdict(float)
    for task in glob.glob("/proc/self/task/*"):
        name = names.get(int(task.rsplit("/", 1)[1]), "other")
        try:
            with open(task + "/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:  # the thread ended meanwhile
            continue
        out[name] += (int(fields[11]) + int(fields[12])) / tick
    return dict(out)


def huge_pages() -> tuple:
    """(AnonHugePages, Anonymous) of this process in MiB, and the mappings of more than 8 MiB
    of anonymous memory as ``(Anonymous, AnonHugePages)`` in MiB."""
    total, big, cur = [0, 0], [], None
    with open("/proc/self/smaps") as f:
        for line in f:
            parts = line.split()
            if parts[0] == "Anonymous:":
                cur = int(parts[1])
                total[1] += cur
            elif parts[0] == "AnonHugePages:":
                total[0] += int(parts[1])
                if cur > 8 << 10:
                    big.append((cur >> 10, int(parts[1]) >> 10))
    return total[0] / 1024, total[1] / 1024, tuple(sorted(big, reverse=True))


def diff(after: dict, before: dict) -> str:
    names = sorted(after, key=lambda n: -(after[n] - before.get(n, 0.0)))
    return ", ".join(
        f"{n} {after[n] - before.get(n, 0.0):.2f}"
        for n in names
        if after[n] - before.get(n, 0.0) >= 0.005
    )


def main() -> None:
    where, k, d = sys.argv[1], int(sys.argv[2]), 1 << 20
    paths = sorted(glob.glob(where + "/gen[0-9]*.libsvm"))
    warm = head_file(paths[0], Path(where).parent)
    with local_client(k) as client:
        fit(OnlineClassifier(), [warm], n_features=d, client=client)
        peak: dict = defaultdict(lambda: (0.0, 0.0, ()))
        done = threading.Event()

        def sample() -> None:
            while not done.wait(0.5) and not os.environ.get("NO_SAMPLER"):
                for w, hp in client.run(huge_pages).items():
                    peak[w] = max(peak[w], hp)

        sampler = threading.Thread(target=sample)
        w0, c0, t0 = client.run(thread_cpu), thread_cpu(), time.perf_counter()
        sampler.start()
        one_round_fit(client, paths, d, k)
        secs = time.perf_counter() - t0
        done.set()
        sampler.join()
        w1, c1 = client.run(thread_cpu), thread_cpu()
    print(f"{k}w: wall {secs:.2f} s, load {os.getloadavg()[0]:.1f}")
    print(f"  client+scheduler: {diff(c1, c0)}")
    for w in sorted(w1):
        hp, anon, big = peak[w]
        print(f"  worker: {diff(w1[w], w0[w])}")
        print(
            f"    at the peak: {hp:.0f} of {anon:.0f} MiB anon huge; mappings (MiB, huge): {big}"
        )


if __name__ == "__main__":
    main()
