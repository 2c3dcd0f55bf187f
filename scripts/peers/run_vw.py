#!/usr/bin/env python3
"""Run Vowpal Wabbit (the peer) on LIBSVM files: one pass, progressive 0/1 error, wall seconds.

Each LIBSVM file is converted once to VW text (`label |f idx:val ...`) and cached under
`target/peers/` (re-converted when the source file changes: a `.src` sidecar records its path, size and mtime). A file ending in `.vw` is used as it is.
The pass runs inside `vowpalwabbit.Workspace(...)` (the constructor reads the whole file); only
that constructor is timed, so the time includes VW's own parsing of its text file but not the
conversion.

Output: one JSON object per line on stdout (flushed after each run), in file-major order:
  {"type": "convert", "file", "vw_file", "cached", "seconds"}
  {"type": "run", "file", "vw_file", "mode", "normalize", "setting", "param", "value", "args",
   "repeat", "examples", "progressive_error", "average_loss", "seconds", "cpu_seconds",
   "nonfinite_weights", "status", "message"}
`cpu_seconds` is the process CPU time (all threads: VW parses in a thread of its own) over the
same span as `seconds`.
  {"type": "best", ...the fields of the chosen run..., "grid_size", "grid_failed"}
`status` is "ok", "nan" (VW finished but left non-finite weights or a non-finite loss) or
"error" (VW raised; `message` says why). Tuned = the lowest progressive error over the grid among
"ok" runs (if every run failed, the lowest finite one, with its status). Untuned = VW's default.

Modes (all with `--binary --loss_function logistic -b BITS --quiet`):
  adagrad  VW's default update `--adaptive --normalized --invariant -l LR`;
           untuned -l 0.5 (VW's default), tuned over LR = 2^-3..2^6.
  oja      `--OjaNewton --sketch_size M [--alpha_inverse A] [--normalize false]`;
           untuned = VW's defaults (no --alpha_inverse), tuned over A = 2^-10..2^6.

Examples:
  .venv-peers/bin/python scripts/peers/run_vw.py --mode adagrad,oja --setting both \
      ../shared/data/heart.libsvm
  .venv-peers/bin/python scripts/peers/run_vw.py --mode oja --normalize false --setting tuned FILE
  .venv-peers/bin/python scripts/peers/run_vw.py --mode oja --setting untuned --repeat 3 FILE.vw
"""

import argparse
import contextlib
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ADAGRAD_GRID = [2.0**j for j in range(-3, 7)]
OJA_GRID = [2.0**j for j in range(-10, 7)]


def emit(obj):
    sys.stdout.write(json.dumps(obj, allow_nan=False, default=str) + "\n")
    sys.stdout.flush()


def finite_or_none(x):
    return x if isinstance(x, (int, float)) and math.isfinite(x) else None


def convert(src: Path, cache_dir: Path):
    """LIBSVM -> VW text, cached. Returns (vw_path, cached, seconds)."""
    if src.suffix == ".vw":
        return src, True, 0.0
    cache_dir.mkdir(parents=True, exist_ok=True)
    dst = cache_dir / (src.name.removesuffix(".libsvm"))
    dst = dst.with_name(dst.name + ".vw")
    # The cache is valid for exactly this source (resolved path, size, mtime): a sidecar records it.
    st = src.stat()
    key = f"{src.resolve()}\t{st.st_size}\t{st.st_mtime_ns}\n"
    side = dst.with_name(dst.name + ".src")
    if dst.exists() and side.exists() and side.read_text() == key:
        return dst, True, 0.0
    start = time.perf_counter()
    tmp = dst.with_name(dst.name + ".tmp")
    with (
        open(src, "r", encoding="utf-8", errors="replace") as fin,
        open(tmp, "w") as fout,
    ):
        for line in fin:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            label = float(parts[0])
            feats = [p for p in parts[1:] if not p.startswith("qid:")]
            # Binary labels: > 0 is +1, anything else -1 (VW's logistic loss wants -1/+1).
            fout.write(("1" if label > 0 else "-1") + " |f " + " ".join(feats) + "\n")
    os.replace(tmp, dst)
    side.write_text(key)
    return dst, False, time.perf_counter() - start


def grid_for(mode, setting, values):
    """[(param, value)] of one mode/setting; value None = VW's default."""
    if mode == "adagrad":
        if setting == "untuned":
            return [("l", 0.5)]
        return [("l", v) for v in (values or ADAGRAD_GRID)]
    if setting == "untuned":
        return [("alpha_inverse", None)]
    return [("alpha_inverse", v) for v in (values or OJA_GRID)]


def vw_args(mode, param_value, opts, vw_file):
    _param, value = param_value
    common = f"--binary --loss_function logistic -b {opts.bits} --quiet"
    if mode == "adagrad":
        algo = f"--adaptive --normalized --invariant -l {value!r}"
    else:
        algo = f"--OjaNewton --sketch_size {opts.sketch_size}"
        if value is not None:
            algo += f" --alpha_inverse {value!r}"
        if opts.normalize is not None:
            algo += f" --normalize {opts.normalize}"
    extra = (" " + opts.extra) if opts.extra else ""
    return f"{algo} {common}{extra} -d {vw_file}"


