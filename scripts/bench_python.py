"""Python binding benchmarks (issue 29), one run, ratios measured side by side:

1. OnlineClassifier().fit on a9a (dense array and CSR) and r8 (CSR, earn vs rest) against the
   CLI's learning-only rate (`sketchlearn train --json`: examples_per_second) — same learner,
   same data, same order; progressive errors side by side;
2. sketchlearn.river.Classifier (algo="adagrad", the default "auto-sparse" and the four-member
   algo="auto") against River's LogisticRegression in progressive_val_score on heart and a9a
   (the same dict stream, the models interleaved, best of --reps; examples per CPU second), and
   the CLI's rate (whole process, CPU time) of the River default's learner on the same hashed
   features;
3. partial_fit on 1,000-row chunks of r8 (multiclass: the library's one-against-all) against
   SGDClassifier(loss="log_loss").

Usage: python scripts/bench_python.py [--data-dir ../shared/data] [--out docs/results/python.md]
       python scripts/bench_python.py --river-only   (part 2 alone, printed)
Needs the CLI built (`cargo build --release -p sketchlearn-cli`) and river installed.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import sketchlearn.river as skr
from river import evaluate, linear_model, metrics
from sketchlearn import OnlineClassifier
from sklearn.datasets import load_svmlight_file
from sklearn.linear_model import SGDClassifier

ROOT = Path(__file__).resolve().parents[1]


def best_of(k, f):
    """The fastest of k runs of f() (seconds, last result)."""
    best, out = float("inf"), None
    for _ in range(k):
        t = time.perf_counter()
        out = f()
        best = min(best, time.perf_counter() - t)
    return best, out


def cli_rate(path: Path) -> tuple[float, float]:
    """Learning-only examples/s of one `sketchlearn train` run and its progressive error."""
    exe = ROOT / "target" / "release" / "sketchlearn"
    out = subprocess.run(
        [str(exe), "train", "--quiet", "--json", "--no-read-ahead", str(path)],
        check=True,
        capture_output=True,
        text=True,
    )
    report = json.loads(out.stdout)
    return report["examples_per_second"], report["progressive_error"]


def sklearn_vs_cli(data: Path, reps: int) -> list[str]:
    """Best of `reps` rounds, each one Python fit then one CLI run (interleaved, so that both
    see the same load on a shared machine)."""
    rows = []
    for name, fname, dense in [
        ("a9a dense", "a9a.libsvm", True),
        ("a9a CSR", "a9a.libsvm", False),
        ("r8 earn-vs-rest CSR", "r8_earn_vs_rest.libsvm", False),
    ]:
        path = data / fname
        X, y = load_svmlight_file(str(path))
        X = X.toarray() if dense else X
        py_rate, rate = 0.0, 0.0
        for _ in range(reps):
            secs, clf = best_of(1, lambda X=X, y=y: OnlineClassifier().fit(X, y))
            py_rate = max(py_rate, X.shape[0] / secs)
            cli, err = cli_rate(path)
            rate = max(rate, cli)
        rows.append(
            f"| {name} | {X.shape[0]} | {py_rate:,.0f} | {rate:,.0f} | {py_rate / rate:.2f} | "
            f"{clf.progressive_score_['error']:.4f} | {err:.4f} |"
        )
    return rows


def dict_stream(X, y):
    for i in range(X.shape[0]):
        row = X.getrow(i)
        yield {str(j): v for j, v in zip(row.indices, row.data)}, bool(y[i] > 0)


def cli_hashed(stream, reps: int) -> tuple[float, float]:
    """The CLI's examples per CPU second (the whole process: reading the text and learning;
    best of `reps`) and progressive error of the River default's learner (`--algo
    auto-sparse`) on the same dicts written as a VW file (`sketchlearn.river` hashes feature
    names as VW does, so the CLI with `-b 18` learns the same features): what the core costs
    without Python."""
    best = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "stream.vw"
        with path.open("w") as f:
            for x, y in stream:
                feats = " ".join(f"{k}:{float(v)!r}" for k, v in x.items())
                f.write(f"{1 if y else -1} | {feats}\n")
        for _ in range(reps):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            out = subprocess.run(
                [str(ROOT / "target" / "release" / "sketchlearn"), "train", "--quiet"]
                + ["--json", "--no-read-ahead", "--algo", "auto-sparse", "-b", "18"]
                + [str(path)],
                check=True,
                capture_output=True,
                text=True,
            )
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (
                after.ru_stime - before.ru_stime
            )
            best = max(best, len(stream) / cpu)
    return best, json.loads(out.stdout)["progressive_error"]


RIVER_MODELS = [
    ("River LogisticRegression()", linear_model.LogisticRegression),
    (
        'sketchlearn.river.Classifier(algo="adagrad")',
        lambda: skr.Classifier(algo="adagrad"),
    ),
    ('sketchlearn.river.Classifier() ("auto-sparse")', skr.Classifier),
    (
        'sketchlearn.river.Classifier(algo="auto") (four members)',
        lambda: skr.Classifier(algo="auto"),
    ),
]


RIVER_HEADER = [
    "## River progressive_val_score, the same dict stream (examples per CPU second)",
    "",
    "| data | model | examples/s | × River LR | error ± s.e. |",
    "|---|---|---|---|---|",
]


def river_vs_river(data: Path, reps: int) -> list[str]:
    """Examples per CPU second (process time: less sensitive to other jobs than wall time) of
    each model in progressive_val_score, best of `reps` rounds of all models in turn."""
    rows = []
    for fname in ["heart.libsvm", "a9a.libsvm"]:
        X, y = load_svmlight_file(str(data / fname))
        stream = list(dict_stream(X, y))
        n = len(stream)
        results = {}
        # heart's 270 rows take ≈ 3 ms a model: more rounds for the short stream.
        for _ in range(reps if n > 10_000 else 20 * reps):
            for label, make in RIVER_MODELS:
                t = time.process_time()
                acc = evaluate.progressive_val_score(stream, make(), metrics.Accuracy())
                rate = n / (time.process_time() - t)
                best = results.get(label, (0.0, 0.0))[0]
                results[label] = (max(best, rate), 1 - acc.get())
        results[
            "sketchlearn train --algo auto-sparse -b 18 (CLI, same hashed features as VW text, "
            "whole process)"
        ] = cli_hashed(stream, reps)
        base_rate = results["River LogisticRegression()"][0]
        for label, (rate, err) in results.items():
            se = np.sqrt(err * (1 - err) / n)
            rows.append(
                f"| {fname} | {label} | {rate:,.0f} | {rate / base_rate:.2f} | "
                f"{err:.4f} ± {se:.4f} |"
            )
    return rows


def chunks_vs_sgd(data: Path) -> list[str]:
    X, y = load_svmlight_file(str(data / "r8_multiclass.libsvm"))
    classes = np.unique(y)
    rows = []
    for label, make in [
        ("OnlineClassifier() (one-against-all)", lambda: OnlineClassifier()),
        ('SGDClassifier(loss="log_loss")', lambda: SGDClassifier(loss="log_loss")),
    ]:
        model, wrong, seen, t = make(), 0, 0, time.perf_counter()
        for lo in range(0, X.shape[0], 1000):
            Xc, yc = X[lo : lo + 1000], y[lo : lo + 1000]
            if seen:
                wrong += int((model.predict(Xc) != yc).sum())
            model.partial_fit(Xc, yc, classes=classes)
            seen += Xc.shape[0]
        secs = time.perf_counter() - t
        err = wrong / (seen - 1000)
        rows.append(f"| {label} | {err:.4f} | {secs:.2f} |")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--out", default=str(ROOT / "docs" / "results" / "python.md"))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument(
        "--river-only",
        action="store_true",
        help="print the River table alone (nothing written)",
    )
    args = ap.parse_args()
    data = Path(args.data_dir)
    if args.river_only:
        print("\n".join(RIVER_HEADER + river_vs_river(data, args.reps)))
        return
    lines = [
        "# Python binding benchmarks",
        "",
        (
            "`python scripts/bench_python.py` (one run; 2 shared cores, other jobs running: "
            "rates are best-of-N, ratios are measured side by side)."
        ),
        "",
        "## OnlineClassifier().fit against the CLI's learning-only rate (auto)",
        "",
        (
            "| data | examples | Python ex/s | CLI ex/s | ratio | Python prog. error | "
            "CLI prog. error |"
        ),
        "|---|---|---|---|---|---|---|",
        *sklearn_vs_cli(data, args.reps),
        "",
        *RIVER_HEADER,
        *river_vs_river(data, args.reps),
        "",
        (
            "## partial_fit on 1,000-row chunks of r8 (8 classes; each chunk predicted before it "
            "is learned)"
        ),
        "",
        "| model | error | seconds |",
        "|---|---|---|",
        *chunks_vs_sgd(data),
        "",
    ]
    Path(args.out).write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
