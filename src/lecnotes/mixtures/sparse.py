r"""Diagonal thresholding and PCA beside AMP on the sparse k-cluster mixture (chapter 11).

:func:`pca` is the top :math:`k-1` eigenvectors of the sample covariance
({prf:ref}`prop-ch11-pca`), :func:`diagonal_thresholding` the same on the :math:`m`
coordinates of largest sample variance ({prf:ref}`alg-ch11-dt`), with the oracle support size
:func:`oracle_support` (it knows :math:`\rho`); {prf:ref}`prop-ch11-dt` says when the
diagonal sees a coordinate. :func:`sparse_sweep` runs the three methods on the same
data, AMP vectorised over the signal strengths (the data are :math:`X_0 + \sqrt\lambda\,S` with
one noise :math:`X_0` and a rank-:math:`(k-1)` signal :math:`S`, so every product with
:math:`X` is one pass over :math:`X_0` for all :math:`\lambda`); ``explorer.sparse_figure``
draws it.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.linalg import eigh
from scipy.sparse.linalg import LinearOperator, eigsh

from lecnotes.core import validate as V
from lecnotes.mixtures.amp import (
    centring,
    check_k,
    check_rho,
    cluster_denoiser,
    sample_sparse_gmm,
    sparse_denoiser,
    subspace_overlap,
)
from lecnotes.mixtures.thresholds import subspace_cosine

__all__ = ["oracle_support", "pca", "DTResult", "diagonal_thresholding", "amp_lams",
           "SparseSweep", "sparse_sweep"]


def oracle_support(d, k, rho) -> int:
    r"""The expected number of coordinates on which some mean is non-zero,
    :math:`m = d\,(1 - (1-\rho)^k)`, rounded: the size of the set that diagonal thresholding
    keeps ({prf:ref}`alg-ch11-dt`). An oracle choice: it knows :math:`\rho`.

    Parameters
    ----------
    d : int
        Dimension.
    k : int
        Clusters.
    rho : float
        Density of the means.

    Returns
    -------
    int
        At least ``k - 1``.
    """
    d, k, rho = V.positive_int(d, "d"), check_k(k), check_rho(rho)
    return int(min(d, max(k - 1, round(d * (1 - (1 - rho) ** k)))))


def _check_X(X, k):
    X = V.finite_array(X, "X", ndim=2)
    if X.shape[1] < k or X.shape[0] < 2:
        raise ValueError(f"X must be (n, d) with n >= 2 and d >= k = {k}, got {X.shape}")
    return X


def _top(C, j):
    """Top-j eigenvectors of a symmetric matrix or operator (eigh for small, eigsh else)."""
    m = C.shape[0]
    if m <= 200 and isinstance(C, np.ndarray):
        return eigh(C, subset_by_index=[m - j, m - 1])[1]
    return eigsh(C, j, which="LA", v0=np.ones(m) / math.sqrt(m), ncv=24, tol=1e-6)[1]


def pca(X, k) -> np.ndarray:
    r"""The top :math:`k-1` eigenvectors of :math:`X^\top X/n` ({prf:ref}`prop-ch11-pca`),
    matrix-free (Lanczos on :math:`v\mapsto X^\top Xv/n`).

    Parameters
    ----------
    X : ndarray (n, d)
        Data.
    k : int
        Clusters.

    Returns
    -------
    ndarray (d, k - 1)
        Orthonormal columns.
    """
    k = check_k(k)
    X = _check_X(X, k)
    n, d = X.shape
    op = LinearOperator((d, d), matvec=lambda v: X.T @ (X @ v) / n, dtype=float)
    return _top(op, k - 1)


class DTResult(NamedTuple):
    """Diagonal thresholding ({prf:ref}`alg-ch11-dt`)."""

    E: np.ndarray
    """Orthonormal estimate of the span of the centred means (d, k - 1)."""
    support: np.ndarray
    """The kept coordinates, sorted (m,)."""


def _dt_from(diag, block, d, k, m):
    top = np.sort(np.argsort(diag, kind="stable")[-m:])
    E = np.zeros((d, k - 1))
    E[top] = _top(block(top), k - 1)
    return DTResult(E, top)


def diagonal_thresholding(X, k, m) -> DTResult:
    r"""Diagonal thresholding {prf:ref}`alg-ch11-dt`: keep the ``m`` coordinates with the
    largest diagonal entries of :math:`X^\top X/n`, and return the top :math:`k-1`
    eigenvectors of the covariance restricted to them, embedded in :math:`\R^d`.

    Parameters
    ----------
    X : ndarray (n, d)
        Data.
    k : int
        Clusters.
    m : int
        Coordinates kept, ``k - 1 <= m <= d`` (e.g. :func:`oracle_support`).

    Returns
    -------
    DTResult
    """
    k = check_k(k)
    X = _check_X(X, k)
    n, d = X.shape
    m = V.positive_int(m, "m", minimum=k - 1)
    if m > d:
        raise ValueError(f"m must be at most d = {d}, got {m}")
    diag = np.einsum("ij,ij->j", X, X) / n
    return _dt_from(diag, lambda S: X[:, S].T @ X[:, S] / n, d, k, m)


def amp_lams(X0, U, Vm, lams, rho, iterations=30, eps=1e-3, rngs=None, starts=False,
             record=()):
    r"""AMP {prf:ref}`alg-ch11-amp` on :math:`X = X_0 + \sqrt{\lambda/d}\,UV^\top` for every
    :math:`\lambda` of ``lams`` at once: the same recursion as :func:`lecnotes.mixtures.amp.amp`
    (the same start for the same ``rngs``), with :math:`X\hat V` and :math:`X^\top\hat U`
    computed for all :math:`\lambda` by one product with :math:`X_0` plus the rank-:math:`k`
    signal. The products with :math:`X_0` are taken in single precision (they read the whole
    matrix and dominate the cost; their rounding, about :math:`10^{-7}` relative, is far below
    the :math:`d^{-1/2}` fluctuations AMP tracks).

    Parameters
    ----------
    X0 : ndarray (n, d)
        The noise.
    U : ndarray (n, k)
        Centred one-hot rows.
    Vm : ndarray (d, k)
        The means.
    lams : sequence of float
        Signal-to-noise ratios, > 0.
    rho : float
        Density of the means.
    iterations : int
        AMP iterations.
    eps : float or sequence of float
        Precision of the start's side channel, > 0: one for all runs, or one per ``lam`` (so
        that an uninformed and an informed run share the passes over :math:`X_0`).
    rngs : sequence of (Generator, int or None), optional
        One random state per ``lam`` for the start.
    starts : bool
        Also return the starting estimates.
    record : sequence of int
        Iterations (1 to ``iterations``) after which the estimates are also kept: the same
        runs seen at earlier times (paired, for a test of whether they still move).

    Returns
    -------
    ndarray (len(lams), d, k)
        The final estimates of the means.
    ndarray (len(lams), d, k), only if ``starts``
        The starting estimates :math:`\hat V^0`.
    ndarray (len(record), len(lams), d, k), only if ``record``
        The estimates after the iterations of ``record``.
    """
    X0 = V.finite_array(X0, "X0", ndim=2)
    U, Vm = V.finite_array(U, "U", ndim=2), V.finite_array(Vm, "Vm", ndim=2)
    n, d = X0.shape
    k = check_k(Vm.shape[1])
    if U.shape != (n, k) or Vm.shape != (d, k):
        raise ValueError(f"U must be ({n}, k) and Vm ({d}, k), got {U.shape}, {Vm.shape}")
    lams = np.array([V.positive_float(x, "lams") for x in np.atleast_1d(lams)])
    rho = check_rho(rho)
    epss = [V.positive_float(e, "eps") for e in np.atleast_1d(eps)]
    if len(epss) not in (1, lams.size):
        raise ValueError("eps must be a number or one number per lam")
    epss = epss * lams.size if len(epss) == 1 else epss
    iterations = V.positive_int(iterations, "iterations")
    if not isinstance(starts, bool):
        raise TypeError("starts must be a bool")
    record = [V.positive_int(t, "record") for t in record]
    if any(t > iterations for t in record):
        raise ValueError(f"record must lie in 1..{iterations}, got {record}")
    rngs = [None] * lams.size if rngs is None else list(rngs)
    if len(rngs) != lams.size:
        raise ValueError("rngs must give one random state per lam")
    P = centring(k)
    v, cv = [], []
    for r, e in zip(rngs, epss, strict=True):
        A0 = e * P
        root = np.linalg.cholesky(A0 + 1e-12 * np.eye(k))
        B0 = Vm @ A0 + V.generator(r).standard_normal((d, k)) @ root.T
        a, c = sparse_denoiser(A0, B0, rho)
        v.append(a)
        cv.append(c)
    v0 = np.stack(v)
    u_old = [np.zeros((n, k)) for _ in lams]
    sq = np.sqrt(lams / d)
    X32 = X0.astype(np.float32)
    kept = {}
    for t in range(1, iterations + 1):
        XV = (X32 @ np.hstack(v).astype(np.float32)).astype(float)  # one pass over X0
        u, cu = [], []
        for i, lam in enumerate(lams):
            Bu = sq[i] * (XV[:, i * k:(i + 1) * k] + sq[i] * U @ (Vm.T @ v[i]))
            a, c = cluster_denoiser((lam / d) * v[i].T @ v[i], Bu - lam * u_old[i] @ cv[i])
            u.append(a)
            cu.append(c)
        XU = (X32.T @ np.hstack(u).astype(np.float32)).astype(float)
        for i, lam in enumerate(lams):
            Bv = sq[i] * (XU[:, i * k:(i + 1) * k] + sq[i] * Vm @ (U.T @ u[i]))
            v[i], cv[i] = sparse_denoiser((lam / d) * u[i].T @ u[i],
                                          Bv - (lam / d) * n * v[i] @ cu[i], rho)
        u_old = u
        if t in record:
            kept[t] = np.stack(v)
    out = [np.stack(v)] + [v0] * starts + ([np.stack([kept[t] for t in record])] if record else [])
    return tuple(out) if len(out) > 1 else out[0]


class SparseSweep(NamedTuple):
    """Squared cosines with the span of the centred means ({prf:ref}`alg-ch11-dt`)."""

    dims: np.ndarray
    lams: np.ndarray
    m: np.ndarray
    """Coordinates kept by diagonal thresholding, per size."""
    dt: np.ndarray
    """(seeds, dims, lams): diagonal thresholding."""
    pca: np.ndarray
    """(seeds, dims, lams): PCA."""
    amp: np.ndarray
    """(seeds, dims, lams): AMP from the almost uninformed start."""
    amp_overlap: np.ndarray
    """(seeds, dims, lams): AMP's overlap :func:`~lecnotes.mixtures.amp.subspace_overlap`."""
    rhos: np.ndarray
    """The density of the means at each size."""


