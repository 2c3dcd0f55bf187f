"""Where one River row's time goes (issue 29): CPU microseconds per example of
sketchlearn.river.Classifier() in progressive_val_score against River's LogisticRegression()
(the issue's ratio, on CPU time rather than wall time, so less sensitive to a loaded machine),
and of the four-member Classifier(algo="auto"), then the learn_one and predict_one of each
alone, and each member of the four-member mixture alone (the same configurations ``auto``
describes: three sparse-time FD/RFD-SON members of m = 10 and the AdaGrad grid; the River
default, ``auto-sparse``, mixes members 2 and 3), with AdaGrad as the floor of the binding's
own cost (dict hashing, one Rust call, the Python loop). Best of ``--reps`` runs, one
process.

    python scripts/profile_river_row.py [--data ../shared/data/a9a.libsvm] [--reps 3]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import sketchlearn.river as skr
from bench_python import dict_stream
from river import evaluate, linear_model, metrics
from sklearn.datasets import load_svmlight_file

ROOT = Path(__file__).resolve().parents[1]

# The members of the four-member mixture `auto` for the logistic loss, as its description
# names them (`LearnerConfig::auto_members`; the River wrapper hashes, so each is
# sparse-time). The River default, `auto-sparse`, mixes members 2 and 3.
MEMBERS = [
    (
        "member 1: RFD-SON m=10 α₀=1",
        {"algo": "newton", "curvature": "rfd-fast", "alpha0": 1.0},
    ),
    (
        "member 2: FD-SON m=10 α=0.25 + diag",
        {"algo": "newton", "curvature": "fd-fast", "alpha": 0.25, "diag": True},
    ),
    ("member 3: AdaGrad grid", {"algo": "adagrad-grid"}),
    (
        "member 4: RFD-SON m=10 α₀=3 c=0.2",
        {
            "algo": "newton",
            "curvature": "rfd-fast",
            "alpha0": 3.0,
            "alpha": 3.0,
            "c": 0.2,
        },
    ),
    ("AdaGrad (the binding's floor)", {"algo": "adagrad"}),
]


def best_cpu(reps, run):
    """The smallest CPU seconds of `reps` calls of run()."""
    best = float("inf")
    for _ in range(reps):
        t = time.process_time()
        run()
        best = min(best, time.process_time() - t)
    return best


def learn_all(stream, **params):
    model = skr.Classifier(**params)
    for x, y in stream:
        model.learn_one(x, y)
    return model


def per_row(stream, reps, params) -> tuple[float, float]:
    """µs per example of learn_one over the stream, then of predict_one on the learned model."""
    n = len(stream)
    learn = best_cpu(reps, lambda: learn_all(stream, **params))
    model = learn_all(stream, **params)
    predict = best_cpu(reps, lambda: [model.predict_one(x) for x, _ in stream])
    return 1e6 * learn / n, 1e6 * predict / n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--data", default=str(ROOT.parent / "shared" / "data" / "a9a.libsvm")
    )
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    X, y = load_svmlight_file(args.data)
    stream = list(dict_stream(X, y))
    n = len(stream)

    def pvs(make):
        return lambda: evaluate.progressive_val_score(
            stream, make(), metrics.Accuracy()
        )

    river = 1e6 * best_cpu(args.reps, pvs(linear_model.LogisticRegression)) / n
    ours = 1e6 * best_cpu(args.reps, pvs(skr.Classifier)) / n
    four = 1e6 * best_cpu(args.reps, pvs(lambda: skr.Classifier(algo="auto"))) / n
    print(
        f"{Path(args.data).name}, {n} examples, CPU µs per example (best of {args.reps})\n"
    )
    print("| what | µs/example | × River LR rate |")
    print("|---|---:|---:|")
    print(f"| River LogisticRegression(), progressive_val_score | {river:.1f} | 1.00 |")
    print(
        f"| Classifier() (auto-sparse), progressive_val_score | {ours:.1f} | {river / ours:.2f} |"
    )
    print(
        f'| Classifier(algo="auto"), progressive_val_score | {four:.1f} | {river / four:.2f} |'
    )
    print(f"| Classifier() at 0.4× River's rate | {river / 0.4:.1f} | 0.40 |\n")
    print("| learner | learn_one µs | predict_one µs |")
    print("|---|---:|---:|")
    for label, params in [
        ("Classifier() (auto-sparse: members 2 and 3)", {}),
        ('Classifier(algo="auto") (the four members)', {"algo": "auto"}),
        *MEMBERS,
    ]:
        learn, predict = per_row(stream, args.reps, params)
        print(f"| {label} | {learn:.2f} | {predict:.2f} |", flush=True)


if __name__ == "__main__":
    main()
