r"""First-moment estimators and overlaps (chapters 0 and 3).

The first-moment (Stein) estimator with label preprocessing :math:`T` is
:math:`v = \frac1n\sum_i T(y_i)x_i` (chapter 3, eq. (first moment)); its mean is
:math:`\mathbb E[T(Y)G]\,w_\star` by Stein's lemma. The overlap of an estimate
:math:`\hat w` with :math:`w_\star` is :math:`\rho = |\langle\hat w,w_\star\rangle|/\|\hat w\|`
(book, *Notation*).
"""

from __future__ import annotations

import numpy as np

from . import _validate as V

__all__ = ["preprocess", "first_moment", "overlap", "subspace_overlap"]


def preprocess(y, T=None) -> np.ndarray:
    """Apply a label preprocessing ``T`` (a vectorised callable; ``None`` = identity).

    Raises ``ValueError`` if ``T`` is not callable or returns the wrong shape or NaN.
    """
    y = V.finite_array(y, "y", ndim=1)
    if T is None:
        return y
    if not callable(T):
        raise ValueError(f"T must be a callable of the labels or None, got {T!r}")
    t = np.asarray(T(y), dtype=float)
    if t.shape == ():
        t = np.full_like(y, float(t))
    if t.shape != y.shape:
        raise ValueError(f"T must be vectorised: T(y) has shape {t.shape}, y has {y.shape}")
    if not np.all(np.isfinite(t)):
        raise ValueError("T(y) contains NaN or infinite values")
    return t


def first_moment(X, y, T=None) -> np.ndarray:
    r"""The normalised first-moment estimator :math:`v/\|v\|`, :math:`v=\frac1n\sum T(y_i)x_i`.

    Chapter 3, eq. (first moment). One matrix-vector product, O(nd).

    Parameters
    ----------
    X : array_like (n, d)
    y : array_like (n,)
    T : callable or None
        Label preprocessing; ``None`` uses the raw labels.

    Returns
    -------
    ndarray (d,), unit norm (a random-looking direction if ``v = 0`` exactly is impossible;
    a zero ``v`` raises ``ValueError``).
    """
    X, y = V.data_pair(X, y)
    t = preprocess(y, T)
    v = X.T @ t / X.shape[0]
    nv = np.linalg.norm(v)
    if nv == 0:
        raise ValueError("the estimator is exactly zero (all preprocessed labels vanish)")
    return v / nv


def overlap(w_hat, w_star) -> float:
    r"""Overlap :math:`\rho = |\langle\hat w,w_\star\rangle|/(\|\hat w\|\|w_\star\|)` in [0, 1].

    Book, *Notation*. Sign-blind, since spectral estimators are defined up to sign.
    """
    w_hat = V.finite_array(w_hat, "w_hat", ndim=1)
    w_star = V.finite_array(w_star, "w_star", ndim=1)
    if w_hat.shape != w_star.shape:
        raise ValueError(f"shapes differ: {w_hat.shape} vs {w_star.shape}")
    nh, ns = np.linalg.norm(w_hat), np.linalg.norm(w_star)
    if nh == 0 or ns == 0:
        raise ValueError("overlap of a zero vector is undefined")
    return float(abs(w_hat @ w_star) / (nh * ns))


def subspace_overlap(W_hat, W_star) -> float:
    r"""Subspace overlap :math:`\|P_{\hat W}W_\star^\top\|_F^2/k \in [0,1]` (chapters 0, 6).

    ``W_hat`` (r, d) spans the estimated subspace (any rank), ``W_star`` (k, d) has orthonormal
    rows. 1 means ``span(W_star)`` lies in ``span(W_hat)``; a random r-dimensional subspace
    gives about ``r/d``.
    """
    W_hat = V.finite_array(W_hat, "W_hat", ndim=2)
    W_star = V.finite_array(W_star, "W_star", ndim=2)
    if W_hat.shape[1] != W_star.shape[1]:
        raise ValueError(f"dimensions differ: {W_hat.shape[1]} vs {W_star.shape[1]}")
    q, r = np.linalg.qr(W_hat.T)
    rank = int(np.sum(np.abs(np.diag(r)) > 1e-10 * max(1.0, np.abs(r).max())))
    if rank == 0:
        raise ValueError("W_hat spans the zero subspace")
    q = q[:, np.abs(np.diag(r)) > 1e-10 * max(1.0, np.abs(r).max())]
    return float(np.sum((W_star @ q) ** 2) / W_star.shape[0])
