r"""Linear algebra: top eigenpairs (matrix-free), singular pairs, one sign rule.

:func:`top_eigenpair` is the engine of every spectral estimator (chapters 4, 5): the largest
eigenpair of a symmetric operator given by its matrix-vector product (implicitly restarted
Lanczos, ARPACK, through :func:`scipy.sparse.linalg.eigsh` on a ``LinearOperator``), with
restarts and dense fallbacks so that non-convergence never reaches the reader.
:func:`weighted_gram` forms :math:`\frac1nX^\top\mathrm{diag}(t)X` by blocks,
:func:`top_singular` and :func:`singular_values` are the singular pairs of chapters 6 and 7.
One sign rule for every eigen- and singular vector: :func:`canonical_sign` (the entry of
largest absolute value is positive).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import scipy.linalg as sla
from scipy.sparse.linalg import ArpackError, ArpackNoConvergence, LinearOperator, eigsh, svds

from lecnotes.core import validate as V

__all__ = [
    "DENSE_MAX_D",
    "DENSE_FALLBACK_MAX_D",
    "LANCZOS_START_SEED",
    "EigenInfo",
    "EigenResult",
    "canonical_sign",
    "lanczos_start",
    "top_eigenpair",
    "weighted_gram",
    "top_singular",
    "singular_values",
    "top_singular_vectors",
]


DENSE_MAX_D = 300
"""Below this dimension ``method="auto"`` forms D_T and calls LAPACK (faster than Lanczos)."""


DENSE_FALLBACK_MAX_D = 8000
"""Largest ``d`` for which a dense fallback is attempted (the d x d matrix takes 8 d^2 bytes)."""


LANCZOS_START_SEED = 0
"""Seed of the default Lanczos start vector (:func:`lanczos_start`). It is a fixed internal
seed, not a random stream of an experiment: the computed eigenpair does not depend on the
start vector beyond the solver's tolerance, and it does not follow ``LECNOTES_SEED``."""


@dataclass
class EigenInfo:
    """How :func:`top_eigenpair` got its answer.

    Attributes
    ----------
    method : str
        ``"dense"``, ``"lanczos"`` or ``"lanczos-restarted"``, or ``"...-unconverged"``.
    matvecs : int
        Number of operator applications (columns count one each).
    residual : float
        :math:`\\|Av-\\lambda v\\|` of the returned pair (computed with one extra product).
    attempts : list of str
        What was tried, in order (failures included).
    """

    method: str
    matvecs: int = 0
    residual: float = math.nan
    attempts: list = field(default_factory=list)


class EigenResult(NamedTuple):
    """An eigenpair and how it was computed, direction first (:func:`top_eigenpair`).

    Attributes
    ----------
    vector : ndarray (d,)
        Unit eigenvector, sign fixed by :func:`canonical_sign`.
    value : float
        Its eigenvalue.
    info : EigenInfo
    """

    vector: np.ndarray
    value: float
    info: EigenInfo


def _row_signs(V_: np.ndarray) -> np.ndarray:
    """+1 or -1 per row: the sign of the row's entry of largest absolute value (0 counts +)."""
    idx = np.argmax(np.abs(V_), axis=1)
    return np.where(V_[np.arange(V_.shape[0]), idx] >= 0, 1.0, -1.0)


def canonical_sign(v) -> np.ndarray:
    """The one sign rule of the package: the entry of largest absolute value is positive.

    Eigen- and singular vectors are defined up to sign; every estimator returns them with
    this sign (ties in absolute value: the first such entry).

    Parameters
    ----------
    v : array_like, shape (d,) or (k, d)
        A vector, or vectors as rows (each row is fixed separately).

    Returns
    -------
    ndarray
        ``v`` or ``-v`` (row by row).
    """
    v = np.asarray(v, dtype=float)
    if v.ndim == 1:
        return v if _row_signs(v[None, :])[0] > 0 else -v
    if v.ndim != 2:
        raise ValueError(f"v must be a vector or a 2-D array of row vectors, got shape {v.shape}")
    return v * _row_signs(v)[:, None]


def lanczos_start(d: int) -> np.ndarray:
    """The default start vector of :func:`top_eigenpair`: Gaussian, from ``LANCZOS_START_SEED``.

    Parameters
    ----------
    d : int
        Dimension.

    Returns
    -------
    ndarray (d,)
    """
    d = V.positive_int(d, "d")
    return np.random.default_rng(LANCZOS_START_SEED).standard_normal(d)


