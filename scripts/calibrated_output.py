"""The default's progressive error and log loss with the raw and the calibrated mixture output.

Two `sketchlearn` binaries, BEFORE (the mixture predicts `Σ_k π_k σ(p_k)`) and AFTER (it predicts
`Σ_k π_k σ(s_k·p_k)` with each member's progressive scale, `Mixture::set_calibrated_output`),
run `train --quiet --json FILE` (the default, one pass, file order) on the 12 shared binary sets
of docs/results/auto.md (the `.shuf` copies of the class-sorted files, as there) and on any
extra LIBSVM files given (the generated sparse stream of issue 27). For reference: BEFORE's
`--algo adagrad`, and with `--vw PYTHON` (a venv with vowpalwabbit) VW's default
(`--loss_function logistic`, no `--binary`: its average loss is the progressive log loss).

z = (AFTER's error − BEFORE's) / SE with SE = √(p(1−p)/n), p BEFORE's error.

    python3 scripts/calibrated_output.py BEFORE AFTER [--vw PYTHON] [EXTRA.libsvm ...]

Prints a markdown table (docs/results/calibration.md).
"""

import argparse
import json
import math
import subprocess
import sys
from pathlib import Path

from binary_sets import AUTO12 as SETS
from binary_sets import DATA

REPO = Path(__file__).resolve().parents[1]

VW_SNIPPET = """
import sys, vowpalwabbit
sys.path.insert(0, sys.argv[1])
from run_vw import convert
from pathlib import Path
vw_file, _, _ = convert(Path(sys.argv[2]), Path(sys.argv[3]))
ws = vowpalwabbit.Workspace(f"--loss_function logistic -b 18 --quiet -d {vw_file}")
print(ws.get_sum_loss() / ws.get_weighted_examples())
ws.finish()
"""


def train(binary, path, *flags):
    """`train --quiet --json` of one file: (examples, error, log loss)."""
    cmd = [binary, "train", "--quiet", "--json", *flags, str(path)]
    j = json.loads(
        subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    )
    return j["examples"], j["progressive_error"], j["progressive_loss"]


def vw_log_loss(python, path):
    """VW's default progressive (average) logistic loss on `path`."""
    cmd = [
        python,
        "-c",
        VW_SNIPPET,
        str(REPO / "scripts" / "peers"),
        str(path),
        str(REPO / "target" / "peers"),
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return float(out.split()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("extra", nargs="*", help="more LIBSVM files")
    ap.add_argument("--vw", help="a Python with vowpalwabbit (VW's default log loss)")
    args = ap.parse_args()
    files = [DATA / f"{s}.libsvm" for s in SETS] + [Path(e) for e in args.extra]
    print(
        "| dataset | n | error before | error after | z | log loss before | "
        "log loss after | AdaGrad error / log loss | VW default log loss |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---|---:|")
    for path in files:
        n, e0, l0 = train(args.before, path)
        _, e1, l1 = train(args.after, path)
        _, ea, la = train(args.before, path, "--algo", "adagrad")
        se = math.sqrt(max(e0 * (1 - e0), 1e-12) / n)
        vw = f"{vw_log_loss(args.vw, path):.4f}" if args.vw else "—"
        name = path.name.removesuffix(".libsvm")
        print(
            f"| {name} | {n} | {e0:.4f} | {e1:.4f} | {(e1 - e0) / se:+.2f} | "
            f"{l0:.4f} | {l1:.4f} | {ea:.4f} / {la:.4f} | {vw} |",
            flush=True,
        )


if __name__ == "__main__":
    sys.exit(main())
