"""River estimators: River's own estimator checks, progressive validation, hashing."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from river import checks, datasets, evaluate, linear_model, metrics, preprocessing

from sketchlearn import _core
from sketchlearn._validation import as_rows
from sketchlearn.river import Classifier, Regressor


def _instances(cls):
    return [cls(**params) for params in cls._unit_test_params()]


@pytest.mark.parametrize(
    "model",
    [
        Classifier(),
        *_instances(Classifier),
        *_instances(Regressor),
        preprocessing.StandardScaler() | Classifier(bits=12),
    ],
    ids=str,
)
def test_river_checks(model):
    checks.check_estimator(model)


def test_progressive_val_score_on_phishing():
    model = preprocessing.StandardScaler() | Classifier(bits=12)
    acc = evaluate.progressive_val_score(datasets.Phishing(), model, metrics.Accuracy())
    river_acc = evaluate.progressive_val_score(
        datasets.Phishing(),
        preprocessing.StandardScaler() | linear_model.LogisticRegression(),
        metrics.Accuracy(),
    )
    assert acc.get() > river_acc.get() - 0.03


def test_heart_stream_matches_the_sklearn_estimator(heart):
    """Hashed dicts with integer-like names map to their own index (VW keeps numbers), so a
    dict stream of heart learns what the array learner learns when bits cover the indices."""
    X, y = heart
    clf = Classifier(algo="adagrad", bits=14)
    errors = 0
    for i in range(X.shape[0]):
        row = X.getrow(i)
        x = {str(j): v for j, v in zip(row.indices, row.data)}
        errors += clf.predict_one(x) != (y[i] > 0)
        clf.learn_one(x, y[i] > 0)
    assert errors / X.shape[0] < 0.25
    assert set(clf.predict_proba_one({"1": 1.0})) == {False, True}


@pytest.mark.parametrize("params", [{}, {"algo": "adagrad"}], ids=["auto", "adagrad"])
def test_learn_one_equals_the_batch_learner_bits(heart, params):
    """One dict at a time through ``learn_one`` learns the bits the core's batch ``learn``
    learns from the same hashed rows as a CSR matrix (the River default is the sparse-time
    mixture ``auto-sparse``, whose members keep the unit scaling of ``UnitScaling``): the
    same state bytes, and the same scores on every row. Heart's integer-like names hash to
    their own index."""
    X, y = heart
    bits = 18
    clf = Classifier(bits=bits, **params)
    scores = []
    for i in range(X.shape[0]):
        row = X.getrow(i)
        x = {str(j): v for j, v in zip(row.indices, row.data)}
        scores.append(clf._learners.predict_one(x) if clf._learners is not None else 0.0)
        clf.learn_one(x, y[i] > 0)
    batch = _core.LinearLearners(
        Classifier(bits=bits, **params)._core_params(), 1 << bits, hashed=True
    )
    assert batch.sparse == clf._learners.sparse
    csr = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], 1 << bits))
    hashed, _ = as_rows(csr)
    batch.learn(hashed, np.where(y > 0, 1.0, -1.0))
    assert batch.state_bytes() == clf._learners.state_bytes()
    one = [
        clf._learners.predict_one({str(j): v for j, v in zip(r.indices, r.data)})
        for r in map(X.getrow, range(X.shape[0]))
    ]
    assert batch.decision_function(hashed)[:, 0].tolist() == one
    assert len(set(scores)) > 100, "the stream moved the scores"


@pytest.mark.parametrize(
    ("model", "members"),
    [
        (Classifier(), "auto-sparse[newton/fd-sparse m=10 alpha=0.25 c=0.1 diag + adagrad-grid"),
        (Classifier(algo="auto"), "auto[newton/rfd-sparse m=10 alpha0=1 c=0.1 + newton/fd-sparse"),
        (Classifier(loss="hinge"), "auto-sparse[newton/fd-sparse"),
        (Classifier(loss="squared"), "auto[running-mean + newton/rfd-sparse"),
        (Classifier(curvature="fd-fast"), "newton/fd-sparse m=10 alpha=1"),
        (Classifier(diag=True), "newton/rfd-sparse"),
        (Classifier(algo="adagrad"), "adagrad lr=0.5"),
        (Regressor(), "auto[running-mean + newton/rfd-sparse"),
    ],
    ids=str,
)
def test_default_members(model, members):
    """The River classifier's ``algo=None`` mixes the two members of ``auto-sparse`` (a
    stream has no first rows to judge; the two RFD-SON members would cost ≈ 10 of the core's
    ≈ 16 µs an a9a dict); ``algo="auto"`` keeps four; a curvature or diag alone names one
    Newton learner, as on the command line; the regressor and the squared loss keep
    ``auto``."""
    model.learn_one({"a": 1.0}, 1.0 if isinstance(model, Regressor) else True)
    assert repr(model._learners).startswith(f"LinearLearners({members}"), repr(model._learners)


def test_learn_one_returns_none_and_pickles():
    clf = Classifier(bits=10)
    assert clf.learn_one({"a": 1.0, "colour": "red"}, True) is None
    back = pickle.loads(pickle.dumps(clf))
    x = {"a": 0.5, "colour": "red", "b": None}
    assert back.predict_proba_one(x) == clf.predict_proba_one(x)
    reg = Regressor(bits=10)
    reg.learn_one({"a": 1.0}, 3.0)
    assert reg.predict_one({"a": 1.0}) != 0.0


def test_bad_values_raise():
    clf = Classifier(bits=10)
    with pytest.raises(ValueError, match="non-finite"):
        clf.learn_one({"a": float("nan")}, True)
    with pytest.raises(ValueError, match="not a number"):
        clf.learn_one({"a": [1, 2]}, True)


@pytest.mark.parametrize("negative, positive", [(-1, 1), (0, 1), (False, True), (-1.0, 1.0)])
def test_minus_one_and_zero_are_the_negative_class(negative, positive):
    """River's binary convention (``optim.losses``: 0 is read as -1): ``-1``, ``0`` and
    ``False`` are the negative class. ``-1`` is truthy: read by truthiness, every example of a
    -1/+1 stream was learned as positive."""
    clf = Classifier(bits=10)
    for _ in range(50):
        clf.learn_one({"x": 1.0}, positive)
        clf.learn_one({"x": -1.0}, negative)
    assert clf.predict_one({"x": 1.0}) is True
    assert clf.predict_one({"x": -1.0}) is False
    assert clf.predict_proba_one({"x": -1.0})[False] > 0.9


@pytest.mark.parametrize("label", ["no", "yes", 2, 0.5, None, float("nan")])
def test_labels_that_are_not_binary_raise(label):
    """A name, another number or None is an error naming the label, not learned by its
    truthiness (``"no"`` would have been the positive class)."""
    clf = Classifier(bits=10)
    with pytest.raises(ValueError, match="True/False, 1/0 or"):
        clf.learn_one({"x": 1.0}, label)
    assert clf.predict_proba_one({"x": 1.0}) == {False: 0.5, True: 0.5}
