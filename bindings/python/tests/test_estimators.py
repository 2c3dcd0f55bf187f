"""OnlineClassifier / OnlineRegressor behaviour: inputs, labels, errors, pickling,
pipelines, grid search."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_classification, make_regression
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import sketchlearn
from sketchlearn import OnlineClassifier, OnlineRegressor


def test_heart_progressive_error_matches_readme(heart):
    X, y = heart
    clf = OnlineClassifier().fit(X.toarray(), y)
    # README: auto on heart, progressive error 0.2000.
    assert clf.progressive_score_["examples"] == 270
    assert clf.progressive_score_["error"] == pytest.approx(0.2)
    assert clf.score(X.toarray(), y) > 0.8


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("order", ["C", "F"])
def test_dense_layouts_give_the_same_model(australian, dtype, order):
    X, y = australian
    base = OnlineClassifier().fit(X.toarray(), y).decision_function(X.toarray())
    Xd = np.asarray(X.toarray().astype(dtype), order=order)
    clf = OnlineClassifier().fit(Xd, y)
    expected = (
        base
        if dtype == np.float64
        else OnlineClassifier()
        .fit(X.toarray().astype(np.float32).astype(np.float64), y)
        .decision_function(X.toarray())
    )
    np.testing.assert_array_equal(clf.decision_function(X.toarray()), expected)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_sparse_formats_agree(fmt):
    rng = np.random.default_rng(0)
    X = sp.random(300, 600, density=0.01, format="csr", random_state=1)
    y = np.where(rng.standard_normal(300) > 0, "yes", "no")
    ref = OnlineClassifier().fit(X, y)
    assert ref.learners_.sparse  # m·nnz = 60 < d/4, d ≥ 2m: the sparse-time learners
    got = OnlineClassifier().fit(X.asformat(fmt), y)
    np.testing.assert_array_equal(got.decision_function(X), ref.decision_function(X))
    assert list(got.classes_) == ["no", "yes"]


def test_unsorted_csr_is_canonicalised_without_touching_input():
    X = sp.csr_matrix(
        (np.array([2.0, 1.0, 3.0]), np.array([3, 1, 0]), np.array([0, 2, 3])), shape=(2, 30)
    )
    before = X.indices.copy()
    y = np.array([0, 1])
    OnlineClassifier().fit(X, y)
    np.testing.assert_array_equal(X.indices, before)


def test_non_finite_input_names_the_row_and_column():
    X = np.ones((10, 3))
    X[7, 1] = np.nan
    with pytest.raises(ValueError, match="row 7, column 1 "):
        OnlineClassifier().fit(X, np.arange(10) % 2)
    clf = OnlineClassifier().fit(np.ones((10, 3)), np.arange(10) % 2)
    X[7, 1] = np.inf
    with pytest.raises(ValueError, match="row 7, column 1 "):
        clf.predict(X)
    Xs = sp.csr_matrix(X)
    with pytest.raises(ValueError, match="row 7, column 1 "):
        clf.partial_fit(Xs, np.arange(10) % 2)
    X[7, 1], X[7, 2] = 1.0, -np.inf  # a sparse row's column is its index, not its position
    Xs = sp.csr_matrix(np.where(np.arange(3) == 0, 0.0, X))
    with pytest.raises(ValueError, match="row 7, column 2 "):
        clf.partial_fit(Xs, np.arange(10) % 2)


def test_wrong_shapes_raise_value_error():
    clf = OnlineClassifier().fit(np.ones((4, 3)), [0, 1, 0, 1])
    with pytest.raises(ValueError, match="3 features"):
        clf.predict(np.ones((2, 4)))
    with pytest.raises(ValueError):
        OnlineClassifier().fit(np.ones((4, 3)), [0, 1, 0])


def test_unknown_label_in_partial_fit():
    clf = OnlineClassifier().partial_fit(np.ones((2, 3)), [0, 1], classes=[0, 1])
    with pytest.raises(ValueError, match="row 1: label 2"):
        clf.partial_fit(np.ones((2, 3)), [0, 2])


@pytest.mark.parametrize("reduction", ["oaa", "softmax"])
def test_multiclass_through_the_core_learners(reduction):
    X, y = make_classification(600, 8, n_informative=6, n_classes=4, random_state=0)
    labels = np.array(["a", "b", "c", "d"])[y]
    clf = OnlineClassifier(n_passes=3, reduction=reduction).fit(X, labels)
    assert clf.learners_.n_scores == 4
    assert clf.learners_.description.startswith(reduction)
    assert clf.decision_function(X).shape == (600, 4)
    p = clf.predict_proba(X)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    # The most probable class is the predicted one.
    np.testing.assert_array_equal(clf.classes_[np.argmax(p, axis=1)], clf.predict(X))
    batch = LogisticRegression().fit(X, labels).score(X, labels)  # 0.597
    assert clf.score(X, labels) > batch - 0.05
    assert clf.coef_.shape == (4, 8)
    with pytest.raises(ValueError, match="reduction"):
        OnlineClassifier(reduction="ovr").fit(X, labels)


def test_softmax_takes_the_sketch_parameters():
    # The CLI's mapping (MulticlassConfig::from_member): the softmax learner takes size,
    # curvature, alpha, and alpha0/c when given; they were once silently ignored.
    X, y = make_classification(300, 6, n_informative=5, n_redundant=0, n_classes=3, random_state=1)

    def coef(**params):
        return OnlineClassifier(reduction="softmax", **params).fit(X, y).coef_

    plain = coef()
    # The untuned defaults (m = 20, alpha0 = 1, c = 0.2; on this dense input the sketch chosen
    # is rfd-fast, on sparse input fd-fast: linear/multiclass/sketch_choice.rs).
    np.testing.assert_array_equal(plain, coef(size=20, alpha0=1.0, c=0.2, curvature="rfd-fast"))
    for changed in ({"size": 3}, {"alpha0": 0.01}, {"c": 1.0}, {"curvature": "fd"}):
        assert not np.array_equal(plain, coef(**changed)), changed
    with pytest.raises(ValueError, match="softmax reduction is one sketched Newton"):
        coef(algo="adagrad")


@pytest.mark.parametrize(
    "params",
    [
        {"curvature": "rp"},
        {"curvature": "oja"},
        {"diag": True, "size": 3},
        {"curvature": "rp", "diag": True},
    ],
)
def test_softmax_sparse_time_over_each_sketch(params):
    # Sparse-time softmax over RP, Oja and with diagonal adaptation (issue 24): chosen with
    # sparse=True, the same fit as the dense-time learner (RP draws the same rows; Oja's sparse
    # start differs from the dense one's Gaussian directions, so only its fit is checked).
    X, y = make_classification(400, 12, n_informative=6, n_classes=3, random_state=2)
    X = sp.csr_matrix(np.where(np.abs(X) > 0.8, X, 0.0))

    def fit(sparse):
        return OnlineClassifier(reduction="softmax", sparse=sparse, **params).fit(X, y)

    sparse, dense = fit(True), fit(False)
    assert "sparse-time" in sparse.learners_.description
    assert "sparse-time" not in dense.learners_.description
    assert np.all(np.isfinite(sparse.coef_))
    assert sparse.score(X, y) > max(dense.score(X, y) - 0.1, 0.45)  # chance: 1/3
    if params.get("curvature") != "oja":
        np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-8, atol=1e-10)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(1, 120), min_size=1, max_size=6))
def test_partial_fit_chunks_equal_one_fit(chunks):
    """Online learning is a function of the row order only: any chunking gives the same bits."""
    X, y = make_classification(200, 6, random_state=3)
    one = OnlineClassifier().fit(X, y)
    parts = OnlineClassifier()
    start = 0
    for size in chunks + [200]:
        stop = min(start + size, 200)
        if stop > start:
            parts.partial_fit(X[start:stop], y[start:stop], classes=[0, 1])
        start = stop
    np.testing.assert_array_equal(parts.decision_function(X), one.decision_function(X))


@pytest.mark.parametrize(
    "est",
    [
        OnlineClassifier(),
        OnlineClassifier(algo="newton", curvature="oja", size=4, random_state=7),
        OnlineRegressor(algo="adagrad"),
    ],
)
def test_pickle_keeps_predictions_and_resumes(est):
    X, y = make_classification(300, 10, random_state=1)
    if isinstance(est, OnlineRegressor):
        y = X @ np.arange(10.0)
    est.fit(X[:200], y[:200])
    back = pickle.loads(pickle.dumps(est))
    first = est.predict(X) if isinstance(est, OnlineRegressor) else est.decision_function(X)
    again = back.predict(X) if isinstance(back, OnlineRegressor) else back.decision_function(X)
    np.testing.assert_array_equal(first, again)
    est.partial_fit(X[200:], y[200:])
    back.partial_fit(X[200:], y[200:])
    np.testing.assert_array_equal(est.predict(X), back.predict(X))


def test_pipeline_and_grid_search():
    X, y = make_classification(400, 10, random_state=2)
    pipe = make_pipeline(StandardScaler(), OnlineClassifier())
    assert pipe.fit(X, y).score(X, y) > 0.8
    grid = GridSearchCV(
        make_pipeline(StandardScaler(), OnlineClassifier(algo="adagrad")),
        {"onlineclassifier__learning_rate": [0.1, 1.0], "onlineclassifier__n_passes": [1, 2]},
        cv=3,
    )
    grid.fit(X, y)
    assert grid.best_score_ > 0.8
    assert set(grid.best_params_) == {
        "onlineclassifier__learning_rate",
        "onlineclassifier__n_passes",
    }


def test_regressor_learns_a_linear_function():
    X, y = make_regression(500, 5, noise=0.1, random_state=0)
    reg = OnlineRegressor(n_passes=3).fit(X / 3, y / 100)
    assert reg.score(X / 3, y / 100) > 0.95


def test_repr_and_parameters():
    clf = OnlineClassifier(algo="newton", curvature="fd", size=20)
    assert repr(clf) == "OnlineClassifier(algo='newton', curvature='fd', size=20)"
    with pytest.raises(ValueError, match="curvature"):
        OnlineClassifier(curvature="nope").fit(np.ones((2, 2)), [0, 1])
    with pytest.raises(ValueError, match="alpha"):
        OnlineClassifier(algo="newton", alpha=-1.0).fit(np.ones((2, 2)), [0, 1])


def test_verbose_prints_the_progress_table(heart, capsys):
    X, y = heart
    OnlineClassifier(verbose=True).fit(X.toarray(), y)
    err = capsys.readouterr().err
    assert "average" in err and "since" in err
    assert "\n0.413799" in err  # the row at 256 examples, as `sketchlearn train` prints it
    assert err.rstrip().splitlines()[-1].split()[2] == "270"  # final row


def test_sparse_flag_forces_the_representation():
    X = np.random.default_rng(0).standard_normal((50, 30))
    y = (X[:, 0] > 0).astype(int)
    assert not OnlineClassifier().fit(X, y).learners_.sparse
    assert OnlineClassifier(sparse=True).fit(X, y).learners_.sparse
    assert not OnlineClassifier(sparse=False).fit(sp.csr_matrix(X), y).learners_.sparse
    with pytest.raises(ValueError, match="sparse-time"):
        OnlineClassifier(curvature="full", sparse=True).fit(X, y)


def test_version():
    assert sketchlearn.__version__ == "0.1.0"


@pytest.mark.parametrize(
    ("sparse", "curvature"),
    [(False, "fd"), (False, "rfd"), (True, "fd-fast"), (True, "rfd-fast")],
)
def test_softmax_sketch_error_bound_is_its_shared_sketch_shrinkage(sparse, curvature):
    # Issue 24: a softmax model's bound is the total shrinkage Σδ of its one feature-side FD/RFD
    # sketch (FD's ‖GᵀG − BᵀB‖₂ ≤ Σδ, as for a binary model's sketch), dense- or sparse-time;
    # it was None.
    X, y = make_classification(400, 12, n_informative=6, n_classes=3, random_state=2)
    X = sp.csr_matrix(np.where(np.abs(X) > 0.8, X, 0.0))

    def bound(**params):
        clf = OnlineClassifier(reduction="softmax", sparse=sparse, curvature=curvature, **params)
        return clf.fit(X, y).learners_.sketch_error_bound()

    b = bound(size=2)
    assert b is not None and np.isfinite(b)
    assert b > 0.0, "a size-2 sketch of 12 features shrinks"
    # With diagonal adaptation the sketch is inside the wrapper.
    assert bound(size=2, diag=True) is not None


@pytest.mark.parametrize("curvature", ["rp", "oja"])
def test_softmax_sketch_error_bound_is_none_without_an_fd_sketch(curvature):
    # RP and Oja sketches do not shrink: no FD bound is defined for them.
    X, y = make_classification(200, 8, n_informative=6, n_classes=3, random_state=2)
    for sparse in (False, True):
        clf = OnlineClassifier(reduction="softmax", sparse=sparse, curvature=curvature)
        assert clf.fit(X, y).learners_.sketch_error_bound() is None


def _very_sparse_rows(n):
    """``n`` rows of 20 of 200,000 features (fixed seed): the first 1000 hold each of their
    features about once, the rows ``sketchlearn train`` calls very sparse."""
    rng = np.random.default_rng(5)
    X = sp.random(n, 200_000, density=20 / 200_000, format="csr", random_state=rng)
    return X, np.where(rng.random(n) < 0.5, 0, 1)


def test_very_sparse_rows_get_the_grid_alone_as_on_the_command_line():
    """A classifier's ``auto`` on SciPy rows that barely share a feature becomes
    ``auto-very-sparse`` (the AdaGrad grid alone) from 1000 rows on, as ``train`` chooses;
    999 such rows are judged sparse only; ``algo="auto-sparse"`` keeps FD-SON; every
    prediction is a probability."""
    X, y = _very_sparse_rows(1200)
    very = OnlineClassifier().fit(X, y)
    assert repr(very.learners_).startswith("LinearLearners(auto-very-sparse[adagrad-grid")
    assert not very.learners_.sparse
    p = very.predict_proba(X)
    assert np.isfinite(p).all() and ((p > 0) & (p < 1)).all()
    short = OnlineClassifier().fit(X[:999], y[:999])
    assert repr(short.learners_).startswith("LinearLearners(auto-sparse[newton/fd-sparse")
    named = OnlineClassifier(algo="auto-sparse").fit(X, y)
    assert repr(named.learners_).startswith("LinearLearners(auto-sparse[newton/fd-sparse")
