r"""Numerical helpers of chapter 10's sweeps: the top eigenvectors of a second-moment matrix,
ridge solves for a path of ridges or on the leading block of a kernel matrix, work arrays reused
across seeds (each returns what the plain NumPy or SciPy call returns, to rounding, with one
exception said in :func:`ridge_coefficients`; they exist for speed, the chapter's budget), and
the crossing of a level by a curve on a log grid.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg as sla
from scipy.linalg import lapack

from lecnotes.core import validate as V
from lecnotes.models.kernel_methods import kernel_ridge

__all__ = ["top_eigenvectors", "ridge_coefficients", "kernel_ridge_block", "Buffers",
           "log_crossing"]


def top_eigenvectors(D, r):
    r"""The eigenvectors of the ``r`` largest eigenvalues of a symmetric matrix (LAPACK's
    ``syevr`` on that subset only): the spectral estimator of {eq}`eq-ch10-spectral`.

    Parameters
    ----------
    D : ndarray (k, k)
        Symmetric matrix.
    r : int
        Number of eigenvectors (1..k).

    Returns
    -------
    ndarray (k, r)
        Orthonormal columns, in increasing order of the eigenvalue (signs arbitrary).
    """
    k = len(D)
    return sla.eigh(D, subset_by_index=[k - r, k - 1], check_finite=False)[1]


def ridge_coefficients(gram, rhs, lams):
    r"""Ridge coefficients :math:`(G+\lambda I)^{-1}b` for every ridge on the last axis of
    ``lams``, batched over the leading axes ({prf:ref}`prop-ch10-shallow`'s shallow learners):
    one tridiagonal reduction :math:`G = QTQ^\top` per matrix (LAPACK ``sytrd``, a third of
    the cost of an eigendecomposition), then a tridiagonal solve per ridge; :math:`Q^\top b`
    and the back-transformation are products with the Householder reflectors (``ormqr``).
    Unlike an eigendecomposition with its negative eigenvalues clipped at 0, a Gram whose
    rounding leaves eigenvalues slightly below 0 (single precision, fewer samples than features)
    is used as it is: a ridge within a few times such an eigenvalue then gives another solution
    (the chapter's smallest ridges are far above them; the shifted matrix is checked and an
    indefinite one falls back to the clipped eigendecomposition).

    Parameters
    ----------
    gram : ndarray (..., p, p)
        :math:`G`, symmetric positive semi-definite.
    rhs : ndarray (..., p)
        :math:`b`.
    lams : ndarray (..., L)
        Positive ridges.

    Returns
    -------
    ndarray (..., p, L)
    """
    gram = np.asarray(gram, float)
    p = gram.shape[-1]
    lead = np.broadcast_shapes(gram.shape[:-2], np.shape(rhs)[:-1], np.shape(lams)[:-1])
    L = np.shape(lams)[-1]
    G = np.broadcast_to(gram, lead + (p, p)).reshape(-1, p, p)
    B = np.broadcast_to(np.asarray(rhs, float), lead + (p,)).reshape(-1, p)
    lam = np.broadcast_to(np.asarray(lams, float), lead + (L,)).reshape(-1, L)
    out = np.empty((len(G), p, L))
    if p == 1:
        out[:, 0] = B / (np.maximum(G[:, 0], 0) + lam)
        return out.reshape(lead + (p, L))
    lwork = max(int(lapack.dsytrd_lwork(p, lower=1)[0]), 64 * p)
    for k in range(len(G)):
        c, diag, off, tau, info = lapack.dsytrd(G[k], lower=1, lwork=lwork)
        refl = np.asfortranarray(c[1:, :-1])  # Q = diag(1, Q'), Q' from these reflectors
        bt = B[k].copy()
        bt[1:] = lapack.dormqr("L", "T", refl, tau, bt[1:, None], lwork)[0][:, 0]
        x = np.empty((p, L))
        for i in range(L):
            _, _, sol, bad = lapack.dptsv(diag + lam[k, i], off, bt[:, None])
            if bad:  # not positive definite to working precision: the eigendecomposition
                ev, U = np.linalg.eigh(G[k])
                out[k] = U @ ((U.T @ B[k])[:, None] / (np.maximum(ev, 0)[:, None] + lam[k]))
                break
            x[:, i] = sol[:, 0]
        else:
            x[1:] = lapack.dormqr("L", "N", refl, tau, x[1:], lwork)[0]
            out[k] = x
    return out.reshape(lead + (p, L))


def kernel_ridge_block(K, n, y, lam):
    r""":func:`lecnotes.models.kernel_methods.kernel_ridge` on the leading ``n`` x ``n`` block of
    ``K`` (the same solve, :math:`(K_n + n\lambda I)\alpha = y`; {prf:ref}`prop-ch10-shallow`'s
    kernel). When ``n`` is the whole of ``K`` its diagonal is shifted in place by
    :math:`n\lambda` (``K`` is not used again; SciPy factors a copy).

    Parameters
    ----------
    K : ndarray (N, N)
        Kernel matrix, C-contiguous.
    n : int
        Size of the leading block (1..N).
    y : ndarray (n,)
        Labels.
    lam : float
        Ridge (>= 0).

    Returns
    -------
    ndarray (n,)
    """
    if lam == 0:
        return kernel_ridge(K[:n, :n], y, lam)
    if n < len(K):
        A = K[:n, :n] + n * lam * np.eye(n)
    else:
        A = K
        A[np.diag_indices(n)] += n * lam
    return sla.cho_solve(sla.cho_factor(A, lower=True, overwrite_a=True, check_finite=False), y)


class Buffers(dict):
    """Flat work arrays reused across the seeds of a sweep (no allocation, hence no fresh
    pages to fault in, per draw)."""

    def get(self, key, size, dtype=np.float64):
        """A flat array of ``size`` entries of ``dtype`` under ``key`` (reallocated when too
        small).

        Parameters
        ----------
        key : hashable
        size : int
        dtype : numpy dtype

        Returns
        -------
        ndarray (size,)
        """
        a = dict.get(self, key)
        if a is None or a.size < size or a.dtype != dtype:
            a = self[key] = np.empty(size, dtype)
        return a[:size]


def _positive_grid(values, name):
    a = V.finite_array(values, name, ndim=1)
    if a.size == 0 or np.any(a <= 0) or np.any(np.diff(a) <= 0):
        raise ValueError(f"{name} must hold increasing positive numbers")
    return a


def log_crossing(x, values, level, log_values=False):
    r"""Where a monotone curve crosses ``level``, interpolated linearly in :math:`\log x` (and
    in :math:`\log` of the values if ``log_values``): the :math:`n` at which a stage reaches an
    overlap ({prf:ref}`prop-ch10-stage-one`) or a learner an error
    ({prf:ref}`prop-ch10-shallow`).

    Parameters
    ----------
    x : array_like (p,)
        Increasing positive abscissae.
    values : array_like (..., p)
        Curves, monotone along the last axis, each crossing ``level`` inside the grid.
    level : float or array_like
        The level, broadcastable to ``values.shape[:-1]`` (positive if ``log_values``).
    log_values : bool
        Interpolate :math:`\log` values (for errors on log axes).

    Returns
    -------
    ndarray (...)
        The crossing abscissa of each curve.
    """
    x = _positive_grid(x, "x")
    v = V.finite_array(values, "values")
    if v.ndim < 1 or v.shape[-1] != x.size or x.size < 2:
        raise ValueError(f"values must have {x.size} >= 2 entries on the last axis")
    lev = np.broadcast_to(V.finite_array(level, "level"), v.shape[:-1])
    if log_values:
        if np.any(lev <= 0) or np.any(v <= 0):
            raise ValueError("log_values needs positive values and level")
        v, lev = np.log(v), np.log(lev)
    lx = np.log(x)
    flat, flat_lev = v.reshape(-1, x.size), lev.reshape(-1)
    out = np.empty(len(flat))
    for k, (row, lv) in enumerate(zip(flat, flat_lev, strict=True)):
        up = row[-1] > row[0]
        past = row >= lv if up else row <= lv
        if not past.any() or past[0]:
            raise ValueError("a curve does not cross the level inside the grid")
        i = int(np.argmax(past))
        t = (lv - row[i - 1]) / (row[i] - row[i - 1])
        out[k] = math.exp(lx[i - 1] + t * (lx[i] - lx[i - 1]))
    return out.reshape(v.shape[:-1])
