"""Python users' expectations: the GIL is released while Rust learns, Ctrl-C stops a long fit."""

import os
import signal
import threading
import time

import numpy as np
import pytest
from conftest import python_steps_during

from sketchlearn import OnlineClassifier


def _data(n=200_000, d=20):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d))
    return X, (X[:, 0] + 0.1 * rng.standard_normal(n) > 0).astype(int)


def test_gil_released_during_fit():
    """A pure-Python thread keeps running while another thread fits: with the GIL held for
    the whole fit it could not take a single step until fit returned."""
    X, y = _data()
    clf = OnlineClassifier(algo="newton", curvature="fd", n_passes=2)
    calls, seconds, during = python_steps_during(lambda: clf.fit(X, y))
    # A fit holding the GIL would let the counter step only in the few switch intervals of
    # its Python part (one step per 5 ms), never during the time spent inside Rust.
    assert during > 1000, (calls, seconds, during)


def test_two_threads_fit_two_models_like_one():
    X, y = _data(20_000)
    models = [OnlineClassifier(), OnlineClassifier()]
    threads = [threading.Thread(target=m.fit, args=(X, y)) for m in models]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ref = OnlineClassifier().fit(X, y).decision_function(X[:100])
    for m in models:
        np.testing.assert_array_equal(m.decision_function(X[:100]), ref)


def test_a_second_thread_fits_models_while_the_first_fit_is_inside_rust():
    """Two threads fitting two models run at once: during one long fit on a thread, the main
    thread fits small models to the end, again and again. Were the GIL held while Rust learns,
    the main thread could run only in the long fit's few Python milliseconds (a switch every
    5 ms), a handful of small fits at most; released, it fits them all the while (hundreds)."""
    X, y = _data(100_000)
    Xs, ys = X[:500], y[:500]
    inside, done = threading.Event(), threading.Event()

    def long_fit():
        clf = OnlineClassifier(algo="newton", curvature="fd")
        inside.set()
        clf.fit(X, y)
        done.set()

    worker = threading.Thread(target=long_fit)
    worker.start()
    inside.wait()
    small = 0
    while not done.is_set():
        last = OnlineClassifier(algo="adagrad").fit(Xs, ys)
        small += 1
    worker.join()
    assert small >= 50, small
    ref = OnlineClassifier(algo="adagrad").fit(Xs, ys)
    np.testing.assert_array_equal(last.decision_function(Xs), ref.decision_function(Xs))


@pytest.mark.skipif(not hasattr(signal, "SIGINT"), reason="needs SIGINT")
def test_ctrl_c_interrupts_a_long_fit():
    X, y = _data(100_000)
    clf = OnlineClassifier(n_passes=1000)
    timer = threading.Timer(0.5, os.kill, args=(os.getpid(), signal.SIGINT))
    timer.start()
    start = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        clf.fit(X, y)
    timer.cancel()
    assert time.perf_counter() - start < 30


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_fits_after_its_parent():
    """The mixture's members learn on a helper thread kept per calling thread; a child made by
    fork (multiprocessing's default on Linux) inherits the record of the parent's helper but not
    its thread, and must start its own instead of waiting for it forever."""
    X, y = _data(2_000)
    ref = OnlineClassifier().fit(X, y).coef_
    pid = os.fork()
    if pid == 0:
        code = 4  # the child's fit raised: never back into the child's copy of pytest
        try:
            signal.alarm(60)  # a child waiting on the parent's helper ends by SIGALRM
            same = np.array_equal(OnlineClassifier().fit(X, y).coef_, ref)
            code = 0 if same else 3
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
