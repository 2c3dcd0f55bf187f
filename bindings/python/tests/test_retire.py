"""``retire=``: the mixture's retirement threshold (the CLI's ``--retire EPS``), its default,
its errors, ``retired_at_``, and the same bits as the CLI."""

import json
import math
import subprocess

import numpy as np
import pytest
from conftest import cli_train, noisy_linear
from sklearn.base import clone
from sklearn.datasets import dump_svmlight_file, load_svmlight_file

import sketchlearn
from sketchlearn import OnlineClassifier, OnlineRegressor


def stream(n=3000, d=12, seed=0):
    """A stream long enough for check points (the first at 1024)."""
    return noisy_linear(n, d, seed, labels=(-1.0, 1.0))


@pytest.mark.parametrize(
    "flags, params",
    [([], {}), (["--retire", "0"], {"retire": 0}), (["--retire", "0.01"], {"retire": 0.01})],
)
def test_python_and_cli_retire_the_same_members(cli, tmp_path, flags, params):
    X, y = stream()
    data = tmp_path / "stream.libsvm"
    dump_svmlight_file(X, y, str(data), zero_based=False)
    X, y = load_svmlight_file(str(data), n_features=X.shape[1], zero_based=False)
    model = tmp_path / "cli.model"
    cli_train(cli, data, model, *flags)
    est = OnlineClassifier(**params).fit(X, y)
    loaded = sketchlearn.load(model)
    assert loaded.learners_.state_bytes() == est.learners_.state_bytes()
    assert loaded.retired_at_ == est.retired_at_
    # The default loads back as None (what a new estimator has), a given threshold as itself.
    assert loaded.get_params()["retire"] == params.get("retire")
    assert loaded.learners_.retire == est.learners_.retire


def test_a_loaded_default_model_clones_to_an_estimator_that_fits_multiclass(cli, tmp_path):
    X, y = stream()
    data = tmp_path / "stream.libsvm"
    dump_svmlight_file(X, y, str(data), zero_based=False)
    model = tmp_path / "cli.model"
    cli_train(cli, data, model)
    fresh = clone(sketchlearn.load(model))
    three = np.digitize(X[:, 0], [-0.5, 0.5])
    fresh.fit(X, three)
    assert list(fresh.classes_) == [0, 1, 2]


def test_default_threshold_is_the_libraries():
    X, y = stream()
    default = OnlineClassifier().fit(X, y)
    assert default.retire is None
    assert default.learners_.retire == 1e-20  # DEFAULT_EPSILON, `sketchlearn train`'s default
    given = OnlineClassifier(retire=1e-20).fit(X, y)
    assert given.learners_.state_bytes() == default.learners_.state_bytes()


def test_zero_keeps_every_member_and_a_larger_threshold_retires():
    X, y = stream()
    kept = OnlineClassifier(retire=0).fit(X, y)
    assert kept.learners_.retire == 0
    assert kept.retired_at_ == [None] * len(kept.retired_at_)
    assert len(kept.retired_at_) >= 2
    eager = OnlineClassifier(retire=0.01).fit(X, y)
    points = [p for p in eager.retired_at_ if p is not None]
    assert points, eager.retired_at_
    # Check points: every 256 of importance weight from 1024 on (unit weights: examples).
    assert all(p >= 1024 and p % 256 == 0 for p in points), points
    assert None in eager.retired_at_  # the leader never retires
    assert eager.learners_.state_bytes() != kept.learners_.state_bytes()
    assert np.mean(eager.predict(X) == y) > 0.9


def test_regressor_takes_retire():
    X, y = stream()
    reg = OnlineRegressor(retire=0.01).fit(X, X @ np.arange(X.shape[1]) + y)
    assert reg.learners_.retire == 0.01
    assert any(p is not None for p in reg.retired_at_)


