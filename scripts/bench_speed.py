#!/usr/bin/env python3
"""Issue 27's speed table: `sketchlearn train FILE` (the untuned default) against Vowpal Wabbit's
default (`vw -d FILE`: AdaGrad + normalised + invariant updates), same files, same run.

Run from the repository root with the peers' interpreter (VW and numpy), after
`cargo build --release -p sketchlearn-cli`:

    .venv-peers/bin/python scripts/bench_speed.py [--reps 3] [--out docs/results/speed.md]

Streams (one pass, file on disk, progressive 0/1 error, logistic loss for both):
  * r8_earn_vs_rest, w8a.shuf, a9a from ../shared/data (LIBSVM);
  * a generated sparse stream: 100 000 rows, 50 distinct feature ids per row uniform in
    0..2^18, values N(0, 1)/√50, y = sign(θᵀx + 0.25ε), θ ~ N(0, I), numpy seed 27 — written once
    to target/bench_speed/ (re-used while its generator version matches).
VW reads its own text format (`label |f idx:val ...`), converted once into target/bench_speed/
(not timed), with `-b 18 --binary --loss_function logistic --quiet`.

Columns:
  * whole process, examples/s: wall clock from start to exit of `sketchlearn train --quiet
    --json FILE` (dimension pre-scan, parsing, learning, output) and of a fresh Python process
    running VW (interpreter start, `import vowpalwabbit`, parsing, learning); best of --reps;
  * pass, examples/s: ours, the `seconds` the JSON reports for the progressive pass (parsing on
    a second thread overlapped with learning; no start-up, no pre-scan); VW, the time of
    `vowpalwabbit.Workspace(...)` inside the process (parsing on VW's own second thread and
    learning; no interpreter start-up);
  * ratio: ours / VW, whole process;
  * progressive error of each; sketchlearn AdaGrad (`--algo adagrad`) as a first-order reference.
  * from the binary cache: the same runs reading a cache built beforehand (not timed): ours
    `sketchlearn cache -c F FILE`, then `train -c F FILE`; VW `--cache_file F` (a first VW run
    writes it);
The dense table (issue 27: SON m=10 against VW OjaNewton m=10): the SON paper's §5.1 stream
(`cargo run --release -p sketchlearn --example dense_stream -- 20000 1000 100 1 …`, d = 1000,
κ = 100), ours `--algo newton --curvature oja --size 10` (Oja-SON, the algorithm of VW's
`--OjaNewton`), from text with and without the parser's second thread (`--no-read-ahead`), and
from the cache; VW `--OjaNewton --sketch_size 10` from text and from its cache. `--skip-sparse`
runs the dense table alone.
Timings on a shared machine are noisy: both tools run interleaved in the same run, and the
load average is printed with the table.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
WORK = REPO / "target" / "bench_speed"
BIN = REPO / "target" / "release" / "sketchlearn"
GEN_VERSION = "1"
SHARED = ["r8_earn_vs_rest", "w8a.shuf", "a9a"]
SYNTH = "sparse_2p18_nnz50_100k"

VW_CODE = """
import json, sys, time
t0 = time.perf_counter()
import vowpalwabbit
ws = vowpalwabbit.Workspace(sys.argv[1])
t1 = time.perf_counter()
n = ws.get_weighted_examples()
print(json.dumps({"examples": n, "error": ws.get_sum_loss() / n, "seconds": t1 - t0}))
ws.finish()
"""


def generate_sparse(path, n=100_000, d=1 << 18, nnz=50, seed=27):
    """The generated sparse stream (see the module docs); other `n`, `d`, `nnz`, `seed` give
    the held-out streams of scripts/retire_heldout.py (the defaults are the bench's stream)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    theta = rng.standard_normal(d)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w") as f:
        for _ in range(n):
            idx = np.sort(rng.choice(d, nnz, replace=False))
            val = rng.standard_normal(nnz) / np.sqrt(nnz)
            y = 1 if theta[idx] @ val + 0.25 * rng.standard_normal() > 0 else -1
            f.write(
                f"{y} " + " ".join(f"{i + 1}:{v:.6g}" for i, v in zip(idx, val)) + "\n"
            )
    tmp.replace(path)


def stamp(path):
    st = path.stat()
    return f"{path}:{st.st_size}:{st.st_mtime_ns}"


def ensure_inputs():
    """LIBSVM files and their VW text versions (converted when missing or stale)."""
    WORK.mkdir(parents=True, exist_ok=True)
    synth = WORK / f"{SYNTH}.libsvm"
    marker = WORK / f"{SYNTH}.version"
    if not synth.exists() or not marker.exists() or marker.read_text() != GEN_VERSION:
        print(f"generating {synth} ...", file=sys.stderr)
        generate_sparse(synth)
        marker.write_text(GEN_VERSION)
    files = [(name, DATA / f"{name}.libsvm") for name in SHARED] + [
        ("generated sparse", synth)
    ]
    out = []
    for label, src in files:
        vw = WORK / (src.stem + ".vw")
        src_marker = WORK / (src.stem + ".vw.src")
        if (
            not vw.exists()
            or not src_marker.exists()
            or src_marker.read_text() != stamp(src)
        ):
            tmp = vw.with_suffix(".tmp")
            with open(src) as fin, open(tmp, "w") as fout:
                for line in fin:
                    parts = line.split(None, 1)
                    if parts:
                        rest = parts[1].rstrip("\n") if len(parts) > 1 else ""
                        fout.write(f"{parts[0]} |f {rest}\n")
            tmp.replace(vw)
            src_marker.write_text(stamp(src))
        out.append((label, src, vw))
    return out


def run_ours(path, extra):
    t0 = time.perf_counter()
    r = subprocess.run(
        [str(BIN), "train", "--quiet", "--json", *extra, str(path)],
        check=True,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    j = json.loads(r.stdout)
    return {
        "wall": wall,
        "pass": j["seconds"],
        "n": j["examples"],
        "error": j["progressive_error"],
    }


def run_vw(path, extra=""):
    args = f"-d {path} -b 18 --binary --loss_function logistic --quiet {extra}"
    t0 = time.perf_counter()
    r = subprocess.run(
        [sys.executable, "-c", VW_CODE, args],
        check=True,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    j = json.loads(r.stdout)
    return {"wall": wall, "pass": j["seconds"], "n": j["examples"], "error": j["error"]}


def build_caches(src, vw, vw_extra="", tag=""):
    """Our cache and VW's of the same stream, written before timing: (our flags, VW's flags)."""
    ours = WORK / (src.name + ".slcache")
    theirs = WORK / (vw.name + f".vwcache{tag}")
    for old in (ours, theirs):
        if old.exists():
            old.unlink()
    t0 = time.perf_counter()
    subprocess.run(
        [str(BIN), "cache", "-c", str(ours), str(src)], check=True, capture_output=True
    )
    wall = time.perf_counter() - t0
    BUILDS.append((src.name, src.stat().st_size, ours.stat().st_size, wall))
    run_vw(vw, f"{vw_extra} --cache_file {theirs}")
    return ["-c", str(ours)], f"{vw_extra} --cache_file {theirs}"


# (file, text bytes, cache bytes, seconds of `sketchlearn cache`: parse + encode + write)
BUILDS = []


def best(runs):
    return {
        "wall": min(r["wall"] for r in runs),
        "pass": min(r["pass"] for r in runs),
        "n": runs[0]["n"],
        "error": runs[0]["error"],
    }


def sparse_rows(inputs, reps):
    """The sparse table's rows (default and AdaGrad against VW's default)."""
    lines = [
        (
            "| stream | n | sketchlearn default: whole process ex/s | pass ex/s | from cache: whole "
            "process ex/s | pass ex/s | VW default: whole process ex/s | in-process ex/s | VW from "
            "cache: whole process ex/s | ratio (whole process): text / cache | error: ours / VW | "
            "sketchlearn AdaGrad: whole process ex/s, error |"
        ),
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|",
    ]
    for label, src, vw in inputs:
        ours_c, vw_c = build_caches(src, vw)
        runs = {"ours": [], "ours_c": [], "adagrad": [], "vw": [], "vw_c": []}
        for _ in range(reps):
            runs["ours"].append(run_ours(src, []))
            runs["vw"].append(run_vw(vw))
            runs["ours_c"].append(run_ours(src, ours_c))
            runs["vw_c"].append(run_vw(vw, vw_c))
            runs["adagrad"].append(run_ours(src, ["--algo", "adagrad"]))
        r = {k: best(v) for k, v in runs.items()}
        o, oc, v, vc, g = r["ours"], r["ours_c"], r["vw"], r["vw_c"], r["adagrad"]
        assert o["error"] == oc["error"], (label, o, oc)
        n, nv = o["n"], v["n"]
        lines.append(
            f"| {label} | {n} | {n / o['wall']:,.0f} | {n / o['pass']:,.0f} | "
            f"{n / oc['wall']:,.0f} | {n / oc['pass']:,.0f} | "
            f"{nv / v['wall']:,.0f} | {nv / v['pass']:,.0f} | {nv / vc['wall']:,.0f} | "
            f"{(n / o['wall']) / (nv / v['wall']):.2f}× / "
            f"{(n / oc['wall']) / (nv / vc['wall']):.2f}× | "
            f"{o['error']:.4f} / {v['error']:.4f} | {n / g['wall']:,.0f}, {g['error']:.4f} |"
        )
        print(f"{label}: done", file=sys.stderr)
    return lines


def dense_rows(reps):
    """The dense table: Oja-SON m=10 against VW OjaNewton m=10 (see the module docs)."""
    src, vw = WORK / "dense_d1000_k100_20k.libsvm", WORK / "dense_d1000_k100_20k.vw"
    if not src.exists() or not vw.exists():
        gen = REPO / "target" / "release" / "examples" / "dense_stream"
        if not gen.exists():
            sys.exit(
                f"{gen} not found: cargo build --release -p sketchlearn --example dense_stream"
            )
        subprocess.run(
            [str(gen), "20000", "1000", "100", "1", str(src), str(vw)], check=True
        )
    son = ["--algo", "newton", "--curvature", "oja", "--size", "10"]
    oja = "--OjaNewton --sketch_size 10"
    ours_c, vw_c = build_caches(src, vw, oja, "-oja")
    runs = {"text": [], "one": [], "cache": [], "vw": [], "vw_c": []}
    for _ in range(reps):
        runs["text"].append(run_ours(src, son))
        runs["vw"].append(run_vw(vw, oja))
        runs["one"].append(run_ours(src, son + ["--no-read-ahead"]))
        runs["cache"].append(run_ours(src, son + ours_c))
        runs["vw_c"].append(run_vw(vw, vw_c))
    r = {k: best(v) for k, v in runs.items()}
    v, vc = r["vw"], r["vw_c"]
    rate = lambda x: x["n"] / x["wall"]
    lines = [
        (
            "| run (dense d=1000, κ=100, 20k rows) | whole process ex/s | pass ex/s | error | "
            "ratio to VW OjaNewton, same input kind |"
        ),
        "|---|---:|---:|---|---:|",
    ]
    for name, x, peer in [
        ("sketchlearn Oja-SON m=10, text (parser on a second thread)", r["text"], v),
        ("sketchlearn Oja-SON m=10, text, one thread (`--no-read-ahead`)", r["one"], v),
        ("sketchlearn Oja-SON m=10, from its cache (`-c`)", r["cache"], vc),
        ("VW `--OjaNewton --sketch_size 10`, text", v, None),
        ("VW `--OjaNewton --sketch_size 10`, from its `--cache_file`", vc, None),
    ]:
        ratio = f"{rate(x) / rate(peer):.2f}×" if peer else ""
        lines.append(
            f"| {name} | {rate(x):,.0f} | {x['n'] / x['pass']:,.0f} | {x['error']:.4f} | {ratio} |"
        )
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--reps", type=int, default=3, help="runs per tool and file (best is kept)"
    )
    ap.add_argument(
        "--out", type=Path, help="also write the tables (markdown) to this file"
    )
    ap.add_argument("--skip-sparse", action="store_true", help="the dense table only")
    a = ap.parse_args()
    if not BIN.exists():
        sys.exit(
            f"{BIN} not found: run `cargo build --release -p sketchlearn-cli` first"
        )
    WORK.mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()
    lines = [] if a.skip_sparse else sparse_rows(ensure_inputs(), a.reps) + [""]
    lines += dense_rows(a.reps)
    lines += [
        "",
        (
            "| file | text MB | cache MB | `sketchlearn cache` (parse + encode + write, one thread) "
            "MB of text/s |"
        ),
        "|---|---:|---:|---:|",
    ]
    for name, text, cache, wall in BUILDS:
        lines.append(
            f"| {name} | {text / 1e6:.1f} | {cache / 1e6:.1f} | {text / 1e6 / wall:.0f} |"
        )
    load_after = os.getloadavg()
    load = (
        " ".join(f"{x:.2f}" for x in load_before)
        + " before, "
        + " ".join(f"{x:.2f}" for x in load_after)
        + " after"
    )
    table = "\n".join(lines)
    print(table)
    print(f"\nload average {load}; best of {a.reps} runs each")
    if a.out:
        a.out.write_text(
            f"<!-- written by scripts/bench_speed.py --reps {a.reps} "
            f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load average {load}) -->\n"
            + table
            + "\n"
        )


if __name__ == "__main__":
    main()
