"""Thread CPU and wall of the walk a Dask file fit makes before learning (``_core.scan_file``
over ``DIR/gen*.libsvm``, one thread when the build has ``threads``), and a digest of what it
found, to compare builds (dask17).

    python dask_scan_times.py DIR TAG
"""

from __future__ import annotations

import glob
import hashlib
import sys
import time

from sketchlearn import _core


def main() -> None:
    paths = sorted(glob.glob(sys.argv[1] + "/gen[0-9]*.libsvm"))
    try:
        _core.scan_file(paths[0], "auto", False, threads=1)
        kw = {"threads": 1}
    except TypeError:  # a build before dask17: one thread always
        kw = {}
    c, w = time.thread_time(), time.perf_counter()
    out = [_core.scan_file(p, "auto", False, **kw) for p in paths]
    c, w = time.thread_time() - c, time.perf_counter() - w
    digest = hashlib.sha256(repr(out).encode()).hexdigest()[:12]
    print(f"{sys.argv[2]}: cpu {c:.2f} s wall {w:.2f} s digest {digest} {out[0][1:]}")


if __name__ == "__main__":
    main()
