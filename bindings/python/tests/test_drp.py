"""DRPClassifier: the core's dual random projection, the same weights and model file as
``sketchlearn drp -f`` on the same rows and seed."""

import contextlib
import doctest
import json
import pickle
import re
import subprocess
import threading
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import ROOT, python_steps_during
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

import sketchlearn
import sketchlearn.drp
from sketchlearn import DRPClassifier, _core


def low_rank_problem(n=500, rank=8, d=2000, seed=0):
    """Rows of rank ``rank`` in ``d`` dimensions (the paper's setting) with labels of a random
    direction, as strings."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, rank)) @ rng.standard_normal((rank, d)) / 40
    y = np.where(X @ rng.standard_normal(d) > 0, "yes", "no")
    return X, y


@pytest.mark.parametrize(
    "flags, params",
    [
        (["--size", "10"], {"size": 10}),
        (
            ["--size", "13", "--iterations", "3", "--loss", "smooth-hinge", "--lambda", "4"]
            + ["--seed", "5"],
            {"size": 13, "iterations": 3, "loss": "smooth-hinge", "alpha": 4.0, "random_state": 5},
        ),
        # Algorithm 2 diverges at t = 2: both keep the iterate t = 1.
        (["--size", "8", "--iterations", "3"], {"size": 8, "iterations": 3}),
    ],
)
def test_drp_equals_cli_drp(cli, heart, tmp_path, flags, params):
    X, y = heart
    data = ROOT / "data" / "heart.libsvm"
    cli_model = tmp_path / "cli.model"
    out = subprocess.run(
        [str(cli), "drp", "--json", "-f", str(cli_model), *flags, str(data)],
        check=True,
        capture_output=True,
        text=True,
    )
    report = json.loads(out.stdout)
    expect = pytest.warns(ConvergenceWarning) if report["diverged_at"] else _no_warning()
    with expect:
        est = DRPClassifier(**params).fit(X, y)
    assert est.status_ == report["status"]
    assert est.n_iter_ == report["saved_iteration"]
    kept = next(s for s in report["solutions"] if s["t"] == est.n_iter_ and s["name"] != "naive")
    assert est.objective_ == kept["objective"]
    assert est.relative_grad_norm_ == kept["relative_grad_norm"]
    # The same model: weights, description, example count (the Python file adds classes_).
    cli_learners = _core.LinearLearners.load(str(cli_model))
    assert est.learners_.state_bytes() == cli_learners.state_bytes()
    np.testing.assert_array_equal(est.coef_, cli_learners.weights())
    # A dense array gives the same bits; the CLI scores the Python model as its own.
    dense = DRPClassifier(**params)
    with pytest.warns(ConvergenceWarning) if report["diverged_at"] else _no_warning():
        dense.fit(X.toarray(), y)
    np.testing.assert_array_equal(dense.coef_, est.coef_)
    py_model = tmp_path / "py.model"
    est.save(py_model)
    preds = subprocess.run(
        [str(cli), "predict", "--raw", "-i", str(py_model), str(data)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    np.testing.assert_array_equal(
        np.array([float(v) for v in preds.split()]), est.decision_function(X)
    )
    # sketchlearn.load reads either file back as the estimator that wrote it.
    for path in (cli_model, py_model):
        loaded = sketchlearn.load(path)
        assert isinstance(loaded, DRPClassifier) and loaded.classes_.tolist() == [-1, 1]
        assert loaded.get_params() == {
            **DRPClassifier(**params).get_params(),
            "random_state": params.get("random_state", 0),
        }
        assert loaded.n_iter_ == est.n_iter_
        np.testing.assert_array_equal(loaded.decision_function(X), est.decision_function(X))


@contextlib.contextmanager
def _no_warning():
    """A context in which any warning is an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def test_drp_recovers_the_exact_optimum_on_low_rank_data():
    """Theorem 5: on rank-8 data with m = 100 projections each iteration of Algorithm 2 shrinks
    ‖w̃ − w*‖; w* is LIBLINEAR's (C = 1/λ, no intercept) through scikit-learn."""
    X, y = low_rank_problem()
    exact = LogisticRegression(C=1.0, fit_intercept=False, tol=1e-10, max_iter=10000).fit(X, y)
    errors = []
    for t in (1, 2, 3, 5):
        clf = DRPClassifier(size=100, iterations=t).fit(X, y)
        assert clf.status_ == "completed" and clf.n_iter_ == t
        errors.append(np.linalg.norm(clf.coef_ - exact.coef_) / np.linalg.norm(exact.coef_))
    assert errors == sorted(errors, reverse=True), errors
    assert errors[-1] < 0.05, errors
    assert np.mean(clf.predict(X) == exact.predict(X)) > 0.98
    assert clf.classes_.tolist() == ["no", "yes"]
    p = clf.predict_proba(X[:5])
    np.testing.assert_allclose(p, exact.predict_proba(X[:5]), atol=0.05)


