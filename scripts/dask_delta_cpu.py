"""The CPU seconds of moving one task's state of a one-round fit (dask57): one shard of the issue's
stream learned as a task learns it (the first file, its FD-SON member put back to the base's as in a
fit of two tasks, that step's CPU printed too), then, ``REPS`` times, the worker's delta
(``_Delta``), its pickle under protocol 5 out of band, and the client's unpickling from a fresh
buffer (as a transfer delivers it) and rebuild (``_Delta.state``); and the whole state's model bytes
(``to_bytes``, ``from_bytes``) for comparison. Run it with each build's package on the path.

    python dask_delta_cpu.py FILE [REPS]      # a generated gen*.libsvm file, 2^20 features
"""

from __future__ import annotations

import pickle
import statistics
import sys
import time

import sketchlearn
from sketchlearn import OnlineClassifier
from sketchlearn import dask as m


def cpu(fn, *args):
    c = time.process_time()
    out = fn(*args)
    return out, time.process_time() - c


def rebuilt(stream: bytes, received: list, base):
    """The client's side: the delta unpickled from the transfer's buffers, its state rebuilt."""
    return pickle.loads(stream, buffers=received).state(base)


def moved(part):
    buffers = []
    stream = pickle.dumps(part, protocol=5, buffer_callback=buffers.append)
    return stream, [memoryview(bytearray(b.raw())) for b in buffers]


def main() -> None:
    path, reps = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5
    scans = [m._scan_group([path], "auto", False, True)]
    base = m._initial_of_scans(OnlineClassifier(), 1 << 20, None, scans, 2)
    est = m._learn_blocks(base, [path], None, "auto", False)
    retired = m._retired_members(est)
    _, forget = cpu(m._forgotten, est, base, retired, retired)
    times = {"delta": [], "rebuild": [], "to_bytes": [], "from_bytes": []}
    for _ in range(reps):
        part, secs = cpu(m._Delta, est, base)
        times["delta"].append(secs)
        stream, received = moved(part)
        size = len(part.delta)
        del part
        _, secs = cpu(rebuilt, stream, received, base)
        times["rebuild"].append(secs)
        whole, secs = cpu(est.learners_.to_bytes)
        times["to_bytes"].append(secs)
        _, secs = cpu(type(est.learners_).from_bytes, whole)
        times["from_bytes"].append(secs)
    print(
        f"{sketchlearn.__file__}: delta {size / 1e6:.1f} MB, state {len(whole) / 1e6:.1f} MB"
    )
    print(f"  _forgotten (once, the retired members put back): CPU {forget:.3f} s")
    for name, t in times.items():
        print(
            f"  {name}: CPU median {statistics.median(t):.3f} s ({', '.join(f'{x:.3f}' for x in t)})"
        )


if __name__ == "__main__":
    main()
