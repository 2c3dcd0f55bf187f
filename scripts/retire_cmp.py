"""Two `sketchlearn` binaries on every file of scripts/retire_eps.py's list (and any extra LIBSVM
files given after them): `train --quiet --json -p P -f M [the file's flags] FILE` with each, and
whether the predictions, the model files (byte for byte) and the JSON (without its timings) are
the same; each binary's error and retirement points (docs/results/speed.md, branch retire18).

    python3 scripts/retire_cmp.py MAIN_BIN BRANCH_BIN [EXTRA.libsvm ...]
"""

import filecmp
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from retire_eps import DATA, SETS, retirements


def run(binary, args, path, tmp, tag):
    """(JSON without timings, predictions path, model path) of one run."""
    p, m = Path(tmp) / f"{tag}.p", Path(tmp) / f"{tag}.m"
    cmd = [binary, "train", "--quiet", "--json", *args, "-p", str(p), "-f", str(m)]
    out = subprocess.run(
        [*cmd, str(path)], capture_output=True, text=True, check=True
    ).stdout
    j = json.loads(out)
    for k in ("seconds", "examples_per_second"):
        j.pop(k, None)
    return j, p, m


def main():
    a, b, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
    files = [(DATA / name, args) for _, name, args, _ in SETS]
    files += [(Path(x), []) for x in extra]
    for path, args in files:
        with tempfile.TemporaryDirectory() as tmp:
            ja, pa, ma = run(a, args, path, tmp, "a")
            jb, pb, mb = run(b, args, path, tmp, "b")
            same = [
                "same" if filecmp.cmp(x, y, shallow=False) else "DIFFER"
                for x, y in ((pa, pb), (ma, mb))
            ]
            key = (
                "progressive_rmse" if "progressive_rmse" in ja else "progressive_error"
            )
            print(
                f"{path.name}: predictions {same[0]}, model {same[1]}, "
                f"json {'same' if ja == jb else 'DIFFER'}; error {ja[key]} / {jb[key]}; "
                f"retired {retirements(ja)} / {retirements(jb)}",
                flush=True,
            )


if __name__ == "__main__":
    main()
