"""SHA-256 of the state ``sketchlearn.dask.fit`` fits on the generated stream of
``bench_dask.py`` (2 workers) for three schedules: run it with two builds of the package to
check that a change to the Dask front end leaves the fitted model's bits unchanged.

    PYTHONPATH=<a build> python scripts/dask_state_hash.py --rows 24000
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import tempfile
from pathlib import Path

import sketchlearn
from bench_dask import generated, local_client
from sketchlearn import OnlineClassifier
from sketchlearn.dask import fit


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=24_000)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    print(sketchlearn.__file__)
    tmp = Path(tempfile.mkdtemp(prefix="dask_state_hash_"))
    try:
        paths, _, d = generated(args.rows, tmp)
        with local_client(args.workers) as client:
            for per_task in (None, 1, 4):
                model = fit(
                    OnlineClassifier(),
                    paths,
                    n_features=d,
                    client=client,
                    blocks_per_task=per_task,
                )
                digest = hashlib.sha256(model.learners_.state_bytes()).hexdigest()
                print(f"blocks_per_task={per_task}: {digest[:16]}", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
