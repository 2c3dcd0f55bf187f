"""sketchlearn.dask leaves a mixture member retired in every task of a round out of the round's
deltas and merges (``_forgotten``, ``LinearLearners.forget_retired``): the fitted model predicts
the same bytes as the fit that sends and merges it — one round finished on the client, rounds
merged on the workers, one-against-all classes — loads, learns on and merges again the same;
only that member's saved state differs, and the deltas are smaller. A member retired in some
tasks only is sent and merged."""

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
        base.learners_.forget_retired(fresh.learners_, [(0, active[0])])
    assert base.learners_.state_bytes() == before
    retired = base.learners_.retired_members
    assert retired and all(c == 0 for c, _ in retired)
    with pytest.raises(ValueError, match="one mixture, 0, not 1"):
        base.learners_.forget_retired(fresh.learners_, [(1, retired[0][1])])
    assert base.learners_.state_bytes() == before
    base.learners_.forget_retired(fresh.learners_, [])
    assert base.learners_.state_bytes() == before


def class_stream(n, seed, k=4, nnz=12):
    """``n`` rows of a sparse stream of ``D`` features and ``k`` classes (the largest of ``k``
    fixed linear scores), 10 % of labels drawn at random: the default one-against-all model
    retires two members of every class within 3,000 rows, and a third within 24,000."""
    w = np.random.default_rng(0).normal(size=(D, k))
    rng = np.random.default_rng(seed)
    cols = rng.integers(0, D, size=(n, nnz))
    vals = rng.normal(size=(n, nnz))
    X = sps.csr_matrix((vals.ravel(), cols.ravel(), np.arange(0, n * nnz + 1, nnz)), shape=(n, D))
    X.sum_duplicates()
    y = np.argmax(X @ w, axis=1)
    noisy = rng.random(n) < 0.1
    y[noisy] = rng.integers(0, k, noisy.sum())
    return X, y


@pytest.fixture(scope="module")
def four_files(tmp_path_factory):
    """Four LIBSVM files per kind, in each of which the default retires a member of every
    mixture: binary, 12,000 rows each (seeds on which its first member retires, at 4,352–9,472
    rows; on others it does not), multiclass, 4,000 rows of four classes; and held-out rows."""
    tmp = tmp_path_factory.mktemp("rounds")
    out = {}
    kinds = (
        ("binary", sparse_stream, 12_000, (2, 3, 5, 10)),
        ("multiclass", class_stream, 4000, (10, 11, 12, 13)),
    )
    for kind, make, n, seeds in kinds:
        paths = []
        for seed in seeds:
            X, y = make(n, seed)
            p = tmp / f"{kind}{seed}.libsvm"
            dump_svmlight_file(X, y, str(p), zero_based=False)
            paths.append(str(p))
        out[kind] = paths, make(1500, 99)
    return out


#: The schedules: one round finished on the client (2 tasks), two rounds of 2 tasks merged on
#: the workers, and one round of 4 tasks merged on the workers (the tree of 4 or more workers).
SCHEDULES = {"client": (2, None), "rounds": (2, 1), "tree": (4, 1)}


@pytest.mark.parametrize("schedule", list(SCHEDULES))
@pytest.mark.parametrize("kind", ["binary", "multiclass"])
def test_rounds_and_classes_predict_the_same_bits_with_the_lever(
    client, monkeypatch, four_files, kind, schedule
):
    paths, (Xh, _) = four_files[kind]
    n_workers, per_task = SCHEDULES[schedule]
    fits = []
    for forget in (True, False):
        monkeypatch.setattr(sd, "_FORGET_RETIRED", forget)
        fits.append(
            fit(
                OnlineClassifier(),
                paths,
                n_features=D,
                n_workers=n_workers,
                blocks_per_task=per_task,
            )
        )
    lean, full = fits
    assert raw(lean, Xh) == raw(full, Xh)
    assert (
        lean.learners_.examples_seen
        == full.learners_.examples_seen
        == 4 * (12_000 if kind == "binary" else 4000)
    )
    retired = full.learners_.retired_members
    assert lean.learners_.retired_members == retired
    mixtures = {c for c, _ in retired}
    assert mixtures == ({0} if kind == "binary" else {0, 1, 2, 3}), retired
    # Members retired in every task were left out: only their saved states differ.
    assert lean.learners_.state_bytes() != full.learners_.state_bytes()
    # The model learns on the same.
    Xn, yn = (sparse_stream if kind == "binary" else class_stream)(800, 7)
    lean.partial_fit(Xn, yn)
    full.partial_fit(Xn, yn)
    assert raw(lean, Xh) == raw(full, Xh)


@pytest.mark.parametrize("k", [2, 4])
def test_a_member_retired_in_one_task_only_is_merged(k):
    """``_forgotten``'s policy on two states grown from one base, 24,000 and 3,000 rows: the
    members retired in both are put back to the base's, one retired in the long one only is
    kept — putting it back too would change the merge's predictions (it is active there)."""
    make = sparse_stream if k == 2 else class_stream
    X, y = make(24_000, 5) if k == 2 else class_stream(24_000, 5, k)
    Xs, ys = make(3000, 6) if k == 2 else class_stream(3000, 6, k)
    classes = [-1, 1] if k == 2 else list(range(k))
    base = OnlineClassifier(sparse=True).partial_fit(X[:10], y[:10], classes=classes)
    a = copy.deepcopy(base).partial_fit(X, y)
    b = copy.deepcopy(base).partial_fit(Xs, ys)
    ra, rb = sd._retired_members(a), sd._retired_members(b)
    assert ra - rb, (ra, rb)
    if k > 2:  # the short shard retires members too (the binary one none)
        assert ra & rb, (ra, rb)
    Xh, _ = make(1000, 9) if k == 2 else class_stream(1000, 9, k)

    def merged(x, y_):
        out = copy.copy(x)
        out.learners_ = x.learners_.merged(y_.learners_, base.learners_)
        return raw(out, Xh)

    full = merged(a, b)
    lean_a = sd._forgotten(copy.deepcopy(a), base, ra, rb)
    lean_b = sd._forgotten(copy.deepcopy(b), base, ra, rb)
    assert merged(lean_a, lean_b) == full
    kept = copy.deepcopy(a)
    kept.learners_.forget_retired(base.learners_, sorted(ra & rb))
    assert lean_a.learners_.state_bytes() == kept.learners_.state_bytes()
    # Leaving out the member retired in one shard only changes the merge.
    wrong = copy.deepcopy(a)
    wrong.learners_.forget_retired(base.learners_, sorted(ra))
    assert merged(wrong, b) != full
    # A member already retired in the base is skipped (its state is the base's).
    again = copy.deepcopy(lean_a)
    assert (
        sd._forgotten(again, lean_a, ra, ra).learners_.state_bytes()
        == lean_a.learners_.state_bytes()
    )
