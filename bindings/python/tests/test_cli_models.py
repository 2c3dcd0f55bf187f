"""One model world: the CLI's model files load in Python and Python's in the CLI, and both
learn the same bits on the same data, order and seed."""

import subprocess

import numpy as np
import pytest
from conftest import ROOT, cli_train

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
    cli_train(cli, data, cli_model, *flags)
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


@pytest.mark.parametrize("algo", [None, "adagrad"], ids=["default", "adagrad"])
def test_river_names_hash_as_the_cli_hashes_vw_text(cli, tmp_path, algo):
    """River dicts with word names learn what `sketchlearn train -b 18` learns from the same
    stream written as VW text (`label | name:value ...`, default namespace): the same state
    bytes, so names are hashed as VW hashes them. AdaGrad's `predict_one` before each
    `learn_one` is also the CLI's progressive score; the default mixture's learn-time score
    also counts the row in its unit-scaling moments, which `predict_one` cannot."""
    from sketchlearn.river import Classifier

    rng = np.random.default_rng(5)
    words = ["red", "green", "blue", "price", "x1", "Ünïcode", "a_b", "17", "0.5"]
    stream = []
    for _ in range(400):
        names = rng.choice(words, size=4, replace=False)
        x = {str(n): float(np.round(rng.normal(), 3)) for n in names}
        stream.append((x, bool(x.get("red", 0.0) + x.get("price", 0.0) > 0)))
    vw = tmp_path / "stream.vw"
    vw.write_text(
        "".join(
            f"{1 if y else -1} | " + " ".join(f"{k}:{v!r}" for k, v in x.items()) + "\n"
            for x, y in stream
        ),
        encoding="utf-8",
    )
    model, raw = tmp_path / "cli.model", tmp_path / "raw.txt"
    flags = ["--algo", "auto-sparse" if algo is None else algo, "-b", "18"]
    subprocess.run(
        [str(cli), "train", "--quiet", *flags, "--raw", "-p", str(raw), "-f", str(model), str(vw)],
        check=True,
        capture_output=True,
    )
    river = Classifier(algo=algo, bits=18)
    scores = []
    for x, y in stream:
        scores.append(river._score(x))
        river.learn_one(x, y)
    assert sketchlearn.load(model).learners_.state_bytes() == river._learners.state_bytes()
    if algo == "adagrad":
        assert scores == [float(v) for v in raw.read_text().split()]