def test_a_member_retired_at_infinity_reads_as_retired(cli, tmp_path):
    """Importance weights near the largest float take the weight seen to infinity, where the
    loser retires (an empty row of weight f64::MAX is a tie; a second one overflows the sum; a
    row of values with such a weight would be refused, and a refused row changes nothing).
    ``retired_at_`` gives ``inf``; the CLI's ``--json`` says ``"retired": true`` and
    ``"retired_at": "inf"`` (it printed ``null``, an active member's look), which ``float``
    reads back as the same point."""
    rows = ["1 1.7976931348623157e308 |\n"]
    for i in range(1, 10):
        y = -1 if i % 3 == 0 else 1
        empty = f"{y} 1.7976931348623157e308 |\n"
        rows.append(empty if i == 7 else f"{y} 1 | a:{y} b:0.5\n")
    data = tmp_path / "huge.vw"
    data.write_text("".join(rows))
    model = tmp_path / "huge.model"
    # -b 2: 4 hashed weights, so the retirement's coverage (3·d stored entries) is reached here
    flags = ["--algo", "adagrad-grid", "--retire", "0.45", "-b", "2", "-f", str(model)]
    out = subprocess.run(
        [str(cli), "train", "--quiet", "--json", *flags, str(data)],
        check=True,
        capture_output=True,
        text=True,
    )
    members = json.loads(out.stdout)["mixture"]
    loaded = sketchlearn.load(model)
    assert sorted(loaded.retired_at_, key=lambda p: p is None) == [math.inf, None]
    assert [m["retired"] for m in members] == [p is not None for p in loaded.retired_at_]
    points = [float(m["retired_at"]) if "retired_at" in m else None for m in members]
    assert points == loaded.retired_at_


@pytest.mark.parametrize("bad", [-1e-9, 1.0, math.nan, math.inf])
def test_threshold_outside_zero_one_is_refused(bad):
    X, y = stream(n=50)
    with pytest.raises(ValueError, match="retire"):
        OnlineClassifier(retire=bad).fit(X, y)


def test_learners_without_a_mixture_refuse_retire():
    X, y = stream(n=50)
    with pytest.raises(ValueError, match="retire applies to mixtures"):
        OnlineClassifier(algo="ogd", retire=0.1).fit(X, y)
    # Without retire they learn, and have no mixture to report on.
    assert OnlineClassifier(algo="ogd").fit(X, y).retired_at_ is None
    assert OnlineClassifier(algo="adagrad-grid", retire=0.1).fit(X, y).learners_.retire == 0.1


def test_multiclass_refuses_retire(cli, tmp_path):
    """With the core's message, the one ``sketchlearn train --multiclass --retire`` shows."""
    X, _ = stream(n=60)
    y = np.arange(60) % 3
    with pytest.raises(ValueError) as refused:
        OnlineClassifier(retire=0.1).fit(X, y)
    message = str(refused.value)
    assert message.startswith("retire is for binary and regression models"), message
    assert "multiclass keeps the default 1e-20" in message
    data = tmp_path / "three.libsvm"
    dump_svmlight_file(X, y, str(data), zero_based=False)
    out = subprocess.run(
        [str(cli), "train", "--multiclass", "--retire", "0.1", str(data)],
        capture_output=True,
        text=True,
    )
    assert out.returncode != 0
    assert "--" + message in out.stderr, out.stderr
    assert OnlineClassifier().fit(X, y).retired_at_ is None


def test_get_set_params_and_clone():
    est = OnlineClassifier(retire=0.5)
    assert est.get_params()["retire"] == 0.5
    copy = clone(est)
    assert copy.retire == 0.5 and copy is not est
    assert copy.set_params(retire=0).retire == 0
    X, y = stream()
    a = clone(OnlineClassifier(retire=0.01)).fit(X, y)
    b = OnlineClassifier(retire=0.01).fit(X, y)
    assert a.learners_.state_bytes() == b.learners_.state_bytes()


def test_saved_threshold_comes_back_with_the_model(tmp_path):
    X, y = stream()
    est = OnlineClassifier(retire=0.01).fit(X, y)
    est.save(tmp_path / "m.model")
    back = sketchlearn.load(tmp_path / "m.model")
    assert back.retire == 0.01
    assert back.retired_at_ == est.retired_at_
    assert clone(back).retire == 0.01
