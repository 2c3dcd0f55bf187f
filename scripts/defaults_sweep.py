#!/usr/bin/env python3
"""Measure the untuned defaults of sketchlearn's learners on the shared datasets.

Runs `sketchlearn train --json --quiet` (one pass, logistic loss, progressive error) over a grid of
hyper-parameters for the default learner (RFD-SON, doubling, m = 10, intercept) and for AdaGrad, and
scores every setting against the best *untuned* peer of ../shared/peers/RESULTS.md in units of the
binomial standard error sqrt(p(1-p)/n). Writes docs/results/defaults.md and .csv.

Usage (from the repository root, after `cargo build --release -p sketchlearn-cli`):
    python3 scripts/defaults_sweep.py [--data-dir ../shared/data] [--out docs/results]
"""

import argparse
import datetime
import json
import math
import os
import subprocess
import sys

DATASETS = [  # name, n, best untuned peer error (RESULTS.md), best tuned peer error
    ("australian", 690, 0.1362, 0.1304),
    ("breast-cancer", 683, 0.0381, 0.0322),
    ("diabetes", 768, 0.2474, 0.2448),
    ("heart", 270, 0.2037, 0.1926),
    ("ionosphere", 351, 0.1852, 0.1766),
    ("splice", 1000, 0.2400, 0.2350),
    ("mushrooms", 8124, 0.0027, 0.0023),
    ("a9a", 32561, 0.1551, 0.1549),
    ("w8a.shuf", 49749, 0.0167, 0.0166),
    ("magic04.shuf", 19020, 0.2239, 0.2165),
    ("spam.shuf", 4601, 0.0939, 0.0806),
]

BIN = os.path.join("target", "release", "sketchlearn")


def run(args, path):
    out = subprocess.run(
        [BIN, "train", "--json", "--quiet", *args, path],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)["progressive_error"]


def se(p, n):
    return math.sqrt(max(p * (1 - p), 1e-12) / n)


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--data-dir", default="../shared/data")
    ap.add_argument("--out", default="docs/results")
    a = ap.parse_args()
    if not os.path.exists(BIN):
        sys.exit(
            f"{BIN} not found: run `cargo build --release -p sketchlearn-cli` first"
        )

    grids = {}
    for c in [0.05, 0.1, 0.2, 0.5, 1.0]:
        for a0 in [0.1, 0.3, 1.0, 3.0, 10.0]:
            grids[f"rfd-fast m=10 c={c} alpha0={a0}"] = [
                "--c",
                str(c),
                "--alpha0",
                str(a0),
            ]
    for j in range(-3, 7):
        lr = 2.0**j
        grids[f"adagrad lr=2^{j}"] = ["--algo", "adagrad", "-l", str(lr)]

    rows = []
    for name, args in grids.items():
        errs = []
        for ds, n, peer_untuned, peer_tuned in DATASETS:
            e = run(args, os.path.join(a.data_dir, ds + ".libsvm"))
            errs.append(e)
        z = [(e - pu) / se(pu, n) for e, (ds, n, pu, pt) in zip(errs, DATASETS)]
        within = sum(1 for v in z if v <= 1.0)
        rows.append((name, errs, z, within, sum(z) / len(z), max(z)))
        print(
            f"{name:40s} within-1se {within:2d}/11  mean z {sum(z) / len(z):7.2f}  max z {max(z):7.2f}",
            file=sys.stderr,
        )

    rows.sort(key=lambda r: (-r[3], r[4]))
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "defaults.csv"), "w") as f:
        f.write(
            "setting," + ",".join(d[0] for d in DATASETS) + ",within_1se,mean_z,max_z\n"
        )
        for name, errs, z, within, mz, xz in rows:
            f.write(
                f"{name},"
                + ",".join(f"{e:.4f}" for e in errs)
                + f",{within},{mz:.3f},{xz:.3f}\n"
            )
    with open(os.path.join(a.out, "defaults.md"), "w") as f:
        f.write("# Measuring the untuned defaults\n\n")
        f.write(
            f"Reproduce: `python3 scripts/defaults_sweep.py` (after `cargo build --release -p sketchlearn-cli`); "
            f"run on {datetime.date.today()}.\n\n"
        )
        f.write(
            "One pass in file order, logistic loss, progressive 0/1 error, intercept on (as VW's constant "
            "feature). Every setting is scored against the best *untuned* peer of `../shared/peers/RESULTS.md` "
            "in units of that peer's binomial standard error z = (err − peer)/√(p(1−p)/n); a setting is "
            "'within' on a dataset when z ≤ 1. Settings are ranked by the number of datasets within one "
            "standard error, then by the mean z. The top 12 and the AdaGrad rows:\n\n"
        )
        f.write(
            "| setting | "
            + " | ".join(d[0] for d in DATASETS)
            + " | within 1 se | mean z | max z |\n"
        )
        f.write("|---|" + "---|" * len(DATASETS) + "---|---|---|\n")
        f.write(
            "| *best untuned peer* | "
            + " | ".join(f"{d[2]:.4f}" for d in DATASETS)
            + " | | | |\n"
        )
        f.write(
            "| *best tuned peer* | "
            + " | ".join(f"{d[3]:.4f}" for d in DATASETS)
            + " | | | |\n"
        )
        shown = [r for r in rows if not r[0].startswith("adagrad")][:12] + [
            r for r in rows if r[0].startswith("adagrad")
        ]
        for name, errs, z, within, mz, xz in shown:
            f.write(
                f"| {name} | "
                + " | ".join(f"{e:.4f}" for e in errs)
                + f" | {within}/11 | {mz:.2f} | {xz:.2f} |\n"
            )
        best = rows[0]
        best_ada = next(r for r in rows if r[0].startswith("adagrad"))
        f.write(
            f"\nBest setting overall: **{best[0]}** ({best[3]}/11 datasets within one standard error of the best "
            f"untuned peer, mean z {best[4]:.2f}). Best AdaGrad: **{best_ada[0]}** ({best_ada[3]}/11, mean z "
            f"{best_ada[4]:.2f}).\n\n"
        )
        worst = [
            (DATASETS[i][0], best[1][i], DATASETS[i][2], best[2][i])
            for i in range(len(DATASETS))
            if best[2][i] > 1
        ]
        if worst:
            f.write(
                "Where the best setting is more than one standard error behind the best untuned peer: "
                + "; ".join(
                    f"{d} ({e:.4f} vs {p:.4f}, z = {z:.1f})" for d, e, p, z in worst
                )
                + ".\n"
            )
        f.write("\nAll settings: `defaults.csv`.\n")
    print(f"wrote {os.path.join(a.out, 'defaults.md')}", file=sys.stderr)


if __name__ == "__main__":
    main()