def run_once(args_str, bits):
    """One VW pass in this process."""
    import vowpalwabbit  # imported lazily so that --help works without it

    ws = None
    try:
        start, cpu_start = time.perf_counter(), time.process_time()
        ws = vowpalwabbit.Workspace(args_str)
        seconds = time.perf_counter() - start
        cpu_seconds = time.process_time() - cpu_start
        n = ws.get_weighted_examples()
        loss = ws.get_sum_loss()
        err = loss / n if n > 0 else float("nan")
        nonfinite = sum(
            1 for i in range(1 << bits) if not math.isfinite(ws.get_weight(i))
        )
        status = "ok" if (math.isfinite(err) and nonfinite == 0) else "nan"
        msg = None
        if nonfinite:
            msg = f"{nonfinite} of {1 << bits} weights are non-finite after the pass"
        elif not math.isfinite(err):
            msg = "non-finite progressive loss"
        return {
            "examples": n,
            "progressive_error": finite_or_none(err),
            "average_loss": finite_or_none(err),
            "seconds": seconds,
            "cpu_seconds": cpu_seconds,
            "nonfinite_weights": nonfinite,
            "status": status,
            "message": msg,
        }
    except Exception as e:  # noqa: BLE001 (VW raises anything on bad arguments, I/O errors, ...)
        return failed(f"{type(e).__name__}: {e}")
    finally:
        if ws is not None:
            with contextlib.suppress(Exception):  # the pass's result is already taken
                ws.finish()


def failed(message):
    """The result of a pass that did not run: every measurement None, status "error"."""
    keys = ("examples", "progressive_error", "average_loss", "seconds", "cpu_seconds")
    return {
        **dict.fromkeys(keys),
        "nonfinite_weights": None,
        "status": "error",
        "message": message,
    }


def run_isolated(args_str, bits):
    """One VW pass in a child process (survives a crash of VW's C++ code)."""
    here = str(Path(__file__).parent)
    code = (
        f"import json,sys; sys.path.insert(0, {here!r}); import run_vw; "
        f"print(json.dumps(run_vw.run_once({args_str!r}, {int(bits)})))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True
    )
    if proc.returncode != 0 or not proc.stdout.strip():
        return failed(
            f"VW process exited with {proc.returncode}: {proc.stderr.strip()[-300:]}"
        )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "files", nargs="+", help="LIBSVM files (or .vw files, used as they are)"
    )
    ap.add_argument(
        "--mode", default="adagrad,oja", help="comma-separated: adagrad, oja"
    )
    ap.add_argument("--setting", default="both", choices=["tuned", "untuned", "both"])
    ap.add_argument(
        "--normalize",
        choices=["true", "false"],
        default=None,
        help="OjaNewton --normalize (default: VW's default, true)",
    )
    ap.add_argument("--sketch-size", type=int, default=10)
    ap.add_argument("--bits", type=int, default=18)
    ap.add_argument(
        "--values",
        default=None,
        help="comma-separated grid replacing the default one (tuned setting)",
    )
    ap.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="runs per setting (timings: take the median)",
    )
    ap.add_argument(
        "--extra", default="", help="extra VW arguments appended to every run"
    )
    ap.add_argument("--cache-dir", default=str(REPO / "target" / "peers"))
    ap.add_argument(
        "--isolate", action="store_true", help="run each pass in a child process"
    )
    opts = ap.parse_args()
    modes = [m.strip() for m in opts.mode.split(",") if m.strip()]
    for m in modes:
        if m not in ("adagrad", "oja"):
            ap.error(f"unknown mode {m!r}")
    settings = ["tuned", "untuned"] if opts.setting == "both" else [opts.setting]
    values = [float(v) for v in opts.values.split(",")] if opts.values else None
    runner = run_isolated if opts.isolate else run_once
    for f in opts.files:
        src = Path(f)
        try:
            vw_file, cached, secs = convert(src, Path(opts.cache_dir))
        except Exception as e:  # noqa: BLE001 (reported as this file's row; the others go on)
            emit(
                {
                    "type": "convert",
                    "file": str(src),
                    "vw_file": None,
                    "cached": False,
                    "seconds": None,
                    "status": "error",
                    "message": f"{type(e).__name__}: {e}",
                }
            )
            continue
        emit(
            {
                "type": "convert",
                "file": str(src),
                "vw_file": str(vw_file),
                "cached": cached,
                "seconds": secs,
                "status": "ok",
                "message": None,
            }
        )
        for mode in modes:
            normalize = opts.normalize if mode == "oja" else None
            for setting in settings:
                runs = []
                for pv in grid_for(mode, setting, values):
                    a = vw_args(mode, pv, opts, vw_file)
                    for rep in range(opts.repeat):
                        r = runner(a, opts.bits)
                        rec = dict(
                            type="run",
                            file=str(src),
                            vw_file=str(vw_file),
                            mode=mode,
                            normalize=normalize,
                            setting=setting,
                            param=pv[0],
                            value=pv[1],
                            args=a,
                            repeat=rep,
                            **r,
                        )
                        emit(rec)
                        runs.append(rec)
                ok = [r for r in runs if r["status"] == "ok"]
                pool = ok or [r for r in runs if r["progressive_error"] is not None]
                if pool:
                    best = dict(min(pool, key=lambda r: r["progressive_error"]))
                else:
                    best = dict(runs[0])
                best["type"] = "best"
                best["grid_size"] = len(runs)
                best["grid_failed"] = len(runs) - len(ok)
                emit(best)


if __name__ == "__main__":
    main()