def top_eigenpair(
    matvec: Callable[[np.ndarray], np.ndarray],
    d: int,
    *,
    dense_matrix: Callable[[], np.ndarray] | None = None,
    method: str = "auto",
    tol: float = 1e-8,
    ncv: int | None = None,
    maxiter: int | None = None,
    v0=None,
    warn: bool = True,
) -> EigenResult:
    r"""Largest eigenvalue and its unit eigenvector of a symmetric operator (chapters 4, 5).

    The engine behind :func:`lecnotes.spectral.estimators.spectral_estimator` and the partial-trace
    estimator of chapter 5: implicitly restarted Lanczos (ARPACK via
    :func:`scipy.sparse.linalg.eigsh` on a ``LinearOperator``) for the top eigenpair. If ARPACK
    does not converge (:class:`~scipy.sparse.linalg.ArpackNoConvergence`: typically a cluster of
    nearly equal top eigenvalues, as below a spectral threshold) or fails, it restarts from the
    best Ritz vector asking for the top three eigenpairs jointly in a Krylov space three times
    larger (a cluster converges jointly where one member alone can stall); if that fails too it
    falls back to the dense matrix (``dense_matrix()``, or ``d`` products with the identity)
    when ``d <= DENSE_FALLBACK_MAX_D``; as a last resort it returns the best Ritz pair and warns
    with its residual. No ARPACK exception reaches the caller.

    Parameters
    ----------
    matvec : callable
        ``v -> A v`` for ``v`` of shape ``(d,)`` (and, if possible, ``(d, r)``).
    d : int
        Dimension.
    dense_matrix : callable, optional
        Returns the dense ``d x d`` matrix (faster than ``d`` products when available).
    method : {"auto", "lanczos", "dense"}
        ``"auto"`` is dense for ``d <= DENSE_MAX_D`` (when possible) and Lanczos otherwise.
    tol : float
        ARPACK relative tolerance :math:`\|Av-\theta v\|\le\mathrm{tol}\,|\theta|`.
    ncv, maxiter : int, optional
        Krylov-space size (default 20) and maximal number of ARPACK restarts (default 40) of
        the first attempt; the second uses ``3 * ncv`` and the same ``maxiter``.
    v0 : array_like, optional
        Starting vector of Lanczos; by default :func:`lanczos_start` (a fixed Gaussian
        vector, so that the result is reproducible; it draws from no random stream).
    warn : bool
        Warn (``RuntimeWarning``) if only an unconverged pair could be obtained.

    Returns
    -------
    EigenResult
        ``(vector, value, info)``: the unit eigenvector (sign by :func:`canonical_sign`), the
        eigenvalue and an :class:`EigenInfo`.
    """
    d = V.positive_int(d, "d")
    if not callable(matvec):
        raise ValueError("matvec must be a callable v -> A v")
    if method not in ("auto", "lanczos", "dense"):
        raise ValueError(f"method must be 'auto', 'lanczos' or 'dense', got {method!r}")
    tol = V.positive_float(tol, "tol")
    info = EigenInfo(method="")
    count = [0]

    def mv(v):
        v = np.asarray(v, dtype=float)
        count[0] += 1 if v.ndim == 1 else v.shape[1]
        return np.asarray(matvec(v), dtype=float)

    def mm(V_):
        V_ = np.asarray(V_, dtype=float)
        try:
            out = mv(V_)
            if out.shape == V_.shape:
                return out
        except (ValueError, TypeError):
            pass
        return np.column_stack([mv(V_[:, j]) for j in range(V_.shape[1])])

    def dense():
        A = dense_matrix() if dense_matrix is not None else mm(np.eye(d))
        A = np.asarray(A, dtype=float)
        if A.shape != (d, d):
            raise ValueError(f"dense_matrix() must return shape ({d}, {d}), got {A.shape}")
        A = 0.5 * (A + A.T)
        w, Vec = sla.eigh(A, subset_by_index=[d - 1, d - 1], driver="evr")
        return float(w[0]), Vec[:, 0]

    def finish(val, vec, label):
        vec = vec / np.linalg.norm(vec)
        r = mv(vec) - val * vec
        info.method = label
        info.residual = float(np.linalg.norm(r))
        info.matvecs = count[0]
        return EigenResult(canonical_sign(vec), float(val), info)

    if method == "dense" or d <= 5 or (method == "auto" and d <= DENSE_MAX_D):
        info.attempts.append("dense")
        val, vec = dense()
        return finish(val, vec, "dense")

    x0 = lanczos_start(d) if v0 is None else V.finite_array(v0, "v0", ndim=1)
    if x0.shape != (d,) or not np.any(x0):
        raise ValueError(f"v0 must be a non-zero vector of shape ({d},)")
    op = LinearOperator((d, d), matvec=mv, matmat=mm, dtype=float)
    # first the top eigenpair alone (fast when it is separated), then, if ARPACK stalls on
    # a near-degenerate top, the top three jointly in a larger Krylov space, from the best
    # Ritz vector; the iteration budgets keep the number of products below about 40 ncv
    ncv0 = min(d - 1, max(ncv or 20, 4))
    it0 = maxiter or 40
    best = None  # (value, vector) of the best Ritz pair seen
    plans = [(1, ncv0, it0, "lanczos"),
             (min(3, d - 2), min(d - 1, 3 * ncv0), it0, "lanczos-restarted")]
    for k, ncv_, maxiter_, label in plans:
        info.attempts.append(f"{label} (k={k}, ncv={ncv_}, maxiter={maxiter_})")
        try:
            w, Vec = eigsh(op, k=k, which="LA", ncv=ncv_, tol=tol, maxiter=maxiter_, v0=x0)
            j = int(np.argmax(w))
            return finish(w[j], Vec[:, j], label)
        except ArpackNoConvergence as err:
            info.attempts[-1] += ": no convergence"
            if err.eigenvalues is not None and len(err.eigenvalues):
                j = int(np.argmax(err.eigenvalues))
                best = (float(err.eigenvalues[j]), err.eigenvectors[:, j])
                x0 = best[1]
        except ArpackError as err:  # pragma: no cover - rare ARPACK internal errors
            info.attempts[-1] += f": {err}"
    if d <= DENSE_FALLBACK_MAX_D:
        info.attempts.append("dense fallback")
        val, vec = dense()
        return finish(val, vec, "dense-fallback")
    vec = x0 if best is None else best[1]
    vec = vec / np.linalg.norm(vec)
    res = finish(float(vec @ mv(vec)), vec, "lanczos-unconverged")  # Rayleigh quotient
    if warn:
        warnings.warn(
            f"top_eigenpair: Lanczos did not converge in dimension {d}; returning the best Ritz "
            f"pair (residual {res.info.residual:.2e}).",
            RuntimeWarning,
            stacklevel=2,
        )
    return res


