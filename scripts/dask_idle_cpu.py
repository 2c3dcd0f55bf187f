"""Dask's own CPU while a task holds no GIL (dask18): each worker of a LocalCluster of K
one-thread workers runs one ``time.sleep(S)`` task (a task inside one Rust call looks the same
to Dask: one Python frame, the GIL released); prints the CPU a second of each worker's main
thread (its event loop: profiler, heartbeats, monitors, tick), of each worker process, and of
this process (the client and the LocalCluster's scheduler). Dask's settings are compared by
their environment variables, e.g. ``DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False``.

    TAG=default python dask_idle_cpu.py S K
"""

from __future__ import annotations

import os
import resource
import sys
import time

from bench_dask import cpu_seconds, local_client


def main_thread_cpu() -> float:
    """CPU seconds of this process's main thread."""
    tick = os.sysconf("SC_CLK_TCK")
    with open(f"/proc/self/task/{os.getpid()}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / tick


def process_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> None:
    secs, k = float(sys.argv[1]), int(sys.argv[2])
    with local_client(k) as client:
        time.sleep(1)
        m0, p0, c0 = client.run(main_thread_cpu), client.run(process_cpu), cpu_seconds()
        workers = sorted(m0)
        futs = [
            client.submit(time.sleep, secs, pure=False, workers=[w]) for w in workers
        ]
        client.gather(futs)
        m1, p1, c1 = client.run(main_thread_cpu), client.run(process_cpu), cpu_seconds()
    main_ms = ", ".join(f"{1000 * (m1[w] - m0[w]) / secs:.1f}" for w in workers)
    proc_ms = ", ".join(f"{1000 * (p1[w] - p0[w]) / secs:.1f}" for w in workers)
    print(
        f"{os.environ.get('TAG', 'default'):>12}: worker main threads {main_ms} ms/s; worker "
        f"processes {proc_ms} ms/s; client + scheduler {1000 * (c1 - c0) / secs:.1f} ms/s; "
        f"load {os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
