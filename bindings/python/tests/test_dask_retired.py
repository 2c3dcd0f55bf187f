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
ON_CLIENT = sd._merged_on_client


def sparse_stream(n, seed, nnz=12):
    """``n`` rows of a sparse linear stream of ``D`` features (one concept, rows drawn from
    ``seed``), ``nnz`` a row, 10 % of labels flipped."""
    w = np.random.default_rng(0).normal(size=D)
    rng = np.random.default_rng(seed)
    cols = rng.integers(0, D, size=(n, nnz))
    vals = rng.normal(size=(n, nnz))
    X = sps.csr_matrix((vals.ravel(), cols.ravel(), np.arange(0, n * nnz + 1, nnz)), shape=(n, D))
    X.sum_duplicates()
    y = np.where(X @ w > 0, 1, -1)
    y[rng.random(n) < 0.1] *= -1
    return X, y


@pytest.fixture(scope="module")
def stream(tmp_path_factory):
    """Two LIBSVM files of 24,000 rows, in each of which the default retires its FD-SON member
    (at 11,520 rows: past the coverage, 3·D views, at ~1,000 rows), and held-out rows."""
    tmp = tmp_path_factory.mktemp("retired")
    paths = []
    for seed in (2, 3):
        X, y = sparse_stream(24_000, seed)
        p = tmp / f"part{seed}.libsvm"
        dump_svmlight_file(X, y, str(p), zero_based=False)
        paths.append(str(p))
    return paths, sparse_stream(2000, 9)


def fitted(client, monkeypatch, paths, forget, n_workers=2):
    """The fit with the lever on or off, the sizes of the deltas the client gathered, and the
    members retired in each task (read from the tasks' rebuilt states)."""
    sizes, retired = [], []

    def recording(c, deltas, base):
        for part in c.gather(deltas):
            sizes.append(len(part.delta))
            at = part.state(base.result()).retired_at_
            retired.append({k for k, r in enumerate(at) if r is not None})
        return ON_CLIENT(c, deltas, base)

    monkeypatch.setattr(sd, "_merged_on_client", recording)
    monkeypatch.setattr(sd, "_FORGET_RETIRED", forget)
    model = fit(OnlineClassifier(), paths, n_features=D, n_workers=n_workers)
    return model, sizes, retired


def raw(model, X):
    return model.decision_function(X).tobytes(), model.predict_proba(X).tobytes()


@pytest.mark.parametrize("n_workers", [2, 1])
def test_a_member_retired_in_every_task_is_not_sent_and_predictions_are_the_same(
    client, monkeypatch, stream, n_workers
):
    paths, (Xh, yh) = stream
    lean, lean_sizes, lean_retired = fitted(client, monkeypatch, paths, True, n_workers)
    full, full_sizes, full_retired = fitted(client, monkeypatch, paths, False, n_workers)
    assert lean_retired == full_retired
    everywhere = set.intersection(*full_retired)
    assert everywhere, f"the stream should retire a member in every task: {full_retired}"
    assert lean.learners_.sparse
    assert raw(lean, Xh) == raw(full, Xh)
    assert lean.retired_at_ == full.retired_at_
    assert everywhere <= {k for k, r in enumerate(lean.retired_at_) if r is not None}
    assert lean.learners_.examples_seen == full.learners_.examples_seen == 48_000
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
    base = OnlineClassifier(sparse=True)
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