def weighted_gram(X, t) -> np.ndarray:
    r"""The weighted Gram matrix :math:`\frac1nX^\top\mathrm{diag}(t)X`, formed by blocks of rows.

    The dense :math:`D_T` of chapter 4 ({eq}`eq-ch4-dt`) and the dense partial traces of
    chapter 5; exactly symmetric.

    Parameters
    ----------
    X : ndarray (n, d)
    t : ndarray (n,)
        Weights.

    Returns
    -------
    ndarray (d, d)
    """
    X, t = V.data_pair(X, t)
    n, d = X.shape
    D = np.zeros((d, d))
    step = max(1, min(n, 2**22 // max(d, 1)))
    for s in range(0, n, step):
        B = X[s: s + step]
        D += B.T @ (t[s: s + step, None] * B)
    D /= n
    return 0.5 * (D + D.T)


def top_singular(W, k: int = 1):
    r"""The ``k`` largest singular values of ``W`` and their right singular vectors (chapter 6).

    Dense LAPACK for small matrices, Lanczos (``scipy.sparse.linalg.svds``, deterministic
    start) otherwise. Signs are fixed so that the largest entry of each vector is positive.

    Parameters
    ----------
    W : array_like (p, d)
    k : int
        Number of singular pairs, ``k <= min(p, d)``.

    Returns
    -------
    s : ndarray (k,)
        Decreasing singular values.
    V : ndarray (k, d)
        Orthonormal rows, signs by :func:`canonical_sign`.
    """
    W = V.finite_array(W, "W", ndim=2)
    k = V.positive_int(k, "k")
    if k > min(W.shape):
        raise ValueError(f"k = {k} exceeds min(W.shape) = {min(W.shape)}")
    if min(W.shape) <= 256 or k >= min(W.shape) - 1:
        _, s, Vt = np.linalg.svd(W, full_matrices=False)
        s, Vt = s[:k], Vt[:k]
    else:

        v0 = np.ones(min(W.shape)) / math.sqrt(min(W.shape))
        _, s, Vt = svds(W, k=k, v0=v0, tol=1e-10)
        order = np.argsort(s)[::-1]
        s, Vt = s[order], Vt[order]
    return s, canonical_sign(Vt)


def singular_values(M) -> np.ndarray:
    """All singular values of a matrix, decreasing (dense LAPACK; chapter 7).

    Parameters
    ----------
    M : array_like (p, d)

    Returns
    -------
    ndarray (min(p, d),)
    """
    M = V.finite_array(M, "M", ndim=2)
    if min(M.shape) < 1:
        raise ValueError(f"M must be non-empty, got shape {M.shape}")
    return np.linalg.svd(M, compute_uv=False)


def top_singular_vectors(M, k):
    """Top ``k`` left and right singular vectors (Lanczos, deterministic start; chapter 7).

    Parameters
    ----------
    M : array_like (p, d)
    k : int
        ``k < min(p, d)``.

    Returns
    -------
    U : ndarray (p, k)
        Left singular vectors as columns, in decreasing order of the singular values.
    Vt : ndarray (k, d)
        Right singular vectors as rows, signs by :func:`canonical_sign` (``U`` follows).
    """
    M = V.finite_array(M, "M", ndim=2)
    k = V.positive_int(k, "k")
    v0 = np.ones(min(M.shape)) / math.sqrt(min(M.shape))
    U, s, Vt = svds(M, k=k, v0=v0, tol=1e-8)
    order = np.argsort(s)[::-1]
    signs = _row_signs(Vt[order])
    return U[:, order] * signs, Vt[order] * signs[:, None]
