"""One ``sketchlearn.dask.fit`` of the generated stream of scripts/bench_dask.py (issue 30), with
Dask's task stream split by task kind (compute and transfer seconds), the rate, the held-out
error and each worker's peak resident memory.

    python scripts/dask_phases.py --workers 2 --rows 200000
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from bench_dask import generated, held_out, local_client
from sketchlearn import OnlineClassifier
from sketchlearn.dask import fit


def peak_rss_mb() -> int:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


def phases(records) -> dict:
    from dask.utils import key_split

    out = defaultdict(float)
    for t in records:
        for s in t["startstops"]:
            out[(key_split(t["key"]), s["action"])] += s["stop"] - s["start"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rows", type=int, default=200_000)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="dask_phases_"))
    try:
        paths, test, d = generated(args.rows, tmp)
        with local_client(args.workers) as client:
            from distributed import get_task_stream

            fit(OnlineClassifier(), paths[:1], n_features=d, client=client)  # warm-up
            with get_task_stream(client) as ts:
                t0 = time.perf_counter()
                model = fit(OnlineClassifier(), paths, n_features=d, client=client)
                secs = time.perf_counter() - t0
            rss = client.run(peak_rss_mb)
        err, se = held_out(model, test, d)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for (kind, action), s in sorted(phases(ts.data).items()):
        print(f"{kind} {action}: {s:.1f} s")
    print(
        f"{args.workers} worker(s): {args.rows / secs:,.0f} examples/s, held-out error "
        f"{err:.4f} ± {se:.4f}, workers' peak RSS {sorted(rss.values())} MB, "
        f"load {os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
