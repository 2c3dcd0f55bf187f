#!/usr/bin/env python3
"""Issue 28 item 2, candidates for the twin gaps: the default on the `_raw` files with their
two-valued `{0, c}` features (indicators) centred, simulated by rewriting the file.

    python scripts/raw_scales_centring.py [--bin target/release/sketchlearn] [--orders 10]

Each variant rewrites every indicator of the file present (non-zero) in at least `p_min` of the
rows, with the presence `p` of the whole file (a look-ahead an online rule would not have):
`mid` maps present/absent to +1/-1 (`(x - c/2)/(c/2)`, the scaled twins' coding), `std` to
`(1 - p)/s` and `-p/s` with `s = sqrt(p(1 - p))` (a standardised 0/1); `range` variants also map
the measurements above unit scale to [-1, 1] by the file's minimum and maximum; `online`
variants use only the rows so far (see `rewrite_online`). An absent indicator is then written
explicitly: the row gets denser. The default (`sketchlearn train --quiet --json`, no
flags) runs on the file order and on `--orders` shuffles (`random.Random(seed)`, seeds 1..k);
with `river` importable (the peers' venv), River's `StandardScaler | LogisticRegression` on the
original raw file runs on the same orders (dense rows, as in ../shared/peers/RESULTS.md).
"""

import argparse
import json
import math
import random
import subprocess
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
FILES = ["ionosphere_raw", "australian_raw", "heart_raw", "diabetes_raw"]
TWINS = {
    "ionosphere_raw": "ionosphere",
    "australian_raw": "australian",
    "heart_raw": "heart",
    "diabetes_raw": "diabetes",
}
VARIANTS = [
    ("none", None, 0.0),
    ("mid, p >= 1/2", "mid", 0.5),
    ("std, p >= 1/2", "std", 0.5),
    ("mid, p >= 3/4", "mid", 0.75),
    ("mid, every indicator", "mid", 0.0),
    ("none; measurements above unit scale to [-1, 1]", "range", 2.0),
    ("mid, p >= 1/2; measurements above unit scale to [-1, 1]", "range+mid", 0.5),
    ("online: mid, p >= 1/2", "online-mid", 0.5),
    ("online: mid, p >= 1/2, >= 10 values", "online-mid10", 0.5),
    ("online: mid, p >= 1/2; running range to [-1, 1]", "online", 0.5),
]


def parse(lines):
    rows = []
    for line in lines:
        t = line.split()
        rows.append(
            (t[0], {int(a): float(b) for a, b in (s.split(":") for s in t[1:])})
        )
    return rows


def indicators(rows):
    """Index -> (c, presence) for the features whose non-zero values are all one value c."""
    values, count = {}, {}
    for _, r in rows:
        for i, v in r.items():
            if v != 0.0:
                values.setdefault(i, set()).add(v)
                count[i] = count.get(i, 0) + 1
    n = len(rows)
    return {i: (next(iter(v)), count[i] / n) for i, v in values.items() if len(v) == 1}


def ranges(rows):
    """Index -> (min, max) over every row (an absent value is 0) of the features above unit
    scale (RMS of the non-zero values > 1) with more than one distinct non-zero value."""
    values = {}
    for _, r in rows:
        for i, v in r.items():
            if v != 0.0:
                values.setdefault(i, []).append(v)
    out = {}
    for i, v in values.items():
        if len(set(v)) > 1 and sum(x * x for x in v) / len(v) > 1.0:
            lo, hi = min(v), max(v)
            if len(v) < len(rows):
                lo, hi = min(lo, 0.0), max(hi, 0.0)
            out[i] = (lo, hi)
    return out


def rewrite_online(rows, p_min, with_range, min_count=1):
    """`mid` (and with `with_range`, `range+mid`) with running statistics (the rows so far, the current one included: what an
    online rule sees): an indicator (one distinct non-zero value so far, at least `min_count`
    of them) present in at least
    `p_min` of the rows so far is +1/-1; a feature whose non-zero values so far have more than
    one value and an RMS above 1 is mapped to [-1, 1] by the running minimum and maximum over
    the rows so far (an absent value is 0); anything else is left as it is."""
    values, count, lo, hi, sq = {}, {}, {}, {}, {}
    out, touched = [], set()
    for t, (y, r) in enumerate(rows, start=1):
        for i, v in r.items():
            if v != 0.0:
                values.setdefault(i, set()).add(v)
                count[i] = count.get(i, 0) + 1
                sq[i] = sq.get(i, 0.0) + v * v
        for i in values:
            v = r.get(i, 0.0)
            if i not in lo:
                lo[i] = hi[i] = 0.0 if t > 1 else v
            lo[i], hi[i] = min(lo[i], v), max(hi[i], v)
        z = dict(r)
        for i, seen in values.items():
            v = r.get(i, 0.0)
            indicator = len(seen) == 1 and count[i] >= min_count
            if indicator and p_min <= count[i] / t < 1.0:
                z[i] = 1.0 if v != 0.0 else -1.0
                touched.add(i)
            elif (
                with_range
                and len(seen) > 1
                and sq[i] / count[i] > 1.0
                and hi[i] > lo[i]
            ):
                z[i] = -1.0 + 2.0 * (v - lo[i]) / (hi[i] - lo[i])
                touched.add(i)
        feats = " ".join(f"{i}:{z[i]!r}" for i in sorted(z) if z[i] != 0.0)
        out.append(f"{y} {feats}")
    return out, sorted(touched)