def test_drp_seed_decides_the_projection():
    X, y = low_rank_problem(n=200, d=500)
    a = DRPClassifier(size=50, random_state=3).fit(X, y).coef_
    b = DRPClassifier(size=50, random_state=3).fit(X, y).coef_
    c = DRPClassifier(size=50, random_state=4).fit(X, y).coef_
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_drp_divergence_warns_and_keeps_the_iterate_before():
    """m = 20 is too few for these rank-8 rows in d = 2000 at λ = 1: Algorithm 2 diverges, the
    iterate before the divergence is the result (as the CLI saves it)."""
    X, y = low_rank_problem()
    with pytest.warns(ConvergenceWarning, match="diverged at t=") as caught:
        clf = DRPClassifier(size=20, iterations=4).fit(X, y)
    at = int(re.search(r"diverged at t=(\d+)", str(caught[0].message)).group(1))
    assert (clf.status_, clf.n_iter_) == (f"diverged at t={at}", at - 1)
    earlier = DRPClassifier(size=20, iterations=at - 1).fit(X, y)
    assert earlier.status_ == "completed"
    np.testing.assert_array_equal(clf.coef_, earlier.coef_)
    with pytest.warns(ConvergenceWarning):
        going = DRPClassifier(size=20, iterations=4, keep_going=True).fit(X, y)
    assert going.n_iter_ == 4


def test_drp_bad_input_and_parameters(heart):
    X, y = heart
    Xd = X.toarray()
    Xd[7, 2] = np.nan
    with pytest.raises(ValueError, match="row 7"):
        DRPClassifier().fit(Xd, y)
    with pytest.raises(ValueError, match="projection size m"):
        DRPClassifier(size=0).fit(X, y)
    with pytest.raises(ValueError, match="lambda must be finite and > 0"):
        DRPClassifier(alpha=0.0).fit(X, y)
    with pytest.raises(ValueError, match="unknown loss 'hinge'"):
        DRPClassifier(loss="hinge").fit(X, y)
    with pytest.raises(ValueError, match="iterations T must be at least 1"):
        DRPClassifier(iterations=0).fit(X, y)
    with pytest.raises(ValueError, match="Only binary classification"):
        DRPClassifier().fit(X[:3], [0, 1, 2])
    assert not hasattr(DRPClassifier(loss="ridge"), "predict_proba")


def test_drp_pickles_and_saves_classes(heart, tmp_path):
    X, y = heart
    labels = np.where(y > 0, "present", "absent")
    clf = DRPClassifier(size=10).fit(X, labels)
    back = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(back.decision_function(X), clf.decision_function(X))
    np.testing.assert_array_equal(back.predict(X), clf.predict(X))
    path = tmp_path / "drp.model"
    clf.save(path)
    assert _core.LinearLearners.load(str(path)).classes() == ["absent", "present"]
    loaded = sketchlearn.load(path)
    assert loaded.classes_.tolist() == ["absent", "present"]
    np.testing.assert_array_equal(loaded.predict(X), clf.predict(X))


def test_drp_docstring_and_readme_examples_run(monkeypatch):
    assert doctest.testmod(sketchlearn.drp, raise_on_error=True).attempted > 0
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```python\n(.*?)```", text, flags=re.S) if "DRP" in b]
    assert len(blocks) == 1
    monkeypatch.chdir(ROOT)
    exec(compile(blocks[0], "README.md", "exec"), {"__name__": "readme"})


def test_gil_released_during_drp_fit():
    """A pure-Python thread keeps counting while DRP solves in Rust (as for the online fits in
    test_threads.py); two threads fitting the same problem get the same weights as one."""
    X = sp.random(8_000, 3_000, density=0.01, format="csr", random_state=0)
    y = np.where(X @ np.random.default_rng(0).standard_normal(3_000) > 0, 1, -1)
    clf = DRPClassifier(size=150)
    calls, seconds, during = python_steps_during(lambda: clf.fit(X, y))
    assert during > 1000, (calls, seconds, during)
    models = [DRPClassifier(size=150) for _ in range(2)]
    threads = [threading.Thread(target=m.fit, args=(X, y)) for m in models]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for m in models:
        np.testing.assert_array_equal(m.coef_, clf.coef_)
