"""What the benchmark scripts share: the repository root, the shared datasets, the release
builds and a LIBSVM reader. Import it from a script in scripts/ (run as `python3 scripts/NAME.py`, so that this
folder is on the module path)."""

import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "..", "shared", "data")
if not os.path.isdir(DATA):
    DATA = "/work/shared/data"


def release(*parts):
    """A path in the release build folder, e.g. release("examples", "dense_stream")."""
    return os.path.join(ROOT, "target", "release", *parts)


EXE = release("sketchlearn")


def read_libsvm(path):
    """A LIBSVM file's rows as (label, {index: value}) pairs in file order (blank lines skipped)."""
    rows = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if not parts:
                continue
            x = {}
            for tok in parts[1:]:
                i, v = tok.split(":")
                x[int(i)] = float(v)
            rows.append((float(parts[0]), x))
    return rows


def cli_json_rate(args, path, exe=EXE):
    """Run `sketchlearn train ARGS --json --quiet PATH`: its progressive error, examples and
    whole-process examples/second (wall-clock, start to exit)."""
    import json
    import subprocess
    import time

    t = time.perf_counter()
    out = subprocess.run(
        [exe, "train", *args, "--json", "--quiet", path],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    wall = time.perf_counter() - t
    s = json.loads(out)
    n = s.get("examples") or s["metrics"]["examples"]
    return {"error": s["progressive_error"], "n": n, "eps": n / wall, "how": "CLI"}
