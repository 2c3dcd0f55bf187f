#!/usr/bin/env python3
"""River's FMRegressor on a ratings file, on the same split as `sketchlearn fm`.

The file is `user item rating [timestamp]` (whitespace-separated, as MovieLens-100K u.data) or
comma-separated with an optional header (MovieLens ratings.csv). The first --train-fraction of
the lines (file order, floor(n * fraction)) are learned online with progressive validation
(predict_one before learn_one), the rest are predicted without updates. Features are one-hot
{"u<user>": 1, "i<item>": 1}, as in `sketchlearn fm`; at test time a user or item never seen in
training loses its feature (sketchlearn's default cold-start policy, so both tools see the same
test inputs; River would otherwise draw a random latent vector for it).

Reported per run (JSON lines on stdout, flushed):
  {"type": "run", "setting", "params", "train_examples", "test_examples", "progressive_rmse",
   "test_rmse", "progressive_rmse_clipped", "test_rmse_clipped", "seconds", "unseen_users",
   "unseen_items"}
`*_clipped` clip the predictions into the training ratings' range (River's `PredClipper`, which
the River MovieLens tutorial uses); learning always uses the raw prediction. `seconds` is the
learning pass plus the test predictions (parsing excluded).
Then {"type": "best", ...} = the run with the lowest progressive RMSE (selection on the training
stream only).

Settings:
  default   FMRegressor() with River's defaults (10 factors, SGD(0.01) for weights and latents,
            intercept 0, intercept_lr 0.01, latent init N(0, 0.1)), seed 73;
  tutorial  River's MovieLens FM tutorial: 10 factors, SGD(0.025) weights, SGD(0.05) latents,
            intercept 3, intercept_lr 0.01, latent init N(0, 0.1, seed 73);
  tutorial-lr-x2 / tutorial-lr-x0.5: the tutorial with both learning rates doubled / halved.

Usage:
  .venv-peers/bin/python scripts/peers/river_fm.py [--train-fraction 0.8]
      [--settings default,tutorial,tutorial-lr-x2,tutorial-lr-x0.5] FILE
"""

import argparse
import json
import math
import sys
import time


def emit(obj):
    sys.stdout.write(json.dumps(obj, allow_nan=False, default=str) + "\n")
    sys.stdout.flush()


def read_ratings(path):
    rows = []
    first = True
    with open(path, "r", encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            parts = line.split(",") if "," in line else line.split()
            if len(parts) < 3:
                raise SystemExit(f"{path}: malformed line {line!r}")
            try:
                r = float(parts[2])
            except ValueError:
                if first:
                    first = False
                    continue  # header
                raise SystemExit(f"{path}: bad rating in {line!r}")
            first = False
            rows.append((parts[0].strip(), parts[1].strip(), r))
    return rows


def model_for(setting):
    from river import facto, optim

    if setting == "default":
        return facto.FMRegressor(seed=73), {
            "n_factors": 10,
            "lr_w": 0.01,
            "lr_v": 0.01,
            "intercept": 0.0,
        }
    base_w, base_v = 0.025, 0.05
    mult = {"tutorial": 1.0, "tutorial-lr-x2": 2.0, "tutorial-lr-x0.5": 0.5}[setting]
    lr_w, lr_v = base_w * mult, base_v * mult
    model = facto.FMRegressor(
        n_factors=10,
        weight_optimizer=optim.SGD(lr_w),
        latent_optimizer=optim.SGD(lr_v),
        sample_normalization=False,
        l1_weight=0.0,
        l2_weight=0.0,
        l1_latent=0.0,
        l2_latent=0.0,
        intercept=3,
        intercept_lr=0.01,
        weight_initializer=optim.initializers.Zeros(),
        latent_initializer=optim.initializers.Normal(mu=0.0, sigma=0.1, seed=73),
    )
    return model, {"n_factors": 10, "lr_w": lr_w, "lr_v": lr_v, "intercept": 3.0}


def run(rows, n_train, setting):
    model, params = model_for(setting)
    lo = min(r for _, _, r in rows[:n_train]) if n_train else -math.inf
    hi = max(r for _, _, r in rows[:n_train]) if n_train else math.inf
    seen_u, seen_i = set(), set()
    se = se_c = 0.0
    start = time.perf_counter()
    for u, i, y in rows[:n_train]:
        x = {"u" + u: 1.0, "i" + i: 1.0}
        p = model.predict_one(x)
        model.learn_one(x, y)
        seen_u.add(u)
        seen_i.add(i)
        se += (p - y) ** 2
        se_c += (min(max(p, lo), hi) - y) ** 2
    tse = tse_c = 0.0
    unseen_u = unseen_i = 0
    for u, i, y in rows[n_train:]:
        x = {}
        if u in seen_u:
            x["u" + u] = 1.0
        else:
            unseen_u += 1
        if i in seen_i:
            x["i" + i] = 1.0
        else:
            unseen_i += 1
        p = model.predict_one(x)
        tse += (p - y) ** 2
        tse_c += (min(max(p, lo), hi) - y) ** 2
    seconds = time.perf_counter() - start
    n_test = len(rows) - n_train
    rmse = lambda s, n: math.sqrt(s / n) if n else None
    return {
        "type": "run",
        "setting": setting,
        "params": params,
        "train_examples": n_train,
        "test_examples": n_test,
        "progressive_rmse": rmse(se, n_train),
        "test_rmse": rmse(tse, n_test),
        "progressive_rmse_clipped": rmse(se_c, n_train),
        "test_rmse_clipped": rmse(tse_c, n_test),
        "seconds": seconds,
        "unseen_users": unseen_u,
        "unseen_items": unseen_i,
    }


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("file")
    ap.add_argument("--train-fraction", type=float, default=0.8)
    ap.add_argument(
        "--settings", default="default,tutorial,tutorial-lr-x2,tutorial-lr-x0.5"
    )
    args = ap.parse_args()
    import river

    rows = read_ratings(args.file)
    n_train = math.floor(len(rows) * args.train_fraction)
    results = []
    for setting in args.settings.split(","):
        r = run(rows, n_train, setting)
        r["file"] = args.file
        r["river_version"] = river.__version__
        emit(r)
        results.append(r)
    best = min(results, key=lambda r: r["progressive_rmse"])
    emit(dict(best, type="best"))


if __name__ == "__main__":
    main()
