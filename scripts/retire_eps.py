#!/usr/bin/env python3
"""The default mixture's retirement threshold ε on every shared data file a default runs on
(issue 27; docs/results/speed.md, "The retirement threshold ε on every shared file").

For each file and each ε, one pass in file order of the untuned default,
`sketchlearn train --quiet --json --retire EPS FILE` (regression: `--loss squared`), and the
progressive error (regression: RMSE) with the members' retirement points (`retired_at` in the
JSON's `mixture`, in importance weight = examples). The first ε is the reference ("today"):
every other ε's error is compared with it in units of its standard error,
  * classification: the binomial s.e. sqrt(p(1-p)/n), p the reference's error;
  * regression: the delta-method s.e. of the reference's progressive RMSE,
    sd(e_t^2) / (2 RMSE sqrt(n)), from its per-example errors (`-p`);
and a change beyond 1 s.e. is flagged (`**`).

Multiclass runs refuse `--retire` (their members keep the library's default ε), so their
rows need one binary per ε, built with `DEFAULT_EPSILON` in
crates/sketchlearn/src/linear/mixture_retirement.rs set to that ε: pass them as
`--multiclass-bin EPS=PATH` (a multiclass row without a binary for an ε shows "—"). The
multiclass JSON holds no mixture, so its rows show no retirement points.

`--warm-up K,FLOOR` measures the dimension-tied warm-up (speed.md: the rule of "Keeping a slow
starter"): each file runs with the environment variable SL_WARM_UP = max(FLOOR, K·d/nnz̄), d the
largest feature index and nnz̄ the mean non-zeros per row of the file, which only a scratch build
reads (docs/results/retire_eps_scratch.patch, applied to crates/sketchlearn; main's binary
ignores the variable and keeps its warm-up of 1,024).

Usage (from the repository root, after `cargo build --release -p sketchlearn-cli`):
    python3 scripts/retire_eps.py [--bin target/release/sketchlearn]
        [--eps 1e-20,1e-15,1e-12,1e-9,1e-6] [--multiclass-bin 1e-9=/tmp/sl-1e-9 ...]
        [--generated target/bench_speed/sparse_2p18_nnz50_100k.libsvm]
"""

import argparse
import json
import math
import os
import subprocess
import tempfile
from pathlib import Path

from binary_sets import AUTO12, DATA

REPO = Path(__file__).resolve().parents[1]

# group, file name in ../shared/data, extra flags, kind
SETS = (
    [("auto.md", f"{n}.libsvm", [], "binary") for n in AUTO12]
    + [
        ("raw_scales.md", f"{n}_raw.libsvm", [], "binary")
        for n in ["diabetes", "heart", "australian", "ionosphere"]
    ]
    + [
        ("payoff_criterion.md", "a8a.libsvm", [], "binary"),
        ("payoff_criterion.md", "a9a.t.libsvm", [], "binary"),
        (
            "multiclass.md (CSV)",
            "attrition.csv",
            ["--label-column", "Attrition"],
            "binary",
        ),
    ]
    + [
        # the sorted (file-order) twins of the .shuf copies (MANIFEST.md: labels contiguous)
        ("MANIFEST.md, sorted", f"{n}.libsvm", [], "binary")
        for n in ["w8a", "magic04", "spam"]
    ]
    + [
        ("regression.md", f"{n}.libsvm", ["--loss", "squared"], "regression")
        for n in [
            "cpusmall",
            "cpusmall_scale",
            "cadata",
            "cadata.shuf",
            "cadata_scale",
            "cadata_scale.shuf",
            "abalone",
            "abalone_scale",
            "space_ga",
            "space_ga_scale",
        ]
    ]
    + [
        ("multiclass.md", f"{n}.libsvm", ["--multiclass"], "multiclass")
        for n in ["dna", "r8_multiclass", "mnist_test10k"]
    ]
    + [
        (
            "multiclass.md (CSV)",
            "penguins.shuf.csv",
            ["--multiclass", "--label-column", "species"],
            "multiclass",
        )
    ]
)
GENERATED = REPO / "target" / "bench_speed" / "sparse_2p18_nnz50_100k.libsvm"


def shape(path):
    """(rows, d, nnz̄) of a LIBSVM file: d the largest feature index, nnz̄ the mean non-zeros per
    row (rows without a feature are not counted)."""
    rows = nnz = d = 0
    with open(path) as f:
        for line in f:
            parts = line.split()
            if not parts or ":" not in "".join(parts[1:2]):
                continue
            rows += 1
            nnz += len(parts) - 1
            d = max(d, max(int(t.split(":", 1)[0]) for t in parts[1:]))
    return rows, d, (nnz / rows if rows else 0.0)


def warm_up_env(rule, path):
    """The environment of one run: SL_WARM_UP = max(FLOOR, K·d/nnz̄) for `rule` = (K, FLOOR)."""
    env = dict(os.environ)
    if rule is None:
        return env
    k, floor = rule
    rows, d, nnz_bar = shape(path)
    w = max(floor, k * d / nnz_bar) if rows else floor
    env["SL_WARM_UP"] = repr(w)
    return env


