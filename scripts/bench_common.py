"""Paths the benchmark scripts share: the repository root, the shared datasets and the release
builds. Import it from a script in scripts/ (run as `python3 scripts/NAME.py`, so that this
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