def _span(Vhat):
    k = Vhat.shape[1]
    return np.linalg.svd(Vhat @ centring(k), full_matrices=False)[0][:, : k - 1]


def sparse_sweep(dims, lams, seeds, k, rho, alpha, iterations=30, eps=1e-3,
                 rng=None) -> SparseSweep:
    r"""Diagonal thresholding with the oracle support size, PCA and AMP on the same data
    ({prf:ref}`alg-ch11-dt`, {prf:ref}`prop-ch11-pca`, {prf:ref}`alg-ch11-amp`). The data of size
    ``d`` and seed ``s`` come from stream ``(d, s)`` and are shared by all ``lams``, as in
    :func:`~lecnotes.mixtures.experiments.amp_sweep` (the same data and AMP starts for the same
    ``rng``). The covariance :math:`X^\top X/n` is formed once per seed for the noise and
    updated by the low-rank signal for each :math:`\lambda`. The density may change with the
    size (one :math:`\rho` per entry of ``dims``): the sub-extensive regime of
    {prf:ref}`prop-ch11-dt` keeps :math:`\rho\sqrt d` fixed.

    Parameters
    ----------
    dims : sequence of int
        Dimensions.
    lams : sequence of float
        Signal-to-noise ratios, > 0.
    seeds : int
        Seeds.
    k : int
        Clusters.
    rho : float or sequence of float
        Density of the means: one for all sizes, or one per size.
    alpha : float
        Samples per dimension.
    iterations : int
        AMP iterations.
    eps : float
        Precision of AMP's start.
    rng : Generator, int or None
        Parent random state.

    Returns
    -------
    SparseSweep
    """
    dims = np.array([V.positive_int(int(d) if float(d).is_integer() else d, "dims", minimum=2)
                     for d in np.atleast_1d(dims)])
    lams = np.array([V.positive_float(lam, "lams") for lam in np.atleast_1d(lams)])
    seeds, k = V.positive_int(seeds, "seeds"), check_k(k)
    rhos = np.atleast_1d(np.asarray(rho, dtype=object))
    if rhos.ndim != 1 or rhos.size not in (1, dims.size):
        raise ValueError(f"rho must be a number or one number per size ({dims.size}), got {rho!r}")
    rhos = np.array([check_rho(r) for r in rhos] * (dims.size if rhos.size == 1 else 1))
    alpha = V.positive_float(alpha, "alpha")
    out = {key: np.zeros((seeds, dims.size, lams.size)) for key in ("dt", "pca", "amp", "q")}
    ms = np.array([oracle_support(int(d), k, r) for d, r in zip(dims, rhos, strict=True)])
    for j, d in enumerate(dims):
        d, n, rho = int(d), int(round(alpha * d)), float(rhos[j])
        for s in range(seeds):
            r = V.stream(rng, d, s)
            X0, U, Vm = sample_sparse_gmm(n, d, k, rho, 0.0, rng=r)
            G0 = X0.T @ X0 / n
            W = X0.T @ U / (n * math.sqrt(d))  # cross term: X0^T S / n = W Vm^T
            SS = Vm @ (U.T @ U / (n * d)) @ Vm.T  # S^T S / n
            Vh = amp_lams(X0, U, Vm, lams, rho, iterations, eps,
                          [V.stream(r, i, ord("u")) for i in range(lams.size)])
            for i, lam in enumerate(lams):
                cross = math.sqrt(lam) * W @ Vm.T
                C = G0 + cross + cross.T + lam * SS
                out["pca"][s, j, i] = subspace_cosine(_top(C, k - 1), Vm)
                dt = _dt_from(np.diag(C), lambda S, C=C: C[np.ix_(S, S)], d, k, int(ms[j]))
                out["dt"][s, j, i] = subspace_cosine(dt.E, Vm)
                out["amp"][s, j, i] = subspace_cosine(_span(Vh[i]), Vm)
                out["q"][s, j, i] = subspace_overlap(Vh[i], Vm)
    return SparseSweep(dims, lams, ms, out["dt"], out["pca"], out["amp"], out["q"], rhos)
