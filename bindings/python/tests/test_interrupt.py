"""Ctrl-C in long fits: SIGINT sent to the main thread while Rust works with the GIL released
raises ``KeyboardInterrupt`` within a fraction of a second, and the estimator stays usable —
unchanged for the batch ``DRPClassifier``, as of the last whole chunk of rows for the online
learners."""

import signal
import threading
import time
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from sketchlearn import DRPClassifier, FMClassifier, OnlineClassifier

pytestmark = pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="needs pthread_kill")

#: Seconds between starting a fit and sending SIGINT.
DELAY = 0.3


def seconds_to_interrupt(fit):
    """Runs ``fit()`` with SIGINT sent to this (the main) thread after ``DELAY`` seconds;
    asserts that ``KeyboardInterrupt`` arrives and returns the seconds it took after the
    signal."""
    main = threading.get_ident()
    timer = threading.Timer(DELAY, signal.pthread_kill, args=(main, signal.SIGINT))
    start = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            fit()
    finally:
        timer.cancel()
    return time.perf_counter() - start - DELAY


def long_drp_problem():
    """A DRP problem whose fit (m = 1000, T = 3) takes 20–30 s on the development machine:
    the projection of 5,000 × 100,000 sparse rows and three 1000-dimensional Newton solves."""
    rng = np.random.default_rng(0)
    n, d, per_row = 5000, 100_000, 200
    rows = np.repeat(np.arange(n), per_row)
    cols = rng.integers(0, d, n * per_row)
    X = sp.csr_matrix((rng.random(n * per_row), (rows, cols)), shape=(n, d))
    return X, rng.integers(0, 2, n)


def test_ctrl_c_stops_a_long_drp_fit_and_keeps_the_fitted_model():
    X, y = long_drp_problem()
    clf = DRPClassifier(size=5, keep_going=True).fit(X[:200], y[:200])
    before = clf.decision_function(X[:50])
    clf.set_params(size=1000, iterations=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        late = seconds_to_interrupt(lambda: clf.fit(X, y))
    # The hook checks every 0.1 s; checkpoints are at most a few ms of work apart (the bound
    # leaves room for a loaded machine).
    assert late < 3.0, late
    # Unchanged: the interrupted fit returned nothing, the previous model still predicts.
    np.testing.assert_array_equal(clf.decision_function(X[:50]), before)
    assert clf.size == 1000 and clf.coef_.shape == (1, 100_000)
    # And it can be fitted again.
    clf.set_params(size=5, iterations=1).fit(X[:200], y[:200])
    np.testing.assert_array_equal(clf.decision_function(X[:50]), before)


def _stream(n, d):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((n, d))
    return X, (X[:, 0] > 0).astype(int)


@pytest.mark.parametrize(
    "make, method",
    [
        (lambda: OnlineClassifier(n_passes=1000), "fit"),
        # About 1 ms a row (d = 300, m = 50): 4096 rows between two checks took 4.5 s.
        (lambda: OnlineClassifier(algo="newton", curvature="fd", size=50), "partial_fit"),
        (lambda: FMClassifier(n_passes=1000), "fit"),
    ],
)
def test_ctrl_c_stops_a_long_online_fit_and_the_model_stays_usable(make, method):
    est = make()
    if method == "fit":
        X, y = _stream(100_000, 20)
        late = seconds_to_interrupt(lambda: est.fit(X, y))
    else:
        # One partial_fit call of about 20 s.
        X, y = _stream(20_000, 300)
        late = seconds_to_interrupt(lambda: est.partial_fit(X, y, classes=[0, 1]))
    assert late < 3.0, late
    # As of the last whole chunk: it predicts, and learning continues from there.
    assert np.isfinite(est.decision_function(X[:100])).all()
    est.partial_fit(X[:300], y[:300])
    assert est.score(X[:2000], y[:2000]) > 0.7


def _long_file(tmp_path):
    """A LIBSVM file of 20,000 rows, 300 dense features (≈ 1 ms a row for FD m=50: ≈ 20 s in
    one ``partial_fit_file`` call), labels ±1, and the arrays it holds."""
    X, y = _stream(20_000, 300)
    X = np.round(X, 3)
    path = tmp_path / "long.libsvm"
    with path.open("w") as f:
        for row, label in zip(X, y):
            f.write(("1" if label else "-1") + "".join(f" {j + 1}:{v}" for j, v in enumerate(row)))
            f.write("\n")
    return path, X, y


def test_ctrl_c_stops_a_long_file_fit_as_of_the_last_whole_row(tmp_path):
    path, X, y = _long_file(tmp_path)
    est = OnlineClassifier(algo="newton", curvature="fd", size=50)
    late = seconds_to_interrupt(lambda: est.partial_fit_file(path, n_features=300))
    assert late < 3.0, late
    # The run stopped part-way: the model learned whole rows, some but not all of them.
    seen = est.learners_.examples_seen
    assert 0 < seen < 20_000, seen
    assert est.progressive_score_["examples"] == seen
    # Exactly the model of a run over those rows, continuing as usual.
    head = tmp_path / "head.libsvm"
    head.write_text("".join(path.read_text().splitlines(keepends=True)[:seen]))
    ref = OnlineClassifier(algo="newton", curvature="fd", size=50)
    ref.partial_fit_file(head, n_features=300)
    assert ref.learners_.state_bytes() == est.learners_.state_bytes()
    est.partial_fit(X[:300], np.where(y[:300] > 0, 1, -1))
    assert est.score(X[:2000], np.where(y[:2000] > 0, 1, -1)) > 0.7
