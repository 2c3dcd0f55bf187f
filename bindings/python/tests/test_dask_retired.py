"""sketchlearn.dask leaves a mixture member retired in every task out of the tasks' deltas and
of the client's merge (``_forgetting_delta``, ``LinearLearners.forget_retired``): the fitted
model predicts the same bytes as the fit that sends and merges it, loads, learns on and merges
again the same; only that member's saved state differs, and the deltas are smaller."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
import scipy.sparse as sps
from sklearn.datasets import dump_svmlight_file

import sketchlearn.dask as sd
from sketchlearn import OnlineClassifier
from sketchlearn.dask import fit

D = 1 << 12


def sparse_stream(n, seed, nnz=12):
    """A sparse linear stream of ``D`` features, ``nnz`` a row, 10 % of labels flipped."""
    rng = np.random.default_rng(seed)
    w = rng.normal(size=D)
    cols = rng.integers(0, D, size=(n, nnz))
    vals = rng.normal(size=(n, nnz))
    X = sps.csr_matrix((vals.ravel(), cols.ravel(), np.arange(0, n * nnz + 1, nnz)), shape=(n, D))
    X.sum_duplicates()
    y = np.where(X @ w > 0, 1, -1)
    y[rng.random(n) < 0.1] *= -1
    return X, y


@pytest.fixture(scope="module")
def stream(tmp_path_factory):
    """Two LIBSVM files of 6,000 rows (each task's members pass the coverage, 3·D views, at
    ~1,000 rows) and held-out rows."""
    tmp = tmp_path_factory.mktemp("retired")
    X, y = sparse_stream(12_000, 5)
    paths = []
    for i in range(2):
        p = tmp / f"part{i}.libsvm"
        dump_svmlight_file(X[i * 6000 : (i + 1) * 6000], y[i * 6000 : (i + 1) * 6000], str(p))
        paths.append(str(p))
    return paths, sparse_stream(2000, 6)


def fitted(client, monkeypatch, paths, forget, n_workers=2):
    """The fit with the lever on or off, and the sizes of the deltas the client gathered."""
    sizes = []
    on_client = sd._merged_on_client

    def recording(c, deltas, base):
        sizes.extend(len(part.delta) for part in c.gather(deltas))
        return on_client(c, deltas, base)

    monkeypatch.setattr(sd, "_merged_on_client", recording)
    monkeypatch.setattr(sd, "_FORGET_RETIRED", forget)
    model = fit(OnlineClassifier(), paths, n_features=D, n_workers=n_workers)
    return model, sizes


def retired_in_each_task(paths):
    """The members retired in each task of the 2-worker fit, learned here as the tasks do."""
    out = []
    for p in paths:
        est = OnlineClassifier()
        est.partial_fit_file(p, n_features=D)
        out.append({k for k, r in enumerate(est.retired_at_) if r is not None})
    return out


def raw(model, X):
    return model.decision_function(X).tobytes(), model.predict_proba(X).tobytes()


@pytest.mark.parametrize("n_workers", [2, 1])
def test_a_member_retired_in_every_task_is_not_sent_and_predictions_are_the_same(
    client, monkeypatch, stream, n_workers
):
    paths, (Xh, yh) = stream
    everywhere = set.intersection(*retired_in_each_task(paths))
    assert everywhere, "the stream should retire a member in both tasks"
    lean, lean_sizes = fitted(client, monkeypatch, paths, True, n_workers)
    full, full_sizes = fitted(client, monkeypatch, paths, False, n_workers)
    assert lean.learners_.sparse
    assert raw(lean, Xh) == raw(full, Xh)
    assert lean.retired_at_ == full.retired_at_
    assert everywhere <= {k for k, r in enumerate(lean.retired_at_) if r is not None}
    assert lean.learners_.examples_seen == full.learners_.examples_seen == 12_000
    # Only the retired member's state differs, and each task's delta is smaller.
    assert lean.learners_.state_bytes() != full.learners_.state_bytes()
    assert len(lean_sizes) == len(full_sizes) == n_workers
    print(f"deltas: {lean_sizes} bytes, against {full_sizes} with every member")
    for small, big in zip(lean_sizes, full_sizes):
        assert small < 0.8 * big, (small, big)
    # The model loads, learns on and merges again as the full one does.
    lean2, full2 = (pickle.loads(pickle.dumps(m)) for m in (lean, full))
    Xn, yn = sparse_stream(1500, 7)
    for m in (lean2, full2):
        m.partial_fit(Xn, yn)
    assert raw(lean2, Xh) == raw(full2, Xh)
    again = []
    for grown, fitted_model in ((lean2, lean), (full2, full)):
        m = copy.copy(grown)
        m.learners_ = grown.learners_.merged(fitted_model.learners_, fitted_model.learners_)
        again.append(raw(m, Xh))
    assert again[0] == again[1]


def test_forget_retired_refuses_an_active_member_and_changes_nothing(stream):
    paths, _ = stream
    base = OnlineClassifier()
    base.partial_fit_file(paths[0], n_features=D)
    active = [k for k, r in enumerate(base.retired_at_) if r is None]
    assert active
    before = base.learners_.state_bytes()
    fresh = OnlineClassifier().partial_fit(*sparse_stream(10, 8), classes=[-1, 1])
    with pytest.raises(ValueError, match="has not retired"):
        base.learners_.forget_retired(fresh.learners_, active[:1])
    assert base.learners_.state_bytes() == before
    base.learners_.forget_retired(fresh.learners_, [])
    assert base.learners_.state_bytes() == before