def run(binary, args, path, predictions=None, env=None):
    cmd = [str(binary), "train", "--quiet", "--json", *args]
    if predictions is not None:
        cmd += ["-p", str(predictions)]
    out = subprocess.run(
        [*cmd, str(path)], check=True, capture_output=True, text=True, env=env
    ).stdout
    return json.loads(out)


def rmse_se(path, predictions):
    """Delta-method s.e. of the progressive RMSE from the per-example errors."""
    with open(path) as f:
        labels = [float(line.split(None, 1)[0]) for line in f if line.strip()]
    with open(predictions) as f:
        preds = [float(line) for line in f if line.strip()]
    assert len(labels) == len(preds), (path, len(labels), len(preds))
    sq = [(y - p) ** 2 for y, p in zip(labels, preds)]
    n = len(sq)
    mse = sum(sq) / n
    var = sum((s - mse) ** 2 for s in sq) / (n - 1)
    return math.sqrt(var / n) / (2 * math.sqrt(mse))


def retirements(j):
    """'k@point' for each retired member (k = its index in the mixture), '-' when none."""
    pts = [
        f"{k}@{m['retired_at'] if m['retired_at'] == 'inf' else int(m['retired_at'])}"
        for k, m in enumerate(j.get("mixture") or [])
        if m.get("retired")
    ]
    return " ".join(pts) if pts else "-"


def measure(binary, mc_bins, eps, args, kind, path, rule):
    """(n, [(error, retirements) or None per ε], s.e. of the reference); the first ε runs
    without `rule` (the reference), the others with it."""
    cells, n, se = [], None, None
    for i, e in enumerate(eps):
        env = warm_up_env(rule if i > 0 else None, path)
        if kind == "multiclass":
            if e not in mc_bins:
                cells.append(None)
                continue
            j = run(mc_bins[e], args, path, env=env)
        elif kind == "regression" and i == 0:
            with tempfile.TemporaryDirectory() as tmp:
                p = Path(tmp) / "p.txt"
                j = run(binary, [*args, "--retire", e], path, predictions=p, env=env)
                se = rmse_se(path, p)
        else:
            j = run(binary, [*args, "--retire", e], path, env=env)
        n = j["examples"]
        err = j["progressive_rmse"] if kind == "regression" else j["progressive_error"]
        cells.append((err, retirements(j)))
        if i == 0 and kind != "regression":
            se = math.sqrt(max(err * (1 - err), 1e-12) / n)
    return n, cells, se


def fmt(err, kind):
    return f"{err:.6f}" if kind != "regression" else f"{err:.6g}"


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--bin", default=REPO / "target" / "release" / "sketchlearn")
    ap.add_argument("--eps", default="1e-20,1e-15,1e-12,1e-9,1e-6")
    ap.add_argument("--multiclass-bin", action="append", default=[], metavar="EPS=PATH")
    ap.add_argument("--generated", default=GENERATED)
    ap.add_argument("--warm-up", default=None, metavar="K,FLOOR")
    ap.add_argument(
        "--only",
        default="",
        help="comma-separated kinds (binary, regression, multiclass) or file-name parts to run",
    )
    a = ap.parse_args()
    eps = a.eps.split(",")
    mc_bins = dict(s.split("=", 1) for s in a.multiclass_bin)
    sets = list(SETS)
    if Path(a.generated).exists():
        sets.append(("speed.md", str(a.generated), [], "binary"))
    else:
        print(
            f"(no generated stream at {a.generated}: scripts/bench_speed.py makes it)"
        )

    head = ["file (doc)", "kind", "n", f"ε = {eps[0]}: error ± s.e., retired"]
    head += [f"ε = {e}: error (z), retired" for e in eps[1:]]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    flagged = []
    only = a.only.split(",") if a.only else None
    rule = tuple(float(x) for x in a.warm_up.split(",")) if a.warm_up else None
    for group, name, args, kind in sets:
        if only and not any(o == kind or o in Path(name).name for o in only):
            continue
        path = Path(name) if Path(name).is_absolute() else DATA / name
        n, cells, se = measure(a.bin, mc_bins, eps, args, kind, path, rule)
        ref = cells[0]
        row = [f"{Path(name).name} ({group})", kind, str(n)]
        row.append(f"{fmt(ref[0], kind)} ± {se:.2g}, {ref[1]}" if ref else "—")
        for e, c in zip(eps[1:], cells[1:]):
            if c is None or ref is None:
                row.append("—")
                continue
            z = (c[0] - ref[0]) / se if se > 0 else 0.0
            mark = "**" if abs(z) > 1 else ""
            if mark:
                flagged.append(f"{Path(name).name} at ε = {e}: z = {z:+.2f}")
            row.append(f"{mark}{fmt(c[0], kind)} ({z:+.2f}){mark}, {c[1]}")
        print("| " + " | ".join(row) + " |", flush=True)
    print()
    print("Changes beyond 1 s.e. of the reference: " + ("; ".join(flagged) or "none"))


if __name__ == "__main__":
    main()
