"""The user's labels across the one model world: a model saved from Python records its classes
(the CLI prints them), a CLI model loads with its labels as ``classes_``, and more than two
classes use the core's multiclass learners — the same bits as ``sketchlearn train
--multiclass`` on the same rows."""

import subprocess

import numpy as np
import pytest
from conftest import ROOT
from sklearn.datasets import dump_svmlight_file, load_svmlight_file, make_classification

import sketchlearn
from sketchlearn import OnlineClassifier


def _run(cli, *args):
    return subprocess.run(
        [str(cli), *map(str, args)], check=True, capture_output=True, text=True
    ).stdout


def _cli_labels(cli, model, data):
    """``sketchlearn predict -i MODEL DATA``: the first field of each line (the label)."""
    return [line.split()[0] for line in _run(cli, "predict", "-i", model, data).splitlines()]


@pytest.fixture
def heart_24(heart, tmp_path):
    """heart with the labels 2 (absent) and 4 (present), as a LIBSVM file and arrays."""
    X, y = heart
    lines = (ROOT / "data" / "heart.libsvm").read_text().splitlines()
    relabelled = [("4" if float(t.split()[0]) > 0 else "2") + t[t.index(" ") :] for t in lines]
    path = tmp_path / "heart24.libsvm"
    path.write_text("\n".join(relabelled) + "\n")
    return X, np.where(y > 0, 4, 2), path


@pytest.mark.parametrize("labels", [("absent", "present"), (2, 4)])
def test_python_saved_model_prints_the_users_labels_in_the_cli(cli, heart_24, tmp_path, labels):
    X, y24, data = heart_24
    y = np.where(y24 == 4, labels[1], labels[0])
    est = OnlineClassifier().fit(X, y)
    model = tmp_path / "py.model"
    est.save(model)
    assert f"classes        {labels[0]},{labels[1]}" in _run(cli, "inspect", model)
    assert _cli_labels(cli, model, data) == [str(v) for v in est.predict(X)]
    back = sketchlearn.load(model)
    assert back.classes_.tolist() == list(labels)
    np.testing.assert_array_equal(back.predict(X), est.predict(X))


def test_cli_model_loads_with_its_labels(cli, heart_24, tmp_path):
    X, y24, data = heart_24
    model = tmp_path / "cli.model"
    _run(cli, "train", "--quiet", "-f", model, data)
    est = sketchlearn.load(model)
    assert est.classes_.tolist() == [2, 4]
    assert est.predict(X).dtype.kind == "i"
    assert _cli_labels(cli, model, data) == [str(v) for v in est.predict(X)]
    # The same bits as a Python fit with those labels, and it learns on with them.
    fitted = OnlineClassifier().fit(X, y24)
    assert est.learners_.state_bytes() == fitted.learners_.state_bytes()
    est.partial_fit(X, y24)
    with pytest.raises(ValueError, match="label 3"):
        est.partial_fit(X[:2], [3, 2])


def test_cli_model_with_declared_class_order(cli, heart_24, tmp_path):
    """``--classes 4,2``: 4 is the negative class; Python keeps that order and meaning."""
    X, y24, data = heart_24
    model = tmp_path / "cli.model"
    _run(cli, "train", "--quiet", "--classes", "4,2", "-f", model, data)
    est = sketchlearn.load(model)
    assert est.classes_.tolist() == [4, 2]
    assert _cli_labels(cli, model, data) == [str(v) for v in est.predict(X)]
    resumed = tmp_path / "resumed.model"
    _run(cli, "train", "--quiet", "-i", model, "-f", resumed, data)
    est.partial_fit(X, y24)
    py_model = tmp_path / "py.model"
    est.save(py_model)
    assert py_model.read_bytes() == resumed.read_bytes()


@pytest.fixture(scope="module")
def five_classes(tmp_path_factory):
    """A small generated 5-class problem as a LIBSVM file (labels 1..5) and the arrays read
    back from it (so Python and the CLI see the same float64 values)."""
    X, y = make_classification(
        400, 12, n_informative=8, n_classes=5, n_clusters_per_class=1, random_state=4
    )
    path = tmp_path_factory.mktemp("mc") / "five.libsvm"
    dump_svmlight_file(X, y + 1, str(path), zero_based=False)
    X, y = load_svmlight_file(str(path), zero_based=False)
    return X, y.astype(int), path


@pytest.mark.parametrize(
    "flags, params",
    [
        ([], {}),
        (["--reduction", "softmax"], {"reduction": "softmax"}),
        (["--algo", "adagrad", "--passes", "2"], {"algo": "adagrad", "n_passes": 2}),
    ],
)
def test_multiclass_equals_cli_multiclass(cli, five_classes, tmp_path, flags, params):
    X, y, data = five_classes
    cli_model = tmp_path / "cli.model"
    _run(cli, "train", "--quiet", "--multiclass", *flags, "-f", cli_model, data)
    est = OnlineClassifier(**params).fit(X, y)
    # The same learner state byte for byte (the CLI's file adds the input format).
    loaded = sketchlearn.load(cli_model)
    assert loaded.learners_.state_bytes() == est.learners_.state_bytes()
    assert loaded.classes_.tolist() == [1, 2, 3, 4, 5]
    assert loaded.reduction == params.get("reduction", "oaa")
    np.testing.assert_array_equal(loaded.predict_proba(X), est.predict_proba(X))
    # Python model → CLI: the same labels; CLI model → Python: the same labels.
    py_model = tmp_path / "py.model"
    est.save(py_model)
    expected = [str(v) for v in est.predict(X)]
    assert _cli_labels(cli, py_model, data) == expected
    assert _cli_labels(cli, cli_model, data) == expected
    assert sketchlearn.load(py_model).learners_.state_bytes() == est.learners_.state_bytes()


def test_multiclass_resumes_like_cli_train_i(cli, five_classes, tmp_path):
    X, y, data = five_classes
    first, resumed = tmp_path / "a.model", tmp_path / "b.model"
    _run(cli, "train", "--quiet", "--multiclass", "-f", first, data)
    _run(cli, "train", "--quiet", "-i", first, "-f", resumed, data)
    est = sketchlearn.load(first).partial_fit(X, y)
    py_model = tmp_path / "py.model"
    est.save(py_model)
    assert py_model.read_bytes() == resumed.read_bytes()


def test_multiclass_string_labels_reach_the_cli(cli, five_classes, tmp_path):
    X, y, data = five_classes
    names = np.array(["ant", "bee", "cat", "dog", "eel"])
    est = OnlineClassifier().fit(X, names[y - 1])
    model = tmp_path / "py.model"
    est.save(model)
    assert _cli_labels(cli, model, data) == est.predict(X).tolist()
    assert sketchlearn.load(model).classes_.tolist() == names.tolist()


def test_multiclass_pickles_and_merges():
    import pickle

    X, y = make_classification(300, 6, n_informative=4, n_classes=3, random_state=1)
    a = OnlineClassifier(algo="adagrad").fit(X[:150], y[:150])
    back = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(back.predict_proba(X), a.predict_proba(X))
    b = OnlineClassifier(algo="adagrad").fit(X[150:], y[150:])
    merged = a.merge(b)
    assert merged.learners_.examples_seen == 300
    soft = OnlineClassifier(reduction="softmax").fit(X, y)
    with pytest.raises(NotImplementedError, match="softmax"):
        soft.merge(OnlineClassifier(reduction="softmax").fit(X, y))
