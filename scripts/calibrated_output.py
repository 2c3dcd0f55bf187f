"""Progressive error and log loss with the raw and the calibrated mixture output.

Two `sketchlearn` binaries, BEFORE (a mixture predicts `Σ_k π_k σ(p_k)`) and AFTER (it predicts
`Σ_k π_k σ(s_k·p_k)` with each member's progressive scale, `Mixture::set_calibrated_output`),
run `train --quiet --json FILE` (one pass, file order) in one of three cases:

* `--case default` (stop 56): the default on the 12 shared binary sets of docs/results/auto.md
  (the `.shuf` copies of the class-sorted files, as there) and on any extra LIBSVM files given
  (the generated sparse stream of issue 27). For reference: BEFORE's `--algo adagrad`, and with
  `--vw PYTHON` (a venv with vowpalwabbit) VW's default (`--loss_function logistic`, no
  `--binary`: its average loss is the progressive log loss).
* `--case grid` (stop 57): `--algo adagrad-grid` alone on the same files.
* `--case multiclass` (stop 57): `--multiclass` (one-against-all of default class learners) on
  the shared multiclass sets; the log loss is `−ln p` of the true class (`multiclass_log_loss`).

z = (AFTER's error − BEFORE's) / SE with SE = √(p(1−p)/n), p BEFORE's error. In the grid and
multiclass cases `Δ log loss ± s.e.` is the paired difference, AFTER − BEFORE, of the
examples' losses read back from `-p` (binary: `--raw` margins, full precision; multiclass:
`--probabilities`, 6 decimals, a probability printed as 0 counted as 5e-7), its s.e. the
standard deviation of the differences over √n; the means are the `--json` values.

    python3 scripts/calibrated_output.py BEFORE AFTER [--case C] [--vw PYTHON] [EXTRA ...]

Prints a markdown table (docs/results/calibration.md).
"""

import argparse
import csv
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

from binary_sets import AUTO12 as SETS
from binary_sets import DATA

# The shared multiclass sets, each with the flags that name its label.
MULTICLASS = [
    ("dna.libsvm", []),
    ("r8_multiclass.libsvm", []),
    ("mnist_test10k.libsvm", []),
    ("penguins.shuf.csv", ["--label-column", "species"]),
]

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


def true_labels(path, flags):
    """The file's labels, in order (LIBSVM: the first token; CSV: `--label-column`)."""
    if path.suffix == ".csv":
        column = flags[flags.index("--label-column") + 1]
        with open(path, newline="") as f:
            return [r[column] for r in csv.DictReader(f)]
    with open(path) as f:
        return [line.split(maxsplit=1)[0] for line in f if line.strip()]


def same_label(a, b):
    """Whether two spellings name the same class (`+1` and `1`, `3` and `3.0`)."""
    try:
        return float(a) == float(b)
    except ValueError:
        return a == b


def losses(binary, path, flags, multiclass):
    """(`--json` of the run, the examples' losses from `-p`)."""
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "p"
        out = "--probabilities" if multiclass else "--raw"
        cmd = [
            binary,
            "train",
            "--quiet",
            "--json",
            *flags,
            out,
            "-p",
            str(p),
            str(path),
        ]
        run = subprocess.run(cmd, capture_output=True, text=True, check=True)
        j = json.loads(run.stdout)
        rows = [line.split() for line in p.read_text().splitlines()]
    classes = j["classes"]
    truth = true_labels(path, flags)
    assert len(truth) == len(rows) == j["examples"], (len(truth), len(rows))
    per = []
    for label, row in zip(truth, rows):
        k = next(i for i, c in enumerate(classes) if same_label(label, c))
        if multiclass:
            per.append(-math.log(max(float(row[1 + k]), 5e-7)))
        else:
            margin = float(row[0]) * (1 if k == 1 else -1)
            per.append(max(-margin, 0.0) + math.log1p(math.exp(-abs(margin))))
    return j, per


def paired(before, after):
    """Mean and s.e. of the paired differences after − before."""
    d = [a - b for a, b in zip(after, before)]
    n = len(d)
    mean = sum(d) / n
    var = sum((v - mean) ** 2 for v in d) / max(n - 1, 1)
    return mean, math.sqrt(var / n)


def compare(args, files, flags, multiclass):
    """The raw-against-calibrated table of one mixture (`--case grid` or `multiclass`)."""
    key = "multiclass_log_loss" if multiclass else "progressive_loss"
    print(
        "| dataset | n | error before | error after | z | log loss before | "
        "log loss after | Δ log loss ± s.e. |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for path, extra in files:
        j0, p0 = losses(args.before, path, [*flags, *extra], multiclass)
        j1, p1 = losses(args.after, path, [*flags, *extra], multiclass)
        n, e0, e1 = j0["examples"], j0["progressive_error"], j1["progressive_error"]
        se = math.sqrt(max(e0 * (1 - e0), 1e-12) / n)
        d, dse = paired(p0, p1)
        name = path.name.removesuffix(".libsvm")
        print(
            f"| {name} | {n} | {e0:.4f} | {e1:.4f} | {(e1 - e0) / se:+.2f} | "
            f"{j0[key]:.4f} | {j1[key]:.4f} | {d:+.4f} ± {dse:.4f} |",
            flush=True,
        )


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("extra", nargs="*", help="more LIBSVM files")
    ap.add_argument("--vw", help="a Python with vowpalwabbit (VW's default log loss)")
    ap.add_argument(
        "--case", choices=["default", "grid", "multiclass"], default="default"
    )
    args = ap.parse_args()
    files = [DATA / f"{s}.libsvm" for s in SETS] + [Path(e) for e in args.extra]
    if args.case == "grid":
        return compare(
            args, [(f, []) for f in files], ["--algo", "adagrad-grid"], False
        )
    if args.case == "multiclass":
        sets = [(DATA / f, x) for f, x in MULTICLASS] + [
            (Path(e), []) for e in args.extra
        ]
        return compare(args, sets, ["--multiclass"], True)
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
