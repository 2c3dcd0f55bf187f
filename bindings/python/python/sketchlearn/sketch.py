""":class:`FrequentDirections`: a streaming sketch of the covariance ``AᵀA`` as a
scikit-learn transformer (streaming PCA without centring)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from sketchlearn import _core
from sketchlearn._validation import as_rows, check_numeric_columns, seed_of

_METHODS = ("fd", "fd-fast", "rfd", "rfd-fast", "gfd", "gfd-fast", "rp", "oja")


class FrequentDirections(TransformerMixin, BaseEstimator):
    """Streaming matrix sketch of ``AᵀA`` from the rows of ``A``.

    Parameters
    ----------
    size : int, default=10
        Sketch size m (FD-family sketches keep m − 1 directions, RP and Oja m).
    method : {"fd", "fd-fast", "rfd", "rfd-fast", "gfd", "gfd-fast", "rp", "oja"}, default="fd"
        Frequent Directions (per-row or doubling space), Robust FD (adds ``αI``), Generalized
        FD (rows signed by ``y``), Gaussian random projection, Oja's sketch.
    n_components : int, default=None
        Directions kept by :meth:`transform` (``None``: every direction of the sketch).
    alpha0 : float, default=0.0
        RFD's initial α₀.
    alpha : float, default=1.0
        Regulariser α of ``(αI + SSᵀ)⁻¹`` kept by RP and Oja.
    random_state : int, RandomState or None, default=None
        Seed of RP's and Oja's draws (``None`` is 0).

    Attributes
    ----------
    components_ : ndarray of shape (k, n_features)
        Orthonormal top directions of the sketch, largest first.
    singular_values_ : ndarray of shape (k,)
        Square roots of the sketch's eigenvalues along ``components_`` (the singular values
        of ``B`` for FD; ``√|λ|`` for GFD's indefinite sketch).
    alpha_ : float
        RFD's isotropic part α (0 for the other methods).
    n_samples_seen_ : int
        Rows inserted (merged sketches add up).
    """

    def __init__(
        self,
        size: int = 10,
        method: str = "fd",
        *,
        n_components: int | None = None,
        alpha0: float = 0.0,
        alpha: float = 1.0,
        random_state=None,
    ) -> None:
        self.size = size
        self.method = method
        self.n_components = n_components
        self.alpha0 = alpha0
        self.alpha = alpha
        self.random_state = random_state

    def _signs(self, y, n: int):
        if self.method.startswith("gfd"):
            if y is None:
                return None
            s = np.ascontiguousarray(y, dtype=np.float64)
            if s.shape != (n,):
                raise ValueError(f"y must have one sign per row ({n}), got shape {s.shape}")
            return s
        return None

    def _checked_rows(self, X, y, *, reset: bool):
        """``X`` validated as every sketching method takes it (dense, CSR, CSC or COO; float64 or
        float32; non-finite values passed on to the core), its rows for the core and their
        GFD signs: ``(X, rows, signs)``."""
        check_numeric_columns(X)
        X = validate_data(
            self,
            X,
            accept_sparse=("csr", "csc", "coo"),
            dtype=(np.float64, np.float32),
            ensure_all_finite=False,
            reset=reset,
        )
        rows, _ = as_rows(X)
        return X, rows, self._signs(y, X.shape[0])

    def partial_fit(self, X, y=None):
        """Inserts the rows of ``X`` (GFD: signed by ``y``). Returns ``self``."""
        first = not hasattr(self, "state_")
        X, rows, signs = self._checked_rows(X, y, reset=first)
        if first:
            if self.method not in _METHODS:
                raise ValueError(f"method must be one of {_METHODS}, got {self.method!r}")
            self.state_ = _core.SketchState(
                self.method,
                self.size,
                X.shape[1],
                seed_of(self.random_state),
                self.alpha0,
                self.alpha,
            )
        self.state_.insert(rows, signs)
        self._update_components()
        return self

    def fit(self, X, y=None):
        """Sketches ``X`` from scratch. Returns ``self``."""
        for name in ("state_", "components_", "singular_values_"):
            self.__dict__.pop(name, None)
        return self.partial_fit(X, y)

    def merge(self, other: FrequentDirections) -> FrequentDirections:
        """Adds ``other``'s sketch to this one (FD, RFD, GFD of the same configuration): the
        result sketches the union of both streams with FD's error bound. Returns ``self``."""
        check_is_fitted(self, "state_")
        check_is_fitted(other, "state_")
        self.state_.merge(other.state_)
        self._update_components()
        return self

    def _update_components(self) -> None:
        pos, neg, alpha = self.state_.matrices()
        stacked = pos if neg is None else np.vstack([pos, neg])
        d = self.state_.dim
        self.alpha_ = alpha
        self.n_samples_seen_ = self.state_.rows_seen
        stacked = stacked[np.any(stacked != 0.0, axis=1)]
        if stacked.shape[0] == 0:
            self.components_ = np.zeros((0, d))
            self.singular_values_ = np.zeros(0)
            return
        # Orthonormal basis V of the rows, then the small symmetric matrix V M Vᵀ.
        _, s, vt = np.linalg.svd(stacked, full_matrices=False)
        vt = vt[s > s[0] * 1e-12]
        pb = pos @ vt.T
        small = pb.T @ pb
        if neg is not None:
            nb = neg @ vt.T
            small -= nb.T @ nb
        lam, u = np.linalg.eigh(small)
        order = np.argsort(-np.abs(lam))
        k = len(order) if self.n_components is None else min(self.n_components, len(order))
        order = order[:k]
        self.components_ = u[:, order].T @ vt
        self.singular_values_ = np.sqrt(np.abs(lam[order]))

    def transform(self, X):
        """Projects ``X`` on the sketched top directions: ``X @ components_.T``."""
        check_is_fitted(self, "components_")
        check_numeric_columns(X)
        X = validate_data(
            self, X, accept_sparse=("csr", "csc"), dtype=(np.float64, np.float32), reset=False
        )
        out = X @ self.components_.T.astype(X.dtype, copy=False)
        return np.asarray(out.todense()) if sp.issparse(out) else out

    def covariance_error(self, X, y=None) -> float:
        """Relative spectral error ‖XᵀX − approximation‖₂ / ‖XᵀX‖₂ of the sketch against the
        exact covariance of ``X`` (GFD: of Σ yᵢ xᵢxᵢᵀ), computed without a d × d matrix."""
        check_is_fitted(self, "state_")
        _, rows, signs = self._checked_rows(X, y, reset=False)
        return self.state_.relative_spectral_error(rows, signs)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
