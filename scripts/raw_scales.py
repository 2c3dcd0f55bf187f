#!/usr/bin/env python3
"""Issue 28 item 2's table: the untuned default (`sketchlearn train FILE`, no flags) on each
`_raw` classification file of ../shared/data and on its scaled twin, against the best untuned
peer of ../shared/peers/RESULTS.md ("Raw (unscaled) binary files": VW default, VW OjaNewton,
River `StandardScaler | LogisticRegression`).

    python3 scripts/raw_scales.py [--bin target/release/sketchlearn] [--before OTHER_BIN]

Criteria (binomial standard error s.e. = sqrt(p(1-p)/n) with p the bar's error):
  * vs peer: the default's error on the raw file <= best untuned peer + 1 s.e.;
  * vs twin: the default's error on the raw file <= its own error on the scaled twin + 1 s.e.
`--before` adds the same numbers for another binary (e.g. an older build) as a column.
"""

import argparse
import json
import math
import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
RESULTS = REPO.parent / "shared" / "peers" / "RESULTS.md"
PAIRS = [
    ("diabetes_raw", "diabetes"),
    ("heart_raw", "heart"),
    ("australian_raw", "australian"),
    ("ionosphere_raw", "ionosphere"),
]


def error(binary, name):
    out = subprocess.run(
        [str(binary), "train", "--quiet", "--json", str(DATA / f"{name}.libsvm")],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    j = json.loads(out)
    return j["progressive_error"], j["examples"]


def peers():
    """file stem -> (best untuned peer error, its name) from RESULTS.md's raw table."""
    text = RESULTS.read_text()
    section = text.split("## Raw (unscaled) binary files", 1)[1]
    header = None
    best = {}
    for line in section.splitlines():
        if not line.startswith("|"):
            if best:
                break
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if header is None:
            header = cells
            continue
        if cells[0].startswith("---"):
            continue
        stem = cells[0].replace(".libsvm", "")
        values = []
        for name, cell in zip(header[2:5], cells[2:5]):
            values.append((float(re.sub(r"[^0-9.]", "", cell)), name))
        best[stem] = min(values)
    return best


def se(p, n):
    return math.sqrt(p * (1 - p) / n)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=str(REPO / "target" / "release" / "sketchlearn"))
    ap.add_argument("--before", help="another sketchlearn binary for a 'before' column")
    args = ap.parse_args()
    bars = peers()
    head = "| file | n |"
    if args.before:
        head += " before: raw / twin |"
    head += (
        " **default: raw** | default: twin | best untuned peer (raw) | z vs peer |"
        " z vs twin | within 1 s.e. of peer / of twin |"
    )
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for raw, twin in PAIRS:
        e_raw, n = error(args.bin, raw)
        e_twin, _ = error(args.bin, twin)
        peer, who = bars[raw]
        z_peer = (e_raw - peer) / se(peer, n)
        z_twin = (e_raw - e_twin) / se(e_twin, n)
        row = f"| {raw} / {twin} | {n} |"
        if args.before:
            b_raw, _ = error(args.before, raw)
            b_twin, _ = error(args.before, twin)
            row += f" {b_raw:.4f} / {b_twin:.4f} |"
        ok = lambda z: "yes" if z <= 1 else "**no**"
        row += (
            f" **{e_raw:.4f}** | {e_twin:.4f} | {peer:.4f} ({who}, s.e. {se(peer, n):.4f}) |"
            f" {z_peer:+.2f} | {z_twin:+.2f} | {ok(z_peer)} / {ok(z_twin)} |"
        )
        print(row)


if __name__ == "__main__":
    main()
