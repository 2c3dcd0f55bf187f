"""FMClassifier / FMRegressor: the core's factorization machines, the same bits and model
files as ``sketchlearn fm`` on the same rows."""

import json
import pickle
import struct
import subprocess
import zlib

import numpy as np
import pytest
from conftest import ROOT
from sklearn.datasets import make_regression

import sketchlearn
from sketchlearn import FMClassifier, FMRegressor


@pytest.mark.parametrize(
    "flags, params",
    [
        ([], {}),
        (["--algo", "fm-sgd", "--seed", "5"], {"algo": "fm-sgd", "random_state": 5}),
        (["--algo", "sftrl-split", "--size", "4"], {"algo": "sftrl-split", "size": 4}),
    ],
)
def test_fm_equals_cli_fm(cli, heart, tmp_path, flags, params):
    X, y = heart
    data = ROOT / "data" / "heart.libsvm"
    cli_model = tmp_path / "cli.model"
    out = subprocess.run(
        [str(cli), "fm", "--quiet", "--json", "--loss", "logistic", "--normalize"]
        + ["--train-fraction", "1", "-f", str(cli_model), *flags, str(data)],
        check=True,
        capture_output=True,
        text=True,
    )
    report = json.loads(out.stdout)
    est = FMClassifier(**params).fit(X, y)
    assert est.progressive_score_["loss"] == report["progressive_loss"]
    py_model = tmp_path / "py.model"
    est.save(py_model)
    assert py_model.read_bytes() == cli_model.read_bytes()
    # A dense array learns the same bits.
    dense = FMClassifier(**params).fit(X.toarray(), y)
    np.testing.assert_array_equal(dense.decision_function(X), est.decision_function(X))
    # CLI model → Python: the same scores; Python model → `sketchlearn fm -i` scores.
    loaded = sketchlearn.load(cli_model)
    assert isinstance(loaded, FMClassifier) and loaded.classes_.tolist() == [-1, 1]
    np.testing.assert_array_equal(loaded.decision_function(X), est.decision_function(X))
    preds = tmp_path / "preds.txt"
    subprocess.run(
        [str(cli), "fm", "-i", str(py_model), "--train-fraction", "0", "--quiet"]
        + ["-p", str(preds), str(data)],
        check=True,
        capture_output=True,
    )
    cli_scores = np.array([float(v) for v in preds.read_text().split()])
    np.testing.assert_array_equal(cli_scores, est.decision_function(X))


def test_fm_classifier_labels_and_probabilities(heart):
    X, y = heart
    labels = np.where(y > 0, "present", "absent")
    est = FMClassifier(n_passes=2).fit(X, labels)
    assert est.classes_.tolist() == ["absent", "present"]
    assert est.score(X, labels) > 0.75
    p = est.predict_proba(X)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    np.testing.assert_array_equal(est.classes_[np.argmax(p, axis=1)], est.predict(X))
    with pytest.raises(ValueError, match="Only binary classification"):
        FMClassifier().fit(X[:3], [0, 1, 2])
    back = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(back.decision_function(X), est.decision_function(X))


def _reseal(image, payload_start, payload):
    """A model file image with `payload` in place of its own and a matching CRC-32 (the
    checksum covers the header, then the payload: `crates/sketchlearn/src/model.rs`)."""
    header = image[: payload_start - 4]
    crc = zlib.crc32(payload, zlib.crc32(header))
    return header + struct.pack("<I", crc) + payload


def test_fm_unpickling_validates_the_state(heart):
    """Bytes whose checksum matches but whose state no training produces (here a NaN written
    over each 8-byte window of the payload in turn) are refused with a ValueError naming the
    problem (`fm/validate.rs`), never loaded or a crash; untouched bytes round-trip."""
    X, y = heart
    # Sketch size 2: the same state's fields in a 4 KB payload instead of 27 KB (every window is
    # tried, each with a fresh CRC: the loop is quadratic in the payload).
    est = FMClassifier(size=2).fit(X, y)
    image = est.fm_.to_bytes()
    back = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(back.decision_function(X), est.decision_function(X))
    (kind_len,) = struct.unpack_from("<H", image, 12)
    payload_start = 26 + kind_len
    payload = image[payload_start:]
    nan = struct.pack("<d", float("nan"))
    invalid = 0
    for at in range(len(payload) - 7):
        damaged = _reseal(image, payload_start, payload[:at] + nan + payload[at + 8 :])
        try:
            back.fm_ = sketchlearn._core.FmLearner.from_bytes(damaged)
        except ValueError as e:
            invalid += "invalid model" in str(e)
            continue
        assert np.isfinite(back.decision_function(X[:10])).all()
    assert invalid > 0
    with pytest.raises(ValueError, match="pickle"):
        sketchlearn._core.FmLearner.from_bytes(image[:-1])


def test_fm_regressor_learns_pairwise_interactions():
    """y = x₀·x₁ + noise is invisible to a linear model and learned by an FM."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((3000, 6))
    y = X[:, 0] * X[:, 1] + 0.05 * rng.standard_normal(3000)
    fm = FMRegressor(normalize=False, eta=0.005, n_passes=3).fit(X, y)  # raw rows: small steps
    assert fm.score(X, y) > 0.95
    assert FMRegressor(n_passes=3).fit(X, y).score(X, y) > 0.6  # unit rows lose |x|
    linear = sketchlearn.OnlineRegressor().fit(X, y)
    assert linear.score(X, y) < 0.1


def test_fm_partial_fit_resumes_bit_for_bit():
    X, y = make_regression(400, 8, random_state=2)
    y = y / np.abs(y).max()
    one = FMRegressor().fit(X, y)
    parts = FMRegressor().partial_fit(X[:150], y[:150]).partial_fit(X[150:], y[150:])
    np.testing.assert_array_equal(parts.predict(X), one.predict(X))
    with pytest.raises(ValueError, match="row 3"):
        X_bad = X.copy()
        X_bad[3, 2] = np.nan
        FMRegressor().fit(X_bad, y)