def rewrite(rows, mode, p_min):
    """The rows with the indicators present in at least `p_min` of them centred (`mid`: +1/-1;
    `std`: a standardised 0/1) and, for a `range` mode, the measurements above unit scale
    mapped to [-1, 1] by the whole file's minimum and maximum (the scaled twins' coding)."""
    if mode.startswith("online"):
        return rewrite_online(
            rows, p_min, mode == "online", 10 if mode.endswith("10") else 1
        )
    ind = {i: p for i, (_, p) in indicators(rows).items() if p_min <= p < 1.0}
    span = ranges(rows) if mode.startswith("range") else {}
    out = []
    for y, r in rows:
        r = dict(r)
        for i, p in ind.items():
            on = r.get(i, 0.0) != 0.0
            if mode.endswith("mid"):
                r[i] = 1.0 if on else -1.0
            else:
                s = math.sqrt(p * (1.0 - p))
                r[i] = ((1.0 - p) if on else -p) / s
        for i, (lo, hi) in span.items():
            r[i] = -1.0 + 2.0 * (r.get(i, 0.0) - lo) / (hi - lo)
        feats = " ".join(f"{i}:{r[i]!r}" for i in sorted(r) if r[i] != 0.0)
        out.append(f"{y} {feats}")
    return out, sorted(ind) + sorted(span)


def default_error(binary, lines, tmp):
    path = Path(tmp) / "rows.libsvm"
    path.write_text("\n".join(lines) + "\n")
    cmd = [str(binary), "train", "--quiet", "--json", str(path)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["progressive_error"]


def river_error(lines):
    from river import linear_model, preprocessing

    rows = parse(lines)
    d = max((i for _, r in rows for i in r), default=0)
    model = preprocessing.StandardScaler() | linear_model.LogisticRegression()
    wrong = 0
    for y, r in rows:
        x = dict.fromkeys(range(1, d + 1), 0.0)
        x.update(r)
        label = float(y) > 0
        wrong += model.predict_one(x) != label
        model.learn_one(x, label)
    return wrong / len(rows)


def orders(lines, k):
    yield lines
    for seed in range(1, k + 1):
        shuffled = lines[:]
        random.Random(seed).shuffle(shuffled)
        yield shuffled


def variant_orders(raw, lines, mode, p_min, k):
    """The variant's rows in file order and in each shuffled order. An online rule maps a row
    with the statistics of the rows before it *in the order learned*, so it is applied to each
    shuffled order of the raw rows; a look-ahead rule's whole-file statistics do not depend on
    the order, so its rewritten `lines` are shuffled."""
    if mode is not None and mode.startswith("online"):
        return [rewrite(parse(o), mode, p_min)[0] for o in orders(raw, k)]
    return list(orders(lines, k))


def row(name, errs):
    mean = sum(errs[1:]) / max(1, len(errs) - 1)
    return (
        f"| {name} | {errs[0]:.4f} | {mean:.4f} | "
        + " ".join(f"{e:.4f}" for e in errs[1:])
        + " |"
    )


def read(name):
    text = (DATA / f"{name}.libsvm").read_text()
    return [x for x in text.splitlines() if x.strip()]


def within(errs, bars, n):
    """In how many orders `errs` is within one s.e. of `bars` (the bar's binomial s.e.)."""
    return sum(e <= b + math.sqrt(b * (1.0 - b) / n) for e, b in zip(errs, bars))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=str(REPO / "target" / "release" / "sketchlearn"))
    ap.add_argument("--orders", type=int, default=10)
    args = ap.parse_args()
    try:
        import river  # noqa: F401

        with_river = True
    except ImportError:
        with_river = False
    print(
        "| file / variant (indicators centred) | file order | mean of shuffles | shuffles 1.. |"
    )
    print("|---|---:|---:|---|")
    with tempfile.TemporaryDirectory() as tmp:
        summary = []
        for f in FILES:
            raw = read(f)
            rows, n = parse(raw), len(raw)
            twin = [
                default_error(args.bin, o, tmp)
                for o in orders(read(TWINS[f]), args.orders)
            ]
            peer = (
                [river_error(o) for o in orders(raw, args.orders)]
                if with_river
                else None
            )
            for name, mode, p_min in VARIANTS:
                lines, ind = (raw, []) if mode is None else rewrite(rows, mode, p_min)
                if mode is not None and not ind:
                    continue
                errs = [
                    default_error(args.bin, o, tmp)
                    for o in variant_orders(raw, lines, mode, p_min, args.orders)
                ]
                label = f"{f}: default, {name} {ind if ind else ''}"
                print(row(label, errs))
                k = len(errs)
                vs_peer = f"{within(errs, peer, n)} of {k}" if peer else "-"
                summary.append(
                    f"| {label} | {vs_peer} | {within(errs, twin, n)} of {k} |"
                )
            print(row(f"{TWINS[f]} (twin): default", twin))
            if peer:
                print(row(f"{f}: River StandardScaler LR", peer))
    print()
    print("| file / variant | orders within 1 s.e. of River | of the twin |")
    print("|---|---:|---:|")
    print("\n".join(summary))


if __name__ == "__main__":
    main()
