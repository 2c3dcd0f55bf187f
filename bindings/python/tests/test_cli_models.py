"""One model world: the CLI's model files load in Python and Python's in the CLI, and both
learn the same bits on the same data, order and seed."""

import subprocess

import numpy as np
import pytest
from conftest import ROOT

import sketchlearn
from sketchlearn import OnlineClassifier


def _cli_predictions(cli, model, data, tmp_path):
    preds = tmp_path / "preds.txt"
    subprocess.run(
        [str(cli), "test", "-i", str(model), "--raw", "-p", str(preds), str(data)],
        check=True,
        capture_output=True,
    )
    return np.array([float(v) for v in preds.read_text().split()])


@pytest.mark.parametrize(
    "flags, params",
    [
        ([], {}),
        (
            ["--algo", "newton", "--curvature", "oja", "--seed", "3"],
            {"algo": "newton", "curvature": "oja", "random_state": 3},
        ),
        (["--algo", "adagrad", "--passes", "2"], {"algo": "adagrad", "n_passes": 2}),
    ],
)
def test_python_and_cli_learn_the_same_bits(cli, heart, tmp_path, flags, params):
    X, y = heart
    data = ROOT / "data" / "heart.libsvm"
    cli_model = tmp_path / "cli.model"
    subprocess.run(
        [str(cli), "train", "--quiet", "-f", str(cli_model), *flags, str(data)],
        check=True,
        capture_output=True,
    )
    est = OnlineClassifier(**params).fit(X, y)
    py_model = tmp_path / "py.model"
    est.save(py_model)
    # The same learner state, byte for byte (configuration, weights, sketch, example count;
    # the CLI's file also records the classes and the input format, which arrays do not have).
    loaded = sketchlearn.load(cli_model)
    assert loaded.learners_.state_bytes() == est.learners_.state_bytes()
    assert sketchlearn.load(py_model).learners_.state_bytes() == est.learners_.state_bytes()
    # A dense array learns the same bits: its zeros are skipped as the file never lists them.
    dense = OnlineClassifier(**params).fit(X.toarray(), y)
    assert dense.learners_.state_bytes() == est.learners_.state_bytes()
    assert dense.progressive_score_ == est.progressive_score_
    # CLI model → Python: the same predictions to the bit.
    np.testing.assert_array_equal(loaded.decision_function(X), est.decision_function(X))
    np.testing.assert_array_equal(loaded.predict(X), est.predict(X))
    # Python model → CLI `test -i`: the same raw scores (printed shortest-round-trip).
    np.testing.assert_array_equal(
        _cli_predictions(cli, py_model, data, tmp_path), est.decision_function(X)
    )


def test_loaded_model_resumes_like_cli_train_i(cli, heart, tmp_path):
    X, y = heart
    data = ROOT / "data" / "heart.libsvm"
    first, resumed = tmp_path / "a.model", tmp_path / "b.model"
    subprocess.run([str(cli), "train", "--quiet", "-f", str(first), str(data)], check=True)
    subprocess.run(
        [str(cli), "train", "--quiet", "-i", str(first), "-f", str(resumed), str(data)],
        check=True,
    )
    est = sketchlearn.load(first).partial_fit(X, y)
    py_model = tmp_path / "py.model"
    est.save(py_model)
    assert py_model.read_bytes() == resumed.read_bytes()


def test_load_rejects_foreign_files(tmp_path):
    bad = tmp_path / "x.model"
    bad.write_bytes(b"not a model")
    with pytest.raises(ValueError, match="not a sketchlearn model"):
        sketchlearn.load(bad)
    with pytest.raises(OSError):
        sketchlearn.load(tmp_path / "missing.model")
