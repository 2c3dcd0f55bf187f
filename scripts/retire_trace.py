#!/usr/bin/env python3
"""The default mixture's weights at every check point, and a retirement rule replayed on them
(issue 27; docs/results/speed.md, "The retirement threshold ε on every shared file").

Needs the scratch build of docs/results/retire_eps_scratch.patch, which prints, with SL_TRACE
set, one line per mixture every 256 examples: the mixture's address, the examples seen,
AdaHedge's rate, the members' cumulative losses and their weights. The run is
`train --quiet --retire 0 FILE` (no member retires, so the trajectories are the members' own).

    python3 scripts/retire_trace.py --bin /tmp/sl-scratch FILE [--loss squared]
        [--at 1024,2048,6144] [--eps 1e-9 --warm-up 26214] [--below 1e-9]

Prints, per mixture (inner mixtures, e.g. the AdaGrad grid, have their own lines), the rate,
each member's loss gap to the leader and its weight at the `--at` points; `--below E` prints the
first and last check point at which each member weighs less than E; `--eps E --warm-up W`
replays the rule "at every check point t ≥ W (multiples of 256), a member whose weight is below
E and not the largest retires" and prints where each member would retire and the largest weight
it reaches afterwards in the trace (`!` when above 1e-6: a member the mixture would have wanted
back). The replay is exact up to the first retirement; after it the kept members' weights
change only by the retired weight.
"""

import argparse
import os
import subprocess
from collections import defaultdict


def trace(binary, path, loss):
    env = dict(os.environ, SL_TRACE="1")
    cmd = [binary, "train", "--quiet", "--retire", "0", *loss, path]
    err = subprocess.run(
        cmd, env=env, check=True, capture_output=True, text=True
    ).stderr
    return parse_trace(err)


def parse_trace(err):
    """[[(seen, rate, losses, weights)] per mixture] from the scratch build's TRACE lines, the
    mixtures in the order of their first line (an inner mixture, updated inside its outer
    mixture's member update, prints before the outer one)."""
    mixtures = defaultdict(list)
    for line in err.splitlines():
        if not line.startswith("TRACE "):
            continue
        _, ptr, seen, eta, rest = line.split(" ", 4)
        losses, weights = rest.strip().split("] [")
        losses = [float(x) for x in losses.strip("[").split(",")]
        weights = [float(x) for x in weights.strip("]").split(",")]
        mixtures[ptr].append((float(seen), float(eta), losses, weights))
    return list(mixtures.values())


def replay(rows, eps, warm_up):
    """[(member, retired at, largest weight afterwards)] under the rule (module docs)."""
    k = len(rows[0][3])
    retired = [None] * k
    for seen, _, _, pi in rows:
        active = [j for j in range(k) if retired[j] is None]
        if seen < warm_up or seen % 256 or len(active) < 2:
            continue
        top = max(pi[j] for j in active)
        for j in active:
            if pi[j] < eps and pi[j] < top:
                retired[j] = seen
    return [
        (j, t, max(r[3][j] for r in rows if r[0] >= t))
        for j, t in enumerate(retired)
        if t is not None
    ]


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("file")
    ap.add_argument("--bin", required=True)
    ap.add_argument("--loss", default=None)
    ap.add_argument("--at", default="1024,2048,4096,6144,8192,16384,32768")
    ap.add_argument("--below", type=float, default=None)
    ap.add_argument("--eps", type=float, default=None)
    ap.add_argument("--warm-up", type=float, default=1024.0)
    a = ap.parse_args()
    loss = ["--loss", a.loss] if a.loss else []
    at = {float(x) for x in a.at.split(",")}
    for i, rows in enumerate(trace(a.bin, a.file, loss)):
        print(f"mixture {i} ({len(rows[0][3])} members)")
        for seen, eta, losses, pi in rows:
            if seen in at:
                best = min(losses)
                gaps = " ".join(f"{x - best:.2f}" for x in losses)
                weights = " ".join(f"{p:.3g}" for p in pi)
                print(f"  t={seen:.0f} rate={eta:.4g} gaps {gaps} weights {weights}")
        if a.below is not None:
            for j in range(len(rows[0][3])):
                under = [r[0] for r in rows if r[3][j] < a.below]
                if under:
                    print(
                        f"  member {j} < {a.below:g}: t = {under[0]:.0f} … {under[-1]:.0f}"
                    )
        if a.eps is not None:
            out = replay(rows, a.eps, a.warm_up)
            text = " ".join(
                f"{j}@{t:.0f}{'!' if m > 1e-6 else ''} (max {m:.1e})" for j, t, m in out
            )
            print(f"  ε={a.eps:g}, warm-up {a.warm_up:.0f}: {text or 'nobody retires'}")


if __name__ == "__main__":
    main()
