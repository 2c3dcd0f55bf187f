"""FrequentDirections: sketch accuracy, merge, transform, pickling."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp

from sketchlearn import FrequentDirections


def _low_rank(n=400, d=30, rank=5, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, rank)) @ rng.standard_normal((rank, d))


@pytest.mark.parametrize("method", ["fd", "fd-fast", "rfd", "rfd-fast"])
def test_rank_k_data_is_sketched_exactly(method):
    X = _low_rank()
    fd = FrequentDirections(size=8, method=method).fit(X)
    assert fd.covariance_error(X) < 1e-8
    # The top directions span X's rows: projecting loses nothing.
    Z = fd.transform(X)
    np.testing.assert_allclose(Z @ fd.components_, X, atol=1e-8)
    top = np.linalg.svd(X, compute_uv=False)[:5]
    np.testing.assert_allclose(fd.singular_values_[:5], top, rtol=1e-8)


def test_fd_error_bound_and_merge():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((600, 40)) * np.linspace(3, 0.1, 40)
    whole = FrequentDirections(size=10).fit(X)
    a = FrequentDirections(size=10).fit(X[:300])
    b = FrequentDirections(size=10).fit(X[300:])
    a.merge(b)
    assert a.n_samples_seen_ == 600
    # FD's bound ‖AᵀA − BᵀB‖₂ ≤ ‖A‖²_F / (m − k) with k = 0, relative to ‖AᵀA‖₂.
    bound = (X**2).sum() / 10 / np.linalg.norm(X, 2) ** 2
    assert whole.covariance_error(X) <= bound
    assert a.covariance_error(X) <= bound
    with pytest.raises(ValueError, match="cannot be merged"):
        FrequentDirections(size=4, method="rp").fit(X).merge(
            FrequentDirections(size=4, method="rp").fit(X)
        )


@pytest.mark.parametrize("method", ["rp", "oja", "gfd"])
def test_other_methods_and_sparse_input(method):
    X = sp.random(200, 50, density=0.1, random_state=2, format="csr")
    y = np.where(np.arange(200) % 3 == 0, -1.0, 1.0)
    fd = FrequentDirections(size=6, method=method, random_state=4).fit(X, y)
    assert fd.components_.shape[1] == 50
    assert np.isfinite(fd.covariance_error(X, y))
    assert fd.transform(X).shape == (200, fd.components_.shape[0])


def test_partial_fit_equals_fit_and_pickle():
    X = _low_rank(rank=12)
    one = FrequentDirections(size=6).fit(X)
    parts = FrequentDirections(size=6)
    for chunk in np.array_split(X, 7):
        parts.partial_fit(chunk)
    np.testing.assert_array_equal(parts.components_, one.components_)
    back = pickle.loads(pickle.dumps(one))
    np.testing.assert_array_equal(back.transform(X), one.transform(X))
    back.partial_fit(X)
    one.partial_fit(X)
    np.testing.assert_array_equal(back.singular_values_, one.singular_values_)


def test_nan_row_is_named():
    X = _low_rank()
    X[13, 2] = np.nan
    with pytest.raises(ValueError, match="row 13"):
        FrequentDirections().fit(X)
