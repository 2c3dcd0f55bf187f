"""Shared fixtures: the repository's committed data sets."""

import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_svmlight_file

#: The repository root (bindings/python/tests → ../../..).
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True, scope="session")
def _ctrl_c_raises():
    """Ctrl-C raises ``KeyboardInterrupt`` in the tests, as in an interactive session, also when
    pytest runs as a background job of a non-interactive shell (``cmd &``, ``nohup``), which
    starts it with SIGINT ignored: the Ctrl-C tests (``test_interrupt.py``, ``test_threads.py``)
    send SIGINT to this process and would otherwise wait for a long fit to end."""
    before = signal.getsignal(signal.SIGINT)
    if before == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


@pytest.fixture(scope="session")
def heart():
    """``data/heart.libsvm`` as (CSR X, y in ±1), file order."""
    X, y = load_svmlight_file(str(ROOT / "data" / "heart.libsvm"))
    return X, y


@pytest.fixture(scope="session")
def australian():
    """``data/australian.libsvm`` as (CSR X, y in ±1), file order."""
    X, y = load_svmlight_file(str(ROOT / "data" / "australian.libsvm"))
    return X, y


@pytest.fixture(scope="session")
def cli():
    """The CLI: ``$SKETCHLEARN_CLI`` when set (scripts/test gives the binary its ``cargo test``
    built), else the release CLI, built here (skipped only when cargo is absent)."""
    given = os.environ.get("SKETCHLEARN_CLI")
    if given:
        if not Path(given).is_file():
            pytest.fail(f"SKETCHLEARN_CLI={given}: no such file (build the CLI, or unset it)")
        return Path(given)
    cargo = shutil.which("cargo")
    if cargo is None:
        pytest.skip("cargo is not installed: cannot build the CLI")
    subprocess.run(
        [cargo, "build", "--release", "--quiet", "-p", "sketchlearn-cli"], cwd=ROOT, check=True
    )
    return ROOT / "target" / "release" / "sketchlearn"


@pytest.fixture(scope="module")
def client():
    """A Dask client of two one-thread worker processes (the CI's cluster of issue 30), one
    per test module."""
    import distributed

    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


def noisy_linear(n, d, seed=0, labels=(-1, 1)):
    """A binary stream: Gaussian rows of `d` features, labelled `labels[1]` where a random
    direction's score plus noise (s.d. 0.3) is positive, else `labels[0]`."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    w = rng.normal(size=d)
    y = np.where(X @ w + 0.3 * rng.normal(size=n) > 0, labels[1], labels[0])
    return X, y


def cli_train(cli, data, model, *flags):
    """`sketchlearn train --quiet -f MODEL FLAGS DATA` (the test fails on a non-zero exit)."""
    subprocess.run(
        [str(cli), "train", "--quiet", "-f", str(model), *flags, str(data)],
        check=True,
        capture_output=True,
    )


def python_steps_during(fit, min_seconds=0.3):
    """Calls ``fit()`` until at least ``min_seconds`` have passed while a pure-Python thread
    counts; returns (calls, seconds, counter steps taken meanwhile). With the GIL held inside
    ``fit`` the counter could step only in the switch intervals (one per 5 ms) of the calls'
    Python parts, so a count in the thousands shows that the Rust part released the GIL.
    Repeating the call (rather than asking one call to be long) keeps the observation
    independent of how fast the machine is."""
    ticks, done = [0], threading.Event()

    def count():
        while not done.is_set():
            ticks[0] += 1
            time.sleep(0)

    counter = threading.Thread(target=count)
    counter.start()
    time.sleep(0.05)
    before, start, calls = ticks[0], time.perf_counter(), 0
    while calls == 0 or time.perf_counter() - start < min_seconds:
        fit()
        calls += 1
    seconds, during = time.perf_counter() - start, ticks[0] - before
    done.set()
    counter.join()
    return calls, seconds, during
