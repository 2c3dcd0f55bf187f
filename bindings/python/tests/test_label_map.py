"""One label policy for the package and the command line: an estimator's labels — numbers of
any dtype, booleans, strings; 0/1, ±1, 1/2, 2/4, names; two classes or more — become the
learner's targets through the core's label map (``sketchlearn._core.label_targets``, the
``LabelMap`` that ``sketchlearn train`` applies to a file's labels), so the same labels give
the same classes and the same targets (hence the same model bits) in both."""

import subprocess

import numpy as np
import pytest
from conftest import ROOT

import sketchlearn
from sketchlearn import DRPClassifier, FMClassifier, OnlineClassifier, _core


def _run(cli, *args):
    return subprocess.run(
        [str(cli), *map(str, args)], check=True, capture_output=True, text=True
    ).stdout


def _relabelled(tmp_path, labels, name):
    """heart.libsvm with its -1/+1 labels written as ``labels[0]``/``labels[1]``."""
    lines = (ROOT / "data" / "heart.libsvm").read_text().splitlines()
    out = [
        str(labels[1] if float(t.split()[0]) > 0 else labels[0]) + t[t.index(" ") :] for t in lines
    ]
    path = tmp_path / f"{name}.libsvm"
    path.write_text("\n".join(out) + "\n")
    return path


@pytest.mark.parametrize(
    "labels",
    [
        np.array([-1, 1]),
        np.array([0, 1]),
        np.array([1, 2]),
        np.array([2, 4], dtype=np.int8),
        np.array([1.0, 2.0]),
        np.array([0, 1], dtype=np.uint64),
    ],
    ids=["pm1", "01", "12", "24-int8", "12-float", "01-uint64"],
)
def test_numeric_labels_give_the_cli_classes_targets_and_bits(cli, heart, tmp_path, labels):
    X, y_pm = heart
    y = np.where(y_pm > 0, labels[1], labels[0]).astype(labels.dtype)
    data = _relabelled(tmp_path, labels.tolist(), "heart")
    model = tmp_path / "cli.model"
    _run(cli, "train", "--quiet", "-f", model, data)
    cli_est = sketchlearn.load(model)
    est = OnlineClassifier().fit(X, y)
    assert cli_est.classes_.tolist() == est.classes_.tolist() == sorted(labels.tolist())
    # The targets of the core's map: the later-sorted class is +1, as the CLI read the file.
    np.testing.assert_array_equal(_core.label_targets(est.classes_.tolist(), y.astype(float)), y_pm)
    assert cli_est.learners_.state_bytes() == est.learners_.state_bytes()
    # The user's labels, in the user's dtype.
    assert est.predict(X).dtype == y.dtype
    np.testing.assert_array_equal(cli_est.predict(X), est.predict(X))


@pytest.mark.parametrize(
    "labels",
    [np.array([False, True]), np.array(["No", "Yes"]), np.array(["No", "Yes"], dtype=object)],
    ids=["bool", "str", "object"],
)
def test_bool_and_string_labels_learn_the_same_bits_as_plus_minus_one(heart, labels):
    X, y_pm = heart
    y = np.where(y_pm > 0, labels[1], labels[0]).astype(labels.dtype)
    est = OnlineClassifier().fit(X, y)
    ref = OnlineClassifier().fit(X, y_pm)
    assert est.learners_.state_bytes() == ref.learners_.state_bytes()
    assert est.classes_.tolist() == labels.tolist()
    assert est.predict(X).dtype == y.dtype
    np.testing.assert_array_equal(est.predict(X), np.where(ref.predict(X) > 0, *labels[::-1]))
    for other in (FMClassifier(random_state=0), DRPClassifier(size=5)):
        fitted = other.fit(X, y)
        base = other.__class__(**other.get_params()).fit(X, y_pm)
        np.testing.assert_array_equal(fitted.decision_function(X), base.decision_function(X))
        assert fitted.predict(X).dtype == y.dtype


def test_multiclass_names_map_like_their_indices(tmp_path):
    rng = np.random.default_rng(5)
    X = rng.standard_normal((300, 6))
    k = np.argmax(X[:, :3], axis=1)
    names = np.array(["ant", "bee", "cat"])[k]
    numbers = np.array([3, 7, 11])[k]
    by_name = OnlineClassifier().fit(X, names)
    by_number = OnlineClassifier().fit(X, numbers)
    # The same learner (the state differs only in the class labels it records).
    np.testing.assert_array_equal(by_name.decision_function(X), by_number.decision_function(X))
    np.testing.assert_array_equal(by_name.coef_, by_number.coef_)
    np.testing.assert_array_equal(_core.label_targets(by_name.classes_.tolist(), names), k)
    np.testing.assert_array_equal(
        _core.label_targets(by_number.classes_.tolist(), numbers.astype(float)), k
    )
    assert by_name.predict(X).dtype == names.dtype


@pytest.mark.parametrize(
    "make, classes, bad, shown",
    [
        (lambda: OnlineClassifier(), [0, 1], [0, 2], "label 2"),
        (lambda: OnlineClassifier(), ["No", "Yes"], ["Yes", "Maybe"], "label Maybe"),
        (lambda: OnlineClassifier(), [1, 2, 3], [3, 9, 1], "label 9"),
        (lambda: FMClassifier(), ["No", "Yes"], ["No", "maybe"], "label maybe"),
    ],
)
def test_a_label_not_in_classes_is_named_with_its_row(make, classes, bad, shown):
    X = np.ones((3, 4))
    est = make().partial_fit(X[:2], classes[:2], classes=classes)
    before = est.decision_function(X)
    with pytest.raises(ValueError, match=f"row 1: {shown} is not one of the classes .*classes="):
        est.partial_fit(X[: len(bad)], bad)
    # Nothing was learned from the bad call.
    np.testing.assert_array_equal(est.decision_function(X), before)


def test_label_targets_follows_a_declared_order():
    """A CLI model trained with ``--classes Yes,No`` keeps that order: "No" is positive."""
    assert _core.label_targets(["Yes", "No"], ["No", "Yes"]).tolist() == [1.0, -1.0]
    with pytest.raises(ValueError, match="listed twice"):
        _core.label_targets(["a", "a"], ["a"])
